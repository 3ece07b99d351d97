#include "paired_buffer.hpp"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pairmetrics::paired_detail {

void* allocate_work(std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::size_t kHuge = std::size_t{1} << 21;
    if (bytes >= 2 * kHuge) {
        const std::size_t rounded = (bytes + kHuge - 1) & ~(kHuge - 1);
        if (void* p = std::aligned_alloc(kHuge, rounded)) {
            madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a refusal is harmless
            return p;
        }
        throw std::bad_alloc();
    }
#endif
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    throw std::bad_alloc();
}

}  // namespace pairmetrics::paired_detail
