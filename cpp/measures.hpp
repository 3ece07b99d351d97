// Single-pass reductions behind the classic error measures.
//
// Each kernel reads two arrays of shape (n, t) once, in place (any strides),
// and returns per-column results (or one result for the whole array). No
// temporaries are allocated whatever the layout, which is what makes these
// faster than the equivalent chain of numpy ufuncs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics::measures {

// Element (i, j) of a strided 2-D view is data[i * row + j * col] (strides in
// elements, may be negative or zero).
template <class T>
struct View {
    const T* data;
    std::ptrdiff_t row;
    std::ptrdiff_t col;
};

// Sums over the differences d = a - b, computed in double.
struct ErrorStats {
    double abs_sum = 0.0;       // sum |d|   (NaN or inf if any input was)
    double sq_sum = 0.0;        // sum d^2
    double max_abs = 0.0;       // max |d|
    std::uint64_t n_wrong = 0;  // count of d != 0
};

// out holds t entries when per_column is true, else one entry. A is any real
// type (bool, integers, float, double), B is float or double; every value is
// converted to double before subtracting, so unsigned inputs cannot wrap.
template <class A, class B>
void error_stats(View<A> a, View<B> b, std::size_t n, std::size_t t, bool per_column, ErrorStats* out,
                 Control& control);

// Log-likelihood of 0/1 outcomes y under probabilities p, natural log.
// The caller checks that y holds only 0 and 1 and p only values in [0, 1];
// the flags report a violation of that precondition.
struct LogLikelihoodStats {
    double log_sum = 0.0;      // sum of log q over the examples with q > 0
    std::uint64_t n_zero = 0;  // examples with q == 0 (log-likelihood is -inf)
    bool bad_true = false;     // some y is not 0 or 1
    bool bad_pred = false;     // some p is outside [0, 1] or NaN
};

// q = p where y == 1 and 1 - p where y == 0; with eps > 0, q is clipped to
// [eps, 1 - eps] first (the same as clipping p). Y is any real type.
template <class Y, class P>
void log_likelihood(View<Y> y, View<P> p, std::size_t n, std::size_t t, bool per_column, double eps,
                    LogLikelihoodStats* out, Control& control);

// Multi-label counts from two CSR matrices of 0/1 labels that store only 1s:
// per label, the number of 1s in y_true, in y_pred and in both; the same per
// sample. O(nnz) with two stamp arrays of n_labels entries; indices need not
// be sorted. Outputs must be zeroed by the caller. Preconditions (checked by
// the caller; the kernel still refuses with std::invalid_argument): indptr
// non-decreasing from 0 to nnz, indices in [0, n_labels), no index twice in
// a row.

struct LabelCounts {
    std::int64_t* both;  // true positives
    std::int64_t* true_ones;
    std::int64_t* pred_ones;
};

template <class I>
void multilabel_sparse_counts(const I* t_indptr, const I* t_indices, std::size_t t_nnz, const I* p_indptr,
                              const I* p_indices, std::size_t p_nnz, std::size_t n_samples, std::size_t n_labels,
                              LabelCounts per_label, LabelCounts per_sample, Control& control);

// The same counts from two dense (n_samples, n_labels) matrices of 0/1 bytes
// with any strides (in bytes: one byte per entry).
void multilabel_dense_counts(View<std::uint8_t> t, View<std::uint8_t> p, std::size_t n_samples, std::size_t n_labels,
                             LabelCounts per_label, LabelCounts per_sample, Control& control);

}  // namespace pairmetrics::measures
