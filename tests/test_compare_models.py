"""compare_models(): k correlated AUCs, DeLong's covariance and the chi-square test of equality."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics.reference import confidence as ref


@st.composite
def binary_problem(draw):
    n = draw(st.integers(4, 30))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n).filter(lambda x: 1 < sum(x) < len(x) - 1))
    k = draw(st.integers(2, 4))
    scores = [draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)) for _ in range(k)]
    return np.array(scores, dtype=float), np.array(labels)


@settings(max_examples=examples(80), deadline=None)
@given(binary_problem())
def test_delong_covariance_matches_reference(problem):
    scores, labels = problem
    result = pm.compare_models(labels, scores)
    k = scores.shape[0]
    for i in range(k):
        assert result.auc[i] == pytest.approx(ref.placements(scores[i], labels)[0], abs=1e-14)
        for j in range(k):
            var_i, _, cov = ref.delong_covariance(scores[i], scores[j], labels)
            assert result.covariance[i, j] == pytest.approx(cov, rel=1e-9, abs=1e-15)
            assert result.covariance[i, i] == pytest.approx(var_i, rel=1e-9, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(binary_problem())
def test_two_models_agree_with_the_normal_test_of_one_group(problem):
    scores, labels = problem
    result = pm.compare_models(labels, scores[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = pm.compare_models(labels, scores[:2], groups=np.zeros(len(labels)))
    z, p = float(pair.statistic[0]), float(pair.pvalue[0])
    if math.isfinite(z) and z != 0:
        assert result.statistic == pytest.approx(z**2, rel=1e-9)
        assert result.pvalue == pytest.approx(p, rel=1e-7, abs=1e-300)
        assert result.difference_pvalue[0, 1] == pytest.approx(p, rel=1e-7, abs=1e-300)


def test_confidence_interval_holds_k_by_k_arrays():
    scores = np.array([[0.1, 0.2, 0.6, 0.4, 0.8, 0.9], [0.3, 0.1, 0.2, 0.5, 0.4, 0.7], [0.5, 0.4, 0.3, 0.2, 0.6, 0.1]])
    result = pm.compare_models([0, 0, 0, 1, 1, 1], scores)
    interval = result.confidence_interval(confidence_level=0.9)
    assert interval.low.shape == interval.high.shape == (3, 3) and interval.confidence_level == 0.9
    assert np.all(np.diag(interval.low) == 0) and np.all(np.diag(interval.high) == 0)
    assert np.all(interval.low <= result.difference) and np.all(result.difference <= interval.high)
    np.testing.assert_allclose(interval.low, -interval.high.T, atol=1e-15)  # the interval of -d is minus that of d


def test_chi_square_against_explicit_contrast():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 200)
    truth = labels + rng.normal(size=200)
    scores = np.vstack([truth + rng.normal(scale=s, size=200) for s in (0.5, 1.0, 2.0)])
    result = pm.compare_models(labels, scores)
    contrast = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]])
    x = contrast @ result.auc
    stat = x @ np.linalg.solve(contrast @ result.covariance @ contrast.T, x)
    from scipy import stats

    assert result.statistic == pytest.approx(stat, rel=1e-9)
    assert result.pvalue == pytest.approx(stats.chi2.sf(stat, 2), rel=1e-9)
    assert result.df == 2
    np.testing.assert_allclose(result.difference, result.auc[:, None] - result.auc[None, :])
    assert np.all(np.diag(result.difference_pvalue) == 1.0)


def test_ordinal_labels_use_the_one_sample_factor():
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 4, 80)
    scores = np.vstack([labels + rng.normal(size=80), labels + rng.normal(size=80)])
    result = pm.compare_models(labels, scores)
    a = pm.paired_evaluation(labels, scores[0], variance=True)
    low, high = a.confidence_interval()
    se = math.sqrt(result.covariance[0, 0])
    from scipy import stats

    z = stats.norm.ppf(0.975)
    assert (low, high) == pytest.approx((max(0, a.auc - z * se), min(1, a.auc + z * se)), rel=1e-9)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="y_score"):
        pm.compare_models([0, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="y_score"):
        pm.compare_models([0, 1, 1], np.zeros((1, 3)))
    with pytest.raises(ValueError, match="y_true"):
        pm.compare_models([0, 1], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="groups compares two models"):
        pm.compare_models([0, 1, 1], np.zeros((3, 3)), groups=[0, 0, 1])
    with pytest.raises(ValueError, match=r"y_score\[1\]"):
        pm.compare_models([0, 1, 1], np.array([[0.1, 0.2, 0.3], [0.1, np.nan, 0.3]]))


def test_nothing_rankable_warns():
    with pytest.warns(RuntimeWarning, match="rankable"):
        result = pm.compare_models([1, 1, 1], np.zeros((2, 3)))
    assert np.isnan(result.auc).all() and math.isnan(result.pvalue)


def test_the_equality_test_does_not_depend_on_the_order_of_the_models():
    """A constant baseline and a perfect separator have zero estimated variance; an ordinary model does not.
    Differences the covariance calls exact make the test undefined (nan, with a warning) in every order."""
    import itertools

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 200)
    models = {
        "constant": np.zeros(200),
        "perfect": labels + 0.0,
        "ordinary": labels + rng.normal(size=200),
    }
    outcomes = set()
    for order in itertools.permutations(models):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = pm.compare_models(labels, np.array([models[name] for name in order]))
        assert any("undefined" in str(w.message) for w in caught)
        outcomes.add((math.isnan(result.statistic), math.isnan(result.pvalue)))
    assert outcomes == {(True, True)}
    # without the degenerate models every order gives one answer too
    two = [models["ordinary"], models["ordinary"] + rng.normal(size=200)]
    forward, backward = pm.compare_models(labels, two), pm.compare_models(labels, two[::-1])
    assert forward.statistic == pytest.approx(backward.statistic, rel=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 5))
def test_equality_test_is_invariant_to_order_with_zero_variance_models(seed, k):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, 40)
    rows = [labels + rng.normal(size=40) for _ in range(k - 1)] + [np.full(40, 1.0)]
    results = []
    for permutation in (np.arange(k), rng.permutation(k), rng.permutation(k)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = pm.compare_models(labels, np.array(rows)[permutation])
        results.append((r.statistic, r.pvalue, r.df))
    first = results[0]
    for other in results[1:]:
        assert (math.isnan(first[0]) and math.isnan(other[0])) or other[0] == pytest.approx(first[0], rel=1e-9)
        assert other[2] == first[2]


def test_a_class_of_one_sample_gives_an_undefined_variance():
    labels = [0, 0, 0, 0, 1]
    scores = np.array([[0.1, 0.2, 0.3, 0.4, 0.9], [0.3, 0.1, 0.2, 0.5, 0.4]])
    with pytest.warns(RuntimeWarning, match="single sample"):
        result = pm.compare_models(labels, scores)
    assert np.isnan(result.covariance).all() and math.isnan(result.pvalue)
    with pytest.warns(RuntimeWarning, match="single sample"):
        low, high = pm.paired_evaluation(labels, scores[0]).confidence_interval()
    assert math.isnan(low) and math.isnan(high)


def test_a_transposed_score_matrix_gets_a_hint_and_to_frame_has_a_row_per_model():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 50)
    scores = np.vstack([labels + rng.normal(size=50), rng.normal(size=50), labels + rng.normal(size=50)])
    with pytest.raises(ValueError, match=r"y_score\.T"):
        pm.compare_models(labels, scores.T)
    pytest.importorskip("pandas")
    result = pm.compare_models(labels, scores)
    frame = result.to_frame()
    assert frame.index.name == "model" and list(frame.columns) == ["auc", "variance", "low", "high"]
    np.testing.assert_array_equal(frame["auc"].to_numpy(), result.auc)
    low, high = pm.paired_evaluation(labels, scores[1]).confidence_interval()
    assert (frame["low"][1], frame["high"][1]) == pytest.approx((low, high), rel=1e-9)
