"""concordance(): R survival's counts and infinitesimal-jackknife variance, k models, strata."""

from __future__ import annotations

import math

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics.reference import survival as ref


def _data(draw, n_min=2, n_max=25):
    n = draw(st.integers(n_min, n_max))
    levels = draw(st.integers(1, 6))  # few levels: many ties in time and prediction
    times = draw(st.lists(st.integers(0, levels), min_size=n, max_size=n))
    events = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    predicted = draw(st.lists(st.integers(-levels, levels), min_size=n, max_size=n))
    return times, predicted, events


@st.composite
def survival_data(draw):
    return _data(draw)


def _check_against_reference(times, predicted, events, strata=None):
    counts, _ = ref.concordance_counts(times, predicted, events, strata)
    pairs = sum(counts[:3])
    with pytest.warns(RuntimeWarning) if pairs == 0 else _no_warning():
        result = pm.concordance(times, events, predicted, strata=strata)
    assert (result.concordant, result.discordant, result.tied_predicted, result.tied_time, result.tied_both) == tuple(
        counts
    )
    if pairs == 0:
        assert math.isnan(result.estimate) and math.isnan(result.variance)
        return
    estimate, variance = ref.concordance_jackknife(times, predicted, events, strata)
    assert result.estimate == pytest.approx(estimate, rel=1e-12)
    assert result.variance == pytest.approx(variance, rel=1e-9, abs=1e-15)


class _no_warning:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


@settings(max_examples=examples(150), deadline=None)
@given(survival_data())
def test_matches_reference(data):
    _check_against_reference(*data)


@settings(max_examples=examples(60), deadline=None)
@given(survival_data(), st.data())
def test_strata_match_reference(data, draw):
    times, predicted, events = data
    strata = draw.draw(st.lists(st.sampled_from("abc"), min_size=len(times), max_size=len(times)))
    _check_against_reference(times, predicted, events, strata)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float32, np.float64, np.bool_])
def test_every_dtype(dtype):
    rng = np.random.default_rng(1)
    times = rng.integers(0, 5, 30)
    events = rng.integers(0, 2, 30)
    predicted = rng.integers(0, 2 if dtype is np.bool_ else 4, 30)
    expected = pm.concordance(times, events, predicted.astype(np.float64))
    assert pm.concordance(times.astype(dtype), events.astype(dtype), predicted.astype(dtype)) == (
        pm.concordance(times.astype(dtype).astype(np.float64), events, predicted.astype(np.float64))
    )
    assert pm.concordance(times, events.astype(bool), predicted.astype(dtype)).estimate == expected.estimate


def test_extreme_magnitudes():
    times = [1e-300, 1e300, -1e300, 5.0, np.inf, -np.inf]
    predicted = [np.finfo(float).max, -np.finfo(float).max, 0.0, 5e-324, -np.inf, np.inf]
    events = [1, 0, 1, 1, 0, 1]
    _check_against_reference(times, predicted, events)


def test_equals_concordance_index():
    rng = np.random.default_rng(2)
    times = rng.exponential(size=300).round(1)
    predicted = rng.normal(size=300).round(1)
    events = rng.integers(0, 2, 300)
    assert pm.concordance(times, events, predicted).estimate == pytest.approx(
        pm.lifelines.concordance_index(times, predicted, events), rel=1e-14
    )


def test_censoring_everywhere_and_tiny_inputs():
    _check_against_reference([1, 1], [0, 1], [1, 0])  # censored at the event's time: comparable
    _check_against_reference([1, 2], [0, 0], [1, 1])  # n = 2, tied prediction
    _check_against_reference([3, 3, 3], [1, 2, 3], [1, 1, 1])  # only tied times: nothing comparable
    _check_against_reference([1, 2, 3], [1, 2, 3], [0, 0, 0])  # every time censored


def test_k_models_covariance_and_test():
    rng = np.random.default_rng(3)
    n = 60
    times = rng.integers(1, 20, n)
    events = rng.integers(0, 2, n)
    models = np.vstack([rng.integers(0, 6, n) for _ in range(3)]).astype(float)
    result = pm.concordance(times, events, models)
    assert result.covariance.shape == (3, 3)
    infl = []
    for k, row in enumerate(models):
        one = pm.concordance(times, events, row)
        assert one.variance == pytest.approx(result.variance[k], rel=1e-12)
        assert one.estimate == result.estimate[k]
        counts, per_sample = ref.concordance_counts(list(times), list(row), list(events))
        pairs = sum(counts[:3])
        d = (counts[0] - counts[1]) / pairs
        infl.append([((c - dd) - d * (c + dd + t)) / pairs for c, dd, t in per_sample])
    u = np.array(infl)
    np.testing.assert_allclose(result.covariance, u @ u.T / 4, rtol=1e-10)
    np.testing.assert_allclose(result.variance, np.diag(u @ u.T / 4), rtol=1e-10)
    # chi-square on the differences from the last model
    diff = np.array([result.estimate[0] - result.estimate[2], result.estimate[1] - result.estimate[2]])
    L = np.array([[1, 0, -1], [0, 1, -1]])
    stat = diff @ np.linalg.solve(L @ result.covariance @ L.T, diff)
    assert result.statistic == pytest.approx(stat, rel=1e-8)
    assert result.df == 2
    from scipy import stats

    assert result.pvalue == pytest.approx(stats.chi2.sf(stat, 2), rel=1e-8)
    low, high = result.confidence_interval()
    assert low.shape == (3,) and np.all(low <= result.estimate) and np.all(result.estimate <= high)


def test_identical_models_are_not_different():
    times, events = [1, 2, 3, 4, 5], [1, 0, 1, 1, 0]
    result = pm.concordance(times, events, np.array([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]))
    assert (result.statistic, result.pvalue) == (0.0, 1.0)


def test_bad_input():
    with pytest.raises(ValueError, match="event"):
        pm.concordance([1, 2, 3], [0, 2, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="time"):
        pm.concordance([1, np.nan, 3], None, [1, 2, 3])
    with pytest.raises(ValueError, match="y_score"):
        pm.concordance([1, 2, 3], None, [1, 2])
    with pytest.raises(ValueError, match="y_score"):
        pm.concordance([1, 2, 3], None, [1, np.nan, 3])
    with pytest.raises(ValueError, match="strata"):
        pm.concordance([1, 2, 3], None, [1, 2, 3], strata=[1, 2])
    with pytest.raises(ValueError, match="time"):
        pm.concordance([1], None, [1])


def _simulate(rng, n):
    x = rng.normal(size=n)
    t = rng.exponential(1 / np.exp(0.8 * x))
    c = rng.exponential(1.5, size=n)
    return np.minimum(t, c), x, (t <= c).astype(np.uint8)


def test_interval_coverage():
    # The truth of Harrell's C depends on the censoring: estimate it once from a very large sample.
    rng = np.random.default_rng(20240601)
    times, x, events = _simulate(rng, 2_000_000)
    truth = pm.lifelines.concordance_index(times, -x, events)
    covered = 0
    for _ in range(200):
        times, x, events = _simulate(rng, 200)
        low, high = pm.concordance(times, events, -x).confidence_interval()
        covered += low <= truth <= high
    assert 0.90 <= covered / 200 <= 0.99


def test_one_model_statistic_is_the_estimate_tested_against_chance():
    from scipy import stats

    rng = np.random.default_rng(4)
    time = rng.exponential(size=300)
    score = time + rng.normal(size=300)
    result = pm.concordance(time, None, score)
    assert result.statistic == result.estimate and result.df == 0
    z = (result.estimate - 0.5) / np.sqrt(result.variance)
    assert result.pvalue == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-12)
    perfect = pm.concordance([1.0, 2.0, 3.0], None, [1.0, 2.0, 3.0])  # zero variance: nothing is proven
    assert perfect.estimate == 1.0 and np.isnan(perfect.pvalue)
