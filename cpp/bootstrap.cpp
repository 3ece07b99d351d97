#include "bootstrap.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "parallel.hpp"

namespace pairmetrics {
namespace {

// SplitMix64: small state, good enough for drawing indices, and seedable per replicate.
class SplitMix64 {
  public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, bound) for bound < 2**32 (multiply-shift; bias below 2**-32 * bound).
    std::uint64_t below(std::uint64_t bound) { return ((next() >> 32) * bound) >> 32; }

  private:
    std::uint64_t state_;
};

// Adds one resample's draw counts to `count`; false when a count wrapped around
// (then the caller draws again with a wider Count).
template <class Count>
bool draw_counts(const std::int64_t* offsets, std::size_t n_strata, std::uint64_t seed, Count* count) {
    constexpr std::uint64_t kBlock = 64;  // draws first, then their increments: many cache misses in flight
    SplitMix64 rng(seed);
    bool fits = true;
    for (std::size_t s = 0; s < n_strata; ++s) {
        Count* first = count + offsets[s];
        const std::uint64_t size = static_cast<std::uint64_t>(offsets[s + 1] - offsets[s]);
        std::uint64_t k = 0;
        for (; k + kBlock <= size; k += kBlock) {
            std::uint32_t drawn[kBlock];
            for (std::uint64_t j = 0; j < kBlock; ++j) drawn[j] = static_cast<std::uint32_t>(rng.below(size));
            for (std::uint64_t j = 0; j < kBlock; ++j) fits &= ++first[drawn[j]] != 0;
        }
        for (; k < size; ++k) fits &= ++first[rng.below(size)] != 0;
    }
    return fits;
}

// out[r] = statistic(draw counts of replicate r), for r on n_threads threads, with one
// statistic = make_statistic() (and its scratch memory) per block of replicates. The
// counts are bytes (a million clusters stay in a core's cache) unless one overflows.
template <class MakeStatistic>
void replicates(const BootstrapDesign& design, const std::uint64_t* seeds, std::size_t n_resamples, double* out,
                int n_threads, Control& control, MakeStatistic&& make_statistic) {
    control.set_total(n_resamples);
    const std::size_t n_clusters = static_cast<std::size_t>(design.stratum_offsets[design.n_strata]);
    const std::size_t chunks = std::min<std::size_t>(n_resamples, static_cast<std::size_t>(std::max(n_threads, 1)) * 4);
    parallel_for(
        chunks, n_threads,
        [&](std::size_t chunk) {
            std::vector<std::uint8_t> small(n_clusters);
            std::vector<std::uint32_t> wide;
            auto statistic = make_statistic();
            for (std::size_t r = chunk; r < n_resamples; r += chunks) {
                if (draw_counts(design.stratum_offsets, design.n_strata, seeds[r], small.data())) {
                    out[r] = statistic(small.data());
                } else {
                    wide.assign(n_clusters, 0);
                    draw_counts(design.stratum_offsets, design.n_strata, seeds[r], wide.data());
                    out[r] = statistic(wide.data());
                }
                std::fill(small.begin(), small.end(), std::uint8_t{0});
                control.advance();
            }
        },
        control);
}

// Sums of weights over a prefix of the ranks, and the weight at each rank.
class Fenwick {
  public:
    explicit Fenwick(std::size_t size) : tree_(size + 1), at_(size) {}
    void clear() {
        std::fill(tree_.begin(), tree_.end(), std::uint64_t{0});
        std::fill(at_.begin(), at_.end(), std::uint64_t{0});
    }
    void add(std::size_t rank, std::uint64_t weight) {
        at_[rank] += weight;
        for (std::size_t i = rank + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += weight;
    }
    std::uint64_t at(std::size_t rank) const { return at_[rank]; }
    // Total weight of the ranks below `rank`.
    std::uint64_t below(std::size_t rank) const {
        std::uint64_t sum = 0;
        for (std::size_t i = rank; i > 0; i -= i & (~i + 1)) sum += tree_[i];
        return sum;
    }

  private:
    std::vector<std::uint64_t> tree_;
    std::vector<std::uint64_t> at_;
};

// One byte per sample (bit 0: positive, bit 1: last of its tie group): the
// sweeps stream n bytes, not n_groups ends.
std::vector<std::uint8_t> tie_group_flags(const std::uint8_t* positive, const std::int64_t* group_end,
                                          std::size_t n_groups, std::size_t n) {
    std::vector<std::uint8_t> flags(positive, positive + n);
    for (std::size_t g = 0; g < n_groups; ++g) flags[static_cast<std::size_t>(group_end[g]) - 1] |= 2;
    return flags;
}

}  // namespace

void bootstrap_draw_counts(const std::int64_t* stratum_offsets, std::size_t n_strata, std::uint64_t seed,
                           std::uint32_t* count) {
    draw_counts(stratum_offsets, n_strata, seed, count);
}

void bootstrap_auc(const BootstrapDesign& design, const std::uint8_t* positive, const std::int64_t* group_end,
                   std::size_t n_groups, const std::uint64_t* seeds, std::size_t n_resamples, double* out,
                   int n_threads, Control& control) {
    const std::vector<std::uint8_t> flags = tie_group_flags(positive, group_end, n_groups, design.n);
    const std::uint32_t* cluster = design.cluster;
    const std::size_t n = design.n;
    replicates(design, seeds, n_resamples, out, n_threads, control, [&] {
        return [&](const auto* count) {
            double credit = 0, negatives_below = 0, positives = 0;
            std::uint64_t pos = 0, all = 0;  // of the current tie group
            for (std::size_t p = 0; p < n; ++p) {
                const std::uint64_t w = count[cluster[p]];
                const std::uint8_t f = flags[p];
                pos += w & (0 - static_cast<std::uint64_t>(f & 1));  // no branch on the class: random in score order
                all += w;
                if (f & 2) {
                    const double neg = static_cast<double>(all - pos);
                    credit += static_cast<double>(pos) * (negatives_below + 0.5 * neg);
                    negatives_below += neg;
                    positives += static_cast<double>(pos);
                    pos = all = 0;
                }
            }
            const double pairs = positives * negatives_below;
            return pairs > 0 ? credit / pairs : std::numeric_limits<double>::quiet_NaN();
        };
    });
}

void bootstrap_average_precision(const BootstrapDesign& design, const std::uint8_t* positive,
                                 const std::int64_t* group_end, std::size_t n_groups, const std::uint64_t* seeds,
                                 std::size_t n_resamples, double* out, int n_threads, Control& control) {
    const std::vector<std::uint8_t> flags = tie_group_flags(positive, group_end, n_groups, design.n);
    const std::uint32_t* cluster = design.cluster;
    const std::size_t n = design.n;
    replicates(design, seeds, n_resamples, out, n_threads, control, [&] {
        return [&](const auto* count) {
            long double sum = 0;
            std::uint64_t tp = 0, predicted = 0;  // at or above the current threshold
            std::uint64_t pos = 0, all = 0;       // of the current tie group
            for (std::size_t p = 0; p < n; ++p) {
                const std::uint64_t w = count[cluster[p]];
                const std::uint8_t f = flags[p];
                pos += w & (0 - static_cast<std::uint64_t>(f & 1));
                all += w;
                if (f & 2) {
                    tp += pos;
                    predicted += all;
                    if (pos != 0)
                        sum += static_cast<double>(pos) * (static_cast<double>(tp) / static_cast<double>(predicted));
                    pos = all = 0;
                }
            }
            return tp > 0 ? static_cast<double>(sum / static_cast<long double>(tp)) : 0.0;
        };
    });
}

void bootstrap_pair_concordance(const BootstrapDesign& design, const PairSweep& sweep, const std::uint64_t* seeds,
                                std::size_t n_resamples, double* out, int n_threads, Control& control) {
    const std::uint32_t* cluster = design.cluster;
    const std::size_t n = design.n;
    replicates(design, seeds, n_resamples, out, n_threads, control, [&] {
        return [&, tree = Fenwick(sweep.n_ranks)](const auto* count) mutable {
            tree.clear();
            // exact integer products, summed in double: exact below 2**53, as the counts of the generic path
            double correct = 0, tied = 0, comparable = 0;
            std::uint64_t inserted = 0;
            std::size_t q = 0;
            for (std::size_t p = 0; p < n; ++p) {
                if ((p & 0xffff) == 0) control.check();
                for (const std::size_t end = static_cast<std::size_t>(sweep.bound[p]); q < end; ++q) {
                    const std::uint64_t w = count[cluster[q]];
                    if (w == 0) continue;
                    tree.add(sweep.rank[q], w);
                    inserted += w;
                }
                const std::uint64_t w = count[cluster[p]];
                if (!sweep.query[p] || w == 0 || inserted == 0) continue;
                const std::uint64_t below = tree.below(sweep.rank[p]);
                const std::uint64_t at = tree.at(sweep.rank[p]);
                const double weight = static_cast<double>(w);
                correct += weight * static_cast<double>(below);
                tied += weight * static_cast<double>(at);
                comparable += weight * static_cast<double>(inserted);
            }
            return comparable > 0 ? (correct + 0.5 * tied) / comparable : std::numeric_limits<double>::quiet_NaN();
        };
    });
}

}  // namespace pairmetrics
