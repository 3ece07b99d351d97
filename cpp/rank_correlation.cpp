#include "rank_correlation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "element_types.hpp"
#include "key_sort.hpp"
#include "paired.hpp"
#include "paired_buffer.hpp"
#include "paired_detail.hpp"
#include "paired_fenwick.hpp"
#include "paired_inversions.hpp"
#include "parallel.hpp"

namespace pairmetrics {

namespace {

using paired_detail::Buffer;
using paired_detail::read;

struct KeyIndex {
    std::uint64_t key;
    std::uint64_t index;
};

constexpr std::size_t kBlock = std::size_t{1} << 16;

// Records {order key of value i, i} sorted by key (equal keys in any order:
// the in-cache MSD sort); returns where they lie (a).
KeyIndex* sort_with_index(const KeyColumn& values, std::size_t n, Buffer<KeyIndex>& a, Buffer<KeyIndex>& scratch,
                          Control& control) {
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = {values(i), i};
        if ((i & (kBlock - 1)) == 0) control.check();
    }
    msd::RadixWorkspace workspace;
    Ticker tick(control);
    msd::sort_segment(a.data(), scratch.data(), n, 0, workspace, tick);
    return a.data();
}

// Calls group(begin, end) for each run of equal keys of sorted records.
template <class R, class Same, class Group>
void for_each_run(const R* sorted, std::size_t n, Same&& same, Group&& group) {
    std::size_t begin = 0;
    for (std::size_t i = 1; i <= n; ++i) {
        if (i == n || !same(sorted[begin], sorted[i])) {
            group(begin, i);
            begin = i;
        }
    }
}

bool same_key(const KeyIndex& a, const KeyIndex& b) {
    return a.key == b.key;
}

// Inversions (p before q with label_p > label_q) of labels in [0, distinct).
std::uint64_t count_rank_inversions(Buffer<std::uint64_t>& labels, std::size_t distinct, int n_threads,
                                    Control& control) {
    using namespace paired_detail;
    const IntegerGap gap{1};
    if (distinct <= kDefaultFewLabels) {  // Fenwick trees over few ranks, in cache
        LabelRanks<std::uint64_t> ranks;
        ranks.values.resize(distinct);
        std::iota(ranks.values.begin(), ranks.values.end(), std::uint64_t{0});
        ranks.rank = Buffer<std::uint32_t>(labels.size());
        for (std::size_t i = 0; i < labels.size(); ++i) ranks.rank[i] = static_cast<std::uint32_t>(labels[i]);
        const Buffer<std::uint64_t> no_index;
        return count_with_few_labels<false>(ranks, no_index, gap, nullptr, nullptr, n_threads, control).first;
    }
    Buffer<std::uint64_t> no_index;
    return count_inversions<false>(labels, no_index, nullptr, gap, SimdLevel::automatic, n_threads, control);
}

// Most cells of the contingency table of the few-values path (32 MiB of counts).
constexpr std::size_t kTableCells = std::size_t{1} << 22;

// The dense ranks of a variable with at most kDefaultFewLabels distinct values (else empty values).
paired_detail::LabelRanks<std::uint64_t> few_value_ranks(const KeyColumn& values, std::size_t n, Control& control) {
    Buffer<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = values(i);
        if ((i & (kBlock - 1)) == 0) control.check();
    }
    return paired_detail::rank_few_labels(keys, kDefaultFewLabels, control);
}

// Kendall's counts from the contingency table of two variables of few
// values: O(n + rows * cols), no sort of the samples.
KendallCounts kendall_from_table(const paired_detail::LabelRanks<std::uint64_t>& x,
                                 const paired_detail::LabelRanks<std::uint64_t>& y, std::size_t n, Control& control) {
    const std::size_t rows = x.values.size(), cols = y.values.size();
    std::vector<std::uint64_t> table(rows * cols, 0);
    for (std::size_t i = 0; i < n; ++i) {
        ++table[std::size_t{x.rank[i]} * cols + y.rank[i]];
        if ((i & (kBlock - 1)) == 0) control.check();
    }
    KendallCounts counts;
    std::vector<std::uint64_t> above(cols, 0);  // above[j]: the rows before this one, in column j
    for (std::size_t r = 0; r < rows; ++r) {
        const std::uint64_t* row = &table[r * cols];
        std::uint64_t row_sum = 0, right = 0;  // right: rows above, columns after j
        for (std::size_t j = cols; j-- > 0;) {
            counts.discordant += row[j] * right;  // an earlier row (smaller x) with a larger y
            right += above[j];
            row_sum += row[j];
            counts.joint_pairs += row[j] * (row[j] - (row[j] > 0)) / 2;
        }
        for (std::size_t j = 0; j < cols; ++j) above[j] += row[j];
        counts.x.add(row_sum);
        control.check();
    }
    for (std::size_t j = 0; j < cols; ++j) counts.y.add(above[j]);
    return counts;
}

}  // namespace

KendallCounts kendall_counts(const KeyColumn& x, const KeyColumn& y, std::size_t n, int n_threads, Control& control) {
    KendallCounts counts;
    if (n < 2) {
        if (n == 1) counts.x.add(1), counts.y.add(1);
        return counts;
    }
    {
        auto x_ranks = few_value_ranks(x, n, control);
        if (!x_ranks.values.empty()) {
            auto y_ranks = few_value_ranks(y, n, control);
            if (!y_ranks.values.empty() && x_ranks.values.size() * y_ranks.values.size() <= kTableCells)
                return kendall_from_table(x_ranks, y_ranks, n, control);
        }
    }
    Buffer<KeyIndex> a(n), scratch(n);
    KeyIndex* by_y = sort_with_index(y, n, a, scratch, control);
    // In y order, each record becomes {key of x, dense rank of y} in place.
    std::uint64_t rank = 0;
    for_each_run(by_y, n, same_key, [&](std::size_t begin, std::size_t end) {
        counts.y.add(end - begin);
        for (std::size_t p = begin; p < end; ++p) by_y[p] = {x(by_y[p].index), rank};
        ++rank;
    });
    control.check();
    // Stable: tied x keep their y ranks ascending, so they make no inversion.
    KeyIndex* other = by_y == a.data() ? scratch.data() : a.data();
    const KeyIndex* by_x = radix_sort_by_key(by_y, other, n, control);
    for_each_run(by_x, n, same_key, [&](std::size_t begin, std::size_t end) {
        counts.x.add(end - begin);
        for_each_run(
            by_x + begin, end - begin, [](const KeyIndex& p, const KeyIndex& q) { return p.index == q.index; },
            [&](std::size_t b, std::size_t e) { counts.joint_pairs += (e - b) * (e - b - 1) / 2; });
    });
    Buffer<std::uint64_t> labels(n);
    for (std::size_t p = 0; p < n; ++p) labels[p] = by_x[p].index;
    a.release();
    scratch.release();
    counts.discordant = count_rank_inversions(labels, counts.y.distinct, n_threads, control);
    return counts;
}

TieSums dense_ranks(const KeyColumn& values, std::size_t n, std::uint32_t* ranks, Control& control) {
    TieSums ties;
    Buffer<KeyIndex> a(n), scratch(n);
    const KeyIndex* sorted = sort_with_index(values, n, a, scratch, control);
    std::uint32_t rank = 0;
    for_each_run(sorted, n, same_key, [&](std::size_t begin, std::size_t end) {
        ties.add(end - begin);
        for (std::size_t p = begin; p < end; ++p) ranks[sorted[p].index] = rank;
        ++rank;
    });
    return ties;
}

TieSums doubled_average_ranks(const KeyColumn& values, std::size_t n, std::uint64_t* doubled, Control& control) {
    TieSums ties;
    Buffer<KeyIndex> a(n), scratch(n);
    const KeyIndex* sorted = sort_with_index(values, n, a, scratch, control);
    // Positions begin..end-1 (0-based) share the rank (begin + 1 + end) / 2.
    for_each_run(sorted, n, same_key, [&](std::size_t begin, std::size_t end) {
        ties.add(end - begin);
        for (std::size_t p = begin; p < end; ++p) doubled[sorted[p].index] = begin + end + 1;
    });
    return ties;
}

SpearmanSums spearman_sums(const KeyColumn& x, const KeyColumn& y, std::size_t n, int n_threads, Control& control) {
    SpearmanSums sums;
    Buffer<std::uint64_t> ax(n), ay(n);
    parallel_for(
        2, n_threads >= 2 && n >= kBlock ? 2 : 1,
        [&](std::size_t which) {
            if (which == 0)
                sums.x = doubled_average_ranks(x, n, ax.data(), control);
            else
                sums.y = doubled_average_ranks(y, n, ay.data(), control);
        },
        control);
    for (std::size_t begin = 0; begin < n; begin += kBlock) {
        const std::size_t end = std::min(n, begin + kBlock);
        i128 block = 0;
        for (std::size_t i = begin; i < end; ++i) block += i128{ax[i]} * ay[i];
        sums.cross += block;
        control.check();
    }
    return sums;
}

namespace {

// Accumulates the weights of one group of tied elements: every pair inside
// the group weighs w_i + w_j (additive) or w_i w_j.
struct TieWeight {
    bool additive;
    double total = 0;
    double sum = 0, square_sum = 0;
    std::size_t size = 0;
    void add(double w) {
        sum += w;
        square_sum += w * w;
        ++size;
    }
    void close() {
        if (size) total += additive ? sum * static_cast<double>(size - 1) : (sum * sum - square_sum) / 2;
        sum = square_sum = 0;
        size = 0;
    }
};

struct KeyWeight {
    std::uint64_t key;
    double weight;
};

// Sorts by key (stable merge sort) and returns the total weight of the
// inverted pairs: each pair p before q with key_p > key_q weighs w_p + w_q
// (additive) or w_p w_q.
double weighted_inversions(Buffer<KeyWeight>& items, bool additive, Control& control) {
    const std::size_t n = items.size();
    Buffer<KeyWeight> other(n);
    KeyWeight* src = items.data();
    KeyWeight* dst = other.data();
    double exchanges = 0;
    for (std::size_t width = 1; width < n; width *= 2) {
        for (std::size_t lo = 0; lo < n; lo += 2 * width) {
            const std::size_t mid = std::min(n, lo + width), hi = std::min(n, lo + 2 * width);
            std::size_t i = lo, j = mid, out = lo;
            if (mid == hi || src[mid - 1].key <= src[mid].key) {  // already in order
                std::copy(src + lo, src + hi, dst + lo);
                continue;
            }
            double left_weight = 0;  // of the left run's elements not yet merged
            for (std::size_t p = lo; p < mid; ++p) left_weight += src[p].weight;
            while (i < mid && j < hi) {
                if (src[i].key <= src[j].key) {
                    left_weight -= src[i].weight;
                    dst[out++] = src[i++];
                } else {
                    const double w = src[j].weight;
                    exchanges += additive ? w * static_cast<double>(mid - i) + left_weight : w * left_weight;
                    dst[out++] = src[j++];
                }
            }
            std::copy(src + i, src + mid, dst + out);
            out += mid - i;
            std::copy(src + j, src + hi, dst + out);
            control.advance(hi - lo);
        }
        std::swap(src, dst);
    }
    if (src != items.data()) std::copy(src, src + n, items.data());
    return exchanges;
}

}  // namespace

double weighted_tau(const KeyColumn& x, const KeyColumn& y, std::size_t n, const double* element_weights,
                    const double* rank_weights, bool additive, Control& control) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (n == 0) return nan;
    Buffer<KeyIndex> a(n), scratch(n);
    KeyIndex* by_y = sort_with_index(y, n, a, scratch, control);
    for (std::size_t p = 0; p < n; ++p) by_y[p].key = x(by_y[p].index);
    KeyIndex* other = by_y == a.data() ? scratch.data() : a.data();
    const KeyIndex* sorted = radix_sort_by_key(by_y, other, n, control);  // by x, then y, ascending
    Buffer<KeyWeight> items(n);
    TieWeight joint{additive}, x_ties{additive}, all{additive};
    std::size_t x_groups = 0;
    for (std::size_t p = 0; p < n; ++p) {
        const std::size_t i = sorted[p].index;
        const std::uint64_t y_key = y(i);
        const std::size_t rank = n - 1 - p;
        const double w = element_weights ? element_weights[i]
                         : rank_weights  ? rank_weights[rank]
                                         : 1.0 / (static_cast<double>(rank) + 1.0);
        if (p > 0 && sorted[p].key != sorted[p - 1].key) {
            x_ties.close();
            ++x_groups;
        }
        if (p > 0 && (sorted[p].key != sorted[p - 1].key || y_key != items[p - 1].key)) joint.close();
        x_ties.add(w);
        joint.add(w);
        all.add(w);
        items[p] = {y_key, w};
    }
    x_ties.close();
    joint.close();
    a.release();
    scratch.release();
    if (x_groups == 0) return nan;
    const double exchanges = weighted_inversions(items, additive, control);
    TieWeight y_ties{additive};
    std::size_t y_groups = 0;
    for (std::size_t p = 0; p < n; ++p) {
        if (p > 0 && items[p].key != items[p - 1].key) {
            y_ties.close();
            ++y_groups;
        }
        y_ties.add(items[p].weight);
    }
    y_ties.close();
    if (y_groups == 0) return nan;
    all.close();
    const double total = all.total, u = x_ties.total, v = y_ties.total, t = joint.total;
    const double tau = ((total - (v + u - t)) - 2.0 * exchanges) / std::sqrt(total - u) / std::sqrt(total - v);
    return std::min(1.0, std::max(-1.0, tau));
}

std::vector<double> kendall_null_pmf(std::uint64_t n, std::uint64_t c, Control& control) {
    // P_j(k) = (1/j) sum_{i=0}^{min(k, j-1)} P_{j-1}(k - i): a sliding window over the previous row.
    std::vector<double> pmf(c + 1, 0.0), previous(c + 1);
    pmf[0] = 1.0;
    for (std::uint64_t j = 2; j <= n; ++j) {
        pmf.swap(previous);
        double window = 0;
        const double scale = 1.0 / static_cast<double>(j);
        for (std::uint64_t k = 0; k <= c; ++k) {
            window += previous[k];
            if (k >= j) window -= previous[k - j];
            pmf[k] = window * scale;
        }
        control.advance(c + 1);
    }
    return pmf;
}

namespace {
template <class T>
std::uint64_t key_of_element(const void* data, std::ptrdiff_t stride, std::size_t i) {
    return order_key(read(static_cast<const T*>(data), stride, i));
}
}  // namespace

template <class T>
KeyColumn KeyColumn::of(const T* values, std::ptrdiff_t stride) {
    return KeyColumn{values, stride, &key_of_element<T>};
}
#define PAIRMETRICS_KEY_COLUMN(T) template KeyColumn KeyColumn::of<T>(const T*, std::ptrdiff_t);
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_KEY_COLUMN)
#undef PAIRMETRICS_KEY_COLUMN

}  // namespace pairmetrics
