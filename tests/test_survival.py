"""concordance_index (lifelines) and concordance_index_censored (scikit-survival)
against the libraries themselves and the O(n^2) reference.

Neither lifelines nor scikit-survival ships its test suite in its wheel (unlike
scikit-learn, whose ROC AUC tests run against ours in test_sklearn.py), so
their own tests cannot be run here; the comparisons below call the installed
functions directly."""

import warnings

import numpy as np
import pairmetrics as pm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics.reference import survival as ref

lifelines_utils = pytest.importorskip("lifelines.utils")
sksurv_metrics = pytest.importorskip("sksurv.metrics")
from _hypothesis_budget import examples
from sksurv.exceptions import NoComparablePairException  # noqa: E402


@st.composite
def survival_data(draw, max_n=30):
    n = draw(st.integers(0, max_n))
    pool_t = draw(st.sampled_from([2, 4, 10, 0]))
    pool_s = draw(st.sampled_from([1, 3, 6, 0]))
    if pool_t:
        times = draw(hnp.arrays(np.float64, n, elements=st.integers(0, pool_t).map(float)))
    else:
        times = draw(hnp.arrays(np.float64, n, elements=st.floats(0, 100, allow_nan=False)))
    if pool_s:
        scores = draw(hnp.arrays(np.float64, n, elements=st.integers(-pool_s, pool_s).map(lambda v: v / 2)))
    else:
        scores = draw(hnp.arrays(np.float64, n, elements=st.floats(-1e3, 1e3, allow_nan=False)))
    censoring = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    events = draw(hnp.arrays(np.bool_, n, elements=st.booleans() if 0 < censoring < 1 else st.just(censoring == 0.0)))
    return times, scores, events


def _outcome(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return func(*args, **kwargs)
        except (ZeroDivisionError, ValueError) as exc:
            return type(exc)


@settings(max_examples=examples(150), deadline=None)
@given(survival_data(), st.booleans())
def test_concordance_index_matches_lifelines(data, pass_events):
    times, scores, events = data
    observed = events.astype(int) if pass_events else None
    theirs = _outcome(lifelines_utils.concordance_index, times, scores, observed)
    ours = _outcome(pm.lifelines.concordance_index, times, scores, observed)
    if isinstance(theirs, type):
        assert ours is theirs
        return
    assert ours == pytest.approx(theirs, rel=1e-15, abs=1e-15)
    correct, tied, pairs = ref.lifelines_concordance(
        times.tolist(), scores.tolist(), None if observed is None else events
    )
    assert ours == pytest.approx((correct + tied / 2) / pairs, rel=1e-15)


@settings(max_examples=examples(150), deadline=None)
@given(survival_data(), st.sampled_from([1e-8, 0.0, 0.5, 1.0]))
def test_concordance_index_censored_matches_sksurv(data, tied_tol):
    times, scores, events = data
    theirs = _outcome(sksurv_metrics.concordance_index_censored, events, times, scores, tied_tol)
    ours = _outcome(pm.sksurv.concordance_index_censored, events, times, scores, tied_tol)
    if isinstance(theirs, type):
        assert ours is theirs
        return
    assert np.isnan(ours[0]) == np.isnan(theirs[0])
    if not np.isnan(theirs[0]):
        assert ours[0] == pytest.approx(theirs[0], rel=1e-15)
    assert ours[1:] == tuple(int(v) for v in theirs[1:])
    expected = ref.sksurv_concordance(events.tolist(), times.tolist(), scores.tolist(), tied_tol)
    assert ours[1:] == expected[1:]


def test_tied_tolerance_in_double_precision():
    # 0.3 - 0.1 - 0.2 is not zero in floating point: the window is computed as scikit-survival does.
    events = np.array([True, True, True, False, True])
    times = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    scores = np.array([0.3, 0.1 + 0.2, 0.30000001, 0.29999999, 0.3 + 1e-8])
    for tol in (0.0, 1e-8, 1e-9, 2e-8):
        theirs = sksurv_metrics.concordance_index_censored(events, times, scores, tol)
        assert pm.sksurv.concordance_index_censored(events, times, scores, tol)[1:] == tuple(int(v) for v in theirs[1:])


def test_infinite_times_and_scores_are_ordered_like_lifelines():
    times = np.array([1.0, np.inf, 3.0, 2.0, np.inf, -np.inf])
    scores = np.array([np.inf, 1.0, -np.inf, 2.0, np.inf, 0.0])
    observed = np.array([1, 0, 1, 1, 1, 1])
    assert pm.lifelines.concordance_index(times, scores, observed) == lifelines_utils.concordance_index(
        times, scores, observed
    )


def test_no_admissible_pair_raises_like_lifelines():
    with pytest.raises(ZeroDivisionError, match="No admissable pairs"):
        pm.lifelines.concordance_index([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0, 0, 0])
    with pytest.raises(ZeroDivisionError):
        pm.lifelines.concordance_index([2.0, 2.0], [1.0, 2.0])  # two events at one time
    with pytest.raises(ZeroDivisionError):
        pm.lifelines.concordance_index([], [])


def test_lifelines_input_errors():
    for args in (
        ([1, 2, 3], [1, 2]),
        ([[1, 2], [3, 4]], [[1, 2], [3, 4]]),
        ([1, np.nan], [1, 2]),
        ([1, 2], [1, 2], [1]),
    ):
        with pytest.raises(ValueError):
            lifelines_utils.concordance_index(*args)
        with pytest.raises(ValueError):
            pm.lifelines.concordance_index(*args)
    for exception, times in ((ValueError, ["a", "b"]), (TypeError, [object(), 1])):  # as lifelines
        with pytest.raises(exception):
            lifelines_utils.concordance_index(times, [1, 2])
        with pytest.raises(exception, match="event_times"):
            pm.lifelines.concordance_index(times, [1, 2])


def test_sksurv_input_errors():
    cases = [
        ([1, 0, 1], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),  # not bool
        ([True], [1.0], [1.0]),  # one sample
        ([False, False], [1.0, 2.0], [1.0, 2.0]),  # all censored
        ([True, True], [1.0, 2.0], [1.0, np.nan]),
        ([True, True], [1.0, np.inf], [1.0, 2.0]),
        ([True, True, False], [1.0, 2.0], [1.0, 2.0, 3.0]),
    ]
    for args in cases:
        with pytest.raises(ValueError):
            sksurv_metrics.concordance_index_censored(*args)
        with pytest.raises(ValueError):
            pm.sksurv.concordance_index_censored(*args)
    # the only event alone at the last time: scikit-survival's own exception
    args = (np.array([False, False, True]), np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(NoComparablePairException):
        sksurv_metrics.concordance_index_censored(*args)
    with pytest.raises(NoComparablePairException):
        pm.sksurv.concordance_index_censored(*args)
    with pytest.raises(ValueError, match="tied_tol"):
        pm.sksurv.concordance_index_censored([True, True], [1.0, 2.0], [1.0, 2.0], tied_tol=-1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.float64])
def test_numeric_dtypes_and_pandas(dtype):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    times = rng.integers(0, 20, 300).astype(dtype)
    scores = rng.integers(0, 10, 300).astype(dtype)
    events = rng.random(300) < 0.6
    assert pm.lifelines.concordance_index(pd.Series(times), pd.Series(scores), pd.Series(events)) == pytest.approx(
        lifelines_utils.concordance_index(pd.Series(times), pd.Series(scores), pd.Series(events)), rel=1e-15
    )
    theirs = sksurv_metrics.concordance_index_censored(events, times, scores)
    ours = pm.sksurv.concordance_index_censored(events, times, scores)
    assert ours[1:] == tuple(int(v) for v in theirs[1:])
    assert ours[0] == pytest.approx(theirs[0], rel=1e-15)


def test_larger_input_matches_lifelines():
    """Enough samples for the bucketed sorts and many Fenwick levels."""
    rng = np.random.default_rng(9)
    n = 100_000
    times = np.round(rng.exponential(size=n), 3)
    scores = np.round(times + rng.normal(size=n), 2)
    observed = rng.random(n) < 0.7
    assert pm.lifelines.concordance_index(times, scores, observed) == pytest.approx(
        lifelines_utils.concordance_index(times, scores, observed), rel=1e-13
    )
    times, scores, observed = times[:8000], scores[:8000], observed[:8000]
    below, tied, above = (int(v) for v in _counts_by_numpy(times, scores, observed))
    c = pm.sksurv.concordance_index_censored(observed, times, -scores, tied_tol=0.0)
    assert c[1:4] == (above, below, tied)


def _counts_by_numpy(times, scores, observed):
    """Comparable-pair counts by blocks of broadcasting (an independent check at moderate n)."""
    order = np.argsort(times[observed])
    t_ev, s_ev = times[observed][order], scores[observed][order]
    below = tied = above = 0
    for start in range(0, t_ev.size, 500):
        ti, si = t_ev[start : start + 500, None], s_ev[start : start + 500, None]
        later = (times[None, :] > ti) | ((times[None, :] == ti) & ~observed[None, :])
        below += np.count_nonzero(later & (scores[None, :] < si))
        tied += np.count_nonzero(later & (scores[None, :] == si))
        above += np.count_nonzero(later & (scores[None, :] > si))
    return below, tied, above


def test_event_observed_as_strings_like_lifelines():
    times, scores = [1, 2, 3, 4, 5], [1.0, 3.0, 2.0, 4.0, 0.5]
    for flags in (["1", "1", "0", "1", "0"], np.array(["1", "1", "0", "1", "0"]), ["1.0", "1", "0", "1", "0.0"]):
        expected = lifelines_utils.concordance_index(times, scores, flags)
        assert pm.lifelines.concordance_index(times, scores, flags) == expected
    with pytest.raises(ValueError, match="NaN"):
        pm.lifelines.concordance_index(times, scores, ["1", "nan", "0", "1", "0"])
    with pytest.raises(ValueError, match="event_observed"):  # lifelines: ValueError too
        pm.lifelines.concordance_index(times, scores, ["1", "yes", "0", "1", "0"])


def test_uint8_estimates_tied_tol_differs_deliberately():
    # scikit-survival subtracts uint8 estimates in uint8 (1 - 2 wraps to 255); we compare exact values.
    events, times = np.ones(4, dtype=bool), np.array([1.0, 2.0, 3.0, 4.0])
    estimates = np.array([1, 2, 2, 1], dtype=np.uint8)
    ours = pm.sksurv.concordance_index_censored(events, times, estimates, 1.0)
    assert ours == pm.sksurv.concordance_index_censored(events, times, estimates.astype(np.float64), 1.0)
    assert ours[1:] == (0, 0, 6, 0)  # every pair within 1.0: tied
    theirs = sksurv_metrics.concordance_index_censored(events, times, estimates, 1.0)
    assert tuple(int(v) for v in theirs[1:]) != ours[1:]
    for tol in (0.0, 1e-8):  # without wraparound at stake the two agree
        theirs = sksurv_metrics.concordance_index_censored(events, times, estimates, tol)
        assert (
            tuple(int(v) for v in theirs[1:]) == pm.sksurv.concordance_index_censored(events, times, estimates, tol)[1:]
        )


def test_per_sample_pairs_are_converted_in_the_kernel():
    # concordance() takes (concordant, discordant, tied) per sample from the kernel (which checks for Ctrl-C
    # while converting), not from a numpy conversion of the n x 6 counts: the same float64 numbers.
    from pairmetrics import _core
    from pairmetrics._concordance import pair_columns

    rng = np.random.default_rng(3)
    times = np.round(rng.exponential(size=3000), 1)
    events = (rng.random(3000) < 0.6).astype(np.uint8)
    scores = np.round(rng.normal(size=3000), 1)
    counts = _core.concordance_per_sample(times, events, scores, 0.0)
    totals = _core.concordance_pair_counts(times, events, scores, 0.0)
    columns, pairs = counts.pop("per_sample"), totals.pop("pairs")
    assert totals == counts and pairs.dtype == np.float64
    np.testing.assert_array_equal(pairs, pair_columns(columns))


def test_dask_finds_a_nan_behind_an_infinity_in_one_block():
    da = pytest.importorskip("dask.array")
    times = np.array([1.0, np.inf, np.nan, 4.0, 5.0, 6.0])
    scores = np.arange(6.0)
    with pytest.raises(ValueError, match="NaNs detected"):
        pm.lifelines.concordance_index(times, scores)
    with pytest.raises(ValueError, match="NaNs detected"):
        pm.lifelines.concordance_index(da.from_array(times, chunks=3), da.from_array(scores, chunks=3))
