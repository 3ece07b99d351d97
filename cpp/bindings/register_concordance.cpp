#include "../concordance.hpp"
#include "common.hpp"

#include <memory>

namespace pairmetrics::bindings {

namespace {

struct Inputs {
    const double* times;
    const std::uint8_t* events;
    const double* estimates;
    std::ptrdiff_t time_stride, event_stride, estimate_stride;
    std::size_t n;
};

// Inputs were validated in Python: 1-D float64 times and estimates of one
// length (no NaN), events as uint8 (0/1), tied_tol >= 0.
Inputs read_inputs(const py::array_t<double>& times, const py::array_t<std::uint8_t>& events,
                   const py::array_t<double>& estimates) {
    const std::size_t n = static_cast<std::size_t>(times.shape(0));
    if (times.ndim() != 1 || events.ndim() != 1 || estimates.ndim() != 1 ||
        static_cast<std::size_t>(events.shape(0)) != n || static_cast<std::size_t>(estimates.shape(0)) != n)
        throw py::value_error("times, events and estimates must be 1-D arrays of the same length");
    if (n >= (std::size_t{1} << 31)) throw py::value_error("at most 2**31 - 1 samples");
    return {times.data(),
            events.data(),
            estimates.data(),
            element_stride<double>(times),
            element_stride<std::uint8_t>(events),
            element_stride<double>(estimates),
            n};
}

// The counts as a dict; with event_pairs also the event pairs tied in time and in both.
py::dict counts_dict(const ConcordanceCounts& c, bool event_pairs) {
    py::dict d("below"_a = c.below, "tied"_a = c.tied, "above"_a = c.above, "tied_time"_a = c.tied_time);
    if (event_pairs) {
        d["event_pairs_tied_time"] = c.event_pairs_tied_time;
        d["event_pairs_tied_both"] = c.event_pairs_tied_both;
    }
    return d;
}

py::dict concordance_counts_py(const py::array_t<double>& times, const py::array_t<std::uint8_t>& events,
                               const py::array_t<double>& estimates, double tied_tol) {
    const Inputs in = read_inputs(times, events, estimates);
    const auto control = make_control();
    // Safe without the GIL: raw pointers into arrays the caller keeps alive.
    const ConcordanceCounts c = run_without_gil(*control, [&] {
        return concordance_counts(in.times, in.time_stride, in.events, in.event_stride, in.estimates,
                                  in.estimate_stride, in.n, tied_tol, *control);
    });
    return counts_dict(c, false);
}

py::dict concordance_per_sample_py(const py::array_t<double>& times, const py::array_t<std::uint8_t>& events,
                                   const py::array_t<double>& estimates, double tied_tol) {
    const Inputs in = read_inputs(times, events, estimates);
    py::array_t<std::uint64_t> per_sample(
        {static_cast<py::ssize_t>(in.n), static_cast<py::ssize_t>(kPerSampleColumns)});
    std::uint64_t* out = per_sample.mutable_data();
    const auto control = make_control();
    const ConcordanceCounts c = run_without_gil(*control, [&] {
        return concordance_counts(in.times, in.time_stride, in.events, in.event_stride, in.estimates,
                                  in.estimate_stride, in.n, tied_tol, *control, out);
    });
    py::dict result = counts_dict(c, true);
    result["per_sample"] = per_sample;
    return result;
}

// The totals and the (n, 3) per-sample comparable pairs (concordant, discordant, tied), all in C++: a
// conversion of the n x 6 counts in numpy would not stop for Ctrl-C (seconds at n = 1e7).
py::dict concordance_pair_counts_py(const py::array_t<double>& times, const py::array_t<std::uint8_t>& events,
                                    const py::array_t<double>& estimates, double tied_tol) {
    const Inputs in = read_inputs(times, events, estimates);
    py::array_t<double> pairs({static_cast<py::ssize_t>(in.n), py::ssize_t{3}});
    double* out = pairs.mutable_data();
    const auto control = make_control();
    const ConcordanceCounts c = run_without_gil(*control, [&] {
        std::unique_ptr<std::uint64_t[]> per_sample(new std::uint64_t[in.n * kPerSampleColumns]);
        const ConcordanceCounts counts =
            concordance_counts(in.times, in.time_stride, in.events, in.event_stride, in.estimates, in.estimate_stride,
                               in.n, tied_tol, *control, per_sample.get());
        concordance_pair_columns(per_sample.get(), in.n, out, *control);
        return counts;
    });
    py::dict result = counts_dict(c, true);
    result["pairs"] = pairs;
    return result;
}

}  // namespace

void register_concordance(py::module_& m) {
    m.def("concordance_counts", &concordance_counts_py, py::arg("times").noconvert(), py::arg("events").noconvert(),
          py::arg("estimates").noconvert(), py::arg("tied_tol") = 0.0,
          "dict below, tied, above, tied_time: counts over comparable pairs (event i, later or same-time "
          "censored j): estimate_j below, tied with or above estimate_i.");
    m.def("concordance_per_sample", &concordance_per_sample_py, py::arg("times").noconvert(),
          py::arg("events").noconvert(), py::arg("estimates").noconvert(), py::arg("tied_tol") = 0.0,
          "dict below, tied, above, tied_time, event_pairs_tied_time, event_pairs_tied_both, per_sample: "
          "per_sample[i] counts sample i's comparable partners with an estimate below, tied with or above "
          "its own, as the earlier event (columns 0-2) and as the later member (columns 3-5).");
    m.def("concordance_pair_counts", &concordance_pair_counts_py, py::arg("times").noconvert(),
          py::arg("events").noconvert(), py::arg("estimates").noconvert(), py::arg("tied_tol") = 0.0,
          "dict of the totals as concordance_per_sample's, and pairs: pairs[i] = sample i's comparable pairs that are "
          "concordant, discordant and tied in the estimate (float64).");
}

}  // namespace pairmetrics::bindings
