// Bindings of the measure kernels. Python validates every argument before
// calling (shapes, dtypes, finiteness, 0/1 outcomes, probabilities in [0, 1],
// well-formed CSR without duplicates); the checks here only guard the C++
// against misuse of the private API, and raise exceptions. Results come back
// as dicts of named arrays.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../measures.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"

namespace pairmetrics::bindings {

namespace {

namespace ms = pairmetrics::measures;

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
ms::View<T> measure_view(const py::array& x) {
    const auto row = element_stride<T>(x, 0);
    const auto col = x.ndim() == 2 ? element_stride<T>(x, 1) : std::ptrdiff_t{0};
    return {static_cast<const T*>(x.data()), row, col};
}

// Runs kernel(view of a, view of b) without the GIL: a of any real dtype,
// read as it is; b float32 or float64.
template <class Kernel>
void run_on_views(const py::array& a, const py::array& b, Control& control, Kernel&& kernel) {
    dispatch_real_dtype(a, [&](auto tag_a) {
        dispatch_float_dtype(b, [&](auto tag_b) {
            const auto va = measure_view<typename decltype(tag_a)::type>(a);
            const auto vb = measure_view<typename decltype(tag_b)::type>(b);
            // Safe without the GIL: only raw pointers into a and b (kept alive
            // by the caller's references) and the caller's locals are touched.
            run_without_gil(control, [&] { kernel(va, vb); });
        });
    });
}

py::dict error_stats(const py::array& a, const py::array& b, bool per_column) {
    const auto [n, t] = shape_of(a, b);
    std::vector<ms::ErrorStats> stats(per_column ? t : 1);
    const auto control = make_control();
    run_on_views(a, b, *control,
                 [&](auto va, auto vb) { ms::error_stats(va, vb, n, t, per_column, stats.data(), *control); });
    std::vector<double> abs_sum, sq_sum, max_abs;
    std::vector<std::uint64_t> n_wrong;
    for (const auto& s : stats) {
        abs_sum.push_back(s.abs_sum);
        sq_sum.push_back(s.sq_sum);
        max_abs.push_back(s.max_abs);
        n_wrong.push_back(s.n_wrong);
    }
    py::dict out;
    out["abs_sum"] = to_array(abs_sum);
    out["sq_sum"] = to_array(sq_sum);
    out["max_abs"] = to_array(max_abs);
    out["n_wrong"] = to_array(n_wrong);
    return out;
}

// y holds 0/1; p is in [0, 1].
py::dict log_likelihood(const py::array& y, const py::array& p, bool per_column, double eps) {
    const auto [n, t] = shape_of(y, p);
    std::vector<ms::LogLikelihoodStats> stats(per_column ? t : 1);
    const auto control = make_control();
    run_on_views(y, p, *control,
                 [&](auto vy, auto vp) { ms::log_likelihood(vy, vp, n, t, per_column, eps, stats.data(), *control); });
    std::vector<double> log_sum;
    std::vector<std::uint64_t> n_zero;
    for (const auto& s : stats) {
        // Python checked both inputs; the kernel's flags only catch misuse.
        if (s.bad_true) throw py::value_error("internal error: y holds values other than 0 and 1");
        if (s.bad_pred) throw py::value_error("internal error: p holds values outside [0, 1]");
        log_sum.push_back(s.log_sum);
        n_zero.push_back(s.n_zero);
    }
    py::dict out;
    out["log_sum"] = to_array(log_sum);
    out["n_zero"] = to_array(n_zero);
    return out;
}

py::array_t<std::int64_t> zeros(std::size_t size) {
    py::array_t<std::int64_t> a(static_cast<py::ssize_t>(size));
    std::fill(a.mutable_data(), a.mutable_data() + size, 0);
    return a;
}

py::dict counts_dict(py::array_t<std::int64_t> l_both, py::array_t<std::int64_t> l_true,
                     py::array_t<std::int64_t> l_pred, py::array_t<std::int64_t> s_both,
                     py::array_t<std::int64_t> s_true, py::array_t<std::int64_t> s_pred) {
    py::dict out;
    out["label_both"] = l_both;
    out["label_true"] = l_true;
    out["label_pred"] = l_pred;
    out["sample_both"] = s_both;
    out["sample_true"] = s_true;
    out["sample_pred"] = s_pred;
    return out;
}

template <class I>
py::dict multilabel_sparse_typed(const py::array& t_indptr, const py::array& t_indices, const py::array& p_indptr,
                                 const py::array& p_indices, std::size_t n_samples, std::size_t n_labels) {
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
    run_without_gil(*control, [&] {
        ms::multilabel_sparse_counts<I>(ti, tx, t_nnz, pi, px, p_nnz, n_samples, n_labels, per_label, per_sample,
                                        *control);
    });
    return counts_dict(l_both, l_true, l_pred, s_both, s_true, s_pred);
}

py::dict multilabel_dense(const py::array& t, const py::array& p) {
    auto is_byte = [](const py::array& a) { return a.dtype().kind() == 'u' && a.dtype().itemsize() == 1; };
    if (!is_byte(t) || !is_byte(p) || t.ndim() != 2) {
        throw py::type_error("multilabel_dense needs two 2-D uint8 arrays holding 0/1");
    }
    const auto [n_samples, n_labels] = shape_of(t, p);
    py::array_t<std::int64_t> l_both = zeros(n_labels), l_true = zeros(n_labels), l_pred = zeros(n_labels);
    py::array_t<std::int64_t> s_both = zeros(n_samples), s_true = zeros(n_samples), s_pred = zeros(n_samples);
    const ms::LabelCounts per_label{l_both.mutable_data(), l_true.mutable_data(), l_pred.mutable_data()};
    const ms::LabelCounts per_sample{s_both.mutable_data(), s_true.mutable_data(), s_pred.mutable_data()};
    const auto vt = measure_view<std::uint8_t>(t);
    const auto vp = measure_view<std::uint8_t>(p);
    const auto control = make_control();
    // Safe without the GIL: raw pointers into t and p (alive through the
    // caller's references) and into the output arrays created above.
    run_without_gil(*control,
                    [&] { ms::multilabel_dense_counts(vt, vp, n_samples, n_labels, per_label, per_sample, *control); });
    return counts_dict(l_both, l_true, l_pred, s_both, s_true, s_pred);
}

py::dict multilabel_sparse(const py::array& t_indptr, const py::array& t_indices, const py::array& p_indptr,
                           const py::array& p_indices, std::size_t n_samples, std::size_t n_labels) {
    const py::dtype dtype = t_indptr.dtype();
    for (const py::array* a : {&t_indptr, &t_indices, &p_indptr, &p_indices}) {
        if (a->dtype().kind() != 'i' || a->dtype().itemsize() != dtype.itemsize() || a->ndim() != 1 ||
            !(a->flags() & py::array::c_style)) {
            throw py::type_error("CSR index arrays must be contiguous 1-D arrays of one integer dtype");
        }
    }
    if (dtype.itemsize() == 4)
        return multilabel_sparse_typed<std::int32_t>(t_indptr, t_indices, p_indptr, p_indices, n_samples, n_labels);
    if (dtype.itemsize() == 8)
        return multilabel_sparse_typed<std::int64_t>(t_indptr, t_indices, p_indptr, p_indices, n_samples, n_labels);
    throw py::type_error("CSR index arrays must be int32 or int64");
}

}  // namespace

void register_measures(py::module_& m) {
    m.def("_error_stats", &error_stats, py::arg("a"), py::arg("b"), py::arg("per_column"),
          "Per-column (or total) sum |a-b|, sum (a-b)^2, max |a-b| and count of a != b in one pass: "
          "dict abs_sum, sq_sum, max_abs, n_wrong.");
    m.def("_log_likelihood", &log_likelihood, py::arg("y"), py::arg("p"), py::arg("per_column"), py::arg("eps"),
          "Per-column (or total) natural log-likelihood of 0/1 outcomes y under probabilities p and the count "
          "of zero-probability outcomes: dict log_sum, n_zero.");
    m.def("_multilabel_dense", &multilabel_dense, py::arg("t"), py::arg("p"),
          "Per-label and per-sample counts of 1s in both, in t and in p, for 2-D uint8 0/1 arrays: dict "
          "label_both, label_true, label_pred, sample_both, sample_true, sample_pred.");
    m.def("_multilabel_sparse", &multilabel_sparse, py::arg("t_indptr"), py::arg("t_indices"), py::arg("p_indptr"),
          py::arg("p_indices"), py::arg("n_samples"), py::arg("n_labels"),
          "The counts of _multilabel_dense from CSR indices holding only 1s (validated, without duplicates).");
}

}  // namespace pairmetrics::bindings
