#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "dtype_dispatch.hpp"
#include "paired_arrays.hpp"
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
// dtype, possibly strided, and are read in place. Runs kernel(scores,
// score_stride, labels, label_stride, n, control) without the GIL.
template <class Kernel>
PairedCounts run_paired(const py::array& scores, const py::array& labels, double min_dist, py::object progress,
                        Kernel&& kernel) {
    if (scores.ndim() != 1 || labels.ndim() != 1 || scores.shape(0) != labels.shape(0))
        throw py::value_error("scores and labels must be 1-D arrays of the same length");
    if (!(min_dist > 0) || !std::isfinite(min_dist)) throw py::value_error("min_dist must be finite and > 0");
    const std::size_t n = static_cast<std::size_t>(scores.shape(0));
    const auto control = make_control(std::move(progress));
    return dispatch_real_dtype(scores, [&](auto score_tag) {
        using Score = typename decltype(score_tag)::type;
        const Score* score_data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t score_stride = element_stride<Score>(scores);
        return dispatch_real_dtype(labels, [&](auto label_tag) {
            using Label = typename decltype(label_tag)::type;
            const Label* label_data = static_cast<const Label*>(labels.data());
            const std::ptrdiff_t label_stride = element_stride<Label>(labels);
            // Safe without the GIL: only raw pointers into arrays that the
            // caller keeps alive are used from here on.
            return run_without_gil(
                *control, [&] { return kernel(score_data, score_stride, label_data, label_stride, n, *control); });
        });
    });
}

py::dict totals_dict(const PairedCounts& counts) {
    return py::dict("rankable"_a = counts.rankable, "correct"_a = counts.correct, "tied"_a = counts.tied,
                    "incorrect"_a = counts.incorrect);
}

py::dict paired_counts_py(const py::array& scores, const py::array& labels, double min_dist, bool per_sample,
                          int n_threads, std::size_t few_labels, std::size_t few_classes, py::object progress,
                          const std::string& simd) {
    const SimdLevel level = simd_level(simd);
    const std::size_t n = static_cast<std::size_t>(scores.ndim() == 1 ? scores.shape(0) : 0);
    PairedArrays arrays(per_sample, n);
    const PairedCounts counts = run_paired(
        scores, labels, min_dist, std::move(progress),
        [&](const auto* s, std::ptrdiff_t ss, const auto* y, std::ptrdiff_t ys, std::size_t size, Control& control) {
            return paired_counts(s, ss, y, ys, size, min_dist, control, arrays.out(), n_threads, few_labels,
                                 few_classes, level);
        });
    py::dict result = totals_dict(counts);
    if (per_sample) {
        result["sample_rankable"] = arrays.rankable;
        result["sample_tied"] = arrays.tied;
        result["sample_incorrect"] = arrays.incorrect;
    }
    return result;
}

// An exact 128-bit sum as a Python int.
py::int_ exact_int(PairedSum value) {
    const py::int_ high(static_cast<std::uint64_t>(value >> 64)), low(static_cast<std::uint64_t>(value));
    return py::reinterpret_steal<py::int_>(PyNumber_Or(
        py::reinterpret_steal<py::object>(PyNumber_Lshift(high.ptr(), py::int_(64).ptr())).ptr(), low.ptr()));
}

py::dict moment_dict(const PairedMomentSums& m) {
    return py::dict("samples"_a = m.samples, "r"_a = exact_int(m.r), "q"_a = exact_int(m.q), "rr"_a = exact_int(m.rr),
                    "qr"_a = exact_int(m.qr), "qq"_a = exact_int(m.qq));
}

py::dict paired_moments_py(const py::array& scores, const py::array& labels, double min_dist, int n_threads,
                           std::size_t few_labels, std::size_t few_classes, py::object progress,
                           const std::string& simd) {
    const SimdLevel level = simd_level(simd);
    PairedMoments moments;
    const PairedCounts counts = run_paired(
        scores, labels, min_dist, std::move(progress),
        [&](const auto* s, std::ptrdiff_t ss, const auto* y, std::ptrdiff_t ys, std::size_t size, Control& control) {
            return paired_moments(s, ss, y, ys, size, min_dist, control, moments, n_threads, few_labels, few_classes,
                                  level);
        });
    py::dict result = totals_dict(counts);
    result["lowest"] = moment_dict(moments.lowest);
    result["highest"] = moment_dict(moments.highest);
    result["others"] = moment_dict(moments.others);
    return result;
}

}  // namespace

void register_paired(py::module_& m) {
    m.def("paired_counts", &paired_counts_py, py::arg("scores"), py::arg("labels"), py::arg("min_dist"),
          py::arg("per_sample") = false, py::arg("n_threads") = 1, py::arg("few_labels") = kDefaultFewLabels,
          py::arg("few_classes") = kDefaultFewClasses, py::arg("progress") = py::none(), py::arg("simd") = "auto",
          "dict rankable, correct, tied, incorrect: pair counts; with per_sample also sample_rankable, "
          "sample_tied and sample_incorrect, the per-sample counts. Scores and labels of any real dtype, compared "
          "exactly (integer labels in their own type). few_labels: most distinct labels for the "
          "Fenwick path (0 forces the merge path; for tests); few_classes: most distinct labels for the "
          "per-class path of the totals (0 turns it off; for tests); simd: 'auto', or a level of "
          "paired_simd_levels() to force its vector code (for tests).");
    m.def("paired_moments", &paired_moments_py, py::arg("scores"), py::arg("labels"), py::arg("min_dist"),
          py::arg("n_threads") = 1, py::arg("few_labels") = kDefaultFewLabels,
          py::arg("few_classes") = kDefaultFewClasses, py::arg("progress") = py::none(), py::arg("simd") = "auto",
          "dict of the totals of paired_counts and lowest, highest, others: for the samples with the "
          "smallest label, those with the largest (none when all labels are equal) and the rest, dicts of the exact "
          "sums samples, r, q, rr, qr, qq of their per-sample rankable counts r and q = "
          "2 * correct + tied. Arguments as in paired_counts.");
    m.def("paired_simd_levels", &paired_simd_levels,
          "Vector code levels of the paired kernel that this CPU runs ('scalar' always).");
}

}  // namespace pairmetrics::bindings
