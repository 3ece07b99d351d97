// Exact minimum-weight perfect matching of a sparse graph with integer
// weights, priced and certified in one call (the networkx backend's solve).
//
// Dense graphs start on each vertex's cheapest edges; every edge the duals
// price out as violated is added and the same solve resumes (blossoms kept),
// until none is left. The answer is then certified exactly in the solver's integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.hpp"
#include "matching.hpp"

namespace pairmetrics::matching {

struct SparseOptions {
    std::int32_t price_above = 64;  // average degree above which the graph is solved by pricing
    std::int32_t start_edges = 10;  // cheapest edges per vertex in the start graph
};

template <class Int>
struct SparseSolution {
    BasicBlossomResult<Int> blossom;  // optimal on every edge when perfect
    int rounds = 0;                   // solves
    std::int64_t edges = 0;           // edges of the final subgraph
};

// Doubled reduced costs 2 w - y_u - y_v + (z of the blossoms holding both) of every edge.
template <class Int>
std::vector<Int> reduced_costs(const BasicBlossomResult<Int>& r, std::size_t m, const std::int32_t* eu,
                               const std::int32_t* ev, const Int* w);

// Exact LP optimality of a perfect matching: every reduced cost >= 0, matched
// edges tight, z >= 0, and each blossom with z > 0 holding (|B| - 1) / 2
// matched edges. Throws std::logic_error naming the broken condition.
template <class Int>
void certify(const BasicBlossomResult<Int>& r, const std::vector<Int>& rc, std::size_t m, const std::int32_t* eu,
             const std::int32_t* ev);

// 0 <= w <= max_weight(n) (int64) or max_weight_128(n) (i128); perfect is
// false when the graph has no perfect matching.
template <class Int>
SparseSolution<Int> solve_sparse(std::int32_t n, std::size_t m, const std::int32_t* eu, const std::int32_t* ev,
                                 const Int* w, const SparseOptions& options, Control& control);

}  // namespace pairmetrics::matching
