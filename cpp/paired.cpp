// The paired kernel's driver: records sorted by score, runs of tied scores,
// then the per-class, Fenwick or merge path (paired_classes, paired_fenwick,
// paired_inversions) for the counts.
#include "paired.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "paired_buffer.hpp"
#include "paired_classes.hpp"
#include "paired_detail.hpp"
#include "paired_fenwick.hpp"
#include "paired_input.hpp"
#include "paired_inversions.hpp"
#include "paired_record_sort.hpp"

namespace pairmetrics {
namespace {

using namespace paired_detail;

// Orders a run of records with equal scores by label, descending (so every
// rankable tied pair is counted as an inversion, whatever the input order),
// and returns how many of its pairs are rankable.
template <bool Track, class Gap>
std::uint64_t order_tied_run(Record<Track, typename Gap::Label>* run, std::size_t len, const Gap& gap,
                             std::uint64_t* tied, Ticker& tick) {
    sort_by_label_descending(run, len, tick);
    std::uint64_t total = 0;
    // Rankable partners of q before it: a prefix [0, p) of the run.
    for (std::size_t q = 0, p = 0; q < len; ++q) {
        while (p < q && gap.far(run[p].label, run[q].label)) ++p;
        total += p;
        if constexpr (Track) tied[run[q].index] += p;
    }
    if constexpr (Track) {
        // ... and after it: a suffix [s, len).
        for (std::size_t q = len, s = len; q-- > 0;) {
            while (s > q + 1 && gap.far(run[q].label, run[s - 1].label)) --s;
            tied[run[q].index] += len - s;
        }
    }
    tick(2 * len);
    return total;
}

// Copies the labels (and input positions) of the records, sorted by score,
// into `sequence` (and `index`), each run of equal scores ordered by
// order_tied_run; returns how many rankable pairs have tied scores.
template <bool Track, class Gap>
std::uint64_t labels_in_score_order(Buffer<Record<Track, typename Gap::Label>>& records, const Gap& gap,
                                    std::uint64_t* tied, Buffer<typename Gap::Label>& sequence,
                                    Buffer<std::uint64_t>& index, Control& control) {
    Ticker tick(control);
    std::uint64_t total = 0;
    const std::size_t n = records.size();
    for (std::size_t begin = 0, end; begin < n; begin = end) {
        // A stretch without ties (at most kTickWork long), then the run of
        // equal scores that stopped it, if any.
        const std::size_t limit = std::min(n, begin + kTickWork);
        for (end = begin + 1; end < limit && records[end].key != records[end - 1].key; ++end) {
        }
        if (end < n && records[end].key == records[end - 1].key) {
            const std::size_t run = end - 1;
            for (++end; end < n && records[end].key == records[run].key; ++end) {
            }
            total += order_tied_run(records.data() + run, end - run, gap, tied, tick);
        }
        for (std::size_t piece = begin; piece < end; piece += kTickWork) {
            for (std::size_t i = piece; i < std::min(end, piece + kTickWork); ++i) {
                sequence[i] = records[i].label;
                if constexpr (Track) index[i] = records[i].index;
            }
            tick(std::min(end - piece, kTickWork));
        }
    }
    return total;
}

// Everything after loading: the records hold score keys, labels (and input
// positions when tracking), sorted by score key.
template <bool Track, class Gap>
PairedCounts count_pairs(Buffer<Record<Track, typename Gap::Label>>& records, const Gap& gap,
                         PairedPerSample* per_sample, int n_threads, std::size_t few_labels, SimdLevel simd,
                         Control& control) {
    using L = typename Gap::Label;
    const std::size_t n = records.size();

    Buffer<std::uint64_t> inverted(Track ? n : 0);
    if constexpr (Track) {
        std::fill_n(per_sample->tied, n, 0);
        std::fill_n(inverted.data(), n, 0);
    }
    PairedCounts counts;
    Buffer<L> sequence(n);
    Buffer<std::uint64_t> index(Track ? n : 0);
    counts.tied = labels_in_score_order(records, gap, Track ? per_sample->tied : nullptr, sequence, index, control);
    records.release();
    control.check();

    std::uint64_t inversions;
    if (const LabelRanks<L> ranks = rank_few_labels(sequence, few_labels, control); !ranks.values.empty()) {
        std::tie(inversions, counts.rankable) =
            count_with_few_labels<Track>(ranks, index, gap, Track ? inverted.data() : nullptr,
                                         Track ? per_sample->rankable : nullptr, n_threads, control);
    } else {
        inversions =
            count_inversions<Track>(sequence, index, Track ? inverted.data() : nullptr, gap, simd, n_threads, control);
        counts.rankable =
            count_rankable(sequence, index, gap, Track ? per_sample->rankable : nullptr, n_threads, simd, control);
    }
    counts.incorrect = inversions - counts.tied;
    counts.correct = counts.rankable - inversions;
    if constexpr (Track)
        for (std::size_t i = 0; i < n; ++i) per_sample->incorrect[i] = inverted[i] - per_sample->tied[i];
    return counts;
}

// Reads scores as order keys and labels as Gap::Label (doubles, or order
// keys of integers), in blocks spread over the threads.
template <bool Track, class Gap, class Score, class Label>
PairedCounts load_and_count(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                            std::ptrdiff_t label_stride, std::size_t n, const Gap& gap, Control& control,
                            PairedPerSample* per_sample, int n_threads, std::size_t few_labels, std::size_t few_classes,
                            SimdLevel simd) {
    using L = typename Gap::Label;
    if constexpr (!Track) {
        PairedCounts counts;
        if (count_by_classes(scores, score_stride, labels, label_stride, n, gap, std::min(few_classes, few_labels),
                             n_threads, control, counts))
            return counts;
    }
    Buffer<Record<Track, L>> records = load_sorted_records(
        InputReader<Track, L, Score, Label>(scores, score_stride, labels, label_stride), n, n_threads, control);
    return count_pairs<Track>(records, gap, per_sample, n_threads, few_labels, simd, control);
}

template <bool Track, class Score, class Label>
PairedCounts dispatch_labels(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                             std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                             PairedPerSample* per_sample, int n_threads, std::size_t few_labels,
                             std::size_t few_classes, SimdLevel simd) {
    if constexpr (std::is_floating_point_v<Label>) {
        return load_and_count<Track>(scores, score_stride, labels, label_stride, n, RealGap{min_dist}, control,
                                     per_sample, n_threads, few_labels, few_classes, simd);
    } else {
        // Integer differences are below 2**64: from there on nothing is rankable.
        constexpr double kTwo64 = 18446744073709551616.0;
        if (!(min_dist < kTwo64)) {
            if constexpr (Track) {
                std::fill_n(per_sample->rankable, n, 0);
                std::fill_n(per_sample->tied, n, 0);
                std::fill_n(per_sample->incorrect, n, 0);
            }
            return PairedCounts{};
        }
        const double threshold = std::max(1.0, std::ceil(min_dist));
        return load_and_count<Track>(scores, score_stride, labels, label_stride, n,
                                     IntegerGap{static_cast<std::uint64_t>(threshold)}, control, per_sample, n_threads,
                                     few_labels, few_classes, simd);
    }
}

}  // namespace

template <class Score, class Label>
PairedCounts paired_counts(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                           std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                           PairedPerSample* per_sample, int n_threads, std::size_t few_labels, std::size_t few_classes,
                           SimdLevel simd) {
    simd = simd_resolve(simd);
    // Progress counts elements touched: a sort pass or two plus about log2(n)
    // merge passes, so the total is an estimate that finish() completes.
    std::size_t levels = 4;
    for (std::size_t m = n; m > 1; m >>= 1) ++levels;
    control.set_total(static_cast<std::uint64_t>(n) * levels);
    if (per_sample)
        return dispatch_labels<true>(scores, score_stride, labels, label_stride, n, min_dist, control, per_sample,
                                     n_threads, few_labels, few_classes, simd);
    return dispatch_labels<false>(scores, score_stride, labels, label_stride, n, min_dist, control, nullptr, n_threads,
                                  few_labels, few_classes, simd);
}

#define PAIRMETRICS_INSTANTIATE(Score, Label)                                                                     \
    template PairedCounts paired_counts<Score, Label>(const Score*, std::ptrdiff_t, const Label*, std::ptrdiff_t, \
                                                      std::size_t, double, Control&, PairedPerSample*, int,       \
                                                      std::size_t, std::size_t, SimdLevel);
#define PAIRMETRICS_INSTANTIATE_LABELS(Score)     \
    PAIRMETRICS_INSTANTIATE(Score, bool)          \
    PAIRMETRICS_INSTANTIATE(Score, std::int8_t)   \
    PAIRMETRICS_INSTANTIATE(Score, std::int16_t)  \
    PAIRMETRICS_INSTANTIATE(Score, std::int32_t)  \
    PAIRMETRICS_INSTANTIATE(Score, std::int64_t)  \
    PAIRMETRICS_INSTANTIATE(Score, std::uint8_t)  \
    PAIRMETRICS_INSTANTIATE(Score, std::uint16_t) \
    PAIRMETRICS_INSTANTIATE(Score, std::uint32_t) \
    PAIRMETRICS_INSTANTIATE(Score, std::uint64_t) \
    PAIRMETRICS_INSTANTIATE(Score, float)         \
    PAIRMETRICS_INSTANTIATE(Score, double)
PAIRMETRICS_INSTANTIATE_LABELS(bool)
PAIRMETRICS_INSTANTIATE_LABELS(std::int8_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::int16_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::int32_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::int64_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint8_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint16_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint32_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint64_t)
PAIRMETRICS_INSTANTIATE_LABELS(float)
PAIRMETRICS_INSTANTIATE_LABELS(double)
#undef PAIRMETRICS_INSTANTIATE_LABELS
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics
