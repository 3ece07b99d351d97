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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kLanes = 4;

// The last right labels (fewer than a vector), one by one.
inline void count_tail(const double* src, std::size_t& p, std::size_t m, std::size_t& j, std::size_t r,
                       std::uint64_t& sum, double min_dist) {
    for (; j < r; ++j) {
        while (p < m && !(src[p] - src[j] >= min_dist)) ++p;
        sum += m - p;
    }
}

namespace avx512 {

#define PAIRMETRICS_AVX512 PAIRMETRICS_TARGET("avx512f") __attribute__((always_inline)) inline

using Vec = __m512d;
using Counts = __m512i;
constexpr std::size_t kWidth = 8;

PAIRMETRICS_AVX512 Vec load(const double* src) {
    return _mm512_loadu_pd(src);
}

PAIRMETRICS_AVX512 Vec broadcast(double x) {
    return _mm512_set1_pd(x);
}

// Elements [at, end) of src, up to 8 of them, padded with +inf (labels are
// finite, so the padding sorts last and is never "far" below a label). The
// masked load reads no element at or past `end`.
PAIRMETRICS_AVX512 Vec load_padded(const double* src, std::size_t at, std::size_t end) {
    if (at >= end) return _mm512_set1_pd(kInf);
    const std::size_t avail = end - at;
    if (avail >= 8) return _mm512_loadu_pd(src + at);
    return _mm512_mask_loadu_pd(_mm512_set1_pd(kInf), static_cast<__mmask8>((1u << avail) - 1), src + at);
}

PAIRMETRICS_AVX512 void store(double* dst, Vec v) {
    _mm512_storeu_pd(dst, v);
}

// The first n (1 to 7) lanes of v to dst.
PAIRMETRICS_AVX512 void store_prefix(double* dst, std::size_t n, Vec v) {
    _mm512_mask_storeu_pd(dst, static_cast<__mmask8>((1u << n) - 1), v);
}

// Sorts a bitonic vector ascending: compare-exchange at distance 4, 2, 1.
PAIRMETRICS_AVX512 Vec sort_bitonic(Vec x) {
    Vec y = _mm512_shuffle_f64x2(x, x, 0x4E);  // lanes 4-7, 0-3
    x = _mm512_mask_blend_pd(0xF0, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
    y = _mm512_permutex_pd(x, 0x4E);  // 2, 3, 0, 1 in each half
    x = _mm512_mask_blend_pd(0xCC, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
    y = _mm512_permute_pd(x, 0x55);  // neighbours swapped
    return _mm512_mask_blend_pd(0xAA, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
}

// Two ascending vectors in, the 8 smallest (lo) and 8 largest (hi) of the 16
// out, each ascending: one bitonic merge.
PAIRMETRICS_AVX512 void merge_vectors(Vec& lo, Vec& hi) {
    const Vec reversed = _mm512_permutexvar_pd(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), hi);
    const Vec small = _mm512_min_pd(lo, reversed), large = _mm512_max_pd(lo, reversed);
    lo = sort_bitonic(small);
    hi = sort_bitonic(large);
}

PAIRMETRICS_AVX512 Counts zero_counts() {
    return _mm512_setzero_si512();
}

PAIRMETRICS_AVX512 Counts add_counts(Counts a, Counts b) {
    return _mm512_add_epi64(a, b);
}

PAIRMETRICS_AVX512 std::size_t last_count(Counts count) {
    return static_cast<std::size_t>(_mm256_extract_epi64(_mm512_extracti64x4_epi64(count, 1), 3));
}

PAIRMETRICS_AVX512 std::uint64_t sum_counts(Counts count) {
    return static_cast<std::uint64_t>(_mm512_reduce_add_epi64(count));
}

PAIRMETRICS_AVX512 Counts count_not_far(Counts count, double a, Vec b, Vec min_dist) {
    // a - b < min_dist: the exact negation of the scalar a - b >= min_dist (no NaN).
    const __mmask8 near = _mm512_cmp_pd_mask(_mm512_sub_pd(_mm512_set1_pd(a), b), min_dist, _CMP_LT_OQ);
    return _mm512_mask_add_epi64(count, near, count, _mm512_set1_epi64(1));
}

// Sorts 8 labels ascending: the bitonic network, each stage one
// compare-exchange of every lane with a partner (the lanes in `upper` keep
// the larger value).
PAIRMETRICS_AVX512 Vec exchange(Vec x, __m512i partner, __mmask8 upper) {
    const Vec y = _mm512_permutexvar_pd(partner, x);
    return _mm512_mask_blend_pd(upper, _mm512_min_pd(x, y), _mm512_max_pd(x, y));
}

PAIRMETRICS_AVX512 Vec sort8(Vec x) {
    const __m512i neighbour = _mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1);
    x = exchange(x, neighbour, 0xAA);
    x = exchange(x, _mm512_set_epi64(4, 5, 6, 7, 0, 1, 2, 3), 0xCC);  // mirror within 4
    x = exchange(x, neighbour, 0xAA);
    x = exchange(x, _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), 0xF0);  // mirror within 8
    x = exchange(x, _mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2), 0xCC);
    return exchange(x, neighbour, 0xAA);
}

#define PAIRMETRICS_LANE PAIRMETRICS_AVX512
#include "paired_simd_lanes.hpp"
#undef PAIRMETRICS_LANE

}  // namespace avx512

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
        lo = avx512::sort8(lo);
        hi = avx512::sort8(hi);
        avx512::merge_vectors(lo, hi);
        _mm512_storeu_pd(x, lo);
        _mm512_storeu_pd(x + 8, hi);
    }
    return avx512::sum_counts(count);
}

PAIRMETRICS_TARGET("avx512f")
void merge_avx512(const double* src, double* dst, const MergeJob* jobs, std::size_t count) {
    avx512::merge_jobs(src, dst, jobs, count);
}

PAIRMETRICS_TARGET("avx512f")
std::uint64_t count_avx512(const double* src, const CountJob* jobs, std::size_t count, double min_dist) {
    return avx512::count_jobs(src, jobs, count, min_dist);
}

// The AVX2 level: the same algorithms on vectors of 4 doubles (masks are
// vectors of all-ones lanes, subtracted to count).
namespace avx2 {

#define PAIRMETRICS_AVX2 PAIRMETRICS_TARGET("avx2") __attribute__((always_inline)) inline

using Vec = __m256d;
using Counts = __m256i;
constexpr std::size_t kWidth = 4;

PAIRMETRICS_AVX2 Vec load(const double* src) {
    return _mm256_loadu_pd(src);
}

PAIRMETRICS_AVX2 Vec broadcast(double x) {
    return _mm256_set1_pd(x);
}

// The lanes below n as a mask (all-ones lanes).
PAIRMETRICS_AVX2 __m256i lanes_below(std::size_t n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(n)), _mm256_set_epi64x(3, 2, 1, 0));
}

// Elements [at, end) of src, up to 4 of them, padded with +inf; the masked
// load reads no element at or past `end`.
PAIRMETRICS_AVX2 Vec load_padded(const double* src, std::size_t at, std::size_t end) {
    if (at >= end) return _mm256_set1_pd(kInf);
    const std::size_t avail = end - at;
    if (avail >= 4) return _mm256_loadu_pd(src + at);
    const __m256i mask = lanes_below(avail);
    return _mm256_blendv_pd(_mm256_set1_pd(kInf), _mm256_maskload_pd(src + at, mask), _mm256_castsi256_pd(mask));
}

PAIRMETRICS_AVX2 void store(double* dst, Vec v) {
    _mm256_storeu_pd(dst, v);
}

// The first n (1 to 3) lanes of v to dst.
PAIRMETRICS_AVX2 void store_prefix(double* dst, std::size_t n, Vec v) {
    _mm256_maskstore_pd(dst, lanes_below(n), v);
}

// Sorts a bitonic vector ascending: compare-exchange at distance 2, 1.
PAIRMETRICS_AVX2 Vec sort_bitonic(Vec x) {
    Vec y = _mm256_permute2f128_pd(x, x, 0x01);  // halves swapped
    x = _mm256_blend_pd(_mm256_min_pd(x, y), _mm256_max_pd(x, y), 0xC);
    y = _mm256_permute_pd(x, 0x5);  // neighbours swapped
    return _mm256_blend_pd(_mm256_min_pd(x, y), _mm256_max_pd(x, y), 0xA);
}

PAIRMETRICS_AVX2 Vec reverse(Vec x) {
    return _mm256_permute4x64_pd(x, 0x1B);
}

// Two ascending vectors in, the 4 smallest (lo) and 4 largest (hi) out, each
// ascending: one bitonic merge.
PAIRMETRICS_AVX2 void merge_vectors(Vec& lo, Vec& hi) {
    const Vec reversed = reverse(hi);
    const Vec small = _mm256_min_pd(lo, reversed), large = _mm256_max_pd(lo, reversed);
    lo = sort_bitonic(small);
    hi = sort_bitonic(large);
}

// Sorts 16 labels held in v[0..3] ascending (v[0] the smallest four): each
// lane sorted across the vectors, a transpose into four sorted runs of 4,
// then two levels of bitonic merges.
PAIRMETRICS_AVX2 void exchange(Vec& a, Vec& b) {
    const Vec low = _mm256_min_pd(a, b);
    b = _mm256_max_pd(a, b);
    a = low;
}

PAIRMETRICS_AVX2 void sort16(Vec v[4]) {
    exchange(v[0], v[1]);
    exchange(v[2], v[3]);
    exchange(v[0], v[2]);
    exchange(v[1], v[3]);
    exchange(v[1], v[2]);
    const Vec t0 = _mm256_unpacklo_pd(v[0], v[1]), t1 = _mm256_unpackhi_pd(v[0], v[1]);
    const Vec t2 = _mm256_unpacklo_pd(v[2], v[3]), t3 = _mm256_unpackhi_pd(v[2], v[3]);
    v[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    v[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    v[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    v[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
    merge_vectors(v[0], v[1]);
    merge_vectors(v[2], v[3]);
    // 8 + 8: the smallest 8 and the largest 8 are each bitonic; a
    // compare-exchange at distance 4 and sort_bitonic finish them.
    const Vec r0 = reverse(v[3]), r1 = reverse(v[2]);
    const Vec l0 = _mm256_min_pd(v[0], r0), l1 = _mm256_min_pd(v[1], r1);
    const Vec h0 = _mm256_max_pd(v[0], r0), h1 = _mm256_max_pd(v[1], r1);
    v[0] = sort_bitonic(_mm256_min_pd(l0, l1));
    v[1] = sort_bitonic(_mm256_max_pd(l0, l1));
    v[2] = sort_bitonic(_mm256_min_pd(h0, h1));
    v[3] = sort_bitonic(_mm256_max_pd(h0, h1));
}

PAIRMETRICS_AVX2 Counts zero_counts() {
    return _mm256_setzero_si256();
}

PAIRMETRICS_AVX2 Counts add_counts(Counts a, Counts b) {
    return _mm256_add_epi64(a, b);
}

// Subtracting a comparison mask (all-ones lanes, -1) counts its lanes.
PAIRMETRICS_AVX2 Counts add_mask(Counts count, Vec mask) {
    return _mm256_sub_epi64(count, _mm256_castpd_si256(mask));
}

PAIRMETRICS_AVX2 std::size_t last_count(Counts count) {
    return static_cast<std::size_t>(_mm256_extract_epi64(count, 3));
}

PAIRMETRICS_AVX2 std::uint64_t sum_counts(Counts x) {
    const __m128i sum = _mm_add_epi64(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    return static_cast<std::uint64_t>(_mm_cvtsi128_si64(sum)) + static_cast<std::uint64_t>(_mm_extract_epi64(sum, 1));
}

PAIRMETRICS_AVX2 Counts count_not_far(Counts count, double a, Vec b, Vec min_dist) {
    // a - b < min_dist: the exact negation of the scalar a - b >= min_dist (no NaN).
    return add_mask(count, _mm256_cmp_pd(_mm256_sub_pd(_mm256_set1_pd(a), b), min_dist, _CMP_LT_OQ));
}

#define PAIRMETRICS_LANE PAIRMETRICS_AVX2
#include "paired_simd_lanes.hpp"
#undef PAIRMETRICS_LANE

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
    return avx2::sum_counts(count);
}

PAIRMETRICS_TARGET("avx2") void merge_avx2(const double* src, double* dst, const MergeJob* jobs, std::size_t count) {
    avx2::merge_jobs(src, dst, jobs, count);
}

PAIRMETRICS_TARGET("avx2")
std::uint64_t count_avx2(const double* src, const CountJob* jobs, std::size_t count, double min_dist) {
    return avx2::count_jobs(src, jobs, count, min_dist);
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
