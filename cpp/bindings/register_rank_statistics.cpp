#include <string>

#include "../mann_whitney_exact.hpp"
#include "../rank_correlation.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"

namespace pairmetrics::bindings {

namespace {

// An exact 128-bit integer as a Python int.
py::int_ to_python(i128 value) {
    const bool negative = value < 0;
    i128 magnitude = negative ? -value : value;
    std::string digits;
    do {
        digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
        magnitude = magnitude / 10;
    } while (magnitude != 0);
    if (negative) digits.insert(digits.begin(), '-');
    return py::int_(py::reinterpret_steal<py::object>(PyLong_FromString(digits.c_str(), nullptr, 10)));
}

py::dict ties_to_python(const TieSums& t) {
    return py::dict("distinct"_a = t.distinct, "pairs"_a = t.pairs, "cubic"_a = to_python(t.cubic),
                    "spread"_a = to_python(t.spread), "cube_excess"_a = to_python(t.cube_excess));
}

// Inputs were validated in Python: 1-D arrays of a real dtype, native byte order, no NaN.
KeyColumn column_of(const py::array& values, const char* name) {
    if (values.ndim() != 1) throw py::value_error(std::string(name) + " must be 1-D");
    return dispatch_real_dtype(values, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return KeyColumn::of(static_cast<const T*>(values.data()), element_stride<T>(values));
    });
}

std::size_t paired_length(const py::array& x, const py::array& y) {
    if (x.ndim() != 1 || y.ndim() != 1 || x.shape(0) != y.shape(0))
        throw py::value_error("x and y must be 1-D arrays of the same length");
    return static_cast<std::size_t>(x.shape(0));
}

py::dict kendall_counts_py(const py::array& x, const py::array& y, int n_threads) {
    const std::size_t n = paired_length(x, y);
    const KeyColumn cx = column_of(x, "x"), cy = column_of(y, "y");
    const auto control = make_control();
    const KendallCounts c = run_without_gil(*control, [&] { return kendall_counts(cx, cy, n, n_threads, *control); });
    return py::dict("discordant"_a = c.discordant, "joint_pairs"_a = c.joint_pairs, "x_ties"_a = ties_to_python(c.x),
                    "y_ties"_a = ties_to_python(c.y));
}

py::dict spearman_sums_py(const py::array& x, const py::array& y, int n_threads) {
    const std::size_t n = paired_length(x, y);
    const KeyColumn cx = column_of(x, "x"), cy = column_of(y, "y");
    const auto control = make_control();
    const SpearmanSums s = run_without_gil(*control, [&] { return spearman_sums(cx, cy, n, n_threads, *control); });
    return py::dict("cross"_a = to_python(s.cross), "x_ties"_a = ties_to_python(s.x), "y_ties"_a = ties_to_python(s.y));
}

py::dict average_ranks_py(const py::array& values) {
    const KeyColumn column = column_of(values, "values");
    const std::size_t n = static_cast<std::size_t>(values.shape(0));
    py::array_t<std::uint64_t> doubled(static_cast<py::ssize_t>(n));
    std::uint64_t* out = doubled.mutable_data();
    const auto control = make_control();
    const TieSums ties = run_without_gil(*control, [&] { return doubled_average_ranks(column, n, out, *control); });
    return py::dict("doubled_ranks"_a = doubled, "ties"_a = ties_to_python(ties));
}

py::dict dense_ranks_py(const py::array& values) {
    const KeyColumn column = column_of(values, "values");
    const std::size_t n = static_cast<std::size_t>(values.shape(0));
    py::array_t<std::uint32_t> ranks(static_cast<py::ssize_t>(n));
    std::uint32_t* out = ranks.mutable_data();
    const auto control = make_control();
    const TieSums ties = run_without_gil(*control, [&] { return dense_ranks(column, n, out, *control); });
    return py::dict("ranks"_a = ranks, "ties"_a = ties_to_python(ties));
}

const double* optional_weights(const py::object& weights, py::array_t<double>& holder, std::size_t n,
                               const char* name) {
    if (weights.is_none()) return nullptr;
    holder = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(weights);
    if (!holder || holder.ndim() != 1 || static_cast<std::size_t>(holder.shape(0)) != n)
        throw py::value_error(std::string(name) + " must be a 1-D float64 array of the inputs' length");
    return holder.data();
}

double weighted_tau_py(const py::array& x, const py::array& y, const py::object& element_weights,
                       const py::object& rank_weights, bool additive) {
    const std::size_t n = paired_length(x, y);
    const KeyColumn cx = column_of(x, "x"), cy = column_of(y, "y");
    py::array_t<double> element_holder, rank_holder;
    const double* ew = optional_weights(element_weights, element_holder, n, "element_weights");
    const double* rw = optional_weights(rank_weights, rank_holder, n, "rank_weights");
    const auto control = make_control();
    return run_without_gil(*control, [&] { return weighted_tau(cx, cy, n, ew, rw, additive, *control); });
}

py::array_t<double> kendall_null_pmf_py(std::uint64_t n, std::uint64_t c) {
    const auto control = make_control();
    return to_array(run_without_gil(*control, [&] { return kendall_null_pmf(n, c, *control); }));
}

py::dict mann_whitney_ranks_py(const py::array& x, const py::array& y, int n_threads, bool with_groups) {
    const KeyColumn cx = column_of(x, "x"), cy = column_of(y, "y");
    const std::size_t m = static_cast<std::size_t>(x.shape(0)), n = static_cast<std::size_t>(y.shape(0));
    std::vector<std::uint64_t> groups;
    const auto control = make_control();
    const MannWhitneyRanks r = run_without_gil(*control, [&] {
        return mann_whitney_ranks(cx, m, cy, n, n_threads, *control, with_groups ? &groups : nullptr);
    });
    return py::dict("doubled_u"_a = r.doubled_u, "tie_cube_excess"_a = to_python(r.tie_cube_excess),
                    "max_tie"_a = r.max_tie, "groups"_a = to_array(groups));
}

py::array_t<double> mann_whitney_null_pmf_py(std::uint64_t m, std::uint64_t n, std::uint64_t max_u) {
    const auto control = make_control();
    return to_array(run_without_gil(*control, [&] { return mann_whitney_null_pmf(m, n, max_u, *control); }));
}

double mann_whitney_conditional_cdf_py(
    const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& sizes, std::uint64_t m,
    std::uint64_t max_doubled_u) {
    const std::vector<std::uint64_t> groups(sizes.data(), sizes.data() + sizes.size());
    const auto control = make_control();
    return run_without_gil(*control, [&] { return mann_whitney_conditional_cdf(groups, m, max_doubled_u, *control); });
}

}  // namespace

void register_rank_statistics(py::module_& m) {
    m.def("kendall_counts", &kendall_counts_py, py::arg("x"), py::arg("y"), py::arg("n_threads") = 1,
          "dict discordant, joint_pairs, x_ties, y_ties: Kendall's pair counts of two real arrays; each ties dict is "
          "distinct, pairs (tied), cubic (sum t(t-1)(t-2)), spread (sum t(t-1)(2t+5)), cube_excess (sum t^3-t) over "
          "groups of t tied values.");
    m.def("spearman_sums", &spearman_sums_py, py::arg("x"), py::arg("y"), py::arg("n_threads") = 1,
          "dict cross, x_ties, y_ties: the exact sum of products of doubled average ranks, and the tie sums.");
    m.def("average_ranks", &average_ranks_py, py::arg("values"),
          "dict doubled_ranks, ties: twice the 1-based average rank of each value (uint64), and the tie sums.");
    m.def("dense_ranks", &dense_ranks_py, py::arg("values"),
          "dict ranks, ties: dense 0-based ranks (uint32; equal values share one), and the tie sums.");
    m.def("weighted_tau", &weighted_tau_py, py::arg("x"), py::arg("y"), py::arg("element_weights") = py::none(),
          py::arg("rank_weights") = py::none(), py::arg("additive") = true,
          "Vigna's weighted tau with x the ranking variable (NaN when x or y is constant); weights per element, "
          "or per rank (rank 0: largest x, ties by largest y), default 1 / (rank + 1).");
    m.def("kendall_null_pmf", &kendall_null_pmf_py, py::arg("n"), py::arg("c"),
          "P(D = k), k = 0..c: the null distribution of the inversions of a random permutation of n.");
    m.def("mann_whitney_ranks", &mann_whitney_ranks_py, py::arg("x"), py::arg("y"), py::arg("n_threads") = 1,
          py::arg("with_groups") = false,
          "dict doubled_u, tie_cube_excess, max_tie, groups: 2U of x, sum t^3 - t over tied pooled groups, the "
          "largest group, and (with_groups) the group sizes in ascending order of value.");
    m.def("mann_whitney_null_pmf", &mann_whitney_null_pmf_py, py::arg("m"), py::arg("n"), py::arg("max_u"),
          "P(U = u), u = 0..max_u: the null distribution of U for samples of m and n without ties.");
    m.def("mann_whitney_conditional_cdf", &mann_whitney_conditional_cdf_py, py::arg("group_sizes"), py::arg("m"),
          py::arg("max_doubled_u"),
          "P(2U <= max_doubled_u) of the first m pooled values' sample, given the groups of ties (sizes in "
          "ascending order of value).");
}

}  // namespace pairmetrics::bindings
