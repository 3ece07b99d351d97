#include "concordance.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "key_sort.hpp"

namespace pairmetrics {
namespace {

struct Keyed {
    std::uint64_t key;
    std::uint64_t index;  // a sample's index, or its rank and event flag
};

constexpr std::size_t kCheckEvery = std::size_t{1} << 15;

// Counts of inserted samples per rank (fewer than 2**32 samples: 32-bit
// counters), with prefix sums from a Fenwick tree over blocks of 64 ranks
// (small enough to stay in cache) plus a scan inside one block: about one
// cache miss an operation where a Fenwick tree over all ranks takes many.
class RankCounts {
  public:
    static constexpr std::size_t kBlock = 64;
    explicit RankCounts(std::size_t n) : count_(n, 0), blocks_(n / kBlock + 2, 0) {}
    void add(std::size_t rank) {
        ++count_[rank];
        for (std::size_t b = rank / kBlock + 1; b < blocks_.size(); b += b & (~b + 1)) ++blocks_[b];
    }
    std::uint32_t at(std::size_t rank) const { return count_[rank]; }
    // Samples of rank below `rank`.
    std::uint64_t below(std::size_t rank) const {
        const std::size_t block = rank / kBlock;
        std::uint32_t s = 0;
        for (std::size_t b = block; b > 0; b -= b & (~b + 1)) s += blocks_[b];
        for (std::size_t r = block * kBlock; r < rank; ++r) s += count_[r];
        return s;
    }

  private:
    std::vector<std::uint32_t> count_;
    std::vector<std::uint32_t> blocks_;  // Fenwick tree: blocks_[b] covers blocks (b - lowbit(b), b]
};

// The samples in time order, each carrying its index, rank and event flag (index << 32 | rank << 1 | event;
// fewer than 2**31 samples), so the sweeps read memory sequentially; within one time the events come first.
// With a tolerance, the ranks tied with rank r form the window [lo[r], hi[r]).
struct TimeOrder {
    std::unique_ptr<Keyed[]> records;
    std::size_t n = 0, n_values = 0;
    double tied_tol = 0;
    std::vector<std::uint32_t> lo, hi;

    std::size_t rank_of(std::size_t k) const { return (records[k].index >> 1) & 0x7fffffffu; }
    std::size_t sample_of(std::size_t k) const { return records[k].index >> 32; }
    // Samples in `tree` below and tied with rank r (tied: within tied_tol).
    void split_counts(const RankCounts& tree, std::size_t r, std::uint64_t& below, std::uint64_t& tied) const {
        if (tied_tol == 0) {
            below = tree.below(r);
            tied = tree.at(r);
        } else {
            below = tree.below(lo[r]);
            tied = tree.below(hi[r]) - below;
        }
    }
    // One time's samples: events [begin, split), censored [split, end).
    std::size_t events_end(std::size_t begin, std::size_t end) const {
        std::size_t split = begin;
        while (split < end && (records[split].index & 1)) ++split;
        return split;
    }
};

void clear_per_sample(std::uint64_t* per_sample, std::size_t n, Control& control) {
    for (std::size_t begin = 0; begin < n; begin += kCheckEvery) {  // in blocks: n * 6 counts take a while
        const std::size_t end = std::min(n, begin + kCheckEvery);
        std::fill(per_sample + begin * kPerSampleColumns, per_sample + end * kPerSampleColumns, std::uint64_t{0});
        control.check();
    }
}

// Dense ranks of the estimates, and their distinct values (records: scratch of n entries).
std::vector<std::uint32_t> dense_ranks(const double* estimates, std::ptrdiff_t stride, std::size_t n, Keyed* records,
                                       std::vector<double>& values, Control& control) {
    for (std::size_t i = 0; i < n; ++i) {
        records[i] = {order_key(estimates[i * stride]), i};
        if (i % kCheckEvery == 0) control.check();
    }
    sort_by_key(records, n, control);
    control.advance(n);
    std::vector<std::uint32_t> rank(n);
    for (std::size_t j = 0; j < n; ++j) {
        if (j == 0 || records[j].key != records[j - 1].key) values.push_back(double_of_key(records[j].key));
        rank[records[j].index] = static_cast<std::uint32_t>(values.size() - 1);
        if (j % kCheckEvery == 0) control.check();
    }
    return rank;
}

// Events are laid out before censored samples and the radix sort is stable, so within one time the events
// come first.
void sort_by_time(const double* times, std::ptrdiff_t time_stride, const std::uint8_t* events,
                  std::ptrdiff_t event_stride, const std::vector<std::uint32_t>& rank, TimeOrder& order,
                  Control& control) {
    const std::size_t n = order.n;
    std::size_t n_events = 0;
    for (std::size_t i = 0; i < n; ++i) n_events += events[i * event_stride] != 0;
    for (std::size_t i = 0, e = 0, c = n_events; i < n; ++i) {
        const bool event = events[i * event_stride] != 0;
        order.records[event ? e++ : c++] = {order_key(times[i * time_stride]),
                                            (std::uint64_t{i} << 32) | (std::uint64_t{rank[i]} << 1) | event};
        if (i % kCheckEvery == 0) control.check();
    }
    sort_by_key(order.records.get(), n, control);
    control.advance(n);
}

// |v - e| <= tol exactly as computed in double: v - e rounds monotonically in v, so both ends of the window
// move forward with e (two pointers).
void tie_windows(const std::vector<double>& values, TimeOrder& order) {
    const std::size_t n_values = values.size();
    order.lo.resize(n_values);
    order.hi.resize(n_values);
    std::size_t a = 0, b = 0;
    for (std::size_t r = 0; r < n_values; ++r) {
        const double e = values[r];
        while (a < n_values && values[a] - e < -order.tied_tol) ++a;
        if (b < a) b = a;
        while (b < n_values && values[b] - e <= order.tied_tol) ++b;
        order.lo[r] = static_cast<std::uint32_t>(a);
        order.hi[r] = static_cast<std::uint32_t>(b);
    }
}

// Sweep from the latest time down: censored samples of a time enter the tree before its events are compared,
// events after. Fills the earlier member's per-sample columns when asked.
void sweep_from_latest(const TimeOrder& order, ConcordanceCounts& out, std::uint64_t* per_sample, Control& control) {
    const std::size_t n = order.n;
    RankCounts tree(order.n_values);
    std::vector<std::uint64_t> tied_before;  // per event of one time, with per-sample output
    std::uint64_t inserted = 0;
    for (std::size_t end = n; end > 0;) {
        std::size_t begin = end - 1;
        while (begin > 0 && order.records[begin - 1].key == order.records[end - 1].key) --begin;
        const std::size_t split = order.events_end(begin, end);
        const std::uint64_t observed = split - begin, censored = end - split;
        for (std::size_t k = split; k < end; ++k) tree.add(order.rank_of(k));
        inserted += censored;
        if (per_sample) tied_before.clear();
        for (std::size_t k = begin; k < split; ++k) {
            std::uint64_t below, tied;
            order.split_counts(tree, order.rank_of(k), below, tied);
            const std::uint64_t above = inserted - below - tied;
            out.below += below;
            out.tied += tied;
            out.above += above;
            if (per_sample) {
                std::uint64_t* row = per_sample + order.sample_of(k) * kPerSampleColumns;
                row[kEarlierBelow] = below;
                row[kEarlierTied] = tied;
                row[kEarlierAbove] = above;
                tied_before.push_back(tied);
            }
        }
        out.tied_time += observed * censored;
        for (std::size_t k = begin; k < split; ++k) {
            if (per_sample) {  // ties among this time's events: those entered since the query above
                std::uint64_t below, tied;
                order.split_counts(tree, order.rank_of(k), below, tied);
                out.event_pairs_tied_both += tied - tied_before[k - begin];
            }
            tree.add(order.rank_of(k));
        }
        if (per_sample) out.event_pairs_tied_time += observed * (observed - 1) / 2;
        inserted += observed;
        if ((n - begin) / kCheckEvery != (n - end) / kCheckEvery) control.advance(kCheckEvery);
        end = begin;
    }
}

// The later member's view, sweeping forward in time over events only: an event meets the events of earlier
// times, a censored sample also those of its own time.
void sweep_from_earliest(const TimeOrder& order, std::uint64_t* per_sample, Control& control) {
    const std::size_t n = order.n;
    RankCounts earlier_events(order.n_values);
    std::uint64_t events_seen = 0;
    const auto count_later = [&](std::size_t k) {
        std::uint64_t below, tied;
        order.split_counts(earlier_events, order.rank_of(k), below, tied);
        std::uint64_t* row = per_sample + order.sample_of(k) * kPerSampleColumns;
        row[kLaterBelow] = below;
        row[kLaterTied] = tied;
        row[kLaterAbove] = events_seen - below - tied;
    };
    for (std::size_t begin = 0; begin < n;) {
        std::size_t end = begin + 1;
        while (end < n && order.records[end].key == order.records[begin].key) ++end;
        const std::size_t split = order.events_end(begin, end);
        for (std::size_t k = begin; k < split; ++k) count_later(k);
        for (std::size_t k = begin; k < split; ++k) earlier_events.add(order.rank_of(k));
        events_seen += split - begin;
        for (std::size_t k = split; k < end; ++k) count_later(k);
        if (end / kCheckEvery != begin / kCheckEvery) control.advance(kCheckEvery);
        begin = end;
    }
}

}  // namespace

ConcordanceCounts concordance_counts(const double* times, std::ptrdiff_t time_stride, const std::uint8_t* events,
                                     std::ptrdiff_t event_stride, const double* estimates,
                                     std::ptrdiff_t estimate_stride, std::size_t n, double tied_tol, Control& control,
                                     std::uint64_t* per_sample) {
    ConcordanceCounts out;
    if (per_sample) clear_per_sample(per_sample, n, control);
    if (n < 2) return out;
    control.set_total((per_sample ? 5 : 4) * static_cast<std::uint64_t>(n));
    TimeOrder order;
    order.records.reset(new Keyed[n]);  // every slot written below
    order.n = n;
    order.tied_tol = tied_tol;
    std::vector<double> values;
    {
        const std::vector<std::uint32_t> rank =
            dense_ranks(estimates, estimate_stride, n, order.records.get(), values, control);
        order.n_values = values.size();
        sort_by_time(times, time_stride, events, event_stride, rank, order, control);
    }
    if (tied_tol > 0) tie_windows(values, order);
    sweep_from_latest(order, out, per_sample, control);
    if (per_sample) sweep_from_earliest(order, per_sample, control);
    return out;
}

void concordance_pair_columns(const std::uint64_t* per_sample, std::size_t n, double* out, Control& control) {
    const auto as_double = [](std::uint64_t count) { return static_cast<double>(count); };
    for (std::size_t begin = 0; begin < n; begin += kCheckEvery) {
        const std::size_t end = std::min(n, begin + kCheckEvery);
        for (std::size_t i = begin; i < end; ++i) {
            const std::uint64_t* row = per_sample + i * kPerSampleColumns;
            double* pairs = out + i * 3;
            pairs[0] = as_double(row[kEarlierAbove]) + as_double(row[kLaterBelow]);  // concordant
            pairs[1] = as_double(row[kEarlierBelow]) + as_double(row[kLaterAbove]);  // discordant
            pairs[2] = as_double(row[kEarlierTied]) + as_double(row[kLaterTied]);    // tied estimates
        }
        control.check();
    }
}

}  // namespace pairmetrics
