// The parts of the Euclidean provider its units share (matching_distances.cpp: construction and geometry;
// matching_distance_nearest.cpp: the neighbour lists; matching_distance_screen.cpp: screens of pairs below a
// threshold): constants, the bounded list of smallest values, and the member templates over tiles and balls.
#pragma once

#include "euclidean.hpp"
#include "matching_distances.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace pairmetrics::matching {

namespace distances_detail {

using i32 = std::int32_t;
using i64 = std::int64_t;

constexpr double kEps64 = euclidean::unit_roundoff<double>();
constexpr double kEps32 = euclidean::unit_roundoff<float>();
constexpr i32 kRowBlock = 256;  // rows per task and per tile

// Keeps the `keep` smallest (value, index) seen so far, with a threshold
// that lets almost every later value be rejected by one comparison.
template <class F>
struct Smallest {
    std::vector<std::pair<F, i32>> buf;
    F tau = std::numeric_limits<F>::infinity();
    std::size_t keep = 0, limit = 0;

    // Keep the k smallest; the buffer grows to factor * k before a trim.
    void reset(std::size_t k, std::size_t factor = 4) {
        keep = k;
        limit = factor * k;
        buf.clear();
        tau = std::numeric_limits<F>::infinity();
    }
    void push(F v, i32 j) {
        buf.emplace_back(v, j);
        if (buf.size() >= limit) trim();
    }
    void trim() {
        std::nth_element(buf.begin(), buf.begin() + (keep - 1), buf.end());
        tau = buf[keep - 1].first;
        buf.resize(keep);
    }
};

constexpr int kFlagChunk = 64;  // columns per scan of a tile row

// The first `store` entries of buf become the list; returns the smallest
// value outside it (+inf when nothing is outside).
template <class F>
double take_list(std::vector<std::pair<F, i32>>& buf, i32 store, i32* out) {
    double outside = std::numeric_limits<double>::infinity();
    if (static_cast<i32>(buf.size()) > store) {
        std::nth_element(buf.begin(), buf.begin() + store, buf.end());
        outside = static_cast<double>(buf[store].first);
    }
    for (i32 t = 0; t < store; ++t) out[t] = buf[t].second;
    return outside;
}

}  // namespace distances_detail

using namespace distances_detail;

template <class C>
double EuclideanDistances::ball_gap(const C* centre, double radius, i32 b) const {
    const std::size_t d = static_cast<std::size_t>(d_);
    const double* c = ball_centre_.data() + static_cast<std::size_t>(b) * d;
    // Eight running sums (vector lanes, not one long chain of additions):
    // the margin below holds for any order of the sum of squares.
    constexpr std::size_t kLanes = 8;
    double lanes[kLanes] = {};
    std::size_t k = 0;
    for (; k + kLanes <= d; k += kLanes)
        for (std::size_t q = 0; q < kLanes; ++q) {
            const double t = static_cast<double>(centre[k + q]) - c[k + q];
            lanes[q] += t * t;
        }
    for (; k < d; ++k) {
        const double t = static_cast<double>(centre[k]) - c[k];
        lanes[k % kLanes] += t * t;
    }
    double s = 0;
    for (double lane : lanes) s += lane;
    const double margin = 4 * (static_cast<double>(d) + 8) * kEps64;
    return std::sqrt(s) * (1 - margin) - (radius + ball_radius_[b]) * (1 + margin) - margin;
}

template <class Clear>
bool EuclideanDistances::rows_apart(i32 a, i32 b, Clear&& clear) const {
    for (i32 p = a * kRowBlock; p < std::min(n_, (a + 1) * kRowBlock); ++p)
        if (!clear(p, point_gap(p, b))) return false;
    return true;
}

// Calls visit(task, p, c0, c1, dots) for every row p of every task's row
// block and every column block [c0, c1) at or after `first_col(lo)` that
// skip(row block, column block) does not rule out, with dots[c - c0] the dot
// product of the centred rows p and c (positions in the order of perm_).
template <class First, class Skip, class F>
void EuclideanDistances::for_tiles(int n_threads, Control& control, First&& first_col, Skip&& skip, F&& visit) const {
    const i32 n = n_;
    const std::size_t tasks = (static_cast<std::size_t>(n) + kRowBlock - 1) / kRowBlock;
    auto run = [&](auto zero, std::size_t task) {
        using T = decltype(zero);
        const T* xc;
        if constexpr (std::is_same_v<T, float>)
            xc = xc32_.data();
        else
            xc = xc64_.data();
        const i32 lo = static_cast<i32>(task) * kRowBlock, hi = std::min(n, lo + kRowBlock);
        if constexpr (std::is_same_v<T, float>) {
            if (panel_dots_ != nullptr) {
                fused_tiles(task, lo, hi, first_col(lo), skip, visit, control);
                return;
            }
        }
        // Runs of consecutive column blocks in one product (a megabyte of
        // tile): the rows are packed once per run, not once per block.
        constexpr i32 span = kRowBlock * static_cast<i32>(4 / (sizeof(T) / sizeof(float)));
        std::vector<T> tile(static_cast<std::size_t>(kRowBlock) * span);
        const OneBlasThread one_thread(gemm_.threads);  // our threads are the parallelism
        const GemmFn<T> gemm = gemm_of<T>(gemm_);
        const int rows = hi - lo, k = static_cast<int>(d_);
        for (i32 start = first_col(lo); start < n;) {
            if (skip(static_cast<i32>(task), start / kRowBlock)) {
                start += kRowBlock;
                continue;
            }
            i32 end = std::min(n, start + kRowBlock);
            while (end < n && end - start < span && !skip(static_cast<i32>(task), end / kRowBlock))
                end = std::min(n, end + kRowBlock);
            const int m = end - start;
            product_abt(gemm, rows, m, k, xc + static_cast<std::size_t>(lo) * d_, k,
                        xc + static_cast<std::size_t>(start) * d_, k, tile.data(), m);
            for (i32 c0 = start; c0 < end; c0 += kRowBlock) {
                const i32 c1 = std::min(end, c0 + kRowBlock);
                for (i32 i = lo; i < hi; ++i)
                    visit(task, i, c0, c1, tile.data() + static_cast<std::size_t>(i - lo) * m + (c0 - start));
            }
            control.check();
            start = end;
        }
        control.advance(static_cast<std::uint64_t>(hi - lo));
    };
    for_each_tile_task(tasks, n_threads, run, control);
}

// for_tiles with float32 tiles a few panels wide (kFlagChunk columns: the
// screens' chunk), from the panel kernel: each column block not skipped,
// chunk by chunk, in cache.
template <class Skip, class F>
void EuclideanDistances::fused_tiles(std::size_t task, i32 lo, i32 hi, i32 first, Skip& skip, F& visit,
                                     Control& control) const {
    static_assert(kFlagChunk % kPanelColumns == 0 && kRowBlock % kFlagChunk == 0);
    thread_local std::vector<float> dots;
    dots.resize(static_cast<std::size_t>(kRowBlock) * kFlagChunk);
    const float* rows_x = xc32_.data() + static_cast<std::size_t>(lo) * d_;
    for (i32 start = first; start < n_; start += kRowBlock) {
        if (skip(static_cast<i32>(task), start / kRowBlock)) continue;
        const i32 end = std::min(n_, start + kRowBlock);
        for (i32 c0 = start; c0 < end; c0 += kFlagChunk) {
            const i32 c1 = std::min(end, c0 + kFlagChunk);
            for (i32 c = c0; c < c1; c += kPanelColumns)
                panel_dots_(rows_x, panels_.from(lo), hi - lo, d_, panels_.from(c), dots.data() + (c - c0), kFlagChunk);
            for (i32 i = lo; i < hi; ++i)
                visit(task, i, c0, c1, dots.data() + static_cast<std::size_t>(i - lo) * kFlagChunk);
        }
        control.check();
    }
    control.advance(static_cast<std::uint64_t>(hi - lo));
}

}  // namespace pairmetrics::matching
