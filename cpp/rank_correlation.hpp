// Rank correlations at the sort floor: the pair counts of Kendall's tau and
// Somers' D (Knight's algorithm: one sort by y, one stable sort by x, the
// inversions of the y ranks in x order), the exact sums of Spearman's rho
// (one rank pass per variable), Vigna's weighted tau (a weighted merge sort),
// and the exact null distribution of Kendall's statistic without ties.
//
// Values of every real type are compared exactly through their order keys
// (key_sort.hpp); NaN never reaches these kernels. Counts are exact integers
// for any n below 2**32 (sums of cubes in 128 bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"
#include "int128.hpp"

namespace pairmetrics {

// One input variable of any real type, read as order keys (one instantiation
// of each kernel serves every dtype; the indirect call costs far less than
// the sorts).
struct KeyColumn {
    const void* data = nullptr;
    std::ptrdiff_t stride = 1;  // in elements
    std::uint64_t (*key_at)(const void*, std::ptrdiff_t, std::size_t) = nullptr;
    std::uint64_t operator()(std::size_t i) const { return key_at(data, stride, i); }
    template <class T>
    static KeyColumn of(const T* values, std::ptrdiff_t stride);
};

// Sums over the groups of tied values of one variable (t values each).
struct TieSums {
    std::uint64_t distinct = 0;  // number of groups
    std::uint64_t pairs = 0;     // sum t (t - 1) / 2: tied pairs
    i128 cubic = 0;              // sum t (t - 1) (t - 2)
    i128 spread = 0;             // sum t (t - 1) (2 t + 5)
    i128 cube_excess = 0;        // sum t^3 - t
    void add(std::uint64_t t) {
        ++distinct;
        const i128 w = t;
        pairs += t * (t - 1) / 2;
        cubic += w * (w - 1) * (w - 2);
        spread += w * (w - 1) * (2 * w + 5);
        cube_excess += w * w * w - w;
    }
};

struct KendallCounts {
    std::uint64_t discordant = 0;   // pairs ordered oppositely by x and y
    std::uint64_t joint_pairs = 0;  // pairs tied in both x and y
    TieSums x, y;
};

// Concordant pairs follow: n (n - 1) / 2 - discordant - x.pairs - y.pairs + joint_pairs.
KendallCounts kendall_counts(const KeyColumn& x, const KeyColumn& y, std::size_t n, int n_threads, Control& control);

// Dense ranks 0, 1, ... of the values (equal values share one), and their tie sums.
TieSums dense_ranks(const KeyColumn& values, std::size_t n, std::uint32_t* ranks, Control& control);

// Twice the average rank (1-based) of each value: an integer; and the tie sums.
TieSums doubled_average_ranks(const KeyColumn& values, std::size_t n, std::uint64_t* doubled, Control& control);

// Spearman's rho from doubled average ranks a (sum a = n (n + 1)): the exact
// cross sum sum a_x a_y and the tie sums of each variable.
struct SpearmanSums {
    i128 cross = 0;
    TieSums x, y;
};
SpearmanSums spearman_sums(const KeyColumn& x, const KeyColumn& y, std::size_t n, int n_threads, Control& control);

// Vigna's weighted tau of (x, y) with x the ranking variable: elements sorted
// by x descending (ties by y descending) get the rank 0, 1, ...; the weight of
// an element is element_weights[i] when given, else rank_weights[rank] when
// given, else 1 / (rank + 1). Pairs weigh the sum (additive) or the product of
// their elements' weights. NaN when x or y is constant.
double weighted_tau(const KeyColumn& x, const KeyColumn& y, std::size_t n, const double* element_weights,
                    const double* rank_weights, bool additive, Control& control);

// The null distribution of the number of inversions of a random permutation
// of n (Kendall's discordant pairs without ties), up to c: probabilities
// P(D = k) for k = 0..c. O(n c) time, O(c) memory.
std::vector<double> kendall_null_pmf(std::uint64_t n, std::uint64_t c, Control& control);

}  // namespace pairmetrics
