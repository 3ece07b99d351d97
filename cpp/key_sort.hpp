// Order-preserving integer keys for real scores, and a cancellable radix
// sort of records by such keys, shared by the paired, ROC AUC and concordance
// kernels.
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

// The double whose order_key<double> is `key` (-0.0 comes back as +0.0).
inline double double_of_key(std::uint64_t key) {
    const std::uint64_t bits = (key >> 63) ? (key & ~(std::uint64_t{1} << 63)) : ~key;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

// The key of a record: the record itself when it is a plain key, else its
// `key` member.
inline std::uint64_t key_of(std::uint64_t key) { return key; }
template <class R>
inline std::uint64_t key_of(const R& record) {
    return record.key;
}

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

}  // namespace pairmetrics
