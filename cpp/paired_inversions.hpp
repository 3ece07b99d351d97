// The merge path of the paired kernel: labels in score order merge-sorted
// while counting inversions, and the rankable pairs of sorted labels.
#pragma once

#include <cstdint>

#include "control.hpp"
#include "paired_buffer.hpp"
#include "paired_detail.hpp"
#include "paired_simd.hpp"

namespace pairmetrics::paired_detail {

// Sorts `labels` (in score order; with Track, `index` holds their input
// positions and is permuted alike) ascending and returns the number of
// inversions: pairs p before q with label_p at least min_dist above
// label_q. With Track, inverted[i] gains the inversions of input position i.
template <bool Track, class Gap>
std::uint64_t count_inversions(Buffer<typename Gap::Label>& labels, Buffer<std::uint64_t>& index,
                               std::uint64_t* inverted, const Gap& gap, SimdLevel simd, int n_threads,
                               Control& control);

// Sorts `labels` ascending like count_inversions (without Track) and returns
// the number of inversions; carried[p], a value of label p, moves with it and
// gains `weight` times the inversions of that label.
template <class Gap>
std::uint64_t count_inversions_carried(Buffer<typename Gap::Label>& labels, Buffer<std::uint64_t>& carried,
                                       std::uint64_t weight, const Gap& gap, int n_threads, Control& control);

// Rankable pairs of labels sorted ascending; with per_sample, also
// per_sample[index[r]] (per_sample[r] when index is empty) = the rankable
// partners of sorted[r].
template <class Gap>
std::uint64_t count_rankable(const Buffer<typename Gap::Label>& sorted, const Buffer<std::uint64_t>& index,
                             const Gap& gap, std::uint64_t* per_sample, int n_threads, SimdLevel simd,
                             Control& control);

}  // namespace pairmetrics::paired_detail
