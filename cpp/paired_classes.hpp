// The per-class path of the paired kernel. Few distinct labels ("classes":
// binary, ordinal, small integer labels), totals only. Pairs inside a class
// are never rankable, so no record sort is needed: the score keys are
// grouped by class (a counting sort), each class's keys are sorted alone
// (8-byte keys, half the memory traffic of records), and each pair of
// classes far apart is counted with one merge walk of their two sorted key
// arrays: O(k n) for k classes.
//
// Chunks of the input, spread over the threads, find their classes and
// class ids, then scatter their score keys to the class segments. Only
// these two passes read the input (compiled per pair of dtypes); the rest
// is compiled once per label kind in paired_classes.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"
#include "key_sort.hpp"
#include "paired.hpp"
#include "paired_buffer.hpp"
#include "paired_detail.hpp"
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

// A look at the first labels turns most real-valued labels away before
// anything is allocated.
template <class L, class Label>
bool first_labels_fit(const Label* labels, std::ptrdiff_t label_stride, std::size_t n, std::size_t limit) {
    std::array<L, kMaxClasses> seen{};
    std::size_t k = 0;
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 4096); ++i) {
        const L v = label_at<L>(labels, label_stride, i);
        if (std::find(seen.begin(), seen.begin() + k, v) != seen.begin() + k) continue;
        if (k == limit) return false;
        seen[k++] = v;
    }
    return true;
}

// Pass 1: the class id of every label within its chunk (a label not seen
// before in the chunk opens a local class); false if a chunk finds more than
// `limit` classes.
template <class L, class Label>
bool find_chunk_classes(const Label* labels, std::ptrdiff_t label_stride, const std::vector<std::size_t>& bound,
                        std::size_t limit, int threads, std::vector<ChunkClasses<L>>& local, Buffer<std::uint8_t>& id,
                        Control& control) {
    std::atomic<bool> overflow{false};
    parallel_for(
        local.size(), threads,
        [&](std::size_t c) {
            // Worked on in a local copy: the byte stores of the ids could
            // otherwise change it, and the loop would reload it every time.
            ChunkClasses<L> loc;
            std::uint8_t* class_id = id.data();
            for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kTickWork) {
                const std::size_t end = std::min(bound[c + 1], begin + kTickWork);
                for (std::size_t i = begin; i < end; ++i) {
                    const L v = label_at<L>(labels, label_stride, i);
                    std::size_t t = loc.k;
                    for (std::size_t u = 0; u < loc.k; ++u) t = loc.value[u] == v ? u : t;
                    if (t == loc.k) {
                        if (loc.k == limit || overflow.load(std::memory_order_relaxed)) {
                            overflow.store(true, std::memory_order_relaxed);
                            return;
                        }
                        loc.value[loc.k++] = v;
                    }
                    class_id[i] = static_cast<std::uint8_t>(t);
                    ++loc.size[t];
                }
                control.advance(end - begin);
            }
            local[c] = loc;
        },
        &control);
    return !overflow.load();
}

// Pass 2: score keys grouped by class, in input order within a class.
template <class L, class Score>
void scatter_keys(const Score* scores, std::ptrdiff_t score_stride, const std::vector<std::size_t>& bound,
                  const std::vector<ChunkClasses<L>>& local, const ClassGroups<L>& groups,
                  const Buffer<std::uint8_t>& id, int threads, Buffer<std::uint64_t>& keys, Control& control) {
    parallel_for(
        local.size(), threads,
        [&](std::size_t c) {
            // Local copies: stores to the keys cannot change them, so the loop
            // need not reload them.
            const std::array<std::uint8_t, kMaxClasses> global = local[c].global;
            std::array<std::size_t, kMaxClasses> at = groups.next[c];
            const std::uint8_t* class_id = id.data();
            std::uint64_t* out = keys.data();
            for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kTickWork) {
                const std::size_t end = std::min(bound[c + 1], begin + kTickWork);
                for (std::size_t i = begin; i < end; ++i)
                    out[at[global[class_id[i]]]++] = order_key(read(scores, score_stride, i));
                control.advance(end - begin);
            }
        },
        &control);
}

// Groups the score keys by class (into `keys`) if the labels take at most
// min(limit, kMaxClasses) distinct values; returns false otherwise. Labels
// that compare equal (-0.0 and +0.0) are one class.
template <class L, class Score, class Label>
bool group_by_classes(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                      std::ptrdiff_t label_stride, std::size_t n, std::size_t limit, int threads, Control& control,
                      ClassGroups<L>& groups, Buffer<std::uint64_t>& keys) {
    limit = std::min(limit, kMaxClasses);
    if (limit == 0 || !first_labels_fit<L>(labels, label_stride, n, limit)) return false;
    const std::vector<std::size_t> bound = chunk_bounds(n, threads);
    std::vector<ChunkClasses<L>> local(bound.size() - 1);
    Buffer<std::uint8_t> id(n);
    if (!find_chunk_classes<L>(labels, label_stride, bound, limit, threads, local, id, control) ||
        !group_classes(local, limit, groups))
        return false;
    keys = Buffer<std::uint64_t>(n);
    scatter_keys(scores, score_stride, bound, local, groups, id, threads, keys, control);
    return true;
}

// Counts by classes if the labels take at most min(limit, kMaxClasses)
// distinct values; returns false (having counted nothing) otherwise. With
// moments, also the moment sums of the per-sample counts (see
// paired_moments).
template <class Gap, class Score, class Label>
bool count_by_classes(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                      std::ptrdiff_t label_stride, std::size_t n, const Gap& gap, std::size_t limit, int n_threads,
                      Control& control, PairedCounts& out, PairedMoments* moments = nullptr) {
    const int threads = threads_for(n, n_threads);
    ClassGroups<typename Gap::Label> groups;
    Buffer<std::uint64_t> keys;
    if (!group_by_classes(scores, score_stride, labels, label_stride, n, limit, threads, control, groups, keys))
        return false;
    Buffer<std::uint64_t> scratch(n);
    out = moments ? class_moments(keys, scratch, groups, gap, threads, control, *moments)
                  : count_class_pairs(keys, scratch, groups, gap, threads, control);
    return true;
}

}  // namespace pairmetrics::paired_detail
