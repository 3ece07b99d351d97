// Order-preserving integer keys for real scores, and a cancellable sort of
// records by such keys, shared by the ROC AUC and concordance kernels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "control.hpp"
#include "parallel.hpp"

namespace pairmetrics {

// Maps a value to an unsigned key with the same order; -0.0 and +0.0 map to
// the same key (they compare equal). NaN never reaches a kernel.
template <class T>
inline std::uint64_t order_key(T value) {
    if constexpr (std::is_same_v<T, bool>) {
        return value ? 1u : 0u;
    } else if constexpr (std::is_floating_point_v<T>) {
        double d = static_cast<double>(value);
        if (d == 0.0) d = 0.0;
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        return (bits >> 63) ? ~bits : (bits | (std::uint64_t{1} << 63));
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(value)) ^ (std::uint64_t{1} << 63);
    } else {
        return static_cast<std::uint64_t>(value);
    }
}

// The key of a record: the record itself when it is a plain key, else its
// `key` member.
inline std::uint64_t key_of(std::uint64_t key) { return key; }
template <class R>
inline std::uint64_t key_of(const R& record) {
    return record.key;
}

// Where each record lands after a counting pass on the highest varying key
// bits: records grouped by bucket, buckets in key order. The buckets are not
// sorted inside; `start` has n_buckets + 1 offsets.
template <class R>
struct Buckets {
    std::vector<R> records;
    std::vector<std::size_t> start;
    std::size_t count() const { return start.size() - 1; }
};

// Spreads records over up to 2**bits buckets by their highest varying key
// bits (so clustered keys still spread), in two passes.
template <class R>
Buckets<R> bucket_by_key(const std::vector<R>& input, int bits, Control& control) {
    Buckets<R> out;
    const std::size_t n = input.size();
    std::uint64_t any = 0, all = ~std::uint64_t{0};
    for (const R& r : input) {
        any |= key_of(r);
        all &= key_of(r);
    }
    const std::uint64_t varying = any ^ all;
    int width = 0;
    for (std::uint64_t v = varying; v != 0; v >>= 1) ++width;
    bits = std::min(bits, width);
    const int shift = width - bits;
    const std::size_t n_buckets = std::size_t{1} << bits;
    const std::uint64_t mask = n_buckets - 1;
    out.start.assign(n_buckets + 1, 0);
    for (const R& r : input) ++out.start[((key_of(r) >> shift) & mask) + 1];
    for (std::size_t b = 0; b < n_buckets; ++b) out.start[b + 1] += out.start[b];
    control.advance(n / 2);
    out.records.resize(n);
    std::vector<std::size_t> next(out.start.begin(), out.start.end() - 1);
    for (const R& r : input) out.records[next[(key_of(r) >> shift) & mask]++] = r;
    control.advance(n / 2);
    return out;
}

// Sorts [first, last) by key; large ranges (skewed keys) recurse on their
// own highest varying bits so no single std::sort call runs for long.
template <class R>
void sort_range_by_key(R* first, R* last, Control& control) {
    const std::size_t n = static_cast<std::size_t>(last - first);
    constexpr std::size_t kSmall = std::size_t{1} << 16;
    if (n <= kSmall) {
        std::sort(first, last, [](const R& x, const R& y) { return key_of(x) < key_of(y); });
        return;
    }
    std::vector<R> copy(first, last);
    Buckets<R> buckets = bucket_by_key(copy, 12, control);
    if (buckets.count() == 1) {  // every key equal
        return;
    }
    std::copy(buckets.records.begin(), buckets.records.end(), first);
    for (std::size_t b = 0; b < buckets.count(); ++b) {
        sort_range_by_key(first + buckets.start[b], first + buckets.start[b + 1], control);
        control.check();
    }
}

// Sorts records by key (ties in any order): one bucket pass, then the
// buckets sorted in cache, spread over threads. Cancellable throughout
// (a check at least every 256 buckets of ~64 records, or every sub-bucket).
template <class R>
void sort_by_key(std::vector<R>& records, int n_threads, Control& control) {
    if (records.size() < 2) return;
    // About 64 records a bucket (at most 2**16 buckets): sorted in cache.
    int bits = 1;
    while (bits < 16 && (records.size() >> (bits + 6)) > 0) ++bits;
    Buckets<R> buckets = bucket_by_key(records, bits, control);
    const int threads = records.size() > (std::size_t{1} << 18) ? n_threads : 1;
    parallel_for(
        buckets.count(), threads,
        [&](std::size_t b) {
            R* base = buckets.records.data();
            sort_range_by_key(base + buckets.start[b], base + buckets.start[b + 1], control);
            if (b % 256 == 0) control.check();
        },
        &control);
    records.swap(buckets.records);
}

}  // namespace pairmetrics
