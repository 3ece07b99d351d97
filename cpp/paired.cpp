// The paired kernel's driver: records sorted by score, runs of tied scores,
// then the per-class, Fenwick or merge path (paired_classes, paired_fenwick,
// paired_inversions) for the counts.
#include "paired.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "element_types.hpp"
#include "paired_buffer.hpp"
#include "paired_classes.hpp"
#include "paired_detail.hpp"
#include "paired_fenwick.hpp"
#include "paired_input.hpp"
#include "paired_inversions.hpp"
#include "paired_record_sort.hpp"
#include "parallel.hpp"

namespace pairmetrics {
namespace {

using namespace paired_detail;

// Orders a run of records with equal scores by label, descending (so every
// rankable tied pair is counted as an inversion, whatever the input order),
// and returns how many of its pairs are rankable. Unless null, `tied` gains
// the rankable tied partners of each record: by input position with Track,
// else by position in the run.
template <bool Track, class Gap>
std::uint64_t order_tied_run(Record<Track, typename Gap::Label>* run, std::size_t len, const Gap& gap,
                             std::uint64_t* tied, Ticker& tick) {
    sort_by_label_descending(run, len, tick);
    const auto slot = [&](std::size_t q) -> std::uint64_t& {
        if constexpr (Track) {
            return tied[run[q].index];
        } else {
            return tied[q];
        }
    };
    std::uint64_t total = 0;
    // Rankable partners of q before it: a prefix [0, p) of the run.
    for (std::size_t q = 0, p = 0; q < len; ++q) {
        while (p < q && gap.far(run[p].label, run[q].label)) ++p;
        total += p;
        if (tied) slot(q) += p;
    }
    if (tied) {
        // ... and after it: a suffix [s, len).
        for (std::size_t q = len, s = len; q-- > 0;) {
            while (s > q + 1 && gap.far(run[q].label, run[s - 1].label)) --s;
            slot(q) += len - s;
        }
    }
    tick(2 * len);
    return total;
}

// Copies the labels (and input positions) of the records, sorted by score,
// into `sequence` (and `index`), each run of equal scores ordered by
// order_tied_run; returns how many rankable pairs have tied scores. Unless
// null, `tied` gains the per-sample ones: by input position with Track, else
// by position in score order.
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
            std::uint64_t* run_tied = tied && !Track ? tied + run : tied;
            total += order_tied_run(records.data() + run, end - run, gap, run_tied, tick);
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

// The group of moments.lowest, .highest or .others that a sample belongs to.
PairedMomentSums& group_of(PairedMoments& moments, bool lowest, bool highest) {
    return lowest ? moments.lowest : highest ? moments.highest : moments.others;
}

// Sums the per-sample counts of samples [0, n) into `moments`, chunks spread
// over the threads: add(i, sums) adds those of sample i.
template <class Add>
void reduce_moments(std::size_t n, int n_threads, Control& control, PairedMoments& moments, const Add& add) {
    const int threads = threads_for(n, n_threads);
    const std::vector<std::size_t> bound = chunk_bounds(n, threads);
    std::vector<PairedMoments> partial(bound.size() - 1);
    parallel_for(
        partial.size(), threads,
        [&](std::size_t c) {
            Ticker tick(control);
            PairedMoments sums;
            for (std::size_t i = bound[c]; i < bound[c + 1]; ++i) {
                add(i, sums);
                if ((i & (kTickWork - 1)) == 0) tick(kTickWork);
            }
            partial[c] = sums;
        },
        control);
    moments = PairedMoments{};
    for (const PairedMoments& sums : partial) {
        moments.lowest.add(sums.lowest);
        moments.highest.add(sums.highest);
        moments.others.add(sums.others);
    }
}

// The counts and the moment sums of the per-sample counts from the records
// sorted by score, without input positions: the per-sample counts are kept
// in score order (Fenwick path) or carried through the merge passes with
// their labels (merge path), so that nothing is written far from the
// passes, and summed in that order.
template <class Gap>
PairedCounts count_moments(Buffer<Record<false, typename Gap::Label>>& records, const Gap& gap, int n_threads,
                           std::size_t few_labels, SimdLevel simd, Control& control, PairedMoments& moments) {
    using L = typename Gap::Label;
    const std::size_t n = records.size();
    moments = PairedMoments{};
    if (n == 0) return PairedCounts{};
    Buffer<std::uint64_t> carried(n);  // tied partners per sample, in score order
    std::fill_n(carried.data(), n, 0);
    PairedCounts counts;
    Buffer<L> sequence(n);
    Buffer<std::uint64_t> none;  // per-sample counts by position
    counts.tied = labels_in_score_order(records, gap, carried.data(), sequence, none, control);
    records.release();
    control.check();
    Buffer<std::uint64_t> rankable(n);
    std::uint64_t inversions;
    if (const LabelRanks<L> ranks = rank_few_labels(sequence, few_labels, control); !ranks.values.empty()) {
        Buffer<std::uint64_t> inverted(n);
        std::fill_n(inverted.data(), n, 0);
        std::tie(inversions, counts.rankable) =
            count_with_few_labels<true>(ranks, none, gap, inverted.data(), rankable.data(), n_threads, control);
        const std::size_t top = ranks.values.size() - 1;
        // Inversions include the tied pairs: q_i = 2 (r_i - inverted_i) + tied_i.
        reduce_moments(n, n_threads, control, moments, [&](std::size_t i, PairedMoments& sums) {
            group_of(sums, ranks.rank[i] == 0, ranks.rank[i] == top)
                .add(rankable[i], 2 * (rankable[i] - inverted[i]) + carried[i]);
        });
    } else {
        // carried_i: -tied_i, plus twice the inversions, is 2 incorrect_i + tied_i.
        for (std::size_t i = 0; i < n; ++i) carried[i] = 0 - carried[i];
        inversions = count_inversions_carried(sequence, carried, 2, gap, n_threads, control);
        counts.rankable = count_rankable(sequence, none, gap, rankable.data(), n_threads, simd, control);
        const L lowest = sequence[0], highest = sequence[n - 1];
        reduce_moments(n, n_threads, control, moments, [&](std::size_t i, PairedMoments& sums) {
            group_of(sums, sequence[i] == lowest, sequence[i] == highest)
                .add(rankable[i], 2 * rankable[i] - carried[i]);
        });
    }
    counts.incorrect = inversions - counts.tied;
    counts.correct = counts.rankable - inversions;
    return counts;
}

// Counts by classes if the labels take at most min(limit, kMaxClasses)
// distinct values; returns false (having counted nothing) otherwise. With
// moments, also the moment sums of the per-sample counts (see
// paired_moments).
template <class Gap>
bool count_by_classes(const PairedInput<typename Gap::Label>& input, const Gap& gap, std::size_t limit, int n_threads,
                      Control& control, PairedCounts& out, PairedMoments* moments) {
    const int threads = threads_for(input.n, n_threads);
    ClassGroups<typename Gap::Label> groups;
    Buffer<std::uint64_t> keys;
    if (!group_by_classes(input, limit, threads, control, groups, keys)) return false;
    Buffer<std::uint64_t> scratch(input.n);
    out = moments ? class_moments(keys, scratch, groups, gap, threads, control, *moments)
                  : count_class_pairs(keys, scratch, groups, gap, threads, control);
    return true;
}

// Scores as order keys and labels as Gap::Label (doubles, or order keys of
// integers), read in blocks spread over the threads. With moments (and no
// per_sample), the moment sums of the per-sample counts instead of them.
template <class Gap>
PairedCounts load_and_count(const PairedInput<typename Gap::Label>& input, const Gap& gap, Control& control,
                            PairedPerSample* per_sample, PairedMoments* moments, int n_threads, std::size_t few_labels,
                            std::size_t few_classes, SimdLevel simd) {
    using L = typename Gap::Label;
    if (per_sample) {
        auto records = load_sorted_records(InputReader<true, L>(input), input.n, n_threads, control);
        return count_pairs<true>(records, gap, per_sample, n_threads, few_labels, simd, control);
    }
    PairedCounts counts;
    if (count_by_classes(input, gap, std::min(few_classes, few_labels), n_threads, control, counts, moments))
        return counts;
    auto records = load_sorted_records(InputReader<false, L>(input), input.n, n_threads, control);
    if (moments) return count_moments(records, gap, n_threads, few_labels, simd, control, *moments);
    return count_pairs<false>(records, gap, nullptr, n_threads, few_labels, simd, control);
}

// Nothing is rankable: every per-sample count, and every moment, is 0.
void count_nothing(const PairedInput<std::uint64_t>& input, PairedPerSample* per_sample, PairedMoments* moments,
                   int n_threads, Control& control) {
    const std::size_t n = input.n;
    if (per_sample) {
        std::fill_n(per_sample->rankable, n, 0);
        std::fill_n(per_sample->tied, n, 0);
        std::fill_n(per_sample->incorrect, n, 0);
    }
    if (!moments) return;
    std::uint64_t lowest = ~std::uint64_t{0}, highest = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t key = input.labels.label(i);
        lowest = std::min(lowest, key);
        highest = std::max(highest, key);
    }
    reduce_moments(n, n_threads, control, *moments, [&](std::size_t i, PairedMoments& sums) {
        const std::uint64_t key = input.labels.label(i);
        group_of(sums, key == lowest, key == highest).add(0, 0);
    });
}

template <class L>
PairedCounts count_input(const PairedInput<L>& input, double min_dist, Control& control, PairedPerSample* per_sample,
                         PairedMoments* moments, int n_threads, std::size_t few_labels, std::size_t few_classes,
                         SimdLevel simd) {
    if constexpr (std::is_floating_point_v<L>) {
        return load_and_count(input, RealGap{min_dist}, control, per_sample, moments, n_threads, few_labels,
                              few_classes, simd);
    } else {
        const std::optional<IntegerGap> gap = integer_gap(min_dist);
        if (!gap) {  // no two integers are that far apart
            count_nothing(input, per_sample, moments, n_threads, control);
            return PairedCounts{};
        }
        return load_and_count(input, *gap, control, per_sample, moments, n_threads, few_labels, few_classes, simd);
    }
}

// Progress counts elements touched: a sort pass or two plus about log2(n)
// merge passes, so the total is an estimate that finish() completes.
void set_progress_total(Control& control, std::size_t n) {
    std::size_t levels = 4;
    for (std::size_t m = n; m > 1; m >>= 1) ++levels;
    control.set_total(static_cast<std::uint64_t>(n) * levels);
}

}  // namespace

template <class L>
PairedCounts paired_counts_of(const PairedInput<L>& input, double min_dist, Control& control,
                              PairedPerSample* per_sample, PairedMoments* moments, int n_threads,
                              std::size_t few_labels, std::size_t few_classes, SimdLevel simd) {
    set_progress_total(control, input.n);
    return count_input(input, min_dist, control, per_sample, moments, n_threads, few_labels, few_classes,
                       simd_resolve(simd));
}
template PairedCounts paired_counts_of(const PairedInput<double>&, double, Control&, PairedPerSample*, PairedMoments*,
                                       int, std::size_t, std::size_t, SimdLevel);
template PairedCounts paired_counts_of(const PairedInput<std::uint64_t>&, double, Control&, PairedPerSample*,
                                       PairedMoments*, int, std::size_t, std::size_t, SimdLevel);

template <class Score, class Label>
PairedCounts paired_counts(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                           std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                           PairedPerSample* per_sample, int n_threads, std::size_t few_labels, std::size_t few_classes,
                           SimdLevel simd) {
    const StridedScores<Score> score_reader(scores, score_stride);
    const StridedLabels<LabelKind<Label>, Label> label_reader(labels, label_stride);
    return paired_counts_of<LabelKind<Label>>({score_reader, label_reader, n}, min_dist, control, per_sample, nullptr,
                                              n_threads, few_labels, few_classes, simd);
}

template <class Score, class Label>
PairedCounts paired_moments(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                            std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                            PairedMoments& moments, int n_threads, std::size_t few_labels, std::size_t few_classes,
                            SimdLevel simd) {
    const StridedScores<Score> score_reader(scores, score_stride);
    const StridedLabels<LabelKind<Label>, Label> label_reader(labels, label_stride);
    return paired_counts_of<LabelKind<Label>>({score_reader, label_reader, n}, min_dist, control, nullptr, &moments,
                                              n_threads, few_labels, few_classes, simd);
}

#define PAIRMETRICS_INSTANTIATE(Score, Label)                                                                      \
    template PairedCounts paired_counts<Score, Label>(const Score*, std::ptrdiff_t, const Label*, std::ptrdiff_t,  \
                                                      std::size_t, double, Control&, PairedPerSample*, int,        \
                                                      std::size_t, std::size_t, SimdLevel);                        \
    template PairedCounts paired_moments<Score, Label>(const Score*, std::ptrdiff_t, const Label*, std::ptrdiff_t, \
                                                       std::size_t, double, Control&, PairedMoments&, int,         \
                                                       std::size_t, std::size_t, SimdLevel);
#define PAIRMETRICS_INSTANTIATE_LABELS(Score) PAIRMETRICS_FOR_EACH_ELEMENT_WITH(PAIRMETRICS_INSTANTIATE, Score)
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_INSTANTIATE_LABELS)
#undef PAIRMETRICS_INSTANTIATE_LABELS
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics
