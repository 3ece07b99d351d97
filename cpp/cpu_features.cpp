#include "cpu_features.hpp"

namespace pairmetrics {

bool simd_supported(SimdLevel level) {
    switch (level) {
        case SimdLevel::automatic:
        case SimdLevel::scalar:
            return true;
#if PAIRMETRICS_X86_SIMD
        case SimdLevel::avx2:
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case SimdLevel::avx512:
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx512f");
#else
        case SimdLevel::avx2:
        case SimdLevel::avx512:
            return false;
#endif
    }
    return false;
}

SimdLevel simd_resolve(SimdLevel level) {
    if (level != SimdLevel::automatic) return level;
    static const SimdLevel best = simd_supported(SimdLevel::avx512) ? SimdLevel::avx512
                                  : simd_supported(SimdLevel::avx2) ? SimdLevel::avx2
                                                                    : SimdLevel::scalar;
    return best;
}

}  // namespace pairmetrics
