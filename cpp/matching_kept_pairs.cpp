#include "matching_kept_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define PAIRMETRICS_KEPT_MMAP 1
#endif

namespace pairmetrics::matching {

namespace {

bool by_pair(const KeptPairs::Pair& x, const KeptPairs::Pair& y) {
    return x.i < y.i || (x.i == y.i && x.j < y.j);
}
bool same_pair(const KeptPairs::Pair& x, const KeptPairs::Pair& y) {
    return x.i == y.i && x.j == y.j;
}

// The chunks' pairs in one exact-size vector, sorted, each once; the chunks are freed as they are copied.
template <class Chunk>
std::vector<KeptPairs::Pair> gather(std::vector<Chunk>& chunks, std::size_t count, std::size_t chunk) {
    std::vector<KeptPairs::Pair> out(count);
    for (std::size_t c = 0, at = 0; c < chunks.size(); ++c) {
        const std::size_t take = std::min(chunk, count - at);
        std::copy(chunks[c].get(), chunks[c].get() + take, out.begin() + static_cast<std::ptrdiff_t>(at));
        at += take;
        chunks[c].reset();
    }
    chunks.clear();
    std::sort(out.begin(), out.end(), by_pair);
    out.erase(std::unique(out.begin(), out.end(), same_pair), out.end());
    return out;
}

// The union of two sorted runs of distinct pairs, in a vector of its exact size.
std::vector<KeptPairs::Pair> union_of(const std::vector<KeptPairs::Pair>& a, const std::vector<KeptPairs::Pair>& b) {
    std::size_t both = 0;
    for (std::size_t s = 0, t = 0; s < a.size() && t < b.size();) {
        if (by_pair(a[s], b[t])) {
            ++s;
        } else if (by_pair(b[t], a[s])) {
            ++t;
        } else {
            ++both;
            ++s;
            ++t;
        }
    }
    std::vector<KeptPairs::Pair> out;
    out.reserve(a.size() + b.size() - both);
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), by_pair);
    return out;
}

}  // namespace

KeptPairs::Pair KeptPairs::make(std::int32_t i, std::int32_t j, std::int64_t w) {
    return Pair{std::min(i, j), std::max(i, j), float_below(w)};
}

KeptPairs::Collector::Collector() : shards_(kShards) {}

KeptPairs::Collector::Chunk KeptPairs::Collector::new_chunk() {
    constexpr std::size_t bytes = kChunk * sizeof(Pair);
#ifdef PAIRMETRICS_KEPT_MMAP
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#else
    void* p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
#endif
    return Chunk(static_cast<Pair*>(p));
}

void KeptPairs::Collector::ChunkFree::operator()(Pair* chunk) const {
#ifdef PAIRMETRICS_KEPT_MMAP
    munmap(chunk, kChunk * sizeof(Pair));
#else
    std::free(chunk);
#endif
}

void KeptPairs::Collector::add(const Pair& p) {
    Shard& s = shards_[shard_of(p)];
    std::lock_guard<std::mutex> g(s.lock);
    if (s.count == s.chunks.size() * kChunk) s.chunks.push_back(new_chunk());
    s.chunks.back()[s.count % kChunk] = p;
    ++s.count;
}

std::size_t KeptPairs::Collector::size() const {
    std::size_t count = 0;
    for (const Shard& s : shards_) count += s.count;
    return count;
}

void KeptPairs::clear() {
    for (std::vector<Pair>& s : shards_) s = {};
}

void KeptPairs::merge(Collector& from, Control& control) {
    for (std::size_t t = 0; t < kShards; ++t) {
        Collector::Shard& s = from.shards_[t];
        if (s.count == 0) continue;
        std::vector<Pair> found = gather(s.chunks, s.count, Collector::kChunk);
        s.count = 0;
        shards_[t] = shards_[t].empty() ? std::move(found) : union_of(shards_[t], found);
        control.check();
    }
}

std::size_t KeptPairs::size() const {
    std::size_t count = 0;
    for (const std::vector<Pair>& s : shards_) count += s.size();
    return count;
}

}  // namespace pairmetrics::matching
