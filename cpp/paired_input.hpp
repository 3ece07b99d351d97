// Input readers of the paired kernel: the score keys and records of a range
// of input positions, read in place from strided arrays of any real dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "key_sort.hpp"
#include "paired_detail.hpp"

namespace pairmetrics::paired_detail {

// Reads the input of load_sorted_records: the score keys, or whole records
// (score key, label, and the position when tracking), of a range of
// positions. One virtual call per block keeps the radix passes compiled once
// per record type rather than once per pair of input dtypes.
template <class R>
class RecordReader {
  public:
    virtual ~RecordReader() = default;
    virtual void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const = 0;
    virtual void records(std::size_t begin, std::size_t end, R* out) const = 0;
};

template <bool Track, class L, class Score, class Label>
class InputReader final : public RecordReader<Record<Track, L>> {
  public:
    InputReader(const Score* scores, std::ptrdiff_t score_stride, const Label* labels, std::ptrdiff_t label_stride)
        : scores_(scores), labels_(labels), score_stride_(score_stride), label_stride_(label_stride) {}
    void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const override {
        for (std::size_t i = begin; i < end; ++i) out[i - begin] = order_key(read(scores_, score_stride_, i));
    }
    void records(std::size_t begin, std::size_t end, Record<Track, L>* out) const override {
        for (std::size_t i = begin; i < end; ++i) {
            Record<Track, L>& record = out[i - begin];
            record.key = order_key(read(scores_, score_stride_, i));
            record.label = label_at<L>(labels_, label_stride_, i);
            if constexpr (Track) record.index = i;
        }
    }

  private:
    const Score* scores_;
    const Label* labels_;
    std::ptrdiff_t score_stride_, label_stride_;
};

}  // namespace pairmetrics::paired_detail
