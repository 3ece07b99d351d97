#include "matching_reorder.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "parallel.hpp"

namespace pairmetrics::matching {

namespace {

using i32 = std::int32_t;

constexpr std::size_t kRowsPerTask = 4096;

}  // namespace

ReorderedDistances::ReorderedDistances(const Distances& inner, std::vector<i32> order, Control& control)
    : inner_(inner), order_(std::move(order)), rank_(order_.size(), -1) {
    const i32 n = inner.size();
    if (static_cast<i32>(order_.size()) != n) throw std::invalid_argument("matching: order is not a permutation");
    for (i32 i = 0; i < n; ++i) {
        const i32 p = order_[i];
        if (p < 0 || p >= n || rank_[p] != -1) throw std::invalid_argument("matching: order is not a permutation");
        rank_[p] = i;
    }
    const std::size_t d = static_cast<std::size_t>(inner.dims());
    if (d == 0 || inner.point(0) == nullptr) return;
    rows_.resize(static_cast<std::size_t>(n) * d);
    for (i32 i = 0; i < n; ++i) {
        std::copy_n(inner.point(order_[i]), d, rows_.data() + static_cast<std::size_t>(i) * d);
        if ((i & 16383) == 0) control.check();
    }
}

const double* ReorderedDistances::point(i32 i) const {
    if (rows_.empty()) return nullptr;
    return rows_.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(inner_.dims());
}

// The inner provider's operator() of two distinct points is its
// distance_between of their rows: copies of the rows give the same bits.
double ReorderedDistances::operator()(i32 i, i32 j) const {
    if (i == j) return 0.0;
    if (rows_.empty()) return inner_(order_[i], order_[j]);
    return inner_.distance_between(point(i), point(j));
}

void ReorderedDistances::distances(i32 i, const i32* js, int count, double* out) const {
    if (!rows_.empty()) {
        distances_of_rows(inner_, rows_.data(), inner_.dims(), i, js, count, out);
        return;
    }
    constexpr int kBatch = 64;
    i32 mapped[kBatch];
    for (int t0 = 0; t0 < count; t0 += kBatch) {
        const int len = std::min(kBatch, count - t0);
        for (int t = 0; t < len; ++t) mapped[t] = order_[js[t0 + t]];
        inner_.distances(order_[i], mapped, len, out + t0);
    }
}

// The inner lists, each entry renumbered, then each row moved to its new
// id along the cycles of the permutation (no second n x store buffer).
void ReorderedDistances::nearest(i32 store, i32* cand, double* bound, int n_threads, Control& control) const {
    const i32 n = size();
    inner_.nearest(store, cand, bound, n_threads, control);
    const std::size_t s = static_cast<std::size_t>(store);
    const std::size_t tasks = (static_cast<std::size_t>(n) + kRowsPerTask - 1) / kRowsPerTask;
    parallel_for(
        tasks, n_threads,
        [&](std::size_t task) {
            const std::size_t lo = task * kRowsPerTask * s;
            const std::size_t hi = std::min(static_cast<std::size_t>(n), (task + 1) * kRowsPerTask) * s;
            for (std::size_t t = lo; t < hi; ++t) cand[t] = rank_[cand[t]];
            control.check();
        },
        control);
    const std::vector<double> inner_bound(bound, bound + n);
    for (i32 i = 0; i < n; ++i) bound[i] = inner_bound[order_[i]];
    std::vector<char> placed(n, 0);
    std::vector<i32> held(s);
    for (i32 start = 0; start < n; ++start) {
        if (placed[start]) continue;
        // Row i takes the inner row order_[i]: follow the cycle from start.
        std::copy_n(cand + start * s, s, held.data());
        i32 i = start;
        while (true) {
            placed[i] = 1;
            const i32 from = order_[i];
            if (from == start) {
                std::copy_n(held.data(), s, cand + i * s);
                break;
            }
            std::copy_n(cand + from * s, s, cand + i * s);
            i = from;
        }
        if ((start & 16383) == 0) control.check();
    }
}

std::unique_ptr<Distances::ScreenSet> ReorderedDistances::screen_set(const std::int32_t* points, std::int32_t count,
                                                                     const double* a) const {
    std::vector<std::int32_t> inner_points(points, points + count);
    for (std::int32_t& p : inner_points) p = order_[p];
    return inner_.screen_set(inner_points.data(), count, a);
}

void ReorderedDistances::pairs_below(const double* a, const i32* group, int n_threads, Control& control,
                                     const PairVisitor& visit) const {
    const std::vector<double> inner_a = inner(a);
    const std::vector<i32> inner_group = inner(group);
    inner_.pairs_below(inner_a.data(), group == nullptr ? nullptr : inner_group.data(), n_threads, control,
                       [&](i32 p, i32 q) {
                           const i32 i = rank_[p], j = rank_[q];
                           visit(std::min(i, j), std::max(i, j));
                       });
}

void ReorderedDistances::pairs_below_rows(const double* a, const i32* group, const char* columns,
                                          const std::vector<i32>& rows, int n_threads, Control& control,
                                          const PairVisitor& visit) const {
    const std::vector<double> inner_a = inner(a);
    const std::vector<i32> inner_group = inner(group);
    const std::vector<char> inner_columns = inner(columns);
    std::vector<i32> inner_rows(rows.size());
    std::vector<char> in(order_.size(), 0);
    for (std::size_t t = 0; t < rows.size(); ++t) {
        inner_rows[t] = order_[rows[t]];
        in[rows[t]] = 1;
    }
    std::sort(inner_rows.begin(), inner_rows.end());
    inner_.pairs_below_rows(inner_a.data(), group == nullptr ? nullptr : inner_group.data(),
                            columns == nullptr ? nullptr : inner_columns.data(), inner_rows, n_threads, control,
                            [&](i32 p, i32 q) {
                                i32 i = rank_[p], j = rank_[q];
                                // Both in rows: the smaller id first, as the interface promises.
                                if (in[j] && j < i) std::swap(i, j);
                                visit(i, j);
                            });
}

void to_input_ids(BlossomResult& r, const std::vector<i32>& order) {
    const i32 n = static_cast<i32>(order.size());
    auto input_id = [&](i32 v) { return v >= 0 && v < n ? order[v] : v; };
    auto move_vertices = [&](auto& values, auto&& map_value) {
        if (values.size() < order.size()) return;  // no perfect matching: nothing to map
        auto moved = values;
        for (std::size_t v = order.size(); v < values.size(); ++v) moved[v] = map_value(values[v]);  // the ghost's mate
        for (i32 v = 0; v < n; ++v) moved[order[v]] = map_value(values[v]);
        values = std::move(moved);
    };
    move_vertices(r.mate, input_id);
    move_vertices(r.y, [](auto y) { return y; });
    move_vertices(r.parent, [](i32 p) { return p; });
}

}  // namespace pairmetrics::matching
