"""pairmetrics.scipy against SciPy itself and against the plain-Python references."""

from __future__ import annotations

import inspect
import subprocess
import sys
import warnings

import numpy as np
import pairmetrics.scipy as ps
import pytest
import scipy.stats as ss
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics import _core
from pairmetrics.reference import rank_statistics as ref

NAMES = ["kendalltau", "somersd", "weightedtau", "spearmanr", "mannwhitneyu"]
ALTERNATIVES = ["two-sided", "less", "greater"]


def close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def same_result(ours, theirs, fields=("statistic", "pvalue")):
    for field in fields:
        close(getattr(ours, field), getattr(theirs, field))


@pytest.mark.parametrize("name", NAMES)
def test_signature_is_scipys(name):
    ours, theirs = inspect.signature(getattr(ps, name)), inspect.signature(getattr(ss, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]


def test_import_loads_no_scipy():
    code = "import sys, pairmetrics, pairmetrics.scipy; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def samples(max_size=14, levels=4):
    """Pairs of equal-length integer samples with many ties (values in a few levels)."""
    return st.integers(2, max_size).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, levels), min_size=n, max_size=n),
            st.lists(st.integers(0, levels), min_size=n, max_size=n),
        )
    )


@settings(max_examples=examples(150), deadline=None)
@given(samples(), st.sampled_from(DTYPES), st.sampled_from(ALTERNATIVES), st.sampled_from(["b", "c"]))
def test_kendalltau_matches_scipy_and_reference(pair, dtype, alternative, variant):
    x, y = (np.array(v).astype(dtype) for v in pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = ps.kendalltau(x, y, alternative=alternative, variant=variant)
        theirs = ss.kendalltau(x, y, alternative=alternative, variant=variant)
    same_result(ours, theirs)
    np.testing.assert_equal(ours.correlation, ours.statistic)
    assert np.asarray(ours.statistic).dtype == np.asarray(theirs.statistic).dtype
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    con, dis, tx, ty, _ = ref.kendall_counts(xs, ys)
    if variant == "b" and (con + dis + tx) and (con + dis + ty):
        close(ours.statistic, ref.kendall_tau_b(xs, ys))


@settings(max_examples=examples(60), deadline=None)
@given(
    st.permutations(list(range(12))), st.sampled_from(ALTERNATIVES), st.sampled_from(["exact", "asymptotic", "auto"])
)
def test_kendalltau_methods_without_ties(perm, alternative, method):
    x, y = np.arange(12), np.array(perm)
    same_result(
        ps.kendalltau(x, y, method=method, alternative=alternative),
        ss.kendalltau(x, y, method=method, alternative=alternative),
    )


def test_kendall_exact_pvalue_large_n_and_extremes():
    rng = np.random.default_rng(1)
    for n in (3, 34, 60, 180):
        x = rng.permutation(n)
        for alternative in ALTERNATIVES:
            same_result(
                ps.kendalltau(np.arange(n), x, method="exact", alternative=alternative),
                ss.kendalltau(np.arange(n), x, method="exact", alternative=alternative),
            )
    for y in (np.arange(40), np.arange(40)[::-1], np.r_[1, 0, np.arange(2, 40)]):
        same_result(ps.kendalltau(np.arange(40), y), ss.kendalltau(np.arange(40), y))
    with pytest.raises(ValueError, match="Ties found"):
        ps.kendalltau([1, 1, 2], [1, 2, 3], method="exact")
    with pytest.raises(ValueError, match="variant"):
        ps.kendalltau([1, 2, 3], [1, 2, 3], variant="a")


def test_kendall_null_pmf_is_mahonian():
    for n in range(1, 9):
        exact = ref.kendall_null_pmf(n)
        close(_core.kendall_null_pmf(n, len(exact) - 1), [float(v) for v in exact], rtol=1e-12)


def test_counts_exact_at_extreme_magnitudes():
    big = np.array([2**64 - 1, 2**64 - 2, 2**63, 0, 2**64 - 1], dtype=np.uint64)
    small = np.array([-(2**63), 2**63 - 1, -(2**63) + 1, 5, -(2**63)], dtype=np.int64)
    same_result(ps.kendalltau(big, small), ss.kendalltau(big, small))
    same_result(ps.spearmanr(big, small), ss.spearmanr(big, small))
    same_result(ps.weightedtau(big, small), ss.weightedtau(big, small), ("statistic",))
    f = np.array([1e308, -1e308, 5e-324, -0.0, 0.0, np.inf, -np.inf])
    same_result(ps.kendalltau(f, f[::-1]), ss.kendalltau(f, f[::-1]))


@settings(max_examples=examples(150), deadline=None)
@given(samples(levels=6), st.sampled_from(DTYPES), st.sampled_from(ALTERNATIVES))
def test_spearmanr_matches_scipy_and_reference(pair, dtype, alternative):
    x, y = (np.array(v).astype(dtype) for v in pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = ps.spearmanr(x, y, alternative=alternative), ss.spearmanr(x, y, alternative=alternative)
    same_result(ours, theirs)
    if np.isfinite(ours.statistic):
        close(ours.statistic, ref.spearman_rho([float(v) for v in x], [float(v) for v in y]))


def test_spearmanr_matrices_axes_and_nan():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 5, size=(20, 4)).astype(float)
    for kwargs in ({}, {"axis": 0}, {"alternative": "less"}):
        same_result(ps.spearmanr(a, **kwargs), ss.spearmanr(a, **kwargs))
    same_result(ps.spearmanr(a.T, axis=1), ss.spearmanr(a.T, axis=1))
    same_result(ps.spearmanr(a[:, 0], a[:, 1:3]), ss.spearmanr(a[:, 0], a[:, 1:3]))
    same_result(ps.spearmanr(a[:, 0], a[:, 1], axis=None), ss.spearmanr(a[:, 0], a[:, 1], axis=None))
    a[3, 2] = np.nan
    for policy in ("propagate", "omit"):
        same_result(ps.spearmanr(a, nan_policy=policy), ss.spearmanr(a, nan_policy=policy))
        same_result(
            ps.spearmanr(a[:, 1], a[:, 2], nan_policy=policy), ss.spearmanr(a[:, 1], a[:, 2], nan_policy=policy)
        )
    with pytest.raises(ValueError, match="nan"):
        ps.spearmanr(a, nan_policy="raise")
    with pytest.warns(ss.ConstantInputWarning):
        assert np.isnan(ps.spearmanr([1, 1, 1], [1, 2, 3]).statistic)
    with pytest.raises(ValueError, match="2 variables"):
        ps.spearmanr([1, 2, 3])


@settings(max_examples=examples(150), deadline=None)
@given(samples(levels=5), st.sampled_from(DTYPES), st.sampled_from(ALTERNATIVES))
def test_somersd_matches_scipy_and_reference(pair, dtype, alternative):
    x, y = (np.array(v).astype(dtype) for v in pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = ps.somersd(x, y, alternative), ss.somersd(x, y, alternative)
    same_result(ours, theirs)
    np.testing.assert_array_equal(ours.table, theirs.table)
    if np.isfinite(ours.statistic):
        d, _ = ref.somers_d([float(v) for v in x], [float(v) for v in y])
        close(ours.statistic, float(d))
        same_result(ps.somersd(theirs.table, alternative=alternative), theirs)


def test_somersd_bad_input_and_continuous():
    with pytest.raises(ValueError, match="equal length"):
        ps.somersd([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        ps.somersd([[1, -1], [2, 3]])
    with pytest.raises(ValueError, match="1D or 2D"):
        ps.somersd(np.ones((2, 2, 2)))
    rng = np.random.default_rng(3)
    x = rng.normal(size=80)
    y = x + rng.normal(size=80)
    same_result(ps.somersd(x, y), ss.somersd(x, y))


def weighers():
    return st.sampled_from([None, lambda r: 1.0 / (r + 2) ** 2, lambda r: 1.0 if r < 3 else 0.5])


@settings(max_examples=examples(150), deadline=None)
@given(
    samples(levels=5),
    st.sampled_from([np.int32, np.int64, np.float32, np.float64, np.uint8, np.bool_]),
    st.sampled_from([True, None, False, "array"]),
    weighers(),
    st.booleans(),
)
def test_weightedtau_matches_scipy(pair, dtype, rank, weigher, additive):
    x, y = (np.array(v).astype(dtype) for v in pair)
    if rank == "array":
        rank = np.array(pair[0][::-1]) * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = ps.weightedtau(x, y, rank=rank, weigher=weigher, additive=additive)
        theirs = ss.weightedtau(x, y, rank=rank, weigher=weigher, additive=additive)
    close(ours.statistic, theirs.statistic, rtol=1e-9, atol=1e-12)
    assert np.isnan(ours.pvalue)


def test_weightedtau_reference_and_nan():
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 4, 15).astype(float), rng.integers(0, 4, 15).astype(float)
    weights = 1.0 / (np.arange(15) + 1.0)
    for additive in (True, False):
        ours = ps.weightedtau(x, y, rank=False, additive=additive).statistic
        close(ours, ref.weighted_tau(list(x), list(y), list(weights), additive))
    x[2] = y[5] = np.nan
    same_result(ps.weightedtau(x, y), ss.weightedtau(x, y), ("statistic",))
    x2 = rng.normal(size=(3, 10))
    same_result(ps.weightedtau(x2, x2[::-1], axis=1), ss.weightedtau(x2, x2[::-1], axis=1), ("statistic",))


def mwu_samples(max_size=12, levels=5):
    sizes = st.tuples(st.integers(1, max_size), st.integers(1, max_size))
    return sizes.flatmap(
        lambda mn: st.tuples(
            st.lists(st.integers(0, levels), min_size=mn[0], max_size=mn[0]),
            st.lists(st.integers(0, levels), min_size=mn[1], max_size=mn[1]),
        )
    )


@settings(max_examples=examples(200), deadline=None)
@given(
    mwu_samples(levels=30),
    st.sampled_from(DTYPES),
    st.sampled_from(ALTERNATIVES),
    st.sampled_from(["auto", "exact", "asymptotic"]),
    st.booleans(),
)
def test_mannwhitneyu_matches_scipy_and_reference(pair, dtype, alternative, method, continuity):
    x, y = (np.array(v).astype(dtype) for v in pair)
    kwargs = {"alternative": alternative, "method": method, "use_continuity": continuity}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = ps.mannwhitneyu(x, y, **kwargs), ss.mannwhitneyu(x, y, **kwargs)
    tolerance = 1e-5 if dtype == np.float32 else 1e-9  # SciPy computes float32 input in float32
    close(ours.statistic, theirs.statistic, rtol=tolerance)
    close(ours.pvalue, theirs.pvalue, rtol=tolerance, atol=1e-12)
    assert ours.statistic.dtype == theirs.statistic.dtype
    close(ours.statistic, ref.mann_whitney_u([float(v) for v in x], [float(v) for v in y]))


def test_mannwhitneyu_axes_nan_and_bad_input():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(3, 9)), rng.normal(size=(3, 11))
    same_result(ps.mannwhitneyu(x, y, axis=1), ss.mannwhitneyu(x, y, axis=1))
    same_result(ps.mannwhitneyu(x.T, y.T, keepdims=True), ss.mannwhitneyu(x.T, y.T, keepdims=True))
    x[1, 2] = np.nan
    for policy in ("propagate", "omit"):
        same_result(ps.mannwhitneyu(x, y, axis=1, nan_policy=policy), ss.mannwhitneyu(x, y, axis=1, nan_policy=policy))
    with pytest.raises(ValueError, match="nan"):
        ps.mannwhitneyu(x, y, axis=1, nan_policy="raise")
    with pytest.raises(ValueError, match="alternative"):
        ps.mannwhitneyu([1, 2], [3, 4], alternative="bigger")
    with pytest.raises(ValueError, match="method"):
        ps.mannwhitneyu([1, 2], [3, 4], method="exactly")
    perm = ss.PermutationMethod(n_resamples=99, rng=0)
    same_result(ps.mannwhitneyu(x[0], y[0], method=perm), ss.mannwhitneyu(x[0], y[0], method=perm))


@settings(max_examples=examples(60), deadline=None)
@given(
    mwu_samples(max_size=40, levels=8),
    st.integers(1, 9),
    st.integers(1, 9),
    st.sampled_from(ALTERNATIVES),
    st.sampled_from(["auto", "exact", "asymptotic"]),
    st.booleans(),
)
def test_mannwhitneyu_on_dask_equals_in_memory(pair, chunk_x, chunk_y, alternative, method, continuity):
    da = pytest.importorskip("dask.array")
    x, y = (np.array(v, dtype=np.float64) for v in pair)
    kwargs = {"alternative": alternative, "method": method, "use_continuity": continuity}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ps.mannwhitneyu(x, y, **kwargs)
        got = ps.mannwhitneyu(da.from_array(x, chunks=chunk_x), da.from_array(y, chunks=chunk_y), **kwargs)
    assert got.statistic == expected.statistic  # exact counts
    close(got.pvalue, expected.pvalue, rtol=1e-12, atol=1e-15)


def test_mannwhitneyu_on_dask_nan_policies_and_refusals():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(8)
    x, y = np.round(rng.normal(size=300), 1), np.round(rng.normal(0.2, size=200), 1)
    x[[3, 100]] = np.nan
    dx, dy = da.from_array(x, chunks=64), da.from_array(y, chunks=50)
    for policy in ("propagate", "omit"):
        same_result(ps.mannwhitneyu(dx, dy, nan_policy=policy), ss.mannwhitneyu(x, y, nan_policy=policy))
    with pytest.raises(ValueError, match="nan"):
        ps.mannwhitneyu(dx, dy, nan_policy="raise")
    same_result(ps.mannwhitneyu(dx[:3], dy, keepdims=True), ss.mannwhitneyu(x[:3], y, keepdims=True))
    with pytest.raises(TypeError, match="not computed on Dask"):
        ps.mannwhitneyu(dx, dy, method="exact-conditional")
    with pytest.raises(ValueError, match="1-D"):
        ps.mannwhitneyu(da.ones((4, 3)), da.ones((5, 3)))
    with pytest.raises(ValueError, match="alternative"):
        ps.mannwhitneyu(dx, dy, alternative="bigger")


def test_mann_whitney_null_pmf_exact_and_large():
    for m, n in [(1, 1), (2, 5), (4, 4), (6, 3), (5, 7)]:
        exact = ref.mann_whitney_null_pmf(m, n)
        close(_core.mann_whitney_null_pmf(m, n, m * n), [float(v) for v in exact], rtol=1e-12, atol=1e-15)
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=60), rng.normal(size=70) + 0.3
    for alternative in ALTERNATIVES:
        same_result(
            ps.mannwhitneyu(x, y, method="exact", alternative=alternative),
            ss.mannwhitneyu(x, y, method="exact", alternative=alternative),
        )


@settings(max_examples=examples(60), deadline=None)
@given(mwu_samples(max_size=6, levels=3), st.sampled_from(ALTERNATIVES))
def test_exact_conditional_matches_enumeration(pair, alternative):
    x, y = pair
    m, n = len(x), len(y)
    res = ps.mannwhitneyu(x, y, method="exact-conditional", alternative=alternative)
    u = ref.mann_whitney_u(x, y)
    pooled = x + y
    low = ref.mann_whitney_conditional_cdf(pooled, m, 2 * u)
    high = ref.mann_whitney_conditional_cdf(pooled[m:] + pooled[:m], n, 2 * (m * n - u))
    expected = {"less": low, "greater": high, "two-sided": min(1, 2 * min(low, high))}[alternative]
    close(res.statistic, u)
    close(res.pvalue, float(expected), rtol=1e-10)


@pytest.mark.parametrize("kind", ["continuous", "tied"])
def test_exact_conditional_null_calibration(kind):
    """Under the null the p-values are valid: P(p <= a) <= a (tied data: discrete, conservative)."""
    rng = np.random.default_rng(7)
    pvalues = []
    for _ in range(200):
        if kind == "continuous":
            x, y = rng.normal(size=7), rng.normal(size=9)
        else:
            x, y = rng.integers(0, 4, 7), rng.integers(0, 4, 9)
        pvalues.append(ps.mannwhitneyu(x, y, method="exact-conditional", alternative="greater").pvalue)
    pvalues = np.array(pvalues)
    for a in (0.05, 0.1, 0.25, 0.5):
        assert np.mean(pvalues <= a) <= a + 3 * np.sqrt(a * (1 - a) / len(pvalues))
    if kind == "continuous":  # fine-grained: close to uniform
        assert ss.kstest(pvalues, "uniform").pvalue > 1e-3
    else:  # less conservative than SciPy's exact method, which ignores the ties
        assert np.mean(pvalues <= 0.25) >= 0.1


def test_kendalltau_axis_nan_policy_keepdims():
    rng = np.random.default_rng(8)
    x, y = rng.integers(0, 5, (4, 12)).astype(float), rng.integers(0, 5, (4, 12)).astype(float)
    same_result(ps.kendalltau(x, y, axis=1), ss.kendalltau(x, y, axis=1))
    same_result(ps.kendalltau(x, y, axis=1, keepdims=True), ss.kendalltau(x, y, axis=1, keepdims=True))
    x[0, 3] = np.nan
    for policy in ("propagate", "omit"):
        same_result(ps.kendalltau(x, y, nan_policy=policy), ss.kendalltau(x, y, nan_policy=policy))
    with pytest.raises(ValueError, match="nan"):
        ps.kendalltau(x, y, nan_policy="raise")
    same_result(ps.kendalltau([], []), ss.kendalltau([], []))
    same_result(ps.kendalltau([1, 1, 1], [1, 2, 3]), ss.kendalltau([1, 1, 1], [1, 2, 3]))


@pytest.mark.parametrize("x_levels, y_levels", [(10**6, 10**6), (5, 10**6), (10**6, 5), (3000, 3000)])
def test_kendall_paths_many_and_few_values(x_levels, y_levels):
    """Beyond 4096 distinct values the counts come from sorts and merge passes, below from a table."""
    rng = np.random.default_rng(9)
    x = rng.integers(0, x_levels, 6000)
    y = (x * 7 + rng.integers(0, y_levels, 6000)) % y_levels
    same_result(ps.kendalltau(x, y), ss.kendalltau(x, y))
    same_result(ps.kendalltau(x, y, variant="c"), ss.kendalltau(x, y, variant="c"))
    if min(x_levels, y_levels) <= 5:  # SciPy's table of 5 x 6000 cells
        same_result(ps.somersd(x[:800], y[:800]), ss.somersd(x[:800], y[:800]))
    same_result(ps.weightedtau(x, y), ss.weightedtau(x, y), ("statistic",))


# SciPy's tests of the five functions: test modules and a -k selection of their names
SCIPY_SUITE = {
    "test_stats.py": "kendall or Kendall or weightedtau or Spearman or spearman",
    "test_hypotests.py": "MannWhitneyU or SomersD",
    "test_axis_nan_policy.py": "kendalltau or weightedtau or mannwhitneyu",
}


@pytest.mark.parametrize("module", sorted(SCIPY_SUITE))
def test_scipy_own_tests_on_pairmetrics(module, tmp_path):
    """SciPy's own tests (shipped in its wheel) with the five functions replaced by ours."""
    import json
    import os

    path = os.path.join(os.path.dirname(ss.__file__), "tests", module)
    if not os.path.exists(path):
        pytest.skip("this SciPy installation does not ship its tests")
    report = tmp_path / "report.json"
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in [here, *sys.path] if p),
        PAIRMETRICS_SCIPY_SUITE_REPORT=str(report),
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "_scipy_suite_plugin",
        "-n",
        "0",
        "-k",
        SCIPY_SUITE[module],
        path,
    ]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    tally = json.loads(report.read_text())
    called = {name: entry for name, entry in tally.items() if entry["calls"]}
    failed = {
        name: entry.get("message", "")
        for name, entry in called.items()
        if entry["outcome"] not in ("passed", "xfailed")
    }
    assert not failed, json.dumps(failed, indent=1)[-6000:]
    assert called, run.stdout[-3000:]
    print(f"\nSciPy's {module} on pairmetrics: {len(called)} tests call ours")
