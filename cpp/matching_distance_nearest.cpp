// The Euclidean provider's neighbour lists: float32 or float64 tiles of block pairs, skipped when the
// blocks' balls are farther apart than every list's current threshold.

#include "matching_distances_detail.hpp"

namespace pairmetrics::matching {

// Neighbour search over the upper triangle of tiles only: one tile of rows
// a x rows b serves the lists of both blocks. Rounds of disjoint block pairs
// (the circle method of round-robin tournaments) let threads work without
// sharing a list.
void EuclideanDistances::nearest(i32 store, i32* cand, double* bound, int n_threads, Control& control) const {
    if (single_) {
        nearest_impl<float>(xc32_.data(), gemm_.sgemm, store, cand, bound, n_threads, control);
        return;
    }
    // float64 tiles (few coordinates, so the product is cheap): whole rows
    // per task, so that only one block of lists is alive at a time.
    const i32 n = n_;
    const std::size_t tasks = (static_cast<std::size_t>(n) + kRowBlock - 1) / kRowBlock;
    std::vector<std::vector<Smallest<double>>> heaps(tasks);
    const double* sq = sq_.data();
    auto visit = [&](std::size_t task, i32 i, i32 c0, i32 c1, const auto* dots) {
        auto& hs = heaps[task];
        const i32 lo = static_cast<i32>(task) * kRowBlock;
        if (hs.empty()) hs.resize(kRowBlock);
        Smallest<double>& h = hs[i - lo];
        if (c0 == 0) h.reset(static_cast<std::size_t>(store) + 1);
        const double sqi = sq[i];
        double tau = h.tau;
        for (i32 c = c0; c < c1; ++c) {
            const double v = sqi + sq[c] - 2 * static_cast<double>(dots[c - c0]);
            if (v < tau && c != i) {
                h.push(v, c);
                tau = h.tau;
            }
        }
        if (c1 < n_) return;
        bound[perm_[i]] = list_and_bound(h.buf, store, i, cand);
        h.buf = {};
        if (i + 1 == std::min(n_, lo + kRowBlock)) hs = {};  // the task's last row
    };
    for_tiles(n_threads, control, [](i32) { return 0; }, [](i32, i32) { return false; }, visit);
}

template <class T>
double EuclideanDistances::list_and_bound(std::vector<std::pair<T, std::int32_t>>& buf, i32 store, i32 p,
                                          i32* cand) const {
    i32* list = cand + static_cast<std::size_t>(perm_[p]) * store;
    const double outside = take_list(buf, store, list);
    for (i32 t = 0; t < store; ++t) list[t] = perm_[list[t]];
    if (std::isinf(outside)) return outside;
    // Every point outside the list has a tile value >= outside, hence a
    // squared distance >= outside - err; then the error of operator().
    const double err = unit_err_ * (sq_[p] + sq_max_) + 1e-30;
    const double lower2 = std::max(outside - err, 0.0) / (tile_scale_ * tile_scale_);
    const double lower = squared_ ? lower2 : std::sqrt(lower2);
    return lower * (1 - 4 * relative_error());
}

namespace {

// Every pair of blocks a <= b once: the diagonal first, then rounds of disjoint pairs (the circle method), each
// round's pairs side by side on the threads; progress: the n points spread over the rounds.
template <class Visit>
void for_block_pairs(i32 blocks, i32 n, int n_threads, Control& control, Visit&& visit) {
    const i32 players = blocks + (blocks % 2);  // one idle block when odd
    const std::uint64_t per_round = static_cast<std::uint64_t>(n) / static_cast<std::uint64_t>(players);
    for (i32 round = -1; round < players - 1; ++round) {
        const std::size_t tasks = round < 0 ? static_cast<std::size_t>(blocks) : static_cast<std::size_t>(players / 2);
        parallel_for(
            tasks, n_threads,
            [&](std::size_t t) {
                i32 a, b;
                if (round < 0) {
                    a = b = static_cast<i32>(t);
                } else {
                    // Player players-1 stays, the others rotate.
                    const i32 ti = static_cast<i32>(t);
                    auto seat = [&](i32 s) { return s == players - 1 ? s : (s + round) % (players - 1); };
                    a = seat(ti);
                    b = seat(players - 1 - ti);
                    if (a > b) std::swap(a, b);
                }
                if (b >= blocks) return;  // paired with the idle block
                visit(a, b);
            },
            control);
        control.advance(per_round);
    }
}

}  // namespace

template <class T>
std::pair<i32, i32> EuclideanDistances::block_tile(const T* xc, GemmFn<T> gemm, i32 a, i32 b,
                                                   std::vector<T>& tile) const {
    constexpr i32 R = kRowBlock;
    const i32 lo_a = a * R, rows_a = std::min(n_, lo_a + R) - lo_a;
    const i32 lo_b = b * R, rows_b = std::min(n_, lo_b + R) - lo_b;
    int m = rows_b, rows = rows_a, k = static_cast<int>(d_);
    tile.resize(static_cast<std::size_t>(rows_a) * rows_b);
    product_abt(gemm, rows, m, k, xc + static_cast<std::size_t>(lo_a) * d_, k, xc + static_cast<std::size_t>(lo_b) * d_,
                k, tile.data(), m);
    return std::make_pair(rows_a, rows_b);
}

// No value of the tile of blocks a and b can enter a list: the balls are
// farther apart than every list's threshold of both; or every row of one
// block is farther from the other's ball than its own threshold and every
// threshold of the other block.
template <class Tau>
bool EuclideanDistances::tile_apart(i32 a, i32 b, const std::vector<double>& block_tau, Tau&& tau) const {
    if (gap_clears(block_gap(a, b), std::max(block_tau[a], block_tau[b]), ball_sq_[a], ball_sq_[b])) return true;
    auto one_sided = [&](i32 x, i32 y) {
        return rows_apart(x, y, [&](i32 p, double gap) {
            return gap_clears(gap, std::max(tau(p), block_tau[y]), sq_[p], ball_sq_[y]);
        });
    };
    return one_sided(a, b) || one_sided(b, a);
}

template <class T>
void EuclideanDistances::nearest_impl(const T* xc, GemmFn<T> gemm, i32 store, i32* cand, double* bound, int n_threads,
                                      Control& control) const {
    const i32 n = n_;
    constexpr i32 R = kRowBlock;
    const i32 blocks = (n + R - 1) / R;
    const std::size_t keep = static_cast<std::size_t>(store) + 1;
    std::vector<Smallest<T>> heaps(n);
    for (auto& h : heaps) h.reset(keep, 2);
    std::vector<T> sqT(n);
    for (i32 i = 0; i < n; ++i) sqT[i] = static_cast<T>(sq_[i]);
    static_assert(std::is_same_v<T, float>, "the neighbour search scans float32 tiles");
    // The largest threshold of each block's lists (thresholds only fall: a
    // block's entry is renewed after each tile of it, by the thread that owns it).
    std::vector<double> block_tau(blocks, std::numeric_limits<double>::infinity());
    auto renew_block_tau = [&](i32 a) {
        T tau = 0;
        for (i32 i = a * R; i < std::min(n, a * R + R); ++i) tau = std::max(tau, heaps[i].tau);
        block_tau[a] = static_cast<double>(tau);
    };
    auto apart = [&](i32 a, i32 b) {
        return tile_apart(a, b, block_tau, [&](i32 p) { return static_cast<double>(heaps[p].tau); });
    };
    // A value v of the pair (row i, column c of block b, point j): into i's
    // list and j's when below their thresholds (tau_c: j's, kept current).
    auto take = [&](Smallest<T>& h, i32 i, i32 j, T v, T& tau_c) {
        if (v < h.tau && j != i) h.push(v, j);
        if (v < tau_c) {
            heaps[j].push(v, i);
            tau_c = heaps[j].tau;
        }
    };
    // The thresholds of block b's lists as columns of a tile against block
    // a (a == b: -inf, since on the diagonal the rows see every pair).
    auto column_thresholds = [&](i32 a, i32 b, i32 rows_b, std::vector<T>& tau_col) {
        tau_col.resize(rows_b);
        for (i32 c = 0; c < rows_b; ++c)
            tau_col[c] = a != b ? heaps[b * R + c].tau : -std::numeric_limits<T>::infinity();
    };
    // One tile: rows of block a against rows of block b (a == b: within a
    // block), in one pass over the tile that serves the lists of both blocks.
    // Almost every value is above both lists' thresholds: a branch-free loop
    // (vectorised) flags the chunks holding a candidate, and only those are
    // looked at one by one.
    auto work = [&](i32 a, i32 b, std::vector<T>& tile, std::vector<T>& tau_col) {
        if (a != b && apart(a, b)) return;
        const auto [rows_a, rows_b] = block_tile(xc, gemm, a, b, tile);
        const i32 lo_a = a * R, lo_b = b * R;
        column_thresholds(a, b, rows_b, tau_col);
        const T* sqb = sqT.data() + lo_b;
        for (i32 r = 0; r < rows_a; ++r) {
            const i32 i = lo_a + r;
            Smallest<T>& h = heaps[i];
            const T sqi = sqT[i];
            T* row = tile.data() + static_cast<std::size_t>(r) * rows_b;
            for (i32 cb = 0; cb < rows_b; cb += kFlagChunk) {
                const i32 ce = std::min(rows_b, cb + kFlagChunk);
                // Only the flagged columns (thresholds only fall since the scan).
                for (std::uint64_t bits = flag_below_(row, sqb, sqi, h.tau, tau_col.data(), cb, ce); bits != 0;
                     bits &= bits - 1) {
                    const i32 c = cb + static_cast<i32>(lowest_bit(bits));
                    take(h, i, lo_b + c, row[c], tau_col[c]);
                }
            }
        }
    };
    // The same with the fused kernel, one panel of block b at a time against
    // all rows of block a (the thresholds read afresh for every panel): no
    // tile is written, only the pairs below a threshold come out.
    auto work_fused = [&](i32 a, i32 b, std::vector<T>& tau_row, std::vector<T>& tau_col,
                          std::vector<BelowCandidate>& found) {
        if (a != b && apart(a, b)) return;
        const i32 lo_a = a * R, rows_a = std::min(n, lo_a + R) - lo_a;
        const i32 lo_b = b * R, rows_b = std::min(n, lo_b + R) - lo_b;
        column_thresholds(a, b, rows_b, tau_col);
        tau_row.resize(rows_a);
        found.resize(static_cast<std::size_t>(rows_a) * kPanelColumns);
        const T* rows_x = xc + static_cast<std::size_t>(lo_a) * d_;
        for (i32 cb = 0; cb < rows_b; cb += kPanelColumns) {
            for (i32 r = 0; r < rows_a; ++r) tau_row[r] = heaps[lo_a + r].tau;
            const i32 count = below_scan_(rows_x, panels_.from(lo_a), rows_a, d_, panels_.from(lo_b + cb),
                                          std::min(kPanelColumns, rows_b - cb), sqT.data() + lo_a,
                                          sqT.data() + lo_b + cb, tau_row.data(), tau_col.data() + cb, found.data());
            for (i32 t = 0; t < count; ++t) {
                const BelowCandidate& f = found[t];
                const i32 c = cb + f.col;
                take(heaps[lo_a + f.row], lo_a + f.row, lo_b + c, f.value, tau_col[c]);
            }
        }
    };
    for_block_pairs(blocks, n, n_threads, control, [&](i32 a, i32 b) {
        thread_local std::vector<T> tile, tau_row, tau_col;
        thread_local std::vector<BelowCandidate> found;
        if (below_scan_ != nullptr) {
            work_fused(a, b, tau_row, tau_col, found);
        } else {
            const OneBlasThread one_thread(gemm_.threads);  // our threads are the parallelism
            work(a, b, tile, tau_col);
        }
        renew_block_tau(a);
        renew_block_tau(b);
        control.check();
    });
    // The lists, and a lower bound on the distance to every point outside.
    const std::size_t chunks = (static_cast<std::size_t>(n) + R - 1) / R;
    parallel_for(
        chunks, n_threads,
        [&](std::size_t t) {
            const i32 lo = static_cast<i32>(t) * R, hi = std::min(n, lo + R);
            for (i32 p = lo; p < hi; ++p) {
                bound[perm_[p]] = list_and_bound(heaps[p].buf, store, p, cand);
                heaps[p].buf = {};
            }
        },
        control);
}

}  // namespace pairmetrics::matching
