// Bootstrap replicates of the binary ROC AUC, each in O(n): the samples are
// sorted by score once; a resample is a vector of integer weights (how often
// each sample was drawn) swept over that order.
//
// Resampling is nested: strata (drawn separately, each keeps its number of
// clusters), clusters (drawn whole, with replacement) and the samples of each
// cluster. Plain resampling is one stratum of n one-sample clusters.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics {

struct ResamplingDesign {
    const std::int64_t* stratum_offsets;  // n_strata + 1 offsets into the clusters
    std::size_t n_strata;
    const std::int64_t* cluster_offsets;  // n_clusters + 1 offsets into `members`
    const std::int64_t* members;          // sorted positions of each cluster's samples
};

// `positive[p]` flags the sample at sorted position p (of n); tie groups of
// equal scores are [group_end[g - 1], group_end[g]) with group_end[-1] = 0.
// Replicate r draws from a generator seeded with seeds[r], so the output
// never depends on n_threads. NaN where a replicate has no positive or no
// negative sample.
void bootstrap_auc(const std::uint8_t* positive, std::size_t n, const std::int64_t* group_end, std::size_t n_groups,
                   const ResamplingDesign& design, const std::uint64_t* seeds, std::size_t n_resamples, double* out,
                   int n_threads, Control& control);

}  // namespace pairmetrics
