// Order-preserving integer keys for real scores, and the record sorts by
// such keys shared by the paired, ROC AUC and concordance kernels: a stable
// LSD radix sort (radix_sort_by_key, sort_by_key) and an in-cache MSD radix
// sort (msd::sort_segment, not stable) for records whose equal keys are
// re-ordered afterwards.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "control.hpp"

namespace pairmetrics {

// Maps a value to an unsigned key with the same order; -0.0 and +0.0 map to
// the same key (they compare equal). NaN never reaches a kernel.
template <class T>
inline std::uint64_t order_key(T value) {
    if constexpr (std::is_same_v<T, bool>) {
        return value ? 1u : 0u;
    } else if constexpr (std::is_floating_point_v<T>) {
        const double d = static_cast<double>(value) + 0.0;  // -0.0 + 0.0 is +0.0
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        // Negative: every bit flipped; else the sign bit set. Branch-free, so that loops vectorise.
        const std::uint64_t sign = static_cast<std::uint64_t>(static_cast<std::int64_t>(bits) >> 63);
        return bits ^ (sign | (std::uint64_t{1} << 63));
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(value)) ^ (std::uint64_t{1} << 63);
    } else {
        return static_cast<std::uint64_t>(value);
    }
}

// The double whose order_key<double> is `key` (-0.0 comes back as +0.0).
inline double double_of_key(std::uint64_t key) {
    const std::uint64_t bits = (key >> 63) ? (key & ~(std::uint64_t{1} << 63)) : ~key;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

// The key of a record: the record itself when it is a plain key, else its
// `key` member.
inline std::uint64_t key_of(std::uint64_t key) {
    return key;
}
template <class R>
inline std::uint64_t key_of(const R& record) {
    return record.key;
}

// A key with a sample weight (ROC AUC and the ranking curves); a plain key
// weighs 1.
struct WeightedKey {
    std::uint64_t key;
    double weight;
};
inline double weight_of(std::uint64_t) {
    return 1.0;
}
inline double weight_of(const WeightedKey& record) {
    return record.weight;
}

// Below this many records a comparison sort beats the radix passes.
constexpr std::size_t kSmallSort = 256;

// Sorts records[0, n) by key, stably (equal keys keep their order), with
// scratch[0, n) as work space, and returns where the sorted records lie
// (records or scratch): LSD radix sort, kBits bits a pass; a pass whose digit
// is the same in every key (exponents, high bytes of small integers) is
// skipped. Branch-free, so faster than comparison sorts on random keys;
// checks the control every 65536 records.
template <class R>
R* radix_sort_by_key(R* records, R* scratch, std::size_t n, Control& control) {
    constexpr int kBits = 8;
    constexpr int kPasses = (64 + kBits - 1) / kBits;
    constexpr std::size_t kRadix = std::size_t{1} << kBits;
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    if (n < 2) return records;
    if (n < kSmallSort) {  // the histograms would cost more than the sort (many small groups)
        std::stable_sort(records, records + n, [](const R& a, const R& b) { return key_of(a) < key_of(b); });
        return records;
    }
    std::vector<std::size_t> histogram(kPasses * kRadix, 0);
    for (std::size_t begin = 0; begin < n; begin += kBlock) {
        const std::size_t end = std::min(n, begin + kBlock);
        for (std::size_t i = begin; i < end; ++i) {
            const std::uint64_t key = key_of(records[i]);
            for (int p = 0; p < kPasses; ++p) ++histogram[p * kRadix + ((key >> (p * kBits)) & (kRadix - 1))];
        }
        control.check();
    }
    R* src = records;
    R* dst = scratch;
    for (int p = 0; p < kPasses; ++p) {
        std::size_t* count = histogram.data() + p * kRadix;
        const int shift = p * kBits;
        if (count[(key_of(src[0]) >> shift) & (kRadix - 1)] == n) continue;
        std::size_t offset = 0;
        for (std::size_t d = 0; d < kRadix; ++d) offset += std::exchange(count[d], offset);
        for (std::size_t begin = 0; begin < n; begin += kBlock) {
            const std::size_t end = std::min(n, begin + kBlock);
            for (std::size_t i = begin; i < end; ++i) dst[count[(key_of(src[i]) >> shift) & (kRadix - 1)]++] = src[i];
            control.check();
        }
        std::swap(src, dst);
    }
    return src;
}

// Sorts records by key, stably, in place (radix_sort_by_key with an
// O(n) buffer of its own).
template <class R>
void sort_by_key(R* records, std::size_t n, Control& control) {
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    if (n < 2) return;
    std::unique_ptr<R[]> buffer(new R[n]);  // left uninitialised: every slot is written before it is read
    const R* src = radix_sort_by_key(records, buffer.get(), n, control);
    if (src != records) {
        for (std::size_t begin = 0; begin < n; begin += kBlock) {
            std::copy(src + begin, src + std::min(n, begin + kBlock), records + begin);
            control.check();
        }
    }
}

// Which key bits vary across a set of keys: those set in some key (any) but
// not in all of them.
struct KeyBits {
    std::uint64_t any = 0, all = ~std::uint64_t{0};
    void add(std::uint64_t key) {
        any |= key;
        all &= key;
    }
    void add(const KeyBits& other) {
        any |= other.any;
        all &= other.all;
    }
    std::uint64_t varying() const { return any ^ all; }
};

inline int bit_width(std::uint64_t v) {
    int width = 0;
    for (; v != 0; v >>= 1) ++width;
    return width;
}

namespace msd {

// MSD radix sort by key. Each level spreads the records by the highest bits
// that still vary (so a byte that is the same in every key costs nothing).
// A segment of at most 2**kLeafBits records takes its last level with about
// one bucket per record: the buckets then hold a record or two each, and one
// insertion pass over the whole segment finishes them with few mispredicted
// branches (sorting many tiny buckets one by one is dominated by them). Work
// space: one array of bucket starts per level.
constexpr std::size_t kInsertionSort = 16;
constexpr int kMaxBits = 11;
constexpr int kLeafBits = 14;
constexpr std::size_t kLeafBucket = 32;  // larger leaf buckets (skewed keys) get a level of their own
constexpr int kMaxDepth = 24;            // each level takes >= 3 of the 64 key bits

struct RadixWorkspace {
    struct Level {
        std::unique_ptr<std::size_t[]> data;
        std::size_t size = 0;
    };
    std::vector<Level> levels;
    // Room for the bucket starts and cursors of one level: left
    // uninitialised (a level fills what it uses), and stable while deeper
    // levels grow their own.
    std::size_t* level(int depth, std::size_t buckets) {
        if (levels.size() <= static_cast<std::size_t>(depth)) levels.resize(depth + 1);
        Level& level = levels[depth];
        if (const std::size_t need = 2 * (buckets + 1); level.size < need) {
            level.data.reset(new std::size_t[need]);
            level.size = need;
        }
        return level.data.get();
    }
};

template <class R>
void insertion_sort_by_key(R* a, std::size_t n) {
    for (std::size_t i = 1; i < n; ++i) {
        if (key_of(a[i - 1]) <= key_of(a[i])) continue;
        const R x = a[i];
        std::size_t j = i;
        for (; j > 0 && key_of(a[j - 1]) > key_of(x); --j) a[j] = a[j - 1];
        a[j] = x;
    }
}

// Sorts a[0, n) by key (not stably) with scratch[0, n) as work space;
// tick(work) is called every few elements of work (it may throw to stop).
template <class R, class Tick>
void sort_segment(R* a, R* scratch, std::size_t n, int depth, RadixWorkspace& ws, Tick& tick) {
    if (n <= kInsertionSort) {
        insertion_sort_by_key(a, n);
        tick(n);
        return;
    }
    KeyBits key_bits;
    for (std::size_t i = 0; i < n; ++i) key_bits.add(key_of(a[i]));
    tick(n);
    const std::uint64_t varying = key_bits.varying();
    if (varying == 0) return;
    if (depth >= kMaxDepth) {  // not reached: every level consumes bits
        std::sort(a, a + n, [](const R& x, const R& y) { return key_of(x) < key_of(y); });
        return;
    }
    const int width = bit_width(varying);
    const bool leaf = bit_width(n) <= kLeafBits;
    const int bits = std::min(width, leaf ? bit_width(n) : std::clamp(bit_width(n) - 2, 3, kMaxBits));
    const int shift = width - bits;
    const std::size_t buckets = std::size_t{1} << bits, mask = buckets - 1;
    std::size_t* start = ws.level(depth, buckets);
    std::fill_n(start, buckets + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++start[((key_of(a[i]) >> shift) & mask) + 1];
    for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    std::size_t* next = start + buckets + 1;
    std::copy(start, start + buckets, next);
    for (std::size_t i = 0; i < n; ++i) scratch[next[(key_of(a[i]) >> shift) & mask]++] = a[i];
    std::memcpy(static_cast<void*>(a), scratch, n * sizeof(R));
    tick(3 * n);
    const std::size_t own_level = leaf ? kLeafBucket : 1;
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t begin = start[b], size = start[b + 1] - begin;
        if (size > own_level) sort_segment(a + begin, scratch + begin, size, depth + 1, ws, tick);
    }
    if (leaf) {
        insertion_sort_by_key(a, n);
        tick(n);
    }
}

}  // namespace msd

}  // namespace pairmetrics
