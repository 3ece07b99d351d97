// The blossom solver's state, shared by the units named after the steps of
// Edmonds' algorithm: the event loop (matching_solver.cpp), dual updates
// (matching_duals.cpp), alternating trees (matching_trees.cpp) and blossom
// shrink and expand (matching_blossoms.cpp). Internal to the matching code;
// the public entry points are in matching.hpp.
//
// Node ids: 0..n-1 are vertices, n..2n-1 blossoms (ids are recycled).
// Labels: +1 even/outer, -1 odd/inner, 0 not in any tree (always matched).
//
// Duals are lazy: a top-level node b carries label[b], a time stamp and an
// offset, and the dual of a vertex v whose top-level node is b is
//     ystore[v] + off[b] + label[b] * (delta - stamp[b]),
// so a global dual step is O(1). Blossom duals move twice as fast (inside
// odd-set form). Internal weights are 2 w, which keeps every step integral:
// all tree vertices share the parity of the roots, so the slack of an edge
// between two even nodes is even.
//
// Resuming. After run() the state is an end state of Edmonds' algorithm (every
// node label 0, offsets folded). add_edges appends edges and repairs the ones
// the duals violate without dropping the blossoms; resume() grows trees from
// the vertices the repair left free, with the same event loop (see
// matching_resume.cpp for why the repaired state is a valid start).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "control.hpp"
#include "matching.hpp"

namespace pairmetrics::matching::detail {

using i64 = std::int64_t;
using i32 = std::int32_t;

// Largest value, and the bound on the dual step past which the duals could
// overflow (the weight caps keep them far below it).
template <class Int>
struct IntLimits;
template <>
struct IntLimits<i64> {
    static constexpr i64 max = std::numeric_limits<i64>::max();
    static constexpr i64 delta_limit = i64{1} << 61;
};
template <>
struct IntLimits<i128> {
    static constexpr i128 max = (i128{1} << 126) - 1 + (i128{1} << 126);
    static constexpr i128 delta_limit = i128{1} << 125;
};

// The weight types the solver is compiled for: each unit instantiates the members it defines with
// PAIRMETRICS_FOR_EACH_SOLVER_WEIGHT(its own macro of one type).
#define PAIRMETRICS_FOR_EACH_SOLVER_WEIGHT(INSTANTIATE) INSTANTIATE(i64) INSTANTIATE(i128)

template <class Int>
class Solver {
  public:
    Solver(i32 n, std::size_t m, const i32* eu, const i32* ev, const Int* w, Control& control);

    BasicBlossomResult<Int> run(const BasicWarmStart<Int>* warm);

    // After run() or resume(): edges [old m, m) of the arrays (which may have
    // moved; the first old m edges are unchanged) join the graph, and the
    // duals they violate are repaired. Then resume() solves again.
    void add_edges(std::size_t m, const i32* eu, const i32* ev, const Int* w);
    BasicBlossomResult<Int> resume();

    // Sum over top-level blossoms of their squared vertex count (the scale of
    // the pairs a pricing walks inside blossoms).
    double inside_pairs() const;

  private:
    struct Event {
        Int key;
        i32 id;  // edge id >= 0, or -(blossom + 1) for an expansion
        bool operator>(const Event& o) const { return key > o.key; }
    };

    i32 n_;
    const i32 *eu_, *ev_;
    // Rebuild the adjacency (CSR by vertex) from eu_, ev_, W_.
    void build_adjacency();
    // The event loop until every vertex is matched; false if a tree cannot grow.
    bool solve_events(i32 unmatched);

    Control& control_;
    std::vector<Int> W_;
    std::vector<i32> start_, adj_;
    // Per adjacency slot: the other end and W_ of its edge (scans read them
    // in sequence instead of one cache miss each through the edge id).
    std::vector<i32> adj_other_;
    std::vector<Int> adj_w_;
    std::vector<i32> parent_, tree_, tself_, tother_, base_, mate_;
    // The top-level node of vertex v is node_of_rep_[top_[v]]: a shrink hands
    // the representative of its largest child to the new blossom and an
    // expansion hands it back, so only the vertices of the smaller children
    // are relabelled (nested blossoms can be thousands deep).
    std::vector<i32> top_, rep_of_, node_of_rep_, size_, free_reps_;
    std::vector<Int> pending_;  // smallest key of an edge's events in the heap
    std::vector<signed char> label_, alive_;
    std::vector<Int> stamp_, off_, zstore_, ystore_;
    std::vector<unsigned> mark_;
    unsigned mark_stamp_ = 0;
    std::vector<std::vector<i32>> childs_;
    std::vector<std::vector<std::pair<i32, i32>>> cedges_;  // cedges[i]: (vertex in c_i, vertex in c_i+1)
    std::vector<i32> free_ids_;
    std::vector<std::vector<i32>> tree_nodes_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
    Int delta_ = 0;
    bool ended_ = false;  // a solve finished: edges can be added
    BlossomStats stats_;
    std::vector<i32> leaves_buf_, stack_buf_;

    i32 topof(i32 v) const { return node_of_rep_[top_[v]]; }
    Int y(i32 v) const {
        const i32 b = topof(v);
        return ystore_[v] + off_[b] + label_[b] * (delta_ - stamp_[b]);
    }
    Int slack(i32 e) const { return W_[e] - y(eu_[e]) - y(ev_[e]); }
    i32 base_of(i32 b) const { return b < n_ ? b : base_[b]; }
    i32 other(i32 e, i32 v) const { return eu_[e] == v ? ev_[e] : eu_[e]; }

    // Fold the lazy dual change of top-level node b into its offset (and its
    // blossom dual) so that its label can change at the current delta.
    void settle(i32 b) {
        const Int d = label_[b] * (delta_ - stamp_[b]);
        off_[b] += d;
        if (b >= n_) zstore_[b] += 2 * d;
        stamp_[b] = delta_;
    }

    // Vertices inside node b (into leaves_buf_).
    const std::vector<i32>& leaves(i32 b);

    // Fold a top-level node's offset into its vertices (before it stops being top-level).
    void push_offset(i32 b);

    // An edge whose earlier event comes no later is left alone: when that
    // event is processed the edge is looked at again with the duals of then.
    void push_event(Int key, i32 id) {
        if (id >= 0) {
            if (key >= pending_[id]) return;
            pending_[id] = key;
        }
        heap_.push(Event{key, id});
    }

    // Queue the events of the edges at v, whose node has just become even.
    void scan_vertex(i32 v);

    // Queue (+, free) events for edges at v, whose node has just left every tree.
    void scan_free_vertex(i32 v);

    void scan_node(i32 b);

    void scan_free_node(i32 b);

    void push_expand(i32 b);

    // Feasible start: y_v = min incident w, rounded down to even.
    void initial_duals();

    // Start from an earlier solution on a subgraph: lower duals until every
    // edge is feasible (lowering never breaks an edge already fixed), keep
    // the matched pairs that are still tight, and make free vertices even.
    // Blossoms are not carried over: the solver rebuilds the few it needs.
    void warm_init(const BasicWarmStart<Int>& warm);

    // Raise each free vertex outside every blossom to its smallest slack and
    // match it along a tight edge to such a free neighbour when there is one.
    // Vertices left free keep even duals (the parity argument above needs all
    // roots alike). No node may be in a tree.
    void greedy_match();

    // Returns the number of vertices newly matched (0 or 2).
    i32 process_edge(i32 e);

    void process_expand(i32 b);

    void grow(i32 u, i32 v);

    // The even node above even node p in its tree (-1 at the root).
    i32 even_parent(i32 p) const;

    void shrink(i32 u, i32 v);
    i32 collect_cycle(i32 u, i32 v, i32 b);

    // Make vertex v the base of blossom b, re-matching along the even path.
    void augment_blossom(i32 b, i32 v);
    // The rebases still to do: chains of nodes, each from a vertex up to a
    // blossom holding it; an item is blossom path[first + at] with vertex path[first].
    struct RebaseChains {
        struct Item {
            i32 first, at;
        };
        std::vector<i32> path;
        std::vector<Item> work;
        Item start(const std::vector<i32>& parent, i32 b, i32 v);
    };
    // One blossom's part of augment_blossom; the children to rebase go to chains.work.
    void rebase(typename RebaseChains::Item item, RebaseChains& chains);

    // Flip the path from vertex s (in an even node) to its root; s gets mate j.
    void augment_path(i32 s, i32 j);

    void augment(i32 u, i32 v);

    // Every node of tree t leaves the forest (after an augmentation).
    void dissolve(i32 t);

    void expand(i32 b);
    // The children ch of top-level blossom b become top-level nodes with
    // label 0, their vertices' duals moved by offset (b's offset, settled).
    void lift_children(i32 b, const std::vector<i32>& ch, Int offset);

    void finish(BasicBlossomResult<Int>& result);

    // Repairs of add_edges (matching_resume.cpp), on a state with no trees.
    // Reduced cost of edge e with the z of the blossoms holding both ends.
    Int reduced_cost(i32 e);
    void repair_edge(i32 e);
    // Top-level blossom b (no tree) stops being a blossom: its vertices go
    // down by z_b / 2, its children become top-level, still matched.
    void open_blossom(i32 b);
    // Lower the top-level node holding vertex v (no tree) by d >= 0, opening
    // blossoms whose dual is too small to absorb it.
    void lower(i32 v, Int d);
    void unmatch(i32 v);
};

}  // namespace pairmetrics::matching::detail
