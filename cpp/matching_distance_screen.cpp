// The Euclidean provider's screens: every pair (or the pairs of some rows) whose distance may be below a
// threshold, from float32 tiles with a proven error bound.

#include "matching_distances_detail.hpp"

namespace pairmetrics::matching {

double EuclideanDistances::tile_threshold(double a) const {
    const double widen = 1 + 8 * relative_error();
    const double unit = squared_ ? tile_scale_ * tile_scale_ : tile_scale_;
    return (a > 0 ? a * widen : a) * unit;
}

std::vector<double> EuclideanDistances::tile_thresholds(const double* a) const {
    std::vector<double> at(n_);
    for (i32 p = 0; p < n_; ++p) at[p] = tile_threshold(a[perm_[p]]);
    return at;
}

namespace {

// Float32 copies of chosen points, contiguous, with the prefilter's terms.
struct FloatScreenSet final : Distances::ScreenSet {
    std::vector<float> x, sq, err, at;
    PackedPanels panels;  // x in panels, where the panel kernel runs
};

}  // namespace

std::unique_ptr<Distances::ScreenSet> EuclideanDistances::screen_set(const i32* points, i32 count,
                                                                     const double* a) const {
    if (!single_ || gemm_.sgemm == nullptr) return nullptr;
    auto set = std::make_unique<FloatScreenSet>();
    const std::size_t d = static_cast<std::size_t>(d_);
    set->x.resize(static_cast<std::size_t>(count) * d);
    set->sq.resize(count);
    set->err.resize(count);
    set->at.resize(count);
    for (i32 t = 0; t < count; ++t) {
        const i32 p = position_[points[t]];
        std::copy_n(xc32_.data() + static_cast<std::size_t>(p) * d, d, set->x.data() + static_cast<std::size_t>(t) * d);
        set->sq[t] = screen32_.sq[p];
        set->err[t] = screen32_.err[p];
        set->at[t] = float_at_least(tile_threshold(a[t]));
    }
    if (panel_dots_ != nullptr) set->panels.assign(set->x.data(), count, d_);
    return set;
}

void EuclideanDistances::screen_block(const ScreenSet& rows, i32 r0, i32 r1, const ScreenSet& cols, i32 c0, i32 c1,
                                      int words, std::uint64_t* bits, double lower) const {
    const auto& R = static_cast<const FloatScreenSet&>(rows);
    const auto& C = static_cast<const FloatScreenSet&>(cols);
    const int nr = r1 - r0, nc = c1 - c0, k = static_cast<int>(d_);
    if (nr <= 0 || nc <= 0) return;
    if (nc > kScreenColumns || nc > 64 * words) throw std::logic_error("screen_block: too many columns");
    thread_local std::vector<float> tile;
    const std::size_t d = static_cast<std::size_t>(d_);
    // The panel kernel where there is one (faster than a matrix product this
    // narrow): from the panel holding c0, the tile's columns `shift` on.
    const int shift = panel_dots_ != nullptr ? c0 % kPanelColumns : 0;
    const int stride = panel_dots_ != nullptr ? panel_stride(shift + nc) : nc;
    tile.resize(static_cast<std::size_t>(nr) * stride);
    if (panel_dots_ != nullptr) {
        panel_tile(R.x.data() + static_cast<std::size_t>(r0) * d, nr, C.panels.from(c0 - shift), shift + nc,
                   tile.data(), stride);
    } else {
        const OneBlasThread one_thread(gemm_.threads);
        product_abt(gemm_.sgemm, nr, nc, k, R.x.data() + static_cast<std::size_t>(r0) * d, k,
                    C.x.data() + static_cast<std::size_t>(c0) * d, k, tile.data(), nc);
    }
    // The rows' thresholds take the lowering (in tile units, never more than
    // asked: the widening of positive thresholds stays; each rounded up).
    double lower_units = std::nextafter(-tile_threshold(-lower), 0.0);
    if (!(lower_units > 0 && lower_units < std::numeric_limits<double>::infinity())) lower_units = 0;
    for (int r = 0; r < nr; ++r) {
        const float* dots = tile.data() + static_cast<std::size_t>(r) * stride + shift;
        const i32 i = r0 + r;
        const float ati = lower_units > 0 ? float_at_least(std::nextafter(static_cast<double>(R.at[i]) - lower_units,
                                                                          std::numeric_limits<double>::infinity()))
                                          : R.at[i];
        std::uint64_t* out = bits + static_cast<std::size_t>(r) * words;
        for (int w = 0; w < words; ++w) out[w] = 0;
        for (int cb = 0; cb < nc; cb += 64) {
            const int len = std::min(64, nc - cb);
            out[cb / 64] = screen_bits32_(dots + cb, C.sq.data() + c0 + cb, C.err.data() + c0 + cb,
                                          C.at.data() + c0 + cb, R.sq[i], R.err[i], ati, len);
        }
    }
}

std::vector<double> EuclideanDistances::block_maxima(const std::vector<double>& at) const {
    std::vector<double> top((n_ + kRowBlock - 1) / kRowBlock, -std::numeric_limits<double>::infinity());
    for (i32 p = 0; p < n_; ++p) top[p / kRowBlock] = std::max(top[p / kRowBlock], at[p]);
    return top;
}

bool EuclideanDistances::screened_apart(double gap, double top, double sq_a, double sq_b) const {
    // Every pair has a threshold sum s <= top (rounding is monotone): none is
    // flagged when top <= 0, nor when the gap squared, less the tiles' error,
    // is at least top squared.
    if (std::isnan(top)) return false;
    if (!(top > 0)) return true;
    if (std::isinf(top)) return false;
    const double target = squared_ ? top : top * top;
    return gap_clears(gap, target * (1 + 1e-12), sq_a, sq_b);
}

template <class T>
void EuclideanDistances::screen(i32 i, i32 cb, i32 ce, i32 c0, const T* dots, const std::vector<double>& at,
                                unsigned char* hit) const {
    const double* sq = sq_.data();
    const double sqi = sq[i], ai = at[i], unit_err = unit_err_;
    const bool squared = squared_;
    for (i32 c = cb; c < ce; ++c) {
        const double s = ai + at[c];
        const double v = sqi + sq[c] - 2 * static_cast<double>(dots[c - c0]);
        const double lower = v - unit_err * (sqi + sq[c]) - 1e-30;
        hit[c - cb] = static_cast<unsigned char>((s > 0) & (lower < (squared ? s : s * s)));
    }
}

template <class T>
bool EuclideanDistances::may_screen(i32 i, i32 cb, i32 ce, i32 c0, const T* dots,
                                    const std::vector<float>& at32) const {
    if constexpr (std::is_same_v<T, float>) {
        const ScreenTerms& t = screen32_;
        return may_screen32_(dots + (cb - c0), t.sq.data() + cb, t.err.data() + cb, at32.data() + cb, t.sq[i], t.err[i],
                             at32[i], ce - cb);
    } else {
        return true;
    }
}

std::vector<i32> EuclideanDistances::block_groups(const i32* group) const {
    if (group == nullptr) return {};
    std::vector<i32> out((n_ + kRowBlock - 1) / kRowBlock);
    for (i32 p = 0; p < n_; ++p) {
        i32& g = out[p / kRowBlock];
        const i32 gp = group[perm_[p]];
        g = p % kRowBlock == 0 ? gp : (g == gp ? g : -1);
    }
    return out;
}

void EuclideanDistances::pairs_below(const double* a, const i32* group, int n_threads, Control& control,
                                     const PairVisitor& visit_pair) const {
    const std::vector<double> at = tile_thresholds(a);
    const std::vector<float> at32 = single_ ? floats_at_least(at) : std::vector<float>{};
    const std::vector<double> top = block_maxima(at);
    const std::vector<i32> groups = block_groups(group);
    // Blocks of one group; blocks whose balls are apart, or each row of one
    // block apart from the other's ball (its threshold plus the other block's largest).
    auto skip = [&](i32 ra, i32 cb) {
        if (!groups.empty() && groups[ra] >= 0 && groups[ra] == groups[cb]) return true;
        if (screened_apart(block_gap(ra, cb), top[ra] + top[cb], ball_sq_[ra], ball_sq_[cb])) return true;
        auto one_sided = [&](i32 x, i32 y) {
            return rows_apart(
                x, y, [&](i32 p, double gap) { return screened_apart(gap, at[p] + top[y], sq_[p], ball_sq_[y]); });
        };
        return ra != cb && (one_sided(ra, cb) || one_sided(cb, ra));
    };
    auto visit = [&](std::size_t, i32 p, i32 c0, i32 c1, const auto* dots) {
        // Flags first, then the rare visits.
        unsigned char hit[64];
        for (i32 cb = std::max(c0, p + 1); cb < c1; cb += 64) {
            const i32 ce = std::min(c1, cb + 64);
            if (!may_screen(p, cb, ce, c0, dots, at32)) continue;
            screen(p, cb, ce, c0, dots, at, hit);
            for (i32 c = cb; c < ce; ++c)
                if (hit[c - cb]) visit_pair(std::min(perm_[p], perm_[c]), std::max(perm_[p], perm_[c]));
        }
    };
    for_tiles(n_threads, control, [](i32 lo) { return lo; }, skip, visit);
}

std::vector<char> EuclideanDistances::flagged_blocks(const char* columns) const {
    std::vector<char> flagged;
    if (columns == nullptr) return flagged;
    flagged.assign((n_ + kRowBlock - 1) / kRowBlock, 0);
    for (i32 p = 0; p < n_; ++p) flagged[p / kRowBlock] |= columns[perm_[p]] != 0;
    return flagged;
}

template <class T>
EuclideanDistances::RowBlock EuclideanDistances::gather_rows(const T* xc, const i32* where, int count,
                                                             const std::vector<double>& at, const i32* group,
                                                             T* block) const {
    const std::size_t d = static_cast<std::size_t>(d_);
    RowBlock rows;
    rows.at_top = -std::numeric_limits<double>::infinity();
    rows.at_low = std::numeric_limits<double>::infinity();
    rows.group = group == nullptr ? -1 : group[perm_[where[0]]];
    for (int r = 0; r < count; ++r) {
        const i32 p = where[r];
        if (group != nullptr && group[perm_[p]] != rows.group) rows.group = -1;
        std::copy_n(xc + static_cast<std::size_t>(p) * d, d, block + static_cast<std::size_t>(r) * d);
        rows.sq_top = std::max(rows.sq_top, sq_[p]);
        rows.at_top = std::max(rows.at_top, at[p]);
        rows.at_low = std::min(rows.at_low, at[p]);
    }
    rows.centre.assign(d, 0.0);
    rows.radius = ball_of(where, count, rows.centre.data());
    return rows;
}

bool EuclideanDistances::rows_near_block(const RowBlock& rows, const i32* where, int count,
                                         const std::vector<double>& at, double block_top, double gap, i32 cb,
                                         std::vector<int>& active) const {
    if (screened_apart(gap, rows.at_top + block_top, rows.sq_top, ball_sq_[cb])) return false;
    active.clear();
    // Row by row only when some row could be far enough: none is
    // farther from the column ball than gap + 2 radius.
    const double reach = gap + 2 * rows.radius * (1 + 1e-6), low = rows.at_low + block_top;
    if (low > 0 && !(reach > 0 && reach * reach >= (squared_ ? low : low * low) * (1 - 1e-6))) return true;
    for (int r = 0; r < count; ++r) {
        const i32 p = where[r];
        if (!screened_apart(point_gap(p, cb), at[p] + block_top, sq_[p], ball_sq_[cb])) active.push_back(r);
    }
    return !active.empty();
}

void EuclideanDistances::pairs_below_rows(const double* a, const i32* group, const char* columns,
                                          const std::vector<i32>& rows, int n_threads, Control& control,
                                          const PairVisitor& visit_pair) const {
    const i32 n = n_;
    const std::size_t d = static_cast<std::size_t>(d_);
    const std::vector<double> at = tile_thresholds(a);
    const std::vector<float> at32 = single_ ? floats_at_least(at) : std::vector<float>{};
    const std::vector<double> top = block_maxima(at);
    const std::vector<i32> groups = block_groups(group);
    const std::vector<char> block_has_columns = flagged_blocks(columns);  // empty: all
    std::vector<char> in(n, 0);
    for (i32 i : rows) in[i] = 1;
    // The rows by position, so that each task's rows are near each other.
    std::vector<i32> where;
    where.reserve(rows.size());
    for (i32 p = 0; p < n; ++p)
        if (in[perm_[p]]) where.push_back(p);
    const auto m = static_cast<i32>(where.size());
    const std::size_t tasks = (static_cast<std::size_t>(m) + kRowBlock - 1) / kRowBlock;
    auto run = [&](auto zero, std::size_t task) {
        using T = decltype(zero);
        const GemmFn<T> gemm = gemm_of<T>(gemm_);
        const T* xc;
        if constexpr (std::is_same_v<T, float>) {
            xc = xc32_.data();
        } else {
            xc = xc64_.data();
        }
        const i32 lo = static_cast<i32>(task) * kRowBlock, hi = std::min(m, lo + kRowBlock);
        const int nr = hi - lo;
        int k = static_cast<int>(d_);
        std::vector<T> block(static_cast<std::size_t>(nr) * d);  // the rows, contiguous
        const RowBlock rows_ball = gather_rows(xc, where.data() + lo, nr, at, group, block.data());
        const i32 rows_group = rows_ball.group;
        std::vector<T> tile(static_cast<std::size_t>(nr) * kRowBlock), near(static_cast<std::size_t>(nr) * d);
        std::vector<int> active;  // the rows of a tile not ruled out one by one
        const OneBlasThread one_thread(gemm_.threads);
        for (i32 c0 = 0; c0 < n; c0 += kRowBlock) {
            const i32 cblock = c0 / kRowBlock;
            if ((rows_group >= 0 && groups[cblock] == rows_group) ||
                (!block_has_columns.empty() && !block_has_columns[cblock]))
                continue;
            const double gap = ball_gap(rows_ball.centre.data(), rows_ball.radius, cblock);
            if (!rows_near_block(rows_ball, where.data() + lo, nr, at, top[cblock], gap, cblock, active)) continue;
            const bool all = active.empty() || static_cast<int>(active.size()) == nr;
            const T* rows_x = block.data();
            if (!all) {  // the remaining rows, contiguous
                for (std::size_t t = 0; t < active.size(); ++t)
                    std::copy_n(block.data() + static_cast<std::size_t>(active[t]) * d, d, near.data() + t * d);
                rows_x = near.data();
            }
            const int count = all ? nr : static_cast<int>(active.size());
            const i32 c1 = std::min(n, c0 + kRowBlock);
            const int cols = c1 - c0;
            int stride = cols;
            bool by_panels = false;  // the panel kernel where there is one (faster than a product this narrow)
            if constexpr (std::is_same_v<T, float>) {
                by_panels = panel_dots_ != nullptr;
                if (by_panels) {
                    stride = panel_stride(cols);
                    panel_tile(rows_x, count, panels_.from(c0), cols, tile.data(), stride);
                }
            }
            if (!by_panels)
                product_abt(gemm, count, cols, k, rows_x, k, xc + static_cast<std::size_t>(c0) * d, k, tile.data(),
                            cols);
            unsigned char hit[64];
            for (int t = 0; t < count; ++t) {
                const int r = all ? t : active[t];
                const i32 p = where[lo + r], i = perm_[p];
                const T* dots = tile.data() + static_cast<std::size_t>(t) * stride;
                for (i32 cb = c0; cb < c1; cb += 64) {
                    const i32 ce = std::min(c1, cb + 64);
                    if (!may_screen(p, cb, ce, c0, dots, at32)) continue;
                    screen(p, cb, ce, c0, dots, at, hit);
                    for (i32 c = cb; c < ce; ++c) {
                        if (!hit[c - cb]) continue;
                        const i32 j = perm_[c];
                        if (j != i && !(in[j] && j < i) && (columns == nullptr || columns[j])) visit_pair(i, j);
                    }
                }
            }
            control.check();
        }
    };
    for_each_tile_task(tasks, n_threads, run, control);
}

}  // namespace pairmetrics::matching
