#include "rankable.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "key_sort.hpp"

namespace pairmetrics {

std::optional<IntegerGap> integer_gap(double min_dist) {
    constexpr double kTwo64 = 18446744073709551616.0;  // integer differences are below 2**64
    if (!(min_dist < kTwo64)) return std::nullopt;
    return IntegerGap{static_cast<std::uint64_t>(std::max(1.0, std::ceil(min_dist)))};
}

double real_threshold(double y, double min_dist) {
    const RealGap gap{min_dist};
    constexpr double kInf = std::numeric_limits<double>::infinity();
    // Usually fl(y + min_dist), or one ulp away.
    const double guess = y + min_dist;
    if (gap.far(guess, y) && !gap.far(std::nextafter(guess, -kInf), y)) return guess;
    // Else bisection over the ordered doubles: lo fails, hi satisfies (64 steps at most).
    if (!gap.far(kInf, y)) return kInf;
    std::uint64_t lo = order_key(-kInf), hi = order_key(kInf);
    if (gap.far(-kInf, y)) return -kInf;
    while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        (gap.far(double_of_key(mid), y) ? hi : lo) = mid;
    }
    return double_of_key(hi);
}

std::uint64_t integer_threshold(std::uint64_t key, const IntegerGap& gap, std::uint64_t highest) {
    return key <= highest && highest - key >= gap.min_dist ? key + gap.min_dist : highest + 1;
}

namespace {

template <class Gap>
void bounds_of(const typename Gap::Label* sorted, std::size_t n, const Gap& gap, std::int64_t* bound) {
    std::size_t q = 0;
    for (std::size_t p = 0; p < n; ++p) {
        while (q < n && gap.far(sorted[p], sorted[q])) ++q;
        bound[p] = static_cast<std::int64_t>(q);
    }
}

}  // namespace

void rankable_bounds(const double* sorted_labels, std::size_t n, double min_dist, std::int64_t* bound) {
    bounds_of(sorted_labels, n, RealGap{min_dist}, bound);
}

void rankable_bounds(const std::uint64_t* sorted_keys, std::size_t n, double min_dist, std::int64_t* bound) {
    if (const std::optional<IntegerGap> gap = integer_gap(min_dist))
        bounds_of(sorted_keys, n, *gap, bound);
    else
        std::fill(bound, bound + n, std::int64_t{0});
}

}  // namespace pairmetrics
