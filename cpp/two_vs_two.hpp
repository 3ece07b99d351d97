// The 2 vs 2 test for vector predictions, without materialising the n x n
// matrix of distances.
//
// For a pair i < j the test compares the distances of the matched assignment,
// lhs = d(y_i, p_i) + d(y_j, p_j), with the swapped one, rhs = d(y_i, p_j) +
// d(y_j, p_i); the pair passes when lhs < rhs. Every metric is reduced to
// inner products of prepared rows (unit rows for cosine, centred unit rows for
// correlation, rows minus the mean target for the Euclidean metrics), so the
// work is a matrix product computed tile by tile with a BLAS gemm and fused
// with the comparison. Extra memory: O(n d + n_threads * tile^2).
//
// Near-ties are decided with a tolerance, so that sides equal up to rounding
// count as tied however the products were blocked: a pair is tied when
// |lhs - rhs| <= rtol * scale_ij, scale_ij = w_i + w_j with w_i = |y_i|^2 +
// |p_i|^2 of the prepared rows (its square root for the Euclidean metric),
// which bounds the rounding error of the products. A pair is always tied when
// y_i == y_j or p_i == p_j (the two sides are equal in exact arithmetic). The
// tiling depends on n and the dtype only, so counts do not depend on threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "blas_threads.hpp"
#include "control.hpp"

namespace pairmetrics::two_vs_two {

enum class Metric { cosine, correlation, euclidean, sqeuclidean };

// The BLAS the caller found (blas_threads.hpp).
using pairmetrics::Blas;
using pairmetrics::GemmFn;

// A strided view of an n x d matrix (strides in elements).
template <class T>
struct MatrixView {
    const T* data = nullptr;
    std::ptrdiff_t rows = 0, cols = 0, row_stride = 0, col_stride = 1;
    T operator()(std::ptrdiff_t i, std::ptrdiff_t k) const { return data[i * row_stride + k * col_stride]; }
};

struct Options {
    Metric metric = Metric::cosine;
    double rtol = 0.0;
    bool skip_same_target = false;  // pairs="distinct_targets"
    int n_threads = 1;
    std::ptrdiff_t tile_rows = 0, tile_cols = 0;  // 0: default
    // > 0: count only the pairs i < split <= j (one off-diagonal block of a
    // larger problem whose rows were split into blocks).
    std::ptrdiff_t split = 0;
};

// Group ids of identical rows: group_y[i] == group_y[j] iff y_i == y_j.
struct Groups {
    const std::int32_t* y = nullptr;
    const std::int32_t* p = nullptr;
};

struct Counts {
    std::uint64_t passed = 0, tied = 0, skipped = 0;
    std::vector<std::int64_t> sample_passed, sample_tied;  // per sample, over its pairs
};

// Group ids of identical rows (value equality, so -0.0 equals 0.0): the id of
// a row is the index of the first row equal to it. O(n d) with hashing.
template <class T>
std::vector<std::int32_t> group_rows(const MatrixView<T>& x, int n_threads, Control& control);

// The prepared rows (see the file comment) and the per-sample terms the
// comparison needs. For the Euclidean metric own[i] = -d(y_i, p_i), for the
// others own[i] = <y_i, p_i> of the prepared rows.
template <class T>
struct Prepared {
    Metric metric = Metric::cosine;
    std::ptrdiff_t n = 0, d = 0;
    std::vector<T> y, p;         // n x d, row major
    std::vector<double> ny, np;  // squared norms of the prepared rows
    std::vector<T> own;
};

// The Euclidean metrics scale by a power of two from the largest |coordinate|
// and shift by the mean scaled target row. Row blocks of a larger problem are
// prepared exactly as the whole when given both: max_abs (of y and p
// together) and centre (d values, the mean of the scaled target rows).
struct Reference {
    const double* centre = nullptr;
    double max_abs = -1.0;  // < 0: computed from y and p
};

template <class T>
Prepared<T> prepare(const MatrixView<T>& y, const MatrixView<T>& p, Metric metric, const std::int64_t* perm,
                    int n_threads, Control& control, const Reference& reference = Reference{});

// All pairs, tile by tile. perm (optional) pairs y_i with p_perm[i].
template <class T>
Counts count_all_pairs(const Prepared<T>& prep, const Groups& groups, const Options& options, const Blas& blas,
                       Control& control);

// The listed pairs only (pair k is (first[k], second[k]), first != second).
template <class T>
Counts count_listed_pairs(const Prepared<T>& prep, const Groups& groups, const Options& options,
                          const std::int64_t* first, const std::int64_t* second, std::size_t n_pairs, Control& control);

// The full n x n matrix of comparison terms X (X[i, j] = <y_i, p_j> of the
// prepared rows, or -d(y_i, p_j) for the Euclidean metric), row major, for
// permutation tests that reuse it.
template <class T>
void pair_terms(const Prepared<T>& prep, const Options& options, const Blas& blas, T* out, Control& control);

// Passed and tied counts for each permutation (row r of perms, n entries:
// y_i is paired with p_perms[r, i]) from the matrix written by pair_terms and
// its transpose (both row major).
template <class T>
void count_permuted(const T* terms, const T* terms_transposed, const Prepared<T>& prep, const Groups& groups,
                    const Options& options, const std::int64_t* perms, std::size_t n_perms, std::uint64_t* passed,
                    std::uint64_t* tied, Control& control);

}  // namespace pairmetrics::two_vs_two
