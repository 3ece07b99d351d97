#include "concordance.hpp"

#include <algorithm>
#include <vector>

#include "key_sort.hpp"

namespace pairmetrics {
namespace {

struct Keyed {
    std::uint64_t key;
    std::uint64_t index;
};

constexpr std::size_t kCheckEvery = std::size_t{1} << 15;

class Fenwick {
  public:
    explicit Fenwick(std::size_t n) : tree_(n + 1, 0) {}
    void add(std::size_t i) {
        for (++i; i < tree_.size(); i += i & (~i + 1)) ++tree_[i];
    }
    // Count of added ranks < i.
    std::uint64_t prefix(std::size_t i) const {
        std::uint64_t s = 0;
        for (; i > 0; i -= i & (~i + 1)) s += tree_[i];
        return s;
    }

  private:
    std::vector<std::uint64_t> tree_;
};

}  // namespace

ConcordanceCounts concordance_counts(const double* times, std::ptrdiff_t time_stride, const std::uint8_t* events,
                                     std::ptrdiff_t event_stride, const double* estimates,
                                     std::ptrdiff_t estimate_stride, std::size_t n, double tied_tol,
                                     Control& control) {
    ConcordanceCounts out;
    if (n < 2) return out;
    control.set_total(4 * static_cast<std::uint64_t>(n));

    // Dense ranks of the estimates, and their distinct values in order.
    std::vector<Keyed> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = {order_key(estimates[i * estimate_stride]), i};
    sort_by_key(order, 1, control);
    std::vector<std::uint32_t> rank(n);
    std::vector<double> values;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || order[i].key != order[i - 1].key) values.push_back(estimates[order[i].index * estimate_stride]);
        rank[order[i].index] = static_cast<std::uint32_t>(values.size() - 1);
    }
    control.advance(n);

    // For each event, the rank window of estimates tied with its own:
    // [lo, hi). Below lo: strictly lower and not tied; from hi: higher.
    auto window = [&](double e) -> std::pair<std::size_t, std::size_t> {
        if (tied_tol == 0) {
            const auto lo = std::lower_bound(values.begin(), values.end(), e);
            const auto hi = std::upper_bound(lo, values.end(), e);
            return {static_cast<std::size_t>(lo - values.begin()), static_cast<std::size_t>(hi - values.begin())};
        }
        // |v - e| <= tol exactly as computed in double; v - e rounds
        // monotonically in v, so both bounds are partition points.
        const auto lo = std::partition_point(values.begin(), values.end(), [&](double v) { return v - e < -tied_tol; });
        const auto hi = std::partition_point(lo, values.end(), [&](double v) { return v - e <= tied_tol; });
        return {static_cast<std::size_t>(lo - values.begin()), static_cast<std::size_t>(hi - values.begin())};
    };

    for (std::size_t i = 0; i < n; ++i) order[i] = {order_key(times[i * time_stride]), i};
    sort_by_key(order, 1, control);
    control.advance(n);

    Fenwick tree(values.size());
    std::uint64_t inserted = 0;
    std::size_t done = 0;
    for (std::size_t end = n; end > 0;) {
        std::size_t begin = end - 1;
        const std::uint64_t key = order[begin].key;
        while (begin > 0 && order[begin - 1].key == key) --begin;
        std::uint64_t censored = 0, observed = 0;
        for (std::size_t k = begin; k < end; ++k) {
            const std::size_t i = order[k].index;
            if (events[i * event_stride] == 0) {
                tree.add(rank[i]);
                ++censored;
            }
        }
        inserted += censored;
        for (std::size_t k = begin; k < end; ++k) {
            const std::size_t i = order[k].index;
            if (events[i * event_stride] == 0) continue;
            ++observed;
            const auto [lo, hi] = window(estimates[i * estimate_stride]);
            const std::uint64_t below = tree.prefix(lo), upto = tree.prefix(hi);
            out.below += below;
            out.tied += upto - below;
            out.above += inserted - upto;
        }
        out.tied_time += observed * censored;
        for (std::size_t k = begin; k < end; ++k) {
            const std::size_t i = order[k].index;
            if (events[i * event_stride] != 0) tree.add(rank[i]);
        }
        inserted += observed;
        if ((done + end - begin) / kCheckEvery != done / kCheckEvery) control.advance(kCheckEvery);
        done += end - begin;
        end = begin;
    }
    return out;
}

}  // namespace pairmetrics
