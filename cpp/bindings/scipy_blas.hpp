// The BLAS that SciPy already loaded, through the function pointers SciPy
// exports for Cython (Fortran ABI, 32-bit integers). Nothing is linked, so
// the module works with whatever BLAS the SciPy wheel ships; without SciPy
// the pointers stay null and kernels use their plain C++ product.
#pragma once

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#include "blas_threads.hpp"
#include "common.hpp"

namespace pairmetrics::bindings {

struct ScipyBlas {
    void* sgemm = nullptr;
    void* dgemm = nullptr;
    // How to set its thread count (none found: callers run their tiles on
    // one thread and leave the parallelism to the BLAS).
    BlasThreads threads;
};

#if !defined(_WIN32)
// The thread controls a loaded BLAS library exports: per calling thread
// (MKL) if it can, else process-wide (OpenBLAS with or without SciPy's
// symbol prefix, MKL). OpenBLAS's openblas_set_num_threads_local is not
// used: despite its name it sets the process-wide count.
inline BlasThreads blas_threads_of(void* handle) {
    BlasThreads out;
    out.set_local = reinterpret_cast<int (*)(int)>(dlsym(handle, "MKL_Set_Num_Threads_Local"));
    if (out.set_local) return out;
    const char* pairs[][2] = {{"scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"},
                              {"openblas_get_num_threads", "openblas_set_num_threads"},
                              {"MKL_Get_Max_Threads", "MKL_Set_Num_Threads"}};
    for (const auto& names : pairs) {
        out.get_global = reinterpret_cast<int (*)()>(dlsym(handle, names[0]));
        out.set_global = reinterpret_cast<void (*)(int)>(dlsym(handle, names[1]));
        if (out.controllable()) return out;
    }
    return BlasThreads{};
}
#endif

// Looked up on first use; call with the GIL held (the import may release it,
// so a second lookup is possible and harmless).
inline ScipyBlas scipy_blas() {
    static ScipyBlas blas;
    static bool found = false;
    if (found) return blas;
    ScipyBlas out;
    try {
        py::dict capi = py::module_::import("scipy.linalg.cython_blas").attr("__pyx_capi__");
        auto pointer = [&](const char* name) -> void* {
            PyObject* capsule = py::object(capi[name]).ptr();
            return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
        };
        out.sgemm = pointer("sgemm");
        out.dgemm = pointer("dgemm");
        if (PyErr_Occurred()) throw py::error_already_set();
    } catch (py::error_already_set&) {
        PyErr_Clear();
        out = ScipyBlas{};
    }
#if !defined(_WIN32)
    if (out.sgemm != nullptr) {
        Dl_info info;
        if (dladdr(out.sgemm, &info) != 0 && info.dli_fname != nullptr) {
            if (void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)) {
                out.threads = blas_threads_of(handle);
                dlclose(handle);  // still loaded by SciPy
            }
        }
    }
#endif
    blas = out;
    found = true;
    return blas;
}

// SciPy's BLAS in the tile kernels' terms (blas_threads.hpp).
inline Blas scipy_gemm() {
    const ScipyBlas found = scipy_blas();
    Blas blas;
    blas.sgemm = reinterpret_cast<GemmFn<float>>(found.sgemm);
    blas.dgemm = reinterpret_cast<GemmFn<double>>(found.dgemm);
    blas.threads = found.threads;
    return blas;
}

// Threads for the tile kernels: with a BLAS whose thread count cannot be set,
// the tiles run on one thread and the BLAS parallelises each product itself
// (never both: that would oversubscribe the cores).
inline int tile_threads(const Blas& blas, int n_threads) {
    return (blas.sgemm != nullptr && !blas.threads.controllable()) ? 1 : n_threads;
}

}  // namespace pairmetrics::bindings
