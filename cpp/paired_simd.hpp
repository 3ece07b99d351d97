// Vector versions of the inner loops of the paired merge path (real labels,
// totals only): sorting runs of 16 labels while counting their pairs,
// merging sorted runs of doubles, and counting the pairs of two sorted runs
// that are at least min_dist apart. One set of function pointers per level
// of cpu_features.hpp (AVX2, AVX-512); the scalar loops live with their
// callers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu_features.hpp"

namespace pairmetrics {
namespace simd {

// One merge: src[i, m) and src[j, r), each ascending, merged into dst[k, ...).
struct MergeJob {
    std::size_t i, m, j, r, k;
};
// One count: for each b in src[j, r) (ascending), the number of a in
// src[p, m) (ascending) with a - b >= min_dist, in double precision, where no
// a before p is that far above src[j]; summed.
struct CountJob {
    std::size_t p, m, j, r;
};

// The vector loops of one level. Up to four jobs are run interleaved, so
// that their chains of dependent vector operations overlap. Output identical
// to the scalar loops (values only: equal labels are interchangeable, so
// their order does not matter).
struct PairedKernels {
    // Sorts each of `runs` consecutive runs of 16 labels in x and returns how
    // many pairs i < j inside a run have x[i] - x[j] >= min_dist.
    std::uint64_t (*sort_runs)(double* x, std::size_t runs, double min_dist);
    void (*merge)(const double* src, double* dst, const MergeJob* jobs, std::size_t count);
    std::uint64_t (*count)(const double* src, const CountJob* jobs, std::size_t count, double min_dist);
};

// The kernels of `level` (resolved: automatic is the best supported), or
// null for the scalar level. The caller checks simd_supported for a forced
// level.
const PairedKernels* paired_kernels(SimdLevel level);

}  // namespace simd
}  // namespace pairmetrics
