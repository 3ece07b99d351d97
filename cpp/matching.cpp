#include "matching.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <mutex>
#include <queue>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace pairmetrics::matching {

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

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

template <class Int>
class Solver {
  public:
    Solver(i32 n, std::size_t m, const i32* eu, const i32* ev, const Int* w, Control& control)
        : n_(n), eu_(eu), ev_(ev), control_(control) {
        W_.resize(m);
        for (std::size_t e = 0; e < m; ++e) W_[e] = 2 * w[e];
        std::vector<i32> deg(n + 1, 0);
        for (std::size_t e = 0; e < m; ++e) {
            if (eu[e] == ev[e]) continue;
            ++deg[eu[e]];
            ++deg[ev[e]];
        }
        start_.assign(n + 1, 0);
        for (i32 v = 0; v < n; ++v) start_[v + 1] = start_[v] + deg[v];
        adj_.resize(start_[n]);
        std::vector<i32> fill(start_.begin(), start_.end() - 1);
        for (std::size_t e = 0; e < m; ++e) {
            if (eu[e] == ev[e]) continue;
            adj_[fill[eu[e]]++] = static_cast<i32>(e);
            adj_[fill[ev[e]]++] = static_cast<i32>(e);
        }
        const std::size_t nodes = 2 * static_cast<std::size_t>(n);
        parent_.assign(nodes, -1);
        label_.assign(nodes, 0);
        tree_.assign(nodes, -1);
        stamp_.assign(nodes, 0);
        off_.assign(nodes, 0);
        zstore_.assign(nodes, 0);
        tself_.assign(nodes, -1);
        tother_.assign(nodes, -1);
        base_.assign(nodes, -1);
        alive_.assign(nodes, 0);
        mark_.assign(nodes, 0);
        childs_.resize(n);
        cedges_.resize(n);
        for (i32 b = 2 * n - 1; b >= n; --b) free_ids_.push_back(b);
        top_.resize(n);
        rep_of_.assign(nodes, -1);
        node_of_rep_.assign(nodes, -1);
        size_.assign(nodes, 0);
        pending_.assign(m, IntLimits<Int>::max);
        for (i32 r = 2 * n - 1; r >= n; --r) free_reps_.push_back(r);
        mate_.assign(n, -1);
        ystore_.assign(n, 0);
        tree_nodes_.resize(n);
        for (i32 v = 0; v < n; ++v) {
            top_[v] = v;
            rep_of_[v] = v;
            node_of_rep_[v] = v;
            size_[v] = 1;
            base_[v] = v;
            alive_[v] = 1;
        }
    }

    BasicBlossomResult<Int> run(const BasicWarmStart<Int>* warm) {
        BasicBlossomResult<Int> result;
        for (i32 v = 0; v < n_; ++v)
            if (start_[v] == start_[v + 1]) return result;  // isolated vertex: no perfect matching
        if (warm)
            warm_init(*warm);
        else
            initial_duals();
        greedy_match();
        i32 unmatched = 0;
        for (i32 v = 0; v < n_; ++v) {
            if (mate_[v] != -1) continue;
            ++unmatched;
            label_[v] = 1;
            tree_[v] = v;
            tself_[v] = v;
            tother_[v] = -1;
            tree_nodes_[v].push_back(v);
        }
        for (i32 v = 0; v < n_; ++v)
            if (mate_[v] == -1) scan_vertex(v);
        std::int64_t since_check = 0;
        while (unmatched > 0) {
            if (heap_.empty()) return result;  // a tree cannot grow: no perfect matching
            const Event ev = heap_.top();
            heap_.pop();
            ++stats_.events;
            if (ev.id >= 0 && pending_[ev.id] == ev.key) pending_[ev.id] = IntLimits<Int>::max;
            if (ev.key > delta_) delta_ = ev.key;
            // Safety net: the weight cap keeps duals far below this.
            if (delta_ > IntLimits<Int>::delta_limit) throw std::overflow_error("matching: dual values overflow");
            if (ev.id >= 0) {
                unmatched -= process_edge(ev.id);
            } else {
                process_expand(-ev.id - 1);
            }
            // A few hundred events take microseconds; check() is cheap (the
            // callback runs at most every Control::kReportInterval).
            if (++since_check >= 256) {
                since_check = 0;
                control_.check();
            }
        }
        finish(result);
        return result;
    }

  private:
    struct Event {
        Int key;
        i32 id;  // edge id >= 0, or -(blossom + 1) for an expansion
        bool operator>(const Event& o) const { return key > o.key; }
    };

    i32 n_;
    const i32 *eu_, *ev_;
    Control& control_;
    std::vector<Int> W_;
    std::vector<i32> start_, adj_;
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
    const std::vector<i32>& leaves(i32 b) {
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

    // Fold a top-level node's offset into its vertices (before it stops being top-level).
    void push_offset(i32 b) {
        settle(b);
        if (off_[b] != 0)
            for (i32 v : leaves(b)) ystore_[v] += off_[b];
        off_[b] = 0;
    }

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
    void scan_vertex(i32 v) {
        const i32 bv = topof(v);
        const Int yv = y(v);
        for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
            const i32 e = adj_[k];
            const i32 o = other(e, v);
            const i32 bo = topof(o);
            if (bo == bv) continue;
            const signed char lo = label_[bo];
            if (lo < 0) continue;
            const Int s = W_[e] - yv - y(o);
            push_event(lo == 0 ? delta_ + s : delta_ + s / 2, e);
        }
    }

    // Queue (+, free) events for edges at v, whose node has just left every tree.
    void scan_free_vertex(i32 v) {
        const i32 bv = topof(v);
        const Int yv = y(v);
        for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
            const i32 e = adj_[k];
            const i32 o = other(e, v);
            const i32 bo = topof(o);
            if (bo == bv || label_[bo] <= 0) continue;
            push_event(delta_ + (W_[e] - yv - y(o)), e);
        }
    }

    void scan_node(i32 b) {
        if (b < n_) {
            scan_vertex(b);
            return;
        }
        for (i32 v : leaves(b)) scan_vertex(v);  // scanning does not touch the leaves buffer
    }

    void scan_free_node(i32 b) {
        if (b < n_) {
            scan_free_vertex(b);
            return;
        }
        for (i32 v : leaves(b)) scan_free_vertex(v);
    }

    void push_expand(i32 b) {
        if (b < n_) return;
        push_event(delta_ + zstore_[b] / 2, -(b + 1));  // b is settled: zstore is current
    }

    // Feasible start: y_v = min incident w, rounded down to even.
    void initial_duals() {
        for (i32 v = 0; v < n_; ++v) {
            Int best = IntLimits<Int>::max;
            for (i32 k = start_[v]; k < start_[v + 1]; ++k) best = std::min(best, W_[adj_[k]]);
            const Int half = best / 2;
            ystore_[v] = half - (half & 1);
        }
    }

    // Start from an earlier solution on a subgraph: lower duals until every
    // edge is feasible (lowering never breaks an edge already fixed), keep
    // the matched pairs that are still tight, and make free vertices even.
    // Blossoms are not carried over: the solver rebuilds the few it needs.
    void warm_init(const BasicWarmStart<Int>& warm) {
        for (i32 v = 0; v < n_; ++v) ystore_[v] = warm.y[v];
        for (std::size_t e = 0; e < W_.size(); ++e) {
            if (eu_[e] == ev_[e]) continue;
            const Int s = W_[e] - ystore_[eu_[e]] - ystore_[ev_[e]];
            if (s < 0) ystore_[eu_[e]] += s;
        }
        for (i32 v = 0; v < n_; ++v) {
            const i32 m = warm.mate[v];
            if (m <= v || m >= n_ || warm.mate[m] != v) continue;
            for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
                const i32 e = adj_[k];
                if (other(e, v) == m && W_[e] - ystore_[v] - ystore_[m] == 0) {
                    mate_[v] = m;
                    mate_[m] = v;
                    break;
                }
            }
        }
        for (i32 v = 0; v < n_; ++v)
            if (mate_[v] == -1) ystore_[v] -= ystore_[v] & 1;
    }

    // Raise each free vertex to its smallest slack and match it along a
    // tight edge to a free neighbour when there is one. Vertices left free
    // keep even duals (the parity argument above needs all roots alike).
    void greedy_match() {
        for (i32 v = 0; v < n_; ++v) {
            if (mate_[v] != -1) continue;
            Int best = IntLimits<Int>::max;
            i32 best_free = -1;
            for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
                const i32 e = adj_[k];
                const i32 o = other(e, v);
                const Int s = W_[e] - ystore_[v] - ystore_[o];
                if (s < best || (s == best && best_free == -1 && mate_[o] == -1)) {
                    best = s;
                    best_free = mate_[o] == -1 ? o : -1;
                }
            }
            if (best_free != -1) {
                ystore_[v] += best;
                mate_[v] = best_free;
                mate_[best_free] = v;
                stats_.greedy_matched += 2;
            } else {
                ystore_[v] += best - (best & 1);
            }
        }
    }

    // Returns the number of vertices newly matched (0 or 2).
    i32 process_edge(i32 e) {
        i32 u = eu_[e], v = ev_[e];
        i32 bu = topof(u), bv = topof(v);
        if (bu == bv) return 0;
        if (label_[bu] != 1) {
            std::swap(u, v);
            std::swap(bu, bv);
        }
        if (label_[bu] != 1 || label_[bv] < 0) return 0;
        const Int s = slack(e);
        if (s < 0) throw std::logic_error("matching: negative slack (internal error)");
        if (label_[bv] == 0) {
            if (s > 0) {
                push_event(delta_ + s, e);
                return 0;
            }
            grow(u, v);
            return 0;
        }
        if (s > 0) {
            if (s & 1) throw std::logic_error("matching: odd slack between even nodes (internal error)");
            push_event(delta_ + s / 2, e);
            return 0;
        }
        if (tree_[bu] == tree_[bv]) {
            shrink(u, v);
            return 0;
        }
        augment(u, v);
        return 2;
    }

    void process_expand(i32 b) {
        if (!alive_[b] || parent_[b] != -1 || label_[b] != -1) return;
        const Int z = zstore_[b] - 2 * (delta_ - stamp_[b]);
        if (z < 0) throw std::logic_error("matching: negative blossom dual (internal error)");
        if (z > 0) {
            push_event(delta_ + z / 2, -(b + 1));
            return;
        }
        expand(b);
    }

    void grow(i32 u, i32 v) {
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

    // The even node above even node p in its tree (-1 at the root).
    i32 even_parent(i32 p) const {
        if (tother_[p] == -1) return -1;
        const i32 odd = topof(tother_[p]);
        return topof(tother_[odd]);
    }

    void shrink(i32 u, i32 v) {
        ++stats_.shrinks;
        const i32 bu = topof(u), bv = topof(v);
        const i32 t = tree_[bu];
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
        const i32 b = free_ids_.back();
        free_ids_.pop_back();
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

    // Make vertex v the base of blossom b, re-matching along the even path.
    void augment_blossom(i32 b, i32 v) {
        i32 t = v;
        while (parent_[t] != b) t = parent_[t];
        if (t >= n_) augment_blossom(t, v);
        std::vector<i32>& ch = childs_[b - n_];
        std::vector<std::pair<i32, i32>>& ce = cedges_[b - n_];
        const i32 k = static_cast<i32>(ch.size());
        const i32 i0 = static_cast<i32>(std::find(ch.begin(), ch.end(), t) - ch.begin());
        i32 j = i0;
        if (j % 2 == 1) {
            while (j != 0) {
                // edges j (matched, becomes free) and j+1 (becomes matched)
                const i32 j1 = j + 1;
                const auto [a, c] = ce[j1];  // a in c_j1, c in c_{j1+1}
                const i32 j2 = (j1 + 1) % k;
                if (ch[j1] >= n_) augment_blossom(ch[j1], a);
                if (ch[j2] >= n_) augment_blossom(ch[j2], c);
                mate_[a] = c;
                mate_[c] = a;
                j = j2;
            }
        } else {
            while (j != 0) {
                const i32 j1 = j - 1;
                const auto [c, a] = ce[j1 - 1];  // c in c_{j1-1}, a in c_j1
                const i32 j2 = j1 - 1;
                if (ch[j1] >= n_) augment_blossom(ch[j1], a);
                if (ch[j2] >= n_) augment_blossom(ch[j2], c);
                mate_[a] = c;
                mate_[c] = a;
                j = j2;
            }
        }
        std::rotate(ch.begin(), ch.begin() + i0, ch.end());
        std::rotate(ce.begin(), ce.begin() + i0, ce.end());
        base_[b] = v;
    }

    // Flip the path from vertex s (in an even node) to its root; s gets mate j.
    void augment_path(i32 s, i32 j) {
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

    void augment(i32 u, i32 v) {
        ++stats_.augments;
        const i32 t1 = tree_[topof(u)], t2 = tree_[topof(v)];
        augment_path(u, v);
        augment_path(v, u);
        dissolve(t1);
        dissolve(t2);
    }

    // Every node of tree t leaves the forest (after an augmentation).
    void dissolve(i32 t) {
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

    void expand(i32 b) {
        ++stats_.expands;
        const i32 t = tree_[b];
        settle(b);
        std::vector<i32> ch = childs_[b - n_];
        const std::vector<std::pair<i32, i32>> ce = cedges_[b - n_];
        const i32 k = static_cast<i32>(ch.size());
        // The largest child takes b's representative and offset back; the
        // others get their own, and b's offset moves into their vertices.
        i32 big = ch[0];
        for (i32 c : ch)
            if (size_[c] > size_[big]) big = c;
        const Int offset = off_[b];
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

    void finish(BasicBlossomResult<Int>& result) {
        std::vector<i32> tops;
        for (i32 b = 0; b < 2 * n_; ++b)
            if (alive_[b] && parent_[b] == -1) tops.push_back(b);
        for (i32 b : tops) push_offset(b);
        // Renumber surviving blossoms n..n+nb-1.
        std::vector<i32> id(2 * n_, -1);
        i32 nb = 0;
        for (i32 b = n_; b < 2 * n_; ++b)
            if (alive_[b]) id[b] = n_ + nb++;
        for (i32 v = 0; v < n_; ++v) id[v] = v;
        result.perfect = true;
        result.mate.assign(mate_.begin(), mate_.end());
        result.y = ystore_;
        result.parent.assign(n_ + nb, -1);
        result.z.assign(nb, 0);
        for (i32 b = 0; b < 2 * n_; ++b) {
            if (id[b] < 0) continue;
            if (parent_[b] != -1) result.parent[id[b]] = id[parent_[b]];
            if (b >= n_) result.z[id[b] - n_] = zstore_[b];
        }
        result.stats = stats_;
    }
};

}  // namespace
std::int64_t max_weight(std::int32_t n) {
    // Internal weights are doubled and duals stay below ~n times the largest
    // weight; 2^59 / (n + 1) leaves a factor of 8 of headroom in int64.
    const i64 cap = (i64{1} << 59) / (static_cast<i64>(n) + 1);
    return std::min<i64>(cap, i64{1} << 50);
}

BlossomResult min_weight_perfect_matching(std::int32_t n, std::size_t m, const std::int32_t* eu,
                                          const std::int32_t* ev, const std::int64_t* w, Control& control,
                                          const WarmStart* warm) {
    return solve_perfect<i64>(n, m, eu, ev, w, control, warm);
}

template <class Int>
BasicBlossomResult<Int> solve_perfect(std::int32_t n, std::size_t m, const std::int32_t* eu, const std::int32_t* ev,
                                      const Int* w, Control& control, const BasicWarmStart<Int>* warm) {
    if (n <= 0) {
        BasicBlossomResult<Int> r;
        r.perfect = true;
        return r;
    }
    Solver<Int> solver(n, m, eu, ev, w, control);
    return solver.run(warm);
}
template BlossomResult solve_perfect<i64>(std::int32_t, std::size_t, const std::int32_t*, const std::int32_t*,
                                          const i64*, Control&, const WarmStart*);
template BlossomResult128 solve_perfect<i128>(std::int32_t, std::size_t, const std::int32_t*, const std::int32_t*,
                                              const i128*, Control&, const BasicWarmStart<i128>*);

i128 max_weight_128(std::int32_t n) {
    // As max_weight, with 2^123 in place of 2^59.
    const i128 cap = (i128{1} << 123) / (static_cast<i128>(n) + 1);
    return std::min<i128>(cap, i128{1} << 114);
}

// ------------------------------------------------------------ blossom tree

BlossomTree::BlossomTree(std::int32_t n_vertices, const std::vector<std::int32_t>& parent) {
    (void)n_vertices;
    const auto nodes = static_cast<i32>(parent.size());
    std::vector<i32> start(nodes + 1, 0), kids(nodes);
    for (i32 x = 0; x < nodes; ++x)
        if (parent[x] != -1) ++start[parent[x] + 1];
    for (i32 x = 0; x < nodes; ++x) start[x + 1] += start[x];
    {
        std::vector<i32> fill(start.begin(), start.end() - 1);
        for (i32 x = 0; x < nodes; ++x)
            if (parent[x] != -1) kids[fill[parent[x]]++] = x;
    }
    root_.assign(nodes, -1);
    first_.assign(nodes, 0);
    depth_.assign(nodes, 0);
    // Iterative DFS from every root, recording the Euler tour.
    std::vector<std::pair<i32, i32>> stack;  // (node, next child slot)
    for (i32 top = 0; top < nodes; ++top) {
        if (parent[top] != -1) continue;
        root_[top] = top;
        preorder_.push_back(top);
        if (start[top] == start[top + 1]) continue;  // a vertex in no blossom
        stack.emplace_back(top, start[top]);
        first_[top] = static_cast<i32>(euler_.size());
        euler_.push_back(top);
        while (!stack.empty()) {
            auto& [x, slot] = stack.back();
            if (slot == start[x + 1]) {
                stack.pop_back();
                if (!stack.empty()) euler_.push_back(stack.back().first);
                continue;
            }
            const i32 c = kids[slot++];
            root_[c] = top;
            depth_[c] = depth_[x] + 1;
            first_[c] = static_cast<i32>(euler_.size());
            euler_.push_back(c);
            preorder_.push_back(c);
            stack.emplace_back(c, start[c]);
        }
    }
    const auto len = static_cast<i32>(euler_.size());
    log2_.assign(len + 1, 0);
    for (i32 i = 2; i <= len; ++i) log2_[i] = log2_[i / 2] + 1;
    table_.emplace_back(euler_);
    for (i32 span = 2; span <= len; span *= 2) {
        const std::vector<i32>& prev = table_.back();
        std::vector<i32> next(len - span + 1);
        for (i32 i = 0; i + span <= len; ++i) {
            const i32 a = prev[i], b = prev[i + span / 2];
            next[i] = depth_[a] <= depth_[b] ? a : b;
        }
        table_.push_back(std::move(next));
    }
}

std::int32_t BlossomTree::lca(std::int32_t u, std::int32_t v) const {
    if (u == v || root_[u] != root_[v]) return -1;
    i32 a = first_[u], b = first_[v];
    if (a > b) std::swap(a, b);
    const i32 level = log2_[b - a + 1];
    const i32 x = table_[level][a], y = table_[level][b - (1 << level) + 1];
    return depth_[x] <= depth_[y] ? x : y;
}

std::int64_t reduced_cost(const BlossomResult& r, std::int32_t u, std::int32_t v, std::int64_t w) {
    return 2 * w - r.y[u] - r.y[v] + DualForest(r).common_z(u, v);
}

// ------------------------------------------------- complete graph solve

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr i64 kNoRadius = std::numeric_limits<i64>::max();
// A screen skips the pairs inside a top-level blossom of at least this many
// vertices (the preorder walk prices them) and keeps those inside smaller
// ones, so that only changes of large blossoms force rows to be screened again.
constexpr i32 kSkipInside = 64;

std::uint64_t pair_key(i32 a, i32 b) {
    if (a > b) std::swap(a, b);
    return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
}

// Neighbour lists of all points with exact distances, nearest first.
struct Lists {
    i32 store = 0;
    std::vector<i32> j;
    std::vector<double> d;
    std::vector<double> bound;  // lower bound of every distance outside the list
};

Lists neighbour_lists(const Distances& D, i32 store, int n_threads, Control& control) {
    const i32 n = D.size();
    Lists L;
    L.store = store;
    L.j.resize(static_cast<std::size_t>(n) * store);
    L.d.resize(L.j.size());
    L.bound.assign(n, std::numeric_limits<double>::infinity());
    D.nearest(store, L.j.data(), L.bound.data(), n_threads, control);
    const std::size_t blocks = (static_cast<std::size_t>(n) + 255) / 256;
    parallel_for(blocks, n_threads, [&](std::size_t b) {
        std::vector<std::pair<double, i32>> row(store);
        const i32 lo = static_cast<i32>(b) * 256, hi = std::min(n, lo + 256);
        for (i32 i = lo; i < hi; ++i) {
            const std::size_t o = static_cast<std::size_t>(i) * store;
            for (i32 t = 0; t < store; ++t) row[t] = {D(i, L.j[o + t]), L.j[o + t]};
            std::sort(row.begin(), row.end());
            for (i32 t = 0; t < store; ++t) {
                L.d[o + t] = row[t].first;
                L.j[o + t] = row[t].second;
            }
        }
        control.check();
    }, &control);
    return L;
}

// The blossom forest of a solution laid out for pricing: vertices in
// preorder (every blossom holds a contiguous range of them), the top-level
// node of each vertex and the sum of z over each node and its ancestors.
struct Laminar {
    std::vector<i32> order;  // vertices, each blossom's as one range
    std::vector<i32> lo, hi;  // node x holds order[lo[x] .. hi[x])
    std::vector<i32> top;    // top-level node holding vertex v (v itself when in no blossom)
    std::vector<i64> zc;     // z of node x and of every blossom above it

    explicit Laminar(const BlossomResult& r) {
        const auto N = static_cast<i32>(r.y.size());
        const auto nodes = static_cast<i32>(r.parent.size());
        std::vector<i32> start(nodes + 1, 0), kids(nodes);
        for (i32 x = 0; x < nodes; ++x)
            if (r.parent[x] != -1) ++start[r.parent[x] + 1];
        for (i32 x = 0; x < nodes; ++x) start[x + 1] += start[x];
        {
            std::vector<i32> fill(start.begin(), start.end() - 1);
            for (i32 x = 0; x < nodes; ++x)
                if (r.parent[x] != -1) kids[fill[r.parent[x]]++] = x;
        }
        lo.assign(nodes, 0);
        hi.assign(nodes, 0);
        zc.assign(nodes, 0);
        top.assign(N, -1);
        order.reserve(N);
        std::vector<std::pair<i32, i32>> stack;  // (node, next child slot)
        for (i32 root = 0; root < nodes; ++root) {
            if (r.parent[root] != -1) continue;
            stack.emplace_back(root, start[root]);
            zc[root] = root >= N ? r.z[root - N] : 0;
            lo[root] = static_cast<i32>(order.size());
            if (root < N) order.push_back(root);
            while (!stack.empty()) {
                auto& [x, slot] = stack.back();
                if (slot == start[x + 1]) {
                    hi[x] = static_cast<i32>(order.size());
                    stack.pop_back();
                    continue;
                }
                const i32 c = kids[slot++];
                zc[c] = zc[x] + (c >= N ? r.z[c - N] : 0);
                lo[c] = static_cast<i32>(order.size());
                if (c < N) {
                    order.push_back(c);
                    top[c] = root;
                    hi[c] = lo[c] + 1;
                } else {
                    stack.emplace_back(c, start[c]);
                }
            }
            if (root < N) top[root] = root;
        }
    }
};

// Distances to the solver's integers: round(min(d, cap) / cap * wmax). A cap
// far below 1 makes wmax / cap overflow, so tiny caps divide instead.
class WeightScale {
  public:
    WeightScale(double cap, i64 wmax)
        : cap_(cap), wmax_(wmax), scale_(cap > 0 ? static_cast<double>(wmax) / cap : 1.0),
          divide_(cap > 0 && !(scale_ < 0x1p1000)) {}
    i64 to_int(double d) const {
        if (d >= cap_) return cap_ > 0 ? wmax_ : 0;
        const double x = divide_ ? d / cap_ * static_cast<double>(wmax_) : d * scale_;
        return std::min<i64>(wmax_, static_cast<i64>(x + 0.5));
    }
    // Largest integer at most d's scaled value (a lower bound of to_int of any distance >= d).
    i64 floor_int(double d) const {
        if (d >= cap_) return to_int(cap_);
        const double x = divide_ ? d / cap_ * static_cast<double>(wmax_) * (1 - 0x1p-50) : d * scale_;
        return static_cast<i64>(x);
    }
    // A distance at least as large as `units` integers (never below, whatever the rounding).
    double distance_above(double units) const {
        if (!divide_) return units / scale_;
        return units / static_cast<double>(wmax_) * cap_ * (1 + 0x1p-50) + 0x1p-1070;
    }

  private:
    double cap_;
    i64 wmax_;
    double scale_;
    bool divide_;
};

// One exact solve with weights round(min(d, cap) * scale), scale = max_weight / cap:
// start on the k nearest, price every pair against the duals, add the
// violated ones and re-solve (warm) until none is left.
// Where a pass ends, so that the next one (at a finer scale) can start there.
struct PassState {
    std::vector<std::uint64_t> keys;  // the final graph
    std::vector<double> y;            // deflated duals, in units of the pass's integers
    std::vector<i32> mate;
    double cap = 0;
};

BlossomResult priced_solve(const Distances& D, const Lists& L, double cap, const CompleteOptions& opt,
                           Control& control, CompleteStats& stats, const PassState* from, PassState* out) {
    const i32 n = D.size();
    const bool ghost = opt.ghost;
    const i32 N = n + (ghost ? 1 : 0);
    const i64 wmax = max_weight(N);
    const WeightScale ws(cap, wmax);
    auto to_int = [&ws](double d) { return ws.to_int(d); };
    auto weight = [&](i32 a, i32 b) -> i64 { return b == n || a == n ? 0 : to_int(D(a, b)); };
    const i32 store = L.store;
    const i32 kk = std::max<i32>(1, std::min<i32>(opt.k, store));
    std::vector<i64> cand_w(L.d.size());
    for (std::size_t t = 0; t < L.d.size(); ++t) cand_w[t] = to_int(L.d[t]);
    std::vector<i64> radius(n, kNoRadius);
    for (i32 i = 0; i < n; ++i)
        if (!std::isinf(L.bound[i])) radius[i] = ws.floor_int(L.bound[i]);

    // Start graph: k nearest per point, a Hamiltonian path (so that a perfect
    // matching surely exists) and the ghost's star.
    std::vector<std::uint64_t> keys;
    if (from) {
        keys = from->keys;  // an earlier pass's final graph
    } else {
        for (i32 i = 0; i < n; ++i) {
            for (i32 t = 0; t < kk; ++t) keys.push_back(pair_key(i, L.j[static_cast<std::size_t>(i) * store + t]));
            if (i + 1 < n) keys.push_back(pair_key(i, i + 1));
            if (ghost) keys.push_back(pair_key(i, n));
        }
    }
    std::vector<i32> eu, ev;
    std::vector<i64> w;
    auto add_keys = [&](std::vector<std::uint64_t>& ks) {
        std::sort(ks.begin(), ks.end());
        ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
        const std::size_t old = eu.size();
        eu.resize(old + ks.size());
        ev.resize(old + ks.size());
        w.resize(old + ks.size());
        parallel_for((ks.size() + 4095) / 4096, opt.n_threads, [&](std::size_t b) {
            const std::size_t hi = std::min(ks.size(), (b + 1) * 4096);
            for (std::size_t t = b * 4096; t < hi; ++t) {
                const i32 a = static_cast<i32>(ks[t] >> 32), c = static_cast<i32>(ks[t] & 0xffffffffu);
                eu[old + t] = a;
                ev[old + t] = c;
                w[old + t] = weight(a, c);
            }
        }, &control);
    };
    add_keys(keys);
    int rounds = 0;
    BlossomResult previous;
    std::vector<i64> deflated;  // previous duals with the blossom duals folded in
    if (from) {
        // Duals of the earlier pass in this pass's units, kept in range; the
        // solver lowers whatever they violate.
        const double f = from->cap / cap, top = 2.0 * static_cast<double>(wmax);
        deflated.resize(N);
        for (i32 v = 0; v < N; ++v) {
            const double yv = from->y[v] == 0 ? 0.0 : from->y[v] * f;  // f may be inf after a huge drop of the cap
            deflated[v] = static_cast<i64>(std::floor(std::clamp(yv, -top, top)));
        }
        previous.mate = from->mate;
    }
    const std::size_t blocks = (static_cast<std::size_t>(n) + 255) / 256;
    std::vector<i64> block_extra(blocks);
    // The screen's state across rounds (see price_screen).
    struct Kept {
        i32 i, j;
        i64 w;
    };
    std::vector<Kept> kept;
    bool screen_valid = false;
    std::vector<double> screen_a;
    std::vector<char> dirty(n, 0), skipped(n, 0);
    std::vector<i32> prev_top;
    while (true) {
        // Each round adds new pairs of a finite set and typically a handful of
        // rounds suffice; an endless loop could only come from an asymmetric D.
        if (++rounds > 1000) throw std::logic_error("matching: pricing does not converge (is D symmetric?)");
        WarmStart warm{deflated.data(), previous.mate.data()};
        auto t0 = std::chrono::steady_clock::now();
        BlossomResult r = min_weight_perfect_matching(N, eu.size(), eu.data(), ev.data(), w.data(), control,
                                                      rounds > 1 || from ? &warm : nullptr);
        stats.seconds_solve += seconds_since(t0);
        t0 = std::chrono::steady_clock::now();
        if (!r.perfect) throw std::logic_error("matching: start graph without a perfect matching (internal error)");
        if (opt.report) control.report(static_cast<std::uint64_t>(2 * n - n / (rounds + 1)), static_cast<std::uint64_t>(2 * n));
        // Pricing. A pair violates the duals iff 2 w < y_i + y_j - Z, Z the
        // z-sum of the blossoms holding both. Pairs in the neighbour lists
        // are priced directly; a pair in neither list weighs at least
        // max(radius_i, radius_j), which rules out most others before their
        // distance is computed:
        //  - pairs in different top-level nodes (Z = 0) need y_j > c_i and
        //    y_i > c_j with c = 2 radius - y: only a prefix of the points by
        //    decreasing y is looked at; when that prefix is long (duals
        //    inflated by large blossoms around well separated groups) the
        //    provider's screen of every pair (d < a_i + a_j, from a matrix
        //    product for points) is used instead;
        //  - pairs inside one top-level blossom have y inflated by the z of
        //    the blossoms around them, so they are walked in the blossom
        //    forest's preorder, where the smallest blossom holding i and j
        //    only grows as j moves away from i: Z is known exactly without a
        //    lowest-common-ancestor query.
        const DualForest forest(r);
        const Laminar lam(r);
        std::vector<i32> by_y(n);
        std::vector<i64> c(n);
        for (i32 i = 0; i < n; ++i) {
            by_y[i] = i;
            c[i] = radius[i] == kNoRadius ? kNoRadius : 2 * radius[i] - r.y[i];
        }
        std::sort(by_y.begin(), by_y.end(), [&](i32 a, i32 b) { return r.y[a] > r.y[b] || (r.y[a] == r.y[b] && a < b); });
        auto same_top = [&](i32 i, i32 j) { return lam.top[i] == lam.top[j]; };
        auto top_size = [&](i32 v) { return lam.top[v] < N ? 1 : lam.hi[lam.top[v]] - lam.lo[lam.top[v]]; };
        // Each point adds at most kk of its violated pairs per round, the
        // most violated first: with many equal distances (duplicated points)
        // thousands of pairs can be violated at once, and a few per point
        // are enough to make progress.
        const std::size_t enough = 4 * static_cast<std::size_t>(kk);
        std::vector<std::vector<std::pair<i64, i32>>> found(n);
        // Violated pairs (i, j, reduced cost) found away from i's own block.
        struct Hit {
            i32 i, j;
            i64 rc;
        };
        auto price_lists_and_prefix = [&](bool lists_only, bool prefix) {
            parallel_for(blocks, opt.n_threads, [&](std::size_t b) {
                i64 extra = 0;
                const i32 lo = static_cast<i32>(b) * 256, hi = std::min(n, lo + 256);
                for (i32 i = lo; i < hi; ++i) {
                    const i64 yi = r.y[i];
                    const std::size_t o = static_cast<std::size_t>(i) * store;
                    auto& f = found[i];
                    f.clear();
                    for (i32 t = 0; t < store; ++t) {
                        const i32 j = L.j[o + t];
                        const i64 rc0 = 2 * cand_w[o + t] - yi - r.y[j];
                        if (rc0 >= 0) continue;
                        const i64 rc = rc0 + forest.common_z(i, j);
                        if (rc < 0) f.emplace_back(rc, j);
                    }
                    if (lists_only || !prefix) continue;
                    // Enough violated pairs for this round: stop looking (with
                    // many of them, as after a start on a poor graph, the scan
                    // would be quadratic; the pairs left are priced again).
                    const i64 ci = c[i];
                    for (i32 t = 0; t < n && r.y[by_y[t]] > ci && f.size() < enough; ++t) {
                        const i32 j = by_y[t];
                        if (j == i || yi <= c[j] || same_top(i, j)) continue;
                        const i64 rc = 2 * weight(i, j) - yi - r.y[j];
                        if (rc < 0) f.emplace_back(rc, j);
                        ++extra;
                        if ((extra & 65535) == 0) control.check();
                    }
                }
                block_extra[b] = extra;
                control.check();
            }, &control);
        };
        std::vector<Hit> hits;
        std::mutex hits_lock;
        auto add_hits = [&](std::vector<Hit>& local) {
            if (local.empty()) return;
            std::lock_guard<std::mutex> g(hits_lock);
            hits.insert(hits.end(), local.begin(), local.end());
            local.clear();
        };
        // Pairs inside one top-level blossom, by the preorder walk.
        auto price_inside = [&]() {
            const i32 len = static_cast<i32>(lam.order.size());
            const std::size_t tasks = (static_cast<std::size_t>(len) + 63) / 64;
            std::atomic<i64> visited{0};
            // Largest y over a range of the preorder (sparse table), so that
            // a whole range of j with one common blossom is skipped at once.
            std::vector<std::vector<i64>> ymax(1, std::vector<i64>(len));
            for (i32 q = 0; q < len; ++q) ymax[0][q] = r.y[lam.order[q]];
            for (i32 span = 2; span <= len; span *= 2) {
                const std::vector<i64>& prev = ymax.back();
                std::vector<i64> next(len - span + 1);
                for (i32 q = 0; q + span <= len; ++q) next[q] = std::max(prev[q], prev[q + span / 2]);
                ymax.push_back(std::move(next));
            }
            auto range_max = [&](i32 a, i32 b) {  // over [a, b), a < b
                i32 level = 0;
                while ((2 << level) <= b - a) ++level;
                return std::max(ymax[level][a], ymax[level][b - (1 << level)]);
            };
            parallel_for(tasks, opt.n_threads, [&](std::size_t task) {
                std::vector<Hit> local;
                i64 extra = 0;
                const i32 p0 = static_cast<i32>(task) * 64, p1 = std::min(len, p0 + 64);
                for (i32 p = p0; p < p1; ++p) {
                    const i32 i = lam.order[p];
                    if (i >= n) continue;  // the ghost's pairs are all in the graph
                    const i32 t = lam.top[i];
                    if (t < N) continue;  // in no blossom
                    const i32 end = lam.hi[t];
                    const i64 yi = r.y[i], ri = radius[i];
                    if (ri == kNoRadius) continue;  // every pair of i is in its list
                    i32 B = r.parent[i];
                    std::size_t count = 0;
                    for (i32 q = p + 1; q < end && count < enough; ++q) {
                        if (q >= lam.hi[B]) {
                            while (q >= lam.hi[B]) B = r.parent[B];
                            // j in [q, hi[B]) meet i first in B: none can
                            // violate when even the largest y is ruled out.
                            if (yi + range_max(q, lam.hi[B]) - lam.zc[B] <= 2 * ri) {
                                q = lam.hi[B] - 1;
                                continue;
                            }
                        }
                        const i32 j = lam.order[q];
                        if (j >= n) continue;
                        const i64 rlim = std::max(ri, radius[j]);
                        if (rlim == kNoRadius) continue;  // in a list, priced there
                        const i64 T = yi + r.y[j] - lam.zc[B];
                        if (T <= 2 * rlim) continue;
                        ++extra;
                        const i64 rc = 2 * weight(i, j) - T;
                        if (rc < 0) {
                            local.push_back(Hit{i, j, rc});
                            ++count;
                        }
                    }
                    if ((p & 15) == 15) control.check();
                }
                add_hits(local);
                visited += extra;
            }, &control);
            stats.extra_pairs += visited.load();
        };
        // Pairs in different top-level nodes by the provider's screen. A
        // screen runs with thresholds A above the current ones and keeps
        // the pairs it could not rule out (with their weights); later rounds
        // price those again and screen only the rows whose threshold rose
        // above A or whose top-level blossom changed (a pair skipped as
        // inside one blossom may now be across two: then both ends changed).
        if (screen_valid) {
            // A pair skipped by a screen lies inside one top-level blossom
            // (both ends flagged). Each previous top-level set keeps the
            // current one holding most of its vertices; its flagged vertices
            // elsewhere are screened again. So every skipped pair whose ends
            // are not both in one current top-level node has a dirty end.
            std::vector<i32> by_prev(N);
            for (i32 v = 0; v < N; ++v) by_prev[v] = v;
            std::sort(by_prev.begin(), by_prev.end(), [&](i32 u, i32 v) {
                if (prev_top[u] != prev_top[v]) return prev_top[u] < prev_top[v];
                if (lam.top[u] != lam.top[v]) return lam.top[u] < lam.top[v];
                return u < v;
            });
            for (i32 p = 0; p < N;) {
                i32 end = p;
                while (end < N && prev_top[by_prev[end]] == prev_top[by_prev[p]]) ++end;
                i32 best = -1, best_count = 0;
                for (i32 q = p; q < end;) {
                    i32 e = q;
                    while (e < end && lam.top[by_prev[e]] == lam.top[by_prev[q]]) ++e;
                    if (e - q > best_count) {
                        best_count = e - q;
                        best = lam.top[by_prev[q]];
                    }
                    q = e;
                }
                for (i32 q = p; q < end; ++q) {
                    const i32 v = by_prev[q];
                    if (v < n && skipped[v] && lam.top[v] != best) dirty[v] = 1;
                }
                p = end;
            }
        }
        prev_top.assign(lam.top.begin(), lam.top.end());
        auto price_screen = [&]() {
            std::vector<double> a(n);
            i64 ymax = 0;
            for (i32 i = 0; i < n; ++i) ymax = std::max(ymax, r.y[i]);
            // 2 w >= 2 d scale - 1 below the cap, so a violated pair has
            // d < (y_i + y_j + 1) / (2 scale); a capped pair can only be
            // violated when y_i + y_j > 2 wmax: such points see every pair.
            for (i32 i = 0; i < n; ++i)
                a[i] = r.y[i] + ymax > 2 * wmax ? std::numeric_limits<double>::infinity()
                                                 : ws.distance_above((static_cast<double>(r.y[i]) + 0.5) / 2);
            auto raised = [&](i32 i) {
                const double rd = radius[i] == kNoRadius ? 0.0 : ws.distance_above(static_cast<double>(radius[i]));
                return a[i] + (std::abs(a[i]) + rd) / 32;
            };
            std::vector<i32> rows;
            if (screen_valid) {
                for (i32 i = 0; i < n; ++i)
                    if (dirty[i] || a[i] > screen_a[i]) rows.push_back(i);
                if (2 * rows.size() > static_cast<std::size_t>(n)) screen_valid = false;
            }
            // The kept pairs first.
            {
                std::vector<Hit> local;
                std::size_t since = 0;
                for (const Kept& k : kept) {
                    if (++since == 65536) {
                        since = 0;
                        control.check();
                    }
                    const i64 rc0 = 2 * k.w - r.y[k.i] - r.y[k.j];
                    if (rc0 >= 0) continue;
                    const i64 rc = rc0 + forest.common_z(k.i, k.j);
                    if (rc < 0) local.push_back(Hit{k.i, k.j, rc});
                }
                add_hits(local);
            }
            std::atomic<i64> visited{0};
            std::mutex kept_lock;
            const std::size_t old_kept = kept.size();
            auto visit = [&](i32 i, i32 j) {
                if (same_top(i, j) && top_size(i) >= kSkipInside) return;
                visited.fetch_add(1, std::memory_order_relaxed);
                const i64 wij = weight(i, j);
                const i64 rc = 2 * wij - r.y[i] - r.y[j];
                std::lock_guard<std::mutex> g(kept_lock);
                kept.push_back(Kept{std::min(i, j), std::max(i, j), wij});
                if (rc < 0) hits.push_back(Hit{i, j, rc});
            };
            if (screen_valid) {
                for (i32 i : rows) {
                    screen_a[i] = raised(i);
                    dirty[i] = 0;
                    skipped[i] = top_size(i) >= kSkipInside;
                }
                if (!rows.empty()) D.pairs_below_rows(screen_a.data(), rows, opt.n_threads, control, visit);
                ++stats.partial_screens;
            } else {
                kept.clear();
                screen_a.resize(n);
                for (i32 i = 0; i < n; ++i) screen_a[i] = raised(i);
                std::fill(dirty.begin(), dirty.end(), 0);
                for (i32 i = 0; i < n; ++i) skipped[i] = top_size(i) >= kSkipInside;
                // Pairs inside one blossom are skipped: with a large one
                // (deep nesting), only the rows outside it are screened.
                i32 largest = -1;
                for (i32 b = N; b < static_cast<i32>(r.parent.size()); ++b)
                    if (r.parent[b] == -1 && (largest < 0 || lam.hi[b] - lam.lo[b] > lam.hi[largest] - lam.lo[largest]))
                        largest = b;
                const i32 big = largest < 0 ? 0 : lam.hi[largest] - lam.lo[largest];
                if (big >= kSkipInside && 4 * big > n) {
                    rows.clear();
                    for (i32 i = 0; i < n; ++i)
                        if (lam.top[i] != largest) rows.push_back(i);
                    D.pairs_below_rows(screen_a.data(), rows, opt.n_threads, control, visit);
                } else {
                    D.pairs_below(screen_a.data(), opt.n_threads, control, visit);
                }
                screen_valid = true;
                ++stats.screens;
            }
            if (kept.size() != old_kept) {
                std::sort(kept.begin(), kept.end(), [](const Kept& x, const Kept& y) {
                    return x.i < y.i || (x.i == y.i && x.j < y.j);
                });
                kept.erase(std::unique(kept.begin(), kept.end(),
                                       [](const Kept& x, const Kept& y) { return x.i == y.i && x.j == y.j; }),
                           kept.end());
            }
            stats.extra_pairs += visited.load();
        };
        // Partial pricing: the neighbour lists first (cheap); the pairs
        // outside them only once the lists hold no violated pair, i.e. with
        // duals close to optimal, which rule out far more of them.
        hits.clear();
        price_lists_and_prefix(true, false);
        bool any = false;
        for (i32 i = 0; i < n && !any; ++i) any = !found[i].empty();
        if (!any) {
            // Work of the prefix scan: each point walks the points with
            // y_j > c_i (cheap) and computes the distance of those that also
            // have y_i > c_j, counted here offline with a Fenwick tree over
            // the ranks of c, in the order of the prefixes.
            double walked = 0, computed = 0;
            {
                std::vector<i32> len(n), by_len(n);
                for (i32 i = 0; i < n; ++i) {
                    const i64 ci = c[i];
                    len[i] = static_cast<i32>(std::partition_point(by_y.begin(), by_y.end(),
                                                                   [&](i32 j) { return r.y[j] > ci; }) - by_y.begin());
                    walked += len[i];
                    by_len[i] = i;
                }
                std::sort(by_len.begin(), by_len.end(), [&](i32 a, i32 b) { return len[a] < len[b] || (len[a] == len[b] && a < b); });
                std::vector<i64> sorted_c(c.begin(), c.end());
                std::sort(sorted_c.begin(), sorted_c.end());
                std::vector<i32> fen(n + 1, 0);
                i32 added = 0;
                for (i32 i : by_len) {
                    for (; added < len[i]; ++added) {
                        const i32 j = by_y[added];
                        for (i32 k = static_cast<i32>(std::lower_bound(sorted_c.begin(), sorted_c.end(), c[j]) - sorted_c.begin()) + 1; k <= n; k += k & -k)
                            ++fen[k];
                    }
                    i64 below = 0;  // inserted j with c_j < y_i
                    for (i32 k = static_cast<i32>(std::lower_bound(sorted_c.begin(), sorted_c.end(), r.y[i]) - sorted_c.begin()); k > 0; k -= k & -k)
                        below += fen[k];
                    computed += static_cast<double>(below);
                }
                control.check();
            }
            const bool screen = walked + computed * D.exact_cost() > 0.5 * static_cast<double>(n) * n * D.screen_cost();
            price_lists_and_prefix(false, !screen);
            if (screen) price_screen();
            price_inside();
        }
        // Hits into the lists of both points, then each point's kk most
        // violated pairs (ties by the other point: the same set whatever the
        // thread count).
        std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
            return a.i < b.i || (a.i == b.i && a.j < b.j);
        });
        for (const Hit& h : hits) {
            if (h.i < n) found[h.i].emplace_back(h.rc, h.j);
            if (h.j < n) found[h.j].emplace_back(h.rc, h.i);
        }
        keys.clear();
        for (i32 i = 0; i < n; ++i) {
            auto& f = found[i];
            if (f.empty()) continue;
            std::sort(f.begin(), f.end());
            f.erase(std::unique(f.begin(), f.end()), f.end());
            for (std::size_t t = 0; t < f.size() && t < static_cast<std::size_t>(kk); ++t)
                keys.push_back(pair_key(i, f[t].second));
        }
        for (std::size_t b = 0; b < blocks; ++b) stats.extra_pairs += block_extra[b];
        std::fill(block_extra.begin(), block_extra.end(), 0);
        stats.seconds_pricing += seconds_since(t0);
        if (keys.empty()) {
            stats.rounds += rounds;
            stats.edges = static_cast<std::int64_t>(eu.size());
            stats.last = r.stats;
            if (out) {
                out->keys.resize(eu.size());
                for (std::size_t e = 0; e < eu.size(); ++e) out->keys[e] = pair_key(eu[e], ev[e]);
                out->y.resize(N);
                for (i32 v = 0; v < N; ++v)
                    out->y[v] = static_cast<double>(r.y[v]) - static_cast<double>(forest.enclosing_z(v)) / 2;
                out->mate = r.mate;
                out->cap = cap;
            }
            return r;
        }
        t0 = std::chrono::steady_clock::now();
        add_keys(keys);
        stats.seconds_pricing += seconds_since(t0);
        deflated.resize(N);
        for (i32 v = 0; v < N; ++v) deflated[v] = r.y[v] - forest.enclosing_z(v) / 2;
        previous = std::move(r);
    }
}

double matched_cost(const Distances& D, const std::vector<std::int32_t>& mate) {
    const auto n = D.size();
    double cost = 0;
    for (i32 i = 0; i < n; ++i)
        if (mate[i] > i && mate[i] < n) cost += D(i, mate[i]);
    return cost;
}

}  // namespace

CompleteResult complete_min_weight_perfect_matching(const Distances& D, const CompleteOptions& opt, Control& control,
                                                    CompleteStats* stats_out) {
    const i32 n = D.size();
    CompleteStats stats;
    CompleteResult out;
    // Neighbours kept per point for pricing (the start graph uses the first k).
    const i32 store = std::max<i32>(1, std::min<i32>(n - 1, std::max<i32>(opt.k, D.store_hint())));
    if (opt.report) control.set_total(static_cast<std::uint64_t>(2 * n));
    const auto t0 = std::chrono::steady_clock::now();
    const Lists L = neighbour_lists(D, store, opt.n_threads, control);
    stats.seconds_neighbours = seconds_since(t0);
    if (opt.report) control.report(static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(2 * n));
    // First pass: weights scaled to the largest distance. When the matching
    // found costs far less than that (distances over many orders of
    // magnitude), solve again with every weight capped just above that cost:
    // no matching using a capped pair can then be optimal, so capping changes
    // nothing but the resolution, which becomes relative to the cost. Passes
    // repeat until it is, whatever the span of the distances (an overflowing
    // cost stops them: the caller reports it).
    double cap = D.max_distance();
    BlossomResult r;
    PassState state[2];
    for (int pass = 0;; ++pass) {
        r = priced_solve(D, L, cap, opt, control, stats, pass > 0 ? &state[(pass + 1) % 2] : nullptr,
                         &state[pass % 2]);
        ++stats.passes;
        const double cost = matched_cost(D, r.mate);
        out.cost = cost;
        // Again when the cap can shrink a lot, or by 4x or more while the
        // rounding (up to N/2 resolutions on the cost) is not far below 1e-10
        // of the cost.
        const double resolution = cap / static_cast<double>(max_weight(n + (opt.ghost ? 1 : 0)));
        const bool coarse = static_cast<double>(n) * resolution > 1e-10 * cost;
        // Each pass shrinks the cap 4x or more: the float64 range allows ~1100.
        if (!(cost > 0 && (cost * 16 < cap || (coarse && cost * 4 < cap)))) break;
        if (pass > 1100) throw std::logic_error("matching: the cap does not converge (internal error)");
        cap = cost * 1.001;
    }
    const i32 N = n + (opt.ghost ? 1 : 0);
    const double wmax = static_cast<double>(max_weight(N));
    out.unit = cap > 0 ? cap / (2 * wmax) : 0.5;
    out.resolution = cap > 0 ? cap / wmax : 0.0;
    out.cap = cap;
    out.max_distance = D.max_distance();
    out.blossom = std::move(r);
    if (stats_out) *stats_out = stats;
    return out;
}

// ------------------------------------------------------------ certificate

namespace {

// 1, or the power of two that brings the magnitudes of a certificate (every
// distance, dual and sum of them over all nodes) below 2^1020.
double certificate_scale(double max_distance, const double* y, const double* z, i32 nv, i32 nb) {
    double big = max_distance;
    for (i32 v = 0; v < nv; ++v) big = std::max(big, std::abs(y[v]));
    for (i32 b = 0; b < nb; ++b) big = std::max(big, std::abs(z[b]));
    if (!(big > 0) || !std::isfinite(big)) return 1.0;
    const int top = std::ilogb(big) + 1 + std::ilogb(static_cast<double>(nv + nb) + 8) + 4;
    return top > 1020 ? std::ldexp(1.0, 1020 - top) : 1.0;
}

}  // namespace

Certificate certificate(const Distances& D, bool ghost, const double* y, const std::vector<std::int32_t>& parent,
                        const double* z, const std::int32_t* mate, int n_threads, Control& control) {
    constexpr double eps = 1.1102230246251565e-16;
    const i32 n = D.size();
    const i32 nv = n + (ghost ? 1 : 0);
    const auto nodes = static_cast<i32>(parent.size());
    const i32 nb = nodes - nv;
    Certificate c;
    c.min_z = 0;
    for (i32 b = 0; b < nb; ++b) c.min_z = std::min(c.min_z, z[b]);
    // Everything is checked in units of 1 / s, s a power of two that keeps
    // sums of nodes terms inside float64 (distances near 1.8e308); scaling
    // loses at most 2^-1074 per term, counted in each error bound.
    const double s = certificate_scale(D.max_distance(), y, z, nv, nb);
    const double lost = s == 1.0 ? 0.0 : 0x1p-1070;
    std::vector<double> ys(y, y + nv), zs(z, z + nb);
    for (double& x : ys) x *= s;
    for (double& x : zs) x *= s;
    y = ys.data();
    z = zs.data();
    const BlossomTree tree(nv, parent);
    std::vector<double> zcum(nodes, 0.0);
    std::vector<i64> size(nodes, 0);
    for (i32 x : tree.preorder()) zcum[x] = (parent[x] == -1 ? 0.0 : zcum[parent[x]]) + (x >= nv ? z[x - nv] : 0.0);
    const std::vector<i32>& order = tree.preorder();
    for (i32 v = 0; v < nv; ++v) size[v] = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (parent[*it] != -1) size[parent[*it]] += size[*it];
    const double rel = D.relative_error();
    auto common = [&](i32 u, i32 v) {
        const i32 b = tree.lca(u, v);
        return b < 0 ? 0.0 : zcum[b];
    };
    // Reduced cost of a pair and a bound of its rounding error.
    auto reduced = [&](i32 u, i32 v, double d, double& err) {
        d *= s;
        const double zc = common(u, v);
        err = 4 * eps * (d + std::abs(y[u]) + std::abs(y[v]) + zc) + rel * d + lost;
        return d - y[u] - y[v] + zc;
    };
    // Pairs that can violate: d < y_i + y_j (plus a margin), when z >= 0.
    std::vector<double> a(n);
    for (i32 i = 0; i < n; ++i) a[i] = (y[i] + 8 * eps * std::abs(y[i]) + 1e-300) / s;
    // Violation (with its error bound) of each screened pair; per vertex the
    // largest, since lowering y_v by half of it makes every pair feasible.
    // Pairs are checked as the screening finds them (no list is stored).
    std::vector<std::atomic<double>> at(nv);
    for (auto& x : at) x.store(0.0, std::memory_order_relaxed);
    std::atomic<double> worst{0.0};
    auto raise_to = [](std::atomic<double>& x, double v) {
        double cur = x.load(std::memory_order_relaxed);
        while (v > cur && !x.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
        }
    };
    if (c.min_z >= 0) {
        D.pairs_below(a.data(), n_threads, control, [&](i32 u, i32 v) {
            double err;
            const double rc = reduced(u, v, D(u, v), err);
            if (-rc > 0) raise_to(worst, -rc);
            if (err - rc > 0) {
                raise_to(at[u], err - rc);
                raise_to(at[v], err - rc);
            }
        });
    } else {
        c.complete = false;  // negative blossom duals: no screening possible (and not a certificate)
    }
    c.max_violation = worst.load();
    std::vector<double> at_vertex(nv);
    for (i32 v = 0; v < nv; ++v) at_vertex[v] = at[v].load();
    if (ghost)
        for (i32 i = 0; i < n; ++i) {
            double err;
            const double rc = reduced(i, n, 0.0, err);
            c.max_violation = std::max(c.max_violation, -rc);
            at_vertex[i] = std::max(at_vertex[i], err - rc);
            at_vertex[n] = std::max(at_vertex[n], err - rc);
        }
    for (i32 v = 0; v < nv; ++v) {
        c.max_violation_bound = std::max(c.max_violation_bound, at_vertex[v]);
        c.lowering += at_vertex[v] / 2;
    }
    // Matched pairs: tight, and their cost. Sums are compensated (Neumaier),
    // so their error is a few eps times the sum of magnitudes, whatever N.
    struct Sum {
        double s = 0, comp = 0, abs = 0;
        void add(double x) {
            const double t = s + x;
            comp += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
            s = t;
            abs += std::abs(x);
        }
        double value() const { return s + comp; }
    };
    Sum cost, dual;
    double cost_err = 0;
    for (i32 i = 0; i < nv; ++i) {
        const i32 m = mate[i];
        if (m <= i) continue;
        const double d = m < n ? D(i, m) : 0.0;
        double err;
        const double rc = reduced(i, m, d, err);
        c.max_matched_slack = std::max(c.max_matched_slack, std::abs(rc));
        cost.add(d * s);
        cost_err += rel * d * s + lost;
    }
    // Dual objective: sum y - sum z_B (|B| - 1) / 2.
    for (i32 v = 0; v < nv; ++v) dual.add(y[v]);
    for (i32 b = nv; b < nodes; ++b) dual.add(-(z[b - nv] * static_cast<double>(size[b] - 1) / 2));
    c.cost = cost.value();
    c.dual_objective = dual.value();
    c.error_bound = cost_err + 4 * eps * (cost.abs + dual.abs) + lost * nv;
    c.magnitude = cost.abs + dual.abs;
    for (double* x : {&c.max_violation, &c.max_violation_bound, &c.lowering, &c.max_matched_slack, &c.dual_objective, &c.cost, &c.error_bound, &c.magnitude})
        *x /= s;
    return c;
}

// ------------------------------------------------------ cross-match batch

std::vector<std::int64_t> crossmatch_counts(std::int64_t n_draws, std::int32_t m, const std::int8_t* z, int k,
                                            int n_threads, Control& control,
                                            const std::function<void(std::int64_t, double*)>& fill) {
    std::vector<std::int64_t> a1(static_cast<std::size_t>(n_draws), 0);
    control.set_total(static_cast<std::uint64_t>(n_draws));
    CompleteOptions opt;
    opt.k = k;
    opt.ghost = m % 2 == 1;
    opt.n_threads = 1;      // the draws are the parallelism
    opt.report = false;     // progress counts draws
    parallel_for(static_cast<std::size_t>(n_draws), n_threads, [&](std::size_t r) {
        std::vector<double> buffer(static_cast<std::size_t>(m) * m);
        fill(static_cast<std::int64_t>(r), buffer.data());
        const DenseDistances<double> D(buffer.data(), m, m, 1);
        // One draw is small: it runs under its own quiet control, and the
        // shared one is checked (Ctrl-C, progress) between draws.
        Control quiet;
        const CompleteResult res = complete_min_weight_perfect_matching(D, opt, quiet, nullptr);
        std::int64_t cross = 0;
        for (i32 i = 0; i < m; ++i) {
            const i32 j = res.blossom.mate[i];
            if (j > i && j < m && z[i] != z[j]) ++cross;
        }
        a1[r] = cross;
        control.advance(1);
    }, &control);
    return a1;
}

}  // namespace pairmetrics::matching
