// Helpers shared by the register_*() files.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "control.hpp"

namespace pairmetrics::bindings {

namespace py = pybind11;
using namespace pybind11::literals;  // "key"_a = value: the result dicts

// A Control whose callback (run only on the calling thread, at most every
// Control::kReportInterval) takes the GIL, honours Ctrl-C and calls an
// optional Python callable progress(done, total). A signal or an exception in
// the callable stops the kernel; run_without_gil rethrows it unchanged.
// Create and destroy it while holding the GIL (it owns a Python reference).
inline std::unique_ptr<Control> make_control(py::object progress = py::none()) {
    return std::make_unique<Control>([progress = std::move(progress)](std::uint64_t done, std::uint64_t total) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!progress.is_none()) progress(done, total);
    });
}

// Runs a kernel with the GIL released and turns a cancellation back into the
// exception that caused it (KeyboardInterrupt, or the progress callback's).
// Callers must have read every Python object they need (arrays converted,
// pointers taken) before calling this: the kernel then touches raw memory
// that the caller keeps alive, and only the control's callback takes the GIL.
template <class Kernel>
auto run_without_gil(Control& control, Kernel&& kernel) -> decltype(kernel()) {
    try {
        py::gil_scoped_release release;
        if constexpr (std::is_void_v<decltype(kernel())>) {
            kernel();
            control.finish();
        } else {
            auto result = kernel();
            control.finish();
            return result;
        }
    } catch (const Cancelled&) {
        control.rethrow_if_failed();
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyboardInterrupt, "computation cancelled");
        throw py::error_already_set();
    }
}

// Element stride of an array along an axis, for kernels that read strided
// input in place. Python hands over only aligned arrays whose strides are
// multiples of the item size (record fields are copied first).
template <class T>
std::ptrdiff_t element_stride(const py::array& array, py::ssize_t axis = 0) {
    const py::ssize_t bytes = array.strides(axis);
    if (bytes % static_cast<py::ssize_t>(sizeof(T)) != 0)
        throw py::value_error("internal error: array stride is not a multiple of its item size");
    return static_cast<std::ptrdiff_t>(bytes / static_cast<py::ssize_t>(sizeof(T)));
}

// A new numpy array holding a copy of values.
template <class T>
py::array_t<T> to_array(const std::vector<T>& values) {
    py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
    std::copy(values.begin(), values.end(), out.mutable_data());
    return out;
}

}  // namespace pairmetrics::bindings
