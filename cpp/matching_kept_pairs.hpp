// The pairs a pricing screen could not rule out, kept across rounds and
// priced again against each round's duals. At a million clustered points
// they number in the hundreds of millions, so they are stored tightly:
// 12 bytes a pair (the weight as a float no larger than it), in shards
// sorted by pair, with no growth slack. A screen collects into fixed-size
// chunks (no doubling) and merges into one shard at a time, so the peak is
// the kept pairs plus one shard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "control.hpp"

namespace pairmetrics::matching {

class KeptPairs {
  public:
    struct Pair {
        std::int32_t i, j;  // i < j
        float w;            // at most the pair's integer weight (see below)
    };
    static constexpr std::size_t kShards = 64;

    // The largest float at most w (w >= 0 below 2^63): a lower bound that
    // rules most pairs out without their exact weight.
    static float below(std::int64_t w);
    // The pair (i, j) in either order.
    static Pair make(std::int32_t i, std::int32_t j, std::int64_t w);
    static std::size_t shard_of(const Pair& p) { return static_cast<std::size_t>(p.i / 64) % kShards; }

    // Pairs appended by several threads at once, in chunks of fixed size.
    class Collector {
      public:
        Collector();
        void add(const Pair& p);
        std::size_t size() const;

      private:
        friend class KeptPairs;
        static constexpr std::size_t kChunk = std::size_t{1} << 16;
        struct Shard {
            std::mutex lock;
            std::vector<std::unique_ptr<Pair[]>> chunks;
            std::size_t count = 0;
            char pad[64];
        };
        std::vector<Shard> shards_;
    };

    void clear();
    // Adds the collected pairs (emptying `from`), each pair once.
    void merge(Collector& from, Control& control);
    std::size_t size() const;
    const std::vector<Pair>& shard(std::size_t t) const { return shards_[t]; }

  private:
    std::vector<std::vector<Pair>> shards_ = std::vector<std::vector<Pair>>(kShards);
};

}  // namespace pairmetrics::matching
