"""bootstrap(): SciPy's intervals, the compiled paths against the generic one (same replicates), strata, clusters."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pairmetrics._bootstrap import _auc_leave_one_out, _fast_sweep, _resample, drawn_clusters, resampling_design
from scipy import stats


def _auc_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = (y + rng.normal(size=n)).round(1)  # rounded: many tied scores
    return y, score


def _generic_auc(y, s):
    return pm.sklearn.roc_auc_score(y, s)


def test_fast_path_gives_the_generic_replicates():
    y, score = _auc_problem()
    fast = pm.bootstrap((y, score), pm.sklearn.roc_auc_score, n_resamples=500, rng=1, method="BCa")
    slow = pm.bootstrap((y, score), _generic_auc, n_resamples=500, rng=1, method="BCa")
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-13)
    assert tuple(fast.confidence_interval) == pytest.approx(tuple(slow.confidence_interval), rel=1e-12)


def test_kernel_replicate_is_the_auc_of_the_drawn_rows():
    from pairmetrics import _core

    y, score = _auc_problem(60, 3)
    design = resampling_design(60, stratify=y, cluster=(np.arange(60) // 3) * 2 + y)  # clusters inside strata
    seeds = np.arange(5, dtype=np.uint64)
    counts = [_core.bootstrap_draw_counts(design.stratum_offsets, seed) for seed in seeds]
    sizes = np.diff(design.cluster_offsets)
    for seed, count in zip(seeds, counts):
        rows = np.repeat(design.members, np.repeat(count, sizes))
        np.testing.assert_array_equal(np.sort(rows), np.sort(_resample(design, seed)))
    order = np.argsort(score)
    s = score[order]
    group_end = np.r_[np.flatnonzero(s[1:] != s[:-1]) + 1, 60].astype(np.int64)
    of_sample = np.empty(60, dtype=np.uint32)
    of_sample[design.members] = np.repeat(np.arange(sizes.shape[0], dtype=np.uint32), sizes)
    flags = (y[order] == 1).astype(np.uint8)
    out = _core.bootstrap_auc(flags, group_end, design.stratum_offsets, of_sample[order], seeds, 2)
    expected = [pm.sklearn.roc_auc_score(y[_resample(design, seed)], score[_resample(design, seed)]) for seed in seeds]
    np.testing.assert_allclose(out, expected, rtol=1e-13)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 2**64 - 1), st.lists(st.integers(1, 40), min_size=1, max_size=4))
def test_numpy_draws_are_the_kernel_draws(seed, strata_sizes):
    from pairmetrics import _core

    offsets = np.r_[0, np.cumsum(strata_sizes)].astype(np.int64)
    drawn = drawn_clusters(offsets, np.uint64(seed))
    np.testing.assert_array_equal(
        np.bincount(drawn, minlength=offsets[-1]), _core.bootstrap_draw_counts(offsets, np.uint64(seed))
    )
    for s in range(len(strata_sizes)):  # every stratum draws its own size, inside itself
        inside = (drawn >= offsets[s]) & (drawn < offsets[s + 1])
        assert np.count_nonzero(inside) == strata_sizes[s]


def _nan_on_no_pair(function):
    """The statistic, NaN where lifelines raises for a resample without an admissible pair."""

    def statistic(*data):
        try:
            return function(*data)
        except ZeroDivisionError:
            return math.nan

    return statistic


@st.composite
def _design(draw, n):
    stratify = draw(st.one_of(st.none(), st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    cluster = None
    if draw(st.booleans()):
        cluster = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
        if stratify is not None:  # clusters inside strata
            cluster = cluster * 2 + np.array(stratify)
    return stratify, cluster


def _assert_same_replicates(statistic, generic, data, stratify, cluster, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            statistic(*data)
        except ZeroDivisionError:  # nothing comparable in the data itself: bootstrap raises it too
            with pytest.raises(ZeroDivisionError):
                pm.bootstrap(data, statistic, n_resamples=12, rng=seed, stratify=stratify, cluster=cluster)
            return
        assert _fast_sweep(statistic, [np.asarray(d) for d in data]) is not None  # the compiled path is taken
        fast = pm.bootstrap(data, statistic, n_resamples=12, rng=seed, stratify=stratify, cluster=cluster)
        slow = pm.bootstrap(data, generic, n_resamples=12, rng=seed, stratify=stratify, cluster=cluster)
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-13, atol=0)


SCORE_DTYPES = [np.float64, np.float32, np.int64, np.int8, np.uint16]


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_compiled_roc_auc_gives_the_generic_replicates(data):
    n = data.draw(st.integers(2, 25))
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    assume(0 < y.sum() < n)  # binary labels (one class takes the generic path)
    y = y.astype(data.draw(st.sampled_from([np.int64, np.bool_, np.float32])))
    dtype = data.draw(st.sampled_from(SCORE_DTYPES))
    score = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))).astype(dtype)
    stratify, cluster = data.draw(_design(n))
    _assert_same_replicates(
        pm.sklearn.roc_auc_score, _generic_auc, (y, score), stratify, cluster, data.draw(st.integers(0, 99))
    )


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_compiled_concordance_index_gives_the_generic_replicates(data):
    n = data.draw(st.integers(2, 25))
    times = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=float)
    scale = data.draw(st.sampled_from([1.0, 1e300, -1e-300]))
    scores = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))) * scale
    events = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    args = (times, scores, events) if data.draw(st.booleans()) else (times, scores)
    stratify, cluster = data.draw(_design(n))
    generic = _nan_on_no_pair(lambda *a: pm.lifelines.concordance_index(*a))
    _assert_same_replicates(
        pm.lifelines.concordance_index, generic, args, stratify, cluster, data.draw(st.integers(0, 99))
    )


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_compiled_paired_auc_gives_the_generic_replicates(data):
    n = data.draw(st.integers(2, 25))
    label_dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64, np.uint8, np.bool_]))
    labels = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    if label_dtype == np.bool_:
        labels = labels % 2
    labels = labels.astype(label_dtype)
    if label_dtype == np.float64:
        labels = labels * data.draw(st.sampled_from([1.0, 0.1, 1e15]))
    dtype = data.draw(st.sampled_from(SCORE_DTYPES))
    scores = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))).astype(dtype)
    min_dist = data.draw(st.sampled_from([0.5, 1.0, 0.1, 0.3, 2.0, 1e15]))
    statistic = functools.partial(pm.paired_evaluation, min_dist=min_dist)
    generic = functools.partial(lambda y, s, **kw: pm.paired_evaluation(y, s, **kw).auc, min_dist=min_dist, warn=False)
    stratify, cluster = data.draw(_design(n))
    _assert_same_replicates(statistic, generic, (labels, scores), stratify, cluster, data.draw(st.integers(0, 99)))


def test_paired_auc_default_and_huge_integer_labels():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 4, 50)
    scores = labels + rng.normal(size=50)
    fast = pm.bootstrap((labels, scores), pm.paired_evaluation, n_resamples=50, rng=3)
    slow = pm.bootstrap((labels, scores), lambda y, s: pm.paired_evaluation(y, s, warn=False), n_resamples=50, rng=3)
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-13)
    huge = labels.astype(np.int64) * 2**60  # beyond float64's integers: compared exactly, same numbers
    fast = pm.bootstrap((huge, scores), functools.partial(pm.paired_evaluation, min_dist=2**60), n_resamples=50, rng=3)
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_compiled_paired_path_takes_integer_labels_near_2_62_exactly(dtype):
    """Labels 2**62 + k are 1024 apart in float64: only an exact comparison ranks them as the in-memory call does."""
    from pairmetrics import _bootstrap

    rng = np.random.default_rng(5)
    labels = (np.array(2**62, dtype=dtype) + rng.integers(0, 6, 60).astype(dtype)).astype(dtype)
    scores = rng.normal(size=60) + (labels - dtype(2**62)).astype(np.float64)
    assert _bootstrap._paired_sweep([labels, scores], 1.5) is not None  # the compiled path
    statistic = functools.partial(pm.paired_evaluation, min_dist=1.5)
    generic = functools.partial(lambda y, s, **kw: pm.paired_evaluation(y, s, **kw).auc, min_dist=1.5, warn=False)
    fast = pm.bootstrap((labels, scores), statistic, n_resamples=40, rng=4)
    slow = pm.bootstrap((labels, scores), generic, n_resamples=40, rng=4)
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-13)
    assert fast.bootstrap_distribution.std() > 0
    exact = pm.paired_evaluation(labels, scores, min_dist=1.5, warn=False).auc
    assert _bootstrap._paired_sweep([labels, scores], 1.5) is not None
    assert abs(np.mean(fast.bootstrap_distribution) - exact) < 0.1


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=30),
    st.sampled_from([0.5, 1.0, 1.5, 1e3, 2.0**62, 2.0**64]),
)
def test_rankable_bounds_of_integers_are_exact(labels, min_dist):
    from pairmetrics import _core

    y = np.sort(np.array(labels, dtype=np.int64))
    expected = [sum(int(y[p]) - int(q) >= min_dist for q in y) for p in range(y.shape[0])]
    assert _core.rankable_bounds(y, min_dist).tolist() == expected


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.0, 0.1, 0.2, 0.3]), min_size=1, max_size=30),
    st.sampled_from([0.1, 0.5, 1.0, 1e-300, 0.30000000000000004]),
)
def test_rankable_bounds_are_the_exact_prefixes(labels, min_dist):
    from pairmetrics import _core

    y = np.sort(np.array(labels))
    expected = [int(np.count_nonzero(y[p] - y >= min_dist)) for p in range(y.shape[0])]
    assert _core.rankable_bounds(y, min_dist).tolist() == expected


@pytest.mark.parametrize("statistic", [pm.sklearn.roc_auc_score, pm.paired_evaluation, pm.lifelines.concordance_index])
def test_does_not_depend_on_threads_and_is_reproducible(statistic):
    y, score = _auc_problem()
    data = (score, y) if statistic is pm.lifelines.concordance_index else (y, score)
    a = pm.bootstrap(data, statistic, n_resamples=300, rng=5, n_jobs=1)
    b = pm.bootstrap(data, statistic, n_resamples=300, rng=5, n_jobs=2)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_generic_path_matches_scipy(method):
    rng = np.random.default_rng(4)
    x = rng.exponential(size=40)
    ours = pm.bootstrap((x,), np.mean, n_resamples=4000, method=method, rng=6)
    theirs = stats.bootstrap((x,), np.mean, n_resamples=4000, method=method, rng=7)
    assert ours.standard_error == pytest.approx(theirs.standard_error, rel=0.1)
    assert tuple(ours.confidence_interval) == pytest.approx(tuple(theirs.confidence_interval), abs=0.05)


def test_interval_formulas_on_a_fixed_distribution():
    y, score = _auc_problem(80, 8)
    result = pm.bootstrap((y, score), pm.sklearn.roc_auc_score, n_resamples=500, rng=9, method="basic")
    dist = result.bootstrap_distribution
    estimate = pm.sklearn.roc_auc_score(y, score)
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
        assert fast[p] == pytest.approx(pm.sklearn.roc_auc_score(y[keep], score[keep]), rel=1e-12)


def test_stratify_keeps_class_sizes_and_cluster_draws_whole_clusters():
    labels = np.array([0] * 7 + [1] * 3)
    design = resampling_design(10, stratify=labels)
    for seed in range(20):
        index = _resample(design, seed)
        assert np.count_nonzero(labels[index] == 1) == 3 and index.shape[0] == 10
    clusters = np.array([0, 0, 1, 1, 1, 2, 3, 3, 3, 3])
    design = resampling_design(10, cluster=clusters)
    for seed in range(20):
        index = _resample(design, seed)
        drawn = clusters[index]
        for c in np.unique(drawn):  # every drawn cluster comes whole (a multiple of its size)
            assert np.count_nonzero(drawn == c) % np.count_nonzero(clusters == c) == 0
    with pytest.raises(ValueError, match="cluster"):
        resampling_design(4, stratify=[0, 0, 1, 1], cluster=[0, 1, 1, 2])


def test_fast_stratified_has_no_nan():
    y = np.array([1] + [0] * 30)
    score = np.arange(31.0)
    result = pm.bootstrap((y, score), pm.sklearn.roc_auc_score, n_resamples=200, stratify=y, rng=0)
    assert not np.isnan(result.bootstrap_distribution).any()


def test_bca_fast_matches_generic_acceleration():
    y, score = _auc_problem(120, 12)
    for stratify in (None, y):
        fast = pm.bootstrap(
            (y, score), pm.sklearn.roc_auc_score, n_resamples=1000, method="BCa", rng=13, stratify=stratify
        )
        slow = pm.bootstrap((y, score), _generic_auc, n_resamples=1000, method="BCa", rng=13, stratify=stratify)
        assert tuple(fast.confidence_interval) == pytest.approx(tuple(slow.confidence_interval), rel=1e-12)


def test_bad_input():
    with pytest.raises(TypeError, match="statistic"):
        pm.bootstrap(([1, 2],), 3)
    with pytest.raises(ValueError, match="data"):
        pm.bootstrap(([1, 2, 3], [1, 2]), np.mean)
    with pytest.raises(ValueError, match="method"):
        pm.bootstrap(([1, 2, 3],), np.mean, method="bca")
    with pytest.raises(ValueError, match="stratify"):
        pm.bootstrap(([1, 2, 3],), np.mean, stratify=[1, 2])
    with pytest.raises(ValueError, match="confidence_level"):
        pm.bootstrap(([1, 2, 3],), np.mean, confidence_level=1.5)
    assert math.isfinite(pm.bootstrap(([1.0, 2.0, 3.0],), np.mean, n_resamples=10, rng=0).standard_error)


def test_a_degenerate_bootstrap_distribution_gives_nan_with_a_warning():
    # AUC 1 in every resample of three samples: SciPy's degenerate case, no spread to estimate
    with pytest.warns(RuntimeWarning, match="degenerate"):
        result = pm.bootstrap(
            ([0, 1, 1], [0.1, 0.5, 0.9]), pm.sklearn.roc_auc_score, n_resamples=99, rng=0, stratify=[0, 1, 1]
        )
    low, high = result.confidence_interval
    assert math.isnan(low) and math.isnan(high)
