// Tests of the C++ kernels on their own, without Python: each kernel against
// a brute-force transcription of its definition, on small random inputs with
// ties, strided and negative-stride views, every element type it is
// instantiated for, several thread counts, and the preconditions its header
// states (cancellation, exceptions from workers, impossible inputs).
//
// Build with -DPAIRMETRICS_BUILD_TESTS=ON and run `ctest` (or the
// pairmetrics_kernel_tests executable; an argument filters tests by name).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "blas_threads.hpp"
#include "check.hpp"
#include "matching_checks.hpp"
#include "control.hpp"
#include "matching.hpp"
#include "measures.hpp"
#include "paired.hpp"
#include "parallel.hpp"
#include "two_vs_two.hpp"

namespace {

using namespace pairmetrics;

template <class E, class F>
bool throws(F&& f) {
    try {
        f();
    } catch (const E&) {
        return true;
    } catch (...) {
        return false;
    }
    return false;
}

// --------------------------------------------------------------------------- Control and parallel_for

struct UserError : std::runtime_error {
    UserError() : std::runtime_error("user error") {}
};

void test_control() {
    // A callback that throws stops the computation; the caller gets the original back.
    Control control([](std::uint64_t, std::uint64_t) { throw UserError(); });
    CHECK(throws<Cancelled>([&] { control.check_now(); }));
    CHECK(control.cancelled());
    CHECK(throws<Cancelled>([&] { control.advance(1); }));  // every later check stops too
    CHECK(throws<UserError>([&] { control.rethrow_if_failed(); }));

    // cancel() from inside a kernel: the next check throws, nothing to rethrow.
    Control plain;
    plain.advance(5);
    plain.cancel();
    CHECK(throws<Cancelled>([&] { plain.check(); }));
    CHECK(!throws<std::exception>([&] { plain.rethrow_if_failed(); }));

    // The callback sees the progress and runs on the owning thread only.
    std::uint64_t seen_done = 0, seen_total = 0;
    int calls = 0;
    Control counting([&](std::uint64_t done, std::uint64_t total) {
        seen_done = done;
        seen_total = total;
        ++calls;
    });
    counting.set_total(10);
    counting.advance(3);
    counting.finish();
    CHECK(calls >= 1);
    CHECK_EQ(seen_done, 10u);
    CHECK_EQ(seen_total, 10u);
    const int before = calls;
    std::thread other([&] { counting.check_now(); });
    other.join();
    CHECK_EQ(calls, before);
}

void test_parallel_for() {
    Control quiet;
    for (int threads : {1, 2, 4, 64}) {
        std::vector<std::atomic<int>> hits(1000);
        parallel_for(hits.size(), threads, [&](std::size_t i) { hits[i]++; }, quiet);
        bool once = std::all_of(hits.begin(), hits.end(), [](const std::atomic<int>& h) { return h == 1; });
        CHECK(once);
    }
    // The first exception of any task reaches the caller unchanged.
    for (int threads : {1, 3}) {
        Control control;
        CHECK(throws<UserError>([&] {
            parallel_for(
                100, threads,
                [&](std::size_t i) {
                    if (i == 37) throw UserError();
                },
                control);
        }));
    }
    // Zero tasks and zero or negative thread counts are harmless.
    int calls = 0;
    parallel_for(0, 4, [&](std::size_t) { ++calls; }, quiet);
    parallel_for(3, 0, [&](std::size_t) { ++calls; }, quiet);
    parallel_for(3, -2, [&](std::size_t) { ++calls; }, quiet);
    CHECK_EQ(calls, 6);
}

// --------------------------------------------------------------------------- paired evaluation

PairedCounts brute_paired(const std::vector<double>& s, const std::vector<double>& y, double min_dist,
                          std::vector<std::uint64_t>* rankable = nullptr, std::vector<std::uint64_t>* tied = nullptr,
                          std::vector<std::uint64_t>* incorrect = nullptr) {
    PairedCounts c;
    const std::size_t n = s.size();
    if (rankable) rankable->assign(n, 0), tied->assign(n, 0), incorrect->assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const double hi = std::max(y[i], y[j]), lo = std::min(y[i], y[j]);
            if (!(hi - lo >= min_dist)) continue;
            ++c.rankable;
            int kind;  // 0 correct, 1 tied, 2 incorrect
            if (s[i] == s[j])
                kind = 1;
            else
                kind = ((s[i] < s[j]) == (y[i] < y[j])) ? 0 : 2;
            c.correct += kind == 0;
            c.tied += kind == 1;
            c.incorrect += kind == 2;
            if (rankable) {
                for (std::size_t k : {i, j}) {
                    (*rankable)[k]++;
                    (*tied)[k] += kind == 1;
                    (*incorrect)[k] += kind == 2;
                }
            }
        }
    return c;
}

template <class Score>
void paired_case(std::mt19937_64& gen, std::size_t n, int score_levels, int label_levels, double min_dist) {
    std::uniform_int_distribution<int> score_level(0, score_levels - 1), label_level(0, label_levels - 1);
    // Stored reversed with a gap of 2, read through a negative stride.
    std::unique_ptr<Score[]> storage(new Score[2 * n + 1]());  // not vector<bool>
    std::vector<double> label_storage(3 * n + 1);
    std::vector<double> s(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        Score v = static_cast<Score>(score_level(gen));
        if constexpr (std::is_same_v<Score, bool>) v = score_level(gen) % 2 == 1;
        storage[2 * (n - 1 - i)] = v;
        s[i] = static_cast<double>(v);
        y[i] = label_level(gen) * 0.25;
        label_storage[3 * i] = y[i];
    }
    const Score* first = n ? &storage[2 * (n - 1)] : storage.get();
    std::vector<std::uint64_t> br, bt, bi;
    const PairedCounts want = brute_paired(s, y, min_dist, &br, &bt, &bi);
    for (std::size_t few : {std::size_t{0}, kDefaultFewLabels})
        for (int threads : {1, 3}) {
            std::vector<std::uint64_t> r(n), t(n), w(n);
            PairedPerSample per{r.data(), t.data(), w.data()};
            Control control;
            const PairedCounts got = paired_counts<Score, double>(first, -2, label_storage.data(), 3, n, min_dist,
                                                                  control, &per, threads, few);
            CHECK_EQ(got.rankable, want.rankable);
            CHECK_EQ(got.correct, want.correct);
            CHECK_EQ(got.tied, want.tied);
            CHECK_EQ(got.incorrect, want.incorrect);
            CHECK(r == br);
            CHECK(t == bt);
            CHECK(w == bi);
        }
    // The moment sums: every path (classes, Fenwick, merge) and thread count.
    PairedMoments want_moments;
    if (n) {
        const double lo = *std::min_element(y.begin(), y.end()), hi = *std::max_element(y.begin(), y.end());
        for (std::size_t i = 0; i < n; ++i)
            (y[i] == lo   ? want_moments.lowest
             : y[i] == hi ? want_moments.highest
                          : want_moments.others)
                .add(br[i], 2 * (br[i] - bi[i]) - bt[i]);
    }
    for (auto [few_labels, few_classes] : {std::pair<std::size_t, std::size_t>{0, 0},
                                           {kDefaultFewLabels, 0},
                                           {kDefaultFewLabels, kDefaultFewClasses},
                                           {kDefaultFewLabels, 2}})
        for (int threads : {1, 3}) {
            PairedMoments got_moments;
            Control control;
            const PairedCounts got =
                paired_moments<Score, double>(first, -2, label_storage.data(), 3, n, min_dist, control, got_moments,
                                              threads, few_labels, few_classes);
            CHECK_EQ(got.rankable, want.rankable);
            CHECK_EQ(got.correct, want.correct);
            CHECK_EQ(got.tied, want.tied);
            CHECK_EQ(got.incorrect, want.incorrect);
            for (auto [g, e] : {std::pair{&got_moments.lowest, &want_moments.lowest},
                                {&got_moments.highest, &want_moments.highest},
                                {&got_moments.others, &want_moments.others}}) {
                CHECK_EQ(g->samples, e->samples);
                CHECK(g->r == e->r && g->q == e->q);
                CHECK(g->rr == e->rr && g->qr == e->qr && g->qq == e->qq);
            }
        }
}

void test_paired() {
    std::mt19937_64 gen(1);
    for (std::size_t n : {0, 1, 2, 3, 17, 200}) {
        for (int levels : {1, 2, 7, 1000}) {
            paired_case<double>(gen, n, levels, 5, 0.5);
            paired_case<float>(gen, n, levels, 9, 0.25);
            paired_case<std::int64_t>(gen, n, levels, 3, 0.5);
            paired_case<std::uint8_t>(gen, n, std::min(levels, 255), 5, 1.0);
            paired_case<std::int16_t>(gen, n, levels, 40, 0.75);
            paired_case<std::uint64_t>(gen, n, levels, 5, 0.5);
            paired_case<bool>(gen, n, 2, 4, 0.5);
        }
    }
    // Integer scores beyond 2**53 are compared exactly, not through double.
    const std::int64_t big = std::int64_t{1} << 62;
    const std::int64_t scores[] = {big, big + 1, 0};
    const double labels[] = {2.0, 3.0, 1.0};  // correct order: big < big + 1 and 0 lowest
    Control control;
    PairedCounts c = paired_counts<std::int64_t, double>(scores, 1, labels, 1, 3, 0.5, control);
    CHECK_EQ(c.rankable, 3u);
    CHECK_EQ(c.correct, 3u);
    CHECK_EQ(c.tied, 0u);
    const std::uint64_t ubig[] = {~std::uint64_t{0}, ~std::uint64_t{0} - 1, 5};
    c = paired_counts<std::uint64_t, double>(ubig, 1, labels, 1, 3, 0.5, control);
    CHECK_EQ(c.correct, 2u);  // (0, 2) and (1, 2); (0, 1) is ordered against its labels
    CHECK_EQ(c.tied, 0u);
    CHECK_EQ(c.incorrect, 1u);
    // min_dist is compared with the label difference taken larger minus smaller.
    const double close[] = {0.1, 0.6};
    const double sc[] = {1.0, 0.0};
    c = paired_counts<double, double>(sc, 1, close, 1, 2, 0.5, control);
    CHECK_EQ(c.rankable, brute_paired({1.0, 0.0}, {0.1, 0.6}, 0.5).rankable);
    // Integer labels beyond 2**53 are compared exactly, in their own type.
    const double s3[] = {1.0, 2.0, 3.0};
    const std::int64_t wide[] = {big, big + 1, 0};
    c = paired_counts<double, std::int64_t>(s3, 1, wide, 1, 3, 0.5, control);
    CHECK_EQ(c.rankable, 3u);
    CHECK_EQ(c.correct, 1u);
    const std::uint64_t top[] = {~std::uint64_t{0}, 0, ~std::uint64_t{0} - 1};
    c = paired_counts<double, std::uint64_t>(s3, 1, top, 1, 3, 18446744073709549568.0, control);  // 2**64 - 2048
    CHECK_EQ(c.rankable, 2u);  // the differences 2**64 - 1 and 2**64 - 2; not 1
    c = paired_counts<double, std::uint64_t>(s3, 1, top, 1, 3, 18446744073709551616.0, control);  // 2**64
    CHECK_EQ(c.rankable, 0u);
    // A cancelled control stops the kernel.
    control.cancel();
    bool stopped = false;
    try {
        paired_counts<double, double>(s3, 1, s3, 1, 3, 0.5, control);
    } catch (const Cancelled&) {
        stopped = true;
    }
    CHECK(stopped);
}

// --------------------------------------------------------------------------- measures

void test_measures() {
    using namespace pairmetrics::measures;
    std::mt19937_64 gen(2);
    std::normal_distribution<double> normal;
    const std::size_t n = 37, t = 3;
    // a: int32 column-major with a negative row stride; b: double row-major.
    std::vector<std::int32_t> a_store(n * t);
    std::vector<double> b(n * t);
    std::vector<double> a_val(n * t);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < t; ++j) {
            const std::int32_t v = static_cast<std::int32_t>(std::lround(normal(gen) * 3));
            a_store[j * n + (n - 1 - i)] = v;
            a_val[i * t + j] = v;
            b[i * t + j] = (i % 5 == 0) ? v : normal(gen) * 3;
        }
    View<std::int32_t> a{&a_store[n - 1], -1, static_cast<std::ptrdiff_t>(n)};
    View<double> bv{b.data(), static_cast<std::ptrdiff_t>(t), 1};
    Control control;
    for (bool per_column : {false, true}) {
        std::vector<ErrorStats> out(per_column ? t : 1);
        error_stats<std::int32_t, double>(a, bv, n, t, per_column, out.data(), control);
        for (std::size_t c = 0; c < out.size(); ++c) {
            double abs_sum = 0, sq = 0, mx = 0;
            std::uint64_t wrong = 0;
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < t; ++j) {
                    if (per_column && j != c) continue;
                    const double d = a_val[i * t + j] - b[i * t + j];
                    abs_sum += std::fabs(d), sq += d * d, mx = std::max(mx, std::fabs(d)), wrong += d != 0;
                }
            CHECK_CLOSE(out[c].abs_sum, abs_sum, 1e-12);
            CHECK_CLOSE(out[c].sq_sum, sq, 1e-12);
            CHECK_EQ(out[c].max_abs, mx);
            CHECK_EQ(out[c].n_wrong, wrong);
        }
    }
    // Unsigned inputs cannot wrap: 0 - 255 is -255.
    const std::uint8_t ua[] = {0, 255};
    const float fb[] = {255.0f, 0.0f};
    ErrorStats one;
    error_stats<std::uint8_t, float>({ua, 1, 1}, {fb, 1, 1}, 2, 1, false, &one, control);
    CHECK_EQ(one.abs_sum, 510.0);
    CHECK_EQ(one.n_wrong, 2u);
    // A zero stride reads one element repeatedly.
    const double c5[] = {5.0};
    const double v[] = {1.0, 2.0, 3.0};
    error_stats<double, double>({c5, 0, 0}, {v, 1, 1}, 3, 1, false, &one, control);
    CHECK_EQ(one.abs_sum, 9.0);

    // Log-likelihood: q = p where y == 1 and 1 - p where y == 0.
    const std::uint8_t yv[] = {1, 0, 1, 0};
    const double pv[] = {0.9, 0.2, 1.0, 1.0};
    LogLikelihoodStats ll;
    log_likelihood<std::uint8_t, double>({yv, 1, 1}, {pv, 1, 1}, 4, 1, false, 0.0, &ll, control);
    CHECK_CLOSE(ll.log_sum, std::log(0.9) + std::log(0.8) + std::log(1.0), 1e-15);
    CHECK_EQ(ll.n_zero, 1u);
    CHECK(!ll.bad_true && !ll.bad_pred);
    log_likelihood<std::uint8_t, double>({yv, 1, 1}, {pv, 1, 1}, 4, 1, false, 1e-3, &ll, control);
    CHECK_EQ(ll.n_zero, 0u);
    CHECK_CLOSE(ll.log_sum, std::log(0.9) + std::log(0.8) + std::log(1 - 1e-3) + std::log(1e-3), 1e-12);
    const double bad_y[] = {2.0};
    const double nan_p[] = {std::nan("")};
    log_likelihood<double, double>({bad_y, 1, 1}, {nan_p, 1, 1}, 1, 1, false, 0.0, &ll, control);
    CHECK(ll.bad_true && ll.bad_pred);

    // Multi-label counts, dense and sparse, against a loop.
    const std::size_t ns = 9, nl = 5;
    std::vector<std::uint8_t> T(ns * nl), P(ns * nl);
    std::bernoulli_distribution coin(0.4);
    for (std::size_t k = 0; k < ns * nl; ++k) T[k] = coin(gen), P[k] = coin(gen);
    std::vector<std::int64_t> lb(nl), lt(nl), lp(nl), sb(ns), st(ns), sp(ns);
    multilabel_dense_counts({T.data(), static_cast<std::ptrdiff_t>(nl), 1},
                            {P.data(), static_cast<std::ptrdiff_t>(nl), 1}, ns, nl, {lb.data(), lt.data(), lp.data()},
                            {sb.data(), st.data(), sp.data()}, control);
    std::vector<std::int32_t> tp{0}, ti, pp{0}, pi;
    for (std::size_t i = 0; i < ns; ++i) {
        std::int64_t both = 0, t1 = 0, p1 = 0;
        for (std::size_t j = 0; j < nl; ++j) {
            both += T[i * nl + j] & P[i * nl + j], t1 += T[i * nl + j], p1 += P[i * nl + j];
            // Unsorted indices: store columns in reverse.
            const std::size_t jr = nl - 1 - j;
            if (T[i * nl + jr]) ti.push_back(static_cast<std::int32_t>(jr));
            if (P[i * nl + jr]) pi.push_back(static_cast<std::int32_t>(jr));
        }
        CHECK_EQ(sb[i], both);
        CHECK_EQ(st[i], t1);
        CHECK_EQ(sp[i], p1);
        tp.push_back(static_cast<std::int32_t>(ti.size()));
        pp.push_back(static_cast<std::int32_t>(pi.size()));
    }
    std::vector<std::int64_t> lb2(nl), lt2(nl), lp2(nl), sb2(ns), st2(ns), sp2(ns);
    multilabel_sparse_counts<std::int32_t>(tp.data(), ti.data(), ti.size(), pp.data(), pi.data(), pi.size(), ns, nl,
                                           {lb2.data(), lt2.data(), lp2.data()}, {sb2.data(), st2.data(), sp2.data()},
                                           control);
    CHECK(lb2 == lb && lt2 == lt && lp2 == lp && sb2 == sb && st2 == st && sp2 == sp);
    // Stated preconditions: duplicates and out-of-range indices are refused, not read.
    std::vector<std::int32_t> dup_ptr{0, 2}, dup_idx{1, 1}, ok_ptr{0, 0}, far_idx{0, 99}, back_ptr{0, 3};
    std::vector<std::int64_t> z1(nl), z2(nl), z3(nl), z4(1), z5(1), z6(1);
    const LabelCounts per_label{z1.data(), z2.data(), z3.data()}, per_sample{z4.data(), z5.data(), z6.data()};
    CHECK(throws<std::invalid_argument>([&] {
        multilabel_sparse_counts<std::int32_t>(dup_ptr.data(), dup_idx.data(), 2, ok_ptr.data(), nullptr, 0, 1, nl,
                                               per_label, per_sample, control);
    }));
    CHECK(throws<std::invalid_argument>([&] {
        multilabel_sparse_counts<std::int32_t>(ok_ptr.data(), nullptr, 0, dup_ptr.data(), far_idx.data(), 2, 1, nl,
                                               per_label, per_sample, control);
    }));
    CHECK(throws<std::invalid_argument>([&] {  // indptr ends beyond nnz
        multilabel_sparse_counts<std::int32_t>(back_ptr.data(), far_idx.data(), 2, ok_ptr.data(), nullptr, 0, 1, nl,
                                               per_label, per_sample, control);
    }));
}

// --------------------------------------------------------------------------- 2 vs 2

double metric_distance(const double* a, const double* b, std::ptrdiff_t d, two_vs_two::Metric metric) {
    using two_vs_two::Metric;
    if (metric == Metric::euclidean || metric == Metric::sqeuclidean) {
        double s = 0;
        for (std::ptrdiff_t k = 0; k < d; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
        return metric == Metric::euclidean ? std::sqrt(s) : s;
    }
    double ma = 0, mb = 0;
    if (metric == Metric::correlation) {
        for (std::ptrdiff_t k = 0; k < d; ++k) ma += a[k], mb += b[k];
        ma /= d, mb /= d;
    }
    double ab = 0, aa = 0, bb = 0;
    for (std::ptrdiff_t k = 0; k < d; ++k) {
        ab += (a[k] - ma) * (b[k] - mb), aa += (a[k] - ma) * (a[k] - ma), bb += (b[k] - mb) * (b[k] - mb);
    }
    return 1.0 - ab / std::sqrt(aa * bb);
}

template <class T>
void two_vs_two_case(std::mt19937_64& gen, std::ptrdiff_t n, std::ptrdiff_t d, two_vs_two::Metric metric,
                     bool skip_same) {
    using namespace pairmetrics::two_vs_two;
    std::normal_distribution<double> normal;
    std::vector<double> y(n * d), p(n * d);
    for (auto& v : y) v = static_cast<double>(static_cast<T>(normal(gen)));
    for (std::ptrdiff_t i = 0; i < n; ++i)
        for (std::ptrdiff_t k = 0; k < d; ++k)
            p[i * d + k] = static_cast<double>(static_cast<T>(y[i * d + k] + 2 * normal(gen)));
    // Duplicated rows: exact ties by construction.
    if (n >= 4) {
        std::copy(&y[0], &y[d], &y[2 * d]);
        std::copy(&p[d], &p[2 * d], &p[3 * d]);
    }
    // T copies; y stored column major (a strided view), p row major.
    std::vector<T> ys(n * d), ps(n * d);
    for (std::ptrdiff_t i = 0; i < n; ++i)
        for (std::ptrdiff_t k = 0; k < d; ++k)
            ys[k * n + i] = static_cast<T>(y[i * d + k]), ps[i * d + k] = static_cast<T>(p[i * d + k]);
    MatrixView<T> yv{ys.data(), n, d, 1, n};
    MatrixView<T> pv{ps.data(), n, d, d, 1};

    std::uint64_t want_passed = 0, want_tied = 0, want_skipped = 0;
    std::vector<std::int64_t> first, second;
    for (std::ptrdiff_t i = 0; i < n; ++i)
        for (std::ptrdiff_t j = i + 1; j < n; ++j) {
            first.push_back(i), second.push_back(j);
            const bool same_y = std::equal(&y[i * d], &y[i * d + d], &y[j * d]);
            const bool same_p = std::equal(&p[i * d], &p[i * d + d], &p[j * d]);
            if (skip_same && same_y) {
                ++want_skipped;
                continue;
            }
            if (same_y || same_p) {
                ++want_tied;
                continue;
            }
            const double lhs =
                metric_distance(&y[i * d], &p[i * d], d, metric) + metric_distance(&y[j * d], &p[j * d], d, metric);
            const double rhs =
                metric_distance(&y[i * d], &p[j * d], d, metric) + metric_distance(&y[j * d], &p[i * d], d, metric);
            want_passed += lhs < rhs;
        }
    Options options;
    options.metric = metric;
    options.rtol = 0.0;
    options.skip_same_target = skip_same;
    Control control;
    const auto gy = group_rows(yv, 1, control), gp = group_rows(pv, 1, control);
    Groups groups{gy.data(), gp.data()};
    for (int threads : {1, 2}) {
        options.n_threads = threads;
        const Prepared<T> prep = prepare(yv, pv, metric, nullptr, threads, control);
        const Counts all = count_all_pairs(prep, groups, options, Blas{}, control);
        CHECK_EQ(all.passed, want_passed);
        CHECK_EQ(all.tied, want_tied);
        CHECK_EQ(all.skipped, want_skipped);
        const Counts listed =
            count_listed_pairs(prep, groups, options, first.data(), second.data(), first.size(), control);
        CHECK_EQ(listed.passed, want_passed);
        CHECK_EQ(listed.tied, want_tied);
        // The identity permutation through the kept matrix gives the same counts.
        if (n >= 2) {
            std::vector<T> terms(n * n), terms_t(n * n);
            pair_terms(prep, options, Blas{}, terms.data(), control);
            for (std::ptrdiff_t i = 0; i < n; ++i)
                for (std::ptrdiff_t j = 0; j < n; ++j) terms_t[j * n + i] = terms[i * n + j];
            std::vector<std::int64_t> perm(n);
            std::iota(perm.begin(), perm.end(), 0);
            std::uint64_t passed = 0, tied = 0;
            count_permuted(terms.data(), terms_t.data(), prep, groups, options, perm.data(), 1, &passed, &tied,
                           control);
            CHECK_EQ(passed, want_passed);
            CHECK_EQ(tied, want_tied);
        }
    }
}

void test_two_vs_two() {
    using two_vs_two::Metric;
    std::mt19937_64 gen(3);
    for (Metric metric : {Metric::cosine, Metric::correlation, Metric::euclidean, Metric::sqeuclidean})
        for (std::ptrdiff_t n : {2, 5, 40})
            for (bool skip : {false, true}) {
                two_vs_two_case<double>(gen, n, 4, metric, skip);
                two_vs_two_case<float>(gen, n, 3, metric, skip);
            }
    // group_rows: equal rows (-0.0 == 0.0) share the id of the first one.
    const double rows[] = {0.0, 1.0, -0.0, 1.0, 2.0, 1.0};
    Control quiet;
    const auto g = two_vs_two::group_rows(two_vs_two::MatrixView<double>{rows, 3, 2, 2, 1}, 1, quiet);
    CHECK(g[0] == g[1] && g[0] != g[2]);
    // A cancelled control stops a count.
    std::vector<double> big(200 * 3, 1.0);
    for (std::size_t k = 0; k < big.size(); ++k) big[k] = std::sin(static_cast<double>(k));
    two_vs_two::MatrixView<double> bv{big.data(), 200, 3, 3, 1};
    const auto prep = two_vs_two::prepare(bv, bv, Metric::cosine, nullptr, 1, quiet);
    const auto gb = two_vs_two::group_rows(bv, 1, quiet);
    Control stopped;
    stopped.cancel();
    CHECK(throws<Cancelled>([&] {
        two_vs_two::count_all_pairs(prep, {gb.data(), gb.data()}, two_vs_two::Options{}, two_vs_two::Blas{}, stopped);
    }));
}

// --------------------------------------------------------------------------- BLAS threads

// A fake BLAS whose thread counts are plain variables: one per thread (as
// openblas_set_num_threads_local keeps them) and one for the process. Its
// gemm records whether it ran on one BLAS thread and throws on call `fail_at`.
namespace fake_blas {
thread_local int local = 0;
std::atomic<int> global{0};
std::atomic<int> calls{0}, fail_at{-1};
std::atomic<bool> more_than_one{false};
int set_local(int threads) {
    return std::exchange(local, threads);
}
int get_global() {
    return global.load();
}
void set_global(int threads) {
    global.store(threads);
}
template <class T>
void gemm(char*, char*, int* m, int* n, int*, T*, T*, int*, T*, int*, T*, T* c, int* ldc) {
    const bool one = local == 1 || (local == 0 && global.load() == 1);
    if (!one) more_than_one = true;
    for (int j = 0; j < *n; ++j)
        for (int i = 0; i < *m; ++i) c[j * *ldc + i] = 0;
    if (calls++ == fail_at.load()) throw std::runtime_error("gemm failed");
}
}  // namespace fake_blas

void test_blas_threads() {
    namespace tvt = two_vs_two;
    std::vector<double> x(300 * 4);
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<double>(k));
    const tvt::MatrixView<double> view{x.data(), 300, 4, 4, 1};
    Control quiet;
    const auto prep = tvt::prepare(view, view, tvt::Metric::cosine, nullptr, 1, quiet);
    const auto groups = tvt::group_rows(view, 1, quiet);
    tvt::Options options;
    options.tile_rows = options.tile_cols = 32;
    for (bool per_thread : {true, false})
        for (int threads : {1, 2})
            for (int fail_at : {-1, 0, 5}) {
                tvt::Blas blas;
                blas.dgemm = fake_blas::gemm<double>;
                if (per_thread) {
                    blas.threads.set_local = fake_blas::set_local;
                } else {
                    blas.threads.get_global = fake_blas::get_global;
                    blas.threads.set_global = fake_blas::set_global;
                }
                fake_blas::local = per_thread ? 3 : 0;
                fake_blas::global = per_thread ? 0 : 5;
                fake_blas::calls = 0;
                fake_blas::fail_at = fail_at;
                fake_blas::more_than_one = false;
                options.n_threads = threads;
                Control control;
                const bool threw = throws<std::runtime_error>(
                    [&] { tvt::count_all_pairs(prep, {groups.data(), groups.data()}, options, blas, control); });
                CHECK(threw == (fail_at >= 0));
                CHECK(!fake_blas::more_than_one.load());
                // The caller's settings survive, also when the kernel fails.
                CHECK_EQ(fake_blas::local, per_thread ? 3 : 0);
                CHECK_EQ(fake_blas::global.load(), per_thread ? 0 : 5);
            }
    // Nested guards (a kernel inside a kernel's thread) restore in turn.
    BlasThreads global_only{nullptr, fake_blas::get_global, fake_blas::set_global};
    fake_blas::global = 4;
    {
        const OneBlasThread outer(global_only);
        {
            const OneBlasThread inner(global_only);
            CHECK_EQ(fake_blas::global.load(), 1);
        }
        CHECK_EQ(fake_blas::global.load(), 1);
    }
    CHECK_EQ(fake_blas::global.load(), 4);
}

// --------------------------------------------------------------------------- matching

// Cheapest perfect matching by enumeration (n <= 12).
std::int64_t brute_matching(const std::vector<std::int64_t>& w, int n, std::vector<int>& mate, int used = 0) {
    int i = 0;
    while (i < n && (used >> i & 1)) ++i;
    if (i == n) return 0;
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for (int j = i + 1; j < n; ++j) {
        if (used >> j & 1) continue;
        if (w[i * n + j] < 0) continue;  // missing edge
        std::vector<int> sub(mate);
        const std::int64_t rest = brute_matching(w, n, sub, used | 1 << i | 1 << j);
        if (rest == std::numeric_limits<std::int64_t>::max()) continue;
        if (w[i * n + j] + rest < best) {
            best = w[i * n + j] + rest;
            mate = sub;
            mate[i] = j, mate[j] = i;
        }
    }
    return best;
}

std::int64_t matched_weight(const std::vector<std::int64_t>& w, int n, const std::vector<std::int32_t>& mate) {
    std::int64_t s = 0;
    for (int v = 0; v < n; ++v)
        if (mate[v] > v) s += w[v * n + mate[v]];
    return s;
}

// The solver's dual certificate: every edge has reduced cost >= 0, matched edges 0.
bool certificate_holds(const matching::BlossomResult& r, const std::vector<std::int64_t>& w, int n) {
    for (int u = 0; u < n; ++u)
        for (int v = u + 1; v < n; ++v) {
            if (w[u * n + v] < 0) continue;
            const std::int64_t rc = matching::reduced_cost(r, u, v, w[u * n + v]);
            if (rc < 0) return false;
            if (r.mate[u] == v && rc != 0) return false;
        }
    return true;
}

// Sparse graphs against enumeration, with a warm start; the weight limit.
void test_matching_sparse() {
    std::mt19937_64 gen(4);
    for (int trial = 0; trial < 120; ++trial) {
        const int n = 2 * (1 + trial % 6);
        const std::int64_t top = trial % 3 == 0 ? 3 : (trial % 3 == 1 ? 1000 : matching::max_weight(n));
        std::uniform_int_distribution<std::int64_t> weight(0, top);
        std::bernoulli_distribution keep(trial % 4 == 0 ? 0.6 : 1.0);
        std::vector<std::int64_t> w(n * n, -1);
        std::vector<std::int32_t> eu, ev;
        std::vector<std::int64_t> ew;
        for (int u = 0; u < n; ++u)
            for (int v = u + 1; v < n; ++v)
                if (keep(gen)) {
                    w[u * n + v] = w[v * n + u] = weight(gen);
                    eu.push_back(u), ev.push_back(v), ew.push_back(w[u * n + v]);
                }
        std::vector<int> bmate(n, -1);
        const std::int64_t best = brute_matching(w, n, bmate);
        Control control;
        const auto r = matching::min_weight_perfect_matching(n, ew.size(), eu.data(), ev.data(), ew.data(), control);
        if (best == std::numeric_limits<std::int64_t>::max()) {
            CHECK(!r.perfect);
            continue;
        }
        CHECK(r.perfect);
        if (!r.perfect) continue;
        bool symmetric = true;
        for (int v = 0; v < n; ++v) symmetric &= r.mate[v] >= 0 && r.mate[r.mate[v]] == v && w[v * n + r.mate[v]] >= 0;
        CHECK(symmetric);
        if (!symmetric) continue;
        CHECK_EQ(matched_weight(w, n, r.mate), best);
        CHECK(certificate_holds(r, w, n));
        // A warm start from this solution changes nothing but the work.
        matching::WarmStart warm{r.y.data(), r.mate.data()};
        if (r.z.empty()) {
            const auto again =
                matching::min_weight_perfect_matching(n, ew.size(), eu.data(), ev.data(), ew.data(), control, &warm);
            CHECK(again.perfect && matched_weight(w, n, again.mate) == best);
        }
    }
    // Odd vertex count: no perfect matching exists.
    const std::int32_t u3[] = {0, 1, 0}, v3[] = {1, 2, 2};
    const std::int64_t w3[] = {1, 1, 1};
    Control quiet;
    CHECK(!matching::min_weight_perfect_matching(3, 3, u3, v3, w3, quiet).perfect);
    // max_weight keeps n * 2 * max_weight inside int64.
    for (std::int32_t n : {2, 1000, 1 << 20, std::numeric_limits<std::int32_t>::max() - 1}) {
        const std::int64_t m = matching::max_weight(n);
        CHECK(m > 0 && m <= (std::int64_t{1} << 50));
        CHECK(static_cast<long double>(m) * 2 * (static_cast<long double>(n) + 1) <
              static_cast<long double>(std::numeric_limits<std::int64_t>::max()));
    }
}

// Dense input against enumeration, with and without the ghost vertex, both dtypes.
void test_matching_dense() {
    std::mt19937_64 gen(41);
    for (int trial = 0; trial < 40; ++trial) {
        const int n = 2 + trial % 9;
        const bool ghost = n % 2 == 1;
        std::vector<double> pts(2 * n);
        std::uniform_real_distribution<double> unif(0.0, 10.0);
        for (auto& v : pts) v = trial % 5 == 0 ? std::floor(unif(gen) / 4) : unif(gen);  // ties in some
        std::vector<double> D(n * n);
        double top = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                D[i * n + j] = std::hypot(pts[2 * i] - pts[2 * j], pts[2 * i + 1] - pts[2 * j + 1]);
                top = std::max(top, D[i * n + j]);
            }
        const int nv = n + ghost;
        const double scale = top > 0 ? static_cast<double>(matching::max_weight(nv) - 16) / top : 1.0;
        std::vector<std::int64_t> w(nv * nv, 0);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                w[i * nv + j] = static_cast<std::int64_t>(std::floor(D[i * n + j] * scale + 0.5));
        std::vector<int> bmate(nv, -1);
        brute_matching(w, nv, bmate);
        // The complete-graph solve is exact on the real distances: its cost
        // is the enumerated optimum (at a resolution far below the data's).
        double best_real = 0;
        for (int i = 0; i < n; ++i)
            if (bmate[i] > i && bmate[i] < n) best_real += D[i * n + bmate[i]];
        for (int k : {1, 3, 50}) {
            matching::CompleteOptions opt;
            opt.k = k;
            opt.ghost = ghost;
            opt.n_threads = 1 + k % 2;
            Control control;
            const matching::DenseDistances<double> dd(D.data(), n, n, 1);
            const auto r = matching::complete_min_weight_perfect_matching(dd, opt, control, nullptr);
            CHECK(r.blossom.perfect);
            CHECK(r.cost <= best_real * (1 + 1e-9) + 1e-12);
            std::vector<float> Df(D.begin(), D.end());
            const matching::DenseDistances<float> df(Df.data(), n, n, 1);
            const auto rf = matching::complete_min_weight_perfect_matching(df, opt, control, nullptr);
            CHECK(rf.blossom.perfect);
            CHECK(rf.cost <= best_real * (1 + 1e-5) + 1e-6);
            // Its certificate holds on every pair.
            CHECK(testing::complete_certificate_holds(dd, ghost, r, control));
        }
    }
}

// Cross-match counts of subsamples agree with solving each one alone; a
// cancelled control stops a batch.
void test_matching_crossmatch_counts() {
    std::mt19937_64 gen(42);
    const std::int64_t p = 30;
    std::vector<double> pts(p);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    for (auto& v : pts) v = unif(gen);
    std::vector<double> full(p * p);
    for (std::int64_t i = 0; i < p; ++i)
        for (std::int64_t j = 0; j < p; ++j) full[i * p + j] = std::fabs(pts[i] - pts[j]);
    const std::int32_t m = 10;
    const std::int64_t n_draws = 7;
    std::vector<std::int64_t> draws(n_draws * m);
    std::vector<std::int64_t> pool(p);
    std::iota(pool.begin(), pool.end(), 0);
    for (std::int64_t r = 0; r < n_draws; ++r) {
        std::shuffle(pool.begin(), pool.end(), gen);
        std::copy(pool.begin(), pool.begin() + m, &draws[r * m]);
    }
    std::vector<std::int8_t> z(m);
    for (int i = 0; i < m; ++i) z[i] = i >= m / 2;
    auto gather = [&](const std::vector<std::int64_t>& idx) {
        return [&, &idx = idx](std::int64_t r, double* out) {
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < m; ++j) out[i * m + j] = full[idx[r * m + i] * p + idx[r * m + j]];
        };
    };
    const double scale = static_cast<double>(matching::max_weight(m) - 16);
    for (int threads : {1, 3}) {
        Control control;
        const auto counts = matching::crossmatch_counts(n_draws, m, z.data(), 10, threads, control, gather(draws));
        CHECK_EQ(counts.size(), static_cast<std::size_t>(n_draws));
        for (std::int64_t r = 0; r < n_draws && r < static_cast<std::int64_t>(counts.size()); ++r) {
            std::vector<double> sub(m * m);
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < m; ++j) sub[i * m + j] = full[draws[r * m + i] * p + draws[r * m + j]];
            std::vector<std::int64_t> w(m * m);
            for (int i = 0; i < m * m; ++i) w[i] = static_cast<std::int64_t>(std::floor(sub[i] * scale + 0.5));
            std::vector<int> bm(m, -1);
            brute_matching(w, m, bm);
            std::int64_t across = 0;
            for (int i = 0; i < m; ++i) {
                const int j = bm[i];
                if (j > i && j < m) across += z[i] != z[j];
            }
            // Optimal matchings can differ under ties; with continuous data they do not.
            CHECK_EQ(counts[r], across);
        }
    }
    // A cancelled control stops a batch with Cancelled (checked between draws).
    std::vector<std::int64_t> many(64 * m);
    for (std::size_t i = 0; i < many.size(); ++i) many[i] = draws[i % draws.size()];
    for (int threads : {1, 2}) {
        Control stopped;
        stopped.cancel();
        CHECK(throws<Cancelled>(
            [&] { matching::crossmatch_counts(64, m, z.data(), 10, threads, stopped, gather(many)); }));
    }
}

// Exact Euclidean distances come from the coordinate differences.
void test_matching_euclidean_exact() {
    Control quiet;
    const double X[] = {0.0, 0.0, 3.0, 4.0, 1.0, 1.0};
    const matching::EuclideanDistances e(X, 3, 2, false, Blas{}, quiet);
    const matching::EuclideanDistances e2(X, 3, 2, true, Blas{}, quiet);
    CHECK_EQ(e(0, 1), 5.0);
    CHECK_EQ(e2(1, 2), 13.0);
    CHECK_EQ(e2(2, 0), 2.0);
}

}  // namespace

int main(int argc, char** argv) {
    const testing::Test tests[] = {
        {"control", test_control},
        {"parallel_for", test_parallel_for},
        {"paired", test_paired},
        {"measures", test_measures},
        {"two_vs_two", test_two_vs_two},
        {"matching_sparse", test_matching_sparse},
        {"matching_dense", test_matching_dense},
        {"matching_crossmatch_counts", test_matching_crossmatch_counts},
        {"matching_euclidean_exact", test_matching_euclidean_exact},
        {"blas_threads", test_blas_threads},
    };
    return testing::run_tests(tests, argc, argv);
}
