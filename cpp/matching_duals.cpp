// Dual updates of the blossom solver: the start (cold, or warm from an earlier
// solution), the greedy first matching, folding lazy offsets, and the final
// duals handed back.

#include "matching_solver.hpp"

#include <algorithm>
#include <stdexcept>

namespace pairmetrics::matching::detail {

template <class Int>
void Solver<Int>::push_offset(i32 b) {
    settle(b);
    if (off_[b] != 0)
        for (i32 v : leaves(b)) ystore_[v] += off_[b];
    off_[b] = 0;
}

template <class Int>
void Solver<Int>::initial_duals() {
    for (i32 v = 0; v < n_; ++v) {
        Int best = IntLimits<Int>::max;
        for (i32 k = start_[v]; k < start_[v + 1]; ++k) best = std::min(best, W_[adj_[k]]);
        const Int half = best / 2;
        ystore_[v] = half - (half & 1);
    }
}

template <class Int>
void Solver<Int>::warm_init(const BasicWarmStart<Int>& warm) {
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

template <class Int>
void Solver<Int>::greedy_match() {
    for (i32 v = 0; v < n_; ++v) {
        if (mate_[v] != -1 || topof(v) != v) continue;
        Int best = IntLimits<Int>::max;
        i32 best_free = -1;
        const Int yv = y(v);
        for (i32 k = start_[v]; k < start_[v + 1]; ++k) {
            const i32 o = adj_other_[k];
            const Int s = adj_w_[k] - yv - y(o);
            const bool free = mate_[o] == -1 && topof(o) == o;
            if (s < best || (s == best && best_free == -1 && free)) {
                best = s;
                best_free = free ? o : -1;
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

template <class Int>
void Solver<Int>::finish(BasicBlossomResult<Int>& result) {
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
    ended_ = true;
    // Not needed until edges are added (add_edges starts them again).
    heap_ = decltype(heap_)();
    std::vector<Int>().swap(pending_);
}

// Both weight types (64-bit, and 128-bit for large or many weights).
#define PAIRMETRICS_MATCHING_DUALS_INSTANCES(W)                   \
    template void Solver<W>::push_offset(i32);                    \
    template void Solver<W>::initial_duals();                     \
    template void Solver<W>::warm_init(const BasicWarmStart<W>&); \
    template void Solver<W>::greedy_match();                      \
    template void Solver<W>::finish(BasicBlossomResult<W>&);
PAIRMETRICS_MATCHING_DUALS_INSTANCES(i64)
PAIRMETRICS_MATCHING_DUALS_INSTANCES(i128)
#undef PAIRMETRICS_MATCHING_DUALS_INSTANCES

}  // namespace pairmetrics::matching::detail
