// The rankable-pair rule, in one place: a pair of samples is rankable when
// the larger label is at least min_dist above the smaller one. Real labels
// compare by their difference in double precision (as pairedeval computes
// it); integer labels compare exactly, at any magnitude. Every kernel and
// every layer (in memory, bootstrap, Dask) asks this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace pairmetrics {

// Real labels: far(hi, lo) is fl(hi - lo) >= min_dist.
struct RealGap {
    using Label = double;
    double min_dist;
    bool far(double hi, double lo) const { return hi - lo >= min_dist; }
};

// Integer labels as order keys (key_sort.hpp): a difference of two keys is the
// difference of the two values, exactly, in [0, 2**64) when hi >= lo. An
// integer difference is >= min_dist exactly when it is >= ceil(min_dist).
struct IntegerGap {
    using Label = std::uint64_t;
    std::uint64_t min_dist;  // >= 1
    bool far(std::uint64_t hi, std::uint64_t lo) const { return (hi >= lo) & (hi - lo >= min_dist); }
};

// The gap of integer labels for min_dist, or none when no pair of integers
// is that far apart (min_dist >= 2**64, or NaN).
std::optional<IntegerGap> integer_gap(double min_dist);

// Rounded subtraction is monotone, so the labels x with fl(x - y) >= min_dist
// are those at or above one threshold: the smallest double t with
// fl(t - y) >= min_dist (+inf when there is none).
double real_threshold(double y, double min_dist);

// Integer labels as order keys up to `highest` (< 2**64 - 1): the smallest
// key t with gap.far(t, key), or highest + 1 when no key up to `highest` is
// that far above `key`; the labels rankable above `key` are those >= t.
std::uint64_t integer_threshold(std::uint64_t key, const IntegerGap& gap, std::uint64_t highest);

// bound[p] = #{q : far(labels[p], labels[q])} for nondecreasing labels (doubles,
// or the order keys of integers): the samples each one outranks form a prefix.
void rankable_bounds(const double* sorted_labels, std::size_t n, double min_dist, std::int64_t* bound);
void rankable_bounds(const std::uint64_t* sorted_keys, std::size_t n, double min_dist, std::int64_t* bound);

}  // namespace pairmetrics
