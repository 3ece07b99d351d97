#include <pybind11/stl.h>

#include "common.hpp"
#include "dtype_dispatch.hpp"
#include "paired.hpp"

namespace pairmetrics::bindings {

namespace {

// Inputs were validated in Python (1-D, same length, finite, min_dist > 0);
// labels arrive as float64, scores in any real dtype, both possibly strided.
py::object paired_counts_py(const py::array& scores, const py::array_t<double>& labels, double min_dist,
                            bool per_sample, int n_threads,
                            std::size_t few_labels) {
    const std::size_t n = static_cast<std::size_t>(scores.shape(0));
    if (scores.ndim() != 1 || labels.ndim() != 1 || static_cast<std::size_t>(labels.shape(0)) != n)
        throw py::value_error("scores and labels must be 1-D arrays of the same length");
    const double* label_data = labels.data();
    const std::ptrdiff_t label_stride = element_stride<double>(labels);

    py::array_t<std::uint64_t> rankable, tied, incorrect;
    PairedPerSample arrays;
    if (per_sample) {
        rankable = py::array_t<std::uint64_t>(n);
        tied = py::array_t<std::uint64_t>(n);
        incorrect = py::array_t<std::uint64_t>(n);
        arrays = {rankable.mutable_data(), tied.mutable_data(), incorrect.mutable_data()};
    }
    const auto control = make_control();
    const PairedCounts counts = dispatch_real_dtype(scores, [&](auto tag) {
        using Score = typename decltype(tag)::type;
        const Score* data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t stride = element_stride<Score>(scores);
        // Safe without the GIL: only raw pointers into arrays that the caller
        // keeps alive are used from here on.
        return run_without_gil(*control, [&] {
            return paired_counts(data, stride, label_data, label_stride, n, min_dist,
                                 per_sample ? &arrays : nullptr, n_threads, few_labels);
        });
    });
    py::tuple totals = py::make_tuple(counts.rankable, counts.correct, counts.tied, counts.incorrect);
    if (!per_sample) return std::move(totals);
    return py::make_tuple(totals, rankable, tied, incorrect);
}

}  // namespace

void register_paired(py::module_& m) {
    m.def("paired_counts", &paired_counts_py, py::arg("scores"), py::arg("labels").noconvert(),
          py::arg("min_dist"), py::arg("per_sample") = false, py::arg("n_threads") = 1,
          py::arg("few_labels") = kDefaultFewLabels,
          "(rankable, correct, tied, incorrect) pair counts; with per_sample also per-sample "
          "rankable, tied and incorrect counts. few_labels: most distinct labels for the "
          "Fenwick path (0 forces the merge path; for tests).");
}

}  // namespace pairmetrics::bindings
