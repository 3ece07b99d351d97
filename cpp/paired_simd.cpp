#include "paired_simd.hpp"

#include <algorithm>
#include <limits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PAIRMETRICS_HAVE_AVX512 1
#include <immintrin.h>
#else
#define PAIRMETRICS_HAVE_AVX512 0
#endif

namespace pairmetrics {

bool simd_supported(SimdLevel level) {
    switch (level) {
        case SimdLevel::automatic:
        case SimdLevel::scalar:
            return true;
        case SimdLevel::avx512:
#if PAIRMETRICS_HAVE_AVX512
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx512f");  // checks that the OS saves the registers too
#else
            return false;
#endif
    }
    return false;
}

SimdLevel simd_resolve(SimdLevel level) {
    if (level != SimdLevel::automatic) return level;
    return simd_supported(SimdLevel::avx512) ? SimdLevel::avx512 : SimdLevel::scalar;
}

namespace simd {

#if PAIRMETRICS_HAVE_AVX512
// GCC 12 warns inside its own AVX-512 headers (their "undefined" vectors).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

#define PAIRMETRICS_AVX512 __attribute__((target("avx512f"), always_inline)) inline

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

PAIRMETRICS_AVX512 bool merge_active(const MergeLane& lane) { return lane.i < lane.m || lane.j < lane.r; }

PAIRMETRICS_AVX512 void merge_step(const double* src, double* dst, MergeLane& lane) {
    const double a = lane.i < lane.m ? src[lane.i] : kInf;
    const double b = lane.j < lane.r ? src[lane.j] : kInf;
    const bool take_left = a <= b;
    __m512d next = take_left ? load_padded(src, lane.i, lane.m) : load_padded(src, lane.j, lane.r);
    lane.i += take_left ? 8 : 0;
    lane.j += take_left ? 0 : 8;
    merge_vectors(next, lane.carry);
    store_clipped(dst, lane, next);
}

// Counting lane: for each block of 8 right labels b, how many left labels
// from p on are not far above each b (a prefix of the left run for each b),
// found with the left labels in windows of 16. The last b's count is where
// the next block starts; windows move on while it fills the whole window.
struct CountLane {
    std::size_t p, m, j, r;
    std::uint64_t sum;
};

PAIRMETRICS_AVX512 void count_block(const double* src, CountLane& lane, __m512d min_dist) {
    const double* b = src + lane.j;
    std::uint64_t not_far = 0;
    std::size_t p = lane.p;
    for (;;) {
        const __m512d a0 = load_padded(src, p, lane.m), a1 = load_padded(src, p + 8, lane.m);
        unsigned last = 0;
        for (int l = 0; l < 8; ++l) {
            const __m512d bl = _mm512_set1_pd(b[l]);
            // a - b < min_dist: the exact negation of the scalar a - b >= min_dist (no NaN).
            const __mmask8 n0 = _mm512_cmp_pd_mask(_mm512_sub_pd(a0, bl), min_dist, _CMP_LT_OQ);
            const __mmask8 n1 = _mm512_cmp_pd_mask(_mm512_sub_pd(a1, bl), min_dist, _CMP_LT_OQ);
            last = static_cast<unsigned>(__builtin_popcount(static_cast<unsigned>(n0) | (static_cast<unsigned>(n1) << 8)));
            not_far += last;
        }
        p += last;
        if (last < 16) break;
    }
    // Each b is far below m - p_b left labels, p_b = lane.p + its not-far count.
    lane.sum += 8 * (lane.m - lane.p) - not_far;
    lane.p = p;
    lane.j += 8;
}

PAIRMETRICS_AVX512 void count_tail(const double* src, CountLane& lane, double min_dist) {
    for (; lane.j < lane.r; ++lane.j) {
        while (lane.p < lane.m && !(src[lane.p] - src[lane.j] >= min_dist)) ++lane.p;
        lane.sum += lane.m - lane.p;
    }
}

constexpr std::size_t kLanes = 4;

}  // namespace

__attribute__((target("avx512f"))) void merge_avx512(const double* src, double* dst, const MergeJob* jobs,
                                                     std::size_t count) {
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
            bool all = true;
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

__attribute__((target("avx512f"))) std::uint64_t count_avx512(const double* src, const CountJob* jobs,
                                                              std::size_t count, double min_dist) {
    const __m512d dist = _mm512_set1_pd(min_dist);
    std::uint64_t total = 0;
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        CountLane lane[kLanes];
        for (std::size_t t = 0; t < lanes; ++t) {
            const CountJob& job = jobs[first + t];
            lane[t] = CountLane{job.p, job.m, job.j, job.r, 0};
        }
        for (;;) {
            bool all = true;
            for (std::size_t t = 0; t < lanes; ++t) all &= lane[t].j + 8 <= lane[t].r;
            if (!all) break;
            for (std::size_t t = 0; t < lanes; ++t) count_block(src, lane[t], dist);
        }
        for (std::size_t t = 0; t < lanes; ++t) {
            while (lane[t].j + 8 <= lane[t].r) count_block(src, lane[t], dist);
            count_tail(src, lane[t], min_dist);
            total += lane[t].sum;
        }
    }
    return total;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#else  // no vector code in this build: never called (simd_supported says no)

void merge_avx512(const double*, double*, const MergeJob*, std::size_t) {}
std::uint64_t count_avx512(const double*, const CountJob*, std::size_t, double) { return 0; }

#endif

}  // namespace simd
}  // namespace pairmetrics
