// Tests of the rank kernels without Python: ROC AUC, concordance, group
// dominance, the radix sorts, the grouped kernels and the bootstrap, each
// against a brute-force transcription of its header's definition, on small
// random inputs with many ties, every thread count that changes the work
// split, and the preconditions the headers state.
//
// Built with -DPAIRMETRICS_BUILD_TESTS=ON; `ctest` runs it (or the
// pairmetrics_rank_kernel_tests executable; an argument filters tests by name).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "bootstrap.hpp"
#include "check.hpp"
#include "concordance.hpp"
#include "control.hpp"
#include "group_dominance.hpp"
#include "grouped.hpp"
#include "key_sort.hpp"
#include "paired.hpp"
#include "rankable.hpp"
#include "roc_auc.hpp"

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

bool same_or_both_nan(double a, double b, double rel = 1e-12) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// Values stored reversed with a gap of 2, read through a negative stride: the kernels must honour strides.
template <class T>
struct Reversed {
    std::unique_ptr<T[]> storage;  // not a vector: vector<bool> has no data()
    std::size_t size;
    explicit Reversed(const std::vector<T>& values)
        : storage(new T[2 * values.size() + 1]()), size(2 * values.size() + 1) {
        for (std::size_t i = 0; i < values.size(); ++i) storage[2 * (values.size() - 1 - i) + 1] = values[i];
    }
    const T* first() const { return size > 1 ? storage.get() + size - 2 : storage.get(); }
    static constexpr std::ptrdiff_t stride = -2;
};

const std::size_t kSizes[] = {0, 1, 2, 3, 7, 40, 255, 256, 700};

// --------------------------------------------------------------------------- ROC AUC

// The ROC curve through every distinct score (descending), integrated by trapezoids up to max_fpr with linear
// interpolation there, over the totals; for max_fpr >= 1 the weighted Mann-Whitney sum.
double brute_auc(const std::vector<double>& s, const std::vector<std::uint8_t>& pos, const std::vector<double>& w,
                 double max_fpr, double* positives, double* negatives) {
    double p_total = 0, n_total = 0;
    for (std::size_t i = 0; i < s.size(); ++i) (pos[i] ? p_total : n_total) += w[i];
    *positives = p_total;
    *negatives = n_total;
    if (!(p_total > 0) || !(n_total > 0)) return std::nan("");
    if (max_fpr >= 1) {
        double credit = 0;
        for (std::size_t i = 0; i < s.size(); ++i)
            for (std::size_t j = 0; j < s.size(); ++j)
                if (pos[i] && !pos[j]) credit += w[i] * w[j] * (s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0);
        return credit / (p_total * n_total);
    }
    std::vector<double> levels(s);
    std::sort(levels.begin(), levels.end(), std::greater<double>());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    double fpr = 0, tpr = 0, area = 0;
    for (double level : levels) {
        double tp = 0, fp = 0;
        for (std::size_t i = 0; i < s.size(); ++i)
            if (s[i] == level) (pos[i] ? tp : fp) += w[i];
        const double next_fpr = fpr + fp / n_total, next_tpr = tpr + tp / p_total;
        if (next_fpr >= max_fpr) {
            const double at = next_fpr > fpr ? tpr + (next_tpr - tpr) * (max_fpr - fpr) / (next_fpr - fpr) : tpr;
            return area + (max_fpr - fpr) * (tpr + at) / 2;
        }
        area += (next_fpr - fpr) * (tpr + next_tpr) / 2;
        fpr = next_fpr;
        tpr = next_tpr;
    }
    return area;
}

template <class Score>
void roc_auc_case(std::mt19937_64& gen, std::size_t n, int levels, bool weighted, double max_fpr) {
    std::uniform_int_distribution<int> level(0, levels - 1), weight(0, 3);
    std::bernoulli_distribution coin(0.4);
    std::vector<Score> scores(n);
    std::vector<double> as_double(n), w(n, 1.0);
    std::vector<std::uint8_t> pos(n);
    for (std::size_t i = 0; i < n; ++i) {
        scores[i] = static_cast<Score>(level(gen));
        as_double[i] = static_cast<double>(scores[i]);
        pos[i] = coin(gen) ? 1 : 0;
        if (weighted) w[i] = weight(gen) * 0.5;
    }
    double want_pos = 0, want_neg = 0;
    const double want = brute_auc(as_double, pos, w, max_fpr, &want_pos, &want_neg);
    const Reversed<Score> rs(scores);
    const Reversed<std::uint8_t> rp(pos);
    const Reversed<double> rw(w);
    for (int threads : {1, 3}) {
        Control control;
        const RocAuc got = roc_auc<Score>(rs.first(), rs.stride, rp.first(), rp.stride, weighted ? rw.first() : nullptr,
                                          rw.stride, n, max_fpr, threads, control);
        CHECK(same_or_both_nan(got.area, want));
        CHECK_CLOSE(got.positive, want_pos, 1e-12);
        CHECK_CLOSE(got.negative, want_neg, 1e-12);
    }
}

void test_roc_auc() {
    std::mt19937_64 gen(11);
    for (std::size_t n : kSizes)
        for (int levels : {1, 3, 50})
            for (bool weighted : {false, true})
                for (double max_fpr : {1.0, 0.3}) {
                    roc_auc_case<double>(gen, n, levels, weighted, max_fpr);
                    roc_auc_case<float>(gen, n, levels, weighted, max_fpr);
                    roc_auc_case<std::int64_t>(gen, n, levels, weighted, max_fpr);
                    roc_auc_case<std::uint8_t>(gen, n, levels, weighted, max_fpr);
                    roc_auc_case<bool>(gen, n, std::min(levels, 2), weighted, max_fpr);
                }
    // Extreme integer scores keep their order (no rounding through double before the sort).
    const std::int64_t big[] = {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max() - 1,
                                std::numeric_limits<std::int64_t>::min()};
    const std::uint8_t labels[] = {1, 0, 0};
    Control control;
    CHECK_EQ(roc_auc<std::int64_t>(big, 1, labels, 1, nullptr, 1, 3, 1.0, 1, control).area, 1.0);
    const std::uint8_t flipped[] = {0, 1, 0};
    CHECK_EQ(roc_auc<std::int64_t>(big, 1, flipped, 1, nullptr, 1, 3, 1.0, 1, control).area, 0.5);
}

// --------------------------------------------------------------------------- concordance

ConcordanceCounts brute_concordance(const std::vector<double>& t, const std::vector<std::uint8_t>& e,
                                    const std::vector<double>& x, double tol, std::vector<std::uint64_t>* per) {
    ConcordanceCounts c;
    const std::size_t n = t.size();
    per->assign(n * kPerSampleColumns, 0);
    auto tied = [&](double a, double b) { return tol == 0 ? a == b : std::fabs(a - b) <= tol; };
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j || !e[i]) continue;
            if (e[j] && t[j] == t[i] && i < j) {
                ++c.event_pairs_tied_time;
                c.event_pairs_tied_both += tied(x[i], x[j]);
            }
            if (!(t[j] > t[i] || (t[j] == t[i] && !e[j]))) continue;
            c.tied_time += t[j] == t[i];
            const int kind = tied(x[j], x[i]) ? 1 : x[j] < x[i] ? 0 : 2;  // of j seen from i
            (kind == 0 ? c.below : kind == 1 ? c.tied : c.above)++;
            (*per)[i * kPerSampleColumns + kEarlierBelow + kind]++;
            (*per)[j * kPerSampleColumns + kLaterBelow + (2 - kind)]++;  // i seen from j
        }
    return c;
}

bool same_counts(const ConcordanceCounts& a, const ConcordanceCounts& b, bool with_event_pairs) {
    return a.below == b.below && a.tied == b.tied && a.above == b.above && a.tied_time == b.tied_time &&
           (!with_event_pairs ||
            (a.event_pairs_tied_time == b.event_pairs_tied_time && a.event_pairs_tied_both == b.event_pairs_tied_both));
}

void concordance_case(std::mt19937_64& gen, std::size_t n, int time_levels, int estimate_levels, double tol) {
    std::uniform_int_distribution<int> time_level(0, time_levels - 1), estimate_level(0, estimate_levels - 1);
    std::bernoulli_distribution coin(0.6), extreme(0.05);
    std::vector<double> t(n), x(n);
    std::vector<std::uint8_t> e(n);
    for (std::size_t i = 0; i < n; ++i) {
        t[i] = time_level(gen) * 1.5;
        e[i] = coin(gen);
        x[i] = estimate_level(gen) * 0.25;  // multiples of 1/4: differences are exact against the tolerance
        if (tol == 0 && extreme(gen)) x[i] = coin(gen) ? std::numeric_limits<double>::infinity() : -1e308;
    }
    std::vector<std::uint64_t> want_per;
    const ConcordanceCounts want = brute_concordance(t, e, x, tol, &want_per);
    const Reversed<double> rt(t), rx(x);
    const Reversed<std::uint8_t> re(e);
    Control control;
    const ConcordanceCounts plain =
        concordance_counts(rt.first(), rt.stride, re.first(), re.stride, rx.first(), rx.stride, n, tol, control);
    CHECK(same_counts(plain, want, false));
    std::vector<std::uint64_t> per(n * kPerSampleColumns, 7);
    const ConcordanceCounts full = concordance_counts(rt.first(), rt.stride, re.first(), re.stride, rx.first(),
                                                      rx.stride, n, tol, control, per.data());
    CHECK(same_counts(full, want, true));
    CHECK(per == want_per);
}

void test_concordance() {
    std::mt19937_64 gen(12);
    for (std::size_t n : kSizes)
        for (int time_levels : {1, 4, 1000})
            for (int estimate_levels : {1, 5, 1000})
                for (double tol : {0.0, 0.5}) concordance_case(gen, n, time_levels, estimate_levels, tol);
    // Cancellation reaches the caller.
    std::vector<double> t(5000, 1.0), x(5000, 2.0);
    std::vector<std::uint8_t> e(5000, 1);
    Control control;
    control.cancel();
    CHECK(
        throws<Cancelled>([&] { concordance_counts(t.data(), 1, e.data(), 1, x.data(), 1, t.size(), 0.0, control); }));
}

// --------------------------------------------------------------------------- group dominance

template <class Value>
struct GroupSample {
    std::vector<Value> values;
    std::vector<std::uint32_t> groups, weights;
    WeightedGroups<Value> view(bool weighted) const {
        return {values.data(), groups.data(), weighted ? weights.data() : nullptr, values.size()};
    }
};

// Doubles from `levels` values spaced 0.5 apart; order keys spread over the
// whole 64-bit range, both ends included.
template <class Value>
Value group_value(int level, int levels) {
    if constexpr (std::is_same_v<Value, double>) {
        return level * 0.5 - 3;
    } else {
        if (level == levels - 1) return ~std::uint64_t{0};
        return static_cast<std::uint64_t>(level) * std::uint64_t{0x9E3779B97F4A7C15};
    }
}

template <class Value>
GroupSample<Value> random_groups(std::mt19937_64& gen, std::size_t n, std::uint32_t n_groups, int levels) {
    std::uniform_int_distribution<int> level(0, levels - 1), weight(1, 4);
    std::uniform_int_distribution<std::uint32_t> group(0, n_groups - 1);
    GroupSample<Value> s;
    for (std::size_t i = 0; i < n; ++i) {
        s.values.push_back(group_value<Value>(level(gen), levels));
        s.groups.push_back(group(gen));
        s.weights.push_back(static_cast<std::uint32_t>(weight(gen)));
    }
    return s;
}

template <class Value>
void check_group_dominance() {
    std::mt19937_64 gen(13);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{9}, std::size_t{300}, std::size_t{2000}})
        for (std::uint32_t n_groups : {1u, 2u, 7u, 100u})
            for (int levels : {1, 6, 100000})
                for (bool weighted : {false, true}) {
                    const auto points = random_groups<Value>(gen, n, n_groups, levels);
                    const auto queries = random_groups<Value>(gen, n / 2 + 3, n_groups, levels);
                    GroupDominanceCounts want;
                    for (std::size_t i = 0; i < points.values.size(); ++i)
                        for (std::size_t j = 0; j < queries.values.size(); ++j) {
                            if (!(points.values[i] >= queries.values[j])) continue;
                            const std::uint64_t w =
                                weighted ? std::uint64_t{points.weights[i]} * queries.weights[j] : 1;
                            const std::uint32_t pg = points.groups[i], qg = queries.groups[j];
                            (pg < qg ? want.lower : pg == qg ? want.same : want.higher) += w;
                        }
                    Control control;
                    const GroupDominanceCounts got =
                        group_dominance(points.view(weighted), queries.view(weighted), n_groups, control);
                    CHECK_EQ(got.lower, want.lower);
                    CHECK_EQ(got.same, want.same);
                    CHECK_EQ(got.higher, want.higher);
                }
    // A group at or beyond n_groups is refused.
    auto bad = random_groups<Value>(gen, 5, 3, 4);
    bad.groups[2] = 3;
    const auto fine = random_groups<Value>(gen, 5, 3, 4);
    Control control;
    CHECK(throws<std::invalid_argument>([&] { group_dominance(bad.view(false), fine.view(false), 3, control); }));
    CHECK(throws<std::invalid_argument>([&] { group_dominance(fine.view(true), bad.view(true), 3, control); }));
}

void test_group_dominance() {
    check_group_dominance<double>();
    check_group_dominance<std::uint64_t>();
}

// --------------------------------------------------------------------------- key sorts

template <class T>
void check_order_keys(const std::vector<T>& values) {
    for (T a : values)
        for (T b : values) {
            CHECK_EQ(a < b, order_key(a) < order_key(b));
            CHECK_EQ(a == b, order_key(a) == order_key(b));
        }
}

struct Record {
    std::uint64_t key;
    std::uint32_t index;
};

std::vector<Record> random_records(std::mt19937_64& gen, std::size_t n, int kind) {
    std::vector<Record> records(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t x = gen();
        const std::uint64_t key = kind == 0 ? 42 : kind == 1 ? x % 5 : kind == 2 ? (x % 1000) << 40 : x;
        records[i] = Record{key, static_cast<std::uint32_t>(i)};
    }
    return records;
}

bool same_records(const std::vector<Record>& a, const Record* b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].key != b[i].key || a[i].index != b[i].index) return false;
    return true;
}

void test_key_sort() {
    const double inf = std::numeric_limits<double>::infinity();
    check_order_keys<double>(
        {-inf, -1e308, -1.5, -4.9e-324, -0.0, 0.0, 4.9e-324, 2.2e-308, 1.0, 1.0000000000000002, 1e308, inf});
    check_order_keys<float>({-3.4e38f, -1.0f, -0.0f, 0.0f, 1e-45f, 1.0f, 3.4e38f});
    check_order_keys<std::int64_t>(
        {std::numeric_limits<std::int64_t>::min(), -2, -1, 0, 1, std::numeric_limits<std::int64_t>::max()});
    check_order_keys<std::int8_t>({-128, -1, 0, 1, 127});
    check_order_keys<std::uint64_t>({0, 1, std::uint64_t{1} << 63, ~std::uint64_t{0}});
    check_order_keys<bool>({false, true});
    for (double d : {-inf, -2.5, -4.9e-324, 0.0, 3.0, 1e300, inf}) CHECK_EQ(double_of_key(order_key(d)), d);
    CHECK(!std::signbit(double_of_key(order_key(-0.0))));

    KeyBits bits;
    bits.add(0b1100);
    bits.add(0b0110);
    CHECK_EQ(bits.varying(), std::uint64_t{0b1010});
    CHECK_EQ(bit_width(0), 0);
    CHECK_EQ(bit_width(1), 1);
    CHECK_EQ(bit_width(~std::uint64_t{0}), 64);

    std::mt19937_64 gen(14);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257},
                          std::size_t{5000}, std::size_t{70000}})
        for (int kind = 0; kind < 4; ++kind) {
            const std::vector<Record> input = random_records(gen, n, kind);
            std::vector<Record> want = input;
            std::stable_sort(want.begin(), want.end(), [](const Record& a, const Record& b) { return a.key < b.key; });
            // The LSD sorts are stable: the indices of equal keys stay ascending.
            std::vector<Record> records = input, scratch(n);
            Control control;
            const Record* sorted = radix_sort_by_key(records.data(), scratch.data(), n, control);
            CHECK(same_records(want, sorted));
            std::vector<Record> in_place = input;
            sort_by_key(in_place.data(), n, control);
            CHECK(same_records(want, in_place.data()));
            // The MSD sort is not stable: the same keys in order, and the same records.
            std::vector<Record> msd_records = input, msd_scratch(n);
            msd::RadixWorkspace ws;
            std::uint64_t ticked = 0;
            auto tick = [&](std::size_t work) { ticked += work; };
            msd::sort_segment(msd_records.data(), msd_scratch.data(), n, 0, ws, tick);
            bool keys_in_order = true;
            for (std::size_t i = 0; i < n; ++i) keys_in_order &= msd_records[i].key == want[i].key;
            CHECK(keys_in_order);
            std::vector<std::uint32_t> indices(n);
            for (std::size_t i = 0; i < n; ++i) indices[i] = msd_records[i].index;
            std::sort(indices.begin(), indices.end());
            bool permutation = true;
            for (std::size_t i = 0; i < n; ++i) permutation &= indices[i] == i;
            CHECK(permutation);
            CHECK(n == 0 || ticked >= n);
        }
    // A cancelled control stops the radix sort; plain keys sort too.
    std::vector<std::uint64_t> keys(100000), scratch(keys.size());
    for (std::uint64_t& k : keys) k = gen();
    Control cancelled;
    cancelled.cancel();
    CHECK(throws<Cancelled>([&] { radix_sort_by_key(keys.data(), scratch.data(), keys.size(), cancelled); }));
    Control control;
    sort_by_key(keys.data(), keys.size(), control);
    CHECK(std::is_sorted(keys.begin(), keys.end()));
}

// --------------------------------------------------------------------------- grouped kernels

struct Grouping {
    std::vector<std::int64_t> codes;
    std::vector<std::vector<std::size_t>> members;  // input positions of each group, ascending
};

Grouping random_grouping(std::mt19937_64& gen, std::size_t n, std::size_t n_groups) {
    Grouping g;
    g.members.resize(n_groups);
    std::uniform_int_distribution<std::size_t> group(0, n_groups - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t c = group(gen) / 2 * 2;  // odd groups stay empty
        g.codes.push_back(static_cast<std::int64_t>(c));
        g.members[c].push_back(i);
    }
    return g;
}

template <class T>
std::vector<T> pick(const std::vector<T>& values, const std::vector<std::size_t>& at) {
    std::vector<T> out;
    for (std::size_t i : at) out.push_back(values[i]);
    return out;
}

void grouped_case(std::mt19937_64& gen, std::size_t n, std::size_t n_groups, int threads) {
    const Grouping grouping = random_grouping(gen, n, n_groups);
    Control control;
    const Reversed<std::int64_t> rc(grouping.codes);
    const GroupSegments segments = group_segments(rc.first(), rc.stride, n, n_groups, control);
    CHECK_EQ(segments.groups(), n_groups);
    std::vector<std::int64_t> want_order;
    for (std::size_t g = 0; g < n_groups; ++g) {
        CHECK_EQ(segments.size(g), grouping.members[g].size());
        for (std::size_t i : grouping.members[g]) want_order.push_back(static_cast<std::int64_t>(i));
    }
    CHECK(segments.order == want_order);

    std::uniform_int_distribution<int> level(0, 5);
    std::bernoulli_distribution coin(0.5);
    std::vector<double> scores(n), labels(n), times(n), weights(n);
    std::vector<std::uint8_t> flags(n);
    for (std::size_t i = 0; i < n; ++i) {
        scores[i] = level(gen);
        labels[i] = level(gen) * 0.5;
        times[i] = level(gen);
        weights[i] = level(gen);
        flags[i] = coin(gen);
    }
    std::vector<PairedCounts> paired(n_groups);
    std::vector<std::uint64_t> rankable(n), tied(n), incorrect(n);
    PairedPerSample per{rankable.data(), tied.data(), incorrect.data()};
    grouped_paired_counts<double, double>(scores.data(), 1, labels.data(), 1, segments, 0.5, paired.data(), &per,
                                          threads, control);
    std::vector<RocAuc> aucs(n_groups);
    grouped_roc_auc<double>(scores.data(), 1, flags.data(), 1, weights.data(), 1, segments, 1.0, aucs.data(), threads,
                            control);
    std::vector<ConcordanceCounts> concordance(n_groups);
    std::vector<std::uint64_t> per_concordance(n * kPerSampleColumns);
    grouped_concordance(times.data(), 1, flags.data(), 1, scores.data(), 1, segments, concordance.data(),
                        per_concordance.data(), threads, control);

    // Each group as the ungrouped kernels see it alone; per-sample output in segment order.
    for (std::size_t g = 0; g < n_groups; ++g) {
        const std::vector<std::size_t>& at = grouping.members[g];
        const std::size_t begin = segments.offset[g], m = at.size();
        const auto s = pick(scores, at), y = pick(labels, at), t = pick(times, at), w = pick(weights, at);
        const auto f = pick(flags, at);
        std::vector<std::uint64_t> r(m), ti(m), in(m);
        PairedPerSample alone{r.data(), ti.data(), in.data()};
        const PairedCounts want = paired_counts<double, double>(s.data(), 1, y.data(), 1, m, 0.5, control, &alone);
        CHECK_EQ(paired[g].rankable, want.rankable);
        CHECK_EQ(paired[g].correct, want.correct);
        CHECK_EQ(paired[g].tied, want.tied);
        CHECK_EQ(paired[g].incorrect, want.incorrect);
        CHECK(std::equal(r.begin(), r.end(), rankable.begin() + begin));
        CHECK(std::equal(ti.begin(), ti.end(), tied.begin() + begin));
        CHECK(std::equal(in.begin(), in.end(), incorrect.begin() + begin));
        const RocAuc auc = roc_auc<double>(s.data(), 1, f.data(), 1, w.data(), 1, m, 1.0, 1, control);
        CHECK(same_or_both_nan(aucs[g].area, auc.area, 0));
        CHECK_EQ(aucs[g].positive, auc.positive);
        std::vector<std::uint64_t> per_alone(m * kPerSampleColumns);
        const ConcordanceCounts c =
            concordance_counts(t.data(), 1, f.data(), 1, s.data(), 1, m, 0.0, control, per_alone.data());
        CHECK(same_counts(concordance[g], c, true));
        CHECK(std::equal(per_alone.begin(), per_alone.end(), per_concordance.begin() + begin * kPerSampleColumns));
    }
}

void test_grouped() {
    std::mt19937_64 gen(15);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{30}, std::size_t{600}})
        for (std::size_t n_groups : {std::size_t{1}, std::size_t{2}, std::size_t{9}})
            for (int threads : {1, 3}) grouped_case(gen, n, n_groups, threads);
    // Large enough that groups run side by side on several threads.
    grouped_case(gen, 70000, 40, 3);
    const std::int64_t codes[] = {0, 2, 3};
    Control control;
    CHECK(throws<std::invalid_argument>([&] { group_segments(codes, 1, 3, 3, control); }));
    const std::int64_t negative[] = {0, -1};
    CHECK(throws<std::invalid_argument>([&] { group_segments(negative, 1, 2, 3, control); }));
}

// --------------------------------------------------------------------------- the rankable-pair rule

// real_threshold(y, d): the smallest double t with fl(t - y) >= d, checked at t and the double below it.
void test_real_threshold() {
    std::mt19937_64 gen(17);
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> ys = {0.0,
                              -0.0,
                              1.0,
                              -1.0,
                              5e-324,
                              -5e-324,
                              1e-300,
                              1e300,
                              -1e300,
                              1.7976931348623157e308,
                              -1.7976931348623157e308,
                              0.1,
                              1e16,
                              1e16 + 2};
    for (int i = 0; i < 2000; ++i) {
        ys.push_back(std::ldexp(static_cast<double>(gen() % 1000000) - 500000, static_cast<int>(gen() % 80) - 40));
        double raw;
        const std::uint64_t bits = gen();
        std::memcpy(&raw, &bits, sizeof raw);
        if (std::isfinite(raw)) ys.push_back(raw);
    }
    for (double y : ys)
        for (double d : {0.5, 0.1, 1e-300, 5e-324, 0.0, -1.0, 3.0, 1e300, 1.7976931348623157e308, inf}) {
            const double t = real_threshold(y, d);
            CHECK(!std::isnan(t));
            const double below = std::nextafter(t, -inf);
            const bool exact = (t == inf || t - y >= d) && (t == -inf || !(below - y >= d));
            if (!exact) std::fprintf(stderr, "threshold of %.17g by %.17g: %.17g\n", y, d, t);
            CHECK(exact);
        }
}

// integer_threshold(key, gap, highest): the smallest key up to `highest` that far above, else highest + 1.
void test_integer_threshold() {
    constexpr std::uint64_t top = ~std::uint64_t{0};
    const std::uint64_t keys[] = {0, 1, 2, 5, std::uint64_t{1} << 53, (std::uint64_t{1} << 63) + 7, top - 3, top - 1};
    for (std::uint64_t highest : {std::uint64_t{0}, std::uint64_t{6}, std::uint64_t{1} << 62, top - 1})
        for (std::uint64_t min_dist : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1} << 60, top})
            for (std::uint64_t key : keys) {
                const IntegerGap gap{min_dist};
                const std::uint64_t t = integer_threshold(key, gap, highest);
                if (t <= highest) {
                    CHECK(gap.far(t, key));
                    CHECK(t == 0 || !gap.far(t - 1, key));
                } else {
                    CHECK_EQ(t, highest + 1);
                    CHECK(!gap.far(highest, key));
                }
            }
}

// --------------------------------------------------------------------------- bootstrap

// The draws as the header defines them: SplitMix64 from the seed, draw k of a stratum of `size` clusters is
// cluster first + (hi32(x_k) * size >> 32).
std::vector<std::uint32_t> reference_draws(const std::vector<std::int64_t>& offsets, std::uint64_t seed) {
    std::vector<std::uint32_t> count(static_cast<std::size_t>(offsets.back()), 0);
    std::uint64_t state = seed;
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
        const std::uint64_t size = static_cast<std::uint64_t>(offsets[s + 1] - offsets[s]);
        for (std::uint64_t k = 0; k < size; ++k) {
            std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            z ^= z >> 31;
            ++count[static_cast<std::size_t>(offsets[s]) + (((z >> 32) * size) >> 32)];
        }
    }
    return count;
}

struct BootstrapSample {
    std::vector<std::int64_t> offsets;  // strata over clusters
    std::vector<std::uint32_t> cluster;
    std::vector<double> scores;  // nondecreasing: the sorted positions
    std::vector<std::uint8_t> positive;
    BootstrapDesign design() const {
        return BootstrapDesign{offsets.data(), offsets.size() - 1, cluster.data(), scores.size()};
    }
};

BootstrapSample random_bootstrap(std::mt19937_64& gen, std::size_t n, std::size_t n_strata, bool clustered) {
    BootstrapSample b;
    const std::size_t n_clusters = clustered ? std::max<std::size_t>(n / 3, n_strata) : n;
    b.offsets.push_back(0);
    for (std::size_t s = 1; s < n_strata; ++s)
        b.offsets.push_back(static_cast<std::int64_t>(n_clusters * s / n_strata));
    b.offsets.push_back(static_cast<std::int64_t>(n_clusters));
    std::uniform_int_distribution<int> level(0, 6);
    std::bernoulli_distribution coin(0.4);
    for (std::size_t p = 0; p < n; ++p) {
        b.cluster.push_back(static_cast<std::uint32_t>(clustered ? gen() % n_clusters : p));
        b.scores.push_back(level(gen) * 0.5);
        b.positive.push_back(coin(gen));
    }
    std::sort(b.scores.begin(), b.scores.end());
    return b;
}

double brute_weighted_auc(const BootstrapSample& b, const std::vector<std::uint32_t>& count) {
    double credit = 0, positives = 0, negatives = 0;
    for (std::size_t p = 0; p < b.scores.size(); ++p) {
        const double wp = count[b.cluster[p]];
        (b.positive[p] ? positives : negatives) += wp;
        if (!b.positive[p]) continue;
        for (std::size_t q = 0; q < b.scores.size(); ++q)
            if (!b.positive[q])
                credit += wp * count[b.cluster[q]] *
                          (b.scores[p] > b.scores[q]    ? 1.0
                           : b.scores[p] == b.scores[q] ? 0.5
                                                        : 0);
    }
    if (!(positives > 0) || !(negatives > 0)) return std::nan("");
    return credit / (positives * negatives);
}

double brute_pair_concordance(const BootstrapSample& b, const PairSweep& sweep,
                              const std::vector<std::uint32_t>& count) {
    double correct = 0, tied = 0, comparable = 0;
    for (std::size_t p = 0; p < b.scores.size(); ++p) {
        if (!sweep.query[p]) continue;
        for (std::size_t q = 0; q < static_cast<std::size_t>(sweep.bound[p]); ++q) {
            const double w = double(count[b.cluster[p]]) * count[b.cluster[q]];
            comparable += w;
            correct += sweep.rank[q] < sweep.rank[p] ? w : 0;
            tied += sweep.rank[q] == sweep.rank[p] ? w : 0;
        }
    }
    return comparable > 0 ? (correct + tied / 2) / comparable : std::nan("");
}

void bootstrap_case(std::mt19937_64& gen, std::size_t n, std::size_t n_strata, bool clustered) {
    const BootstrapSample b = random_bootstrap(gen, n, n_strata, clustered);
    const BootstrapDesign design = b.design();
    const std::size_t n_resamples = 9;
    std::vector<std::uint64_t> seeds(n_resamples);
    for (std::uint64_t& s : seeds) s = gen();
    std::vector<std::vector<std::uint32_t>> counts;
    for (std::uint64_t seed : seeds) {
        counts.push_back(reference_draws(b.offsets, seed));
        std::vector<std::uint32_t> got(counts.back().size(), 0);
        bootstrap_draw_counts(b.offsets.data(), n_strata, seed, got.data());
        CHECK(got == counts.back());
        for (std::size_t s = 0; s < n_strata; ++s) {  // each stratum keeps its number of clusters
            const auto first = counts.back().begin();
            CHECK_EQ(std::accumulate(first + b.offsets[s], first + b.offsets[s + 1], std::int64_t{0}),
                     b.offsets[s + 1] - b.offsets[s]);
        }
    }
    // The ROC AUC: tie groups of equal scores.
    std::vector<std::int64_t> group_end;
    for (std::size_t p = 0; p < n; ++p)
        if (p + 1 == n || b.scores[p + 1] != b.scores[p]) group_end.push_back(static_cast<std::int64_t>(p + 1));
    // The pair concordance: labels (here the scores) ranked by another score, pairs outranked by min_dist 1.
    std::vector<std::int64_t> bound(n);
    rankable_bounds(b.scores.data(), n, 1.0, bound.data());
    std::vector<std::uint32_t> rank(n);
    for (std::uint32_t& r : rank) r = static_cast<std::uint32_t>(gen() % 4);
    const std::vector<std::uint8_t> query(b.positive);
    const PairSweep sweep{rank.data(), 4, bound.data(), query.data()};
    for (int threads : {1, 3}) {
        std::vector<double> auc(n_resamples), pairs(n_resamples);
        Control control;
        bootstrap_auc(design, b.positive.data(), group_end.data(), group_end.size(), seeds.data(), n_resamples,
                      auc.data(), threads, control);
        bootstrap_pair_concordance(design, sweep, seeds.data(), n_resamples, pairs.data(), threads, control);
        for (std::size_t r = 0; r < n_resamples; ++r) {
            CHECK(same_or_both_nan(auc[r], brute_weighted_auc(b, counts[r])));
            CHECK(same_or_both_nan(pairs[r], brute_pair_concordance(b, sweep, counts[r])));
        }
    }
}

void test_bootstrap() {
    // rankable_bounds: the count of labels each one outranks by min_dist, with rounded subtraction.
    std::mt19937_64 gen(16);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{50}})
        for (double min_dist : {0.5, 1e-300, 3.0}) {
            std::vector<double> labels(n);
            for (double& y : labels) y = static_cast<double>(gen() % 8) * 0.75 + (gen() % 2 ? 1e16 : 0);
            std::sort(labels.begin(), labels.end());
            std::vector<std::int64_t> bound(n);
            rankable_bounds(labels.data(), n, min_dist, bound.data());
            for (std::size_t p = 0; p < n; ++p) {
                std::int64_t want = 0;
                for (std::size_t q = 0; q < n; ++q) want += labels[p] - labels[q] >= min_dist;
                CHECK_EQ(bound[p], want);
            }
        }
    // Integer labels by their order keys: exact beyond 2**53, nothing rankable from min_dist 2**64 on.
    const std::int64_t big = std::int64_t{1} << 62;
    const std::int64_t ints[] = {-big, -big + 1, 0, big - 1, big, big + 1, std::numeric_limits<std::int64_t>::max()};
    std::vector<std::uint64_t> keys;
    for (std::int64_t y : ints) keys.push_back(order_key(y));
    for (double min_dist : {0.5, 1.0, 2.0, 9.2e18, 1.8446744073709552e19}) {
        std::vector<std::int64_t> bound(keys.size());
        rankable_bounds(keys.data(), keys.size(), min_dist, bound.data());
        for (std::size_t p = 0; p < keys.size(); ++p) {
            std::int64_t want = 0;
            for (std::size_t q = 0; q < keys.size(); ++q)  // the exact difference, in long double where it is not
                want += ints[q] <= ints[p] &&
                        static_cast<long double>(ints[p]) - static_cast<long double>(ints[q]) >= min_dist;
            CHECK_EQ(bound[p], want);
        }
    }
    CHECK(!integer_gap(1.8446744073709552e19).has_value());
    CHECK(!integer_gap(std::nan("")).has_value());
    CHECK_EQ(integer_gap(0.25)->min_dist, 1u);
    CHECK_EQ(integer_gap(2.5)->min_dist, 3u);
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{13}, std::size_t{150}})
        for (std::size_t n_strata : {std::size_t{1}, std::size_t{3}})
            for (bool clustered : {false, true})
                if (n_strata <= n) bootstrap_case(gen, n, n_strata, clustered);
}

}  // namespace

int main(int argc, char** argv) {
    const testing::Test tests[] = {
        {"roc_auc", test_roc_auc},
        {"concordance", test_concordance},
        {"group_dominance", test_group_dominance},
        {"key_sort", test_key_sort},
        {"grouped", test_grouped},
        {"bootstrap", test_bootstrap},
        {"real_threshold", test_real_threshold},
        {"integer_threshold", test_integer_threshold},
    };
    return testing::run_tests(tests, argc, argv);
}
