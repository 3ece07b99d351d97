// Distances of a complete graph for the matching solver: a dense matrix read
// in place, or Euclidean points whose N x N matrix is never formed.
//
// A provider answers three questions: the exact (float64, deterministic)
// distance of one pair; for every point its `store` nearest others with a
// certified lower bound on its distance to every point outside that list;
// and, for the certificate, every pair whose distance may lie below a given
// per-point threshold sum. The pricing loop and the certificate in
// matching.cpp are written once against this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "blas_threads.hpp"
#include "control.hpp"
#include "cpu_features.hpp"
#include "matching_distance_tiles.hpp"
#include "matching_tile_scan.hpp"
#include "parallel.hpp"

namespace pairmetrics::matching {

class Distances {
  public:
    virtual ~Distances() = default;
    virtual std::int32_t size() const = 0;
    // Exact distance of points i and j (0 for i == j); symmetric.
    virtual double operator()(std::int32_t i, std::int32_t j) const = 0;
    // out[t] = (*this)(i, js[t]) for t < count, the same bits: providers
    // whose rows live in memory fetch the rows of a batch before use.
    virtual void distances(std::int32_t i, const std::int32_t* js, int count, double* out) const {
        for (int t = 0; t < count; ++t) out[t] = (*this)(i, js[t]);
    }
    // Providers of points: the coordinates of point i (dims() of them), so
    // that a caller can keep copies of rows it reads often, and the distance
    // of two such rows (operator() of two distinct points is exactly
    // distance_between(point(i), point(j))). Others: null and 0.
    virtual const double* point(std::int32_t) const { return nullptr; }
    virtual std::int64_t dims() const { return 0; }
    virtual double distance_between(const double*, const double*) const { return 0.0; }
    // An upper bound of every distance.
    virtual double max_distance() const = 0;
    // Relative error bound of operator() against the distance of the input.
    virtual double relative_error() const = 0;
    // For every point i: cand[i * store .. +store) its `store` nearest other
    // points (any order; ties broken arbitrarily) and bound[i] <= its distance
    // to every point outside that list (+inf when the list holds them all).
    virtual void nearest(std::int32_t store, std::int32_t* cand, double* bound, int n_threads,
                         Control& control) const = 0;
    // How many neighbours per point the solver should keep for pricing:
    // more where they are cheap and the duals reach far (few dimensions).
    virtual std::int32_t store_hint() const { return 96; }
    // An order of the ids in which near points come near each other (a
    // permutation: position i holds id order[i]), or empty when the
    // provider has none; the matching numbers its vertices in it.
    virtual std::vector<std::int32_t> locality_order() const { return {}; }
    // Relative costs of one exact distance and of one pair in pairs_below
    // (the solver screens every pair when it would otherwise compute more
    // than screen_cost / exact_cost of all distances one by one).
    virtual double exact_cost() const { return 1.0; }
    virtual double screen_cost() const { return 1.0; }
    // Calls visit(i, j) for every pair i < j whose distance may be
    // < a[i] + a[j] (a superset: the caller checks each pair exactly), from
    // several threads at once (visit must be thread safe). Pairs of one
    // group (group[i] == group[j] >= 0; group may be null) may be left out.
    using PairVisitor = std::function<void(std::int32_t, std::int32_t)>;
    // Screening of chosen pairs (such as the pricing prefix): copies of some
    // points with their thresholds (a[t] that of points[t]), screened set
    // against set. Providers without it give null (the caller then computes
    // every pair exactly).
    class ScreenSet {
      public:
        virtual ~ScreenSet() = default;
    };
    virtual std::unique_ptr<ScreenSet> screen_set(const std::int32_t* /*points*/, std::int32_t /*count*/,
                                                  const double* /*a*/) const {
        return nullptr;
    }
    // For the entries [r0, r1) of `rows` and [c0, c1) of `cols` (two sets of
    // this provider, c1 - c0 <= 64 * words): bit (c - c0) % 64 of
    // bits[(r - r0) * words + (c - c0) / 64] set when the distance of the
    // two points may be < a_r + a_c - lower (a superset; c1 - c0 <=
    // kScreenColumns; lower >= 0, a distance: one set serves tiles whose
    // threshold sums are lower by different amounts).
    static constexpr std::int32_t kScreenColumns = 4096;
    virtual void screen_block(const ScreenSet& /*rows*/, std::int32_t /*r0*/, std::int32_t /*r1*/,
                              const ScreenSet& /*cols*/, std::int32_t /*c0*/, std::int32_t /*c1*/, int /*words*/,
                              std::uint64_t* /*bits*/, double /*lower*/) const {}
    virtual void pairs_below(const double* a, const std::int32_t* group, int n_threads, Control& control,
                             const PairVisitor& visit) const = 0;
    // The same for the pairs with an end in `rows` (sorted, distinct): each
    // once, as visit(i, j) with i in rows (and i < j when both are). Pairs
    // at a column j with columns[j] == 0 may be left out too (columns may be null).
    virtual void pairs_below_rows(const double* a, const std::int32_t* group, const char* columns,
                                  const std::vector<std::int32_t>& rows, int n_threads, Control& control,
                                  const PairVisitor& visit) const = 0;
};

// out[t] = D's distance of rows i and js[t] of `rows` (n x d, row-major;
// 0 when js[t] == i) through D.distance_between, each row fetched a few
// distances ahead of its use: a point provider's distances() over its rows
// or over a copy of them (the same bits).
void distances_of_rows(const Distances& D, const double* rows, std::int64_t d, std::int32_t i, const std::int32_t* js,
                       int count, double* out);

// An n x n matrix read in place through strides (exactly symmetric, zero diagonal).
template <class T>
class DenseDistances final : public Distances {
  public:
    // max_distance < 0: found here (O(n^2)); callers that know it pass it.
    DenseDistances(const T* D, std::int32_t n, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride,
                   double max_distance = -1);
    std::int32_t size() const override { return n_; }
    double operator()(std::int32_t i, std::int32_t j) const override {
        return static_cast<double>(D_[i * rs_ + j * cs_]);
    }
    double max_distance() const override { return max_; }
    double relative_error() const override { return 0.0; }
    void nearest(std::int32_t store, std::int32_t* cand, double* bound, int n_threads, Control& control) const override;
    void pairs_below(const double* a, const std::int32_t* group, int n_threads, Control& control,
                     const PairVisitor& visit) const override;
    void pairs_below_rows(const double* a, const std::int32_t* group, const char* columns,
                          const std::vector<std::int32_t>& rows, int n_threads, Control& control,
                          const PairVisitor& visit) const override;

  private:
    const T* D_;
    std::int32_t n_;
    std::ptrdiff_t rs_, cs_;
    double max_ = 0;
};

// Euclidean (or squared Euclidean) distances of the rows of a row-major
// n x d float64 matrix. Exact distances come from the coordinate
// differences; neighbour search and screening use tiles of a matrix product
// of centred coordinates (float32 when d is large enough for it to pay) with
// a bound on their rounding error, so nothing they skip can be wrong. On
// CPUs with AVX2 the float32 tiles come from the kernels of
// matching_distance_tiles.hpp (the neighbour search fused with its
// comparisons; the screens a panel wide), over a second copy of the
// coordinates packed in column panels (4 n d bytes); elsewhere from sgemm.
class EuclideanDistances final : public Distances {
  public:
    // single_ok: float32 tiles allowed (neighbour search and screening only
    // need bounds; the matrix below always uses float64 tiles). control: its
    // checks run while the points are ordered (seconds for millions of points).
    EuclideanDistances(const double* X, std::int32_t n, std::int64_t d, bool squared, const Blas& gemm,
                       Control& control, bool single_ok = true);
    std::int32_t size() const override { return n_; }
    double operator()(std::int32_t i, std::int32_t j) const override;
    void distances(std::int32_t i, const std::int32_t* js, int count, double* out) const override;
    const double* point(std::int32_t i) const override { return X_ + static_cast<std::size_t>(i) * d_; }
    std::int64_t dims() const override { return d_; }
    double distance_between(const double* a, const double* b) const override;
    double max_distance() const override { return max_; }
    double relative_error() const override { return (static_cast<double>(d_) + 4) * 1.1102230246251565e-16; }
    void nearest(std::int32_t store, std::int32_t* cand, double* bound, int n_threads, Control& control) const override;
    void pairs_below(const double* a, const std::int32_t* group, int n_threads, Control& control,
                     const PairVisitor& visit) const override;
    void pairs_below_rows(const double* a, const std::int32_t* group, const char* columns,
                          const std::vector<std::int32_t>& rows, int n_threads, Control& control,
                          const PairVisitor& visit) const override;
    // Float32 tiles only (else null): the set's centred rows, norms, error terms and thresholds in tile units.
    std::unique_ptr<ScreenSet> screen_set(const std::int32_t* points, std::int32_t count,
                                          const double* a) const override;
    void screen_block(const ScreenSet& rows, std::int32_t r0, std::int32_t r1, const ScreenSet& cols, std::int32_t c0,
                      std::int32_t c1, int words, std::uint64_t* bits, double lower) const override;

    // The full n x n matrix (row-major): float64 tiles, and every entry whose
    // tile value could have lost more than ~1e-12 relative accuracy to
    // cancellation (near or duplicated points) recomputed from the
    // coordinate differences, so each entry is within ~1e-12 of operator().
    void matrix(double* out, int n_threads, Control& control) const;

    std::int32_t store_hint() const override { return d_ <= 4 ? 256 : 96; }
    // The ball order of the tiles.
    std::vector<std::int32_t> locality_order() const override { return perm_; }
    // The bound of |tile value - squared distance| / (sq_i + sq_j) (tile
    // units) for rows of length d, tiles in float32 (single) or float64.
    static double tile_unit_error(std::int64_t d, bool single);
    // The vector code of the tile scans (default: the best the CPU supports; tests force levels).
    void set_simd(SimdLevel level);
    // About a nanosecond per coordinate pair and a few per call; a matrix
    // product tile is 8 (float64) or 16 (float32) times cheaper per coordinate.
    double exact_cost() const override { return 4.0 + 0.5 * static_cast<double>(d_); }
    double screen_cost() const override { return 1.5 + static_cast<double>(d_) / (single_ ? 32.0 : 16.0); }

  private:
    template <class T>
    double list_and_bound(std::vector<std::pair<T, std::int32_t>>& buf, std::int32_t store, std::int32_t i,
                          std::int32_t* cand) const;
    template <class T>
    void nearest_impl(const T* xc, GemmFn<T> gemm, std::int32_t store, std::int32_t* cand, double* bound, int n_threads,
                      Control& control) const;
    // nearest_impl's pieces: the product tile of blocks a and b (returns its rows and columns), and whether no
    // value of that tile can enter a list (tau(p): the threshold of row p's list; block_tau: of each block's).
    template <class T>
    std::pair<std::int32_t, std::int32_t> block_tile(const T* xc, GemmFn<T> gemm, std::int32_t a, std::int32_t b,
                                                     std::vector<T>& tile) const;
    template <class Tau>
    bool tile_apart(std::int32_t a, std::int32_t b, const std::vector<double>& block_tau, Tau&& tau) const;
    template <class First, class Skip, class F>
    void for_tiles(int n_threads, Control& control, First&& first_col, Skip&& skip, F&& visit) const;
    // One task of for_tiles (rows [lo, hi), column blocks from `first`) through the panel kernel.
    template <class Skip, class F>
    void fused_tiles(std::size_t task, std::int32_t lo, std::int32_t hi, std::int32_t first, Skip& skip, F& visit,
                     Control& control) const;
    // Per block of positions: the group of all its points, or -1 (empty when group is null).
    std::vector<std::int32_t> block_groups(const std::int32_t* group) const;
    // Per block of positions: whether any of its points is flagged in columns (empty when columns is null).
    std::vector<char> flagged_blocks(const char* columns) const;
    // A block of rows of pairs_below_rows: their ball, largest sq_, extreme thresholds and group (-1: several).
    struct RowBlock {
        std::vector<double> centre;
        double radius = 0, sq_top = 0, at_top = 0, at_low = 0;
        std::int32_t group = -1;
    };
    // The rows at positions where[0, count) copied to block (contiguous coordinates), and their RowBlock.
    template <class T>
    RowBlock gather_rows(const T* xc, const std::int32_t* where, int count, const std::vector<double>& at,
                         const std::int32_t* group, T* block) const;
    // Which rows of a row block may have a pair in column block cb (block_top: its largest threshold, gap: the
    // balls' gap): false when none may; else `active` lists them (empty: all, not checked one by one).
    bool rows_near_block(const RowBlock& rows, const std::int32_t* where, int count, const std::vector<double>& at,
                         double block_top, double gap, std::int32_t cb, std::vector<int>& active) const;
    // The float32 rows packed into panels_.
    void pack_panels_of_rows(Control& control);
    // out[r * stride + c] = <rows_x[r], column c> for r < rows, c < cols, by
    // the panel kernel: columns already packed (col_panels aligned, from a
    // multiple of kPanelColumns), stride a multiple of kPanelColumns.
    void panel_tile(const float* rows_x, std::int32_t rows, const float* col_panels, std::int32_t cols, float* out,
                    std::int32_t stride) const;
    // Points in an order where each block of kBlock consecutive ones is a
    // small ball (recursive splits along the line of two far points), and
    // each block's ball: tiles of two far-apart balls are skipped whole.
    void order_points(Control& control);
    void block_balls(Control& control);
    // Centre (written to `centre`) and radius of a ball holding the points at `positions`.
    double ball_of(const std::int32_t* positions, std::int32_t count, double* centre) const;
    // A lower bound of the distance (tile units) between any point of block a
    // and any of block b (<= 0 when the balls meet).
    double block_gap(std::int32_t a, std::int32_t b) const;
    // The same for a ball given by its centre and radius.
    template <class C>
    double ball_gap(const C* centre, double radius, std::int32_t b) const;
    // The same for the point at position p (its tile coordinates, their
    // rounding from float64 counted). In many dimensions a point lies much
    // farther from another cluster's ball than its own block's ball does.
    double point_gap(std::int32_t p, std::int32_t b) const;
    // Whether every row p of block a passes clear(p, point_gap(p, b))
    // (stops at the first that does not): block a against block b one-sided,
    // so a wide block a (spanning clusters) can still be ruled out against a
    // narrow b.
    template <class Clear>
    bool rows_apart(std::int32_t a, std::int32_t b, Clear&& clear) const;
    // Whether no tile value of a pair `gap` apart (rows with largest sq_
    // sq_a and sq_b) can be below `value`.
    bool gap_clears(double gap, double value, double sq_a, double sq_b) const;
    // Row p's coordinates (tile units, float64, not rounded to the tiles' precision).
    void coordinates(std::int32_t p, double* out) const;
    // Bound of |tile value - squared distance| over the pairs of two sets whose largest sq_ are s and t.
    double tile_error(double s, double t) const { return 2 * unit_err_ * (s + t) + 4e-30; }
    // Per-point thresholds in tile units (by position), widened by the error of operator().
    std::vector<double> tile_thresholds(const double* a) const;
    // One threshold in tile units.
    double tile_threshold(double a) const;
    // The largest threshold of each block.
    std::vector<double> block_maxima(const std::vector<double>& at) const;
    // Whether no pair of two sets `gap` apart (sets with largest sq_ sq_a and
    // sq_b, threshold sums at most top) can be flagged by screen().
    bool screened_apart(double gap, double top, double sq_a, double sq_b) const;
    // hit[c - cb] for the columns [cb, ce) of row i: whether the pair may lie
    // below the thresholds (a branch-free loop the compiler vectorises).
    template <class T>
    void screen(std::int32_t i, std::int32_t cb, std::int32_t ce, std::int32_t c0, const T* dots,
                const std::vector<double>& at, unsigned char* hit) const;
    // Whether screen() may flag any column of [cb, ce) of row i: a float32
    // prefilter over float32 tiles (at32: the thresholds rounded up), always
    // true over float64 ones.
    template <class T>
    bool may_screen(std::int32_t i, std::int32_t cb, std::int32_t ce, std::int32_t c0, const T* dots,
                    const std::vector<float>& at32) const;

    // Runs run(T{}, task) for every task in parallel, T the tiles' precision.
    template <class Run>
    void for_each_tile_task(std::size_t tasks, int n_threads, Run&& run, Control& control) const {
        parallel_for(
            tasks, n_threads,
            [&](std::size_t task) {
                if (single_)
                    run(0.0f, task);
                else
                    run(0.0, task);
            },
            control);
    }

    const double* X_;
    std::int32_t n_;
    std::int64_t d_;
    bool squared_;
    Blas gemm_;
    bool single_ = false;  // tiles in float32
    // Everything below is in the order of perm_ (position p holds point perm_[p]).
    std::vector<std::int32_t> perm_;
    std::vector<std::int32_t> position_;                       // the inverse of perm_ (point i sits at position_[i])
    std::vector<double> mean_;                                 // of the input rows (centring)
    std::vector<double> xc64_;                                 // centred coordinates (float64 tiles)
    std::vector<float> xc32_;                                  // centred coordinates (float32 tiles)
    std::vector<double> sq_;                                   // squared norms of the centred rows (as stored)
    std::vector<double> ball_centre_, ball_radius_, ball_sq_;  // per block: centre, radius, largest sq_
    double sq_max_ = 0, unit_err_ = 0, max_ = 0;
    double tile_scale_ = 1;  // tiles see coordinates times this power of two
    ScreenTerms screen32_;   // float32 tiles: the screen prefilter's terms
    FlagBelowFn flag_below_ = nullptr;
    BelowScanFn below_scan_ = nullptr;  // the fused neighbour scan (null: matrix-product tiles)
    PanelDotsFn panel_dots_ = nullptr;  // the screens' panel-wide tiles (null: matrix-product tiles)
    PackedPanels panels_;               // float32 tiles: the centred rows in column panels
    MayScreenFn may_screen32_ = nullptr;
    ScreenBitsFn screen_bits32_ = nullptr;
    SquaredDistanceFn squared_distance_ = nullptr;
};

}  // namespace pairmetrics::matching
