#include "matching.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <queue>
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
class Solver {
  public:
    Solver(i32 n, std::size_t m, const i32* eu, const i32* ev, const i64* w, Control* control)
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
        mate_.assign(n, -1);
        ystore_.assign(n, 0);
        tree_nodes_.resize(n);
        for (i32 v = 0; v < n; ++v) {
            top_[v] = v;
            base_[v] = v;
            alive_[v] = 1;
        }
    }

    BlossomResult run(const WarmStart* warm) {
        BlossomResult result;
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
        std::int64_t since_tick = 0;
        while (unmatched > 0) {
            if (heap_.empty()) return result;  // a tree cannot grow: no perfect matching
            const Event ev = heap_.top();
            heap_.pop();
            ++stats_.events;
            if (ev.key > delta_) delta_ = ev.key;
            // Safety net: the weight cap keeps duals far below this.
            if (delta_ > (i64{1} << 61)) throw std::overflow_error("matching: dual values overflow");
            if (ev.id >= 0) {
                unmatched -= process_edge(ev.id);
            } else {
                process_expand(-ev.id - 1);
            }
            if (control_ && ++since_tick >= 200000) {
                since_tick = 0;
                control_->report(static_cast<std::uint64_t>(n_ - unmatched), static_cast<std::uint64_t>(n_));
            }
        }
        finish(result);
        return result;
    }

  private:
    struct Event {
        i64 key;
        i32 id;  // edge id >= 0, or -(blossom + 1) for an expansion
        bool operator>(const Event& o) const { return key > o.key; }
    };

    i32 n_;
    const i32 *eu_, *ev_;
    Control* control_;
    std::vector<i64> W_;
    std::vector<i32> start_, adj_;
    std::vector<i32> parent_, tree_, tself_, tother_, base_, top_, mate_;
    std::vector<signed char> label_, alive_;
    std::vector<i64> stamp_, off_, zstore_, ystore_;
    std::vector<unsigned> mark_;
    unsigned mark_stamp_ = 0;
    std::vector<std::vector<i32>> childs_;
    std::vector<std::vector<std::pair<i32, i32>>> cedges_;  // cedges[i]: (vertex in c_i, vertex in c_i+1)
    std::vector<i32> free_ids_;
    std::vector<std::vector<i32>> tree_nodes_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
    i64 delta_ = 0;
    BlossomStats stats_;
    std::vector<i32> leaves_buf_, stack_buf_;

    i64 y(i32 v) const {
        const i32 b = top_[v];
        return ystore_[v] + off_[b] + label_[b] * (delta_ - stamp_[b]);
    }
    i64 slack(i32 e) const { return W_[e] - y(eu_[e]) - y(ev_[e]); }
    i32 base_of(i32 b) const { return b < n_ ? b : base_[b]; }
    i32 other(i32 e, i32 v) const { return eu_[e] == v ? ev_[e] : eu_[e]; }

    // Fold the lazy dual change of top-level node b into its offset (and its
    // blossom dual) so that its label can change at the current delta.
    void settle(i32 b) {
        const i64 d = label_[b] * (delta_ - stamp_[b]);
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

    void push_event(i64 key, i32 id) { heap_.push(Event{key, id}); }

    // Queue the events of the edges at v, whose node has just become even.
    void scan_vertex(i32 v) {
        const i32 bv = top_[v];
        const i64 yv = y(v);
        for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
            const i32 e = adj_[k];
            const i32 o = other(e, v);
            const i32 bo = top_[o];
            if (bo == bv) continue;
            const signed char lo = label_[bo];
            if (lo < 0) continue;
            const i64 s = W_[e] - yv - y(o);
            push_event(lo == 0 ? delta_ + s : delta_ + s / 2, e);
        }
    }

    // Queue (+, free) events for edges at v, whose node has just left every tree.
    void scan_free_vertex(i32 v) {
        const i32 bv = top_[v];
        const i64 yv = y(v);
        for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
            const i32 e = adj_[k];
            const i32 o = other(e, v);
            const i32 bo = top_[o];
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
            i64 best = std::numeric_limits<i64>::max();
            for (i32 k = start_[v]; k < start_[v + 1]; ++k) best = std::min(best, W_[adj_[k]]);
            const i64 half = best / 2;
            ystore_[v] = half - (half & 1);
        }
    }

    // Start from an earlier solution on a subgraph: lower duals until every
    // edge is feasible (lowering never breaks an edge already fixed), keep
    // the matched pairs that are still tight, and make free vertices even.
    // Blossoms are not carried over: the solver rebuilds the few it needs.
    void warm_init(const WarmStart& warm) {
        for (i32 v = 0; v < n_; ++v) ystore_[v] = warm.y[v];
        for (std::size_t e = 0; e < W_.size(); ++e) {
            if (eu_[e] == ev_[e]) continue;
            const i64 s = W_[e] - ystore_[eu_[e]] - ystore_[ev_[e]];
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
            i64 best = std::numeric_limits<i64>::max();
            i32 best_free = -1;
            for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
                const i32 e = adj_[k];
                const i32 o = other(e, v);
                const i64 s = W_[e] - ystore_[v] - ystore_[o];
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
        i32 bu = top_[u], bv = top_[v];
        if (bu == bv) return 0;
        if (label_[bu] != 1) {
            std::swap(u, v);
            std::swap(bu, bv);
        }
        if (label_[bu] != 1 || label_[bv] < 0) return 0;
        const i64 s = slack(e);
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
        const i64 z = zstore_[b] - 2 * (delta_ - stamp_[b]);
        if (z < 0) throw std::logic_error("matching: negative blossom dual (internal error)");
        if (z > 0) {
            push_event(delta_ + z / 2, -(b + 1));
            return;
        }
        expand(b);
    }

    void grow(i32 u, i32 v) {
        ++stats_.grows;
        const i32 bu = top_[u], bv = top_[v];
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
        const i32 bw = top_[w];
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
        const i32 odd = top_[tother_[p]];
        return top_[tother_[odd]];
    }

    void shrink(i32 u, i32 v) {
        ++stats_.shrinks;
        const i32 bu = top_[u], bv = top_[v];
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
                out.push_back(top_[tother_[p]]);
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
        for (i32 c : ch) {
            push_offset(c);
            parent_[c] = b;
        }
        alive_[b] = 1;
        parent_[b] = -1;
        base_[b] = base_of(lca);
        label_[b] = 1;
        tree_[b] = t;
        tself_[b] = tself_[lca];
        tother_[b] = tother_[lca];
        stamp_[b] = delta_;
        off_[b] = 0;
        zstore_[b] = 0;
        tree_nodes_[t].push_back(b);
        for (i32 vtx : leaves(b)) top_[vtx] = b;
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
            const i32 bs = top_[s];
            const i32 up = tother_[bs];  // vertex in the odd parent, or -1 at the root
            if (bs >= n_) augment_blossom(bs, s);
            mate_[s] = j;
            if (up == -1) return;
            const i32 bt = top_[up];
            const i32 x = tself_[bt], yv = tother_[bt];
            if (bt >= n_) augment_blossom(bt, x);
            mate_[x] = yv;
            s = yv;
            j = x;
        }
    }

    void augment(i32 u, i32 v) {
        ++stats_.augments;
        const i32 t1 = tree_[top_[u]], t2 = tree_[top_[v]];
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
        push_offset(b);
        std::vector<i32> ch = childs_[b - n_];
        const std::vector<std::pair<i32, i32>> ce = cedges_[b - n_];
        const i32 k = static_cast<i32>(ch.size());
        for (i32 c : ch) {
            parent_[c] = -1;
            for (i32 vtx : leaves(c)) top_[vtx] = c;
            off_[c] = 0;
            stamp_[c] = delta_;
            label_[c] = 0;
            tree_[c] = -1;
        }
        const i32 cj = top_[tself_[b]];
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

    void finish(BlossomResult& result) {
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
                                          const std::int32_t* ev, const std::int64_t* w, Control* control,
                                          const WarmStart* warm) {
    if (n <= 0) {
        BlossomResult r;
        r.perfect = true;
        return r;
    }
    Solver solver(n, m, eu, ev, w, control);
    return solver.run(warm);
}

DualForest::DualForest(const BlossomResult& r) {
    const auto nodes = static_cast<i32>(r.parent.size());
    const auto n = static_cast<i32>(r.y.size());
    std::vector<i32> start(nodes + 1, 0), kids(nodes);
    for (i32 x = 0; x < nodes; ++x)
        if (r.parent[x] != -1) ++start[r.parent[x] + 1];
    for (i32 x = 0; x < nodes; ++x) start[x + 1] += start[x];
    {
        std::vector<i32> fill(start.begin(), start.end() - 1);
        for (i32 x = 0; x < nodes; ++x)
            if (r.parent[x] != -1) kids[fill[r.parent[x]]++] = x;
    }
    root_.assign(nodes, -1);
    first_.assign(nodes, 0);
    depth_.assign(nodes, 0);
    zcum_.assign(nodes, 0);
    // Iterative DFS from every root, recording the Euler tour.
    std::vector<std::pair<i32, i32>> stack;  // (node, next child slot)
    for (i32 top = 0; top < nodes; ++top) {
        if (r.parent[top] != -1 || start[top] == start[top + 1]) {
            if (r.parent[top] == -1) root_[top] = top;  // a vertex in no blossom
            continue;
        }
        stack.emplace_back(top, start[top]);
        root_[top] = top;
        zcum_[top] = top >= n ? r.z[top - n] : 0;
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
            zcum_[c] = zcum_[x] + (c >= n ? r.z[c - n] : 0);
            first_[c] = static_cast<i32>(euler_.size());
            euler_.push_back(c);
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

std::int64_t DualForest::common_z(std::int32_t u, std::int32_t v) const {
    if (root_[u] != root_[v] || u == v) return 0;
    i32 a = first_[u], b = first_[v];
    if (a > b) std::swap(a, b);
    const i32 level = log2_[b - a + 1];
    const i32 x = table_[level][a], y = table_[level][b - (1 << level) + 1];
    return zcum_[depth_[x] <= depth_[y] ? x : y];
}

std::int64_t reduced_cost(const BlossomResult& r, std::int32_t u, std::int32_t v, std::int64_t w) {
    return 2 * w - r.y[u] - r.y[v] + DualForest(r).common_z(u, v);
}

// Neighbours kept per point for pricing (the start graph uses the first k).
constexpr int kStore = 96;

template <class T>
BlossomResult dense_min_weight_perfect_matching(const T* D, std::int32_t n, std::ptrdiff_t row_stride,
                                                std::ptrdiff_t col_stride, double scale, bool ghost, int k,
                                                Control* control, DenseStats* stats) {
    const i32 N = n + (ghost ? 1 : 0);
    // D is symmetric (the caller guarantees it), so row i can be read in place.
    auto value = [&](i32 i, i32 j) -> double { return static_cast<double>(D[i * row_stride + j * col_stride]); };
    // Round half up (values are >= 0); monotone, so order is preserved.
    auto to_int = [scale](double d) { return static_cast<i64>(d * scale + 0.5); };
    auto weight = [&](i32 i, i32 j) { return to_int(value(i, j)); };
    constexpr i64 kNoRadius = std::numeric_limits<i64>::max();
    // Per point: its `store` nearest others (the first k of them nearest), and a radius that every
    // pair outside that list reaches. Pricing then reads the lists and only
    // the few other pairs that the duals could still make violated.
    const i32 store = std::max<i32>(1, std::min<i32>(n - 1, std::max(k, kStore)));
    const i32 kk = std::max<i32>(1, std::min<i32>(k, store));
    std::vector<i32> cand_j(static_cast<std::size_t>(n) * store);
    std::vector<i64> cand_w(cand_j.size());
    std::vector<i64> radius(n, kNoRadius);
    {
        // Selection on plain doubles first (cheap compares), then gather the
        // list; only its k nearest need ordering (they start the graph).
        std::vector<double> vals(std::max<i32>(n - 1, 1));
        std::vector<std::pair<i64, i32>> list(store);
        for (i32 i = 0; i < n; ++i) {
            if (control && (i & 1023) == 1023) control->report(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(n));
            i32 c = 0;
            for (i32 j = 0; j < n; ++j)
                if (j != i) vals[c++] = value(i, j);
            double threshold = std::numeric_limits<double>::infinity();
            if (store < n - 1) {
                std::nth_element(vals.begin(), vals.begin() + store, vals.begin() + c);
                threshold = vals[store];  // every pair left out is at least this far
                radius[i] = to_int(threshold);
            }
            i32 t = 0;
            for (i32 j = 0; j < n && t < store; ++j)
                if (j != i && value(i, j) < threshold) list[t++] = {to_int(value(i, j)), j};
            for (i32 j = 0; j < n && t < store; ++j)
                if (j != i && value(i, j) == threshold) list[t++] = {to_int(value(i, j)), j};
            std::nth_element(list.begin(), list.begin() + (kk - 1), list.end());
            for (i32 q = 0; q < store; ++q) {
                cand_j[static_cast<std::size_t>(i) * store + q] = list[q].second;
                cand_w[static_cast<std::size_t>(i) * store + q] = list[q].first;
            }
        }
    }
    // Start graph: k nearest per point, a Hamiltonian path (so that a perfect
    // matching surely exists) and the ghost's star.
    std::vector<std::uint64_t> keys;
    auto key = [](i32 a, i32 b) {
        if (a > b) std::swap(a, b);
        return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
    };
    for (i32 i = 0; i < n; ++i) {
        for (i32 t = 0; t < kk; ++t) keys.push_back(key(i, cand_j[static_cast<std::size_t>(i) * store + t]));
        if (i + 1 < n) keys.push_back(key(i, i + 1));
        if (ghost) keys.push_back(key(i, n));
    }
    std::vector<i32> eu, ev;
    std::vector<i64> w;
    auto add_keys = [&](std::vector<std::uint64_t>& ks) {
        std::sort(ks.begin(), ks.end());
        ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
        for (std::uint64_t kv : ks) {
            const i32 a = static_cast<i32>(kv >> 32), b = static_cast<i32>(kv & 0xffffffffu);
            eu.push_back(a);
            ev.push_back(b);
            w.push_back(b == n ? 0 : weight(a, b));
        }
    };
    add_keys(keys);
    int rounds = 0;
    BlossomResult previous;
    std::vector<i64> deflated;  // previous duals with the blossom duals folded in
    while (true) {
        // Each round adds new pairs of a finite set and typically a handful of
        // rounds suffice; an endless loop could only come from an asymmetric D.
        if (++rounds > 1000) throw std::logic_error("matching: pricing does not converge (is D symmetric?)");
        WarmStart warm{deflated.data(), previous.mate.data()};
        BlossomResult r = min_weight_perfect_matching(N, eu.size(), eu.data(), ev.data(), w.data(), control,
                                                      rounds > 1 ? &warm : nullptr);
        if (!r.perfect) throw std::logic_error("matching: start graph without a perfect matching (internal error)");
        if (control) control->report(static_cast<std::uint64_t>(rounds), static_cast<std::uint64_t>(rounds + 1));
        // A pair can only violate the duals if 2 w < y_i + y_j, since blossom
        // duals only add to its reduced cost. A pair in neither list weighs at
        // least max(radius_i, radius_j), so it needs y_j > c_i and y_i > c_j
        // with c = 2 radius - y: only a prefix of the points by decreasing y
        // is looked at, and D is read only when both hold.
        const DualForest forest(r);
        // Reduced cost if negative, else 0.
        auto violation = [&](i32 i, i32 j, i64 wij) -> i64 {
            const i64 rc = 2 * wij - r.y[i] - r.y[j];
            if (rc >= 0) return 0;
            return std::min<i64>(rc + forest.common_z(i, j), 0);
        };
        // Each point adds at most `kk` of its violated pairs per round, the
        // most violated first: with many equal distances (duplicated points)
        // thousands of pairs can be violated at once, and a few per point
        // are enough to make progress.
        std::vector<std::pair<i64, i32>> found;
        std::vector<i32> by_y(n);
        std::vector<i64> c(n);
        for (i32 i = 0; i < n; ++i) {
            by_y[i] = i;
            c[i] = radius[i] == kNoRadius ? kNoRadius : 2 * radius[i] - r.y[i];
        }
        std::sort(by_y.begin(), by_y.end(), [&](i32 a, i32 b) { return r.y[a] > r.y[b]; });
        keys.clear();
        for (i32 i = 0; i < n; ++i) {
            const i64 yi = r.y[i];
            const std::size_t o = static_cast<std::size_t>(i) * store;
            found.clear();
            for (i32 t = 0; t < store; ++t) {
                const i64 rc = violation(i, cand_j[o + t], cand_w[o + t]);
                if (rc < 0) found.emplace_back(rc, cand_j[o + t]);
            }
            const i64 ci = c[i];
            for (i32 t = 0; t < n && r.y[by_y[t]] > ci; ++t) {
                const i32 j = by_y[t];
                if (j == i || yi <= c[j]) continue;
                const i64 rc = violation(i, j, weight(i, j));
                if (rc < 0) found.emplace_back(rc, j);
                if (stats) ++stats->extra_pairs;
            }
            if (static_cast<i32>(found.size()) > kk) std::nth_element(found.begin(), found.begin() + kk, found.end());
            for (std::size_t t = 0; t < found.size() && t < static_cast<std::size_t>(kk); ++t)
                keys.push_back(key(i, found[t].second));
        }
        if (keys.empty()) {
            if (stats) {
                stats->rounds = rounds;
                stats->edges = static_cast<std::int64_t>(eu.size());
                stats->last = r.stats;
            }
            return r;
        }
        add_keys(keys);
        deflated.resize(N);
        for (i32 v = 0; v < N; ++v) deflated[v] = r.y[v] - forest.enclosing_z(v) / 2;
        previous = std::move(r);
    }
}

std::vector<std::int64_t> crossmatch_counts(const double* full, std::int64_t p, const std::int64_t* draws,
                                            std::int64_t n_draws, std::int32_t m, const std::int8_t* z,
                                            double scale, int k, int n_threads, Control* control) {
    std::vector<std::int64_t> a1(static_cast<std::size_t>(n_draws), 0);
    std::atomic<std::int64_t> done{0};
    parallel_for(static_cast<std::size_t>(n_draws), n_threads, [&](std::size_t r) {
        const std::int64_t* idx = draws + r * static_cast<std::size_t>(m);
        std::vector<double> D(static_cast<std::size_t>(m) * m);
        for (i32 i = 0; i < m; ++i) {
            const double* row = full + idx[i] * p;
            for (i32 j = 0; j < m; ++j) D[static_cast<std::size_t>(i) * m + j] = row[idx[j]];
        }
        const BlossomResult res =
            dense_min_weight_perfect_matching<double>(D.data(), m, m, 1, scale, false, k, nullptr, nullptr);
        std::int64_t cross = 0;
        for (i32 i = 0; i < m; ++i)
            if (res.mate[i] > i && z[i] != z[res.mate[i]]) ++cross;
        a1[r] = cross;
        const std::int64_t finished = ++done;
        if (control && (finished & 15) == 0)
            control->report(static_cast<std::uint64_t>(finished), static_cast<std::uint64_t>(n_draws));
    });
    return a1;
}

void pair_squared_distances(const double* X, std::int64_t d, std::size_t m, const std::int64_t* u,
                            const std::int64_t* v, double* out) {
    for (std::size_t p = 0; p < m; ++p) {
        const double* a = X + u[p] * d;
        const double* b = X + v[p] * d;
        double acc[4] = {0, 0, 0, 0};
        std::int64_t t = 0;
        for (; t + 4 <= d; t += 4)
            for (int q = 0; q < 4; ++q) {
                const double diff = a[t + q] - b[t + q];
                acc[q] += diff * diff;
            }
        for (; t < d; ++t) {
            const double diff = a[t] - b[t];
            acc[0] += diff * diff;
        }
        out[p] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
}

template BlossomResult dense_min_weight_perfect_matching<float>(const float*, std::int32_t, std::ptrdiff_t,
                                                                std::ptrdiff_t, double, bool, int, Control*,
                                                                DenseStats*);
template BlossomResult dense_min_weight_perfect_matching<double>(const double*, std::int32_t, std::ptrdiff_t,
                                                                 std::ptrdiff_t, double, bool, int, Control*,
                                                                 DenseStats*);

}  // namespace pairmetrics::matching
