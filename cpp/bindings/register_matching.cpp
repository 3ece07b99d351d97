#include <optional>
#include <stdexcept>
#include <string>

#include "../matching.hpp"
#include "common.hpp"

#include <pybind11/stl.h>

namespace pairmetrics::bindings {

namespace mt = pairmetrics::matching;

namespace {

template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
    py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

py::dict stats_dict(const mt::BlossomStats& s) {
    py::dict d;
    d["grows"] = s.grows;
    d["shrinks"] = s.shrinks;
    d["expands"] = s.expands;
    d["augments"] = s.augments;
    d["events"] = s.events;
    d["greedy_matched"] = s.greedy_matched;
    return d;
}

py::dict result_dict(const mt::BlossomResult& r) {
    py::dict d;
    d["perfect"] = r.perfect;
    d["mate"] = to_array(r.mate);
    d["y"] = to_array(r.y);
    d["parent"] = to_array(r.parent);
    d["z"] = to_array(r.z);
    d["stats"] = stats_dict(r.stats);
    return d;
}

using i32arr = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;
using i64arr = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

py::dict sparse(std::int32_t n, const i32arr& eu, const i32arr& ev, const i64arr& w, py::object progress,
                const std::optional<i64arr>& y0, const std::optional<i32arr>& mate0) {
    const auto m = static_cast<std::size_t>(eu.size());
    if (ev.size() != eu.size() || w.size() != eu.size()) throw std::invalid_argument("edge arrays differ in length");
    const std::int64_t wmax = mt::max_weight(n);
    const std::int32_t* pu = eu.data();
    const std::int32_t* pv = ev.data();
    const std::int64_t* pw = w.data();
    for (std::size_t e = 0; e < m; ++e) {
        if (pu[e] < 0 || pu[e] >= n || pv[e] < 0 || pv[e] >= n) throw std::invalid_argument("edge endpoint out of range");
        if (pw[e] < 0 || pw[e] > wmax) throw std::invalid_argument("edge weight outside [0, max_weight(n)]");
    }
    if (y0.has_value() != mate0.has_value()) throw std::invalid_argument("give both y0 and mate0 or neither");
    mt::WarmStart warm{nullptr, nullptr};
    if (y0) {
        if (y0->size() != n || mate0->size() != n) throw std::invalid_argument("y0 and mate0 need n entries");
        warm = {y0->data(), mate0->data()};
    }
    const mt::WarmStart* pwarm = y0 ? &warm : nullptr;
    const auto control = make_control(std::move(progress));
    // Safe without the GIL: the arrays are owned by this frame and only read.
    mt::BlossomResult r =
        run_without_gil(*control, [&] { return mt::min_weight_perfect_matching(n, m, pu, pv, pw, control.get(), pwarm); });
    return result_dict(r);
}

template <class T>
py::dict dense(const py::array_t<T>& D, double scale, bool ghost, int k, py::object progress) {
    if (D.ndim() != 2 || D.shape(0) != D.shape(1)) throw std::invalid_argument("D must be square");
    const auto n = static_cast<std::int32_t>(D.shape(0));
    const T* data = D.data();
    const std::ptrdiff_t rs = element_stride<T>(D, 0), cs = element_stride<T>(D, 1);
    const auto control = make_control(std::move(progress));
    mt::DenseStats stats;
    // Safe without the GIL: D is kept alive by the caller and only read.
    mt::BlossomResult r = run_without_gil(*control, [&] {
        return mt::dense_min_weight_perfect_matching<T>(data, n, rs, cs, scale, ghost, k, control.get(), &stats);
    });
    py::dict d = result_dict(r);
    d["rounds"] = stats.rounds;
    d["edges"] = stats.edges;
    d["extra_pairs"] = stats.extra_pairs;
    return d;
}

i64arr reduced_costs(const i64arr& y, const i32arr& parent, const i64arr& z, const i32arr& u, const i32arr& v,
                     const i64arr& w) {
    mt::BlossomResult r;
    r.y.assign(y.data(), y.data() + y.size());
    r.parent.assign(parent.data(), parent.data() + parent.size());
    r.z.assign(z.data(), z.data() + z.size());
    const auto n = static_cast<std::int32_t>(y.size());
    if (parent.size() != y.size() + z.size()) throw std::invalid_argument("parent must have len(y) + len(z) entries");
    if (u.size() != v.size() || u.size() != w.size()) throw std::invalid_argument("u, v, w differ in length");
    for (std::int32_t p : r.parent)
        if (p < -1 || p >= static_cast<std::int32_t>(r.parent.size())) throw std::invalid_argument("bad parent");
    const mt::DualForest forest(r);
    i64arr out(u.size());
    std::int64_t* po = out.mutable_data();
    for (py::ssize_t i = 0; i < u.size(); ++i) {
        const std::int32_t a = u.data()[i], b = v.data()[i];
        if (a < 0 || a >= n || b < 0 || b >= n) throw std::invalid_argument("vertex out of range");
        po[i] = 2 * w.data()[i] - r.y[a] - r.y[b] + forest.common_z(a, b);
    }
    return out;
}

py::array_t<double> pair_sqdist(const py::array_t<double, py::array::c_style | py::array::forcecast>& X,
                                const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& u,
                                const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& v) {
    if (X.ndim() != 2) throw std::invalid_argument("X must be 2-D");
    if (u.size() != v.size()) throw std::invalid_argument("u and v differ in length");
    const std::int64_t n = X.shape(0), d = X.shape(1);
    for (py::ssize_t i = 0; i < u.size(); ++i)
        if (u.data()[i] < 0 || u.data()[i] >= n || v.data()[i] < 0 || v.data()[i] >= n)
            throw std::invalid_argument("row index out of range");
    py::array_t<double> out(u.size());
    const double* px = X.data();
    const std::int64_t *pu = u.data(), *pv = v.data();
    double* po = out.mutable_data();
    const auto m = static_cast<std::size_t>(u.size());
    const auto control = make_control();
    // Safe without the GIL: all arrays are owned by this frame.
    run_without_gil(*control, [&] { mt::pair_squared_distances(px, d, m, pu, pv, po); });
    return out;
}

py::array_t<std::int64_t> crossmatch_batch(const py::array_t<double, py::array::c_style>& full,
                                           const py::array_t<std::int64_t, py::array::c_style>& draws,
                                           const py::array_t<std::int8_t, py::array::c_style>& z, double scale, int k,
                                           int n_threads, py::object progress) {
    if (full.ndim() != 2 || full.shape(0) != full.shape(1)) throw std::invalid_argument("full must be square");
    if (draws.ndim() != 2 || z.ndim() != 1 || draws.shape(1) != z.shape(0))
        throw std::invalid_argument("draws must be (n_draws, m) with m = len(z)");
    const std::int64_t p = full.shape(0), n_draws = draws.shape(0);
    const auto m = static_cast<std::int32_t>(draws.shape(1));
    if (m % 2) throw std::invalid_argument("the number of drawn points must be even");
    const std::int64_t* pd = draws.data();
    for (py::ssize_t i = 0; i < draws.size(); ++i)
        if (pd[i] < 0 || pd[i] >= p) throw std::invalid_argument("draw index out of range");
    const double* pf = full.data();
    const std::int8_t* pz = z.data();
    const auto control = make_control(std::move(progress));
    // Safe without the GIL: the arrays are held by the caller and only read.
    std::vector<std::int64_t> a1 = run_without_gil(*control,
        [&] { return mt::crossmatch_counts(pf, p, pd, n_draws, m, pz, scale, k, n_threads, control.get()); });
    return to_array(a1);
}

}  // namespace

void register_matching(py::module_& m) {
    m.def("_mwpm_max_weight", &mt::max_weight, py::arg("n"),
          "Largest integer edge weight accepted by the blossom solver for n vertices.");
    m.def("_mwpm_sparse", &sparse, py::arg("n"), py::arg("eu"), py::arg("ev"), py::arg("w"),
          py::arg("progress") = py::none(), py::arg("y0") = py::none(), py::arg("mate0") = py::none(),
          "Exact minimum-weight perfect matching on a sparse graph with integer weights\n"
          "(optionally warm-started from duals y0 and a matching mate0 of an earlier solve).");
    m.def("_mwpm_dense", &dense<double>, py::arg("D"), py::arg("scale"), py::arg("ghost"), py::arg("k"),
          py::arg("progress") = py::none());
    m.def("_mwpm_dense", &dense<float>, py::arg("D"), py::arg("scale"), py::arg("ghost"), py::arg("k"),
          py::arg("progress") = py::none(),
          "Exact minimum-weight perfect matching on the complete graph of a distance matrix.");
    m.def("_crossmatch_batch", &crossmatch_batch, py::arg("full"), py::arg("draws"), py::arg("z"), py::arg("scale"),
          py::arg("k"), py::arg("n_threads"), py::arg("progress") = py::none(),
          "Cross-match counts of many subsamples of one pooled distance matrix, in parallel.");
    m.def("_pair_sqdist", &pair_sqdist, py::arg("X"), py::arg("u"), py::arg("v"),
          "Squared Euclidean distances of row pairs, in a fixed summation order.");
    m.def("_mwpm_reduced_costs", &reduced_costs, py::arg("y"), py::arg("parent"), py::arg("z"), py::arg("u"),
          py::arg("v"), py::arg("w"), "Exact reduced costs of pairs against a blossom dual solution.");
}

}  // namespace pairmetrics::bindings
