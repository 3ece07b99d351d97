// Pricing by the provider's screen of every pair (d < a_i + a_j), kept across rounds and redone only for the
// rows whose duals or blossoms changed.

#include "matching_priced_solve.hpp"

namespace pairmetrics::matching::pricing {

void PricedSolve::mark_dirty_rows() {
    const i32 n = n_;
    const i32 N = N_;
    const BlossomTree& lam = forest_->tree();
    bool& screen_valid = screen_valid_;
    auto& dirty = dirty_;
    auto& skipped = skipped_;
    auto& prev_top = prev_top_;
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
        // Moreover, the two ends of such a pair were in one top-level node
        // in the round before the first that split them, and an end marked
        // then (dirty for the first time since it was last screened) left
        // that node: its skipped pairs have their other end among the
        // node's points of then (dirty_snap_; an end marked twice needs
        // every point). The other end, if it was marked instead, covers the
        // pair from its own row.
        std::vector<i32> by_prev(N);
        for (i32 v = 0; v < N; ++v) by_prev[v] = v;
        i32 snap = -1;  // this round's snapshot in dirty_snaps_, once a point needs it
        std::sort(by_prev.begin(), by_prev.end(), [&](i32 u, i32 v) {
            if (prev_top[u] != prev_top[v]) return prev_top[u] < prev_top[v];
            if (lam.root(u) != lam.root(v)) return lam.root(u) < lam.root(v);
            return u < v;
        });
        for (i32 p = 0; p < N;) {
            i32 end = p;
            while (end < N && prev_top[by_prev[end]] == prev_top[by_prev[p]]) ++end;
            i32 best = -1, best_count = 0;
            for (i32 q = p; q < end;) {
                i32 e = q;
                while (e < end && lam.root(by_prev[e]) == lam.root(by_prev[q])) ++e;
                if (e - q > best_count) {
                    best_count = e - q;
                    best = lam.root(by_prev[q]);
                }
                q = e;
            }
            for (i32 q = p; q < end; ++q) {
                const i32 v = by_prev[q];
                if (v < n && skipped[v] && lam.root(v) != best) {
                    if (!dirty[v] && snap < 0) {
                        dirty_snaps_.push_back(prev_top);
                        snap = static_cast<i32>(dirty_snaps_.size()) - 1;
                    }
                    dirty_snap_[v] = dirty[v] ? -2 : snap;
                    dirty[v] = 1;
                }
            }
            p = end;
        }
    }
    prev_top.assign(lam.roots().begin(), lam.roots().begin() + N);
}

void PricedSolve::price_kept_pairs() {
    // (the exact weight is a distance away)
    parallel_for(
        KeptPairs::kShards, opt_.n_threads,
        [&](std::size_t t) {
            std::vector<Hit> local;
            std::size_t since = 0;
            for (const KeptPairs::Pair& k : kept_.shard(t)) {
                if (++since == 65536) {
                    since = 0;
                    control_.check();
                }
                const i64 rc = violation(k.i, k.j, static_cast<i64>(k.w));
                if (rc < 0) local.push_back(Hit{k.i, k.j, rc});
            }
            add_hits(local);
        },
        control_);
}

void PricedSolve::split_screen_rows(const std::vector<i32>& rows, const std::vector<double>& a,
                                    std::vector<i32>& everywhere, RowsByNode& from_node) const {
    for (i32 i : rows) {
        if (a[i] <= screen_a_[i] && dirty_snap_[i] >= 0)
            from_node[{dirty_snap_[i], dirty_snaps_[dirty_snap_[i]][i]}].push_back(i);
        else
            everywhere.push_back(i);
    }
    for (auto it = from_node.begin(); it != from_node.end();) {  // (each pass costs O(n) however few its rows)
        if (it->second.size() >= static_cast<std::size_t>(std::max(1, opt_.own_columns_from))) {
            ++it;
            continue;
        }
        everywhere.insert(everywhere.end(), it->second.begin(), it->second.end());
        it = from_node.erase(it);
    }
    std::sort(everywhere.begin(), everywhere.end());
}

i32 PricedSolve::largest_top_blossom() const {
    const BlossomTree& lam = forest_->tree();
    i32 largest = -1;
    for (i32 b = N_; b < static_cast<i32>(r_.parent.size()); ++b)
        if (r_.parent[b] == -1 && (largest < 0 || lam.hi(b) - lam.lo(b) > lam.hi(largest) - lam.lo(largest)))
            largest = b;
    return largest;
}

void PricedSolve::price_screen() {
    const Distances& D = D_;
    const CompleteOptions& opt = opt_;
    Control& control = control_;
    CompleteStats& stats = stats_;
    const i32 n = n_;
    const WeightScale& ws = ws_;
    const std::vector<i64>& radius = radius_;
    const BlossomResult& r = r_;
    const BlossomTree& lam = forest_->tree();
    auto& hits = hits_;
    auto& kept = kept_;
    bool& screen_valid = screen_valid_;
    auto& screen_a = screen_a_;
    auto& dirty = dirty_;
    auto& skipped = skipped_;
    const std::vector<double> a = screen_thresholds();
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
    price_kept_pairs();
    // The pairs found; their violated ones in shards by their first end: the
    // two threads rarely wait on one lock or write one cache line.
    KeptPairs::Collector found;
    struct Shard {
        std::mutex lock;
        std::vector<Hit> hits;
        char pad[64];
    };
    std::vector<Shard> shards(KeptPairs::kShards);
    // Pairs inside one large top-level blossom are priced there (price_inside), not here.
    std::vector<i32> group(n);
    for (i32 i = 0; i < n; ++i) group[i] = top_size(i) >= kSkipInside ? lam.root(i) : -1;
    auto visit = [&](i32 i, i32 j) {
        if (group[i] >= 0 && group[i] == group[j]) return;
        const i64 wij = weight(i, j);
        const i64 rc = 2 * wij - r.y[i] - r.y[j];
        const KeptPairs::Pair p = KeptPairs::make(i, j, wij);
        found.add(p);
        if (rc >= 0) return;
        Shard& shard = shards[KeptPairs::shard_of(p)];
        std::lock_guard<std::mutex> g(shard.lock);
        shard.hits.push_back(Hit{i, j, rc});
    };
    if (screen_valid) {
        // A dirty row whose threshold did not rise needs only the columns of
        // the top-level node it left (see mark_dirty_rows): many such rows
        // from one node are screened against its points alone; the other
        // rows against every point. Each row's A becomes the least
        // threshold any of its pairs was screened with.
        std::vector<i32> everywhere;
        RowsByNode from_node;
        split_screen_rows(rows, a, everywhere, from_node);
        std::vector<char> columns(n, 1);
        for (i32 i : everywhere) columns[i] = 0;  // (the pairs of these rows are all visited here)
        std::vector<double> before(rows.size());
        for (std::size_t t = 0; t < rows.size(); ++t) {
            const i32 i = rows[t];
            before[t] = columns[i] ? screen_a[i] : std::numeric_limits<double>::infinity();
            screen_a[i] = raised(i);
            dirty[i] = 0;
            dirty_snap_[i] = -1;
            skipped[i] = group[i] >= 0;
        }
        if (!everywhere.empty())
            D.pairs_below_rows(screen_a.data(), group.data(), nullptr, everywhere, opt.n_threads, control, visit);
        for (const auto& [node, node_rows] : from_node) {
            const std::vector<i32>& then = dirty_snaps_[node.first];
            std::vector<char> of_node(n);
            for (i32 j = 0; j < n; ++j) of_node[j] = columns[j] && then[j] == node.second;
            D.pairs_below_rows(screen_a.data(), group.data(), of_node.data(), node_rows, opt.n_threads, control, visit);
        }
        for (std::size_t t = 0; t < rows.size(); ++t) screen_a[rows[t]] = std::min(screen_a[rows[t]], before[t]);
        dirty_snaps_.clear();
        ++stats.partial_screens;
    } else {
        kept.clear();
        screen_a.resize(n);
        for (i32 i = 0; i < n; ++i) screen_a[i] = raised(i);
        std::fill(dirty.begin(), dirty.end(), 0);
        std::fill(dirty_snap_.begin(), dirty_snap_.end(), -1);
        dirty_snaps_.clear();
        for (i32 i = 0; i < n; ++i) skipped[i] = group[i] >= 0;
        // Pairs inside one blossom are skipped: with a large one
        // (deep nesting), only the rows outside it are screened.
        const i32 largest = largest_top_blossom();
        const i32 big = largest < 0 ? 0 : lam.hi(largest) - lam.lo(largest);
        if (big >= kSkipInside && 4 * big > n) {
            rows.clear();
            for (i32 i = 0; i < n; ++i)
                if (lam.root(i) != largest) rows.push_back(i);
            D.pairs_below_rows(screen_a.data(), group.data(), nullptr, rows, opt.n_threads, control, visit);
        } else {
            D.pairs_below(screen_a.data(), group.data(), opt.n_threads, control, visit);
        }
        screen_valid = true;
        ++stats.screens;
    }
    for (Shard& shard : shards) hits.insert(hits.end(), shard.hits.begin(), shard.hits.end());
    const std::size_t visited = found.size();
    kept.merge(found, control);
    stats.extra_pairs += static_cast<i64>(visited);
    stats.screen_pairs += static_cast<i64>(visited);
}

// Distances a with d(i, j) >= a_i + a_j => 2 w_ij >= y_i + y_j: 2 w >= 2 d
// scale - 1 below the cap, so a violated pair (Z = 0) has d < (y_i + y_j +
// 1) / (2 scale); a capped pair can only be violated when y_i + y_j > 2 wmax:
// such points see every pair.
std::unique_ptr<Distances::ScreenSet> PricedSolve::screen_set_of(const i32* points, i32 count,
                                                                 const std::vector<double>& a) const {
    std::vector<double> at(count);
    for (i32 t = 0; t < count; ++t) at[t] = a[points[t]];
    return D_.screen_set(points, count, at.data());
}

std::vector<double> PricedSolve::screen_thresholds() const {
    const std::vector<i64>& y = r_.y;
    std::vector<double> a(n_);
    i64 ymax = 0;
    for (i32 i = 0; i < n_; ++i) ymax = std::max(ymax, y[i]);
    for (i32 i = 0; i < n_; ++i)
        a[i] = y[i] + ymax > 2 * wmax_ ? std::numeric_limits<double>::infinity()
                                       : ws_.distance_above((static_cast<double>(y[i]) + 0.5) / 2);
    return a;
}

// Whether screening every pair costs less than the prefix scan would.
bool PricedSolve::screen_pays() const {
    const Distances& D = D_;
    Control& control = control_;
    const i32 n = n_;
    const BlossomResult& r = r_;
    const std::vector<i32>& by_y = by_y_;
    const std::vector<i64>& c = c_;
    // Work of the prefix scan: each point walks the points with
    // y_j > c_i (cheap) and computes the distance of those that also
    // have y_i > c_j, counted here offline with a Fenwick tree over
    // the ranks of c, in the order of the prefixes.
    double walked = 0, computed = 0;
    {
        std::vector<i32> len(n), by_len(n);
        for (i32 i = 0; i < n; ++i) {
            const i64 ci = c[i];
            len[i] = static_cast<i32>(
                std::partition_point(by_y.begin(), by_y.end(), [&](i32 j) { return r.y[j] > ci; }) - by_y.begin());
            walked += len[i];
            by_len[i] = i;
        }
        std::sort(by_len.begin(), by_len.end(),
                  [&](i32 a, i32 b) { return len[a] < len[b] || (len[a] == len[b] && a < b); });
        std::vector<i64> sorted_c(c.begin(), c.end());
        std::sort(sorted_c.begin(), sorted_c.end());
        std::vector<i32> fen(n + 1, 0);
        i32 added = 0;
        for (i32 i : by_len) {
            for (; added < len[i]; ++added) {
                const i32 j = by_y[added];
                for (i32 k =
                         static_cast<i32>(std::lower_bound(sorted_c.begin(), sorted_c.end(), c[j]) - sorted_c.begin()) +
                         1;
                     k <= n; k += k & -k)
                    ++fen[k];
            }
            i64 below = 0;  // inserted j with c_j < y_i
            for (i32 k =
                     static_cast<i32>(std::lower_bound(sorted_c.begin(), sorted_c.end(), r.y[i]) - sorted_c.begin());
                 k > 0; k -= k & -k)
                below += fen[k];
            computed += static_cast<double>(below);
        }
        control.check();
    }
    // (each pair counted from both ends, computed from one)
    return walked + 0.5 * computed * D.exact_cost() > 0.5 * static_cast<double>(n) * n * D.screen_cost();
}

}  // namespace pairmetrics::matching::pricing
