#include "../ranking_curves.hpp"
#include "../ranking_rows.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"

namespace pairmetrics::bindings {

namespace {

// Inputs were validated in Python: 1-D of one length, finite scores of a real
// dtype, positive as uint8 (0/1), weights float64 or None.
struct BinaryInput {
    const std::uint8_t* positive = nullptr;
    std::ptrdiff_t positive_stride = 0;
    const double* weights = nullptr;
    std::ptrdiff_t weight_stride = 0;
    py::array_t<double> weight_array;  // keeps a converted copy alive
};

BinaryInput binary_input(const py::array& scores, const py::array_t<std::uint8_t>& positive,
                         const py::object& weights) {
    const std::size_t n = static_cast<std::size_t>(scores.shape(0));
    if (scores.ndim() != 1 || positive.ndim() != 1 || static_cast<std::size_t>(positive.shape(0)) != n)
        throw py::value_error("scores and positive must be 1-D arrays of the same length");
    BinaryInput in;
    in.positive = positive.data();
    in.positive_stride = element_stride<std::uint8_t>(positive);
    if (!weights.is_none()) {
        in.weight_array = py::array_t<double>::ensure(weights);
        if (!in.weight_array || in.weight_array.ndim() != 1 || static_cast<std::size_t>(in.weight_array.shape(0)) != n)
            throw py::value_error("weights must be a 1-D float64 array of the scores' length");
        in.weights = in.weight_array.data();
        in.weight_stride = element_stride<double>(in.weight_array);
    }
    return in;
}

// A numpy array that takes over a vector's memory (no copy).
template <class T>
py::array_t<T> owning_array(std::vector<T>&& values) {
    auto* owned = new std::vector<T>(std::move(values));
    py::capsule release(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), release);
}

py::dict binary_curve_py(const py::array& scores, const py::array_t<std::uint8_t>& positive, const py::object& weights,
                         const std::string& drop_intermediate, int n_threads) {
    const BinaryInput in = binary_input(scores, positive, weights);
    CurveDrop drop;
    if (drop_intermediate == "none")
        drop = CurveDrop::none;
    else if (drop_intermediate == "roc")
        drop = CurveDrop::roc_corners;
    else if (drop_intermediate == "tps")
        drop = CurveDrop::tps_changes;
    else
        throw py::value_error("drop_intermediate must be 'none', 'roc' or 'tps'");
    const auto control = make_control();
    return dispatch_real_dtype(scores, [&](auto tag) -> py::dict {
        using Score = typename decltype(tag)::type;
        const Score* data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t stride = element_stride<Score>(scores);
        const std::size_t n = static_cast<std::size_t>(scores.shape(0));
        BinaryCurve curve = run_without_gil(*control, [&] {
            return binary_curve(data, stride, in.positive, in.positive_stride, in.weights, in.weight_stride, n, drop,
                                n_threads, *control);
        });
        py::array_t<Score> thresholds(static_cast<py::ssize_t>(curve.keys.size()));
        Score* out = thresholds.mutable_data();
        for (std::size_t i = 0; i < curve.keys.size(); ++i) out[i] = value_of_key<Score>(curve.keys[i]);
        curve.keys = {};  // freed before the rates are handed over
        return py::dict("thresholds"_a = py::array(thresholds), "tps"_a = owning_array(std::move(curve.tps)),
                        "fps"_a = owning_array(std::move(curve.fps)));
    });
}

py::dict average_precision_py(const py::array& scores, const py::array_t<std::uint8_t>& positive,
                              const py::object& weights, int n_threads) {
    const BinaryInput in = binary_input(scores, positive, weights);
    const auto control = make_control();
    const AveragePrecision result = dispatch_real_dtype(scores, [&](auto tag) {
        using Score = typename decltype(tag)::type;
        const Score* data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t stride = element_stride<Score>(scores);
        const std::size_t n = static_cast<std::size_t>(scores.shape(0));
        return run_without_gil(*control, [&] {
            return average_precision(data, stride, in.positive, in.positive_stride, in.weights, in.weight_stride, n,
                                     n_threads, *control);
        });
    });
    return py::dict("value"_a = result.value, "positive_total"_a = result.positive,
                    "negative_total"_a = result.negative);
}

template <class T>
RowsView<T> rows_view(const py::array& matrix) {
    return RowsView<T>{static_cast<const T*>(matrix.data()), element_stride<T>(matrix, 0),
                       element_stride<T>(matrix, 1)};
}

void check_matrices(const py::array& scores, const py::array& other, const char* what) {
    if (scores.ndim() != 2 || other.ndim() != 2 || scores.shape(0) != other.shape(0) ||
        scores.shape(1) != other.shape(1) || scores.shape(1) < 1)
        throw py::value_error(std::string("scores and ") + what + " must be 2-D arrays of the same shape");
}

py::array_t<double> label_ranking_rows_py(const py::array& scores, const py::array_t<std::uint8_t>& truth,
                                          const std::string& metric, int n_threads) {
    check_matrices(scores, truth, "truth");
    LabelRankingMetric which;
    if (metric == "average_precision")
        which = LabelRankingMetric::average_precision;
    else if (metric == "coverage")
        which = LabelRankingMetric::coverage;
    else if (metric == "loss")
        which = LabelRankingMetric::loss;
    else
        throw py::value_error("metric must be 'average_precision', 'coverage' or 'loss'");
    const std::size_t n_rows = static_cast<std::size_t>(scores.shape(0)), n_labels = scores.shape(1);
    py::array_t<double> out(static_cast<py::ssize_t>(n_rows));
    double* result = out.mutable_data();
    const RowsView<std::uint8_t> truth_rows = rows_view<std::uint8_t>(truth);
    const auto control = make_control();
    dispatch_float_dtype(scores, [&](auto tag) {
        using Score = typename decltype(tag)::type;
        const RowsView<Score> score_rows = rows_view<Score>(scores);
        run_without_gil(*control, [&] {
            label_ranking_rows(score_rows, truth_rows, n_rows, n_labels, which, result, n_threads, *control);
        });
    });
    return out;
}

py::array_t<double> dcg_rows_py(const py::array& scores, const py::array& gains,
                                const py::array_t<double, py::array::c_style>& discount,
                                const py::array_t<double, py::array::c_style>& discount_cumsum, std::size_t k,
                                bool ignore_ties, bool normalize, int n_threads) {
    check_matrices(scores, gains, "gains");
    const std::size_t n_rows = static_cast<std::size_t>(scores.shape(0)), n_labels = scores.shape(1);
    if (static_cast<std::size_t>(discount.size()) != n_labels ||
        static_cast<std::size_t>(discount_cumsum.size()) != n_labels || k < 1)
        throw py::value_error("discount and discount_cumsum need one entry per label, and k >= 1");
    py::array_t<double> out(static_cast<py::ssize_t>(n_rows));
    double* result = out.mutable_data();
    const auto control = make_control();
    const py::dtype gain_dtype = gains.dtype();
    dispatch_float_dtype(scores, [&](auto score_tag) {
        using Score = typename decltype(score_tag)::type;
        const RowsView<Score> score_rows = rows_view<Score>(scores);
        auto run = [&](auto gain_tag) {
            using Gain = typename decltype(gain_tag)::type;
            const RowsView<Gain> gain_rows = rows_view<Gain>(gains);
            run_without_gil(*control, [&] {
                dcg_rows(score_rows, gain_rows, n_rows, n_labels, discount.data(), discount_cumsum.data(), k,
                         ignore_ties, normalize, result, n_threads, *control);
            });
        };
        if (gain_dtype.kind() == 'u' && gain_dtype.itemsize() == 1)
            run(Tag<std::uint8_t>{});
        else
            dispatch_float_dtype(gains, run);
    });
    return out;
}

py::array_t<std::uint8_t> top_k_hits_py(const py::array& scores, const py::array_t<std::int64_t>& labels, std::size_t k,
                                        int n_threads) {
    if (scores.ndim() != 2 || labels.ndim() != 1 || labels.shape(0) != scores.shape(0) || scores.shape(1) < 1)
        throw py::value_error("scores must be 2-D and labels 1-D with one entry per row");
    const std::size_t n_rows = static_cast<std::size_t>(scores.shape(0)), n_labels = scores.shape(1);
    const std::int64_t* label_data = labels.data();
    const std::ptrdiff_t label_stride = element_stride<std::int64_t>(labels);
    for (std::size_t i = 0; i < n_rows; ++i) {
        const std::int64_t y = label_data[static_cast<std::ptrdiff_t>(i) * label_stride];
        if (y < 0 || static_cast<std::size_t>(y) >= n_labels) throw py::value_error("labels must be in [0, n_labels)");
    }
    py::array_t<std::uint8_t> out(static_cast<py::ssize_t>(n_rows));
    std::uint8_t* hits = out.mutable_data();
    const auto control = make_control();
    dispatch_float_dtype(scores, [&](auto tag) {
        using Score = typename decltype(tag)::type;
        const RowsView<Score> score_rows = rows_view<Score>(scores);
        run_without_gil(*control, [&] {
            top_k_hits(score_rows, label_data, label_stride, n_rows, n_labels, k, hits, n_threads, *control);
        });
    });
    return out;
}

}  // namespace

void register_ranking(py::module_& m) {
    m.def("binary_curve", &binary_curve_py, py::arg("scores"), py::arg("positive").noconvert(), py::arg("weights"),
          py::arg("drop_intermediate") = "none", py::arg("n_threads") = 1,
          "dict thresholds, tps, fps: each distinct score, decreasing, in the scores' dtype, with the cumulative "
          "positive and negative weight (count) at or above it; samples of zero weight are left out. "
          "drop_intermediate: 'none', 'roc' (roc_curve's) or 'tps' (precision_recall_curve's).");
    m.def("average_precision", &average_precision_py, py::arg("scores"), py::arg("positive").noconvert(),
          py::arg("weights"), py::arg("n_threads") = 1,
          "dict value, positive_total, negative_total: the step-function average precision (NaN without positive "
          "weight).");
    m.def("label_ranking_rows", &label_ranking_rows_py, py::arg("scores"), py::arg("truth").noconvert(),
          py::arg("metric"), py::arg("n_threads") = 1,
          "Per-row label ranking average precision, coverage or ranking loss of float32/float64 scores; truth "
          "is uint8 (nonzero: relevant).");
    m.def("dcg_rows", &dcg_rows_py, py::arg("scores"), py::arg("gains"), py::arg("discount"),
          py::arg("discount_cumsum"), py::arg("k"), py::arg("ignore_ties"), py::arg("normalize"),
          py::arg("n_threads") = 1,
          "Per-row DCG (NDCG when normalize) of float32/float64 scores and uint8/float32/float64 gains.");
    m.def("top_k_hits", &top_k_hits_py, py::arg("scores"), py::arg("labels").noconvert(), py::arg("k"),
          py::arg("n_threads") = 1,
          "uint8 per row: whether the label is among the k highest scores (ties: the later label first).");
}

}  // namespace pairmetrics::bindings
