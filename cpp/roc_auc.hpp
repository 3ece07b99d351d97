// ROC AUC of binary labels with optional sample weights, and the partial
// area up to a false positive rate (for the McClish-corrected partial AUC).
//
// The area under the ROC curve (trapezoids through every distinct score)
// equals the weighted Mann-Whitney statistic: the sum over (positive,
// negative) pairs of w_p * w_n * ([s_p > s_n] + [s_p == s_n] / 2), divided by
// the total positive weight times the total negative weight. Positives and
// negatives are sorted separately by score (O(n log n)) and merged once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics {

struct RocAuc {
    double area = 0;      // full AUC, or the partial area in [0, max_fpr] when max_fpr < 1
    double positive = 0;  // total weight (count) of positives
    double negative = 0;  // total weight (count) of negatives
};

// `positive[i]` is nonzero for a positive sample. `weights` may be null (all
// ones: the counts are then exact integers); zero weights take no part.
// With 0 < max_fpr < 1 the area is the partial one, up to max_fpr, of the
// curve normalised by the totals (linear interpolation at max_fpr). The
// area is NaN when either total is not positive.
template <class Score>
RocAuc roc_auc(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
               std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride, std::size_t n,
               double max_fpr, int n_threads, Control& control);

}  // namespace pairmetrics
