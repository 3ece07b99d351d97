// Alternating trees of the blossom solver: queueing the edge events of a node
// that became even or free, growing a tree by a matched pair, augmenting
// along the path between two trees and dissolving them afterwards.

#include "matching_solver.hpp"

#include <algorithm>
#include <stdexcept>

namespace pairmetrics::matching::detail {

template <class Int>
void Solver<Int>::scan_vertex(i32 v) {
    const i32 bv = topof(v);
    const Int yv = y(v);
    for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
        const i32 o = adj_other_[k];
        const i32 bo = topof(o);
        if (bo == bv) continue;
        const signed char lo = label_[bo];
        if (lo < 0) continue;
        const Int s = adj_w_[k] - yv - y(o);
        push_event(lo == 0 ? delta_ + s : delta_ + s / 2, adj_[k]);
    }
}

template <class Int>
void Solver<Int>::scan_free_vertex(i32 v) {
    const i32 bv = topof(v);
    const Int yv = y(v);
    for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
        const i32 o = adj_other_[k];
        const i32 bo = topof(o);
        if (bo == bv || label_[bo] <= 0) continue;
        push_event(delta_ + (adj_w_[k] - yv - y(o)), adj_[k]);
    }
}

template <class Int>
void Solver<Int>::scan_node(i32 b) {
    if (b < n_) {
        scan_vertex(b);
        return;
    }
    for (i32 v : leaves(b)) scan_vertex(v);  // scanning does not touch the leaves buffer
}

template <class Int>
void Solver<Int>::scan_free_node(i32 b) {
    if (b < n_) {
        scan_free_vertex(b);
        return;
    }
    for (i32 v : leaves(b)) scan_free_vertex(v);
}

template <class Int>
void Solver<Int>::grow(i32 u, i32 v) {
    ++stats_.grows;
    const i32 bu = topof(u), bv = topof(v);
    const i32 t = tree_[bu];
    settle(bv);
    label_[bv] = -1;
    tree_[bv] = t;
    tself_[bv] = v;
    tother_[bv] = u;
    tree_nodes_[t].push_back(bv);
    push_expand(bv);
    const i32 bb = base_of(bv);
    const i32 w = mate_[bb];
    const i32 bw = topof(w);
    settle(bw);
    label_[bw] = 1;
    tree_[bw] = t;
    tself_[bw] = w;
    tother_[bw] = bb;
    tree_nodes_[t].push_back(bw);
    scan_node(bw);
}

template <class Int>
i32 Solver<Int>::even_parent(i32 p) const {
    if (tother_[p] == -1) return -1;
    const i32 odd = topof(tother_[p]);
    return topof(tother_[odd]);
}

template <class Int>
void Solver<Int>::augment_path(i32 s, i32 j) {
    while (true) {
        const i32 bs = topof(s);
        const i32 up = tother_[bs];  // vertex in the odd parent, or -1 at the root
        if (bs >= n_) augment_blossom(bs, s);
        mate_[s] = j;
        if (up == -1) return;
        const i32 bt = topof(up);
        const i32 x = tself_[bt], yv = tother_[bt];
        if (bt >= n_) augment_blossom(bt, x);
        mate_[x] = yv;
        s = yv;
        j = x;
    }
}

template <class Int>
void Solver<Int>::augment(i32 u, i32 v) {
    ++stats_.augments;
    const i32 t1 = tree_[topof(u)], t2 = tree_[topof(v)];
    augment_path(u, v);
    augment_path(v, u);
    dissolve(t1);
    dissolve(t2);
}

template <class Int>
void Solver<Int>::dissolve(i32 t) {
    std::vector<i32> nodes;
    nodes.swap(tree_nodes_[t]);
    std::vector<i32> left;
    left.reserve(nodes.size());
    for (i32 b : nodes) {
        if (!alive_[b] || parent_[b] != -1 || tree_[b] != t || label_[b] == 0) continue;
        settle(b);
        label_[b] = 0;
        tree_[b] = -1;
        left.push_back(b);
    }
    for (i32 b : left) scan_free_node(b);
}

// Both weight types (64-bit, and 128-bit for large or many weights).
#define PAIRMETRICS_MATCHING_TREES_INSTANCES(W)      \
    template void Solver<W>::scan_vertex(i32);       \
    template void Solver<W>::scan_free_vertex(i32);  \
    template void Solver<W>::scan_node(i32);         \
    template void Solver<W>::scan_free_node(i32);    \
    template void Solver<W>::grow(i32, i32);         \
    template i32 Solver<W>::even_parent(i32) const;  \
    template void Solver<W>::augment_path(i32, i32); \
    template void Solver<W>::augment(i32, i32);      \
    template void Solver<W>::dissolve(i32);
PAIRMETRICS_MATCHING_TREES_INSTANCES(i64)
PAIRMETRICS_MATCHING_TREES_INSTANCES(i128)
#undef PAIRMETRICS_MATCHING_TREES_INSTANCES

}  // namespace pairmetrics::matching::detail
