// The one instruction-set dispatch of the kernels. Vector code is compiled
// for its level with function target attributes (no -m flags: the library
// runs on any CPU of its architecture), and a kernel picks the function
// pointers of a level once, from what the CPU supports at run time. Builds
// without x86-64 vector code (other architectures, MSVC) run the scalar
// level only.
#pragma once

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define PAIRMETRICS_X86_SIMD 1
// Marks a function compiled for an instruction set, e.g. PAIRMETRICS_TARGET("avx2").
#define PAIRMETRICS_TARGET(isa) __attribute__((target(isa)))
#else
#define PAIRMETRICS_X86_SIMD 0
#define PAIRMETRICS_TARGET(isa)
#endif

// The body shared by the levels' functions, inlined into each (so that it
// is compiled for each one's instruction set).
#if defined(__GNUC__) || defined(__clang__)
#define PAIRMETRICS_FORCE_INLINE inline __attribute__((always_inline))
#else
#define PAIRMETRICS_FORCE_INLINE inline
#endif

namespace pairmetrics {

// Which vector code a kernel runs: `automatic` takes the best the CPU
// supports; the others force a level (for tests and benchmarks). avx2 is
// AVX2 with FMA (every CPU with AVX2 has both).
enum class SimdLevel : int { automatic = -1, scalar = 0, avx2 = 1, avx512 = 2 };

// Whether this build and this CPU (and its operating system, which must save
// the registers) can run `level`; scalar and automatic: always.
bool simd_supported(SimdLevel level);

// `automatic` resolved to the best supported level (found once); any other
// level unchanged.
SimdLevel simd_resolve(SimdLevel level);

}  // namespace pairmetrics
