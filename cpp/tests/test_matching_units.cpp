// Tests of the matching units on their own: the blossom forest, the steps of
// the blossom algorithm (int64 and 128-bit duals), pricing, the certificate
// (also at the edges of float64), cross-match counts, and the exact sparse
// solve of the networkx backend, the two-word 128-bit integer, and the tile
// scans of the Euclidean provider (every vector level against the scalar one).
// Built as pairmetrics_matching_tests (an argument filters tests by name), and
// as pairmetrics_matching_tests_portable128 with that integer as the solver's.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "check.hpp"
#include "matching_checks.hpp"
#include "control.hpp"
#include "matching.hpp"
#include "matching_distance_tiles.hpp"
#include "matching_distances.hpp"
#include "matching_kept_pairs.hpp"
#include "matching_reorder.hpp"
#include "matching_solver.hpp"
#include "matching_sparse.hpp"
#include "matching_tile_scan.hpp"

namespace {

using namespace pairmetrics;
using matching::i128;

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

// The blossom forest: a hand-made laminar family over 6 vertices,
// blossoms 6 = {0, 1, 2}, 7 = {6, 3, 4} and vertex 5 alone.
void test_forest() {
    const std::vector<std::int32_t> parent = {6, 6, 6, 7, 7, -1, 7, -1};
    const matching::BlossomTree tree(6, parent);
    CHECK(tree.lca(0, 1) == 6 && tree.lca(0, 3) == 7 && tree.lca(3, 4) == 7);
    CHECK(tree.lca(0, 5) == -1 && tree.lca(2, 2) == -1);
    CHECK(tree.root(0) == 7 && tree.root(5) == 5 && tree.root(6) == 7);
    // Every node holds one contiguous range of the vertices in preorder.
    CHECK(tree.order().size() == 6u);
    CHECK(tree.hi(7) - tree.lo(7) == 5 && tree.hi(6) - tree.lo(6) == 3 && tree.hi(5) - tree.lo(5) == 1);
    for (std::int32_t v = 0; v < 6; ++v) {
        const std::int32_t at = tree.lo(v);
        CHECK(tree.hi(v) == at + 1 && tree.order()[at] == v);
        for (std::int32_t b = 6; b < 8; ++b) {
            bool inside = false;
            for (std::int32_t x = v; x != -1; x = parent[x]) inside = inside || x == b;
            CHECK(inside == (tree.lo(b) <= at && at < tree.hi(b)));
        }
    }
    matching::BlossomResult r;
    r.y.assign(6, 0);
    r.parent = parent;
    r.z = {4, 10};
    const matching::DualForest forest(r);
    CHECK(forest.common_z(0, 1) == 14 && forest.common_z(0, 3) == 10 && forest.common_z(0, 5) == 0);
    CHECK(forest.enclosing_z(2) == 14 && forest.enclosing_z(4) == 10 && forest.zsum(6) == 14);
}

// The steps of the blossom algorithm (grow, shrink, expand, augment, the dual
// updates and a warm start), each seen at work, against enumeration.
template <class Int>
void blossom_steps(std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    matching::BlossomStats seen;
    for (int trial = 0; trial < 200; ++trial) {
        const int n = 2 * (2 + trial % 6);
        std::vector<Int> w(n * n, 0);
        std::vector<std::int32_t> eu, ev;
        std::vector<Int> ew;
        for (int u = 0; u < n; ++u)
            for (int v = u + 1; v < n; ++v) {
                // Few light edges among heavy ones: odd cycles of light edges make blossoms.
                const Int x = static_cast<Int>(gen() % 3 == 0 ? gen() % (trial % 3 == 0 ? 3 : 10) : 1000 + gen() % 40);
                w[u * n + v] = w[v * n + u] = x;
                eu.push_back(u);
                ev.push_back(v);
                ew.push_back(x);
            }
        Control control;
        const auto r = matching::solve_perfect<Int>(n, ew.size(), eu.data(), ev.data(), ew.data(), control);
        CHECK(r.perfect);
        Int got = 0;
        for (int v = 0; v < n; ++v)
            if (r.mate[v] > v) got += w[v * n + r.mate[v]];
        CHECK(got == brute(w, n));
        const auto rc = matching::reduced_costs(r, ew.size(), eu.data(), ev.data(), ew.data());
        matching::certify(r, rc, ew.size(), eu.data(), ev.data());
        // Warm from its own duals (blossoms folded in): the same optimum.
        const matching::BasicDualForest<Int> forest(r);
        std::vector<Int> y0(r.y);
        for (int v = 0; v < n; ++v) y0[v] -= forest.enclosing_z(v) / 2;
        const matching::BasicWarmStart<Int> warm{y0.data(), r.mate.data()};
        const auto again = matching::solve_perfect<Int>(n, ew.size(), eu.data(), ev.data(), ew.data(), control, &warm);
        Int got2 = 0;
        for (int v = 0; v < n; ++v)
            if (again.mate[v] > v) got2 += w[v * n + again.mate[v]];
        CHECK(got2 == got);
        seen.grows += r.stats.grows;
        seen.shrinks += r.stats.shrinks;
        seen.expands += r.stats.expands;
        seen.augments += r.stats.augments;
    }
    CHECK(seen.grows > 0);
    CHECK(seen.shrinks > 0);
    CHECK(seen.expands > 0);
    CHECK(seen.augments > 0);
}

void test_blossom_steps() {
    blossom_steps<std::int64_t>(11);
    blossom_steps<i128>(12);
}

// Pricing on the complete graph: the same optimum from any k (the start graph
// only changes the work), with several rounds when k is small.
void test_pricing() {
    std::mt19937_64 gen(21);
    std::normal_distribution<double> normal;
    for (int trial = 0; trial < 30; ++trial) {
        const int n = 5 + trial % 6;
        std::vector<double> X(2 * n);
        for (double& x : X) x = normal(gen);
        std::vector<double> D(n * n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) D[i * n + j] = std::hypot(X[2 * i] - X[2 * j], X[2 * i + 1] - X[2 * j + 1]);
        // Short lists with the solver resumed or solved afresh each round, and long lists.
        double costs[3];
        for (int variant = 0; variant < 3; ++variant) {
            Control control;
            matching::CompleteOptions opt;
            opt.k = variant == 2 ? 10 : 1;
            opt.resume = variant != 1;
            opt.ghost = n % 2 == 1;
            const matching::DenseDistances<double> dd(D.data(), n, n, 1);
            matching::CompleteStats stats;
            costs[variant] = matching::complete_min_weight_perfect_matching(dd, opt, control, &stats).cost;
            CHECK(stats.rounds >= 1);
            CHECK(stats.resumes + stats.rebuilds == (opt.resume ? stats.rounds - stats.passes : 0));
        }
        CHECK(std::abs(costs[0] - costs[2]) <= 1e-12 * costs[2]);
        CHECK(std::abs(costs[1] - costs[2]) <= 1e-12 * costs[2]);
    }
}

// Cross-match counts: labels alternate along a line, so the optimal pairs of
// neighbours cross exactly where the labels differ.
void test_crossmatch_counts() {
    const int m = 8;
    const std::vector<std::int8_t> z = {0, 1, 1, 0, 0, 1, 1, 0};
    auto fill = [&](std::int64_t draw, double* D) {
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < m; ++j)
                D[i * m + j] = std::abs(i - j) * (1.0 + static_cast<double>(draw)) + (i / 2 == j / 2 ? 0 : 0.5);
    };
    Control control;
    const auto a1 = matching::crossmatch_counts(3, m, z.data(), 10, 2, control, fill);
    CHECK(a1.size() == 3u);
    for (std::int64_t x : a1) CHECK(x == 4);  // pairs (0,1), (2,3), (4,5), (6,7): all mixed
}

// Int128Words: the native type's results (where the compiler has one) on values of every magnitude
// and sign, and identities that hold anywhere.
Int128Words random_words(std::mt19937_64& gen) {
    const int bits = static_cast<int>(gen() % 128);
    const Int128Words x = ((Int128Words{gen()} << 64) + Int128Words{gen()}) >> (127 - bits);
    return gen() % 2 ? -x : x;
}

#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 native_i128;
__extension__ typedef unsigned __int128 native_u128;

bool same(Int128Words a, native_i128 b) {
    return static_cast<std::uint64_t>(a) == static_cast<std::uint64_t>(b) &&
           static_cast<std::int64_t>(a >> 64) == static_cast<std::int64_t>(b >> 64);
}

native_i128 native(Int128Words a) {
    return static_cast<native_i128>(static_cast<native_u128>(static_cast<std::int64_t>(a >> 64)) << 64 |
                                    static_cast<std::uint64_t>(a));
}
#endif

void test_int128_words() {
    using W = Int128Words;
    static_assert(W{-1} < W{0} && (W{1} << 127) < W{0} && ((W{1} << 126) >> 126) == W{1});
    static_assert(W{-7} / W{2} == W{-3} && W{-7} % W{2} == W{-1} && (W{-7} >> 1) == W{-4});
    static_assert((W{1} << 64) - W{1} == W{~std::uint64_t{0}} && -(W{1} << 64) / W{-2} == (W{1} << 63));
    CHECK(!static_cast<bool>(W{0}) && static_cast<bool>(W{1} << 64) && static_cast<std::int32_t>(W{-5}) == -5);
    std::mt19937_64 gen(128);
    for (int trial = 0; trial < 20000; ++trial) {
        const W a = random_words(gen), b = random_words(gen);
        const int s = static_cast<int>(gen() % 128);
        CHECK(a - b + b == a && -(-a) == a && (a < b) == (b > a) && (a <= b) == !(b < a));
        CHECK(b == W{0} || a / b * b + a % b == a);
#if defined(__SIZEOF_INT128__)
        const native_i128 x = native(a), y = native(b);
        const native_u128 ux = static_cast<native_u128>(x), uy = static_cast<native_u128>(y);
        CHECK(same(a, x) && same(a + b, static_cast<native_i128>(ux + uy)));
        CHECK(same(a - b, static_cast<native_i128>(ux - uy)) && same(-a, static_cast<native_i128>(0 - ux)));
        CHECK(same(a * b, static_cast<native_i128>(ux * uy)));
        CHECK(same(a << s, static_cast<native_i128>(ux << s)) && same(a >> s, x >> s));
        CHECK((a < b) == (x < y) && (a == b) == (x == y) && same(a & b, x & y));
        if (b != W{0} && !(a == (W{1} << 127) && b == W{-1})) CHECK(same(a / b, x / y) && same(a % b, x % y));
        CHECK(static_cast<std::int64_t>(a) == static_cast<std::int64_t>(x));
#endif
    }
}

// A plain Fortran-ABI sgemm (column-major C = op(A) op(B), beta = 0), so that
// the float32 tiles of the neighbour search run without a BLAS library.
void reference_sgemm(char* transa, char* transb, int* m, int* n, int* k, float* alpha, float* a, int* lda, float* b,
                     int* ldb, float* beta, float* c, int* ldc) {
    for (int col = 0; col < *n; ++col)
        for (int row = 0; row < *m; ++row) {
            float acc = 0;
            for (int t = 0; t < *k; ++t) {
                const float x = *transa == 'T' ? a[row * *lda + t] : a[t * *lda + row];
                const float y = *transb == 'T' ? b[t * *ldb + col] : b[col * *ldb + t];
                acc += x * y;
            }
            c[col * *ldc + row] = *alpha * acc + (*beta == 0 ? 0.0f : *beta * c[col * *ldc + row]);
        }
}

// The levels of the tile scans this CPU runs.
std::vector<SimdLevel> simd_levels() {
    std::vector<SimdLevel> out{SimdLevel::scalar};
    for (SimdLevel level : {SimdLevel::avx2, SimdLevel::avx512})
        if (simd_supported(level)) out.push_back(level);
    return out;
}

// For point i's list in cand (checked: `store` distinct other points), its
// largest distance and the smallest distance to a point outside it.
template <class Distance>
std::pair<double, double> list_and_outside(int n, int store, const std::vector<std::int32_t>& cand, int i,
                                           const Distance& distance) {
    std::vector<char> in(n, 0);
    double list_max = 0, outside = std::numeric_limits<double>::infinity();
    for (int t = 0; t < store; ++t) {
        const std::int32_t j = cand[static_cast<std::size_t>(i) * store + t];
        CHECK(j >= 0 && j < n && j != i && !in[j]);
        if (j < 0 || j >= n) continue;
        in[j] = 1;
        list_max = std::max(list_max, distance(i, j));
    }
    for (int j = 0; j < n; ++j)
        if (j != i && !in[j]) outside = std::min(outside, distance(i, j));
    return {list_max, outside};
}

// Neighbour lists of Euclidean points (float32 and float64 tiles, several
// row blocks, duplicated points, magnitudes 1e-100 to 1e150, squared and
// not, 1 and 2 threads, every level: the fused scan and the matrix-product
// tiles): each list holds `store` distinct other points, no point outside
// it is nearer than the certified bound, and the list is the nearest up to
// the tiles' rounding.
void test_euclidean_nearest() {
    std::mt19937_64 gen(5);
    std::normal_distribution<double> normal;
    const double magnitude[] = {1.0, 1.0, 1e-100, 1e150, 1e100, 1.0};
    for (int trial = 0; trial < 6; ++trial) {
        const int n = trial < 2 ? 700 : 1100 + trial, d = trial % 2 == 0 ? 20 : (trial == 5 ? 50 : 3);
        const int store = 12 + trial;
        const bool squared = trial >= 4;
        std::vector<double> X(static_cast<std::size_t>(n) * d);
        for (double& x : X) x = normal(gen) * magnitude[trial];
        for (int i = 0; i < 40; ++i)  // duplicated points
            std::copy_n(X.begin() + 3 * i * d, d, X.begin() + (3 * i + 1) * d);
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        matching::EuclideanDistances e(X.data(), n, d, squared, gemm, testing::quiet_control());
        for (SimdLevel level : simd_levels()) {
            e.set_simd(level);
            for (int threads : {1, 2}) {
                std::vector<std::int32_t> cand(static_cast<std::size_t>(n) * store);
                std::vector<double> bound(n);
                Control control;
                e.nearest(store, cand.data(), bound.data(), threads, control);
                for (int i = 0; i < n; ++i) {
                    const auto [list_max, outside] = list_and_outside(n, store, cand, i, e);
                    CHECK(bound[i] <= outside);
                    CHECK(bound[i] >= 0.9 * outside - 1e-2 * e.max_distance());  // the bound is not idle
                    CHECK(list_max <= outside + 1e-2 * e.max_distance());
                }
            }
        }
    }
}

// The fused neighbour scan against a plain loop of its arithmetic (a
// sequential fused multiply-add per coordinate, then (sq_r + sq_c) - 2 dot):
// the same pairs with the same bits at every level that has the scan (and
// the same dot products from the screens' panel kernel), and
// each value within the provider's float32 tile bound of the exact one.
// Shapes not multiples of a strip or a panel, duplicated and integer
// (tied) rows, thresholds equal to a value (a tie is not below), +-inf,
// coordinates from 2 down to 2^-70 (products below the float range).
void test_below_scan() {
    std::mt19937_64 gen(31);
    std::normal_distribution<float> normal;
    const int dims[] = {1, 3, 16, 50, 67};
    // The scalar level keeps the matrix-product tiles.
    CHECK(matching::below_scan_for(SimdLevel::scalar) == nullptr);
    CHECK(matching::panel_dots_for(SimdLevel::scalar) == nullptr);
    for (int trial = 0; trial < 80; ++trial) {
        const int rows = 1 + trial % 13 + (trial % 7 == 0 ? 250 : 0);
        const int cols = 1 + (trial * 5) % 37 + (trial % 9 == 0 ? 200 : 0), d = dims[trial % 5];
        const float scale = std::ldexp(1.0f, -((trial / 5) % 4) * 23);
        const bool integer = trial % 3 == 0;
        auto coordinate = [&] { return integer ? std::round(4 * normal(gen)) * scale : normal(gen) * scale; };
        std::vector<float> x(static_cast<std::size_t>(rows) * d), y(static_cast<std::size_t>(cols) * d);
        for (float& v : x) v = coordinate();
        for (float& v : y) v = coordinate();
        std::copy_n(x.begin(), d, y.begin());  // column 0 is row 0
        if (cols > 1) std::copy_n(y.begin(), d, y.begin() + d);
        auto norms = [&](const std::vector<float>& z, int count) {
            std::vector<float> sq(count);
            for (int i = 0; i < count; ++i) {
                double s = 0;
                for (int k = 0; k < d; ++k) s += static_cast<double>(z[i * d + k]) * z[i * d + k];
                sq[i] = static_cast<float>(s);
            }
            return sq;
        };
        const std::vector<float> sq_row = norms(x, rows), sq_col = norms(y, cols);
        std::vector<float> dots(static_cast<std::size_t>(rows) * cols), value(dots.size());
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                float dot = 0;
                for (int k = 0; k < d; ++k) dot = std::fma(x[r * d + k], y[c * d + k], dot);
                dots[static_cast<std::size_t>(r) * cols + c] = dot;
                value[static_cast<std::size_t>(r) * cols + c] = (sq_row[r] + sq_col[c]) - 2 * dot;
            }
        // Thresholds: a value of the row or column (a tie), or +-inf.
        const float inf = std::numeric_limits<float>::infinity();
        auto threshold = [&](int at, bool of_row) {
            const std::uint64_t pick = gen() % 8;
            if (pick == 0) return inf;
            if (pick == 1) return -inf;
            return of_row ? value[static_cast<std::size_t>(at) * cols + gen() % cols]
                          : value[static_cast<std::size_t>(gen() % rows) * cols + at];
        };
        std::vector<float> tau_row(rows), tau_col(cols);
        for (int r = 0; r < rows; ++r) tau_row[r] = threshold(r, true);
        for (int c = 0; c < cols; ++c) tau_col[c] = threshold(c, false);
        std::vector<std::tuple<int, int, float>> expected;
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                const float v = value[static_cast<std::size_t>(r) * cols + c];
                if (v < tau_row[r] || v < tau_col[c]) expected.emplace_back(r, c, v);
            }
        const double unit_err = matching::EuclideanDistances::tile_unit_error(d, true);
        matching::PackedPanels panels(cols, d), row_panels(rows, d);
        panels.fill(y.data(), 0, cols);
        row_panels.fill(x.data(), 0, rows);
        for (SimdLevel level : simd_levels()) {
            const matching::BelowScanFn scan = matching::below_scan_for(level);
            if (scan == nullptr) continue;
            std::vector<matching::BelowCandidate> out(static_cast<std::size_t>(rows) * cols);
            const std::int32_t count = scan(x.data(), row_panels.from(0), rows, d, panels.from(0), cols, sq_row.data(),
                                            sq_col.data(), tau_row.data(), tau_col.data(), out.data());
            CHECK(count >= 0 && count <= rows * cols);
            std::vector<std::tuple<int, int, float>> got;
            for (std::int32_t t = 0; t < count; ++t) got.emplace_back(out[t].row, out[t].col, out[t].value);
            std::sort(got.begin(), got.end());
            CHECK(got.size() == expected.size());
            CHECK(
                std::equal(got.begin(), got.end(), expected.begin(), expected.end(), [](const auto& a, const auto& b) {
                    return std::get<0>(a) == std::get<0>(b) && std::get<1>(a) == std::get<1>(b) &&
                           std::memcmp(&std::get<2>(a), &std::get<2>(b), sizeof(float)) == 0;
                }));
            // The screens' panel kernel: the same dot products, bit for bit.
            const matching::PanelDotsFn panel_dots = matching::panel_dots_for(level);
            CHECK(panel_dots != nullptr);
            const int stride = matching::kPanelColumns * (1 + trial % 2);  // rows of a wider tile
            std::vector<float> panel_out(static_cast<std::size_t>(rows) * stride);
            bool same = true;
            for (int c0 = 0; c0 < cols && panel_dots != nullptr; c0 += matching::kPanelColumns) {
                panel_dots(x.data(), row_panels.from(0), rows, d, panels.from(c0), panel_out.data(), stride);
                for (int r = 0; r < rows; ++r)
                    for (int c = c0; c < std::min(cols, c0 + matching::kPanelColumns); ++c)
                        same &= std::memcmp(&panel_out[static_cast<std::size_t>(r) * stride + c - c0],
                                            &dots[static_cast<std::size_t>(r) * cols + c], sizeof(float)) == 0;
            }
            CHECK(same);
            for (const auto& [r, c, v] : got) {
                double exact = 0;
                for (int k = 0; k < d; ++k) {
                    const double diff = static_cast<double>(x[r * d + k]) - y[c * d + k];
                    exact += diff * diff;
                }
                CHECK(std::abs(v - exact) <= unit_err * (static_cast<double>(sq_row[r]) + sq_col[c]) + 1e-30);
            }
        }
    }
}

// A batch of exact distances, and the distance of copied rows, are bit for
// bit the distances one by one (squared or not, near-underflow differences,
// both providers).
void test_batch_distances() {
    std::mt19937_64 gen(17);
    std::normal_distribution<double> normal;
    const int n = 300, d = 7;
    std::vector<double> X(static_cast<std::size_t>(n) * d);
    for (double& x : X) x = normal(gen);
    for (int t = 0; t < d; ++t) X[d + t] = X[t] + 1e-170 * (t + 1);  // points 0 and 1 nearly equal
    for (bool squared : {false, true}) {
        const matching::EuclideanDistances e(X.data(), n, d, squared, Blas{}, testing::quiet_control());
        std::vector<double> D(static_cast<std::size_t>(n) * n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) D[static_cast<std::size_t>(i) * n + j] = e(i, j);
        const matching::DenseDistances<double> dense(D.data(), n, n, 1);
        for (int trial = 0; trial < 50; ++trial) {
            const int i = trial == 0 ? 0 : static_cast<int>(gen() % n), count = 1 + static_cast<int>(gen() % 64);
            std::int32_t js[64];
            double out[64], dense_out[64];
            for (int t = 0; t < count; ++t) js[t] = t == 0 ? 1 : static_cast<std::int32_t>(gen() % n);
            e.distances(i, js, count, out);
            dense.distances(i, js, count, dense_out);
            for (int t = 0; t < count; ++t) {
                CHECK(std::memcmp(&out[t], &D[static_cast<std::size_t>(i) * n + js[t]], sizeof(double)) == 0);
                CHECK(std::memcmp(&dense_out[t], &out[t], sizeof(double)) == 0);
                if (js[t] == i) continue;
                // A copy of a row gives the same bits as the point itself.
                const std::vector<double> copy(e.point(js[t]), e.point(js[t]) + e.dims());
                const double between = e.distance_between(e.point(i), copy.data());
                CHECK(std::memcmp(&between, &out[t], sizeof(double)) == 0);
            }
        }
    }
}

// Pricing with large nested blossoms (points on a few tight clusters along a
// line): the same mates and cost from short lists (pairs found by the
// preorder walk inside blossoms and by the prefix) as from lists holding
// every pair (no pricing at all).
void test_pricing_inside_blossoms() {
    std::mt19937_64 gen(23);
    std::normal_distribution<double> normal;
    for (int trial = 0; trial < 6; ++trial) {
        const int n = 150 + 31 * trial, d = 2 + trial % 3;
        std::vector<double> X(static_cast<std::size_t>(n) * d);
        for (int i = 0; i < n; ++i)
            for (int t = 0; t < d; ++t)
                X[static_cast<std::size_t>(i) * d + t] = (t == 0 ? 10.0 * (i % 5) : 0.0) + normal(gen) * (1 + i % 3);
        const matching::EuclideanDistances e(X.data(), n, d, false, Blas{}, testing::quiet_control());
        std::vector<std::int32_t> mates[2];
        double costs[2];
        for (int k : {1, n - 1}) {
            Control control;
            matching::CompleteOptions opt;
            opt.k = k;
            opt.ghost = n % 2 == 1;
            opt.n_threads = 1 + trial % 2;
            matching::CompleteStats stats;
            const auto res = matching::complete_min_weight_perfect_matching(e, opt, control, &stats);
            mates[k == 1 ? 0 : 1] = res.blossom.mate;
            costs[k == 1 ? 0 : 1] = res.cost;
        }
        CHECK(mates[0] == mates[1]);
        CHECK(costs[0] == costs[1]);
    }
}

// The neighbour search's row scan: at every level, the values written and the
// bits are those of the definition (every length up to a chunk, ties at tau).
void test_flag_below() {
    std::mt19937_64 gen(11);
    std::normal_distribution<float> normal;
    for (int trial = 0; trial < 200; ++trial) {
        const int len = 1 + trial % 64, cb = trial % 3;
        std::vector<float> row(cb + len), sqb(cb + len), tau_col(cb + len);
        for (float& x : row) x = normal(gen);
        for (float& x : sqb) x = 4 + normal(gen);
        for (float& x : tau_col) x = 4 + normal(gen);
        const float sqi = 4 + normal(gen), tau = 4 + normal(gen);
        tau_col[cb] = sqi + sqb[cb] - 2 * row[cb];  // a tie: not below
        for (SimdLevel level : simd_levels()) {
            std::vector<float> out = row;
            const std::uint64_t bits =
                matching::flag_below_for(level)(out.data(), sqb.data(), sqi, tau, tau_col.data(), cb, cb + len);
            for (int c = cb; c < cb + len; ++c) {
                const float v = sqi + sqb[c] - 2 * row[c];
                CHECK(out[c] == v);
                CHECK(((bits >> (c - cb)) & 1) == static_cast<std::uint64_t>(v < tau || v < tau_col[c]));
            }
            if (len < 64) CHECK((bits >> len) == 0);
        }
    }
}

// The screen's float32 prefilter never misses a pair the float64 screen
// flags: float32 rows of length d (some near twins), pairs placed within a
// relative 3e-7 of the screen's boundary (both sides), thresholds split unevenly (one
// negative), magnitudes from 1e-20 to 1e15, squared and not, every level.
void test_screen_prefilter() {
    std::mt19937_64 gen(12);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int d : {16, 50, 300}) {
        const double unit_err = matching::EuclideanDistances::tile_unit_error(d, true);
        for (int trial = 0; trial < 400; ++trial) {
            const double magnitude = std::pow(10.0, -20 + 35 * unit(gen));
            const int len = 8;
            std::vector<std::vector<float>> rows(len + 1, std::vector<float>(d));
            for (auto& r : rows)
                for (float& x : r) x = static_cast<float>(normal(gen) * magnitude);
            // Near twins of the row screened (rows[len]): distances a few
            // float32 roundings of the norms above the screen's allowance.
            const double spread[] = {2e-3, 3e-3, 5e-3, 1e-2};
            for (int t = 0; t < 4; ++t)
                for (int k = 0; k < d; ++k)
                    rows[t][k] = static_cast<float>(rows[len][k] * (1 + spread[t] * normal(gen)));
            std::vector<double> sq64(len + 1, 0.0);
            for (int r = 0; r <= len; ++r)
                for (float x : rows[r]) sq64[r] += static_cast<double>(x) * x;
            const matching::ScreenTerms terms(sq64, unit_err, d);
            std::vector<float> dots(len);
            for (int c = 0; c < len; ++c) {
                float acc = 0;  // the order of a plain loop (any order is covered)
                for (int k = 0; k < d; ++k) acc += rows[len][k] * rows[c][k];
                dots[c] = acc;
            }
            const double sqi = sq64[len];
            for (bool squared : {false, true}) {
                std::vector<double> at(len);
                double ai = 0;
                std::vector<char> flagged(len);
                for (int c = 0; c < len; ++c) {
                    const double v = sqi + sq64[c] - 2 * static_cast<double>(dots[c]);
                    const double lower = v - unit_err * (sqi + sq64[c]) - 1e-30;
                    const double target = std::max(lower, 1e-300) * (1 + 3e-7 * (2 * unit(gen) - 1));
                    const double s = squared ? target : std::sqrt(target);
                    if (c == 0) ai = s * (2 * unit(gen) - 0.5);  // may be negative
                    at[c] = s - ai;
                    const double sum = ai + at[c];
                    flagged[c] = sum > 0 && lower < (squared ? sum : sum * sum);
                }
                const std::vector<float> at32 = matching::floats_at_least(at);
                const float ati = matching::float_at_least(ai);
                for (SimdLevel level : simd_levels()) {
                    const matching::MayScreenFn may = matching::may_screen_for(level, squared);
                    const matching::ScreenBitsFn bits_of = matching::screen_bits_for(level, squared);
                    const std::uint64_t bits = bits_of(dots.data(), terms.sq.data(), terms.err.data(), at32.data(),
                                                       terms.sq[len], terms.err[len], ati, len);
                    for (int c = 0; c < len; ++c) {
                        const bool one = may(dots.data() + c, terms.sq.data() + c, terms.err.data() + c,
                                             at32.data() + c, terms.sq[len], terms.err[len], ati, 1);
                        if (flagged[c]) CHECK(one);
                        CHECK(((bits >> c) & 1) == static_cast<std::uint64_t>(one));  // the same test per column
                    }
                    // Far below every threshold: nothing flagged.
                    std::vector<float> none(len, -std::numeric_limits<float>::infinity());
                    CHECK(!may(dots.data(), terms.sq.data(), terms.err.data(), none.data(), terms.sq[len],
                               terms.err[len], ati, len));
                }
            }
        }
    }
}

// Kept pairs: the float weight never exceeds the integer one and is the
// largest float that does not; pairs added by two threads across chunk
// boundaries and merged over two screens come out sorted, each once, in the
// shard of their first point.
void test_kept_pairs() {
    using matching::KeptPairs;
    std::mt19937_64 gen(5);
    for (int t = 0; t < 100000; ++t) {
        const std::int64_t w = static_cast<std::int64_t>(gen() >> (14 + t % 50));
        const float f = matching::float_below(w);
        CHECK(static_cast<std::int64_t>(f) <= w);
        CHECK(static_cast<double>(std::nextafter(f, INFINITY)) > static_cast<double>(w));
        const double d = std::ldexp(static_cast<double>(gen() >> 11), -53 + t % 200 - 100);
        const float g = matching::float_below(d);
        CHECK(static_cast<double>(g) <= d);
        CHECK(static_cast<double>(std::nextafter(g, INFINITY)) > d);
    }
    CHECK_EQ(matching::float_below(std::int64_t{0}), 0.0f);
    CHECK_EQ(matching::float_below(std::int64_t{1} << 50), 0x1p50f);
    CHECK_EQ(matching::float_below(1e300), std::numeric_limits<float>::max());
    const KeptPairs::Pair swapped = KeptPairs::make(9, 4, 7);
    CHECK(swapped.i == 4 && swapped.j == 9 && swapped.w == 7.0f);

    constexpr std::int32_t n = 3000;
    std::vector<std::pair<std::int32_t, std::int32_t>> all;
    KeptPairs kept;
    Control control;
    for (int screen = 0; screen < 2; ++screen) {
        std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
        for (int t = 0; t < 150000; ++t) {  // more than a chunk in shard 0, duplicates within and across screens
            const auto i = static_cast<std::int32_t>(gen() % (t % 2 ? 64 : n)),
                       j = static_cast<std::int32_t>(gen() % n);
            if (i != j) pairs.emplace_back(i, j);
        }
        KeptPairs::Collector found;
        std::thread other([&] {
            for (std::size_t t = 1; t < pairs.size(); t += 2)
                found.add(KeptPairs::make(pairs[t].first, pairs[t].second, pairs[t].first + pairs[t].second));
        });
        for (std::size_t t = 0; t < pairs.size(); t += 2)
            found.add(KeptPairs::make(pairs[t].first, pairs[t].second, pairs[t].first + pairs[t].second));
        other.join();
        CHECK_EQ(found.size(), pairs.size());
        kept.merge(found, control);
        CHECK_EQ(found.size(), std::size_t{0});
        for (auto [i, j] : pairs) all.emplace_back(std::min(i, j), std::max(i, j));
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        CHECK_EQ(kept.size(), all.size());
        std::vector<std::pair<std::int32_t, std::int32_t>> got;
        for (std::size_t t = 0; t < KeptPairs::kShards; ++t) {
            const std::vector<KeptPairs::Pair>& shard = kept.shard(t);
            for (std::size_t s = 0; s < shard.size(); ++s) {
                CHECK_EQ(KeptPairs::shard_of(shard[s]), t);
                CHECK(shard[s].w == static_cast<float>(shard[s].i + shard[s].j));
                if (s > 0)
                    CHECK(shard[s - 1].i < shard[s].i || (shard[s - 1].i == shard[s].i && shard[s - 1].j < shard[s].j));
                got.emplace_back(shard[s].i, shard[s].j);
            }
        }
        std::sort(got.begin(), got.end());
        CHECK(got == all);
    }
    kept.clear();
    CHECK_EQ(kept.size(), std::size_t{0});
}

// The prefilter's levels agree bit for bit over whole 64-column words and
// their tails (lengths 1 to 64), about half of the columns flagged.
void test_screen_prefilter_levels() {
    std::mt19937_64 gen(13);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> dots(64), sq(64), err(64), at(64);
    for (int trial = 0; trial < 200; ++trial) {
        const float sqi = 50.0f * (0.5f + unit(gen)), erri = 1e-3f * sqi, ati = 6.0f * unit(gen);
        for (int c = 0; c < 64; ++c) {
            sq[c] = 50.0f * (0.5f + unit(gen));
            dots[c] = sq[c] * (unit(gen) - 0.5f);
            err[c] = 1e-3f * sq[c];
            // Threshold sums squared at 0.5 to 1.5 of the value; some sums negative.
            const float v = sqi + sq[c] - 2 * dots[c];
            at[c] = (c % 9 == 0 ? -1.0f : 1.0f) * std::sqrt(v * (0.5f + unit(gen))) - ati;
        }
        for (int len : {1, 7, 16, 37, 63, 64})
            for (bool squared : {false, true}) {
                const std::uint64_t want = matching::screen_bits_for(SimdLevel::scalar, squared)(
                    dots.data(), sq.data(), err.data(), at.data(), sqi, erri, ati, len);
                if (len == 64 && !squared) CHECK(want != 0 && ~want != 0);
                for (SimdLevel level : simd_levels()) {
                    CHECK(matching::screen_bits_for(level, squared)(dots.data(), sq.data(), err.data(), at.data(), sqi,
                                                                    erri, ati, len) == want);
                    CHECK(matching::may_screen_for(level, squared)(dots.data(), sq.data(), err.data(), at.data(), sqi,
                                                                   erri, ati, len) == (want != 0));
                }
            }
    }
}

// pairs_below of Euclidean points over float32 tiles: every pair closer than
// its threshold sum is visited once, at every level, the same pairs.
void test_euclidean_pairs_below() {
    std::mt19937_64 gen(13);
    std::normal_distribution<double> normal;
    const int n = 900, d = 20;
    std::vector<double> X(static_cast<std::size_t>(n) * d);
    for (double& x : X) x = normal(gen);
    for (int i = 0; i < 30; ++i) std::copy_n(X.begin() + 5 * i * d, d, X.begin() + (5 * i + 1) * d);
    Blas gemm;
    gemm.sgemm = reference_sgemm;
    for (bool squared : {false, true}) {
        matching::EuclideanDistances e(X.data(), n, d, squared, gemm, testing::quiet_control());
        std::vector<double> a(n);
        for (double& x : a) x = (squared ? 6.0 : 2.5) * (0.5 + 0.5 * normal(gen));
        std::vector<std::vector<char>> seen;
        for (SimdLevel level : simd_levels()) {
            e.set_simd(level);
            std::vector<char> visited(static_cast<std::size_t>(n) * n, 0);
            std::atomic<int> twice{0};
            Control control;
            e.pairs_below(a.data(), nullptr, 2, control, [&](std::int32_t i, std::int32_t j) {
                char& v = visited[static_cast<std::size_t>(i) * n + j];
                if (i >= j || v) ++twice;
                v = 1;
            });
            CHECK(twice.load() == 0);
            int missed = 0, extra = 0;
            for (int i = 0; i < n; ++i)
                for (int j = i + 1; j < n; ++j) {
                    const bool below = e(i, j) < a[i] + a[j];
                    const bool v = visited[static_cast<std::size_t>(i) * n + j] != 0;
                    missed += below && !v;
                    extra += v && !below && !(e(i, j) < (a[i] + a[j]) * 1.001);
                }
            CHECK(missed == 0);
            CHECK(extra == 0);  // the screen is tight, not everything
            seen.push_back(std::move(visited));
        }
        for (const auto& v : seen) CHECK(v == seen.front());
    }
}

// Clustered points (clusters of sizes that are not multiples of a block, so
// that some blocks span two clusters; far apart, so that most tiles are
// skipped by the ball and the row tests; duplicated points; magnitudes 1,
// 1e-100 and 1e100; squared and not; 1 and 2 threads; float32 and float64
// tiles; every level): the lists, pairs_below and pairs_below_rows against brute force, without and with groups.
// n points in d dimensions, point i around centre i % clusters (normal, the
// centres' coordinates `spread` times wider), row-major.
std::vector<double> clustered_points(std::mt19937_64& gen, int clusters, int d, int n, double spread) {
    std::normal_distribution<double> normal;
    std::vector<double> centres(static_cast<std::size_t>(clusters) * d), X(static_cast<std::size_t>(n) * d);
    for (double& c : centres) c = spread * normal(gen);
    for (int i = 0; i < n; ++i)
        for (int t = 0; t < d; ++t)
            X[static_cast<std::size_t>(i) * d + t] =
                centres[static_cast<std::size_t>(i % clusters) * d + t] + normal(gen);
    return X;
}

// The pairs below their threshold sums that test_euclidean_clustered_skips found
// on clustered points without groups or columns (seen, and seen_rows for `rows`).
struct ClusteredPairs {
    const matching::EuclideanDistances& e;
    const std::vector<double>& D;
    const std::vector<double>& a;
    const std::vector<std::int32_t>& rows;
    const std::vector<char>& in_rows;
    const std::vector<char>& seen;
    const std::vector<char>& seen_rows;
    int n, clusters, threads;
};

void check_group_skips(const ClusteredPairs& c, Control& control) {
    // Groups (clusters 0 to 3 one group, the rest none): pairs of one group may be left out, no other
    // pair; every point a row, so that the rows' blocks can lie in one group.
    std::vector<std::int32_t> group(c.n), every(c.n);
    for (int i = 0; i < c.n; ++i) {
        group[i] = i % c.clusters < 4 ? 0 : -1;
        every[i] = i;
    }
    std::vector<char> grouped(c.seen.size(), 0), grouped_rows(c.seen.size(), 0);
    c.e.pairs_below(c.a.data(), group.data(), c.threads, control,
                    [&](std::int32_t i, std::int32_t j) { grouped[static_cast<std::size_t>(i) * c.n + j] = 1; });
    c.e.pairs_below_rows(
        c.a.data(), group.data(), nullptr, every, c.threads, control,
        [&](std::int32_t i, std::int32_t j) { grouped_rows[static_cast<std::size_t>(i) * c.n + j] = 1; });
    int missed_grouped = 0, left_out = 0, left_out_rows = 0;
    for (int i = 0; i < c.n; ++i)
        for (int j = i + 1; j < c.n; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * c.n + j;
            const bool one_group = group[i] >= 0 && group[i] == group[j];
            left_out += c.seen[at] && !grouped[at];
            left_out_rows += c.seen[at] && !grouped_rows[at];
            if (!one_group && c.D[at] < c.a[i] + c.a[j]) missed_grouped += !grouped[at] + !grouped_rows[at];
        }
    CHECK(missed_grouped == 0);
    CHECK(left_out > 0);  // whole blocks of one group are skipped
    CHECK(left_out_rows > 0);
}

void check_column_skips(const ClusteredPairs& c, Control& control) {
    // Columns: pairs at an excluded column may be left out, no other pair.
    std::vector<char> columns(c.n), at_columns(c.seen.size(), 0);
    for (int j = 0; j < c.n; ++j) columns[j] = j % c.clusters < 2;
    c.e.pairs_below_rows(
        c.a.data(), nullptr, columns.data(), c.rows, c.threads, control,
        [&](std::int32_t i, std::int32_t j) { at_columns[static_cast<std::size_t>(i) * c.n + j] = 1; });
    int missed_columns = 0, left_out_columns = 0;
    for (int i = 0; i < c.n; ++i)
        for (int j = 0; j < c.n; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * c.n + j;
            left_out_columns += c.seen_rows[at] && !at_columns[at];
            if (i != j && c.in_rows[i] && !(c.in_rows[j] && j < i) && columns[j] && c.D[at] < c.a[i] + c.a[j])
                missed_columns += !at_columns[at];
        }
    CHECK(missed_columns == 0);
    CHECK(left_out_columns > 0);
}

void test_euclidean_clustered_skips() {
    std::mt19937_64 gen(71);
    std::normal_distribution<double> normal;
    const double magnitude[] = {1.0, 1e-100, 1e100, 1.0};
    for (int trial = 0; trial < 4; ++trial) {
        const int n = 2300 + 37 * trial, d = trial == 3 ? 6 : (trial == 1 ? 50 : 20), clusters = 7, store = 16;
        const bool squared = trial == 2;
        std::vector<double> X = clustered_points(gen, clusters, d, n, 6.0);
        for (double& x : X) x *= magnitude[trial];
        for (int i = 0; i < 25; ++i) std::copy_n(X.begin() + 7 * i * d, d, X.begin() + (7 * i + 1) * d);  // duplicates
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        matching::EuclideanDistances e(X.data(), n, d, squared, gemm, testing::quiet_control());
        std::vector<double> D(static_cast<std::size_t>(n) * n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) D[static_cast<std::size_t>(i) * n + j] = e(i, j);
        // Thresholds near the distances of the clusters' inner pairs, a few
        // large enough to reach other clusters.
        std::vector<double> a(n), across(n);
        const double m = magnitude[trial], unit = squared ? d * 2.0 * m * m : std::sqrt(d * 2.0) * m;
        for (int i = 0; i < n; ++i) a[i] = unit * (i % 97 == 0 ? 4.0 : 0.45 + 0.1 * std::abs(normal(gen)));
        // Or thresholds at 0.3 .. 0.7 of each point's distance to the nearest
        // point of another cluster: pairs across clusters on both sides of
        // their threshold sums, so that a row bound above a true distance
        // misses pairs.
        std::uniform_real_distribution<double> share(0.3, 0.7);
        for (int i = 0; i < n; ++i) {
            double nearest = std::numeric_limits<double>::infinity();
            for (int j = 0; j < n; ++j)
                if (j % clusters != i % clusters) nearest = std::min(nearest, D[static_cast<std::size_t>(i) * n + j]);
            across[i] = nearest * share(gen);
        }
        std::vector<std::int32_t> rows;
        for (int i = 0; i < n; ++i)
            if (gen() % 5 == 0) rows.push_back(i);
        std::vector<char> in_rows(n, 0);
        for (std::int32_t i : rows) in_rows[i] = 1;
        for (int run = 0; run < 2 * static_cast<int>(simd_levels().size()); ++run) {
            const int threads = 1 + run % 2;
            if (testing::kSanitized && threads != 1 + (run / 2 + trial) % 2) continue;  // one thread count a level
            e.set_simd(simd_levels()[run / 2]);
            std::vector<std::int32_t> cand(static_cast<std::size_t>(n) * store);
            std::vector<double> bound(n);
            Control control;
            e.nearest(store, cand.data(), bound.data(), threads, control);
            for (int i = 0; i < n; ++i) {
                const auto [list_max, outside] = list_and_outside(
                    n, store, cand, i, [&](int u, int v) { return D[static_cast<std::size_t>(u) * n + v]; });
                CHECK(bound[i] <= outside);
                CHECK(list_max <= outside * (1 + 1e-5) + 1e-12 * e.max_distance());  // the nearest, up to rounding
            }
            if (run % 2 == 1) a.swap(across);
            std::vector<char> seen(static_cast<std::size_t>(n) * n, 0), seen_rows(seen.size(), 0);
            std::atomic<int> wrong{0};
            e.pairs_below(a.data(), nullptr, threads, control, [&](std::int32_t i, std::int32_t j) {
                char& v = seen[static_cast<std::size_t>(i) * n + j];
                if (i >= j || v) ++wrong;
                v = 1;
            });
            e.pairs_below_rows(a.data(), nullptr, nullptr, rows, threads, control, [&](std::int32_t i, std::int32_t j) {
                if (!in_rows[i] || (in_rows[j] && j < i)) ++wrong;
                char& v = seen_rows[static_cast<std::size_t>(i) * n + j];
                if (v) ++wrong;
                v = 1;
            });
            CHECK(wrong.load() == 0);
            int missed = 0, missed_rows = 0, below = 0;
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    if (i == j || !(D[static_cast<std::size_t>(i) * n + j] < a[i] + a[j])) continue;
                    below += i < j;
                    if (i < j) missed += !seen[static_cast<std::size_t>(i) * n + j];
                    if (in_rows[i] && !(in_rows[j] && j < i))
                        missed_rows += !seen_rows[static_cast<std::size_t>(i) * n + j];
                }
            CHECK(below > n);  // the thresholds are not idle
            CHECK(missed == 0);
            CHECK(missed_rows == 0);
            const ClusteredPairs found{e, D, a, rows, in_rows, seen, seen_rows, n, clusters, threads};
            check_group_skips(found, control);
            check_column_skips(found, control);
        }
    }
}

// screen_block of two chosen sets of Euclidean points (float32 tiles, some
// duplicated points, thresholds of both signs, an infinite one, magnitudes
// 1e-100 and 1e100, squared and not): every pair closer than its threshold
// sum has its bit set, the bits are tight, and sets are null without
// float32 tiles.
void test_euclidean_screen_block() {
    std::mt19937_64 gen(31);
    std::normal_distribution<double> normal;
    const int n = 700, d = 24;
    for (double magnitude : {1.0, 1e-100, 1e100}) {
        std::vector<double> X(static_cast<std::size_t>(n) * d);
        for (double& x : X) x = normal(gen) * magnitude;
        for (int i = 0; i < 30; ++i) std::copy_n(X.begin() + 7 * i * d, d, X.begin() + (7 * i + 1) * d);
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        for (bool squared : {false, true}) {
            const matching::EuclideanDistances e(X.data(), n, d, squared, gemm, testing::quiet_control());
            CHECK(matching::EuclideanDistances(X.data(), n, d, squared, Blas{}, testing::quiet_control())
                      .screen_set(nullptr, 0, nullptr) == nullptr);
            const double unit = squared ? magnitude * magnitude : magnitude;
            std::vector<double> a(n);
            for (double& x : a) x = (squared ? 20.0 : 3.0) * unit * (0.3 + 0.5 * normal(gen));
            a[5] = std::numeric_limits<double>::infinity();
            std::vector<std::int32_t> rows(150), cols(400);
            for (auto& i : rows) i = static_cast<std::int32_t>(gen() % n);
            for (auto& j : cols) j = static_cast<std::int32_t>(gen() % n);
            rows[0] = 5;
            rows[1] = 0;
            cols[0] = 1;  // a duplicate of row 1
            std::vector<double> a_rows(150), a_cols(400);
            for (int t = 0; t < 150; ++t) a_rows[t] = a[rows[t]];
            for (int t = 0; t < 400; ++t) a_cols[t] = a[cols[t]];
            const auto R = e.screen_set(rows.data(), 150, a_rows.data());
            const auto C = e.screen_set(cols.data(), 400, a_cols.data());
            CHECK(R != nullptr && C != nullptr);
            if (!R || !C) continue;
            const int r0 = 0, r1 = 150, c0 = 70, c1 = 400, words = (c1 - c0 + 63) / 64;
            // Threshold sums as given, and lowered (the lowering, a distance: squared ones scale by unit^2).
            for (double lower : {0.0, (squared ? 5.0 : 1.0) * unit}) {
                std::vector<std::uint64_t> bits(static_cast<std::size_t>(r1 - r0) * words, ~std::uint64_t{0});
                e.screen_block(*R, r0, r1, *C, c0, c1, words, bits.data(), lower);
                int missed = 0, extra = 0, flagged = 0;
                for (int r = r0; r < r1; ++r)
                    for (int c = c0; c < c1; ++c) {
                        const bool bit =
                            (bits[static_cast<std::size_t>(r - r0) * words + (c - c0) / 64] >> ((c - c0) % 64)) & 1;
                        const std::int32_t i = rows[r], j = cols[c];
                        const double dij = e(i, j), sum = a[i] + a[j] - lower;
                        flagged += bit;
                        missed += dij < sum && !bit;
                        extra += bit && !(dij < sum + 0.01 * std::abs(sum) + 1e-6 * unit);
                    }
                CHECK(missed == 0);
                CHECK(extra == 0);
                CHECK(flagged > 0 && flagged < (r1 - r0) * (c1 - c0));
                // Bits past the columns stay clear.
                for (int r = r0; r < r1; ++r)
                    CHECK((bits[static_cast<std::size_t>(r - r0) * words + words - 1] >> ((c1 - c0) % 64)) == 0);
            }
        }
    }
}

// Euclidean points with neighbour lists of 24 (long pricing prefixes, yet no screen of every pair).
class ShortLists final : public matching::Distances {
  public:
    explicit ShortLists(const matching::EuclideanDistances& e) : e_(e) {}
    std::int32_t size() const override { return e_.size(); }
    double operator()(std::int32_t i, std::int32_t j) const override { return e_(i, j); }
    void distances(std::int32_t i, const std::int32_t* js, int count, double* out) const override {
        e_.distances(i, js, count, out);
    }
    const double* point(std::int32_t i) const override { return e_.point(i); }
    std::int64_t dims() const override { return e_.dims(); }
    double distance_between(const double* a, const double* b) const override { return e_.distance_between(a, b); }
    double max_distance() const override { return e_.max_distance(); }
    double relative_error() const override { return e_.relative_error(); }
    void nearest(std::int32_t store, std::int32_t* cand, double* bound, int n_threads,
                 Control& control) const override {
        e_.nearest(store, cand, bound, n_threads, control);
    }
    std::int32_t store_hint() const override { return 24; }
    double exact_cost() const override { return e_.exact_cost(); }
    double screen_cost() const override { return e_.screen_cost(); }
    void pairs_below(const double* a, const std::int32_t* group, int n_threads, Control& control,
                     const PairVisitor& visit) const override {
        e_.pairs_below(a, group, n_threads, control, visit);
    }
    void pairs_below_rows(const double* a, const std::int32_t* group, const char* columns,
                          const std::vector<std::int32_t>& rows, int n_threads, Control& control,
                          const PairVisitor& visit) const override {
        e_.pairs_below_rows(a, group, columns, rows, n_threads, control, visit);
    }
    std::unique_ptr<ScreenSet> screen_set(const std::int32_t* points, std::int32_t count,
                                          const double* a) const override {
        return e_.screen_set(points, count, a);
    }
    void screen_block(const ScreenSet& rows, std::int32_t r0, std::int32_t r1, const ScreenSet& cols, std::int32_t c0,
                      std::int32_t c1, int words, std::uint64_t* bits, double lower) const override {
        e_.screen_block(rows, r0, r1, cols, c0, c1, words, bits, lower);
    }

  private:
    const matching::EuclideanDistances& e_;
};

// One solve of D with k = 1 (a ghost for an odd count) and the options `tune` sets.
template <class Tune>
matching::CompleteResult solve_k1(const matching::Distances& D, int n_threads, matching::CompleteStats& stats,
                                  Tune&& tune) {
    Control control;
    matching::CompleteOptions opt;
    opt.k = 1;
    opt.ghost = D.size() % 2 == 1;
    opt.n_threads = n_threads;
    tune(opt);
    return matching::complete_min_weight_perfect_matching(D, opt, control, &stats);
}

// Two solves of D with k = 1, tune(opt, 0) and tune(opt, 1): mates, costs and stats of each.
struct TwoSolves {
    std::vector<std::int32_t> mates[2];
    double costs[2];
    matching::CompleteStats stats[2];
};
template <class Tune>
TwoSolves solve_k1_twice(const matching::Distances& D, int n_threads, Tune&& tune) {
    TwoSolves out;
    for (int which : {0, 1}) {
        const auto res =
            solve_k1(D, n_threads, out.stats[which], [&](matching::CompleteOptions& opt) { tune(opt, which); });
        out.mates[which] = res.blossom.mate;
        out.costs[which] = res.cost;
    }
    return out;
}

// Pricing prefixes screened by float32 tiles (every stretch) give the mates
// and cost of prefixes priced pair by pair (Gaussian points, some duplicated,
// odd and even counts, 1 and 2 threads), and the screen rules pairs out.
void test_pricing_prefix_screen() {
    std::mt19937_64 gen(37);
    std::normal_distribution<double> normal;
    for (int trial = 0; trial < 4; ++trial) {
        const int n = 1200 + 401 * trial, d = 20 + 5 * trial;
        std::vector<double> X(static_cast<std::size_t>(n) * d);
        for (double& x : X) x = normal(gen);
        for (int i = 0; i < 20; ++i) std::copy_n(X.begin() + 9 * i * d, d, X.begin() + (9 * i + 4) * d);
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        const matching::EuclideanDistances e(X.data(), n, d, false, gemm, testing::quiet_control());
        const ShortLists D(e);
        std::vector<std::int32_t> mates[2];
        double costs[2];
        std::int64_t exact[2];
        for (int screened : {0, 1}) {
            matching::CompleteStats stats;
            const auto res = solve_k1(D, 1 + trial % 2, stats, [&](matching::CompleteOptions& opt) {
                opt.screen_every_stretch = screened == 1;
            });
            mates[screened] = res.blossom.mate;
            costs[screened] = res.cost;
            exact[screened] = stats.prefix_pairs;
            if (screened == 1) CHECK(stats.prefix_screened > 0);
        }
        CHECK(exact[1] < exact[0]);
        CHECK(mates[0] == mates[1]);
        CHECK(costs[0] == costs[1]);
    }
}

// Pairs inside large blossoms screened by float32 tiles (every tile) give
// the mates and cost of the walk pair by pair, and the screen rules pairs
// out: odd clusters far apart (large nested blossoms), some duplicated
// points, odd and even counts, 1 and 2 threads, plain and squared distances.
void test_pricing_inside_screen() {
    std::mt19937_64 gen(41);
    std::normal_distribution<double> normal;
    for (int trial = 0; trial < 4; ++trial) {
        const int clusters = 5 + trial, d = 16 + 4 * trial, n = clusters * (191 + 2 * trial) + trial % 2;
        std::vector<double> X = clustered_points(gen, clusters, d, n, 6.0);
        for (int i = 0; i < 15; ++i) std::copy_n(X.begin() + 11 * i * d, d, X.begin() + (11 * i + 5) * d);
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        const matching::EuclideanDistances e(X.data(), n, d, trial == 3, gemm, testing::quiet_control());
        const ShortLists D(e);
        const auto [mates, costs, stats] =
            solve_k1_twice(D, 1 + trial % 2, [](matching::CompleteOptions& opt, int screened) {
                opt.screen_inside_from = screened == 1 ? 2 : std::numeric_limits<int>::max();
                opt.screen_every_stretch = true;  // (the prefix alike in both)
            });
        CHECK(stats[0].inside_screened == 0);
        CHECK(stats[1].inside_screened > 0);
        CHECK(stats[1].inside_pairs < stats[0].inside_pairs);
        CHECK(stats[1].rounds == stats[0].rounds);
        CHECK(stats[1].violated_pairs == stats[0].violated_pairs);
        CHECK(mates[0] == mates[1]);
        CHECK(costs[0] == costs[1]);
    }
}

// Partial screens with the dirty rows of one top-level node screened
// against its points alone (from one row on) give the same rounds,
// violated pairs, mates and cost as against every point, with fewer pairs
// visited: odd clusters far apart (large nested blossoms that split), odd
// and even counts, 1 and 2 threads.
void test_pricing_own_columns() {
    std::mt19937_64 gen(47);
    int restricted = 0;
    for (int trial = 0; trial < 4; ++trial) {
        const int clusters = 7 + trial, d = 12 + 4 * trial, n = clusters * (151 + 2 * trial) + trial % 2;
        const std::vector<double> X = clustered_points(gen, clusters, d, n, 4.0);
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        const matching::EuclideanDistances e(X.data(), n, d, false, gemm, testing::quiet_control());
        const ShortLists D(e);
        const auto [mates, costs, stats] =
            solve_k1_twice(D, 1 + trial % 2, [](matching::CompleteOptions& opt, int own) {
                opt.own_columns_from = own == 1 ? 1 : std::numeric_limits<int>::max();
            });
        CHECK(stats[1].rounds == stats[0].rounds);
        CHECK(stats[1].violated_pairs == stats[0].violated_pairs);
        CHECK(stats[1].screen_pairs <= stats[0].screen_pairs);
        restricted += stats[1].screen_pairs < stats[0].screen_pairs;
        CHECK(mates[0] == mates[1]);
        CHECK(costs[0] == costs[1]);
    }
    CHECK(restricted > 0);  // some partial screen had rows to restrict
}

// Incremental pricing (only pairs with an end whose dual rose or whose
// top-level node changed since the last complete pricing) finds the same
// violated pairs as pricing every pair each round: the same rounds,
// violated pairs, mates, duals, blossoms and cost, with fewer exact
// distances in the prefix. Gaussian points, some duplicated, nested
// clusters, odd counts (the ghost), 1 and 2 threads.
void test_pricing_incremental() {
    std::mt19937_64 gen(43);
    std::normal_distribution<double> normal;
    std::int64_t skipped = 0, saved = 0;
    for (int trial = 0; trial < 6; ++trial) {
        const int n = 900 + 301 * trial, d = 8 + 7 * (trial % 3);
        std::vector<double> X(static_cast<std::size_t>(n) * d);
        if (trial % 2 == 0) {
            for (double& x : X) x = normal(gen);
        } else {  // clusters of clusters: nested blossoms
            std::vector<double> outer(3 * static_cast<std::size_t>(d)), inner(12 * static_cast<std::size_t>(d));
            for (double& x : outer) x = 40.0 * normal(gen);
            for (int c = 0; c < 12; ++c)
                for (int t = 0; t < d; ++t)
                    inner[static_cast<std::size_t>(c) * d + t] =
                        outer[static_cast<std::size_t>(c % 3) * d + t] + 6.0 * normal(gen);
            for (int i = 0; i < n; ++i) {
                const double spread = i % 4 == 0 ? 1.0 : 0.1;
                for (int t = 0; t < d; ++t)
                    X[static_cast<std::size_t>(i) * d + t] =
                        inner[static_cast<std::size_t>(gen() % 12) * d + t] + spread * normal(gen);
            }
        }
        for (int i = 0; i < 25; ++i) std::copy_n(X.begin() + 13 * i * d, d, X.begin() + (13 * i + 6) * d);
        Blas gemm;
        gemm.sgemm = reference_sgemm;
        const matching::EuclideanDistances e(X.data(), n, d, trial % 3 == 2, gemm, testing::quiet_control());
        const ShortLists D(e);
        matching::CompleteResult res[2];
        matching::CompleteStats stats[2];
        for (int full : {0, 1})
            res[full] = solve_k1(D, 1 + trial % 2, stats[full],
                                 [&](matching::CompleteOptions& opt) { opt.full_pricing = full == 1; });
        CHECK(stats[0].rounds == stats[1].rounds);
        CHECK(stats[0].violated_pairs == stats[1].violated_pairs);
        CHECK(stats[0].screen_pairs == stats[1].screen_pairs);
        CHECK(stats[0].prefix_pairs <= stats[1].prefix_pairs);
        CHECK(stats[0].dirty_rows <= stats[1].dirty_rows);
        CHECK(stats[1].prefix_skipped == 0);
        CHECK(res[0].blossom.mate == res[1].blossom.mate);
        CHECK(res[0].blossom.y == res[1].blossom.y);
        CHECK(res[0].blossom.z == res[1].blossom.z);
        CHECK(res[0].blossom.parent == res[1].blossom.parent);
        CHECK(res[0].cost == res[1].cost);
        skipped += stats[0].prefix_skipped;
        saved += stats[1].prefix_pairs - stats[0].prefix_pairs;
    }
    CHECK(skipped > 0);
    CHECK(saved > 0);
}

// The pricing prefix's bits and the exact squared distance: every level
// gives the definition's bits (the distance: the scalar loop's bits, every
// length mod 4, ties at the bound).
void test_prefix_bits_and_distance() {
    std::mt19937_64 gen(15);
    std::normal_distribution<double> normal;
    for (int trial = 0; trial < 300; ++trial) {
        const int len = 1 + trial % 64;
        std::vector<std::int64_t> values(len);
        for (auto& v : values) v = static_cast<std::int64_t>(gen() % 2001) - 1000 + (trial % 2 ? (1LL << 60) : 0);
        const std::int64_t bound = values[trial % len];
        const int d = 1 + trial % 53;
        std::vector<double> a(d), b(d);
        for (int t = 0; t < d; ++t) {
            a[t] = normal(gen) * std::pow(10.0, trial % 7 - 3);
            b[t] = a[t] + normal(gen) * 1e-3;
        }
        const double reference = matching::squared_distance_for(SimdLevel::scalar)(a.data(), b.data(), d);
        double plain[4] = {0, 0, 0, 0};
        int t = 0;
        for (; t + 4 <= d; t += 4)
            for (int q = 0; q < 4; ++q) plain[q] += (a[t + q] - b[t + q]) * (a[t + q] - b[t + q]);
        for (; t < d; ++t) plain[0] += (a[t] - b[t]) * (a[t] - b[t]);
        CHECK(reference == (plain[0] + plain[1]) + (plain[2] + plain[3]));
        for (SimdLevel level : simd_levels()) {
            const std::uint64_t bits = matching::less_than_bits_for(level)(values.data(), bound, len);
            for (int u = 0; u < len; ++u) CHECK(((bits >> u) & 1) == static_cast<std::uint64_t>(values[u] < bound));
            if (len < 64) CHECK((bits >> len) == 0);
            CHECK(matching::squared_distance_for(level)(a.data(), b.data(), d) == reference);
        }
    }
}

// Ordering the points checks the control (Ctrl-C reaches it there): a
// callback that stops the computation stops the constructor.
void test_euclidean_ordering_stops() {
    const int n = 5000, d = 8;
    std::vector<double> X(static_cast<std::size_t>(n) * d);
    std::mt19937_64 gen(14);
    std::normal_distribution<double> normal;
    for (double& x : X) x = normal(gen);
    int calls = 0;
    Control control([&](std::uint64_t, std::uint64_t) {
        ++calls;
        throw std::runtime_error("stop");
    });
    bool stopped = false;
    try {
        const matching::EuclideanDistances e(X.data(), n, d, false, Blas{}, control);
    } catch (const Cancelled&) {
        stopped = true;
    }
    CHECK(stopped && calls == 1);
}

// The complete-graph solve on points (reordered by locality inside) and on
// their distance matrix: the same optimum, duals that certify it in input ids.
void check_reordered_solves(const std::vector<double>& X, const std::vector<double>& M, int n, int d,
                            const Blas& gemm) {
    for (bool ghost : {false, true}) {
        const int m = ghost ? n - 1 : n;
        const matching::EuclideanDistances points(X.data(), m, d, false, gemm, testing::quiet_control());
        const matching::DenseDistances<double> matrix(M.data(), m, n, 1);
        matching::CompleteOptions opt;
        opt.ghost = ghost;
        opt.n_threads = 2;
        Control control;
        const auto got = matching::complete_min_weight_perfect_matching(points, opt, control, nullptr);
        const auto want = matching::complete_min_weight_perfect_matching(matrix, opt, control, nullptr);
        // The providers' largest distances differ (a bound, the maximum): the
        // weights' scales differ, the real optima agree far below the data's scale.
        CHECK(got.blossom.perfect && std::abs(got.cost - want.cost) <= 1e-9 * want.cost);
        double cost = 0;
        for (int i = 0; i < m; ++i) {
            const std::int32_t j = got.blossom.mate[i];
            CHECK(j >= 0 && j < m + ghost && (j == m || got.blossom.mate[j] == i));
            if (j > i && j < m) cost += M[static_cast<std::size_t>(i) * n + j];
        }
        CHECK(cost == got.cost);
        if (ghost)
            CHECK(got.blossom.mate[m] >= 0 && got.blossom.mate[m] < m && got.blossom.mate[got.blossom.mate[m]] == m);
        // The duals certify the matching in input ids.
        CHECK(testing::complete_certificate_holds(matrix, ghost, got, control));
    }
}

// A provider seen through a renumbering answers every question as the inner
// one does for the same pairs (bit for bit), for point and matrix providers,
// the ball order and a random one; and the complete matching solved in the
// ball order costs the same as on the distance matrix in input order, with
// the result in input ids.
void test_reordered_distances() {
    std::mt19937_64 gen(29);
    std::normal_distribution<double> normal;
    const int n = 800, d = 12, store = 10;
    std::vector<double> X(static_cast<std::size_t>(n) * d);
    for (double& x : X) x = normal(gen);
    for (int i = 0; i < 25; ++i) std::copy_n(X.begin() + 7 * i * d, d, X.begin() + (7 * i + 3) * d);  // duplicates
    Blas gemm;
    gemm.sgemm = reference_sgemm;
    const matching::EuclideanDistances e(X.data(), n, d, false, gemm, testing::quiet_control());
    std::vector<double> M(static_cast<std::size_t>(n) * n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) M[static_cast<std::size_t>(i) * n + j] = e(i, j);
    const matching::DenseDistances<double> dense(M.data(), n, n, 1);
    std::vector<std::int32_t> shuffled(n);
    for (int i = 0; i < n; ++i) shuffled[i] = i;
    std::shuffle(shuffled.begin(), shuffled.end(), gen);
    CHECK(e.locality_order().size() == static_cast<std::size_t>(n));
    CHECK(dense.locality_order().empty());
    const matching::Distances* providers[] = {&e, &dense};
    for (const matching::Distances* inner : providers)
        for (const auto& order : {e.locality_order(), shuffled}) {
            Control control;
            const matching::ReorderedDistances r(*inner, order, control);
            for (int trial = 0; trial < 200; ++trial) {
                const int i = static_cast<int>(gen() % n), j = trial % 7 == 0 ? i : static_cast<int>(gen() % n);
                const double got = r(i, j), want = (*inner)(order[i], order[j]);
                CHECK(std::memcmp(&got, &want, sizeof(double)) == 0);
                std::int32_t js[3] = {j, i, static_cast<std::int32_t>((j + 1) % n)};
                double out[3];
                r.distances(i, js, 3, out);
                for (int t = 0; t < 3; ++t) CHECK(out[t] == r(i, js[t]));
            }
            std::vector<std::int32_t> cand(static_cast<std::size_t>(n) * store), inner_cand(cand.size());
            std::vector<double> bound(n), inner_bound(n);
            r.nearest(store, cand.data(), bound.data(), 2, control);
            inner->nearest(store, inner_cand.data(), inner_bound.data(), 2, control);
            for (int i = 0; i < n; ++i) {
                std::vector<std::int32_t> got(store), want(store);
                for (int t = 0; t < store; ++t) {
                    got[t] = order[cand[static_cast<std::size_t>(i) * store + t]];
                    want[t] = inner_cand[static_cast<std::size_t>(order[i]) * store + t];
                }
                std::sort(got.begin(), got.end());
                std::sort(want.begin(), want.end());
                CHECK(got == want);
                CHECK(bound[i] == inner_bound[order[i]]);
            }
            std::vector<double> a(n);
            for (double& x : a) x = 1.6 * (0.5 + 0.5 * normal(gen));
            std::vector<double> inner_a(n);
            for (int i = 0; i < n; ++i) inner_a[order[i]] = a[i];
            // Each pair as (smaller, larger) input id, sorted.
            auto visited = [&](auto&& run, bool renumbered) {
                std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
                std::mutex m;
                run([&](std::int32_t i, std::int32_t j) {
                    const std::lock_guard<std::mutex> lock(m);
                    if (renumbered) {
                        i = order[i];
                        j = order[j];
                    }
                    pairs.emplace_back(std::min(i, j), std::max(i, j));
                });
                std::sort(pairs.begin(), pairs.end());
                return pairs;
            };
            std::atomic<int> misordered{0};  // pairs not as the interface promises
            auto pairs = visited(
                [&](auto v) {
                    r.pairs_below(a.data(), nullptr, 2, control, [&](std::int32_t i, std::int32_t j) {
                        if (!(i < j)) ++misordered;
                        v(i, j);
                    });
                },
                true);
            CHECK(misordered.load() == 0 && !pairs.empty());
            CHECK(pairs == visited([&](auto v) { inner->pairs_below(inner_a.data(), nullptr, 2, control, v); }, false));
            std::vector<std::int32_t> rows, inner_rows;
            for (int i = 0; i < n; i += 3) {
                rows.push_back(i);
                inner_rows.push_back(order[i]);
            }
            std::sort(inner_rows.begin(), inner_rows.end());
            pairs = visited(
                [&](auto v) {
                    r.pairs_below_rows(a.data(), nullptr, nullptr, rows, 2, control,
                                       [&](std::int32_t i, std::int32_t j) {
                                           if (!(i % 3 == 0 && (j % 3 != 0 || i < j))) ++misordered;
                                           v(i, j);
                                       });
                },
                true);
            CHECK(misordered.load() == 0 && !pairs.empty());
            CHECK(pairs == visited(
                               [&](auto v) {
                                   inner->pairs_below_rows(inner_a.data(), nullptr, nullptr, inner_rows, 2, control, v);
                               },
                               false));
        }
    check_reordered_solves(X, M, n, d, gemm);
}

}  // namespace

// Resuming the solver with edges added in batches (blossoms, duals and
// matching kept; the new edges that violate the duals repaired): after each
// resume the result is an exact LP optimum of the graph so far, with the cost
// of a fresh solve of it. Light odd cycles and clusters of clusters make
// nested blossoms; few distinct weights make ties; later batches are lighter,
// so that many of their edges violate the duals.
template <class Int>
void resume_batches(std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    matching::BlossomStats seen;
    for (int trial = 0; trial < 300; ++trial) {
        const int n = 2 * (1 + trial % 13);
        const int groups = 1 + static_cast<int>(gen() % 4);
        std::vector<std::int32_t> group(n);
        for (int v = 0; v < n; ++v) group[v] = static_cast<std::int32_t>(gen() % groups);
        const Int spread = static_cast<Int>(trial % 3 == 0 ? 3 : 40);
        // Pairs in a random order; the pairs (2i, 2i + 1) come first, so every batch has a perfect matching.
        std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
        for (int u = 0; u < n; ++u)
            for (int v = u + 1; v < n; ++v)
                if (gen() % 3 != 0 || (u % 2 == 0 && v == u + 1)) pairs.emplace_back(u, v);
        std::shuffle(pairs.begin(), pairs.end(), gen);
        std::stable_partition(pairs.begin(), pairs.end(),
                              [](const auto& p) { return p.first % 2 == 0 && p.second == p.first + 1; });
        const int batches = 2 + static_cast<int>(gen() % 4);
        std::vector<std::size_t> ends;
        for (int b = 1; b <= batches; ++b) ends.push_back(std::max<std::size_t>(n / 2, pairs.size() * b / batches));
        std::vector<std::int32_t> eu, ev;
        std::vector<Int> ew;
        auto add_batch = [&](std::size_t lo, std::size_t hi, int batch) {
            for (std::size_t t = lo; t < hi; ++t) {
                const auto [u, v] = pairs[t];
                const Int base = group[u] == group[v] ? Int{0} : Int{60};
                eu.push_back(u);
                ev.push_back(v);
                ew.push_back(base + static_cast<Int>(gen() % static_cast<std::uint64_t>(spread)) +
                             static_cast<Int>(20 * (batches - batch)));
                if (gen() % 8 == 0) {  // a parallel edge, sometimes lighter
                    eu.push_back(v);
                    ev.push_back(u);
                    ew.push_back(ew.back() - (ew.back() > 0 ? Int{1} : Int{0}));
                }
            }
        };
        Control control;
        add_batch(0, ends[0], 0);
        std::unique_ptr<matching::detail::Solver<Int>> solver =
            std::make_unique<matching::detail::Solver<Int>>(n, ew.size(), eu.data(), ev.data(), ew.data(), control);
        auto r = solver->run(nullptr);
        CHECK(r.perfect);
        for (int b = 1; b < batches; ++b) {
            add_batch(ends[b - 1], ends[b], b);  // the arrays may move: add_edges takes them again
            solver->add_edges(ew.size(), eu.data(), ev.data(), ew.data());
            r = solver->resume();
            CHECK(r.perfect);
            if (!r.perfect) break;
            const auto rc = matching::reduced_costs(r, ew.size(), eu.data(), ev.data(), ew.data());
            CHECK(!throws_logic([&] { matching::certify(r, rc, ew.size(), eu.data(), ev.data()); }));
            const auto fresh = matching::solve_perfect<Int>(n, ew.size(), eu.data(), ev.data(), ew.data(), control);
            // Cost: the lightest edge between mates (parallel edges), the same for both.
            auto cost = [&](const matching::BasicBlossomResult<Int>& x) {
                std::vector<Int> best(n, std::numeric_limits<Int>::max());
                for (std::size_t e = 0; e < ew.size(); ++e)
                    if (x.mate[eu[e]] == ev[e]) best[eu[e]] = best[ev[e]] = std::min(best[eu[e]], ew[e]);
                Int total = 0;
                for (int v = 0; v < n; ++v)
                    if (x.mate[v] > v) total += best[v];
                return total;
            };
            CHECK(cost(r) == cost(fresh));
            seen.freed += r.stats.freed;
            seen.opened += r.stats.opened;
            seen.shrinks += r.stats.shrinks;
            seen.expands += r.stats.expands;
        }
    }
    CHECK(seen.freed > 0);
    CHECK(seen.opened > 0);
    CHECK(seen.shrinks > 0);
    CHECK(seen.expands > 0);
}

void test_resume() {
    resume_batches<std::int64_t>(31);
    resume_batches<i128>(32);
}

int main(int argc, char** argv) {
    const testing::Test tests[] = {
        {"sparse", test_sparse},
        {"certify_rejects", test_certify_rejects},
        {"whole_float64_range", test_whole_float64_range},
        {"forest", test_forest},
        {"blossom_steps", test_blossom_steps},
        {"resume", test_resume},
        {"pricing", test_pricing},
        {"crossmatch_counts", test_crossmatch_counts},
        {"int128_words", test_int128_words},
        {"euclidean_nearest", test_euclidean_nearest},
        {"flag_below", test_flag_below},
        {"below_scan", test_below_scan},
        {"screen_prefilter", test_screen_prefilter},
        {"screen_prefilter_levels", test_screen_prefilter_levels},
        {"kept_pairs", test_kept_pairs},
        {"euclidean_pairs_below", test_euclidean_pairs_below},
        {"euclidean_clustered_skips", test_euclidean_clustered_skips},
        {"euclidean_screen_block", test_euclidean_screen_block},
        {"pricing_prefix_screen", test_pricing_prefix_screen},
        {"pricing_inside_screen", test_pricing_inside_screen},
        {"pricing_own_columns", test_pricing_own_columns},
        {"pricing_incremental", test_pricing_incremental},
        {"euclidean_ordering_stops", test_euclidean_ordering_stops},
        {"prefix_bits_and_distance", test_prefix_bits_and_distance},
        {"batch_distances", test_batch_distances},
        {"pricing_inside_blossoms", test_pricing_inside_blossoms},
        {"reordered_distances", test_reordered_distances},
    };
    return testing::run_tests(tests, argc, argv);
}
