#include "paired_record_sort.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "key_sort.hpp"
#include "parallel.hpp"

namespace pairmetrics::paired_detail {

// Records of every input position sorted by score key; the order within
// equal keys is arbitrary (runs of equal keys are re-ordered by label
// afterwards). The input is read three times: for the key bits that vary,
// for a histogram of the highest of them, and to write each record straight
// into its bucket. The buckets are then sorted in cache, spread over the
// threads, each group of buckets with work space the size of its largest
// bucket. So the records are written once, and no second array of them is
// needed.
template <class R>
Buffer<R> load_sorted_records(const RecordReader<R>& reader, std::size_t n, int n_threads, Control& control) {
    Buffer<R> records(n);
    const int threads = threads_for(n, n_threads);
    const std::vector<std::size_t> bound = chunk_bounds(n, threads);
    const std::size_t chunks = bound.size() - 1;
    // Runs body(keys, count) over the blocks of score keys of chunk c.
    const auto for_keys = [&](std::size_t c, auto&& body) {
        Ticker tick(control);
        std::uint64_t key[kReadBlock];
        for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kReadBlock) {
            const std::size_t end = std::min(bound[c + 1], begin + kReadBlock);
            reader.keys(begin, end, key);
            body(key, end - begin);
            tick(end - begin);
        }
    };
    std::vector<KeyBits> chunk_bits(chunks);
    parallel_for(
        chunks, threads,
        [&](std::size_t c) {
            KeyBits bits;  // local: neighbouring chunks share a cache line
            for_keys(c, [&](const std::uint64_t* key, std::size_t size) {
                for (std::size_t i = 0; i < size; ++i) bits.add(key[i]);
            });
            chunk_bits[c] = bits;
        },
        control);
    KeyBits key_bits;
    for (const KeyBits& bits : chunk_bits) key_bits.add(bits);
    const std::uint64_t varying = key_bits.varying();
    if (varying == 0 || n <= 4 * msd::kInsertionSort) {
        parallel_for(
            chunks, threads,
            [&](std::size_t c) {
                for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kTickWork) {
                    reader.records(begin, std::min(bound[c + 1], begin + kTickWork), records.data() + begin);
                    control.check();
                }
            },
            control);
        if (varying != 0) {
            Buffer<R> scratch(n);
            msd::RadixWorkspace ws;
            Ticker tick(control);
            msd::sort_segment(records.data(), scratch.data(), n, 0, ws, tick);
        }
        return records;
    }
    const int width = bit_width(varying);
    const int bits = std::min(width, std::clamp(bit_width(n) - 2, 3, msd::kMaxBits));
    const int shift = width - bits;
    const std::size_t buckets = std::size_t{1} << bits, mask = buckets - 1;
    std::vector<std::size_t> histogram(chunks * buckets, 0);
    parallel_for(
        chunks, threads,
        [&](std::size_t c) {
            std::size_t* h = histogram.data() + c * buckets;
            for_keys(c, [&](const std::uint64_t* key, std::size_t size) {
                for (std::size_t i = 0; i < size; ++i) ++h[(key[i] >> shift) & mask];
            });
        },
        control);
    std::vector<std::size_t> start(buckets + 1, 0);
    for (std::size_t b = 0, total = 0; b < buckets; ++b) {
        start[b] = total;
        for (std::size_t c = 0; c < chunks; ++c) total += std::exchange(histogram[c * buckets + b], total);
        start[b + 1] = total;
    }
    parallel_for(
        chunks, threads,
        [&](std::size_t c) {
            std::size_t* next = histogram.data() + c * buckets;
            Ticker tick(control);
            R block[kReadBlock];
            for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kReadBlock) {
                const std::size_t end = std::min(bound[c + 1], begin + kReadBlock);
                reader.records(begin, end, block);
                for (std::size_t i = 0; i < end - begin; ++i)
                    records[next[(block[i].key >> shift) & mask]++] = block[i];
                tick(end - begin);
            }
        },
        control);
    // Buckets in groups (one workspace each); many groups balance skewed
    // sizes over the threads.
    const std::size_t groups = threads == 1 ? 1 : std::min<std::size_t>(buckets, 16 * chunks);
    parallel_for(
        groups, threads,
        [&](std::size_t g) {
            const std::size_t first = buckets * g / groups, last = buckets * (g + 1) / groups;
            std::size_t largest = 0;
            for (std::size_t b = first; b < last; ++b) largest = std::max(largest, start[b + 1] - start[b]);
            Buffer<R> scratch(largest);
            msd::RadixWorkspace ws;
            Ticker tick(control);
            for (std::size_t b = first; b < last; ++b) {
                const std::size_t size = start[b + 1] - start[b];
                if (size > 1) msd::sort_segment(records.data() + start[b], scratch.data(), size, 0, ws, tick);
            }
        },
        control);
    return records;
}

template <class R>
void sort_by_label_descending(R* data, std::size_t n, Ticker& tick) {
    auto greater = [](const R& x, const R& y) { return x.label > y.label; };
    constexpr std::size_t kPiece = std::size_t{1} << 14;
    if (n <= kPiece) {
        std::sort(data, data + n, greater);
        tick(n * 4);
        return;
    }
    for (std::size_t b = 0; b < n; b += kPiece) {
        std::sort(data + b, data + std::min(b + kPiece, n), greater);
        tick(kPiece * 4);
    }
    Buffer<R> buffer(n);
    R* src = data;
    R* dst = buffer.data();
    for (std::size_t width = kPiece; width < n; width *= 2) {
        for (std::size_t l = 0; l < n; l += 2 * width) {
            const std::size_t m = std::min(l + width, n), r = std::min(l + 2 * width, n);
            std::size_t i = l, j = m, k = l;
            while (i < m && j < r) {
                const std::size_t steps = std::min({m - i, r - j, kTickWork});
                for (std::size_t s = 0; s < steps; ++s) dst[k++] = greater(src[j], src[i]) ? src[j++] : src[i++];
                tick(steps);
            }
            k = std::copy(src + i, src + m, dst + k) - dst;
            std::copy(src + j, src + r, dst + k);
            tick(r - l);
        }
        std::swap(src, dst);
    }
    if (src != data) std::copy(src, src + n, data);
}

#define PAIRMETRICS_INSTANTIATE(Track, L)                                                                          \
    template Buffer<Record<Track, L>> load_sorted_records(const RecordReader<Record<Track, L>>&, std::size_t, int, \
                                                          Control&);                                               \
    template void sort_by_label_descending(Record<Track, L>*, std::size_t, Ticker&);
PAIRMETRICS_INSTANTIATE(false, double)
PAIRMETRICS_INSTANTIATE(false, std::uint64_t)
PAIRMETRICS_INSTANTIATE(true, double)
PAIRMETRICS_INSTANTIATE(true, std::uint64_t)
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics::paired_detail
