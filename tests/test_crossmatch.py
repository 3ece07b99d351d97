import math

import numpy as np
import pairmetrics as pm
import pytest
from _dtypes import DTYPES
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics.reference import matching as ref
from scipy.spatial.distance import cdist


def r_call(z, D, **options):
    """R's call form ``crossmatchtest(z, D)`` (seeded: ties are broken in a random order)."""
    return pm.crossmatch_test(D=D, labels=z, **{"rng": 0, **options})


# Rosenbaum (2005), section 2, as documented in R's crossmatch package.
X1 = [0.47, 0.39, 0.47, 0.78, 1, 1, 0.54, 1, 0.38, 1, 0.27, 0.63, 0.22, 0, -1, -0.42, -1, -1]
X2 = [0.03, 0.11, 0.16, -0.1, -0.05, 0.16, 0.12, 0.4, 0.04, 0.71, 0.01, 0.21, -0.18, -0.08, -0.35, 0.26, -0.6, -1.0]
Z = [0] * 9 + [1] * 9


def test_r_documented_example():
    X = np.column_stack([X1, X2])
    D = pm.rank_mahalanobis(X)
    r = r_call(Z, D)
    assert r.statistic == 1
    assert round(r.expected, 2) == 4.76
    assert round(r.variance, 2) == 2.39
    assert round(r.zscore, 2) == -2.43
    assert round(r.pvalue, 4) == 0.0259
    assert round(r.approx_pvalue, 5) == 0.00746
    assert r.statistic == r.statistic and r.pvalue == r.pvalue
    stat, p = r
    assert (stat, p) == (r.statistic, r.pvalue)
    assert r.matching.verify()
    same = pm.crossmatch_test(X[:9], X[9:], metric="rank_mahalanobis")
    assert (same.statistic, same.pvalue) == (r.statistic, r.pvalue)


def test_rank_mahalanobis_vs_reference():
    rng = np.random.default_rng(0)
    for shape in [(18, 2), (25, 4), (10, 1)]:
        X = rng.normal(size=shape)
        X[:3, 0] = X[0, 0]  # ties in ranks
        np.testing.assert_allclose(pm.rank_mahalanobis(X), ref.rank_mahalanobis(X.tolist()), rtol=1e-9, atol=1e-9)
    X = np.column_stack([rng.normal(size=8), np.ones(8)])  # a constant column is ignored
    np.testing.assert_allclose(pm.rank_mahalanobis(X), pm.rank_mahalanobis(X[:, :1]), atol=1e-12)


@pytest.mark.parametrize("N,n", [(2, 1), (4, 2), (10, 3), (18, 9), (30, 0), (30, 30), (40, 17)])
def test_null_distribution_vs_exact_fractions(N, n):
    d = pm.crossmatch_null_distribution(N, n)
    exact = ref.crossmatch_pmf(N, n)
    assert list(d.a1) == sorted(exact)
    np.testing.assert_allclose(d.pmf, [float(exact[a]) for a in d.a1], rtol=1e-12)
    assert d.cdf[-1] == pytest.approx(1.0, abs=1e-12)
    assert (2 * (d.a0 + d.a1 + d.a2) == N).all() and (d.a1 + 2 * d.a2 == n).all()
    mean, var = ref.crossmatch_moments(N, n)
    assert d.mean == pytest.approx(float(mean), rel=1e-12, abs=1e-12)
    assert d.var == pytest.approx(float(var), rel=1e-10, abs=1e-12)


@settings(max_examples=40)
@given(st.integers(2, 60).map(lambda h: 2 * h), st.data())
def test_null_moments_match_closed_forms(N, data):
    n = data.draw(st.integers(0, N))
    d = pm.crossmatch_null_distribution(N, n)
    assert d.pmf.sum() == pytest.approx(1.0, abs=1e-12)
    m = N - n
    assert d.mean == pytest.approx(n * m / (N - 1), rel=1e-10, abs=1e-12)
    if N > 3:
        assert d.var == pytest.approx(2 * n * (n - 1) * m * (m - 1) / ((N - 3) * (N - 1) ** 2), rel=1e-8, abs=1e-10)


def test_null_distribution_large_n_is_finite():
    d = pm.crossmatch_null_distribution(20000, 9000)
    assert np.isfinite(d.pmf).all() and d.pmf.sum() == pytest.approx(1.0, abs=1e-9)
    assert d.mean == pytest.approx(9000 * 11000 / 19999, rel=1e-9)


def test_crossmatchtest_vs_reference_statistics():
    rng = np.random.default_rng(1)
    for n, m, shift in [(10, 12, 0.0), (15, 15, 2.0), (7, 20, 0.5), (40, 33, 1.0)]:
        X = np.concatenate([rng.normal(size=(n, 3)), rng.normal(size=(m, 3)) + shift])
        z = np.repeat([0, 1], [n, m])
        r = r_call(z, cdist(X, X))
        expected = ref.crossmatch_statistics(z, r.matching.mate)
        for key, value in expected.items():
            assert r.to_r().get(key, getattr(r, key, None)) == pytest.approx(value, rel=1e-10, abs=1e-14), key
        assert (n + m) % 2 == 0 or r.n_points == n + m - 1


@settings(max_examples=40)
@given(st.integers(3, 24), st.integers(0, 2**32 - 1))
def test_random_labels_vs_reference(N, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(N, 2))  # ties included
    z = rng.integers(0, 2, size=N)
    z[:2] = [0, 1]
    D = cdist(X, X)  # verify() below reads the caller's matrix
    r = r_call(z, D)
    expected = ref.crossmatch_statistics(z, r.matching.mate)
    for key in ("a1", "Ea1", "Va1", "pval"):
        assert r.to_r()[key] == pytest.approx(expected[key], rel=1e-10, abs=1e-14), key
    if np.isfinite(expected["dev"]):
        assert r.zscore == pytest.approx(expected["dev"], rel=1e-10)
        assert r.approx_pvalue == pytest.approx(expected["approxpval"], rel=1e-9, abs=1e-15)
    assert r.n_points == N - N % 2 and r.n_y == int(z[r.matching.mate >= 0].sum())
    assert r.matching.verify()


def test_large_n_pvalue_exists():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 2))
    r = pm.crossmatch_test(X[:200], X[200:] + 0.3)
    assert 0 <= r.pvalue <= 1 and np.isfinite(r.pvalue)
    d = pm.crossmatch_null_distribution(400, 200)
    assert r.pvalue == pytest.approx(d.cdf[list(d.a1).index(r.statistic)], rel=1e-10)


def test_odd_n_drops_one_point():
    X = np.array([[0.0], [0.1], [5.0], [5.1], [100.0]])
    r = r_call([0, 1, 0, 1, 1], cdist(X, X))
    assert r.matching.dropped == 4 and r.n_points == 4 and r.n_y == 2 and r.statistic == 2
    assert r.expected == pytest.approx(2 * 2 / 3)


def test_separated_samples_reject_and_same_do_not():
    rng = np.random.default_rng(3)
    far = pm.crossmatch_test(rng.normal(size=(60, 5)), rng.normal(size=(60, 5)) + 3)
    assert far.statistic == 0 and far.pvalue < 1e-10
    same = pm.crossmatch_test(rng.normal(size=(60, 5)), rng.normal(size=(60, 5)))
    assert same.pvalue > 1e-3


@pytest.mark.parametrize("dtype", DTYPES)
def test_label_and_sample_dtypes(dtype):
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2 if dtype == np.bool_ else 5, size=(24, 3))
    z = np.repeat([0, 1], 12)
    D = cdist(X, X)
    expected = r_call(z, D)
    assert r_call(z.astype(dtype), D).statistic == expected.statistic
    r = pm.crossmatch_test(X[:12].astype(dtype), X[12:].astype(dtype), rng=0)
    Xd = X.astype(dtype).astype(np.float64)
    assert r.statistic == pm.crossmatch_test(Xd[:12], Xd[12:], rng=0).statistic
    assert r.matching.cost == pytest.approx(r_call(z, cdist(Xd, Xd)).matching.cost, rel=1e-9)


def test_readonly_noncontiguous_lists():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 6))
    x, y = X[:20, ::2], X[20:, ::2]
    expected = pm.crossmatch_test(x.copy(), y.copy())
    xr = x.copy()
    xr.setflags(write=False)
    for a, b in [(x, y), (xr, y), (x.tolist(), y.tolist())]:
        r = pm.crossmatch_test(a, b)
        assert (r.statistic, r.pvalue) == (expected.statistic, expected.pvalue)
    z = np.repeat([0, 1], 20)
    D = cdist(X, X)
    assert r_call(z.tolist(), D.tolist()).statistic == r_call(z, D).statistic
    r1 = pm.crossmatch_test(X[:20, 0], X[20:, 0])  # 1-D samples: one feature
    assert r1.statistic == pm.crossmatch_test(X[:20, :1], X[20:, :1]).statistic


def test_resample_protocol():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(50, 4))
    y = rng.normal(size=(45, 4)) + 0.4
    a = pm.crossmatch_resample(x, y, sample_size=20, n_resamples=12, rng=1)
    b = pm.crossmatch_resample(x, y, sample_size=20, n_resamples=12, rng=1, n_jobs=2)
    assert (a.statistics == b.statistics).all() and (a.pvalues == b.pvalues).all()
    assert a.statistic == pytest.approx(a.statistics.mean()) and a.pvalue == pytest.approx(a.pvalues.mean())
    assert a.expected == pytest.approx(20 * 20 / 39)
    # Whole samples in every repeat: each repeat is the full test.
    full = pm.crossmatch_test(x[:30], y[:30])
    c = pm.crossmatch_resample(x[:30], y[:30], sample_size=30, n_resamples=3, rng=0)
    assert (c.statistics == full.statistic).all() and c.pvalues == pytest.approx(np.full(3, full.pvalue))
    mean_count, mean_p = c
    assert mean_count == full.statistic
    # Pooled-matrix path (cityblock) and per-subsample path (rank_mahalanobis)
    # against the plain test on the same subsamples (whole samples again).
    for metric in ("cityblock", "rank_mahalanobis"):
        d = pm.crossmatch_resample(x[:30], y[:30], sample_size=30, n_resamples=2, rng=0, metric=metric, n_jobs=2)
        single = pm.crossmatch_test(x[:30], y[:30], metric=metric)
        assert (d.statistics == single.statistic).all() and d.pvalues == pytest.approx(np.full(2, single.pvalue))
        assert d.approx_pvalues == pytest.approx(np.full(2, single.approx_pvalue))


def test_bad_input():
    D = cdist(np.arange(4.0)[:, None], np.arange(4.0)[:, None])
    with pytest.raises(ValueError, match="labels"):
        r_call([0, 1, 2, 1], D)
    with pytest.raises(ValueError, match="labels.*both groups"):
        r_call([1, 1, 1, 1], D)
    with pytest.raises(ValueError, match="labels and D"):
        r_call([0, 1, 0], D)
    with pytest.raises(ValueError, match="labels"):
        r_call([0, 1, np.nan, 1], D)
    with pytest.raises(ValueError, match="D"):
        r_call([0, 1, 0, 1], D[:, :3])
    with pytest.raises(ValueError, match="D.*symmetric"):
        r_call([0, 1, 0, 1], D + np.triu(np.ones((4, 4)), 1))
    with pytest.raises(ValueError, match="D.*negative"):
        r_call([0, 1, 0, 1], -D)
    with pytest.raises(ValueError, match="D.*diagonal"):
        r_call([0, 1, 0, 1], D + np.eye(4))
    with pytest.raises(ValueError, match="labels needs at least 2"):
        r_call([0], [[0.0]])
    with pytest.raises(TypeError, match="not both"):
        pm.crossmatch_test(np.zeros((2, 1)), np.ones((2, 1)), D=D, labels=[0, 1, 0, 1])
    with pytest.raises(TypeError, match="both D= .* and labels="):
        pm.crossmatch_test(D=D)
    with pytest.raises(TypeError, match="metric"):
        pm.crossmatch_test(D=D, labels=[0, 1, 0, 1], metric="cityblock")
    with pytest.raises(TypeError, match="x and y"):
        pm.crossmatch_test(np.zeros((2, 1)))
    with pytest.raises(ValueError, match="x and y"):
        pm.crossmatch_test(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="x"):
        pm.crossmatch_test(np.array([[np.inf, 0]]), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="metric"):
        pm.crossmatch_test(np.zeros((3, 2)), np.ones((3, 2)), metric="bogus")
    with pytest.raises(ValueError, match="N"):
        pm.crossmatch_null_distribution(7, 3)
    with pytest.raises(ValueError, match="n"):
        pm.crossmatch_null_distribution(8, 9)
    with pytest.raises(ValueError, match="N"):
        pm.crossmatch_null_distribution(0, 0)
    with pytest.raises(TypeError, match="N"):
        pm.crossmatch_null_distribution(8.0, 3)
    x = np.zeros((10, 2))
    with pytest.raises(ValueError, match="sample_size"):
        pm.crossmatch_resample(x, x, sample_size=11)
    with pytest.raises(ValueError, match="n_resamples"):
        pm.crossmatch_resample(x, x, sample_size=5, n_resamples=0)
    with pytest.raises(ValueError, match="n_jobs"):
        pm.crossmatch_resample(x, x, sample_size=5, n_resamples=1, n_jobs=0)
    with pytest.raises(ValueError, match="x and y"):
        pm.crossmatch_resample(x, np.zeros((10, 3)), sample_size=5)


def test_pvalue_is_lower_tail_including_observed():
    # P(A1 <= a1) with a1 the observed count, as in R (cumulative row).
    d = pm.crossmatch_null_distribution(18, 9)
    assert d.cdf[0] == pytest.approx(d.pmf[0])
    assert math.isclose(d.cdf[0], 0.025915261, rel_tol=1e-8)


def test_alternatives_vs_reference_pmf():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(13, 2)), rng.normal(size=(11, 2)) + 0.5
    less = pm.crossmatch_test(x, y)
    pmf = ref.crossmatch_pmf(24, 11)
    a1 = less.statistic
    assert less.pvalue == pytest.approx(float(sum(p for a, p in pmf.items() if a <= a1)), rel=1e-10)
    greater = pm.crossmatch_test(x, y, alternative="greater")
    assert greater.statistic == a1
    assert greater.pvalue == pytest.approx(float(sum(p for a, p in pmf.items() if a >= a1)), rel=1e-10)
    two = pm.crossmatch_test(x, y, alternative="two-sided")
    assert two.pvalue == pytest.approx(float(sum(p for p in pmf.values() if p <= pmf[a1] * (1 + 1e-7))), rel=1e-10)
    assert greater.approx_pvalue == pytest.approx(1 - less.approx_pvalue, abs=1e-12)
    with pytest.raises(ValueError, match="alternative"):
        pm.crossmatch_test(x, y, alternative="smaller")
    res = pm.crossmatch_resample(x, y, sample_size=8, n_resamples=6, rng=3, alternative="greater")
    for a, p in zip(res.statistics, res.pvalues):
        assert p == pytest.approx(float(sum(q for b, q in ref.crossmatch_pmf(16, 8).items() if b >= a)), rel=1e-10)


def test_resample_names_statistic_and_scale_per_draw():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(30, 3))
    y = rng.normal(size=(30, 3)) + 0.3
    x[0] += 1e9  # an outlier sets the scale of the pool, not of the draws without it
    a = pm.crossmatch_resample(x, y, sample_size=10, n_resamples=15, rng=4)
    assert a.n_resamples == 15 and a.statistic == a.statistics.mean() and a.pvalue == a.pvalues.mean()
    assert {"statistic", "pvalue", "statistics", "pvalues"} <= set(a.asdict())
    # Each draw's count is the plain test's on the same points.
    gen = np.random.default_rng(4)
    for r in range(15):
        ix = np.sort(gen.choice(30, 10, replace=False))
        iy = np.sort(gen.choice(30, 10, replace=False))
        assert a.statistics[r] == pm.crossmatch_test(x[ix], y[iy]).statistic
    # Every option after x, y is keyword-only, and the old name of n_resamples is gone.
    with pytest.raises(TypeError):
        pm.crossmatch_resample(x, y, 10)
    with pytest.raises(TypeError, match="n_repeats"):
        pm.crossmatch_resample(x, y, sample_size=10, n_repeats=4)


def test_unknown_keywords_and_options():
    x, y = np.zeros((4, 2)), np.ones((4, 2))
    for call in (
        lambda: pm.crossmatch_test(x, y, kk=3),
        lambda: pm.crossmatch_resample(x, y, sample_size=2, kk=3),
        lambda: r_call([0, 1, 0, 1], np.zeros((4, 4)), kk=3),
    ):
        with pytest.raises(TypeError, match="kk") as info:
            call()
        assert len(str(info.value)) < 150
    with pytest.raises(TypeError, match="rng"):
        pm.crossmatch_resample(x, y, sample_size=2, rng="x")
    with pytest.raises(TypeError, match="progress"):
        pm.crossmatch_test(x, y, progress="yes")


def test_progress_error_reaches_the_caller_from_the_batch():
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=(60, 3)), rng.normal(size=(60, 3))
    draws = np.stack([np.arange(40)] * 200)
    full = np.ascontiguousarray(cdist(np.concatenate([x, y]), np.concatenate([x, y])))
    z = np.repeat(np.array([0, 1], dtype=np.int8), 20)

    def stop(done, total):
        raise KeyError("from the callback")

    from pairmetrics import _core

    for threads in (1, 2):
        with pytest.raises(KeyError, match="from the callback"):
            _core._crossmatch_batch(full, draws, z, 10, threads, stop)


def test_matching_modules_import_scipy_lazily():
    # Top-level imports only: scipy submodules are imported inside functions.
    import ast
    import importlib

    for name in ("pairmetrics._matching", "pairmetrics._crossmatch"):
        tree = ast.parse(open(importlib.import_module(name).__file__).read())
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any(n.startswith("scipy") for n in names), (name, names)


def _randomized_pvalue(res, gen):
    """``P(A1 < a1) + U P(A1 = a1)``: exactly uniform under the null, for a KS test of a discrete test."""
    null = pm.crossmatch_null_distribution(res.n_points, res.n_y)
    i = int(np.searchsorted(null.a1, res.statistic))
    return null.cdf[i] - null.pmf[i] + gen.uniform() * null.pmf[i]


TIED_SAMPLES = {
    "binary features": lambda gen: gen.integers(0, 2, size=(60, 3)),
    "poisson counts": lambda gen: gen.poisson(2.0, size=(60, 2)),
    "identical points": lambda gen: np.ones((60, 2)),
}


@pytest.mark.parametrize("kind", list(TIED_SAMPLES))
def test_null_calibration_on_tied_and_discrete_points(kind):
    # Two samples of one discrete distribution: rows arrive grouped by sample, and the matching must not
    # pair copies of a point inside one sample (that called such samples different in every draw).
    from scipy.stats import kstest

    gen = np.random.default_rng(11)
    draws = [TIED_SAMPLES[kind](gen) for _ in range(200)]
    results = [pm.crossmatch_test(X[:30], X[30:], rng=gen, n_jobs=1) for X in draws]
    assert kstest([_randomized_pvalue(r, gen) for r in results], "uniform").pvalue > 1e-3
    assert np.mean([r.pvalue < 0.05 for r in results]) <= 0.1
    same = np.ones((40, 3))
    assert pm.crossmatch_test(same[:20], same[20:], rng=0).pvalue > 0.01  # was 1.3e-6 (copies paired by sample)


def test_null_calibration_on_continuous_points():
    from scipy.stats import kstest

    gen = np.random.default_rng(12)
    results = [pm.crossmatch_test(gen.normal(size=(25, 2)), gen.normal(size=(35, 2)), n_jobs=1) for _ in range(200)]
    assert kstest([_randomized_pvalue(r, gen) for r in results], "uniform").pvalue > 1e-3


def test_tie_order_is_seeded_recorded_and_numbered_by_the_input_rows():
    gen = np.random.default_rng(13)
    x, y = gen.integers(0, 2, size=(21, 3)), gen.integers(0, 2, size=(20, 3))
    a, b = pm.crossmatch_test(x, y, rng=5), pm.crossmatch_test(x, y, rng=np.random.default_rng(5))
    assert a == b and (a.order == b.order).all() and (a.matching.mate == b.matching.mate).all()
    assert sorted(a.order.tolist()) == list(range(41)) and a.order.tolist() != list(range(41))
    stacked = np.vstack([x, y])
    mate = a.matching.mate
    assert a.matching.verify() and a.matching.verify(points=stacked)
    assert a.matching.dropped is not None and mate[a.matching.dropped] == -1
    assert (mate[mate[mate >= 0]] == np.flatnonzero(mate >= 0)).all()  # numbered by the stacked rows
    z = np.repeat([0, 1], [21, 20])
    assert a.statistic == int((z[a.matching.pairs[:, 0]] != z[a.matching.pairs[:, 1]]).sum())
    assert a.matching.cost == pytest.approx(pm.min_weight_perfect_matching(points=stacked).cost, rel=1e-12)
    # the distance-matrix form: the same order for the same seed, and an optimal matching of the rows
    D = cdist(stacked, stacked)
    d = pm.crossmatch_test(D=D, labels=z, rng=5)
    assert (d.order == a.order).all() and d.matching.verify(D)
    assert d.matching.cost == pytest.approx(a.matching.cost, rel=1e-12)
    assert d == pm.crossmatch_test(D=D, labels=z, rng=5)
    # continuous points: one optimal matching, whatever the order; results that differ only in it are equal
    u, v = gen.normal(size=(15, 2)), gen.normal(size=(16, 2))
    results = [pm.crossmatch_test(u, v, rng=s) for s in range(5)]
    assert all(r == results[0] for r in results) and len({tuple(r.order) for r in results}) == 5
    assert "order" in results[0].asdict() and "order" not in repr(results[0])
    import pickle

    assert (pickle.loads(pickle.dumps(results[1])).order == results[1].order).all()


def test_resample_breaks_ties_independently_of_the_labels():
    from scipy.stats import kstest

    gen = np.random.default_rng(14)
    pvalues = []
    for _ in range(100):
        X = gen.integers(0, 2, size=(80, 3))
        res = pm.crossmatch_resample(X[:40], X[40:], sample_size=20, n_resamples=2, rng=gen, n_jobs=1)
        pvalues.extend(res.pvalues)
    assert np.mean(np.array(pvalues) < 0.05) <= 0.1  # was about 1 (copies paired inside a sample)
    res = pm.crossmatch_resample(X[:40], X[40:], sample_size=20, n_resamples=3, rng=3)
    assert sorted(res.order.tolist()) == list(range(40))
    again = pm.crossmatch_resample(X[:40], X[40:], sample_size=20, n_resamples=3, rng=3, metric="cityblock")
    assert (again.order == res.order).all()
    assert kstest(pvalues, "uniform").statistic < 0.5  # discrete p-values: loose


def test_compare_groups_on_counts_of_one_distribution():
    pytest.importorskip("pandas")
    gen = np.random.default_rng(15)
    counts = gen.poisson(1.0, size=(150, 4))
    for seed in (0, 1, 2):
        table = pm.compare_groups(counts, np.repeat(["a", "b", "c"], 50), rng=seed)
        assert (table["pvalue_adj"] > 1e-3).all()  # was 4e-13 to 5e-9 for every group when ties paired by sample


def test_errors_name_their_argument():
    with pytest.raises(ValueError, match="^x must be a rectangular table"):
        pm.crossmatch_test([[1.0, 2.0], [3.0]], [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="^y must be a rectangular table"):
        pm.crossmatch_test([[1.0, 2.0]], [[1.0, 2.0], [3.0]])
    with pytest.raises(ValueError, match="^points must be a rectangular table"):
        pm.multi_crossmatch_test([[1.0, 2.0], [3.0]], [0, 1])
    with pytest.raises(ValueError, match="^N must be .* got 1180591620717411303424"):
        pm.crossmatch_null_distribution(2**70, 2)  # was an OverflowError without a name
    with pytest.raises(ValueError, match="^n must be"):
        pm.crossmatch_null_distribution(4, 2**70)
    huge = np.full((4, 4), 1e308) - np.diag(np.full(4, 1e308))
    with pytest.raises(ValueError, match="overflows .* in D.*scale D down"):
        pm.crossmatch_test(D=huge, labels=[0, 1, 0, 1], rng=0)
    with pytest.raises(ValueError, match="in D"):
        pm.min_weight_perfect_matching(huge)


def test_progress_bars_count_points_and_resamples(monkeypatch):
    tqdm_auto = pytest.importorskip("tqdm.auto")
    bars = []

    class Bar:
        def __init__(self, total=0, desc="", unit="", leave=True):
            self.total, self.desc, self.unit, self.n = total, desc, unit, 0
            bars.append(self)

        def refresh(self):
            pass

        def close(self):
            pass

    monkeypatch.setattr(tqdm_auto, "tqdm", Bar)
    rng = np.random.default_rng(16)
    x, y = rng.normal(size=(40, 2)), rng.normal(size=(31, 2))
    res = pm.crossmatch_test(x, y, progress=True, rng=0)
    res.matching.verify(progress=True)
    pm.crossmatch_test(D=cdist(np.vstack([x, y]), np.vstack([x, y])), labels=np.repeat([0, 1], [40, 31]), progress=True)
    pm.crossmatch_resample(x, y, sample_size=10, n_resamples=7, rng=0, progress=True)
    pm.crossmatch_resample(x, y, sample_size=10, n_resamples=3, rng=0, progress=True, metric="rank_mahalanobis")
    seen = [(b.desc, b.unit.strip(), b.total) for b in bars if b.n]
    assert ("matching", "points", 71) in seen and ("certificate", "points") in [(b.desc, b.unit.strip()) for b in bars]
    assert ("cross-match resamples", "resamples", 7) in seen and ("cross-match resamples", "resamples", 3) in seen
    assert all(b.n == b.total for b in bars if b.n) and not any("block" in b.unit for b in bars)
