// The fused float32 distance kernel of the neighbour search (and the dot
// products of the screens, a panel at a time): for rows of
// centred coordinates against columns packed in panels, the dot products are
// accumulated in registers, turned into v = (sq_r + sq_c) - 2 <x_r, y_c> and
// compared with the row's and the column's thresholds there; only the pairs
// below one of them leave the kernel. No tile of values is ever written.
//
// Rounding: each dot product is a sequential sum of fused multiply-adds in
// float32 (k = 0, 1, .., d - 1), then v rounds twice (the sum of the norms,
// the difference; 2 <x, y> is exact). That is within the expansion bound of
// euclidean.hpp (any summation order, with or without FMA), so the provider's
// tile_unit_error covers it as it covers the BLAS product.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu_features.hpp"

namespace pairmetrics::matching {

// Columns per panel: panel q holds columns [16 q, 16 q + 16) coordinate
// by coordinate (d rows of 16 floats), the columns past the last one zero.
constexpr std::int32_t kPanelColumns = 16;

inline std::size_t panel_floats(std::int32_t cols, std::int64_t d) {
    const std::size_t panels = (static_cast<std::size_t>(cols) + kPanelColumns - 1) / kPanelColumns;
    return panels * static_cast<std::size_t>(d) * kPanelColumns;
}

// cols rounded up to whole panels: the row stride of a tile the panel kernel writes.
inline std::int32_t panel_stride(std::int32_t cols) {
    return (cols + kPanelColumns - 1) / kPanelColumns * kPanelColumns;
}

// Columns x (cols rows of length d, row-major) packed into panels at out
// (panel_floats(cols, d) floats).
void pack_panels(const float* x, std::int32_t cols, std::int64_t d, float* out);

// A pair the fused scan found below a threshold: row, column (from 0) and
// its value v.
struct BelowCandidate {
    std::int32_t row, col;
    float value;
};

// The rows come twice: row-major (rows_x, x_r = rows_x + r d) and packed
// in panels like the columns (row_panels, from a multiple of kPanelColumns
// of a packed set, so that its last panel is padded); each level's kernel
// reads the layout it is fast on (AVX2 the first, AVX-512 the second).
//
// For every row r < rows and column c < cols (the
// packed panels): appends (r, c, v) to out when v < tau_row[r] or
// v < tau_col[c]; returns how many (at most rows * cols). Rows go in strips
// against one panel at a time, panels in order.
using BelowScanFn = std::int32_t (*)(const float* rows_x, const float* row_panels, std::int32_t rows, std::int64_t d,
                                     const float* panels, std::int32_t cols, const float* sq_row, const float* sq_col,
                                     const float* tau_row, const float* tau_col, BelowCandidate* out);

// The kernel of a level, or null where there is none (the scalar level:
// callers keep their matrix-product path).
BelowScanFn below_scan_for(SimdLevel level);

// The dot products of rows [0, rows) with one panel's columns, written to
// out[r * stride + c] for c < kPanelColumns (the same arithmetic as the scan
// above): the screens' tiles, a few panels wide and in cache.
using PanelDotsFn = void (*)(const float* rows_x, const float* row_panels, std::int32_t rows, std::int64_t d,
                             const float* panel, float* out, std::int32_t stride);
PanelDotsFn panel_dots_for(SimdLevel level);

// Panels of a whole point set (cols columns of length d), aligned to a
// cache line; filled range by range (from several threads if need be).
class PackedPanels {
  public:
    PackedPanels() = default;
    PackedPanels(std::int32_t cols, std::int64_t d);
    PackedPanels(const PackedPanels&) = delete;  // base_ points into storage_
    PackedPanels& operator=(const PackedPanels&) = delete;
    PackedPanels(PackedPanels&&) = default;
    PackedPanels& operator=(PackedPanels&&) = default;
    // Packs x's columns [first, first + count) (first a multiple of kPanelColumns).
    void fill(const float* x, std::int32_t first, std::int32_t count);
    // Holds exactly x's cols columns of length d, reusing the storage when it is large enough.
    void assign(const float* x, std::int32_t cols, std::int64_t d);
    // The panels from column `first` (a multiple of kPanelColumns) on.
    const float* from(std::int32_t first) const {
        return base_ + static_cast<std::size_t>(first) * static_cast<std::size_t>(d_);
    }

  private:
    std::vector<float> storage_;
    float* base_ = nullptr;
    std::int64_t d_ = 0;
};

}  // namespace pairmetrics::matching
