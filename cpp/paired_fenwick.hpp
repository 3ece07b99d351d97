// The Fenwick path of the paired kernel: labels that take few distinct
// values are replaced by their ranks, and inversions are counted with
// Fenwick trees over the ranks, O(n log k) in cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "control.hpp"
#include "paired_buffer.hpp"
#include "paired_detail.hpp"

namespace pairmetrics::paired_detail {

// Dense ranks of the labels if there are at most `limit` distinct values
// (else an empty `values`), found with a small open-addressing table.
template <class L>
struct LabelRanks {
    std::vector<L> values;       // distinct labels, ascending
    Buffer<std::uint32_t> rank;  // per position of the sequence
};

template <class L>
LabelRanks<L> rank_few_labels(const Buffer<L>& sequence, std::size_t limit, Control& control);

// Inversions and rankable pairs of the ranked sequence (with Track, also
// per input position index[q], or per position q when index is empty:
// inverted and rankable partners).
template <bool Track, class Gap>
std::pair<std::uint64_t, std::uint64_t> count_with_few_labels(const LabelRanks<typename Gap::Label>& ranks,
                                                              const Buffer<std::uint64_t>& index, const Gap& gap,
                                                              std::uint64_t* inverted, std::uint64_t* rankable,
                                                              int n_threads, Control& control);

}  // namespace pairmetrics::paired_detail
