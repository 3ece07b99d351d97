// Tests of the ranking kernels (ranking_curves, ranking_rows) on their own:
// each against a brute-force transcription of its definition, on small random
// inputs with many ties, strided views, several thread counts and element
// types, and cancellation through the Control.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "check.hpp"
#include "control.hpp"
#include "key_sort.hpp"
#include "ranking_curves.hpp"
#include "ranking_rows.hpp"

namespace {

using namespace pairmetrics;

// --------------------------------------------------------------------------- binary curves

struct BruteCurve {
    std::vector<double> thresholds, tps, fps;
};

BruteCurve brute_curve(const std::vector<double>& s, const std::vector<std::uint8_t>& y, const double* w) {
    BruteCurve out;
    std::vector<double> values;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!w || w[i] != 0) values.push_back(s[i]);
    std::sort(values.begin(), values.end(), std::greater<double>());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (double t : values) {
        double tp = 0, fp = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (s[i] < t) continue;
            (y[i] ? tp : fp) += w ? w[i] : 1.0;
        }
        out.thresholds.push_back(t);
        out.tps.push_back(tp);
        out.fps.push_back(fp);
    }
    return out;
}

void test_binary_curve() {
    std::mt19937_64 gen(11);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = 1 + trial % 40;
        std::vector<double> s(n), w(n);
        std::vector<std::uint8_t> y(n);
        for (std::size_t i = 0; i < n; ++i) {
            s[i] = static_cast<double>(gen() % 6) - 2.0;
            y[i] = gen() % 2;
            w[i] = static_cast<double>(gen() % 4) / 2.0;
        }
        for (bool weighted : {false, true}) {
            const double* weights = weighted ? w.data() : nullptr;
            const BruteCurve expected = brute_curve(s, y, weights);
            Control control;
            const BinaryCurve curve =
                binary_curve(s.data(), 1, y.data(), 1, weights, 1, n, CurveDrop::none, 1 + trial % 3, control);
            CHECK_EQ(curve.keys.size(), expected.thresholds.size());
            for (std::size_t t = 0; t < std::min(curve.keys.size(), expected.thresholds.size()); ++t) {
                CHECK_EQ(value_of_key<double>(curve.keys[t]), expected.thresholds[t]);
                CHECK_CLOSE(curve.tps[t], expected.tps[t], 1e-12);
                CHECK_CLOSE(curve.fps[t], expected.fps[t], 1e-12);
            }
            // average precision: sum over thresholds of (recall step) * precision
            double ap = 0, previous = 0;
            for (std::size_t t = 0; t < expected.tps.size(); ++t) {
                const double predicted = expected.tps[t] + expected.fps[t];
                if (predicted != 0) ap += (expected.tps[t] - previous) * expected.tps[t] / predicted;
                previous = expected.tps[t];
            }
            const AveragePrecision result = average_precision(s.data(), 1, y.data(), 1, weights, 1, n, 2, control);
            if (!expected.tps.empty() && expected.tps.back() > 0)
                CHECK_CLOSE(result.value, ap / expected.tps.back(), 1e-12);
            else
                CHECK(std::isnan(result.value));
            // the corners of the ROC curve: the ends, and each point off the line through its neighbours
            const BinaryCurve corners =
                binary_curve(s.data(), 1, y.data(), 1, weights, 1, n, CurveDrop::roc_corners, 1, control);
            std::size_t kept = expected.tps.size() > 0 ? std::min<std::size_t>(expected.tps.size(), 2) : 0;
            for (std::size_t t = 1; t + 1 < expected.tps.size(); ++t) {
                const double d_fp = (expected.fps[t + 1] - expected.fps[t]) - (expected.fps[t] - expected.fps[t - 1]);
                const double d_tp = (expected.tps[t + 1] - expected.tps[t]) - (expected.tps[t] - expected.tps[t - 1]);
                kept += d_fp != 0 || d_tp != 0;
            }
            CHECK_EQ(corners.keys.size(), kept);
        }
    }
}

void test_value_of_key() {
    for (std::int64_t v : {std::int64_t{-5}, std::int64_t{0}, std::int64_t{7}, INT64_MIN, INT64_MAX})
        CHECK_EQ(value_of_key<std::int64_t>(order_key(v)), v);
    for (float v : {-1.5f, 0.0f, 3.25f, 1e30f}) CHECK_EQ(value_of_key<float>(order_key(v)), v);
    CHECK_EQ(value_of_key<std::uint8_t>(order_key(std::uint8_t{200})), std::uint8_t{200});
    CHECK_EQ(value_of_key<bool>(order_key(true)), true);
}

void test_float32_counts_are_exact() {
    // 2**24 + 3 float32 scores equal to 1: a float32 count would round; ours is an integer
    const std::size_t n = (std::size_t{1} << 24) + 3;
    std::vector<float> s(n, 1.0f);
    std::vector<std::uint8_t> y(n, 0);
    y[0] = 1;
    Control control;
    const BinaryCurve curve = binary_curve(s.data(), 1, y.data(), 1, nullptr, 0, n, CurveDrop::none, 2, control);
    CHECK_EQ(curve.keys.size(), std::size_t{1});
    CHECK_EQ(curve.fps[0], static_cast<double>(n - 1));
    CHECK_EQ(curve.tps[0], 1.0);
}

// --------------------------------------------------------------------------- rows

double brute_label_ranking(const double* s, const std::uint8_t* t, std::size_t c, LabelRankingMetric metric) {
    std::size_t p = 0;
    for (std::size_t l = 0; l < c; ++l) p += t[l] != 0;
    if (metric == LabelRankingMetric::coverage) {
        if (p == 0) return 0;
        double lowest = INFINITY;
        for (std::size_t l = 0; l < c; ++l)
            if (t[l]) lowest = std::min(lowest, s[l]);
        double covered = 0;
        for (std::size_t l = 0; l < c; ++l) covered += s[l] >= lowest;
        return covered;
    }
    if (p == 0 || p == c) return metric == LabelRankingMetric::average_precision ? 1 : 0;
    double sum = 0;
    for (std::size_t j = 0; j < c; ++j) {
        if (!t[j]) continue;
        double rank = 0, relevant = 0, wrong = 0;
        for (std::size_t l = 0; l < c; ++l) {
            rank += s[l] >= s[j];
            relevant += t[l] && s[l] >= s[j];
            wrong += !t[l] && s[l] >= s[j];
        }
        sum += metric == LabelRankingMetric::loss ? wrong : relevant / rank;
    }
    return metric == LabelRankingMetric::loss ? sum / (static_cast<double>(p) * static_cast<double>(c - p)) : sum / p;
}

double brute_dcg(const double* s, const double* g, std::size_t c, const std::vector<double>& discount,
                 bool ignore_ties) {
    double dcg = 0;
    for (std::size_t j = 0; j < c; ++j) {
        std::size_t above = 0, tied = 0, tied_after = 0;
        for (std::size_t l = 0; l < c; ++l) {
            above += s[l] > s[j];
            tied += s[l] == s[j];
            tied_after += l > j && s[l] == s[j];
        }
        if (ignore_ties) {
            dcg += g[j] * discount[above + tied_after];
        } else {
            double group = 0;
            for (std::size_t r = above; r < above + tied; ++r) group += discount[r];
            dcg += g[j] * group / static_cast<double>(tied);
        }
    }
    return dcg;
}

void test_rows() {
    std::mt19937_64 gen(12);
    for (int trial = 0; trial < 60; ++trial) {
        const std::size_t rows = 1 + trial % 9, c = 2 + trial % 37, k = 1 + trial % (c + 2);
        // scores stored transposed (column stride rows) to exercise strided reads
        std::vector<double> s(rows * c), g(rows * c), row_s(c), row_g(c);
        std::vector<std::uint8_t> t(rows * c);
        const bool sparse = trial % 2 == 0;
        for (std::size_t i = 0; i < rows * c; ++i) {
            s[i] = static_cast<double>(gen() % 5);
            t[i] = gen() % (sparse ? 9 : 2) == 0;
            g[i] = sparse ? t[i] * static_cast<double>(gen() % 3 + 1) : static_cast<double>(gen() % 4);
        }
        const RowsView<double> scores{s.data(), 1, static_cast<std::ptrdiff_t>(rows)};
        const RowsView<std::uint8_t> truth{t.data(), static_cast<std::ptrdiff_t>(c), 1};
        const RowsView<double> gains{g.data(), static_cast<std::ptrdiff_t>(c), 1};
        std::vector<double> discount(c), cumsum(c);
        for (std::size_t r = 0; r < c; ++r) {
            discount[r] = r < k ? 1 / std::log2(static_cast<double>(r) + 2) : 0.0;
            cumsum[r] = discount[r] + (r > 0 ? cumsum[r - 1] : 0.0);
        }
        std::vector<double> out(rows);
        std::vector<std::uint8_t> hits(rows);
        std::vector<std::int64_t> labels(rows);
        for (std::size_t i = 0; i < rows; ++i) labels[i] = static_cast<std::int64_t>((i * 7) % c);
        Control control;
        for (auto metric :
             {LabelRankingMetric::average_precision, LabelRankingMetric::coverage, LabelRankingMetric::loss}) {
            label_ranking_rows(scores, truth, rows, c, metric, out.data(), 2, control);
            for (std::size_t i = 0; i < rows; ++i) {
                for (std::size_t l = 0; l < c; ++l) row_s[l] = s[l * rows + i];
                CHECK_CLOSE(out[i], brute_label_ranking(row_s.data(), t.data() + i * c, c, metric), 1e-12);
            }
        }
        for (bool ignore_ties : {false, true}) {
            dcg_rows(scores, gains, rows, c, discount.data(), cumsum.data(), std::min(k, c), ignore_ties, false,
                     out.data(), 2, control);
            for (std::size_t i = 0; i < rows; ++i) {
                for (std::size_t l = 0; l < c; ++l) row_s[l] = s[l * rows + i];
                CHECK_CLOSE(out[i], brute_dcg(row_s.data(), g.data() + i * c, c, discount, ignore_ties), 1e-12);
            }
        }
        top_k_hits(scores, labels.data(), 1, rows, c, k, hits.data(), 2, control);
        for (std::size_t i = 0; i < rows; ++i) {
            const std::size_t y = static_cast<std::size_t>(labels[i]);
            std::size_t before = 0;
            for (std::size_t l = 0; l < c; ++l)
                before += s[l * rows + i] > s[y * rows + i] || (l > y && s[l * rows + i] == s[y * rows + i]);
            CHECK_EQ(hits[i] != 0, before < k);
        }
    }
}

void test_rows_stop_on_cancel() {
    const std::size_t rows = 100000, c = 4;
    std::vector<float> s(rows * c, 0.5f);
    std::vector<std::uint8_t> t(rows * c, 1);
    std::vector<double> out(rows);
    Control control;
    control.cancel();
    bool stopped = false;
    try {
        label_ranking_rows(RowsView<float>{s.data(), static_cast<std::ptrdiff_t>(c), 1},
                           RowsView<std::uint8_t>{t.data(), static_cast<std::ptrdiff_t>(c), 1}, rows, c,
                           LabelRankingMetric::loss, out.data(), 2, control);
    } catch (const Cancelled&) {
        stopped = true;
    }
    CHECK(stopped);
}

}  // namespace

int main(int argc, char** argv) {
    const testing::Test tests[] = {
        {"binary_curve", test_binary_curve},
        {"value_of_key", test_value_of_key},
        {"float32_counts_are_exact", test_float32_counts_are_exact},
        {"rows", test_rows},
        {"rows_stop_on_cancel", test_rows_stop_on_cancel},
    };
    return testing::run_tests(tests, argc, argv);
}
