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
constexpr i32 kRowBlock = 256;   // rows per task
constexpr i32 kColBlock = 2048;  // columns per tile

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
void DenseDistances<T>::pairs_below(const double* a, int n_threads, Control& control, const PairVisitor& visit) const {
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
void DenseDistances<T>::pairs_below_rows(const double* a, const std::vector<i32>& rows, int n_threads, Control& control,
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
                    if (j != i && !(in[j] && j < i) && (*this)(i, j) < a[i] + a[j]) visit(i, j);
            }
            control.check();
        },
        &control);
}

template class DenseDistances<float>;
template class DenseDistances<double>;

// ------------------------------------------------------------ Euclidean

EuclideanDistances::EuclideanDistances(const double* X, i32 n, i64 d, bool squared, const Gemm& gemm, bool single_ok)
    : X_(X), n_(n), d_(d), squared_(squared), gemm_(gemm) {
    // float32 tiles pay off (twice the BLAS speed) when the product dominates.
    single_ = single_ok && d >= 16 && gemm.sgemm != nullptr;
    std::vector<double> mean(static_cast<std::size_t>(d), 0.0);
    for (i32 i = 0; i < n; ++i)
        for (i64 k = 0; k < d; ++k) mean[k] += X[i * d + k];
    for (auto& m : mean) m /= std::max<i32>(n, 1);
    double spread = 0;
    for (i32 i = 0; i < n; ++i)
        for (i64 k = 0; k < d; ++k) spread = std::max(spread, std::abs(X[i * d + k] - mean[k]));
    // Tiles work on coordinates scaled by a power of two to about 1, so that
    // float32 neither overflows nor underflows; bounds are scaled back exactly.
    const double scale = std::ldexp(1.0, euclidean::power_of_two_shift(spread));
    const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(d);
    if (single_)
        xc32_.resize(size);
    else
        xc64_.resize(size);
    sq_.assign(n, 0.0);
    for (i32 i = 0; i < n; ++i) {
        double s = 0;
        for (i64 k = 0; k < d; ++k) {
            const double c = (X[i * d + k] - mean[k]) * scale;
            const std::size_t at = static_cast<std::size_t>(i) * d + k;
            if (single_) {
                xc32_[at] = static_cast<float>(c);
                const double stored = xc32_[at];
                s += stored * stored;
            } else {
                xc64_[at] = c;
                s += c * c;
            }
        }
        sq_[i] = s;
        sq_max_ = std::max(sq_max_, s);
    }
    // |tile value - squared distance| <= unit_err_ * (sq_i + sq_j) + tiny:
    // the shared expansion bound (products, norms, additions) plus, for
    // float32 tiles, the rounding of the coordinates themselves
    // (|(|a'-b'|^2 - |a-b|^2)| <= 4 u (|a|^2 + |b|^2) to first order).
    const double u = single_ ? kEps32 : kEps64;
    unit_err_ = euclidean::expansion_error(static_cast<std::ptrdiff_t>(d), 1.0, u) * 1.01 + (single_ ? 4.5 * u : 0.0);
    tile_scale_ = scale;
    const double reach = 2 * std::sqrt(sq_max_) / scale * (1 + 1e-6);
    max_ = squared ? reach * reach : reach;
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
    const double* a = X_ + static_cast<std::size_t>(i) * d_;
    const double* b = X_ + static_cast<std::size_t>(j) * d_;
    double acc[4] = {0, 0, 0, 0};
    i64 t = 0;
    for (; t + 4 <= d_; t += 4)
        for (int q = 0; q < 4; ++q) {
            const double diff = a[t + q] - b[t + q];
            acc[q] += diff * diff;
        }
    for (; t < d_; ++t) {
        const double diff = a[t] - b[t];
        acc[0] += diff * diff;
    }
    const double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    if (s < 0x1p-960 && !squared_) return scaled_distance(a, b, d_);  // squares near underflow
    return squared_ ? s : std::sqrt(s);
}

// Calls visit(task, i, c0, c1, dots) for every row i of every task's row
// block and every column block [c0, c1) at or after `first_col(lo)`, with
// dots[c - c0] the dot product of the centred rows i and c.
template <class First, class F>
void EuclideanDistances::for_tiles(int n_threads, Control& control, First&& first_col, F&& visit) const {
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
        std::vector<T> tile(static_cast<std::size_t>(kRowBlock) * kColBlock);
        const OneBlasThread one_thread(gemm_.threads);  // our threads are the parallelism
        for (i32 c0 = first_col(lo); c0 < n; c0 += kColBlock) {
            const i32 c1 = std::min(n, c0 + kColBlock);
            int m = c1 - c0, rows = hi - lo, k = static_cast<int>(d_);
            GemmFn<T> gemm;
            if constexpr (std::is_same_v<T, float>)
                gemm = gemm_.sgemm;
            else
                gemm = gemm_.dgemm;
            dot_tile(gemm, xc + static_cast<std::size_t>(lo) * d_, rows, xc + static_cast<std::size_t>(c0) * d_, m, k,
                     tile.data());
            for (i32 i = lo; i < hi; ++i) visit(task, i, c0, c1, tile.data() + static_cast<std::size_t>(i - lo) * m);
            control.check();
        }
        control.advance(static_cast<std::uint64_t>(hi - lo));
    };
    for_each_tile_task(tasks, n_threads, run, control);
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
        bound[i] = list_and_bound(h.buf, store, i, cand);
        h.buf = {};
        if (i + 1 == std::min(n_, lo + kRowBlock)) hs = {};  // the task's last row
    };
    for_tiles(n_threads, control, [](i32) { return 0; }, visit);
}

template <class T>
double EuclideanDistances::list_and_bound(std::vector<std::pair<T, std::int32_t>>& buf, i32 store, i32 i,
                                          i32* cand) const {
    const double outside = take_list(buf, store, cand + static_cast<std::size_t>(i) * store);
    if (std::isinf(outside)) return outside;
    // Every point outside the list has a tile value >= outside, hence a
    // squared distance >= outside - err; then the error of operator().
    const double err = unit_err_ * (sq_[i] + sq_max_) + 1e-30;
    const double lower2 = std::max(outside - err, 0.0) / (tile_scale_ * tile_scale_);
    const double lower = squared_ ? lower2 : std::sqrt(lower2);
    return lower * (1 - 4 * relative_error());
}

template <class T>
void EuclideanDistances::nearest_impl(const T* xc, GemmFn<T> gemm, i32 store, i32* cand, double* bound, int n_threads,
                                      Control& control) const {
    const i32 n = n_;
    constexpr i32 R = kRowBlock;
    const i32 blocks = (n + R - 1) / R;
    const i32 players = blocks + (blocks % 2);  // one idle block when odd
    const std::size_t keep = static_cast<std::size_t>(store) + 1;
    std::vector<Smallest<T>> heaps(n);
    for (auto& h : heaps) h.reset(keep, 2);
    std::vector<T> sqT(n);
    for (i32 i = 0; i < n; ++i) sqT[i] = static_cast<T>(sq_[i]);
    auto tile_of = [&](i32 a, i32 b, std::vector<T>& tile) {
        const i32 lo_a = a * R, rows_a = std::min(n, lo_a + R) - lo_a;
        const i32 lo_b = b * R, rows_b = std::min(n, lo_b + R) - lo_b;
        int m = rows_b, rows = rows_a, k = static_cast<int>(d_);
        tile.resize(static_cast<std::size_t>(rows_a) * rows_b);
        dot_tile(gemm, xc + static_cast<std::size_t>(lo_a) * d_, rows, xc + static_cast<std::size_t>(lo_b) * d_, m, k,
                 tile.data());
        return std::make_pair(rows_a, rows_b);
    };
    // One tile: rows of block a against rows of block b (a == b: within a block).
    auto work = [&](i32 a, i32 b, std::vector<T>& tile) {
        const auto [rows_a, rows_b] = tile_of(a, b, tile);
        const i32 lo_a = a * R, lo_b = b * R;
        for (i32 r = 0; r < rows_a; ++r) {
            const i32 i = lo_a + r;
            Smallest<T>& h = heaps[i];
            const T sqi = sqT[i];
            const T* row = tile.data() + static_cast<std::size_t>(r) * rows_b;
            T tau = h.tau;
            for (i32 c = 0; c < rows_b; ++c) {
                const T v = sqi + sqT[lo_b + c] - 2 * row[c];
                if (v < tau && lo_b + c != i) {
                    h.push(v, lo_b + c);
                    tau = h.tau;
                }
            }
        }
        if (a == b) return;
        for (i32 c = 0; c < rows_b; ++c) {
            const i32 j = lo_b + c;
            Smallest<T>& h = heaps[j];
            const T sqj = sqT[j];
            T tau = h.tau;
            for (i32 r = 0; r < rows_a; ++r) {
                const T v = sqT[lo_a + r] + sqj - 2 * tile[static_cast<std::size_t>(r) * rows_b + c];
                if (v < tau) {
                    h.push(v, lo_a + r);
                    tau = h.tau;
                }
            }
        }
    };
    const std::uint64_t per_round = static_cast<std::uint64_t>(n) / static_cast<std::uint64_t>(players);
    // Round 0: the diagonal tiles; then players - 1 rounds of disjoint pairs.
    for (i32 round = -1; round < players - 1; ++round) {
        const std::size_t tasks = round < 0 ? static_cast<std::size_t>(blocks) : static_cast<std::size_t>(players / 2);
        parallel_for(
            tasks, n_threads,
            [&](std::size_t t) {
                i32 a, b;
                if (round < 0) {
                    a = b = static_cast<i32>(t);
                } else {
                    // Circle method: player players-1 stays, the others rotate.
                    const i32 ti = static_cast<i32>(t);
                    auto seat = [&](i32 s) { return s == players - 1 ? s : (s + round) % (players - 1); };
                    a = seat(ti);
                    b = seat(players - 1 - ti);
                    if (a > b) std::swap(a, b);
                }
                if (b >= blocks) return;  // paired with the idle block
                thread_local std::vector<T> tile;
                {
                    const OneBlasThread one_thread(gemm_.threads);  // our threads are the parallelism
                    work(a, b, tile);
                }
                control.check();
            },
            &control);
        control.advance(per_round);
    }
    // The lists, and a lower bound on the distance to every point outside.
    const std::size_t chunks = (static_cast<std::size_t>(n) + R - 1) / R;
    parallel_for(
        chunks, n_threads,
        [&](std::size_t t) {
            const i32 lo = static_cast<i32>(t) * R, hi = std::min(n, lo + R);
            for (i32 i = lo; i < hi; ++i) {
                bound[i] = list_and_bound(heaps[i].buf, store, i, cand);
                heaps[i].buf = {};
            }
        },
        &control);
}

std::vector<double> EuclideanDistances::tile_thresholds(const double* a) const {
    std::vector<double> at(n_);
    const double widen = 1 + 8 * relative_error();
    const double unit = squared_ ? tile_scale_ * tile_scale_ : tile_scale_;
    for (i32 i = 0; i < n_; ++i) at[i] = (a[i] > 0 ? a[i] * widen : a[i]) * unit;
    return at;
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

void EuclideanDistances::pairs_below(const double* a, int n_threads, Control& control,
                                     const PairVisitor& visit_pair) const {
    const std::vector<double> at = tile_thresholds(a);
    auto visit = [&](std::size_t, i32 i, i32 c0, i32 c1, const auto* dots) {
        // Flags first, then the rare visits.
        unsigned char hit[64];
        for (i32 cb = std::max(c0, i + 1); cb < c1; cb += 64) {
            const i32 ce = std::min(c1, cb + 64);
            screen(i, cb, ce, c0, dots, at, hit);
            for (i32 c = cb; c < ce; ++c)
                if (hit[c - cb]) visit_pair(i, c);
        }
    };
    for_tiles(n_threads, control, [](i32 lo) { return lo - lo % kColBlock; }, visit);
}

void EuclideanDistances::pairs_below_rows(const double* a, const std::vector<i32>& rows, int n_threads,
                                          Control& control, const PairVisitor& visit_pair) const {
    const i32 n = n_;
    const std::vector<double> at = tile_thresholds(a);
    std::vector<char> in(n, 0);
    for (i32 i : rows) in[i] = 1;
    const auto m = static_cast<i32>(rows.size());
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
        std::vector<T> block(static_cast<std::size_t>(nr) * d_);  // the rows, contiguous
        for (int r = 0; r < nr; ++r)
            std::copy_n(xc + static_cast<std::size_t>(rows[lo + r]) * d_, d_,
                        block.data() + static_cast<std::size_t>(r) * d_);
        std::vector<T> tile(static_cast<std::size_t>(nr) * kColBlock);
        const OneBlasThread one_thread(gemm_.threads);
        for (i32 c0 = 0; c0 < n; c0 += kColBlock) {
            const i32 c1 = std::min(n, c0 + kColBlock);
            const int cols = c1 - c0;
            dot_tile(gemm, block.data(), nr, xc + static_cast<std::size_t>(c0) * d_, cols, k, tile.data());
            unsigned char hit[64];
            for (int r = 0; r < nr; ++r) {
                const i32 i = rows[lo + r];
                const T* dots = tile.data() + static_cast<std::size_t>(r) * cols;
                for (i32 cb = c0; cb < c1; cb += 64) {
                    const i32 ce = std::min(c1, cb + 64);
                    screen(i, cb, ce, c0, dots, at, hit);
                    for (i32 c = cb; c < ce; ++c)
                        if (hit[c - cb] && c != i && !(in[c] && c < i)) visit_pair(i, c);
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
    auto visit = [&](std::size_t, i32 i, i32 c0, i32 c1, const auto* dots) {
        double* row = out + static_cast<std::size_t>(i) * n;
        for (i32 c = c0; c < c1; ++c) {
            if (c == i) {
                row[c] = 0;
                continue;
            }
            const double v = sq[i] + sq[c] - 2 * static_cast<double>(dots[c - c0]);
            if (euclidean::needs_direct(v, sq[i] + sq[c], static_cast<std::ptrdiff_t>(d_), kEps64, 1e-12)) {
                row[c] = (*this)(i, c);  // cancellation could matter: from the differences
            } else {
                const double v2 = v / s2;
                row[c] = squared_ ? v2 : std::sqrt(v2);
            }
        }
    };
    for_tiles(n_threads, control, [](i32) { return 0; }, visit);
    // Exactly symmetric: the upper triangle defines each pair.
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) out[j * n + i] = out[i * n + j];
        if ((i & 255) == 255) control.check();
    }
}

}  // namespace pairmetrics::matching
