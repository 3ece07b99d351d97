#include "group_dominance.hpp"

#include <memory>
#include <stdexcept>
#include <vector>

#include "key_sort.hpp"

namespace pairmetrics {

namespace {

struct Keyed {
    std::uint64_t key;
    std::uint32_t group;
    std::uint32_t weight;
};

constexpr std::size_t kBlock = std::size_t{1} << 16;

// Order keys of the values with their groups and weights, sorted by key.
template <class Value>
std::unique_ptr<Keyed[]> sorted_records(const WeightedGroups<Value>& in, std::uint32_t n_groups, Control& control) {
    std::unique_ptr<Keyed[]> records(new Keyed[in.size]);
    for (std::size_t begin = 0; begin < in.size; begin += kBlock) {
        const std::size_t end = std::min(in.size, begin + kBlock);
        for (std::size_t i = begin; i < end; ++i) {
            if (in.groups[i] >= n_groups) throw std::invalid_argument("a group is not below n_groups");
            records[i] = {order_key(in.values[i]), in.groups[i], in.weights ? in.weights[i] : 1u};
        }
        control.check();
    }
    sort_by_key(records.get(), in.size, control);
    return records;
}

// Weights per group with prefix sums in O(log k): a Fenwick tree.
class Fenwick {
  public:
    explicit Fenwick(std::size_t size) : tree_(size + 1, 0) {}
    void add(std::size_t index, std::uint64_t amount) {
        for (std::size_t i = index + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += amount;
    }
    // Sum over the indices below `index`.
    std::uint64_t below(std::size_t index) const {
        std::uint64_t sum = 0;
        for (std::size_t i = index; i > 0; i -= i & (~i + 1)) sum += tree_[i];
        return sum;
    }

  private:
    std::vector<std::uint64_t> tree_;
};

}  // namespace

template <class Value>
GroupDominanceCounts group_dominance(const WeightedGroups<Value>& point_input, const WeightedGroups<Value>& query_input,
                                     std::uint32_t n_groups, Control& control) {
    const auto points = sorted_records(point_input, n_groups, control);
    const auto queries = sorted_records(query_input, n_groups, control);
    const std::size_t n_points = point_input.size, n_queries = query_input.size;
    // weight per group, and in the groups below each group
    std::vector<std::uint64_t> in_group(n_groups, 0), in_lower(n_groups + std::size_t{1}, 0);
    for (std::size_t i = 0; i < n_points; ++i) in_group[points[i].group] += points[i].weight;
    for (std::uint32_t g = 0; g < n_groups; ++g) in_lower[g + 1] = in_lower[g] + in_group[g];

    // Sweep the thresholds upwards: `passed` points have a value below the
    // current threshold, the rest are at or above it.
    Fenwick passed_lower(n_groups);
    std::vector<std::uint64_t> passed_in_group(n_groups, 0);
    std::uint64_t passed = 0;
    GroupDominanceCounts counts;
    std::size_t next = 0;
    for (std::size_t begin = 0; begin < n_queries; begin += kBlock) {
        const std::size_t end = std::min(n_queries, begin + kBlock);
        for (std::size_t j = begin; j < end; ++j) {
            const Keyed& query = queries[j];
            for (; next < n_points && points[next].key < query.key; ++next) {
                passed_lower.add(points[next].group, points[next].weight);
                passed_in_group[points[next].group] += points[next].weight;
                passed += points[next].weight;
            }
            const std::uint32_t g = query.group;
            const std::uint64_t lower = in_lower[g] - passed_lower.below(g);
            const std::uint64_t same = in_group[g] - passed_in_group[g];
            const std::uint64_t higher = (in_lower[n_groups] - passed) - lower - same;
            counts.lower += lower * query.weight;
            counts.same += same * query.weight;
            counts.higher += higher * query.weight;
        }
        control.check();
    }
    return counts;
}

template GroupDominanceCounts group_dominance(const WeightedGroups<double>&, const WeightedGroups<double>&,
                                              std::uint32_t, Control&);
template GroupDominanceCounts group_dominance(const WeightedGroups<std::uint64_t>&,
                                              const WeightedGroups<std::uint64_t>&, std::uint32_t, Control&);

}  // namespace pairmetrics
