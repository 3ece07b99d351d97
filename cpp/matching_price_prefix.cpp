// Pricing by the neighbour lists, then by the prefix of the points in decreasing y (pairs of different
// top-level nodes).

#include "matching_priced_solve.hpp"

namespace pairmetrics::matching::pricing {

// The neighbour lists of rows [lo, hi): their violated pairs, from each distance's float lower bound first.
void PricedSolve::price_lists(i32 lo, i32 hi) {
    const Lists& L = L_;
    for (i32 i = lo; i < hi; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * store_;
        auto& f = found_[i];
        f.clear();
        // The duals of the list are scattered over y: fetched ahead.
        constexpr i32 kAhead = 16;
        for (i32 t = 0; t < std::min(kAhead, store_); ++t) prefetch_read(&r_.y[L.j[o + t]]);
        for (i32 t = 0; t < store_; ++t) {
            if (t + kAhead < store_) prefetch_read(&r_.y[L.j[o + t + kAhead]]);
            const i32 j = L.j[o + t];
            const i64 rc = violation(i, j, ws_.to_int(L.d_below[o + t]));  // (to_int does not decrease)
            if (rc < 0) f.emplace_back(rc, j);
        }
    }
}

// One word of a row's prefix candidates: their exact weights (from the head's copy when there is one) and
// violations, kept for both ends; returns the distances computed.
int PricedSolve::price_prefix_word(const PrefixWord& e, i32 s0, const PrefixHead& head, std::vector<Hit>& local) {
    const i32 i = e.i;
    auto& f = found_[i];
    if (f.size() >= enough_) return 0;
    i32 js[64], at[64];
    i64 ws[64];
    int count = 0;
    for (std::uint64_t bits = e.bits; bits != 0; bits &= bits - 1) {
        const i32 t = s0 + 64 * e.w + lowest_bit(bits);
        at[count] = t;
        js[count++] = by_y_[t];
    }
    if (count == 0) return 0;
    if (head.rows.empty()) {
        weights(i, js, count, ws);
    } else {
        const double* xi = D_.point(i);
        for (int t = 0; t < count; ++t) ws[t] = ws_.to_int(D_.distance_between(xi, head.row(at[t])));
    }
    const i64 yi = r_.y[i];
    for (int t = 0; t < count && f.size() < enough_; ++t) {
        const i64 rc = 2 * ws[t] - yi - y_by_[at[t]];
        if (rc < 0) {
            f.emplace_back(rc, js[t]);
            local.push_back(Hit{i, js[t], rc});
        }
    }
    return count;
}

void PricedSolve::price_lists_and_prefix(bool lists_only, bool prefix) {
    const CompleteOptions& opt = opt_;
    Control& control = control_;
    const i32 n = n_;
    const std::size_t blocks = blocks_;
    const std::vector<i64>& c = c_;
    const std::vector<i64>& y_by = y_by_;
    auto& block_extra = block_extra_;
    const PrefixHead head = prefix_head(lists_only || !prefix);
    const i32 stretch = head.rows.empty() ? Distances::kScreenColumns : head.stretch;
    // The head's float32 copies for the screen (when the provider has one).
    const std::vector<double> screen_a = head.rows.empty() ? std::vector<double>{} : screen_thresholds();
    const std::unique_ptr<Distances::ScreenSet> head_set =
        head.rows.empty() ? nullptr : screen_set_of(by_y_.data(), head.length(), screen_a);
    std::atomic<i64> ruled_out{0};      // pairs of the prefix the screen ruled out
    std::atomic<i64> clean_skipped{0};  // entries between clean rows (see prefix_candidates)
    parallel_for(
        blocks, opt.n_threads,
        [&](std::size_t b) {
            i64 extra = 0;
            std::vector<Hit> local;  // violated pairs found for their other end
            const i32 lo = static_cast<i32>(b) * 256, hi = std::min(n, lo + 256);
            price_lists(lo, hi);
            if (lists_only || !prefix) {
                block_extra[b] = 0;
                control.check();
                return;
            }
            // Enough violated pairs for this round: stop looking (with
            // many of them, as after a start on a poor graph, the scan
            // would be quadratic; the pairs left are priced again).
            // The condition is symmetric, so each pair is computed from
            // its smaller end only (a round that stops early finds a
            // violation, so the last round sees every pair).
            // The prefix y_j > c_i (y_by decreases), 64 entries at a
            // time: the bits of c_j < y_i, then those pairs in order.
            // Every row scans the head of the same order: the rows of the
            // block take it a stretch at a time, from the contiguous copy.
            i32 len[256];
            i32 longest = 0;
            for (i32 i = lo; i < hi; ++i) {
                const i64 ci = c[i];
                len[i - lo] = static_cast<i32>(
                    std::partition_point(y_by.begin(), y_by.end(), [ci](i64 y) { return y > ci; }) - y_by.begin());
                longest = std::max(longest, len[i - lo]);
            }
            // Rows by decreasing prefix length: those reaching a stretch come first (the screen's rows).
            std::vector<i32> by_len(hi - lo);
            for (i32 i = lo; i < hi; ++i) by_len[i - lo] = i;
            std::stable_sort(by_len.begin(), by_len.end(), [&](i32 u, i32 v) { return len[u - lo] > len[v - lo]; });
            const std::unique_ptr<Distances::ScreenSet> row_set =
                head_set ? screen_set_of(by_len.data(), hi - lo, screen_a) : nullptr;
            std::vector<PrefixWord> cand;  // only the words holding a candidate
            std::vector<std::uint64_t> screened;
            std::vector<i32> rank_of(hi - lo);  // a row's place in by_len (the screen's rows)
            for (i32 q = 0; q < hi - lo; ++q) rank_of[by_len[q] - lo] = q;
            std::int64_t skipped = 0;
            for (i32 s0 = 0; s0 < longest; s0 += stretch) {
                const i32 s_end = std::min(longest, s0 + stretch);
                const int words = (s_end - s0 + 63) / 64;
                cand.clear();
                const std::int64_t candidates = prefix_candidates(lo, hi, len, s0, s_end, cand, skipped);
                i32 reach = 0;  // rows of the stretch
                while (reach < hi - lo && len[by_len[reach] - lo] > s0) ++reach;
                if (row_set &&
                    (opt_.screen_every_stretch || static_cast<double>(candidates) * D_.exact_cost() >
                                                      static_cast<double>(reach) * (s_end - s0) * D_.screen_cost())) {
                    screened.resize(static_cast<std::size_t>(reach) * words);
                    D_.screen_block(*row_set, 0, reach, *head_set, s0, s_end, words, screened.data(), 0.0);
                    std::int64_t kept = 0;
                    for (PrefixWord& e : cand) {
                        e.bits &= screened[static_cast<std::size_t>(rank_of[e.i - lo]) * words + e.w];
                        kept += static_cast<std::int64_t>(std::bitset<64>(e.bits).count());
                    }
                    ruled_out.fetch_add(candidates - kept, std::memory_order_relaxed);
                }
                for (const PrefixWord& e : cand) {
                    const int count = price_prefix_word(e, s0, head, local);
                    if (((extra + count) >> 16) != (extra >> 16)) control.check();
                    extra += count;
                }
                control.check();
            }
            add_hits(local);
            clean_skipped.fetch_add(skipped, std::memory_order_relaxed);
            block_extra[b] = extra;
            control.check();
        },
        control);
    stats_.prefix_screened += ruled_out.load();
    stats_.prefix_skipped += clean_skipped.load();
}

// The pairs of rows [lo, hi) (prefix lengths len) with the stretch [s0, s1)
// of the order by y that the prefix scan prices: y_j > c_i (inside the
// prefix), y_i > c_j, j > i (each pair from one end) and in different
// top-level nodes; appended to `out` as the words (64 entries each) that
// hold one, row by row (most words of a long prefix hold none). Rows that found enough
// violated pairs are left out, and so are the pairs whose duals' rises add
// up to at most 0 (entries of the prefix left out so, whatever j: `skipped`).
// Returns how many.
std::int64_t PricedSolve::prefix_candidates(i32 lo, i32 hi, const i32* len, i32 s0, i32 s1,
                                            std::vector<PrefixWord>& out, std::int64_t& skipped) const {
    static const LessThanBitsFn less_than = less_than_bits_for(SimdLevel::automatic);
    std::int64_t total = 0;
    for (i32 i = lo; i < hi; ++i) {
        if (found_[i].size() >= enough_) continue;
        const i64 rise = rise_[i];
        const i64 yi = r_.y[i];
        const i32 end = std::min(len[i - lo], s1);
        const i32 last_chunk = (end + 63) / 64;
        auto none_below = [&](i32 a, i32 b) { return -(*chunk_low_c_)(a, b) >= yi; };  // chunks [a, b)
        for (i32 t0 = s0; t0 < end; t0 += 64) {
            const i32 chunk = t0 / 64;
            if (none_below(chunk, chunk + 1)) {  // skip the longest run without a candidate (doubling)
                i32 run = 1;
                while (chunk + 2 * run <= last_chunk && none_below(chunk, chunk + 2 * run)) run *= 2;
                t0 += 64 * (run - 1);
                continue;
            }
            std::uint64_t keep = 0, below = less_than(c_by_.data() + t0, yi, std::min(64, end - t0));
            if (rise != kDirty) {  // rise_j > -rise_i, or both split
                const std::uint64_t need = less_than(minus_rise_by_.data() + t0, rise, std::min(64, end - t0)) |
                                           (split_[i] ? split_by_y_[chunk] : 0);
                skipped += static_cast<std::int64_t>(std::bitset<64>(below & ~need).count());
                below &= need;
            }
            const i32 root_i = forest_->tree().root(i);
            for (std::uint64_t bits = below; bits != 0; bits &= bits - 1) {
                const int at = lowest_bit(bits);
                if (by_y_[t0 + at] > i && root_by_[t0 + at] != root_i) keep |= std::uint64_t{1} << at;
            }
            if (keep == 0) continue;
            out.push_back(PrefixWord{i, (t0 - s0) / 64, keep});
            total += static_cast<std::int64_t>(std::bitset<64>(keep).count());
        }
    }
    return total;
}

PrefixHead PricedSolve::prefix_head(bool none) const {
    PrefixHead head;
    head.dims = D_.dims();
    if (none || n_ == 0 || D_.point(0) == nullptr || head.dims <= 0) return head;
    const i64 lowest_c = *std::min_element(c_.begin(), c_.end());
    const auto len = static_cast<std::size_t>(
        std::partition_point(y_by_.begin(), y_by_.end(), [lowest_c](i64 y) { return y > lowest_c; }) - y_by_.begin());
    const std::size_t row_bytes = static_cast<std::size_t>(head.dims) * sizeof(double);
    if (len == 0 || len * row_bytes > kHeadBytes) return head;
    head.stretch = static_cast<i32>(std::clamp<std::size_t>(kStretchBytes / row_bytes / 64 * 64, 64, 4096));
    head.rows.resize(len * static_cast<std::size_t>(head.dims));
    parallel_for((len + 4095) / 4096, opt_.n_threads,
                 [&](std::size_t b) {
                     for (std::size_t t = b * 4096; t < std::min(len, (b + 1) * 4096); ++t)
                         std::copy_n(D_.point(by_y_[t]), head.dims, head.rows.data() + t * head.dims);
                     control_.check();
                 },
                 control_);
    return head;
}

void PricedSolve::weights(i32 a, const i32* bs, int count, i64* out) const {
    double d[64];
    D_.distances(a, bs, count, d);
    for (int t = 0; t < count; ++t) out[t] = ws_.to_int(d[t]);
}

void PricedSolve::add_hits(std::vector<Hit>& local) {
    if (local.empty()) return;
    std::lock_guard<std::mutex> g(hits_lock_);
    hits_.insert(hits_.end(), local.begin(), local.end());
    local.clear();
}

}  // namespace pairmetrics::matching::pricing
