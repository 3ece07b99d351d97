#include "paired_simd.hpp"

#include <algorithm>
#include <limits>

#if PAIRMETRICS_X86_SIMD
#include <immintrin.h>
#endif

namespace pairmetrics {
namespace simd {

#if PAIRMETRICS_X86_SIMD
// GCC 12 warns inside its own AVX-512 headers (their "undefined" vectors).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
namespace {

#define PAIRMETRICS_AVX512 PAIRMETRICS_TARGET("avx512f") __attribute__((always_inline)) inline

constexpr double kInf = std::numeric_limits<double>::infinity();

// Elements [at, end) of src, up to 8 of them, padded with +inf (labels are
// finite, so the padding sorts last and is never "far" below a label). The
// masked load reads no element at or past `end`.
PAIRMETRICS_AVX512 __m512d load_padded(const double* src, std::size_t at, std::size_t end) {
    if (at >= end) return _mm512_set1_pd(kInf);
    const std::size_t avail = end - at;
    if (avail >= 8) return _mm512_loadu_pd(src + at);
    return _mm512_mask_loadu_pd(_mm512_set1_pd(kInf), static_cast<__mmask8>((1u << avail) - 1), src + at);
}

// Sorts a bitonic vector ascending: compare-exchange at distance 4, 2, 1.
PAIRMETRICS_AVX512 __m512d sort_bitonic(__m512d x) {
    __m512d y = _mm512_shuffle_f64x2(x, x, 0x4E);  // lanes 4-7, 0-3
    x = _mm512_mask_blend_pd(0xF0, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
    y = _mm512_permutex_pd(x, 0x4E);  // 2, 3, 0, 1 in each half
    x = _mm512_mask_blend_pd(0xCC, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
    y = _mm512_permute_pd(x, 0x55);  // neighbours swapped
    return _mm512_mask_blend_pd(0xAA, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
}

// Two ascending vectors in, the 8 smallest (lo) and 8 largest (hi) of the 16
// out, each ascending: one bitonic merge.
PAIRMETRICS_AVX512 void merge_vectors(__m512d& lo, __m512d& hi) {
    const __m512d reversed = _mm512_permutexvar_pd(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), hi);
    const __m512d small = _mm512_min_pd(lo, reversed), large = _mm512_max_pd(lo, reversed);
    lo = sort_bitonic(small);
    hi = sort_bitonic(large);
}

// A merge with both runs read as blocks of 8, the last one padded with +inf:
// the vector `carry` holds the 8 largest seen so far; each step loads the
// block of the run whose next label is smaller and outputs the 8 smallest
// of it and the carry, which are at most every label not yet output. The
// padding comes out last and is not stored.
struct MergeLane {
    std::size_t i, m, j, r, k, end;
    __m512d carry;
};

PAIRMETRICS_AVX512 void store_clipped(double* dst, MergeLane& lane, __m512d v) {
    if (lane.k + 8 <= lane.end) {
        _mm512_storeu_pd(dst + lane.k, v);
    } else if (lane.k < lane.end) {
        _mm512_mask_storeu_pd(dst + lane.k, static_cast<__mmask8>((1u << (lane.end - lane.k)) - 1), v);
    }
    lane.k += 8;
}

PAIRMETRICS_AVX512 bool merge_active(const MergeLane& lane) {
    return lane.i < lane.m || lane.j < lane.r;
}

PAIRMETRICS_AVX512 void merge_step(const double* src, double* dst, MergeLane& lane) {
    const double a = lane.i < lane.m ? src[lane.i] : kInf;
    const double b = lane.j < lane.r ? src[lane.j] : kInf;
    // The run to read is picked by masks, not a branch: which one comes next
    // is as unpredictable as the labels.
    const std::size_t left = std::size_t{0} - static_cast<std::size_t>(a <= b);
    const std::size_t at = (lane.i & left) | (lane.j & ~left), end = (lane.m & left) | (lane.r & ~left);
    __m512d next = load_padded(src, at, end);
    lane.i += left & 8;
    lane.j += ~left & 8;
    merge_vectors(next, lane.carry);
    store_clipped(dst, lane, next);
}

// Counting lane: for each block of 8 right labels b (one vector), how many
// left labels from p on are not far above each b (a prefix of the left run
// for each b), counted in windows of 16 left labels, each broadcast and
// compared with the 8 b at once. The count of the last (largest) b is where
// the next block starts; windows move on while it fills them all.
struct CountLane {
    std::size_t p, m, j, r;
    std::uint64_t sum;  // 8 (m - p) per block, at the p the block starts from
    __m512i not_far;    // less these, per b lane
};

PAIRMETRICS_AVX512 __m512i count_not_far(__m512i count, double a, __m512d b, __m512d min_dist) {
    // a - b < min_dist: the exact negation of the scalar a - b >= min_dist (no NaN).
    const __mmask8 near = _mm512_cmp_pd_mask(_mm512_sub_pd(_mm512_set1_pd(a), b), min_dist, _CMP_LT_OQ);
    return _mm512_mask_add_epi64(count, near, count, _mm512_set1_epi64(1));
}

PAIRMETRICS_AVX512 void count_block(const double* src, CountLane& lane, __m512d min_dist) {
    const __m512d b = _mm512_loadu_pd(src + lane.j);
    const __m512i zero = _mm512_setzero_si512();
    __m512i c0 = zero, c1 = zero, c2 = zero, c3 = zero;  // four chains of adds
    std::size_t window = lane.p, last;
    for (;;) {
        const std::size_t avail = std::min<std::size_t>(16, lane.m - window);
        if (avail == 16) {
            for (std::size_t k = 0; k < 16; k += 4) {
                c0 = count_not_far(c0, src[window + k], b, min_dist);
                c1 = count_not_far(c1, src[window + k + 1], b, min_dist);
                c2 = count_not_far(c2, src[window + k + 2], b, min_dist);
                c3 = count_not_far(c3, src[window + k + 3], b, min_dist);
            }
        } else {  // the end of the left run: labels past it count as far
            for (std::size_t k = 0; k < avail; ++k) c0 = count_not_far(c0, src[window + k], b, min_dist);
        }
        const __m512i count = _mm512_add_epi64(_mm512_add_epi64(c0, c1), _mm512_add_epi64(c2, c3));
        last = static_cast<std::size_t>(_mm256_extract_epi64(_mm512_extracti64x4_epi64(count, 1), 3));
        window += 16;
        if (last < window - lane.p) {
            lane.not_far = _mm512_add_epi64(lane.not_far, count);
            break;
        }
    }
    lane.sum += 8 * (lane.m - lane.p);
    lane.p += last;
    lane.j += 8;
}

// The last right labels (fewer than a vector), one by one.
inline void count_tail(const double* src, std::size_t& p, std::size_t m, std::size_t& j, std::size_t r,
                       std::uint64_t& sum, double min_dist) {
    for (; j < r; ++j) {
        while (p < m && !(src[p] - src[j] >= min_dist)) ++p;
        sum += m - p;
    }
}

// Sorts 8 labels ascending: the bitonic network, each stage one
// compare-exchange of every lane with a partner (the lanes in `upper` keep
// the larger value).
PAIRMETRICS_AVX512 __m512d exchange(__m512d x, __m512i partner, __mmask8 upper) {
    const __m512d y = _mm512_permutexvar_pd(partner, x);
    return _mm512_mask_blend_pd(upper, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
}

PAIRMETRICS_AVX512 __m512d sort8(__m512d x) {
    const __m512i neighbour = _mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1);
    x = exchange(x, neighbour, 0xAA);
    x = exchange(x, _mm512_set_epi64(4, 5, 6, 7, 0, 1, 2, 3), 0xCC);  // mirror within 4
    x = exchange(x, neighbour, 0xAA);
    x = exchange(x, _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), 0xF0);  // mirror within 8
    x = exchange(x, _mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2), 0xCC);
    return exchange(x, neighbour, 0xAA);
}

constexpr std::size_t kLanes = 4;

PAIRMETRICS_TARGET("avx512f") std::uint64_t sort_runs_avx512(double* x, std::size_t runs, double min_dist) {
    const __m512d dist = _mm512_set1_pd(min_dist);
    const __m512i one = _mm512_set1_epi64(1);
    __m512i count = _mm512_setzero_si512();
    for (std::size_t run = 0; run < runs; ++run, x += 16) {
        __m512d lo = _mm512_loadu_pd(x), hi = _mm512_loadu_pd(x + 8);
        // Pairs i < j with x[i] - x[j] >= min_dist (masked to the lanes j > i).
        for (int i = 0; i < 8; ++i) {
            const __m512d xi = _mm512_set1_pd(x[i]);
            const __mmask8 later = static_cast<__mmask8>(0xFF00u >> (7 - i));
            count = _mm512_mask_add_epi64(
                count, _mm512_mask_cmp_pd_mask(later, _mm512_sub_pd(xi, lo), dist, _CMP_GE_OQ), count, one);
            count =
                _mm512_mask_add_epi64(count, _mm512_cmp_pd_mask(_mm512_sub_pd(xi, hi), dist, _CMP_GE_OQ), count, one);
        }
        for (int i = 8; i < 16; ++i) {
            const __m512d xi = _mm512_set1_pd(x[i]);
            const __mmask8 later = static_cast<__mmask8>(0xFF00u >> (15 - i));
            count = _mm512_mask_add_epi64(
                count, _mm512_mask_cmp_pd_mask(later, _mm512_sub_pd(xi, hi), dist, _CMP_GE_OQ), count, one);
        }
        lo = sort8(lo);
        hi = sort8(hi);
        merge_vectors(lo, hi);
        _mm512_storeu_pd(x, lo);
        _mm512_storeu_pd(x + 8, hi);
    }
    return static_cast<std::uint64_t>(_mm512_reduce_add_epi64(count));
}

PAIRMETRICS_TARGET("avx512f")
void merge_avx512(const double* src, double* dst, const MergeJob* jobs, std::size_t count) {
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        MergeLane lane[kLanes];
        std::size_t used = 0;
        for (std::size_t t = 0; t < lanes; ++t) {
            const MergeJob& job = jobs[first + t];
            const std::size_t end = job.k + (job.m - job.i) + (job.r - job.j);
            if (job.i == job.m || job.j == job.r) {  // one run: a copy
                std::copy(src + job.i, src + job.m, dst + job.k);
                std::copy(src + job.j, src + job.r, dst + job.k + (job.m - job.i));
                continue;
            }
            MergeLane& x = lane[used++];
            x = MergeLane{job.i + 8, job.m, job.j + 8, job.r, job.k, end, load_padded(src, job.j, job.r)};
            __m512d low = load_padded(src, job.i, job.m);
            merge_vectors(low, x.carry);
            store_clipped(dst, x, low);
        }
        for (;;) {
            bool all = used > 0;
            for (std::size_t t = 0; t < used; ++t) all &= merge_active(lane[t]);
            if (!all) break;
            for (std::size_t t = 0; t < used; ++t) merge_step(src, dst, lane[t]);
        }
        for (std::size_t t = 0; t < used; ++t) {
            while (merge_active(lane[t])) merge_step(src, dst, lane[t]);
            store_clipped(dst, lane[t], lane[t].carry);
        }
    }
}

PAIRMETRICS_TARGET("avx512f")
std::uint64_t count_avx512(const double* src, const CountJob* jobs, std::size_t count, double min_dist) {
    const __m512d dist = _mm512_set1_pd(min_dist);
    std::uint64_t total = 0;
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        CountLane lane[kLanes];
        for (std::size_t t = 0; t < lanes; ++t) {
            const CountJob& job = jobs[first + t];
            lane[t] = CountLane{job.p, job.m, job.j, job.r, 0, _mm512_setzero_si512()};
        }
        for (;;) {
            bool all = lanes > 0;
            for (std::size_t t = 0; t < lanes; ++t) all &= lane[t].j + 8 <= lane[t].r;
            if (!all) break;
            for (std::size_t t = 0; t < lanes; ++t) count_block(src, lane[t], dist);
        }
        for (std::size_t t = 0; t < lanes; ++t) {
            while (lane[t].j + 8 <= lane[t].r) count_block(src, lane[t], dist);
            count_tail(src, lane[t].p, lane[t].m, lane[t].j, lane[t].r, lane[t].sum, min_dist);
            total += lane[t].sum - static_cast<std::uint64_t>(_mm512_reduce_add_epi64(lane[t].not_far));
        }
    }
    return total;
}

// The AVX2 level: the same algorithms on vectors of 4 doubles (masks are
// vectors of all-ones lanes, subtracted to count).
namespace avx2 {

#define PAIRMETRICS_AVX2 PAIRMETRICS_TARGET("avx2") __attribute__((always_inline)) inline

// Elements [at, end) of src, up to 4 of them, padded with +inf; the masked
// load reads no element at or past `end`.
PAIRMETRICS_AVX2 __m256d load_padded(const double* src, std::size_t at, std::size_t end) {
    if (at >= end) return _mm256_set1_pd(kInf);
    const std::size_t avail = end - at;
    if (avail >= 4) return _mm256_loadu_pd(src + at);
    const __m256i mask =
        _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(avail)), _mm256_set_epi64x(3, 2, 1, 0));
    return _mm256_blendv_pd(_mm256_set1_pd(kInf), _mm256_maskload_pd(src + at, mask), _mm256_castsi256_pd(mask));
}

// Sorts a bitonic vector ascending: compare-exchange at distance 2, 1.
PAIRMETRICS_AVX2 __m256d sort_bitonic(__m256d x) {
    __m256d y = _mm256_permute2f128_pd(x, x, 0x01);  // halves swapped
    x = _mm256_blend_pd(_mm256_min_pd(x, y), _mm256_max_pd(x, y), 0xC);
    y = _mm256_permute_pd(x, 0x5);  // neighbours swapped
    return _mm256_blend_pd(_mm256_min_pd(x, y), _mm256_max_pd(x, y), 0xA);
}

PAIRMETRICS_AVX2 __m256d reverse(__m256d x) {
    return _mm256_permute4x64_pd(x, 0x1B);
}

// Two ascending vectors in, the 4 smallest (lo) and 4 largest (hi) out, each
// ascending: one bitonic merge.
PAIRMETRICS_AVX2 void merge_vectors(__m256d& lo, __m256d& hi) {
    const __m256d reversed = reverse(hi);
    const __m256d small = _mm256_min_pd(lo, reversed), large = _mm256_max_pd(lo, reversed);
    lo = sort_bitonic(small);
    hi = sort_bitonic(large);
}

// Sorts 16 labels held in v[0..3] ascending (v[0] the smallest four): each
// lane sorted across the vectors, a transpose into four sorted runs of 4,
// then two levels of bitonic merges.
PAIRMETRICS_AVX2 void exchange(__m256d& a, __m256d& b) {
    const __m256d low = _mm256_min_pd(a, b);
    b = _mm256_max_pd(a, b);
    a = low;
}

PAIRMETRICS_AVX2 void sort16(__m256d v[4]) {
    exchange(v[0], v[1]);
    exchange(v[2], v[3]);
    exchange(v[0], v[2]);
    exchange(v[1], v[3]);
    exchange(v[1], v[2]);
    const __m256d t0 = _mm256_unpacklo_pd(v[0], v[1]), t1 = _mm256_unpackhi_pd(v[0], v[1]);
    const __m256d t2 = _mm256_unpacklo_pd(v[2], v[3]), t3 = _mm256_unpackhi_pd(v[2], v[3]);
    v[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    v[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    v[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    v[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
    merge_vectors(v[0], v[1]);
    merge_vectors(v[2], v[3]);
    // 8 + 8: the smallest 8 and the largest 8 are each bitonic; a
    // compare-exchange at distance 4 and sort_bitonic finish them.
    const __m256d r0 = reverse(v[3]), r1 = reverse(v[2]);
    const __m256d l0 = _mm256_min_pd(v[0], r0), l1 = _mm256_min_pd(v[1], r1);
    const __m256d h0 = _mm256_max_pd(v[0], r0), h1 = _mm256_max_pd(v[1], r1);
    v[0] = sort_bitonic(_mm256_min_pd(l0, l1));
    v[1] = sort_bitonic(_mm256_max_pd(l0, l1));
    v[2] = sort_bitonic(_mm256_min_pd(h0, h1));
    v[3] = sort_bitonic(_mm256_max_pd(h0, h1));
}

// Subtracting a comparison mask (all-ones lanes, -1) counts its lanes.
PAIRMETRICS_AVX2 __m256i add_mask(__m256i count, __m256d mask) {
    return _mm256_sub_epi64(count, _mm256_castpd_si256(mask));
}

PAIRMETRICS_AVX2 std::uint64_t horizontal_sum(__m256i x) {
    const __m128i sum = _mm_add_epi64(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    return static_cast<std::uint64_t>(_mm_cvtsi128_si64(sum)) + static_cast<std::uint64_t>(_mm_extract_epi64(sum, 1));
}

struct MergeLane {
    std::size_t i, m, j, r, k, end;
    __m256d carry;
};

PAIRMETRICS_AVX2 void store_clipped(double* dst, MergeLane& lane, __m256d v) {
    if (lane.k + 4 <= lane.end) {
        _mm256_storeu_pd(dst + lane.k, v);
    } else if (lane.k < lane.end) {
        const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(lane.end - lane.k)),
                                                _mm256_set_epi64x(3, 2, 1, 0));
        _mm256_maskstore_pd(dst + lane.k, mask, v);
    }
    lane.k += 4;
}

PAIRMETRICS_AVX2 bool merge_active(const MergeLane& lane) {
    return lane.i < lane.m || lane.j < lane.r;
}

PAIRMETRICS_AVX2 void merge_step(const double* src, double* dst, MergeLane& lane) {
    const double a = lane.i < lane.m ? src[lane.i] : kInf;
    const double b = lane.j < lane.r ? src[lane.j] : kInf;
    const std::size_t left = std::size_t{0} - static_cast<std::size_t>(a <= b);
    const std::size_t at = (lane.i & left) | (lane.j & ~left), end = (lane.m & left) | (lane.r & ~left);
    __m256d next = load_padded(src, at, end);
    lane.i += left & 4;
    lane.j += ~left & 4;
    merge_vectors(next, lane.carry);
    store_clipped(dst, lane, next);
}

struct CountLane {
    std::size_t p, m, j, r;
    std::uint64_t sum;  // 4 (m - p) per block, at the p the block starts from
    __m256i not_far;    // less these, per b lane
};

PAIRMETRICS_AVX2 __m256i count_not_far(__m256i count, double a, __m256d b, __m256d min_dist) {
    // a - b < min_dist: the exact negation of the scalar a - b >= min_dist (no NaN).
    return add_mask(count, _mm256_cmp_pd(_mm256_sub_pd(_mm256_set1_pd(a), b), min_dist, _CMP_LT_OQ));
}

PAIRMETRICS_AVX2 void count_block(const double* src, CountLane& lane, __m256d min_dist) {
    const __m256d b = _mm256_loadu_pd(src + lane.j);
    const __m256i zero = _mm256_setzero_si256();
    __m256i c0 = zero, c1 = zero, c2 = zero, c3 = zero;  // four chains of adds
    std::size_t window = lane.p, last;
    for (;;) {
        const std::size_t avail = std::min<std::size_t>(16, lane.m - window);
        if (avail == 16) {
            for (std::size_t k = 0; k < 16; k += 4) {
                c0 = count_not_far(c0, src[window + k], b, min_dist);
                c1 = count_not_far(c1, src[window + k + 1], b, min_dist);
                c2 = count_not_far(c2, src[window + k + 2], b, min_dist);
                c3 = count_not_far(c3, src[window + k + 3], b, min_dist);
            }
        } else {  // the end of the left run: labels past it count as far
            for (std::size_t k = 0; k < avail; ++k) c0 = count_not_far(c0, src[window + k], b, min_dist);
        }
        const __m256i count = _mm256_add_epi64(_mm256_add_epi64(c0, c1), _mm256_add_epi64(c2, c3));
        last = static_cast<std::size_t>(_mm256_extract_epi64(count, 3));
        window += 16;
        if (last < window - lane.p) {
            lane.not_far = _mm256_add_epi64(lane.not_far, count);
            break;
        }
    }
    lane.sum += 4 * (lane.m - lane.p);
    lane.p += last;
    lane.j += 4;
}

}  // namespace avx2

PAIRMETRICS_TARGET("avx2") std::uint64_t sort_runs_avx2(double* x, std::size_t runs, double min_dist) {
    const __m256d dist = _mm256_set1_pd(min_dist);
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    __m256i count = _mm256_setzero_si256();
    for (std::size_t run = 0; run < runs; ++run, x += 16) {
        __m256d v[4] = {_mm256_loadu_pd(x), _mm256_loadu_pd(x + 4), _mm256_loadu_pd(x + 8), _mm256_loadu_pd(x + 12)};
        // Pairs i < j with x[i] - x[j] >= min_dist: in the vector of i the
        // lanes after i, in the later vectors every lane.
        for (int i = 0; i < 16; ++i) {
            const __m256d xi = _mm256_set1_pd(x[i]);
            const int own = i / 4;
            const __m256d later = _mm256_castsi256_pd(_mm256_cmpgt_epi64(lane, _mm256_set1_epi64x(i % 4)));
            const __m256d far = _mm256_cmp_pd(_mm256_sub_pd(xi, v[own]), dist, _CMP_GE_OQ);
            count = avx2::add_mask(count, _mm256_and_pd(later, far));
            for (int q = own + 1; q < 4; ++q)
                count = avx2::add_mask(count, _mm256_cmp_pd(_mm256_sub_pd(xi, v[q]), dist, _CMP_GE_OQ));
        }
        avx2::sort16(v);
        for (int q = 0; q < 4; ++q) _mm256_storeu_pd(x + 4 * q, v[q]);
    }
    return avx2::horizontal_sum(count);
}

PAIRMETRICS_TARGET("avx2") void merge_avx2(const double* src, double* dst, const MergeJob* jobs, std::size_t count) {
    using avx2::MergeLane;
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        MergeLane lane[kLanes];
        std::size_t used = 0;
        for (std::size_t t = 0; t < lanes; ++t) {
            const MergeJob& job = jobs[first + t];
            const std::size_t end = job.k + (job.m - job.i) + (job.r - job.j);
            if (job.i == job.m || job.j == job.r) {  // one run: a copy
                std::copy(src + job.i, src + job.m, dst + job.k);
                std::copy(src + job.j, src + job.r, dst + job.k + (job.m - job.i));
                continue;
            }
            MergeLane& x = lane[used++];
            x = MergeLane{job.i + 4, job.m, job.j + 4, job.r, job.k, end, avx2::load_padded(src, job.j, job.r)};
            __m256d low = avx2::load_padded(src, job.i, job.m);
            avx2::merge_vectors(low, x.carry);
            avx2::store_clipped(dst, x, low);
        }
        for (;;) {
            bool all = used > 0;
            for (std::size_t t = 0; t < used; ++t) all &= avx2::merge_active(lane[t]);
            if (!all) break;
            for (std::size_t t = 0; t < used; ++t) avx2::merge_step(src, dst, lane[t]);
        }
        for (std::size_t t = 0; t < used; ++t) {
            while (avx2::merge_active(lane[t])) avx2::merge_step(src, dst, lane[t]);
            avx2::store_clipped(dst, lane[t], lane[t].carry);
        }
    }
}

PAIRMETRICS_TARGET("avx2")
std::uint64_t count_avx2(const double* src, const CountJob* jobs, std::size_t count, double min_dist) {
    using avx2::CountLane;
    const __m256d dist = _mm256_set1_pd(min_dist);
    std::uint64_t total = 0;
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        CountLane lane[kLanes];
        for (std::size_t t = 0; t < lanes; ++t) {
            const CountJob& job = jobs[first + t];
            lane[t] = CountLane{job.p, job.m, job.j, job.r, 0, _mm256_setzero_si256()};
        }
        for (;;) {
            bool all = lanes > 0;
            for (std::size_t t = 0; t < lanes; ++t) all &= lane[t].j + 4 <= lane[t].r;
            if (!all) break;
            for (std::size_t t = 0; t < lanes; ++t) avx2::count_block(src, lane[t], dist);
        }
        for (std::size_t t = 0; t < lanes; ++t) {
            while (lane[t].j + 4 <= lane[t].r) avx2::count_block(src, lane[t], dist);
            count_tail(src, lane[t].p, lane[t].m, lane[t].j, lane[t].r, lane[t].sum, min_dist);
            total += lane[t].sum - avx2::horizontal_sum(lane[t].not_far);
        }
    }
    return total;
}
}  // namespace

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif

const PairedKernels* paired_kernels(SimdLevel level) {
#if PAIRMETRICS_X86_SIMD
    static const PairedKernels avx2{sort_runs_avx2, merge_avx2, count_avx2};
    static const PairedKernels avx512{sort_runs_avx512, merge_avx512, count_avx512};
    switch (simd_resolve(level)) {
        case SimdLevel::avx2:
            return &avx2;
        case SimdLevel::avx512:
            return &avx512;
        default:
            return nullptr;
    }
#else
    (void)level;
    return nullptr;
#endif
}

}  // namespace simd
}  // namespace pairmetrics
