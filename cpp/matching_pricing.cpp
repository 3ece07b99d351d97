// The complete graph on a distance provider, solved exactly by pricing: the
// solve starts on each point's nearest neighbours, prices every other pair
// against the duals and re-solves warm with the violated ones; passes at
// finer scales follow while the cost is far below the largest distance.

#include "matching_priced_solve.hpp"

namespace pairmetrics::matching {

namespace pricing {

Lists neighbour_lists(const Distances& D, i32 store, int n_threads, Control& control) {
    const i32 n = D.size();
    Lists L;
    L.store = store;
    L.j.resize(static_cast<std::size_t>(n) * store);
    L.d_below.resize(L.j.size());
    L.bound.assign(n, std::numeric_limits<double>::infinity());
    D.nearest(store, L.j.data(), L.bound.data(), n_threads, control);
    const std::size_t blocks = (static_cast<std::size_t>(n) + 255) / 256;
    parallel_for(
        blocks, n_threads,
        [&](std::size_t b) {
            std::vector<std::pair<double, i32>> row(store);
            std::vector<double> d(store);
            const i32 lo = static_cast<i32>(b) * 256, hi = std::min(n, lo + 256);
            for (i32 i = lo; i < hi; ++i) {
                const std::size_t o = static_cast<std::size_t>(i) * store;
                for (i32 t = 0; t < store; t += 64) D.distances(i, &L.j[o + t], std::min(64, store - t), &d[t]);
                for (i32 t = 0; t < store; ++t) row[t] = {d[t], L.j[o + t]};
                std::sort(row.begin(), row.end());
                for (i32 t = 0; t < store; ++t) {
                    L.d_below[o + t] = float_below(row[t].first);
                    L.j[o + t] = row[t].second;
                }
            }
            control.check();
        },
        control);
    return L;
}

PricedSolve::PricedSolve(const Distances& D, const Lists& L, double cap, const CompleteOptions& opt, Control& control,
                         CompleteStats& stats, const PassState* from)
    : D_(D),
      L_(L),
      opt_(opt),
      control_(control),
      stats_(stats),
      cap_(cap),
      n_(D.size()),
      N_(n_ + (opt.ghost ? 1 : 0)),
      wmax_(max_weight(N_)),
      ws_(cap, wmax_),
      store_(L.store),
      kk_(std::max<i32>(1, std::min<i32>(opt.k, L.store))),
      blocks_((static_cast<std::size_t>(n_) + 255) / 256),
      enough_(4 * static_cast<std::size_t>(kk_)),
      radius_(n_, kNoRadius),
      block_extra_(blocks_),
      dirty_(n_, 0),
      skipped_(n_, 0),
      dirty_snap_(n_, -1) {
    for (i32 i = 0; i < n_; ++i)
        if (!std::isinf(L.bound[i])) radius_[i] = ws_.floor_int(L.bound[i]);
    start_graph(from);
}

// Start graph: k nearest per point, a Hamiltonian path (so that a perfect
// matching surely exists) and the ghost's star; or an earlier pass's final
// graph and duals (in this pass's units, kept in range: the solver lowers
// whatever they violate).
void PricedSolve::start_graph(const PassState* from) {
    std::vector<std::uint64_t> keys;
    if (from) {
        keys = from->keys;
        const double f = from->cap / cap_, top = 2.0 * static_cast<double>(wmax_);
        deflated_.resize(N_);
        for (i32 v = 0; v < N_; ++v) {
            const double yv = from->y[v] == 0 ? 0.0 : from->y[v] * f;  // f may be inf after a huge drop of the cap
            deflated_[v] = static_cast<i64>(std::floor(std::clamp(yv, -top, top)));
        }
        previous_.mate = from->mate;
        warm_ = true;
    } else {
        for (i32 i = 0; i < n_; ++i) {
            for (i32 t = 0; t < kk_; ++t) keys.push_back(pair_key(i, L_.j[static_cast<std::size_t>(i) * store_ + t]));
            if (i + 1 < n_) keys.push_back(pair_key(i, i + 1));
            if (opt_.ghost) keys.push_back(pair_key(i, n_));
        }
    }
    add_keys(keys);
}

BlossomResult PricedSolve::run(PassState* out) {
    for (int rounds = 1;; ++rounds) {
        // Each round adds new pairs of a finite set and typically a handful of
        // rounds suffice; an endless loop could only come from an asymmetric D.
        if (rounds > 1000) throw std::logic_error("matching: pricing does not converge (is D symmetric?)");
        auto t0 = std::chrono::steady_clock::now();
        BlossomResult r = rounds == 1 ? solve_afresh() : solve_again(rounds > 2);
        stats_.seconds_solve += seconds_since(t0);
        if (rounds == 1 && !warm_) stats_.seconds_first_solve += seconds_since(t0);
        t0 = std::chrono::steady_clock::now();
        if (!r.perfect) throw std::logic_error("matching: start graph without a perfect matching (internal error)");
        if (opt_.report)
            control_.report(static_cast<std::uint64_t>(2 * n_ - n_ / (rounds + 1)), static_cast<std::uint64_t>(2 * n_));
        begin_round(std::move(r));
        price_round();
        std::vector<std::uint64_t> keys = violated_keys();
        for (std::size_t b = 0; b < blocks_; ++b) {
            stats_.extra_pairs += block_extra_[b];
            stats_.prefix_pairs += block_extra_[b];
        }
        std::fill(block_extra_.begin(), block_extra_.end(), 0);
        stats_.seconds_pricing += seconds_since(t0);
        if (keys.empty()) {
            solver_.reset();
            stats_.rounds += rounds;
            stats_.edges = static_cast<std::int64_t>(eu_.size());
            stats_.last = r_.stats;
            if (out) keep_pass(*out);
            return std::move(r_);
        }
        t0 = std::chrono::steady_clock::now();
        add_keys(keys);
        stats_.seconds_pricing += seconds_since(t0);
    }
}

BlossomResult PricedSolve::solve_afresh() {
    const WarmStart warm{deflated_.data(), previous_.mate.data()};
    solver_ = std::make_unique<detail::Solver<i64>>(N_, eu_.size(), eu_.data(), ev_.data(), w_.data(), control_);
    BlossomResult r = solver_->run(warm_ ? &warm : nullptr);
    inside_pairs_ = solver_->inside_pairs();
    deflated_ = {};
    previous_ = {};
    return r;
}

// The last round's solver, resumed with the new edges. Its blossoms may merge
// into one far larger (a tree that met several clusters), both optimal but
// the larger costs far more pricing inside blossoms (pairs ~ size^2, duals
// inflated across clusters). When the blossoms grew fourfold and hold more
// than a quarter of all pairs, the round is solved afresh from the last duals
// with the blossoms folded in (as every round is without opt_.resume); smaller
// merged blossoms (Gaussian data) price cheaply, and solving afresh costs
// about a first solve. Never after the first pricing of a pass: it adds the
// violated pairs of the neighbour lists at once, which reshapes the blossoms
// however the round is solved.
BlossomResult PricedSolve::solve_again(bool may_rebuild) {
    if (opt_.resume) {
        solver_->add_edges(eu_.size(), eu_.data(), ev_.data(), w_.data());
        BlossomResult r = solver_->resume();
        stats_.resume_freed += r.stats.freed;
        stats_.resume_opened += r.stats.opened;
        const double pairs = solver_->inside_pairs();
        const double all = static_cast<double>(N_) * N_;
        if (!may_rebuild || pairs <= 4 * inside_pairs_ + 64.0 * N_ || pairs <= all / 4) {
            ++stats_.resumes;
            inside_pairs_ = pairs;
            return r;
        }
        ++stats_.rebuilds;
    }
    deflated_.resize(N_);
    for (i32 v = 0; v < N_; ++v) deflated_[v] = r_.y[v] - forest_->enclosing_z(v) / 2;
    previous_.mate = r_.mate;
    warm_ = true;
    return solve_afresh();
}

void PricedSolve::begin_round(BlossomResult r) {
    r_ = std::move(r);
    forest_ = std::make_unique<DualForest>(r_);
    by_y_.resize(n_);
    c_.resize(n_);
    for (i32 i = 0; i < n_; ++i) {
        by_y_[i] = i;
        c_[i] = radius_[i] == kNoRadius ? kNoRadius : 2 * radius_[i] - r_.y[i];
    }
    const std::vector<i64>& y = r_.y;
    std::sort(by_y_.begin(), by_y_.end(), [&y](i32 a, i32 b) { return y[a] > y[b] || (y[a] == y[b] && a < b); });
    y_by_.resize(n_);
    c_by_.resize(n_);
    root_by_.resize(n_);
    for (i32 t = 0; t < n_; ++t) {
        y_by_[t] = y[by_y_[t]];
        c_by_[t] = c_[by_y_[t]];
        root_by_[t] = forest_->tree().root(by_y_[t]);
    }
    std::vector<i64> low((static_cast<std::size_t>(n_) + 63) / 64, std::numeric_limits<i64>::min());
    for (i32 t = 0; t < n_; ++t) low[t / 64] = std::max(low[t / 64], -c_by_[t]);
    chunk_low_c_ = std::make_unique<RangeMax>(low);
    found_.assign(n_, {});
    hits_.clear();
    mark_dirty_rows();
    mark_repriced_rows();
}

// Incremental pricing of the pairs across top-level nodes (Z = 0). After a
// round that priced every pair (the prefix or the screen ran), the points
// that are an end of no violated pair found are settled: y_ref = y, and
// their top-level node then. Invariant (I): every pair outside the graph
// between two settled points has 2 w >= y_ref_i + y_ref_j - Z_ref (Z_ref
// its blossom duals then). Each point's rise: y_i - y_ref_i, or kDirty when
// it is not settled; it is split when its top-level node then was a blossom
// whose vertex set is no top-level node now.
//  - A pair across two top-level nodes now, not both split, was not inside
//    one top-level blossom then (such a blossom is either a top-level node
//    now, which would hold both, or split), so Z_ref = 0 and with rise_i +
//    rise_j <= 0: 2 w >= y_ref_i + y_ref_j >= y_i + y_j. The prefix prices
//    only the pairs whose rises add up above 0 and, for split rows, those
//    with split columns (each still from its smaller end). The pairs priced
//    include every violated one, so the same are found, in the same order.
//    Pairs in the graph satisfy the duals by the solve.
//  - Pairs inside one top-level node now: price_inside prices them all but
//    in blossoms unchanged since then (see unchanged_blossoms).
//  - (I) holds after the next complete round for the duals and blossoms of
//    then, for every pair between two points settled then: it was priced
//    and found not violated (a violated pair unsettles both ends; a row
//    that stopped at enough_ found some), or left out by one of the rules
//    above, which show it not violated.
//  - Rounds that skip the prefix (violations in the lists) keep the
//    reference; a new pass (new weights) starts without one.
void PricedSolve::mark_repriced_rows() {
    const BlossomTree& lam = forest_->tree();
    rise_.assign(n_, kDirty);
    split_.assign(n_, 0);
    if (have_reference_ && !opt_.full_pricing) {
        // Per top-level node: the reference node of its vertices (-1 when they differ), and how many they are.
        std::vector<std::pair<i32, i32>> then(r_.parent.size(), {-2, 0});
        for (i32 v = 0; v < N_; ++v) {
            auto& [ref, count] = then[lam.root(v)];
            ref = ref == -2 || ref == top_ref_[v] ? top_ref_[v] : -1;
            ++count;
        }
        for (i32 i = 0; i < n_; ++i) {
            if (!settled_[i]) continue;
            const auto [ref, count] = then[lam.root(i)];
            rise_[i] = r_.y[i] - y_ref_[i];
            split_[i] = top_ref_[i] >= N_ && !(ref >= 0 && top_ref_size_[ref] == count);
        }
    }
    minus_rise_by_.resize(n_);
    split_by_y_.assign((static_cast<std::size_t>(n_) + 63) / 64, 0);
    for (i32 t = 0; t < n_; ++t) {
        minus_rise_by_[t] = -rise_[by_y_[t]];
        if (split_[by_y_[t]]) split_by_y_[t / 64] |= std::uint64_t{1} << (t % 64);
    }
}

// After a round that priced every pair across top-level nodes: the new reference (see mark_repriced_rows).
void PricedSolve::settle_rows() {
    if (opt_.full_pricing) return;
    const BlossomTree& lam = forest_->tree();
    settled_.assign(n_, 1);
    for (i32 i = 0; i < n_; ++i)
        if (!found_[i].empty()) settled_[i] = 0;
    for (const Hit& h : hits_) {
        if (h.i < n_) settled_[h.i] = 0;
        if (h.j < n_) settled_[h.j] = 0;
    }
    y_ref_.assign(r_.y.begin(), r_.y.begin() + n_);
    top_ref_.assign(lam.roots().begin(), lam.roots().begin() + N_);
    top_ref_size_.assign(r_.parent.size(), 1);
    for (i32 b = N_; b < static_cast<i32>(r_.parent.size()); ++b) top_ref_size_[b] = lam.hi(b) - lam.lo(b);
    order_ref_ = lam.order();
    lo_ref_.resize(r_.parent.size());
    for (std::size_t x = 0; x < r_.parent.size(); ++x) lo_ref_[x] = lam.lo(static_cast<i32>(x));
    spans_ref_ = blossom_spans();
    spans_ref_at_.assign(r_.parent.size() + 1, -1);
    for (std::size_t k = spans_ref_.size(); k-- > 0;) spans_ref_at_[spans_ref_[k].top] = static_cast<i32>(k);
    have_reference_ = true;
}

// Every blossom (with its z), grouped by top-level node, by interval.
std::vector<PricedSolve::Span> PricedSolve::blossom_spans() const {
    const BlossomTree& lam = forest_->tree();
    std::vector<Span> spans;
    for (i32 b = N_; b < static_cast<i32>(r_.parent.size()); ++b)
        if (lam.hi(b) > lam.lo(b)) {
            const i32 top = lam.root(b), lo = lam.lo(top);
            spans.push_back(Span{top, lam.lo(b) - lo, lam.hi(b) - lo, r_.z[b - N_]});
        }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.top < b.top || (a.top == b.top && (a.lo < b.lo || (a.lo == b.lo && a.hi < b.hi)));
    });
    return spans;
}

// Per node: whether it is a top-level blossom none of whose pairs can be
// violated (none need pricing). Its vertices are settled, none's dual rose,
// they are the vertex set of a top-level blossom then and the blossoms
// inside are those of then, with the same z, so each pair's Z is Z_ref: by
// (I) of mark_repriced_rows, 2 w >= y_ref_i + y_ref_j - Z >= y_i + y_j - Z.
// Compared exactly: the vertices in the same preorder, and every blossom's interval of it and z.
std::vector<char> PricedSolve::unchanged_blossoms() const {
    const BlossomTree& lam = forest_->tree();
    std::vector<char> unchanged(r_.parent.size(), 0);
    if (!have_reference_ || opt_.full_pricing) return unchanged;
    const std::vector<Span> spans = blossom_spans();
    for (std::size_t k = 0; k < spans.size();) {
        const i32 top = spans[k].top;
        std::size_t end = k;
        while (end < spans.size() && spans[end].top == top) ++end;
        const i32 lo = lam.lo(top), size = lam.hi(top) - lo, first = lam.order()[lo];
        const i32 then = top_ref_[first];
        bool same = then >= N_ && top_ref_size_[then] == size;
        for (i32 q = 0; same && q < size; ++q) {
            const i32 v = lam.order()[lo + q];
            same = order_ref_[lo_ref_[then] + q] == v && (v >= n_ || clean(v));
        }
        const i32 at = same ? spans_ref_at_[then] : -1;
        const std::size_t past = static_cast<std::size_t>(at) + (end - k);  // then's entries end here
        same = at >= 0 && past <= spans_ref_.size() && spans_ref_[past - 1].top == then &&
               (past == spans_ref_.size() || spans_ref_[past].top != then) &&
               std::equal(spans.begin() + k, spans.begin() + end, spans_ref_.begin() + at);
        unchanged[top] = same;
        k = end;
    }
    return unchanged;
}

void PricedSolve::keep_pass(PassState& out) const {
    out.keys.resize(eu_.size());
    for (std::size_t e = 0; e < eu_.size(); ++e) out.keys[e] = pair_key(eu_[e], ev_[e]);
    out.y.resize(N_);
    for (i32 v = 0; v < N_; ++v)
        out.y[v] = static_cast<double>(r_.y[v]) - static_cast<double>(forest_->enclosing_z(v)) / 2;
    out.mate = r_.mate;
    out.cap = cap_;
}

void PricedSolve::add_keys(std::vector<std::uint64_t>& ks) {
    const CompleteOptions& opt = opt_;
    Control& control = control_;
    auto& eu = eu_;
    auto& ev = ev_;
    auto& w = w_;
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    const std::size_t old = eu.size();
    eu.resize(old + ks.size());
    ev.resize(old + ks.size());
    w.resize(old + ks.size());
    parallel_for((ks.size() + 4095) / 4096, opt.n_threads,
                 [&](std::size_t b) {
                     const std::size_t hi = std::min(ks.size(), (b + 1) * 4096);
                     for (std::size_t t = b * 4096; t < hi; ++t) {
                         const i32 a = static_cast<i32>(ks[t] >> 32), c = static_cast<i32>(ks[t] & 0xffffffffu);
                         eu[old + t] = a;
                         ev[old + t] = c;
                         w[old + t] = weight(a, c);
                     }
                 },
                 control);
}

void PricedSolve::price_round() {
    const i32 n = n_;
    auto& found = found_;
    auto& hits = hits_;
    // Partial pricing: the neighbour lists first (cheap); the pairs
    // outside them only once the lists hold no violated pair, i.e. with
    // duals close to optimal, which rule out far more of them.
    hits.clear();
    price_lists_and_prefix(true, false);
    bool any = false;
    for (i32 i = 0; i < n && !any; ++i) any = !found[i].empty();
    if (!any) {
        const bool screen = screen_pays();
        auto t0 = std::chrono::steady_clock::now();
        if (!screen)
            for (i32 i = 0; i < n; ++i) stats_.dirty_rows += !clean(i) || split_[i];
        price_lists_and_prefix(false, !screen);
        stats_.seconds_prefix += seconds_since(t0);
        if (screen) {
            t0 = std::chrono::steady_clock::now();
            price_screen();
            stats_.seconds_screen += seconds_since(t0);
        }
        t0 = std::chrono::steady_clock::now();
        price_inside();
        stats_.seconds_inside += seconds_since(t0);
        settle_rows();
    }
    stats_.violated_pairs += static_cast<std::int64_t>(hits.size());
}

std::vector<std::uint64_t> PricedSolve::violated_keys() {
    const i32 n = n_;
    const i32 kk = kk_;
    auto& found = found_;
    auto& hits = hits_;
    // Hits into the lists of both points, then each point's kk most
    // violated pairs (ties by the other point: the same set whatever the
    // thread count).
    std::sort(hits.begin(), hits.end(),
              [](const Hit& a, const Hit& b) { return a.i < b.i || (a.i == b.i && a.j < b.j); });
    for (const Hit& h : hits) {
        if (h.i < n) found[h.i].emplace_back(h.rc, h.j);
        if (h.j < n) found[h.j].emplace_back(h.rc, h.i);
    }
    std::vector<std::uint64_t> keys;
    for (i32 i = 0; i < n; ++i) {
        auto& f = found[i];
        if (f.empty()) continue;
        std::sort(f.begin(), f.end());
        f.erase(std::unique(f.begin(), f.end()), f.end());
        for (std::size_t t = 0; t < f.size() && t < static_cast<std::size_t>(kk); ++t)
            keys.push_back(pair_key(i, f[t].second));
        if (f.capacity() > 4 * enough_) f = {};  // (a long list is rare: its capacity is not kept for later rounds)
    }
    return keys;
}

}  // namespace pricing

namespace {

using namespace pricing;

double matched_cost(const Distances& D, const std::vector<std::int32_t>& mate) {
    const auto n = D.size();
    double cost = 0;
    for (i32 i = 0; i < n; ++i)
        if (mate[i] > i && mate[i] < n) cost += D(i, mate[i]);
    return cost;
}

CompleteResult solve_complete(const Distances& D, const CompleteOptions& opt, Control& control,
                              CompleteStats* stats_out);

}  // namespace

// In the provider's locality order when it has one (see matching_reorder.hpp).
CompleteResult complete_min_weight_perfect_matching(const Distances& D, const CompleteOptions& opt, Control& control,
                                                    CompleteStats* stats_out) {
    std::vector<i32> order = D.locality_order();
    if (order.empty()) return solve_complete(D, opt, control, stats_out);
    const ReorderedDistances near_ids(D, std::move(order), control);
    CompleteResult out = solve_complete(near_ids, opt, control, stats_out);
    to_input_ids(out.blossom, near_ids.order());
    out.cost = matched_cost(D, out.blossom.mate);  // summed in input order, as without the renumbering
    return out;
}

namespace {

CompleteResult solve_complete(const Distances& D, const CompleteOptions& opt, Control& control,
                              CompleteStats* stats_out) {
    const i32 n = D.size();
    CompleteStats stats;
    CompleteResult out;
    // Neighbours kept per point for pricing (the start graph uses the first k).
    const i32 store = std::max<i32>(1, std::min<i32>(n - 1, std::max<i32>(opt.k, D.store_hint())));
    if (opt.report) control.set_total(static_cast<std::uint64_t>(2 * n));
    const auto t0 = std::chrono::steady_clock::now();
    const Lists L = neighbour_lists(D, store, opt.n_threads, control);
    stats.seconds_neighbours = seconds_since(t0);
    if (opt.report) control.report(static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(2 * n));
    // First pass: weights scaled to the largest distance. When the matching
    // found costs far less than that (distances over many orders of
    // magnitude), solve again with every weight capped just above that cost:
    // no matching using a capped pair can then be optimal, so capping changes
    // nothing but the resolution, which becomes relative to the cost. Passes
    // repeat until it is, whatever the span of the distances (an overflowing
    // cost stops them: the caller reports it).
    double cap = D.max_distance();
    BlossomResult r;
    PassState state[2];
    for (int pass = 0;; ++pass) {
        r = PricedSolve(D, L, cap, opt, control, stats, pass > 0 ? &state[(pass + 1) % 2] : nullptr)
                .run(&state[pass % 2]);
        ++stats.passes;
        const double cost = matched_cost(D, r.mate);
        out.cost = cost;
        // Again when the cap can shrink a lot, or by 4x or more while the
        // rounding (up to N/2 resolutions on the cost) is not far below 1e-10
        // of the cost.
        const double resolution = cap / static_cast<double>(max_weight(n + (opt.ghost ? 1 : 0)));
        const bool coarse = static_cast<double>(n) * resolution > 1e-10 * cost;
        // Each pass shrinks the cap 4x or more: the float64 range allows ~1100.
        if (!(cost > 0 && (cost * 16 < cap || (coarse && cost * 4 < cap)))) break;
        if (pass > 1100) throw std::logic_error("matching: the cap does not converge (internal error)");
        // Strictly above the cost, also where 1.001 x rounds to x (subnormal costs).
        cap = std::max(cost * 1.001, std::nextafter(cost, std::numeric_limits<double>::infinity()));
    }
    const i32 N = n + (opt.ghost ? 1 : 0);
    const double wmax = static_cast<double>(max_weight(N));
    out.unit = cap > 0 ? cap / (2 * wmax) : 0.5;
    out.resolution = cap > 0 ? cap / wmax : 0.0;
    out.cap = cap;
    out.max_distance = D.max_distance();
    out.blossom = std::move(r);
    if (stats_out) *stats_out = stats;
    return out;
}

}  // namespace

}  // namespace pairmetrics::matching