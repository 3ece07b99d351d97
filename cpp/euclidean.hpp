// Squared Euclidean distances from norms and inner products, with one rule for
// when that expansion has lost too much to cancellation and the distance must
// be recomputed from the rows, and one scaling rule that keeps tiny or huge
// coordinates away from underflow and overflow.
//
// The expansion |x|^2 + |y|^2 - 2 <x, y> turns a matrix of distances into a
// matrix product (BLAS speed), but its rounding error is proportional to the
// norms, not to the distance: for near or equal points it keeps no correct
// digit. For rows of length d whose inner products are computed in a floating
// type with unit roundoff u (any summation order, with or without FMA) and
// whose squared norms are computed in that type or a wider one,
//
//     |computed - exact| <= 2 gamma(d + 2) (|x|^2 + |y|^2),
//     gamma(k) = k u / (1 - k u)                         (Higham, ch. 3),
//
// which is `expansion_error`. The rule: an entry whose error bound exceeds
// `rel` times its computed value (so its relative error could exceed `rel`)
// is recomputed directly, sum_k (x_k - y_k)^2 in double.
//
// Callers pick `rel` for the accuracy they need, and every caller applies the
// same rule and the same bound (the bound is also the certified slack to use
// when a lower bound on a distance is derived from the expansion).
//
// The expansion is only meaningful when neither the squares nor the products
// under- or overflow: scale both point sets by one power of two
// (`power_of_two_shift`, exact in binary floating point) so that the largest
// coordinate lies in [1, 2). Distances then scale by that power of two, and
// comparisons between distances do not change at all.
//
// Pure C++, header only, no dependencies; used by the 2 vs 2 kernel and the
// matching code.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

namespace pairmetrics::euclidean {

// Unit roundoff of T (half its machine epsilon).
template <class T>
constexpr double unit_roundoff() {
    return static_cast<double>(std::numeric_limits<T>::epsilon()) / 2.0;
}

// Upper bound on |computed - exact| of |x|^2 + |y|^2 - 2 <x, y> for rows of
// length d, products in a type with unit roundoff u, norm_sum = |x|^2 + |y|^2.
// Infinite when d is so large that the bound is void (k u >= 1).
inline double expansion_error(std::ptrdiff_t d, double norm_sum, double u) {
    const double ku = static_cast<double>(d + 2) * u;
    if (!(ku < 1.0)) return std::numeric_limits<double>::infinity();
    return 2.0 * (ku / (1.0 - ku)) * norm_sum;
}

template <class T>
double expansion_error(std::ptrdiff_t d, double norm_sum) {
    return expansion_error(d, norm_sum, unit_roundoff<T>());
}

// The rule: true when the computed squared distance `sq` (from the
// expansion, with norm_sum = |x|^2 + |y|^2) may be off by more than `rel`
// times itself, and must be recomputed from the rows. Always true for
// sq <= 0 (unless the bound is 0, i.e. both rows are zero) and for NaN.
inline bool needs_direct(double sq, double norm_sum, std::ptrdiff_t d, double u, double rel) {
    return !(rel * sq >= expansion_error(d, norm_sum, u));
}

template <class T>
bool needs_direct(double sq, double norm_sum, std::ptrdiff_t d, double rel) {
    return needs_direct(sq, norm_sum, d, unit_roundoff<T>(), rel);
}

// sum_k (a_k - b_k)^2 in double, for the entries the rule sends back.
template <class T>
double direct_squared_distance(const T* a, const T* b, std::ptrdiff_t d) {
    double s = 0.0;
    for (std::ptrdiff_t k = 0; k < d; ++k) {
        const double v = static_cast<double>(a[k]) - static_cast<double>(b[k]);
        s += v * v;
    }
    return s;
}

// The shift s with max_abs * 2^s in [1, 2): multiply every coordinate of
// both point sets by 2^s (std::ldexp(x, s); s can exceed the exponent range
// of one double factor when max_abs is subnormal) before forming norms and
// products. Exact unless a scaled coordinate is subnormal, which cannot
// happen to coordinates within 2^-1020 of max_abs. Returns 0 for
// max_abs == 0 or non-finite max_abs.
inline int power_of_two_shift(double max_abs) {
    if (!(max_abs > 0.0) || !std::isfinite(max_abs)) return 0;
    return -std::ilogb(max_abs);  // max_abs in [2^e, 2^(e+1)), e = ilogb
}

}  // namespace pairmetrics::euclidean
