// The pairs a pricing screen could not rule out, kept across rounds and
// priced again against each round's duals. At a million clustered points
// they number in the hundreds of millions, so they are stored tightly:
// 12 bytes a pair (the weight as a float no larger than it), in shards
// sorted by pair, with no growth slack. A screen collects into fixed-size
// chunks (no doubling) and merges into one shard at a time, so the peak is
// the kept pairs plus one shard.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "control.hpp"

namespace pairmetrics::matching {

// The largest float at most x (x >= 0: an integer weight below 2^63 or a
// distance): a lower bound, four bytes, that rules most pairs out without
// their exact weight.
template <class T>
float float_below(T x) {
    float f = static_cast<float>(x);
    if (static_cast<T>(f) > x) f = std::nextafter(f, 0.0f);
    return f;
}

class KeptPairs {
  public:
    struct Pair {
        std::int32_t i, j;  // i < j
        float w;            // at most the pair's integer weight (float_below)
    };
    static constexpr std::size_t kShards = 64;

    // The pair (i, j) in either order.
    static Pair make(std::int32_t i, std::int32_t j, std::int64_t w);
    static std::size_t shard_of(const Pair& p) { return static_cast<std::size_t>(p.i / 64) % kShards; }

    // Pairs appended by several threads at once, in chunks of fixed size
    // taken from the system directly: a chunk freed while the shards are
    // merged goes back at once (the allocator's free lists would keep it
    // resident beside the merged shards, doubling the peak).
    class Collector {
      public:
        Collector();
        void add(const Pair& p);
        std::size_t size() const;

      private:
        friend class KeptPairs;
        static constexpr std::size_t kChunk = std::size_t{1} << 16;
        struct ChunkFree {
            void operator()(Pair* chunk) const;
        };
        using Chunk = std::unique_ptr<Pair[], ChunkFree>;
        static Chunk new_chunk();
        struct Shard {
            std::mutex lock;
            std::vector<Chunk> chunks;
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
