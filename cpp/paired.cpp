#include "paired.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "parallel.hpp"

namespace pairmetrics {
namespace {

// Below this many elements per thread, extra threads cost more than they save.
constexpr std::size_t kMinPerThread = std::size_t{1} << 16;
// Runs this short are sorted by insertion before the merge passes.
constexpr std::size_t kInsertionRun = 16;

// Maps a score to an unsigned key with the same order (and -0.0 == +0.0).
template <class T>
std::uint64_t order_key(T value) {
    if constexpr (std::is_same_v<T, bool>) {
        return value ? 1u : 0u;
    } else if constexpr (std::is_floating_point_v<T>) {
        double d = static_cast<double>(value);
        if (d == 0.0) d = 0.0;
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        return (bits >> 63) ? ~bits : (bits | (std::uint64_t{1} << 63));
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(value)) ^ (std::uint64_t{1} << 63);
    } else {
        return static_cast<std::uint64_t>(value);
    }
}

template <bool Track>
struct Record {
    std::uint64_t key;
    double label;
};
template <>
struct Record<true> {
    std::uint64_t key;
    double label;
    std::uint64_t index;
};

// Stable LSD radix sort on the key, one byte at a time; a byte that is the
// same in every key (common: exponents, high bytes of small integers) costs
// nothing but its histogram.
template <class R>
void radix_sort_by_key(std::vector<R>& records) {
    const std::size_t n = records.size();
    if (n < 2) return;
    std::array<std::array<std::size_t, 256>, 8> histogram{};
    for (const R& r : records)
        for (int b = 0; b < 8; ++b) ++histogram[b][(r.key >> (8 * b)) & 0xFF];
    std::vector<R> buffer(n);
    R* src = records.data();
    R* dst = buffer.data();
    for (int b = 0; b < 8; ++b) {
        auto& count = histogram[b];
        if (count[(src[0].key >> (8 * b)) & 0xFF] == n) continue;
        std::size_t offset = 0;
        for (auto& c : count) offset += std::exchange(c, offset);
        for (std::size_t i = 0; i < n; ++i) dst[count[(src[i].key >> (8 * b)) & 0xFF]++] = src[i];
        std::swap(src, dst);
    }
    if (src != records.data()) records.swap(buffer);
}

// Labels (and, when tracking, original indices) in score order, merge-sorted
// while counting "inversions": pairs p before q with label_p - label_q >= min_dist.
template <bool Track>
class InversionCounter {
  public:
    InversionCounter(std::vector<double>& labels, std::vector<std::uint64_t>& index,
                     std::uint64_t* inverted, double min_dist)
        : a_(labels), idx_(index), inverted_(inverted), min_dist_(min_dist),
          a_buf_(labels.size()), idx_buf_(Track ? labels.size() : 0) {}

    // Sorts [begin, end) in place and returns the inversions inside it.
    std::uint64_t sort(std::size_t begin, std::size_t end) {
        std::uint64_t count = 0;
        for (std::size_t run = begin; run < end; run += kInsertionRun)
            count += insertion_sort(run, std::min(run + kInsertionRun, end));
        bool in_buffer = false;
        for (std::size_t width = kInsertionRun; width < end - begin; width *= 2) {
            for (std::size_t l = begin; l < end; l += 2 * width) {
                const std::size_t m = std::min(l + width, end), r = std::min(l + 2 * width, end);
                count += in_buffer ? merge(a_buf_.data(), idx_buf_.data(), a_.data(), idx_.data(), l, m, r)
                                   : merge(a_.data(), idx_.data(), a_buf_.data(), idx_buf_.data(), l, m, r);
            }
            in_buffer = !in_buffer;
        }
        if (in_buffer) copy_back(begin, end);
        return count;
    }

    // Merges the sorted neighbours [l, m) and [m, r) in place.
    std::uint64_t merge_adjacent(std::size_t l, std::size_t m, std::size_t r) {
        const std::uint64_t count = merge(a_.data(), idx_.data(), a_buf_.data(), idx_buf_.data(), l, m, r);
        copy_back(l, r);
        return count;
    }

  private:
    std::uint64_t insertion_sort(std::size_t begin, std::size_t end) {
        std::uint64_t count = 0;
        for (std::size_t i = begin + 1; i < end; ++i) {
            const double x = a_[i];
            std::uint64_t xi = Track ? idx_[i] : 0;
            std::size_t j = i;
            // Every earlier label at least min_dist above x is larger, so it
            // is among the ones shifted right here.
            for (; j > begin && a_[j - 1] > x; --j) {
                if (a_[j - 1] - x >= min_dist_) {
                    ++count;
                    if constexpr (Track) {
                        ++inverted_[idx_[j - 1]];
                        ++inverted_[xi];
                    }
                }
                a_[j] = a_[j - 1];
                if constexpr (Track) idx_[j] = idx_[j - 1];
            }
            a_[j] = x;
            if constexpr (Track) idx_[j] = xi;
        }
        return count;
    }

    std::uint64_t merge(const double* src, const std::uint64_t* src_idx, double* dst, std::uint64_t* dst_idx,
                        std::size_t l, std::size_t m, std::size_t r) {
        std::uint64_t count = 0;
        // For each right label b, the left labels a with a - b >= min_dist
        // form a suffix of the (ascending) left run, starting at p.
        for (std::size_t j = m, p = l; j < r; ++j) {
            while (p < m && src[p] - src[j] < min_dist_) ++p;
            count += m - p;
            if constexpr (Track) inverted_[src_idx[j]] += m - p;
        }
        if constexpr (Track) {
            // Symmetrically, each left label is inverted with a prefix of the right run.
            for (std::size_t i = l, q = m; i < m; ++i) {
                while (q < r && src[i] - src[q] >= min_dist_) ++q;
                inverted_[src_idx[i]] += q - m;
            }
        }
        std::size_t i = l, j = m, k = l;
        while (i < m && j < r) {
            const bool take_left = src[i] <= src[j];
            dst[k] = take_left ? src[i] : src[j];
            if constexpr (Track) dst_idx[k] = take_left ? src_idx[i] : src_idx[j];
            ++k;
            i += take_left;
            j += !take_left;
        }
        for (; i < m; ++i, ++k) {
            dst[k] = src[i];
            if constexpr (Track) dst_idx[k] = src_idx[i];
        }
        for (; j < r; ++j, ++k) {
            dst[k] = src[j];
            if constexpr (Track) dst_idx[k] = src_idx[j];
        }
        return count;
    }

    void copy_back(std::size_t l, std::size_t r) {
        std::copy(a_buf_.begin() + l, a_buf_.begin() + r, a_.begin() + l);
        if constexpr (Track) std::copy(idx_buf_.begin() + l, idx_buf_.begin() + r, idx_.begin() + l);
    }

    std::vector<double>& a_;
    std::vector<std::uint64_t>& idx_;
    std::uint64_t* inverted_;
    double min_dist_;
    std::vector<double> a_buf_;
    std::vector<std::uint64_t> idx_buf_;
};

// Sorts the whole sequence with up to n_threads threads: independent chunks
// first, then a tree of merges (disjoint ranges, so per-sample counters are
// never updated by two threads at once).
template <bool Track>
std::uint64_t sort_counting_inversions(InversionCounter<Track>& counter, std::size_t n, int n_threads) {
    std::size_t chunks = 1;
    while (chunks < static_cast<std::size_t>(std::max(n_threads, 1)) && n / (2 * chunks) >= kMinPerThread) chunks *= 2;
    std::vector<std::size_t> bounds(chunks + 1);
    for (std::size_t c = 0; c <= chunks; ++c) bounds[c] = n * c / chunks;
    std::vector<std::uint64_t> partial(chunks, 0);
    parallel_for(chunks, n_threads, [&](std::size_t c) { partial[c] = counter.sort(bounds[c], bounds[c + 1]); });
    for (std::size_t step = 1; step < chunks; step *= 2) {
        const std::size_t merges = chunks / (2 * step);
        parallel_for(merges, n_threads, [&](std::size_t k) {
            const std::size_t c = 2 * step * k;
            partial[c] += partial[c + step] +
                          counter.merge_adjacent(bounds[c], bounds[c + step], bounds[c + 2 * step]);
        });
    }
    return partial[0];
}

// Within each run of equal scores, orders labels descending (so every
// rankable tied pair is counted as an inversion, whatever the input order)
// and returns how many rankable pairs have tied scores.
template <bool Track>
std::uint64_t order_tied_scores(std::vector<Record<Track>>& records, double min_dist, std::uint64_t* tied) {
    std::uint64_t total = 0;
    const std::size_t n = records.size();
    for (std::size_t begin = 0, end; begin < n; begin = end) {
        for (end = begin + 1; end < n && records[end].key == records[begin].key; ++end) {}
        if (end - begin < 2) continue;
        Record<Track>* run = records.data() + begin;
        const std::size_t len = end - begin;
        std::sort(run, run + len, [](const auto& x, const auto& y) { return x.label > y.label; });
        // Rankable partners of q before it: a prefix [0, p) of the run.
        for (std::size_t q = 0, p = 0; q < len; ++q) {
            while (p < q && run[p].label - run[q].label >= min_dist) ++p;
            total += p;
            if constexpr (Track) tied[run[q].index] += p;
        }
        if constexpr (Track) {
            // ... and after it: a suffix [s, len).
            for (std::size_t q = len, s = len; q-- > 0;) {
                while (s > q + 1 && run[q].label - run[s - 1].label >= min_dist) --s;
                tied[run[q].index] += len - s;
            }
        }
    }
    return total;
}

// Rankable pairs from labels sorted ascending (optionally per sample).
std::uint64_t count_rankable(const std::vector<double>& sorted, const std::vector<std::uint64_t>& index,
                             double min_dist, std::uint64_t* per_sample) {
    const std::size_t n = sorted.size();
    std::uint64_t total = 0;
    for (std::size_t r = 0, l = 0, u = 0; r < n; ++r) {
        while (l < r && sorted[r] - sorted[l] >= min_dist) ++l;
        total += l;
        if (per_sample) {
            u = std::max(u, r + 1);
            while (u < n && sorted[u] - sorted[r] < min_dist) ++u;
            per_sample[index[r]] = l + (n - u);
        }
    }
    return total;
}

template <bool Track, class Score>
PairedCounts run(const Score* scores, std::ptrdiff_t score_stride, const double* labels,
                 std::ptrdiff_t label_stride, std::size_t n, double min_dist, PairedPerSample* per_sample,
                 int n_threads) {
    std::vector<Record<Track>> records(n);
    for (std::size_t i = 0; i < n; ++i) {
        records[i].key = order_key(scores[static_cast<std::ptrdiff_t>(i) * score_stride]);
        records[i].label = labels[static_cast<std::ptrdiff_t>(i) * label_stride];
        if constexpr (Track) records[i].index = i;
    }
    radix_sort_by_key(records);

    std::vector<std::uint64_t> inverted;
    if constexpr (Track) {
        std::fill_n(per_sample->tied, n, 0);
        inverted.assign(n, 0);
    }
    PairedCounts counts;
    counts.tied = order_tied_scores(records, min_dist, Track ? per_sample->tied : nullptr);

    std::vector<double> sequence(n);
    std::vector<std::uint64_t> index(Track ? n : 0);
    for (std::size_t i = 0; i < n; ++i) {
        sequence[i] = records[i].label;
        if constexpr (Track) index[i] = records[i].index;
    }
    std::vector<Record<Track>>().swap(records);

    std::uint64_t inversions;
    {
        InversionCounter<Track> counter(sequence, index, Track ? inverted.data() : nullptr, min_dist);
        inversions = sort_counting_inversions(counter, n, n_threads);
    }
    counts.rankable = count_rankable(sequence, index, min_dist, Track ? per_sample->rankable : nullptr);
    counts.incorrect = inversions - counts.tied;
    counts.correct = counts.rankable - inversions;
    if constexpr (Track)
        for (std::size_t i = 0; i < n; ++i) per_sample->incorrect[i] = inverted[i] - per_sample->tied[i];
    return counts;
}

}  // namespace

template <class Score>
PairedCounts paired_counts(const Score* scores, std::ptrdiff_t score_stride, const double* labels,
                           std::ptrdiff_t label_stride, std::size_t n, double min_dist,
                           PairedPerSample* per_sample, int n_threads) {
    if (per_sample)
        return run<true>(scores, score_stride, labels, label_stride, n, min_dist, per_sample, n_threads);
    return run<false>(scores, score_stride, labels, label_stride, n, min_dist, nullptr, n_threads);
}

#define PAIRMETRICS_INSTANTIATE(T)                                                                          \
    template PairedCounts paired_counts<T>(const T*, std::ptrdiff_t, const double*, std::ptrdiff_t,        \
                                           std::size_t, double, PairedPerSample*, int);
PAIRMETRICS_INSTANTIATE(bool)
PAIRMETRICS_INSTANTIATE(std::int8_t)
PAIRMETRICS_INSTANTIATE(std::int16_t)
PAIRMETRICS_INSTANTIATE(std::int32_t)
PAIRMETRICS_INSTANTIATE(std::int64_t)
PAIRMETRICS_INSTANTIATE(std::uint8_t)
PAIRMETRICS_INSTANTIATE(std::uint16_t)
PAIRMETRICS_INSTANTIATE(std::uint32_t)
PAIRMETRICS_INSTANTIATE(std::uint64_t)
PAIRMETRICS_INSTANTIATE(float)
PAIRMETRICS_INSTANTIATE(double)
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics
