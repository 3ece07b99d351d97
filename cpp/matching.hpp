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
#include <functional>
#include <vector>

#include "control.hpp"
#include "int128.hpp"
#include "matching_distances.hpp"

namespace pairmetrics::matching {

struct BlossomStats {
    std::int64_t grows = 0, shrinks = 0, expands = 0, augments = 0, events = 0;
    std::int64_t greedy_matched = 0;  // vertices matched by the initial greedy pass
    // Repairs before a resumed solve: vertices left free, blossoms opened.
    std::int64_t freed = 0, opened = 0;
};

// 128-bit weights beyond the int64 solver's range (see int128.hpp).
using ::pairmetrics::i128;

template <class Int>
struct BasicBlossomResult {
    bool perfect = false;            // false: the graph has no perfect matching
    std::vector<std::int32_t> mate;  // mate[v]; -1 only when perfect is false
    std::vector<Int> y;              // 2 * vertex duals, size n
    // Laminar family of the blossoms alive at the end: node ids n.. n+nb-1.
    // parent[i] for i < n + nb is the blossom directly containing node i, or -1.
    std::vector<std::int32_t> parent;
    std::vector<Int> z;  // 2 * blossom duals, z[b - n]
    BlossomStats stats;
};
using BlossomResult = BasicBlossomResult<std::int64_t>;
using BlossomResult128 = BasicBlossomResult<i128>;

// An earlier solution on the same vertices (for example on a subgraph) to
// start from: y in the units of BlossomResult and mate (-1 = free). Blossoms
// are not carried over; passing y_v - (sum of z over blossoms holding v) / 2
// keeps every edge of the earlier graph feasible without them.
template <class Int>
struct BasicWarmStart {
    const Int* y;
    const std::int32_t* mate;
};
using WarmStart = BasicWarmStart<std::int64_t>;

// n vertices, m edges (eu[i], ev[i], w[i]) with 0 <= w[i] <= max_weight(n).
// Parallel edges and self loops are harmless. warm may be null; a warm start
// changes the work done, never the optimum.
BlossomResult min_weight_perfect_matching(std::int32_t n, std::size_t m, const std::int32_t* eu, const std::int32_t* ev,
                                          const std::int64_t* w, Control& control, const WarmStart* warm = nullptr);

// Largest edge weight accepted for n vertices, min(2^50, 2^59 / (n + 1)):
// n times the largest (internally doubled) weight, the scale of the duals,
// stays far inside int64.
std::int64_t max_weight(std::int32_t n);

// The same solver on Int = int64 (weights up to max_weight) or i128 (weights
// up to max_weight_128(n) = min(2^114, 2^123 / (n + 1)); slower, for exact
// weights that int64 cannot hold).
template <class Int>
BasicBlossomResult<Int> solve_perfect(std::int32_t n, std::size_t m, const std::int32_t* eu, const std::int32_t* ev,
                                      const Int* w, Control& control, const BasicWarmStart<Int>* warm = nullptr);
i128 max_weight_128(std::int32_t n);

// The laminar family of blossoms as a forest (parent[x], -1 at the top; the
// first n_vertices nodes are vertices), the one blossom-forest type of the
// solver, the pricing and the certificates: lowest common blossom of two
// vertices in O(1) (Euler tour and a sparse table of depth minima, since
// nesting can be thousands deep), and the vertices in preorder, where every
// node holds one contiguous range of them.
class BlossomTree {
  public:
    BlossomTree(std::int32_t n_vertices, const std::vector<std::int32_t>& parent);
    // The smallest blossom holding both u and v, or -1 (also for u == v).
    std::int32_t lca(std::int32_t u, std::int32_t v) const;
    // Every node after its parent.
    const std::vector<std::int32_t>& preorder() const { return preorder_; }
    // The top-level node holding node x (x itself at the top).
    std::int32_t root(std::int32_t x) const { return root_[x]; }
    const std::vector<std::int32_t>& roots() const { return root_; }
    // The vertices in preorder; node x holds order()[lo(x) .. hi(x)).
    const std::vector<std::int32_t>& order() const { return order_; }
    std::int32_t lo(std::int32_t x) const { return lo_[x]; }
    std::int32_t hi(std::int32_t x) const { return hi_[x]; }

  private:
    std::vector<std::int32_t> root_, first_, depth_, euler_, log2_, preorder_, order_, lo_, hi_;
    std::vector<std::vector<std::int32_t>> table_;  // table_[j][i]: shallowest of euler_[i .. i + 2^j)
};

// Sum of blossom duals over the blossoms containing both u and v, for many
// pairs of one dual solution of the solver.
template <class Int>
class BasicDualForest {
  public:
    explicit BasicDualForest(const BasicBlossomResult<Int>& r)
        : tree_(static_cast<std::int32_t>(r.y.size()), r.parent), zcum_(r.parent.size(), Int{0}) {
        const auto n = static_cast<std::int32_t>(r.y.size());
        for (std::int32_t x : tree_.preorder()) {
            const std::int32_t p = r.parent[x];
            zcum_[x] = (p == -1 ? Int{0} : zcum_[p]) + (x >= n ? r.z[x - n] : Int{0});
        }
    }
    Int common_z(std::int32_t u, std::int32_t v) const {
        const std::int32_t b = tree_.lca(u, v);
        return b < 0 ? Int{0} : zcum_[b];
    }
    // Sum of z over the blossoms containing vertex v.
    Int enclosing_z(std::int32_t v) const { return zcum_[v]; }
    // z of node x plus that of every blossom above it.
    Int zsum(std::int32_t x) const { return zcum_[x]; }
    const BlossomTree& tree() const { return tree_; }

  private:
    BlossomTree tree_;
    std::vector<Int> zcum_;
};
using DualForest = BasicDualForest<std::int64_t>;

// Reduced cost 2 w - y_u - y_v + sum of z over blossoms containing u and v, in
// the units of BlossomResult (exact; a negative value means the edge violates
// the dual solution).
std::int64_t reduced_cost(const BlossomResult& r, std::int32_t u, std::int32_t v, std::int64_t w);

// The complete graph on the points of a distance provider, plus one ghost
// vertex at distance 0 from everyone when `ghost` is set (odd n). Solves on
// the k-nearest-neighbour subgraph, then prices every other pair against the
// duals (using the certified neighbour radii, so most pairs are never looked
// at) and re-solves with the violated pairs until none is left: the result is
// optimal on the complete graph. Integer weights are round(d / resolution).
struct CompleteOptions {
    int k = 10;
    bool ghost = false;
    int n_threads = 1;
    bool report = true;  // report progress through the control (else only check it)
    // Tests: screen every stretch of the pricing prefix and every tile inside screened blossoms (else when it pays).
    bool screen_every_stretch = false;
    int screen_inside_from = 512;  // top-level blossoms of at least this many vertices are priced with a screen
    // Dirty rows of a partial screen that left one top-level node (and whose threshold did not rise) are screened
    // against its points alone when at least this many (else against every point; tests lower it).
    int own_columns_from = 4096;
    // Later pricing rounds resume the last round's solver, blossoms kept (else
    // each solves afresh from the last duals with the blossom duals folded in).
    bool resume = true;
    // Tests: price every pair across top-level nodes each round (else only the pairs with an end whose dual rose
    // or whose top-level node changed since the last complete pricing; the same violated pairs either way).
    bool full_pricing = false;
};

struct CompleteStats {
    int rounds = 0;                // pricing rounds over all passes
    int passes = 0;                // solves at a given scale (2 when the cost is far below max distance)
    std::int64_t edges = 0;        // edges in the final subgraph
    std::int64_t extra_pairs = 0;  // pairs priced outside the neighbour lists
    // Exact distances computed outside the lists, by where they came from, and the violated pairs they found.
    std::int64_t prefix_pairs = 0, inside_pairs = 0, screen_pairs = 0, violated_pairs = 0;
    std::int64_t prefix_screened = 0;      // pairs of the prefix a float32 screen ruled out (no exact distance)
    std::int64_t inside_screened = 0;      // the same for pairs inside one top-level blossom
    int screens = 0, partial_screens = 0;  // screens of every pair, and of some rows only
    // Rows whose dual rose since the last complete pricing (or that have no reference), summed over the rounds
    // of the prefix, and the entries of the prefix it left out as not violated since then (see full_pricing).
    std::int64_t dirty_rows = 0, prefix_skipped = 0;
    std::int64_t inside_skipped = 0;  // rows of top-level blossoms left out as unchanged since then (over rounds)
    double seconds_neighbours = 0, seconds_solve = 0, seconds_pricing = 0;  // wall time per phase
    double seconds_first_solve = 0;                 // the first solve of the start graph (part of seconds_solve)
    double seconds_screen = 0;                      // screens of every pair or of some rows (part of seconds_pricing)
    double seconds_prefix = 0, seconds_inside = 0;  // the prefix scan and the walk inside blossoms (the same)
    // Rounds solved by resuming the last round's solver (blossoms kept), and
    // over them the vertices its repairs left free and the blossoms they opened;
    // rounds solved again afresh after a resume merged blossoms (see solve_again).
    int resumes = 0, rebuilds = 0;
    std::int64_t resume_freed = 0, resume_opened = 0;
    BlossomStats last;
};

struct CompleteResult {
    BlossomResult blossom;  // integer solution; real duals are y * unit and z * unit
    double unit = 0;
    double resolution = 0;  // distances were rounded to multiples of this
    double cap = 0;         // weights were capped at this distance (no matched pair reaches it)
    double max_distance = 0;
    double cost = 0;  // sum of the matched distances
};

CompleteResult complete_min_weight_perfect_matching(const Distances& D, const CompleteOptions& options,
                                                    Control& control, CompleteStats* stats);

// LP dual certificate of a matching of the complete graph (real duals, units
// of D), checked against every pair: pairs the provider cannot rule out are
// evaluated exactly, each with a bound of its float64 rounding error.
struct Certificate {
    double max_violation = 0;        // largest -reduced cost
    double max_violation_bound = 0;  // the same plus its rounding error bound
    double lowering = 0;             // sum over vertices of half their largest violation bound
    double max_matched_slack = 0;    // largest |reduced cost| of a matched pair
    double min_z = 0;
    double dual_objective = 0;
    double cost = 0;
    double error_bound = 0;  // rounding error bound of cost and dual objective
    double magnitude = 0;    // sum of |terms| of cost and dual objective, plus the largest distance (rounding scale)
    bool complete = true;    // false: z < 0, not every pair could be screened
};

// y: nv = n + ghost vertex duals, parent: nv + nb nodes, z: nb blossom duals,
// mate: nv entries (the ghost is vertex n).
Certificate certificate(const Distances& D, bool ghost, const double* y, const std::vector<std::int32_t>& parent,
                        const double* z, const std::int32_t* mate, int n_threads, Control& control);

// Cross-match counts of many subsamples: fill(r, buffer) writes the m x m
// distance matrix of draw r; each draw is solved (its own scale) and the
// pairs whose labels z[0..m) differ are counted. Draws run on n_threads
// threads; the control is checked between draws.
std::vector<std::int64_t> crossmatch_counts(std::int64_t n_draws, std::int32_t m, const std::int8_t* z, int k,
                                            int n_threads, Control& control,
                                            const std::function<void(std::int64_t, double*)>& fill);

}  // namespace pairmetrics::matching
