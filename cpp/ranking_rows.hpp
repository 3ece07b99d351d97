// Ranking metrics of the rows of a score matrix (one ranking of labels per
// sample): label ranking average precision, coverage error, label ranking
// loss, (normalised) discounted cumulative gain and top-k hits, with
// scikit-learn's definitions and tie rules.
//
// Each row is read in place (any strides) and costs O(C log p) for p relevant
// labels out of C (LRAP, loss), O(C) (coverage, top-k) or O(C * relevant) /
// O(C + m log m) (DCG: counting for few relevant labels, else a sort of the
// m labels at or above the k-th score). Rows are spread over threads; every
// per-row count is an integer; float32 scores are only compared, never summed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics {

// A row-major view of a matrix of T with element strides.
template <class T>
struct RowsView {
    const T* data = nullptr;
    std::ptrdiff_t row_stride = 0;
    std::ptrdiff_t column_stride = 1;
    const T* row(std::size_t i) const { return data + static_cast<std::ptrdiff_t>(i) * row_stride; }
};

enum class LabelRankingMetric {
    average_precision,  // LRAP: mean over relevant j of (#relevant scored >= s_j) / (#labels scored >= s_j)
    coverage,           // #labels scored >= the lowest relevant score (0 without relevant labels)
    loss,               // #(relevant, irrelevant) pairs with s_irrelevant >= s_relevant / (p * (C - p))
};

// out[i] = the metric of row i; a label is relevant where truth is nonzero.
// Rows where every label or none is relevant give 1 (LRAP) or 0 (loss).
template <class Score>
void label_ranking_rows(RowsView<Score> scores, RowsView<std::uint8_t> truth, std::size_t n_rows, std::size_t n_labels,
                        LabelRankingMetric metric, double* out, int n_threads, Control& control);

// The DCG (or NDCG when `normalize`) of each row, gains from `gains`.
// `discount[r]` is the discount of rank r (0 from rank k on) and
// `discount_cumsum` its running sum (both n_labels long); `k` (<= n_labels)
// is the number of ranks counted. Tied scores share the mean gain of their
// group times the group's discounts (McSherry & Najork); with `ignore_ties`
// a tie is broken in favour of the later label (the order of a stable
// ascending sort, reversed). NDCG divides by the DCG of the gains sorted
// decreasingly (0 when that is 0); it needs non-negative gains.
template <class Gain, class Score>
void dcg_rows(RowsView<Score> scores, RowsView<Gain> gains, std::size_t n_rows, std::size_t n_labels,
              const double* discount, const double* discount_cumsum, std::size_t k, bool ignore_ties, bool normalize,
              double* out, int n_threads, Control& control);

// hits[i] = 1 when label labels[i] (in [0, n_labels)) is among the k highest
// scores of row i, ties broken in favour of the later label (scikit-learn's
// order: a stable ascending sort, reversed).
template <class Score>
void top_k_hits(RowsView<Score> scores, const std::int64_t* labels, std::ptrdiff_t label_stride, std::size_t n_rows,
                std::size_t n_labels, std::size_t k, std::uint8_t* hits, int n_threads, Control& control);

}  // namespace pairmetrics
