// The Mann-Whitney U statistic and its exact null distributions.
//
// U of the first sample comes from one pass over both samples sorted (the
// AUC identity: pairs x > y plus half the tied pairs, as midranks give it).
// Without ties, the null distribution of U is the Gaussian binomial
// coefficient [m + n choose m]_q, built as prod_k (1 - q^(n+k)) / (1 - q^k) in
// O(m * u) time for the probabilities up to u. With ties, the exact
// conditional distribution (all splits of the pooled values into samples of
// m and n equally likely, the ties as observed) comes from a walk over the
// groups of tied values, keeping the probability of each (count of the first
// sample so far, doubled partial U) in O(N m u).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"
#include "int128.hpp"
#include "rank_correlation.hpp"

namespace pairmetrics {

struct MannWhitneyRanks {
    std::uint64_t doubled_u = 0;  // 2 U of the first sample: an integer
    i128 tie_cube_excess = 0;     // sum over groups of tied pooled values of t^3 - t
    std::uint64_t max_tie = 0;    // the largest group of tied values (1: no ties)
};

// `group_sizes`, when not null, receives the sizes of the groups of tied
// pooled values in ascending order of value.
MannWhitneyRanks mann_whitney_ranks(const KeyColumn& x, std::size_t m, const KeyColumn& y, std::size_t n, int n_threads,
                                    Control& control, std::vector<std::uint64_t>* group_sizes = nullptr);

// P(U = u) for u = 0..max_u under the null without ties (samples of m and n).
std::vector<double> mann_whitney_null_pmf(std::uint64_t m, std::uint64_t n, std::uint64_t max_u, Control& control);

// P(2 U <= max_doubled_u) for the first sample (m of the pooled values), under
// the permutation null given the groups of tied pooled values (sizes in
// ascending order of value).
double mann_whitney_conditional_cdf(const std::vector<std::uint64_t>& group_sizes, std::uint64_t m,
                                    std::uint64_t max_doubled_u, Control& control);

}  // namespace pairmetrics
