// The rankable-pair rule (rankable.hpp) for the Python layers that count
// pairs outside the paired kernel: the bootstrap's prefix bounds and the Dask
// layer's label thresholds.
#include <optional>
#include <string>
#include <vector>

#include "../key_sort.hpp"
#include "../rankable.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"

namespace pairmetrics::bindings {

namespace {

// Labels of any real dtype, 1-D and contiguous (the callers sort them first).
template <class T>
const T* rankable_input(const py::array& labels, const char* name) {
    if (labels.ndim() != 1 || (labels.size() > 0 && labels.strides(0) != static_cast<py::ssize_t>(sizeof(T))))
        throw py::value_error(std::string("internal error: ") + name + " must be a contiguous 1-D array");
    return static_cast<const T*>(labels.data());
}

py::array_t<std::int64_t> rankable_bounds_py(const py::array& sorted_labels, double min_dist) {
    const std::size_t n = static_cast<std::size_t>(sorted_labels.size());
    py::array_t<std::int64_t> out(static_cast<py::ssize_t>(n));
    std::int64_t* bound = out.mutable_data();
    dispatch_real_dtype(sorted_labels, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* labels = rankable_input<T>(sorted_labels, "sorted_labels");
        // Real labels compare as doubles, integers exactly (as their order keys).
        using L = std::conditional_t<std::is_floating_point_v<T>, double, std::uint64_t>;
        std::vector<L> values(n);
        for (std::size_t p = 0; p < n; ++p) {
            if constexpr (std::is_floating_point_v<T>)
                values[p] = static_cast<double>(labels[p]);
            else
                values[p] = order_key(labels[p]);
            if (p > 0 && !(values[p - 1] <= values[p]))
                throw py::value_error("internal error: labels must be sorted, without NaN");
        }
        py::gil_scoped_release release;
        rankable_bounds(values.data(), n, min_dist, bound);
    });
    return out;
}

py::array_t<double> real_thresholds(const py::array_t<double, py::array::c_style | py::array::forcecast>& labels,
                                    double min_dist) {
    const std::size_t n = static_cast<std::size_t>(labels.size());
    py::array_t<double> out(static_cast<py::ssize_t>(n));
    const double* y = labels.data();
    double* t = out.mutable_data();
    {
        py::gil_scoped_release release;
        for (std::size_t i = 0; i < n; ++i) t[i] = real_threshold(y[i], min_dist);
    }
    return out.reshape(std::vector<py::ssize_t>(labels.shape(), labels.shape() + labels.ndim()));
}

py::array_t<std::uint64_t> integer_thresholds(const py::array_t<std::uint64_t, py::array::c_style>& keys,
                                              double min_dist, std::uint64_t highest) {
    if (highest == ~std::uint64_t{0}) throw py::value_error("internal error: highest must be below 2**64 - 1");
    const std::size_t n = static_cast<std::size_t>(keys.size());
    py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(n));
    const std::uint64_t* y = keys.data();
    std::uint64_t* t = out.mutable_data();
    const std::optional<IntegerGap> gap = integer_gap(min_dist);
    {
        py::gil_scoped_release release;
        for (std::size_t i = 0; i < n; ++i) t[i] = gap ? integer_threshold(y[i], *gap, highest) : highest + 1;
    }
    return out.reshape(std::vector<py::ssize_t>(keys.shape(), keys.shape() + keys.ndim()));
}

// Real labels (any real dtype but uint64, as doubles) without `highest`;
// integer labels as uint64 order keys, with `highest`.
py::array rankable_thresholds_py(const py::array& labels, double min_dist, std::optional<std::uint64_t> highest) {
    const bool keys = labels.dtype().is(py::dtype::of<std::uint64_t>());
    if (keys != highest.has_value())
        throw py::value_error("internal error: highest is given exactly for uint64 order keys");
    if (keys)
        return integer_thresholds(py::array_t<std::uint64_t, py::array::c_style>::ensure(labels), min_dist, *highest);
    return real_thresholds(py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(labels), min_dist);
}

}  // namespace

void register_rankable(py::module_& m) {
    m.def("rankable_bounds", &rankable_bounds_py, py::arg("sorted_labels").noconvert(), py::arg("min_dist"),
          "bound[p]: how many sorted labels q are at least min_dist below labels[p] (real labels: their "
          "difference in double precision; integer labels: exactly).");
    m.def("rankable_thresholds", &rankable_thresholds_py, py::arg("labels"), py::arg("min_dist"),
          py::arg("highest") = py::none(),
          "Real labels: t[i] is the smallest double t with fl(t - labels[i]) >= min_dist (+inf if none). "
          "Integer labels as uint64 order keys up to `highest` (< 2**64 - 1): the smallest key t with "
          "t - labels[i] >= min_dist, or highest + 1 if none. Either way the labels rankable above labels[i] "
          "are those >= t[i].");
}

}  // namespace pairmetrics::bindings
