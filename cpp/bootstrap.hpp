// Bootstrap replicates of rank statistics with integer resampling weights:
// the samples are sorted once; a resample is a vector of draw counts, and
// each replicate is one sweep over the sorted samples with those weights.
//
// Resampling is nested: strata (drawn separately, each keeps its number of
// clusters) of clusters (drawn whole, with replacement). Clusters are
// numbered stratum by stratum; plain resampling is one stratum of n
// one-sample clusters. Replicate r draws from SplitMix64 seeded with
// seeds[r]: draw k (strata in order) is cluster first + (hi32(x_k) * size >> 32)
// of its stratum, x_k the k-th output. The Python generic path draws the same
// clusters (pairmetrics._bootstrap.drawn_clusters), so both give the same
// replicates, and the output never depends on n_threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics {

struct BootstrapDesign {
    const std::int64_t* stratum_offsets;  // n_strata + 1 offsets into the clusters
    std::size_t n_strata;
    const std::uint32_t* cluster;  // cluster of the sample at each sorted position
    std::size_t n;                 // samples
};

// Replicate r of the binary ROC AUC. `positive[p]` flags the sample at sorted
// position p; tie groups of equal scores are [group_end[g - 1], group_end[g])
// with group_end[-1] = 0 (nonempty). NaN where a resample lacks a class.
void bootstrap_auc(const BootstrapDesign& design, const std::uint8_t* positive, const std::int64_t* group_end,
                   std::size_t n_groups, const std::uint64_t* seeds, std::size_t n_resamples, double* out,
                   int n_threads, Control& control);

// Replicate r of the average precision (scikit-learn's step-function area
// under the precision-recall curve), over samples sorted by DEcreasing score
// with tie groups as in bootstrap_auc: at each group, the resample's new
// positives times the precision at that threshold, over all positives. The
// counts are integers; 0 where a resample has no positive (as
// average_precision_score returns then).
void bootstrap_average_precision(const BootstrapDesign& design, const std::uint8_t* positive,
                                 const std::int64_t* group_end, std::size_t n_groups, const std::uint64_t* seeds,
                                 std::size_t n_resamples, double* out, int n_threads, Control& control);

// Replicates of a pair concordance (correct + tied / 2) / comparable with
// resampling weights w: the sample at sorted position p, when `query[p]`, is
// compared with every sample at a position below `bound[p]` (bound is
// nondecreasing); the pair is correct when that partner's `rank` is below
// rank[p], tied when equal, and counts w_p * w_q times. NaN where no pair is
// comparable. O(n log n) per replicate (a Fenwick tree over the ranks).
struct PairSweep {
    const std::uint32_t* rank;  // dense ranks, below n_ranks
    std::size_t n_ranks;
    const std::int64_t* bound;
    const std::uint8_t* query;
};

void bootstrap_pair_concordance(const BootstrapDesign& design, const PairSweep& sweep, const std::uint64_t* seeds,
                                std::size_t n_resamples, double* out, int n_threads, Control& control);

// The bounds of a pair concordance by labels: rankable_bounds (rankable.hpp).

// Draw counts of one resample: count[c] += times cluster c was drawn (count
// has one entry per cluster, all zero on entry). The reference of the draws.
void bootstrap_draw_counts(const std::int64_t* stratum_offsets, std::size_t n_strata, std::uint64_t seed,
                           std::uint32_t* count);

}  // namespace pairmetrics
