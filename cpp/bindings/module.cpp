// The compiled module: one register_*() per kernel family, each in its own file.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace pairmetrics::bindings {
void register_paired(py::module_& m);
void register_two_vs_two(py::module_& m);
void register_matching(py::module_& m);
void register_measures(py::module_& m);
void register_roc_auc(py::module_& m);
void register_concordance(py::module_& m);
void register_group_dominance(py::module_& m);
void register_bootstrap(py::module_& m);
void register_grouped(py::module_& m);
void register_distance_tests(py::module_& m);
void register_ranking(py::module_& m);
void register_rank_statistics(py::module_& m);
void register_rankable(py::module_& m);
}  // namespace pairmetrics::bindings

PYBIND11_MODULE(_core, m) {
    m.doc() = "Compiled kernels of pairmetrics (use the pairmetrics package, not this module).";
    using namespace pairmetrics::bindings;
    register_paired(m);
    register_two_vs_two(m);
    register_matching(m);
    register_measures(m);
    register_roc_auc(m);
    register_concordance(m);
    register_group_dominance(m);
    register_bootstrap(m);
    register_grouped(m);
    register_distance_tests(m);
    register_ranking(m);
    register_rank_statistics(m);
    register_rankable(m);
}
