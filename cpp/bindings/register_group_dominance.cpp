#include <stdexcept>

#include "../group_dominance.hpp"
#include "common.hpp"

namespace pairmetrics::bindings {

namespace {

using Uints = py::array_t<std::uint32_t, py::array::c_style>;

// Contiguous values, uint32 groups and weights of one length (an empty weight
// array means weight 1 each).
template <class Value>
WeightedGroups<Value> weighted_groups(const py::array& values, const Uints& groups, const Uints& weights,
                                      const char* what) {
    const bool weighted = weights.ndim() == 1 && weights.shape(0) > 0;
    if (values.ndim() != 1 || groups.ndim() != 1 || values.shape(0) != groups.shape(0) ||
        (weighted && weights.shape(0) != values.shape(0)) ||
        (values.shape(0) > 0 && values.strides(0) != static_cast<py::ssize_t>(sizeof(Value))))
        throw py::value_error(std::string(what) + ": values, groups and weights must be 1-D of one length");
    return {static_cast<const Value*>(values.data()), groups.data(), weighted ? weights.data() : nullptr,
            static_cast<std::size_t>(values.shape(0))};
}

template <class Value>
GroupDominanceCounts count_dominance(const py::array& values, const Uints& groups, const Uints& weights,
                                     const py::array& thresholds, const Uints& query_groups, const Uints& query_weights,
                                     std::uint32_t n_groups) {
    const WeightedGroups<Value> points = weighted_groups<Value>(values, groups, weights, "points");
    const WeightedGroups<Value> queries = weighted_groups<Value>(thresholds, query_groups, query_weights, "queries");
    const auto control = make_control();
    try {
        // Safe without the GIL: raw pointers into arrays the caller keeps alive.
        return run_without_gil(*control, [&] { return group_dominance(points, queries, n_groups, *control); });
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
}

// Inputs were validated in Python (no NaN; groups below n_groups, which the
// kernel checks again so that it never reads out of bounds). Values and
// thresholds are both float64 or both uint64 (order keys).
py::dict group_dominance_py(const py::array& values, const Uints& groups, const Uints& weights,
                            const py::array& thresholds, const Uints& query_groups, const Uints& query_weights,
                            std::uint32_t n_groups) {
    const auto is = [](const py::array& a, auto tag) { return a.dtype().is(py::dtype::of<decltype(tag)>()); };
    GroupDominanceCounts c;
    if (is(values, double{}) && is(thresholds, double{}))
        c = count_dominance<double>(values, groups, weights, thresholds, query_groups, query_weights, n_groups);
    else if (is(values, std::uint64_t{}) && is(thresholds, std::uint64_t{}))
        c = count_dominance<std::uint64_t>(values, groups, weights, thresholds, query_groups, query_weights, n_groups);
    else
        throw py::type_error("values and thresholds must both be float64 or both uint64");
    return py::dict("lower"_a = c.lower, "same"_a = c.same, "higher"_a = c.higher);
}

}  // namespace

void register_group_dominance(py::module_& m) {
    m.def("group_dominance", &group_dominance_py, py::arg("values").noconvert(), py::arg("groups").noconvert(),
          py::arg("weights").noconvert(), py::arg("thresholds").noconvert(), py::arg("query_groups").noconvert(),
          py::arg("query_weights").noconvert(), py::arg("n_groups"),
          "Values and thresholds both float64, or both uint64 (order keys). "
          "dict lower, same, higher: over the pairs (point i, query j) with values[i] >= thresholds[j], "
          "weighted by weights[i] * query_weights[j] (empty weights: 1 each), the weight of those whose "
          "groups[i] is below, equal to and above query_groups[j].");
}

}  // namespace pairmetrics::bindings
