#include "matching_distances.hpp"

#include "euclidean.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace pairmetrics::matching {

namespace {

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

}  // namespace

// ---------------------------------------------------------------- dense

template <class T>
DenseDistances<T>::DenseDistances(const T* D, i32 n, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride,
                                  double max_distance)
    : D_(D), n_(n), rs_(row_stride), cs_(col_stride), max_(max_distance) {
    if (max_ >= 0) return;
    max_ = 0;
    for (i32 i = 0; i < n; ++i)
        for (i32 j = i + 1; j < n; ++j) max_ = std::max(max_, (*this)(i, j));
}

template <class T>
void DenseDistances<T>::nearest(i32 store, i32* cand, double* bound, int n_threads, Control& control) const {
    const i32 n = n_;
    const std::size_t tasks = (static_cast<std::size_t>(n) + kRowBlock - 1) / kRowBlock;
    parallel_for(
        tasks, n_threads,
        [&](std::size_t task) {
            std::vector<std::pair<double, i32>> buf;
            const i32 lo = static_cast<i32>(task) * kRowBlock, hi = std::min(n, lo + kRowBlock);
            for (i32 i = lo; i < hi; ++i) {
                buf.clear();
                for (i32 j = 0; j < n; ++j)
                    if (j != i) buf.emplace_back((*this)(i, j), j);
                bound[i] = take_list(buf, store, cand + static_cast<std::size_t>(i) * store);
            }
            control.advance(static_cast<std::uint64_t>(hi - lo));
        },
        &control);
}

template <class T>
void DenseDistances<T>::pairs_below(const double* a, const i32* /*group*/, int n_threads, Control& control,
                                    const PairVisitor& visit) const {
    const i32 n = n_;
    const std::size_t tasks = (static_cast<std::size_t>(n) + kRowBlock - 1) / kRowBlock;
    parallel_for(
        tasks, n_threads,
        [&](std::size_t task) {
            const i32 lo = static_cast<i32>(task) * kRowBlock, hi = std::min(n, lo + kRowBlock);
            for (i32 i = lo; i < hi; ++i)
                for (i32 j = i + 1; j < n; ++j)
                    if ((*this)(i, j) < a[i] + a[j]) visit(i, j);
            control.check();
        },
        &control);
}

template <class T>
void DenseDistances<T>::pairs_below_rows(const double* a, const i32* /*group*/, const char* columns,
                                         const std::vector<i32>& rows, int n_threads, Control& control,
                                         const PairVisitor& visit) const {
    const i32 n = n_;
    std::vector<char> in(n, 0);
    for (i32 i : rows) in[i] = 1;
    const std::size_t tasks = (rows.size() + 63) / 64;
    parallel_for(
        tasks, n_threads,
        [&](std::size_t task) {
            const std::size_t hi = std::min(rows.size(), (task + 1) * 64);
            for (std::size_t t = task * 64; t < hi; ++t) {
                const i32 i = rows[t];
                for (i32 j = 0; j < n; ++j)
                    if (j != i && !(in[j] && j < i) && (columns == nullptr || columns[j]) &&
                        (*this)(i, j) < a[i] + a[j])
                        visit(i, j);
            }
            control.check();
        },
        &control);
}

template class DenseDistances<float>;
template class DenseDistances<double>;

// ------------------------------------------------------------ Euclidean

EuclideanDistances::EuclideanDistances(const double* X, i32 n, i64 d, bool squared, const Gemm& gemm, bool single_ok,
                                       Control* control)
    : X_(X), n_(n), d_(d), squared_(squared), gemm_(gemm) {
    // float32 tiles pay off (twice the BLAS speed) when the product dominates.
    single_ = single_ok && d >= 16 && gemm.sgemm != nullptr;
    mean_.assign(static_cast<std::size_t>(d), 0.0);
    for (i32 i = 0; i < n; ++i)
        for (i64 k = 0; k < d; ++k) mean_[k] += X[i * d + k];
    for (auto& m : mean_) m /= std::max<i32>(n, 1);
    double spread = 0;
    for (i32 i = 0; i < n; ++i)
        for (i64 k = 0; k < d; ++k) spread = std::max(spread, std::abs(X[i * d + k] - mean_[k]));
    // Tiles work on coordinates scaled by a power of two to about 1, so that
    // float32 neither overflows nor underflows; bounds are scaled back exactly.
    const double scale = std::ldexp(1.0, euclidean::power_of_two_shift(spread));
    tile_scale_ = scale;
    order_points(control);
    const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(d);
    if (single_)
        xc32_.resize(size);
    else
        xc64_.resize(size);
    sq_.assign(n, 0.0);
    std::vector<double> row(static_cast<std::size_t>(d));
    for (i32 p = 0; p < n; ++p) {
        coordinates(p, row.data());
        double s = 0;
        for (i64 k = 0; k < d; ++k) {
            const double c = row[k];
            const std::size_t at = static_cast<std::size_t>(p) * d + k;
            if (single_) {
                xc32_[at] = static_cast<float>(c);
                const double stored = xc32_[at];
                s += stored * stored;
            } else {
                xc64_[at] = c;
                s += c * c;
            }
        }
        sq_[p] = s;
        sq_max_ = std::max(sq_max_, s);
    }
    // |tile value - squared distance| <= unit_err_ * (sq_i + sq_j) + tiny:
    // the shared expansion bound (products, norms, additions) plus, for
    // float32 tiles, the rounding of the coordinates themselves
    // (|(|a'-b'|^2 - |a-b|^2)| <= 4 u (|a|^2 + |b|^2) to first order).
    unit_err_ = tile_unit_error(d, single_);
    const double reach = 2 * std::sqrt(sq_max_) / scale * (1 + 1e-6);
    max_ = squared ? reach * reach : reach;
    if (single_) screen32_ = ScreenTerms(sq_, unit_err_, d);
    if (single_) pack_panels_of_rows(control);
    position_.resize(n);
    for (i32 p = 0; p < n; ++p) position_[perm_[p]] = p;
    set_simd(SimdLevel::automatic);
    block_balls(control);
}

void EuclideanDistances::pack_panels_of_rows(Control* control) {
    panels_ = PackedPanels(n_, d_);
    constexpr i32 chunk = 256 * kPanelColumns;
    for (i32 first = 0; first < n_; first += chunk) {
        if (control != nullptr) control->check();
        panels_.fill(xc32_.data(), first, std::min(chunk, n_ - first));
    }
}

void EuclideanDistances::panel_tile(const float* rows_x, i32 rows, const float* col_panels, i32 cols, float* out,
                                    i32 stride) const {
    thread_local PackedPanels row_panels;
    row_panels.assign(rows_x, rows, d_);
    for (i32 c = 0; c < cols; c += kPanelColumns)
        panel_dots_(rows_x, row_panels.from(0), rows, d_, col_panels + static_cast<std::size_t>(c) * d_, out + c,
                    stride);
}

double EuclideanDistances::tile_unit_error(i64 d, bool single) {
    const double u = single ? kEps32 : kEps64;
    return euclidean::expansion_error(static_cast<std::ptrdiff_t>(d), 1.0, u) * 1.01 + (single ? 4.5 * u : 0.0);
}

void EuclideanDistances::set_simd(SimdLevel level) {
    flag_below_ = flag_below_for(level);
    below_scan_ = below_scan_for(level);
    panel_dots_ = panel_dots_for(level);
    may_screen32_ = may_screen_for(level, squared_);
    screen_bits32_ = screen_bits_for(level, squared_);
    squared_distance_ = squared_distance_for(level);
}

void EuclideanDistances::coordinates(i32 p, double* out) const {
    const double* x = X_ + static_cast<std::size_t>(perm_.empty() ? p : perm_[p]) * d_;
    for (i64 k = 0; k < d_; ++k) out[k] = (x[k] - mean_[k]) * tile_scale_;
}

// Recursive halving: each range is split at a multiple of kBlock from its
// start along the line through two far points of it (the farthest from its
// first point, then the farthest from that one), so that every block lies
// inside one leaf. Clustered points end up with one cluster per block.
void EuclideanDistances::order_points(Control* control) {
    const i32 n = n_;
    const std::size_t d = static_cast<std::size_t>(d_);
    perm_.resize(n);
    for (i32 i = 0; i < n; ++i) perm_[i] = i;
    std::vector<double> a(d), b(d), x(d);
    std::vector<std::pair<double, i32>> proj;
    auto coords = [&](i32 i, double* out) {
        const double* row = X_ + static_cast<std::size_t>(i) * d;
        for (std::size_t k = 0; k < d; ++k) out[k] = (row[k] - mean_[k]) * tile_scale_;
    };
    // Every pass over a range checks the control every few thousand points.
    auto check = [&](i32 p) {
        if (control != nullptr && (p & 4095) == 0) control->check();
    };
    auto farthest = [&](i32 lo, i32 hi, const double* from) {
        double best = -1;
        i32 arg = perm_[lo];
        for (i32 p = lo; p < hi; ++p) {
            check(p);
            coords(perm_[p], x.data());
            double s = 0;
            for (std::size_t k = 0; k < d; ++k) s += (x[k] - from[k]) * (x[k] - from[k]);
            if (s > best) {
                best = s;
                arg = perm_[p];
            }
        }
        return arg;
    };
    std::vector<std::pair<i32, i32>> todo{{0, n}};
    while (!todo.empty()) {
        const auto [lo, hi] = todo.back();
        todo.pop_back();
        if (hi - lo <= kRowBlock) continue;
        coords(perm_[lo], a.data());
        coords(farthest(lo, hi, a.data()), a.data());
        coords(farthest(lo, hi, a.data()), b.data());
        for (std::size_t k = 0; k < d; ++k) b[k] -= a[k];
        proj.resize(static_cast<std::size_t>(hi - lo));
        for (i32 p = lo; p < hi; ++p) {
            check(p);
            coords(perm_[p], x.data());
            double s = 0;
            for (std::size_t k = 0; k < d; ++k) s += x[k] * b[k];
            proj[p - lo] = {s, perm_[p]};
        }
        const i32 half = (hi - lo) / 2;
        const i32 mid = lo + std::max<i32>(kRowBlock, (half + kRowBlock / 2) / kRowBlock * kRowBlock);
        std::nth_element(proj.begin(), proj.begin() + (mid - lo), proj.end());
        for (i32 p = lo; p < hi; ++p) perm_[p] = proj[p - lo].second;
        todo.emplace_back(lo, mid);
        todo.emplace_back(mid, hi);
    }
}

double EuclideanDistances::ball_of(const i32* positions, i32 count, double* centre) const {
    const std::size_t d = static_cast<std::size_t>(d_);
    std::vector<double> x(d);
    // Any centre will do (the radius is measured from it); float64 rounding
    // of the radius and the gaps is covered by a relative margin.
    std::fill(centre, centre + d, 0.0);
    for (i32 r = 0; r < count; ++r) {
        coordinates(positions[r], x.data());
        for (std::size_t k = 0; k < d; ++k) centre[k] += x[k];
    }
    for (std::size_t k = 0; k < d; ++k) centre[k] /= count;
    double radius = 0;
    for (i32 r = 0; r < count; ++r) {
        coordinates(positions[r], x.data());
        double s = 0;
        for (std::size_t k = 0; k < d; ++k) s += (x[k] - centre[k]) * (x[k] - centre[k]);
        radius = std::max(radius, s);
    }
    return std::sqrt(radius);
}

void EuclideanDistances::block_balls(Control* control) {
    const i32 n = n_, blocks = (n + kRowBlock - 1) / kRowBlock;
    ball_centre_.assign(static_cast<std::size_t>(blocks) * d_, 0.0);
    ball_radius_.assign(blocks, 0.0);
    ball_sq_.assign(blocks, 0.0);
    std::vector<i32> positions(kRowBlock);
    for (i32 b = 0; b < blocks; ++b) {
        if (control != nullptr && (b & 15) == 0) control->check();
        const i32 lo = b * kRowBlock, hi = std::min(n, lo + kRowBlock);
        for (i32 p = lo; p < hi; ++p) {
            positions[p - lo] = p;
            ball_sq_[b] = std::max(ball_sq_[b], sq_[p]);
        }
        ball_radius_[b] = ball_of(positions.data(), hi - lo, ball_centre_.data() + static_cast<std::size_t>(b) * d_);
    }
}

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

double EuclideanDistances::point_gap(i32 p, i32 b) const {
    const std::size_t at = static_cast<std::size_t>(p) * static_cast<std::size_t>(d_);
    if (!single_) return ball_gap(xc64_.data() + at, 0.0, b);  // the float64 coordinates themselves
    // The float32 row is within kEps32 |x| <= kEps32 |x'| (1 + 2 kEps32) of
    // the float64 one (a ball of that radius around it holds it); flushed
    // subnormals lose less than ball_gap's absolute margin.
    return ball_gap(xc32_.data() + at, 1.01 * kEps32 * std::sqrt(sq_[p]), b);
}

template <class Clear>
bool EuclideanDistances::rows_apart(i32 a, i32 b, Clear&& clear) const {
    for (i32 p = a * kRowBlock; p < std::min(n_, (a + 1) * kRowBlock); ++p)
        if (!clear(p, point_gap(p, b))) return false;
    return true;
}

bool EuclideanDistances::gap_clears(double gap, double value, double sq_a, double sq_b) const {
    // A pair at least gap apart has a squared distance >= gap^2 (float64
    // rounding of the square: the relative slack), and its tile value is
    // below that by at most the tiles' error.
    if (!(gap > 0)) return false;
    return gap * gap * (1 - 1e-12) - tile_error(sq_a, sq_b) >= value;
}

double EuclideanDistances::block_gap(i32 a, i32 b) const {
    return ball_gap(ball_centre_.data() + static_cast<std::size_t>(a) * d_, ball_radius_[a], b);
}

namespace {

// |a - b| with the differences scaled by their largest magnitude first, so
// that no square underflows.
double scaled_distance(const double* a, const double* b, std::int64_t d) {
    double big = 0;
    for (std::int64_t t = 0; t < d; ++t) big = std::max(big, std::abs(a[t] - b[t]));
    if (big == 0) return 0.0;
    double s = 0;
    for (std::int64_t t = 0; t < d; ++t) {
        const double q = (a[t] - b[t]) / big;
        s += q * q;
    }
    return big * std::sqrt(s);
}

}  // namespace

double EuclideanDistances::operator()(i32 i, i32 j) const {
    if (i == j) return 0.0;
    return distance_between(X_ + static_cast<std::size_t>(i) * d_, X_ + static_cast<std::size_t>(j) * d_);
}

double EuclideanDistances::distance_between(const double* a, const double* b) const {
    const double s = squared_distance_(a, b, d_);
    if (s < 0x1p-960 && !squared_) return scaled_distance(a, b, d_);  // squares near underflow
    return squared_ ? s : std::sqrt(s);
}

void EuclideanDistances::distances(i32 i, const i32* js, int count, double* out) const {
    distances_of_rows(*this, X_, d_, i, js, count, out);
}

// Rows picked far apart in memory cost a cache miss each: each row is
// requested a few distances ahead of its use, so that the misses overlap.
void distances_of_rows(const Distances& D, const double* rows, i64 d, i32 i, const i32* js, int count, double* out) {
    constexpr int kAhead = 6;
    const std::size_t lines = std::min<std::size_t>((static_cast<std::size_t>(d) * sizeof(double) + 63) / 64, 32);
    auto row = [&](i32 j) { return rows + static_cast<std::size_t>(j) * static_cast<std::size_t>(d); };
    auto request = [&](int t) {
        const char* at = reinterpret_cast<const char*>(row(js[t]));
        for (std::size_t l = 0; l < lines; ++l) prefetch_read(at + 64 * l);
    };
    for (int t = 0; t < std::min(count, kAhead); ++t) request(t);
    for (int t = 0; t < count; ++t) {
        if (t + kAhead < count) request(t + kAhead);
        out[t] = js[t] == i ? 0.0 : D.distance_between(row(i), row(js[t]));
    }
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
        GemmFn<T> gemm;
        if constexpr (std::is_same_v<T, float>)
            gemm = gemm_.sgemm;
        else
            gemm = gemm_.dgemm;
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
            dot_tile(gemm, xc + static_cast<std::size_t>(lo) * d_, rows, xc + static_cast<std::size_t>(start) * d_, m,
                     k, tile.data());
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

// Neighbour search over the upper triangle of tiles only: one tile of rows
// a x rows b serves the lists of both blocks. Rounds of disjoint block pairs
// (the circle method of round-robin tournaments) let threads work without
// sharing a list.
void EuclideanDistances::nearest(i32 store, i32* cand, double* bound, int n_threads, Control& control) const {
    if (single_) {
        nearest_impl<float>(xc32_.data(), gemm_.sgemm, store, cand, bound, n_threads, control);
        return;
    }
    // float64 tiles (few coordinates, so the product is cheap): whole rows
    // per task, so that only one block of lists is alive at a time.
    const i32 n = n_;
    const std::size_t tasks = (static_cast<std::size_t>(n) + kRowBlock - 1) / kRowBlock;
    std::vector<std::vector<Smallest<double>>> heaps(tasks);
    const double* sq = sq_.data();
    auto visit = [&](std::size_t task, i32 i, i32 c0, i32 c1, const auto* dots) {
        auto& hs = heaps[task];
        const i32 lo = static_cast<i32>(task) * kRowBlock;
        if (hs.empty()) hs.resize(kRowBlock);
        Smallest<double>& h = hs[i - lo];
        if (c0 == 0) h.reset(static_cast<std::size_t>(store) + 1);
        const double sqi = sq[i];
        double tau = h.tau;
        for (i32 c = c0; c < c1; ++c) {
            const double v = sqi + sq[c] - 2 * static_cast<double>(dots[c - c0]);
            if (v < tau && c != i) {
                h.push(v, c);
                tau = h.tau;
            }
        }
        if (c1 < n_) return;
        bound[perm_[i]] = list_and_bound(h.buf, store, i, cand);
        h.buf = {};
        if (i + 1 == std::min(n_, lo + kRowBlock)) hs = {};  // the task's last row
    };
    for_tiles(n_threads, control, [](i32) { return 0; }, [](i32, i32) { return false; }, visit);
}

template <class T>
double EuclideanDistances::list_and_bound(std::vector<std::pair<T, std::int32_t>>& buf, i32 store, i32 p,
                                          i32* cand) const {
    i32* list = cand + static_cast<std::size_t>(perm_[p]) * store;
    const double outside = take_list(buf, store, list);
    for (i32 t = 0; t < store; ++t) list[t] = perm_[list[t]];
    if (std::isinf(outside)) return outside;
    // Every point outside the list has a tile value >= outside, hence a
    // squared distance >= outside - err; then the error of operator().
    const double err = unit_err_ * (sq_[p] + sq_max_) + 1e-30;
    const double lower2 = std::max(outside - err, 0.0) / (tile_scale_ * tile_scale_);
    const double lower = squared_ ? lower2 : std::sqrt(lower2);
    return lower * (1 - 4 * relative_error());
}

namespace {

// Every pair of blocks a <= b once: the diagonal first, then rounds of disjoint pairs (the circle method), each
// round's pairs side by side on the threads; progress: the n points spread over the rounds.
template <class Visit>
void for_block_pairs(i32 blocks, i32 n, int n_threads, Control& control, Visit&& visit) {
    const i32 players = blocks + (blocks % 2);  // one idle block when odd
    const std::uint64_t per_round = static_cast<std::uint64_t>(n) / static_cast<std::uint64_t>(players);
    for (i32 round = -1; round < players - 1; ++round) {
        const std::size_t tasks = round < 0 ? static_cast<std::size_t>(blocks) : static_cast<std::size_t>(players / 2);
        parallel_for(
            tasks, n_threads,
            [&](std::size_t t) {
                i32 a, b;
                if (round < 0) {
                    a = b = static_cast<i32>(t);
                } else {
                    // Player players-1 stays, the others rotate.
                    const i32 ti = static_cast<i32>(t);
                    auto seat = [&](i32 s) { return s == players - 1 ? s : (s + round) % (players - 1); };
                    a = seat(ti);
                    b = seat(players - 1 - ti);
                    if (a > b) std::swap(a, b);
                }
                if (b >= blocks) return;  // paired with the idle block
                visit(a, b);
            },
            &control);
        control.advance(per_round);
    }
}

}  // namespace

template <class T>
std::pair<i32, i32> EuclideanDistances::block_tile(const T* xc, GemmFn<T> gemm, i32 a, i32 b,
                                                   std::vector<T>& tile) const {
    constexpr i32 R = kRowBlock;
    const i32 lo_a = a * R, rows_a = std::min(n_, lo_a + R) - lo_a;
    const i32 lo_b = b * R, rows_b = std::min(n_, lo_b + R) - lo_b;
    int m = rows_b, rows = rows_a, k = static_cast<int>(d_);
    tile.resize(static_cast<std::size_t>(rows_a) * rows_b);
    dot_tile(gemm, xc + static_cast<std::size_t>(lo_a) * d_, rows, xc + static_cast<std::size_t>(lo_b) * d_, m, k,
             tile.data());
    return std::make_pair(rows_a, rows_b);
}

// No value of the tile of blocks a and b can enter a list: the balls are
// farther apart than every list's threshold of both; or every row of one
// block is farther from the other's ball than its own threshold and every
// threshold of the other block.
template <class Tau>
bool EuclideanDistances::tile_apart(i32 a, i32 b, const std::vector<double>& block_tau, Tau&& tau) const {
    if (gap_clears(block_gap(a, b), std::max(block_tau[a], block_tau[b]), ball_sq_[a], ball_sq_[b])) return true;
    auto one_sided = [&](i32 x, i32 y) {
        return rows_apart(x, y, [&](i32 p, double gap) {
            return gap_clears(gap, std::max(tau(p), block_tau[y]), sq_[p], ball_sq_[y]);
        });
    };
    return one_sided(a, b) || one_sided(b, a);
}

template <class T>
void EuclideanDistances::nearest_impl(const T* xc, GemmFn<T> gemm, i32 store, i32* cand, double* bound, int n_threads,
                                      Control& control) const {
    const i32 n = n_;
    constexpr i32 R = kRowBlock;
    const i32 blocks = (n + R - 1) / R;
    const std::size_t keep = static_cast<std::size_t>(store) + 1;
    std::vector<Smallest<T>> heaps(n);
    for (auto& h : heaps) h.reset(keep, 2);
    std::vector<T> sqT(n);
    for (i32 i = 0; i < n; ++i) sqT[i] = static_cast<T>(sq_[i]);
    static_assert(std::is_same_v<T, float>, "the neighbour search scans float32 tiles");
    // The largest threshold of each block's lists (thresholds only fall: a
    // block's entry is renewed after each tile of it, by the thread that owns it).
    std::vector<double> block_tau(blocks, std::numeric_limits<double>::infinity());
    auto renew_block_tau = [&](i32 a) {
        T tau = 0;
        for (i32 i = a * R; i < std::min(n, a * R + R); ++i) tau = std::max(tau, heaps[i].tau);
        block_tau[a] = static_cast<double>(tau);
    };
    auto apart = [&](i32 a, i32 b) {
        return tile_apart(a, b, block_tau, [&](i32 p) { return static_cast<double>(heaps[p].tau); });
    };
    // A value v of the pair (row i, column c of block b, point j): into i's
    // list and j's when below their thresholds (tau_c: j's, kept current).
    auto take = [&](Smallest<T>& h, i32 i, i32 j, T v, T& tau_c) {
        if (v < h.tau && j != i) h.push(v, j);
        if (v < tau_c) {
            heaps[j].push(v, i);
            tau_c = heaps[j].tau;
        }
    };
    // The thresholds of block b's lists as columns of a tile against block
    // a (a == b: -inf, since on the diagonal the rows see every pair).
    auto column_thresholds = [&](i32 a, i32 b, i32 rows_b, std::vector<T>& tau_col) {
        tau_col.resize(rows_b);
        for (i32 c = 0; c < rows_b; ++c)
            tau_col[c] = a != b ? heaps[b * R + c].tau : -std::numeric_limits<T>::infinity();
    };
    // One tile: rows of block a against rows of block b (a == b: within a
    // block), in one pass over the tile that serves the lists of both blocks.
    // Almost every value is above both lists' thresholds: a branch-free loop
    // (vectorised) flags the chunks holding a candidate, and only those are
    // looked at one by one.
    auto work = [&](i32 a, i32 b, std::vector<T>& tile, std::vector<T>& tau_col) {
        if (a != b && apart(a, b)) return;
        const auto [rows_a, rows_b] = block_tile(xc, gemm, a, b, tile);
        const i32 lo_a = a * R, lo_b = b * R;
        column_thresholds(a, b, rows_b, tau_col);
        const T* sqb = sqT.data() + lo_b;
        for (i32 r = 0; r < rows_a; ++r) {
            const i32 i = lo_a + r;
            Smallest<T>& h = heaps[i];
            const T sqi = sqT[i];
            T* row = tile.data() + static_cast<std::size_t>(r) * rows_b;
            for (i32 cb = 0; cb < rows_b; cb += kFlagChunk) {
                const i32 ce = std::min(rows_b, cb + kFlagChunk);
                // Only the flagged columns (thresholds only fall since the scan).
                for (std::uint64_t bits = flag_below_(row, sqb, sqi, h.tau, tau_col.data(), cb, ce); bits != 0;
                     bits &= bits - 1) {
                    const i32 c = cb + static_cast<i32>(lowest_bit(bits));
                    take(h, i, lo_b + c, row[c], tau_col[c]);
                }
            }
        }
    };
    // The same with the fused kernel, one panel of block b at a time against
    // all rows of block a (the thresholds read afresh for every panel): no
    // tile is written, only the pairs below a threshold come out.
    auto work_fused = [&](i32 a, i32 b, std::vector<T>& tau_row, std::vector<T>& tau_col,
                          std::vector<BelowCandidate>& found) {
        if (a != b && apart(a, b)) return;
        const i32 lo_a = a * R, rows_a = std::min(n, lo_a + R) - lo_a;
        const i32 lo_b = b * R, rows_b = std::min(n, lo_b + R) - lo_b;
        column_thresholds(a, b, rows_b, tau_col);
        tau_row.resize(rows_a);
        found.resize(static_cast<std::size_t>(rows_a) * kPanelColumns);
        const T* rows_x = xc + static_cast<std::size_t>(lo_a) * d_;
        for (i32 cb = 0; cb < rows_b; cb += kPanelColumns) {
            for (i32 r = 0; r < rows_a; ++r) tau_row[r] = heaps[lo_a + r].tau;
            const i32 count = below_scan_(rows_x, panels_.from(lo_a), rows_a, d_, panels_.from(lo_b + cb),
                                          std::min(kPanelColumns, rows_b - cb), sqT.data() + lo_a,
                                          sqT.data() + lo_b + cb, tau_row.data(), tau_col.data() + cb, found.data());
            for (i32 t = 0; t < count; ++t) {
                const BelowCandidate& f = found[t];
                const i32 c = cb + f.col;
                take(heaps[lo_a + f.row], lo_a + f.row, lo_b + c, f.value, tau_col[c]);
            }
        }
    };
    for_block_pairs(blocks, n, n_threads, control, [&](i32 a, i32 b) {
        thread_local std::vector<T> tile, tau_row, tau_col;
        thread_local std::vector<BelowCandidate> found;
        if (below_scan_ != nullptr) {
            work_fused(a, b, tau_row, tau_col, found);
        } else {
            const OneBlasThread one_thread(gemm_.threads);  // our threads are the parallelism
            work(a, b, tile, tau_col);
        }
        renew_block_tau(a);
        renew_block_tau(b);
        control.check();
    });
    // The lists, and a lower bound on the distance to every point outside.
    const std::size_t chunks = (static_cast<std::size_t>(n) + R - 1) / R;
    parallel_for(
        chunks, n_threads,
        [&](std::size_t t) {
            const i32 lo = static_cast<i32>(t) * R, hi = std::min(n, lo + R);
            for (i32 p = lo; p < hi; ++p) {
                bound[perm_[p]] = list_and_bound(heaps[p].buf, store, p, cand);
                heaps[p].buf = {};
            }
        },
        &control);
}

double EuclideanDistances::tile_threshold(double a) const {
    const double widen = 1 + 8 * relative_error();
    const double unit = squared_ ? tile_scale_ * tile_scale_ : tile_scale_;
    return (a > 0 ? a * widen : a) * unit;
}

std::vector<double> EuclideanDistances::tile_thresholds(const double* a) const {
    std::vector<double> at(n_);
    for (i32 p = 0; p < n_; ++p) at[p] = tile_threshold(a[perm_[p]]);
    return at;
}

namespace {

// Float32 copies of chosen points, contiguous, with the prefilter's terms.
struct FloatScreenSet final : Distances::ScreenSet {
    std::vector<float> x, sq, err, at;
    PackedPanels panels;  // x in panels, where the panel kernel runs
};

}  // namespace

std::unique_ptr<Distances::ScreenSet> EuclideanDistances::screen_set(const i32* points, i32 count,
                                                                     const double* a) const {
    if (!single_ || gemm_.sgemm == nullptr) return nullptr;
    auto set = std::make_unique<FloatScreenSet>();
    const std::size_t d = static_cast<std::size_t>(d_);
    set->x.resize(static_cast<std::size_t>(count) * d);
    set->sq.resize(count);
    set->err.resize(count);
    set->at.resize(count);
    for (i32 t = 0; t < count; ++t) {
        const i32 p = position_[points[t]];
        std::copy_n(xc32_.data() + static_cast<std::size_t>(p) * d, d, set->x.data() + static_cast<std::size_t>(t) * d);
        set->sq[t] = screen32_.sq[p];
        set->err[t] = screen32_.err[p];
        set->at[t] = float_at_least(tile_threshold(a[t]));
    }
    if (panel_dots_ != nullptr) set->panels.assign(set->x.data(), count, d_);
    return set;
}

void EuclideanDistances::screen_block(const ScreenSet& rows, i32 r0, i32 r1, const ScreenSet& cols, i32 c0, i32 c1,
                                      int words, std::uint64_t* bits, double lower) const {
    const auto& R = static_cast<const FloatScreenSet&>(rows);
    const auto& C = static_cast<const FloatScreenSet&>(cols);
    const int nr = r1 - r0, nc = c1 - c0, k = static_cast<int>(d_);
    if (nr <= 0 || nc <= 0) return;
    if (nc > kScreenColumns || nc > 64 * words) throw std::logic_error("screen_block: too many columns");
    thread_local std::vector<float> tile;
    const std::size_t d = static_cast<std::size_t>(d_);
    // The panel kernel where there is one (faster than a matrix product this
    // narrow): from the panel holding c0, the tile's columns `shift` on.
    const int shift = panel_dots_ != nullptr ? c0 % kPanelColumns : 0;
    const int stride = panel_dots_ != nullptr ? panel_stride(shift + nc) : nc;
    tile.resize(static_cast<std::size_t>(nr) * stride);
    if (panel_dots_ != nullptr) {
        panel_tile(R.x.data() + static_cast<std::size_t>(r0) * d, nr, C.panels.from(c0 - shift), shift + nc,
                   tile.data(), stride);
    } else {
        const OneBlasThread one_thread(gemm_.threads);
        dot_tile(gemm_.sgemm, R.x.data() + static_cast<std::size_t>(r0) * d, nr,
                 C.x.data() + static_cast<std::size_t>(c0) * d, nc, k, tile.data());
    }
    // The rows' thresholds take the lowering (in tile units, never more than
    // asked: the widening of positive thresholds stays; each rounded up).
    double lower_units = std::nextafter(-tile_threshold(-lower), 0.0);
    if (!(lower_units > 0 && lower_units < std::numeric_limits<double>::infinity())) lower_units = 0;
    for (int r = 0; r < nr; ++r) {
        const float* dots = tile.data() + static_cast<std::size_t>(r) * stride + shift;
        const i32 i = r0 + r;
        const float ati = lower_units > 0 ? float_at_least(std::nextafter(static_cast<double>(R.at[i]) - lower_units,
                                                                          std::numeric_limits<double>::infinity()))
                                          : R.at[i];
        std::uint64_t* out = bits + static_cast<std::size_t>(r) * words;
        for (int w = 0; w < words; ++w) out[w] = 0;
        for (int cb = 0; cb < nc; cb += 64) {
            const int len = std::min(64, nc - cb);
            out[cb / 64] = screen_bits32_(dots + cb, C.sq.data() + c0 + cb, C.err.data() + c0 + cb,
                                          C.at.data() + c0 + cb, R.sq[i], R.err[i], ati, len);
        }
    }
}

std::vector<double> EuclideanDistances::block_maxima(const std::vector<double>& at) const {
    std::vector<double> top((n_ + kRowBlock - 1) / kRowBlock, -std::numeric_limits<double>::infinity());
    for (i32 p = 0; p < n_; ++p) top[p / kRowBlock] = std::max(top[p / kRowBlock], at[p]);
    return top;
}

bool EuclideanDistances::screened_apart(double gap, double top, double sq_a, double sq_b) const {
    // Every pair has a threshold sum s <= top (rounding is monotone): none is
    // flagged when top <= 0, nor when the gap squared, less the tiles' error,
    // is at least top squared.
    if (std::isnan(top)) return false;
    if (!(top > 0)) return true;
    if (std::isinf(top)) return false;
    const double target = squared_ ? top : top * top;
    return gap_clears(gap, target * (1 + 1e-12), sq_a, sq_b);
}

template <class T>
void EuclideanDistances::screen(i32 i, i32 cb, i32 ce, i32 c0, const T* dots, const std::vector<double>& at,
                                unsigned char* hit) const {
    const double* sq = sq_.data();
    const double sqi = sq[i], ai = at[i], unit_err = unit_err_;
    const bool squared = squared_;
    for (i32 c = cb; c < ce; ++c) {
        const double s = ai + at[c];
        const double v = sqi + sq[c] - 2 * static_cast<double>(dots[c - c0]);
        const double lower = v - unit_err * (sqi + sq[c]) - 1e-30;
        hit[c - cb] = static_cast<unsigned char>((s > 0) & (lower < (squared ? s : s * s)));
    }
}

template <class T>
bool EuclideanDistances::may_screen(i32 i, i32 cb, i32 ce, i32 c0, const T* dots,
                                    const std::vector<float>& at32) const {
    if constexpr (std::is_same_v<T, float>) {
        const ScreenTerms& t = screen32_;
        return may_screen32_(dots + (cb - c0), t.sq.data() + cb, t.err.data() + cb, at32.data() + cb, t.sq[i], t.err[i],
                             at32[i], ce - cb);
    } else {
        return true;
    }
}

std::vector<i32> EuclideanDistances::block_groups(const i32* group) const {
    if (group == nullptr) return {};
    std::vector<i32> out((n_ + kRowBlock - 1) / kRowBlock);
    for (i32 p = 0; p < n_; ++p) {
        i32& g = out[p / kRowBlock];
        const i32 gp = group[perm_[p]];
        g = p % kRowBlock == 0 ? gp : (g == gp ? g : -1);
    }
    return out;
}

void EuclideanDistances::pairs_below(const double* a, const i32* group, int n_threads, Control& control,
                                     const PairVisitor& visit_pair) const {
    const std::vector<double> at = tile_thresholds(a);
    const std::vector<float> at32 = single_ ? floats_at_least(at) : std::vector<float>{};
    const std::vector<double> top = block_maxima(at);
    const std::vector<i32> groups = block_groups(group);
    // Blocks of one group; blocks whose balls are apart, or each row of one
    // block apart from the other's ball (its threshold plus the other block's largest).
    auto skip = [&](i32 ra, i32 cb) {
        if (!groups.empty() && groups[ra] >= 0 && groups[ra] == groups[cb]) return true;
        if (screened_apart(block_gap(ra, cb), top[ra] + top[cb], ball_sq_[ra], ball_sq_[cb])) return true;
        auto one_sided = [&](i32 x, i32 y) {
            return rows_apart(
                x, y, [&](i32 p, double gap) { return screened_apart(gap, at[p] + top[y], sq_[p], ball_sq_[y]); });
        };
        return ra != cb && (one_sided(ra, cb) || one_sided(cb, ra));
    };
    auto visit = [&](std::size_t, i32 p, i32 c0, i32 c1, const auto* dots) {
        // Flags first, then the rare visits.
        unsigned char hit[64];
        for (i32 cb = std::max(c0, p + 1); cb < c1; cb += 64) {
            const i32 ce = std::min(c1, cb + 64);
            if (!may_screen(p, cb, ce, c0, dots, at32)) continue;
            screen(p, cb, ce, c0, dots, at, hit);
            for (i32 c = cb; c < ce; ++c)
                if (hit[c - cb]) visit_pair(std::min(perm_[p], perm_[c]), std::max(perm_[p], perm_[c]));
        }
    };
    for_tiles(n_threads, control, [](i32 lo) { return lo; }, skip, visit);
}

std::vector<char> EuclideanDistances::flagged_blocks(const char* columns) const {
    std::vector<char> flagged;
    if (columns == nullptr) return flagged;
    flagged.assign((n_ + kRowBlock - 1) / kRowBlock, 0);
    for (i32 p = 0; p < n_; ++p) flagged[p / kRowBlock] |= columns[perm_[p]] != 0;
    return flagged;
}

template <class T>
EuclideanDistances::RowBlock EuclideanDistances::gather_rows(const T* xc, const i32* where, int count,
                                                             const std::vector<double>& at, const i32* group,
                                                             T* block) const {
    const std::size_t d = static_cast<std::size_t>(d_);
    RowBlock rows;
    rows.at_top = -std::numeric_limits<double>::infinity();
    rows.at_low = std::numeric_limits<double>::infinity();
    rows.group = group == nullptr ? -1 : group[perm_[where[0]]];
    for (int r = 0; r < count; ++r) {
        const i32 p = where[r];
        if (group != nullptr && group[perm_[p]] != rows.group) rows.group = -1;
        std::copy_n(xc + static_cast<std::size_t>(p) * d, d, block + static_cast<std::size_t>(r) * d);
        rows.sq_top = std::max(rows.sq_top, sq_[p]);
        rows.at_top = std::max(rows.at_top, at[p]);
        rows.at_low = std::min(rows.at_low, at[p]);
    }
    rows.centre.assign(d, 0.0);
    rows.radius = ball_of(where, count, rows.centre.data());
    return rows;
}

bool EuclideanDistances::rows_near_block(const RowBlock& rows, const i32* where, int count,
                                         const std::vector<double>& at, double block_top, double gap, i32 cb,
                                         std::vector<int>& active) const {
    if (screened_apart(gap, rows.at_top + block_top, rows.sq_top, ball_sq_[cb])) return false;
    active.clear();
    // Row by row only when some row could be far enough: none is
    // farther from the column ball than gap + 2 radius.
    const double reach = gap + 2 * rows.radius * (1 + 1e-6), low = rows.at_low + block_top;
    if (low > 0 && !(reach > 0 && reach * reach >= (squared_ ? low : low * low) * (1 - 1e-6))) return true;
    for (int r = 0; r < count; ++r) {
        const i32 p = where[r];
        if (!screened_apart(point_gap(p, cb), at[p] + block_top, sq_[p], ball_sq_[cb])) active.push_back(r);
    }
    return !active.empty();
}

void EuclideanDistances::pairs_below_rows(const double* a, const i32* group, const char* columns,
                                          const std::vector<i32>& rows, int n_threads, Control& control,
                                          const PairVisitor& visit_pair) const {
    const i32 n = n_;
    const std::size_t d = static_cast<std::size_t>(d_);
    const std::vector<double> at = tile_thresholds(a);
    const std::vector<float> at32 = single_ ? floats_at_least(at) : std::vector<float>{};
    const std::vector<double> top = block_maxima(at);
    const std::vector<i32> groups = block_groups(group);
    const std::vector<char> block_has_columns = flagged_blocks(columns);  // empty: all
    std::vector<char> in(n, 0);
    for (i32 i : rows) in[i] = 1;
    // The rows by position, so that each task's rows are near each other.
    std::vector<i32> where;
    where.reserve(rows.size());
    for (i32 p = 0; p < n; ++p)
        if (in[perm_[p]]) where.push_back(p);
    const auto m = static_cast<i32>(where.size());
    const std::size_t tasks = (static_cast<std::size_t>(m) + kRowBlock - 1) / kRowBlock;
    auto run = [&](auto zero, std::size_t task) {
        using T = decltype(zero);
        const T* xc;
        GemmFn<T> gemm;
        if constexpr (std::is_same_v<T, float>) {
            xc = xc32_.data();
            gemm = gemm_.sgemm;
        } else {
            xc = xc64_.data();
            gemm = gemm_.dgemm;
        }
        const i32 lo = static_cast<i32>(task) * kRowBlock, hi = std::min(m, lo + kRowBlock);
        const int nr = hi - lo;
        int k = static_cast<int>(d_);
        std::vector<T> block(static_cast<std::size_t>(nr) * d);  // the rows, contiguous
        const RowBlock rows_ball = gather_rows(xc, where.data() + lo, nr, at, group, block.data());
        const i32 rows_group = rows_ball.group;
        std::vector<T> tile(static_cast<std::size_t>(nr) * kRowBlock), near(static_cast<std::size_t>(nr) * d);
        std::vector<int> active;  // the rows of a tile not ruled out one by one
        const OneBlasThread one_thread(gemm_.threads);
        for (i32 c0 = 0; c0 < n; c0 += kRowBlock) {
            const i32 cblock = c0 / kRowBlock;
            if ((rows_group >= 0 && groups[cblock] == rows_group) ||
                (!block_has_columns.empty() && !block_has_columns[cblock]))
                continue;
            const double gap = ball_gap(rows_ball.centre.data(), rows_ball.radius, cblock);
            if (!rows_near_block(rows_ball, where.data() + lo, nr, at, top[cblock], gap, cblock, active)) continue;
            const bool all = active.empty() || static_cast<int>(active.size()) == nr;
            const T* rows_x = block.data();
            if (!all) {  // the remaining rows, contiguous
                for (std::size_t t = 0; t < active.size(); ++t)
                    std::copy_n(block.data() + static_cast<std::size_t>(active[t]) * d, d, near.data() + t * d);
                rows_x = near.data();
            }
            const int count = all ? nr : static_cast<int>(active.size());
            const i32 c1 = std::min(n, c0 + kRowBlock);
            const int cols = c1 - c0;
            int stride = cols;
            bool by_panels = false;  // the panel kernel where there is one (faster than a product this narrow)
            if constexpr (std::is_same_v<T, float>) {
                by_panels = panel_dots_ != nullptr;
                if (by_panels) {
                    stride = panel_stride(cols);
                    panel_tile(rows_x, count, panels_.from(c0), cols, tile.data(), stride);
                }
            }
            if (!by_panels) dot_tile(gemm, rows_x, count, xc + static_cast<std::size_t>(c0) * d, cols, k, tile.data());
            unsigned char hit[64];
            for (int t = 0; t < count; ++t) {
                const int r = all ? t : active[t];
                const i32 p = where[lo + r], i = perm_[p];
                const T* dots = tile.data() + static_cast<std::size_t>(t) * stride;
                for (i32 cb = c0; cb < c1; cb += 64) {
                    const i32 ce = std::min(c1, cb + 64);
                    if (!may_screen(p, cb, ce, c0, dots, at32)) continue;
                    screen(p, cb, ce, c0, dots, at, hit);
                    for (i32 c = cb; c < ce; ++c) {
                        if (!hit[c - cb]) continue;
                        const i32 j = perm_[c];
                        if (j != i && !(in[j] && j < i) && (columns == nullptr || columns[j])) visit_pair(i, j);
                    }
                }
            }
            control.check();
        }
    };
    for_each_tile_task(tasks, n_threads, run, control);
}

void EuclideanDistances::matrix(double* out, int n_threads, Control& control) const {
    if (single_) throw std::logic_error("matrix() needs float64 tiles");
    const double* sq = sq_.data();
    const double s2 = tile_scale_ * tile_scale_;
    const std::size_t n = static_cast<std::size_t>(n_);
    auto visit = [&](std::size_t, i32 p, i32 c0, i32 c1, const auto* dots) {
        const i32 i = perm_[p];
        double* row = out + static_cast<std::size_t>(i) * n;
        for (i32 c = c0; c < c1; ++c) {
            const i32 j = perm_[c];
            if (c == p) {
                row[j] = 0;
                continue;
            }
            const double v = sq[p] + sq[c] - 2 * static_cast<double>(dots[c - c0]);
            if (euclidean::needs_direct(v, sq[p] + sq[c], static_cast<std::ptrdiff_t>(d_), kEps64, 1e-12)) {
                row[j] = (*this)(i, j);  // cancellation could matter: from the differences
            } else {
                const double v2 = v / s2;
                row[j] = squared_ ? v2 : std::sqrt(v2);
            }
        }
    };
    for_tiles(n_threads, control, [](i32) { return 0; }, [](i32, i32) { return false; }, visit);
    // Exactly symmetric: the upper triangle defines each pair.
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) out[j * n + i] = out[i * n + j];
        if ((i & 255) == 255) control.check();
    }
}

}  // namespace pairmetrics::matching
