// Record sorts of the paired kernel: all input records by score key, and a
// run of records by label.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control.hpp"
#include "paired_buffer.hpp"
#include "paired_detail.hpp"
#include "paired_input.hpp"

namespace pairmetrics::paired_detail {

// Records of every input position sorted by score key; the order within
// equal keys is arbitrary (runs of equal keys are re-ordered by label
// afterwards). The input is read three times: for the key bits that vary,
// for a histogram of the highest of them, and to write each record straight
// into its bucket. The buckets are then sorted in cache, spread over the
// threads, each group of buckets with work space the size of its largest
// bucket. So the records are written once, and no second array of them is
// needed.
template <class R>
Buffer<R> load_sorted_records(const RecordReader<R>& reader, std::size_t n, int n_threads, Control& control);

// Sorts records by label, descending, checking the control between pieces.
template <class R>
void sort_by_label_descending(R* data, std::size_t n, Ticker& tick);

}  // namespace pairmetrics::paired_detail
