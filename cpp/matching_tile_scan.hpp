// The per-pair scans over the rows of a matrix-product tile of the Euclidean
// provider (neighbour search and screening), compiled for each level of
// cpu_features.hpp and picked once from what the CPU supports. Each scan
// only says which chunks of a row may hold something; the caller then looks
// at those pairs one by one, so almost every pair costs a few vector lanes.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu_features.hpp"

namespace pairmetrics::matching {

// Neighbour search: row[c] = sqi + sqb[c] - 2 row[c] for c in [cb, ce),
// written in place; whether any lies below tau or below its column's tau_col[c].
template <class T>
using FlagBelowFn = bool (*)(T* row, const T* sqb, T sqi, T tau, const T* tau_col, int cb, int ce);

// Screening, float32 tiles: whether any column c in [0, len) may satisfy the
// float64 screen lower(i, c) < target(a_i + a_c) (see ScreenTerms). False
// only when no such column exists: a superset test in float32 whose
// rounding is bounded (see matching_tile_scan.cpp).
using MayScreenFn = bool (*)(const float* dots, const float* sq, const float* err, const float* at, float sqi,
                             float erri, float ati, int len);

template <class T>
FlagBelowFn<T> flag_below_for(SimdLevel level);
// squared: the screen's target is the threshold sum itself (else its square).
MayScreenFn may_screen_for(SimdLevel level, bool squared);

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

// x rounded up to a float (+inf above the float range; NaN stays NaN).
float float_at_least(double x);
// Each threshold rounded up to a float.
std::vector<float> floats_at_least(const std::vector<double>& x);

}  // namespace pairmetrics::matching
