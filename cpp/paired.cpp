#include "paired.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "key_sort.hpp"
#include "paired_simd.hpp"
#include "parallel.hpp"

namespace pairmetrics {
namespace {

// Below this many elements per thread, extra threads cost more than they save.
constexpr std::size_t kMinPerThread = std::size_t{1} << 16;
// Work split across threads is cut into this many tasks per thread.
constexpr std::size_t kChunksPerThread = 8;
// Runs this short are sorted by insertion before the merge passes.
constexpr std::size_t kInsertionRun = 16;
// Elements of work between two control checks (tens of microseconds).
constexpr std::size_t kTickWork = std::size_t{1} << 15;

// Counts work done by one thread and reports it to the control every kTickWork
// elements (on the calling thread that may run the callback; elsewhere it
// only looks at the cancel flag).
class Ticker {
  public:
    explicit Ticker(Control& control) : control_(control) {}
    void operator()(std::size_t work) {
        pending_ += work;
        if (pending_ >= kTickWork) control_.advance(std::exchange(pending_, 0));
    }

  private:
    Control& control_;
    std::size_t pending_ = 0;
};

// Memory for large work arrays. On Linux they are aligned to 2 MiB and
// advised to use transparent huge pages (where the system allows it): a
// fresh array then costs a page fault per 2 MiB instead of one per 4 KiB,
// which at a million elements is a good part of the run time.
inline void* allocate_work(std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::size_t kHuge = std::size_t{1} << 21;
    if (bytes >= 2 * kHuge) {
        const std::size_t rounded = (bytes + kHuge - 1) & ~(kHuge - 1);
        if (void* p = std::aligned_alloc(kHuge, rounded)) {
            madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a refusal is harmless
            return p;
        }
        throw std::bad_alloc();
    }
#endif
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    throw std::bad_alloc();
}

// An uninitialised array of trivially copyable T (no pass to zero it).
template <class T>
class Buffer {
    static_assert(std::is_trivially_copyable_v<T>, "a Buffer holds plain values");

  public:
    Buffer() = default;
    explicit Buffer(std::size_t n)
        : data_(n ? static_cast<T*>(allocate_work(n * sizeof(T))) : nullptr), size_(n) {}
    Buffer(Buffer&& other) noexcept { swap(other); }
    Buffer& operator=(Buffer&& other) noexcept {
        Buffer(std::move(other)).swap(*this);
        return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { std::free(data_); }
    T* data() { return data_; }
    const T* data() const { return data_; }
    std::size_t size() const { return size_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    void swap(Buffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
    }
    void release() { Buffer().swap(*this); }

  private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

// How two labels are compared. far(hi, lo): is hi at least min_dist above lo?
// Real labels: the difference in double precision (as pairedeval computes it).
struct RealGap {
    using Label = double;
    double min_dist;
    bool far(double hi, double lo) const { return hi - lo >= min_dist; }
};
// Integer labels, as order keys (below): a difference of two keys is the
// difference of the two values, exactly, in [0, 2**64) when hi >= lo. An
// integer difference is >= min_dist exactly when it is >= ceil(min_dist).
struct IntegerGap {
    using Label = std::uint64_t;
    std::uint64_t min_dist;  // >= 1
    bool far(std::uint64_t hi, std::uint64_t lo) const { return (hi >= lo) & (hi - lo >= min_dist); }
};

// Reads element i of a strided array; bool as its byte compared with 0 (a
// bool holding another byte than 0 or 1 must not be loaded as bool).
template <class T>
auto read(const T* data, std::ptrdiff_t stride, std::size_t i) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(i) * stride;
    if constexpr (std::is_same_v<T, bool>) {
        return static_cast<std::uint8_t>(reinterpret_cast<const unsigned char*>(data)[at] != 0);
    } else {
        return data[at];
    }
}

template <bool Track, class L>
struct Record {
    std::uint64_t key;
    L label;
};
template <class L>
struct Record<true, L> {
    std::uint64_t key;
    L label;
    std::uint64_t index;
};

// Which key bits vary across a set of keys: those set in some key (any) but
// not in all of them.
struct KeyBits {
    std::uint64_t any = 0, all = ~std::uint64_t{0};
    void add(std::uint64_t key) {
        any |= key;
        all &= key;
    }
    void add(const KeyBits& other) {
        any |= other.any;
        all &= other.all;
    }
    std::uint64_t varying() const { return any ^ all; }
};

int bit_width(std::uint64_t v) {
    int width = 0;
    for (; v != 0; v >>= 1) ++width;
    return width;
}

// MSD radix sort by key. Each level spreads the records by the highest bits
// that still vary (so a byte that is the same in every key costs nothing).
// A segment of at most 2**kLeafBits records takes its last level with about
// one bucket per record: the buckets then hold a record or two each, and one
// insertion pass over the whole segment finishes them with few mispredicted
// branches (sorting many tiny buckets one by one is dominated by them). Work
// space: one array of bucket starts per level.
constexpr std::size_t kInsertionSort = 16;
constexpr int kMaxBits = 11;
constexpr int kLeafBits = 14;
constexpr std::size_t kLeafBucket = 32;  // larger leaf buckets (skewed keys) get a level of their own
constexpr int kMaxDepth = 24;            // each level takes >= 3 of the 64 key bits

struct RadixWorkspace {
    struct Level {
        std::unique_ptr<std::size_t[]> data;
        std::size_t size = 0;
    };
    std::vector<Level> levels;
    // Room for the bucket starts and cursors of one level: left
    // uninitialised (a level fills what it uses), and stable while deeper
    // levels grow their own.
    std::size_t* level(int depth, std::size_t buckets) {
        if (levels.size() <= static_cast<std::size_t>(depth)) levels.resize(depth + 1);
        Level& level = levels[depth];
        if (const std::size_t need = 2 * (buckets + 1); level.size < need) {
            level.data.reset(new std::size_t[need]);
            level.size = need;
        }
        return level.data.get();
    }
};

template <class R>
void insertion_sort_by_key(R* a, std::size_t n) {
    for (std::size_t i = 1; i < n; ++i) {
        if (key_of(a[i - 1]) <= key_of(a[i])) continue;
        const R x = a[i];
        std::size_t j = i;
        for (; j > 0 && key_of(a[j - 1]) > key_of(x); --j) a[j] = a[j - 1];
        a[j] = x;
    }
}

template <class R>
void sort_segment(R* a, R* scratch, std::size_t n, int depth, RadixWorkspace& ws, Ticker& tick) {
    if (n <= kInsertionSort) {
        insertion_sort_by_key(a, n);
        tick(n);
        return;
    }
    KeyBits key_bits;
    for (std::size_t i = 0; i < n; ++i) key_bits.add(key_of(a[i]));
    tick(n);
    const std::uint64_t varying = key_bits.varying();
    if (varying == 0) return;
    if (depth >= kMaxDepth) {  // not reached: every level consumes bits
        std::sort(a, a + n, [](const R& x, const R& y) { return key_of(x) < key_of(y); });
        return;
    }
    const int width = bit_width(varying);
    const bool leaf = bit_width(n) <= kLeafBits;
    const int bits = std::min(width, leaf ? bit_width(n) : std::clamp(bit_width(n) - 2, 3, kMaxBits));
    const int shift = width - bits;
    const std::size_t buckets = std::size_t{1} << bits, mask = buckets - 1;
    std::size_t* start = ws.level(depth, buckets);
    std::fill_n(start, buckets + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++start[((key_of(a[i]) >> shift) & mask) + 1];
    for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    std::size_t* next = start + buckets + 1;
    std::copy(start, start + buckets, next);
    for (std::size_t i = 0; i < n; ++i) scratch[next[(key_of(a[i]) >> shift) & mask]++] = a[i];
    std::memcpy(static_cast<void*>(a), scratch, n * sizeof(R));
    tick(3 * n);
    const std::size_t own_level = leaf ? kLeafBucket : 1;
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t begin = start[b], size = start[b + 1] - begin;
        if (size > own_level) sort_segment(a + begin, scratch + begin, size, depth + 1, ws, tick);
    }
    if (leaf) {
        insertion_sort_by_key(a, n);
        tick(n);
    }
}

// Sorts records by label, descending, checking the control between pieces.
template <class R>
void sort_by_label_descending(R* data, std::size_t n, Ticker& tick) {
    auto greater = [](const R& x, const R& y) { return x.label > y.label; };
    constexpr std::size_t kPiece = std::size_t{1} << 14;
    if (n <= kPiece) {
        std::sort(data, data + n, greater);
        tick(n * 4);
        return;
    }
    for (std::size_t b = 0; b < n; b += kPiece) {
        std::sort(data + b, data + std::min(b + kPiece, n), greater);
        tick(kPiece * 4);
    }
    Buffer<R> buffer(n);
    R* src = data;
    R* dst = buffer.data();
    for (std::size_t width = kPiece; width < n; width *= 2) {
        for (std::size_t l = 0; l < n; l += 2 * width) {
            const std::size_t m = std::min(l + width, n), r = std::min(l + 2 * width, n);
            std::size_t i = l, j = m, k = l;
            while (i < m && j < r) {
                const std::size_t steps = std::min({m - i, r - j, kTickWork});
                for (std::size_t s = 0; s < steps; ++s) dst[k++] = greater(src[j], src[i]) ? src[j++] : src[i++];
                tick(steps);
            }
            k = std::copy(src + i, src + m, dst + k) - dst;
            std::copy(src + j, src + r, dst + k);
            tick(r - l);
        }
        std::swap(src, dst);
    }
    if (src != data) std::copy(src, src + n, data);
}

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
constexpr std::size_t kLanes = 4;                      // pieces stepped together

// Counting and merging walk pairs of runs with chains of dependent loads
// and compares; up to kLanes independent pieces stepped together let the
// CPU overlap their chains. The steps are branch-free (random labels make
// branches unpredictable). Each step moves one of two positions by one,
// so a number of steps below both remaining lengths needs no bounds checks.
template <class Gap>
struct CountCursor {
    using L = typename Gap::Label;
    const L* src;
    std::size_t p, m, j, r;
    std::uint64_t count;
    bool active() const { return p < m && j < r; }
    std::size_t safe_steps() const { return std::min(m - p, r - j); }
    void step(const Gap& gap) {
        const std::size_t below = !gap.far(src[p], src[j]);
        count += (m - p) & (below - 1);  // left labels [p, m) are far above src[j]
        p += below;
        j += 1 - below;
    }
};
template <class L>
struct MergeCursor {
    const L* src;
    L* dst;
    std::size_t i, m, j, r, k;
    bool active() const { return i < m && j < r; }
    std::size_t safe_steps() const { return std::min(m - i, r - j); }
    void step() {
        const L x = src[i], y = src[j];
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

template <std::size_t K, class Cursor, class Step>
void step_together(Cursor* cursors, Step&& step, Ticker& tick) {
    for (;;) {
        std::size_t steps = kTickWork;
        for (std::size_t t = 0; t < K; ++t) steps = std::min(steps, cursors[t].safe_steps());
        if (steps == 0) break;
        for (std::size_t s = 0; s < steps; ++s)
            for (std::size_t t = 0; t < K; ++t) step(cursors[t]);
        tick(steps * K);
    }
}

template <class Cursor, class Step>
void step_all(Cursor* cursors, std::size_t count, Step&& step, Ticker& tick) {
    if (count == 4) step_together<4>(cursors, step, tick);
    if (count >= 2) step_together<2>(cursors, step, tick);
    if (count >= 3) step_together<2>(cursors + count - 2, step, tick);
    for (std::size_t t = 0; t < count; ++t) {
        while (cursors[t].active()) {
            const std::size_t steps = std::min(kTickWork, cursors[t].safe_steps());
            for (std::size_t s = 0; s < steps; ++s) step(cursors[t]);
            tick(steps);
        }
    }
}


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

template <bool Track, class Gap>
class InversionCounter {
  public:
    using L = typename Gap::Label;

    InversionCounter(Buffer<L>& labels, Buffer<std::uint64_t>& index, std::uint64_t* inverted, Gap gap,
                     SimdLevel simd, Control& control)
        : a_(labels), idx_(index), inverted_(inverted), gap_(gap), control_(control), n_(labels.size()),
          a_buf_(labels.size()), idx_buf_(Track ? labels.size() : 0), vector_(kVectorised && simd == SimdLevel::avx512) {}

    // Sorts the labels ascending and returns the number of inversions.
    std::uint64_t run(int n_threads) {
        const std::size_t n = n_;
        if (n < 2) return 0;
        const int threads = n >= 2 * kMinPerThread ? std::max(n_threads, 1) : 1;
        const std::size_t blocks = (n + kBlock - 1) / kBlock;
        std::vector<std::uint64_t> partial(blocks, 0);
        parallel_for(blocks, threads, [&](std::size_t b) {
            Ticker tick(control_);
            partial[b] = sort_block(b * kBlock, std::min(n, (b + 1) * kBlock), tick);
        }, &control_);
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
            parallel_for(tasks, threads, [&](std::size_t t) {
                Ticker tick(control_);
                const std::size_t begin = t * kLanes;
                if (t < count_tasks)
                    counts[t] = count(level, count_pieces.data() + begin,
                                      std::min(begin + kLanes, count_pieces.size()) - begin, tick);
                if (t < left_tasks)
                    count_left(level, left_pieces.data() + begin, std::min(begin + kLanes, left_pieces.size()) - begin,
                               tick);
                if (t < merge_tasks)
                    merge(level, merge_pieces.data() + begin, std::min(begin + kLanes, merge_pieces.size()) - begin,
                          tick);
            }, &control_);
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
        const std::uint64_t* src_idx;
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
            if (right == 0) return;
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
                total += simd::sort_runs_avx512(a_.data() + begin, runs, gap_.min_dist);
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
            const std::size_t parts = Track ? 1 : (kLanes + pairs - 1) / pairs;  // enough pieces to step together
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
                total = simd::count_avx512(level.src, jobs.data(), n_pieces, gap_.min_dist);
                tick(work);
                return total;
            }
        }
        if constexpr (!Track) {
            std::array<CountCursor<Gap>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t)
                c[t] = CountCursor<Gap>{level.src, pieces[t].p, pieces[t].m, pieces[t].j, pieces[t].r, 0};
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
                    inverted_[level.src_idx[j]] += m - p;
                    if (((j - pieces[t].j) & (kTickWork - 1)) == 0) tick(kTickWork);
                }
            }
        }
        return total;
    }

    // Each left label is inverted with a prefix of the right run (per sample only).
    void count_left(const Level& level, const LeftPiece* pieces, std::size_t n_pieces, Ticker& tick) const {
        const L* src = level.src;
        for (std::size_t t = 0; t < n_pieces; ++t) {
            const LeftPiece& piece = pieces[t];
            for (std::size_t i = piece.i, q = piece.q; i < piece.iend; ++i) {
                while (q < piece.r && gap_.far(src[i], src[q])) ++q;
                inverted_[level.src_idx[i]] += q - piece.m;
                if (((i - piece.i) & (kTickWork - 1)) == 0) tick(kTickWork);
            }
        }
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
                simd::merge_avx512(level.src, level.dst, jobs.data(), n_pieces);
                tick(work);
                return;
            }
        }
        if constexpr (!Track) {
            std::array<MergeCursor<L>, kLanes> c;
            for (std::size_t t = 0; t < n_pieces; ++t)
                c[t] = MergeCursor<L>{level.src, level.dst, pieces[t].i, pieces[t].m, pieces[t].j, pieces[t].r,
                                   pieces[t].k};
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
    Gap gap_;
    Control& control_;
    std::size_t n_;
    Buffer<L> a_buf_;
    Buffer<std::uint64_t> idx_buf_;
    // The AVX-512 loops exist for real labels and totals only.
    static constexpr bool kVectorised = !Track && std::is_same_v<L, double>;
    const bool vector_;
};

// Orders a run of records with equal scores by label, descending (so every
// rankable tied pair is counted as an inversion, whatever the input order),
// and returns how many of its pairs are rankable.
template <bool Track, class Gap>
std::uint64_t order_tied_run(Record<Track, typename Gap::Label>* run, std::size_t len, const Gap& gap,
                             std::uint64_t* tied, Ticker& tick) {
    sort_by_label_descending(run, len, tick);
    std::uint64_t total = 0;
    // Rankable partners of q before it: a prefix [0, p) of the run.
    for (std::size_t q = 0, p = 0; q < len; ++q) {
        while (p < q && gap.far(run[p].label, run[q].label)) ++p;
        total += p;
        if constexpr (Track) tied[run[q].index] += p;
    }
    if constexpr (Track) {
        // ... and after it: a suffix [s, len).
        for (std::size_t q = len, s = len; q-- > 0;) {
            while (s > q + 1 && gap.far(run[q].label, run[s - 1].label)) --s;
            tied[run[q].index] += len - s;
        }
    }
    tick(2 * len);
    return total;
}

// Copies the labels (and input positions) of the records, sorted by score,
// into `sequence` (and `index`), each run of equal scores ordered by
// order_tied_run; returns how many rankable pairs have tied scores.
template <bool Track, class Gap>
std::uint64_t labels_in_score_order(Buffer<Record<Track, typename Gap::Label>>& records, const Gap& gap,
                                    std::uint64_t* tied, Buffer<typename Gap::Label>& sequence,
                                    Buffer<std::uint64_t>& index, Control& control) {
    Ticker tick(control);
    std::uint64_t total = 0;
    const std::size_t n = records.size();
    for (std::size_t begin = 0, end; begin < n; begin = end) {
        // A stretch without ties (at most kTickWork long), then the run of
        // equal scores that stopped it, if any.
        const std::size_t limit = std::min(n, begin + kTickWork);
        for (end = begin + 1; end < limit && records[end].key != records[end - 1].key; ++end) {}
        if (end < n && records[end].key == records[end - 1].key) {
            const std::size_t run = end - 1;
            for (++end; end < n && records[end].key == records[run].key; ++end) {}
            total += order_tied_run(records.data() + run, end - run, gap, tied, tick);
        }
        for (std::size_t piece = begin; piece < end; piece += kTickWork) {
            for (std::size_t i = piece; i < std::min(end, piece + kTickWork); ++i) {
                sequence[i] = records[i].label;
                if constexpr (Track) index[i] = records[i].index;
            }
            tick(std::min(end - piece, kTickWork));
        }
    }
    return total;
}

// Dense ranks of the labels if there are at most `limit` distinct values
// (else an empty `values`), found with a small open-addressing table.
template <class L>
struct LabelRanks {
    std::vector<L> values;            // distinct labels, ascending
    Buffer<std::uint32_t> rank;       // per position of the sequence
};

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
inline std::uint64_t few_label_inversions_parallel(const Buffer<std::uint32_t>& rank,
                                                   const std::vector<std::size_t>& above, std::size_t k,
                                                   int n_threads, Control& control) {
    const std::size_t n = rank.size(), chunks = kChunksPerThread * static_cast<std::size_t>(n_threads);
    std::vector<std::size_t> bound(chunks + 1);
    for (std::size_t c = 0; c <= chunks; ++c) bound[c] = n * c / chunks;
    std::vector<std::uint64_t> histogram(chunks * k, 0);
    parallel_for(chunks, n_threads, [&](std::size_t c) {
        Ticker tick(control);
        std::uint64_t* h = histogram.data() + c * k;
        for (std::size_t q = bound[c]; q < bound[c + 1]; ++q) {
            ++h[rank[q]];
            if ((q & (kTickWork - 1)) == 0) tick(kTickWork);
        }
    }, &control);
    // earlier[c * k + r]: labels in chunks before c with rank >= above[r].
    std::vector<std::uint64_t> earlier(chunks * k, 0), at_least(k + 1, 0);
    for (std::size_t c = 1; c < chunks; ++c) {
        for (std::size_t r = k; r-- > 0;) at_least[r] = at_least[r + 1] + histogram[(c - 1) * k + r];
        for (std::size_t r = 0; r < k; ++r) earlier[c * k + r] = earlier[(c - 1) * k + r] + at_least[above[r]];
    }
    std::vector<std::uint64_t> partial(chunks, 0);
    parallel_for(chunks, n_threads, [&](std::size_t c) {
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
    }, &control);
    std::uint64_t total = 0;
    for (auto x : partial) total += x;
    return total;
}

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
    for (std::size_t r = 0; r < k; ++r)
        total_rankable += (histogram[r + 1] - histogram[r]) * (n - histogram[above[r]]);
    if constexpr (!Track) {
        if (n_threads > 1 && n >= 2 * kMinPerThread)
            return {few_label_inversions_parallel(ranks.rank, above, k, n_threads, control), total_rankable};
    }
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
        if ((q & (kTickWork / 4 - 1)) == 0) tick(kTickWork);
    }
    if constexpr (Track) {
        Fenwick after(k);
        for (std::size_t p = n; p-- > 0;) {
            const std::uint32_t r = ranks.rank[p];
            inverted[index[p]] += after.count_below(below[r]);
            after.add(r);
            if ((p & (kTickWork / 4 - 1)) == 0) tick(kTickWork);
        }
    }
    return {inversions, total_rankable};
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
        Ticker tick(control);
        std::uint64_t total = 0;
        for (std::size_t r = 0, l = 0, u = 0; r < n; ++r) {
            while (l < r && gap.far(s[r], s[l])) ++l;
            total += l;
            u = std::max(u, r + 1);
            while (u < n && !gap.far(s[u], s[r])) ++u;
            per_sample[index[r]] = l + (n - u);
            if ((r & (kTickWork - 1)) == 0) tick(kTickWork);
        }
        return total;
    }
    // Every rankable pair once: for each label b, the labels far above it
    // (a suffix), counted like the pairs of a merge with both runs the whole
    // array, in pieces stepped together.
    const int threads = n >= 2 * kMinPerThread ? std::max(n_threads, 1) : 1;
    const std::size_t tasks = threads == 1 ? 1 : kChunksPerThread * static_cast<std::size_t>(threads);
    const std::size_t pieces = tasks * kLanes;
    std::vector<std::uint64_t> partial(tasks, 0);
    parallel_for(tasks, threads, [&](std::size_t task) {
        Ticker tick(control);
        if constexpr (std::is_same_v<L, double>) {
            if (simd == SimdLevel::avx512) {
                // The task's labels in slices of kTickWork, four at a time,
                // checking the control in between.
                const std::size_t j0 = n * task / tasks, j1 = n * (task + 1) / tasks;
                std::array<simd::CountJob, kLanes> jobs;
                std::size_t live = 0;
                for (std::size_t j = j0; j < j1; j += kTickWork) {
                    const L b = s[j];
                    const std::size_t p = std::partition_point(s, s + n, [&](const L& a) { return !gap.far(a, b); }) - s;
                    jobs[live++] = {p, n, j, std::min(j1, j + kTickWork)};
                    if (live == kLanes || j + kTickWork >= j1) {
                        partial[task] += simd::count_avx512(s, jobs.data(), live, gap.min_dist);
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
            c[used++] = CountCursor<Gap>{s, p, n, j0, j1, 0};
        }
        step_all(c.data(), used, [&gap](CountCursor<Gap>& x) { x.step(gap); }, tick);
        for (std::size_t t = 0; t < used; ++t) partial[task] += c[t].count;
    }, &control);
    std::uint64_t total = 0;
    for (auto c : partial) total += c;
    return total;
}

// Few distinct labels ("classes": binary, ordinal, small integer labels),
// totals only. Pairs inside a class are never rankable, so no record sort is
// needed: the score keys are grouped by class (a counting sort), each
// class's keys are sorted alone (8-byte keys, half the memory traffic of
// records), and each pair of classes far apart is counted with one merge
// walk of their two sorted key arrays: O(k n) for k classes.
constexpr std::size_t kMaxClasses = 16;

// Label i as Gap::Label: a double, or the order key of an integer.
template <class L, class Label>
L label_at(const Label* labels, std::ptrdiff_t stride, std::size_t i) {
    const auto label = read(labels, stride, i);
    if constexpr (std::is_floating_point_v<L>) {
        return static_cast<double>(label);
    } else {
        return order_key(label);
    }
}

// Walks sorted keys b[j, end) against sorted keys a[p, na), where p starts as
// the number of a keys below b[j] (Strict: a < b[j], else a <= b[j]), and sums
// that number over the b keys. Branch-free steps; `equal` records whether a
// key of a equals a key of b (Strict walk only).
template <bool Strict>
struct BelowCursor {
    const std::uint64_t* a;
    const std::uint64_t* b;
    std::size_t p, na, j, end;
    std::uint64_t count = 0;
    bool equal = false;
    bool active() const { return p < na && j < end; }
    std::size_t safe_steps() const { return std::min(na - p, end - j); }
    void step() {
        const std::uint64_t x = a[p], y = b[j];
        const bool advance = Strict ? x < y : x <= y;
        count += p & (std::size_t{advance} - 1);  // b[j] is consumed: p keys of a lie below it
        if constexpr (Strict) equal |= !advance & (x == y);
        p += advance;
        j += !advance;
    }
    void finish() {  // a is exhausted: every key of a lies below the rest of b
        count += static_cast<std::uint64_t>(na) * (end - j);
        j = end;
    }
};

// One piece of a walk: the keys b[j0, j1) against all of a (both sorted).
struct WalkPiece {
    const std::uint64_t* a;
    std::size_t na;
    const std::uint64_t* b;
    std::size_t j0, j1;
    std::uint64_t count = 0;  // out: sum over b[j0, j1) of the a keys below
    bool equal = false;       // out (Strict walks): some key of a equals one of b[j0, j1)
};

// Appends the pieces of the walk of b[0, nb) against a[0, na): about
// `piece` steps each.
inline void cut_walk(const std::uint64_t* a, std::size_t na, const std::uint64_t* b, std::size_t nb,
                     std::size_t piece, std::vector<WalkPiece>& pieces) {
    if (na == 0 || nb == 0) return;
    const std::size_t parts = std::clamp<std::size_t>((na + nb) / piece, 1, nb);
    for (std::size_t t = 0; t < parts; ++t) pieces.push_back({a, na, b, nb * t / parts, nb * (t + 1) / parts});
}

// Walks every piece, kLanes pieces stepped together per task, the tasks
// spread over the threads.
template <bool Strict>
void walk(std::vector<WalkPiece>& pieces, int n_threads, Control& control) {
    const std::size_t tasks = (pieces.size() + kLanes - 1) / kLanes;
    parallel_for(tasks, n_threads, [&](std::size_t task) {
        Ticker tick(control);
        std::array<BelowCursor<Strict>, kLanes> c;
        const std::size_t begin = task * kLanes, used = std::min(kLanes, pieces.size() - begin);
        for (std::size_t t = 0; t < used; ++t) {
            const WalkPiece& w = pieces[begin + t];
            const std::uint64_t y = w.b[w.j0];
            const std::size_t p =
                (Strict ? std::lower_bound(w.a, w.a + w.na, y) : std::upper_bound(w.a, w.a + w.na, y)) - w.a;
            c[t] = BelowCursor<Strict>{w.a, w.b, p, w.na, w.j0, w.j1};
        }
        step_all(c.data(), used, [](BelowCursor<Strict>& x) { x.step(); }, tick);
        for (std::size_t t = 0; t < used; ++t) {
            c[t].finish();
            pieces[begin + t].count = c[t].count;
            pieces[begin + t].equal = c[t].equal;
        }
    }, &control);
}

// Counts by classes if the labels take at most min(limit, kMaxClasses)
// distinct values; returns false (having counted nothing) otherwise. Labels
// that compare equal (-0.0 and +0.0) are one class.
//
// Chunks of the input, spread over the threads, find their classes and
// class ids, then scatter their score keys to the class segments. Each class
// segment is cut into up to kMaxRuns runs sorted on their own (on different
// threads); the counts of two classes are the sums over their pairs of runs.
constexpr std::size_t kMaxRuns = 4;

template <class Gap, class Score, class Label>
bool count_by_classes(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                      std::ptrdiff_t label_stride, std::size_t n, const Gap& gap, std::size_t limit, int n_threads,
                      Control& control, PairedCounts& out) {
    using L = typename Gap::Label;
    limit = std::min(limit, kMaxClasses);
    if (limit == 0) return false;
    {
        // A look at the first labels turns most real-valued labels away
        // before anything is allocated.
        std::array<L, kMaxClasses> seen{};
        std::size_t k = 0;
        for (std::size_t i = 0; i < std::min<std::size_t>(n, 4096); ++i) {
            const L v = label_at<L>(labels, label_stride, i);
            if (std::find(seen.begin(), seen.begin() + k, v) != seen.begin() + k) continue;
            if (k == limit) return false;
            seen[k++] = v;
        }
    }
    const int threads = n >= 2 * kMinPerThread ? std::max(n_threads, 1) : 1;
    const std::size_t chunks = threads == 1 ? 1 : kChunksPerThread * static_cast<std::size_t>(threads);
    std::vector<std::size_t> bound(chunks + 1);
    for (std::size_t c = 0; c <= chunks; ++c) bound[c] = n * c / chunks;

    // Pass 1: class ids within each chunk (a label not seen before in the
    // chunk opens a local class).
    struct Local {
        std::array<L, kMaxClasses> value{};
        std::array<std::size_t, kMaxClasses> size{};
        std::array<std::uint8_t, kMaxClasses> global{};
        std::size_t k = 0;
        bool overflow = false;
    };
    std::vector<Local> local(chunks);
    Buffer<std::uint8_t> id(n);
    std::atomic<bool> overflow{false};
    parallel_for(chunks, threads, [&](std::size_t c) {
        Local& loc = local[c];
        for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kTickWork) {
            const std::size_t end = std::min(bound[c + 1], begin + kTickWork);
            for (std::size_t i = begin; i < end; ++i) {
                const L v = label_at<L>(labels, label_stride, i);
                std::size_t t = loc.k;
                for (std::size_t u = 0; u < loc.k; ++u) t = loc.value[u] == v ? u : t;
                if (t == loc.k) {
                    if (loc.k == limit || overflow.load(std::memory_order_relaxed)) {
                        overflow.store(true, std::memory_order_relaxed);
                        return;
                    }
                    loc.value[loc.k++] = v;
                }
                id[i] = static_cast<std::uint8_t>(t);
                ++loc.size[t];
            }
            control.advance(end - begin);
        }
    }, &control);
    if (overflow.load()) return false;
    // The classes of all chunks, ascending.
    std::vector<L> value;
    for (const Local& loc : local)
        for (std::size_t t = 0; t < loc.k; ++t)
            if (std::find(value.begin(), value.end(), loc.value[t]) == value.end()) value.push_back(loc.value[t]);
    if (value.size() > limit) return false;
    std::sort(value.begin(), value.end());
    const std::size_t k = value.size();
    std::array<std::size_t, kMaxClasses + 1> offset{};
    for (Local& loc : local) {
        for (std::size_t t = 0; t < loc.k; ++t) {
            const std::size_t g = std::find(value.begin(), value.end(), loc.value[t]) - value.begin();
            loc.global[t] = static_cast<std::uint8_t>(g);
            offset[g + 1] += loc.size[t];
        }
    }
    for (std::size_t g = 0; g < k; ++g) offset[g + 1] += offset[g];
    // Pass 2: score keys grouped by class, in input order within a class.
    std::vector<std::array<std::size_t, kMaxClasses>> next(chunks);
    {
        std::array<std::size_t, kMaxClasses> at{};
        std::copy_n(offset.begin(), kMaxClasses, at.begin());
        for (std::size_t c = 0; c < chunks; ++c) {
            next[c] = at;
            for (std::size_t t = 0; t < local[c].k; ++t) at[local[c].global[t]] += local[c].size[t];
        }
    }
    Buffer<std::uint64_t> keys(n), scratch(n);
    parallel_for(chunks, threads, [&](std::size_t c) {
        const Local& loc = local[c];
        std::array<std::size_t, kMaxClasses> at = next[c];
        for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kTickWork) {
            const std::size_t end = std::min(bound[c + 1], begin + kTickWork);
            for (std::size_t i = begin; i < end; ++i)
                keys[at[loc.global[id[i]]]++] = order_key(read(scores, score_stride, i));
            control.advance(end - begin);
        }
    }, &control);
    id.release();
    // Runs of each class, sorted on their own.
    struct Run {
        std::size_t begin, size;
        const std::uint64_t* sorted;
    };
    std::vector<std::vector<Run>> runs(k);
    std::vector<Run*> tasks;
    for (std::size_t g = 0; g < k; ++g) {
        const std::size_t size = offset[g + 1] - offset[g];
        const std::size_t parts = std::clamp<std::size_t>(
            std::min<std::size_t>(static_cast<std::size_t>(threads), size / kMinPerThread), 1, kMaxRuns);
        for (std::size_t r = 0; r < parts; ++r) {
            const std::size_t b = offset[g] + size * r / parts, e = offset[g] + size * (r + 1) / parts;
            runs[g].push_back({b, e - b, nullptr});
        }
    }
    for (auto& class_runs : runs)
        for (Run& run : class_runs) tasks.push_back(&run);
    std::sort(tasks.begin(), tasks.end(), [](const Run* x, const Run* y) { return x->size > y->size; });
    parallel_for(tasks.size(), threads, [&](std::size_t t) {
        Run& run = *tasks[t];
        run.sorted = radix_sort_by_key(keys.data() + run.begin, scratch.data() + run.begin, run.size, control);
    }, &control);
    // Every pair of classes far apart, the lower label first: one walk per
    // pair of their runs, cut into pieces for the threads. Pairs with equal
    // keys are walked again, counting the keys of a at or below each key of b.
    std::size_t work = 0;
    std::vector<std::pair<std::size_t, std::size_t>> far_pairs;
    for (std::size_t lo = 0; lo < k; ++lo) {
        for (std::size_t hi = lo + 1; hi < k; ++hi) {
            if (!gap.far(value[hi], value[lo])) continue;
            far_pairs.emplace_back(lo, hi);
            work += runs[hi].size() * (offset[lo + 1] - offset[lo]) + runs[lo].size() * (offset[hi + 1] - offset[hi]);
        }
    }
    const std::size_t piece =
        std::max<std::size_t>(std::size_t{1} << 12, work / (kChunksPerThread * kLanes * static_cast<std::size_t>(threads)));
    PairedCounts counts;
    for (const auto& [lo, hi] : far_pairs) {
        const std::uint64_t pairs =
            static_cast<std::uint64_t>(offset[lo + 1] - offset[lo]) * (offset[hi + 1] - offset[hi]);
        counts.rankable += pairs;
        counts.incorrect += pairs;  // less the pairs at or below, below
    }
    std::vector<WalkPiece> strict, at_most;
    std::vector<std::size_t> strict_pair, at_most_pair;
    for (std::size_t f = 0; f < far_pairs.size(); ++f)
        for (const Run& a : runs[far_pairs[f].first])
            for (const Run& b : runs[far_pairs[f].second]) {
                cut_walk(a.sorted, a.size, b.sorted, b.size, piece, strict);
                strict_pair.resize(strict.size(), f);
            }
    walk<true>(strict, threads, control);
    std::vector<std::uint8_t> equal(far_pairs.size(), 0);
    std::vector<std::uint64_t> below(far_pairs.size(), 0);
    for (std::size_t t = 0; t < strict.size(); ++t) {
        below[strict_pair[t]] += strict[t].count;
        equal[strict_pair[t]] |= strict[t].equal;
    }
    for (std::size_t f = 0; f < far_pairs.size(); ++f) {
        if (!equal[f]) continue;
        for (const Run& a : runs[far_pairs[f].first])
            for (const Run& b : runs[far_pairs[f].second]) {
                cut_walk(a.sorted, a.size, b.sorted, b.size, piece, at_most);
                at_most_pair.resize(at_most.size(), f);
            }
    }
    walk<false>(at_most, threads, control);
    std::vector<std::uint64_t> not_above(below);  // a keys at or below, summed over b: below + tied
    for (std::size_t f = 0; f < far_pairs.size(); ++f)
        if (equal[f]) not_above[f] = 0;
    for (std::size_t t = 0; t < at_most.size(); ++t) not_above[at_most_pair[t]] += at_most[t].count;
    for (std::size_t f = 0; f < far_pairs.size(); ++f) {
        counts.correct += below[f];
        counts.tied += not_above[f] - below[f];
        counts.incorrect -= not_above[f];
    }
    out = counts;
    return true;
}

// Reads the input of load_sorted_records: the score keys, or whole records
// (score key, label, and the position when tracking), of a range of
// positions. One virtual call per block keeps the radix passes compiled once
// per record type rather than once per pair of input dtypes.
template <class R>
class RecordReader {
  public:
    virtual ~RecordReader() = default;
    virtual void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const = 0;
    virtual void records(std::size_t begin, std::size_t end, R* out) const = 0;
};

template <bool Track, class L, class Score, class Label>
class InputReader final : public RecordReader<Record<Track, L>> {
  public:
    InputReader(const Score* scores, std::ptrdiff_t score_stride, const Label* labels, std::ptrdiff_t label_stride)
        : scores_(scores), labels_(labels), score_stride_(score_stride), label_stride_(label_stride) {}
    void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const override {
        for (std::size_t i = begin; i < end; ++i) out[i - begin] = order_key(read(scores_, score_stride_, i));
    }
    void records(std::size_t begin, std::size_t end, Record<Track, L>* out) const override {
        for (std::size_t i = begin; i < end; ++i) {
            Record<Track, L>& record = out[i - begin];
            record.key = order_key(read(scores_, score_stride_, i));
            record.label = label_at<L>(labels_, label_stride_, i);
            if constexpr (Track) record.index = i;
        }
    }

  private:
    const Score* scores_;
    const Label* labels_;
    std::ptrdiff_t score_stride_, label_stride_;
};

// Records of every input position sorted by score key; the order within
// equal keys is arbitrary (runs of equal keys are re-ordered by label
// afterwards). The input is read three times: for the key bits that vary,
// for a histogram of the highest of them, and to write each record straight
// into its bucket. The buckets are then sorted in cache, spread over the
// threads, each group of buckets with work space the size of its largest
// bucket. So the records are written once, and no second array of them is
// needed.
template <class R>
Buffer<R> load_sorted_records(const RecordReader<R>& reader, std::size_t n, int n_threads, Control& control) {
    constexpr std::size_t kReadBlock = 1024;  // records read at a time (in L1)
    Buffer<R> records(n);
    const int threads = n >= 2 * kMinPerThread ? std::max(n_threads, 1) : 1;
    // Several chunks per thread: a thread that the system pauses holds up
    // the others for one small chunk at most (the rest are handed out).
    const std::size_t chunks = threads == 1 ? 1 : kChunksPerThread * static_cast<std::size_t>(threads);
    std::vector<std::size_t> bound(chunks + 1);
    for (std::size_t c = 0; c <= chunks; ++c) bound[c] = n * c / chunks;
    // Runs body(keys, count) over the blocks of score keys of chunk c.
    const auto for_keys = [&](std::size_t c, auto&& body) {
        Ticker tick(control);
        std::uint64_t key[kReadBlock];
        for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kReadBlock) {
            const std::size_t end = std::min(bound[c + 1], begin + kReadBlock);
            reader.keys(begin, end, key);
            body(key, end - begin);
            tick(end - begin);
        }
    };
    std::vector<KeyBits> chunk_bits(chunks);
    parallel_for(chunks, threads, [&](std::size_t c) {
        KeyBits bits;  // local: neighbouring chunks share a cache line
        for_keys(c, [&](const std::uint64_t* key, std::size_t size) {
            for (std::size_t i = 0; i < size; ++i) bits.add(key[i]);
        });
        chunk_bits[c] = bits;
    }, &control);
    KeyBits key_bits;
    for (const KeyBits& bits : chunk_bits) key_bits.add(bits);
    const std::uint64_t varying = key_bits.varying();
    if (varying == 0 || n <= 4 * kInsertionSort) {
        parallel_for(chunks, threads, [&](std::size_t c) {
            for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kTickWork) {
                reader.records(begin, std::min(bound[c + 1], begin + kTickWork), records.data() + begin);
                control.check();
            }
        }, &control);
        if (varying != 0) {
            Buffer<R> scratch(n);
            RadixWorkspace ws;
            Ticker tick(control);
            sort_segment(records.data(), scratch.data(), n, 0, ws, tick);
        }
        return records;
    }
    const int width = bit_width(varying);
    const int bits = std::min(width, std::clamp(bit_width(n) - 2, 3, kMaxBits));
    const int shift = width - bits;
    const std::size_t buckets = std::size_t{1} << bits, mask = buckets - 1;
    std::vector<std::size_t> histogram(chunks * buckets, 0);
    parallel_for(chunks, threads, [&](std::size_t c) {
        std::size_t* h = histogram.data() + c * buckets;
        for_keys(c, [&](const std::uint64_t* key, std::size_t size) {
            for (std::size_t i = 0; i < size; ++i) ++h[(key[i] >> shift) & mask];
        });
    }, &control);
    std::vector<std::size_t> start(buckets + 1, 0);
    for (std::size_t b = 0, total = 0; b < buckets; ++b) {
        start[b] = total;
        for (std::size_t c = 0; c < chunks; ++c) total += std::exchange(histogram[c * buckets + b], total);
        start[b + 1] = total;
    }
    parallel_for(chunks, threads, [&](std::size_t c) {
        std::size_t* next = histogram.data() + c * buckets;
        Ticker tick(control);
        R block[kReadBlock];
        for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kReadBlock) {
            const std::size_t end = std::min(bound[c + 1], begin + kReadBlock);
            reader.records(begin, end, block);
            for (std::size_t i = 0; i < end - begin; ++i) records[next[(block[i].key >> shift) & mask]++] = block[i];
            tick(end - begin);
        }
    }, &control);
    // Buckets in groups (one workspace each); many groups balance skewed
    // sizes over the threads.
    const std::size_t groups = threads == 1 ? 1 : std::min<std::size_t>(buckets, 16 * chunks);
    parallel_for(groups, threads, [&](std::size_t g) {
        const std::size_t first = buckets * g / groups, last = buckets * (g + 1) / groups;
        std::size_t largest = 0;
        for (std::size_t b = first; b < last; ++b) largest = std::max(largest, start[b + 1] - start[b]);
        Buffer<R> scratch(largest);
        RadixWorkspace ws;
        Ticker tick(control);
        for (std::size_t b = first; b < last; ++b) {
            const std::size_t size = start[b + 1] - start[b];
            if (size > 1) sort_segment(records.data() + start[b], scratch.data(), size, 0, ws, tick);
        }
    }, &control);
    return records;
}

// Everything after loading: the records hold score keys, labels (and input
// positions when tracking), sorted by score key.
template <bool Track, class Gap>
PairedCounts count_pairs(Buffer<Record<Track, typename Gap::Label>>& records, const Gap& gap,
                         PairedPerSample* per_sample, int n_threads, std::size_t few_labels, SimdLevel simd,
                         Control& control) {
    using L = typename Gap::Label;
    const std::size_t n = records.size();

    Buffer<std::uint64_t> inverted(Track ? n : 0);
    if constexpr (Track) {
        std::fill_n(per_sample->tied, n, 0);
        std::fill_n(inverted.data(), n, 0);
    }
    PairedCounts counts;
    Buffer<L> sequence(n);
    Buffer<std::uint64_t> index(Track ? n : 0);
    counts.tied = labels_in_score_order(records, gap, Track ? per_sample->tied : nullptr, sequence, index, control);
    records.release();
    control.check();

    std::uint64_t inversions;
    if (const LabelRanks<L> ranks = rank_few_labels(sequence, few_labels, control); !ranks.values.empty()) {
        std::tie(inversions, counts.rankable) = count_with_few_labels<Track>(
            ranks, index, gap, Track ? inverted.data() : nullptr, Track ? per_sample->rankable : nullptr, n_threads,
            control);
    } else {
        InversionCounter<Track, Gap> counter(sequence, index, Track ? inverted.data() : nullptr, gap, simd, control);
        inversions = counter.run(n_threads);
        counts.rankable = count_rankable(sequence, index, gap, Track ? per_sample->rankable : nullptr, n_threads, simd,
                                         control);
    }
    counts.incorrect = inversions - counts.tied;
    counts.correct = counts.rankable - inversions;
    if constexpr (Track)
        for (std::size_t i = 0; i < n; ++i) per_sample->incorrect[i] = inverted[i] - per_sample->tied[i];
    return counts;
}

// Reads scores as order keys and labels as Gap::Label (doubles, or order
// keys of integers), in blocks spread over the threads.
template <bool Track, class Gap, class Score, class Label>
PairedCounts load_and_count(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                            std::ptrdiff_t label_stride, std::size_t n, const Gap& gap, Control& control,
                            PairedPerSample* per_sample, int n_threads, std::size_t few_labels,
                            std::size_t few_classes, SimdLevel simd) {
    using L = typename Gap::Label;
    if constexpr (!Track) {
        PairedCounts counts;
        if (count_by_classes(scores, score_stride, labels, label_stride, n, gap, std::min(few_classes, few_labels),
                             n_threads, control, counts))
            return counts;
    }
    Buffer<Record<Track, L>> records =
        load_sorted_records(InputReader<Track, L, Score, Label>(scores, score_stride, labels, label_stride), n,
                            n_threads, control);
    return count_pairs<Track>(records, gap, per_sample, n_threads, few_labels, simd, control);
}

template <bool Track, class Score, class Label>
PairedCounts dispatch_labels(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                             std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                             PairedPerSample* per_sample, int n_threads, std::size_t few_labels,
                             std::size_t few_classes, SimdLevel simd) {
    if constexpr (std::is_floating_point_v<Label>) {
        return load_and_count<Track>(scores, score_stride, labels, label_stride, n, RealGap{min_dist}, control,
                                     per_sample, n_threads, few_labels, few_classes, simd);
    } else {
        // Integer differences are below 2**64: from there on nothing is rankable.
        constexpr double kTwo64 = 18446744073709551616.0;
        if (!(min_dist < kTwo64)) {
            if constexpr (Track) {
                std::fill_n(per_sample->rankable, n, 0);
                std::fill_n(per_sample->tied, n, 0);
                std::fill_n(per_sample->incorrect, n, 0);
            }
            return PairedCounts{};
        }
        const double threshold = std::max(1.0, std::ceil(min_dist));
        return load_and_count<Track>(scores, score_stride, labels, label_stride, n,
                                     IntegerGap{static_cast<std::uint64_t>(threshold)}, control, per_sample,
                                     n_threads, few_labels, few_classes, simd);
    }
}

}  // namespace

template <class Score, class Label>
PairedCounts paired_counts(const Score* scores, std::ptrdiff_t score_stride, const Label* labels,
                           std::ptrdiff_t label_stride, std::size_t n, double min_dist, Control& control,
                           PairedPerSample* per_sample, int n_threads, std::size_t few_labels,
                           std::size_t few_classes, SimdLevel simd) {
    simd = simd_resolve(simd);
    // Progress counts elements touched: a sort pass or two plus about log2(n)
    // merge passes, so the total is an estimate that finish() completes.
    std::size_t levels = 4;
    for (std::size_t m = n; m > 1; m >>= 1) ++levels;
    control.set_total(static_cast<std::uint64_t>(n) * levels);
    if (per_sample)
        return dispatch_labels<true>(scores, score_stride, labels, label_stride, n, min_dist, control, per_sample,
                                     n_threads, few_labels, few_classes, simd);
    return dispatch_labels<false>(scores, score_stride, labels, label_stride, n, min_dist, control, nullptr,
                                  n_threads, few_labels, few_classes, simd);
}

#define PAIRMETRICS_INSTANTIATE(Score, Label)                                                               \
    template PairedCounts paired_counts<Score, Label>(const Score*, std::ptrdiff_t, const Label*,           \
                                                      std::ptrdiff_t, std::size_t, double, Control&,        \
                                                      PairedPerSample*, int, std::size_t, std::size_t,    \
                                                      SimdLevel);
#define PAIRMETRICS_INSTANTIATE_LABELS(Score)                                                               \
    PAIRMETRICS_INSTANTIATE(Score, bool)                                                                    \
    PAIRMETRICS_INSTANTIATE(Score, std::int8_t)                                                             \
    PAIRMETRICS_INSTANTIATE(Score, std::int16_t)                                                            \
    PAIRMETRICS_INSTANTIATE(Score, std::int32_t)                                                            \
    PAIRMETRICS_INSTANTIATE(Score, std::int64_t)                                                            \
    PAIRMETRICS_INSTANTIATE(Score, std::uint8_t)                                                            \
    PAIRMETRICS_INSTANTIATE(Score, std::uint16_t)                                                           \
    PAIRMETRICS_INSTANTIATE(Score, std::uint32_t)                                                           \
    PAIRMETRICS_INSTANTIATE(Score, std::uint64_t)                                                           \
    PAIRMETRICS_INSTANTIATE(Score, float)                                                                   \
    PAIRMETRICS_INSTANTIATE(Score, double)
PAIRMETRICS_INSTANTIATE_LABELS(bool)
PAIRMETRICS_INSTANTIATE_LABELS(std::int8_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::int16_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::int32_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::int64_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint8_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint16_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint32_t)
PAIRMETRICS_INSTANTIATE_LABELS(std::uint64_t)
PAIRMETRICS_INSTANTIATE_LABELS(float)
PAIRMETRICS_INSTANTIATE_LABELS(double)
#undef PAIRMETRICS_INSTANTIATE_LABELS
#undef PAIRMETRICS_INSTANTIATE

}  // namespace pairmetrics
