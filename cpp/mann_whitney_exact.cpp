#include "mann_whitney_exact.hpp"

#include <algorithm>
#include <cmath>

#include "key_sort.hpp"
#include "paired_buffer.hpp"
#include "parallel.hpp"

namespace pairmetrics {

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;

// The order keys of a sample, sorted; returns where they lie (keys or scratch).
std::uint64_t* sorted_keys(const KeyColumn& values, std::size_t n, paired_detail::Buffer<std::uint64_t>& keys,
                           paired_detail::Buffer<std::uint64_t>& scratch, Control& control) {
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = values(i);
        if ((i & (kBlock - 1)) == 0) control.check();
    }
    return radix_sort_by_key(keys.data(), scratch.data(), n, control);
}

double log_binomial(double n, double k) {
    return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

}  // namespace

MannWhitneyRanks mann_whitney_ranks(const KeyColumn& x, std::size_t m, const KeyColumn& y, std::size_t n, int n_threads,
                                    Control& control, std::vector<std::uint64_t>* group_sizes) {
    using paired_detail::Buffer;
    Buffer<std::uint64_t> xk(m), xs(m), yk(n), ys(n);
    const std::uint64_t* sx = nullptr;
    const std::uint64_t* sy = nullptr;
    parallel_for(
        2, n_threads >= 2 && m + n >= 2 * kBlock ? 2 : 1,
        [&](std::size_t which) {
            if (which == 0)
                sx = sorted_keys(x, m, xk, xs, control);
            else
                sy = sorted_keys(y, n, yk, ys, control);
        },
        control);
    // Midranks: the group at positions pos..pos+t-1 (0-based) has the doubled rank 2 pos + t + 1.
    MannWhitneyRanks ranks;
    std::uint64_t doubled_rank_sum = 0, pos = 0;
    std::size_t i = 0, j = 0;
    while (i < m || j < n) {
        const std::uint64_t value = i == m ? sy[j] : j == n ? sx[i] : std::min(sx[i], sy[j]);
        std::uint64_t cx = 0, cy = 0;
        while (i < m && sx[i] == value) ++i, ++cx;
        while (j < n && sy[j] == value) ++j, ++cy;
        const std::uint64_t t = cx + cy;
        doubled_rank_sum += cx * (2 * pos + t + 1);
        ranks.tie_cube_excess += i128{t} * t * t - t;
        ranks.max_tie = std::max(ranks.max_tie, t);
        if (group_sizes) group_sizes->push_back(t);
        pos += t;
        if ((pos & (kBlock - 1)) < t) control.check();
    }
    ranks.doubled_u = doubled_rank_sum - std::uint64_t{m} * (m + 1);
    return ranks;
}

std::vector<double> mann_whitney_null_pmf(std::uint64_t m, std::uint64_t n, std::uint64_t max_u, Control& control) {
    if (m > n) std::swap(m, n);
    max_u = std::min(max_u, m * n);
    // c = [n + k choose k]_q / binom(n + k, k), truncated at max_u, for k = 0..m.
    std::vector<double> c(max_u + 1, 0.0);
    c[0] = 1.0;
    for (std::uint64_t k = 1; k <= m; ++k) {
        for (std::uint64_t u = k; u <= max_u; ++u) c[u] += c[u - k];  // divided by (1 - q^k)
        const std::uint64_t shift = n + k;
        for (std::uint64_t u = max_u; u >= shift && u <= max_u; --u) c[u] -= c[u - shift];  // times (1 - q^(n+k))
        const double scale = static_cast<double>(k) / static_cast<double>(n + k);
        for (double& value : c) value *= scale;
        control.advance(2 * (max_u + 1));
    }
    for (double& value : c) value = std::max(value, 0.0);  // rounding below zero in the far tail
    return c;
}

double mann_whitney_conditional_cdf(const std::vector<std::uint64_t>& group_sizes, std::uint64_t m,
                                    std::uint64_t max_doubled_u, Control& control) {
    std::uint64_t total = 0;
    for (std::uint64_t t : group_sizes) total += t;
    if (m > total) return 0.0;
    const std::uint64_t n = total - m;
    const std::size_t width = static_cast<std::size_t>(std::min(max_doubled_u, 2 * m * n)) + 1;
    // f[k][v]: the probability that the first s pooled values hold k of the
    // first sample and a doubled partial U of v, given that they hold k of it.
    std::vector<double> f((m + 1) * width, 0.0), g((m + 1) * width, 0.0);
    f[0] = 1.0;
    std::uint64_t s = 0;
    for (std::uint64_t t : group_sizes) {
        std::fill(g.begin(), g.end(), 0.0);
        const std::uint64_t k_low = s > n ? s - n : 0, k_high = std::min(s, m);
        for (std::uint64_t k = k_low; k <= k_high; ++k) {
            const double* row = &f[k * width];
            const double log_prefix = log_binomial(static_cast<double>(s), static_cast<double>(k));
            for (std::uint64_t j = 0; j <= t && k + j <= m; ++j) {
                if (t - j > n - (s - k)) continue;  // more of the second sample than it has
                const double weight =
                    std::exp(log_prefix + log_binomial(static_cast<double>(t), static_cast<double>(j)) -
                             log_binomial(static_cast<double>(s + t), static_cast<double>(k + j)));
                // each of the j gains 2 per second-sample value below and 1 per one tied with it
                const std::uint64_t shift = j * (2 * (s - k) + (t - j));
                if (shift >= width) continue;
                double* out = &g[(k + j) * width];
                for (std::size_t v = 0; v + shift < width; ++v) out[v + shift] += row[v] * weight;
            }
            control.advance(width * (t + 1));
        }
        f.swap(g);
        s += t;
    }
    double cdf = 0;
    for (std::size_t v = 0; v < width; ++v) cdf += f[m * width + v];
    return std::min(1.0, cdf);
}

}  // namespace pairmetrics
