// Exact minimum-weight perfect matching (Edmonds' primal-dual blossom algorithm).
//
// Weights are non-negative 64-bit integers, so every comparison is exact. The
// solver keeps one alternating tree per unmatched vertex alive across
// augmentations, advances all trees with one global dual step, and finds the
// next event (tight edge, blossom to expand) with a lazy priority queue over
// edge slacks instead of rescanning the graph.
//
// Dual convention ("inside" odd-set form). Primal: min sum w x, x(delta(v)) = 1,
// x(E(B)) <= (|B|-1)/2. Dual: max sum y_v - sum z_B (|B|-1)/2 subject to
//   y_u + y_v - sum_{B containing u and v} z_B <= w_uv,  z_B >= 0.
// The solver returns y and z multiplied by 2 (so they stay integers); the
// reduced cost of edge uv in those units is 2 w_uv - y_u - y_v + sum z_B.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"

namespace pairmetrics::matching {

struct BlossomStats {
    std::int64_t grows = 0, shrinks = 0, expands = 0, augments = 0, events = 0;
    std::int64_t greedy_matched = 0;  // vertices matched by the initial greedy pass
};

struct BlossomResult {
    bool perfect = false;            // false: the graph has no perfect matching
    std::vector<std::int32_t> mate;  // mate[v]; -1 only when perfect is false
    std::vector<std::int64_t> y;     // 2 * vertex duals, size n
    // Laminar family of the blossoms alive at the end: node ids n.. n+nb-1.
    // parent[i] for i < n + nb is the blossom directly containing node i, or -1.
    std::vector<std::int32_t> parent;
    std::vector<std::int64_t> z;  // 2 * blossom duals, z[b - n]
    BlossomStats stats;
};

// An earlier solution on the same vertices (for example on a subgraph) to
// start from: y in the units of BlossomResult and mate (-1 = free). Blossoms
// are not carried over; passing y_v - (sum of z over blossoms holding v) / 2
// keeps every edge of the earlier graph feasible without them.
struct WarmStart {
    const std::int64_t* y;
    const std::int32_t* mate;
};

// n vertices, m edges (eu[i], ev[i], w[i]) with 0 <= w[i] <= max_weight(n).
// Parallel edges and self loops are harmless. control and warm may be null;
// a warm start changes the work done, never the optimum.
BlossomResult min_weight_perfect_matching(std::int32_t n, std::size_t m, const std::int32_t* eu,
                                          const std::int32_t* ev, const std::int64_t* w, Control* control,
                                          const WarmStart* warm = nullptr);

// Largest edge weight accepted for n vertices, min(2^50, 2^59 / (n + 1)):
// n times the largest (internally doubled) weight, the scale of the duals,
// stays far inside int64.
std::int64_t max_weight(std::int32_t n);

// Sum of blossom duals over the blossoms containing both u and v, for many
// pairs of one dual solution: the z summed from the root of the blossom tree
// down to the lowest common ancestor, found in O(1) per pair (Euler tour and
// a sparse table of depth minima), since nesting can be thousands deep.
class DualForest {
  public:
    explicit DualForest(const BlossomResult& r);
    std::int64_t common_z(std::int32_t u, std::int32_t v) const;
    // Sum of z over the blossoms containing vertex v.
    std::int64_t enclosing_z(std::int32_t v) const { return zcum_[v]; }

  private:
    std::vector<std::int32_t> root_, first_, depth_, euler_, log2_;
    std::vector<std::vector<std::int32_t>> table_;  // table_[j][i]: shallowest of euler_[i .. i + 2^j)
    std::vector<std::int64_t> zcum_;
};

// Reduced cost 2 w - y_u - y_v + sum of z over blossoms containing u and v, in
// the units of BlossomResult (exact; a negative value means the edge violates
// the dual solution).
std::int64_t reduced_cost(const BlossomResult& r, std::int32_t u, std::int32_t v, std::int64_t w);

// Dense input: the complete graph on n points with weights
// floor(D[i, j] * scale + 1/2) (D must be exactly symmetric), plus one
// ghost vertex at weight 0 from everyone when `ghost` is set. Solves on a
// k-nearest-neighbour subgraph, then prices every other pair against the
// duals and re-solves with the violated pairs until none is left, so the
// result is optimal on the complete graph.
struct DenseStats {
    int rounds = 0;
    std::int64_t edges = 0;       // edges in the final subgraph
    std::int64_t extra_pairs = 0;  // pairs priced outside the neighbour lists
    BlossomStats last;
};

template <class T>
BlossomResult dense_min_weight_perfect_matching(const T* D, std::int32_t n, std::ptrdiff_t row_stride,
                                                std::ptrdiff_t col_stride, double scale, bool ghost, int k,
                                                Control* control, DenseStats* stats);

// Cross-match counts for many subsamples of one pooled distance matrix:
// for each row r of draws (n_draws x m point indices into the p x p matrix
// full), solve the matching of the m drawn points (m even) and count the
// pairs whose labels z[0..m) differ. Subsamples run on n_threads threads.
std::vector<std::int64_t> crossmatch_counts(const double* full, std::int64_t p, const std::int64_t* draws,
                                            std::int64_t n_draws, std::int32_t m, const std::int8_t* z,
                                            double scale, int k, int n_threads, Control* control);

// Squared Euclidean distances of the row pairs (u[i], v[i]) of the n x d
// row-major X, summed in a fixed order so that a pair always gets the same
// value, whatever batch it is computed in.
void pair_squared_distances(const double* X, std::int64_t d, std::size_t m, const std::int64_t* u,
                            const std::int64_t* v, double* out);

}  // namespace pairmetrics::matching
