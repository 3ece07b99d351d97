// The laminar family of blossoms as a forest: lowest common blossoms, and the
// reduced cost of an edge against a dual solution.

#include "matching.hpp"

#include <algorithm>
#include <utility>

namespace pairmetrics::matching {

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

}  // namespace

BlossomTree::BlossomTree(std::int32_t n_vertices, const std::vector<std::int32_t>& parent) {
    const auto nodes = static_cast<i32>(parent.size());
    std::vector<i32> start(nodes + 1, 0), kids(nodes);
    for (i32 x = 0; x < nodes; ++x)
        if (parent[x] != -1) ++start[parent[x] + 1];
    for (i32 x = 0; x < nodes; ++x) start[x + 1] += start[x];
    {
        std::vector<i32> fill(start.begin(), start.end() - 1);
        for (i32 x = 0; x < nodes; ++x)
            if (parent[x] != -1) kids[fill[parent[x]]++] = x;
    }
    root_.assign(nodes, -1);
    first_.assign(nodes, 0);
    depth_.assign(nodes, 0);
    lo_.assign(nodes, 0);
    hi_.assign(nodes, 0);
    order_.reserve(n_vertices);
    // Entering node x: its range of vertices in preorder starts here.
    auto enter = [&](i32 x) {
        lo_[x] = static_cast<i32>(order_.size());
        if (x < n_vertices) order_.push_back(x);
    };
    // Iterative DFS from every root, recording the Euler tour.
    std::vector<std::pair<i32, i32>> stack;  // (node, next child slot)
    for (i32 top = 0; top < nodes; ++top) {
        if (parent[top] != -1) continue;
        root_[top] = top;
        preorder_.push_back(top);
        enter(top);
        if (start[top] == start[top + 1]) {  // a vertex in no blossom
            hi_[top] = lo_[top] + 1;
            continue;
        }
        stack.emplace_back(top, start[top]);
        first_[top] = static_cast<i32>(euler_.size());
        euler_.push_back(top);
        while (!stack.empty()) {
            auto& [x, slot] = stack.back();
            if (slot == start[x + 1]) {
                hi_[x] = static_cast<i32>(order_.size());
                stack.pop_back();
                if (!stack.empty()) euler_.push_back(stack.back().first);
                continue;
            }
            const i32 c = kids[slot++];
            root_[c] = top;
            depth_[c] = depth_[x] + 1;
            first_[c] = static_cast<i32>(euler_.size());
            euler_.push_back(c);
            preorder_.push_back(c);
            enter(c);
            stack.emplace_back(c, start[c]);
        }
    }
    const auto len = static_cast<i32>(euler_.size());
    log2_.assign(len + 1, 0);
    for (i32 i = 2; i <= len; ++i) log2_[i] = log2_[i / 2] + 1;
    table_.emplace_back(euler_);
    for (i32 span = 2; span <= len; span *= 2) {
        const std::vector<i32>& prev = table_.back();
        std::vector<i32> next(len - span + 1);
        for (i32 i = 0; i + span <= len; ++i) {
            const i32 a = prev[i], b = prev[i + span / 2];
            next[i] = depth_[a] <= depth_[b] ? a : b;
        }
        table_.push_back(std::move(next));
    }
}

std::int32_t BlossomTree::lca(std::int32_t u, std::int32_t v) const {
    if (u == v || root_[u] != root_[v]) return -1;
    i32 a = first_[u], b = first_[v];
    if (a > b) std::swap(a, b);
    const i32 level = log2_[b - a + 1];
    const i32 x = table_[level][a], y = table_[level][b - (1 << level) + 1];
    return depth_[x] <= depth_[y] ? x : y;
}

std::int64_t reduced_cost(const BlossomResult& r, std::int32_t u, std::int32_t v, std::int64_t w) {
    return 2 * w - r.y[u] - r.y[v] + DualForest(r).common_z(u, v);
}

}  // namespace pairmetrics::matching
