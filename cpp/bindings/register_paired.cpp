#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "dtype_dispatch.hpp"
#include "paired.hpp"

namespace pairmetrics::bindings {

namespace {

// Names of the vector code levels, for the private `simd` switch.
constexpr std::pair<const char*, SimdLevel> kSimdNames[] = {{"auto", SimdLevel::automatic},
                                                            {"scalar", SimdLevel::scalar},
                                                            {"avx2", SimdLevel::avx2},
                                                            {"avx512", SimdLevel::avx512}};

SimdLevel simd_level(const std::string& name) {
    for (const auto& [text, level] : kSimdNames) {
        if (name != text) continue;
        if (!simd_supported(level)) throw py::value_error("simd='" + name + "' is not supported on this CPU");
        return level;
    }
    throw py::value_error("simd must be 'auto', 'scalar', 'avx2' or 'avx512', not '" + name + "'");
}

// The forcible levels this CPU runs (for tests).
std::vector<std::string> paired_simd_levels() {
    std::vector<std::string> out;
    for (const auto& [text, level] : kSimdNames)
        if (level != SimdLevel::automatic && simd_supported(level)) out.emplace_back(text);
    return out;
}

// Inputs were validated in Python (1-D, same length, finite, min_dist > 0,
// native byte order, canonical bools); scores and labels arrive in any real
// dtype, possibly strided, and are read in place.
py::object paired_counts_py(const py::array& scores, const py::array& labels, double min_dist, bool per_sample,
                            int n_threads, std::size_t few_labels, std::size_t few_classes, py::object progress,
                            const std::string& simd) {
    const SimdLevel level = simd_level(simd);
    if (scores.ndim() != 1 || labels.ndim() != 1 || scores.shape(0) != labels.shape(0))
        throw py::value_error("scores and labels must be 1-D arrays of the same length");
    if (!(min_dist > 0) || !std::isfinite(min_dist)) throw py::value_error("min_dist must be finite and > 0");
    const std::size_t n = static_cast<std::size_t>(scores.shape(0));

    py::array_t<std::uint64_t> rankable, tied, incorrect;
    PairedPerSample arrays;
    if (per_sample) {
        rankable = py::array_t<std::uint64_t>(n);
        tied = py::array_t<std::uint64_t>(n);
        incorrect = py::array_t<std::uint64_t>(n);
        arrays = {rankable.mutable_data(), tied.mutable_data(), incorrect.mutable_data()};
    }
    const auto control = make_control(std::move(progress));
    const PairedCounts counts = dispatch_real_dtype(scores, [&](auto score_tag) {
        using Score = typename decltype(score_tag)::type;
        const Score* score_data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t score_stride = element_stride<Score>(scores);
        return dispatch_real_dtype(labels, [&](auto label_tag) {
            using Label = typename decltype(label_tag)::type;
            const Label* label_data = static_cast<const Label*>(labels.data());
            const std::ptrdiff_t label_stride = element_stride<Label>(labels);
            // Safe without the GIL: only raw pointers into arrays that the
            // caller keeps alive are used from here on.
            return run_without_gil(*control, [&] {
                return paired_counts(score_data, score_stride, label_data, label_stride, n, min_dist, *control,
                                     per_sample ? &arrays : nullptr, n_threads, few_labels, few_classes, level);
            });
        });
    });
    py::tuple totals = py::make_tuple(counts.rankable, counts.correct, counts.tied, counts.incorrect);
    if (!per_sample) return std::move(totals);
    return py::make_tuple(totals, rankable, tied, incorrect);
}

}  // namespace

void register_paired(py::module_& m) {
    m.def("paired_counts", &paired_counts_py, py::arg("scores"), py::arg("labels"), py::arg("min_dist"),
          py::arg("per_sample") = false, py::arg("n_threads") = 1, py::arg("few_labels") = kDefaultFewLabels,
          py::arg("few_classes") = kDefaultFewClasses, py::arg("progress") = py::none(), py::arg("simd") = "auto",
          "(rankable, correct, tied, incorrect) pair counts; with per_sample also per-sample "
          "rankable, tied and incorrect counts. Scores and labels of any real dtype, compared "
          "exactly (integer labels in their own type). few_labels: most distinct labels for the "
          "Fenwick path (0 forces the merge path; for tests); few_classes: most distinct labels for the "
          "per-class path of the totals (0 turns it off; for tests); simd: 'auto', or a level of "
          "paired_simd_levels() to force its vector code (for tests).");
    m.def("paired_simd_levels", &paired_simd_levels,
          "Vector code levels of the paired kernel that this CPU runs ('scalar' always).");
}

}  // namespace pairmetrics::bindings
