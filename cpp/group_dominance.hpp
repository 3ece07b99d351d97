// Group dominance counts: for points (value, group) and queries (threshold,
// group), the pairs with value >= threshold, split by whether the point's
// group is below, equal to or above the query's.
//
// This is the step of paired evaluation on partitioned data that counts the
// pairs between score partitions (the groups): with one exact label
// threshold per sample, fl(y_i - y_j) >= min_dist  <=>  y_i >= t(y_j), so the
// points are labels, the queries thresholds, and a pair whose point lies in a
// lower score partition than its query is mis-ranked. O((n + m) log) time
// (a radix sort and one sweep with a Fenwick tree over the groups).
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace pairmetrics {

struct GroupDominanceCounts {
    std::uint64_t lower = 0;   // point group < query group
    std::uint64_t same = 0;    // point group == query group
    std::uint64_t higher = 0;  // point group > query group
};

// Points and queries may carry weights (multiplicities: a run of equal
// labels sent as one entry); a null weight array means weight 1 each. Values
// are doubles (real labels and their thresholds) or unsigned order keys
// (integer labels, key_sort.hpp, and their thresholds, rankable.hpp).
template <class Value>
struct WeightedGroups {
    const Value* values = nullptr;
    const std::uint32_t* groups = nullptr;
    const std::uint32_t* weights = nullptr;
    std::size_t size = 0;
};

// Counts pairs weighted by the product of their weights. Preconditions:
// values are not NaN; every group is below n_groups (checked:
// std::invalid_argument otherwise). Checks `control` between blocks of work.
// Value is double or std::uint64_t.
template <class Value>
GroupDominanceCounts group_dominance(const WeightedGroups<Value>& points, const WeightedGroups<Value>& queries,
                                     std::uint32_t n_groups, Control& control);

}  // namespace pairmetrics
