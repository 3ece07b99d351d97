"""Per-group results in one call (groups=) of paired_evaluation, compare_paired, roc_auc_score and concordance."""

import math
import sys
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics.reference import groups as ref

SCORE_DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
]


def _scores(dtype, n):
    """Scores of a dtype, from a small pool (ties) or the dtype's whole range (extreme magnitudes)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        values = st.booleans()
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = st.one_of(st.integers(max(int(info.min), -2), 3), st.sampled_from([int(info.min), int(info.max)]))
    else:
        big = float(np.finfo(dtype).max)
        values = st.one_of(
            st.sampled_from([-1.0, 0.0, 0.5, 1.0, -big, big]),
            st.floats(-1e6, 1e6, width=32 if dtype == np.float32 else 64),
        )
    return hnp.arrays(dtype, n, elements=values)


@st.composite
def grouped_problems(draw, max_n=24, label_pool=(0, 1, 2, 3)):
    """(scores, other scores, labels, groups): few groups, so that groups of one and two samples and groups
    of one label class are common."""
    n = draw(st.integers(2, max_n))
    dtype = draw(st.sampled_from(SCORE_DTYPES))
    scores, other = draw(_scores(dtype, n)), draw(_scores(dtype, n))
    labels = np.array(draw(st.lists(st.sampled_from(label_pool), min_size=n, max_size=n)))
    groups = np.array(draw(st.lists(st.integers(-2, 3), min_size=n, max_size=n)))
    return scores, other, labels, groups


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


# --------------------------------------------------------------------------- against the references


@settings(max_examples=examples(150), deadline=None)
@given(grouped_problems(), st.sampled_from([0.5, 1.0, 2.5]))
def test_paired_evaluation_matches_reference_per_group(problem, min_dist):
    scores, _, labels, groups = problem
    result = _quiet(pm.paired_evaluation, labels, scores, min_dist=min_dist, groups=groups, n_jobs=1)
    keys, counts = ref.pair_counts(scores, labels, groups, min_dist)
    assert result.groups.tolist() == keys
    np.testing.assert_array_equal(
        np.c_[result.n_rankable, result.n_correct, result.n_tied, result.n_incorrect],
        np.array(counts, dtype=np.int64).reshape(-1, 4),
    )
    expected_auc = [(c + t / 2) / r if r else math.nan for r, c, t, _ in counts]
    np.testing.assert_array_equal(result.auc, expected_auc)
    sizes = [int(np.count_nonzero(groups == k)) for k in keys]
    np.testing.assert_array_equal(result.n_samples, sizes)
    expected_mean = ref.weighted_mean(expected_auc, sizes)
    assert (math.isnan(result.mean) and math.isnan(expected_mean)) or math.isclose(result.mean, expected_mean)


@settings(max_examples=examples(150), deadline=None)
@given(grouped_problems(label_pool=(0, 1)), st.booleans(), st.sampled_from([None, 0.5]))
def test_roc_auc_matches_reference_per_group(problem, weighted, max_fpr):
    scores, _, labels, groups = problem
    weights = np.arange(1, labels.size + 1) % 3 * 0.5 if weighted else None
    result = _quiet(pm.sklearn.roc_auc_score, labels, scores, sample_weight=weights, groups=groups)
    keys, aucs = ref.auc(labels == 1, scores.tolist(), groups, weights)
    assert result.groups.tolist() == keys
    if max_fpr is None:
        np.testing.assert_allclose(result.auc, aucs, rtol=1e-12, atol=1e-12)
    partial = _quiet(pm.sklearn.roc_auc_score, labels, scores, sample_weight=weights, groups=groups, max_fpr=max_fpr)
    for key, got in zip(keys, partial.auc):
        rows = groups == key
        w = None if weights is None else weights[rows]
        try:
            expected = _quiet(pm.sklearn.roc_auc_score, labels[rows], scores[rows], sample_weight=w, max_fpr=max_fpr)
        except ValueError:  # one sample, or no negative weight with a partial area: undefined in a group
            expected = math.nan
        assert (math.isnan(got) and math.isnan(expected)) or math.isclose(got, expected, rel_tol=1e-12), key
    np.testing.assert_array_equal(result.n_positive + result.n_negative, result.n_samples)


@settings(max_examples=examples(100), deadline=None)
@given(grouped_problems(max_n=18), st.lists(st.booleans(), min_size=18, max_size=18))
def test_concordance_matches_reference_per_group(problem, event_flags):
    scores, _, labels, groups = problem
    times = labels.astype(np.float64)
    events = np.array(event_flags[: labels.size], dtype=np.uint8)
    predicted = scores.astype(np.float64)
    result = _quiet(pm.concordance, times, events, predicted, groups=groups)
    keys, expected = ref.concordance(times.tolist(), predicted.tolist(), events.tolist(), groups)
    assert result.groups.tolist() == keys
    table = np.c_[result.concordant, result.discordant, result.tied_predicted, result.tied_time, result.tied_both]
    np.testing.assert_array_equal(table, np.array([e[0] for e in expected]).reshape(-1, 5))
    np.testing.assert_allclose(result.estimate, [e[1] for e in expected], rtol=1e-12)
    np.testing.assert_allclose(result.variance, [e[2] for e in expected], rtol=1e-9, atol=1e-15)


# --------------------------------------------------------------------------- each group equals the ungrouped call


def _slices(groups):
    for index, key in enumerate(np.unique(groups)):
        rows = np.flatnonzero(groups == key)
        if rows.size >= 2:
            yield index, rows


@settings(max_examples=examples(100), deadline=None)
@given(grouped_problems())
def test_each_group_equals_the_ungrouped_call_on_its_slice(problem):
    scores, other, labels, groups = problem
    evaluation = _quiet(pm.paired_evaluation, labels, scores, groups=groups, variance=True)
    comparison = _quiet(pm.compare_models, labels, [scores, other], groups=groups)
    binary = (labels > 1).astype(np.int8)
    aucs = _quiet(pm.sklearn.roc_auc_score, binary, scores, groups=groups)
    survival = _quiet(pm.concordance, labels.astype(float), None, scores.astype(float), groups=groups)
    for g, rows in _slices(groups):
        alone = _quiet(pm.paired_evaluation, labels[rows], scores[rows], variance=True)
        assert (evaluation.n_rankable[g], evaluation.n_correct[g], evaluation.n_tied[g], evaluation.n_incorrect[g]) == (
            alone.n_rankable,
            alone.n_correct,
            alone.n_tied,
            alone.n_incorrect,
        )
        np.testing.assert_allclose(evaluation.variance[g], alone._variance, rtol=1e-9, atol=1e-15)
        both = _quiet(pm.compare_models, labels[rows], [scores[rows], other[rows]])
        cov = both.covariance
        for name, value in (
            ("auc_a", both.auc[0]),
            ("auc_b", both.auc[1]),
            ("variance_a", cov[0, 0]),
            ("variance_b", cov[1, 1]),
            ("covariance", cov[0, 1]),
            ("pvalue", both.pvalue),
        ):
            np.testing.assert_allclose(getattr(comparison, name)[g], value, rtol=1e-7, atol=1e-12, err_msg=name)
        if np.isfinite(both.statistic) and np.isfinite(comparison.statistic[g]):  # chi-square = z**2
            np.testing.assert_allclose(comparison.statistic[g] ** 2, both.statistic, rtol=1e-7, atol=1e-12)
        expected_auc = _quiet(pm.sklearn.roc_auc_score, binary[rows], scores[rows])
        np.testing.assert_allclose(aucs.auc[g], expected_auc, rtol=1e-12)
        one = _quiet(pm.concordance, labels[rows].astype(float), None, scores[rows].astype(float))
        np.testing.assert_allclose(survival.estimate[g], one.estimate, rtol=1e-12)
        np.testing.assert_allclose(survival.variance[g], one.variance, rtol=1e-9, atol=1e-15)


def test_large_groups_and_threads_give_the_same_numbers():
    # One group above the size that runs alone with every thread, many small ones.
    rng = np.random.default_rng(7)
    n = 300_000
    groups = np.where(rng.random(n) < 0.6, 0, rng.integers(1, 500, n))
    scores, labels = rng.integers(0, 1000, n), rng.integers(0, 5, n)
    results = [pm.paired_evaluation(labels, scores, groups=groups, n_jobs=k, variance=True) for k in (1, 2)]
    assert results[0] == results[1]
    big = groups == 0
    alone = pm.paired_evaluation(labels[big], scores[big], variance=True)
    assert (results[0].n_rankable[0], results[0].n_correct[0]) == (alone.n_rankable, alone.n_correct)
    np.testing.assert_allclose(results[0].variance[0], alone._variance, rtol=1e-9)


# --------------------------------------------------------------------------- keys, result, warnings, errors


@pytest.mark.parametrize(
    "keys",
    [
        np.array(["b", "a", "b", "a", "c", "c"]),
        np.array([2.5, -1.0, 2.5, -1.0, 7.0, 7.0]),
        np.array([True, False, True, False, True, True]),
        np.array([10**18, 3, 10**18, 3, -5, -5]),
        np.array(["b", "a", "b", "a", "c", "c"], dtype=object),
        np.array(
            ["2024-01-02", "2024-01-01", "2024-01-02", "2024-01-01", "2024-01-03", "2024-01-03"], dtype="datetime64[D]"
        ),
    ],
)
def test_keys_of_any_sortable_dtype(keys):
    scores, labels = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9]), np.array([0, 1, 1, 0, 0, 1])
    result = _quiet(pm.paired_evaluation, labels, scores, groups=keys)
    np.testing.assert_array_equal(result.groups, np.unique(keys))
    for g, key in enumerate(result.groups):
        rows = keys == key
        assert result.n_samples[g] == rows.sum()


def test_pandas_categorical_keys():
    pd = pytest.importorskip("pandas")
    keys = pd.Categorical(["x", "y", "x", "y"])
    result = pm.sklearn.roc_auc_score([0, 0, 1, 1], [0.1, 0.9, 0.8, 0.95], groups=keys)
    assert result.groups.tolist() == ["x", "y"] and result.auc.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("keys", [[1.0, np.nan, 2.0, 1.0], np.array(["a", None, "b", "a"], dtype=object)])
def test_missing_keys_are_refused(keys):
    with pytest.raises(ValueError, match="groups contains a missing key.*index 1"):
        pm.paired_evaluation([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], groups=keys)


def test_bad_groups_are_refused():
    scores, labels = [0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]
    with pytest.raises(ValueError, match="groups has 3 entries but labels has 4"):
        pm.paired_evaluation(labels, scores, groups=[1, 1, 2])
    with pytest.raises(ValueError, match="groups must be 1-D"):
        pm.compare_models(labels, [scores, scores], groups=[[1, 1], [2, 2]])
    with pytest.raises(TypeError, match="groups must hold keys that sort"):
        pm.paired_evaluation(labels, scores, groups=np.array([1, "a", 2, 1], dtype=object))
    with pytest.raises(ValueError, match="groups= takes binary y_true only, got multiclass"):
        pm.sklearn.roc_auc_score([0, 1, 2, 1], np.eye(3)[[0, 1, 2, 1]], multi_class="ovr", groups=[1, 1, 2, 2])
    with pytest.raises(ValueError, match="not both"):
        pm.concordance([1, 2, 3, 4], None, [1, 2, 3, 4], strata=[1, 1, 2, 2], groups=[1, 1, 2, 2])
    with pytest.raises(ValueError, match="one model"):
        pm.concordance([1, 2, 3, 4], None, np.ones((2, 4)), groups=[1, 1, 2, 2])
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        pm.sklearn.roc_auc_score([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], sample_weight=[1, -1, 1, 1], groups=[1, 1, 2, 2])


def test_undefined_groups_warn_once_and_leave_the_mean():
    scores, labels = [0.1, 0.4, 0.35, 0.8, 0.3, 0.2, 0.5], [0, 0, 1, 1, 1, 1, 0]
    groups = ["a", "a", "a", "a", "b", "b", "c"]
    with pytest.warns(RuntimeWarning, match="2 of 3 groups have nothing rankable") as caught:
        result = pm.paired_evaluation(labels, scores, groups=groups)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert result.auc[0] == 0.75 and np.isnan(result.auc[1:]).all() and result.mean == 0.75
    assert np.isnan(result.variance[1:]).all() and result.n_rankable.tolist() == [4, 0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pm.paired_evaluation(labels, scores, groups=groups, warn=False)
    with pytest.warns(RuntimeWarning, match="one class only"):
        aucs = pm.sklearn.roc_auc_score(labels, scores, groups=groups)
    assert aucs.mean == 0.75 and aucs.n_positive.tolist() == [2, 2, 0]
    with pytest.warns(RuntimeWarning, match="3 of 3 groups"):
        assert math.isnan(pm.paired_evaluation([0, 0, 0], [1, 2, 3], groups=[1, 2, 3]).mean)


def test_result_fields_table_and_repr():
    result = pm.compare_models([0, 1, 0, 1], [[0.1, 0.4, 0.35, 0.8], [0.2, 0.1, 0.3, 0.9]], groups=[1, 1, 2, 2])
    assert isinstance(result, pm.GroupedPairedComparison) and isinstance(result, pm.GroupedResult)
    assert result.auc_difference.tolist() == [1.0, 0.0] and result.mean == 0.5
    assert "2 groups" in repr(result) and "mean auc_difference=0.5" in repr(result)
    pd = pytest.importorskip("pandas")
    frame = result.to_frame()
    assert frame.index.name == "group" and frame.index.tolist() == [1, 2]
    assert frame.loc[1, "auc_b"] == 0.0 and frame.loc[1, "n_samples"] == 2 and "mean" not in frame
    assert isinstance(frame, pd.DataFrame)
    assert result == pm.compare_models([0, 1, 0, 1], [[0.1, 0.4, 0.35, 0.8], [0.2, 0.1, 0.3, 0.9]], groups=[1, 1, 2, 2])


def test_to_frame_without_pandas(monkeypatch):
    result = pm.sklearn.roc_auc_score([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], groups=[1, 1, 2, 2])
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="to_frame\\(\\) needs pandas"):
        result.to_frame()


def test_progress_and_errors_of_the_callback_reach_the_caller():
    rng = np.random.default_rng(3)
    n = 200_000
    scores, labels, groups = rng.random(n), rng.integers(0, 2, n), rng.integers(0, 1000, n)
    from pairmetrics import _core

    seen = []
    codes = groups.astype(np.int64)
    _core.grouped_paired_counts(scores, labels, codes, 1000, 0.5, False, 2, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1] == n

    def fail(done, total):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        _core.grouped_paired_counts(scores, labels, codes, 1000, 0.5, True, 2, progress=fail)
    with pytest.raises(ValueError, match="outside"):
        _core.grouped_paired_counts(scores, labels, codes, 10, 0.5)


def test_dask_input_with_groups_is_refused():
    da = pytest.importorskip("dask.array")
    scores, labels = da.from_array(np.array([0.1, 0.4, 0.35, 0.8]), chunks=2), da.from_array(np.array([0, 0, 1, 1]))
    with pytest.raises(TypeError, match="groups"):
        pm.paired_evaluation(labels, scores, groups=[1, 1, 2, 2])
    with pytest.raises(TypeError, match="groups"):
        pm.compare_models(labels, da.stack([scores, scores]), groups=[1, 1, 2, 2])
    with pytest.raises(TypeError, match="groups"):
        pm.sklearn.roc_auc_score(labels, scores, groups=[1, 1, 2, 2])
    with pytest.raises(TypeError, match="groups"):
        pm.paired_evaluation(
            [0, 0, 1, 1], np.array([0.1, 0.4, 0.35, 0.8]), groups=da.from_array(np.array([1, 1, 2, 2]))
        )
    with pytest.raises(TypeError, match="does not take Dask"):
        pm.concordance(da.from_array(np.array([1.0, 2, 3, 4])), None, [1.0, 2, 3, 4], groups=[1, 1, 2, 2])


@settings(max_examples=examples(40), deadline=None)
@given(grouped_problems())
def test_each_groups_interval_equals_the_ungrouped_interval(problem):
    scores, other, labels, groups = problem
    binary = (labels > 1).astype(np.int8)
    grouped = {
        "paired": _quiet(pm.paired_evaluation, labels, scores, groups=groups, variance=True).confidence_interval(0.9),
        "roc": _quiet(pm.sklearn.roc_auc_score, binary, scores, groups=groups).confidence_interval(0.9),
        "comparison": _quiet(pm.compare_models, labels, [scores, other], groups=groups).confidence_interval(0.9),
        "concordance": _quiet(
            pm.concordance, labels.astype(float), None, scores.astype(float), groups=groups
        ).confidence_interval(0.9),
    }
    for g, rows in _slices(groups):
        alone = {
            "paired": _quiet(pm.paired_evaluation, labels[rows], scores[rows], variance=True).confidence_interval(0.9),
            "roc": _quiet(pm.paired_evaluation, binary[rows], scores[rows], variance=True).confidence_interval(0.9),
            "comparison": [
                x[0, 1]
                for x in _quiet(pm.compare_models, labels[rows], [scores[rows], other[rows]]).confidence_interval(0.9)
            ],
            "concordance": _quiet(
                pm.concordance, labels[rows].astype(float), None, scores[rows].astype(float)
            ).confidence_interval(0.9),
        }
        for name, interval in grouped.items():
            low, high = alone[name]
            np.testing.assert_allclose(
                [interval.low[g], interval.high[g]], [low, high], rtol=1e-7, atol=1e-12, err_msg=name
            )


def test_grouped_roc_auc_variance_only_where_it_is_delongs():
    labels, scores, groups = np.array([0, 1, 0, 1, 1, 0]), np.array([0.1, 0.4, 0.35, 0.8, 0.3, 0.2]), [1, 1, 1, 2, 2, 2]
    assert pm.sklearn.roc_auc_score(labels, scores, groups=groups).variance is not None
    weighted = pm.sklearn.roc_auc_score(labels, scores, groups=groups, sample_weight=np.ones(6))
    assert weighted.variance is None
    with pytest.raises(ValueError, match="variance"):
        weighted.confidence_interval()
