"""Uno's C and the cumulative/dynamic AUC against the installed scikit-survival."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

sksurv_metrics = pytest.importorskip("sksurv.metrics")

DTYPE = [("event", bool), ("time", float)]


def _survival(events, times):
    return np.array(list(zip(events, times)), dtype=DTYPE)


def _outcome(call):
    """(result, None) or (None, exception type) of a call, warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call(), None
        except (ValueError, ZeroDivisionError) as exc:
            return None, type(exc)


@st.composite
def survival_problem(draw):
    n = draw(st.integers(2, 30))
    levels = draw(st.integers(1, 8))
    times = draw(st.lists(st.integers(0, levels), min_size=n, max_size=n))
    events = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    estimate = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    scale = draw(st.sampled_from([1.0, 1e-9, 0.37]))  # 1e-9: estimates within tied_tol of each other
    return _survival(events, np.array(times, float)), np.array(estimate, float) * scale


@settings(max_examples=examples(150), deadline=None)
@given(survival_problem(), st.one_of(st.none(), st.integers(1, 8)))
def test_ipcw_matches_sksurv(problem, tau):
    y, estimate = problem
    expected, expected_error = _outcome(lambda: sksurv_metrics.concordance_index_ipcw(y, y, estimate, tau=tau))
    got, error = _outcome(lambda: pm.sksurv.concordance_index_ipcw(y, y, estimate, tau=tau))
    assert error == expected_error
    if expected is not None:
        assert tuple(got[1:]) == tuple(int(x) for x in expected[1:])
        assert got[0] == pytest.approx(expected[0], rel=1e-12, nan_ok=True)


@settings(max_examples=examples(150), deadline=None)
@given(survival_problem(), st.lists(st.floats(0, 8), min_size=1, max_size=4), st.booleans())
def test_dynamic_auc_matches_sksurv(problem, times, per_time):
    y, estimate = problem
    if per_time:  # time-dependent risks: one column per (unique) time point
        estimate = np.column_stack([estimate + 0.1 * k for k in range(len(np.unique(times)))])
    expected, expected_error = _outcome(lambda: sksurv_metrics.cumulative_dynamic_auc(y, y, estimate, times))
    got, error = _outcome(lambda: pm.sksurv.cumulative_dynamic_auc(y, y, estimate, times))
    assert error == expected_error
    if expected is not None:
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-14)
        assert got[1] == pytest.approx(expected[1], rel=1e-12, abs=1e-14, nan_ok=True)


def test_separate_train_set_and_real_valued_data():
    rng = np.random.default_rng(7)
    n = 500
    x = rng.normal(size=2 * n)
    t = rng.exponential(1 / np.exp(x))
    c = rng.exponential(2.0, size=2 * n)
    y = _survival(t <= c, np.minimum(t, c))
    train, test = y[:n], y[n:]
    test = test[test["time"] < train["time"].max()]
    risk = x[n:][: test.shape[0]]
    for tau in (None, 1.0):
        expected = sksurv_metrics.concordance_index_ipcw(train, test, risk, tau=tau)
        got = pm.sksurv.concordance_index_ipcw(train, test, risk, tau=tau)
        assert got[1:] == expected[1:]
        assert got[0] == pytest.approx(expected[0], rel=1e-12)
    times = np.quantile(test["time"], [0.1, 0.3, 0.5, 0.7])
    expected = sksurv_metrics.cumulative_dynamic_auc(train, test, risk, times)
    got = pm.sksurv.cumulative_dynamic_auc(train, test, risk, times)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    assert got[1] == pytest.approx(expected[1], rel=1e-12)


def test_bad_input():
    y = _survival([True, False, True], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="structured array"):
        pm.sksurv.concordance_index_ipcw(np.array([1.0, 2.0]), y, [1, 2, 3])
    with pytest.raises(ValueError, match="estimate"):
        pm.sksurv.concordance_index_ipcw(y, y, [1, 2])
    with pytest.raises(ValueError, match="estimate"):
        pm.sksurv.concordance_index_ipcw(y, y, [1, math.nan, 2])
    with pytest.raises(ValueError, match="boolean"):
        pm.sksurv.concordance_index_ipcw(np.array([(1, 1.0), (0, 2.0)], dtype=[("e", int), ("t", float)]), y, [1, 2, 3])
    with pytest.raises(ValueError, match="follow-up"):
        pm.sksurv.cumulative_dynamic_auc(y, y, [1, 2, 3], [3.0])


def test_no_comparable_pair_like_sksurv():
    """One event, alone at the latest time: scikit-survival's NoComparablePairException (a ValueError)."""
    from sksurv.exceptions import NoComparablePairException

    y = _survival([False, False, True], [1.0, 2.0, 3.0])
    with pytest.raises(NoComparablePairException):
        sksurv_metrics.concordance_index_ipcw(y, y, [1.0, 2.0, 3.0])
    with pytest.raises(NoComparablePairException, match="no comparable pairs"):
        pm.sksurv.concordance_index_ipcw(y, y, [1.0, 2.0, 3.0])
    train = _survival([False, True, False, True], [1.0, 2.0, 4.0, 5.0])
    for test in (y, _survival([False, True, True], [1.0, 3.0, 3.0]), _survival([True, False, True], [1.0, 2.0, 3.0])):
        expected, expected_error = _outcome(lambda: sksurv_metrics.concordance_index_ipcw(train, test, [1.0, 2.0, 3.0]))
        got, error = _outcome(lambda: pm.sksurv.concordance_index_ipcw(train, test, [1.0, 2.0, 3.0]))
        assert error == expected_error and (expected is None or got[1:] == tuple(int(x) for x in expected[1:]))


def _cases():
    """Edge cases of the kind scikit-survival's own test-suite uses (our inputs, compared live)."""
    train_some = _survival([False, True, False, True, False, False, False, False], [2, 4, 6, 8, 10, 11, 15, 18])
    train_events = _survival([True] * 8, [2, 4, 6, 8, 10, 11, 15, 19])
    test_beyond = _survival([True, False, False, True, True, False, True], [1, 3, 5, 19, 12, 13, 7])
    test_inside = _survival([True, False, False, True, True, False, False], [1, 3, 5, 7, 12, 13, 20])
    estimate = np.array([5, 8, 13, 11, 9, 7, 4], dtype=float)
    return [
        (train_some, test_beyond, estimate),
        (train_events, test_inside, estimate),
        (train_some, test_inside, estimate),
        (train_events, test_beyond, estimate),
    ]


@pytest.mark.parametrize("train,test,estimate", _cases())
def test_edge_cases_behave_like_sksurv(train, test, estimate):
    for tau in (None, 10.0):
        expected, expected_error = _outcome(lambda: sksurv_metrics.concordance_index_ipcw(train, test, estimate, tau))
        got, error = _outcome(lambda: pm.sksurv.concordance_index_ipcw(train, test, estimate, tau))
        assert error == expected_error
        if expected is not None:
            assert got[1:] == tuple(int(x) for x in expected[1:]) and got[0] == pytest.approx(expected[0], rel=1e-12)
    times = [3.0, 6.0]
    expected, expected_error = _outcome(lambda: sksurv_metrics.cumulative_dynamic_auc(train, test, estimate, times))
    got, error = _outcome(lambda: pm.sksurv.cumulative_dynamic_auc(train, test, estimate, times))
    assert error == expected_error
    if expected is not None:
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        assert got[1] == pytest.approx(expected[1], rel=1e-12)
