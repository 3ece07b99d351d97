// One BLAS thread per kernel thread. The tile kernels spread their tiles over
// their own threads, and a BLAS thread pool inside each tile would only
// compete with them; so while they call the BLAS its thread count is 1, and
// the caller's setting comes back afterwards, also when an exception or a
// cancellation unwinds the kernel.
#pragma once

#include <mutex>

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

}  // namespace pairmetrics
