"""RankState: any split of the data into parts, merged in any order, gives the in-memory numbers."""

import math
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics.sklearn import roc_auc_score

sklearn_metrics = pytest.importorskip("sklearn.metrics")

SCORE_POOLS = [
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),  # many ties
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([-1e300, -1.0, 0.0, 1e-300, 1.0, 1e300]),  # extreme magnitudes
]


@st.composite
def split_problems(draw, weighted=None, max_n=40):
    """(labels, scores, weights or None, parts: a list of index arrays covering every sample once)."""
    n = draw(st.integers(2, max_n))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    scores = np.array(draw(st.lists(draw(st.sampled_from(SCORE_POOLS)), min_size=n, max_size=n)), dtype=np.float64)
    if weighted is None:
        weighted = draw(st.booleans())
    weights = None
    if weighted:
        weights = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, 1e3]), min_size=n, max_size=n)))
    order = np.array(draw(st.permutations(range(n))))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
    return labels, scores, weights, np.split(order, cuts)


def state_of(labels, scores, weights, parts, rng_seed=0):
    """Each part's state (an empty part too), merged in a shuffled order, half of them through bytes."""
    states = []
    for k, index in enumerate(parts):
        w = None if weights is None else weights[index]
        part = pm.RankState().update(labels[index], scores[index], sample_weight=w)
        states.append(pm.RankState.from_bytes(part.to_bytes()) if k % 2 else part)
    np.random.default_rng(rng_seed).shuffle(states)
    total = pm.RankState()
    for part in states:
        total.merge(part)
    return total


@settings(max_examples=examples(300))
@given(split_problems())
def test_any_split_and_merge_order_give_the_in_memory_auc_and_ap(problem):
    labels, scores, weights, parts = problem
    state = state_of(labels, scores, weights, parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if weights is not None and not weights.any() and 0 < labels.sum() < labels.size:
            for auc in (lambda: roc_auc_score(labels, scores, sample_weight=weights), state.roc_auc):
                with pytest.raises(ValueError, match="sample_weight"):
                    auc()
            return
        expected = roc_auc_score(labels, scores, sample_weight=weights)
        assert state.roc_auc().auc == pytest.approx(expected, abs=1e-12, nan_ok=True)
        if labels.any() and (weights is None or weights[labels == 1].any()):
            ap = sklearn_metrics.average_precision_score(labels, scores, sample_weight=weights)
            assert state.average_precision() == pytest.approx(ap, abs=1e-12)
            for ours, theirs in zip(
                state.precision_recall_curve(),
                sklearn_metrics.precision_recall_curve(labels, scores, sample_weight=weights),
            ):
                np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


@settings(max_examples=examples(300))
@given(split_problems(weighted=False))
def test_unweighted_state_gives_paired_evaluation_and_delong_interval(problem):
    labels, scores, _, parts = problem
    state = state_of(labels, scores, None, parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = pm.paired_evaluation(labels, scores, variance=True)
        ours = state.paired_evaluation()
        interval = state.roc_auc().confidence_interval()
    assert ours == expected
    low, high = expected.confidence_interval()
    assert ours.confidence_interval().low == pytest.approx(low, abs=1e-9, nan_ok=True)
    assert interval.low == pytest.approx(low, abs=1e-9, nan_ok=True)
    assert interval.high == pytest.approx(high, abs=1e-9, nan_ok=True)


def test_state_of_counts_matches_the_whole_at_scale():
    rng = np.random.default_rng(7)
    n = 200_000
    labels = rng.random(n) < 0.1
    scores = np.round(rng.beta(0.5, 8, n) + 0.3 * labels, 4)  # skewed, many ties
    parts = np.array_split(np.arange(n), 7)
    state = state_of(labels, scores, None, parts)
    assert state.roc_auc().auc == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    low, high = pm.paired_evaluation(labels, scores, variance=True).confidence_interval()
    ours = state.roc_auc().confidence_interval()
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-9)
    assert state.scores.size == np.unique(scores).size


def mllib_area_under_pr(labels, scores, weights):
    """Spark MLlib's areaUnderPR, written from its definition: trapezoids over (recall, precision) at every
    distinct score, highest first, after the point (0, 1)."""
    points = [(0.0, 1.0)]
    total_pos = sum(w for y, w in zip(labels, weights) if y)
    for threshold in sorted(set(scores), reverse=True):
        tp = sum(w for y, s, w in zip(labels, scores, weights) if y and s >= threshold)
        fp = sum(w for y, s, w in zip(labels, scores, weights) if not y and s >= threshold)
        points.append((tp / total_pos, tp / (tp + fp) if tp + fp else 1.0))
    return sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in zip(points, points[1:]))


@settings(max_examples=examples(200))
@given(split_problems())
def test_trapezoid_average_precision_is_mllib_area_under_pr(problem):
    labels, scores, weights, parts = problem
    w = np.ones(labels.size) if weights is None else weights
    if not (w[labels == 1].sum() > 0 and (w[scores == scores.max()]).sum() > 0):
        return
    state = state_of(labels, scores, weights, parts)
    expected = mllib_area_under_pr(labels.tolist(), scores.tolist(), w.tolist())
    assert state.average_precision(definition="trapezoid") == pytest.approx(expected, abs=1e-12)


def test_round_trip_and_format():
    state = pm.RankState().update([True, False, True], np.array([3, 1, 3], np.int64), sample_weight=[1.0, 2.0, 0.5])
    data = state.to_bytes()
    assert data[:4] == b"PMRS" and data[4] == 1 and data[5] == 1
    assert len(data) == 16 + 2 * 40
    assert pm.RankState.from_bytes(data) == state
    assert pm.RankState.from_bytes(bytearray(data)) == state
    plain = pm.RankState().update([0, 1], [0.5, 0.7])
    assert len(plain.to_bytes()) == 16 + 2 * 24 and pm.RankState.from_bytes(plain.to_bytes()) == plain
    assert pm.RankState.from_bytes(pm.RankState().to_bytes()) == pm.RankState()
    np.testing.assert_array_equal(pm.RankState.from_bytes(data).scores, [1.0, 3.0])
    np.testing.assert_array_equal(pm.RankState.from_bytes(data).positive_weight, [0.0, 1.5])


def test_bad_bytes_and_bad_input_are_refused():
    data = pm.RankState().update([0, 1], [0.5, 0.7]).to_bytes()
    with pytest.raises(ValueError, match="magic"):
        pm.RankState.from_bytes(b"XXXX" + data[4:])
    with pytest.raises(ValueError, match="version 2"):
        pm.RankState.from_bytes(data[:4] + b"\x02" + data[5:])
    with pytest.raises(ValueError, match="bytes"):
        pm.RankState.from_bytes(data[:-1])
    with pytest.raises(ValueError, match="too short"):
        pm.RankState.from_bytes(data[:3])
    state = pm.RankState()
    with pytest.raises(ValueError, match="y_true"):
        state.update([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="y_score"):
        state.update([0, 1], [0.1, math.nan])
    with pytest.raises(ValueError, match="sample_weight"):
        state.update([0, 1], [0.1, 0.2], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="sample_weight"):
        state.update([0, 1], [0.1, 0.2], sample_weight=[1.0])
    with pytest.raises(ValueError, match="samples"):
        state.update([0, 1, 1], [0.1, 0.2])
    with pytest.raises(TypeError, match="RankState"):
        state.merge(b"")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="increasing"):
        pm.RankState(np.array([2.0, 1.0]), np.array([1, 1]), np.array([0, 0]))
    assert state == pm.RankState()  # refused updates leave the state unchanged


def test_weighted_state_has_no_delong_interval():
    state = pm.RankState().update([0, 1, 1], [0.1, 0.2, 0.05], sample_weight=[1.0, 2.0, 1.0])
    assert state.roc_auc().auc == pytest.approx(roc_auc_score([0, 1, 1], [0.1, 0.2, 0.05], sample_weight=[1, 2, 1]))
    with pytest.raises(ValueError, match="unweighted"):
        state.roc_auc().confidence_interval()
    with pytest.raises(ValueError, match="unweighted"):
        state.paired_evaluation()


def test_one_class_warns_as_scikit_learn():
    state = pm.RankState().update([1, 1], [0.1, 0.2])
    with pytest.warns(Warning, match="Only one class"):
        assert math.isnan(state.roc_auc().auc)
    with pytest.warns(Warning, match="No positive class"):
        assert math.isnan(pm.RankState().update([0, 0], [0.1, 0.2]).average_precision())
    with pytest.raises(ValueError, match="definition"):
        state.average_precision(definition="interpolated")


def test_docstring_examples_run():
    import doctest

    from pairmetrics import _rank_state

    assert doctest.testmod(_rank_state).failed == 0
