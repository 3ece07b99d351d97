// The blossom solver's event loop: the next event by key from the priority
// queue (a tight edge or a blossom to expand), the global dual step it
// implies and the step of the algorithm it triggers; and the public entry points.

#include "matching_solver.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace pairmetrics::matching::detail {

template <class Int>
Solver<Int>::Solver(i32 n, std::size_t m, const i32* eu, const i32* ev, const Int* w, Control& control)
    : n_(n), eu_(eu), ev_(ev), control_(control) {
    W_.resize(m);
    for (std::size_t e = 0; e < m; ++e) W_[e] = 2 * w[e];
    build_adjacency();
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

template <class Int>
void Solver<Int>::build_adjacency() {
    const std::size_t m = W_.size();
    std::vector<i32> deg(n_ + 1, 0);
    for (std::size_t e = 0; e < m; ++e) {
        if (eu_[e] == ev_[e]) continue;
        ++deg[eu_[e]];
        ++deg[ev_[e]];
    }
    start_.assign(n_ + 1, 0);
    for (i32 v = 0; v < n_; ++v) start_[v + 1] = start_[v] + deg[v];
    adj_.resize(start_[n_]);
    adj_other_.resize(start_[n_]);
    adj_w_.resize(start_[n_]);
    std::vector<i32> fill(start_.begin(), start_.end() - 1);
    for (std::size_t e = 0; e < m; ++e) {
        if (eu_[e] == ev_[e]) continue;
        for (const auto& [from, to] : {std::pair{eu_[e], ev_[e]}, std::pair{ev_[e], eu_[e]}}) {
            const i32 k = fill[from]++;
            adj_[k] = static_cast<i32>(e);
            adj_other_[k] = to;
            adj_w_[k] = W_[e];
        }
    }
}

template <class Int>
BasicBlossomResult<Int> Solver<Int>::run(const BasicWarmStart<Int>* warm) {
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
    if (!solve_events(unmatched)) return result;
    finish(result);
    return result;
}

template <class Int>
bool Solver<Int>::solve_events(i32 unmatched) {
    std::int64_t since_check = 0;
    while (unmatched > 0) {
        if (heap_.empty()) return false;  // a tree cannot grow: no perfect matching
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
    return true;
}

template <class Int>
i32 Solver<Int>::process_edge(i32 e) {
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

template <class Int>
void Solver<Int>::process_expand(i32 b) {
    if (!alive_[b] || parent_[b] != -1 || label_[b] != -1) return;
    const Int z = zstore_[b] - 2 * (delta_ - stamp_[b]);
    if (z < 0) throw std::logic_error("matching: negative blossom dual (internal error)");
    if (z > 0) {
        push_event(delta_ + z / 2, -(b + 1));
        return;
    }
    expand(b);
}

// Both weight types (64-bit, and 128-bit for large or many weights).
#define PAIRMETRICS_MATCHING_SOLVER_INSTANCES(W)                                                                  \
    template Solver<W>::Solver(i32 n, std::size_t m, const i32* eu, const i32* ev, const W* w, Control& control); \
    template BasicBlossomResult<W> Solver<W>::run(const BasicWarmStart<W>*);                                      \
    template void Solver<W>::build_adjacency();                                                                   \
    template bool Solver<W>::solve_events(i32);                                                                   \
    template i32 Solver<W>::process_edge(i32);                                                                    \
    template void Solver<W>::process_expand(i32);
PAIRMETRICS_MATCHING_SOLVER_INSTANCES(i64)
PAIRMETRICS_MATCHING_SOLVER_INSTANCES(i128)
#undef PAIRMETRICS_MATCHING_SOLVER_INSTANCES

}  // namespace pairmetrics::matching::detail

namespace pairmetrics::matching {

using detail::i32;
using detail::i64;

std::int64_t max_weight(std::int32_t n) {
    // Internal weights are doubled and duals stay below ~n times the largest
    // weight; 2^59 / (n + 1) leaves a factor of 8 of headroom in int64.
    const i64 cap = (i64{1} << 59) / (static_cast<i64>(n) + 1);
    return std::min<i64>(cap, i64{1} << 50);
}

BlossomResult min_weight_perfect_matching(std::int32_t n, std::size_t m, const std::int32_t* eu, const std::int32_t* ev,
                                          const std::int64_t* w, Control& control, const WarmStart* warm) {
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
    detail::Solver<Int> solver(n, m, eu, ev, w, control);
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

}  // namespace pairmetrics::matching
