// One BLAS thread per kernel thread. The tile kernels spread their tiles over
// their own threads, and a BLAS thread pool inside each tile would only
// compete with them; so while they call the BLAS its thread count is 1, and
// the caller's setting comes back afterwards, also when an exception or a
// cancellation unwinds the kernel.
#pragma once

#include <cstddef>
#include <mutex>
#include <type_traits>

namespace pairmetrics {

// How to set the thread count of the BLAS the caller found; any may be null.
struct BlasThreads {
    // The count for the calling thread's BLAS calls only; returns the
    // previous setting, which it also restores (0: "the process-wide
    // count"). MKL: mkl_set_num_threads_local. (OpenBLAS's
    // openblas_set_num_threads_local sets the process-wide count: not this.)
    int (*set_local)(int) = nullptr;
    // Otherwise the process-wide count: OpenBLAS (with or without SciPy's
    // symbol prefix), MKL.
    int (*get_global)() = nullptr;
    void (*set_global)(int) = nullptr;

    bool controllable() const { return set_local != nullptr || (get_global != nullptr && set_global != nullptr); }
};

// Fortran BLAS gemm (column major, 32-bit integers), as exported by the
// reference BLAS interface of OpenBLAS, MKL, ...
template <class T>
using GemmFn = void (*)(char* transa, char* transb, int* m, int* n, int* k, T* alpha, T* a, int* lda, T* b, int* ldb,
                        T* beta, T* c, int* ldc);

// The BLAS the caller found, for the tile kernels (2 vs 2, distance sums).
// Without gemm they use a plain (slow) product. They keep the BLAS on one
// thread while they run (OneBlasThread); callers with a BLAS whose thread
// count cannot be set should run the tile kernels on one thread (the BLAS
// then parallelises each product itself).
struct Blas {
    GemmFn<float> sgemm = nullptr;
    GemmFn<double> dgemm = nullptr;
    BlasThreads threads;
};

// The gemm of precision T that the caller found, or null.
template <class T>
GemmFn<T> gemm_of(const Blas& blas) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "BLAS precisions: float, double");
    if constexpr (std::is_same_v<T, float>) {
        return blas.sgemm;
    } else {
        return blas.dgemm;
    }
}

// Row-major C (m x n, ldc) = A (m x k, lda) B (n x k, ldb)^T, plus C when
// accumulate is set: through `gemm` when given (row-major C = A B^T is
// column-major C^T = B A^T), else plain loops. The caller keeps the BLAS on
// one thread (OneBlasThread).
template <class T>
void product_abt(GemmFn<T> gemm, std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, const T* a, std::ptrdiff_t lda,
                 const T* b, std::ptrdiff_t ldb, T* c, std::ptrdiff_t ldc, bool accumulate = false) {
    if (gemm != nullptr) {
        char ta = 'T', tb = 'N';
        int mm = static_cast<int>(n), nn = static_cast<int>(m), kk = static_cast<int>(k);
        int la = static_cast<int>(ldb), lb = static_cast<int>(lda), lc = static_cast<int>(ldc);
        T one = 1, beta = accumulate ? 1 : 0;
        gemm(&ta, &tb, &mm, &nn, &kk, &one, const_cast<T*>(b), &la, const_cast<T*>(a), &lb, &beta, c, &lc);
        return;
    }
    for (std::ptrdiff_t i = 0; i < m; ++i)
        for (std::ptrdiff_t j = 0; j < n; ++j) {
            T s = 0;
            for (std::ptrdiff_t q = 0; q < k; ++q) s += a[i * lda + q] * b[j * ldb + q];
            c[i * ldc + j] = accumulate ? c[i * ldc + j] + s : s;
        }
}

// Keeps the BLAS calls of the thread that creates it on one BLAS thread for
// its lifetime. Create one in every thread that calls the BLAS (a
// thread-local setting does not reach other threads). A process-wide count
// is shared by all kernels: the first guard saves it, the last restores it
// (other BLAS users in the process run single-threaded meanwhile).
class OneBlasThread {
  public:
    explicit OneBlasThread(const BlasThreads& blas) : blas_(blas) {
        if (blas_.set_local) {
            previous_local_ = blas_.set_local(1);
        } else if (blas_.controllable()) {
            std::lock_guard<std::mutex> lock(global().mutex);
            if (global().users++ == 0) {
                global().saved = blas_.get_global();
                blas_.set_global(1);
            }
        }
    }
    ~OneBlasThread() {
        if (blas_.set_local) {
            blas_.set_local(previous_local_);
        } else if (blas_.controllable()) {
            std::lock_guard<std::mutex> lock(global().mutex);
            if (--global().users == 0) blas_.set_global(global().saved);
        }
    }
    OneBlasThread(const OneBlasThread&) = delete;
    OneBlasThread& operator=(const OneBlasThread&) = delete;

  private:
    struct Global {
        std::mutex mutex;
        int users = 0;
        int saved = 0;
    };
    static Global& global() {
        static Global state;
        return state;
    }
    BlasThreads blas_;
    int previous_local_ = 0;
};

// product_abt through the caller's BLAS, on one BLAS thread.
template <class T>
void product_abt(const Blas& blas, std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, const T* a, std::ptrdiff_t lda,
                 const T* b, std::ptrdiff_t ldb, T* c, std::ptrdiff_t ldc, bool accumulate = false) {
    const GemmFn<T> gemm = gemm_of<T>(blas);
    if (gemm != nullptr) {
        const OneBlasThread one_thread(blas.threads);  // in every thread that calls the BLAS
        pairmetrics::product_abt(gemm, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        return;
    }
    pairmetrics::product_abt(gemm, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

}  // namespace pairmetrics
