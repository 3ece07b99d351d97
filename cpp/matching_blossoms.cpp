// Blossoms of the blossom solver: shrinking an odd cycle of a tree into a
// blossom, expanding an odd blossom whose dual reached zero, and moving the
// base of a blossom during an augmentation.

#include "matching_solver.hpp"

#include <algorithm>
#include <stdexcept>

namespace pairmetrics::matching::detail {

template <class Int>
const std::vector<i32>& Solver<Int>::leaves(i32 b) {
    leaves_buf_.clear();
    if (b < n_) {
        leaves_buf_.push_back(b);
        return leaves_buf_;
    }
    stack_buf_.clear();
    stack_buf_.push_back(b);
    while (!stack_buf_.empty()) {
        const i32 x = stack_buf_.back();
        stack_buf_.pop_back();
        if (x < n_)
            leaves_buf_.push_back(x);
        else
            for (i32 c : childs_[x - n_]) stack_buf_.push_back(c);
    }
    return leaves_buf_;
}

template <class Int>
void Solver<Int>::push_expand(i32 b) {
    if (b < n_) return;
    push_event(delta_ + zstore_[b] / 2, -(b + 1));  // b is settled: zstore is current
}

// The odd cycle closed by the tight edge (u, v) between two even nodes of one
// tree, as the children (from their lowest common even ancestor, which is
// returned) and the edges between consecutive children of the new blossom b.
template <class Int>
i32 Solver<Int>::collect_cycle(i32 u, i32 v, i32 b) {
    const i32 bu = topof(u), bv = topof(v);
    // Lowest common even ancestor: walk both paths up, alternating.
    if (++mark_stamp_ == 0) {
        std::fill(mark_.begin(), mark_.end(), 0u);
        mark_stamp_ = 1;
    }
    std::vector<i32> pu, pv;  // even nodes from bu / bv upwards
    i32 x = bu, yb = bv, lca = -1;
    while (lca == -1) {
        if (x != -1) {
            if (mark_[x] == mark_stamp_) {
                lca = x;
                break;
            }
            mark_[x] = mark_stamp_;
            pu.push_back(x);
            x = even_parent(x);
        }
        if (yb != -1) {
            if (mark_[yb] == mark_stamp_) {
                lca = yb;
                break;
            }
            mark_[yb] = mark_stamp_;
            pv.push_back(yb);
            yb = even_parent(yb);
        }
    }
    auto cut = [lca](std::vector<i32>& p) {
        auto it = std::find(p.begin(), p.end(), lca);
        p.erase(it, p.end());
    };
    cut(pu);
    cut(pv);
    // Full paths including odd nodes, from the bottom up (excluding lca).
    auto full = [this](const std::vector<i32>& evens) {
        std::vector<i32> out;
        out.reserve(2 * evens.size());
        for (i32 p : evens) {
            out.push_back(p);
            out.push_back(topof(tother_[p]));
        }
        return out;
    };
    const std::vector<i32> fu = full(pu), fv = full(pv);
    std::vector<i32>& ch = childs_[b - n_];
    std::vector<std::pair<i32, i32>>& ce = cedges_[b - n_];
    ch.clear();
    ce.clear();
    ch.push_back(lca);
    for (auto it = fu.rbegin(); it != fu.rend(); ++it) {
        // parent ch.back() -> child *it along the child's tree edge
        ce.emplace_back(tother_[*it], tself_[*it]);
        ch.push_back(*it);
    }
    ce.emplace_back(u, v);
    for (std::size_t i = 0; i < fv.size(); ++i) {
        ch.push_back(fv[i]);
        ce.emplace_back(tself_[fv[i]], tother_[fv[i]]);
    }
    return lca;
}

template <class Int>
void Solver<Int>::shrink(i32 u, i32 v) {
    ++stats_.shrinks;
    const i32 t = tree_[topof(u)];
    const i32 b = free_ids_.back();
    free_ids_.pop_back();
    const i32 lca = collect_cycle(u, v, b);
    std::vector<i32>& ch = childs_[b - n_];
    // If bv == lca, fv is empty and (u, v) closes the cycle onto lca;
    // otherwise fv's topmost odd node closes it with its tree edge.
    // The largest child keeps its offset and representative; the others
    // move their offsets into their vertices, relative to it.
    i32 big = ch[0];
    for (i32 c : ch) {
        settle(c);
        if (size_[c] > size_[big]) big = c;
    }
    const i32 rep = rep_of_[big];
    i32 total = 0;
    for (i32 c : ch) {
        parent_[c] = b;
        total += size_[c];
        if (c == big) continue;
        const Int shift = off_[c] - off_[big];
        for (i32 vtx : leaves(c)) {
            ystore_[vtx] += shift;
            top_[vtx] = rep;
        }
        free_reps_.push_back(rep_of_[c]);
        rep_of_[c] = -1;
        off_[c] = 0;
    }
    const Int offset = off_[big];
    off_[big] = 0;
    rep_of_[big] = -1;
    rep_of_[b] = rep;
    node_of_rep_[rep] = b;
    size_[b] = total;
    alive_[b] = 1;
    parent_[b] = -1;
    base_[b] = base_of(lca);
    label_[b] = 1;
    tree_[b] = t;
    tself_[b] = tself_[lca];
    tother_[b] = tother_[lca];
    stamp_[b] = delta_;
    off_[b] = offset;
    zstore_[b] = 0;
    tree_nodes_[t].push_back(b);
    std::vector<i32> odd;
    for (i32 c : ch)
        if (label_[c] == -1) odd.push_back(c);
    for (i32 c : ch) {
        label_[c] = 0;
        tree_[c] = -1;
    }
    for (i32 c : odd) scan_node(c);
}

template <class Int>
void Solver<Int>::augment_blossom(i32 b, i32 v) {
    // Moving the base of a blossom rematches its cycle and moves the bases of
    // some children, each of which touches only its own vertices: a work list
    // does them in any order, without recursion (nesting can be thousands
    // deep). Each vertex's ancestors up to the blossom are collected once
    // (the nesting does not change here): the rebases of the blossoms on
    // that chain, one inside the other, step down it instead of climbing
    // from the vertex again each time.
    RebaseChains chains;
    chains.work.push_back(chains.start(parent_, b, v));
    while (!chains.work.empty()) {
        const auto item = chains.work.back();
        chains.work.pop_back();
        rebase(item, chains);
    }
}

template <class Int>
typename Solver<Int>::RebaseChains::Item Solver<Int>::RebaseChains::start(const std::vector<i32>& parent, i32 b,
                                                                          i32 v) {
    const auto first = static_cast<i32>(path.size());
    path.push_back(v);
    while (path.back() != b) path.push_back(parent[path.back()]);
    return Item{first, static_cast<i32>(path.size()) - 1 - first};
}

template <class Int>
void Solver<Int>::rebase(typename RebaseChains::Item item, RebaseChains& chains) {
    const i32 b = chains.path[item.first + item.at], v = chains.path[item.first];
    const i32 t = chains.path[item.first + item.at - 1];  // the child of b holding v
    if (t >= n_) chains.work.push_back({item.first, item.at - 1});
    std::vector<i32>& ch = childs_[b - n_];
    std::vector<std::pair<i32, i32>>& ce = cedges_[b - n_];
    const i32 k = static_cast<i32>(ch.size());
    const i32 i0 = static_cast<i32>(std::find(ch.begin(), ch.end(), t) - ch.begin());
    i32 j = i0;
    // Walk the even side of the cycle from t to the base, two children at a
    // time: the edge between them becomes matched.
    while (j != 0) {
        const bool forward = i0 % 2 == 1;
        const i32 j1 = forward ? j + 1 : j - 1;
        const i32 j2 = forward ? (j1 + 1) % k : j1 - 1;
        const auto [a, c] = forward ? ce[j1] : std::make_pair(ce[j1 - 1].second, ce[j1 - 1].first);
        if (ch[j1] >= n_) chains.work.push_back(chains.start(parent_, ch[j1], a));  // a in child j1, c in child j2
        if (ch[j2] >= n_) chains.work.push_back(chains.start(parent_, ch[j2], c));
        mate_[a] = c;
        mate_[c] = a;
        j = j2;
    }
    std::rotate(ch.begin(), ch.begin() + i0, ch.end());
    std::rotate(ce.begin(), ce.begin() + i0, ce.end());
    base_[b] = v;
}

template <class Int>
void Solver<Int>::lift_children(i32 b, const std::vector<i32>& ch, Int offset) {
    // The largest child takes b's representative and the offset; the others
    // get their own, and the offset moves into their vertices.
    i32 big = ch[0];
    for (i32 c : ch)
        if (size_[c] > size_[big]) big = c;
    for (i32 c : ch) {
        parent_[c] = -1;
        if (c == big) {
            rep_of_[c] = rep_of_[b];
            node_of_rep_[rep_of_[c]] = c;
            off_[c] = offset;
        } else {
            const i32 rep = free_reps_.back();
            free_reps_.pop_back();
            rep_of_[c] = rep;
            node_of_rep_[rep] = c;
            for (i32 vtx : leaves(c)) {
                top_[vtx] = rep;
                ystore_[vtx] += offset;
            }
            off_[c] = 0;
        }
        stamp_[c] = delta_;
        label_[c] = 0;
        tree_[c] = -1;
    }
}

template <class Int>
void Solver<Int>::expand(i32 b) {
    ++stats_.expands;
    const i32 t = tree_[b];
    settle(b);
    std::vector<i32> ch = childs_[b - n_];
    const std::vector<std::pair<i32, i32>> ce = cedges_[b - n_];
    const i32 k = static_cast<i32>(ch.size());
    lift_children(b, ch, off_[b]);
    const i32 cj = topof(tself_[b]);
    const i32 j = static_cast<i32>(std::find(ch.begin(), ch.end(), cj) - ch.begin());
    label_[cj] = -1;
    tree_[cj] = t;
    tself_[cj] = tself_[b];
    tother_[cj] = tother_[b];
    std::vector<i32> evens, odds{cj};
    i32 i = j;
    const bool forward = (j % 2 == 1);
    while (i != 0) {
        for (int half = 0; half < 2; ++half) {
            i32 nxt, self, oth;
            if (forward) {
                nxt = (i + 1) % k;
                oth = ce[i].first;
                self = ce[i].second;
            } else {
                nxt = i - 1;
                self = ce[i - 1].first;
                oth = ce[i - 1].second;
            }
            const i32 c = ch[nxt];
            label_[c] = half == 0 ? 1 : -1;
            tree_[c] = t;
            tself_[c] = self;
            tother_[c] = oth;
            (half == 0 ? evens : odds).push_back(c);
            i = nxt;
        }
    }
    alive_[b] = 0;
    rep_of_[b] = -1;
    off_[b] = 0;
    parent_[b] = -1;
    label_[b] = 0;
    tree_[b] = -1;
    childs_[b - n_].clear();
    cedges_[b - n_].clear();
    free_ids_.push_back(b);
    for (i32 c : odds) {
        tree_nodes_[t].push_back(c);
        push_expand(c);
    }
    for (i32 c : evens) tree_nodes_[t].push_back(c);
    for (i32 c : evens) scan_node(c);
    for (i32 c : ch)
        if (label_[c] == 0) scan_free_node(c);
}

// Both weight types (64-bit, and 128-bit for large or many weights).
#define PAIRMETRICS_MATCHING_BLOSSOMS_INSTANCES(W)                           \
    template const std::vector<i32>& Solver<W>::leaves(i32);                 \
    template void Solver<W>::push_expand(i32);                               \
    template void Solver<W>::shrink(i32, i32);                               \
    template i32 Solver<W>::collect_cycle(i32, i32, i32);                    \
    template void Solver<W>::augment_blossom(i32, i32);                      \
    template void Solver<W>::lift_children(i32, const std::vector<i32>&, W); \
    template void Solver<W>::expand(i32);
PAIRMETRICS_MATCHING_BLOSSOMS_INSTANCES(i64)
PAIRMETRICS_MATCHING_BLOSSOMS_INSTANCES(i128)
#undef PAIRMETRICS_MATCHING_BLOSSOMS_INSTANCES

}  // namespace pairmetrics::matching::detail
