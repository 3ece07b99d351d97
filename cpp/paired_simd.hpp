// Vector versions of the two inner loops of the paired merge path (real
// labels, totals only): merging sorted runs of doubles, and counting the
// pairs of two sorted runs that are at least min_dist apart. They are
// compiled for AVX-512 with function target attributes and picked at run
// time, so the library itself needs no -m flags and runs on any x86-64 or
// aarch64 CPU (elsewhere only the scalar loops exist).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pairmetrics {

// Which code the paired kernel runs: `automatic` takes the best the CPU
// supports; the others force a level (for tests and benchmarks).
enum class SimdLevel : int { automatic = -1, scalar = 0, avx512 = 2 };

// Whether this build and this CPU can run `level` (scalar and automatic: always).
bool simd_supported(SimdLevel level);

// `automatic` resolved to the best supported level; any other level unchanged.
SimdLevel simd_resolve(SimdLevel level);

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

// AVX-512 versions (call only when simd_supported(SimdLevel::avx512)): up to
// four jobs are run interleaved, so that their chains of dependent vector
// operations overlap. Output identical to the scalar loops (values only:
// equal labels are interchangeable, so their order does not matter).
// Sorts each of `runs` consecutive runs of 16 labels in x and returns how
// many pairs i < j inside a run have x[i] - x[j] >= min_dist.
std::uint64_t sort_runs_avx512(double* x, std::size_t runs, double min_dist);
void merge_avx512(const double* src, double* dst, const MergeJob* jobs, std::size_t count);
std::uint64_t count_avx512(const double* src, const CountJob* jobs, std::size_t count, double min_dist);

}  // namespace simd
}  // namespace pairmetrics
