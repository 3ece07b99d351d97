// Binary ranking curves (ROC, precision-recall, DET) and average precision
// from one sort of the scores.
//
// Positives and negatives are sorted separately by score key (radix sorts,
// the two side by side) and merged once from the highest score down; each run
// of equal scores becomes one threshold with the cumulative positive and
// negative weight at it (the confusion matrix when everything at or above the
// threshold is called positive). Unweighted counts are exact integers
// (uint64), whatever the score type; weights are summed in double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"

namespace pairmetrics {

struct BinaryCurve {
    std::vector<std::uint64_t> keys;  // order_key of each distinct score, decreasing
    std::vector<double> tps;          // cumulative positive weight (count) at each threshold
    std::vector<double> fps;          // cumulative negative weight (count) at each threshold
};

struct AveragePrecision {
    double value = 0;     // sum over thresholds of (recall step) * precision; NaN without positive weight
    double positive = 0;  // total positive weight (count)
    double negative = 0;  // total negative weight (count)
};

// Which thresholds a curve keeps (the first and last always): every one, the
// corners of the ROC curve (scikit-learn's drop_intermediate of roc_curve:
// a nonzero second difference of fps or tps), or the first and last of each
// run of equal tps (that of precision_recall_curve).
enum class CurveDrop { none, roc_corners, tps_changes };

// `positive[i]` is nonzero for a positive sample; `weights` may be null (all
// ones). Samples of zero weight take no part. Scores must not be NaN.
template <class Score>
BinaryCurve binary_curve(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                         std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                         std::size_t n, CurveDrop drop, int n_threads, Control& control);

// The step-function average precision of the precision-recall curve (no
// interpolation), from the same pass without storing the curve: with
// unweighted input the counts are exact and the terms are summed in long
// double.
template <class Score>
AveragePrecision average_precision(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                                   std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                                   std::size_t n, int n_threads, Control& control);

// The value of type T whose order_key is `key` (the inverse of order_key for
// the keys of T's own values).
template <class T>
T value_of_key(std::uint64_t key);

}  // namespace pairmetrics
