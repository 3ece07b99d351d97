#include "ranking_curves.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "element_types.hpp"
#include "key_sort.hpp"
#include "parallel.hpp"

namespace pairmetrics {
namespace {

constexpr std::size_t kCheckEvery = std::size_t{1} << 16;

// Records of one class in an uninitialised buffer (no page is touched
// before it is written).
template <class R>
struct ClassRecords {
    std::unique_ptr<R[]> data;
    std::size_t size = 0;
    const R& operator[](std::size_t i) const { return data[i]; }
};

// Sorts records by key with the in-cache MSD radix sort (not stable: equal
// keys need no order here, only their counts and weight sums).
template <class R>
void sort_records(ClassRecords<R>& records, Control& control) {
    if (records.size < 2) return;
    std::unique_ptr<R[]> scratch(new R[records.size]);
    msd::RadixWorkspace workspace;
    Ticker tick(control, kCheckEvery, false);  // the sort is not part of the total
    msd::sort_segment(records.data.get(), scratch.get(), records.size, 0, workspace, tick);
}

// The keys of the positives and of the negatives, each sorted increasingly;
// records of zero weight are left out.
template <class R>
struct SortedClasses {
    ClassRecords<R> pos, neg;
};

template <class R, class Score>
SortedClasses<R> sort_classes(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                              std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                              std::size_t n, int n_threads, Control& control) {
    control.set_total(3 * static_cast<std::uint64_t>(n) + 1);
    SortedClasses<R> out;
    std::size_t n_pos = 0;
    for (std::size_t i = 0; i < n; ++i) n_pos += positive[i * positive_stride] != 0;
    // one slot of slack each: every record is written to both, and only the right count advances
    out.pos.data.reset(new R[n_pos + 1]);
    out.neg.data.reset(new R[n - n_pos + 1]);
    R* pos = out.pos.data.get();
    R* neg = out.neg.data.get();
    std::size_t p = 0, q = 0;
    for (std::size_t begin = 0; begin < n; begin += kCheckEvery) {
        const std::size_t end = std::min(n, begin + kCheckEvery);
        for (std::size_t i = begin; i < end; ++i) {
            const std::uint64_t key = order_key(scores[i * score_stride]);
            const std::size_t is_pos = positive[i * positive_stride] != 0;
            R record;
            if constexpr (std::is_same_v<R, std::uint64_t>) {
                record = key;
            } else {
                record = WeightedKey{key, weights[i * weight_stride]};
                if (record.weight == 0) continue;
            }
            pos[p] = record;
            neg[q] = record;
            p += is_pos;
            q += 1 - is_pos;
        }
        control.advance(end - begin);
    }
    out.pos.size = p;
    out.neg.size = q;
    parallel_for(
        2, n > (std::size_t{1} << 16) ? n_threads : 1,
        [&](std::size_t c) { sort_records(c == 0 ? out.pos : out.neg, control); }, control);
    return out;
}

// Calls emit(key, tp, fp) for each distinct key from the highest down, with
// the cumulative weights (counts) of positives and negatives at or above it.
template <class R, class Emit>
void walk_thresholds(const SortedClasses<R>& classes, Control& control, Emit&& emit) {
    using Acc = std::conditional_t<std::is_same_v<R, std::uint64_t>, std::uint64_t, double>;
    const ClassRecords<R>& pos = classes.pos;
    const ClassRecords<R>& neg = classes.neg;
    std::size_t p = pos.size, q = neg.size;
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

// Whether the middle point b of three neighbours stays (numpy's float64
// differences, as scikit-learn computes them).
inline bool middle_kept(CurveDrop drop, const double (&a)[2], const double (&b)[2], const double (&c)[2]) {
    if (drop == CurveDrop::roc_corners)
        return ((c[0] - b[0]) - (b[0] - a[0])) != 0 || ((c[1] - b[1]) - (b[1] - a[1])) != 0;
    if (drop == CurveDrop::tps_changes) return (b[1] - a[1]) != 0 || (c[1] - b[1]) != 0;
    return true;
}

template <class R, class Score>
BinaryCurve curve_run(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                      std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                      std::size_t n, CurveDrop drop, int n_threads, Control& control) {
    const SortedClasses<R> classes =
        sort_classes<R>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, n_threads, control);
    BinaryCurve curve;
    const std::size_t most = classes.pos.size + classes.neg.size;  // reserved, touched only as filled
    curve.keys.reserve(most);
    curve.tps.reserve(most);
    curve.fps.reserve(most);
    auto keep = [&](std::uint64_t key, const double (&point)[2]) {
        curve.keys.push_back(key);
        curve.fps.push_back(point[0]);
        curve.tps.push_back(point[1]);
    };
    // points (fp, tp) of the two previous thresholds, the last one not yet decided
    double before[2] = {0, 0}, last[2] = {0, 0};
    std::uint64_t last_key = 0;
    std::size_t seen = 0;
    walk_thresholds(classes, control, [&](std::uint64_t key, auto tp, auto fp) {
        const double point[2] = {static_cast<double>(fp), static_cast<double>(tp)};
        if (seen == 0) {
            keep(key, point);
        } else {
            if (seen >= 2 && middle_kept(drop, before, last, point)) keep(last_key, last);
            before[0] = last[0];
            before[1] = last[1];
        }
        last[0] = point[0];
        last[1] = point[1];
        last_key = key;
        ++seen;
    });
    if (seen >= 2) keep(last_key, last);
    return curve;
}

template <class R, class Score>
AveragePrecision average_precision_run(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                                       std::ptrdiff_t positive_stride, const double* weights,
                                       std::ptrdiff_t weight_stride, std::size_t n, int n_threads, Control& control) {
    const SortedClasses<R> classes =
        sort_classes<R>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, n_threads, control);
    // sum over thresholds of (tp - previous tp) * precision, divided by the positive total at the end
    // (counts below 2**53 are exact in double; the terms are summed in long double)
    long double sum = 0;
    double previous_tp = 0, last_tp = 0, last_fp = 0;
    walk_thresholds(classes, control, [&](std::uint64_t, auto tp, auto fp) {
        const double tp_d = static_cast<double>(tp), fp_d = static_cast<double>(fp);
        const double predicted = tp_d + fp_d;
        if (tp_d != previous_tp && predicted != 0) sum += (tp_d - previous_tp) * (tp_d / predicted);
        previous_tp = tp_d;
        last_tp = tp_d;
        last_fp = fp_d;
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
                         std::size_t n, CurveDrop drop, int n_threads, Control& control) {
    if (weights == nullptr)
        return curve_run<std::uint64_t>(scores, score_stride, positive, positive_stride, weights, weight_stride, n,
                                        drop, n_threads, control);
    return curve_run<WeightedKey>(scores, score_stride, positive, positive_stride, weights, weight_stride, n, drop,
                                  n_threads, control);
}

template <class Score>
AveragePrecision average_precision(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                                   std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                                   std::size_t n, int n_threads, Control& control) {
    if (weights == nullptr)
        return average_precision_run<std::uint64_t>(scores, score_stride, positive, positive_stride, weights,
                                                    weight_stride, n, n_threads, control);
    return average_precision_run<WeightedKey>(scores, score_stride, positive, positive_stride, weights, weight_stride,
                                              n, n_threads, control);
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

#define PAIRMETRICS_RANKING_CURVES(T)                                                                                  \
    template BinaryCurve binary_curve<T>(const T*, std::ptrdiff_t, const std::uint8_t*, std::ptrdiff_t, const double*, \
                                         std::ptrdiff_t, std::size_t, CurveDrop, int, Control&);                       \
    template AveragePrecision average_precision<T>(const T*, std::ptrdiff_t, const std::uint8_t*, std::ptrdiff_t,      \
                                                   const double*, std::ptrdiff_t, std::size_t, int, Control&);         \
    template T value_of_key<T>(std::uint64_t);
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_RANKING_CURVES)
#undef PAIRMETRICS_RANKING_CURVES

}  // namespace pairmetrics
