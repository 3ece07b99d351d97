// Resuming the blossom solver after edges join the graph: the blossoms, the
// duals and the matching of the last solve are kept, and only what the new
// edges violate is undone.
//
// Why the repaired state is a valid start. After a solve, every node has
// label 0 and the state satisfies, with reduced cost rc = W - y_u - y_v + Z
// (Z: z of the blossoms holding both ends):
//   (1) rc >= 0 on every edge;  (2) matched edges and blossom cycle edges are
//   tight;  (3) z >= 0 and even;  (4) each blossom is matched inside except
//   its base;  (5) all vertices of a top-level node share one parity (its
//   cycle edges are tight, W and Z even), and free ones are even.
// These are all the event loop needs of its start (the same as after
// greedy_match, with blossoms as dissolve() leaves them after an augmentation).
// A new edge may break (1) only. Two steps repair it, neither lowers any rc:
//   open a top-level blossom b: its vertices go down by z_b / 2 and z_b is
//     gone. An edge inside b keeps its rc (y_u + y_v and Z both fall by z_b),
//     an edge leaving b gains z_b / 2. The only tight edge that can loosen is
//     the base's matched edge, which is unmatched (2). The children become
//     top-level nodes, matched by the cycle edges (4); all of b moved by the
//     same amount (5).
//   lower a top-level node by d > 0: its vertices down by d and, for a
//     blossom b, z_b down by 2 d: edges inside keep their rc, edges leaving
//     gain d. Only when d <= z_b / 2 (z_b stays >= 0 and even); else b is
//     opened first (its vertices down by z_b / 2) and the child holding the
//     endpoint is lowered by the rest, down to a vertex if need be. The
//     node's matched edge loosens and is unmatched.
// An edge with rc < 0 gets its ends' common top-level blossoms opened (rc
// unchanged) until the ends are in different top-level nodes (Z = 0), then
// one end's node is lowered by -rc. Since no step lowers an rc, edges repaired
// stay repaired and one pass suffices. Then free vertices outside blossoms are
// matched greedily as at the start of a solve (raising a free vertex to its
// smallest slack keeps (1)). Last, each free node with odd duals is lowered
// by 1 (its base is free: nothing else is unmatched), which restores (5).

#include "matching_solver.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace pairmetrics::matching::detail {

template <class Int>
void Solver<Int>::add_edges(std::size_t m, const i32* eu, const i32* ev, const Int* w) {
    if (!ended_) throw std::logic_error("matching: add_edges before a finished solve (internal error)");
    const std::size_t old = W_.size();
    eu_ = eu;
    ev_ = ev;
    W_.resize(m);
    for (std::size_t e = old; e < m; ++e) W_[e] = 2 * w[e];
    build_adjacency();
    pending_.assign(m, IntLimits<Int>::max);
    heap_ = decltype(heap_)();  // events left over from the last solve
    stats_ = BlossomStats{};
    for (std::size_t e = old; e < m; ++e) {
        repair_edge(static_cast<i32>(e));
        if ((e - old) % 4096 == 4095) control_.check();
    }
}

template <class Int>
BasicBlossomResult<Int> Solver<Int>::resume() {
    BasicBlossomResult<Int> result;
    ended_ = false;
    delta_ = 0;  // every top-level node has label 0: no lazy change to fold
    greedy_match();
    for (i32 b = 0; b < 2 * n_; ++b) {
        if (!alive_[b] || parent_[b] != -1) continue;
        const i32 bb = base_of(b);
        if (mate_[bb] == -1 && (y(bb) & 1)) lower(bb, 1);  // may open b: only the child holding bb moves on
    }
    std::vector<i32> roots;
    for (i32 b = 0; b < 2 * n_; ++b) {
        if (!alive_[b] || parent_[b] != -1) continue;
        stamp_[b] = 0;
        const i32 bb = base_of(b);
        if (mate_[bb] != -1) continue;
        label_[b] = 1;
        tree_[b] = bb;
        tself_[b] = bb;
        tother_[b] = -1;
        tree_nodes_[bb].assign(1, b);
        roots.push_back(b);
    }
    for (std::size_t t = 0; t < roots.size(); ++t) {
        scan_node(roots[t]);
        if (t % 4096 == 4095) control_.check();
    }
    if (!solve_events(static_cast<i32>(roots.size()))) return result;
    finish(result);
    return result;
}

template <class Int>
double Solver<Int>::inside_pairs() const {
    double pairs = 0;
    for (i32 b = n_; b < 2 * n_; ++b)
        if (alive_[b] && parent_[b] == -1) pairs += static_cast<double>(size_[b]) * size_[b];
    return pairs;
}

template <class Int>
Int Solver<Int>::reduced_cost(i32 e) {
    const i32 u = eu_[e], v = ev_[e];
    Int rc = slack(e);
    if (topof(u) != topof(v)) return rc;
    if (++mark_stamp_ == 0) {
        std::fill(mark_.begin(), mark_.end(), 0u);
        mark_stamp_ = 1;
    }
    for (i32 x = u; x != -1; x = parent_[x]) mark_[x] = mark_stamp_;
    i32 x = v;
    while (mark_[x] != mark_stamp_) x = parent_[x];
    for (; x != -1; x = parent_[x]) rc += zstore_[x];  // settled: no node is in a tree
    return rc;
}

template <class Int>
void Solver<Int>::repair_edge(i32 e) {
    const i32 u = eu_[e], v = ev_[e];
    if (u == v) return;
    const Int rc = reduced_cost(e);
    if (rc >= 0) return;
    while (topof(u) == topof(v)) open_blossom(topof(u));
    const i32 bu = topof(u), bv = topof(v);
    // Lowering a node that is already free loosens no matched edge.
    // Lower the side that frees fewer vertices: a node already free, one
    // that need not be opened.
    auto frees = [this, rc](i32 b) {
        return (mate_[base_of(b)] != -1 ? 2 : 0) + (b >= n_ && zstore_[b] / 2 < -rc ? 2 : 0);
    };
    lower(frees(bv) < frees(bu) ? v : u, -rc);
}

template <class Int>
void Solver<Int>::lower(i32 v, Int d) {
    while (true) {
        const i32 b = topof(v);
        const Int half = b < n_ ? d : zstore_[b] / 2;
        if (half >= d) {
            off_[b] -= d;
            if (b >= n_) zstore_[b] -= 2 * d;
            const i32 bb = base_of(b);
            if (d > 0 && mate_[bb] != -1) unmatch(bb);
            return;
        }
        open_blossom(b);
        d -= half;
    }
}

template <class Int>
void Solver<Int>::unmatch(i32 v) {
    const i32 m = mate_[v];
    mate_[m] = -1;
    mate_[v] = -1;
    stats_.freed += 2;
}

template <class Int>
void Solver<Int>::open_blossom(i32 b) {
    ++stats_.opened;
    const Int half = zstore_[b] / 2;
    const i32 bb = base_[b];
    if (half > 0 && mate_[bb] != -1) unmatch(bb);
    std::vector<i32> ch;
    ch.swap(childs_[b - n_]);
    cedges_[b - n_].clear();
    lift_children(b, ch, off_[b] - half);
    alive_[b] = 0;
    rep_of_[b] = -1;
    off_[b] = 0;
    zstore_[b] = 0;
    label_[b] = 0;
    tree_[b] = -1;
    free_ids_.push_back(b);
}

// Both weight types (64-bit, and 128-bit for large or many weights).
#define PAIRMETRICS_MATCHING_RESUME_INSTANCES(W)                                       \
    template void Solver<W>::add_edges(std::size_t, const i32*, const i32*, const W*); \
    template BasicBlossomResult<W> Solver<W>::resume();                                \
    template double Solver<W>::inside_pairs() const;                                   \
    template W Solver<W>::reduced_cost(i32);                                           \
    template void Solver<W>::repair_edge(i32);                                         \
    template void Solver<W>::lower(i32, W);                                            \
    template void Solver<W>::unmatch(i32);                                             \
    template void Solver<W>::open_blossom(i32);
PAIRMETRICS_MATCHING_RESUME_INSTANCES(i64)
PAIRMETRICS_MATCHING_RESUME_INSTANCES(i128)
#undef PAIRMETRICS_MATCHING_RESUME_INSTANCES

}  // namespace pairmetrics::matching::detail
