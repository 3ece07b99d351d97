#include "matching_distance_tiles.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#if PAIRMETRICS_X86_SIMD
#include <immintrin.h>
#endif

namespace pairmetrics::matching {

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;

}  // namespace

void pack_panels(const float* x, i32 cols, i64 d, float* out) {
    const std::size_t dd = static_cast<std::size_t>(d);
    for (i32 c0 = 0; c0 < cols; c0 += kPanelColumns) {
        float* panel = out + static_cast<std::size_t>(c0) * dd;
        const i32 width = std::min(kPanelColumns, cols - c0);
        for (i32 c = 0; c < kPanelColumns; ++c) {
            const float* column = x + static_cast<std::size_t>(c0 + c) * dd;
            for (std::size_t k = 0; k < dd; ++k) panel[k * kPanelColumns + c] = c < width ? column[k] : 0.0f;
        }
    }
}

PackedPanels::PackedPanels(i32 cols, i64 d) : d_(d) {
    constexpr std::size_t line = 64 / sizeof(float);
    storage_.assign(panel_floats(cols, d) + line, 0.0f);
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    base_ = storage_.data() + (64 - address % 64) % 64 / sizeof(float);
}

void PackedPanels::assign(const float* x, i32 cols, i64 d) {
    constexpr std::size_t line = 64 / sizeof(float);
    if (storage_.size() < panel_floats(cols, d) + line) *this = PackedPanels(cols, d);
    d_ = d;
    pack_panels(x, cols, d, base_);
}

void PackedPanels::fill(const float* x, i32 first, i32 count) {
    const std::size_t at = static_cast<std::size_t>(first) * static_cast<std::size_t>(d_);
    pack_panels(x + at, count, d_, base_ + at);
}

#if PAIRMETRICS_X86_SIMD
// Loops over a strip's rows unrolled whole, so that its accumulators stay in registers.
#if defined(__clang__)
#define PAIRMETRICS_UNROLL _Pragma("unroll")
#else
#define PAIRMETRICS_UNROLL _Pragma("GCC unroll 8")
#endif

namespace {

// One panel's column norms and thresholds, padded past its `width` columns
// (norm 0, threshold -inf: never below), and the mask of its columns.
struct PanelColumns {
    alignas(64) float sq[kPanelColumns];
    alignas(64) float tau[kPanelColumns];
    std::uint32_t valid;
    PanelColumns(const float* sq_col, const float* tau_col, i32 width) : valid((1u << width) - 1) {
        for (i32 c = 0; c < kPanelColumns; ++c) {
            sq[c] = c < width ? sq_col[c] : 0.0f;
            tau[c] = c < width ? tau_col[c] : -std::numeric_limits<float>::infinity();
        }
    }
};

// Six rows by sixteen columns: twelve accumulators, enough independent
// fused multiply-adds to keep both units busy.
constexpr int kStrip = 6;

// The dot products of the strip of rows [r0, r0 + 6) with one panel's
// columns: lo[r] columns 0-7, hi[r] columns 8-15, one sequential fused
// multiply-add per coordinate in each lane. Rows from `rows` on repeat the
// last row (computed, never used): one strip shape for every tail.
PAIRMETRICS_TARGET("avx2,fma")
PAIRMETRICS_FORCE_INLINE void strip_dots_avx2(const float* x, i32 rows, i64 d, const float* panel, i32 r0,
                                              __m256 (&lo)[kStrip], __m256 (&hi)[kStrip]) {
    const float* a[kStrip];
    PAIRMETRICS_UNROLL for (int r = 0; r < kStrip; ++r) {
        lo[r] = hi[r] = _mm256_setzero_ps();
        a[r] = x + static_cast<std::size_t>(std::min(r0 + r, rows - 1)) * static_cast<std::size_t>(d);
    }
    const float* p = panel;
    for (i64 k = 0; k < d; ++k, p += kPanelColumns) {
        const __m256 b_lo = _mm256_load_ps(p), b_hi = _mm256_load_ps(p + 8);
        PAIRMETRICS_UNROLL for (int r = 0; r < kStrip; ++r) {
            const __m256 ar = _mm256_broadcast_ss(a[r] + k);
            lo[r] = _mm256_fmadd_ps(ar, b_lo, lo[r]);
            hi[r] = _mm256_fmadd_ps(ar, b_hi, hi[r]);
        }
    }
}

// One strip against one panel (columns from c0): the values and both
// comparisons in registers; `valid` masks the panel's columns past the last.
PAIRMETRICS_TARGET("avx2,fma")
PAIRMETRICS_FORCE_INLINE i32 strip_avx2(const float* x, i32 rows, i64 d, const float* panel, __m256 sq_lo, __m256 sq_hi,
                                        __m256 tau_lo, __m256 tau_hi, std::uint32_t valid, const float* sq_row,
                                        const float* tau_row, i32 r0, i32 c0, BelowCandidate* out) {
    __m256 lo[kStrip], hi[kStrip];
    strip_dots_avx2(x, rows, d, panel, r0, lo, hi);
    const __m256 two = _mm256_set1_ps(2.0f);
    const int live = std::min(kStrip, rows - r0);
    i32 count = 0;
    PAIRMETRICS_UNROLL for (int r = 0; r < kStrip; ++r) {
        const i32 at = std::min(r0 + r, rows - 1);  // rows past the last: masked below
        const __m256 sqr = _mm256_set1_ps(sq_row[at]), taur = _mm256_set1_ps(tau_row[at]);
        // s - 2 dot rounded once (2 dot is exact): the bits of s - 2 * dot.
        const __m256 v_lo = _mm256_fnmadd_ps(two, lo[r], _mm256_add_ps(sqr, sq_lo));
        const __m256 v_hi = _mm256_fnmadd_ps(two, hi[r], _mm256_add_ps(sqr, sq_hi));
        const __m256 below_lo =
            _mm256_or_ps(_mm256_cmp_ps(v_lo, taur, _CMP_LT_OQ), _mm256_cmp_ps(v_lo, tau_lo, _CMP_LT_OQ));
        const __m256 below_hi =
            _mm256_or_ps(_mm256_cmp_ps(v_hi, taur, _CMP_LT_OQ), _mm256_cmp_ps(v_hi, tau_hi, _CMP_LT_OQ));
        std::uint32_t bits = static_cast<std::uint32_t>(_mm256_movemask_ps(below_lo)) |
                             static_cast<std::uint32_t>(_mm256_movemask_ps(below_hi)) << 8;
        bits &= r < live ? valid : 0u;
        if (bits == 0) continue;
        alignas(32) float v[kPanelColumns];
        _mm256_store_ps(v, v_lo);
        _mm256_store_ps(v + 8, v_hi);
        for (; bits != 0; bits &= bits - 1) {
            const int c = __builtin_ctz(bits);
            out[count++] = BelowCandidate{r0 + r, c0 + c, v[c]};
        }
    }
    return count;
}

PAIRMETRICS_TARGET("avx2,fma")
i32 below_scan_avx2(const float* x, const float*, i32 rows, i64 d, const float* panels, i32 cols, const float* sq_row,
                    const float* sq_col, const float* tau_row, const float* tau_col, BelowCandidate* out) {
    i32 count = 0;
    for (i32 c0 = 0; c0 < cols; c0 += kPanelColumns) {
        const PanelColumns p(sq_col + c0, tau_col + c0, std::min(kPanelColumns, cols - c0));
        const __m256 sq_lo = _mm256_load_ps(p.sq), sq_hi = _mm256_load_ps(p.sq + 8);
        const __m256 tau_lo = _mm256_load_ps(p.tau), tau_hi = _mm256_load_ps(p.tau + 8);
        const std::uint32_t valid = p.valid;
        const float* panel = panels + static_cast<std::size_t>(c0) * static_cast<std::size_t>(d);
        for (i32 r = 0; r < rows; r += kStrip)
            count +=
                strip_avx2(x, rows, d, panel, sq_lo, sq_hi, tau_lo, tau_hi, valid, sq_row, tau_row, r, c0, out + count);
    }
    return count;
}

PAIRMETRICS_TARGET("avx2,fma")
void panel_dots_avx2(const float* x, const float*, i32 rows, i64 d, const float* panel, float* out, i32 stride) {
    for (i32 r0 = 0; r0 < rows; r0 += kStrip) {
        __m256 lo[kStrip], hi[kStrip];
        strip_dots_avx2(x, rows, d, panel, r0, lo, hi);
        const int live = std::min(kStrip, rows - r0);
        PAIRMETRICS_UNROLL for (int r = 0; r < kStrip; ++r) {
            if (r >= live) break;
            float* row = out + static_cast<std::size_t>(r0 + r) * static_cast<std::size_t>(stride);
            _mm256_storeu_ps(row, lo[r]);
            _mm256_storeu_ps(row + 8, hi[r]);
        }
    }
}

// AVX-512: sixteen rows (one row panel) by one panel, sixteen accumulators
// of sixteen columns. Each row's coordinate is broadcast from the row panel
// (one pointer for all rows). Every lane runs the same fused multiply-adds
// in the same order as the AVX2 kernel: the same bits.
constexpr int kStrip512 = kPanelColumns;
#if defined(__clang__)
#define PAIRMETRICS_UNROLL_STRIP _Pragma("unroll")
#else
#define PAIRMETRICS_UNROLL_STRIP _Pragma("GCC unroll 16")
#endif

PAIRMETRICS_TARGET("avx512f")
PAIRMETRICS_FORCE_INLINE void strip_dots_avx512(const float* row_panel, i64 d, const float* panel,
                                                __m512 (&acc)[kStrip512]) {
    PAIRMETRICS_UNROLL_STRIP for (int r = 0; r < kStrip512; ++r) acc[r] = _mm512_setzero_ps();
    for (i64 k = 0; k < d; ++k) {
        const __m512 b = _mm512_load_ps(panel + k * kPanelColumns);
        const float* a = row_panel + k * kPanelColumns;
        PAIRMETRICS_UNROLL_STRIP for (int r = 0; r < kStrip512; ++r) acc[r] =
            _mm512_fmadd_ps(_mm512_set1_ps(a[r]), b, acc[r]);
    }
}

PAIRMETRICS_TARGET("avx512f")
i32 below_scan_avx512(const float*, const float* row_panels, i32 rows, i64 d, const float* panels, i32 cols,
                      const float* sq_row, const float* sq_col, const float* tau_row, const float* tau_col,
                      BelowCandidate* out) {
    i32 count = 0;
    const __m512 two = _mm512_set1_ps(2.0f);
    for (i32 c0 = 0; c0 < cols; c0 += kPanelColumns) {
        const PanelColumns p(sq_col + c0, tau_col + c0, std::min(kPanelColumns, cols - c0));
        const __m512 sq_c = _mm512_load_ps(p.sq), tau_c = _mm512_load_ps(p.tau);
        const auto valid = static_cast<__mmask16>(p.valid);
        const float* panel = panels + static_cast<std::size_t>(c0) * static_cast<std::size_t>(d);
        for (i32 r0 = 0; r0 < rows; r0 += kStrip512) {
            __m512 acc[kStrip512];
            strip_dots_avx512(row_panels + static_cast<std::size_t>(r0) * static_cast<std::size_t>(d), d, panel, acc);
            const int live = std::min(kStrip512, rows - r0);
            PAIRMETRICS_UNROLL_STRIP for (int r = 0; r < kStrip512; ++r) {
                if (r >= live) break;
                const __m512 v = _mm512_fnmadd_ps(two, acc[r], _mm512_add_ps(_mm512_set1_ps(sq_row[r0 + r]), sq_c));
                __mmask16 bits = _mm512_mask_cmp_ps_mask(valid, v, _mm512_set1_ps(tau_row[r0 + r]), _CMP_LT_OQ) |
                                 _mm512_mask_cmp_ps_mask(valid, v, tau_c, _CMP_LT_OQ);
                if (bits == 0) continue;
                alignas(64) float value[kPanelColumns];
                _mm512_store_ps(value, v);
                for (unsigned m = bits; m != 0; m &= m - 1) {
                    const int c = __builtin_ctz(m);
                    out[count++] = BelowCandidate{r0 + r, c0 + c, value[c]};
                }
            }
        }
    }
    return count;
}

PAIRMETRICS_TARGET("avx512f")
void panel_dots_avx512(const float*, const float* row_panels, i32 rows, i64 d, const float* panel, float* out,
                       i32 stride) {
    for (i32 r0 = 0; r0 < rows; r0 += kStrip512) {
        __m512 acc[kStrip512];
        strip_dots_avx512(row_panels + static_cast<std::size_t>(r0) * static_cast<std::size_t>(d), d, panel, acc);
        const int live = std::min(kStrip512, rows - r0);
        PAIRMETRICS_UNROLL_STRIP for (int r = 0; r < kStrip512; ++r) {
            if (r >= live) break;
            _mm512_storeu_ps(out + static_cast<std::size_t>(r0 + r) * static_cast<std::size_t>(stride), acc[r]);
        }
    }
}
#undef PAIRMETRICS_UNROLL_STRIP

}  // namespace
#undef PAIRMETRICS_UNROLL
#endif

#if PAIRMETRICS_X86_SIMD
// The kernel of the level that runs (null at the scalar level).
template <class Fn>
static Fn kernel_of(SimdLevel level, Fn avx2, Fn avx512) {
    switch (simd_resolve(level)) {
        case SimdLevel::avx512:
            return avx512;
        case SimdLevel::avx2:
            return avx2;
        default:
            return nullptr;
    }
}
#define PAIRMETRICS_KERNEL_OF(level, name) kernel_of(level, name##_avx2, name##_avx512)
#else
#define PAIRMETRICS_KERNEL_OF(level, name) ((void)(level), nullptr)
#endif

BelowScanFn below_scan_for(SimdLevel level) {
    return PAIRMETRICS_KERNEL_OF(level, below_scan);
}

PanelDotsFn panel_dots_for(SimdLevel level) {
    return PAIRMETRICS_KERNEL_OF(level, panel_dots);
}

#undef PAIRMETRICS_KERNEL_OF

}  // namespace pairmetrics::matching
