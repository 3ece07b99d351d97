#include "ranking_curves.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

#include "key_sort.hpp"
#include "parallel.hpp"

namespace pairmetrics {
namespace {

struct WeightedKey {
    std::uint64_t key;
    double weight;
};

inline double weight_of(std::uint64_t) {
    return 1.0;
}
inline double weight_of(const WeightedKey& r) {
    return r.weight;
}

constexpr std::size_t kCheckEvery = std::size_t{1} << 16;

// The keys of the positives and of the negatives, each sorted increasingly;
// records of zero weight are left out.
template <class R>
struct SortedClasses {
    std::vector<R> pos, neg;
};

template <class R, class Score>
SortedClasses<R> sort_classes(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                              std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                              std::size_t n, int n_threads, Control& control) {
    control.set_total(3 * static_cast<std::uint64_t>(n) + 1);
    SortedClasses<R> out;
    std::size_t n_pos = 0;
    for (std::size_t i = 0; i < n; ++i) n_pos += positive[i * positive_stride] != 0;
    out.pos.reserve(n_pos);
    out.neg.reserve(n - n_pos);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t key = order_key(scores[i * score_stride]);
        const bool is_pos = positive[i * positive_stride] != 0;
        if constexpr (std::is_same_v<R, std::uint64_t>) {
            (is_pos ? out.pos : out.neg).push_back(key);
        } else {
            const double w = weights[i * weight_stride];
            if (w != 0) (is_pos ? out.pos : out.neg).push_back(WeightedKey{key, w});
        }
        if ((i + 1) % kCheckEvery == 0) control.advance(kCheckEvery);
    }
    parallel_for(
        2, n > (std::size_t{1} << 16) ? n_threads : 1,
        [&](std::size_t c) {
            std::vector<R>& part = c == 0 ? out.pos : out.neg;
            sort_by_key(part.data(), part.size(), control);
        },
        &control);
    return out;
}

// Calls emit(key, tp, fp) for each distinct key from the highest down, with
// the cumulative weights (counts) of positives and negatives at or above it.
template <class R, class Emit>
void walk_thresholds(const SortedClasses<R>& classes, Control& control, Emit&& emit) {
    using Acc = std::conditional_t<std::is_same_v<R, std::uint64_t>, std::uint64_t, double>;
    const std::vector<R>& pos = classes.pos;
    const std::vector<R>& neg = classes.neg;
    std::size_t p = pos.size(), q = neg.size();
    Acc tp = 0, fp = 0;
    std::size_t steps = 0;
    while (p > 0 || q > 0) {
        std::uint64_t key = 0;
        if (p > 0) key = key_of(pos[p - 1]);
        if (q > 0 && (p == 0 || key_of(neg[q - 1]) > key)) key = key_of(neg[q - 1]);
        for (; p > 0 && key_of(pos[p - 1]) == key; --p) tp += static_cast<Acc>(weight_of(pos[p - 1]));
        for (; q > 0 && key_of(neg[q - 1]) == key; --q) fp += static_cast<Acc>(weight_of(neg[q - 1]));
        emit(key, tp, fp);
        if (++steps % kCheckEvery == 0) control.check();
    }
}

template <class R, class Score>
BinaryCurve curve_run(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                      std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                      std::size_t n, int n_threads, Control& control) {
    const SortedClasses<R> classes =
        sort_classes<R>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, n_threads, control);
    BinaryCurve curve;
    walk_thresholds(classes, control, [&](std::uint64_t key, auto tp, auto fp) {
        curve.keys.push_back(key);
        curve.tps.push_back(static_cast<double>(tp));
        curve.fps.push_back(static_cast<double>(fp));
    });
    return curve;
}

template <class R, class Score>
AveragePrecision average_precision_run(const Score* scores, std::ptrdiff_t score_stride,
                                       const std::uint8_t* positive, std::ptrdiff_t positive_stride,
                                       const double* weights, std::ptrdiff_t weight_stride, std::size_t n,
                                       int n_threads, Control& control) {
    const SortedClasses<R> classes =
        sort_classes<R>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, n_threads, control);
    // sum over thresholds of (tp - previous tp) * precision, divided by the positive total at the end
    long double sum = 0;
    long double previous_tp = 0, last_tp = 0, last_fp = 0;
    walk_thresholds(classes, control, [&](std::uint64_t, auto tp, auto fp) {
        const long double tp_l = static_cast<long double>(tp), fp_l = static_cast<long double>(fp);
        const long double predicted = tp_l + fp_l;
        if (predicted != 0) sum += (tp_l - previous_tp) * (tp_l / predicted);
        previous_tp = tp_l;
        last_tp = tp_l;
        last_fp = fp_l;
    });
    AveragePrecision out;
    out.positive = static_cast<double>(last_tp);
    out.negative = static_cast<double>(last_fp);
    out.value = last_tp != 0 ? static_cast<double>(sum / last_tp) : std::numeric_limits<double>::quiet_NaN();
    return out;
}

}  // namespace

template <class Score>
BinaryCurve binary_curve(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                         std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                         std::size_t n, int n_threads, Control& control) {
    if (weights == nullptr)
        return curve_run<std::uint64_t>(scores, score_stride, positive, positive_stride, weights, weight_stride, n,
                                        n_threads, control);
    return curve_run<WeightedKey>(scores, score_stride, positive, positive_stride, weights, weight_stride, n,
                                  n_threads, control);
}

template <class Score>
AveragePrecision average_precision(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                                   std::ptrdiff_t positive_stride, const double* weights,
                                   std::ptrdiff_t weight_stride, std::size_t n, int n_threads, Control& control) {
    if (weights == nullptr)
        return average_precision_run<std::uint64_t>(scores, score_stride, positive, positive_stride, weights,
                                                    weight_stride, n, n_threads, control);
    return average_precision_run<WeightedKey>(scores, score_stride, positive, positive_stride, weights,
                                              weight_stride, n, n_threads, control);
}

template <class T>
T value_of_key(std::uint64_t key) {
    if constexpr (std::is_same_v<T, bool>) {
        return key != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(double_of_key(key));
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63)));
    } else {
        return static_cast<T>(key);
    }
}

#define PAIRMETRICS_RANKING_CURVES(T)                                                                                \
    template BinaryCurve binary_curve<T>(const T*, std::ptrdiff_t, const std::uint8_t*, std::ptrdiff_t,              \
                                         const double*, std::ptrdiff_t, std::size_t, int, Control&);                 \
    template AveragePrecision average_precision<T>(const T*, std::ptrdiff_t, const std::uint8_t*, std::ptrdiff_t,    \
                                                   const double*, std::ptrdiff_t, std::size_t, int, Control&);       \
    template T value_of_key<T>(std::uint64_t);
PAIRMETRICS_RANKING_CURVES(bool)
PAIRMETRICS_RANKING_CURVES(std::int8_t)
PAIRMETRICS_RANKING_CURVES(std::int16_t)
PAIRMETRICS_RANKING_CURVES(std::int32_t)
PAIRMETRICS_RANKING_CURVES(std::int64_t)
PAIRMETRICS_RANKING_CURVES(std::uint8_t)
PAIRMETRICS_RANKING_CURVES(std::uint16_t)
PAIRMETRICS_RANKING_CURVES(std::uint32_t)
PAIRMETRICS_RANKING_CURVES(std::uint64_t)
PAIRMETRICS_RANKING_CURVES(float)
PAIRMETRICS_RANKING_CURVES(double)
#undef PAIRMETRICS_RANKING_CURVES

}  // namespace pairmetrics
