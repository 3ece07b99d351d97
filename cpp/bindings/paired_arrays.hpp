// The per-sample arrays of the paired counts, shared by the plain and the
// grouped bindings.
#pragma once

#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>

#include "paired.hpp"

namespace pairmetrics::bindings {

namespace py = pybind11;

// rankable, tied and incorrect (n entries each), allocated only when wanted.
struct PairedArrays {
    py::array_t<std::uint64_t> rankable, tied, incorrect;
    PairedPerSample view;
    bool wanted;

    PairedArrays(bool wanted_, std::size_t n) : wanted(wanted_) {
        if (!wanted) return;
        rankable = py::array_t<std::uint64_t>(n);
        tied = py::array_t<std::uint64_t>(n);
        incorrect = py::array_t<std::uint64_t>(n);
        view = {rankable.mutable_data(), tied.mutable_data(), incorrect.mutable_data()};
    }
    // The kernel's output argument: null when not wanted.
    PairedPerSample* out() { return wanted ? &view : nullptr; }
};

}  // namespace pairmetrics::bindings
