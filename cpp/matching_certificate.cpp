// The LP dual certificate of a matching of the complete graph, checked against
// every pair of a distance provider in float64 with bounded rounding errors.

#include "matching.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace pairmetrics::matching {

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

}  // namespace

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
        D.pairs_below(a.data(), nullptr, n_threads, control, [&](i32 u, i32 v) {
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
    // The solve's integer grid is a fraction of the largest distance: with a
    // cost near 0 that, not the cost, sets what its duals can resolve.
    c.magnitude = cost.abs + dual.abs + D.max_distance() * s;
    for (double* x : {&c.max_violation, &c.max_violation_bound, &c.lowering, &c.max_matched_slack, &c.dual_objective,
                      &c.cost, &c.error_bound, &c.magnitude})
        *x /= s;
    return c;
}

}  // namespace pairmetrics::matching
