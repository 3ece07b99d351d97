#include "roc_auc.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "element_types.hpp"
#include "key_sort.hpp"
#include "parallel.hpp"

namespace pairmetrics {
namespace {

constexpr std::size_t kCheckEvery = std::size_t{1} << 16;

// Full area: for each run of equal negative keys, the positive weight below
// it and tied with it. Unweighted counts are exact integers.
template <class R>
double full_area(const std::vector<R>& pos, const std::vector<R>& neg, double total_pos, double total_neg,
                 Control& control) {
    using Acc = std::conditional_t<std::is_same_v<R, std::uint64_t>, std::uint64_t, long double>;
    Acc below_sum = 0, tied_sum = 0;  // sum over negatives of positive weight below / tied
    Acc below = 0;                    // positive weight with key below the current negative run
    std::size_t p = 0;
    for (std::size_t i = 0; i < neg.size();) {
        const std::uint64_t key = key_of(neg[i]);
        Acc run = 0;
        std::size_t j = i;
        for (; j < neg.size() && key_of(neg[j]) == key; ++j) run += static_cast<Acc>(weight_of(neg[j]));
        for (; p < pos.size() && key_of(pos[p]) < key; ++p) below += static_cast<Acc>(weight_of(pos[p]));
        Acc equal = 0;
        for (; p < pos.size() && key_of(pos[p]) == key; ++p) equal += static_cast<Acc>(weight_of(pos[p]));
        below_sum += run * below;
        tied_sum += run * equal;
        below += equal;
        if ((i / kCheckEvery) != (j / kCheckEvery)) control.check();
        i = j;
    }
    // Correct pairs = all - below - tied; area = (correct + tied / 2) / all.
    if constexpr (std::is_same_v<Acc, std::uint64_t>) {
        const std::uint64_t all = static_cast<std::uint64_t>(pos.size()) * neg.size();
        const std::uint64_t correct = all - below_sum - tied_sum;
        return (static_cast<double>(correct) + 0.5 * static_cast<double>(tied_sum)) / static_cast<double>(all);
    } else {
        const long double all = static_cast<long double>(total_pos) * total_neg;
        return static_cast<double>((all - below_sum - 0.5L * tied_sum) / all);
    }
}

// Partial area up to max_fpr, walking thresholds from the highest score down
// as a ROC curve does: after each distinct score one point (fpr, tpr), the
// curve starting at (0, 0); the last segment is cut at max_fpr by linear
// interpolation.
template <class R>
double partial_area(const std::vector<R>& pos, const std::vector<R>& neg, double total_pos, double total_neg,
                    double max_fpr, Control& control) {
    std::size_t p = pos.size(), q = neg.size();
    long double fps = 0, tps = 0;
    double x0 = 0, y0 = 0, area = 0;
    std::size_t steps = 0;
    while (p > 0 || q > 0) {
        std::uint64_t key = 0;
        if (p > 0) key = key_of(pos[p - 1]);
        if (q > 0 && (p == 0 || key_of(neg[q - 1]) > key)) key = key_of(neg[q - 1]);
        for (; p > 0 && key_of(pos[p - 1]) == key; --p) tps += weight_of(pos[p - 1]);
        for (; q > 0 && key_of(neg[q - 1]) == key; --q) fps += weight_of(neg[q - 1]);
        const double x1 = static_cast<double>(fps) / total_neg, y1 = static_cast<double>(tps) / total_pos;
        if (x1 > max_fpr) {
            const double y = (y1 - y0) / (x1 - x0) * (max_fpr - x0) + y0;
            return area + (max_fpr - x0) * (y + y0) / 2;
        }
        area += (x1 - x0) * (y1 + y0) / 2;
        x0 = x1;
        y0 = y1;
        if (++steps % kCheckEvery == 0) control.check();
    }
    return area;  // not reached for max_fpr < 1 (the curve ends at fpr = 1)
}

template <class R, class Score>
RocAuc run(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
           std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride, std::size_t n,
           double max_fpr, int n_threads, Control& control) {
    control.set_total(3 * static_cast<std::uint64_t>(n) + 1);
    std::vector<R> pos, neg;
    std::size_t n_pos = 0;
    for (std::size_t i = 0; i < n; ++i) n_pos += positive[i * positive_stride] != 0;
    pos.reserve(n_pos);
    neg.reserve(n - n_pos);
    RocAuc out;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t key = order_key(scores[i * score_stride]);
        const bool is_pos = positive[i * positive_stride] != 0;
        if constexpr (std::is_same_v<R, std::uint64_t>) {
            (is_pos ? pos : neg).push_back(key);
        } else {
            const double w = weights[i * weight_stride];
            if (w == 0) continue;
            (is_pos ? pos : neg).push_back(WeightedKey{key, w});
            (is_pos ? out.positive : out.negative) += w;
        }
        if ((i + 1) % kCheckEvery == 0) control.advance(kCheckEvery);
    }
    if constexpr (std::is_same_v<R, std::uint64_t>) {
        out.positive = static_cast<double>(pos.size());
        out.negative = static_cast<double>(neg.size());
    }
    if (!(out.positive > 0) || !(out.negative > 0)) {
        out.area = std::numeric_limits<double>::quiet_NaN();
        return out;
    }
    // One (single-threaded, radix) sort per class, the two side by side.
    parallel_for(
        2, n > (std::size_t{1} << 16) ? n_threads : 1,
        [&](std::size_t c) {
            std::vector<R>& part = c == 0 ? pos : neg;
            sort_by_key(part.data(), part.size(), control);
        },
        control);
    out.area = max_fpr < 1 ? partial_area(pos, neg, out.positive, out.negative, max_fpr, control)
                           : full_area(pos, neg, out.positive, out.negative, control);
    return out;
}

}  // namespace

template <class Score>
RocAuc roc_auc(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
               std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride, std::size_t n,
               double max_fpr, int n_threads, Control& control) {
    if (weights == nullptr)
        return run<std::uint64_t>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, max_fpr,
                                  n_threads, control);
    return run<WeightedKey>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, max_fpr,
                            n_threads, control);
}

#define PAIRMETRICS_ROC_AUC(T)                                                                               \
    template RocAuc roc_auc<T>(const T*, std::ptrdiff_t, const std::uint8_t*, std::ptrdiff_t, const double*, \
                               std::ptrdiff_t, std::size_t, double, int, Control&);
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_ROC_AUC)
#undef PAIRMETRICS_ROC_AUC

}  // namespace pairmetrics
