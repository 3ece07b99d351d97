#include "grouped.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "element_types.hpp"
#include "paired_input.hpp"
#include "parallel.hpp"

namespace pairmetrics {
namespace {

using paired_detail::LabelKind;
using paired_detail::PairedInput;
using paired_detail::ShiftedLabels;
using paired_detail::ShiftedScores;
using paired_detail::StridedLabels;
using paired_detail::StridedScores;

// Groups this large run one after another, each with every thread (the
// kernels split their own work); smaller ones run side by side, one thread
// each.
constexpr std::size_t kLargeGroup = std::size_t{1} << 17;
// Below this many samples in all, one thread does everything.
constexpr std::size_t kParallelSamples = std::size_t{1} << 16;
constexpr std::size_t kCheckEvery = std::size_t{1} << 15;

int threads_for_samples(std::size_t n, int n_threads) {
    return n >= kParallelSamples ? std::max(n_threads, 1) : 1;
}

// data[order[k] * stride] for every k: each group's values side by side, so
// that the kernels read a segment as a plain array.
template <class T>
std::unique_ptr<T[]> gather(const T* data, std::ptrdiff_t stride, const std::vector<std::int64_t>& order, int n_threads,
                            Control& control) {
    const std::size_t n = order.size();
    std::unique_ptr<T[]> out(new T[n]);  // every slot written below
    const std::size_t pieces = (n + kCheckEvery - 1) / kCheckEvery;
    parallel_for(
        pieces, threads_for_samples(n, n_threads),
        [&](std::size_t p) {
            const std::size_t end = std::min(n, (p + 1) * kCheckEvery);
            for (std::size_t k = p * kCheckEvery; k < end; ++k) out[k] = data[order[k] * stride];
            control.check();
        },
        control);
    return out;
}

// Runs segment(g, part, threads) for every group g, where `part` is a child
// of `control` and `threads` the threads the kernel may use. Progress counts
// the samples of the groups done.
// Not a template: one copy serves every kernel and dtype.
using SegmentFn = std::function<void(std::size_t group, Control& part, int threads)>;
void for_each_group(const GroupSegments& segments, int n_threads, Control& control, const SegmentFn& segment) {
    const std::size_t n = segments.order.size();
    control.set_total(n);
    std::vector<std::size_t> small;
    for (std::size_t g = 0; g < segments.groups(); ++g) {
        if (segments.size(g) < kLargeGroup) {
            small.push_back(g);
            continue;
        }
        Control part(control);
        segment(g, part, n_threads);
        control.advance(segments.size(g));
    }
    parallel_for(
        small.size(), threads_for_samples(n, n_threads),
        [&](std::size_t t) {
            Control part(control);
            segment(small[t], part, 1);
            control.advance(segments.size(small[t]));
        },
        control);
}

// The kernel of paired_counts on each group's segment of the gathered input.
template <class L>
void paired_counts_by_group(const PairedInput<L>& gathered, const GroupSegments& segments, double min_dist,
                            PairedCounts* out, PairedPerSample* per_sample, int n_threads, Control& control) {
    for_each_group(segments, n_threads, control, [&](std::size_t g, Control& part, int threads) {
        const std::size_t begin = segments.offset[g];
        PairedPerSample arrays;
        if (per_sample)
            arrays = {per_sample->rankable + begin, per_sample->tied + begin, per_sample->incorrect + begin};
        const ShiftedScores scores(gathered.scores, begin);
        const ShiftedLabels<L> labels(gathered.labels, begin);
        out[g] = paired_counts_of<L>({scores, labels, segments.size(g)}, min_dist, part, per_sample ? &arrays : nullptr,
                                     nullptr, threads);
    });
}

}  // namespace

GroupSegments group_segments(const std::int64_t* codes, std::ptrdiff_t code_stride, std::size_t n, std::size_t n_groups,
                             Control& control) {
    GroupSegments segments;
    segments.offset.assign(n_groups + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t code = codes[static_cast<std::ptrdiff_t>(i) * code_stride];
        if (code < 0 || static_cast<std::uint64_t>(code) >= n_groups)
            throw std::invalid_argument("group code " + std::to_string(code) + " at index " + std::to_string(i) +
                                        " is outside [0, " + std::to_string(n_groups) + ")");
        ++segments.offset[static_cast<std::size_t>(code) + 1];
        if (i % kCheckEvery == 0) control.check();
    }
    for (std::size_t g = 0; g < n_groups; ++g) segments.offset[g + 1] += segments.offset[g];
    std::vector<std::size_t> next(segments.offset.begin(), segments.offset.end() - 1);
    segments.order.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto code = static_cast<std::size_t>(codes[static_cast<std::ptrdiff_t>(i) * code_stride]);
        segments.order[next[code]++] = static_cast<std::int64_t>(i);
        if (i % kCheckEvery == 0) control.check();
    }
    return segments;
}

template <class Score, class Label>
void grouped_paired_counts(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                           std::ptrdiff_t label_stride, const GroupSegments& segments, double min_dist,
                           PairedCounts* out, PairedPerSample* per_sample, int n_threads, Control& control) {
    const auto score = gather(scores, score_stride, segments.order, n_threads, control);
    const auto label = gather(labels, label_stride, segments.order, n_threads, control);
    const StridedScores<Score> score_reader(score.get(), 1);
    const StridedLabels<LabelKind<Label>, Label> label_reader(label.get(), 1);
    paired_counts_by_group<LabelKind<Label>>({score_reader, label_reader, segments.order.size()}, segments, min_dist,
                                             out, per_sample, n_threads, control);
}

template <class Score>
void grouped_roc_auc(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                     std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                     const GroupSegments& segments, double max_fpr, RocAuc* out, int n_threads, Control& control) {
    const auto score = gather(scores, score_stride, segments.order, n_threads, control);
    const auto is_positive = gather(positive, positive_stride, segments.order, n_threads, control);
    std::unique_ptr<double[]> weight;
    if (weights) weight = gather(weights, weight_stride, segments.order, n_threads, control);
    for_each_group(segments, n_threads, control, [&](std::size_t g, Control& part, int threads) {
        const std::size_t begin = segments.offset[g];
        out[g] = roc_auc(score.get() + begin, 1, is_positive.get() + begin, 1, weights ? weight.get() + begin : nullptr,
                         1, segments.size(g), max_fpr, threads, part);
    });
}

void grouped_concordance(const double* times, std::ptrdiff_t time_stride, const std::uint8_t* events,
                         std::ptrdiff_t event_stride, const double* estimates, std::ptrdiff_t estimate_stride,
                         const GroupSegments& segments, ConcordanceCounts* out, std::uint64_t* per_sample,
                         int n_threads, Control& control) {
    const auto time = gather(times, time_stride, segments.order, n_threads, control);
    const auto event = gather(events, event_stride, segments.order, n_threads, control);
    const auto estimate = gather(estimates, estimate_stride, segments.order, n_threads, control);
    // The concordance kernel runs on one thread: large groups gain nothing from more.
    for_each_group(segments, n_threads, control, [&](std::size_t g, Control& part, int) {
        const std::size_t begin = segments.offset[g];
        out[g] = concordance_counts(time.get() + begin, 1, event.get() + begin, 1, estimate.get() + begin, 1,
                                    segments.size(g), 0.0, part, per_sample + begin * kPerSampleColumns);
    });
}

#define PAIRMETRICS_GROUPED_PAIRED(Score, Label)                                                                     \
    template void grouped_paired_counts<Score, Label>(const Score*, std::ptrdiff_t, const Label*, std::ptrdiff_t,    \
                                                      const GroupSegments&, double, PairedCounts*, PairedPerSample*, \
                                                      int, Control&);
#define PAIRMETRICS_GROUPED(Score)                                                                                  \
    template void grouped_roc_auc<Score>(const Score*, std::ptrdiff_t, const std::uint8_t*, std::ptrdiff_t,         \
                                         const double*, std::ptrdiff_t, const GroupSegments&, double, RocAuc*, int, \
                                         Control&);                                                                 \
    PAIRMETRICS_FOR_EACH_ELEMENT_WITH(PAIRMETRICS_GROUPED_PAIRED, Score)
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_GROUPED)
#undef PAIRMETRICS_GROUPED
#undef PAIRMETRICS_GROUPED_PAIRED

}  // namespace pairmetrics
