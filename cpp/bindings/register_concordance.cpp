#include "../concordance.hpp"
#include "common.hpp"

namespace pairmetrics::bindings {

namespace {

// Inputs were validated in Python: 1-D float64 times and estimates of one
// length (no NaN), events as uint8 (0/1), tied_tol >= 0.
py::tuple concordance_counts_py(const py::array_t<double>& times, const py::array_t<std::uint8_t>& events,
                                const py::array_t<double>& estimates, double tied_tol) {
    const std::size_t n = static_cast<std::size_t>(times.shape(0));
    if (times.ndim() != 1 || events.ndim() != 1 || estimates.ndim() != 1 ||
        static_cast<std::size_t>(events.shape(0)) != n || static_cast<std::size_t>(estimates.shape(0)) != n)
        throw py::value_error("times, events and estimates must be 1-D arrays of the same length");
    if (n >= (std::size_t{1} << 31)) throw py::value_error("at most 2**31 - 1 samples");
    const double* t = times.data();
    const std::uint8_t* e = events.data();
    const double* s = estimates.data();
    const std::ptrdiff_t ts = element_stride<double>(times), es = element_stride<std::uint8_t>(events),
                         ss = element_stride<double>(estimates);
    const auto control = make_control();
    // Safe without the GIL: raw pointers into arrays the caller keeps alive.
    const ConcordanceCounts c =
        run_without_gil(*control, [&] { return concordance_counts(t, ts, e, es, s, ss, n, tied_tol, *control); });
    return py::make_tuple(c.below, c.tied, c.above, c.tied_time);
}

}  // namespace

void register_concordance(py::module_& m) {
    m.def("concordance_counts", &concordance_counts_py, py::arg("times").noconvert(),
          py::arg("events").noconvert(), py::arg("estimates").noconvert(), py::arg("tied_tol") = 0.0,
          "(below, tied, above, tied_time) over comparable pairs (event i, later or same-time "
          "censored j): estimate_j below, tied with or above estimate_i.");
}

}  // namespace pairmetrics::bindings
