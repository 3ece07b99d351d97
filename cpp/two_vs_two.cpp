#include "two_vs_two.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "cpu_features.hpp"
#include "euclidean.hpp"
#include "parallel.hpp"

namespace pairmetrics::two_vs_two {

namespace {

// Default tiles: row blocks against column panels twice as wide. gemm packs
// both operands on every call ((rows + cols) d work for rows cols d flops), so
// tiles must be large; the tile buffer should stay within a few MB of cache.
// Small n gets smaller tiles so that threads have enough tiles to share. The
// tiling depends on n and the dtype only, never on the thread count.
constexpr std::ptrdiff_t kMaxRows32 = 768, kMaxRows64 = 512, kMinRows = 256;

// A Euclidean cross distance is recomputed from the rows where cancellation
// may have amplified the error bound of the expansion |y|^2 + |p|^2 - 2 <y, p>
// more than this many times (the shared rule of euclidean.hpp, with the
// relative accuracy kAmplification * expansion_error(d, 1)): below about
// 1/16 of |y|^2 + |p|^2.
constexpr double kAmplification = 16.0;

// ---------------------------------------------------------------- rows

// |x| without overflow or underflow for any finite input.
template <class Get>
double stable_norm(std::ptrdiff_t d, Get get) {
    double big = 0.0;
    for (std::ptrdiff_t k = 0; k < d; ++k) big = std::max(big, std::abs(get(k)));
    if (big == 0.0) return 0.0;
    double s = 0.0;
    for (std::ptrdiff_t k = 0; k < d; ++k) {
        const double v = get(k) / big;
        s += v * v;
    }
    return big * std::sqrt(s);
}

template <class T>
double dot_rows(const T* a, const T* b, std::ptrdiff_t d) {
    double s = 0.0;
    for (std::ptrdiff_t k = 0; k < d; ++k) s += static_cast<double>(a[k]) * static_cast<double>(b[k]);
    return s;
}

template <class T>
double distance_rows(const T* a, const T* b, std::ptrdiff_t d) {
    return std::sqrt(euclidean::direct_squared_distance(a, b, d));
}

// Writes row i of `in` (after centring when asked) scaled to unit length.
template <class T>
void unit_row(const MatrixView<T>& in, std::ptrdiff_t i, bool centre, T* out) {
    const std::ptrdiff_t d = in.cols;
    double mean = 0.0;
    if (centre) {
        for (std::ptrdiff_t k = 0; k < d; ++k) mean += static_cast<double>(in(i, k));
        mean /= static_cast<double>(d);
    }
    const double norm = stable_norm(d, [&](std::ptrdiff_t k) { return static_cast<double>(in(i, k)) - mean; });
    // Zero and constant rows are rejected before the kernel runs.
    for (std::ptrdiff_t k = 0; k < d; ++k) out[k] = static_cast<T>((static_cast<double>(in(i, k)) - mean) / norm);
}

// ---------------------------------------------------------------- products

// Turns a tile of inner products <y_i, p_j> into -d(y_i, p_j) (Euclidean).
template <class T>
void inner_to_neg_distance(const Prepared<T>& prep, std::ptrdiff_t i0, std::ptrdiff_t ni, std::ptrdiff_t j0,
                           std::ptrdiff_t nj, bool y_rows_first, T* x, std::ptrdiff_t ld) {
    // y_rows_first: x[a, b] = <y_{i0+a}, p_{j0+b}>; otherwise <p_{i0+a}, y_{j0+b}>.
    const double* nr = y_rows_first ? prep.ny.data() : prep.np.data();
    const double* nc = y_rows_first ? prep.np.data() : prep.ny.data();
    const std::ptrdiff_t d = prep.d;
    const double rel = kAmplification * euclidean::expansion_error<T>(d, 1.0);
    for (std::ptrdiff_t a = 0; a < ni; ++a) {
        T* row = x + a * ld;
        const double na = nr[i0 + a];
        for (std::ptrdiff_t b = 0; b < nj; ++b) {
            const double sum = na + nc[j0 + b];
            double sq = sum - 2.0 * static_cast<double>(row[b]);
            if (euclidean::needs_direct<T>(sq, sum, d, rel)) {
                const T* yr = y_rows_first ? &prep.y[(i0 + a) * d] : &prep.y[(j0 + b) * d];
                const T* pr = y_rows_first ? &prep.p[(j0 + b) * d] : &prep.p[(i0 + a) * d];
                row[b] = static_cast<T>(-distance_rows(yr, pr, d));
            } else {
                row[b] = static_cast<T>(-std::sqrt(sq));
            }
        }
    }
}

// ---------------------------------------------------------------- comparison

// Per-sample terms of the comparison: lhs - rhs = x_ij + x_ji - own_i - own_j,
// tolerance = factor * (weight_i + weight_j).
template <class T>
struct Terms {
    std::vector<T> own, weight;
    T factor = 0;
    std::vector<std::int32_t> gy, gp;
    std::vector<unsigned char> has_twin;  // some other row shares y_i or p_i
    bool skip_same_target = false;
};

template <class T>
T weight_of(Metric metric, double ny, double np) {
    return static_cast<T>(metric == Metric::euclidean ? std::sqrt(ny + np) : ny + np);
}

template <class T>
T factor_of(Metric metric, double rtol) {
    // sqeuclidean: lhs - rhs is twice the difference of inner products.
    return static_cast<T>(metric == Metric::sqeuclidean ? rtol / 2 : rtol);
}

std::vector<unsigned char> twins(const std::int32_t* gy, const std::int32_t* gp, std::ptrdiff_t n) {
    std::vector<std::int32_t> cy(static_cast<std::size_t>(n), 0), cp(static_cast<std::size_t>(n), 0);
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        ++cy[static_cast<std::size_t>(gy[i])];
        ++cp[static_cast<std::size_t>(gp[i])];
    }
    std::vector<unsigned char> out(static_cast<std::size_t>(n));
    for (std::ptrdiff_t i = 0; i < n; ++i)
        out[static_cast<std::size_t>(i)] =
            cy[static_cast<std::size_t>(gy[i])] > 1 || cp[static_cast<std::size_t>(gp[i])] > 1;
    return out;
}

void check_groups(const Groups& groups, std::ptrdiff_t n) {
    for (std::ptrdiff_t i = 0; i < n; ++i)
        if (groups.y[i] < 0 || groups.y[i] >= n || groups.p[i] < 0 || groups.p[i] >= n)
            throw std::invalid_argument("group ids must lie in [0, n)");
}

template <class T>
Terms<T> make_terms(const Prepared<T>& prep, const Groups& groups, const Options& options) {
    const std::ptrdiff_t n = prep.n;
    check_groups(groups, n);
    Terms<T> t;
    t.own = prep.own;
    t.weight.resize(static_cast<std::size_t>(n));
    for (std::ptrdiff_t i = 0; i < n; ++i)
        t.weight[static_cast<std::size_t>(i)] = weight_of<T>(prep.metric, prep.ny[i], prep.np[i]);
    t.factor = factor_of<T>(prep.metric, options.rtol);
    t.gy.assign(groups.y, groups.y + n);
    t.gp.assign(groups.p, groups.p + n);
    t.has_twin = twins(groups.y, groups.p, n);
    t.skip_same_target = options.skip_same_target;
    return t;
}

// Counts of one tile: totals plus per-row and per-column counts.
struct TileSums {
    std::uint64_t passed = 0, tied = 0, skipped = 0;
    std::vector<std::int32_t> row_passed, row_tied, col_passed, col_tied;
    void reset(std::ptrdiff_t ni, std::ptrdiff_t nj) {
        passed = tied = skipped = 0;
        row_passed.assign(static_cast<std::size_t>(ni), 0);
        row_tied.assign(static_cast<std::size_t>(ni), 0);
        col_passed.assign(static_cast<std::size_t>(nj), 0);
        col_tied.assign(static_cast<std::size_t>(nj), 0);
    }
};

// The hot loop over one row of a tile (no row in it shares y or p with row i),
// compiled for each level of cpu_features.hpp; the best the CPU supports is
// picked once.
template <class T>
PAIRMETRICS_FORCE_INLINE void plain_row_body(const T* cross, const T* own, const T* weight, T own_i, T weight_i,
                                             T factor, std::ptrdiff_t len, std::int32_t* col_passed,
                                             std::int32_t* col_tied, std::int32_t* passed, std::int32_t* tied) {
    std::int32_t rp = 0, rt = 0;
    for (std::ptrdiff_t b = 0; b < len; ++b) {
        const T v = cross[b] - (own_i + own[b]);
        const T tol = factor * (weight_i + weight[b]);
        const std::int32_t pass = v < -tol;
        const std::int32_t tie = (v <= tol) & (v >= -tol);
        rp += pass;
        rt += tie;
        col_passed[b] += pass;
        col_tied[b] += tie;
    }
    *passed = rp;
    *tied = rt;
}

template <class T>
using PlainRowFn = void (*)(const T*, const T*, const T*, T, T, T, std::ptrdiff_t, std::int32_t*, std::int32_t*,
                            std::int32_t*, std::int32_t*);

#define PAIRMETRICS_PLAIN_ROW(name, attributes)                                                                      \
    template <class T>                                                                                               \
    attributes void name(const T* cross, const T* own, const T* weight, T own_i, T weight_i, T factor,               \
                         std::ptrdiff_t len, std::int32_t* col_passed, std::int32_t* col_tied, std::int32_t* passed, \
                         std::int32_t* tied) {                                                                       \
        plain_row_body(cross, own, weight, own_i, weight_i, factor, len, col_passed, col_tied, passed, tied);        \
    }
PAIRMETRICS_PLAIN_ROW(plain_row_scalar, )
#if PAIRMETRICS_X86_SIMD
PAIRMETRICS_PLAIN_ROW(plain_row_avx2, PAIRMETRICS_TARGET("avx2"))
PAIRMETRICS_PLAIN_ROW(plain_row_avx512, PAIRMETRICS_TARGET("avx512f"))
#endif
#undef PAIRMETRICS_PLAIN_ROW

template <class T>
PlainRowFn<T> plain_row_for(SimdLevel level) {
#if PAIRMETRICS_X86_SIMD
    switch (simd_resolve(level)) {
        case SimdLevel::avx512:
            return plain_row_avx512<T>;
        case SimdLevel::avx2:
            return plain_row_avx2<T>;
        default:
            break;
    }
#else
    (void)level;
#endif
    return plain_row_scalar<T>;
}

// Classifies one pair from cross = x(i, j) + x(j, i): 0 failed, 1 passed,
// 2 tied, 3 skipped.
template <class T>
int classify(const Terms<T>& t, std::ptrdiff_t i, std::ptrdiff_t j, T cross) {
    const bool same_y = t.gy[static_cast<std::size_t>(i)] == t.gy[static_cast<std::size_t>(j)];
    if (same_y && t.skip_same_target) return 3;
    if (same_y || t.gp[static_cast<std::size_t>(i)] == t.gp[static_cast<std::size_t>(j)]) return 2;
    const T v = cross - (t.own[static_cast<std::size_t>(i)] + t.own[static_cast<std::size_t>(j)]);
    const T tol = t.factor * (t.weight[static_cast<std::size_t>(i)] + t.weight[static_cast<std::size_t>(j)]);
    if (v < -tol) return 1;
    return (v <= tol && v >= -tol) ? 2 : 0;
}

// cross[a, b] = x(i, j) + x(j, i) for i = i0 + a, j = j0 + b (ni x nj, leading
// dimension nj). Only pairs i < j are counted.
template <class T>
void compare_tile(const Terms<T>& t, std::ptrdiff_t i0, std::ptrdiff_t ni, std::ptrdiff_t j0, std::ptrdiff_t nj,
                  const T* cross, TileSums& sums) {
    sums.reset(ni, nj);
    for (std::ptrdiff_t a = 0; a < ni; ++a) {
        const std::ptrdiff_t i = i0 + a;
        const std::ptrdiff_t b0 = std::max<std::ptrdiff_t>(0, i - j0 + 1);
        if (b0 >= nj) continue;
        const T* row = cross + a * nj;
        if (!t.has_twin[static_cast<std::size_t>(i)]) {
            std::int32_t rp = 0, rt = 0;
            static const PlainRowFn<T> plain_row = plain_row_for<T>(SimdLevel::automatic);
            plain_row(row + b0, t.own.data() + j0 + b0, t.weight.data() + j0 + b0, t.own[static_cast<std::size_t>(i)],
                      t.weight[static_cast<std::size_t>(i)], t.factor, nj - b0, sums.col_passed.data() + b0,
                      sums.col_tied.data() + b0, &rp, &rt);
            sums.row_passed[static_cast<std::size_t>(a)] += rp;
            sums.row_tied[static_cast<std::size_t>(a)] += rt;
            sums.passed += static_cast<std::uint64_t>(rp);
            sums.tied += static_cast<std::uint64_t>(rt);
            continue;
        }
        for (std::ptrdiff_t b = b0; b < nj; ++b) {
            switch (classify(t, i, j0 + b, row[b])) {
                case 1:
                    ++sums.row_passed[static_cast<std::size_t>(a)];
                    ++sums.col_passed[static_cast<std::size_t>(b)];
                    ++sums.passed;
                    break;
                case 2:
                    ++sums.row_tied[static_cast<std::size_t>(a)];
                    ++sums.col_tied[static_cast<std::size_t>(b)];
                    ++sums.tied;
                    break;
                case 3:
                    ++sums.skipped;
                    break;
                default:
                    break;
            }
        }
    }
}

// ---------------------------------------------------------------- driving

struct TilePair {
    std::ptrdiff_t i0, ni, j0, nj;
};

// Row blocks of `rows` rows against column panels of `cols` columns, covering
// every pair i < j once (the panel starting at i0 holds the diagonal block).
std::vector<TilePair> upper_tiles(std::ptrdiff_t n, std::ptrdiff_t rows, std::ptrdiff_t cols) {
    std::vector<TilePair> out;
    for (std::ptrdiff_t i0 = 0; i0 < n; i0 += rows)
        for (std::ptrdiff_t j0 = i0; j0 < n; j0 += cols)
            out.push_back({i0, std::min(rows, n - i0), j0, std::min(cols, n - j0)});
    return out;
}

// Tiles covering the pairs i < split <= j only.
std::vector<TilePair> block_tiles(std::ptrdiff_t split, std::ptrdiff_t n, std::ptrdiff_t rows, std::ptrdiff_t cols) {
    std::vector<TilePair> out;
    for (std::ptrdiff_t i0 = 0; i0 < split; i0 += rows)
        for (std::ptrdiff_t j0 = split; j0 < n; j0 += cols)
            out.push_back({i0, std::min(rows, split - i0), j0, std::min(cols, n - j0)});
    return out;
}

template <class T>
std::ptrdiff_t rows_of(const Options& options, std::ptrdiff_t n) {
    if (options.tile_rows > 0) return options.tile_rows;
    const std::ptrdiff_t most = sizeof(T) == 4 ? kMaxRows32 : kMaxRows64;
    const std::ptrdiff_t rows = (n / 8 + 31) / 32 * 32;
    return std::clamp(rows, kMinRows, most);
}
template <class T>
std::ptrdiff_t cols_of(const Options& options, std::ptrdiff_t n) {
    return options.tile_cols > 0 ? options.tile_cols : 2 * rows_of<T>(options, n);
}

// Tile buffers reused across tasks: a fresh multi-MB allocation per tile would
// cost page faults every time.
template <class T>
class BufferPool {
  public:
    explicit BufferPool(std::ptrdiff_t size) : size_(static_cast<std::size_t>(size)) {}

    class Lease {
      public:
        Lease(BufferPool& pool, std::unique_ptr<T[]> data) : pool_(pool), data_(std::move(data)) {}
        ~Lease() { pool_.put(std::move(data_)); }
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        T* get() const { return data_.get(); }
        T& operator[](std::size_t i) const { return data_[i]; }

      private:
        BufferPool& pool_;
        std::unique_ptr<T[]> data_;
    };

    Lease take() {
        std::unique_ptr<T[]> data;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!free_.empty()) {
                data = std::move(free_.back());
                free_.pop_back();
            }
        }
        if (!data) data.reset(new T[size_]);
        return Lease(*this, std::move(data));
    }

  private:
    void put(std::unique_ptr<T[]> data) {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(std::move(data));
    }

    std::size_t size_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<T[]>> free_;
};

// Adds tile sums into the result (integer sums: any order gives the same total).
class Accumulator {
  public:
    explicit Accumulator(std::ptrdiff_t n) {
        counts_.sample_passed.assign(static_cast<std::size_t>(n), 0);
        counts_.sample_tied.assign(static_cast<std::size_t>(n), 0);
    }
    void add(const TileSums& s, std::ptrdiff_t i0, std::ptrdiff_t j0) {
        std::lock_guard<std::mutex> lock(mutex_);
        counts_.passed += s.passed;
        counts_.tied += s.tied;
        counts_.skipped += s.skipped;
        for (std::size_t a = 0; a < s.row_passed.size(); ++a) {
            counts_.sample_passed[static_cast<std::size_t>(i0) + a] += s.row_passed[a];
            counts_.sample_tied[static_cast<std::size_t>(i0) + a] += s.row_tied[a];
        }
        for (std::size_t b = 0; b < s.col_passed.size(); ++b) {
            counts_.sample_passed[static_cast<std::size_t>(j0) + b] += s.col_passed[b];
            counts_.sample_tied[static_cast<std::size_t>(j0) + b] += s.col_tied[b];
        }
    }
    Counts take() { return std::move(counts_); }

  private:
    std::mutex mutex_;
    Counts counts_;
};

// Runs body(i) for rows i in [0, n), in chunks spread over threads. Rows are
// independent, so the result does not depend on the thread count.
template <class Body>
void for_rows(std::ptrdiff_t n, int n_threads, Control& control, Body&& body) {
    constexpr std::ptrdiff_t kChunk = 256;
    const std::size_t chunks = static_cast<std::size_t>((n + kChunk - 1) / kChunk);
    parallel_for(
        chunks, n_threads,
        [&](std::size_t c) {
            const std::ptrdiff_t lo = static_cast<std::ptrdiff_t>(c) * kChunk, hi = std::min(n, lo + kChunk);
            for (std::ptrdiff_t i = lo; i < hi; ++i) body(i);
            control.check();
        },
        control);
}

}  // namespace

// ---------------------------------------------------------------- public

template <class T>
std::vector<std::int32_t> group_rows(const MatrixView<T>& x, int n_threads, Control& control) {
    const std::ptrdiff_t n = x.rows, d = x.cols;
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    std::vector<std::uint64_t> hash(static_cast<std::size_t>(n));
    for_rows(n, n_threads, control, [&](std::ptrdiff_t i) {
        std::uint64_t h = 0x9e3779b97f4a7c15ull;
        for (std::ptrdiff_t k = 0; k < d; ++k) {
            const T v = x(i, k) + T(0);  // -0.0 + 0.0 is +0.0
            Bits bits;
            std::memcpy(&bits, &v, sizeof bits);
            h = (h ^ static_cast<std::uint64_t>(bits)) * 0x100000001b3ull;
            h ^= h >> 29;
        }
        hash[static_cast<std::size_t>(i)] = h;
    });
    std::vector<std::int32_t> order(static_cast<std::size_t>(n));
    for (std::ptrdiff_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        return hash[static_cast<std::size_t>(a)] != hash[static_cast<std::size_t>(b)]
                   ? hash[static_cast<std::size_t>(a)] < hash[static_cast<std::size_t>(b)]
                   : a < b;
    });
    auto equal = [&](std::ptrdiff_t a, std::ptrdiff_t b) {
        for (std::ptrdiff_t k = 0; k < d; ++k)
            if (!(x(a, k) == x(b, k))) return false;
        return true;
    };
    std::vector<std::int32_t> out(static_cast<std::size_t>(n));
    std::vector<std::int32_t> leaders;  // first rows of the groups within one hash run
    for (std::size_t lo = 0; lo < order.size();) {
        std::size_t hi = lo + 1;
        while (hi < order.size() &&
               hash[static_cast<std::size_t>(order[hi])] == hash[static_cast<std::size_t>(order[lo])])
            ++hi;
        leaders.clear();
        for (std::size_t q = lo; q < hi; ++q) {  // in increasing row order
            const std::int32_t i = order[q];
            std::int32_t id = i;
            for (std::int32_t l : leaders)
                if (equal(l, i)) {
                    id = l;
                    break;
                }
            if (id == i) leaders.push_back(i);
            out[static_cast<std::size_t>(i)] = id;
        }
        lo = hi;
    }
    return out;
}

template <class T>
Prepared<T> prepare(const MatrixView<T>& y, const MatrixView<T>& p, Metric metric, const std::int64_t* perm,
                    int n_threads, Control& control, const Reference& reference) {
    if (y.rows != p.rows || y.cols != p.cols) throw std::invalid_argument("y and p must have the same shape");
    const std::ptrdiff_t n = y.rows, d = y.cols;
    auto p_row = [&](std::ptrdiff_t i) { return perm ? static_cast<std::ptrdiff_t>(perm[i]) : i; };
    Prepared<T> out;
    out.metric = metric;
    out.n = n;
    out.d = d;
    out.y.resize(static_cast<std::size_t>(n * d));
    out.p.resize(static_cast<std::size_t>(n * d));
    out.ny.resize(static_cast<std::size_t>(n));
    out.np.resize(static_cast<std::size_t>(n));
    out.own.resize(static_cast<std::size_t>(n));
    // Distances do not change under a common shift; shifting by the mean
    // target keeps the norms (and so the rounding of the expansion) small.
    // Both sets are first scaled by one power of two (exact; comparisons of
    // distances do not change) so that squares and products of tiny or huge
    // coordinates neither underflow nor overflow.
    std::vector<double> centre;
    int shift = 0;
    if (metric == Metric::euclidean || metric == Metric::sqeuclidean) {
        double big = reference.max_abs;
        if (big < 0.0) {
            big = 0.0;
            for (std::ptrdiff_t i = 0; i < n; ++i)
                for (std::ptrdiff_t k = 0; k < d; ++k)
                    big =
                        std::max({big, std::abs(static_cast<double>(y(i, k))), std::abs(static_cast<double>(p(i, k)))});
        }
        shift = euclidean::power_of_two_shift(big);
        if (reference.centre != nullptr) {
            centre.assign(reference.centre, reference.centre + d);
        } else {
            centre.assign(static_cast<std::size_t>(d), 0.0);
            for (std::ptrdiff_t i = 0; i < n; ++i)
                for (std::ptrdiff_t k = 0; k < d; ++k)
                    centre[static_cast<std::size_t>(k)] += std::ldexp(static_cast<double>(y(i, k)), shift);
            for (double& c : centre) c /= static_cast<double>(n);
        }
    }
    // One factor when it is a normal double, ldexp otherwise (both exact).
    const bool one_factor = shift > -1000 && shift < 1000;
    const double factor = std::ldexp(1.0, one_factor ? shift : 0);
    auto scaled = [&](double v) { return one_factor ? v * factor : std::ldexp(v, shift); };
    for_rows(n, n_threads, control, [&](std::ptrdiff_t i) {
        T* yr = &out.y[static_cast<std::size_t>(i * d)];
        T* pr = &out.p[static_cast<std::size_t>(i * d)];
        const std::ptrdiff_t q = p_row(i);
        if (centre.empty()) {
            const bool centre_rows = metric == Metric::correlation;
            unit_row(y, i, centre_rows, yr);
            unit_row(p, q, centre_rows, pr);
        } else {
            for (std::ptrdiff_t k = 0; k < d; ++k) {
                yr[k] = static_cast<T>(scaled(static_cast<double>(y(i, k))) - centre[static_cast<std::size_t>(k)]);
                pr[k] = static_cast<T>(scaled(static_cast<double>(p(q, k))) - centre[static_cast<std::size_t>(k)]);
            }
        }
        out.ny[static_cast<std::size_t>(i)] = dot_rows(yr, yr, d);
        out.np[static_cast<std::size_t>(i)] = dot_rows(pr, pr, d);
        if (metric == Metric::euclidean) {
            double s = 0.0;
            for (std::ptrdiff_t k = 0; k < d; ++k) {
                const double v = scaled(static_cast<double>(y(i, k)) - static_cast<double>(p(q, k)));
                s += v * v;
            }
            out.own[static_cast<std::size_t>(i)] = static_cast<T>(-std::sqrt(s));
        } else {
            out.own[static_cast<std::size_t>(i)] = static_cast<T>(dot_rows(yr, pr, d));
        }
    });
    return out;
}

template <class T>
Counts count_all_pairs(const Prepared<T>& prep, const Groups& groups, const Options& options, const Blas& blas,
                       Control& control) {
    const Terms<T> terms = make_terms(prep, groups, options);
    const std::ptrdiff_t n = prep.n, d = prep.d;
    const std::vector<TilePair> tiles =
        options.split > 0 ? block_tiles(options.split, n, rows_of<T>(options, n), cols_of<T>(options, n))
                          : upper_tiles(n, rows_of<T>(options, n), cols_of<T>(options, n));
    Accumulator acc(n);
    control.set_total(tiles.size());
    const std::ptrdiff_t largest = tiles.empty() ? 0 : tiles.front().ni * tiles.front().nj;
    BufferPool<T> pool(largest);
    const OneBlasThread one_thread(blas.threads);  // holds a process-wide count at 1 for the whole call
    parallel_for(
        tiles.size(), options.n_threads,
        [&](std::size_t task) {
            const TilePair& tp = tiles[task];
            const std::ptrdiff_t size = tp.ni * tp.nj;
            const T* y = prep.y.data();
            const T* p = prep.p.data();
            // cross = Y_I P_J^T + (Y_J P_I^T)^T, the second product written as P_I Y_J^T.
            auto cross = pool.take();
            product_abt(blas, tp.ni, tp.nj, d, y + tp.i0 * d, d, p + tp.j0 * d, d, cross.get(), tp.nj);
            if (prep.metric == Metric::euclidean) {
                // Distances are not linear in the products: convert each, then add.
                auto other = pool.take();
                product_abt(blas, tp.ni, tp.nj, d, p + tp.i0 * d, d, y + tp.j0 * d, d, other.get(), tp.nj);
                inner_to_neg_distance(prep, tp.i0, tp.ni, tp.j0, tp.nj, true, cross.get(), tp.nj);
                inner_to_neg_distance(prep, tp.i0, tp.ni, tp.j0, tp.nj, false, other.get(), tp.nj);
                for (std::ptrdiff_t q = 0; q < size; ++q)
                    cross[static_cast<std::size_t>(q)] += other[static_cast<std::size_t>(q)];
            } else {
                product_abt(blas, tp.ni, tp.nj, d, p + tp.i0 * d, d, y + tp.j0 * d, d, cross.get(), tp.nj, true);
            }
            TileSums sums;
            compare_tile(terms, tp.i0, tp.ni, tp.j0, tp.nj, cross.get(), sums);
            acc.add(sums, tp.i0, tp.j0);
            control.advance(1);
        },
        control);
    return acc.take();
}

template <class T>
Counts count_listed_pairs(const Prepared<T>& prep, const Groups& groups, const Options& options,
                          const std::int64_t* first, const std::int64_t* second, std::size_t n_pairs,
                          Control& control) {
    const Terms<T> terms = make_terms(prep, groups, options);
    const std::ptrdiff_t n = prep.n, d = prep.d;
    for (std::size_t k = 0; k < n_pairs; ++k)
        if (first[k] < 0 || first[k] >= n || second[k] < 0 || second[k] >= n || first[k] == second[k])
            throw std::invalid_argument("pairs must be two different indices in [0, n)");
    auto term = [&](std::ptrdiff_t i, std::ptrdiff_t j) {
        const T* yr = &prep.y[static_cast<std::size_t>(i * d)];
        const T* pr = &prep.p[static_cast<std::size_t>(j * d)];
        return static_cast<T>(prep.metric == Metric::euclidean ? -distance_rows(yr, pr, d) : dot_rows(yr, pr, d));
    };
    // Per-sample counts go straight into shared atomic counters (relaxed adds:
    // integer sums, so the order does not matter), so a chunk costs O(pairs d)
    // whatever n; only the totals are summed per chunk.
    std::vector<std::atomic<std::int64_t>> sample_passed(static_cast<std::size_t>(n)),
        sample_tied(static_cast<std::size_t>(n));
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        sample_passed[static_cast<std::size_t>(i)].store(0, std::memory_order_relaxed);
        sample_tied[static_cast<std::size_t>(i)].store(0, std::memory_order_relaxed);
    }
    std::atomic<std::uint64_t> passed{0}, tied{0}, skipped{0};
    constexpr std::size_t kChunk = 1 << 12;
    const std::size_t n_chunks = (n_pairs + kChunk - 1) / kChunk;
    control.set_total(n_chunks);
    parallel_for(
        n_chunks, options.n_threads,
        [&](std::size_t c) {
            const std::size_t lo = c * kChunk, hi = std::min(n_pairs, lo + kChunk);
            std::uint64_t np_ = 0, nt = 0, ns = 0;
            for (std::size_t k = lo; k < hi; ++k) {
                const std::ptrdiff_t i = first[k], j = second[k];
                switch (classify(terms, i, j, static_cast<T>(term(i, j) + term(j, i)))) {
                    case 1:
                        ++np_;
                        sample_passed[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
                        sample_passed[static_cast<std::size_t>(j)].fetch_add(1, std::memory_order_relaxed);
                        break;
                    case 2:
                        ++nt;
                        sample_tied[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
                        sample_tied[static_cast<std::size_t>(j)].fetch_add(1, std::memory_order_relaxed);
                        break;
                    case 3:
                        ++ns;
                        break;
                    default:
                        break;
                }
            }
            passed.fetch_add(np_, std::memory_order_relaxed);
            tied.fetch_add(nt, std::memory_order_relaxed);
            skipped.fetch_add(ns, std::memory_order_relaxed);
            control.advance(1);
        },
        control);
    Counts out;
    out.passed = passed.load();
    out.tied = tied.load();
    out.skipped = skipped.load();
    out.sample_passed.resize(static_cast<std::size_t>(n));
    out.sample_tied.resize(static_cast<std::size_t>(n));
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        out.sample_passed[static_cast<std::size_t>(i)] = sample_passed[static_cast<std::size_t>(i)].load();
        out.sample_tied[static_cast<std::size_t>(i)] = sample_tied[static_cast<std::size_t>(i)].load();
    }
    return out;
}

template <class T>
void pair_terms(const Prepared<T>& prep, const Options& options, const Blas& blas, T* out, Control& control) {
    const std::ptrdiff_t n = prep.n, d = prep.d, rows = rows_of<T>(options, n), cols = cols_of<T>(options, n);
    std::vector<TilePair> tiles;
    for (std::ptrdiff_t i0 = 0; i0 < n; i0 += rows)
        for (std::ptrdiff_t j0 = 0; j0 < n; j0 += cols)
            tiles.push_back({i0, std::min(rows, n - i0), j0, std::min(cols, n - j0)});
    control.set_total(tiles.size());
    const OneBlasThread one_thread(blas.threads);  // holds a process-wide count at 1 for the whole call
    parallel_for(
        tiles.size(), options.n_threads,
        [&](std::size_t task) {
            const TilePair& tp = tiles[task];
            T* c = out + tp.i0 * n + tp.j0;
            product_abt(blas, tp.ni, tp.nj, d, prep.y.data() + tp.i0 * d, d, prep.p.data() + tp.j0 * d, d, c, n);
            if (prep.metric == Metric::euclidean) inner_to_neg_distance(prep, tp.i0, tp.ni, tp.j0, tp.nj, true, c, n);
            control.advance(1);
        },
        control);
}

template <class T>
void count_permuted(const T* terms_matrix, const T* terms_transposed, const Prepared<T>& prep, const Groups& groups,
                    const Options& options, const std::int64_t* perms, std::size_t n_perms, std::uint64_t* passed,
                    std::uint64_t* tied, Control& control) {
    const std::ptrdiff_t n = prep.n;
    const Terms<T> base = make_terms(prep, groups, options);
    for (std::size_t r = 0; r < n_perms * static_cast<std::size_t>(n); ++r)
        if (perms[r] < 0 || perms[r] >= n) throw std::invalid_argument("permutation entries must lie in [0, n)");
    // The terms of each permutation: y_i is now paired with p_perm[i].
    std::vector<Terms<T>> per(n_perms);
    for (std::size_t r = 0; r < n_perms; ++r) {
        const std::int64_t* pi = perms + r * static_cast<std::size_t>(n);
        Terms<T>& t = per[r];
        t.own.resize(static_cast<std::size_t>(n));
        t.weight.resize(static_cast<std::size_t>(n));
        t.gp.resize(static_cast<std::size_t>(n));
        for (std::ptrdiff_t i = 0; i < n; ++i) {
            t.own[static_cast<std::size_t>(i)] = terms_matrix[i * n + pi[i]];
            t.weight[static_cast<std::size_t>(i)] = weight_of<T>(prep.metric, prep.ny[i], prep.np[pi[i]]);
            t.gp[static_cast<std::size_t>(i)] = groups.p[pi[i]];
        }
        t.factor = base.factor;
        t.gy = base.gy;
        t.has_twin = twins(t.gy.data(), t.gp.data(), n);
        t.skip_same_target = base.skip_same_target;
    }
    const std::vector<TilePair> tiles = upper_tiles(n, rows_of<T>(options, n), cols_of<T>(options, n));
    std::vector<std::atomic<std::uint64_t>> np_(n_perms), nt_(n_perms);
    control.set_total(n_perms * tiles.size());
    BufferPool<T> pool(tiles.empty() ? 0 : tiles.front().ni * tiles.front().nj);
    parallel_for(
        n_perms * tiles.size(), options.n_threads,
        [&](std::size_t task) {
            const std::size_t r = task / tiles.size();
            const TilePair& tp = tiles[task % tiles.size()];
            const std::int64_t* pi = perms + r * static_cast<std::size_t>(n);
            auto cross = pool.take();
            // cross[a, b] = X[i, pi_j] + X^T[pi_i, j]: a gather within row i of X
            // and a contiguous run of row pi_i of X^T.
            T* c = cross.get();
            const std::int64_t* pj = pi + tp.j0;
            for (std::ptrdiff_t a = 0; a < tp.ni; ++a) {
                const T* row = terms_matrix + (tp.i0 + a) * n;
                const T* row_t = terms_transposed + pi[tp.i0 + a] * n + tp.j0;
                T* out = c + a * tp.nj;
                for (std::ptrdiff_t b = 0; b < tp.nj; ++b) out[b] = row[pj[b]] + row_t[b];
            }
            TileSums sums;
            compare_tile(per[r], tp.i0, tp.ni, tp.j0, tp.nj, cross.get(), sums);
            np_[r] += sums.passed;
            nt_[r] += sums.tied;
            control.advance(1);
        },
        control);
    for (std::size_t r = 0; r < n_perms; ++r) {
        passed[r] = np_[r].load();
        tied[r] = nt_[r].load();
    }
}

#define PAIRMETRICS_INSTANTIATE(T)                                                                                \
    template std::vector<std::int32_t> group_rows<T>(const MatrixView<T>&, int, Control&);                        \
    template Prepared<T> prepare<T>(const MatrixView<T>&, const MatrixView<T>&, Metric, const std::int64_t*, int, \
                                    Control&, const Reference&);                                                  \
    template Counts count_all_pairs<T>(const Prepared<T>&, const Groups&, const Options&, const Blas&, Control&); \
    template Counts count_listed_pairs<T>(const Prepared<T>&, const Groups&, const Options&, const std::int64_t*, \
                                          const std::int64_t*, std::size_t, Control&);                            \
    template void pair_terms<T>(const Prepared<T>&, const Options&, const Blas&, T*, Control&);                   \
    template void count_permuted<T>(const T*, const T*, const Prepared<T>&, const Groups&, const Options&,        \
                                    const std::int64_t*, std::size_t, std::uint64_t*, std::uint64_t*, Control&);

PAIRMETRICS_INSTANTIATE(float)
PAIRMETRICS_INSTANTIATE(double)
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics::two_vs_two
