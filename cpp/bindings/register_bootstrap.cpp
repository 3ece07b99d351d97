#include <string>

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
// shapes and ranges are checked here, so no index leaves its array.
BootstrapDesign design_of(const py::array_t<std::int64_t>& stratum_offsets, const py::array_t<std::uint32_t>& cluster) {
    const std::int64_t* offsets = vector_data(stratum_offsets, "stratum_offsets");
    const std::uint32_t* clusters = vector_data(cluster, "cluster");
    if (stratum_offsets.size() < 2 || offsets[0] != 0)
        throw py::value_error("internal error: inconsistent bootstrap strata");
    const std::size_t n_strata = static_cast<std::size_t>(stratum_offsets.size()) - 1;
    for (std::size_t s = 0; s < n_strata; ++s)
        if (offsets[s + 1] < offsets[s]) throw py::value_error("internal error: inconsistent bootstrap strata");
    const std::int64_t n_clusters = offsets[n_strata];
    if (n_clusters >= (std::int64_t{1} << 32)) throw py::value_error("bootstrap supports fewer than 2**32 clusters");
    for (py::ssize_t p = 0; p < cluster.size(); ++p)
        if (clusters[p] >= n_clusters) throw py::value_error("internal error: bootstrap cluster out of range");
    return BootstrapDesign{offsets, n_strata, clusters, static_cast<std::size_t>(cluster.size())};
}

template <class Kernel>
py::array_t<double> run_replicates(const py::array_t<std::uint64_t>& seeds, py::object progress, Kernel&& kernel) {
    const std::uint64_t* seed = vector_data(seeds, "seeds");
    const std::size_t n_resamples = static_cast<std::size_t>(seeds.size());
    py::array_t<double> out(static_cast<py::ssize_t>(n_resamples));
    double* result = out.mutable_data();
    const auto control = make_control(std::move(progress));
    run_without_gil(*control, [&] { kernel(seed, n_resamples, result, *control); });
    return out;
}

// A replicate kernel over tie groups of sorted samples (bootstrap_auc, bootstrap_average_precision).
using GroupKernel = void (*)(const BootstrapDesign&, const std::uint8_t*, const std::int64_t*, std::size_t,
                             const std::uint64_t*, std::size_t, double*, int, Control&);

py::array_t<double> group_replicates(GroupKernel kernel, const py::array_t<std::uint8_t>& positive,
                                     const py::array_t<std::int64_t>& group_end,
                                     const py::array_t<std::int64_t>& stratum_offsets,
                                     const py::array_t<std::uint32_t>& cluster, const py::array_t<std::uint64_t>& seeds,
                                     int n_threads, py::object progress) {
    const BootstrapDesign design = design_of(stratum_offsets, cluster);
    const std::int64_t* ends = vector_data(group_end, "group_end");
    const std::uint8_t* flags = vector_data(positive, "positive");
    const std::size_t n_groups = static_cast<std::size_t>(group_end.size());
    if (static_cast<std::size_t>(positive.size()) != design.n || n_groups == 0 ||
        static_cast<std::size_t>(ends[n_groups - 1]) != design.n)
        throw py::value_error("internal error: inconsistent bootstrap groups");
    for (std::size_t g = 0; g < n_groups; ++g)
        if (ends[g] <= (g ? ends[g - 1] : 0))
            throw py::value_error("internal error: bootstrap groups must be nonempty");
    return run_replicates(seeds, std::move(progress),
                          [&](const std::uint64_t* seed, std::size_t r, double* out, Control& control) {
                              kernel(design, flags, ends, n_groups, seed, r, out, n_threads, control);
                          });
}

py::array_t<double> bootstrap_auc_py(const py::array_t<std::uint8_t>& positive,
                                     const py::array_t<std::int64_t>& group_end,
                                     const py::array_t<std::int64_t>& stratum_offsets,
                                     const py::array_t<std::uint32_t>& cluster, const py::array_t<std::uint64_t>& seeds,
                                     int n_threads, py::object progress) {
    return group_replicates(bootstrap_auc, positive, group_end, stratum_offsets, cluster, seeds, n_threads,
                            std::move(progress));
}

py::array_t<double> bootstrap_average_precision_py(const py::array_t<std::uint8_t>& positive,
                                                   const py::array_t<std::int64_t>& group_end,
                                                   const py::array_t<std::int64_t>& stratum_offsets,
                                                   const py::array_t<std::uint32_t>& cluster,
                                                   const py::array_t<std::uint64_t>& seeds, int n_threads,
                                                   py::object progress) {
    return group_replicates(bootstrap_average_precision, positive, group_end, stratum_offsets, cluster, seeds,
                            n_threads, std::move(progress));
}

py::array_t<double> bootstrap_pair_concordance_py(const py::array_t<std::uint32_t>& rank,
                                                  const py::array_t<std::int64_t>& bound,
                                                  const py::array_t<std::uint8_t>& query,
                                                  const py::array_t<std::int64_t>& stratum_offsets,
                                                  const py::array_t<std::uint32_t>& cluster,
                                                  const py::array_t<std::uint64_t>& seeds, int n_threads,
                                                  py::object progress) {
    const BootstrapDesign design = design_of(stratum_offsets, cluster);
    const PairSweep sweep{vector_data(rank, "rank"), 0, vector_data(bound, "bound"), vector_data(query, "query")};
    if (static_cast<std::size_t>(rank.size()) != design.n || static_cast<std::size_t>(bound.size()) != design.n ||
        static_cast<std::size_t>(query.size()) != design.n)
        throw py::value_error("internal error: inconsistent bootstrap sweep");
    std::uint32_t top = 0;
    for (std::size_t p = 0; p < design.n; ++p) {
        if (sweep.bound[p] < (p ? sweep.bound[p - 1] : 0) || static_cast<std::size_t>(sweep.bound[p]) > design.n)
            throw py::value_error("internal error: bootstrap bounds must be nondecreasing within [0, n]");
        top = std::max(top, sweep.rank[p]);
    }
    const PairSweep ranked{sweep.rank, design.n ? std::size_t{top} + 1 : 0, sweep.bound, sweep.query};
    return run_replicates(seeds, std::move(progress),
                          [&](const std::uint64_t* seed, std::size_t r, double* out, Control& control) {
                              bootstrap_pair_concordance(design, ranked, seed, r, out, n_threads, control);
                          });
}

py::array_t<std::uint32_t> bootstrap_draw_counts_py(const py::array_t<std::int64_t>& stratum_offsets,
                                                    std::uint64_t seed) {
    const BootstrapDesign design = design_of(stratum_offsets, py::array_t<std::uint32_t>(0));
    py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(design.stratum_offsets[design.n_strata]));
    std::fill(out.mutable_data(), out.mutable_data() + out.size(), std::uint32_t{0});
    bootstrap_draw_counts(design.stratum_offsets, design.n_strata, seed, out.mutable_data());
    return out;
}

}  // namespace

void register_bootstrap(py::module_& m) {
    m.def("bootstrap_auc", &bootstrap_auc_py, py::arg("positive").noconvert(), py::arg("group_end").noconvert(),
          py::arg("stratum_offsets").noconvert(), py::arg("cluster").noconvert(), py::arg("seeds").noconvert(),
          py::arg("n_threads"), py::arg("progress") = py::none(),
          "Bootstrap replicates of the binary ROC AUC over samples sorted by score (one per seed).");
    m.def("bootstrap_average_precision", &bootstrap_average_precision_py, py::arg("positive").noconvert(),
          py::arg("group_end").noconvert(), py::arg("stratum_offsets").noconvert(), py::arg("cluster").noconvert(),
          py::arg("seeds").noconvert(), py::arg("n_threads"), py::arg("progress") = py::none(),
          "Bootstrap replicates of the average precision over samples sorted by decreasing score (one per seed).");
    m.def("bootstrap_pair_concordance", &bootstrap_pair_concordance_py, py::arg("rank").noconvert(),
          py::arg("bound").noconvert(), py::arg("query").noconvert(), py::arg("stratum_offsets").noconvert(),
          py::arg("cluster").noconvert(), py::arg("seeds").noconvert(), py::arg("n_threads"),
          py::arg("progress") = py::none(),
          "Bootstrap replicates of (correct + tied / 2) / comparable: each sample p with query[p] compared with the "
          "samples before bound[p] in sweep order, correct when their rank is below rank[p] (one per seed).");
    m.def("bootstrap_draw_counts", &bootstrap_draw_counts_py, py::arg("stratum_offsets").noconvert(), py::arg("seed"),
          "How often each cluster is drawn by the bootstrap resample of one seed (strata of clusters by offsets).");
}

}  // namespace pairmetrics::bindings
