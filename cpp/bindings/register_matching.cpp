#include "common.hpp"

namespace pairmetrics::bindings {

void register_matching(py::module_& m) { (void)m; }

}  // namespace pairmetrics::bindings
