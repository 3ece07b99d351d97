// Pricing the pairs inside top-level blossoms, walked in the blossom forest's preorder.

#include "matching_priced_solve.hpp"

namespace pairmetrics::matching::pricing {

// The pairs inside top-level blossoms, by preorder position q (of
// lam.order()): y, the rows of points and the radius rule. A pair i, j
// outside the lists, meeting first in blossom B, can only violate when
// y_i + y_j - zsum(B) > 2 max(r_i, r_j), i.e. when both
//   y_j > 2 r_i - y_i + zsum(B)   and   y_j - 2 r_j > zsum(B) - y_i;
// with the largest y and y - 2 r over a range of the preorder (sparse
// tables), whole runs of j are ruled out at once.
class InsideScan {
  public:
    InsideScan(const Distances& D, const BlossomResult& r, const DualForest& forest, const std::vector<i64>& radius,
               int n_threads, Control& control);
    // Whether row p (a point in a blossom, with a radius) may have a pair priced inside its top-level blossom.
    bool active(i32 p) const;
    // Bits (from c0, 64 per word) of the positions q in [max(c0, p + 1), c1) of p's blossom
    // whose pair with row p the radius rule cannot rule out; meet: the
    // smallest blossom holding p and the positions looked at (it climbs).
    std::int64_t candidates(i32 p, i32 c0, i32 c1, i32& meet, std::uint64_t* bits) const;
    // The same bits, a superset, for a tile [c0, c1) inside column block
    // `block` (positions [block, block + 1) * kInsideColumns): ruled out
    // with the z-sum of `meet` climbed to hold the whole tile, a lower bound
    // of Z for every pair of it (branch-free, 64 at a time).
    std::int64_t tile_candidates(i32 p, i32 c0, i32 c1, i32 block, i32& meet, std::uint64_t* bits) const;
    // Whether the rule rules out the pair of rows p and q, meeting first in a blossom of z-sum Z.
    bool ruled_out(i32 p, i32 q, i64 Z) const {
        const i64 T = y_pre_[p] + y_pre_[q] - Z;
        return T <= 2 * radius_[lam_.order()[p]] || y_pre_[p] + slack_pre_[q] - Z <= 0;
    }
    // out[t] = the distance of rows p and qs[t] (the provider's bits).
    void distances(i32 p, const i32* qs, int count, double* out) const;
    i32 vertex(i32 q) const { return lam_.order()[q]; }
    i64 y(i32 q) const { return y_pre_[q]; }
    const BlossomTree& tree() const { return lam_; }
    const DualForest& forest() const { return forest_; }
    i32 parent(i32 x) const { return r_.parent[x]; }

  private:
    const Distances& D_;
    const BlossomResult& r_;
    const DualForest& forest_;
    const BlossomTree& lam_;
    const std::vector<i64>& radius_;
    std::vector<i64> y_pre_, slack_pre_;
    std::unique_ptr<RangeMax> y_max_, slack_max_;
    // -y and -slack (the tile scan's form), and the largest y and slack of each column block.
    std::vector<i64> minus_y_, minus_slack_, block_y_max_, block_slack_max_;
    // Points: their rows in preorder (read in increasing order, not
    // scattered over the input), unless that copy is too large.
    std::vector<double> rows_pre_;
};

InsideScan::InsideScan(const Distances& D, const BlossomResult& r, const DualForest& forest,
                       const std::vector<i64>& radius, int n_threads, Control& control)
    : D_(D), r_(r), forest_(forest), lam_(forest.tree()), radius_(radius) {
    const i32 n = D.size();
    const i32 len = static_cast<i32>(lam_.order().size());
    y_pre_.resize(len);
    slack_pre_.resize(len);
    for (i32 q = 0; q < len; ++q) {
        const i32 v = lam_.order()[q];
        y_pre_[q] = r.y[v];
        // (no radius: every pair of v is in its list, priced there, or v is the ghost)
        slack_pre_[q] = v < n && radius[v] != kNoRadius ? r.y[v] - 2 * radius[v] : kNeverAbove;
    }
    y_max_ = std::make_unique<RangeMax>(y_pre_);
    slack_max_ = std::make_unique<RangeMax>(slack_pre_);
    minus_y_.resize(len);
    minus_slack_.resize(len);
    const std::size_t blocks = (static_cast<std::size_t>(len) + kInsideColumns - 1) / kInsideColumns;
    block_y_max_.assign(blocks, std::numeric_limits<i64>::min());
    block_slack_max_.assign(blocks, std::numeric_limits<i64>::min());
    for (i32 q = 0; q < len; ++q) {
        minus_y_[q] = -y_pre_[q];
        minus_slack_[q] = -slack_pre_[q];
        block_y_max_[q / kInsideColumns] = std::max(block_y_max_[q / kInsideColumns], y_pre_[q]);
        block_slack_max_[q / kInsideColumns] = std::max(block_slack_max_[q / kInsideColumns], slack_pre_[q]);
    }
    const std::int64_t dims = D.dims();
    if (D.point(0) == nullptr || dims <= 0 ||
        static_cast<std::size_t>(len) * static_cast<std::size_t>(dims) * sizeof(double) > kHeadBytes)
        return;
    rows_pre_.resize(static_cast<std::size_t>(len) * dims);
    parallel_for((static_cast<std::size_t>(len) + 4095) / 4096, n_threads,
                 [&](std::size_t b) {
                     for (std::size_t q = b * 4096; q < std::min<std::size_t>(len, (b + 1) * 4096); ++q)
                         if (lam_.order()[q] < n)  // (the ghost's row is never read)
                             std::copy_n(D.point(lam_.order()[q]), dims, rows_pre_.data() + q * dims);
                     control.check();
                 },
                 control);
}

bool InsideScan::active(i32 p) const {
    const i32 i = lam_.order()[p];
    return i < D_.size() && lam_.root(i) >= static_cast<i32>(r_.y.size()) && radius_[i] != kNoRadius;
}

std::int64_t InsideScan::candidates(i32 p, i32 c0, i32 c1, i32& meet, std::uint64_t* bits) const {
    const i32 i = lam_.order()[p];
    const i64 yi = r_.y[i], ri = radius_[i];
    const i32 end = std::min(c1, lam_.hi(lam_.root(i)));  // (rows of a task may lie in different blossoms)
    std::int64_t count = 0;
    for (i32 q = std::max(c0, p + 1); q < end;) {
        while (q >= lam_.hi(meet)) meet = r_.parent[meet];
        const i32 b_end = std::min(end, lam_.hi(meet));
        const i64 Z = forest_.zsum(meet);
        auto ruled_out = [&](i32 a, i32 b) {
            return yi + (*y_max_)(a, b) - Z <= 2 * ri || yi + (*slack_max_)(a, b) - Z <= 0;
        };
        if (ruled_out(q, q + 1)) {  // skip the longest run ruled out (doubling)
            i32 run = 1;
            while (q + 2 * run <= b_end && ruled_out(q, q + 2 * run)) run *= 2;
            q += run;
            continue;
        }
        bits[(q - c0) / 64] |= std::uint64_t{1} << ((q - c0) % 64);
        ++count;
        ++q;
    }
    return count;
}

std::int64_t InsideScan::tile_candidates(i32 p, i32 c0, i32 c1, i32 block, i32& meet, std::uint64_t* bits) const {
    static const LessThanBitsFn less_than = less_than_bits_for(SimdLevel::automatic);
    const i32 i = lam_.order()[p];
    const i32 from = std::max(c0, p + 1), end = std::min(c1, lam_.hi(lam_.root(i)));
    if (from >= end) return 0;
    // (end - 1 > p: a blossom, found in O(1), not by climbing a nesting that can be thousands deep)
    if (end - 1 >= lam_.hi(meet)) meet = lam_.lca(i, lam_.order()[end - 1]);
    const i64 yi = r_.y[i], ri = radius_[i], Z = forest_.zsum(meet);
    if (yi + block_y_max_[block] - Z <= 2 * ri || yi + block_slack_max_[block] - Z <= 0) return 0;
    // y_q > 2 r_i - y_i + Z and y_q - 2 r_q > Z - y_i, negated.
    const i64 y_bound = yi - Z - 2 * ri, slack_bound = yi - Z;
    std::int64_t count = 0;
    for (i32 q0 = from; q0 < end; q0 += 64) {
        const int len = std::min(64, end - q0);
        const std::uint64_t b =
            less_than(minus_y_.data() + q0, y_bound, len) & less_than(minus_slack_.data() + q0, slack_bound, len);
        if (b == 0) continue;
        count += static_cast<std::int64_t>(std::bitset<64>(b).count());
        const int at = q0 - c0, word = at / 64, shift = at % 64;
        bits[word] |= b << shift;
        if (shift != 0 && (b >> (64 - shift)) != 0) bits[word + 1] |= b >> (64 - shift);
    }
    return count;
}

void InsideScan::distances(i32 p, const i32* qs, int count, double* out) const {
    if (!rows_pre_.empty()) {
        distances_of_rows(D_, rows_pre_.data(), D_.dims(), p, qs, count, out);
        return;
    }
    i32 js[64];
    for (int t = 0; t < count; ++t) js[t] = lam_.order()[qs[t]];
    D_.distances(lam_.order()[p], js, count, out);
}

// Rows of the pricing inside blossoms: [p0, p1) of the preorder; `top` the
// top-level blossom holding them all when they are screened (else -1).
struct InsideTask {
    i32 p0, p1, top;
};

// Pairs inside one top-level blossom. Each row p walks the later positions
// of its top-level blossom, a tile of columns at a time; in large blossoms
// the tiles whose pairs the radius rule leaves many are screened first
// (float32 products against the blossom's own rows); only the pairs left
// get an exact distance, in batches. Each row keeps the same first
// violated pairs, in increasing position, whatever the screen rules out.
void PricedSolve::price_inside() {
    const BlossomTree& lam = forest_->tree();
    const InsideScan scan(D_, r_, *forest_, radius_, opt_.n_threads, control_);
    const i32 len = static_cast<i32>(lam.order().size());
    std::vector<InsideTask> tasks;
    std::vector<std::unique_ptr<Distances::ScreenSet>> sets(r_.parent.size());
    const std::vector<char> unchanged = unchanged_blossoms();
    for (i32 p = 0; p < len;) {
        const i32 t = lam.root(lam.order()[p]);
        if (unchanged[t]) {
            stats_.inside_skipped += lam.hi(t) - p;
            p = lam.hi(t);
            continue;
        }
        if (t >= N_ && lam.hi(t) - lam.lo(t) >= std::max(2, opt_.screen_inside_from)) sets[t] = inside_screen_set(t);
        i32 end = sets[t] ? lam.hi(t) : std::min(len, p + kInsideRows);
        for (i32 q = p + 1; q < end && !sets[t]; ++q)
            if (unchanged[lam.root(lam.order()[q])]) end = q;
        for (; p < end; p = std::min(end, p + kInsideRows))
            tasks.push_back(InsideTask{p, std::min(end, p + kInsideRows), sets[t] ? t : -1});
    }
    std::atomic<i64> computed{0}, screened{0};
    parallel_for(
        tasks.size(), opt_.n_threads,
        [&](std::size_t k) {
            const InsideTask& task = tasks[k];
            std::vector<Hit> local;
            const InsideCounts counts =
                price_inside_rows(scan, task, task.top < 0 ? nullptr : sets[task.top].get(), local);
            add_hits(local);
            computed += counts.computed;
            screened += counts.screened;
        },
        control_);
    stats_.extra_pairs += computed.load();
    stats_.inside_pairs += computed.load();
    stats_.inside_screened += screened.load();
}

// The screen set of top-level blossom t: its rows in preorder (the ghost's
// entry holds a point that is never priced), thresholds a with a_i + a_j >=
// the distance below which a pair meeting in t can violate. Pairs meeting
// in a smaller blossom B are screened with the sum lowered by what
// zsum(B) - zsum(t) takes away (see price_inside_rows).
std::unique_ptr<Distances::ScreenSet> PricedSolve::inside_screen_set(i32 t) const {
    const BlossomTree& lam = forest_->tree();
    const i32 lo = lam.lo(t), count = lam.hi(t) - lo;
    const i64 zt = forest_->zsum(t);
    std::vector<i32> points(count);
    i64 ymax = std::numeric_limits<i64>::min();
    for (i32 q = 0; q < count; ++q) {
        const i32 v = lam.order()[lo + q];
        points[q] = v < n_ ? v : 0;
        if (v < n_) ymax = std::max(ymax, r_.y[v]);
    }
    std::vector<double> a(count);
    for (i32 q = 0; q < count; ++q) {
        // A capped pair (weight wmax) can only be violated when y_i + y_j - zsum > 2 wmax: such points see every pair.
        const i64 yq = r_.y[lam.order()[lo + q]];
        a[q] = yq - zt + ymax > 2 * wmax_ ? std::numeric_limits<double>::infinity()
                                          : ws_.distance_above(static_cast<double>(2 * yq - zt + 1) / 4);
    }
    return D_.screen_set(points.data(), count, a.data());
}

// The rows of one task, a tile of columns at a time (see price_inside).
PricedSolve::InsideCounts PricedSolve::price_inside_rows(const InsideScan& scan, const InsideTask& task,
                                                         const Distances::ScreenSet* set,
                                                         std::vector<Hit>& local) const {
    const BlossomTree& lam = scan.tree();
    const i32 rows = task.p1 - task.p0;
    InsideCounts counts;
    // Per row: the blossom the walk has reached, where the tile started it, and the violated pairs found.
    std::vector<i32> meet(rows, -1), meet_at_tile(rows), found(rows, 0);
    i32 end = task.p0;
    for (i32 p = task.p0; p < task.p1; ++p)
        if (scan.active(p)) {
            meet[p - task.p0] = scan.parent(scan.vertex(p));
            end = std::max(end, lam.hi(lam.root(scan.vertex(p))));
        }
    constexpr int kWords = kInsideColumns / 64;
    std::vector<std::uint64_t> bits(static_cast<std::size_t>(rows) * kWords), screened;
    // Column tiles: the column blocks (aligned), from the first row's next position.
    for (i32 block = (task.p0 + 1) / kInsideColumns; block * kInsideColumns < end; ++block) {
        const i32 c0 = std::max(task.p0 + 1, block * kInsideColumns), c1 = std::min(end, (block + 1) * kInsideColumns);
        std::fill(bits.begin(), bits.end(), 0);
        std::int64_t candidates = 0;
        i32 first = rows, last = -1;  // rows with candidates
        for (i32 r = 0; r < rows; ++r) {
            meet_at_tile[r] = meet[r];
            if (meet[r] < 0 || static_cast<std::size_t>(found[r]) >= enough_) continue;
            std::uint64_t* row_bits = &bits[static_cast<std::size_t>(r) * kWords];
            const std::int64_t c = set != nullptr ? scan.tile_candidates(task.p0 + r, c0, c1, block, meet[r], row_bits)
                                                  : scan.candidates(task.p0 + r, c0, c1, meet[r], row_bits);
            if (c == 0) continue;
            candidates += c;
            first = std::min(first, r);
            last = r;
        }
        if (candidates == 0) continue;
        if (set != nullptr &&
            (opt_.screen_every_stretch || static_cast<double>(candidates) * D_.exact_cost() >
                                              static_cast<double>(last + 1 - first) * (c1 - c0) * D_.screen_cost()))
            counts.screened += screen_inside_tile(scan, task, *set, first, last + 1, c0, c1, bits.data(), screened);
        for (i32 r = 0; r < rows; ++r)
            counts.computed += price_inside_row(scan, task.p0 + r, c0, &bits[static_cast<std::size_t>(r) * kWords],
                                                meet_at_tile[r], found[r], local);
        control_.check();
    }
    return counts;
}

// ANDs the candidate bits of the tile's rows [r0, r1) with their screen; returns how many it ruled out.
std::int64_t PricedSolve::screen_inside_tile(const InsideScan& scan, const InsideTask& task,
                                             const Distances::ScreenSet& set, i32 r0, i32 r1, i32 c0, i32 c1,
                                             std::uint64_t* bits, std::vector<std::uint64_t>& screened) const {
    constexpr int kWords = kInsideColumns / 64;
    const BlossomTree& lam = scan.tree();
    const i32 lo = lam.lo(task.top);
    bits += static_cast<std::size_t>(r0) * kWords;
    // Every pair of the rows' tile meets in the smallest blossom holding their positions to c1 - 1, or in a smaller
    // one.
    const i32 p = task.p0 + r0;
    const i32 B = c1 - 1 > p ? lam.lca(scan.vertex(p), scan.vertex(c1 - 1)) : scan.parent(scan.vertex(p));
    const double lower =
        ws_.distance_below(static_cast<double>(scan.forest().zsum(B) - scan.forest().zsum(task.top)) / 2);
    screened.resize(static_cast<std::size_t>(r1 - r0) * kWords);
    D_.screen_block(set, task.p0 + r0 - lo, task.p0 + r1 - lo, set, c0 - lo, c1 - lo, kWords, screened.data(), lower);
    std::int64_t ruled_out = 0;
    for (std::size_t w = 0; w < screened.size(); ++w) {
        const std::uint64_t kept = bits[w] & screened[w];
        ruled_out += static_cast<std::int64_t>(std::bitset<64>(bits[w] & ~kept).count());
        bits[w] = kept;
    }
    return ruled_out;
}

// Prices row p's candidates of the tile from c0 (bits) in increasing
// position until `found` reaches enough; meet: the smallest blossom holding
// p and c0 or less (it climbs). Returns how many exact distances it took.
std::int64_t PricedSolve::price_inside_row(const InsideScan& scan, i32 p, i32 c0, const std::uint64_t* bits, i32& meet,
                                           i32& found, std::vector<Hit>& local) const {
    constexpr int kWords = kInsideColumns / 64;
    const BlossomTree& lam = scan.tree();
    const i32 i = scan.vertex(p);
    const i64 yi = scan.y(p);
    std::int64_t computed = 0;
    i32 qs[64];
    i64 T[64];
    double d[64];
    int count = 0;
    auto flush = [&]() {
        scan.distances(p, qs, count, d);
        computed += count;
        for (int t = 0; t < count && static_cast<std::size_t>(found) < enough_; ++t) {
            const i64 rc = 2 * ws_.to_int(d[t]) - T[t];
            if (rc < 0) {
                local.push_back(Hit{i, scan.vertex(qs[t]), rc});
                ++found;
            }
        }
        count = 0;
    };
    for (int w = 0; w < kWords && static_cast<std::size_t>(found) < enough_; ++w)
        for (std::uint64_t b = bits[w]; b != 0; b &= b - 1) {
            const i32 q = c0 + 64 * w + lowest_bit(b);
            while (q >= lam.hi(meet)) meet = scan.parent(meet);
            const i64 Z = scan.forest().zsum(meet);
            if (scan.ruled_out(p, q, Z)) continue;  // (tile candidates are a superset)
            qs[count] = q;
            T[count++] = yi + scan.y(q) - Z;
            if (count < 64) continue;
            flush();
            if (static_cast<std::size_t>(found) >= enough_) return computed;
        }
    if (count > 0 && static_cast<std::size_t>(found) < enough_) flush();
    return computed;
}

}  // namespace pairmetrics::matching::pricing
