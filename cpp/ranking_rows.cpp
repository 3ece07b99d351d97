#include "ranking_rows.hpp"

// The counting loops compare scores that are never NaN: without trapping
// math GCC vectorises them (clang and MSVC do already).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>
#include <vector>

#include "parallel.hpp"

namespace pairmetrics {
namespace {

constexpr std::size_t kRowBlock = 256;
// DCG counts per relevant label (O(C) each) below this many, else sorts.
constexpr std::size_t kCountingLabels = 24;

// Calls body(begin, end) for blocks of rows, on up to n_threads threads.
template <class Body>
void for_row_blocks(std::size_t n_rows, std::size_t n_labels, int n_threads, Control& control, Body&& body) {
    control.set_total(static_cast<std::uint64_t>(n_rows) + 1);
    const std::size_t n_blocks = (n_rows + kRowBlock - 1) / kRowBlock;
    const bool worth_threads = n_rows * n_labels > (std::size_t{1} << 15);
    parallel_for(
        n_blocks, worth_threads ? n_threads : 1,
        [&](std::size_t b) {
            const std::size_t begin = b * kRowBlock, end = std::min(n_rows, begin + kRowBlock);
            body(begin, end);
            control.advance(end - begin);
        },
        control);
}

// Row i of a view as a contiguous pointer (copied into `buffer` when strided).
template <class T>
const T* contiguous_row(const RowsView<T>& view, std::size_t i, std::size_t n_labels, std::vector<T>& buffer) {
    const T* row = view.row(i);
    if (view.column_stride == 1) return row;
    buffer.resize(n_labels);
    for (std::size_t l = 0; l < n_labels; ++l) buffer[l] = row[static_cast<std::ptrdiff_t>(l) * view.column_stride];
    return buffer.data();
}

// #values <= x in sorted[0, n), n >= 1, without unpredictable branches.
template <class Score>
std::size_t count_at_most(const Score* sorted, std::size_t n, Score x) {
    const Score* first = sorted;
    while (n > 1) {
        const std::size_t half = n / 2;
        first = first[half] <= x ? first + half : first;
        n -= half;
    }
    return static_cast<std::size_t>(first - sorted) + (*first <= x);
}

// The three label ranking metrics of one row. `relevant` is scratch.
template <class Score>
double label_ranking_row(const Score* s, const std::uint8_t* truth, std::size_t n_labels, LabelRankingMetric metric,
                         std::vector<Score>& relevant, std::vector<std::uint32_t>& above) {
    relevant.resize(n_labels + 1);
    std::size_t p = 0;
    for (std::size_t l = 0; l < n_labels; ++l) {  // written always, kept when relevant
        relevant[p] = s[l];
        p += truth[l] != 0;
    }
    if (metric == LabelRankingMetric::coverage) {
        if (p == 0) return 0;
        const Score lowest = *std::min_element(relevant.begin(), relevant.begin() + p);
        std::size_t covered = 0;
        for (std::size_t l = 0; l < n_labels; ++l) covered += s[l] >= lowest;
        return static_cast<double>(covered);
    }
    if (p == 0 || p == n_labels) return metric == LabelRankingMetric::average_precision ? 1.0 : 0.0;
    std::sort(relevant.begin(), relevant.begin() + p);
    // For each irrelevant label, u = #relevant scored <= it: it is ranked at
    // or above the relevant labels of sorted index < u.
    above.assign(p + 1, 0);
    std::uint64_t misordered = 0;
    for (std::size_t l = 0; l < n_labels; ++l) {
        if (truth[l]) continue;
        const std::size_t u = count_at_most(relevant.data(), p, s[l]);
        ++above[u];
        misordered += u;
    }
    if (metric == LabelRankingMetric::loss)
        return static_cast<double>(misordered) / (static_cast<double>(p) * static_cast<double>(n_labels - p));
    double sum = 0;
    std::uint64_t irrelevant_above = 0;
    std::size_t group_start = p;  // first sorted index of the current tie group
    for (std::size_t i = p; i-- > 0;) {
        irrelevant_above += above[i + 1];
        if (group_start > i) {
            group_start = i;
            while (group_start > 0 && relevant[group_start - 1] == relevant[i]) --group_start;
        }
        const std::uint64_t relevant_above = p - group_start;
        sum += static_cast<double>(relevant_above) / static_cast<double>(relevant_above + irrelevant_above);
    }
    return sum / static_cast<double>(p);
}

// DCG of one row by counting, for each label of nonzero gain, the labels
// scored above it and tied with it: O(C) per such label.
template <class Gain, class Score>
double dcg_by_counting(const Score* s, const Gain* g, std::size_t n_labels, const double* discount,
                       const double* cumsum, bool ignore_ties) {
    double dcg = 0;
    for (std::size_t l = 0; l < n_labels; ++l) {
        if (g[l] == 0) continue;
        const Score x = s[l];
        // labels before l: higher or tied; after l: higher or tied (ties after l rank first with ignore_ties)
        std::size_t before = 0, tied_before = 0, above_after = 0, tied_after = 0;
        for (std::size_t m = 0; m < l; ++m) {
            before += s[m] > x;
            tied_before += s[m] == x;
        }
        for (std::size_t m = l + 1; m < n_labels; ++m) {
            above_after += s[m] > x;
            tied_after += s[m] == x;
        }
        const double gain = static_cast<double>(g[l]);
        if (ignore_ties) {
            dcg += gain * discount[before + above_after + tied_after];
        } else {
            const std::size_t first = before + above_after, tied = tied_before + tied_after + 1;
            const double group = cumsum[first + tied - 1] - (first > 0 ? cumsum[first - 1] : 0.0);
            dcg += gain * group / static_cast<double>(tied);
        }
    }
    return dcg;
}

template <class Score>
struct Ranked {
    Score score;
    std::uint32_t label;
    double gain;
};

struct ScoredGain {
    double score, gain;
};

// Sorts (score, gain) pairs by decreasing score (ties in any order: a tie
// group's mean gain does not depend on it).
inline void insertion_sort_decreasing(ScoredGain* a, std::size_t n) {
    for (std::size_t i = 1; i < n; ++i) {
        const ScoredGain x = a[i];
        std::size_t j = i;
        for (; j > 0 && a[j - 1].score < x.score; --j) a[j] = a[j - 1];
        a[j] = x;
    }
}

// Quicksort whose partition has no data-dependent branch (every element is
// swapped, the boundary advances by the comparison): on random scores a
// comparison sort mispredicts half its branches.
inline void sort_pairs_decreasing(ScoredGain* a, std::size_t n, int budget = 64) {
    while (n > 24) {
        if (--budget < 0) {  // unlucky pivots: a comparison sort bounds the cost
            std::sort(a, a + n, [](const ScoredGain& x, const ScoredGain& y) { return x.score > y.score; });
            return;
        }
        // median of three as the pivot, moved to the end
        const std::size_t mid = n / 2;
        if (a[mid].score > a[0].score) std::swap(a[mid], a[0]);
        if (a[n - 1].score > a[0].score) std::swap(a[n - 1], a[0]);
        if (a[n - 1].score < a[mid].score) std::swap(a[n - 1], a[mid]);
        const double pivot = a[n - 1].score;
        std::size_t store = 0;
        for (std::size_t i = 0; i + 1 < n; ++i) {
            const ScoredGain x = a[i];
            const bool before = x.score > pivot;
            a[i] = a[store];
            a[store] = x;
            store += before;
        }
        if (store == 0) {  // nothing above the pivot: it is the maximum; its ties go first, done
            std::size_t tied = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const ScoredGain x = a[i];
                const bool tie = x.score >= pivot;
                a[i] = a[tied];
                a[tied] = x;
                tied += tie;
            }
            a += tied;
            n -= tied;
            continue;
        }
        std::swap(a[store], a[n - 1]);
        // recurse into the smaller side, loop on the larger one
        if (store < n - store - 1) {
            sort_pairs_decreasing(a, store, budget);
            a += store + 1;
            n -= store + 1;
        } else {
            sort_pairs_decreasing(a + store + 1, n - store - 1, budget);
            n = store;
        }
    }
    insertion_sort_decreasing(a, n);
}

inline void sort_pairs_decreasing(std::vector<ScoredGain>& pairs) {
    sort_pairs_decreasing(pairs.data(), pairs.size());
}

// DCG of one row by sorting the labels scored at or above the k-th highest
// score (a partial selection first when k < C).
template <class Gain, class Score>
double dcg_by_sorting(const Score* s, const Gain* g, std::size_t n_labels, const double* discount, const double* cumsum,
                      std::size_t k, bool ignore_ties, std::vector<Score>& selection, std::vector<ScoredGain>& pairs,
                      std::vector<Ranked<Score>>& ranked) {
    Score kth = 0;  // with k < C, only labels scored >= the k-th highest score count
    if (k < n_labels) {
        selection.assign(s, s + n_labels);
        std::nth_element(selection.begin(), selection.begin() + (k - 1), selection.end(), std::greater<Score>());
        kth = selection[k - 1];
    }
    if (!ignore_ties) {
        // the selected (score, gain) pairs sorted by score; each tie group shares its discounts
        pairs.clear();
        for (std::size_t l = 0; l < n_labels; ++l)
            if (k == n_labels || s[l] >= kth) pairs.push_back({static_cast<double>(s[l]), static_cast<double>(g[l])});
        sort_pairs_decreasing(pairs);
        double dcg = 0;
        for (std::size_t a = 0; a < pairs.size() && a < k;) {
            std::size_t b = a;
            double sum = 0;
            for (; b < pairs.size() && pairs[b].score == pairs[a].score; ++b) sum += pairs[b].gain;
            const double group = cumsum[b - 1] - (a > 0 ? cumsum[a - 1] : 0.0);
            dcg += sum / static_cast<double>(b - a) * group;
            a = b;
        }
        return dcg;
    }
    ranked.clear();
    for (std::size_t l = 0; l < n_labels; ++l)
        if (k == n_labels || s[l] >= kth)
            ranked.push_back({s[l], static_cast<std::uint32_t>(l), static_cast<double>(g[l])});
    std::sort(ranked.begin(), ranked.end(), [](const Ranked<Score>& a, const Ranked<Score>& b) {
        return a.score > b.score || (a.score == b.score && a.label > b.label);
    });
    double dcg = 0;
    const std::size_t n = std::min(k, ranked.size());
    for (std::size_t r = 0; r < n; ++r) dcg += ranked[r].gain * discount[r];
    return dcg;
}

// The DCG of the gains sorted decreasingly (the ideal ranking), gains >= 0.
template <class Gain>
double ideal_dcg(const Gain* g, std::size_t n_labels, const double* discount, std::size_t k,
                 std::vector<double>& nonzero) {
    double dcg = 0;
    if constexpr (std::is_same_v<Gain, std::uint8_t>) {
        std::array<std::uint32_t, 256> count{};
        for (std::size_t l = 0; l < n_labels; ++l) ++count[g[l]];
        std::size_t rank = 0;
        for (int v = 255; v > 0 && rank < k; --v)
            for (std::uint32_t c = 0; c < count[v] && rank < k; ++c) dcg += v * discount[rank++];
        return dcg;
    } else {
        nonzero.clear();
        for (std::size_t l = 0; l < n_labels; ++l)
            if (g[l] != 0) nonzero.push_back(static_cast<double>(g[l]));
        const std::size_t n = std::min(k, nonzero.size());
        std::partial_sort(nonzero.begin(), nonzero.begin() + n, nonzero.end(), std::greater<double>());
        for (std::size_t r = 0; r < n; ++r) dcg += nonzero[r] * discount[r];
        return dcg;
    }
}

}  // namespace

template <class Score>
void label_ranking_rows(RowsView<Score> scores, RowsView<std::uint8_t> truth, std::size_t n_rows, std::size_t n_labels,
                        LabelRankingMetric metric, double* out, int n_threads, Control& control) {
    for_row_blocks(n_rows, n_labels, n_threads, control, [&](std::size_t begin, std::size_t end) {
        std::vector<Score> score_buffer, relevant;
        std::vector<std::uint8_t> truth_buffer;
        std::vector<std::uint32_t> above;
        for (std::size_t i = begin; i < end; ++i) {
            const Score* s = contiguous_row(scores, i, n_labels, score_buffer);
            const std::uint8_t* t = contiguous_row(truth, i, n_labels, truth_buffer);
            out[i] = label_ranking_row(s, t, n_labels, metric, relevant, above);
        }
    });
}

template <class Gain, class Score>
void dcg_rows(RowsView<Score> scores, RowsView<Gain> gains, std::size_t n_rows, std::size_t n_labels,
              const double* discount, const double* discount_cumsum, std::size_t k, bool ignore_ties, bool normalize,
              double* out, int n_threads, Control& control) {
    k = std::min(k, n_labels);
    for_row_blocks(n_rows, n_labels, n_threads, control, [&](std::size_t begin, std::size_t end) {
        std::vector<Score> score_buffer, selection;
        std::vector<Gain> gain_buffer;
        std::vector<Ranked<Score>> ranked;
        std::vector<ScoredGain> pairs;
        std::vector<double> nonzero;
        for (std::size_t i = begin; i < end; ++i) {
            const Score* s = contiguous_row(scores, i, n_labels, score_buffer);
            const Gain* g = contiguous_row(gains, i, n_labels, gain_buffer);
            std::size_t relevant = 0;
            for (std::size_t l = 0; l < n_labels; ++l) relevant += g[l] != 0;
            double dcg = 0;
            if (relevant == 0) {
                dcg = 0;
            } else if (relevant <= kCountingLabels) {
                dcg = dcg_by_counting(s, g, n_labels, discount, discount_cumsum, ignore_ties);
            } else {
                dcg =
                    dcg_by_sorting(s, g, n_labels, discount, discount_cumsum, k, ignore_ties, selection, pairs, ranked);
            }
            if (normalize) {
                const double ideal = relevant == 0 ? 0.0 : ideal_dcg(g, n_labels, discount, k, nonzero);
                dcg = ideal == 0 ? 0.0 : dcg / ideal;
            }
            out[i] = dcg;
        }
    });
}

template <class Score>
void top_k_hits(RowsView<Score> scores, const std::int64_t* labels, std::ptrdiff_t label_stride, std::size_t n_rows,
                std::size_t n_labels, std::size_t k, std::uint8_t* hits, int n_threads, Control& control) {
    for_row_blocks(n_rows, n_labels, n_threads, control, [&](std::size_t begin, std::size_t end) {
        std::vector<Score> score_buffer;
        for (std::size_t i = begin; i < end; ++i) {
            const Score* s = contiguous_row(scores, i, n_labels, score_buffer);
            const std::size_t y = static_cast<std::size_t>(labels[static_cast<std::ptrdiff_t>(i) * label_stride]);
            const Score x = s[y];
            std::size_t above = 0;  // labels ranked before y: higher, or tied and later
            for (std::size_t l = 0; l < y; ++l) above += s[l] > x;
            for (std::size_t l = y + 1; l < n_labels; ++l) above += s[l] >= x;
            hits[i] = above < k;
        }
    });
}

#define PAIRMETRICS_RANKING_ROWS(S)                                                                              \
    template void label_ranking_rows<S>(RowsView<S>, RowsView<std::uint8_t>, std::size_t, std::size_t,           \
                                        LabelRankingMetric, double*, int, Control&);                             \
    template void dcg_rows<std::uint8_t, S>(RowsView<S>, RowsView<std::uint8_t>, std::size_t, std::size_t,       \
                                            const double*, const double*, std::size_t, bool, bool, double*, int, \
                                            Control&);                                                           \
    template void dcg_rows<float, S>(RowsView<S>, RowsView<float>, std::size_t, std::size_t, const double*,      \
                                     const double*, std::size_t, bool, bool, double*, int, Control&);            \
    template void dcg_rows<double, S>(RowsView<S>, RowsView<double>, std::size_t, std::size_t, const double*,    \
                                      const double*, std::size_t, bool, bool, double*, int, Control&);           \
    template void top_k_hits<S>(RowsView<S>, const std::int64_t*, std::ptrdiff_t, std::size_t, std::size_t,      \
                                std::size_t, std::uint8_t*, int, Control&);
PAIRMETRICS_RANKING_ROWS(float)
PAIRMETRICS_RANKING_ROWS(double)
#undef PAIRMETRICS_RANKING_ROWS

}  // namespace pairmetrics
