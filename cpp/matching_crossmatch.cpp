// Cross-match counts of many subsamples: one exact matching per draw.

#include "matching.hpp"

#include "parallel.hpp"

namespace pairmetrics::matching {

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

}  // namespace

std::vector<std::int64_t> crossmatch_counts(std::int64_t n_draws, std::int32_t m, const std::int8_t* z, int k,
                                            int n_threads, Control& control,
                                            const std::function<void(std::int64_t, double*)>& fill) {
    std::vector<std::int64_t> a1(static_cast<std::size_t>(n_draws), 0);
    control.set_total(static_cast<std::uint64_t>(n_draws));
    CompleteOptions opt;
    opt.k = k;
    opt.ghost = m % 2 == 1;
    opt.n_threads = 1;   // the draws are the parallelism
    opt.report = false;  // progress counts draws
    parallel_for(
        static_cast<std::size_t>(n_draws), n_threads,
        [&](std::size_t r) {
            std::vector<double> buffer(static_cast<std::size_t>(m) * m);
            fill(static_cast<std::int64_t>(r), buffer.data());
            const DenseDistances<double> D(buffer.data(), m, m, 1);
            // One draw is small: it runs under its own quiet control, and the
            // shared one is checked (Ctrl-C, progress) between draws.
            Control quiet;
            const CompleteResult res = complete_min_weight_perfect_matching(D, opt, quiet, nullptr);
            std::int64_t cross = 0;
            for (i32 i = 0; i < m; ++i) {
                const i32 j = res.blossom.mate[i];
                if (j > i && j < m && z[i] != z[j]) ++cross;
            }
            a1[r] = cross;
            control.advance(1);
        },
        control);
    return a1;
}

}  // namespace pairmetrics::matching
