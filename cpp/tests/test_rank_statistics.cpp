// Tests of the rank statistics kernels (rank_correlation, mann_whitney_exact)
// against brute-force transcriptions of their definitions: every pair visited,
// every split of the pooled values enumerated.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "check.hpp"
#include "control.hpp"
#include "mann_whitney_exact.hpp"
#include "rank_correlation.hpp"

namespace {

using namespace pairmetrics;

int sign(double v) {
    return (v > 0) - (v < 0);
}

std::vector<double> draw(std::mt19937_64& rng, std::size_t n, int levels) {
    std::uniform_int_distribution<int> level(0, levels - 1);
    std::vector<double> v(n);
    for (double& x : v) x = level(rng);
    return v;
}

void check_kendall(const std::vector<double>& x, const std::vector<double>& y) {
    const std::size_t n = x.size();
    std::uint64_t dis = 0, tx = 0, ty = 0, both = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const int sx = sign(x[i] - x[j]), sy = sign(y[i] - y[j]);
            dis += sx * sy < 0;
            tx += sx == 0;
            ty += sy == 0;
            both += sx == 0 && sy == 0;
        }
    Control control;
    for (int threads : {1, 2}) {
        const KendallCounts c =
            kendall_counts(KeyColumn::of(x.data(), 1), KeyColumn::of(y.data(), 1), n, threads, control);
        CHECK_EQ(c.discordant, dis);
        CHECK_EQ(c.x.pairs, tx);
        CHECK_EQ(c.y.pairs, ty);
        CHECK_EQ(c.joint_pairs, both);
    }
}

void test_kendall() {
    std::mt19937_64 rng(1);
    for (int levels : {2, 5, 50}) check_kendall(draw(rng, 300, levels), draw(rng, 300, levels));
    check_kendall(draw(rng, 5000, 1 << 20), draw(rng, 5000, 1 << 20));  // the sort path (> 4096 values)
    check_kendall(draw(rng, 5000, 3), draw(rng, 5000, 1 << 20));
    check_kendall({1.0}, {2.0});
}

void test_spearman_and_ranks() {
    std::mt19937_64 rng(2);
    const std::vector<double> x = draw(rng, 200, 7), y = draw(rng, 200, 9);
    std::vector<std::uint64_t> doubled(x.size());
    Control control;
    doubled_average_ranks(KeyColumn::of(x.data(), 1), x.size(), doubled.data(), control);
    for (std::size_t i = 0; i < x.size(); ++i) {
        std::uint64_t below = 0, equal = 0;
        for (double v : x) below += v < x[i], equal += v == x[i];
        CHECK_EQ(doubled[i], 2 * below + equal + 1);
    }
    const SpearmanSums s = spearman_sums(KeyColumn::of(x.data(), 1), KeyColumn::of(y.data(), 1), x.size(), 2, control);
    std::vector<std::uint64_t> dy(y.size());
    doubled_average_ranks(KeyColumn::of(y.data(), 1), y.size(), dy.data(), control);
    i128 cross = 0;
    for (std::size_t i = 0; i < x.size(); ++i) cross += i128{doubled[i]} * dy[i];
    CHECK(s.cross == cross);
}

void test_weighted_tau() {
    std::mt19937_64 rng(3);
    const std::vector<double> x = draw(rng, 60, 6), y = draw(rng, 60, 6);
    std::vector<double> w(x.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / (1.0 + static_cast<double>(i));
    Control control;
    for (bool additive : {true, false}) {
        double num = 0, tot = 0, tx = 0, ty = 0;
        for (std::size_t i = 0; i < x.size(); ++i)
            for (std::size_t j = i + 1; j < x.size(); ++j) {
                const double pw = additive ? w[i] + w[j] : w[i] * w[j];
                const int sx = sign(x[i] - x[j]), sy = sign(y[i] - y[j]);
                tot += pw;
                num += pw * sx * sy;
                tx += sx == 0 ? pw : 0;
                ty += sy == 0 ? pw : 0;
            }
        const double tau = weighted_tau(KeyColumn::of(x.data(), 1), KeyColumn::of(y.data(), 1), x.size(), w.data(),
                                        nullptr, additive, control);
        CHECK_CLOSE(tau, num / std::sqrt(tot - tx) / std::sqrt(tot - ty), 1e-12);
    }
}

// Every split of the pooled values (pooled[i] for i in 0..N) into m first-sample values.
template <class Visit>
void for_each_split(std::size_t total, std::size_t m, Visit&& visit) {
    std::vector<bool> first(total, false);
    std::fill(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(m), true);
    std::sort(first.begin(), first.end());
    do visit(first);
    while (std::next_permutation(first.begin(), first.end()));
}

void test_mann_whitney() {
    Control control;
    for (auto [m, n] : {std::pair{3, 4}, std::pair{5, 5}, std::pair{1, 6}, std::pair{6, 2}}) {
        std::vector<double> counts(m * n + 1, 0.0);
        double splits = 0;
        for_each_split(m + n, m, [&](const std::vector<bool>& first) {
            std::uint64_t u = 0, seen_second = 0;
            for (bool f : first) f ? u += seen_second : ++seen_second;
            counts[u] += 1;
            splits += 1;
        });
        const std::vector<double> pmf = mann_whitney_null_pmf(m, n, m * n, control);
        for (std::size_t u = 0; u < counts.size(); ++u) CHECK_CLOSE(pmf[u], counts[u] / splits, 1e-12);
    }
    // Conditional on ties: pooled values 0 0 1 1 1 2 3 3, first sample of 3.
    const std::vector<double> pooled = {0, 0, 1, 1, 1, 2, 3, 3};
    const std::vector<std::uint64_t> groups = {2, 3, 1, 2};
    for (std::uint64_t limit = 0; limit <= 30; limit += 3) {
        double hits = 0, splits = 0;
        for_each_split(pooled.size(), 3, [&](const std::vector<bool>& first) {
            std::uint64_t doubled_u = 0;
            for (std::size_t i = 0; i < pooled.size(); ++i)
                for (std::size_t j = 0; j < pooled.size(); ++j)
                    if (first[i] && !first[j]) doubled_u += pooled[i] > pooled[j] ? 2 : pooled[i] == pooled[j];
            hits += doubled_u <= limit;
            splits += 1;
        });
        CHECK_CLOSE(mann_whitney_conditional_cdf(groups, 3, limit, control), hits / splits, 1e-12);
    }
    // U and the tie term from one pass.
    const std::vector<double> x = {1, 2, 2, 5}, y = {2, 3, 0};
    std::vector<std::uint64_t> sizes;
    const MannWhitneyRanks r =
        mann_whitney_ranks(KeyColumn::of(x.data(), 1), 4, KeyColumn::of(y.data(), 1), 3, 1, control, &sizes);
    CHECK_EQ(r.doubled_u, std::uint64_t{14});  // U = 1 (for 1) + 2 x 1.5 (for each 2) + 3 (for 5)
    CHECK(r.tie_cube_excess == 24);
    CHECK_EQ(sizes.size(), std::size_t{5});
}

}  // namespace

int main(int argc, char** argv) {
    const testing::Test tests[] = {
        {"kendall", test_kendall},
        {"spearman_and_ranks", test_spearman_and_ranks},
        {"weighted_tau", test_weighted_tau},
        {"mann_whitney", test_mann_whitney},
    };
    return testing::run_tests(tests, argc, argv);
}
