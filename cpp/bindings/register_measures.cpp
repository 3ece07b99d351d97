#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../measures.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"

namespace pairmetrics::bindings {

namespace {

namespace ms = pairmetrics::measures;

// Arrays arrive validated from Python (1-D or 2-D, same shape, supported
// dtypes); these checks only guard the C++ against misuse of the private API.
std::pair<std::size_t, std::size_t> shape_of(const py::array& x, const py::array& y) {
    if (x.ndim() < 1 || x.ndim() > 2 || x.ndim() != y.ndim()) throw py::value_error("arrays must both be 1-D or 2-D");
    for (py::ssize_t d = 0; d < x.ndim(); ++d) {
        if (x.shape(d) != y.shape(d)) throw py::value_error("arrays must have the same shape");
    }
    const auto n = static_cast<std::size_t>(x.shape(0));
    const auto t = x.ndim() == 2 ? static_cast<std::size_t>(x.shape(1)) : std::size_t{1};
    return {n, t};
}

template <class T>
ms::View<T> view_of(const py::array& x) {
    for (py::ssize_t d = 0; d < x.ndim(); ++d) {
        if (x.strides(d) % static_cast<py::ssize_t>(sizeof(T)) != 0) {
            throw py::value_error("array strides must be multiples of the item size");
        }
    }
    const auto row = element_stride<T>(x, 0);
    const auto col = x.ndim() == 2 ? element_stride<T>(x, 1) : std::ptrdiff_t{0};
    return {static_cast<const T*>(x.data()), row, col};
}

template <class T>
bool has_dtype(const py::array& x) {
    // Equivalence, not identity: an unpickled array holds an equal but distinct dtype object.
    return py::detail::npy_api::get().PyArray_EquivTypes_(x.dtype().ptr(), py::dtype::of<T>().ptr());
}

template <class T>
py::array_t<T> to_array(const std::vector<T>& values) {
    py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
    std::copy(values.begin(), values.end(), out.mutable_data());
    return out;
}

template <class A, class B>
std::vector<ms::ErrorStats> error_stats_typed(const py::array& a, const py::array& b, bool per_column) {
    const auto [n, t] = shape_of(a, b);
    const auto va = view_of<A>(a);
    const auto vb = view_of<B>(b);
    std::vector<ms::ErrorStats> out(per_column ? t : 1);
    const auto control = make_control();
    // Safe without the GIL: only raw pointers into a and b (kept alive by the
    // caller's references) and the local vector are touched.
    run_without_gil(*control, [&] { ms::error_stats<A, B>(va, vb, n, t, per_column, out.data(), *control); });
    return out;
}

// a: any real dtype, read as it is; b: float32 or float64.
py::tuple error_stats(const py::array& a, const py::array& b, bool per_column) {
    const auto stats = dispatch_real_dtype(a, [&](auto tag) {
        using A = typename decltype(tag)::type;
        if (has_dtype<double>(b)) return error_stats_typed<A, double>(a, b, per_column);
        if (has_dtype<float>(b)) return error_stats_typed<A, float>(a, b, per_column);
        throw py::type_error("error_stats needs b as a float32 or float64 array");
    });
    std::vector<double> abs_sum, sq_sum, max_abs;
    std::vector<std::uint64_t> n_wrong;
    for (const auto& s : stats) {
        abs_sum.push_back(s.abs_sum);
        sq_sum.push_back(s.sq_sum);
        max_abs.push_back(s.max_abs);
        n_wrong.push_back(s.n_wrong);
    }
    return py::make_tuple(to_array(abs_sum), to_array(sq_sum), to_array(max_abs), to_array(n_wrong));
}

template <class Y, class P>
std::vector<ms::LogLikelihoodStats> log_likelihood_typed(const py::array& y, const py::array& p, bool per_column,
                                                         double eps) {
    const auto [n, t] = shape_of(y, p);
    const auto vy = view_of<Y>(y);
    const auto vp = view_of<P>(p);
    std::vector<ms::LogLikelihoodStats> out(per_column ? t : 1);
    const auto control = make_control();
    // Safe without the GIL: only raw pointers into y and p and the local vector.
    run_without_gil(*control, [&] { ms::log_likelihood<Y, P>(vy, vp, n, t, per_column, eps, out.data(), *control); });
    return out;
}

template <class P>
std::vector<ms::LogLikelihoodStats> log_likelihood_p(const py::array& y, const py::array& p, bool per_column,
                                                     double eps) {
    if (has_dtype<std::uint8_t>(y)) return log_likelihood_typed<std::uint8_t, P>(y, p, per_column, eps);
    if (has_dtype<std::uint16_t>(y)) return log_likelihood_typed<std::uint16_t, P>(y, p, per_column, eps);
    if (has_dtype<std::uint32_t>(y)) return log_likelihood_typed<std::uint32_t, P>(y, p, per_column, eps);
    if (has_dtype<std::uint64_t>(y)) return log_likelihood_typed<std::uint64_t, P>(y, p, per_column, eps);
    if (has_dtype<float>(y)) return log_likelihood_typed<float, P>(y, p, per_column, eps);
    if (has_dtype<double>(y)) return log_likelihood_typed<double, P>(y, p, per_column, eps);
    throw py::type_error("log_likelihood needs y as an unsigned integer or float array");
}

py::tuple log_likelihood(const py::array& y, const py::array& p, bool per_column, double eps) {
    std::vector<ms::LogLikelihoodStats> stats;
    if (has_dtype<double>(p)) {
        stats = log_likelihood_p<double>(y, p, per_column, eps);
    } else if (has_dtype<float>(p)) {
        stats = log_likelihood_p<float>(y, p, per_column, eps);
    } else {
        throw py::type_error("log_likelihood needs p as a float32 or float64 array");
    }
    std::vector<double> log_sum;
    std::vector<std::uint64_t> n_zero;
    bool bad_true = false, bad_pred = false;
    for (const auto& s : stats) {
        log_sum.push_back(s.log_sum);
        n_zero.push_back(s.n_zero);
        bad_true |= s.bad_true;
        bad_pred |= s.bad_pred;
    }
    return py::make_tuple(to_array(log_sum), to_array(n_zero), bad_true, bad_pred);
}

py::array_t<std::int64_t> zeros(std::size_t size) {
    py::array_t<std::int64_t> a(static_cast<py::ssize_t>(size));
    std::fill(a.mutable_data(), a.mutable_data() + size, 0);
    return a;
}

template <class I>
py::tuple multilabel_sparse_typed(const py::array& t_indptr, const py::array& t_indices, const py::array& p_indptr,
                                  const py::array& p_indices, std::size_t n_samples, std::size_t n_labels) {
    for (const py::array* a : {&t_indptr, &t_indices, &p_indptr, &p_indices}) {
        if (!has_dtype<I>(*a) || a->ndim() != 1 || !(a->flags() & py::array::c_style)) {
            throw py::type_error("CSR index arrays must be contiguous 1-D arrays of one integer dtype");
        }
    }
    if (static_cast<std::size_t>(t_indptr.shape(0)) != n_samples + 1 ||
        static_cast<std::size_t>(p_indptr.shape(0)) != n_samples + 1) {
        throw py::value_error("indptr must have n_samples + 1 entries");
    }
    py::array_t<std::int64_t> l_both = zeros(n_labels), l_true = zeros(n_labels), l_pred = zeros(n_labels);
    py::array_t<std::int64_t> s_both = zeros(n_samples), s_true = zeros(n_samples), s_pred = zeros(n_samples);
    const ms::LabelCounts per_label{l_both.mutable_data(), l_true.mutable_data(), l_pred.mutable_data()};
    const ms::LabelCounts per_sample{s_both.mutable_data(), s_true.mutable_data(), s_pred.mutable_data()};
    const I* ti = static_cast<const I*>(t_indptr.data());
    const I* tx = static_cast<const I*>(t_indices.data());
    const I* pi = static_cast<const I*>(p_indptr.data());
    const I* px = static_cast<const I*>(p_indices.data());
    const auto t_nnz = static_cast<std::size_t>(t_indices.shape(0));
    const auto p_nnz = static_cast<std::size_t>(p_indices.shape(0));
    const auto control = make_control();
    // Safe without the GIL: raw pointers into arrays owned by the caller's
    // references and into the output arrays created above, nothing else.
    const ms::SparseStatus status = run_without_gil(*control, [&] {
        return ms::multilabel_sparse_counts<I>(ti, tx, t_nnz, pi, px, p_nnz, n_samples, n_labels, per_label,
                                               per_sample, *control);
    });
    return py::make_tuple(static_cast<int>(status), l_both, l_true, l_pred, s_both, s_true, s_pred);
}

py::tuple multilabel_dense(const py::array& t, const py::array& p) {
    if (!has_dtype<std::uint8_t>(t) || !has_dtype<std::uint8_t>(p) || t.ndim() != 2) {
        throw py::type_error("multilabel_dense needs two 2-D uint8 arrays holding 0/1");
    }
    const auto [n_samples, n_labels] = shape_of(t, p);
    py::array_t<std::int64_t> l_both = zeros(n_labels), l_true = zeros(n_labels), l_pred = zeros(n_labels);
    py::array_t<std::int64_t> s_both = zeros(n_samples), s_true = zeros(n_samples), s_pred = zeros(n_samples);
    const ms::LabelCounts per_label{l_both.mutable_data(), l_true.mutable_data(), l_pred.mutable_data()};
    const ms::LabelCounts per_sample{s_both.mutable_data(), s_true.mutable_data(), s_pred.mutable_data()};
    const auto vt = view_of<std::uint8_t>(t);
    const auto vp = view_of<std::uint8_t>(p);
    const auto control = make_control();
    // Safe without the GIL: raw pointers into t and p (alive through the
    // caller's references) and into the output arrays created above.
    run_without_gil(*control, [&] { ms::multilabel_dense_counts(vt, vp, n_samples, n_labels, per_label, per_sample, *control); });
    return py::make_tuple(l_both, l_true, l_pred, s_both, s_true, s_pred);
}

py::tuple multilabel_sparse(const py::array& t_indptr, const py::array& t_indices, const py::array& p_indptr,
                            const py::array& p_indices, std::size_t n_samples, std::size_t n_labels) {
    if (has_dtype<std::int32_t>(t_indptr)) {
        return multilabel_sparse_typed<std::int32_t>(t_indptr, t_indices, p_indptr, p_indices, n_samples, n_labels);
    }
    return multilabel_sparse_typed<std::int64_t>(t_indptr, t_indices, p_indptr, p_indices, n_samples, n_labels);
}

}  // namespace

void register_measures(py::module_& m) {
    m.def("_error_stats", &error_stats, py::arg("a"), py::arg("b"), py::arg("per_column"),
          "Per-column (or total) sum |a-b|, sum (a-b)^2, max |a-b| and count of a != b in one pass.");
    m.def("_log_likelihood", &log_likelihood, py::arg("y"), py::arg("p"), py::arg("per_column"), py::arg("eps"),
          "Per-column (or total) natural log-likelihood of 0/1 outcomes y under probabilities p, "
          "count of zero-probability outcomes, and flags for invalid y or p.");
    m.def("_multilabel_dense", &multilabel_dense, py::arg("t"), py::arg("p"),
          "Per-label then per-sample counts of 1s in both, in t and in p, for 2-D uint8 0/1 arrays.");
    m.def("_multilabel_sparse", &multilabel_sparse, py::arg("t_indptr"), py::arg("t_indices"), py::arg("p_indptr"),
          py::arg("p_indices"), py::arg("n_samples"), py::arg("n_labels"),
          "Status (0 ok, 1/2 duplicate entry in y_true/y_pred, 3 malformed) and per-label then per-sample "
          "counts of 1s in both, in y_true and in y_pred, from CSR indices holding only 1s.");
}

}  // namespace pairmetrics::bindings
