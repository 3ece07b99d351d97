// The element types the kernels are compiled for: numpy's bool, its signed
// and unsigned integers of 8 to 64 bits, float32 and float64 (the dtypes
// bindings/dtype_dispatch.hpp maps onto them). One list, so that every
// kernel's explicit instantiations cover the same types:
//   PAIRMETRICS_FOR_EACH_ELEMENT(X)          X(T) for each type T;
//   PAIRMETRICS_FOR_EACH_ELEMENT_WITH(X, A)  X(A, T) for each type T (inside
//                                            the first, every pair of types).
#pragma once

#include <cstdint>

// clang-format off (a table: one type per line)
#define PAIRMETRICS_FOR_EACH_ELEMENT(X) \
    X(bool)                             \
    X(std::int8_t)                      \
    X(std::int16_t)                     \
    X(std::int32_t)                     \
    X(std::int64_t)                     \
    X(std::uint8_t)                     \
    X(std::uint16_t)                    \
    X(std::uint32_t)                    \
    X(std::uint64_t)                    \
    X(float)                            \
    X(double)

#define PAIRMETRICS_FOR_EACH_ELEMENT_WITH(X, A) \
    X(A, bool)                                  \
    X(A, std::int8_t)                           \
    X(A, std::int16_t)                          \
    X(A, std::int32_t)                          \
    X(A, std::int64_t)                          \
    X(A, std::uint8_t)                          \
    X(A, std::uint16_t)                         \
    X(A, std::uint32_t)                         \
    X(A, std::uint64_t)                         \
    X(A, float)                                 \
    X(A, double)
// clang-format on
