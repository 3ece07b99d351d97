// The complete-graph matching in a provider's locality order: point ids
// renumbered so that near points have near ids (Euclidean: its ball order),
// so that the solver's and the pricing's per-vertex arrays are read near each
// other along the edges of the neighbour graph. The result is mapped back to
// the input's ids; only ties between equal-cost matchings may be broken
// differently from a solve in input order.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "matching.hpp"
#include "matching_distances.hpp"

namespace pairmetrics::matching {

// A provider seen through a renumbering: id i here is id order[i] of `inner`
// (order a permutation of 0..n-1). Point providers' rows are copied in the
// new order, so that rows of near ids are near in memory; every answer is
// bit for bit the inner provider's for the same pair.
class ReorderedDistances final : public Distances {
  public:
    ReorderedDistances(const Distances& inner, std::vector<std::int32_t> order, Control& control);
    std::int32_t size() const override { return inner_.size(); }
    double operator()(std::int32_t i, std::int32_t j) const override;
    void distances(std::int32_t i, const std::int32_t* js, int count, double* out) const override;
    const double* point(std::int32_t i) const override;
    std::int64_t dims() const override { return inner_.dims(); }
    double distance_between(const double* a, const double* b) const override { return inner_.distance_between(a, b); }
    double max_distance() const override { return inner_.max_distance(); }
    double relative_error() const override { return inner_.relative_error(); }
    void nearest(std::int32_t store, std::int32_t* cand, double* bound, int n_threads, Control& control) const override;
    std::int32_t store_hint() const override { return inner_.store_hint(); }
    double exact_cost() const override { return inner_.exact_cost(); }
    double screen_cost() const override { return inner_.screen_cost(); }
    std::unique_ptr<ScreenSet> screen_set(const std::int32_t* points, std::int32_t count,
                                          const double* a) const override;
    void screen_block(const ScreenSet& rows, std::int32_t r0, std::int32_t r1, const ScreenSet& cols, std::int32_t c0,
                      std::int32_t c1, int words, std::uint64_t* bits, double lower) const override {
        inner_.screen_block(rows, r0, r1, cols, c0, c1, words, bits, lower);
    }
    void pairs_below(const double* a, const std::int32_t* group, int n_threads, Control& control,
                     const PairVisitor& visit) const override;
    void pairs_below_rows(const double* a, const std::int32_t* group, const char* columns,
                          const std::vector<std::int32_t>& rows, int n_threads, Control& control,
                          const PairVisitor& visit) const override;

    const std::vector<std::int32_t>& order() const { return order_; }

  private:
    // Per-id values (thresholds, groups, columns) indexed by the inner provider's ids (empty when null).
    template <class T>
    std::vector<T> inner(const T* values) const {
        if (values == nullptr) return {};
        std::vector<T> out(order_.size());
        for (std::size_t i = 0; i < order_.size(); ++i) out[order_[i]] = values[i];
        return out;
    }

    const Distances& inner_;
    std::vector<std::int32_t> order_, rank_;  // rank_[order_[i]] = i
    std::vector<double> rows_;                // point providers: the points in the new order
};

// Maps a solution on ids renumbered by `order` (vertex i is input vertex
// order[i]; vertices at or past order.size(), such as a ghost, and blossoms
// keep their ids) back to the input's ids.
void to_input_ids(BlossomResult& r, const std::vector<std::int32_t>& order);

}  // namespace pairmetrics::matching
