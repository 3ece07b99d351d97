// Building blocks shared by the units of the paired kernel (paired_*.cpp):
// work sizes, the progress ticker, how labels are compared and read, the
// sorted records, and stepping several independent walks together.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "control.hpp"
#include "key_sort.hpp"
#include "rankable.hpp"

namespace pairmetrics::paired_detail {

// Below this many elements per thread, extra threads cost more than they save.
constexpr std::size_t kMinPerThread = std::size_t{1} << 16;
// Work split across threads is cut into this many tasks per thread.
constexpr std::size_t kChunksPerThread = 8;
// Runs this short are sorted by insertion before the merge passes.
constexpr std::size_t kInsertionRun = 16;
// Elements of work between two control checks (tens of microseconds).
constexpr std::size_t kTickWork = Ticker::kDefaultBatch;
// Independent walks (merge and count pieces) stepped together.
constexpr std::size_t kLanes = 4;

// Threads worth using for n elements.
inline int threads_for(std::size_t n, int n_threads) {
    return n >= 2 * kMinPerThread ? std::max(n_threads, 1) : 1;
}

// Bounds of the chunks [bound[c], bound[c + 1]) that n elements are cut into
// for `threads` threads: several chunks per thread, so that a thread the
// system pauses holds up the others for one small chunk at most.
inline std::vector<std::size_t> chunk_bounds(std::size_t n, int threads) {
    const std::size_t chunks = threads <= 1 ? 1 : kChunksPerThread * static_cast<std::size_t>(threads);
    std::vector<std::size_t> bound(chunks + 1);
    for (std::size_t c = 0; c <= chunks; ++c) bound[c] = n * c / chunks;
    return bound;
}

// How two labels are compared: RealGap and IntegerGap (rankable.hpp).

// Reads element i of a strided array; bool as its byte compared with 0 (a
// bool holding another byte than 0 or 1 must not be loaded as bool).
template <class T>
auto read(const T* data, std::ptrdiff_t stride, std::size_t i) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(i) * stride;
    if constexpr (std::is_same_v<T, bool>) {
        return static_cast<std::uint8_t>(reinterpret_cast<const unsigned char*>(data)[at] != 0);
    } else {
        return data[at];
    }
}

template <bool Track, class L>
struct Record {
    std::uint64_t key;
    L label;
};
template <class L>
struct Record<true, L> {
    std::uint64_t key;
    L label;
    std::uint64_t index;
};

// Label i as Gap::Label: a double, or the order key of an integer.
template <class L, class Label>
L label_at(const Label* labels, std::ptrdiff_t stride, std::size_t i) {
    const auto label = read(labels, stride, i);
    if constexpr (std::is_floating_point_v<L>) {
        return static_cast<double>(label);
    } else {
        return order_key(label);
    }
}

// Counting and merging walk pairs of runs with chains of dependent loads
// and compares; up to kLanes independent pieces stepped together let the
// CPU overlap their chains. Each step moves one of two positions by one,
// so a number of steps below both remaining lengths needs no bounds checks.
template <std::size_t K, class Cursor, class Step>
void step_together(Cursor* cursors, Step&& step, Ticker& tick) {
    for (;;) {
        std::size_t steps = kTickWork;
        for (std::size_t t = 0; t < K; ++t) steps = std::min(steps, cursors[t].safe_steps());
        if (steps == 0) break;
        for (std::size_t s = 0; s < steps; ++s)
            for (std::size_t t = 0; t < K; ++t) step(cursors[t]);
        tick(steps * K);
    }
}

template <class Cursor, class Step>
void step_all(Cursor* cursors, std::size_t count, Step&& step, Ticker& tick) {
    if (count == 4) step_together<4>(cursors, step, tick);
    if (count >= 2) step_together<2>(cursors, step, tick);
    if (count >= 3) step_together<2>(cursors + count - 2, step, tick);
    for (std::size_t t = 0; t < count; ++t) {
        while (cursors[t].active()) {
            const std::size_t steps = std::min(kTickWork, cursors[t].safe_steps());
            for (std::size_t s = 0; s < steps; ++s) step(cursors[t]);
            tick(steps);
        }
    }
}

}  // namespace pairmetrics::paired_detail
