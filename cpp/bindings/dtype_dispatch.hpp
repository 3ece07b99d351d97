// Calls a generic lambda with a value of the array's element type, so a
// kernel can be instantiated for the dtype the user already has (no copy).
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <string>

namespace pairmetrics::bindings {

template <class T>
struct Tag {
    using type = T;
};

// Every real numeric dtype: bool, signed and unsigned integers, float32/64.
// Dispatch is on the dtype's kind and size (np.longlong is int64 too), never
// on the identity of its type object. Python converts other byte orders and
// canonicalises bools (one byte, 0 or 1) before any call.
template <class Visitor>
decltype(auto) dispatch_real_dtype(const pybind11::array& array, Visitor&& visit) {
    namespace py = pybind11;
    const py::dtype dtype = array.dtype();
    const char kind = dtype.kind();
    const py::ssize_t size = dtype.itemsize();
    const std::uint16_t one = 1;
    const bool little_endian = *reinterpret_cast<const unsigned char*>(&one) == 1;
    if (dtype.byteorder() == (little_endian ? '>' : '<'))
        throw py::type_error("internal error: array of non-native byte order reached a kernel");
    if (kind == 'f' && size == 8) return visit(Tag<double>{});
    if (kind == 'f' && size == 4) return visit(Tag<float>{});
    if (kind == 'i' && size == 8) return visit(Tag<std::int64_t>{});
    if (kind == 'i' && size == 4) return visit(Tag<std::int32_t>{});
    if (kind == 'i' && size == 2) return visit(Tag<std::int16_t>{});
    if (kind == 'i' && size == 1) return visit(Tag<std::int8_t>{});
    if (kind == 'u' && size == 8) return visit(Tag<std::uint64_t>{});
    if (kind == 'u' && size == 4) return visit(Tag<std::uint32_t>{});
    if (kind == 'u' && size == 2) return visit(Tag<std::uint16_t>{});
    if (kind == 'u' && size == 1) return visit(Tag<std::uint8_t>{});
    if (kind == 'b' && size == 1) return visit(Tag<bool>{});
    throw py::type_error("internal error: unsupported dtype " + std::string(py::str(dtype)));
}

// float32 or float64 only, for kernels that compute in floating point.
template <class Visitor>
decltype(auto) dispatch_float_dtype(const pybind11::array& array, Visitor&& visit) {
    namespace py = pybind11;
    const py::dtype dtype = array.dtype();
    if (dtype.kind() == 'f' && dtype.itemsize() == 8) return visit(Tag<double>{});
    if (dtype.kind() == 'f' && dtype.itemsize() == 4) return visit(Tag<float>{});
    throw py::type_error("internal error: expected float32 or float64, got " + std::string(py::str(dtype)));
}

}  // namespace pairmetrics::bindings
