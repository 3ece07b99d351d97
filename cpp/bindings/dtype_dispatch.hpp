// Calls a generic lambda with a value of the array's element type, so a
// kernel can be instantiated for the dtype the user already has (no copy).
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pairmetrics::bindings {

template <class T>
struct Tag {
    using type = T;
};

// Every real numeric dtype: bool, signed and unsigned integers, float32/64.
template <class Visitor>
decltype(auto) dispatch_real_dtype(const pybind11::array& array, Visitor&& visit) {
    namespace py = pybind11;
    const py::dtype dtype = array.dtype();
    if (dtype.is(py::dtype::of<double>())) return visit(Tag<double>{});
    if (dtype.is(py::dtype::of<float>())) return visit(Tag<float>{});
    if (dtype.is(py::dtype::of<std::int64_t>())) return visit(Tag<std::int64_t>{});
    if (dtype.is(py::dtype::of<std::int32_t>())) return visit(Tag<std::int32_t>{});
    if (dtype.is(py::dtype::of<std::int16_t>())) return visit(Tag<std::int16_t>{});
    if (dtype.is(py::dtype::of<std::int8_t>())) return visit(Tag<std::int8_t>{});
    if (dtype.is(py::dtype::of<std::uint64_t>())) return visit(Tag<std::uint64_t>{});
    if (dtype.is(py::dtype::of<std::uint32_t>())) return visit(Tag<std::uint32_t>{});
    if (dtype.is(py::dtype::of<std::uint16_t>())) return visit(Tag<std::uint16_t>{});
    if (dtype.is(py::dtype::of<std::uint8_t>())) return visit(Tag<std::uint8_t>{});
    if (dtype.is(py::dtype::of<bool>())) return visit(Tag<bool>{});
    throw py::type_error("unsupported dtype " + std::string(py::str(dtype)));
}

}  // namespace pairmetrics::bindings
