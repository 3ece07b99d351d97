// Input readers of the paired kernel: score keys and labels of a range of
// input positions, read in place from strided arrays of any real dtype.
// Scores and labels are read apart, one virtual call per block, so that only
// the readers are compiled per dtype (not per pair of dtypes) and the rest of
// the kernel once per label kind.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "key_sort.hpp"
#include "paired_detail.hpp"

namespace pairmetrics::paired_detail {

// Positions read per virtual call (the block stays in L1).
constexpr std::size_t kReadBlock = 1024;

class ScoreReader {
  public:
    virtual ~ScoreReader() = default;
    // The order keys of the scores at positions [begin, end).
    virtual void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const = 0;
};

// L: double for real labels, the order key of an integer otherwise.
template <class L>
class LabelReader {
  public:
    virtual ~LabelReader() = default;
    // The labels at positions [begin, end), as L.
    virtual void labels(std::size_t begin, std::size_t end, L* out) const = 0;
    L label(std::size_t i) const {
        L value;
        labels(i, i + 1, &value);
        return value;
    }
};

template <class Score>
class StridedScores final : public ScoreReader {
  public:
    StridedScores(const Score* scores, std::ptrdiff_t stride) : scores_(scores), stride_(stride) {}
    void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const override {
        if (stride_ == 1) {  // a loop the compiler vectorises
            for (std::size_t i = begin; i < end; ++i) out[i - begin] = order_key(read(scores_, 1, i));
            return;
        }
        for (std::size_t i = begin; i < end; ++i) out[i - begin] = order_key(read(scores_, stride_, i));
    }

  private:
    const Score* scores_;
    std::ptrdiff_t stride_;
};

template <class L, class Label>
class StridedLabels final : public LabelReader<L> {
  public:
    StridedLabels(const Label* labels, std::ptrdiff_t stride) : labels_(labels), stride_(stride) {}
    void labels(std::size_t begin, std::size_t end, L* out) const override {
        for (std::size_t i = begin; i < end; ++i) out[i - begin] = label_at<L>(labels_, stride_, i);
    }

  private:
    const Label* labels_;
    std::ptrdiff_t stride_;
};

// How labels of type Label are read: doubles for real labels, order keys of
// integers otherwise.
template <class Label>
using LabelKind = std::conditional_t<std::is_floating_point_v<Label>, double, std::uint64_t>;

// Positions [offset, ...) of another reader, as positions [0, ...).
class ShiftedScores final : public ScoreReader {
  public:
    ShiftedScores(const ScoreReader& base, std::size_t offset) : base_(base), offset_(offset) {}
    void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const override {
        base_.keys(begin + offset_, end + offset_, out);
    }

  private:
    const ScoreReader& base_;
    std::size_t offset_;
};

template <class L>
class ShiftedLabels final : public LabelReader<L> {
  public:
    ShiftedLabels(const LabelReader<L>& base, std::size_t offset) : base_(base), offset_(offset) {}
    void labels(std::size_t begin, std::size_t end, L* out) const override {
        base_.labels(begin + offset_, end + offset_, out);
    }

  private:
    const LabelReader<L>& base_;
    std::size_t offset_;
};

// The input of one call.
template <class L>
struct PairedInput {
    const ScoreReader& scores;
    const LabelReader<L>& labels;
    std::size_t n;
};

// Reads the input of load_sorted_records: the score keys, or whole records
// (score key, label, and the position when tracking), of a range of
// positions.
template <class R>
class RecordReader {
  public:
    virtual ~RecordReader() = default;
    virtual void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const = 0;
    virtual void records(std::size_t begin, std::size_t end, R* out) const = 0;
};

template <bool Track, class L>
class InputReader final : public RecordReader<Record<Track, L>> {
  public:
    explicit InputReader(const PairedInput<L>& input) : input_(input) {}
    void keys(std::size_t begin, std::size_t end, std::uint64_t* out) const override {
        input_.scores.keys(begin, end, out);
    }
    void records(std::size_t begin, std::size_t end, Record<Track, L>* out) const override {
        std::uint64_t key[kReadBlock];
        L label[kReadBlock];
        for (std::size_t first = begin; first < end; first += kReadBlock) {
            const std::size_t last = std::min(end, first + kReadBlock);
            input_.scores.keys(first, last, key);
            input_.labels.labels(first, last, label);
            for (std::size_t i = first; i < last; ++i) {
                Record<Track, L>& record = out[i - begin];
                record.key = key[i - first];
                record.label = label[i - first];
                if constexpr (Track) record.index = i;
            }
        }
    }

  private:
    const PairedInput<L>& input_;
};

}  // namespace pairmetrics::paired_detail
