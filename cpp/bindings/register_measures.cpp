#include "common.hpp"

namespace pairmetrics::bindings {

void register_measures(py::module_& m) { (void)m; }

}  // namespace pairmetrics::bindings
