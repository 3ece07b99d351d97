import math

import dcor
import numpy as np
import pairmetrics as pm
import pytest
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics import _core, _distance_tests
from pairmetrics.reference import distance_tests as ref
from scipy import stats

METRICS = ["euclidean", "sqeuclidean", "cosine"]
ESTIMATORS = ["v-statistic", "u-statistic"]
KERNELS = ["rbf", "laplacian"]


def samples(n, m, d, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(shift, size=(m, d))


def tied_samples(n, m, d, seed=0):
    """Small integers: many identical rows within and across the samples (no all-zero rows, for cosine)."""
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 3, size=(n, d)), rng.integers(0, 3, size=(m, d))
    x[:, 0] += 1
    y[:, 0] += 1
    return x, y


def scale_of(x, y):
    """The size of a typical pair distance, for absolute tolerances."""
    z = np.concatenate([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
    return float(np.abs(z - z.mean(axis=0)).max()) + 1e-300


# ---------------------------------------------------------------- against the reference


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("kind", ["continuous", "tied"])
def test_energy_distance_matches_reference(metric, estimator, kind):
    x, y = samples(31, 17, 4, seed=1, shift=0.3) if kind == "continuous" else tied_samples(31, 17, 3, seed=2)
    expected = ref.energy_distance(x, y, metric, estimator)
    got = pm.energy_distance(x, y, metric=metric, estimator=estimator)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-12 * scale_of(x, y) ** 2)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("kind", ["continuous", "tied"])
def test_mmd_matches_reference(kernel, metric, estimator, kind):
    x, y = samples(23, 29, 3, seed=3, shift=0.5) if kind == "continuous" else tied_samples(23, 29, 3, seed=4)
    for gamma in (0.3, None):
        expected_gamma = ref.median_gamma(np.concatenate([x, y]), kernel, metric) if gamma is None else gamma
        got = pm.mmd(x, y, kernel=kernel, gamma=gamma, metric=metric, estimator=estimator)
        expected = ref.mmd(x, y, kernel, expected_gamma, metric, estimator)
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-13)


def test_median_gamma_matches_reference_beyond_the_subsample():
    x, y = samples(700, 600, 3, seed=5)
    pooled = np.concatenate([x, y])
    for kernel in KERNELS:
        result = pm.mmd_test(x[:40], y[:40], n_resamples=3, rng=0, kernel=kernel)
        assert result.gamma == pytest.approx(ref.median_gamma(pooled[np.r_[0:40, 700:740]], kernel), rel=1e-9)
        got = _distance_tests.median_gamma(_distance_tests.pooled_samples(x, y, "euclidean"), kernel)
        assert got == pytest.approx(ref.median_gamma(pooled, kernel), rel=1e-9)


@pytest.mark.parametrize("tile", [1, 3, 8, 64])
@pytest.mark.parametrize("split", [0, 1, 13, 20, 37])
def test_tiles_and_splits(tile, split):
    # Tiles straddling the split, a split on a tile edge, empty samples: every sum against the full matrix.
    rng = np.random.default_rng(tile * 100 + split)
    z = rng.normal(size=(37, 3))
    z[5] = z[9]  # a duplicate pair: distance exactly 0
    first = rng.random((5, 37)) < 0.5
    packed = np.packbits(first, axis=1, bitorder="little")
    full = ref.pair_values(z, z)
    sums = _core._distance_sums(z, split, True, 1.0, "identity", 1.0, packed, 2, tile=tile, resample_block=2)
    np.testing.assert_allclose(sums["to_first"], full[:, :split].sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sums["to_second"], full[:, split:].sum(axis=1), rtol=1e-12, atol=1e-12)
    expected = [s.astype(float) @ full @ s.astype(float) for s in first]
    np.testing.assert_allclose(sums["quadratic"], expected, rtol=1e-12)


@pytest.mark.parametrize("test", ["energy", "mmd"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_null_distribution_matches_reference(test, estimator):
    # The batched permutations against the statistic recomputed from scratch on each relabelling.
    x, y = tied_samples(13, 9, 2, seed=6)
    pooled = np.concatenate([x, y]).astype(float)
    labels = np.concatenate(list(_distance_tests.permutation_indicators(np.random.default_rng(7), 13, 22, 40)))
    if test == "energy":
        result = pm.energy_test(x, y, n_resamples=40, rng=7, estimator=estimator)
        expected = [ref.energy_statistic(pooled, s, estimator=estimator) for s in labels]
        observed = ref.energy_statistic(pooled, np.arange(22) < 13, estimator=estimator)
    else:
        result = pm.mmd_test(x, y, n_resamples=40, rng=7, gamma=0.7, estimator=estimator)
        expected = [ref.mmd_statistic(pooled, s, gamma=0.7, estimator=estimator) for s in labels]
        observed = ref.mmd_statistic(pooled, np.arange(22) < 13, gamma=0.7, estimator=estimator)
    np.testing.assert_allclose(result.null_distribution, expected, rtol=1e-10, atol=1e-12)
    assert result.statistic == pytest.approx(observed, rel=1e-10, abs=1e-12)
    # Ties with the observed statistic count as at least as large (the data have many).
    count = sum(e >= observed - 1e-9 for e in expected)
    assert result.pvalue == (count + 1) / 41


_dims = st.integers(1, 4)
_sizes = st.integers(1, 12)


@st.composite
def _two_samples(draw):
    d = draw(_dims)
    n, m = draw(_sizes), draw(_sizes)
    dtype = draw(st.sampled_from(DTYPES))
    if dtype == np.bool_:
        elements = st.booleans()
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        elements = st.integers(max(int(info.min), -3), min(int(info.max), 3))
    else:
        elements = st.floats(-4, 4, width=32).map(lambda v: round(v, 1))
    x = np.array(draw(st.lists(st.lists(elements, min_size=d, max_size=d), min_size=n, max_size=n)), dtype=dtype)
    y = np.array(draw(st.lists(st.lists(elements, min_size=d, max_size=d), min_size=m, max_size=m)), dtype=dtype)
    return x, y


@settings(max_examples=examples(120))
@given(_two_samples(), st.integers(-300, 300), st.sampled_from(["euclidean", "sqeuclidean"]))
def test_energy_distance_hypothesis(data, power, metric):
    # Every dtype, ties and tiny samples; scaling by 2^power scales the distance exactly (no overflow or underflow).
    x, y = data
    expected = ref.energy_distance(x, y, metric)
    factor = 2.0**power
    got = pm.energy_distance(np.asarray(x, dtype=float) * factor, np.asarray(y, dtype=float) * factor, metric=metric)
    unit = factor if metric == "euclidean" else factor * factor
    tolerance = 1e-11 * scale_of(x, y) ** (1 if metric == "euclidean" else 2)
    assert got / unit == pytest.approx(expected, rel=1e-9, abs=tolerance)
    assert pm.energy_distance(x, y, metric=metric) == pytest.approx(expected, rel=1e-9, abs=tolerance)


@settings(max_examples=examples(60))
@given(_two_samples(), st.sampled_from(KERNELS), st.floats(0.01, 10))
def test_mmd_hypothesis(data, kernel, gamma):
    x, y = data
    expected = ref.mmd(x, y, kernel, gamma)
    assert pm.mmd(x, y, kernel=kernel, gamma=gamma) == pytest.approx(expected, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- against dcor


@pytest.mark.parametrize("n, m, d", [(1, 1, 1), (2, 5, 3), (80, 120, 7), (600, 700, 12)])
def test_energy_equals_dcor(n, m, d):
    x, y = samples(n, m, d, seed=n, shift=0.2)
    assert pm.energy_distance(x, y) == pytest.approx(dcor.energy_distance(x, y), rel=1e-10)
    if min(n, m) > 1:
        got = pm.energy_distance(x, y, estimator="u-statistic")
        assert got == pytest.approx(dcor.energy_distance(x, y, estimation_stat="u_statistic"), rel=1e-10)
    result = pm.energy_test(x, y, n_resamples=5, rng=0)
    assert result.statistic == pytest.approx(float(dcor.homogeneity.energy_test(x, y).statistic), rel=1e-10)


def test_energy_equals_dcor_on_tied_data_and_other_exponents():
    x, y = tied_samples(60, 45, 4, seed=9)
    assert pm.energy_distance(x, y) == pytest.approx(dcor.energy_distance(x, y), rel=1e-10)
    got = pm.energy_distance(x, y, metric="sqeuclidean")
    assert got == pytest.approx(dcor.energy_distance(x, y, exponent=2), rel=1e-10)


def test_energy_equals_pertpy_convention():
    # pertpy's Edistance: 2 * mean between - mean within over distinct pairs, Euclidean distances.
    x, y = samples(40, 30, 5, seed=10, shift=0.4)
    within = [
        np.mean([np.linalg.norm(a[i] - a[j]) for i in range(len(a)) for j in range(i + 1, len(a))]) for a in (x, y)
    ]
    between = np.mean([np.linalg.norm(a - b) for a in x for b in y])
    expected = 2 * between - within[0] - within[1]
    assert pm.energy_distance(x, y, estimator="u-statistic") == pytest.approx(expected, rel=1e-10)


# ---------------------------------------------------------------- calibration and power


def _pvalues(test, kind, draws=200):
    rng = np.random.default_rng(11 if kind == "continuous" else 12)
    out = []
    for _ in range(draws):
        if kind == "continuous":
            x, y = rng.normal(size=(12, 2)), rng.normal(size=(9, 2))
        else:
            x, y = rng.integers(0, 3, size=(12, 2)), rng.integers(0, 3, size=(9, 2))
        run = pm.energy_test if test == "energy" else pm.mmd_test
        out.append(run(x, y, n_resamples=99, rng=rng, n_jobs=1).pvalue)
    return np.array(out)


@pytest.mark.parametrize("test", ["energy", "mmd"])
def test_null_calibration_continuous(test):
    p = _pvalues(test, "continuous")
    assert stats.kstest(p, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("test", ["energy", "mmd"])
def test_null_calibration_tied(test):
    # Tied data: valid permutation p-values are uniform or larger (never anti-conservative).
    p = _pvalues(test, "tied")
    assert stats.kstest(p, "uniform", alternative="greater").pvalue > 1e-3
    assert np.mean(p <= 0.05) <= 0.05 + 0.04


@pytest.mark.parametrize("test", ["energy", "mmd"])
def test_power_at_a_shift(test):
    rng = np.random.default_rng(13)
    run = pm.energy_test if test == "energy" else pm.mmd_test
    rejections = 0
    for _ in range(20):
        x, y = rng.normal(size=(40, 3)), rng.normal(0.8, size=(40, 3))
        rejections += run(x, y, n_resamples=99, rng=rng).pvalue <= 0.05
    assert rejections >= 18


# ---------------------------------------------------------------- results, threads, options


def test_results_and_threads():
    x, y = samples(300, 200, 6, seed=14, shift=0.1)
    one = pm.energy_test(x, y, n_resamples=50, rng=3, n_jobs=1)
    two = pm.energy_test(x, y, n_resamples=50, rng=3, n_jobs=2)
    assert two == one  # the same bits: the sums' order does not depend on the threads
    assert pm.energy_distance(x, y, n_jobs=1) == pm.energy_distance(x, y, n_jobs=2)
    statistic, pvalue = one
    assert (statistic, pvalue) == (one.statistic, one.pvalue)
    assert one.n_resamples == 50 and one.null_distribution.shape == (50,)
    assert one.energy_distance == pytest.approx(pm.energy_distance(x, y), rel=1e-12)
    assert one.asdict()["metric"] == "euclidean"
    result = pm.mmd_test(x, y, n_resamples=20, rng=0, kernel="laplacian", metric="cosine", progress=True)
    assert result.statistic == pytest.approx(pm.mmd(x, y, kernel="laplacian", metric="cosine"), rel=1e-12)
    assert 1 / 21 <= result.pvalue <= 1
    for name in ("energy_distance", "energy_test", "mmd", "mmd_test", "EnergyTestResult", "MMDTestResult"):
        assert name in pm.__all__


def test_same_samples_give_zero_and_one():
    x, _ = samples(20, 1, 3, seed=15)
    assert pm.energy_distance(x, x) == pytest.approx(0.0, abs=1e-14)
    assert pm.energy_test(x, x, n_resamples=19, rng=0).pvalue == 1.0
    assert pm.mmd(x, x) == pytest.approx(0.0, abs=1e-14)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda x, y: pm.energy_distance(x[0], y), "x must be 2-D"),
        (lambda x, y: pm.energy_distance(x, y[:, :2]), "same number of columns"),
        (lambda x, y: pm.energy_distance(np.where(np.eye(5, 3) > 0, np.nan, x), y), "x contains NaN"),
        (lambda x, y: pm.energy_test(x, np.full_like(y, np.inf)), "y contains infinite"),
        (lambda x, y: pm.energy_distance(x, y, metric="cityblock"), "metric must be one of"),
        (lambda x, y: pm.energy_distance(x, y, estimator="u"), "estimator must be one of"),
        (lambda x, y: pm.energy_distance(x[:1], y, estimator="u-statistic"), "estimator='u-statistic' needs"),
        (lambda x, y: pm.energy_test(x, y, n_resamples=0), "n_resamples must be >= 1"),
        (lambda x, y: pm.mmd(x, y, gamma=-1.0), "gamma"),
        (lambda x, y: pm.mmd_test(x, y, kernel="linear"), "kernel must be one of"),
        (lambda x, y: pm.energy_distance(np.zeros_like(x), y, metric="cosine"), "x has all-zero rows"),
        (lambda x, y: pm.energy_distance(x, np.zeros((0, 3))), "y needs at least 1 rows"),
        (lambda x, y: pm.energy_distance(x * 1e306, y), "x and y have values up to"),
        (lambda x, y: pm.energy_test(x, y * 1e160, metric="sqeuclidean"), "overflow float64"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    x, y = samples(5, 4, 3)
    with pytest.raises(ValueError, match=match):
        call(x, y)


def test_bad_types_name_the_argument():
    x, y = samples(5, 4, 3)
    with pytest.raises(TypeError, match="rng"):
        pm.energy_test(x, y, rng="seed")
    with pytest.raises(TypeError, match="x must"):
        pm.energy_distance([["a"]], y)
    with pytest.raises(TypeError, match="progress"):
        pm.mmd(x, y, progress=1)


def test_extreme_magnitudes():
    x, y = samples(30, 20, 3, seed=16, shift=0.5)
    expected = pm.energy_distance(x, y)
    for power in (-1000, -500, 500, 1000):
        got = pm.energy_distance(np.ldexp(x, power), np.ldexp(y, power))
        assert math.ldexp(got, -power) == pytest.approx(expected, rel=1e-12)


def test_docstring_examples():
    import doctest

    result = doctest.testmod(_distance_tests, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
