#include "matching_sparse.hpp"

#include "matching_solver.hpp"

#include <algorithm>
#include <stdexcept>

namespace pairmetrics::matching {

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;

// Edge ids of each vertex's `k` cheapest edges (each edge once, sorted).
template <class Int>
std::vector<i32> cheapest_edges(i32 n, std::size_t m, const i32* eu, const i32* ev, const Int* w, i32 k) {
    std::vector<i32> start(n + 1, 0);
    for (std::size_t e = 0; e < m; ++e) {
        ++start[eu[e] + 1];
        ++start[ev[e] + 1];
    }
    for (i32 v = 0; v < n; ++v) start[v + 1] += start[v];
    std::vector<i32> inc(start[n]), fill(start.begin(), start.end() - 1);
    for (std::size_t e = 0; e < m; ++e) {
        inc[fill[eu[e]]++] = static_cast<i32>(e);
        inc[fill[ev[e]]++] = static_cast<i32>(e);
    }
    std::vector<i32> ids;
    auto lighter = [w](i32 a, i32 b) { return w[a] < w[b] || (w[a] == w[b] && a < b); };
    for (i32 v = 0; v < n; ++v) {
        auto lo = inc.begin() + start[v], hi = inc.begin() + start[v + 1];
        auto mid = hi - lo > k ? lo + k : hi;
        std::nth_element(lo, mid, hi, lighter);
        ids.insert(ids.end(), lo, mid);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

}  // namespace

template <class Int>
std::vector<Int> reduced_costs(const BasicBlossomResult<Int>& r, std::size_t m, const i32* eu, const i32* ev,
                               const Int* w) {
    const BasicDualForest<Int> forest(r);
    std::vector<Int> rc(m);
    for (std::size_t e = 0; e < m; ++e) rc[e] = 2 * w[e] - r.y[eu[e]] - r.y[ev[e]] + forest.common_z(eu[e], ev[e]);
    return rc;
}

template <class Int>
void certify(const BasicBlossomResult<Int>& r, const std::vector<Int>& rc, std::size_t m, const i32* eu,
             const i32* ev) {
    const auto n = static_cast<i32>(r.y.size());
    for (i32 v = 0; v < n; ++v)
        if (r.mate[v] < 0 || r.mate[v] >= n || r.mate[r.mate[v]] != v || r.mate[v] == v)
            throw std::logic_error("matching certificate: not a perfect matching");
    for (const Int& zb : r.z)
        if (zb < 0) throw std::logic_error("matching certificate: negative blossom dual");
    std::vector<char> tight(n, 0);
    for (std::size_t e = 0; e < m; ++e) {
        if (rc[e] < 0) throw std::logic_error("matching certificate: an edge violates the duals");
        if (rc[e] == 0 && r.mate[eu[e]] == ev[e]) tight[eu[e]] = tight[ev[e]] = 1;
    }
    for (i32 v = 0; v < n; ++v)
        if (!tight[v]) throw std::logic_error("matching certificate: a matched pair is not a tight edge");
    // Matched pairs inside each blossom: counted at their smallest common
    // blossom, then summed up the forest (children come after parents).
    const BlossomTree tree(n, r.parent);
    std::vector<i64> inside(r.parent.size(), 0), size(r.parent.size(), 0);
    for (i32 v = 0; v < n; ++v) {
        size[v] = 1;
        const i32 b = tree.lca(v, r.mate[v]);
        if (b >= 0 && v < r.mate[v]) ++inside[b];
    }
    const std::vector<i32>& order = tree.preorder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const i32 p = r.parent[*it];
        if (p == -1) continue;
        inside[p] += inside[*it];
        size[p] += size[*it];
    }
    for (std::size_t b = static_cast<std::size_t>(n); b < r.parent.size(); ++b)
        if (r.z[b - n] > 0 && 2 * inside[b] != size[b] - 1)
            throw std::logic_error("matching certificate: a blossom with a positive dual is not full");
}

template <class Int>
SparseSolution<Int> solve_sparse(i32 n, std::size_t m, const i32* eu, const i32* ev, const Int* w,
                                 const SparseOptions& options, Control& control) {
    SparseSolution<Int> out;
    const bool priced = m > static_cast<std::size_t>(options.price_above) * static_cast<std::size_t>(n);
    BasicBlossomResult<Int> r;
    if (priced) {
        // The subgraph's edges, in the order they joined (the solver keeps its
        // blossoms, duals and matching across rounds and repairs what the new
        // edges violate).
        std::vector<i32> su, sv;
        std::vector<Int> sw;
        std::vector<char> in_graph(m, 0);
        auto join = [&](i32 e) {
            in_graph[e] = 1;
            su.push_back(eu[e]);
            sv.push_back(ev[e]);
            sw.push_back(w[e]);
        };
        for (i32 e : cheapest_edges(n, m, eu, ev, w, options.start_edges)) join(e);
        detail::Solver<Int> solver(n, su.size(), su.data(), sv.data(), sw.data(), control);
        r = solver.run(nullptr);
        ++out.rounds;
        while (r.perfect) {  // else the start graph lacks a perfect matching: the whole graph decides
            out.edges = static_cast<i64>(su.size());
            const std::vector<Int> rc = reduced_costs(r, m, eu, ev, w);
            const std::size_t before = su.size();
            for (std::size_t e = 0; e < m; ++e)
                if (rc[e] < 0 && !in_graph[e]) join(static_cast<i32>(e));
            if (su.size() == before) {
                certify(r, rc, m, eu, ev);
                out.blossom = std::move(r);
                return out;
            }
            control.check();
            solver.add_edges(su.size(), su.data(), sv.data(), sw.data());
            r = solver.resume();
            ++out.rounds;
            if (!r.perfect)
                throw std::logic_error("matching: a resumed solve lost its perfect matching (internal error)");
        }
    }
    r = solve_perfect<Int>(n, m, eu, ev, w, control, nullptr);
    ++out.rounds;
    out.edges = static_cast<i64>(m);
    if (r.perfect) certify(r, reduced_costs(r, m, eu, ev, w), m, eu, ev);
    out.blossom = std::move(r);
    return out;
}

#define PAIRMETRICS_SPARSE_INSTANCES(Int)                                                                             \
    template std::vector<Int> reduced_costs<Int>(const BasicBlossomResult<Int>&, std::size_t, const i32*, const i32*, \
                                                 const Int*);                                                         \
    template void certify<Int>(const BasicBlossomResult<Int>&, const std::vector<Int>&, std::size_t, const i32*,      \
                               const i32*);                                                                           \
    template SparseSolution<Int> solve_sparse<Int>(i32, std::size_t, const i32*, const i32*, const Int*,              \
                                                   const SparseOptions&, Control&);
PAIRMETRICS_SPARSE_INSTANCES(i64)
PAIRMETRICS_SPARSE_INSTANCES(i128)
#undef PAIRMETRICS_SPARSE_INSTANCES

}  // namespace pairmetrics::matching
