#include "matching_distances_detail.hpp"

#include <stdexcept>
#include <type_traits>

namespace pairmetrics::matching {

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
        control);
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
        control);
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
        control);
}

template class DenseDistances<float>;
template class DenseDistances<double>;

// ------------------------------------------------------------ Euclidean

EuclideanDistances::EuclideanDistances(const double* X, i32 n, i64 d, bool squared, const Blas& gemm, Control& control,
                                       bool single_ok)
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

void EuclideanDistances::pack_panels_of_rows(Control& control) {
    panels_ = PackedPanels(n_, d_);
    constexpr i32 chunk = 256 * kPanelColumns;
    for (i32 first = 0; first < n_; first += chunk) {
        control.check();
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
void EuclideanDistances::order_points(Control& control) {
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
        if ((p & 4095) == 0) control.check();
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

void EuclideanDistances::block_balls(Control& control) {
    const i32 n = n_, blocks = (n + kRowBlock - 1) / kRowBlock;
    ball_centre_.assign(static_cast<std::size_t>(blocks) * d_, 0.0);
    ball_radius_.assign(blocks, 0.0);
    ball_sq_.assign(blocks, 0.0);
    std::vector<i32> positions(kRowBlock);
    for (i32 b = 0; b < blocks; ++b) {
        if ((b & 15) == 0) control.check();
        const i32 lo = b * kRowBlock, hi = std::min(n, lo + kRowBlock);
        for (i32 p = lo; p < hi; ++p) {
            positions[p - lo] = p;
            ball_sq_[b] = std::max(ball_sq_[b], sq_[p]);
        }
        ball_radius_[b] = ball_of(positions.data(), hi - lo, ball_centre_.data() + static_cast<std::size_t>(b) * d_);
    }
}

double EuclideanDistances::point_gap(i32 p, i32 b) const {
    const std::size_t at = static_cast<std::size_t>(p) * static_cast<std::size_t>(d_);
    if (!single_) return ball_gap(xc64_.data() + at, 0.0, b);  // the float64 coordinates themselves
    // The float32 row is within kEps32 |x| <= kEps32 |x'| (1 + 2 kEps32) of
    // the float64 one (a ball of that radius around it holds it); flushed
    // subnormals lose less than ball_gap's absolute margin.
    return ball_gap(xc32_.data() + at, 1.01 * kEps32 * std::sqrt(sq_[p]), b);
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
