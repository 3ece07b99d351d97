// Bindings of the distance-sum kernel of the energy and MMD tests. The Python
// layer prepares the points (C-contiguous float64, centred and scaled) and
// packs the permutations' indicator vectors; the checks here only guard the
// C++ against misuse of the private API.
#include <cstdint>
#include <string>

#include "../distance_sums.hpp"
#include "common.hpp"
#include "scipy_blas.hpp"

namespace pairmetrics::bindings {

namespace ds = pairmetrics::distance_sums;

namespace {

using Points = py::array_t<double, py::array::c_style>;
using PackedBits = py::array_t<std::uint8_t, py::array::c_style>;

ds::Kernel kernel_of(const std::string& name) {
    if (name == "identity") return ds::Kernel::identity;
    if (name == "rbf") return ds::Kernel::rbf;
    if (name == "laplacian") return ds::Kernel::laplacian;
    throw py::value_error("kernel must be one of 'identity', 'rbf', 'laplacian'");
}

py::dict sums(const Points& z, py::ssize_t split, bool root, double scale, const std::string& kernel, double gamma,
              const py::object& indicators, int n_threads, py::ssize_t tile, py::ssize_t resample_block,
              const py::object& progress) {
    if (z.ndim() != 2 || z.shape(0) < 1 || z.shape(1) < 1) throw py::value_error("z must be a non-empty 2-D array");
    if (z.shape(0) > 0x7fffffff || z.shape(1) > 0x7fffffff) throw py::value_error("too many rows or columns");
    if (split < 0 || split > z.shape(0)) throw py::value_error("split must lie in [0, n]");
    ds::PairFunction f;
    f.root = root;
    f.scale = scale;
    f.kernel = kernel_of(kernel);
    f.gamma = gamma;
    ds::Indicators ind;
    PackedBits bits;
    if (!indicators.is_none()) {
        bits = PackedBits::ensure(indicators);
        if (!bits || bits.ndim() != 2 || bits.shape(1) * 8 < z.shape(0))
            throw py::value_error("indicators must be packed bits of shape (P, ceil(n / 8))");
        ind.bits = bits.data();
        ind.count = static_cast<std::size_t>(bits.shape(0));
        ind.row_bytes = static_cast<std::size_t>(bits.shape(1));
    }
    ds::Options options;
    const Blas blas = scipy_gemm();
    options.n_threads = tile_threads(blas, n_threads);
    options.tile = tile;
    options.resample_block = resample_block;
    const double* data = z.data();
    const std::ptrdiff_t n = z.shape(0), d = z.shape(1);
    const auto control = make_control(progress);
    // Safe without the GIL: z and the bits are kept alive by the caller and by `bits`.
    ds::Sums out = run_without_gil(
        *control, [&] { return ds::distance_sums(data, n, d, split, f, ind, options, blas, *control); });
    py::dict result;
    result["to_first"] = to_array(out.to_first);
    result["to_second"] = to_array(out.to_second);
    result["quadratic"] = to_array(out.quadratic);
    return result;
}

}  // namespace

void register_distance_tests(py::module_& m) {
    m.def("_distance_sums", &sums, py::arg("z"), py::arg("split"), py::arg("root"), py::arg("scale"), py::arg("kernel"),
          py::arg("gamma"), py::arg("indicators"), py::arg("n_threads"), py::arg("tile") = 0,
          py::arg("resample_block") = 0, py::arg("progress") = py::none(),
          "Sums of v_ij = f(scale * |z_i - z_j|^(1 or 2)) without an n x n matrix: dict of to_first (per row, over "
          "columns < split), to_second (over columns >= split) and quadratic (s_p^T V s_p for each row of the "
          "packed little-endian bit matrix indicators).");
}

}  // namespace pairmetrics::bindings
