// Per-group results in one pass. The samples are put in order of their
// group code (one counting sort: the group is the first sort key), and each
// group's segment is handed to the kernel of the ungrouped call (paired
// counts, ROC AUC, concordance), with threads spread over the groups.
//
// Group codes are 0 .. n_groups - 1 (the caller factorises its keys). Every
// per-sample output is in segment order: entry k belongs to input position
// order[k], where `order` lists the positions of group 0, then of group 1,
// and so on, each ascending.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "concordance.hpp"
#include "control.hpp"
#include "paired.hpp"
#include "roc_auc.hpp"

namespace pairmetrics {

struct GroupSegments {
    std::vector<std::int64_t> order;  // input positions by group, then position
    std::vector<std::size_t> offset;  // group g is order[offset[g], offset[g + 1])
    std::size_t groups() const { return offset.size() - 1; }
    std::size_t size(std::size_t g) const { return offset[g + 1] - offset[g]; }
};

// The segments of `codes` (strided); throws std::invalid_argument for a code
// outside [0, n_groups).
GroupSegments group_segments(const std::int64_t* codes, std::ptrdiff_t code_stride, std::size_t n, std::size_t n_groups,
                             Control& control);

// Paired counts of every group (out: n_groups entries). With per_sample, its
// arrays (n entries each) are filled in segment order.
template <class Score, class Label>
void grouped_paired_counts(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                           std::ptrdiff_t label_stride, const GroupSegments& segments, double min_dist,
                           PairedCounts* out, PairedPerSample* per_sample, int n_threads, Control& control);

// ROC AUC (or partial area) of every group, as roc_auc computes it for one.
template <class Score>
void grouped_roc_auc(const Score* scores, std::ptrdiff_t score_stride, const std::uint8_t* positive,
                     std::ptrdiff_t positive_stride, const double* weights, std::ptrdiff_t weight_stride,
                     const GroupSegments& segments, double max_fpr, RocAuc* out, int n_threads, Control& control);

// Concordance counts of every group with its per-sample counts (n rows of
// kPerSampleColumns, segment order), as concordance_counts computes them.
void grouped_concordance(const double* times, std::ptrdiff_t time_stride, const std::uint8_t* events,
                         std::ptrdiff_t event_stride, const double* estimates, std::ptrdiff_t estimate_stride,
                         const GroupSegments& segments, ConcordanceCounts* out, std::uint64_t* per_sample,
                         int n_threads, Control& control);

}  // namespace pairmetrics
