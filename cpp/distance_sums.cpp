#include "distance_sums.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "cpu_features.hpp"
#include "euclidean.hpp"
#include "parallel.hpp"

#if PAIRMETRICS_X86_SIMD
#include <immintrin.h>
#endif

namespace pairmetrics::distance_sums {

namespace {

using idx = std::ptrdiff_t;

constexpr idx kDefaultTile = 512;
constexpr idx kDefaultResampleBlock = 512;
// Fixed lanes of tiles (see Workspace): enough to keep a few threads busy to the end.
constexpr std::size_t kLanes = 16;

struct Tile {
    idx i0, ni, j0, nj;
};

// Tiles I <= J of the upper triangle, row block by row block.
std::vector<Tile> upper_tiles(idx n, idx size) {
    std::vector<Tile> out;
    for (idx i0 = 0; i0 < n; i0 += size)
        for (idx j0 = i0; j0 < n; j0 += size) out.push_back({i0, std::min(size, n - i0), j0, std::min(size, n - j0)});
    return out;
}

// A lane's buffers and partial sums. Lane L takes tiles L, L + lanes, ...
// in order, and the lanes' sums are added in lane order: the result does
// not depend on the threads (their number or their timing).
struct Workspace {
    std::vector<double> values, rows_of_first, rows_of_second, quadratic;
    std::vector<double> indicator_rows, indicator_cols, product;
    std::vector<double> row_first, row_second;  // the current tile's row sums
    Workspace(idx n, idx tile, std::size_t n_vectors, idx block)
        : values(static_cast<std::size_t>(tile * tile)),
          rows_of_first(static_cast<std::size_t>(n), 0.0),
          rows_of_second(static_cast<std::size_t>(n), 0.0),
          quadratic(n_vectors, 0.0),
          row_first(static_cast<std::size_t>(tile)),
          row_second(static_cast<std::size_t>(tile)) {
        if (n_vectors > 0) {
            const auto cells = static_cast<std::size_t>(tile * block);
            indicator_rows.resize(cells);
            indicator_cols.resize(cells);
            product.resize(cells);
        }
    }
    // Keeps the sums, frees the tile buffers.
    void release_buffers() {
        for (std::vector<double>* buffer : {&values, &indicator_rows, &indicator_cols, &product})
            std::vector<double>().swap(*buffer);
    }
};

// The recompute rule of euclidean.hpp as one comparison: sq is kept when
// sq >= factor * (|z_i|^2 + |z_j|^2).
double keep_factor(idx d) {
    return euclidean::expansion_error<double>(d, 1.0) / kRelativeError;
}

double exact_squared(const double* z, idx d, idx i, idx j) {
    return i == j ? 0.0 : euclidean::direct_squared_distance(z + i * d, z + j * d, d);
}

// Sum of row[lo, hi), four partial sums (independent adds).
double row_sum(const double* row, idx lo, idx hi) {
    double p[4] = {0.0, 0.0, 0.0, 0.0};
    idx b = lo;
    for (; b + 4 <= hi; b += 4)
        for (int l = 0; l < 4; ++l) p[l] += row[b + l];
    for (; b < hi; ++b) p[0] += row[b];
    return (p[0] + p[1]) + (p[2] + p[3]);
}

// Tile of inner products (row-major ni x nj) -> tile of pair values, in
// place, and each row's sums over columns [0, cut) and [cut, nj).
template <bool Root, Kernel K>
void to_values(const double* z, idx d, const std::vector<double>& sq_norm, const Tile& t, idx cut,
               const PairFunction& f, double* tile, double* row_first, double* row_second) {
    const double factor = keep_factor(d);
    for (idx a = 0; a < t.ni; ++a) {
        const idx i = t.i0 + a;
        double* row = tile + a * t.nj;
        const double ni = sq_norm[static_cast<std::size_t>(i)];
        for (idx b = 0; b < t.nj; ++b) {
            const idx j = t.j0 + b;
            const double sum = ni + sq_norm[static_cast<std::size_t>(j)];
            double sq = sum - 2.0 * row[b];
            if (i == j || !(sq >= factor * sum)) sq = exact_squared(z, d, i, j);
            double value = f.scale * (Root ? std::sqrt(sq) : sq);
            if constexpr (K == Kernel::rbf) value = std::exp(-f.gamma * value * value);
            if constexpr (K == Kernel::laplacian) value = std::exp(-f.gamma * value);
            row[b] = value;
        }
        row_first[a] = row_sum(row, 0, cut);
        row_second[a] = row_sum(row, cut, t.nj);
    }
}

#if PAIRMETRICS_X86_SIMD
// The identity kernel four pairs at a time (most of the energy statistics' time).
template <bool Root>
PAIRMETRICS_TARGET("avx2,fma")
double values_avx2(const double* z, idx d, const double* sq_norm, idx i, idx j0, idx lo, idx hi, double scale,
                   double* row) {
    const double keep = keep_factor(d);
    const __m256d factor = _mm256_set1_pd(keep), scales = _mm256_set1_pd(scale), two = _mm256_set1_pd(2.0);
    const __m256d ni = _mm256_set1_pd(sq_norm[i]);
    const double* nc = sq_norm + j0;
    __m256d acc = _mm256_setzero_pd();
    idx b = lo;
    for (; b + 4 <= hi; b += 4) {
        const __m256d sum = _mm256_add_pd(ni, _mm256_loadu_pd(nc + b));
        __m256d sq = _mm256_fnmadd_pd(two, _mm256_loadu_pd(row + b), sum);
        const int redo = _mm256_movemask_pd(_mm256_cmp_pd(sq, _mm256_mul_pd(factor, sum), _CMP_NGE_UQ));
        if (redo != 0) {
            alignas(32) double lanes[4];
            _mm256_store_pd(lanes, sq);
            for (int l = 0; l < 4; ++l)
                if (redo >> l & 1) lanes[l] = exact_squared(z, d, i, j0 + b + l);
            sq = _mm256_load_pd(lanes);
        }
        const __m256d value = _mm256_mul_pd(scales, Root ? _mm256_sqrt_pd(sq) : sq);
        _mm256_storeu_pd(row + b, value);
        acc = _mm256_add_pd(acc, value);
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, acc);
    double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; b < hi; ++b) {
        const double sum = sq_norm[i] + nc[b];
        double sq = sum - 2.0 * row[b];
        if (!(sq >= keep * sum)) sq = exact_squared(z, d, i, j0 + b);
        row[b] = scale * (Root ? std::sqrt(sq) : sq);
        total += row[b];
    }
    return total;
}

// The diagonal needs no special case: the rule always sends i == j back
// (the computed sq is within the expansion's error bound of 0).
template <bool Root>
PAIRMETRICS_TARGET("avx2,fma")
void to_values_avx2(const double* z, idx d, const std::vector<double>& sq_norm, const Tile& t, idx cut,
                    const PairFunction& f, double* tile, double* row_first, double* row_second) {
    for (idx a = 0; a < t.ni; ++a) {
        double* row = tile + a * t.nj;
        row_first[a] = values_avx2<Root>(z, d, sq_norm.data(), t.i0 + a, t.j0, 0, cut, f.scale, row);
        row_second[a] = values_avx2<Root>(z, d, sq_norm.data(), t.i0 + a, t.j0, cut, t.nj, f.scale, row);
    }
}
#endif

using ToValuesFn = void (*)(const double*, idx, const std::vector<double>&, const Tile&, idx, const PairFunction&,
                            double*, double*, double*);

ToValuesFn to_values_for(const PairFunction& f) {
    switch (f.kernel) {
        case Kernel::rbf:
            return f.root ? to_values<true, Kernel::rbf> : to_values<false, Kernel::rbf>;
        case Kernel::laplacian:
            return f.root ? to_values<true, Kernel::laplacian> : to_values<false, Kernel::laplacian>;
        default:
            break;
    }
#if PAIRMETRICS_X86_SIMD
    if (simd_resolve(SimdLevel::automatic) != SimdLevel::scalar)
        return f.root ? to_values_avx2<true> : to_values_avx2<false>;
#endif
    return f.root ? to_values<true, Kernel::identity> : to_values<false, Kernel::identity>;
}

// Adds the tile's row sums to its rows and, off the diagonal, its column
// sums to its columns (V is symmetric), split by the other point's sample.
void add_sums(const double* tile, const Tile& t, idx split, Workspace& w) {
    for (idx a = 0; a < t.ni; ++a) {
        w.rows_of_first[static_cast<std::size_t>(t.i0 + a)] += w.row_first[static_cast<std::size_t>(a)];
        w.rows_of_second[static_cast<std::size_t>(t.i0 + a)] += w.row_second[static_cast<std::size_t>(a)];
    }
    if (t.i0 == t.j0) return;
    const idx row_cut = std::clamp(split - t.i0, idx{0}, t.ni);  // rows [0, row_cut) are in the first sample
    for (idx a = 0; a < t.ni; ++a) {
        double* to = (a < row_cut ? w.rows_of_first : w.rows_of_second).data() + t.j0;
        const double* row = tile + a * t.nj;
        for (idx b = 0; b < t.nj; ++b) to[b] += row[b];
    }
}

// Rows [first, first + count) of indicator vectors [p0, p0 + width) as a
// row-major width x count matrix of 0.0 / 1.0.
void unpack(const Indicators& ind, std::size_t p0, idx width, idx first, idx count, double* out) {
    for (idx p = 0; p < width; ++p) {
        const std::uint8_t* bits = ind.bits + (p0 + static_cast<std::size_t>(p)) * ind.row_bytes;
        double* row = out + p * count;
        for (idx c = 0; c < count; ++c) {
            const idx j = first + c;
            row[c] = static_cast<double>((bits[j >> 3] >> (j & 7)) & 1);
        }
    }
}

// q_p += weight * s_I^T V_IJ s_J for every indicator vector, block by block.
void add_quadratic(const Blas& blas, const double* tile, const Tile& t, const Indicators& ind, idx block,
                   Workspace& w) {
    const double weight = t.i0 == t.j0 ? 1.0 : 2.0;  // tile J, I is the transpose of I, J
    for (std::size_t p0 = 0; p0 < ind.count; p0 += static_cast<std::size_t>(block)) {
        const idx width = std::min<idx>(block, static_cast<idx>(ind.count - p0));
        unpack(ind, p0, width, t.j0, t.nj, w.indicator_cols.data());
        unpack(ind, p0, width, t.i0, t.ni, w.indicator_rows.data());
        // Column-major ni x width product: V_IJ (row-major, so transposed) times S_J.
        product_abt(blas, width, t.ni, t.nj, w.indicator_cols.data(), t.nj, tile, t.nj, w.product.data(), t.ni);
        for (idx p = 0; p < width; ++p) {
            const double* s = w.indicator_rows.data() + p * t.ni;
            const double* m = w.product.data() + p * t.ni;
            double q = 0.0;
            for (idx a = 0; a < t.ni; ++a) q += s[a] * m[a];
            w.quadratic[p0 + static_cast<std::size_t>(p)] += weight * q;
        }
    }
}

}  // namespace

double pair_value(const PairFunction& f, double squared) {
    double t = f.scale * (f.root ? std::sqrt(squared) : squared);
    if (f.kernel == Kernel::rbf) t = std::exp(-f.gamma * t * t);
    if (f.kernel == Kernel::laplacian) t = std::exp(-f.gamma * t);
    return t;
}

Sums distance_sums(const double* z, idx n, idx d, idx split, const PairFunction& f, const Indicators& indicators,
                   const Options& options, const Blas& blas, Control& control) {
    if (n < 1 || d < 1 || split < 0 || split > n) throw std::invalid_argument("need n >= 1, d >= 1, 0 <= split <= n");
    if (indicators.count > 0 && (indicators.bits == nullptr || indicators.row_bytes * 8 < static_cast<std::size_t>(n)))
        throw std::invalid_argument("indicator rows must hold n bits");
    const idx tile = options.tile > 0 ? options.tile : kDefaultTile;
    const idx block = options.resample_block > 0 ? options.resample_block : kDefaultResampleBlock;
    std::vector<double> sq_norm(static_cast<std::size_t>(n));
    for (idx i = 0; i < n; ++i) {
        double s = 0.0;
        for (idx k = 0; k < d; ++k) s += z[i * d + k] * z[i * d + k];
        sq_norm[static_cast<std::size_t>(i)] = s;
    }
    const std::vector<Tile> tiles = upper_tiles(n, tile);
    const ToValuesFn values_of = to_values_for(f);
    const std::size_t lanes = std::min(kLanes, tiles.size());
    std::vector<std::unique_ptr<Workspace>> lane(lanes);
    control.set_total(tiles.size());
    const OneBlasThread one_thread(blas.threads);  // holds a process-wide count at 1 for the whole call
    parallel_for(
        lanes, options.n_threads,
        [&](std::size_t l) {
            lane[l] = std::make_unique<Workspace>(n, std::min(tile, n), indicators.count, block);
            Workspace& w = *lane[l];
            for (std::size_t task = l; task < tiles.size(); task += lanes) {
                const Tile& t = tiles[task];
                double* v = w.values.data();
                // Row-major ni x nj inner products = column-major Z_J Z_I^T.
                product_abt(blas, t.ni, t.nj, d, z + t.i0 * d, d, z + t.j0 * d, d, v, t.nj);
                const idx cut = std::clamp(split - t.j0, idx{0}, t.nj);  // columns [0, cut): first sample
                values_of(z, d, sq_norm, t, cut, f, v, w.row_first.data(), w.row_second.data());
                add_sums(v, t, split, w);
                if (indicators.count > 0) add_quadratic(blas, v, t, indicators, block, w);
                control.advance(1);
            }
            w.release_buffers();
        },
        control);
    Sums out;
    out.to_first.assign(static_cast<std::size_t>(n), 0.0);
    out.to_second.assign(static_cast<std::size_t>(n), 0.0);
    out.quadratic.assign(indicators.count, 0.0);
    for (const auto& w : lane) {
        for (std::size_t i = 0; i < out.to_first.size(); ++i) {
            out.to_first[i] += w->rows_of_first[i];
            out.to_second[i] += w->rows_of_second[i];
        }
        for (std::size_t p = 0; p < out.quadratic.size(); ++p) out.quadratic[p] += w->quadratic[p];
    }
    return out;
}

}  // namespace pairmetrics::distance_sums
