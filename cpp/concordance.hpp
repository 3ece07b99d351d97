// Concordance of right-censored survival times with a score (Harrell's C),
// in O(n log n): two radix sorts (estimates to dense ranks, then samples by
// time), and a sweep over times from the latest down that keeps counts of
// the ranks seen so far (a Fenwick tree over blocks of ranks).
//
// An event i is comparable with every sample j of a later time, and with a
// censored sample j of the same time (events at the same time are not
// comparable with each other). For each comparable pair the kernel counts
// whether estimate_j is below estimate_i (and not tied), tied with it, or
// above it; with tied_tol == 0 a tie is equality, else |e_j - e_i| <= tied_tol
// computed in double precision.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics {

struct ConcordanceCounts {
    std::uint64_t below = 0;      // comparable pairs with estimate_j < estimate_i (not tied)
    std::uint64_t tied = 0;       // comparable pairs with tied estimates
    std::uint64_t above = 0;      // comparable pairs with estimate_j > estimate_i (not tied)
    std::uint64_t tied_time = 0;  // (event, censored) pairs at the same time
    // Filled only with per-sample output: pairs of two events at one time
    // (not comparable), and those of them whose estimates are tied too.
    std::uint64_t event_pairs_tied_time = 0;
    std::uint64_t event_pairs_tied_both = 0;
};

// Columns of the optional per-sample output (n rows of kPerSampleColumns):
// counts of sample i's comparable partners whose estimate is below, tied with
// or above its own, first where i is the earlier event of the pair, then
// where i is the later member (a later time, or censored at the event's time).
enum PerSampleColumn : std::size_t {
    kEarlierBelow,
    kEarlierTied,
    kEarlierAbove,
    kLaterBelow,
    kLaterTied,
    kLaterAbove,
    kPerSampleColumns
};

// `times` and `estimates` are float64 (infinities allowed when tied_tol is
// 0; no NaN); `events[i]` nonzero marks an observed event. With `per_sample`
// (n * kPerSampleColumns counts, row-major) the kernel also fills the
// per-sample counts (a second sweep, forward in time) and the event-pair
// totals; null skips both.
ConcordanceCounts concordance_counts(const double* times, std::ptrdiff_t time_stride, const std::uint8_t* events,
                                     std::ptrdiff_t event_stride, const double* estimates,
                                     std::ptrdiff_t estimate_stride, std::size_t n, double tied_tol, Control& control,
                                     std::uint64_t* per_sample = nullptr);

// Per-sample comparable pairs (concordant, discordant, tied estimates) from
// the per-sample counts: n rows of 3 doubles, each the sum of two counts
// (earlier above + later below, earlier below + later above, the ties), as
// float64 sums of the counts. Checks the control as it goes (n may be 1e8).
void concordance_pair_columns(const std::uint64_t* per_sample, std::size_t n, double* out, Control& control);

}  // namespace pairmetrics
