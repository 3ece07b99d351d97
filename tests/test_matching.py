import dataclasses
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pairmetrics as pm
import pytest
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics import _core
from pairmetrics.reference import matching as ref
from scipy.spatial.distance import cdist


def random_points(rng, n, d=3, ties=False):
    X = rng.normal(size=(n, d))
    if ties:
        X = np.round(X)
    return X


def nx_cost(D):
    """networkx optimum on the complete graph (ghost at 0 for odd N)."""
    n = D.shape[0]
    m = n + n % 2
    G = nx.Graph()
    for i in range(m):
        for j in range(i + 1, m):
            G.add_edge(i, j, weight=float(D[i, j]) if j < n else 0.0)
    M = nx.min_weight_matching(G)
    assert len(M) * 2 == m
    return sum(G[a][b]["weight"] for a, b in M)


def check_matching(res, D):
    n = D.shape[0]
    mate = res.mate
    assert mate.shape == (n,) and mate.dtype == np.int64
    dropped = np.flatnonzero(mate == -1)
    assert dropped.size == n % 2
    if n % 2:
        assert res.dropped == int(dropped[0])
    else:
        assert res.dropped is None
    kept = np.flatnonzero(mate >= 0)
    assert (mate[mate[kept]] == kept).all() and (mate[kept] != kept).all()
    assert res.pairs.shape == (n // 2, 2)
    assert (res.pairs[:, 0] < res.pairs[:, 1]).all()
    assert res.cost == pytest.approx(float(sum(D[i, j] for i, j in res.pairs)), rel=1e-12, abs=1e-12)
    assert res.verify()


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


@pytest.mark.parametrize("n", list(range(2, 13)))
def test_brute_force_small(n):
    rng = np.random.default_rng(n)
    for ties in (False, True):
        D = cdist(*(2 * [random_points(rng, n, ties=ties)]))
        res = pm.min_weight_perfect_matching(D)
        check_matching(res, D)
        assert close(res.cost, ref.min_weight_perfect_matching(D)[0])


@settings(max_examples=examples(60))
@given(st.integers(2, 10), st.integers(0, 2**32 - 1), st.sampled_from([2, 3, 10, 1000]))
def test_integer_weights_vs_brute_force(n, seed, top):
    # Integer, tie-heavy weights (not a metric): several optima, compare costs.
    rng = np.random.default_rng(seed)
    A = rng.integers(0, top, size=(n, n)).astype(float)
    D = np.triu(A, 1) + np.triu(A, 1).T
    res = pm.min_weight_perfect_matching(D)
    check_matching(res, D)
    assert close(res.cost, ref.min_weight_perfect_matching(D)[0])


@settings(max_examples=examples(60))
@given(st.integers(2, 11), st.integers(1, 3), st.integers(0, 2**32 - 1), st.sampled_from(["euclidean", "sqeuclidean"]))
def test_points_with_ties_vs_brute_force(n, d, seed, metric):
    # Small integer coordinates: duplicated points and many equal distances.
    X = np.random.default_rng(seed).integers(0, 3, size=(n, d))
    D = cdist(X, X, metric)
    res = pm.min_weight_perfect_matching(points=X, metric=metric, n_neighbors=1)
    check_matching(res, D)
    assert close(res.cost, ref.min_weight_perfect_matching(D)[0])


def test_verify_resolves_the_gap_to_what_n_float64_duals_can():
    # Integer points, squared distances, N odd: an optimum of cost 0 whose duals (+-1) leave a gap of a few
    # epsilons across the N constraints; verify() once refused it.
    X = np.random.default_rng(3301981).integers(0, 3, size=(9, 2))
    res = pm.min_weight_perfect_matching(points=X, metric="sqeuclidean", n_neighbors=1)
    assert res.cost == 0 and res.verify()
    # Cost 0 again, duals +-1 on the solve's integer grid (a fraction of the largest distance, 4): the floor
    # scales with that distance too, not only with the cost and the duals.
    X = np.random.default_rng(192345).integers(0, 3, size=(10, 1))
    res = pm.min_weight_perfect_matching(points=X, metric="sqeuclidean", n_neighbors=1)
    assert res.cost == 0 and res.verify()


def test_point_path_many_rounds_matches_dense():
    rng = np.random.default_rng(12)
    for n, d in ((501, 30), (400, 2)):
        X = rng.standard_t(2, size=(n, d))  # heavy tails: outliers need long edges
        a = pm.min_weight_perfect_matching(points=X, n_neighbors=1)
        b = pm.min_weight_perfect_matching(cdist(X, X), n_neighbors=1)
        assert close(a.cost, b.cost) and a.verify()
        assert a.stats["rounds"] >= 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_point_dtypes(dtype):
    rng = np.random.default_rng(13)
    X = rng.integers(0, 2 if dtype == np.bool_ else 7, size=(15, 3)).astype(dtype)
    expected = pm.min_weight_perfect_matching(cdist(X.astype(np.float64), X.astype(np.float64))).cost
    assert close(pm.min_weight_perfect_matching(points=X).cost, expected)


def test_progress_option_runs():
    rng = np.random.default_rng(14)
    X = random_points(rng, 30)
    res = pm.min_weight_perfect_matching(points=X, progress=True)
    assert close(res.cost, pm.min_weight_perfect_matching(points=X).cost)
    D = cdist(X, X)
    res = pm.min_weight_perfect_matching(D, progress=True)
    assert res.verify()


def test_kernel_stops_when_the_progress_callback_raises():
    # The same path as Ctrl-C: the kernel throws, the Python error comes back.
    D = cdist(*(2 * [random_points(np.random.default_rng(15), 30)]))
    calls = []

    def stop(done, total):
        calls.append((done, total))
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        _core._mwpm_dense(D, float(D.max()), 5, 1, stop)
    assert len(calls) == 1


@pytest.mark.parametrize("n,seed", [(31, 0), (60, 1), (101, 2), (140, 3)])
def test_vs_networkx(n, seed):
    rng = np.random.default_rng(seed)
    if seed % 2:
        A = rng.random((n, n))  # random weights, no geometry
        D = np.triu(A, 1) + np.triu(A, 1).T
    else:
        D = cdist(*(2 * [random_points(rng, n, d=5)]))
    res = pm.min_weight_perfect_matching(D)
    check_matching(res, D)
    assert close(res.cost, nx_cost(D))


def test_dense_and_point_paths_agree():
    rng = np.random.default_rng(5)
    for n in (2, 3, 17, 150):
        X = random_points(rng, n, d=4)
        a = pm.min_weight_perfect_matching(cdist(X, X))
        b = pm.min_weight_perfect_matching(points=X)
        assert close(a.cost, b.cost)
        assert b.verify()
        c = pm.min_weight_perfect_matching(points=X, metric="cityblock")
        assert close(c.cost, pm.min_weight_perfect_matching(cdist(X, X, "cityblock")).cost)


def test_other_metrics_and_callables():
    rng = np.random.default_rng(19)
    X = random_points(rng, 13, d=3)
    for metric, kwargs in (("minkowski", {"p": 3}), ("cosine", {}), (lambda a, b: np.abs(a - b).max(), {})):
        D = cdist(X, X, metric, **kwargs)
        res = pm.min_weight_perfect_matching(points=X, metric=metric, **kwargs)
        assert close(res.cost, ref.min_weight_perfect_matching(D)[0]) and res.verify()


def test_duplicated_points_and_all_equal():
    rng = np.random.default_rng(7)
    X = np.repeat(random_points(rng, 20), 3, axis=0)  # 60 points, triplets
    res = pm.min_weight_perfect_matching(points=X)
    check_matching(res, cdist(X, X))
    # Each triplet leaves one point to pair elsewhere: 10 cross pairs at least.
    assert res.cost > 0
    assert close(res.cost, nx_cost(cdist(X, X)))
    D = np.ones((9, 9)) - np.eye(9)
    res = pm.min_weight_perfect_matching(D)
    assert res.cost == 4.0 and res.verify()
    Z = np.zeros((6, 6))
    res = pm.min_weight_perfect_matching(Z)
    assert res.cost == 0.0 and res.verify()


def test_point_path_degenerate_and_squared():
    # All points identical, collinear duplicates, sqeuclidean vs its matrix.
    for X in (np.zeros((7, 3)), np.ones((6, 2)), np.repeat(np.arange(5.0), 2)[:, None]):
        res = pm.min_weight_perfect_matching(points=X)
        assert res.cost == 0.0 and res.verify()
    rng = np.random.default_rng(8)
    X = random_points(rng, 41, d=3, ties=True)
    a = pm.min_weight_perfect_matching(points=X, metric="sqeuclidean", n_neighbors=2)
    b = pm.min_weight_perfect_matching(cdist(X, X, "sqeuclidean"))
    assert close(a.cost, b.cost) and a.verify()
    c = pm.min_weight_perfect_matching(points=X, n_neighbors=1)
    assert close(c.cost, nx_cost(cdist(X, X))) and c.verify()


def test_extreme_magnitudes():
    # Tiny or huge coordinates/distances are solved on a rescaled copy.
    rng = np.random.default_rng(18)
    X = random_points(rng, 31)
    D = cdist(X, X)
    base = pm.min_weight_perfect_matching(D)
    for f in (1e-200, 1e-125, 1e125, 1e200):
        a = pm.min_weight_perfect_matching(points=X * f)
        Df = D * f  # verify() reads the caller's matrix (the result keeps no reference to it)
        b = pm.min_weight_perfect_matching(Df)
        for res in (a, b):
            assert res.cost == pytest.approx(base.cost * f, rel=1e-12)
            assert (res.mate == base.mate).all() and res.verify()
    for f in (1e-150, 1e150):
        c = pm.min_weight_perfect_matching(points=X * f, metric="sqeuclidean")
        assert c.cost == pytest.approx(pm.min_weight_perfect_matching(D**2).cost * f * f, rel=1e-12) and c.verify()


def test_odd_n_drops_least_matchable_point():
    # Three tight pairs and one far-away point: the far one is dropped.
    X = np.array([[0.0], [0.1], [5.0], [5.1], [10.0], [10.1], [100.0]])
    res = pm.min_weight_perfect_matching(points=X)
    assert res.dropped == 6 and res.mate[6] == -1
    assert res.cost == pytest.approx(0.3)


def test_n_neighbors_only_changes_speed():
    rng = np.random.default_rng(11)
    D = cdist(*(2 * [random_points(rng, 120, d=2)]))
    costs = {k: pm.min_weight_perfect_matching(D, n_neighbors=k).cost for k in (1, 2, 5, 50, 200)}
    assert all(close(c, costs[5]) for c in costs.values())


def test_verify_rejects_tampered_certificate():
    rng = np.random.default_rng(3)
    D = cdist(*(2 * [random_points(rng, 40)]))
    res = pm.min_weight_perfect_matching(D)
    assert res.verify()
    y = res.y.copy()
    y[0] += 0.1  # infeasible duals
    assert not dataclasses.replace(res, y=y).verify()
    # A worse matching with the old duals: not tight.
    mate = res.mate.copy()
    i, j = res.pairs[0]
    k, l = res.pairs[1]
    mate[[i, j, k, l]] = [k, l, i, j]
    bad = dataclasses.replace(res, mate=mate, cost=res.cost + D[i, k] + D[j, l] - D[i, j] - D[k, l])
    assert not bad.verify()
    cert = res.certificate()
    assert cert["gap_bound"] <= 1e-9 * res.cost + 1e-9
    assert cert["min_z"] >= 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes(dtype):
    rng = np.random.default_rng(2)
    A = rng.integers(0, 2 if dtype == np.bool_ else 50, size=(11, 11))
    D = (np.triu(A, 1) + np.triu(A, 1).T).astype(dtype)
    expected = pm.min_weight_perfect_matching(D.astype(np.float64)).cost
    assert pm.min_weight_perfect_matching(D).cost == expected
    assert pm.min_weight_perfect_matching(D.tolist()).cost == expected


def test_readonly_noncontiguous_and_lists():
    rng = np.random.default_rng(4)
    X = random_points(rng, 40)
    big = cdist(X, X)
    D = big[::2, ::2]
    expected = pm.min_weight_perfect_matching(np.ascontiguousarray(D))
    ro = D.copy()
    ro.setflags(write=False)
    for variant in (D, ro, np.asfortranarray(D), D.astype(np.float32)[:, :], D.tolist()):
        res = pm.min_weight_perfect_matching(variant)
        if getattr(variant, "dtype", None) == np.float32:
            assert close(res.cost, pm.min_weight_perfect_matching(D.astype(np.float32).astype(float)).cost)
        else:
            assert res.cost == expected.cost
            assert (res.mate == expected.mate).all()
    Xs = X[::2]
    assert close(pm.min_weight_perfect_matching(points=Xs).cost, pm.min_weight_perfect_matching(points=Xs.copy()).cost)
    assert close(pm.min_weight_perfect_matching(points=Xs.tolist()).cost, expected.cost)


def test_float32_is_read_in_place_and_exact_for_its_values():
    rng = np.random.default_rng(6)
    D = cdist(*(2 * [random_points(rng, 30)])).astype(np.float32)
    res = pm.min_weight_perfect_matching(D)
    assert close(res.cost, nx_cost(D.astype(np.float64)))


def test_bad_input():
    good = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="D"):
        pm.min_weight_perfect_matching(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="D"):
        pm.min_weight_perfect_matching(np.zeros(4))
    with pytest.raises(ValueError, match="symmetric"):
        pm.min_weight_perfect_matching(np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="D.*NaN"):
        pm.min_weight_perfect_matching(np.array([[0.0, np.nan], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="D.*infinite"):
        pm.min_weight_perfect_matching(np.array([[0.0, np.inf], [np.inf, 0.0]]))
    with pytest.raises(ValueError, match="D.*negative"):
        pm.min_weight_perfect_matching(-good)
    with pytest.raises(ValueError, match="D.*diagonal"):
        pm.min_weight_perfect_matching(good + 1)
    with pytest.raises(ValueError, match="N >= 2"):
        pm.min_weight_perfect_matching(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="points"):
        pm.min_weight_perfect_matching(points=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="points"):
        pm.min_weight_perfect_matching(points=np.array([[0.0], [np.nan]]))
    with pytest.raises(ValueError, match="exactly one"):
        pm.min_weight_perfect_matching()
    with pytest.raises(ValueError, match="exactly one"):
        pm.min_weight_perfect_matching(good, points=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="metric"):
        pm.min_weight_perfect_matching(points=np.zeros((2, 1)), metric="nope")
    with pytest.raises(ValueError, match="n_neighbors"):
        pm.min_weight_perfect_matching(good, n_neighbors=0)
    with pytest.raises(TypeError, match="n_neighbors"):
        pm.min_weight_perfect_matching(good, n_neighbors=2.5)
    with pytest.raises(TypeError, match="'k'"):  # the former name of n_neighbors
        pm.min_weight_perfect_matching(good, k=3)
    with pytest.raises(TypeError, match="D"):
        pm.min_weight_perfect_matching(np.array([["a", "b"], ["c", "d"]]))


def test_sparse_kernel_warm_start_from_any_point():
    # A warm start only changes the work: from arbitrary duals and an
    # arbitrary (even inconsistent) matching the optimum is the same.
    rng = np.random.default_rng(16)
    for _trial in range(60):
        n = int(rng.integers(1, 16)) * 2
        iu, ju = np.triu_indices(n, 1)
        keep = rng.random(iu.size) < 0.6
        eu = np.concatenate([iu[keep], np.arange(n - 1)]).astype(np.int32)
        ev = np.concatenate([ju[keep], np.arange(1, n)]).astype(np.int32)
        w = rng.integers(0, 50, size=eu.size).astype(np.int64)
        cold = _core._mwpm_sparse(n, eu, ev, w)
        y0 = rng.integers(-200, 200, size=n).astype(np.int64)
        mate0 = rng.permutation(n).astype(np.int32)
        warm = _core._mwpm_sparse(n, eu, ev, w, y0=y0, mate0=mate0)
        again = _core._mwpm_sparse(n, eu, ev, w, y0=cold["y"], mate0=cold["mate"])
        costs = []
        for r in (cold, warm, again):
            assert r["perfect"]
            rc = _core._mwpm_reduced_costs(r["y"], r["parent"], r["z"], eu, ev, w)
            assert (rc >= 0).all()
            m = r["mate"]
            weight = {}
            for a, b, c in zip(eu.tolist(), ev.tolist(), w.tolist()):
                weight[(a, b)] = min(weight.get((a, b), 1 << 60), c)
            costs.append(sum(weight[(min(i, m[i]), max(i, m[i]))] for i in range(n) if m[i] > i))
        assert costs[0] == costs[1] == costs[2]


def test_reduced_costs_sum_common_blossoms():
    # Check the O(1) common-ancestor lookup against explicit ancestor sets,
    # on solutions with nested blossoms (heavy-tailed points nest deeply).
    rng = np.random.default_rng(17)
    nested = 0
    for _trial in range(8):
        X = rng.standard_cauchy(size=(60, 2))
        res = pm.min_weight_perfect_matching(points=X, n_neighbors=3)
        y, z, parent = (
            (res.y * 1e6).round().astype(np.int64),
            (res.z * 1e6).round().astype(np.int64),
            res.blossom_parent,
        )
        nv = y.size
        anc = []
        for v in range(nv):
            chain, b = [], parent[v]
            while b != -1:
                chain.append(b)
                b = parent[b]
            anc.append(set(chain))
            nested = max(nested, len(chain))
        u, v = np.triu_indices(nv, 1)
        w = rng.integers(0, 100, size=u.size)
        got = _core._mwpm_reduced_costs(y, parent.astype(np.int32), z, u.astype(np.int32), v.astype(np.int32), w)
        want = [2 * wi - y[a] - y[b] + sum(z[c - nv] for c in anc[a] & anc[b]) for a, b, wi in zip(u, v, w)]
        assert got.tolist() == want
    assert nested >= 2


def test_sparse_kernel_vs_networkx_and_infeasible():
    rng = np.random.default_rng(9)
    for trial in range(150):
        n = int(rng.integers(1, 13)) * 2
        mask = np.triu(rng.random((n, n)) < rng.uniform(0.15, 1.0), 1)
        eu, ev = np.nonzero(mask)
        w = rng.integers(0, [3, 10, 1000][trial % 3], size=eu.size)
        r = _core._mwpm_sparse(n, eu.astype(np.int32), ev.astype(np.int32), w.astype(np.int64))
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_weighted_edges_from(zip(eu.tolist(), ev.tolist(), w.tolist()))
        M = nx.min_weight_matching(G)
        if 2 * len(M) < n or nx.max_weight_matching(G, maxcardinality=True).__len__() * 2 < n:
            assert not r["perfect"]
            continue
        assert r["perfect"]
        mate = r["mate"]
        cost = sum(G[i][int(mate[i])]["weight"] for i in range(n) if mate[i] > i)
        assert cost == sum(G[a][b]["weight"] for a, b in M)
        rc = _core._mwpm_reduced_costs(r["y"], r["parent"], r["z"], eu.astype(np.int32), ev.astype(np.int32), w)
        assert (rc >= 0).all() and (r["z"] >= 0).all()


def _swap_two_pairs(res, D):
    """The optimal mate with two pairs re-paired (a worse matching) and its cost."""
    mate = res.mate.copy()
    (i, j), (k, l) = res.pairs[0], res.pairs[1]
    mate[[i, j, k, l]] = [k, l, i, j]
    return mate, res.cost + D[i, k] + D[j, l] - D[i, j] - D[k, l]


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 11), st.integers(0, 2**32 - 1), st.sampled_from([5.0, 15.0, 30.0]))
def test_distances_over_many_orders_of_magnitude_are_exact(n, seed, spread):
    # Weights spanning up to ~1e26: the optimum is decided by the small ones,
    # far below max(D) / 2**50.
    rng = np.random.default_rng(seed)
    A = np.exp(rng.normal(0.0, spread, size=(n, n)))
    D = np.triu(A, 1) + np.triu(A, 1).T
    res = pm.min_weight_perfect_matching(D)
    best = ref.min_weight_perfect_matching(D)[0]
    assert res.cost <= best * (1 + 1e-9)
    assert res.verify(D)
    if n >= 4:
        mate, cost = _swap_two_pairs(res, D)
        if cost > best * (1 + 1e-6):  # a clearly worse matching is never certified
            assert not dataclasses.replace(res, mate=mate, cost=cost).verify(D)


def test_points_at_very_different_scales_are_exact():
    rng = np.random.default_rng(21)
    for _trial in range(20):
        parts = [rng.normal(size=(3, 2)) * s + rng.normal(size=2) * 1e3 for s in (1e-9, 1e-5, 1.0)]
        X = np.concatenate(parts)[: int(rng.integers(5, 10))]
        D = cdist(X, X)
        res = pm.min_weight_perfect_matching(points=X)
        best = ref.min_weight_perfect_matching(D)[0]
        assert res.cost <= best * (1 + 1e-9) + 1e-300
        assert res.verify()
        dense = pm.min_weight_perfect_matching(D)
        assert dense.cost <= best * (1 + 1e-9) + 1e-300


def test_verify_needs_the_matrix_when_the_caller_dropped_it():
    X = random_points(np.random.default_rng(22), 12)
    res = pm.min_weight_perfect_matching(cdist(X, X))  # the matrix is a temporary
    with pytest.raises(ValueError, match="verify"):
        res.verify()
    assert res.verify(cdist(X, X)) and res.verify(points=X)
    with pytest.raises(ValueError, match="D must be 12 x 12"):
        res.verify(cdist(X[:4], X[:4]))
    assert "_source" not in res.asdict() and res == res and bool(res)


def test_unknown_keyword_is_a_short_type_error():
    X = random_points(np.random.default_rng(23), 10)
    for call in (
        lambda: pm.min_weight_perfect_matching(points=X, kk=3),
        lambda: pm.min_weight_perfect_matching(cdist(X, X), kk=3),
        lambda: pm.min_weight_perfect_matching(points=X, metric="cityblock", p=3),
        lambda: pm.min_weight_perfect_matching(points=X, metric=lambda a, b: 1.0, kk=3),
    ):
        with pytest.raises(TypeError, match="'(kk|p)'") as info:
            call()
        assert len(str(info.value)) < 150


def test_zero_and_one_point_get_one_message():
    messages = set()
    for rows in (0, 1):
        with pytest.raises(ValueError, match="points needs at least 2 rows") as info:
            pm.min_weight_perfect_matching(points=np.zeros((rows, 3)))
        messages.add(str(info.value).rsplit(",", 1)[0])
    assert len(messages) == 1


def test_record_fields_and_strided_matrices_are_read_correctly():
    rng = np.random.default_rng(24)
    X = random_points(rng, 21)
    D = cdist(X, X)
    expected = pm.min_weight_perfect_matching(D)
    rec = np.zeros((21, 21), dtype=[("tag", "i2"), ("d", "f8"), ("e", "f4")])
    rec["d"] = D
    rec["e"] = D
    for view in (rec["d"], D[::-1, ::-1], np.asfortranarray(D).T):
        res = pm.min_weight_perfect_matching(view)
        assert res.cost == pytest.approx(expected.cost, rel=1e-12) and res.verify(view)
    assert pm.min_weight_perfect_matching(rec["e"]).cost == pytest.approx(expected.cost, rel=1e-6)
    pts = np.zeros(21, dtype=[("tag", "i1"), ("x", "f8"), ("y", "f8")])
    pts["x"], pts["y"] = X[:, 0], X[:, 1]
    P = np.column_stack([pts["x"], pts["y"]])
    assert pm.min_weight_perfect_matching(points=P).cost == pytest.approx(
        pm.min_weight_perfect_matching(points=X[:, :2]).cost, rel=1e-12
    )


def test_n_jobs_does_not_change_the_result():
    rng = np.random.default_rng(25)
    X = rng.normal(size=(2101, 20))
    a = pm.min_weight_perfect_matching(points=X, n_jobs=1)
    b = pm.min_weight_perfect_matching(points=X, n_jobs=2)
    assert (a.mate == b.mate).all() and a.cost == b.cost
    assert a.verify(n_jobs=2) and b.verify(n_jobs=1)
    with pytest.raises(ValueError, match="n_jobs"):
        pm.min_weight_perfect_matching(points=X, n_jobs=0)
    with pytest.raises(TypeError, match="n_jobs"):
        pm.min_weight_perfect_matching(points=X, n_jobs=1.5)


def test_result_pickles_and_copies_without_its_data():
    import copy
    import pickle

    X = random_points(np.random.default_rng(26), 14)
    res = pm.min_weight_perfect_matching(points=X)
    for other in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res)):
        assert other == res
        with pytest.raises(ValueError, match="verify"):
            other.verify()
        assert other.verify(points=X)


def test_sparse_entry_point_wrapper():
    from pairmetrics._matching import solve_sparse_matching

    eu = np.array([0, 1, 2, 0], dtype=np.int32)
    ev = np.array([1, 2, 3, 3], dtype=np.int32)
    r = solve_sparse_matching(4, eu, ev, np.array([1, 5, 1, 5], dtype=np.int64))
    assert r["perfect"] and list(r["mate"]) == [1, 0, 3, 2]
    again = solve_sparse_matching(4, eu, ev, np.array([1, 5, 1, 5], dtype=np.int64), y0=r["y"], mate0=r["mate"])
    assert list(again["mate"]) == [1, 0, 3, 2]


def test_verify_at_zero_cost_with_nonzero_duals():
    # Duplicated points: the optimum costs 0 while some duals are +-0.5; the
    # certificate is exact, only float64 rounding of the duals is allowed for.
    X = np.array([[1], [1], [2], [0], [1], [2], [1]])
    res = pm.min_weight_perfect_matching(points=X, n_neighbors=1)
    assert res.cost == 0.0 and res.verify()


# ---------------------------------------------------------------- scale paths


def _full_solve(X, monkeypatch, **kw):
    """The solve without pairing duplicated points up front."""
    from pairmetrics import _matching

    with monkeypatch.context() as m:
        m.setattr(_matching, "_duplicate_groups", lambda X: None)
        return pm.min_weight_perfect_matching(points=X, **kw)


@pytest.mark.parametrize("n", [40, 41, 300, 301])
def test_duplicates_paired_up_front_are_exact(n, monkeypatch):
    rng = np.random.default_rng(n)
    base = rng.normal(size=(max(2, n // 7), 4))
    X = base[rng.integers(0, base.shape[0], n)]  # multiplicities 1 .. ~20, odd and even
    res = pm.min_weight_perfect_matching(points=X)
    assert res.stats["duplicate_pairs"] > 0
    full = _full_solve(X, monkeypatch)
    assert "duplicate_pairs" not in full.stats
    D = cdist(X, X)
    check_matching(res, D)
    assert close(res.cost, full.cost)
    if n < 100:
        assert close(res.cost, nx_cost(D))
    # The copies left out are matched among themselves, inside their blossoms.
    assert (res.z >= 0).all()


def test_duplicates_with_squared_distances_are_not_paired_up_front():
    # Not a metric: two coincident points need not be matched together.
    X = np.array([[0.0], [0.0], [0.0], [0.0], [-1.0], [1.0]])
    res = pm.min_weight_perfect_matching(points=X, metric="sqeuclidean")
    assert "duplicate_pairs" not in res.stats
    D = cdist(X, X, "sqeuclidean")
    assert close(res.cost, ref.min_weight_perfect_matching(D)[0]) and res.verify()


def test_duplicate_rows_whose_copies_cannot_carry_the_others_are_solved_in_full(monkeypatch):
    from pairmetrics import _matching

    rng = np.random.default_rng(3)
    base = rng.normal(size=(15, 3))
    X = base[rng.integers(0, 15, 121)]
    real = _matching._expand_duplicates
    calls = []

    def first_row_fails(r, n, keep, kept, removed):
        calls.append(len(kept))
        if len(calls) == 1:
            return None, [0]
        return real(r, n, keep, kept, removed)

    monkeypatch.setattr(_matching, "_expand_duplicates", first_row_fails)
    res = pm.min_weight_perfect_matching(points=X)
    assert calls[1] == calls[0] - 1  # the row is solved with all its copies
    monkeypatch.setattr(_matching, "_expand_duplicates", real)
    check_matching(res, cdist(X, X))
    assert close(res.cost, _full_solve(X, monkeypatch).cost)
    # A kept copy whose dual cannot carry its row's other copies is reported.
    keep = np.array([0, 1])
    r = {"y": np.array([-1.0, 1.0]), "z": np.zeros(0), "parent": np.array([-1, -1]), "mate": np.array([1, 0])}
    out, failed = real(r, 4, keep, [np.array([0])], [np.array([2, 3])])
    assert out is None and failed == [0]


@settings(max_examples=30, deadline=None)
@given(st.integers(4, 60), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_many_duplicates_vs_matrix_path(n, d, seed):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(rng.integers(1, 6), d))
    X = base[rng.integers(0, base.shape[0], n)]
    res = pm.min_weight_perfect_matching(points=X, n_neighbors=2)
    D = cdist(X, X)
    check_matching(res, D)
    assert close(res.cost, pm.min_weight_perfect_matching(D, n_neighbors=2).cost)


@pytest.mark.parametrize("kind", ["clustered", "heavy tails", "1-d"])
def test_hard_inputs_at_scale_are_certified_and_thread_independent(kind):
    # Deep blossoms (heavy tails), duals inflated around separated groups
    # (clustered: pairs screened by matrix products), long chains (1-D).
    rng = np.random.default_rng(8)
    n = 2101
    if kind == "clustered":
        X = (rng.normal(size=(12, 20)) * 3.0)[rng.integers(0, 12, n)] + rng.normal(size=(n, 20))
    elif kind == "heavy tails":
        X = rng.standard_cauchy(size=(n, 2))
    else:
        X = rng.normal(size=(n, 1))
    a = pm.min_weight_perfect_matching(points=X, n_jobs=1)
    b = pm.min_weight_perfect_matching(points=X, n_jobs=2)
    assert (a.mate == b.mate).all() and a.cost == b.cost
    assert a.verify()
    assert close(a.cost, pm.min_weight_perfect_matching(cdist(X, X)).cost)


@settings(max_examples=8, deadline=None)
@given(
    n=st.integers(600, 1400),
    d=st.sampled_from([3, 20]),
    groups=st.integers(2, 9),
    separation=st.sampled_from([0.5, 4.0, 50.0]),
    magnitude=st.sampled_from([1e-300, 1e-5, 1.0, 1e280]),
    seed=st.integers(0, 2**16),
)
def test_separated_groups_on_points_match_the_matrix_path(n, d, groups, separation, magnitude, seed):
    # Blocks of far-apart groups skip whole tiles in the neighbour search,
    # the pricing screens and the certificate: the optimum must not change.
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(groups, d)) * separation)[rng.integers(0, groups, n)] + rng.normal(size=(n, d))
    a = pm.min_weight_perfect_matching(points=X * magnitude, n_jobs=2)
    D = cdist(X, X) * magnitude  # the squares of X * magnitude could leave float64
    b = pm.min_weight_perfect_matching(D)
    assert abs(a.cost - b.cost) <= 1e-9 * b.cost
    assert a.verify()


@pytest.mark.parametrize("kind", ["gaussian", "clustered"])
def test_pricing_counters_add_up(kind):
    # Every exact distance outside the lists is counted once, by where it came
    # from; the violated pairs are among them, and the last round finds none.
    rng = np.random.default_rng(3)
    n, d = 3001, 30
    X = rng.normal(size=(n, d))
    if kind == "clustered":
        X += (rng.normal(size=(6, d)) * 4.0)[rng.integers(0, 6, n)]
    res = pm.min_weight_perfect_matching(points=X, n_neighbors=2, n_jobs=2)
    s = res.stats
    assert s["extra_pairs"] == s["prefix_pairs"] + s["inside_pairs"] + s["screen_pairs"] > 0
    assert 0 <= s["violated_pairs"] <= s["extra_pairs"]
    assert s["prefix_screened"] >= 0 and s["inside_screened"] >= 0 and s["rounds"] >= 2
    # Each pass solves its first round afresh; every later round resumes the
    # solver, or solves afresh when the resume merged blossoms into a far larger one.
    assert s["resumes"] + s["rebuilds"] == s["rounds"] - s["passes"] and s["resumes"] >= 1
    assert s["resume_freed"] >= 0 and s["resume_opened"] >= 0
    assert s["dirty_rows"] >= 0 and s["prefix_skipped"] >= 0
    assert res.verify()


@settings(max_examples=6, deadline=None)
@given(n=st.integers(150, 400), d=st.sampled_from([2, 5, 20]), seed=st.integers(0, 2**16))
def test_nested_clusters_priced_inside_blossoms_match_every_pair_in_the_lists(n, d, seed):
    # Clusters of tight clusters make large nested blossoms: with short lists
    # the pairs inside them are priced by the walk of the blossom forest (runs
    # skipped by range maxima); with every pair in the lists nothing is priced.
    rng = np.random.default_rng(seed)
    outer = rng.normal(size=(3, d)) * 40.0
    inner = outer[rng.integers(0, 3, 12)] + rng.normal(size=(12, d)) * 6.0
    X = inner[rng.integers(0, 12, n)] + rng.normal(size=(n, d)) * rng.choice([0.1, 1.0], size=(n, 1))
    a = pm.min_weight_perfect_matching(points=X, n_neighbors=1, n_jobs=2)
    b = pm.min_weight_perfect_matching(points=X, n_neighbors=n - 1)
    assert (a.mate == b.mate).all() and a.cost == b.cost
    assert a.stats["rounds"] >= 2 and a.verify()


def _clusters_of_clusters(n, d, seed):
    rng = np.random.default_rng(seed)
    outer = rng.normal(size=(3, d)) * 40.0
    inner = outer[rng.integers(0, 3, 12)] + rng.normal(size=(12, d)) * 6.0
    X = inner[rng.integers(0, 12, n)] + rng.normal(size=(n, d)) * rng.choice([0.1, 1.0], size=(n, 1))
    X[1::97] = X[::97][: X[1::97].shape[0]]  # some duplicated points
    return X


def test_the_screen_inside_blossoms_rules_pairs_out():
    # The comparison below holds whether or not a screen rules anything out
    # (every pair of a tile may be a candidate); here it surely does.
    from pairmetrics import _core

    X = _clusters_of_clusters(900, 33, 2)
    screened = _core._mwpm_points(X, False, 1, 2, screen_inside_from=2, screen_always=True)
    assert screened["stats"]["inside_screened"] > 0


@settings(max_examples=5, deadline=None)
@given(n=st.integers(600, 1200), d=st.sampled_from([20, 33, 50]), squared=st.booleans(), seed=st.integers(0, 2**16))
def test_pairs_inside_blossoms_screened_by_float32_tiles_match_the_walk(n, d, squared, seed):
    # Clusters of clusters make large nested blossoms; screening every tile
    # of their pairs (float32 products, thresholds lowered by the blossom
    # duals around each tile) rules pairs out yet finds the same violated
    # pairs: the same rounds, mates, duals and cost as pricing them one by one.
    from pairmetrics import _core

    X = _clusters_of_clusters(n, d, seed)
    # Both screen every stretch of the prefix (alike in both).
    walked = _core._mwpm_points(X, squared, 1, 2, screen_inside_from=2**31 - 1, screen_always=True)
    screened = _core._mwpm_points(X, squared, 1, 2, screen_inside_from=2, screen_always=True)
    assert walked["stats"]["inside_screened"] == 0
    assert screened["stats"]["inside_pairs"] <= walked["stats"]["inside_pairs"]
    for key in ("rounds", "violated_pairs", "prefix_pairs", "screen_pairs"):
        assert screened["stats"][key] == walked["stats"][key]
    for key in ("mate", "y", "z", "parent"):
        assert np.array_equal(screened[key], walked[key])
    assert screened["cost"] == walked["cost"]
    assert pm.min_weight_perfect_matching(
        points=X, metric="sqeuclidean" if squared else "euclidean", n_neighbors=1
    ).verify()


@settings(max_examples=6, deadline=None)
@given(
    n=st.integers(300, 900),
    d=st.sampled_from([3, 20, 50]),
    nested=st.booleans(),
    squared=st.booleans(),
    threads=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**16),
)
def test_incremental_pricing_finds_the_pairs_of_full_pricing(n, d, nested, squared, threads, seed):
    # Pricing again only the pairs with an end whose dual rose (or whose
    # top-level blossom changed) finds the violated pairs that pricing every
    # pair finds: the same rounds, mates, duals, blossoms and cost.
    from pairmetrics import _core

    rng = np.random.default_rng(seed)
    if nested:
        outer = rng.normal(size=(3, d)) * 40.0
        inner = outer[rng.integers(0, 3, 12)] + rng.normal(size=(12, d)) * 6.0
        X = inner[rng.integers(0, 12, n)] + rng.normal(size=(n, d)) * rng.choice([0.1, 1.0], size=(n, 1))
    else:
        X = rng.normal(size=(n, d))
    X[1::37] = X[::37][: X[1::37].shape[0]]  # some duplicated points
    new = _core._mwpm_points(X, squared, 1, threads)
    full = _core._mwpm_points(X, squared, 1, threads, full_pricing=True)
    for key in ("rounds", "violated_pairs", "screen_pairs", "passes"):
        assert new["stats"][key] == full["stats"][key]
    # Fewer prefix candidates; fewer exact distances need not follow (the
    # float32 screen of a stretch pays only for many candidates).
    candidates = {
        name: r["stats"]["prefix_pairs"] + r["stats"]["prefix_screened"] for name, r in (("new", new), ("full", full))
    }
    assert candidates["new"] <= candidates["full"]
    assert full["stats"]["prefix_skipped"] == 0
    for key in ("mate", "y", "z", "parent"):
        assert np.array_equal(new[key], full[key])
    assert new["cost"] == full["cost"]


# ------------------------------------------------------- float64 at its edges


def exact_optimum(D):
    """Least exact (Fraction) cost of a perfect matching of D (ghost at 0 for odd N), by enumeration."""
    from fractions import Fraction

    n = D.shape[0]
    F = [[Fraction(float(D[i, j])) for j in range(n)] for i in range(n)]

    def best(rest):
        if len(rest) < 2:
            return Fraction(0)  # the one point left is matched to the ghost
        i, others = rest[0], rest[1:]
        options = [F[i][j] + best(tuple(x for x in others if x != j)) for j in others]
        if len(rest) % 2:
            options.append(best(others))  # i matched to the ghost
        return min(options)

    return best(tuple(range(n)))


def exact_cost(res, D):
    from fractions import Fraction

    return sum((Fraction(float(D[i, j])) for i, j in res.pairs), Fraction(0))


def check_exactly_optimal(D, rtol=1e-12):
    res = pm.min_weight_perfect_matching(D)
    best, got = exact_optimum(D), exact_cost(res, D)
    assert got <= best * (1 + rtol), (float(got), float(best))
    assert res.cost == float(got) or res.cost == pytest.approx(float(got), rel=1e-15)
    assert res.verify()
    return res


def symmetric(values, n):
    D = np.zeros((n, n))
    D[np.triu_indices(n, 1)] = values
    return D + D.T


def test_spread_over_the_whole_float64_range():
    """1e-300, 1e-150 and 1e300 in one 4x4 matrix: the optimum, its true cost, verified on the caller's D."""
    D = symmetric([1e300, 1e-300, 1e300, 1e300, 1e-150, 1e300], 4)
    res = check_exactly_optimal(D)
    assert sorted(map(tuple, res.pairs.tolist())) == [(0, 2), (1, 3)]
    assert res.cost == 1e-150 + 1e-300
    # A non-optimal matching presented as this one is refused.
    wrong = dataclasses.replace(res, mate=np.array([1, 0, 3, 2]), pairs=np.array([[0, 1], [2, 3]]))
    assert not wrong.verify(D)


def test_maxima_near_the_top_of_float64():
    D = symmetric([1.7e308, 1.0, 1.7e308, 1.7e308, 2.0, 1.7e308], 4)
    res = check_exactly_optimal(D)
    assert res.cost == 3.0
    D = symmetric([np.finfo(float).max, 3.0, 2.0**1023, 5.0, 2.0**1023, np.finfo(float).max], 4)
    check_exactly_optimal(D)
    with pytest.raises(ValueError, match="overflows float64"):
        pm.min_weight_perfect_matching(np.full((4, 4), 1.7e308) - np.diag(np.full(4, 1.7e308)))


def test_ulp_apart_distances():
    one = 1.0
    up = np.nextafter(one, 2.0)
    D = symmetric([up, one, one, one, one, up], 4)  # pairs (0,1),(2,3) cost one ulp more
    res = check_exactly_optimal(D, rtol=1e-9)
    assert res.cost <= 2 * up


def test_clusters_with_far_outliers_on_points():
    rng = np.random.default_rng(5)
    # Squares of the cluster's differences underflow: those distances are taken from scaled differences.
    X = np.concatenate([rng.normal(size=(5, 2)) * 1e-170, rng.normal(size=(3, 2)) * 1e90, [[1e100, 0.0]]])
    res = pm.min_weight_perfect_matching(points=X)
    D = np.array([[math.hypot(*(a - b)) for b in X] for a in X])
    best = exact_optimum(D)
    assert exact_cost(res, D) <= best * (1 + 1e-9)
    assert res.verify()
    # Coordinates 1e-200 beside a spread of 1e250: no exact power-of-two scaling brings both into range.
    X[:5] *= 1e-30
    X[-1, 0] = 1e250
    with pytest.raises(ValueError, match="orders of magnitude"):
        pm.min_weight_perfect_matching(points=X)


def test_points_whose_differences_overflow_are_refused():
    X = np.array([[-1e308], [-1e308 + 1e292], [1e308], [1e308 - 1e292]])
    with pytest.raises(ValueError, match="overflow"):
        pm.min_weight_perfect_matching(points=X)


magnitudes = st.one_of(
    st.floats(0, np.finfo(float).max, allow_nan=False, allow_infinity=False),
    st.integers(-324, 308).map(lambda e: float(f"1e{e}")),
    st.sampled_from([1.0, np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0), 5e-324, 0.0]),
)


def test_subnormal_costs():
    """The smallest subnormal decides the optimum; duals on the subnormal grid still verify."""
    check_exactly_optimal(symmetric([5e-324, 0.0, 1.0, 0.0, 1.0, 0.0], 4))
    check_exactly_optimal(symmetric([5e-324], 2))
    check_exactly_optimal(symmetric([1.0, 1.0, 2.2250738585072014e-308], 3))


@settings(max_examples=examples(60), deadline=None, derandomize=True)
@given(
    st.integers(2, 7).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(magnitudes, min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))
    )
)
def test_any_finite_matrix_is_solved_exactly_or_refused(case):
    n, values = case
    D = symmetric(values, n)
    try:
        res = pm.min_weight_perfect_matching(D)
    except ValueError as error:  # only when every perfect matching's cost overflows float64
        assert "overflows float64" in str(error)
        assert exact_optimum(D) > Fraction(np.finfo(float).max) * (1 - Fraction(1, 10**9))
        return
    best, got = exact_optimum(D), exact_cost(res, D)
    assert got <= best * (1 + 1e-9) + Fraction(2) ** -1070
    assert res.verify()


@settings(max_examples=6, deadline=None)
@given(
    n=st.integers(300, 900),
    kind=st.sampled_from(["gaussian", "rounded", "duplicates", "clustered"]),
    seed=st.integers(0, 2**16),
)
def test_points_are_solved_in_locality_order_and_reported_in_input_order(n, kind, seed):
    # The solve numbers the points in the provider's ball order and maps the
    # result back: a shuffle of the rows permutes the mates (up to ties
    # between equal-cost matchings), never the cost or the certificate.
    rng = np.random.default_rng(seed)
    d = 12
    X = rng.normal(size=(n, d))
    if kind == "rounded":
        X = np.round(X)
    elif kind == "duplicates":
        X = X[rng.integers(0, max(2, n // 10), n)]
    elif kind == "clustered":
        X = (rng.normal(size=(6, d)) * 3.0)[rng.integers(0, 6, n)] + rng.normal(size=(n, d))
    shuffle = rng.permutation(n)
    a = pm.min_weight_perfect_matching(points=X)
    b = pm.min_weight_perfect_matching(points=X[shuffle])
    D = cdist(X, X)
    check_matching(a, D)
    check_matching(b, D[np.ix_(shuffle, shuffle)])
    assert close(a.cost, b.cost)
    assert close(a.cost, pm.min_weight_perfect_matching(D).cost)


@settings(max_examples=5, deadline=None)
@given(n=st.integers(200, 700), d=st.sampled_from([2, 10, 50]), seed=st.integers(0, 2**16))
def test_resumed_solver_finds_the_cost_of_solving_each_round_afresh(n, d, seed):
    # Later pricing rounds resume the last round's solver with its blossoms,
    # duals and matching, repairing only what the new pairs violate; solving
    # every round afresh from folded duals gives the same optimal cost.
    from pairmetrics import _core

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X += (rng.normal(size=(5, d)) * 4.0)[rng.integers(0, 5, n)]
    resumed = _core._mwpm_points(X, False, 1, 2)
    afresh = _core._mwpm_points(X, False, 1, 2, resume=False)
    # Equal integer optima; mates may differ only where rounded weights tie.
    assert math.isclose(resumed["cost"], afresh["cost"], rel_tol=1e-12)
    assert afresh["stats"]["resumes"] == afresh["stats"]["rebuilds"] == 0
    s = resumed["stats"]
    assert s["resumes"] + s["rebuilds"] == s["rounds"] - s["passes"]
