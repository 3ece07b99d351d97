// The complete graph on a distance provider, solved exactly by pricing: the
// solve starts on each point's nearest neighbours, prices every other pair
// against the duals and re-solves warm with the violated ones; passes at
// finer scales follow while the cost is far below the largest distance.

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

namespace pairmetrics::matching {

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

}  // namespace

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
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

std::uint64_t pair_key(i32 a, i32 b) {
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

Lists neighbour_lists(const Distances& D, i32 store, int n_threads, Control& control) {
    const i32 n = D.size();
    Lists L;
    L.store = store;
    L.j.resize(static_cast<std::size_t>(n) * store);
    L.d_below.resize(L.j.size());
    L.bound.assign(n, std::numeric_limits<double>::infinity());
    D.nearest(store, L.j.data(), L.bound.data(), n_threads, control);
    const std::size_t blocks = (static_cast<std::size_t>(n) + 255) / 256;
    parallel_for(
        blocks, n_threads,
        [&](std::size_t b) {
            std::vector<std::pair<double, i32>> row(store);
            std::vector<double> d(store);
            const i32 lo = static_cast<i32>(b) * 256, hi = std::min(n, lo + 256);
            for (i32 i = lo; i < hi; ++i) {
                const std::size_t o = static_cast<std::size_t>(i) * store;
                for (i32 t = 0; t < store; t += 64) D.distances(i, &L.j[o + t], std::min(64, store - t), &d[t]);
                for (i32 t = 0; t < store; ++t) row[t] = {d[t], L.j[o + t]};
                std::sort(row.begin(), row.end());
                for (i32 t = 0; t < store; ++t) {
                    L.d_below[o + t] = float_below(row[t].first);
                    L.j[o + t] = row[t].second;
                }
            }
            control.check();
        },
        &control);
    return L;
}

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

PricedSolve::PricedSolve(const Distances& D, const Lists& L, double cap, const CompleteOptions& opt, Control& control,
                         CompleteStats& stats, const PassState* from)
    : D_(D),
      L_(L),
      opt_(opt),
      control_(control),
      stats_(stats),
      cap_(cap),
      n_(D.size()),
      N_(n_ + (opt.ghost ? 1 : 0)),
      wmax_(max_weight(N_)),
      ws_(cap, wmax_),
      store_(L.store),
      kk_(std::max<i32>(1, std::min<i32>(opt.k, L.store))),
      blocks_((static_cast<std::size_t>(n_) + 255) / 256),
      enough_(4 * static_cast<std::size_t>(kk_)),
      radius_(n_, kNoRadius),
      block_extra_(blocks_),
      dirty_(n_, 0),
      skipped_(n_, 0),
      dirty_snap_(n_, -1) {
    for (i32 i = 0; i < n_; ++i)
        if (!std::isinf(L.bound[i])) radius_[i] = ws_.floor_int(L.bound[i]);
    start_graph(from);
}

// Start graph: k nearest per point, a Hamiltonian path (so that a perfect
// matching surely exists) and the ghost's star; or an earlier pass's final
// graph and duals (in this pass's units, kept in range: the solver lowers
// whatever they violate).
void PricedSolve::start_graph(const PassState* from) {
    std::vector<std::uint64_t> keys;
    if (from) {
        keys = from->keys;
        const double f = from->cap / cap_, top = 2.0 * static_cast<double>(wmax_);
        deflated_.resize(N_);
        for (i32 v = 0; v < N_; ++v) {
            const double yv = from->y[v] == 0 ? 0.0 : from->y[v] * f;  // f may be inf after a huge drop of the cap
            deflated_[v] = static_cast<i64>(std::floor(std::clamp(yv, -top, top)));
        }
        previous_.mate = from->mate;
        warm_ = true;
    } else {
        for (i32 i = 0; i < n_; ++i) {
            for (i32 t = 0; t < kk_; ++t) keys.push_back(pair_key(i, L_.j[static_cast<std::size_t>(i) * store_ + t]));
            if (i + 1 < n_) keys.push_back(pair_key(i, i + 1));
            if (opt_.ghost) keys.push_back(pair_key(i, n_));
        }
    }
    add_keys(keys);
}

BlossomResult PricedSolve::run(PassState* out) {
    for (int rounds = 1;; ++rounds) {
        // Each round adds new pairs of a finite set and typically a handful of
        // rounds suffice; an endless loop could only come from an asymmetric D.
        if (rounds > 1000) throw std::logic_error("matching: pricing does not converge (is D symmetric?)");
        auto t0 = std::chrono::steady_clock::now();
        BlossomResult r = rounds == 1 ? solve_afresh() : solve_again(rounds > 2);
        stats_.seconds_solve += seconds_since(t0);
        if (rounds == 1 && !warm_) stats_.seconds_first_solve += seconds_since(t0);
        t0 = std::chrono::steady_clock::now();
        if (!r.perfect) throw std::logic_error("matching: start graph without a perfect matching (internal error)");
        if (opt_.report)
            control_.report(static_cast<std::uint64_t>(2 * n_ - n_ / (rounds + 1)), static_cast<std::uint64_t>(2 * n_));
        begin_round(std::move(r));
        price_round();
        std::vector<std::uint64_t> keys = violated_keys();
        for (std::size_t b = 0; b < blocks_; ++b) {
            stats_.extra_pairs += block_extra_[b];
            stats_.prefix_pairs += block_extra_[b];
        }
        std::fill(block_extra_.begin(), block_extra_.end(), 0);
        stats_.seconds_pricing += seconds_since(t0);
        if (keys.empty()) {
            solver_.reset();
            stats_.rounds += rounds;
            stats_.edges = static_cast<std::int64_t>(eu_.size());
            stats_.last = r_.stats;
            if (out) keep_pass(*out);
            return std::move(r_);
        }
        t0 = std::chrono::steady_clock::now();
        add_keys(keys);
        stats_.seconds_pricing += seconds_since(t0);
    }
}

BlossomResult PricedSolve::solve_afresh() {
    const WarmStart warm{deflated_.data(), previous_.mate.data()};
    solver_ = std::make_unique<detail::Solver<i64>>(N_, eu_.size(), eu_.data(), ev_.data(), w_.data(), control_);
    BlossomResult r = solver_->run(warm_ ? &warm : nullptr);
    inside_pairs_ = solver_->inside_pairs();
    deflated_ = {};
    previous_ = {};
    return r;
}

// The last round's solver, resumed with the new edges. Its blossoms may merge
// into one far larger (a tree that met several clusters), both optimal but
// the larger costs far more pricing inside blossoms (pairs ~ size^2, duals
// inflated across clusters). When the blossoms grew fourfold and hold more
// than a quarter of all pairs, the round is solved afresh from the last duals
// with the blossoms folded in (as every round is without opt_.resume); smaller
// merged blossoms (Gaussian data) price cheaply, and solving afresh costs
// about a first solve. Never after the first pricing of a pass: it adds the
// violated pairs of the neighbour lists at once, which reshapes the blossoms
// however the round is solved.
BlossomResult PricedSolve::solve_again(bool may_rebuild) {
    if (opt_.resume) {
        solver_->add_edges(eu_.size(), eu_.data(), ev_.data(), w_.data());
        BlossomResult r = solver_->resume();
        stats_.resume_freed += r.stats.freed;
        stats_.resume_opened += r.stats.opened;
        const double pairs = solver_->inside_pairs();
        const double all = static_cast<double>(N_) * N_;
        if (!may_rebuild || pairs <= 4 * inside_pairs_ + 64.0 * N_ || pairs <= all / 4) {
            ++stats_.resumes;
            inside_pairs_ = pairs;
            return r;
        }
        ++stats_.rebuilds;
    }
    deflated_.resize(N_);
    for (i32 v = 0; v < N_; ++v) deflated_[v] = r_.y[v] - forest_->enclosing_z(v) / 2;
    previous_.mate = r_.mate;
    warm_ = true;
    return solve_afresh();
}

void PricedSolve::begin_round(BlossomResult r) {
    r_ = std::move(r);
    forest_ = std::make_unique<DualForest>(r_);
    by_y_.resize(n_);
    c_.resize(n_);
    for (i32 i = 0; i < n_; ++i) {
        by_y_[i] = i;
        c_[i] = radius_[i] == kNoRadius ? kNoRadius : 2 * radius_[i] - r_.y[i];
    }
    const std::vector<i64>& y = r_.y;
    std::sort(by_y_.begin(), by_y_.end(), [&y](i32 a, i32 b) { return y[a] > y[b] || (y[a] == y[b] && a < b); });
    y_by_.resize(n_);
    c_by_.resize(n_);
    root_by_.resize(n_);
    for (i32 t = 0; t < n_; ++t) {
        y_by_[t] = y[by_y_[t]];
        c_by_[t] = c_[by_y_[t]];
        root_by_[t] = forest_->tree().root(by_y_[t]);
    }
    std::vector<i64> low((static_cast<std::size_t>(n_) + 63) / 64, std::numeric_limits<i64>::min());
    for (i32 t = 0; t < n_; ++t) low[t / 64] = std::max(low[t / 64], -c_by_[t]);
    chunk_low_c_ = std::make_unique<RangeMax>(low);
    found_.assign(n_, {});
    hits_.clear();
    mark_dirty_rows();
    mark_repriced_rows();
}

// Incremental pricing of the pairs across top-level nodes (Z = 0). After a
// round that priced every pair (the prefix or the screen ran), the points
// that are an end of no violated pair found are settled: y_ref = y, and
// their top-level node then. Invariant (I): every pair outside the graph
// between two settled points has 2 w >= y_ref_i + y_ref_j - Z_ref (Z_ref
// its blossom duals then). Each point's rise: y_i - y_ref_i, or kDirty when
// it is not settled; it is split when its top-level node then was a blossom
// whose vertex set is no top-level node now.
//  - A pair across two top-level nodes now, not both split, was not inside
//    one top-level blossom then (such a blossom is either a top-level node
//    now, which would hold both, or split), so Z_ref = 0 and with rise_i +
//    rise_j <= 0: 2 w >= y_ref_i + y_ref_j >= y_i + y_j. The prefix prices
//    only the pairs whose rises add up above 0 and, for split rows, those
//    with split columns (each still from its smaller end). The pairs priced
//    include every violated one, so the same are found, in the same order.
//    Pairs in the graph satisfy the duals by the solve.
//  - Pairs inside one top-level node now: price_inside prices them all but
//    in blossoms unchanged since then (see unchanged_blossoms).
//  - (I) holds after the next complete round for the duals and blossoms of
//    then, for every pair between two points settled then: it was priced
//    and found not violated (a violated pair unsettles both ends; a row
//    that stopped at enough_ found some), or left out by one of the rules
//    above, which show it not violated.
//  - Rounds that skip the prefix (violations in the lists) keep the
//    reference; a new pass (new weights) starts without one.
void PricedSolve::mark_repriced_rows() {
    const BlossomTree& lam = forest_->tree();
    rise_.assign(n_, kDirty);
    split_.assign(n_, 0);
    if (have_reference_ && !opt_.full_pricing) {
        // Per top-level node: the reference node of its vertices (-1 when they differ), and how many they are.
        std::vector<std::pair<i32, i32>> then(r_.parent.size(), {-2, 0});
        for (i32 v = 0; v < N_; ++v) {
            auto& [ref, count] = then[lam.root(v)];
            ref = ref == -2 || ref == top_ref_[v] ? top_ref_[v] : -1;
            ++count;
        }
        for (i32 i = 0; i < n_; ++i) {
            if (!settled_[i]) continue;
            const auto [ref, count] = then[lam.root(i)];
            rise_[i] = r_.y[i] - y_ref_[i];
            split_[i] = top_ref_[i] >= N_ && !(ref >= 0 && top_ref_size_[ref] == count);
        }
    }
    minus_rise_by_.resize(n_);
    split_by_y_.assign((static_cast<std::size_t>(n_) + 63) / 64, 0);
    for (i32 t = 0; t < n_; ++t) {
        minus_rise_by_[t] = -rise_[by_y_[t]];
        if (split_[by_y_[t]]) split_by_y_[t / 64] |= std::uint64_t{1} << (t % 64);
    }
}

// After a round that priced every pair across top-level nodes: the new reference (see mark_repriced_rows).
void PricedSolve::settle_rows() {
    if (opt_.full_pricing) return;
    const BlossomTree& lam = forest_->tree();
    settled_.assign(n_, 1);
    for (i32 i = 0; i < n_; ++i)
        if (!found_[i].empty()) settled_[i] = 0;
    for (const Hit& h : hits_) {
        if (h.i < n_) settled_[h.i] = 0;
        if (h.j < n_) settled_[h.j] = 0;
    }
    y_ref_.assign(r_.y.begin(), r_.y.begin() + n_);
    top_ref_.assign(lam.roots().begin(), lam.roots().begin() + N_);
    top_ref_size_.assign(r_.parent.size(), 1);
    for (i32 b = N_; b < static_cast<i32>(r_.parent.size()); ++b) top_ref_size_[b] = lam.hi(b) - lam.lo(b);
    order_ref_ = lam.order();
    lo_ref_.resize(r_.parent.size());
    for (std::size_t x = 0; x < r_.parent.size(); ++x) lo_ref_[x] = lam.lo(static_cast<i32>(x));
    spans_ref_ = blossom_spans();
    spans_ref_at_.assign(r_.parent.size() + 1, -1);
    for (std::size_t k = spans_ref_.size(); k-- > 0;) spans_ref_at_[spans_ref_[k].top] = static_cast<i32>(k);
    have_reference_ = true;
}

// Every blossom (with its z), grouped by top-level node, by interval.
std::vector<PricedSolve::Span> PricedSolve::blossom_spans() const {
    const BlossomTree& lam = forest_->tree();
    std::vector<Span> spans;
    for (i32 b = N_; b < static_cast<i32>(r_.parent.size()); ++b)
        if (lam.hi(b) > lam.lo(b)) {
            const i32 top = lam.root(b), lo = lam.lo(top);
            spans.push_back(Span{top, lam.lo(b) - lo, lam.hi(b) - lo, r_.z[b - N_]});
        }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.top < b.top || (a.top == b.top && (a.lo < b.lo || (a.lo == b.lo && a.hi < b.hi)));
    });
    return spans;
}

// Per node: whether it is a top-level blossom none of whose pairs can be
// violated (none need pricing). Its vertices are settled, none's dual rose,
// they are the vertex set of a top-level blossom then and the blossoms
// inside are those of then, with the same z, so each pair's Z is Z_ref: by
// (I) of mark_repriced_rows, 2 w >= y_ref_i + y_ref_j - Z >= y_i + y_j - Z.
// Compared exactly: the vertices in the same preorder, and every blossom's interval of it and z.
std::vector<char> PricedSolve::unchanged_blossoms() const {
    const BlossomTree& lam = forest_->tree();
    std::vector<char> unchanged(r_.parent.size(), 0);
    if (!have_reference_ || opt_.full_pricing) return unchanged;
    const std::vector<Span> spans = blossom_spans();
    for (std::size_t k = 0; k < spans.size();) {
        const i32 top = spans[k].top;
        std::size_t end = k;
        while (end < spans.size() && spans[end].top == top) ++end;
        const i32 lo = lam.lo(top), size = lam.hi(top) - lo, first = lam.order()[lo];
        const i32 then = top_ref_[first];
        bool same = then >= N_ && top_ref_size_[then] == size;
        for (i32 q = 0; same && q < size; ++q) {
            const i32 v = lam.order()[lo + q];
            same = order_ref_[lo_ref_[then] + q] == v && (v >= n_ || clean(v));
        }
        const i32 at = same ? spans_ref_at_[then] : -1;
        const std::size_t past = static_cast<std::size_t>(at) + (end - k);  // then's entries end here
        same = at >= 0 && past <= spans_ref_.size() && spans_ref_[past - 1].top == then &&
               (past == spans_ref_.size() || spans_ref_[past].top != then) &&
               std::equal(spans.begin() + k, spans.begin() + end, spans_ref_.begin() + at);
        unchanged[top] = same;
        k = end;
    }
    return unchanged;
}

void PricedSolve::keep_pass(PassState& out) const {
    out.keys.resize(eu_.size());
    for (std::size_t e = 0; e < eu_.size(); ++e) out.keys[e] = pair_key(eu_[e], ev_[e]);
    out.y.resize(N_);
    for (i32 v = 0; v < N_; ++v)
        out.y[v] = static_cast<double>(r_.y[v]) - static_cast<double>(forest_->enclosing_z(v)) / 2;
    out.mate = r_.mate;
    out.cap = cap_;
}

void PricedSolve::add_keys(std::vector<std::uint64_t>& ks) {
    const CompleteOptions& opt = opt_;
    Control& control = control_;
    auto& eu = eu_;
    auto& ev = ev_;
    auto& w = w_;
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    const std::size_t old = eu.size();
    eu.resize(old + ks.size());
    ev.resize(old + ks.size());
    w.resize(old + ks.size());
    parallel_for((ks.size() + 4095) / 4096, opt.n_threads,
                 [&](std::size_t b) {
                     const std::size_t hi = std::min(ks.size(), (b + 1) * 4096);
                     for (std::size_t t = b * 4096; t < hi; ++t) {
                         const i32 a = static_cast<i32>(ks[t] >> 32), c = static_cast<i32>(ks[t] & 0xffffffffu);
                         eu[old + t] = a;
                         ev[old + t] = c;
                         w[old + t] = weight(a, c);
                     }
                 },
                 &control);
}

void PricedSolve::price_lists_and_prefix(bool lists_only, bool prefix) {
    const Lists& L = L_;
    const CompleteOptions& opt = opt_;
    Control& control = control_;
    const i32 n = n_;
    const i32 store = store_;
    const std::size_t blocks = blocks_;
    const std::size_t enough = enough_;
    const BlossomResult& r = r_;
    const std::vector<i32>& by_y = by_y_;
    const std::vector<i64>& c = c_;
    const std::vector<i64>& y_by = y_by_;
    auto& found = found_;
    auto& block_extra = block_extra_;
    const PrefixHead head = prefix_head(lists_only || !prefix);
    const i32 stretch = head.rows.empty() ? Distances::kScreenColumns : head.stretch;
    // The head's float32 copies for the screen (when the provider has one).
    const std::vector<double> screen_a = head.rows.empty() ? std::vector<double>{} : screen_thresholds();
    const std::unique_ptr<Distances::ScreenSet> head_set =
        head.rows.empty() ? nullptr : screen_set_of(by_y_.data(), head.length(), screen_a);
    std::atomic<i64> ruled_out{0};      // pairs of the prefix the screen ruled out
    std::atomic<i64> clean_skipped{0};  // entries between clean rows (see prefix_candidates)
    parallel_for(
        blocks, opt.n_threads,
        [&](std::size_t b) {
            i64 extra = 0;
            std::vector<Hit> local;  // violated pairs found for their other end
            const i32 lo = static_cast<i32>(b) * 256, hi = std::min(n, lo + 256);
            for (i32 i = lo; i < hi; ++i) {
                const std::size_t o = static_cast<std::size_t>(i) * store;
                auto& f = found[i];
                f.clear();
                // The duals of the list are scattered over y: fetched ahead.
                constexpr i32 kAhead = 16;
                for (i32 t = 0; t < std::min(kAhead, store); ++t) prefetch_read(&r.y[L.j[o + t]]);
                for (i32 t = 0; t < store; ++t) {
                    if (t + kAhead < store) prefetch_read(&r.y[L.j[o + t + kAhead]]);
                    const i32 j = L.j[o + t];
                    const i64 rc = violation(i, j, ws_.to_int(L.d_below[o + t]));  // (to_int does not decrease)
                    if (rc < 0) f.emplace_back(rc, j);
                }
            }
            if (lists_only || !prefix) {
                block_extra[b] = 0;
                control.check();
                return;
            }
            // Enough violated pairs for this round: stop looking (with
            // many of them, as after a start on a poor graph, the scan
            // would be quadratic; the pairs left are priced again).
            // The condition is symmetric, so each pair is computed from
            // its smaller end only (a round that stops early finds a
            // violation, so the last round sees every pair).
            // The prefix y_j > c_i (y_by decreases), 64 entries at a
            // time: the bits of c_j < y_i, then those pairs in order.
            // Every row scans the head of the same order: the rows of the
            // block take it a stretch at a time, from the contiguous copy.
            i32 len[256];
            i32 longest = 0;
            for (i32 i = lo; i < hi; ++i) {
                const i64 ci = c[i];
                len[i - lo] = static_cast<i32>(
                    std::partition_point(y_by.begin(), y_by.end(), [ci](i64 y) { return y > ci; }) - y_by.begin());
                longest = std::max(longest, len[i - lo]);
            }
            // Rows by decreasing prefix length: those reaching a stretch come first (the screen's rows).
            std::vector<i32> by_len(hi - lo);
            for (i32 i = lo; i < hi; ++i) by_len[i - lo] = i;
            std::stable_sort(by_len.begin(), by_len.end(), [&](i32 u, i32 v) { return len[u - lo] > len[v - lo]; });
            const std::unique_ptr<Distances::ScreenSet> row_set =
                head_set ? screen_set_of(by_len.data(), hi - lo, screen_a) : nullptr;
            std::vector<PrefixWord> cand;  // only the words holding a candidate
            std::vector<std::uint64_t> screened;
            std::vector<i32> rank_of(hi - lo);  // a row's place in by_len (the screen's rows)
            for (i32 q = 0; q < hi - lo; ++q) rank_of[by_len[q] - lo] = q;
            i32 js[64], at[64];
            i64 ws[64];
            std::int64_t skipped = 0;
            for (i32 s0 = 0; s0 < longest; s0 += stretch) {
                const i32 s_end = std::min(longest, s0 + stretch);
                const int words = (s_end - s0 + 63) / 64;
                cand.clear();
                const std::int64_t candidates = prefix_candidates(lo, hi, len, s0, s_end, cand, skipped);
                i32 reach = 0;  // rows of the stretch
                while (reach < hi - lo && len[by_len[reach] - lo] > s0) ++reach;
                if (row_set &&
                    (opt_.screen_every_stretch || static_cast<double>(candidates) * D_.exact_cost() >
                                                      static_cast<double>(reach) * (s_end - s0) * D_.screen_cost())) {
                    screened.resize(static_cast<std::size_t>(reach) * words);
                    D_.screen_block(*row_set, 0, reach, *head_set, s0, s_end, words, screened.data(), 0.0);
                    std::int64_t kept = 0;
                    for (PrefixWord& e : cand) {
                        e.bits &= screened[static_cast<std::size_t>(rank_of[e.i - lo]) * words + e.w];
                        kept += static_cast<std::int64_t>(std::bitset<64>(e.bits).count());
                    }
                    ruled_out.fetch_add(candidates - kept, std::memory_order_relaxed);
                }
                for (const PrefixWord& e : cand) {
                    const i32 i = e.i;
                    auto& f = found[i];
                    if (f.size() >= enough) continue;
                    int count = 0;
                    for (std::uint64_t bits = e.bits; bits != 0; bits &= bits - 1) {
                        const i32 t = s0 + 64 * e.w + lowest_bit(bits);
                        at[count] = t;
                        js[count++] = by_y[t];
                    }
                    if (count == 0) continue;
                    if (head.rows.empty()) {
                        weights(i, js, count, ws);
                    } else {
                        const double* xi = D_.point(i);
                        for (int t = 0; t < count; ++t) ws[t] = ws_.to_int(D_.distance_between(xi, head.row(at[t])));
                    }
                    const i64 yi = r.y[i];
                    for (int t = 0; t < count && f.size() < enough; ++t) {
                        const i64 rc = 2 * ws[t] - yi - y_by[at[t]];
                        if (rc < 0) {
                            f.emplace_back(rc, js[t]);
                            local.push_back(Hit{i, js[t], rc});
                        }
                    }
                    if (((extra + count) >> 16) != (extra >> 16)) control.check();
                    extra += count;
                }
                control.check();
            }
            add_hits(local);
            clean_skipped.fetch_add(skipped, std::memory_order_relaxed);
            block_extra[b] = extra;
            control.check();
        },
        &control);
    stats_.prefix_screened += ruled_out.load();
    stats_.prefix_skipped += clean_skipped.load();
}

// The pairs of rows [lo, hi) (prefix lengths len) with the stretch [s0, s1)
// of the order by y that the prefix scan prices: y_j > c_i (inside the
// prefix), y_i > c_j, j > i (each pair from one end) and in different
// top-level nodes; appended to `out` as the words (64 entries each) that
// hold one, row by row (most words of a long prefix hold none). Rows that found enough
// violated pairs are left out, and so are the pairs whose duals' rises add
// up to at most 0 (entries of the prefix left out so, whatever j: `skipped`).
// Returns how many.
std::int64_t PricedSolve::prefix_candidates(i32 lo, i32 hi, const i32* len, i32 s0, i32 s1,
                                            std::vector<PrefixWord>& out, std::int64_t& skipped) const {
    static const LessThanBitsFn less_than = less_than_bits_for(SimdLevel::automatic);
    std::int64_t total = 0;
    for (i32 i = lo; i < hi; ++i) {
        if (found_[i].size() >= enough_) continue;
        const i64 rise = rise_[i];
        const i64 yi = r_.y[i];
        const i32 end = std::min(len[i - lo], s1);
        const i32 last_chunk = (end + 63) / 64;
        auto none_below = [&](i32 a, i32 b) { return -(*chunk_low_c_)(a, b) >= yi; };  // chunks [a, b)
        for (i32 t0 = s0; t0 < end; t0 += 64) {
            const i32 chunk = t0 / 64;
            if (none_below(chunk, chunk + 1)) {  // skip the longest run without a candidate (doubling)
                i32 run = 1;
                while (chunk + 2 * run <= last_chunk && none_below(chunk, chunk + 2 * run)) run *= 2;
                t0 += 64 * (run - 1);
                continue;
            }
            std::uint64_t keep = 0, below = less_than(c_by_.data() + t0, yi, std::min(64, end - t0));
            if (rise != kDirty) {  // rise_j > -rise_i, or both split
                const std::uint64_t need = less_than(minus_rise_by_.data() + t0, rise, std::min(64, end - t0)) |
                                           (split_[i] ? split_by_y_[chunk] : 0);
                skipped += static_cast<std::int64_t>(std::bitset<64>(below & ~need).count());
                below &= need;
            }
            const i32 root_i = forest_->tree().root(i);
            for (std::uint64_t bits = below; bits != 0; bits &= bits - 1) {
                const int at = lowest_bit(bits);
                if (by_y_[t0 + at] > i && root_by_[t0 + at] != root_i) keep |= std::uint64_t{1} << at;
            }
            if (keep == 0) continue;
            out.push_back(PrefixWord{i, (t0 - s0) / 64, keep});
            total += static_cast<std::int64_t>(std::bitset<64>(keep).count());
        }
    }
    return total;
}

PrefixHead PricedSolve::prefix_head(bool none) const {
    PrefixHead head;
    head.dims = D_.dims();
    if (none || n_ == 0 || D_.point(0) == nullptr || head.dims <= 0) return head;
    const i64 lowest_c = *std::min_element(c_.begin(), c_.end());
    const auto len = static_cast<std::size_t>(
        std::partition_point(y_by_.begin(), y_by_.end(), [lowest_c](i64 y) { return y > lowest_c; }) - y_by_.begin());
    const std::size_t row_bytes = static_cast<std::size_t>(head.dims) * sizeof(double);
    if (len == 0 || len * row_bytes > kHeadBytes) return head;
    head.stretch = static_cast<i32>(std::clamp<std::size_t>(kStretchBytes / row_bytes / 64 * 64, 64, 4096));
    head.rows.resize(len * static_cast<std::size_t>(head.dims));
    parallel_for((len + 4095) / 4096, opt_.n_threads,
                 [&](std::size_t b) {
                     for (std::size_t t = b * 4096; t < std::min(len, (b + 1) * 4096); ++t)
                         std::copy_n(D_.point(by_y_[t]), head.dims, head.rows.data() + t * head.dims);
                     control_.check();
                 },
                 &control_);
    return head;
}

void PricedSolve::weights(i32 a, const i32* bs, int count, i64* out) const {
    double d[64];
    D_.distances(a, bs, count, d);
    for (int t = 0; t < count; ++t) out[t] = ws_.to_int(d[t]);
}

void PricedSolve::add_hits(std::vector<Hit>& local) {
    if (local.empty()) return;
    std::lock_guard<std::mutex> g(hits_lock_);
    hits_.insert(hits_.end(), local.begin(), local.end());
    local.clear();
}

// The pairs inside top-level blossoms, by preorder position q (of
// lam.order()): y, the rows of points and the radius rule. A pair i, j
// outside the lists, meeting first in blossom B, can only violate when
// y_i + y_j - zsum(B) > 2 max(r_i, r_j), i.e. when both
//   y_j > 2 r_i - y_i + zsum(B)   and   y_j - 2 r_j > zsum(B) - y_i;
// with the largest y and y - 2 r over a range of the preorder (sparse
// tables), whole runs of j are ruled out at once.
class InsideScan {
  public:
    InsideScan(const Distances& D, const BlossomResult& r, const DualForest& forest, const std::vector<i64>& radius,
               int n_threads, Control& control);
    // Whether row p (a point in a blossom, with a radius) may have a pair priced inside its top-level blossom.
    bool active(i32 p) const;
    // Bits (from c0, 64 per word) of the positions q in [max(c0, p + 1), c1) of p's blossom
    // whose pair with row p the radius rule cannot rule out; meet: the
    // smallest blossom holding p and the positions looked at (it climbs).
    std::int64_t candidates(i32 p, i32 c0, i32 c1, i32& meet, std::uint64_t* bits) const;
    // The same bits, a superset, for a tile [c0, c1) inside column block
    // `block` (positions [block, block + 1) * kInsideColumns): ruled out
    // with the z-sum of `meet` climbed to hold the whole tile, a lower bound
    // of Z for every pair of it (branch-free, 64 at a time).
    std::int64_t tile_candidates(i32 p, i32 c0, i32 c1, i32 block, i32& meet, std::uint64_t* bits) const;
    // Whether the rule rules out the pair of rows p and q, meeting first in a blossom of z-sum Z.
    bool ruled_out(i32 p, i32 q, i64 Z) const {
        const i64 T = y_pre_[p] + y_pre_[q] - Z;
        return T <= 2 * radius_[lam_.order()[p]] || y_pre_[p] + slack_pre_[q] - Z <= 0;
    }
    // out[t] = the distance of rows p and qs[t] (the provider's bits).
    void distances(i32 p, const i32* qs, int count, double* out) const;
    i32 vertex(i32 q) const { return lam_.order()[q]; }
    i64 y(i32 q) const { return y_pre_[q]; }
    const BlossomTree& tree() const { return lam_; }
    const DualForest& forest() const { return forest_; }
    i32 parent(i32 x) const { return r_.parent[x]; }

  private:
    const Distances& D_;
    const BlossomResult& r_;
    const DualForest& forest_;
    const BlossomTree& lam_;
    const std::vector<i64>& radius_;
    std::vector<i64> y_pre_, slack_pre_;
    std::unique_ptr<RangeMax> y_max_, slack_max_;
    // -y and -slack (the tile scan's form), and the largest y and slack of each column block.
    std::vector<i64> minus_y_, minus_slack_, block_y_max_, block_slack_max_;
    // Points: their rows in preorder (read in increasing order, not
    // scattered over the input), unless that copy is too large.
    std::vector<double> rows_pre_;
};

InsideScan::InsideScan(const Distances& D, const BlossomResult& r, const DualForest& forest,
                       const std::vector<i64>& radius, int n_threads, Control& control)
    : D_(D), r_(r), forest_(forest), lam_(forest.tree()), radius_(radius) {
    const i32 n = D.size();
    const i32 len = static_cast<i32>(lam_.order().size());
    y_pre_.resize(len);
    slack_pre_.resize(len);
    for (i32 q = 0; q < len; ++q) {
        const i32 v = lam_.order()[q];
        y_pre_[q] = r.y[v];
        // (no radius: every pair of v is in its list, priced there, or v is the ghost)
        slack_pre_[q] = v < n && radius[v] != kNoRadius ? r.y[v] - 2 * radius[v] : kNeverAbove;
    }
    y_max_ = std::make_unique<RangeMax>(y_pre_);
    slack_max_ = std::make_unique<RangeMax>(slack_pre_);
    minus_y_.resize(len);
    minus_slack_.resize(len);
    const std::size_t blocks = (static_cast<std::size_t>(len) + kInsideColumns - 1) / kInsideColumns;
    block_y_max_.assign(blocks, std::numeric_limits<i64>::min());
    block_slack_max_.assign(blocks, std::numeric_limits<i64>::min());
    for (i32 q = 0; q < len; ++q) {
        minus_y_[q] = -y_pre_[q];
        minus_slack_[q] = -slack_pre_[q];
        block_y_max_[q / kInsideColumns] = std::max(block_y_max_[q / kInsideColumns], y_pre_[q]);
        block_slack_max_[q / kInsideColumns] = std::max(block_slack_max_[q / kInsideColumns], slack_pre_[q]);
    }
    const std::int64_t dims = D.dims();
    if (D.point(0) == nullptr || dims <= 0 ||
        static_cast<std::size_t>(len) * static_cast<std::size_t>(dims) * sizeof(double) > kHeadBytes)
        return;
    rows_pre_.resize(static_cast<std::size_t>(len) * dims);
    parallel_for((static_cast<std::size_t>(len) + 4095) / 4096, n_threads,
                 [&](std::size_t b) {
                     for (std::size_t q = b * 4096; q < std::min<std::size_t>(len, (b + 1) * 4096); ++q)
                         if (lam_.order()[q] < n)  // (the ghost's row is never read)
                             std::copy_n(D.point(lam_.order()[q]), dims, rows_pre_.data() + q * dims);
                     control.check();
                 },
                 &control);
}

bool InsideScan::active(i32 p) const {
    const i32 i = lam_.order()[p];
    return i < D_.size() && lam_.root(i) >= static_cast<i32>(r_.y.size()) && radius_[i] != kNoRadius;
}

std::int64_t InsideScan::candidates(i32 p, i32 c0, i32 c1, i32& meet, std::uint64_t* bits) const {
    const i32 i = lam_.order()[p];
    const i64 yi = r_.y[i], ri = radius_[i];
    const i32 end = std::min(c1, lam_.hi(lam_.root(i)));  // (rows of a task may lie in different blossoms)
    std::int64_t count = 0;
    for (i32 q = std::max(c0, p + 1); q < end;) {
        while (q >= lam_.hi(meet)) meet = r_.parent[meet];
        const i32 b_end = std::min(end, lam_.hi(meet));
        const i64 Z = forest_.zsum(meet);
        auto ruled_out = [&](i32 a, i32 b) {
            return yi + (*y_max_)(a, b) - Z <= 2 * ri || yi + (*slack_max_)(a, b) - Z <= 0;
        };
        if (ruled_out(q, q + 1)) {  // skip the longest run ruled out (doubling)
            i32 run = 1;
            while (q + 2 * run <= b_end && ruled_out(q, q + 2 * run)) run *= 2;
            q += run;
            continue;
        }
        bits[(q - c0) / 64] |= std::uint64_t{1} << ((q - c0) % 64);
        ++count;
        ++q;
    }
    return count;
}

std::int64_t InsideScan::tile_candidates(i32 p, i32 c0, i32 c1, i32 block, i32& meet, std::uint64_t* bits) const {
    static const LessThanBitsFn less_than = less_than_bits_for(SimdLevel::automatic);
    const i32 i = lam_.order()[p];
    const i32 from = std::max(c0, p + 1), end = std::min(c1, lam_.hi(lam_.root(i)));
    if (from >= end) return 0;
    // (end - 1 > p: a blossom, found in O(1), not by climbing a nesting that can be thousands deep)
    if (end - 1 >= lam_.hi(meet)) meet = lam_.lca(i, lam_.order()[end - 1]);
    const i64 yi = r_.y[i], ri = radius_[i], Z = forest_.zsum(meet);
    if (yi + block_y_max_[block] - Z <= 2 * ri || yi + block_slack_max_[block] - Z <= 0) return 0;
    // y_q > 2 r_i - y_i + Z and y_q - 2 r_q > Z - y_i, negated.
    const i64 y_bound = yi - Z - 2 * ri, slack_bound = yi - Z;
    std::int64_t count = 0;
    for (i32 q0 = from; q0 < end; q0 += 64) {
        const int len = std::min(64, end - q0);
        const std::uint64_t b =
            less_than(minus_y_.data() + q0, y_bound, len) & less_than(minus_slack_.data() + q0, slack_bound, len);
        if (b == 0) continue;
        count += static_cast<std::int64_t>(std::bitset<64>(b).count());
        const int at = q0 - c0, word = at / 64, shift = at % 64;
        bits[word] |= b << shift;
        if (shift != 0 && (b >> (64 - shift)) != 0) bits[word + 1] |= b >> (64 - shift);
    }
    return count;
}

void InsideScan::distances(i32 p, const i32* qs, int count, double* out) const {
    if (!rows_pre_.empty()) {
        distances_of_rows(D_, rows_pre_.data(), D_.dims(), p, qs, count, out);
        return;
    }
    i32 js[64];
    for (int t = 0; t < count; ++t) js[t] = lam_.order()[qs[t]];
    D_.distances(lam_.order()[p], js, count, out);
}

// Rows of the pricing inside blossoms: [p0, p1) of the preorder; `top` the
// top-level blossom holding them all when they are screened (else -1).
struct InsideTask {
    i32 p0, p1, top;
};

// Pairs inside one top-level blossom. Each row p walks the later positions
// of its top-level blossom, a tile of columns at a time; in large blossoms
// the tiles whose pairs the radius rule leaves many are screened first
// (float32 products against the blossom's own rows); only the pairs left
// get an exact distance, in batches. Each row keeps the same first
// violated pairs, in increasing position, whatever the screen rules out.
void PricedSolve::price_inside() {
    const BlossomTree& lam = forest_->tree();
    const InsideScan scan(D_, r_, *forest_, radius_, opt_.n_threads, control_);
    const i32 len = static_cast<i32>(lam.order().size());
    std::vector<InsideTask> tasks;
    std::vector<std::unique_ptr<Distances::ScreenSet>> sets(r_.parent.size());
    const std::vector<char> unchanged = unchanged_blossoms();
    for (i32 p = 0; p < len;) {
        const i32 t = lam.root(lam.order()[p]);
        if (unchanged[t]) {
            stats_.inside_skipped += lam.hi(t) - p;
            p = lam.hi(t);
            continue;
        }
        if (t >= N_ && lam.hi(t) - lam.lo(t) >= std::max(2, opt_.screen_inside_from)) sets[t] = inside_screen_set(t);
        i32 end = sets[t] ? lam.hi(t) : std::min(len, p + kInsideRows);
        for (i32 q = p + 1; q < end && !sets[t]; ++q)
            if (unchanged[lam.root(lam.order()[q])]) end = q;
        for (; p < end; p = std::min(end, p + kInsideRows))
            tasks.push_back(InsideTask{p, std::min(end, p + kInsideRows), sets[t] ? t : -1});
    }
    std::atomic<i64> computed{0}, screened{0};
    parallel_for(
        tasks.size(), opt_.n_threads,
        [&](std::size_t k) {
            const InsideTask& task = tasks[k];
            std::vector<Hit> local;
            const InsideCounts counts =
                price_inside_rows(scan, task, task.top < 0 ? nullptr : sets[task.top].get(), local);
            add_hits(local);
            computed += counts.computed;
            screened += counts.screened;
        },
        &control_);
    stats_.extra_pairs += computed.load();
    stats_.inside_pairs += computed.load();
    stats_.inside_screened += screened.load();
}

// The screen set of top-level blossom t: its rows in preorder (the ghost's
// entry holds a point that is never priced), thresholds a with a_i + a_j >=
// the distance below which a pair meeting in t can violate. Pairs meeting
// in a smaller blossom B are screened with the sum lowered by what
// zsum(B) - zsum(t) takes away (see price_inside_rows).
std::unique_ptr<Distances::ScreenSet> PricedSolve::inside_screen_set(i32 t) const {
    const BlossomTree& lam = forest_->tree();
    const i32 lo = lam.lo(t), count = lam.hi(t) - lo;
    const i64 zt = forest_->zsum(t);
    std::vector<i32> points(count);
    i64 ymax = std::numeric_limits<i64>::min();
    for (i32 q = 0; q < count; ++q) {
        const i32 v = lam.order()[lo + q];
        points[q] = v < n_ ? v : 0;
        if (v < n_) ymax = std::max(ymax, r_.y[v]);
    }
    std::vector<double> a(count);
    for (i32 q = 0; q < count; ++q) {
        // A capped pair (weight wmax) can only be violated when y_i + y_j - zsum > 2 wmax: such points see every pair.
        const i64 yq = r_.y[lam.order()[lo + q]];
        a[q] = yq - zt + ymax > 2 * wmax_ ? std::numeric_limits<double>::infinity()
                                          : ws_.distance_above(static_cast<double>(2 * yq - zt + 1) / 4);
    }
    return D_.screen_set(points.data(), count, a.data());
}

// The rows of one task, a tile of columns at a time (see price_inside).
PricedSolve::InsideCounts PricedSolve::price_inside_rows(const InsideScan& scan, const InsideTask& task,
                                                         const Distances::ScreenSet* set,
                                                         std::vector<Hit>& local) const {
    const BlossomTree& lam = scan.tree();
    const i32 rows = task.p1 - task.p0;
    InsideCounts counts;
    // Per row: the blossom the walk has reached, where the tile started it, and the violated pairs found.
    std::vector<i32> meet(rows, -1), meet_at_tile(rows), found(rows, 0);
    i32 end = task.p0;
    for (i32 p = task.p0; p < task.p1; ++p)
        if (scan.active(p)) {
            meet[p - task.p0] = scan.parent(scan.vertex(p));
            end = std::max(end, lam.hi(lam.root(scan.vertex(p))));
        }
    constexpr int kWords = kInsideColumns / 64;
    std::vector<std::uint64_t> bits(static_cast<std::size_t>(rows) * kWords), screened;
    // Column tiles: the column blocks (aligned), from the first row's next position.
    for (i32 block = (task.p0 + 1) / kInsideColumns; block * kInsideColumns < end; ++block) {
        const i32 c0 = std::max(task.p0 + 1, block * kInsideColumns), c1 = std::min(end, (block + 1) * kInsideColumns);
        std::fill(bits.begin(), bits.end(), 0);
        std::int64_t candidates = 0;
        i32 first = rows, last = -1;  // rows with candidates
        for (i32 r = 0; r < rows; ++r) {
            meet_at_tile[r] = meet[r];
            if (meet[r] < 0 || static_cast<std::size_t>(found[r]) >= enough_) continue;
            std::uint64_t* row_bits = &bits[static_cast<std::size_t>(r) * kWords];
            const std::int64_t c = set != nullptr ? scan.tile_candidates(task.p0 + r, c0, c1, block, meet[r], row_bits)
                                                  : scan.candidates(task.p0 + r, c0, c1, meet[r], row_bits);
            if (c == 0) continue;
            candidates += c;
            first = std::min(first, r);
            last = r;
        }
        if (candidates == 0) continue;
        if (set != nullptr &&
            (opt_.screen_every_stretch || static_cast<double>(candidates) * D_.exact_cost() >
                                              static_cast<double>(last + 1 - first) * (c1 - c0) * D_.screen_cost()))
            counts.screened += screen_inside_tile(scan, task, *set, first, last + 1, c0, c1, bits.data(), screened);
        for (i32 r = 0; r < rows; ++r)
            counts.computed += price_inside_row(scan, task.p0 + r, c0, &bits[static_cast<std::size_t>(r) * kWords],
                                                meet_at_tile[r], found[r], local);
        control_.check();
    }
    return counts;
}

// ANDs the candidate bits of the tile's rows [r0, r1) with their screen; returns how many it ruled out.
std::int64_t PricedSolve::screen_inside_tile(const InsideScan& scan, const InsideTask& task,
                                             const Distances::ScreenSet& set, i32 r0, i32 r1, i32 c0, i32 c1,
                                             std::uint64_t* bits, std::vector<std::uint64_t>& screened) const {
    constexpr int kWords = kInsideColumns / 64;
    const BlossomTree& lam = scan.tree();
    const i32 lo = lam.lo(task.top);
    bits += static_cast<std::size_t>(r0) * kWords;
    // Every pair of the rows' tile meets in the smallest blossom holding their positions to c1 - 1, or in a smaller
    // one.
    const i32 p = task.p0 + r0;
    const i32 B = c1 - 1 > p ? lam.lca(scan.vertex(p), scan.vertex(c1 - 1)) : scan.parent(scan.vertex(p));
    const double lower =
        ws_.distance_below(static_cast<double>(scan.forest().zsum(B) - scan.forest().zsum(task.top)) / 2);
    screened.resize(static_cast<std::size_t>(r1 - r0) * kWords);
    D_.screen_block(set, task.p0 + r0 - lo, task.p0 + r1 - lo, set, c0 - lo, c1 - lo, kWords, screened.data(), lower);
    std::int64_t ruled_out = 0;
    for (std::size_t w = 0; w < screened.size(); ++w) {
        const std::uint64_t kept = bits[w] & screened[w];
        ruled_out += static_cast<std::int64_t>(std::bitset<64>(bits[w] & ~kept).count());
        bits[w] = kept;
    }
    return ruled_out;
}

// Prices row p's candidates of the tile from c0 (bits) in increasing
// position until `found` reaches enough; meet: the smallest blossom holding
// p and c0 or less (it climbs). Returns how many exact distances it took.
std::int64_t PricedSolve::price_inside_row(const InsideScan& scan, i32 p, i32 c0, const std::uint64_t* bits, i32& meet,
                                           i32& found, std::vector<Hit>& local) const {
    constexpr int kWords = kInsideColumns / 64;
    const BlossomTree& lam = scan.tree();
    const i32 i = scan.vertex(p);
    const i64 yi = scan.y(p);
    std::int64_t computed = 0;
    i32 qs[64];
    i64 T[64];
    double d[64];
    int count = 0;
    auto flush = [&]() {
        scan.distances(p, qs, count, d);
        computed += count;
        for (int t = 0; t < count && static_cast<std::size_t>(found) < enough_; ++t) {
            const i64 rc = 2 * ws_.to_int(d[t]) - T[t];
            if (rc < 0) {
                local.push_back(Hit{i, scan.vertex(qs[t]), rc});
                ++found;
            }
        }
        count = 0;
    };
    for (int w = 0; w < kWords && static_cast<std::size_t>(found) < enough_; ++w)
        for (std::uint64_t b = bits[w]; b != 0; b &= b - 1) {
            const i32 q = c0 + 64 * w + lowest_bit(b);
            while (q >= lam.hi(meet)) meet = scan.parent(meet);
            const i64 Z = scan.forest().zsum(meet);
            if (scan.ruled_out(p, q, Z)) continue;  // (tile candidates are a superset)
            qs[count] = q;
            T[count++] = yi + scan.y(q) - Z;
            if (count < 64) continue;
            flush();
            if (static_cast<std::size_t>(found) >= enough_) return computed;
        }
    if (count > 0 && static_cast<std::size_t>(found) < enough_) flush();
    return computed;
}

void PricedSolve::mark_dirty_rows() {
    const i32 n = n_;
    const i32 N = N_;
    const BlossomTree& lam = forest_->tree();
    bool& screen_valid = screen_valid_;
    auto& dirty = dirty_;
    auto& skipped = skipped_;
    auto& prev_top = prev_top_;
    // Pairs in different top-level nodes by the provider's screen. A
    // screen runs with thresholds A above the current ones and keeps
    // the pairs it could not rule out (with their weights); later rounds
    // price those again and screen only the rows whose threshold rose
    // above A or whose top-level blossom changed (a pair skipped as
    // inside one blossom may now be across two: then both ends changed).
    if (screen_valid) {
        // A pair skipped by a screen lies inside one top-level blossom
        // (both ends flagged). Each previous top-level set keeps the
        // current one holding most of its vertices; its flagged vertices
        // elsewhere are screened again. So every skipped pair whose ends
        // are not both in one current top-level node has a dirty end.
        // Moreover, the two ends of such a pair were in one top-level node
        // in the round before the first that split them, and an end marked
        // then (dirty for the first time since it was last screened) left
        // that node: its skipped pairs have their other end among the
        // node's points of then (dirty_snap_; an end marked twice needs
        // every point). The other end, if it was marked instead, covers the
        // pair from its own row.
        std::vector<i32> by_prev(N);
        for (i32 v = 0; v < N; ++v) by_prev[v] = v;
        i32 snap = -1;  // this round's snapshot in dirty_snaps_, once a point needs it
        std::sort(by_prev.begin(), by_prev.end(), [&](i32 u, i32 v) {
            if (prev_top[u] != prev_top[v]) return prev_top[u] < prev_top[v];
            if (lam.root(u) != lam.root(v)) return lam.root(u) < lam.root(v);
            return u < v;
        });
        for (i32 p = 0; p < N;) {
            i32 end = p;
            while (end < N && prev_top[by_prev[end]] == prev_top[by_prev[p]]) ++end;
            i32 best = -1, best_count = 0;
            for (i32 q = p; q < end;) {
                i32 e = q;
                while (e < end && lam.root(by_prev[e]) == lam.root(by_prev[q])) ++e;
                if (e - q > best_count) {
                    best_count = e - q;
                    best = lam.root(by_prev[q]);
                }
                q = e;
            }
            for (i32 q = p; q < end; ++q) {
                const i32 v = by_prev[q];
                if (v < n && skipped[v] && lam.root(v) != best) {
                    if (!dirty[v] && snap < 0) {
                        dirty_snaps_.push_back(prev_top);
                        snap = static_cast<i32>(dirty_snaps_.size()) - 1;
                    }
                    dirty_snap_[v] = dirty[v] ? -2 : snap;
                    dirty[v] = 1;
                }
            }
            p = end;
        }
    }
    prev_top.assign(lam.roots().begin(), lam.roots().begin() + N);
}

void PricedSolve::price_kept_pairs() {
    // (the exact weight is a distance away)
    parallel_for(
        KeptPairs::kShards, opt_.n_threads,
        [&](std::size_t t) {
            std::vector<Hit> local;
            std::size_t since = 0;
            for (const KeptPairs::Pair& k : kept_.shard(t)) {
                if (++since == 65536) {
                    since = 0;
                    control_.check();
                }
                const i64 rc = violation(k.i, k.j, static_cast<i64>(k.w));
                if (rc < 0) local.push_back(Hit{k.i, k.j, rc});
            }
            add_hits(local);
        },
        &control_);
}

void PricedSolve::split_screen_rows(const std::vector<i32>& rows, const std::vector<double>& a,
                                    std::vector<i32>& everywhere, RowsByNode& from_node) const {
    for (i32 i : rows) {
        if (a[i] <= screen_a_[i] && dirty_snap_[i] >= 0)
            from_node[{dirty_snap_[i], dirty_snaps_[dirty_snap_[i]][i]}].push_back(i);
        else
            everywhere.push_back(i);
    }
    for (auto it = from_node.begin(); it != from_node.end();) {  // (each pass costs O(n) however few its rows)
        if (it->second.size() >= static_cast<std::size_t>(std::max(1, opt_.own_columns_from))) {
            ++it;
            continue;
        }
        everywhere.insert(everywhere.end(), it->second.begin(), it->second.end());
        it = from_node.erase(it);
    }
    std::sort(everywhere.begin(), everywhere.end());
}

i32 PricedSolve::largest_top_blossom() const {
    const BlossomTree& lam = forest_->tree();
    i32 largest = -1;
    for (i32 b = N_; b < static_cast<i32>(r_.parent.size()); ++b)
        if (r_.parent[b] == -1 && (largest < 0 || lam.hi(b) - lam.lo(b) > lam.hi(largest) - lam.lo(largest)))
            largest = b;
    return largest;
}

void PricedSolve::price_screen() {
    const Distances& D = D_;
    const CompleteOptions& opt = opt_;
    Control& control = control_;
    CompleteStats& stats = stats_;
    const i32 n = n_;
    const WeightScale& ws = ws_;
    const std::vector<i64>& radius = radius_;
    const BlossomResult& r = r_;
    const BlossomTree& lam = forest_->tree();
    auto& hits = hits_;
    auto& kept = kept_;
    bool& screen_valid = screen_valid_;
    auto& screen_a = screen_a_;
    auto& dirty = dirty_;
    auto& skipped = skipped_;
    const std::vector<double> a = screen_thresholds();
    auto raised = [&](i32 i) {
        const double rd = radius[i] == kNoRadius ? 0.0 : ws.distance_above(static_cast<double>(radius[i]));
        return a[i] + (std::abs(a[i]) + rd) / 32;
    };
    std::vector<i32> rows;
    if (screen_valid) {
        for (i32 i = 0; i < n; ++i)
            if (dirty[i] || a[i] > screen_a[i]) rows.push_back(i);
        if (2 * rows.size() > static_cast<std::size_t>(n)) screen_valid = false;
    }
    price_kept_pairs();
    // The pairs found; their violated ones in shards by their first end: the
    // two threads rarely wait on one lock or write one cache line.
    KeptPairs::Collector found;
    struct Shard {
        std::mutex lock;
        std::vector<Hit> hits;
        char pad[64];
    };
    std::vector<Shard> shards(KeptPairs::kShards);
    // Pairs inside one large top-level blossom are priced there (price_inside), not here.
    std::vector<i32> group(n);
    for (i32 i = 0; i < n; ++i) group[i] = top_size(i) >= kSkipInside ? lam.root(i) : -1;
    auto visit = [&](i32 i, i32 j) {
        if (group[i] >= 0 && group[i] == group[j]) return;
        const i64 wij = weight(i, j);
        const i64 rc = 2 * wij - r.y[i] - r.y[j];
        const KeptPairs::Pair p = KeptPairs::make(i, j, wij);
        found.add(p);
        if (rc >= 0) return;
        Shard& shard = shards[KeptPairs::shard_of(p)];
        std::lock_guard<std::mutex> g(shard.lock);
        shard.hits.push_back(Hit{i, j, rc});
    };
    if (screen_valid) {
        // A dirty row whose threshold did not rise needs only the columns of
        // the top-level node it left (see mark_dirty_rows): many such rows
        // from one node are screened against its points alone; the other
        // rows against every point. Each row's A becomes the least
        // threshold any of its pairs was screened with.
        std::vector<i32> everywhere;
        RowsByNode from_node;
        split_screen_rows(rows, a, everywhere, from_node);
        std::vector<char> columns(n, 1);
        for (i32 i : everywhere) columns[i] = 0;  // (the pairs of these rows are all visited here)
        std::vector<double> before(rows.size());
        for (std::size_t t = 0; t < rows.size(); ++t) {
            const i32 i = rows[t];
            before[t] = columns[i] ? screen_a[i] : std::numeric_limits<double>::infinity();
            screen_a[i] = raised(i);
            dirty[i] = 0;
            dirty_snap_[i] = -1;
            skipped[i] = group[i] >= 0;
        }
        if (!everywhere.empty())
            D.pairs_below_rows(screen_a.data(), group.data(), nullptr, everywhere, opt.n_threads, control, visit);
        for (const auto& [node, node_rows] : from_node) {
            const std::vector<i32>& then = dirty_snaps_[node.first];
            std::vector<char> of_node(n);
            for (i32 j = 0; j < n; ++j) of_node[j] = columns[j] && then[j] == node.second;
            D.pairs_below_rows(screen_a.data(), group.data(), of_node.data(), node_rows, opt.n_threads, control, visit);
        }
        for (std::size_t t = 0; t < rows.size(); ++t) screen_a[rows[t]] = std::min(screen_a[rows[t]], before[t]);
        dirty_snaps_.clear();
        ++stats.partial_screens;
    } else {
        kept.clear();
        screen_a.resize(n);
        for (i32 i = 0; i < n; ++i) screen_a[i] = raised(i);
        std::fill(dirty.begin(), dirty.end(), 0);
        std::fill(dirty_snap_.begin(), dirty_snap_.end(), -1);
        dirty_snaps_.clear();
        for (i32 i = 0; i < n; ++i) skipped[i] = group[i] >= 0;
        // Pairs inside one blossom are skipped: with a large one
        // (deep nesting), only the rows outside it are screened.
        const i32 largest = largest_top_blossom();
        const i32 big = largest < 0 ? 0 : lam.hi(largest) - lam.lo(largest);
        if (big >= kSkipInside && 4 * big > n) {
            rows.clear();
            for (i32 i = 0; i < n; ++i)
                if (lam.root(i) != largest) rows.push_back(i);
            D.pairs_below_rows(screen_a.data(), group.data(), nullptr, rows, opt.n_threads, control, visit);
        } else {
            D.pairs_below(screen_a.data(), group.data(), opt.n_threads, control, visit);
        }
        screen_valid = true;
        ++stats.screens;
    }
    for (Shard& shard : shards) hits.insert(hits.end(), shard.hits.begin(), shard.hits.end());
    const std::size_t visited = found.size();
    kept.merge(found, control);
    stats.extra_pairs += static_cast<i64>(visited);
    stats.screen_pairs += static_cast<i64>(visited);
}

// Distances a with d(i, j) >= a_i + a_j => 2 w_ij >= y_i + y_j: 2 w >= 2 d
// scale - 1 below the cap, so a violated pair (Z = 0) has d < (y_i + y_j +
// 1) / (2 scale); a capped pair can only be violated when y_i + y_j > 2 wmax:
// such points see every pair.
std::unique_ptr<Distances::ScreenSet> PricedSolve::screen_set_of(const i32* points, i32 count,
                                                                 const std::vector<double>& a) const {
    std::vector<double> at(count);
    for (i32 t = 0; t < count; ++t) at[t] = a[points[t]];
    return D_.screen_set(points, count, at.data());
}

std::vector<double> PricedSolve::screen_thresholds() const {
    const std::vector<i64>& y = r_.y;
    std::vector<double> a(n_);
    i64 ymax = 0;
    for (i32 i = 0; i < n_; ++i) ymax = std::max(ymax, y[i]);
    for (i32 i = 0; i < n_; ++i)
        a[i] = y[i] + ymax > 2 * wmax_ ? std::numeric_limits<double>::infinity()
                                       : ws_.distance_above((static_cast<double>(y[i]) + 0.5) / 2);
    return a;
}

// Whether screening every pair costs less than the prefix scan would.
bool PricedSolve::screen_pays() const {
    const Distances& D = D_;
    Control& control = control_;
    const i32 n = n_;
    const BlossomResult& r = r_;
    const std::vector<i32>& by_y = by_y_;
    const std::vector<i64>& c = c_;
    // Work of the prefix scan: each point walks the points with
    // y_j > c_i (cheap) and computes the distance of those that also
    // have y_i > c_j, counted here offline with a Fenwick tree over
    // the ranks of c, in the order of the prefixes.
    double walked = 0, computed = 0;
    {
        std::vector<i32> len(n), by_len(n);
        for (i32 i = 0; i < n; ++i) {
            const i64 ci = c[i];
            len[i] = static_cast<i32>(
                std::partition_point(by_y.begin(), by_y.end(), [&](i32 j) { return r.y[j] > ci; }) - by_y.begin());
            walked += len[i];
            by_len[i] = i;
        }
        std::sort(by_len.begin(), by_len.end(),
                  [&](i32 a, i32 b) { return len[a] < len[b] || (len[a] == len[b] && a < b); });
        std::vector<i64> sorted_c(c.begin(), c.end());
        std::sort(sorted_c.begin(), sorted_c.end());
        std::vector<i32> fen(n + 1, 0);
        i32 added = 0;
        for (i32 i : by_len) {
            for (; added < len[i]; ++added) {
                const i32 j = by_y[added];
                for (i32 k =
                         static_cast<i32>(std::lower_bound(sorted_c.begin(), sorted_c.end(), c[j]) - sorted_c.begin()) +
                         1;
                     k <= n; k += k & -k)
                    ++fen[k];
            }
            i64 below = 0;  // inserted j with c_j < y_i
            for (i32 k =
                     static_cast<i32>(std::lower_bound(sorted_c.begin(), sorted_c.end(), r.y[i]) - sorted_c.begin());
                 k > 0; k -= k & -k)
                below += fen[k];
            computed += static_cast<double>(below);
        }
        control.check();
    }
    // (each pair counted from both ends, computed from one)
    return walked + 0.5 * computed * D.exact_cost() > 0.5 * static_cast<double>(n) * n * D.screen_cost();
}

void PricedSolve::price_round() {
    const i32 n = n_;
    auto& found = found_;
    auto& hits = hits_;
    // Partial pricing: the neighbour lists first (cheap); the pairs
    // outside them only once the lists hold no violated pair, i.e. with
    // duals close to optimal, which rule out far more of them.
    hits.clear();
    price_lists_and_prefix(true, false);
    bool any = false;
    for (i32 i = 0; i < n && !any; ++i) any = !found[i].empty();
    if (!any) {
        const bool screen = screen_pays();
        auto t0 = std::chrono::steady_clock::now();
        if (!screen)
            for (i32 i = 0; i < n; ++i) stats_.dirty_rows += !clean(i) || split_[i];
        price_lists_and_prefix(false, !screen);
        stats_.seconds_prefix += seconds_since(t0);
        if (screen) {
            t0 = std::chrono::steady_clock::now();
            price_screen();
            stats_.seconds_screen += seconds_since(t0);
        }
        t0 = std::chrono::steady_clock::now();
        price_inside();
        stats_.seconds_inside += seconds_since(t0);
        settle_rows();
    }
    stats_.violated_pairs += static_cast<std::int64_t>(hits.size());
}

std::vector<std::uint64_t> PricedSolve::violated_keys() {
    const i32 n = n_;
    const i32 kk = kk_;
    auto& found = found_;
    auto& hits = hits_;
    // Hits into the lists of both points, then each point's kk most
    // violated pairs (ties by the other point: the same set whatever the
    // thread count).
    std::sort(hits.begin(), hits.end(),
              [](const Hit& a, const Hit& b) { return a.i < b.i || (a.i == b.i && a.j < b.j); });
    for (const Hit& h : hits) {
        if (h.i < n) found[h.i].emplace_back(h.rc, h.j);
        if (h.j < n) found[h.j].emplace_back(h.rc, h.i);
    }
    std::vector<std::uint64_t> keys;
    for (i32 i = 0; i < n; ++i) {
        auto& f = found[i];
        if (f.empty()) continue;
        std::sort(f.begin(), f.end());
        f.erase(std::unique(f.begin(), f.end()), f.end());
        for (std::size_t t = 0; t < f.size() && t < static_cast<std::size_t>(kk); ++t)
            keys.push_back(pair_key(i, f[t].second));
        if (f.capacity() > 4 * enough_) f = {};  // (a long list is rare: its capacity is not kept for later rounds)
    }
    return keys;
}

double matched_cost(const Distances& D, const std::vector<std::int32_t>& mate) {
    const auto n = D.size();
    double cost = 0;
    for (i32 i = 0; i < n; ++i)
        if (mate[i] > i && mate[i] < n) cost += D(i, mate[i]);
    return cost;
}

CompleteResult solve_complete(const Distances& D, const CompleteOptions& opt, Control& control,
                              CompleteStats* stats_out);

}  // namespace

// In the provider's locality order when it has one (see matching_reorder.hpp).
CompleteResult complete_min_weight_perfect_matching(const Distances& D, const CompleteOptions& opt, Control& control,
                                                    CompleteStats* stats_out) {
    std::vector<i32> order = D.locality_order();
    if (order.empty()) return solve_complete(D, opt, control, stats_out);
    const ReorderedDistances near_ids(D, std::move(order), control);
    CompleteResult out = solve_complete(near_ids, opt, control, stats_out);
    to_input_ids(out.blossom, near_ids.order());
    out.cost = matched_cost(D, out.blossom.mate);  // summed in input order, as without the renumbering
    return out;
}

namespace {

CompleteResult solve_complete(const Distances& D, const CompleteOptions& opt, Control& control,
                              CompleteStats* stats_out) {
    const i32 n = D.size();
    CompleteStats stats;
    CompleteResult out;
    // Neighbours kept per point for pricing (the start graph uses the first k).
    const i32 store = std::max<i32>(1, std::min<i32>(n - 1, std::max<i32>(opt.k, D.store_hint())));
    if (opt.report) control.set_total(static_cast<std::uint64_t>(2 * n));
    const auto t0 = std::chrono::steady_clock::now();
    const Lists L = neighbour_lists(D, store, opt.n_threads, control);
    stats.seconds_neighbours = seconds_since(t0);
    if (opt.report) control.report(static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(2 * n));
    // First pass: weights scaled to the largest distance. When the matching
    // found costs far less than that (distances over many orders of
    // magnitude), solve again with every weight capped just above that cost:
    // no matching using a capped pair can then be optimal, so capping changes
    // nothing but the resolution, which becomes relative to the cost. Passes
    // repeat until it is, whatever the span of the distances (an overflowing
    // cost stops them: the caller reports it).
    double cap = D.max_distance();
    BlossomResult r;
    PassState state[2];
    for (int pass = 0;; ++pass) {
        r = PricedSolve(D, L, cap, opt, control, stats, pass > 0 ? &state[(pass + 1) % 2] : nullptr)
                .run(&state[pass % 2]);
        ++stats.passes;
        const double cost = matched_cost(D, r.mate);
        out.cost = cost;
        // Again when the cap can shrink a lot, or by 4x or more while the
        // rounding (up to N/2 resolutions on the cost) is not far below 1e-10
        // of the cost.
        const double resolution = cap / static_cast<double>(max_weight(n + (opt.ghost ? 1 : 0)));
        const bool coarse = static_cast<double>(n) * resolution > 1e-10 * cost;
        // Each pass shrinks the cap 4x or more: the float64 range allows ~1100.
        if (!(cost > 0 && (cost * 16 < cap || (coarse && cost * 4 < cap)))) break;
        if (pass > 1100) throw std::logic_error("matching: the cap does not converge (internal error)");
        // Strictly above the cost, also where 1.001 x rounds to x (subnormal costs).
        cap = std::max(cost * 1.001, std::nextafter(cost, std::numeric_limits<double>::infinity()));
    }
    const i32 N = n + (opt.ghost ? 1 : 0);
    const double wmax = static_cast<double>(max_weight(N));
    out.unit = cap > 0 ? cap / (2 * wmax) : 0.5;
    out.resolution = cap > 0 ? cap / wmax : 0.0;
    out.cap = cap;
    out.max_distance = D.max_distance();
    out.blossom = std::move(r);
    if (stats_out) *stats_out = stats;
    return out;
}

}  // namespace

}  // namespace pairmetrics::matching
