// Tests of the distance-sum kernel on its own: every sum against a brute-force
// matrix of pair values, for each pair function, several tile and block
// sizes, splits on and off tile edges, thread counts, duplicate rows (exact
// zeros), cancellation and bad sizes.
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "distance_sums.hpp"

namespace {

using namespace pairmetrics;
namespace ds = pairmetrics::distance_sums;

struct Problem {
    std::ptrdiff_t n, d;
    std::vector<double> z;
    std::vector<std::uint8_t> bits;  // packed indicator rows
    std::size_t count, row_bytes;
};

Problem make_problem(std::ptrdiff_t n, std::ptrdiff_t d, std::size_t count, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    Problem p{n,  d,     std::vector<double>(static_cast<std::size_t>(n * d)),
              {}, count, static_cast<std::size_t>((n + 7) / 8)};
    for (double& v : p.z) v = normal(rng);
    if (n > 4)
        for (std::ptrdiff_t k = 0; k < d; ++k)
            p.z[static_cast<std::size_t>(3 * d + k)] = p.z[static_cast<std::size_t>(k)];
    p.bits.assign(count * p.row_bytes, 0);
    for (std::size_t r = 0; r < count; ++r)
        for (std::ptrdiff_t j = 0; j < n; ++j)
            if (rng() & 1) p.bits[r * p.row_bytes + static_cast<std::size_t>(j / 8)] |= std::uint8_t(1u << (j % 8));
    return p;
}

double brute_value(const Problem& p, const ds::PairFunction& f, std::ptrdiff_t i, std::ptrdiff_t j) {
    double sq = 0.0;
    for (std::ptrdiff_t k = 0; k < p.d; ++k) {
        const double v = p.z[static_cast<std::size_t>(i * p.d + k)] - p.z[static_cast<std::size_t>(j * p.d + k)];
        sq += v * v;
    }
    return ds::pair_value(f, sq);
}

bool bit(const Problem& p, std::size_t r, std::ptrdiff_t j) {
    return (p.bits[r * p.row_bytes + static_cast<std::size_t>(j / 8)] >> (j % 8)) & 1;
}

void check_against_brute(const Problem& p, const ds::PairFunction& f, std::ptrdiff_t split, const ds::Options& o) {
    Control control;
    const ds::Indicators ind{p.bits.data(), p.count, p.row_bytes};
    const ds::Sums s = ds::distance_sums(p.z.data(), p.n, p.d, split, f, ind, o, Blas{}, control);
    std::vector<double> q(p.count, 0.0);
    for (std::ptrdiff_t i = 0; i < p.n; ++i) {
        double first = 0.0, second = 0.0;
        for (std::ptrdiff_t j = 0; j < p.n; ++j) {
            const double v = brute_value(p, f, i, j);
            (j < split ? first : second) += v;
            for (std::size_t r = 0; r < p.count; ++r)
                if (bit(p, r, i) && bit(p, r, j)) q[r] += v;
        }
        CHECK_CLOSE(s.to_first[static_cast<std::size_t>(i)], first, 1e-12);
        CHECK_CLOSE(s.to_second[static_cast<std::size_t>(i)], second, 1e-12);
    }
    for (std::size_t r = 0; r < p.count; ++r) CHECK_CLOSE(s.quadratic[r], q[r], 1e-12);
}

void test_sums() {
    const Problem p = make_problem(29, 3, 5, 1);
    ds::PairFunction functions[4];
    functions[1].root = false;
    functions[2].kernel = ds::Kernel::rbf;
    functions[2].gamma = 0.3;
    functions[3].kernel = ds::Kernel::laplacian;
    functions[3].scale = 0.5;
    for (const ds::PairFunction& f : functions)
        for (std::ptrdiff_t tile : {1, 4, 7, 64})
            for (std::ptrdiff_t split : {0, 8, 13, 29})
                for (int threads : {1, 3}) {
                    ds::Options o;
                    o.n_threads = threads;
                    o.tile = tile;
                    o.resample_block = 2;
                    check_against_brute(p, f, split, o);
                }
}

void test_threads_give_the_same_bits() {
    const Problem p = make_problem(300, 5, 7, 4);
    const ds::Indicators ind{p.bits.data(), p.count, p.row_bytes};
    auto sums = [&](int threads) {
        Control control;
        ds::Options o;
        o.n_threads = threads;
        o.tile = 16;
        return ds::distance_sums(p.z.data(), p.n, p.d, 120, ds::PairFunction{}, ind, o, Blas{}, control);
    };
    const ds::Sums one = sums(1), four = sums(4);
    CHECK(one.to_first == four.to_first);
    CHECK(one.to_second == four.to_second);
    CHECK(one.quadratic == four.quadratic);
}

void test_exact_zeros_and_cancellation() {
    // Far from the origin, near points: the expansion cancels, the rule recomputes (and duplicates give 0).
    Problem p = make_problem(12, 4, 0, 2);
    for (std::size_t k = 0; k < p.z.size(); ++k) p.z[k] = 1e6 + 1e-3 * p.z[k];
    Control control;
    const ds::Sums s = ds::distance_sums(p.z.data(), p.n, p.d, 5, ds::PairFunction{}, ds::Indicators{}, ds::Options{},
                                         Blas{}, control);
    for (std::ptrdiff_t i = 0; i < p.n; ++i) {
        double total = 0.0;
        for (std::ptrdiff_t j = 0; j < p.n; ++j) total += brute_value(p, ds::PairFunction{}, i, j);
        CHECK_CLOSE(s.to_first[static_cast<std::size_t>(i)] + s.to_second[static_cast<std::size_t>(i)], total, 1e-9);
    }
}

void test_bad_sizes() {
    const Problem p = make_problem(6, 2, 1, 3);
    Control control;
    auto run = [&](std::ptrdiff_t split, std::size_t row_bytes) {
        try {
            ds::distance_sums(p.z.data(), p.n, p.d, split, ds::PairFunction{},
                              ds::Indicators{p.bits.data(), 1, row_bytes}, ds::Options{}, Blas{}, control);
        } catch (const std::invalid_argument&) {
            return true;
        }
        return false;
    };
    CHECK(run(7, 1));
    CHECK(run(-1, 1));
    CHECK(run(3, 0));
    CHECK(!run(3, 1));
}

}  // namespace

int main(int argc, char** argv) {
    const testing::Test tests[] = {
        {"distance_sums", test_sums},
        {"distance_sums_cancellation", test_exact_zeros_and_cancellation},
        {"distance_sums_threads", test_threads_give_the_same_bits},
        {"distance_sums_bad_sizes", test_bad_sizes},
    };
    return testing::run_tests(tests, argc, argv);
}
