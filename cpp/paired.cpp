#include "paired.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <tuple>
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

// LSD radix sort on the key, one byte at a time; a byte that is the same in
// every key (common: exponents, high bytes of small integers) costs nothing
// but its histogram.
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

// Sorts records by key (not stably: runs of equal keys are re-ordered by
// label afterwards anyway). One counting pass on the 11 highest bits that
// vary spreads the records into 2048 buckets; each bucket is then sorted in
// cache (a large one, from skewed keys, by the radix sort above), buckets
// spread over the threads.
template <class R>
void sort_by_key(std::vector<R>& records, int n_threads) {
    constexpr int kBits = 11;
    constexpr std::size_t kBuckets = std::size_t{1} << kBits, kLargeBucket = std::size_t{1} << 14;
    const std::size_t n = records.size();
    std::uint64_t any = 0, all = ~std::uint64_t{0};
    for (const R& r : records) {
        any |= r.key;
        all &= r.key;
    }
    const std::uint64_t varying = any ^ all;
    if (varying == 0) return;
    int width = 0;  // bits up to and including the highest varying one
    for (std::uint64_t v = varying; v != 0; v >>= 1) ++width;
    const int shift = std::max(0, width - kBits);
    auto bucket_of = [shift](std::uint64_t key) { return (key >> shift) & (kBuckets - 1); };
    std::vector<std::size_t> start(kBuckets + 1, 0);
    for (const R& r : records) ++start[bucket_of(r.key) + 1];
    for (std::size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
    std::vector<R> sorted(n);
    {
        std::vector<std::size_t> next(start.begin(), start.end() - 1);
        for (const R& r : records) sorted[next[bucket_of(r.key)]++] = r;
    }
    parallel_for(kBuckets, n > 2 * kMinPerThread ? n_threads : 1, [&](std::size_t b) {
        const std::size_t size = start[b + 1] - start[b];
        if (size < 2) return;
        if (size >= kLargeBucket) {
            std::vector<R> part(sorted.begin() + start[b], sorted.begin() + start[b + 1]);
            radix_sort_by_key(part);
            std::copy(part.begin(), part.end(), sorted.begin() + start[b]);
        } else {
            std::sort(sorted.begin() + start[b], sorted.begin() + start[b + 1],
                      [](const R& x, const R& y) { return x.key < y.key; });
        }
    });
    records.swap(sorted);
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
            const double* src = in_buffer ? a_buf_.data() : a_.data();
            double* dst = in_buffer ? a_.data() : a_buf_.data();
            const std::uint64_t* src_idx = in_buffer ? idx_buf_.data() : idx_.data();
            std::uint64_t* dst_idx = in_buffer ? idx_.data() : idx_buf_.data();
            std::size_t l = begin;
            if constexpr (!Track) {
                l = merge_full_spans<4>(src, dst, l, end, width, count);
                l = merge_full_spans<2>(src, dst, l, end, width, count);
            }
            for (; l < end; l += 2 * width) {
                const std::size_t m = std::min(l + width, end), r = std::min(l + 2 * width, end);
                count += merge(src, src_idx, dst, dst_idx, l, m, r);
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
        // Branch-free merge: both heads are loaded and the smaller selected
        // (min/cmov), as random labels make the branch unpredictable.
        while (i < m && j < r) {
            const double x = src[i], y = src[j];
            const bool take_right = y < x;
            dst[k] = std::min(y, x);
            if constexpr (Track) {
                const std::uint64_t xi = src_idx[i], yi = src_idx[j];
                dst_idx[k] = take_right ? yi : xi;
            }
            ++k;
            i += !take_right;
            j += take_right;
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

    struct Span {
        std::size_t l, m, r;  // sorted runs [l, m) and [m, r)
    };

    // Counting and merging walk each pair of runs with a chain of dependent
    // loads and compares; independent pairs stepped together let the CPU
    // overlap their chains. The steps are branch-free (random labels make
    // branches unpredictable).
    struct CountCursor {
        const double* src;
        std::size_t p, m, j, r;
        std::uint64_t count = 0;
        bool active() const { return p < m && j < r; }
        void step(double min_dist) {
            const std::size_t below = src[p] - src[j] < min_dist;
            count += (m - p) & (below - 1);  // left labels [p, m) are >= min_dist above src[j]
            p += below;
            j += 1 - below;
        }
    };
    struct MergeCursor {
        const double* src;
        double* dst;
        std::size_t i, m, j, r, k;
        bool active() const { return i < m && j < r; }
        void step() {
            const double x = src[i], y = src[j];
            const std::size_t take_right = y < x;
            dst[k++] = std::min(y, x);
            i += 1 - take_right;
            j += take_right;
        }
        void finish() {
            k = std::copy(src + i, src + m, dst + k) - dst;
            std::copy(src + j, src + r, dst + k);
        }
    };

    template <std::size_t K>
    std::uint64_t merge_many(const double* src, double* dst, const std::array<Span, K>& spans) const {
        std::array<CountCursor, K> c;
        std::array<MergeCursor, K> mc;
        for (std::size_t t = 0; t < K; ++t) {
            c[t] = CountCursor{src, spans[t].l, spans[t].m, spans[t].m, spans[t].r};
            mc[t] = MergeCursor{src, dst, spans[t].l, spans[t].m, spans[t].m, spans[t].r, spans[t].l};
        }
        auto all_active = [](const auto& cursors) {
            for (const auto& x : cursors)
                if (!x.active()) return false;
            return true;
        };
        while (all_active(c))
            for (auto& x : c) x.step(min_dist_);
        for (auto& x : c) while (x.active()) x.step(min_dist_);
        while (all_active(mc))
            for (auto& x : mc) x.step();
        std::uint64_t total = 0;
        for (std::size_t t = 0; t < K; ++t) {
            while (mc[t].active()) mc[t].step();
            mc[t].finish();
            total += c[t].count;
        }
        return total;
    }

    // Merges groups of K full-width pairs of runs from `l` on; returns where it stopped.
    template <std::size_t K>
    std::size_t merge_full_spans(const double* src, double* dst, std::size_t l, std::size_t end, std::size_t width,
                                 std::uint64_t& count) const {
        for (; l + 2 * K * width <= end; l += 2 * K * width) {
            std::array<Span, K> spans;
            for (std::size_t t = 0; t < K; ++t) spans[t] = {l + 2 * t * width, l + (2 * t + 1) * width, l + (2 * t + 2) * width};
            count += merge_many(src, dst, spans);
        }
        return l;
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

// Dense ranks of the labels if there are at most `limit` distinct values
// (else an empty `values`), found with a small open-addressing table.
struct LabelRanks {
    std::vector<double> values;      // distinct labels, ascending
    std::vector<std::uint32_t> rank; // per position of the sequence
};

LabelRanks rank_few_labels(const std::vector<double>& sequence, std::size_t limit) {
    LabelRanks out;
    if (limit == 0) return out;
    std::size_t kSlots = 4;
    while (kSlots < 4 * limit) kSlots *= 2;  // load factor <= 1/4
    std::vector<double> slot_value(kSlots);
    std::vector<std::int32_t> slot_id(kSlots, -1);
    std::vector<std::uint32_t> id(sequence.size());
    for (std::size_t i = 0; i < sequence.size(); ++i) {
        double v = sequence[i] == 0.0 ? 0.0 : sequence[i];  // -0.0 and 0.0 are one label
        std::uint64_t h;
        std::memcpy(&h, &v, sizeof h);
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
    }
    std::vector<std::uint32_t> order(out.values.size()), rank_of_id(out.values.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::uint32_t>(k);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return out.values[a] < out.values[b]; });
    std::vector<double> sorted(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        rank_of_id[order[k]] = static_cast<std::uint32_t>(k);
        sorted[k] = out.values[order[k]];
    }
    out.values.swap(sorted);
    for (auto& x : id) x = rank_of_id[x];
    out.rank.swap(id);
    return out;
}

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

// Inversions and rankable pairs of the sequence when its labels take few
// values. above[r]: first rank whose value is >= min_dist above rank r's
// (k if none); below[r]: one past the last rank >= min_dist below it.
template <bool Track>
std::pair<std::uint64_t, std::uint64_t> count_with_few_labels(const LabelRanks& ranks,
                                                              const std::vector<std::uint64_t>& index,
                                                              double min_dist, std::uint64_t* inverted,
                                                              std::uint64_t* rankable) {
    const std::vector<double>& v = ranks.values;
    const std::size_t k = v.size(), n = ranks.rank.size();
    std::vector<std::size_t> above(k), below(k);
    for (std::size_t r = 0, s = 0; r < k; ++r) {
        while (s < k && v[s] - v[r] < min_dist) ++s;
        above[r] = s;
    }
    for (std::size_t r = 0, s = 0; r < k; ++r) {
        while (s < r && v[r] - v[s] >= min_dist) ++s;
        below[r] = s;
    }
    std::vector<std::uint64_t> histogram(k + 1, 0);
    for (auto r : ranks.rank) ++histogram[r + 1];
    for (std::size_t r = 0; r < k; ++r) histogram[r + 1] += histogram[r];  // now: #labels with rank < r
    std::uint64_t total_rankable = 0;
    for (std::size_t r = 0; r < k; ++r)
        total_rankable += (histogram[r + 1] - histogram[r]) * (n - histogram[above[r]]);
    std::uint64_t inversions = 0;
    Fenwick seen(k);
    for (std::size_t q = 0; q < n; ++q) {
        const std::uint32_t r = ranks.rank[q];
        const std::uint64_t later_higher = q - seen.count_below(above[r]);
        inversions += later_higher;
        if constexpr (Track) {
            inverted[index[q]] += later_higher;
            rankable[index[q]] = (n - histogram[above[r]]) + histogram[below[r]];
        }
        seen.add(r);
    }
    if constexpr (Track) {
        Fenwick after(k);
        for (std::size_t p = n; p-- > 0;) {
            const std::uint32_t r = ranks.rank[p];
            inverted[index[p]] += after.count_below(below[r]);
            after.add(r);
        }
    }
    return {inversions, total_rankable};
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
                 int n_threads, std::size_t few_labels) {
    std::vector<Record<Track>> records(n);
    for (std::size_t i = 0; i < n; ++i) {
        records[i].key = order_key(scores[static_cast<std::ptrdiff_t>(i) * score_stride]);
        records[i].label = labels[static_cast<std::ptrdiff_t>(i) * label_stride];
        if constexpr (Track) records[i].index = i;
    }
    sort_by_key(records, n_threads);

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
    if (const LabelRanks ranks = rank_few_labels(sequence, few_labels); !ranks.values.empty()) {
        std::tie(inversions, counts.rankable) = count_with_few_labels<Track>(
            ranks, index, min_dist, Track ? inverted.data() : nullptr, Track ? per_sample->rankable : nullptr);
    } else {
        InversionCounter<Track> counter(sequence, index, Track ? inverted.data() : nullptr, min_dist);
        inversions = sort_counting_inversions(counter, n, n_threads);
        counts.rankable = count_rankable(sequence, index, min_dist, Track ? per_sample->rankable : nullptr);
    }
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
                           PairedPerSample* per_sample, int n_threads, std::size_t few_labels) {
    if (per_sample)
        return run<true>(scores, score_stride, labels, label_stride, n, min_dist, per_sample, n_threads, few_labels);
    return run<false>(scores, score_stride, labels, label_stride, n, min_dist, nullptr, n_threads, few_labels);
}

#define PAIRMETRICS_INSTANTIATE(T)                                                                          \
    template PairedCounts paired_counts<T>(const T*, std::ptrdiff_t, const double*, std::ptrdiff_t,        \
                                           std::size_t, double, PairedPerSample*, int, std::size_t);
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
