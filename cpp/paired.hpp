// Paired evaluation: counts of rankable, correctly ranked, tied and
// mis-ranked pairs in O(n log n).
//
// A pair (i, j) is rankable when |label_i - label_j| >= min_dist (the
// difference is taken larger-minus-smaller in double precision, as the
// original pairedeval code does). A rankable pair is correct when the scores
// order it as the labels do, tied when the scores are equal, and incorrect
// otherwise. Ties never depend on input order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pairmetrics {

struct PairedCounts {
    std::uint64_t rankable = 0;
    std::uint64_t correct = 0;
    std::uint64_t tied = 0;
    std::uint64_t incorrect = 0;
};

// Optional per-sample counts, each an array of n entries in input order:
// rankable[i] = #{j : (i, j) rankable}, and of those, how many are tied and
// how many incorrect (the rest are correct).
struct PairedPerSample {
    std::uint64_t* rankable = nullptr;
    std::uint64_t* tied = nullptr;
    std::uint64_t* incorrect = nullptr;
};

// Up to this many distinct labels (binary, ordinal, rounded values) the
// counts come from Fenwick trees over label ranks, O(n log k) in cache;
// beyond it from merge passes over the labels.
constexpr std::size_t kDefaultFewLabels = 4096;

// Scores are any arithmetic type, read with an element stride (no copy);
// labels are doubles with a stride. `per_sample` may be null. `n_threads`
// above 1 splits the merge passes across threads for large n. Neither it nor
// `few_labels` (which path is taken) changes the counts.
template <class Score>
PairedCounts paired_counts(const Score* scores, std::ptrdiff_t score_stride, const double* labels,
                           std::ptrdiff_t label_stride, std::size_t n, double min_dist,
                           PairedPerSample* per_sample = nullptr, int n_threads = 1,
                           std::size_t few_labels = kDefaultFewLabels);

}  // namespace pairmetrics
