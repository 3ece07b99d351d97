"""bootstrap(): SciPy's intervals, the compiled AUC path against the generic one, strata and clusters."""

from __future__ import annotations

import math

import numpy as np
import pairmetrics as pm
import pytest
from pairmetrics._bootstrap import _auc_leave_one_out, _resample, resampling_design
from scipy import stats


def _auc_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = (y + rng.normal(size=n)).round(1)  # rounded: many tied scores
    return y, score


def _generic_auc(y, s):
    return pm.roc_auc_score(y, s)


def test_fast_path_matches_generic_distribution():
    # Different random streams, same distribution: compare the spread and the interval loosely,
    # and each replicate exactly against the generic statistic on the same weights below.
    y, score = _auc_problem()
    fast = pm.bootstrap(pm.roc_auc_score, y, score, n_resamples=2000, rng=1)
    slow = pm.bootstrap(_generic_auc, y, score, n_resamples=2000, rng=2)
    assert fast.standard_error == pytest.approx(slow.standard_error, rel=0.15)
    assert tuple(fast.confidence_interval) == pytest.approx(tuple(slow.confidence_interval), abs=0.02)


def test_fast_replicates_are_exact_aucs_of_the_drawn_counts():
    from pairmetrics import _core

    y, score = _auc_problem(60, 3)
    order = np.argsort(score, kind="stable")
    s = score[order]
    group_end = np.r_[np.flatnonzero(s[1:] != s[:-1]) + 1, s.shape[0]].astype(np.int64)
    # one-sample clusters at positions 0..n-1: replicate the kernel's own draws in Python is not possible,
    # so check a design where every cluster is the whole sample (weights all equal to n)
    design = resampling_design(60, cluster=np.zeros(60))
    position = np.empty(60, dtype=np.int64)
    position[order] = np.arange(60)
    flags = (y[order] == 1).astype(np.uint8)
    out = _core.bootstrap_auc(
        flags,
        group_end,
        design.stratum_offsets,
        design.cluster_offsets,
        position[design.members],
        np.arange(5, dtype=np.uint64),
        2,
    )
    np.testing.assert_allclose(out, pm.roc_auc_score(y, score), rtol=1e-12)


def test_does_not_depend_on_threads_and_is_reproducible():
    y, score = _auc_problem()
    a = pm.bootstrap(pm.roc_auc_score, y, score, n_resamples=300, rng=5, n_jobs=1)
    b = pm.bootstrap(pm.roc_auc_score, y, score, n_resamples=300, rng=5, n_jobs=2)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_generic_path_matches_scipy(method):
    rng = np.random.default_rng(4)
    x = rng.exponential(size=40)
    ours = pm.bootstrap(np.mean, x, n_resamples=4000, method=method, rng=6)
    theirs = stats.bootstrap((x,), np.mean, n_resamples=4000, method=method, rng=7)
    assert ours.standard_error == pytest.approx(theirs.standard_error, rel=0.1)
    assert tuple(ours.confidence_interval) == pytest.approx(tuple(theirs.confidence_interval), abs=0.05)


def test_interval_formulas_on_a_fixed_distribution():
    y, score = _auc_problem(80, 8)
    result = pm.bootstrap(pm.roc_auc_score, y, score, n_resamples=500, rng=9, method="basic")
    dist = result.bootstrap_distribution
    estimate = pm.roc_auc_score(y, score)
    lo, hi = np.percentile(dist, [2.5, 97.5])
    assert tuple(result.confidence_interval) == pytest.approx((2 * estimate - hi, 2 * estimate - lo))
    assert result.standard_error == pytest.approx(np.std(dist, ddof=1))


def test_auc_jackknife_formula():
    y, score = _auc_problem(40, 10)
    order = np.argsort(score, kind="stable")
    s = score[order]
    group_end = np.r_[np.flatnonzero(s[1:] != s[:-1]) + 1, s.shape[0]].astype(np.int64)
    fast = _auc_leave_one_out(y[order] == 1, group_end)
    for p, i in enumerate(order):
        keep = np.arange(40) != i
        assert fast[p] == pytest.approx(pm.roc_auc_score(y[keep], score[keep]), rel=1e-12)


def test_stratify_keeps_class_sizes_and_cluster_draws_whole_clusters():
    rng = np.random.default_rng(11)
    labels = np.array([0] * 7 + [1] * 3)
    design = resampling_design(10, stratify=labels)
    for _ in range(20):
        index = _resample(design, rng)
        assert np.count_nonzero(labels[index] == 1) == 3 and index.shape[0] == 10
    clusters = np.array([0, 0, 1, 1, 1, 2, 3, 3, 3, 3])
    design = resampling_design(10, cluster=clusters)
    for _ in range(20):
        index = _resample(design, rng)
        drawn = clusters[index]
        for c in np.unique(drawn):  # every drawn cluster comes whole (a multiple of its size)
            assert np.count_nonzero(drawn == c) % np.count_nonzero(clusters == c) == 0
    with pytest.raises(ValueError, match="cluster"):
        resampling_design(4, stratify=[0, 0, 1, 1], cluster=[0, 1, 1, 2])


def test_fast_stratified_has_no_nan():
    y = np.array([1] + [0] * 30)
    score = np.arange(31.0)
    result = pm.bootstrap(pm.roc_auc_score, y, score, n_resamples=200, stratify=y, rng=0)
    assert not np.isnan(result.bootstrap_distribution).any()


def test_bca_fast_matches_generic_acceleration():
    y, score = _auc_problem(120, 12)
    fast = pm.bootstrap(pm.roc_auc_score, y, score, n_resamples=3000, method="BCa", rng=13)
    slow = pm.bootstrap(_generic_auc, y, score, n_resamples=3000, method="BCa", rng=14)
    assert tuple(fast.confidence_interval) == pytest.approx(tuple(slow.confidence_interval), abs=0.03)


def test_bad_input():
    with pytest.raises(TypeError, match="statistic"):
        pm.bootstrap(3, [1, 2])
    with pytest.raises(ValueError, match="data"):
        pm.bootstrap(np.mean, [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="method"):
        pm.bootstrap(np.mean, [1, 2, 3], method="bca")
    with pytest.raises(ValueError, match="stratify"):
        pm.bootstrap(np.mean, [1, 2, 3], stratify=[1, 2])
    with pytest.raises(ValueError, match="confidence_level"):
        pm.bootstrap(np.mean, [1, 2, 3], confidence_level=1.5)
    assert math.isfinite(pm.bootstrap(np.mean, [1.0, 2.0, 3.0], n_resamples=10, rng=0).standard_error)
