// The hot scans of the matching: over the rows of a matrix-product tile of
// the Euclidean provider (neighbour search and screening), over the pricing
// prefix, and the exact squared distance, compiled for each level of
// cpu_features.hpp and picked once from what the CPU supports. The scans
// only say which entries may hold something; the caller then looks at those
// one by one, so almost every entry costs a few vector lanes.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu_features.hpp"

namespace pairmetrics::matching {

// Neighbour search over float32 tiles: row[c] = sqi + sqb[c] - 2 row[c] for
// c in [cb, ce) (ce - cb <= 64), written in place; bit c - cb of the result
// set when that value lies below tau or below its column's tau_col[c].
using FlagBelowFn = std::uint64_t (*)(float* row, const float* sqb, float sqi, float tau, const float* tau_col, int cb,
                                      int ce);

// Screening, float32 tiles: whether any column c in [0, len) may satisfy the
// float64 screen lower(i, c) < target(a_i + a_c) (see ScreenTerms). False
// only when no such column exists: a superset test in float32 whose
// rounding is bounded (see matching_tile_scan.cpp).
using MayScreenFn = bool (*)(const float* dots, const float* sq, const float* err, const float* at, float sqi,
                             float erri, float ati, int len);

// The same test column by column: bit c set when column c in [0, len) may
// satisfy it (len <= 64); every column the float64 screen flags is set.
using ScreenBitsFn = std::uint64_t (*)(const float* dots, const float* sq, const float* err, const float* at, float sqi,
                                       float erri, float ati, int len);

FlagBelowFn flag_below_for(SimdLevel level);
// squared: the screen's target is the threshold sum itself (else its square).
MayScreenFn may_screen_for(SimdLevel level, bool squared);
ScreenBitsFn screen_bits_for(SimdLevel level, bool squared);

// Bit t set when values[t] < bound, t in [0, len), len <= 64.
using LessThanBitsFn = std::uint64_t (*)(const std::int64_t* values, std::int64_t bound, int len);
LessThanBitsFn less_than_bits_for(SimdLevel level);

// sum_t (a_t - b_t)^2 over t < d, in float64, always in the same order: four
// running sums (t mod 4), the rest added to the first, then (s0 + s1) + (s2 + s3).
// Every level gives the same bits.
using SquaredDistanceFn = double (*)(const double* a, const double* b, std::int64_t d);
SquaredDistanceFn squared_distance_for(SimdLevel level);

// The float32 terms of the screen's prefilter, per point (positions of the
// provider): sq the squared norms rounded to nearest; err an upper bound of
// the float64 screen's error allowance unit_err * sq plus every float32
// rounding of the prefilter (rounded up). With these the prefilter flags a
// superset of the pairs the float64 screen flags.
struct ScreenTerms {
    std::vector<float> sq, err;
    ScreenTerms() = default;
    ScreenTerms(const std::vector<double>& sq64, double unit_err, std::int64_t d);
};

// Index of the lowest set bit of bits (nonzero).
inline int lowest_bit(std::uint64_t bits) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(bits);
#else
    int at = 0;
    while ((bits & 1) == 0) {
        bits >>= 1;
        ++at;
    }
    return at;
#endif
}

// A hint to fetch the cache line at p (no effect on any result).
inline void prefetch_read(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 0, 3);
#else
    (void)p;
#endif
}

// x rounded up to a float (+inf above the float range; NaN stays NaN).
float float_at_least(double x);
// Each threshold rounded up to a float.
std::vector<float> floats_at_least(const std::vector<double>& x);

}  // namespace pairmetrics::matching
