// The BLAS that SciPy already loaded, through the function pointers SciPy
// exports for Cython (Fortran ABI, 32-bit integers). Nothing is linked, so
// the module works with whatever BLAS the SciPy wheel ships; without SciPy
// the pointers stay null and kernels use their plain C++ product.
#pragma once

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#include "common.hpp"

namespace pairmetrics::bindings {

struct ScipyBlas {
    void* sgemm = nullptr;
    void* dgemm = nullptr;
    int (*set_threads_local)(int) = nullptr;  // OpenBLAS: threads of the calling thread's calls
};

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
                out.set_threads_local = reinterpret_cast<int (*)(int)>(dlsym(handle, "openblas_set_num_threads_local"));
                dlclose(handle);  // still loaded by SciPy
            }
        }
    }
#endif
    blas = out;
    found = true;
    return blas;
}

}  // namespace pairmetrics::bindings
