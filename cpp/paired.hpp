// Paired evaluation: counts of rankable, correctly ranked, tied and
// mis-ranked pairs in O(n log n).
//
// A pair (i, j) is rankable when its labels are at least min_dist apart.
// Integer and bool labels are compared exactly, in their own type (int64 and
// uint64 labels of any size, no conversion to double): |label_i - label_j| >=
// min_dist. Floating-point labels are compared as the original pairedeval
// code does: the larger minus the smaller, computed in double precision, is
// at least min_dist. A rankable pair is correct when the scores order it as
// the labels do, tied when the scores are equal, and incorrect otherwise.
// Scores of every type are compared exactly. Ties never depend on input order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"
#include "int128.hpp"
#include "paired_simd.hpp"

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

// Exact sums over a group of samples of their per-sample counts: r_i, the
// rankable partners of sample i, and q_i = 2 * correct_i + tied_i (twice its
// credit, ties counting one half). Any sum of squares of a_i = x * q_i + y * r_i
// follows from them, without per-sample arrays.
// Sums stay below 2^127 for any n below 2^41 (q_i <= 2 n).
using PairedSum = i128;
struct PairedMomentSums {
    std::uint64_t samples = 0;
    PairedSum r = 0, q = 0, rr = 0, qr = 0, qq = 0;
    void add(std::uint64_t r_i, std::uint64_t q_i) {
        ++samples;
        r += r_i;
        q += q_i;
        rr += PairedSum{r_i} * r_i;
        qr += PairedSum{q_i} * r_i;
        qq += PairedSum{q_i} * q_i;
    }
    void add(const PairedMomentSums& other) {
        samples += other.samples;
        r += other.r;
        q += other.q;
        rr += other.rr;
        qr += other.qr;
        qq += other.qq;
    }
};
// The moment sums of three groups of samples: those with the smallest label,
// those with the largest (none when every label is equal), and the rest.
// (With labels of two values, the two classes.)
struct PairedMoments {
    PairedMomentSums lowest, highest, others;
};

// Up to this many distinct labels (binary, ordinal, rounded values) the
// counts come from Fenwick trees over label ranks, O(n log k) in cache;
// beyond it from merge passes over the labels.
constexpr std::size_t kDefaultFewLabels = 4096;
// Up to this many distinct labels (and at most few_labels) the totals come
// from the score keys sorted per label class and one merge walk per pair of
// classes far apart, O(k n) for k classes (faster than the Fenwick path up
// to 16 classes at a million samples; at most 16). Per-sample counts take
// the paths above; their moment sums (paired_moments) take this one too.
constexpr std::size_t kDefaultFewClasses = 16;

// Scores and labels are any arithmetic type (bool read as a byte compared
// with 0), read with an element stride (no copy). Preconditions: n >= 0,
// float values finite, min_dist > 0 and finite. `per_sample` may be null.
// `n_threads` above 1 splits the sorts and merge passes across threads for
// large n. Neither it nor `few_labels` and `few_classes` (which path is
// taken) changes the counts, nor does `simd` (which vector code runs:
// automatic picks the best the CPU supports; the caller checks
// simd_supported for a forced level). The calling thread checks `control`
// at least every few tens of microseconds of work; a cancellation ends the
// call with Cancelled.
template <class Score, class Label>
PairedCounts paired_counts(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                           std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                           PairedPerSample* per_sample = nullptr, int n_threads = 1,
                           std::size_t few_labels = kDefaultFewLabels, std::size_t few_classes = kDefaultFewClasses,
                           SimdLevel simd = SimdLevel::automatic);

namespace paired_detail {
template <class L>
struct PairedInput;
}

// paired_counts (or, with moments, paired_moments) of an input read through
// its readers (paired_input.hpp); L is double for real labels, the order key
// of an integer otherwise.
template <class L>
PairedCounts paired_counts_of(const paired_detail::PairedInput<L>& input, double min_dist, Control& control,
                              PairedPerSample* per_sample, PairedMoments* moments, int n_threads,
                              std::size_t few_labels = kDefaultFewLabels, std::size_t few_classes = kDefaultFewClasses,
                              SimdLevel simd = SimdLevel::automatic);

// The counts of paired_counts and the moment sums of the per-sample counts
// (same arguments; the per-sample counts are never stored per sample when the
// labels take at most few_classes values).
template <class Score, class Label>
PairedCounts paired_moments(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                            std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                            PairedMoments& moments, int n_threads = 1, std::size_t few_labels = kDefaultFewLabels,
                            std::size_t few_classes = kDefaultFewClasses, SimdLevel simd = SimdLevel::automatic);

}  // namespace pairmetrics
