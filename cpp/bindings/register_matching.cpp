// Bindings of the matching kernels. The Python layer validates every
// argument; these functions check only what the kernels need to stay in
// bounds, release the GIL and hand results back as dicts of arrays.
#include <algorithm>
#include <memory>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "../matching.hpp"
#include "../matching_sparse.hpp"
#include "common.hpp"
#include "scipy_blas.hpp"

#include <pybind11/stl.h>

namespace pairmetrics::bindings {

namespace mt = pairmetrics::matching;

namespace {

// A member of a struct under its name in Python.
template <class S, class T>
std::pair<const char*, T S::*> field(const char* name, T S::* member) {
    return {name, member};
}

// The given members of s as a dict, in their order.
template <class S, class... T>
py::dict fields_dict(const S& s, std::pair<const char*, T S::*>... fields) {
    py::dict d;
    ((d[fields.first] = s.*fields.second), ...);
    return d;
}

py::dict stats_dict(const mt::BlossomStats& s) {
    using S = mt::BlossomStats;
    return fields_dict(s, field("grows", &S::grows), field("shrinks", &S::shrinks), field("expands", &S::expands),
                       field("augments", &S::augments), field("events", &S::events),
                       field("greedy_matched", &S::greedy_matched), field("freed", &S::freed),
                       field("opened", &S::opened));
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
using f64arr = py::array_t<double, py::array::c_style | py::array::forcecast>;

py::dict sparse(std::int32_t n, const i32arr& eu, const i32arr& ev, const i64arr& w, py::object progress,
                const std::optional<i64arr>& y0, const std::optional<i32arr>& mate0) {
    const auto m = static_cast<std::size_t>(eu.size());
    if (ev.size() != eu.size() || w.size() != eu.size()) throw std::invalid_argument("edge arrays differ in length");
    const std::int64_t wmax = mt::max_weight(n);
    const std::int32_t* pu = eu.data();
    const std::int32_t* pv = ev.data();
    const std::int64_t* pw = w.data();
    for (std::size_t e = 0; e < m; ++e) {
        if (pu[e] < 0 || pu[e] >= n || pv[e] < 0 || pv[e] >= n)
            throw std::invalid_argument("edge endpoint out of range");
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
        run_without_gil(*control, [&] { return mt::min_weight_perfect_matching(n, m, pu, pv, pw, *control, pwarm); });
    return result_dict(r);
}

// The provider of the rows of X (float32 tiles allowed), built without the
// GIL: ordering millions of points takes seconds, and Ctrl-C stops it.
std::unique_ptr<const mt::EuclideanDistances> euclidean_provider(const f64arr& X, bool squared, Control& control) {
    const auto n = static_cast<std::int32_t>(X.shape(0));
    const std::int64_t d = X.shape(1);
    const double* data = X.data();
    const Blas gemm = scipy_gemm();  // looked up with the GIL held
    return run_without_gil(
        control, [&] { return std::make_unique<const mt::EuclideanDistances>(data, n, d, squared, gemm, control); });
}

// The complete-graph solve on a provider, packaged for Python (real duals).
py::dict complete(const mt::Distances& D, bool ghost, int k, int n_threads, Control& control,
                  const mt::CompleteOptions& base = {}) {
    mt::CompleteOptions opt = base;
    opt.k = k;
    opt.ghost = ghost;
    opt.n_threads = n_threads;
    mt::CompleteStats stats;
    mt::CompleteResult res =
        run_without_gil(control, [&] { return mt::complete_min_weight_perfect_matching(D, opt, control, &stats); });
    const mt::BlossomResult& r = res.blossom;
    py::dict d;
    d["mate"] = to_array(r.mate);
    py::array_t<double> y(static_cast<py::ssize_t>(r.y.size())), z(static_cast<py::ssize_t>(r.z.size()));
    // Integers to distances: divided first, then times the cap, so that a
    // tiny cap (subnormal unit) costs only the last rounding.
    const double per_cap = 2.0 * static_cast<double>(mt::max_weight(static_cast<std::int32_t>(r.y.size())));
    auto real = [&](std::int64_t x) { return res.cap > 0 ? static_cast<double>(x) / per_cap * res.cap : x * res.unit; };
    for (std::size_t i = 0; i < r.y.size(); ++i) y.mutable_data()[i] = real(r.y[i]);
    for (std::size_t i = 0; i < r.z.size(); ++i) z.mutable_data()[i] = real(r.z[i]);
    d["y"] = y;
    d["z"] = z;
    d["parent"] = to_array(r.parent);
    d["cost"] = res.cost;
    d["resolution"] = res.resolution;
    d["max_distance"] = res.max_distance;
    py::dict s = stats_dict(stats.last);
    s["rounds"] = stats.rounds;
    s["passes"] = stats.passes;
    s["edges"] = stats.edges;
    s["extra_pairs"] = stats.extra_pairs;
    s["prefix_pairs"] = stats.prefix_pairs;
    s["inside_pairs"] = stats.inside_pairs;
    s["screen_pairs"] = stats.screen_pairs;
    s["violated_pairs"] = stats.violated_pairs;
    s["prefix_screened"] = stats.prefix_screened;
    s["inside_screened"] = stats.inside_screened;
    s["screens"] = stats.screens;
    s["partial_screens"] = stats.partial_screens;
    s["resumes"] = stats.resumes;
    s["rebuilds"] = stats.rebuilds;
    s["resume_freed"] = stats.resume_freed;
    s["resume_opened"] = stats.resume_opened;
    s["dirty_rows"] = stats.dirty_rows;
    s["prefix_skipped"] = stats.prefix_skipped;
    s["inside_skipped"] = stats.inside_skipped;
    s["seconds_neighbours"] = stats.seconds_neighbours;
    s["seconds_solve"] = stats.seconds_solve;
    s["seconds_pricing"] = stats.seconds_pricing;
    s["seconds_first_solve"] = stats.seconds_first_solve;
    s["seconds_screen"] = stats.seconds_screen;
    s["seconds_prefix"] = stats.seconds_prefix;
    s["seconds_inside"] = stats.seconds_inside;
    d["stats"] = s;
    return d;
}

template <class T>
py::dict dense(const py::array_t<T>& D, double max_distance, int k, int n_threads, py::object progress) {
    if (D.ndim() != 2 || D.shape(0) != D.shape(1) || D.shape(0) < 2)
        throw std::invalid_argument("D must be square, N >= 2");
    if (!(max_distance >= 0)) throw std::invalid_argument("max_distance must be >= 0");
    const auto n = static_cast<std::int32_t>(D.shape(0));
    const mt::DenseDistances<T> provider(D.data(), n, element_stride<T>(D, 0), element_stride<T>(D, 1), max_distance);
    const auto control = make_control(std::move(progress));
    // Safe without the GIL: D is kept alive by the caller and only read.
    return complete(provider, n % 2 == 1, k, n_threads, *control);
}

// screen_inside_from, screen_always, resume, full_pricing: tests and comparisons (see CompleteOptions).
py::dict points(const f64arr& X, bool squared, int k, int n_threads, py::object progress, int screen_inside_from,
                bool screen_always, bool resume, bool full_pricing) {
    if (X.ndim() != 2 || X.shape(0) < 2) throw std::invalid_argument("X must be 2-D with N >= 2 rows");
    const auto n = static_cast<std::int32_t>(X.shape(0));
    const auto control = make_control(std::move(progress));
    const auto provider = euclidean_provider(X, squared, *control);
    mt::CompleteOptions opt;
    opt.screen_inside_from = screen_inside_from;
    opt.screen_every_stretch = screen_always;
    opt.resume = resume;
    opt.full_pricing = full_pricing;
    return complete(*provider, n % 2 == 1, k, n_threads, *control, opt);
}

py::dict certify(const mt::Distances& D, const f64arr& y, const i32arr& parent, const f64arr& z, const i32arr& mate,
                 int n_threads, Control& control) {
    const std::int32_t n = D.size();
    const auto nv = static_cast<std::int32_t>(y.size());
    if (nv != n && nv != n + 1) throw std::invalid_argument("y needs N or N + 1 entries");
    if (mate.size() != nv || parent.size() != y.size() + z.size())
        throw std::invalid_argument("mate needs len(y) entries and parent len(y) + len(z)");
    std::vector<std::int32_t> par(parent.data(), parent.data() + parent.size());
    for (std::int32_t p : par)
        if (p < -1 || p >= static_cast<std::int32_t>(par.size())) throw std::invalid_argument("bad blossom parent");
    for (py::ssize_t i = 0; i < mate.size(); ++i)
        if (mate.data()[i] < 0 || mate.data()[i] >= nv) throw std::invalid_argument("mate out of range");
    const double *py_ = y.data(), *pz = z.data();
    const std::int32_t* pm = mate.data();
    mt::Certificate c =
        run_without_gil(control, [&] { return mt::certificate(D, nv == n + 1, py_, par, pz, pm, n_threads, control); });
    using C = mt::Certificate;
    return fields_dict(
        c, field("max_violation", &C::max_violation), field("max_violation_bound", &C::max_violation_bound),
        field("lowering", &C::lowering), field("max_matched_slack", &C::max_matched_slack), field("min_z", &C::min_z),
        field("dual_objective", &C::dual_objective), field("cost", &C::cost), field("error_bound", &C::error_bound),
        field("magnitude", &C::magnitude), field("complete", &C::complete));
}

template <class T>
py::dict certificate_dense(const py::array_t<T>& D, const f64arr& y, const i32arr& parent, const f64arr& z,
                           const i32arr& mate, int n_threads, py::object progress) {
    if (D.ndim() != 2 || D.shape(0) != D.shape(1)) throw std::invalid_argument("D must be square");
    const mt::DenseDistances<T> provider(D.data(), static_cast<std::int32_t>(D.shape(0)), element_stride<T>(D, 0),
                                         element_stride<T>(D, 1), 0.0);  // the certificate needs no bound
    const auto control = make_control(std::move(progress));
    return certify(provider, y, parent, z, mate, n_threads, *control);
}

py::dict certificate_points(const f64arr& X, bool squared, const f64arr& y, const i32arr& parent, const f64arr& z,
                            const i32arr& mate, int n_threads, py::object progress) {
    if (X.ndim() != 2) throw std::invalid_argument("X must be 2-D");
    const auto control = make_control(std::move(progress));
    const auto provider = euclidean_provider(X, squared, *control);
    return certify(*provider, y, parent, z, mate, n_threads, *control);
}

py::array_t<std::int64_t> crossmatch_batch(const py::array_t<double, py::array::c_style>& full,
                                           const py::array_t<std::int64_t, py::array::c_style>& draws,
                                           const py::array_t<std::int8_t, py::array::c_style>& z, int k, int n_threads,
                                           py::object progress) {
    if (full.ndim() != 2 || full.shape(0) != full.shape(1)) throw std::invalid_argument("full must be square");
    if (draws.ndim() != 2 || z.ndim() != 1 || draws.shape(1) != z.shape(0))
        throw std::invalid_argument("draws must be (n_draws, m) with m = len(z)");
    const std::int64_t p = full.shape(0), n_draws = draws.shape(0);
    const auto m = static_cast<std::int32_t>(draws.shape(1));
    if (m < 2) throw std::invalid_argument("draws need at least 2 points");
    const std::int64_t* pd = draws.data();
    for (py::ssize_t i = 0; i < draws.size(); ++i)
        if (pd[i] < 0 || pd[i] >= p) throw std::invalid_argument("draw index out of range");
    const double* pf = full.data();
    const std::int8_t* pz = z.data();
    auto fill = [&](std::int64_t r, double* D) {
        const std::int64_t* idx = pd + r * m;
        for (std::int32_t i = 0; i < m; ++i) {
            const double* row = pf + idx[i] * p;
            for (std::int32_t j = 0; j < m; ++j) D[static_cast<std::size_t>(i) * m + j] = row[idx[j]];
        }
    };
    const auto control = make_control(std::move(progress));
    // Safe without the GIL: the arrays are held by the caller and only read.
    std::vector<std::int64_t> a1 =
        run_without_gil(*control, [&] { return mt::crossmatch_counts(n_draws, m, pz, k, n_threads, *control, fill); });
    return to_array(a1);
}

py::array_t<std::int64_t> crossmatch_stack(const py::array_t<double, py::array::c_style>& Ds,
                                           const py::array_t<std::int8_t, py::array::c_style>& z, int k, int n_threads,
                                           py::object progress) {
    if (Ds.ndim() != 3 || Ds.shape(1) != Ds.shape(2) || Ds.shape(1) != z.shape(0) || Ds.shape(1) < 2)
        throw std::invalid_argument("Ds must be (n_draws, m, m) with m = len(z) >= 2");
    const std::int64_t n_draws = Ds.shape(0);
    const auto m = static_cast<std::int32_t>(Ds.shape(1));
    const double* pf = Ds.data();
    const std::int8_t* pz = z.data();
    const std::size_t mm = static_cast<std::size_t>(m) * m;
    auto fill = [&](std::int64_t r, double* D) { std::copy(pf + r * mm, pf + (r + 1) * mm, D); };
    const auto control = make_control(std::move(progress));
    std::vector<std::int64_t> a1 =
        run_without_gil(*control, [&] { return mt::crossmatch_counts(n_draws, m, pz, k, n_threads, *control, fill); });
    return to_array(a1);
}

py::array_t<double> euclidean_matrix(const f64arr& X, bool squared, int n_threads) {
    if (X.ndim() != 2) throw std::invalid_argument("X must be 2-D");
    const auto n = static_cast<std::int32_t>(X.shape(0));
    const std::int64_t d = X.shape(1);
    const double* data = X.data();
    const Blas gemm = scipy_gemm();
    py::array_t<double> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(n)});
    double* po = out.mutable_data();
    const auto control = make_control();
    run_without_gil(*control, [&] {
        const mt::EuclideanDistances provider(data, n, d, squared, gemm, *control, false);
        provider.matrix(po, n_threads, *control);
    });
    return out;
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

// The exact sparse solve on int64 weights, or on i128 weights given as
// high and low 64-bit halves (w = hi * 2^64 + lo).
py::dict sparse_exact(std::int32_t n, const i32arr& eu, const i32arr& ev, const i64arr& w_hi,
                      const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& w_lo, bool wide,
                      std::int32_t price_above, std::int32_t start_edges, py::object progress) {
    const auto m = static_cast<std::size_t>(eu.size());
    if (ev.size() != eu.size() || w_hi.size() != eu.size() || (wide && w_lo.size() != eu.size()))
        throw std::invalid_argument("edge arrays differ in length");
    if (n < 0) throw std::invalid_argument("n must be >= 0");
    const std::int32_t *pu = eu.data(), *pv = ev.data();
    for (std::size_t e = 0; e < m; ++e)
        if (pu[e] < 0 || pu[e] >= n || pv[e] < 0 || pv[e] >= n)
            throw std::invalid_argument("edge endpoint out of range");
    mt::SparseOptions opt;
    opt.price_above = std::max(0, price_above);
    opt.start_edges = std::max(1, start_edges);
    const auto control = make_control(std::move(progress));
    py::dict d;
    auto pack = [&](const auto& sol) {
        d["perfect"] = sol.blossom.perfect;
        d["mate"] = to_array(sol.blossom.mate);
        d["rounds"] = sol.rounds;
        d["edges"] = sol.edges;
        d["stats"] = stats_dict(sol.blossom.stats);
    };
    if (!wide) {
        const std::int64_t* pw = w_hi.data();
        const std::int64_t top = mt::max_weight(n);
        for (std::size_t e = 0; e < m; ++e)
            if (pw[e] < 0 || pw[e] > top) throw std::invalid_argument("edge weight outside [0, max_weight(n)]");
        pack(
            run_without_gil(*control, [&] { return mt::solve_sparse<std::int64_t>(n, m, pu, pv, pw, opt, *control); }));
        return d;
    }
    std::vector<mt::i128> w(m);
    const mt::i128 top = mt::max_weight_128(n);
    for (std::size_t e = 0; e < m; ++e) {
        w[e] = static_cast<mt::i128>(w_hi.data()[e]) * (static_cast<mt::i128>(1) << 64) + w_lo.data()[e];
        if (w[e] < 0 || w[e] > top) throw std::invalid_argument("edge weight outside [0, max_weight_128(n)]");
    }
    pack(run_without_gil(*control, [&] { return mt::solve_sparse<mt::i128>(n, m, pu, pv, w.data(), opt, *control); }));
    return d;
}

// Sum of z over the blossoms holding each vertex (the blossom forest of a solution).
py::array_t<double> enclosing_z(const i32arr& parent, const f64arr& z, std::int32_t n_vertices) {
    if (n_vertices < 0 || parent.size() != n_vertices + z.size())
        throw std::invalid_argument("parent must have n_vertices + len(z) entries");
    mt::BasicBlossomResult<double> r;
    r.y.assign(static_cast<std::size_t>(n_vertices), 0.0);
    r.parent.assign(parent.data(), parent.data() + parent.size());
    r.z.assign(z.data(), z.data() + z.size());
    for (std::int32_t p : r.parent)
        if (p < -1 || p >= static_cast<std::int32_t>(r.parent.size()) || (p >= 0 && p < n_vertices))
            throw std::invalid_argument("bad blossom parent");
    const mt::BasicDualForest<double> forest(r);
    py::array_t<double> out(n_vertices);
    for (std::int32_t v = 0; v < n_vertices; ++v) out.mutable_data()[v] = forest.enclosing_z(v);
    return out;
}

}  // namespace

void register_matching(py::module_& m) {
    m.def("_mwpm_enclosing_z", &enclosing_z, py::arg("parent"), py::arg("z"), py::arg("n_vertices"),
          "Sum of the blossom duals z over the blossoms holding each vertex.");
    m.def(
        "_mwpm_max_weight_128",
        [](std::int32_t n) {
            const mt::i128 top = mt::max_weight_128(n);
            return py::make_tuple(static_cast<std::int64_t>(top >> 64),
                                  static_cast<std::uint64_t>(top & ~std::uint64_t{0}));
        },
        py::arg("n"), "Largest 128-bit edge weight for n vertices, as (high, low) 64-bit halves.");
    m.def("_mwpm_sparse_exact", &sparse_exact, py::arg("n"), py::arg("eu"), py::arg("ev"), py::arg("w_hi"),
          py::arg("w_lo"), py::arg("wide"), py::arg("price_above"), py::arg("start_edges"),
          py::arg("progress") = py::none(),
          "Exact, priced and certified minimum-weight perfect matching of a sparse graph with\n"
          "integer weights: int64 (w_hi; wide=False) or 128-bit (w_hi * 2**64 + w_lo; wide=True).");
    m.def("_mwpm_max_weight", &mt::max_weight, py::arg("n"),
          "Largest integer edge weight accepted by the blossom solver for n vertices.");
    m.def("_mwpm_sparse", &sparse, py::arg("n"), py::arg("eu"), py::arg("ev"), py::arg("w"),
          py::arg("progress") = py::none(), py::arg("y0") = py::none(), py::arg("mate0") = py::none(),
          "Exact minimum-weight perfect matching on a sparse graph with integer weights\n"
          "(optionally warm-started from duals y0 and a matching mate0 of an earlier solve).");
    m.def("_mwpm_dense", &dense<double>, py::arg("D"), py::arg("max_distance"), py::arg("k"), py::arg("n_threads"),
          py::arg("progress") = py::none());
    m.def("_mwpm_dense", &dense<float>, py::arg("D"), py::arg("max_distance"), py::arg("k"), py::arg("n_threads"),
          py::arg("progress") = py::none(),
          "Exact minimum-weight perfect matching on the complete graph of a distance matrix\n"
          "(max_distance: the largest entry of D).");
    m.def("_mwpm_points", &points, py::arg("X"), py::arg("squared"), py::arg("k"), py::arg("n_threads"),
          py::arg("progress") = py::none(), py::arg("screen_inside_from") = mt::CompleteOptions{}.screen_inside_from,
          py::arg("screen_always") = false, py::arg("resume") = mt::CompleteOptions{}.resume,
          py::arg("full_pricing") = false,
          "Exact minimum-weight perfect matching on the complete Euclidean graph of the rows of X.");
    m.def("_mwpm_certificate_dense", &certificate_dense<double>, py::arg("D"), py::arg("y"), py::arg("parent"),
          py::arg("z"), py::arg("mate"), py::arg("n_threads"), py::arg("progress") = py::none());
    m.def("_mwpm_certificate_dense", &certificate_dense<float>, py::arg("D"), py::arg("y"), py::arg("parent"),
          py::arg("z"), py::arg("mate"), py::arg("n_threads"), py::arg("progress") = py::none(),
          "LP dual certificate of a matching against every pair of a distance matrix.");
    m.def("_mwpm_certificate_points", &certificate_points, py::arg("X"), py::arg("squared"), py::arg("y"),
          py::arg("parent"), py::arg("z"), py::arg("mate"), py::arg("n_threads"), py::arg("progress") = py::none(),
          "LP dual certificate of a matching against every pair of Euclidean points.");
    m.def("_crossmatch_batch", &crossmatch_batch, py::arg("full"), py::arg("draws"), py::arg("z"), py::arg("k"),
          py::arg("n_threads"), py::arg("progress") = py::none(),
          "Cross-match counts of many subsamples of one pooled distance matrix, in parallel.");
    m.def("_crossmatch_stack", &crossmatch_stack, py::arg("Ds"), py::arg("z"), py::arg("k"), py::arg("n_threads"),
          py::arg("progress") = py::none(), "Cross-match counts of a stack of distance matrices, in parallel.");
    m.def("_euclidean_matrix", &euclidean_matrix, py::arg("X"), py::arg("squared"), py::arg("n_threads"),
          "Euclidean distance matrix of the rows of X (BLAS tiles, cancellation-guarded).");
    m.def("_mwpm_reduced_costs", &reduced_costs, py::arg("y"), py::arg("parent"), py::arg("z"), py::arg("u"),
          py::arg("v"), py::arg("w"), "Exact reduced costs of pairs against a blossom dual solution.");
}

}  // namespace pairmetrics::bindings
