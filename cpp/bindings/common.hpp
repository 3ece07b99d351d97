// Helpers shared by the register_*() files.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>

#include "control.hpp"

namespace pairmetrics::bindings {

namespace py = pybind11;

// A Control whose tick re-acquires the GIL to honour Ctrl-C and to call an
// optional Python callback progress(done, total). On a signal, or an exception
// in the callback, the Python error stays set and tick() makes the kernel throw
// Cancelled; run_without_gil turns that back into the Python exception.
// Create and destroy it while holding the GIL (it owns a Python reference).
inline Control make_control(py::object progress = py::none()) {
    return Control([progress = std::move(progress)](std::uint64_t done, std::uint64_t total) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) return false;
        if (!progress.is_none()) {
            try {
                progress(done, total);
            } catch (py::error_already_set& error) {
                error.restore();
                return false;
            }
        }
        return true;
    });
}

// Runs a kernel with the GIL released. Callers must have read every Python
// object they need (arrays converted, pointers taken) before calling this.
template <class Kernel>
auto run_without_gil(Kernel&& kernel) -> decltype(kernel()) {
    try {
        py::gil_scoped_release release;
        return kernel();
    } catch (const Cancelled&) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyboardInterrupt, "computation cancelled");
        throw py::error_already_set();
    }
}

// Element stride of an array along an axis, for kernels that read strided
// input in place instead of copying it.
template <class T>
std::ptrdiff_t element_stride(const py::array& array, py::ssize_t axis = 0) {
    return static_cast<std::ptrdiff_t>(array.strides(axis) / static_cast<py::ssize_t>(sizeof(T)));
}

}  // namespace pairmetrics::bindings
