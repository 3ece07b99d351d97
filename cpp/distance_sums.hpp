// Sums of a pairwise function over two samples, without an N x N matrix: the
// kernel of the energy and MMD statistics and of their permutation tests.
//
// The points Z (N rows: the first `split` are the first sample, the rest the
// second) are prepared by the caller (centred and scaled by a power of two,
// or unit rows for cosine). Each pair's value is
//
//     v_ij = f(scale * s_ij^power),  s_ij = |z_i - z_j|^2,  power 1/2 or 1,
//
// f the identity (distances), exp(-gamma t^2) (rbf) or exp(-gamma t)
// (laplacian). s_ij comes from the expansion |z_i|^2 + |z_j|^2 - 2 <z_i, z_j>
// (one gemm per tile), recomputed from the rows where euclidean.hpp's rule
// says cancellation may have cost more than kRelativeError of it; the
// diagonal is exactly 0.
//
// The sums are quadratic forms of V = (v_ij): with a 0/1 indicator s of the
// first sample, s^T V s, s^T V (1 - s) and (1 - s)^T V (1 - s) follow from the
// row sums of V. A permutation test needs q_p = s_p^T V s_p for P indicator
// vectors: per tile that is V_IJ S_J (a gemm against the tile's rows of the
// N x P indicator matrix, built from packed bits), so P permutations cost one
// pass over the tiles. Only tiles I <= J are computed (V is symmetric).
// Everything is float64, and the result does not depend on the threads
// (fixed lanes of tiles, summed in order). Memory: N d for the points, N P / 8
// for the indicator bits, 32 N doubles of lane sums and a few MB per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "blas_threads.hpp"
#include "control.hpp"

namespace pairmetrics::distance_sums {

enum class Kernel { identity, rbf, laplacian };

// Relative accuracy of each squared distance (the recompute rule's `rel`).
constexpr double kRelativeError = 1.0 / (1 << 30);

struct PairFunction {
    bool root = true;    // power 1/2 (Euclidean distance) or 1 (squared)
    double scale = 1.0;  // undoes the caller's power-of-two scaling, or 1/2 for cosine
    Kernel kernel = Kernel::identity;
    double gamma = 1.0;
};

struct Options {
    int n_threads = 1;
    std::ptrdiff_t tile = 0;            // rows and columns of a tile; 0: default
    std::ptrdiff_t resample_block = 0;  // indicator columns per gemm; 0: default
};

// Indicator vectors packed as bits: vector p has bit j (point j in the first
// sample) at bits[p * row_bytes + j / 8] >> (j % 8) (numpy's packbits with
// bitorder="little", one row per vector).
struct Indicators {
    const std::uint8_t* bits = nullptr;
    std::size_t count = 0;
    std::size_t row_bytes = 0;
};

struct Sums {
    // Per point i: sum of v_ij over j < split, and over j >= split.
    std::vector<double> to_first, to_second;
    // Per indicator vector p: s_p^T V s_p.
    std::vector<double> quadratic;
};

// z: n x d row-major. Throws std::invalid_argument on bad sizes.
Sums distance_sums(const double* z, std::ptrdiff_t n, std::ptrdiff_t d, std::ptrdiff_t split, const PairFunction& f,
                   const Indicators& indicators, const Options& options, const Blas& blas, Control& control);

// The value of one pair from its squared distance (also used for the rows the rule sends back).
double pair_value(const PairFunction& f, double squared);

}  // namespace pairmetrics::distance_sums
