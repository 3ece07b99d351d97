#include "paired_fenwick.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "parallel.hpp"

namespace pairmetrics::paired_detail {

template <class L>
LabelRanks<L> rank_few_labels(const Buffer<L>& sequence, std::size_t limit, Control& control) {
    LabelRanks<L> out;
    if (limit == 0) return out;
    Ticker tick(control);
    std::size_t kSlots = 4;
    while (kSlots < 4 * limit) kSlots *= 2;  // load factor <= 1/4
    std::vector<L> slot_value(kSlots);
    std::vector<std::int32_t> slot_id(kSlots, -1);
    Buffer<std::uint32_t> id(sequence.size());
    for (std::size_t i = 0; i < sequence.size(); ++i) {
        L v = sequence[i];
        std::uint64_t h;
        if constexpr (std::is_floating_point_v<L>) {
            if (v == 0.0) v = 0.0;  // -0.0 and 0.0 are one label
            std::memcpy(&h, &v, sizeof h);
        } else {
            h = v;
        }
        h = (h ^ (h >> 29)) * 0x9E3779B97F4A7C15ull;
        std::size_t s = (h >> 40) & (kSlots - 1);
        while (slot_id[s] >= 0 && slot_value[s] != v) s = (s + 1) & (kSlots - 1);
        if (slot_id[s] < 0) {
            if (out.values.size() == limit) return {};
            slot_id[s] = static_cast<std::int32_t>(out.values.size());
            slot_value[s] = v;
            out.values.push_back(v);
        }
        id[i] = static_cast<std::uint32_t>(slot_id[s]);
        if ((i & (kTickWork - 1)) == 0) tick(kTickWork);
    }
    std::vector<std::uint32_t> order(out.values.size()), rank_of_id(out.values.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::uint32_t>(k);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return out.values[a] < out.values[b]; });
    std::vector<L> sorted(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        rank_of_id[order[k]] = static_cast<std::uint32_t>(k);
        sorted[k] = out.values[order[k]];
    }
    out.values.swap(sorted);
    for (std::size_t i = 0; i < id.size(); ++i) id[i] = rank_of_id[id[i]];
    out.rank.swap(id);
    return out;
}

namespace {

// Counts of inserted ranks, with O(log k) prefix sums.
class Fenwick {
  public:
    explicit Fenwick(std::size_t size) : tree_(size + 1, 0) {}
    void add(std::size_t rank) {
        for (std::size_t i = rank + 1; i < tree_.size(); i += i & (~i + 1)) ++tree_[i];
    }
    std::uint64_t count_below(std::size_t rank) const {  // inserted ranks < rank
        std::uint64_t total = 0;
        for (std::size_t i = rank; i > 0; i -= i & (~i + 1)) total += tree_[i];
        return total;
    }

  private:
    std::vector<std::uint64_t> tree_;
};

// Inversions of a rank sequence split into chunks, one per thread: pairs
// inside a chunk from a Fenwick tree, pairs reaching back into earlier chunks
// from the rank histograms of those chunks (one lookup per element).
std::uint64_t few_label_inversions_parallel(const Buffer<std::uint32_t>& rank, const std::vector<std::size_t>& above,
                                            std::size_t k, int n_threads, Control& control) {
    const std::size_t n = rank.size();
    const std::vector<std::size_t> bound = chunk_bounds(n, n_threads);
    const std::size_t chunks = bound.size() - 1;
    std::vector<std::uint64_t> histogram(chunks * k, 0);
    parallel_for(
        chunks, n_threads,
        [&](std::size_t c) {
            Ticker tick(control);
            std::uint64_t* h = histogram.data() + c * k;
            for (std::size_t q = bound[c]; q < bound[c + 1]; ++q) {
                ++h[rank[q]];
                if ((q & (kTickWork - 1)) == 0) tick(kTickWork);
            }
        },
        control);
    // earlier[c * k + r]: labels in chunks before c with rank >= above[r].
    std::vector<std::uint64_t> earlier(chunks * k, 0), at_least(k + 1, 0);
    for (std::size_t c = 1; c < chunks; ++c) {
        for (std::size_t r = k; r-- > 0;) at_least[r] = at_least[r + 1] + histogram[(c - 1) * k + r];
        for (std::size_t r = 0; r < k; ++r) earlier[c * k + r] = earlier[(c - 1) * k + r] + at_least[above[r]];
    }
    std::vector<std::uint64_t> partial(chunks, 0);
    parallel_for(
        chunks, n_threads,
        [&](std::size_t c) {
            Ticker tick(control);
            Fenwick seen(k);
            const std::uint64_t* back = earlier.data() + c * k;
            std::uint64_t total = 0;
            for (std::size_t q = bound[c]; q < bound[c + 1]; ++q) {
                const std::uint32_t r = rank[q];
                total += (q - bound[c]) - seen.count_below(above[r]) + back[r];
                seen.add(r);
                if ((q & (kTickWork / 4 - 1)) == 0) tick(kTickWork);
            }
            partial[c] = total;
        },
        control);
    std::uint64_t total = 0;
    for (auto x : partial) total += x;
    return total;
}

}  // namespace

// Inversions and rankable pairs of the sequence when its labels take few
// values. above[r]: first rank whose value is far above rank r's (k if
// none); below[r]: one past the last rank far below it.
template <bool Track, class Gap>
std::pair<std::uint64_t, std::uint64_t> count_with_few_labels(const LabelRanks<typename Gap::Label>& ranks,
                                                              const Buffer<std::uint64_t>& index, const Gap& gap,
                                                              std::uint64_t* inverted, std::uint64_t* rankable,
                                                              int n_threads, Control& control) {
    Ticker tick(control);
    const auto& v = ranks.values;
    const std::size_t k = v.size(), n = ranks.rank.size();
    std::vector<std::size_t> above(k), below(k);
    for (std::size_t r = 0, s = 0; r < k; ++r) {
        while (s < k && !gap.far(v[s], v[r])) ++s;
        above[r] = s;
    }
    for (std::size_t r = 0, s = 0; r < k; ++r) {
        while (s < r && gap.far(v[r], v[s])) ++s;
        below[r] = s;
    }
    std::vector<std::uint64_t> histogram(k + 1, 0);
    for (std::size_t q = 0; q < n; ++q) ++histogram[ranks.rank[q] + 1];
    for (std::size_t r = 0; r < k; ++r) histogram[r + 1] += histogram[r];  // now: #labels with rank < r
    tick(n);
    std::uint64_t total_rankable = 0;
    for (std::size_t r = 0; r < k; ++r) total_rankable += (histogram[r + 1] - histogram[r]) * (n - histogram[above[r]]);
    if constexpr (!Track) {
        if (n_threads > 1 && n >= 2 * kMinPerThread)
            return {few_label_inversions_parallel(ranks.rank, above, k, n_threads, control), total_rankable};
    }
    std::uint64_t inversions = 0;
    const bool by_position = index.size() == 0;
    Fenwick seen(k);
    for (std::size_t q = 0; q < n; ++q) {
        const std::uint32_t r = ranks.rank[q];
        const std::uint64_t later_higher = q - seen.count_below(above[r]);
        inversions += later_higher;
        if constexpr (Track) {
            const std::size_t at = by_position ? q : index[q];
            inverted[at] += later_higher;
            rankable[at] = (n - histogram[above[r]]) + histogram[below[r]];
        }
        seen.add(r);
        if ((q & (kTickWork / 4 - 1)) == 0) tick(kTickWork);
    }
    if constexpr (Track) {
        Fenwick after(k);
        for (std::size_t p = n; p-- > 0;) {
            const std::uint32_t r = ranks.rank[p];
            inverted[by_position ? p : index[p]] += after.count_below(below[r]);
            after.add(r);
            if ((p & (kTickWork / 4 - 1)) == 0) tick(kTickWork);
        }
    }
    return {inversions, total_rankable};
}

template LabelRanks<double> rank_few_labels(const Buffer<double>&, std::size_t, Control&);
template LabelRanks<std::uint64_t> rank_few_labels(const Buffer<std::uint64_t>&, std::size_t, Control&);
#define PAIRMETRICS_INSTANTIATE(Track, Gap)                                                                           \
    template std::pair<std::uint64_t, std::uint64_t> count_with_few_labels<Track, Gap>(                               \
        const LabelRanks<Gap::Label>&, const Buffer<std::uint64_t>&, const Gap&, std::uint64_t*, std::uint64_t*, int, \
        Control&);
PAIRMETRICS_INSTANTIATE(false, RealGap)
PAIRMETRICS_INSTANTIATE(true, RealGap)
PAIRMETRICS_INSTANTIATE(false, IntegerGap)
PAIRMETRICS_INSTANTIATE(true, IntegerGap)
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics::paired_detail
