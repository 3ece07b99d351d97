#include "matching_tile_scan.hpp"

#include <cmath>
#include <limits>

#if PAIRMETRICS_X86_SIMD
#include <immintrin.h>
#endif

namespace pairmetrics::matching {

namespace {

std::uint64_t flag_below_scalar(float* row, const float* sqb, float sqi, float tau, const float* tau_col, int cb,
                                int ce) {
    std::uint64_t bits = 0;
    for (int c = cb; c < ce; ++c) {
        const float v = sqi + sqb[c] - 2 * row[c];
        row[c] = v;
        bits |= static_cast<std::uint64_t>((v < tau) | (v < tau_col[c])) << (c - cb);
    }
    return bits;
}

#if PAIRMETRICS_X86_SIMD
// Eight columns per step, the comparison masks gathered with movemask (the
// same operations in the same order as the scalar loop: the same bits).
PAIRMETRICS_TARGET("avx2")
std::uint64_t flag_below_avx2(float* row, const float* sqb, float sqi, float tau, const float* tau_col, int cb,
                              int ce) {
    const __m256 vsqi = _mm256_set1_ps(sqi), vtau = _mm256_set1_ps(tau), two = _mm256_set1_ps(2.0f);
    std::uint64_t bits = 0;
    int c = cb;
    for (; c + 8 <= ce; c += 8) {
        const __m256 v =
            _mm256_sub_ps(_mm256_add_ps(vsqi, _mm256_loadu_ps(sqb + c)), _mm256_mul_ps(two, _mm256_loadu_ps(row + c)));
        _mm256_storeu_ps(row + c, v);
        const __m256 below = _mm256_or_ps(_mm256_cmp_ps(v, vtau, _CMP_LT_OQ),
                                          _mm256_cmp_ps(v, _mm256_loadu_ps(tau_col + c), _CMP_LT_OQ));
        bits |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm256_movemask_ps(below))) << (c - cb);
    }
    if (c < ce) bits |= flag_below_scalar(row, sqb, sqi, tau, tau_col, c, ce) << (c - cb);
    return bits;
}
#endif

std::uint64_t less_than_bits_scalar(const std::int64_t* values, std::int64_t bound, int len) {
    std::uint64_t bits = 0;
    for (int t = 0; t < len; ++t) bits |= static_cast<std::uint64_t>(values[t] < bound) << t;
    return bits;
}

double squared_distance_scalar(const double* a, const double* b, std::int64_t d) {
    double acc[4] = {0, 0, 0, 0};
    std::int64_t t = 0;
    for (; t + 4 <= d; t += 4)
        for (int q = 0; q < 4; ++q) {
            const double diff = a[t + q] - b[t + q];
            acc[q] += diff * diff;
        }
    for (; t < d; ++t) {
        const double diff = a[t] - b[t];
        acc[0] += diff * diff;
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

#if PAIRMETRICS_X86_SIMD
PAIRMETRICS_TARGET("avx2")
std::uint64_t less_than_bits_avx2(const std::int64_t* values, std::int64_t bound, int len) {
    const __m256i vb = _mm256_set1_epi64x(bound);
    std::uint64_t bits = 0;
    int t = 0;
    for (; t + 4 <= len; t += 4) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + t));
        const int m = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(vb, v)));
        bits |= static_cast<std::uint64_t>(static_cast<unsigned>(m)) << t;
    }
    if (t < len) bits |= less_than_bits_scalar(values + t, bound, len - t) << t;
    return bits;
}

// Eight lanes per step, the comparison straight to a mask (the tail masked off).
PAIRMETRICS_TARGET("avx512f")
std::uint64_t less_than_bits_avx512(const std::int64_t* values, std::int64_t bound, int len) {
    const __m512i vb = _mm512_set1_epi64(bound);
    std::uint64_t bits = 0;
    for (int t = 0; t < len; t += 8) {
        const auto live = static_cast<__mmask8>(len - t >= 8 ? 0xFF : (1u << (len - t)) - 1);
        const __m512i v = _mm512_maskz_loadu_epi64(live, values + t);
        bits |= static_cast<std::uint64_t>(_mm512_mask_cmplt_epi64_mask(live, v, vb)) << t;
    }
    return bits;
}

// Lane q holds the running sum of t mod 4 = q, as in the scalar loop
// (separate multiply and add, no fused operation: the same roundings).
PAIRMETRICS_TARGET("avx2")
double squared_distance_avx2(const double* a, const double* b, std::int64_t d) {
    __m256d acc = _mm256_setzero_pd();
    std::int64_t t = 0;
    for (; t + 4 <= d; t += 4) {
        const __m256d diff = _mm256_sub_pd(_mm256_loadu_pd(a + t), _mm256_loadu_pd(b + t));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(diff, diff));
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, acc);
    for (; t < d; ++t) {
        const double diff = a[t] - b[t];
        lanes[0] += diff * diff;
    }
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}
#endif

// The float64 screen flags (i, c) when s = a_i + a_c > 0 and
//     v - unit_err (sq_i + sq_c) - 1e-30 < (squared ? s : s^2),  v = sq_i + sq_c - 2 dot.
// Here in float32, u = 2^-24, S = sq_i + sq_c, gamma = d u / (1 - d u), so
// |dot| <= S / 2 (1 + gamma) (Cauchy-Schwarz plus the product's rounding):
//  - v: the rounding of sq_i, sq_c, their sum and the difference moves it by
//    at most (4 + gamma) u S (1 + 3u); lower = v - (err_i + err_c) by at most
//    (2 + gamma) u S (1 + 4u) + u (err_i + err_c) more; err_i + err_c >=
//    unit_err S (1 + 1e-6) + (8 + 2 gamma + 2 unit_err) u S + 2e-30 (ScreenTerms)
//    loses at most 2u of itself, so the float lower is below the float64 one
//    by more than u S + 1e-30, far more than float64's own rounding;
//  - a rounded up and s rounded to nearest give s_f >= s (1 - u) when s > 0
//    (and s_f > 0: a nonzero sum of floats never rounds to zero), so the
//    target, times 1 + 2^-20, is above the float64 one.
// Hence every pair the float64 screen flags is flagged here (overflow to
// +inf only flags more; NaN thresholds flag nothing in either).
template <bool Squared>
PAIRMETRICS_FORCE_INLINE int may_screen_lane(float dot, float sq, float err, float at, float sqi, float erri,
                                             float ati) {
    constexpr float widen = 1.0f + 0x1p-20f;
    const float s = ati + at;
    const float target = Squared ? s * widen : (s * s) * widen;
    const float v = (sqi + sq) - 2.0f * dot;
    const float lower = v - (erri + err);
    return static_cast<int>(s > 0.0f) & static_cast<int>(lower < target);
}

template <bool Squared>
PAIRMETRICS_FORCE_INLINE bool may_screen_body(const float* dots, const float* sq, const float* err, const float* at,
                                              float sqi, float erri, float ati, int len) {
    int any = 0;
    for (int c = 0; c < len; ++c) any |= may_screen_lane<Squared>(dots[c], sq[c], err[c], at[c], sqi, erri, ati);
    return any != 0;
}

// The lanes as bytes first (a loop the compiler vectorises), then packed.
template <bool Squared>
PAIRMETRICS_FORCE_INLINE std::uint64_t screen_bits_body(const float* dots, const float* sq, const float* err,
                                                        const float* at, float sqi, float erri, float ati, int len) {
    unsigned char flag[64];
    for (int c = 0; c < len; ++c)
        flag[c] = static_cast<unsigned char>(may_screen_lane<Squared>(dots[c], sq[c], err[c], at[c], sqi, erri, ati));
    std::uint64_t bits = 0;
    for (int c = 0; c < len; ++c) bits |= static_cast<std::uint64_t>(flag[c]) << c;
    return bits;
}

// One function per level (no FMA: the bounds above count two roundings
// where a fused operation has one, but stay with what they were checked on).
#define PAIRMETRICS_TILE_SCANS(suffix, attributes)                                                              \
    template <bool Squared>                                                                                     \
    attributes bool may_screen_##suffix(const float* dots, const float* sq, const float* err, const float* at,  \
                                        float sqi, float erri, float ati, int len) {                            \
        return may_screen_body<Squared>(dots, sq, err, at, sqi, erri, ati, len);                                \
    }                                                                                                           \
    template <bool Squared>                                                                                     \
    attributes std::uint64_t screen_bits_##suffix(const float* dots, const float* sq, const float* err,         \
                                                  const float* at, float sqi, float erri, float ati, int len) { \
        return screen_bits_body<Squared>(dots, sq, err, at, sqi, erri, ati, len);                               \
    }
PAIRMETRICS_TILE_SCANS(scalar, )
#if PAIRMETRICS_X86_SIMD
PAIRMETRICS_TILE_SCANS(avx2, PAIRMETRICS_TARGET("avx2"))
#endif
#undef PAIRMETRICS_TILE_SCANS

#if PAIRMETRICS_X86_SIMD
// AVX-512: sixteen lanes of may_screen_lane at a time, the same operations
// in the same order (the same bits), straight to a comparison mask; the
// columns past len are masked off.
template <bool Squared>
PAIRMETRICS_TARGET("avx512f")
PAIRMETRICS_FORCE_INLINE __mmask16 screen_mask_avx512(const float* dots, const float* sq, const float* err,
                                                      const float* at, __m512 sqi, __m512 erri, __m512 ati, int len) {
    const __mmask16 live = len >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << len) - 1);
    const __m512 zero = _mm512_setzero_ps();
    const __m512 s = _mm512_add_ps(ati, _mm512_maskz_loadu_ps(live, at));
    const __m512 widen = _mm512_set1_ps(1.0f + 0x1p-20f);
    const __m512 target = Squared ? _mm512_mul_ps(s, widen) : _mm512_mul_ps(_mm512_mul_ps(s, s), widen);
    const __m512 v = _mm512_sub_ps(_mm512_add_ps(sqi, _mm512_maskz_loadu_ps(live, sq)),
                                   _mm512_mul_ps(_mm512_set1_ps(2.0f), _mm512_maskz_loadu_ps(live, dots)));
    const __m512 lower = _mm512_sub_ps(v, _mm512_add_ps(erri, _mm512_maskz_loadu_ps(live, err)));
    return _mm512_mask_cmp_ps_mask(_mm512_mask_cmp_ps_mask(live, s, zero, _CMP_GT_OQ), lower, target, _CMP_LT_OQ);
}

template <bool Squared>
PAIRMETRICS_TARGET("avx512f")
bool may_screen_avx512(const float* dots, const float* sq, const float* err, const float* at, float sqi, float erri,
                       float ati, int len) {
    const __m512 vsqi = _mm512_set1_ps(sqi), verri = _mm512_set1_ps(erri), vati = _mm512_set1_ps(ati);
    for (int c = 0; c < len; c += 16)
        if (screen_mask_avx512<Squared>(dots + c, sq + c, err + c, at + c, vsqi, verri, vati, len - c) != 0)
            return true;
    return false;
}

template <bool Squared>
PAIRMETRICS_TARGET("avx512f")
std::uint64_t screen_bits_avx512(const float* dots, const float* sq, const float* err, const float* at, float sqi,
                                 float erri, float ati, int len) {
    const __m512 vsqi = _mm512_set1_ps(sqi), verri = _mm512_set1_ps(erri), vati = _mm512_set1_ps(ati);
    std::uint64_t bits = 0;
    for (int c = 0; c < len; c += 16)
        bits |= static_cast<std::uint64_t>(
                    screen_mask_avx512<Squared>(dots + c, sq + c, err + c, at + c, vsqi, verri, vati, len - c))
                << c;
    return bits;
}
#endif

}  // namespace

// The AVX2 function of a scan unless the level is scalar (AVX-512 CPUs run AVX2 too).
#if PAIRMETRICS_X86_SIMD
#define PAIRMETRICS_AVX2_OR_SCALAR(level, name) (simd_resolve(level) != SimdLevel::scalar ? name##_avx2 : name##_scalar)
#else
#define PAIRMETRICS_AVX2_OR_SCALAR(level, name) ((void)(level), name##_scalar)
#endif

FlagBelowFn flag_below_for(SimdLevel level) {
    return PAIRMETRICS_AVX2_OR_SCALAR(level, flag_below);
}

LessThanBitsFn less_than_bits_for(SimdLevel level) {
#if PAIRMETRICS_X86_SIMD
    if (simd_resolve(level) == SimdLevel::avx512) return less_than_bits_avx512;
#endif
    return PAIRMETRICS_AVX2_OR_SCALAR(level, less_than_bits);
}

SquaredDistanceFn squared_distance_for(SimdLevel level) {
    return PAIRMETRICS_AVX2_OR_SCALAR(level, squared_distance);
}

#undef PAIRMETRICS_AVX2_OR_SCALAR

// The screen function of a level (its AVX-512, AVX2 or scalar build), squared or not.
#if PAIRMETRICS_X86_SIMD
#define PAIRMETRICS_SCREEN_BY_LEVEL(level, squared, name)                  \
    switch (simd_resolve(level)) {                                         \
        case SimdLevel::avx512:                                            \
            return (squared) ? name##_avx512<true> : name##_avx512<false>; \
        case SimdLevel::avx2:                                              \
            return (squared) ? name##_avx2<true> : name##_avx2<false>;     \
        default:                                                           \
            return (squared) ? name##_scalar<true> : name##_scalar<false>; \
    }
#else
#define PAIRMETRICS_SCREEN_BY_LEVEL(level, squared, name) \
    (void)(level);                                        \
    return (squared) ? name##_scalar<true> : name##_scalar<false>;
#endif

MayScreenFn may_screen_for(SimdLevel level, bool squared){PAIRMETRICS_SCREEN_BY_LEVEL(level, squared, may_screen)}

ScreenBitsFn screen_bits_for(SimdLevel level, bool squared) {
    PAIRMETRICS_SCREEN_BY_LEVEL(level, squared, screen_bits)
}

#undef PAIRMETRICS_SCREEN_BY_LEVEL

float float_at_least(double x) {
    if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
    if (x > static_cast<double>(std::numeric_limits<float>::max())) return std::numeric_limits<float>::infinity();
    float f = static_cast<float>(x);
    if (static_cast<double>(f) < x) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return f;
}

std::vector<float> floats_at_least(const std::vector<double>& x) {
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = float_at_least(x[i]);
    return out;
}

ScreenTerms::ScreenTerms(const std::vector<double>& sq64, double unit_err, std::int64_t d)
    : sq(sq64.size()), err(sq64.size()) {
    constexpr double u32 = 0x1p-24;
    const double du = static_cast<double>(d) * u32;
    // du >= 1: no bound, every pair is flagged (the float64 screen decides).
    const double gamma = du < 1 ? du / (1 - du) : std::numeric_limits<double>::infinity();
    const double per_sq = unit_err * (1 + 1e-6) + (8 + 2 * gamma + 2 * unit_err) * u32;
    for (std::size_t p = 0; p < sq64.size(); ++p) {
        sq[p] = static_cast<float>(sq64[p]);
        err[p] = std::isinf(per_sq) ? std::numeric_limits<float>::infinity()
                                    : float_at_least(per_sq * sq64[p] * (1 + 1e-12) + 1e-30);
    }
}

}  // namespace pairmetrics::matching
