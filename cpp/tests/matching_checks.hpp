// Checks shared by the C++ matching tests.
#pragma once

#include <vector>

#include "control.hpp"
#include "matching.hpp"

namespace pairmetrics::testing {

// A control with no callback, for calls whose progress a test does not watch.
inline Control& quiet_control() {
    thread_local Control control;
    return control;
}

// Whether the real duals of a complete-graph solve certify its matching on
// every pair of D (z >= 0, gap within the rounding the certificate allows).
inline bool complete_certificate_holds(const matching::Distances& D, bool ghost, const matching::CompleteResult& r,
                                       Control& control) {
    std::vector<double> y(r.blossom.y.size()), z(r.blossom.z.size());
    for (std::size_t t = 0; t < y.size(); ++t) y[t] = static_cast<double>(r.blossom.y[t]) * r.unit;
    for (std::size_t t = 0; t < z.size(); ++t) z[t] = static_cast<double>(r.blossom.z[t]) * r.unit;
    const auto c =
        matching::certificate(D, ghost, y.data(), r.blossom.parent, z.data(), r.blossom.mate.data(), 2, control);
    return c.complete && c.min_z >= 0 &&
           c.cost - c.dual_objective + c.lowering + c.error_bound <= 1e-9 * c.cost + 16 * 2.3e-16 * c.magnitude;
}

}  // namespace pairmetrics::testing
