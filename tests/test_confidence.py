"""Confidence intervals of paired AUCs and of their difference."""

import dataclasses
import math

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics.reference import confidence as ref
from pairmetrics.reference import paired as paired_ref
from scipy import stats


@st.composite
def binary_problems(draw, max_n=30):
    n = draw(st.integers(4, max_n))
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
    labels[:2], labels[2:4] = 0, 1  # DeLong needs two samples of each class
    pool = draw(st.sampled_from([2, 4, 0]))
    elements = st.integers(0, pool) if pool else st.integers(-(10**6), 10**6)
    a = draw(hnp.arrays(np.int64, n, elements=elements)).astype(float)
    b = draw(hnp.arrays(np.int64, n, elements=elements)).astype(float)
    encoding = draw(st.sampled_from([(0, 1), (-1, 1), (2.5, 7.0)]))
    return np.where(labels == 1, encoding[1], encoding[0]), a, b


@settings(max_examples=examples(150), deadline=None)
@given(binary_problems(), st.sampled_from([0.95, 0.5, 0.99]))
def test_binary_interval_is_delongs(problem, level):
    labels, a, b = problem
    positive = (labels == labels.max()).tolist()
    z = stats.norm.ppf(0.5 + level / 2)
    auc_a, _, _ = ref.placements(a.tolist(), positive)
    auc_b, _, _ = ref.placements(b.tolist(), positive)
    var_a, var_b, cov = ref.delong_covariance(a.tolist(), b.tolist(), positive)

    interval = pm.paired_evaluation(labels, a).confidence_interval(level)
    assert (interval.low, interval.high) == pytest.approx(ref.delong_interval(auc_a, var_a, z), abs=1e-12)
    low, high = interval  # unpacks like SciPy's
    assert (low, high) == (interval.low, interval.high)
    assert interval.confidence_level == level

    comparison = pm.compare_models(labels, [a, b])
    np.testing.assert_allclose(comparison.covariance, [[var_a, cov], [cov, var_b]], atol=1e-12)
    expected = ref.delong_interval(auc_a - auc_b, max(var_a + var_b - 2 * cov, 0.0), z, -1.0, 1.0)
    difference = comparison.confidence_interval(level)
    assert (difference.low[0, 1], difference.high[0, 1]) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(3, 25), st.integers(0, 2**32 - 1), st.sampled_from(["ordinal", "real"]))
def test_ordinal_and_real_labels_use_the_one_sample_variance(n, seed, kind):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n) if kind == "ordinal" else rng.normal(size=n)
    labels[0], labels[1], labels[2] = 0, 1, 3  # at least three label values, some pair rankable
    a = rng.integers(0, 4, n).astype(float)
    b = a + rng.normal(size=n)
    ca, cb, va, vb, cov = paired_ref.concordance_variance(a, b, labels, 0.5)
    z = stats.norm.ppf(0.975)
    interval = pm.paired_evaluation(labels, a).confidence_interval()
    assert (interval.low, interval.high) == pytest.approx(ref.delong_interval(ca, va, z), abs=1e-12)
    difference = pm.compare_models(labels, [a, b]).confidence_interval()
    expected = ref.delong_interval(ca - cb, max(va + vb - 2 * cov, 0.0), z, -1.0, 1.0)
    assert (difference.low[0, 1], difference.high[0, 1]) == pytest.approx(expected, abs=1e-12)


def test_interval_is_clipped_and_contains_the_estimate():
    labels = np.array([0, 0, 0, 1, 1, 1])
    perfect = pm.paired_evaluation(labels, [0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    assert perfect.auc == 1.0
    interval = perfect.confidence_interval()
    assert interval.high == 1.0 and interval.low <= 1.0
    noisy = pm.paired_evaluation(labels, [0.5, 0.9, 0.1, 0.6, 0.2, 0.8]).confidence_interval(0.999)
    assert 0.0 <= noisy.low <= noisy.high <= 1.0
    wider = pm.paired_evaluation(labels, [0.5, 0.9, 0.1, 0.6, 0.2, 0.8]).confidence_interval(0.5)
    assert noisy.low <= wider.low <= wider.high <= noisy.high


def test_nothing_rankable_gives_nan():
    with pytest.warns(RuntimeWarning):
        result = pm.paired_evaluation([1, 1, 1], [0.1, 0.2, 0.3])
    interval = result.confidence_interval()
    assert math.isnan(interval.low) and math.isnan(interval.high)
    with pytest.warns(RuntimeWarning):
        comparison = pm.compare_models([1, 1, 1], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    assert all(np.isnan(v).all() for v in comparison.confidence_interval())


def test_confidence_level_is_validated():
    result = pm.paired_evaluation([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    for bad in (0, 1, 1.5, -0.1, math.nan):
        with pytest.raises(ValueError, match="confidence_level"):
            result.confidence_interval(bad)
    with pytest.raises(TypeError, match="confidence_level"):
        result.confidence_interval("0.95")


def test_variance_computed_on_request_only_for_large_inputs():
    rng = np.random.default_rng(0)
    n = 100_001
    labels = rng.integers(0, 2, n)
    scores = labels + rng.normal(size=n)
    lazy = pm.paired_evaluation(labels, scores)
    with pytest.raises(ValueError, match="variance=True"):
        lazy.confidence_interval()
    eager = pm.paired_evaluation(labels, scores, variance=True)
    small = pm.paired_evaluation(labels[:1000], scores[:1000])
    assert eager == lazy  # the variance is private: equality and asdict are unchanged
    assert eager.asdict() == lazy.asdict()
    low, high = eager.confidence_interval()
    assert low < eager.auc < high and high - low < 0.02
    assert small.confidence_interval().high > small.auc
    with pytest.raises(ValueError, match="variance=True"):
        pm.paired_evaluation(labels[:1000], scores[:1000], variance=False).confidence_interval()
    with pytest.raises(TypeError, match="variance"):
        pm.paired_evaluation(labels[:1000], scores[:1000], variance=1)


def test_results_hold_no_arrays():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, 5000)
    a, b = labels + rng.normal(size=5000), labels + rng.normal(size=5000)
    for result in (pm.paired_evaluation(labels, a), pm.paired_evaluation(labels, b)):
        for field in dataclasses.fields(result):
            assert not isinstance(getattr(result, field.name), np.ndarray)
    comparison = pm.compare_models(labels, [a, b])
    assert all(
        getattr(comparison, f.name).size <= 4
        for f in dataclasses.fields(comparison)
        if isinstance(getattr(comparison, f.name), np.ndarray)
    )  # k x k at most: never the inputs


def test_binary_interval_covers_the_true_auc_at_about_its_level():
    """A small simulation: normal scores, true AUC Phi(1 / sqrt(2))."""
    rng = np.random.default_rng(11)
    truth = stats.norm.cdf(1 / math.sqrt(2))
    hits = 0
    trials = 300
    for _ in range(trials):
        labels = np.repeat([0, 1], 60)
        scores = labels + rng.normal(size=120)
        low, high = pm.paired_evaluation(labels, scores).confidence_interval(0.9)
        hits += low <= truth <= high
    assert 0.84 <= hits / trials <= 0.96
