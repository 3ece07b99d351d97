// The pricing solve of the complete graph (see matching_pricing.cpp): its helpers and the state shared by the
// pricing strategies, each in a unit of its own: the neighbour lists and the prefix by y
// (matching_price_prefix.cpp), the pairs inside blossoms (matching_price_inside.cpp) and the provider's screen
// of every pair (matching_price_screen.cpp).
#pragma once

#include "matching.hpp"
#include "matching_kept_pairs.hpp"
#include "matching_reorder.hpp"
#include "matching_solver.hpp"

#include "matching_tile_scan.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace pairmetrics::matching::pricing {

using i64 = std::int64_t;
using i32 = std::int32_t;

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr i64 kNoRadius = std::numeric_limits<i64>::max();
// Below every y - 2 r (and far from overflowing when y is added).
constexpr i64 kNeverAbove = std::numeric_limits<i64>::min() / 2;

// Largest value over any range [a, b) of a fixed array, in O(1) (sparse table).
class RangeMax {
  public:
    explicit RangeMax(const std::vector<i64>& values) : levels_(1, values) {
        const std::size_t len = values.size();
        for (std::size_t span = 2; span <= len; span *= 2) {
            const std::vector<i64>& prev = levels_.back();
            std::vector<i64> next(len - span + 1);
            for (std::size_t q = 0; q + span <= len; ++q) next[q] = std::max(prev[q], prev[q + span / 2]);
            levels_.push_back(std::move(next));
        }
    }
    i64 operator()(i32 a, i32 b) const {  // a < b
        const int level = floor_log2(static_cast<std::uint32_t>(b - a));
        return std::max(levels_[level][a], levels_[level][b - (i32{1} << level)]);
    }

  private:
    static int floor_log2(std::uint32_t x) {
        int level = 0;
        while (x >>= 1) ++level;
        return level;
    }
    std::vector<std::vector<i64>> levels_;
};

// The pricing inside blossoms takes rows in tasks of this many, and the
// later positions of their blossoms in tiles of this many columns.
constexpr i32 kInsideRows = 128;
constexpr i32 kInsideColumns = 1024;

// A screen skips the pairs inside a top-level blossom of at least this many
// vertices (the preorder walk prices them) and keeps those inside smaller
// ones, so that only changes of large blossoms force rows to be screened again.
constexpr i32 kSkipInside = 64;

inline std::uint64_t pair_key(i32 a, i32 b) {
    if (a > b) std::swap(a, b);
    return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
}

// Neighbour lists of all points, nearest first, with a float lower bound of each distance (the exact one is
// computed again for the few pairs the bound cannot rule out).
struct Lists {
    i32 store = 0;
    std::vector<i32> j;
    std::vector<float> d_below;
    std::vector<double> bound;  // lower bound of every distance outside the list
};

Lists neighbour_lists(const Distances& D, i32 store, int n_threads, Control& control);

// Distances to the solver's integers: round(min(d, cap) / cap * wmax). A cap
// far below 1 makes wmax / cap overflow, so tiny caps divide instead.
class WeightScale {
  public:
    WeightScale(double cap, i64 wmax)
        : cap_(cap),
          wmax_(wmax),
          scale_(cap > 0 ? static_cast<double>(wmax) / cap : 1.0),
          divide_(cap > 0 && !(scale_ < 0x1p1000)) {}
    i64 to_int(double d) const {
        if (d >= cap_) return cap_ > 0 ? wmax_ : 0;
        const double x = divide_ ? d / cap_ * static_cast<double>(wmax_) : d * scale_;
        return std::min<i64>(wmax_, static_cast<i64>(x + 0.5));
    }
    // Largest integer at most d's scaled value (a lower bound of to_int of any distance >= d).
    i64 floor_int(double d) const {
        if (d >= cap_) return to_int(cap_);
        const double x = divide_ ? d / cap_ * static_cast<double>(wmax_) * (1 - 0x1p-50) : d * scale_;
        return static_cast<i64>(x);
    }
    // A distance at least as large as `units` integers (never below, whatever the rounding).
    double distance_above(double units) const {
        if (!divide_) return units / scale_;
        return units / static_cast<double>(wmax_) * cap_ * (1 + 0x1p-50) + 0x1p-1070;
    }
    // A distance at most as large as `units` >= 0 integers (never above).
    double distance_below(double units) const {
        const double d = divide_ ? units / static_cast<double>(wmax_) * cap_ : units / scale_;
        return std::max(0.0, d * (1 - 0x1p-50));
    }

  private:
    double cap_;
    i64 wmax_;
    double scale_;
    bool divide_;
};

// The points every pricing prefix reads (the head of the order by y), their
// rows copied contiguously, and how many of them a block of rows scans at a
// time (so that a stretch stays in cache while the block reads it).
struct PrefixHead {
    std::vector<double> rows;
    std::int64_t dims = 0;
    i32 stretch = 64;
    const double* row(i32 t) const { return rows.data() + static_cast<std::size_t>(t) * dims; }
    i32 length() const { return dims > 0 ? static_cast<i32>(rows.size() / static_cast<std::size_t>(dims)) : 0; }
};
constexpr std::size_t kHeadBytes = std::size_t{1} << 30;  // larger heads are read in place
constexpr std::size_t kStretchBytes = std::size_t{1} << 18;

// Where a pass ends, so that the next one (at a finer scale) can start there.
struct PassState {
    std::vector<std::uint64_t> keys;  // the final graph
    std::vector<double> y;            // deflated duals, in units of the pass's integers
    std::vector<i32> mate;
    double cap = 0;
};

// One exact solve with weights round(min(d, cap) * scale), scale = max_weight / cap:
// start on the k nearest, price every pair against the duals, add the
// violated ones and re-solve (warm) until none is left.
//
// Pricing. A pair violates the duals iff 2 w < y_i + y_j - Z, Z the z-sum of
// the blossoms holding both. Pairs in the neighbour lists are priced
// directly; a pair in neither list weighs at least max(radius_i, radius_j),
// which rules out most others before their distance is computed:
//  - pairs in different top-level nodes (Z = 0) need y_j > c_i and y_i > c_j
//    with c = 2 radius - y: only a prefix of the points by decreasing y is
//    looked at; when that prefix is long (duals inflated by large blossoms
//    around well separated groups) the provider's screen of every pair
//    (d < a_i + a_j, from a matrix product for points) is used instead;
//  - pairs inside one top-level blossom have y inflated by the z of the
//    blossoms around them, so they are walked in the blossom forest's
//    preorder, where the smallest blossom holding i and j only grows as j
//    moves away from i: Z is known exactly without a lowest-common-ancestor
//    query; in large blossoms, tiles of the walk are screened by the
//    provider (y_i + y_j less a lower bound of Z over the tile) first.
class InsideScan;
struct InsideTask;

class PricedSolve {
  public:
    PricedSolve(const Distances& D, const Lists& L, double cap, const CompleteOptions& opt, Control& control,
                CompleteStats& stats, const PassState* from);
    // Solves until no pair violates the duals; `out` (if given) keeps where the pass ended.
    BlossomResult run(PassState* out);

  private:
    struct Hit {  // a violated pair (i, j, reduced cost) found away from i's own block
        i32 i, j;
        i64 rc;
    };

    i64 weight(i32 a, i32 b) const { return b == n_ || a == n_ ? 0 : ws_.to_int(D_(a, b)); }
    // The reduced cost of (i, j) when negative, else 0, from a lower bound of its weight: the exact weight (a
    // distance away) only when the bound, with the blossom duals around both, cannot rule the pair out.
    i64 violation(i32 i, i32 j, i64 w_below) const {
        const i64 y2 = r_.y[i] + r_.y[j];
        if (2 * w_below >= y2) return 0;
        const i64 z = forest_->common_z(i, j);
        if (2 * w_below - y2 + z >= 0) return 0;
        return std::min<i64>(0, 2 * weight(i, j) - y2 + z);
    }
    // out[t] = weight(a, bs[t]) for points a and bs[t] (not the ghost), t < count <= 64: one batch of the provider.
    void weights(i32 a, const i32* bs, int count, i64* out) const;
    i32 top_size(i32 v) const {
        return forest_->tree().root(v) < N_
                   ? 1
                   : forest_->tree().hi(forest_->tree().root(v)) - forest_->tree().lo(forest_->tree().root(v));
    }
    void start_graph(const PassState* from);
    BlossomResult solve_afresh();
    BlossomResult solve_again(bool may_rebuild);
    void add_keys(std::vector<std::uint64_t>& ks);
    void begin_round(BlossomResult r);
    void price_round();
    void price_lists_and_prefix(bool lists_only, bool prefix);
    PrefixHead prefix_head(bool none) const;
    // A word of prefix candidates: row i's entries [s0 + 64 w, +64) of the stretch from s0.
    struct PrefixWord {
        i32 i, w;
        std::uint64_t bits;
    };
    std::int64_t prefix_candidates(i32 lo, i32 hi, const i32* len, i32 s0, i32 s1, std::vector<PrefixWord>& out,
                                   std::int64_t& skipped) const;
    void price_lists(i32 lo, i32 hi);
    int price_prefix_word(const PrefixWord& e, i32 s0, const PrefixHead& head, std::vector<Hit>& local);
    void add_hits(std::vector<Hit>& local);
    void price_inside();
    std::unique_ptr<Distances::ScreenSet> inside_screen_set(i32 top) const;
    struct InsideCounts {
        std::int64_t computed = 0, screened = 0;  // exact distances, and candidates the screen ruled out
    };
    InsideCounts price_inside_rows(const InsideScan& scan, const InsideTask& task, const Distances::ScreenSet* set,
                                   std::vector<Hit>& local) const;
    std::int64_t screen_inside_tile(const InsideScan& scan, const InsideTask& task, const Distances::ScreenSet& set,
                                    i32 r0, i32 r1, i32 c0, i32 c1, std::uint64_t* bits,
                                    std::vector<std::uint64_t>& screened) const;
    std::int64_t price_inside_row(const InsideScan& scan, i32 p, i32 c0, const std::uint64_t* bits, i32& meet,
                                  i32& found, std::vector<Hit>& local) const;
    void mark_dirty_rows();
    void mark_repriced_rows();
    void settle_rows();
    // A blossom of the forest, its vertices [lo, hi) of the preorder relative to its top-level node's.
    struct Span {
        i32 top, lo, hi;
        i64 z;
        bool operator==(const Span& o) const { return lo == o.lo && hi == o.hi && z == o.z; }
    };
    std::vector<Span> blossom_spans() const;
    std::vector<char> unchanged_blossoms() const;
    void price_screen();
    // The kept pairs' violations (screen's first step), ruled out by their weight's lower bound where it suffices.
    void price_kept_pairs();
    // A partial screen's rows (dirty, or with a raised threshold) split into those screened against the
    // columns of the top-level node they left, by (snapshot, node), and those screened against every point.
    using RowsByNode = std::map<std::pair<i32, i32>, std::vector<i32>>;
    void split_screen_rows(const std::vector<i32>& rows, const std::vector<double>& a, std::vector<i32>& everywhere,
                           RowsByNode& from_node) const;
    // The largest top-level blossom (-1: none).
    i32 largest_top_blossom() const;
    bool screen_pays() const;
    std::vector<double> screen_thresholds() const;
    // The provider's screen set of `points`, with their entries of `a` (indexed by point).
    std::unique_ptr<Distances::ScreenSet> screen_set_of(const i32* points, i32 count,
                                                        const std::vector<double>& a) const;
    std::vector<std::uint64_t> violated_keys();
    void keep_pass(PassState& out) const;

    const Distances& D_;
    const Lists& L_;
    const CompleteOptions& opt_;
    Control& control_;
    CompleteStats& stats_;
    const double cap_;
    const i32 n_, N_;
    const i64 wmax_;
    const WeightScale ws_;
    const i32 store_, kk_;
    const std::size_t blocks_;
    // Each point adds at most kk of its violated pairs per round, the most
    // violated first: with many equal distances (duplicated points) thousands
    // of pairs can be violated at once, and a few per point are enough.
    const std::size_t enough_;
    std::vector<i64> radius_;
    // The graph solved, the warm start of the first solve, and the solver,
    // which later rounds resume with their new edges (its blossoms kept).
    std::vector<i32> eu_, ev_;
    std::vector<i64> w_;
    bool warm_ = false;
    BlossomResult previous_;
    std::vector<i64> deflated_;  // previous duals with the blossom duals folded in
    std::unique_ptr<detail::Solver<i64>> solver_;
    double inside_pairs_ = 0;  // the solver's inside_pairs() after the last round
    // The round: its solution, blossom forest, points by decreasing y, thresholds c, violated pairs found.
    BlossomResult r_;
    std::unique_ptr<DualForest> forest_;
    std::vector<i32> by_y_;
    std::vector<i64> c_;
    std::vector<i64> y_by_, c_by_;  // y and c in the order of by_y_ (the prefix scan reads them in sequence)
    std::vector<i32> root_by_;      // the top-level node in the order of by_y_ (likewise)
    // -min c_by over each 64 entries (aligned), as range maxima: runs without a c_j < y_i are skipped whole.
    std::unique_ptr<RangeMax> chunk_low_c_;
    std::vector<std::vector<std::pair<i64, i32>>> found_;
    std::vector<Hit> hits_;
    std::mutex hits_lock_;
    std::vector<i64> block_extra_;
    // The screen's state across rounds (see price_screen).
    KeptPairs kept_;
    bool screen_valid_ = false;
    std::vector<double> screen_a_;
    std::vector<char> dirty_, skipped_;
    std::vector<i32> prev_top_;
    // Where each dirty point came from: the previous top-level nodes of a
    // round (snapshots of prev_top_) and, per point, the snapshot its node
    // is in (-1: not dirty; -2: dirty twice, every pair to screen again).
    std::vector<std::vector<i32>> dirty_snaps_;
    std::vector<i32> dirty_snap_;
    // Incremental pricing across top-level nodes (see mark_repriced_rows): the rows to price in full this round
    // (also as bits over the order by y), and the reference of the last complete pricing.
    static constexpr i64 kDirty = i64{1} << 61;  // above every rise of a dual
    std::vector<i64> rise_, minus_rise_by_;      // y - y_ref (or kDirty) per point, and minus it by y
    std::vector<char> split_;                    // per point (see mark_repriced_rows)
    std::vector<std::uint64_t> split_by_y_;      // split_ by y, 64 per word
    bool clean(i32 i) const { return rise_[i] <= 0; }
    bool have_reference_ = false;
    std::vector<char> settled_;
    std::vector<i64> y_ref_;
    std::vector<i32> top_ref_, top_ref_size_;  // per vertex its top-level node then; per node its vertex count
    std::vector<i32> order_ref_, lo_ref_;      // the vertices in preorder then, and where each node started
    std::vector<Span> spans_ref_;              // the blossoms then (blossom_spans)
    std::vector<i32> spans_ref_at_;            // per top-level node then: its first entry of spans_ref_
};

}  // namespace pairmetrics::matching::pricing
