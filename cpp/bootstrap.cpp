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

// One sample per cluster, cluster c at position c: a draw is a position.
bool is_plain(const ResamplingDesign& design, std::size_t n) {
    if (design.cluster_offsets[n] != static_cast<std::int64_t>(n)) return false;
    for (std::size_t c = 0; c < n; ++c)
        if (design.cluster_offsets[c] != static_cast<std::int64_t>(c) ||
            design.members[c] != static_cast<std::int64_t>(c))
            return false;
    return true;
}

// Adds one resample's draw counts to `weight` (all zero on entry; the sweep below zeroes it again).
void draw_weights(const ResamplingDesign& design, bool plain, SplitMix64& rng, std::vector<std::uint32_t>& weight) {
    if (plain) {
        for (std::size_t s = 0; s < design.n_strata; ++s) {
            const std::uint64_t first = static_cast<std::uint64_t>(design.stratum_offsets[s]);
            const std::uint64_t count = static_cast<std::uint64_t>(design.stratum_offsets[s + 1]) - first;
            for (std::uint64_t k = 0; k < count; ++k) ++weight[first + rng.below(count)];
        }
        return;
    }
    for (std::size_t s = 0; s < design.n_strata; ++s) {
        const std::int64_t first = design.stratum_offsets[s];
        const std::uint64_t count = static_cast<std::uint64_t>(design.stratum_offsets[s + 1] - first);
        for (std::uint64_t k = 0; k < count; ++k) {
            const std::int64_t c = first + static_cast<std::int64_t>(rng.below(count));
            for (std::int64_t m = design.cluster_offsets[c]; m < design.cluster_offsets[c + 1]; ++m)
                ++weight[static_cast<std::size_t>(design.members[m])];
        }
    }
}

// The AUC of the weighted samples; leaves every weight zero for the next resample.
double weighted_auc(const std::uint8_t* positive, const std::int64_t* group_end, std::size_t n_groups,
                    std::vector<std::uint32_t>& weight) {
    double credit = 0, negatives_below = 0, positives = 0;
    std::size_t p = 0;
    for (std::size_t g = 0; g < n_groups; ++g) {
        std::uint64_t pos = 0, neg = 0;
        for (const std::size_t end = static_cast<std::size_t>(group_end[g]); p < end; ++p) {
            (positive[p] ? pos : neg) += weight[p];
            weight[p] = 0;
        }
        credit += static_cast<double>(pos) * (negatives_below + 0.5 * static_cast<double>(neg));
        negatives_below += static_cast<double>(neg);
        positives += static_cast<double>(pos);
    }
    const double pairs = positives * negatives_below;
    return pairs > 0 ? credit / pairs : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

void bootstrap_auc(const std::uint8_t* positive, std::size_t n, const std::int64_t* group_end, std::size_t n_groups,
                   const ResamplingDesign& design, const std::uint64_t* seeds, std::size_t n_resamples, double* out,
                   int n_threads, Control& control) {
    control.set_total(n_resamples);
    const std::size_t n_clusters = static_cast<std::size_t>(design.stratum_offsets[design.n_strata]);
    const bool plain = n_clusters == n && is_plain(design, n);
    const std::size_t chunks = std::min<std::size_t>(n_resamples, static_cast<std::size_t>(std::max(n_threads, 1)) * 4);
    parallel_for(
        chunks, n_threads,
        [&](std::size_t chunk) {
            std::vector<std::uint32_t> weight(n);
            for (std::size_t r = chunk; r < n_resamples; r += chunks) {
                SplitMix64 rng(seeds[r]);
                draw_weights(design, plain, rng, weight);
                out[r] = weighted_auc(positive, group_end, n_groups, weight);
                control.advance();
            }
        },
        &control);
}

}  // namespace pairmetrics
