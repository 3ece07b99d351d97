// Tests of the matching units on their own: the sparse solve (int64 and
// 128-bit duals, pricing, certificate), the certificate's limits at the
// edges of float64 and the complete-graph passes over the whole float64 range.
// Built as pairmetrics_matching_tests (an argument filters tests by name).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "control.hpp"
#include "matching.hpp"
#include "matching_distances.hpp"
#include "matching_sparse.hpp"

namespace {

using namespace pairmetrics;
using matching::i128;

int g_failures = 0;
int g_checks = 0;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        ++g_checks;                                                                      \
        if (!(cond)) {                                                                   \
            ++g_failures;                                                                \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                \
    } while (0)

template <class F>
bool throws_logic(F&& f) {
    try {
        f();
    } catch (const std::logic_error&) {
        return true;
    }
    return false;
}

// Least cost of a perfect matching of the complete graph w (n x n, n <= 12), by enumeration.
template <class Int>
Int brute(const std::vector<Int>& w, int n, int used = 0) {
    int i = 0;
    while (i < n && (used >> i & 1)) ++i;
    if (i == n) return 0;
    Int best = -1;
    for (int j = i + 1; j < n; ++j) {
        if (used >> j & 1) continue;
        const Int c = w[i * n + j] + brute(w, n, used | 1 << i | 1 << j);
        if (best < 0 || c < best) best = c;
    }
    return best;
}

template <class Int>
void sparse_against_brute_force(Int top, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    for (int trial = 0; trial < 60; ++trial) {
        const int n = 2 * (1 + trial % 6);
        std::vector<Int> w(n * n, 0);
        std::vector<std::int32_t> eu, ev;
        std::vector<Int> ew;
        for (int u = 0; u < n; ++u)
            for (int v = u + 1; v < n; ++v) {
                // Weights near the top differ only in their low bits: ties for a float64 view.
                const Int x = top - static_cast<Int>(gen() % (trial % 2 ? 7 : 1000));
                w[u * n + v] = w[v * n + u] = x;
                eu.push_back(u);
                ev.push_back(v);
                ew.push_back(x);
            }
        Control control;
        matching::SparseOptions opt;
        opt.price_above = trial % 3 == 0 ? 0 : 64;  // every third trial priced from 1 edge per vertex
        opt.start_edges = 1;
        const auto s = matching::solve_sparse<Int>(n, ew.size(), eu.data(), ev.data(), ew.data(), opt, control);
        CHECK(s.blossom.perfect);
        Int got = 0;
        for (int v = 0; v < n; ++v)
            if (s.blossom.mate[v] > v) got += w[v * n + s.blossom.mate[v]];
        CHECK(got == brute(w, n));
    }
}

void test_sparse() {
    sparse_against_brute_force<std::int64_t>(matching::max_weight(12), 1);
    sparse_against_brute_force<i128>(matching::max_weight_128(24) / 2, 2);
    // No perfect matching: a path of three vertices plus an isolated pair.
    const std::int32_t eu[] = {0, 1, 3}, ev[] = {1, 2, 4};
    const std::int64_t w[] = {1, 1, 1};
    Control control;
    CHECK(!matching::solve_sparse<std::int64_t>(6, 3, eu, ev, w, {}, control).blossom.perfect);
}

void test_certify_rejects() {
    // A 4-cycle 0-1-2-3 with weights 1, 5, 1, 5: the optimum matches (0,1), (2,3).
    const std::int32_t eu[] = {0, 1, 2, 3}, ev[] = {1, 2, 3, 0};
    const std::int64_t w[] = {1, 5, 1, 5};
    Control control;
    auto r = matching::solve_perfect<std::int64_t>(4, 4, eu, ev, w, control);
    auto rc = matching::reduced_costs(r, 4, eu, ev, w);
    matching::certify(r, rc, 4, eu, ev);  // holds
    auto wrong = r;
    wrong.mate = {3, 2, 1, 0};
    CHECK(throws_logic([&] { matching::certify(wrong, rc, 4, eu, ev); }));
    auto low = r;
    low.y[0] += 4;  // an edge at 0 now violates the duals
    CHECK(throws_logic([&] { matching::certify(low, matching::reduced_costs(low, 4, eu, ev, w), 4, eu, ev); }));
}

// A symmetric matrix from its upper triangle, row by row.
std::vector<double> symmetric(int n, const std::vector<double>& upper) {
    std::vector<double> D(n * n, 0.0);
    std::size_t t = 0;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) D[i * n + j] = D[j * n + i] = upper[t++];
    return D;
}

double solve_cost(const std::vector<double>& D, int n, matching::Certificate* cert) {
    Control control;
    matching::CompleteOptions opt;
    opt.ghost = n % 2 == 1;
    const matching::DenseDistances<double> dd(D.data(), n, n, 1);
    const auto r = matching::complete_min_weight_perfect_matching(dd, opt, control, nullptr);
    if (cert) {
        std::vector<double> y(r.blossom.y.size()), z(r.blossom.z.size());
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(r.blossom.y[i]) * r.unit;
        for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<double>(r.blossom.z[i]) * r.unit;
        *cert = matching::certificate(dd, opt.ghost, y.data(), r.blossom.parent, z.data(), r.blossom.mate.data(), 1,
                                      control);
    }
    return r.cost;
}

void test_whole_float64_range() {
    // 1e-300 and 1e-150 on the optimal pairs, 1e300 elsewhere.
    const auto D = symmetric(4, {1e300, 1e-300, 1e300, 1e300, 1e-150, 1e300});
    matching::Certificate c;
    CHECK(solve_cost(D, 4, &c) == 1e-150 + 1e-300);
    CHECK(c.complete && c.max_violation <= 1e-160 && std::isfinite(c.dual_objective));
    // Maxima at the top of float64: the certificate stays finite.
    const double top = std::numeric_limits<double>::max();
    const auto H = symmetric(4, {top, 1.0, top, top, 2.0, top});
    CHECK(solve_cost(H, 4, &c) == 3.0);
    CHECK(std::isfinite(c.dual_objective) && std::isfinite(c.error_bound) && c.cost == 3.0);
    CHECK(c.cost - c.dual_objective <= 1e-9 * 3.0 + c.error_bound + c.lowering);
    // Subnormal distances only.
    const auto S = symmetric(4, {4e-323, 5e-324, 4e-323, 4e-323, 1e-323, 4e-323});
    CHECK(solve_cost(S, 4, nullptr) == 5e-324 + 1e-323);
}

struct Test {
    const char* name;
    void (*run)();
};

}  // namespace

int main(int argc, char** argv) {
    const Test tests[] = {
        {"sparse", test_sparse},
        {"certify_rejects", test_certify_rejects},
        {"whole_float64_range", test_whole_float64_range},
    };
    int run = 0;
    for (const Test& t : tests) {
        if (argc > 1 && std::strstr(t.name, argv[1]) == nullptr) continue;
        const int before = g_failures;
        try {
            t.run();
        } catch (const std::exception& e) {
            ++g_failures;
            std::fprintf(stderr, "%s: unexpected exception: %s\n", t.name, e.what());
        }
        std::printf("%-22s %s\n", t.name, g_failures == before ? "ok" : "FAILED");
        ++run;
    }
    std::printf("%d tests, %d checks, %d failures\n", run, g_checks, g_failures);
    return (g_failures == 0 && run > 0) ? 0 : 1;
}
