#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../grouped.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"
#include "paired_arrays.hpp"

namespace pairmetrics::bindings {

namespace {

// Inputs were validated in Python: the arrays are 1-D of one length n (the
// kernel's own rules as in the ungrouped calls) and codes are int64 group
// codes in [0, n_groups) (checked again here).
void check_length(const py::array& array, py::ssize_t n, const char* name) {
    if (array.ndim() != 1 || array.shape(0) != n)
        throw py::value_error(std::string(name) + " must be a 1-D array of the group codes' length");
}

GroupSegments segments_of(const py::array_t<std::int64_t>& codes, std::size_t n_groups, Control& control) {
    if (codes.ndim() != 1) throw py::value_error("codes must be 1-D");
    const std::int64_t* data = codes.data();
    const std::ptrdiff_t stride = element_stride<std::int64_t>(codes);
    const std::size_t n = static_cast<std::size_t>(codes.shape(0));
    try {
        return run_without_gil(control, [&] { return group_segments(data, stride, n, n_groups, control); });
    } catch (const std::invalid_argument& error) {
        throw py::value_error(error.what());
    }
}

py::array_t<std::int64_t> order_array(const GroupSegments& segments) {
    py::array_t<std::int64_t> order(static_cast<py::ssize_t>(segments.order.size()));
    std::copy(segments.order.begin(), segments.order.end(), order.mutable_data());
    return order;
}

py::dict grouped_paired_counts_py(const py::array& scores, const py::array& labels,
                                  const py::array_t<std::int64_t>& codes, std::size_t n_groups, double min_dist,
                                  bool per_sample, int n_threads, py::object progress) {
    check_length(scores, codes.shape(0), "scores");
    check_length(labels, codes.shape(0), "labels");
    if (!(min_dist > 0) || !std::isfinite(min_dist)) throw py::value_error("min_dist must be finite and > 0");
    const auto control = make_control(std::move(progress));
    const GroupSegments segments = segments_of(codes, n_groups, *control);
    const std::size_t n = segments.order.size();

    py::array_t<std::uint64_t> counts({static_cast<py::ssize_t>(n_groups), py::ssize_t{4}});
    PairedArrays arrays(per_sample, n);
    std::vector<PairedCounts> out(n_groups);
    dispatch_real_dtype(scores, [&](auto score_tag) {
        using Score = typename decltype(score_tag)::type;
        const Score* score_data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t score_stride = element_stride<Score>(scores);
        dispatch_real_dtype(labels, [&](auto label_tag) {
            using Label = typename decltype(label_tag)::type;
            const Label* label_data = static_cast<const Label*>(labels.data());
            const std::ptrdiff_t label_stride = element_stride<Label>(labels);
            // Safe without the GIL: raw pointers into arrays the caller keeps alive.
            run_without_gil(*control, [&] {
                grouped_paired_counts(score_data, score_stride, label_data, label_stride, segments, min_dist,
                                      out.data(), arrays.out(), n_threads, *control);
            });
        });
    });
    auto table = counts.mutable_unchecked<2>();
    for (std::size_t g = 0; g < n_groups; ++g) {
        const auto i = static_cast<py::ssize_t>(g);
        table(i, 0) = out[g].rankable;
        table(i, 1) = out[g].correct;
        table(i, 2) = out[g].tied;
        table(i, 3) = out[g].incorrect;
    }
    if (!per_sample) return py::dict("counts"_a = counts);
    return py::dict("counts"_a = counts, "order"_a = order_array(segments), "rankable"_a = arrays.rankable,
                    "tied"_a = arrays.tied, "incorrect"_a = arrays.incorrect);
}

py::dict grouped_roc_auc_py(const py::array& scores, const py::array_t<std::uint8_t>& positive,
                            const py::object& weights, const py::array_t<std::int64_t>& codes, std::size_t n_groups,
                            double max_fpr, int n_threads) {
    check_length(scores, codes.shape(0), "scores");
    check_length(positive, codes.shape(0), "positive");
    const double* w = nullptr;
    std::ptrdiff_t w_stride = 0;
    py::array_t<double> weight_array;
    if (!weights.is_none()) {
        weight_array = py::array_t<double>::ensure(weights);
        if (!weight_array) throw py::value_error("weights must be a float64 array");
        check_length(weight_array, codes.shape(0), "weights");
        w = weight_array.data();
        w_stride = element_stride<double>(weight_array);
    }
    const std::uint8_t* pos = positive.data();
    const std::ptrdiff_t pos_stride = element_stride<std::uint8_t>(positive);
    const auto control = make_control();
    const GroupSegments segments = segments_of(codes, n_groups, *control);
    std::vector<RocAuc> out(n_groups);
    dispatch_real_dtype(scores, [&](auto tag) {
        using Score = typename decltype(tag)::type;
        const Score* data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t stride = element_stride<Score>(scores);
        // Safe without the GIL: raw pointers into arrays the caller keeps alive.
        run_without_gil(*control, [&] {
            grouped_roc_auc(data, stride, pos, pos_stride, w, w_stride, segments, max_fpr, out.data(), n_threads,
                            *control);
        });
    });
    py::array_t<double> area(static_cast<py::ssize_t>(n_groups)), positive_total(area.size()),
        negative_total(area.size());
    for (std::size_t g = 0; g < n_groups; ++g) {
        area.mutable_data()[g] = out[g].area;
        positive_total.mutable_data()[g] = out[g].positive;
        negative_total.mutable_data()[g] = out[g].negative;
    }
    return py::dict("area"_a = area, "positive_total"_a = positive_total, "negative_total"_a = negative_total);
}

py::dict grouped_concordance_py(const py::array_t<double>& times, const py::array_t<std::uint8_t>& events,
                                const py::array_t<double>& estimates, const py::array_t<std::int64_t>& codes,
                                std::size_t n_groups, int n_threads) {
    check_length(times, codes.shape(0), "times");
    check_length(events, codes.shape(0), "events");
    check_length(estimates, codes.shape(0), "estimates");
    if (codes.shape(0) >= (py::ssize_t{1} << 31)) throw py::value_error("at most 2**31 - 1 samples");
    const auto control = make_control();
    const GroupSegments segments = segments_of(codes, n_groups, *control);
    const auto n = static_cast<py::ssize_t>(segments.order.size());
    py::array_t<std::uint64_t> per_sample({n, static_cast<py::ssize_t>(kPerSampleColumns)});
    std::uint64_t* columns = per_sample.mutable_data();
    std::vector<ConcordanceCounts> out(n_groups);
    const double* t = times.data();
    const std::uint8_t* e = events.data();
    const double* x = estimates.data();
    const std::ptrdiff_t ts = element_stride<double>(times), es = element_stride<std::uint8_t>(events),
                         xs = element_stride<double>(estimates);
    // Safe without the GIL: raw pointers into arrays the caller keeps alive.
    run_without_gil(*control, [&] {
        grouped_concordance(t, ts, e, es, x, xs, segments, out.data(), columns, n_threads, *control);
    });
    py::array_t<std::uint64_t> counts({static_cast<py::ssize_t>(n_groups), py::ssize_t{6}});
    auto table = counts.mutable_unchecked<2>();
    for (std::size_t g = 0; g < n_groups; ++g) {
        const auto i = static_cast<py::ssize_t>(g);
        const ConcordanceCounts& c = out[g];
        const std::uint64_t row[6] = {
            c.below, c.tied, c.above, c.tied_time, c.event_pairs_tied_time, c.event_pairs_tied_both};
        for (py::ssize_t j = 0; j < 6; ++j) table(i, j) = row[j];
    }
    return py::dict("counts"_a = counts, "order"_a = order_array(segments), "per_sample"_a = per_sample);
}

}  // namespace

void register_grouped(py::module_& m) {
    m.def("grouped_paired_counts", &grouped_paired_counts_py, py::arg("scores"), py::arg("labels"),
          py::arg("codes").noconvert(), py::arg("n_groups"), py::arg("min_dist"), py::arg("per_sample") = false,
          py::arg("n_threads") = 1, py::arg("progress") = py::none(),
          "dict counts, and with per_sample order, rankable, tied, incorrect: paired counts (n_groups x 4: rankable, "
          "correct, tied, incorrect) of every group code in one pass; with per_sample also the input "
          "positions by group (order) and the per-sample counts in that order.");
    m.def("grouped_roc_auc", &grouped_roc_auc_py, py::arg("scores"), py::arg("positive").noconvert(),
          py::arg("weights"), py::arg("codes").noconvert(), py::arg("n_groups"), py::arg("max_fpr") = 1.0,
          py::arg("n_threads") = 1,
          "dict area, positive_total, negative_total of every group code, as roc_auc computes them for one.");
    m.def("grouped_concordance", &grouped_concordance_py, py::arg("times").noconvert(), py::arg("events").noconvert(),
          py::arg("estimates").noconvert(), py::arg("codes").noconvert(), py::arg("n_groups"), py::arg("n_threads") = 1,
          "dict counts, order, per_sample: concordance counts (n_groups x 6, as concordance_per_sample's totals) "
          "of every group code, the input positions by group and the per-sample counts in that order.");
}

}  // namespace pairmetrics::bindings
