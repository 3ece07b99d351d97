#include "../roc_auc.hpp"
#include "common.hpp"
#include "dtype_dispatch.hpp"

namespace pairmetrics::bindings {

namespace {

// Inputs were validated in Python: 1-D, same length, finite scores of a real
// dtype, positive as uint8 (0/1), weights float64 or None, 0 < max_fpr <= 1.
py::dict roc_auc_py(const py::array& scores, const py::array_t<std::uint8_t>& positive, const py::object& weights,
                    double max_fpr, int n_threads) {
    const std::size_t n = static_cast<std::size_t>(scores.shape(0));
    if (scores.ndim() != 1 || positive.ndim() != 1 || static_cast<std::size_t>(positive.shape(0)) != n)
        throw py::value_error("scores and positive must be 1-D arrays of the same length");
    const std::uint8_t* pos = positive.data();
    const std::ptrdiff_t pos_stride = element_stride<std::uint8_t>(positive);
    const double* w = nullptr;
    std::ptrdiff_t w_stride = 0;
    py::array_t<double> weight_array;
    if (!weights.is_none()) {
        weight_array = py::array_t<double>::ensure(weights);
        if (!weight_array || weight_array.ndim() != 1 || static_cast<std::size_t>(weight_array.shape(0)) != n)
            throw py::value_error("weights must be a 1-D float64 array of the scores' length");
        w = weight_array.data();
        w_stride = element_stride<double>(weight_array);
    }
    const auto control = make_control();
    const RocAuc result = dispatch_real_dtype(scores, [&](auto tag) {
        using Score = typename decltype(tag)::type;
        const Score* data = static_cast<const Score*>(scores.data());
        const std::ptrdiff_t stride = element_stride<Score>(scores);
        // Safe without the GIL: raw pointers into arrays the caller keeps alive.
        return run_without_gil(*control, [&] {
            return roc_auc(data, stride, pos, pos_stride, w, w_stride, n, max_fpr, n_threads, *control);
        });
    });
    return py::dict("area"_a = result.area, "positive_total"_a = result.positive, "negative_total"_a = result.negative);
}

}  // namespace

void register_roc_auc(py::module_& m) {
    m.def("roc_auc", &roc_auc_py, py::arg("scores"), py::arg("positive").noconvert(), py::arg("weights"),
          py::arg("max_fpr") = 1.0, py::arg("n_threads") = 1,
          "dict area, positive_total, negative_total: weighted ROC AUC, or the partial area up to "
          "max_fpr when max_fpr < 1; area is NaN when a class has no weight.");
}

}  // namespace pairmetrics::bindings
