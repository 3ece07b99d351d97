"""Cosine and correlation matchings on the Euclidean point path; the size limit of dense-matrix metrics."""

import numpy as np
import pairmetrics as pm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics import _matching
from pairmetrics._matching import solve_dense
from pairmetrics.reference import matching as ref
from scipy.spatial import distance
from scipy.spatial.distance import cdist

METRICS = ["cosine", "correlation"]


def valid_rows(X, metric):
    """X with no row the metric is undefined for (all-zero or constant)."""
    X = np.array(X, dtype=np.float64)
    bad = np.all(X == (0 if metric == "cosine" else X[:, :1]), axis=1)
    X[bad, 0] += 1.5
    if metric == "correlation" and X.shape[1] == 1:
        X = np.column_stack([X, -X + 0.25])
    return X


def refuse(*args, **kwargs):
    raise AssertionError("an N x N matrix of a non-Euclidean metric was built")


def no_dense_matrix(monkeypatch):
    """Fail any path that builds an N x N matrix of a metric other than the Euclidean ones."""
    monkeypatch.setattr(_matching, "pairwise_distances", refuse)
    monkeypatch.setattr(_matching, "solve_dense", refuse)
    monkeypatch.setattr(distance, "cdist", refuse)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 12),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    metric=st.sampled_from(METRICS),
    ties=st.booleans(),
)
def test_cost_is_the_optimum_of_the_dense_matrix(n, d, seed, metric, ties):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X = valid_rows(np.round(X) if ties else X, metric)
    D = cdist(X, X, metric)
    np.fill_diagonal(D, 0)
    D = np.maximum((D + D.T) / 2, 0)
    m = pm.min_weight_perfect_matching(points=X, metric=metric)
    want = solve_dense(D, n_neighbors=10).cost
    assert m.cost == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert m.cost == pytest.approx(float(sum(D[i, j] for i, j in m.pairs)), rel=1e-9, abs=1e-12)
    if n <= 8:  # exhaustive optimum of the plain-Python reference
        assert m.cost == pytest.approx(ref.min_weight_perfect_matching(D.tolist())[0], rel=1e-9, abs=1e-12)
    assert m.verify()
    assert m.verify(points=X)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16, np.float32, np.float64])
def test_dtypes(metric, dtype):
    rng = np.random.default_rng(3)
    integers = np.dtype(dtype).kind in "iu"
    X = rng.integers(-5, 6, size=(30, 3)) if integers else rng.normal(size=(30, 3))
    X = valid_rows(np.abs(X) if np.dtype(dtype).kind == "u" else X, metric)
    X = X.astype(dtype)
    Xf = X.astype(np.float64)
    m = pm.min_weight_perfect_matching(points=X, metric=metric)
    assert m.cost == pytest.approx(
        solve_dense(_symmetric(cdist(Xf, Xf, metric)), n_neighbors=10).cost, rel=1e-9, abs=1e-12
    )
    assert m.verify()


def _symmetric(D):
    np.fill_diagonal(D, 0)
    return np.maximum((D + D.T) / 2, 0)


@pytest.mark.parametrize("metric", METRICS)
def test_units_are_the_metric_s(metric):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(41, 6))
    D = _symmetric(cdist(X, X, metric))
    m = pm.min_weight_perfect_matching(points=X, metric=metric)
    dense = pm.min_weight_perfect_matching(D)
    assert m.cost == pytest.approx(dense.cost, rel=1e-12)
    assert m.max_distance >= D.max() * (1 - 1e-12)
    assert m.resolution == pytest.approx(dense.resolution, rel=0.5)
    c = m.certificate()
    assert c["cost"] == pytest.approx(m.cost, rel=1e-12)
    assert c["dual_objective"] == pytest.approx(m.cost, rel=1e-9)
    assert c["gap_bound"] <= 1e-9 * m.cost


@pytest.mark.parametrize("metric", METRICS)
def test_scale_invariance_is_exact_at_extreme_magnitudes(metric):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 4))
    base = pm.min_weight_perfect_matching(points=X, metric=metric)
    for factor in (2.0**-1000, 2.0**1000):
        m = pm.min_weight_perfect_matching(points=X * factor, metric=metric)
        assert m.cost == base.cost and (m.mate == base.mate).all()
        assert m.verify()
    tiny = X * 2.0**-1070  # subnormal: fewer digits, but scaling it back up is exact
    m = pm.min_weight_perfect_matching(points=tiny, metric=metric)
    back = pm.min_weight_perfect_matching(points=tiny * 2.0**1000 * 2.0**70, metric=metric)
    assert m.cost == back.cost and (m.mate == back.mate).all() and m.verify()
    m = pm.min_weight_perfect_matching(points=X * 1e300, metric=metric)
    assert m.cost == pytest.approx(base.cost, rel=1e-12) and m.verify()


@pytest.mark.parametrize("metric", METRICS)
def test_float32_near_its_largest_values(metric):
    rng = np.random.default_rng(14)
    x = (rng.normal(size=(20, 6)) * 1e37).astype(np.float32)
    y = (rng.normal(size=(21, 6)) * 1e37).astype(np.float32)
    X = np.vstack([x, y]).astype(np.float64)
    dense = pm.crossmatch_test(D=_symmetric(cdist(X, X, metric)), labels=np.repeat([0, 1], [20, 21]), rng=0)
    r = pm.crossmatch_test(x, y, metric=metric)
    assert r.statistic == dense.statistic and r.matching.cost == pytest.approx(dense.matching.cost, rel=1e-9)
    assert r.matching.verify()


@pytest.mark.parametrize("metric", METRICS)
def test_no_dense_matrix_is_built(metric, monkeypatch):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 5))
    no_dense_matrix(monkeypatch)
    m = pm.min_weight_perfect_matching(points=X, metric=metric, max_matrix_bytes=0)
    assert m.verify() and m.verify(points=X)
    x, y = X[:300], X[300:] + 0.5
    r = pm.crossmatch_test(x, y, metric=metric, max_matrix_bytes=0)
    assert r.matching.verify()


def test_verify_with_explicit_points_applies_the_transform():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    m = pm.min_weight_perfect_matching(points=X, metric="cosine")
    assert m.verify(points=X * 7.0)  # cosine ignores the length of the rows
    other = rng.normal(size=(40, 3))
    assert not m.verify(points=other)
    with pytest.raises(ValueError, match="all-zero rows"):
        m.verify(points=np.zeros((40, 3)))


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_crossmatch_a1_equals_the_dense_path(metric, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(150, 8))
    y = rng.normal(size=(171, 8)) + 0.3
    X = np.vstack([x, y])
    z = np.repeat([0, 1], [150, 171])
    dense = pm.crossmatch_test(D=_symmetric(cdist(X, X, metric)), labels=z, rng=0)
    r = pm.crossmatch_test(x, y, metric=metric)
    assert (r.within_x, r.statistic, r.within_y) == (dense.within_x, dense.statistic, dense.within_y)
    assert r.matching.cost == pytest.approx(dense.matching.cost, rel=1e-9)
    assert r.matching.verify()


@pytest.mark.parametrize("metric", METRICS)
def test_crossmatch_resample_matches_the_dense_metric(metric):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(80, 5))
    y = rng.normal(size=(90, 5)) + 0.4
    r = pm.crossmatch_resample(x, y, sample_size=30, n_resamples=20, rng=7, metric=metric)
    # Weights of one: the same distances through scipy's cdist (the dense path).
    dense = pm.crossmatch_resample(x, y, sample_size=30, n_resamples=20, rng=7, metric=metric, w=np.ones(5))
    assert (r.statistics == dense.statistics).all()


def test_crossmatch_resample_never_calls_cdist_for_cosine(monkeypatch):
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(60, 4)), rng.normal(size=(60, 4))
    monkeypatch.setattr(distance, "cdist", refuse)
    r = pm.crossmatch_resample(x, y, sample_size=20, n_resamples=5, rng=0, metric="correlation")
    assert r.statistics.shape == (5,)


def test_undefined_rows_are_refused_and_named():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(10, 3))
    X[[2, 7]] = 0
    with pytest.raises(ValueError, match=r"points has all-zero rows \[2, 7\]"):
        pm.min_weight_perfect_matching(points=X, metric="cosine")
    C = rng.normal(size=(10, 3))
    C[4] = 3.0
    with pytest.raises(ValueError, match=r"points has constant rows \[4\]"):
        pm.min_weight_perfect_matching(points=C, metric="correlation")
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    y[5] = 0
    with pytest.raises(ValueError, match=r"y has all-zero rows \[5\]"):
        pm.crossmatch_test(x, y, metric="cosine")
    x[1] = -2.0
    with pytest.raises(ValueError, match=r"x has constant rows \[1\]"):
        pm.crossmatch_test(x, y, metric="correlation")
    with pytest.raises(ValueError, match=r"x has constant rows \[1\]"):
        pm.crossmatch_resample(x, y, sample_size=3, n_resamples=2, rng=0, metric="correlation")


def test_dense_metrics_refuse_above_max_matrix_bytes():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(100, 3))
    need = 8 * 100 * 100
    with pytest.raises(ValueError, match=rf"needs an N x N distance matrix: N = 100 points take {need} bytes") as info:
        pm.min_weight_perfect_matching(points=X, metric="cityblock", max_matrix_bytes=need - 1)
    assert f"max_matrix_bytes={need}" in str(info.value)
    ok = pm.min_weight_perfect_matching(points=X, metric="cityblock", max_matrix_bytes=need)
    assert ok.verify()
    for metric, kwargs in (
        ("rank_mahalanobis", {}),
        (lambda a, b: float(np.abs(a - b).sum()), {}),
        ("cosine", {"w": np.ones(3)}),
        ("minkowski", {"p": 3}),
    ):
        with pytest.raises(ValueError, match="max_matrix_bytes"):
            pm.min_weight_perfect_matching(points=X, metric=metric, max_matrix_bytes=1000, **kwargs)
    for metric in ("euclidean", "sqeuclidean", "cosine", "correlation"):  # no matrix: no limit
        pm.min_weight_perfect_matching(points=X, metric=metric, max_matrix_bytes=0)
    with pytest.raises(ValueError, match="max_matrix_bytes"):
        pm.crossmatch_test(X[:50], X[50:], metric="chebyshev", max_matrix_bytes=1000)
    # crossmatch_resample builds a matrix per subsample for every metric
    with pytest.raises(ValueError, match=r"N = 40 points take 12800 bytes"):
        pm.crossmatch_resample(
            X[:50], X[50:], sample_size=20, n_resamples=2, metric="euclidean", max_matrix_bytes=12799
        )
    r = pm.crossmatch_resample(X[:50], X[50:], sample_size=20, n_resamples=2, rng=0, max_matrix_bytes=12800)
    assert r.statistics.shape == (2,)


def test_compare_groups_passes_max_matrix_bytes():
    pytest.importorskip("pandas")
    rng = np.random.default_rng(11)
    X = rng.normal(size=(60, 3))
    labels = ["a"] * 30 + ["b"] * 30
    with pytest.raises(ValueError, match="max_matrix_bytes"):
        pm.compare_groups(X, labels, reference="a", metric="cityblock", max_matrix_bytes=100)
    table = pm.compare_groups(X, labels, reference="a", metric="cosine", max_matrix_bytes=0)
    assert list(table.index) == ["b"]


@pytest.mark.parametrize(
    "bad, error", [(-1, ValueError), (1.5, TypeError), ("big", TypeError), (True, TypeError), (None, TypeError)]
)
def test_max_matrix_bytes_is_validated(bad, error):
    X = np.random.default_rng(12).normal(size=(10, 2))
    with pytest.raises(error, match="max_matrix_bytes"):
        pm.min_weight_perfect_matching(points=X, max_matrix_bytes=bad)
    with pytest.raises(error, match="max_matrix_bytes"):
        pm.crossmatch_test(X[:5], X[5:], max_matrix_bytes=bad)
    with pytest.raises(error, match="max_matrix_bytes"):
        pm.crossmatch_resample(X[:5], X[5:], sample_size=2, n_resamples=1, max_matrix_bytes=bad)


def test_dask_resample_agrees_for_cosine():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(13)
    x, y = rng.normal(size=(60, 4)), rng.normal(size=(70, 4)) + 0.3
    want = pm.crossmatch_resample(x, y, sample_size=20, n_resamples=4, rng=1, metric="cosine", n_jobs=1)
    got = pm.crossmatch_resample(
        da.from_array(x, chunks=25),
        da.from_array(y, chunks=25),
        sample_size=20,
        n_resamples=4,
        rng=1,
        metric="cosine",
        n_jobs=1,
    )
    assert (got.statistics == want.statistics).all()
    with pytest.raises(ValueError, match="max_matrix_bytes"):
        pm.crossmatch_resample(
            da.from_array(x, chunks=25), da.from_array(y, chunks=25), sample_size=20, n_resamples=1, max_matrix_bytes=10
        )
