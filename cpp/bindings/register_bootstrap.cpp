#include "../bootstrap.hpp"
#include "common.hpp"

namespace pairmetrics::bindings {

namespace {

template <class T>
const T* vector_data(const py::array_t<T>& a, const char* name) {
    if (a.ndim() != 1 || (a.size() > 0 && a.strides(0) != static_cast<py::ssize_t>(sizeof(T))))
        throw py::value_error(std::string("internal error: ") + name + " must be a contiguous 1-D array");
    return a.data();
}

// Inputs were built in Python (sorted positions, offsets, seeds); only their
// shapes and the offsets' ranges are checked here, so no index leaves its array.
py::array_t<double> bootstrap_auc_py(const py::array_t<std::uint8_t>& positive,
                                     const py::array_t<std::int64_t>& group_end,
                                     const py::array_t<std::int64_t>& stratum_offsets,
                                     const py::array_t<std::int64_t>& cluster_offsets,
                                     const py::array_t<std::int64_t>& members, const py::array_t<std::uint64_t>& seeds,
                                     int n_threads, py::object progress) {
    const std::size_t n = static_cast<std::size_t>(positive.size());
    const std::int64_t* ends = vector_data(group_end, "group_end");
    const std::int64_t* strata = vector_data(stratum_offsets, "stratum_offsets");
    const std::int64_t* clusters = vector_data(cluster_offsets, "cluster_offsets");
    const std::int64_t* member = vector_data(members, "members");
    const std::size_t n_groups = static_cast<std::size_t>(group_end.size());
    const std::size_t n_strata = static_cast<std::size_t>(stratum_offsets.size()) - 1;
    const std::size_t n_clusters = static_cast<std::size_t>(cluster_offsets.size()) - 1;
    if (n >= (std::size_t{1} << 32) || n_groups == 0 || static_cast<std::size_t>(ends[n_groups - 1]) != n ||
        stratum_offsets.size() < 2 || strata[0] != 0 || static_cast<std::size_t>(strata[n_strata]) != n_clusters ||
        cluster_offsets.size() < 2 || clusters[0] != 0 || clusters[n_clusters] != members.size())
        throw py::value_error("internal error: inconsistent bootstrap design");
    for (py::ssize_t i = 0; i < members.size(); ++i)
        if (member[i] < 0 || static_cast<std::size_t>(member[i]) >= n)
            throw py::value_error("internal error: bootstrap member out of range");
    const ResamplingDesign design{strata, n_strata, clusters, member};
    const std::size_t n_resamples = static_cast<std::size_t>(seeds.size());
    py::array_t<double> out(static_cast<py::ssize_t>(n_resamples));
    double* result = out.mutable_data();
    const std::uint8_t* flags = vector_data(positive, "positive");
    const std::uint64_t* seed = vector_data(seeds, "seeds");
    const auto control = make_control(std::move(progress));
    run_without_gil(*control, [&] {
        bootstrap_auc(flags, n, ends, n_groups, design, seed, n_resamples, result, n_threads, *control);
    });
    return out;
}

}  // namespace

void register_bootstrap(py::module_& m) {
    m.def("bootstrap_auc", &bootstrap_auc_py, py::arg("positive").noconvert(), py::arg("group_end").noconvert(),
          py::arg("stratum_offsets").noconvert(), py::arg("cluster_offsets").noconvert(),
          py::arg("members").noconvert(), py::arg("seeds").noconvert(), py::arg("n_threads"),
          py::arg("progress") = py::none(),
          "Bootstrap replicates of the binary ROC AUC over samples sorted by score (one per seed).");
}

}  // namespace pairmetrics::bindings
