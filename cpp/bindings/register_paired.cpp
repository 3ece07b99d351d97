#include "common.hpp"

namespace pairmetrics::bindings {

void register_paired(py::module_& m) { (void)m; }

}  // namespace pairmetrics::bindings
