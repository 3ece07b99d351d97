// The per-class path of the paired kernel. Few distinct labels ("classes":
// binary, ordinal, small integer labels), totals only. Pairs inside a class
// are never rankable, so no record sort is needed: the score keys are
// grouped by class (a counting sort), each class's keys are sorted alone
// (8-byte keys, half the memory traffic of records), and each pair of
// classes far apart is counted with one merge walk of their two sorted key
// arrays: O(k n) for k classes.
//
// Chunks of the input, spread over the threads, find their classes and
// class ids, then scatter their score keys to the class segments.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"
#include "key_sort.hpp"
#include "paired.hpp"
#include "paired_buffer.hpp"
#include "paired_detail.hpp"
#include "paired_input.hpp"
#include "parallel.hpp"

namespace pairmetrics::paired_detail {

constexpr std::size_t kMaxClasses = 16;

// The classes met in one chunk of the input, in the order met.
template <class L>
struct ChunkClasses {
    std::array<L, kMaxClasses> value{};
    std::array<std::size_t, kMaxClasses> size{};
    std::array<std::uint8_t, kMaxClasses> global{};  // index into ClassGroups::value
    std::size_t k = 0;
};

// The classes of the whole input, ascending; keys[offset[g], offset[g + 1])
// will hold the score keys of class g, and next[c][t] is where chunk c writes
// its first key of its local class t.
template <class L>
struct ClassGroups {
    std::vector<L> value;
    std::array<std::size_t, kMaxClasses + 1> offset{};
    std::vector<std::array<std::size_t, kMaxClasses>> next;
};

// Merges the classes of the chunks (setting their `global`); false if there
// are more than `limit`.
template <class L>
bool group_classes(std::vector<ChunkClasses<L>>& local, std::size_t limit, ClassGroups<L>& groups);

// The counts from the score keys grouped by class (sorted here, with
// scratch as work space).
template <class Gap>
PairedCounts count_class_pairs(Buffer<std::uint64_t>& keys, Buffer<std::uint64_t>& scratch,
                               const ClassGroups<typename Gap::Label>& groups, const Gap& gap, int threads,
                               Control& control);

// The counts and the moment sums of the per-sample counts from the score
// keys grouped by class (sorted here, with scratch as work space).
template <class Gap>
PairedCounts class_moments(Buffer<std::uint64_t>& keys, Buffer<std::uint64_t>& scratch,
                           const ClassGroups<typename Gap::Label>& groups, const Gap& gap, int threads,
                           Control& control, PairedMoments& moments);

// Groups the score keys by class (into `keys`) if the labels take at most
// min(limit, kMaxClasses) distinct values; returns false otherwise. Labels
// that compare equal (-0.0 and +0.0) are one class.
template <class L>
bool group_by_classes(const PairedInput<L>& input, std::size_t limit, int threads, Control& control,
                      ClassGroups<L>& groups, Buffer<std::uint64_t>& keys);

}  // namespace pairmetrics::paired_detail
