#include "paired_inversions.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "parallel.hpp"

namespace pairmetrics::paired_detail {
namespace {

// Labels (and, when tracking, original indices) in score order, merge-sorted
// while counting "inversions": pairs p before q with label_p at least
// min_dist above label_q.
//
// Runs of kInsertionRun are sorted by insertion, then merged level by level:
// first inside cache-sized blocks (one block per task), then across the
// whole array. Every merge of two runs, and the count that goes with it, is
// cut into pieces at exact split points (a binary search for the count, the
// merge-path co-rank for the merge), so that several pieces are stepped
// together (their chains of dependent loads overlap) and the top levels are
// spread over the threads like the lower ones. Pieces never change a count
// or the merged order.
constexpr std::size_t kBlock = std::size_t{1} << 14;  // elements sorted in cache
constexpr std::size_t kPiece = std::size_t{1} << 13;  // target piece size above the blocks

// For each right label src[j] of [j, r), the left labels of [p, m) far above
// it (a suffix of the left run), summed; with Carry also written to fresh[j]
// (carried values: the last write for j at the step that takes it).
// Branch-free steps.
template <class Gap, bool Carry>
struct FarAboveCursor {
    using L = typename Gap::Label;
    const L* src;
    std::uint64_t* fresh;  // with Carry
    std::size_t p, m, j, r;
    std::uint64_t count;
    bool active() const { return p < m && j < r; }
    std::size_t safe_steps() const { return std::min(m - p, r - j); }
    void step(const Gap& gap) {
        const std::size_t near = !gap.far(src[p], src[j]);
        if constexpr (Carry) fresh[j] = m - p;
        count += (m - p) & (near - 1);  // left labels [p, m) are far above src[j]
        p += near;
        j += 1 - near;
    }
    void finish() {  // the left run is exhausted: nothing far above the rest
        if constexpr (Carry)
            for (; j < r; ++j) fresh[j] = m - p;
    }
};
template <class Gap>
using CountCursor = FarAboveCursor<Gap, false>;
template <class Gap>
using RightCursor = FarAboveCursor<Gap, true>;

// ... and for each left label src[i] of [i, iend), the right labels of
// [m, q) far below it (a prefix of the right run), written to fresh[i].
template <class Gap>
struct LeftCursor {
    using L = typename Gap::Label;
    const L* src;
    std::uint64_t* fresh;
    std::size_t i, iend, q, m, r;
    bool active() const { return i < iend && q < r; }
    std::size_t safe_steps() const { return std::min(iend - i, r - q); }
    void step(const Gap& gap) {
        const std::size_t far = gap.far(src[i], src[q]);
        fresh[i] = q - m;
        q += far;
        i += 1 - far;
    }
    void finish() {  // the right run is exhausted: all of it far below the rest
        for (; i < iend; ++i) fresh[i] = q - m;
    }
};

// A merge of two sorted runs; with Carry it moves carried values with the
// labels, each gaining `weight` times its inversions of the level (fresh).
template <class L, bool Carry>
struct MergeWalk {
    const L* src;
    L* dst;
    const std::uint64_t* value;  // the carried values, with Carry
    const std::uint64_t* fresh;
    std::uint64_t* dst_value;
    std::uint64_t weight;
    std::size_t i, m, j, r, k;
    bool active() const { return i < m && j < r; }
    std::size_t safe_steps() const { return std::min(m - i, r - j); }
    void step() {
        const L x = src[i], y = src[j];
        const std::size_t take_right = y < x;
        if constexpr (Carry) {
            const std::size_t at = take_right ? j : i;
            dst_value[k] = value[at] + weight * fresh[at];
        }
        dst[k++] = std::min(y, x);
        i += 1 - take_right;
        j += take_right;
    }
    void finish() {
        if constexpr (Carry) {
            for (; i < m; ++i, ++k) {
                dst[k] = src[i];
                dst_value[k] = value[i] + weight * fresh[i];
            }
            for (; j < r; ++j, ++k) {
                dst[k] = src[j];
                dst_value[k] = value[j] + weight * fresh[j];
            }
        } else {
            k = std::copy(src + i, src + m, dst + k) - dst;
            std::copy(src + j, src + r, dst + k);
        }
    }
};
template <class L>
using CarryMergeCursor = MergeWalk<L, true>;
template <class L>
using MergeCursor = MergeWalk<L, false>;

// Inversions inside one run of kInsertionRun labels, by comparing every
// pair: branch-free, and the compiler vectorises it.
template <class Gap>
std::uint64_t count_short_run(const typename Gap::Label* x, Gap gap) {
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < kInsertionRun; ++i) {
        const auto xi = x[i];
        std::uint64_t row = 0;
        for (std::size_t j = 0; j < kInsertionRun; ++j) row += (j > i) & gap.far(xi, x[j]);
        count += row;
    }
    return count;
}

// Sorts one run of kInsertionRun labels with Batcher's odd-even merge
// network: compare-exchanges as min/max, no branch on the data.
struct Network {
    std::array<std::array<std::uint8_t, 2>, 63> pairs{};
    constexpr Network() {
        constexpr std::size_t n = 16;
        std::size_t c = 0;
        for (std::size_t p = 1; p < n; p <<= 1)
            for (std::size_t k = p; k >= 1; k >>= 1)
                for (std::size_t j = k % p; j + k < n; j += 2 * k)
                    for (std::size_t i = 0; i < std::min(k, n - j - k); ++i)
                        if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) {
                            pairs[c][0] = static_cast<std::uint8_t>(i + j);
                            pairs[c][1] = static_cast<std::uint8_t>(i + j + k);
                            ++c;
                        }
    }
};
constexpr Network kNetwork16{};
static_assert(kInsertionRun == 16, "the network sorts runs of 16");

template <class L>
void sort_short_run(L* x) {
    L v[16];
    for (std::size_t i = 0; i < 16; ++i) v[i] = x[i];
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 63
#endif
    for (std::size_t c = 0; c < kNetwork16.pairs.size(); ++c) {
        const std::size_t i = kNetwork16.pairs[c][0], j = kNetwork16.pairs[c][1];
        const L a = v[i], b = v[j];
        v[i] = std::min(a, b);
        v[j] = std::max(a, b);
    }
    for (std::size_t i = 0; i < 16; ++i) x[i] = v[i];
}

// With Track, `index` moves with the labels and inverted[index[p]] gains the
// inversions of label p; with Carry, `index` holds values that move with the
// labels and gain `weight` times their inversions (no inverted array: no
// access far from the merge), the count of each merge piece done by the task
// that merges it.
template <bool Track, class Gap, bool Carry = false>
class InversionCounter {
    static_assert(Track || !Carry, "carried values move like the index");

  public:
    using L = typename Gap::Label;

    InversionCounter(Buffer<L>& labels, Buffer<std::uint64_t>& index, std::uint64_t* inverted, Gap gap, SimdLevel simd,
                     Control& control, std::uint64_t weight = 1)
        : a_(labels),
          idx_(index),
          inverted_(inverted),
          weight_(weight),
          gap_(gap),
          control_(control),
          n_(labels.size()),
          a_buf_(labels.size()),
          idx_buf_(Track ? labels.size() : 0),
          fresh_(Carry ? labels.size() : 0),
          vector_(kVectorised ? simd::paired_kernels(simd) : nullptr) {}

    // Sorts the labels ascending and returns the number of inversions.
    std::uint64_t run(int n_threads) {
        const std::size_t n = n_;
        if (n < 2) return 0;
        const int threads = threads_for(n, n_threads);
        const std::size_t blocks = (n + kBlock - 1) / kBlock;
        std::vector<std::uint64_t> partial(blocks, 0);
        parallel_for(
            blocks, threads,
            [&](std::size_t b) {
                Ticker tick(control_);
                partial[b] = sort_block(b * kBlock, std::min(n, (b + 1) * kBlock), tick);
            },
            control_);
        std::uint64_t total = 0;
        for (auto c : partial) total += c;
        bool in_buffer = false;
        for (std::size_t width = kBlock; width < n; width *= 2) {
            const Level level = level_pointers(in_buffer);
            std::vector<CountPiece> count_pieces;
            std::vector<MergePiece> merge_pieces;
            std::vector<LeftPiece> left_pieces;
            for (std::size_t l = 0; l < n; l += 2 * width) {
                const std::size_t m = std::min(l + width, n), r = std::min(l + 2 * width, n);
                const std::size_t parts = std::max<std::size_t>(1, (r - l) / kPiece);
                cut(level.src, l, m, r, parts, count_pieces, merge_pieces, left_pieces);
            }
            const std::size_t count_tasks = (count_pieces.size() + kLanes - 1) / kLanes;
            const std::size_t left_tasks = (left_pieces.size() + kLanes - 1) / kLanes;
            const std::size_t merge_tasks = (merge_pieces.size() + kLanes - 1) / kLanes;
            std::vector<std::uint64_t> counts(count_tasks, 0);
            // Each task counts and merges about the same stretch of the
            // array, so that the merge finds it in cache.
            const std::size_t tasks = std::max({count_tasks, left_tasks, merge_tasks});
            parallel_for(
                tasks, threads,
                [&](std::size_t t) {
                    Ticker tick(control_);
                    const std::size_t begin = t * kLanes;
                    if (t < count_tasks)
                        counts[t] = count(level, count_pieces.data() + begin,
                                          std::min(begin + kLanes, count_pieces.size()) - begin, tick);
                    if (t < left_tasks)
                        count_left(level, left_pieces.data() + begin,
                                   std::min(begin + kLanes, left_pieces.size()) - begin, tick);
                    if (t < merge_tasks)
                        merge(level, merge_pieces.data() + begin, std::min(begin + kLanes, merge_pieces.size()) - begin,
                              tick);
                },
                control_);
            for (auto c : counts) total += c;
            in_buffer = !in_buffer;
        }
        if (in_buffer) {
            std::copy(a_buf_.begin(), a_buf_.end(), a_.begin());
            if constexpr (Track) std::copy(idx_buf_.begin(), idx_buf_.end(), idx_.begin());
        }
        return total;
    }

  private:
    struct Level {
        const L* src;
        L* dst;
        std::uint64_t* src_idx;
        std::uint64_t* dst_idx;
    };
    // Right positions [j, r) counted against the left run from p (where
    // the first left label far above src[j] lies) to m.
    struct CountPiece {
        std::size_t p, m, j, r;
    };
    // Per-sample only: left positions [i, iend) counted against the right run
    // [m, r) from q (one past the last right label far below src[i]).
    struct LeftPiece {
        std::size_t i, iend, q, m, r;
    };
    // Output from k: src[i, m) merged with src[j, r).
    struct MergePiece {
        std::size_t i, m, j, r, k;
    };

    Level level_pointers(bool in_buffer) {
        if (in_buffer) return {a_buf_.data(), a_.data(), idx_buf_.data(), idx_.data()};
        return {a_.data(), a_buf_.data(), idx_.data(), idx_buf_.data()};
    }

    // Cuts the merge of [l, m) and [m, r) into `parts` pieces.
    void cut(const L* src, std::size_t l, std::size_t m, std::size_t r, std::size_t parts,
             std::vector<CountPiece>& count_pieces, std::vector<MergePiece>& merge_pieces,
             std::vector<LeftPiece>& left_pieces) const {
        const Gap gap = gap_;
        const std::size_t left = m - l, right = r - m;
        if (parts == 1) {
            merge_pieces.push_back({l, m, m, r, l});
            if (right == 0 && !Carry) return;  // with Carry every merge piece has its count pieces
            count_pieces.push_back({l, m, m, r});
            if constexpr (Track) left_pieces.push_back({l, m, m, m, r});
            return;
        }
        for (std::size_t t = 0; t < parts; ++t) {
            // Merge: outputs [k0, k1); the co-rank i0 is how many of them come from the left.
            const std::size_t k0 = (r - l) * t / parts, k1 = (r - l) * (t + 1) / parts;
            const std::size_t i0 = co_rank(src + l, left, src + m, right, k0);
            const std::size_t i1 = co_rank(src + l, left, src + m, right, k1);
            merge_pieces.push_back({l + i0, l + i1, m + (k0 - i0), m + (k1 - i1), l + k0});
            if constexpr (Carry) {  // the count pieces of exactly the labels this piece merges
                cut_carried(src, l, m, r, merge_pieces.back(), count_pieces, left_pieces);
                continue;
            }
            if (right == 0) continue;
            const std::size_t j0 = m + right * t / parts, j1 = m + right * (t + 1) / parts;
            if (j0 < j1) {
                const L b = src[j0];
                const std::size_t p =
                    std::partition_point(src + l, src + m, [&](const L& a) { return !gap.far(a, b); }) - src;
                count_pieces.push_back({p, m, j0, j1});
            }
            if constexpr (Track) {
                const std::size_t i0l = l + left * t / parts, i1l = l + left * (t + 1) / parts;
                if (i0l < i1l) {
                    const L a = src[i0l];
                    const std::size_t q =
                        std::partition_point(src + m, src + r, [&](const L& b) { return gap.far(a, b); }) - src;
                    left_pieces.push_back({i0l, i1l, q, m, r});
                }
            }
        }
    }

    // The count pieces of the labels that merge piece `piece` of runs [l, m)
    // and [m, r) takes: its right labels against the left run, its left
    // labels against the right run.
    void cut_carried(const L* src, std::size_t l, std::size_t m, std::size_t r, const MergePiece& piece,
                     std::vector<CountPiece>& count_pieces, std::vector<LeftPiece>& left_pieces) const {
        const Gap gap = gap_;
        std::size_t p = m, q = m;
        if (piece.j < piece.r) {
            const L b = src[piece.j];
            p = std::partition_point(src + l, src + m, [&](const L& a) { return !gap.far(a, b); }) - src;
        }
        if (piece.i < piece.m) {
            const L a = src[piece.i];
            q = std::partition_point(src + m, src + r, [&](const L& b) { return gap.far(a, b); }) - src;
        }
        count_pieces.push_back({p, m, piece.j, piece.r});
        left_pieces.push_back({piece.i, piece.m, q, m, r});
    }

    // How many of the first k outputs of the merge of x[0, nx) and y[0, ny)
    // come from x (ties taken from x first).
    static std::size_t co_rank(const L* x, std::size_t nx, const L* y, std::size_t ny, std::size_t k) {
        std::size_t lo = k > ny ? k - ny : 0, hi = std::min(k, nx);
        while (lo < hi) {
            const std::size_t i = lo + (hi - lo) / 2;
            if (y[k - i - 1] >= x[i]) {
                lo = i + 1;
            } else {
                hi = i;
            }
        }
        return lo;
    }

    // Sorts [begin, end) (at most kBlock long) in place; returns its inversions.
    std::uint64_t sort_block(std::size_t begin, std::size_t end, Ticker& tick) {
        std::size_t begin_runs = begin;
        std::uint64_t total = 0;
        if constexpr (kVectorised) {
            if (vector_) {  // the whole runs of 16 here, the last short one below
                const std::size_t runs = (end - begin) / kInsertionRun;
                total += vector_->sort_runs(a_.data() + begin, runs, gap_.min_dist);
                tick(runs * kInsertionRun * 4);
                begin_runs = begin + runs * kInsertionRun;
            }
        }
        for (std::size_t run = begin_runs; run < end; run += kInsertionRun) {
            if (!Track && run + kInsertionRun <= end) {
                total += count_short_run(a_.data() + run, gap_);
                sort_short_run(a_.data() + run);
            } else {
                total += insertion_sort(run, std::min(run + kInsertionRun, end));
            }
            tick(kInsertionRun * 4);
        }
        bool in_buffer = false;
        std::vector<CountPiece> count_pieces;
        std::vector<MergePiece> merge_pieces;
        std::vector<LeftPiece> left_pieces;
        for (std::size_t width = kInsertionRun; width < end - begin; width *= 2) {
            const Level level = level_pointers(in_buffer);
            count_pieces.clear();
            merge_pieces.clear();
            left_pieces.clear();
            const std::size_t pairs = (end - begin + 2 * width - 1) / (2 * width);
            // enough pieces to step together
            const std::size_t parts = Track && !Carry ? 1 : (kLanes + pairs - 1) / pairs;
            for (std::size_t l = begin; l < end; l += 2 * width) {
                const std::size_t m = std::min(l + width, end), r = std::min(l + 2 * width, end);
                cut(level.src, l, m, r, std::min(parts, r - l), count_pieces, merge_pieces, left_pieces);
            }
            for (std::size_t t = 0; t < count_pieces.size(); t += kLanes)
                total += count(level, count_pieces.data() + t, std::min(kLanes, count_pieces.size() - t), tick);
            for (std::size_t t = 0; t < left_pieces.size(); t += kLanes)
                count_left(level, left_pieces.data() + t, std::min(kLanes, left_pieces.size() - t), tick);
            for (std::size_t t = 0; t < merge_pieces.size(); t += kLanes)
                merge(level, merge_pieces.data() + t, std::min(kLanes, merge_pieces.size() - t), tick);
            in_buffer = !in_buffer;
        }
        if (in_buffer) {
            std::copy(a_buf_.begin() + begin, a_buf_.begin() + end, a_.begin() + begin);
            if constexpr (Track) std::copy(idx_buf_.begin() + begin, idx_buf_.begin() + end, idx_.begin() + begin);
        }
        return total;
    }

    std::uint64_t insertion_sort(std::size_t begin, std::size_t end) {
        std::uint64_t count = 0;
        for (std::size_t i = begin + 1; i < end; ++i) {
            const L x = a_[i];
            std::uint64_t xi = Track ? idx_[i] : 0;
            std::size_t j = i;
            // Every earlier label at least min_dist above x is larger, so it
            // is among the ones shifted right here.
            for (; j > begin && a_[j - 1] > x; --j) {
                if (gap_.far(a_[j - 1], x)) {
                    ++count;
                    if constexpr (Carry) {
                        idx_[j - 1] += weight_;
                        xi += weight_;
                    } else if constexpr (Track) {
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

    std::uint64_t count(const Level& level, const CountPiece* pieces, std::size_t n_pieces, Ticker& tick) const {
        std::uint64_t total = 0;
        if constexpr (kVectorised) {
            if (vector_) {
                std::array<simd::CountJob, kLanes> jobs;
                std::size_t work = 0;
                for (std::size_t t = 0; t < n_pieces; ++t) {
                    jobs[t] = {pieces[t].p, pieces[t].m, pieces[t].j, pieces[t].r};
                    work += pieces[t].m - pieces[t].p + pieces[t].r - pieces[t].j;
                }
                total = vector_->count(level.src, jobs.data(), n_pieces, gap_.min_dist);
                tick(work);
                return total;
            }
        }
        if constexpr (Carry) {
            std::array<RightCursor<Gap>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t)
                c[t] =
                    RightCursor<Gap>{level.src, fresh_.data(), pieces[t].p, pieces[t].m, pieces[t].j, pieces[t].r, 0};
            const Gap gap = gap_;
            step_all(c.data(), n_pieces, [&gap](RightCursor<Gap>& x) { x.step(gap); }, tick);
            for (std::size_t t = 0; t < n_pieces; ++t) {
                c[t].finish();
                total += c[t].count;
            }
        } else if constexpr (!Track) {
            std::array<CountCursor<Gap>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t)
                c[t] = CountCursor<Gap>{level.src, nullptr, pieces[t].p, pieces[t].m, pieces[t].j, pieces[t].r, 0};
            const Gap gap = gap_;
            step_all(c.data(), n_pieces, [&gap](CountCursor<Gap>& x) { x.step(gap); }, tick);
            for (std::size_t t = 0; t < n_pieces; ++t) total += c[t].count;
        } else {
            const L* src = level.src;
            for (std::size_t t = 0; t < n_pieces; ++t) {
                const std::size_t m = pieces[t].m;
                // For each right label b, the left labels far above b form a
                // suffix of the (ascending) left run, starting at p.
                for (std::size_t j = pieces[t].j, p = pieces[t].p; j < pieces[t].r; ++j) {
                    while (p < m && !gap_.far(src[p], src[j])) ++p;
                    total += m - p;
                    credit(level.src_idx, j, m - p);
                    if (((j - pieces[t].j) & (kTickWork - 1)) == 0) tick(kTickWork);
                }
            }
        }
        return total;
    }

    // Each left label is inverted with a prefix of the right run (per sample only).
    void count_left(const Level& level, const LeftPiece* pieces, std::size_t n_pieces, Ticker& tick) const {
        const L* src = level.src;
        if constexpr (Carry) {
            std::array<LeftCursor<Gap>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t) {
                const LeftPiece& piece = pieces[t];
                c[t] = LeftCursor<Gap>{src, fresh_.data(), piece.i, piece.iend, piece.q, piece.m, piece.r};
            }
            const Gap gap = gap_;
            step_all(c.data(), n_pieces, [&gap](LeftCursor<Gap>& x) { x.step(gap); }, tick);
            for (std::size_t t = 0; t < n_pieces; ++t) c[t].finish();
            return;
        }
        for (std::size_t t = 0; t < n_pieces; ++t) {
            const LeftPiece& piece = pieces[t];
            for (std::size_t i = piece.i, q = piece.q; i < piece.iend; ++i) {
                while (q < piece.r && gap_.far(src[i], src[q])) ++q;
                credit(level.src_idx, i, q - piece.m);
                if (((i - piece.i) & (kTickWork - 1)) == 0) tick(kTickWork);
            }
        }
    }

    // The inversions of the label at position `at` of a level (Track without Carry).
    void credit(const std::uint64_t* src_idx, std::size_t at, std::uint64_t inversions) const {
        inverted_[src_idx[at]] += inversions;
    }

    void merge(const Level& level, const MergePiece* pieces, std::size_t n_pieces, Ticker& tick) const {
        if constexpr (kVectorised) {
            if (vector_) {
                std::array<simd::MergeJob, kLanes> jobs;
                std::size_t work = 0;
                for (std::size_t t = 0; t < n_pieces; ++t) {
                    jobs[t] = {pieces[t].i, pieces[t].m, pieces[t].j, pieces[t].r, pieces[t].k};
                    work += pieces[t].m - pieces[t].i + pieces[t].r - pieces[t].j;
                }
                vector_->merge(level.src, level.dst, jobs.data(), n_pieces);
                tick(work);
                return;
            }
        }
        if constexpr (Carry) {
            std::array<CarryMergeCursor<L>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t)
                c[t] =
                    CarryMergeCursor<L>{level.src,   level.dst,   level.src_idx, fresh_.data(), level.dst_idx, weight_,
                                        pieces[t].i, pieces[t].m, pieces[t].j,   pieces[t].r,   pieces[t].k};
            step_all(c.data(), n_pieces, [](CarryMergeCursor<L>& x) { x.step(); }, tick);
            for (std::size_t t = 0; t < n_pieces; ++t) c[t].finish();
        } else if constexpr (!Track) {
            std::array<MergeCursor<L>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t)
                c[t] = MergeCursor<L>{level.src,   level.dst,   nullptr,     nullptr,     nullptr,    0,
                                      pieces[t].i, pieces[t].m, pieces[t].j, pieces[t].r, pieces[t].k};
            step_all(c.data(), n_pieces, [](MergeCursor<L>& x) { x.step(); }, tick);
            for (std::size_t t = 0; t < n_pieces; ++t) c[t].finish();
        } else {
            const L* src = level.src;
            L* dst = level.dst;
            for (std::size_t t = 0; t < n_pieces; ++t) {
                std::size_t i = pieces[t].i, j = pieces[t].j, k = pieces[t].k;
                const std::size_t m = pieces[t].m, r = pieces[t].r;
                while (i < m && j < r) {
                    const std::size_t steps = std::min({m - i, r - j, kTickWork});
                    for (std::size_t s = 0; s < steps; ++s) {
                        const L x = src[i], y = src[j];
                        const bool take_right = y < x;
                        dst[k] = std::min(y, x);
                        const std::uint64_t xi = level.src_idx[i], yi = level.src_idx[j];
                        level.dst_idx[k] = take_right ? yi : xi;
                        ++k;
                        i += !take_right;
                        j += take_right;
                    }
                    tick(steps);
                }
                for (; i < m; ++i, ++k) {
                    dst[k] = src[i];
                    level.dst_idx[k] = level.src_idx[i];
                }
                for (; j < r; ++j, ++k) {
                    dst[k] = src[j];
                    level.dst_idx[k] = level.src_idx[j];
                }
                tick(pieces[t].r - pieces[t].j + pieces[t].m - pieces[t].i);
            }
        }
    }

    Buffer<L>& a_;
    Buffer<std::uint64_t>& idx_;
    std::uint64_t* inverted_;
    std::uint64_t weight_;
    Gap gap_;
    Control& control_;
    std::size_t n_;
    Buffer<L> a_buf_;
    Buffer<std::uint64_t> idx_buf_;
    mutable Buffer<std::uint64_t> fresh_;  // Carry: the inversions of each position at the current level
    // The vector loops exist for real labels and totals only.
    static constexpr bool kVectorised = !Track && std::is_same_v<L, double>;
    const simd::PairedKernels* const vector_;  // null: the scalar loops
};

}  // namespace

template <bool Track, class Gap>
std::uint64_t count_inversions(Buffer<typename Gap::Label>& labels, Buffer<std::uint64_t>& index,
                               std::uint64_t* inverted, const Gap& gap, SimdLevel simd, int n_threads,
                               Control& control) {
    InversionCounter<Track, Gap> counter(labels, index, inverted, gap, simd, control);
    return counter.run(n_threads);
}

template <class Gap>
std::uint64_t count_inversions_carried(Buffer<typename Gap::Label>& labels, Buffer<std::uint64_t>& carried,
                                       std::uint64_t weight, const Gap& gap, int n_threads, Control& control) {
    InversionCounter<true, Gap, true> counter(labels, carried, nullptr, gap, SimdLevel::scalar, control, weight);
    return counter.run(n_threads);
}

// Rankable pairs from labels sorted ascending (optionally per sample): for
// each r, the labels far below sorted[r] are a prefix [0, l(r)) of the array.
// The totals walk (l, r) together without branches (l == r is never far) in
// pieces that start at a binary search, spread over the threads.
template <class Gap>
std::uint64_t count_rankable(const Buffer<typename Gap::Label>& sorted, const Buffer<std::uint64_t>& index,
                             const Gap& gap, std::uint64_t* per_sample, int n_threads, SimdLevel simd,
                             Control& control) {
    using L = typename Gap::Label;
    const std::size_t n = sorted.size();
    const L* s = sorted.data();
    if (per_sample) {
        // Chunks spread over the threads, each starting with binary searches.
        const bool by_position = index.size() == 0;
        const int threads = threads_for(n, n_threads);
        const std::vector<std::size_t> bound = chunk_bounds(n, threads);
        std::vector<std::uint64_t> partial(bound.size() - 1, 0);
        parallel_for(
            partial.size(), threads,
            [&](std::size_t c) {
                const std::size_t r0 = bound[c], r1 = bound[c + 1];
                if (r0 == r1) return;
                Ticker tick(control);
                const L first = s[r0];
                std::size_t l = std::partition_point(s, s + r0, [&](const L& a) { return gap.far(first, a); }) - s;
                std::size_t u =
                    std::partition_point(s + r0 + 1, s + n, [&](const L& b) { return !gap.far(b, first); }) - s;
                std::uint64_t total = 0;
                for (std::size_t r = r0; r < r1; ++r) {
                    while (l < r && gap.far(s[r], s[l])) ++l;
                    total += l;
                    u = std::max(u, r + 1);
                    while (u < n && !gap.far(s[u], s[r])) ++u;
                    per_sample[by_position ? r : index[r]] = l + (n - u);
                    if (((r - r0) & (kTickWork - 1)) == 0) tick(kTickWork);
                }
                partial[c] = total;
            },
            control);
        std::uint64_t total = 0;
        for (auto x : partial) total += x;
        return total;
    }
    // Every rankable pair once: for each label b, the labels far above it
    // (a suffix), counted like the pairs of a merge with both runs the whole
    // array, in pieces stepped together.
    const int threads = threads_for(n, n_threads);
    const std::size_t tasks = threads == 1 ? 1 : kChunksPerThread * static_cast<std::size_t>(threads);
    const std::size_t pieces = tasks * kLanes;
    std::vector<std::uint64_t> partial(tasks, 0);
    parallel_for(
        tasks, threads,
        [&](std::size_t task) {
            Ticker tick(control);
            if constexpr (std::is_same_v<L, double>) {
                if (const simd::PairedKernels* vector = simd::paired_kernels(simd)) {
                    // The task's labels in slices of kTickWork, four at a time,
                    // checking the control in between.
                    const std::size_t j0 = n * task / tasks, j1 = n * (task + 1) / tasks;
                    std::array<simd::CountJob, kLanes> jobs;
                    std::size_t live = 0;
                    for (std::size_t j = j0; j < j1; j += kTickWork) {
                        const L b = s[j];
                        const std::size_t p =
                            std::partition_point(s, s + n, [&](const L& a) { return !gap.far(a, b); }) - s;
                        jobs[live++] = {p, n, j, std::min(j1, j + kTickWork)};
                        if (live == kLanes || j + kTickWork >= j1) {
                            partial[task] += vector->count(s, jobs.data(), live, gap.min_dist);
                            tick(live * kTickWork);
                            live = 0;
                        }
                    }
                    return;
                }
            }
            std::array<CountCursor<Gap>, kLanes> c;
            std::size_t used = 0;
            for (std::size_t t = task * kLanes; t < (task + 1) * kLanes; ++t) {
                const std::size_t j0 = n * t / pieces, j1 = n * (t + 1) / pieces;
                if (j0 == j1) continue;
                const L b = s[j0];
                const std::size_t p = std::partition_point(s, s + n, [&](const L& a) { return !gap.far(a, b); }) - s;
                c[used++] = CountCursor<Gap>{s, nullptr, p, n, j0, j1, 0};
            }
            step_all(c.data(), used, [&gap](CountCursor<Gap>& x) { x.step(gap); }, tick);
            for (std::size_t t = 0; t < used; ++t) partial[task] += c[t].count;
        },
        control);
    std::uint64_t total = 0;
    for (auto c : partial) total += c;
    return total;
}

template std::uint64_t count_inversions<false, RealGap>(Buffer<double>&, Buffer<std::uint64_t>&, std::uint64_t*,
                                                        const RealGap&, SimdLevel, int, Control&);
template std::uint64_t count_inversions<true, RealGap>(Buffer<double>&, Buffer<std::uint64_t>&, std::uint64_t*,
                                                       const RealGap&, SimdLevel, int, Control&);
template std::uint64_t count_inversions<false, IntegerGap>(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&,
                                                           std::uint64_t*, const IntegerGap&, SimdLevel, int, Control&);
template std::uint64_t count_inversions<true, IntegerGap>(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&,
                                                          std::uint64_t*, const IntegerGap&, SimdLevel, int, Control&);
template std::uint64_t count_inversions_carried<RealGap>(Buffer<double>&, Buffer<std::uint64_t>&, std::uint64_t,
                                                         const RealGap&, int, Control&);
template std::uint64_t count_inversions_carried<IntegerGap>(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&,
                                                            std::uint64_t, const IntegerGap&, int, Control&);
template std::uint64_t count_rankable<RealGap>(const Buffer<double>&, const Buffer<std::uint64_t>&, const RealGap&,
                                               std::uint64_t*, int, SimdLevel, Control&);
template std::uint64_t count_rankable<IntegerGap>(const Buffer<std::uint64_t>&, const Buffer<std::uint64_t>&,
                                                  const IntegerGap&, std::uint64_t*, int, SimdLevel, Control&);

}  // namespace pairmetrics::paired_detail
