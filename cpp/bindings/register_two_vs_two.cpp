#include "common.hpp"

namespace pairmetrics::bindings {

void register_two_vs_two(py::module_& m) { (void)m; }

}  // namespace pairmetrics::bindings
