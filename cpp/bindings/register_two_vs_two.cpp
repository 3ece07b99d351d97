// Bindings of the 2 vs 2 kernels. The Python layer validates every argument
// and hands over float32/float64 arrays (any strides) and int32 group ids;
// the checks here only guard the C++ against misuse of the private API.
// Results come back as dicts of named entries; errors as exceptions.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../two_vs_two.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"
#include "scipy_blas.hpp"

namespace pairmetrics::bindings {

namespace tvt = pairmetrics::two_vs_two;

namespace {

tvt::Metric metric_of(const std::string& name) {
    if (name == "cosine") return tvt::Metric::cosine;
    if (name == "correlation") return tvt::Metric::correlation;
    if (name == "euclidean") return tvt::Metric::euclidean;
    if (name == "sqeuclidean") return tvt::Metric::sqeuclidean;
    throw py::value_error("metric must be one of 'cosine', 'correlation', 'euclidean', 'sqeuclidean'");
}

template <class T>
tvt::MatrixView<T> matrix_view(const py::array& a) {
    tvt::MatrixView<T> v;
    v.data = static_cast<const T*>(a.data());
    v.rows = a.shape(0);
    v.cols = a.shape(1);
    v.row_stride = element_stride<T>(a, 0);
    v.col_stride = element_stride<T>(a, 1);
    return v;
}

// Calls visit(Tag<T>) for the common float dtype of y and p.
template <class Visitor>
decltype(auto) dispatch_pair(const py::array& y, const py::array& p, Visitor&& visit) {
    if (y.dtype().kind() != p.dtype().kind() || y.dtype().itemsize() != p.dtype().itemsize())
        throw py::type_error("y and p must both be float32 or both float64");
    return dispatch_float_dtype(y, std::forward<Visitor>(visit));
}

void check_matrices(const py::array& y, const py::array& p) {
    if (y.ndim() != 2 || p.ndim() != 2 || y.shape(0) != p.shape(0) || y.shape(1) != p.shape(1))
        throw py::value_error("y and p must be 2-D arrays of the same shape");
    if (y.shape(0) < 2 || y.shape(1) < 1) throw py::value_error("need n >= 2 rows and d >= 1 columns");
    if (y.shape(1) > 0x7fffffff || y.shape(0) > 0x7fffffff) throw py::value_error("too many rows or columns");
    // Element strides must be whole elements for the strided view.
    for (const py::array* a : {&y, &p})
        for (py::ssize_t ax = 0; ax < 2; ++ax)
            if (a->strides(ax) % static_cast<py::ssize_t>(a->itemsize()) != 0)
                throw py::value_error("array strides must be multiples of the item size");
}

using IntArray = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;
using IndexArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

tvt::Groups groups_of(const IntArray& gy, const IntArray& gp, py::ssize_t n) {
    if (gy.ndim() != 1 || gp.ndim() != 1 || gy.shape(0) != n || gp.shape(0) != n)
        throw py::value_error("group ids must have one entry per row");
    return tvt::Groups{gy.data(), gp.data()};
}

tvt::Options options_of(const std::string& metric, double rtol, bool skip_same_target, int n_threads,
                        const py::object& tile) {
    tvt::Options o;
    o.metric = metric_of(metric);
    o.rtol = rtol;
    o.skip_same_target = skip_same_target;
    o.n_threads = n_threads;
    if (!tile.is_none()) {
        const py::tuple rc = tile.cast<py::tuple>();  // (rows, cols)
        if (rc.size() != 2) throw py::value_error("tile must be (rows, cols)");
        o.tile_rows = rc[0].cast<py::ssize_t>();
        o.tile_cols = rc[1].cast<py::ssize_t>();
    }
    return o;
}

const std::int64_t* perm_of(const py::object& perm, IndexArray& holder, py::ssize_t n) {
    if (perm.is_none()) return nullptr;
    holder = IndexArray::ensure(perm);
    if (!holder || holder.ndim() != 1 || holder.shape(0) != n) throw py::value_error("perm must have n entries");
    for (py::ssize_t i = 0; i < n; ++i)
        if (holder.data()[i] < 0 || holder.data()[i] >= n) throw py::value_error("perm entries must lie in [0, n)");
    return holder.data();
}

py::dict counts_to_python(tvt::Counts&& c) {
    py::array_t<std::int64_t> sp(static_cast<py::ssize_t>(c.sample_passed.size()), c.sample_passed.data());
    py::array_t<std::int64_t> st(static_cast<py::ssize_t>(c.sample_tied.size()), c.sample_tied.data());
    py::dict out;
    out["passed"] = c.passed;
    out["tied"] = c.tied;
    out["skipped"] = c.skipped;
    out["sample_passed"] = sp;
    out["sample_tied"] = st;
    return out;
}

template <class T>
py::dict all_pairs(const py::array& y, const py::array& p, const tvt::Groups& groups, tvt::Options options,
                   const std::int64_t* perm, const py::object& progress,
                   const tvt::Reference& reference = tvt::Reference{}) {
    const auto yv = matrix_view<T>(y), pv = matrix_view<T>(p);
    const tvt::Blas blas = scipy_gemm();
    options.n_threads = tile_threads(blas, options.n_threads);
    const auto control = make_control(progress);
    // Safe without the GIL: the views, group ids and perm point into arrays
    // that the caller keeps alive, and nothing below touches a Python object.
    tvt::Counts counts = run_without_gil(*control, [&] {
        const auto prep = tvt::prepare<T>(yv, pv, options.metric, perm, options.n_threads, *control, reference);
        return tvt::count_all_pairs<T>(prep, groups, options, blas, *control);
    });
    return counts_to_python(std::move(counts));
}

template <class T>
py::dict listed_pairs(const py::array& y, const py::array& p, const tvt::Groups& groups, const tvt::Options& options,
                      const IndexArray& first, const IndexArray& second, const std::int64_t* perm,
                      const py::object& progress) {
    const auto yv = matrix_view<T>(y), pv = matrix_view<T>(p);
    const std::size_t m = static_cast<std::size_t>(first.shape(0));
    const auto control = make_control(progress);
    // Safe without the GIL: only raw pointers into arrays kept alive by the caller.
    tvt::Counts counts = run_without_gil(*control, [&] {
        const auto prep = tvt::prepare<T>(yv, pv, options.metric, perm, options.n_threads, *control);
        return tvt::count_listed_pairs<T>(prep, groups, options, first.data(), second.data(), m, *control);
    });
    return counts_to_python(std::move(counts));
}

template <class T>
py::array pair_terms(const py::array& y, const py::array& p, tvt::Options options, const py::object& progress) {
    const auto yv = matrix_view<T>(y), pv = matrix_view<T>(p);
    const py::ssize_t n = y.shape(0);
    py::array_t<T> out({n, n});
    T* data = out.mutable_data();
    const tvt::Blas blas = scipy_gemm();
    options.n_threads = tile_threads(blas, options.n_threads);
    const auto control = make_control(progress);
    // Safe without the GIL: out is owned here and the inputs by the caller.
    run_without_gil(*control, [&] {
        const auto prep = tvt::prepare<T>(yv, pv, options.metric, nullptr, options.n_threads, *control);
        tvt::pair_terms<T>(prep, options, blas, data, *control);
    });
    return std::move(out);
}

template <class T>
py::dict permuted(const py::array& terms, const py::array& terms_t, const py::array& y, const py::array& p,
                  const tvt::Groups& groups, const tvt::Options& options, const IndexArray& perms,
                  const py::object& progress) {
    const py::ssize_t n = y.shape(0);
    for (const py::array* a : {&terms, &terms_t})
        if (a->dtype().kind() != 'f' || a->dtype().itemsize() != static_cast<py::ssize_t>(sizeof(T)) ||
            a->ndim() != 2 || a->shape(0) != n || a->shape(1) != n || !(a->flags() & py::array::c_style))
            throw py::value_error("terms and terms_t must be C-contiguous n x n matrices of the input dtype");
    if (perms.ndim() != 2 || perms.shape(1) != n) throw py::value_error("perms must have shape (k, n)");
    const auto yv = matrix_view<T>(y), pv = matrix_view<T>(p);
    const std::size_t k = static_cast<std::size_t>(perms.shape(0));
    py::array_t<std::uint64_t> passed(static_cast<py::ssize_t>(k)), tied(static_cast<py::ssize_t>(k));
    std::uint64_t* pp = passed.mutable_data();
    std::uint64_t* tp = tied.mutable_data();
    const T* x = static_cast<const T*>(terms.data());
    const T* xt = static_cast<const T*>(terms_t.data());
    const auto control = make_control(progress);
    // Safe without the GIL: raw pointers only, into arrays alive for the call.
    run_without_gil(*control, [&] {
        const auto prep = tvt::prepare<T>(yv, pv, options.metric, nullptr, options.n_threads, *control);
        tvt::count_permuted<T>(x, xt, prep, groups, options, perms.data(), k, pp, tp, *control);
    });
    py::dict out;
    out["passed"] = passed;
    out["tied"] = tied;
    return out;
}

}  // namespace

void register_two_vs_two(py::module_& m) {
    m.def(
        "_two_vs_two_all",
        [](const py::array& y, const py::array& p, const IntArray& gy, const IntArray& gp, const std::string& metric,
           double rtol, bool skip_same_target, int n_threads, const py::object& tile, const py::object& perm,
           const py::object& progress, py::ssize_t split, const py::object& centre, double max_abs) {
            check_matrices(y, p);
            const auto groups = groups_of(gy, gp, y.shape(0));
            auto options = options_of(metric, rtol, skip_same_target, n_threads, tile);
            if (split < 0 || split >= y.shape(0)) throw py::value_error("split must lie in [0, n)");
            options.split = split;
            py::array_t<double, py::array::c_style | py::array::forcecast> centre_array;
            tvt::Reference reference;
            reference.max_abs = max_abs;
            if (!centre.is_none()) {
                centre_array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(centre);
                if (!centre_array || centre_array.ndim() != 1 || centre_array.shape(0) != y.shape(1))
                    throw py::value_error("centre must have one value per column");
                reference.centre = centre_array.data();
            }
            IndexArray holder;
            const std::int64_t* pi = perm_of(perm, holder, y.shape(0));
            return dispatch_pair(y, p, [&](auto tag) {
                return all_pairs<typename decltype(tag)::type>(y, p, groups, options, pi, progress, reference);
            });
        },
        py::arg("y"), py::arg("p"), py::arg("group_y"), py::arg("group_p"), py::arg("metric"), py::arg("rtol"),
        py::arg("skip_same_target"), py::arg("n_threads"), py::arg("tile") = py::none(), py::arg("perm") = py::none(),
        py::arg("progress") = py::none(), py::arg("split") = 0, py::arg("centre") = py::none(),
        py::arg("max_abs") = -1.0,
        "2 vs 2 counts over all pairs: dict of passed, tied, skipped, sample_passed, sample_tied. split > 0 counts "
        "only the pairs i < split <= j; centre (the mean scaled target row) and max_abs (largest |coordinate| of "
        "y and p) prepare a row block of a larger problem as the whole.");

    m.def(
        "_two_vs_two_pairs",
        [](const py::array& y, const py::array& p, const IntArray& gy, const IntArray& gp, const IndexArray& first,
           const IndexArray& second, const std::string& metric, double rtol, bool skip_same_target, int n_threads,
           const py::object& perm, const py::object& progress) {
            check_matrices(y, p);
            const auto groups = groups_of(gy, gp, y.shape(0));
            if (first.ndim() != 1 || second.ndim() != 1 || first.shape(0) != second.shape(0))
                throw py::value_error("first and second must be 1-D of equal length");
            const auto options = options_of(metric, rtol, skip_same_target, n_threads, py::none());
            IndexArray holder;
            const std::int64_t* pi = perm_of(perm, holder, y.shape(0));
            return dispatch_pair(y, p, [&](auto tag) {
                return listed_pairs<typename decltype(tag)::type>(y, p, groups, options, first, second, pi, progress);
            });
        },
        py::arg("y"), py::arg("p"), py::arg("group_y"), py::arg("group_p"), py::arg("first"), py::arg("second"),
        py::arg("metric"), py::arg("rtol"), py::arg("skip_same_target"), py::arg("n_threads"),
        py::arg("perm") = py::none(), py::arg("progress") = py::none(),
        "2 vs 2 counts over the listed pairs (first[k], second[k]), as for _two_vs_two_all.");

    m.def(
        "_two_vs_two_terms",
        [](const py::array& y, const py::array& p, const std::string& metric, int n_threads, const py::object& tile,
           const py::object& progress) -> py::array {
            check_matrices(y, p);
            const auto options = options_of(metric, 0.0, false, n_threads, tile);
            return dispatch_pair(
                y, p, [&](auto tag) { return pair_terms<typename decltype(tag)::type>(y, p, options, progress); });
        },
        py::arg("y"), py::arg("p"), py::arg("metric"), py::arg("n_threads"), py::arg("tile") = py::none(),
        py::arg("progress") = py::none(),
        "The n x n matrix of comparison terms (<y_i, p_j> of the prepared rows, or -d(y_i, p_j)).");

    m.def(
        "_two_vs_two_permuted",
        [](const py::array& terms, const py::array& terms_t, const py::array& y, const py::array& p, const IntArray& gy,
           const IntArray& gp, const IndexArray& perms, const std::string& metric, double rtol, bool skip_same_target,
           int n_threads, const py::object& tile, const py::object& progress) {
            check_matrices(y, p);
            const auto groups = groups_of(gy, gp, y.shape(0));
            const auto options = options_of(metric, rtol, skip_same_target, n_threads, tile);
            return dispatch_pair(y, p, [&](auto tag) {
                return permuted<typename decltype(tag)::type>(terms, terms_t, y, p, groups, options, perms, progress);
            });
        },
        py::arg("terms"), py::arg("terms_t"), py::arg("y"), py::arg("p"), py::arg("group_y"), py::arg("group_p"),
        py::arg("perms"), py::arg("metric"), py::arg("rtol"), py::arg("skip_same_target"), py::arg("n_threads"),
        py::arg("tile") = py::none(), py::arg("progress") = py::none(),
        "Passed and tied counts (dict of two arrays) for each row of perms (y_i paired with p_perm[i]).");

    m.def(
        "_row_groups",
        [](const py::array& x, int n_threads) {
            if (x.ndim() != 2) throw py::value_error("x must be a 2-D array");
            py::array_t<std::int32_t> out(x.shape(0));
            std::int32_t* data = out.mutable_data();
            const auto control = make_control();
            dispatch_float_dtype(x, [&](auto tag) {
                using T = typename decltype(tag)::type;
                const auto view = matrix_view<T>(x);
                // Safe without the GIL: x is kept alive by the caller, out is owned here.
                run_without_gil(*control, [&] {
                    const auto ids = tvt::group_rows<T>(view, n_threads, *control);
                    std::copy(ids.begin(), ids.end(), data);
                });
            });
            return out;
        },
        py::arg("x"), py::arg("n_threads") = 1,
        "Group ids of identical rows: the index of the first row equal to each row.");

    m.def(
        "_two_vs_two_blas",
        [] {
            const tvt::Blas b = scipy_gemm();
            py::dict out;
            out["gemm"] = b.sgemm != nullptr && b.dgemm != nullptr;
            out["thread_control"] = b.threads.controllable();
            return out;
        },
        "Whether a BLAS gemm and a way to set its thread count were found (dict gemm, thread_control).");
}

}  // namespace pairmetrics::bindings
