"""The ranking metrics of pairmetrics.sklearn against scikit-learn's and the plain-Python references."""

import inspect
import warnings

import numpy as np
import pairmetrics.sklearn as pms
import pytest
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics import _core
from pairmetrics.reference import ranking as ref

metrics = pytest.importorskip("sklearn.metrics")

CURVES = ("roc_curve", "precision_recall_curve", "det_curve")
ROW_METRICS = ("label_ranking_average_precision_score", "coverage_error", "label_ranking_loss")


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def _same(name, *args, **kwargs):
    """Our result and scikit-learn's agree (values to 1e-12, dtypes and shapes exactly); when scikit-learn
    raises, we raise the same exception type."""
    try:
        theirs = _quiet(getattr(metrics, name), *args, **kwargs)
    except (ValueError, TypeError, ZeroDivisionError) as error:
        with pytest.raises(type(error)):
            _quiet(getattr(pms, name), *args, **kwargs)
        return None
    ours = _quiet(getattr(pms, name), *args, **kwargs)
    assert type(ours) is type(theirs)
    for a, b in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (name, a, b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    return ours


def test_signatures_are_scikit_learns():
    for name in pms.__all__:
        ours = inspect.signature(getattr(pms, name)).parameters
        theirs = inspect.signature(getattr(metrics, name)).parameters
        # roc_auc_score also takes groups= (keyword-only, last); every other parameter is scikit-learn's
        extra = [p for p in ours if p not in theirs]
        assert extra in ([], ["groups"]), (name, extra)
        kept = [ours[p].replace(annotation=inspect.Parameter.empty) for p in ours if p in theirs]
        assert kept == list(theirs.values()), name


# --------------------------------------------------------------------------- binary curves and AP


@st.composite
def binary_problems(draw, max_n=30):
    n = draw(st.integers(1, max_n))
    y = draw(hnp.arrays(np.int8, n, elements=st.integers(0, 1)))
    pool = draw(st.sampled_from([1, 2, 3, 5, 0]))
    if pool:
        scores = draw(hnp.arrays(np.float64, n, elements=st.sampled_from([-1.0, 0.0, 0.25, 0.5, 2.0][:pool])))
    else:
        scores = draw(hnp.arrays(np.float64, n, elements=st.floats(-1e300, 1e300, allow_nan=False)))
    weights = None
    if draw(st.booleans()):
        weights = draw(hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25])))
    return y, scores, weights


@settings(max_examples=examples(150), deadline=None)
@given(binary_problems(), st.booleans())
def test_curves_and_ap_match_sklearn_and_reference(problem, drop):
    y, scores, weights = problem
    for name in CURVES:
        _same(name, y, scores, sample_weight=weights, drop_intermediate=drop)
    _same("average_precision_score", y, scores, sample_weight=weights)
    curve = _core.binary_curve(scores, y.view(np.uint8), weights, "none", 1)
    thresholds, tps, fps = curve["thresholds"], curve["tps"], curve["fps"]
    expected = ref.binary_curve(y, scores, weights)
    np.testing.assert_array_equal(thresholds, expected[0])
    np.testing.assert_allclose(tps, expected[1], rtol=1e-12)
    np.testing.assert_allclose(fps, expected[2], rtol=1e-12)
    ap = ref.average_precision(y, scores, weights)
    if ap is not None:
        assert _quiet(pms.average_precision_score, y, scores, sample_weight=weights) == pytest.approx(ap, abs=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_score_dtype(dtype):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    scores = rng.integers(0, 2 if dtype is np.bool_ else 9, 300).astype(dtype)
    for name in CURVES:
        _same(name, y, scores)
    _same("average_precision_score", y, scores)
    # precision_recall_curve's thresholds keep the scores' dtype, extreme values included
    extreme = np.array(
        [np.iinfo(dtype).min, np.iinfo(dtype).max, 0] if dtype not in (np.bool_, np.float32, np.float64) else [0, 1, 1],
        dtype=dtype,
    )
    _same("precision_recall_curve", [0, 1, 1], extreme)


@pytest.mark.parametrize(
    "labels, pos_label",
    [(["a", "b"], "b"), (["a", "b"], "a"), ([-1, 1], None), ([2, 7], 7), ([True, False], True), ([0, 1, 2], 2)],
)
def test_pos_label(labels, pos_label):
    rng = np.random.default_rng(1)
    y = np.array(labels)[rng.integers(0, len(labels), 60)]
    scores = rng.random(60).round(1)
    for name in CURVES:
        _same(name, y, scores, pos_label=pos_label)
    if len(labels) == 2:
        _same("average_precision_score", y, scores, pos_label=pos_label if pos_label is not None else 1)


def test_one_class_and_zero_weights_warn_or_raise_like_sklearn():
    scores = [0.1, 0.4, 0.35]
    for y in ([0, 0, 0], [1, 1, 1]):
        for name in ("roc_curve", "precision_recall_curve", "det_curve", "average_precision_score"):
            _same(name, y, scores)
    with pytest.warns(UserWarning, match="No positive class found"):
        assert pms.average_precision_score([0, 0], [0.2, 0.1]) == 0.0
    with pytest.warns(metrics._ranking.UndefinedMetricWarning, match="No negative samples"):
        pms.roc_curve([1, 1], [0.2, 0.1])
    _same("roc_curve", [0, 1, 1, 0], [0.1, 0.4, 0.35, 0.2], sample_weight=[0, 1, 0, 1])


@st.composite
def multilabel_problems(draw, max_n=12, max_labels=5):
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(2, max_labels))
    y = draw(hnp.arrays(np.int8, (n, c), elements=st.integers(0, 1)))
    scores = draw(hnp.arrays(np.float64, (n, c), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.0])))
    weights = draw(st.none() | hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 0.5, 1.0, 2.0])))
    return y, scores, weights


@settings(max_examples=examples(100), deadline=None)
@given(multilabel_problems(), st.sampled_from([None, "micro", "macro", "weighted", "samples"]))
def test_average_precision_every_average(problem, average):
    y, scores, weights = problem
    _same("average_precision_score", y, scores, average=average, sample_weight=weights)
    classes = y.argmax(axis=1)
    if np.unique(classes).size > 2 and np.unique(classes).size == y.shape[1]:
        _same("average_precision_score", classes, scores, average=average, sample_weight=weights)


def test_float32_counts_are_exact():
    """Unweighted counts are integers whatever the score dtype: AP of float32 scores equals the exact
    int64-count computation (scores cast to float64 first)."""
    rng = np.random.default_rng(2)
    n = 1 << 21
    scores = rng.random(n, dtype=np.float32)
    y = (rng.random(n) < scores).astype(np.int8)
    ours = pms.average_precision_score(y, scores)
    values, inverse = np.unique(-scores.astype(np.float64), return_inverse=True)
    tp = np.cumsum(np.bincount(inverse, weights=y, minlength=values.size).astype(np.int64))
    seen = np.cumsum(np.bincount(inverse, minlength=values.size).astype(np.int64))
    exact = float(np.sum(np.diff(tp, prepend=0) * (tp / seen)) / tp[-1])
    assert ours == pytest.approx(exact, abs=1e-12)


# --------------------------------------------------------------------------- row metrics


@st.composite
def ranking_problems(draw, max_n=10, max_labels=8):
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(2, max_labels))
    y = draw(hnp.arrays(np.int8, (n, c), elements=st.integers(0, 1)))
    pool = draw(st.sampled_from([2, 3, 0]))
    if pool:
        scores = draw(hnp.arrays(np.float64, (n, c), elements=st.sampled_from([0.0, 0.5, -1.0][:pool])))
    else:
        scores = draw(hnp.arrays(np.float64, (n, c), elements=st.floats(-1e6, 1e6, allow_nan=False)))
    weights = draw(st.none() | hnp.arrays(np.float64, n, elements=st.sampled_from([0.5, 1.0, 2.0])))
    return y, scores, weights


@settings(max_examples=examples(150), deadline=None)
@given(ranking_problems(), st.sampled_from([np.float64, np.float32]))
def test_row_metrics_match_sklearn_and_reference(problem, dtype):
    y, scores, weights = problem
    scores = scores.astype(dtype)
    for name in ROW_METRICS:
        _same(name, y, scores, sample_weight=weights)
    for metric, reference in (
        ("average_precision", ref.label_ranking_average_precision),
        ("coverage", ref.coverage),
        ("loss", ref.ranking_loss),
    ):
        rows = _core.label_ranking_rows(scores, y.view(np.uint8), metric, 2)
        expected = [reference(y[i], scores[i].tolist()) for i in range(y.shape[0])]
        np.testing.assert_allclose(rows, expected, rtol=1e-12)


@settings(max_examples=examples(150), deadline=None)
@given(
    ranking_problems(max_labels=40),
    st.sampled_from([None, 1, 2, 5, 50]),
    st.booleans(),
    st.sampled_from([np.uint8, np.int64, np.float32, np.float64]),
)
def test_dcg_and_ndcg_match_sklearn_and_reference(problem, k, ignore_ties, gain_dtype):
    y, scores, weights = problem
    gains = (y * np.arange(1, y.shape[1] + 1) % 4).astype(gain_dtype)
    if ignore_ties:  # scikit-learn's order of tied scores is numpy's unstable argsort's
        scores = scores + np.arange(scores.shape[1]) * 1e-3
    for name in ("dcg_score", "ndcg_score"):
        _same(name, gains, scores, k=k, sample_weight=weights, ignore_ties=ignore_ties)
    _same("dcg_score", gains, scores, k=k, log_base=10, ignore_ties=ignore_ties)
    for i in range(gains.shape[0]):
        expected = ref.dcg(gains[i].tolist(), scores[i].tolist(), k=k, ignore_ties=ignore_ties)
        ideal = ref.ideal_dcg(gains[i].tolist(), k=k)
        discount = 1 / (np.log(np.arange(gains.shape[1]) + 2) / np.log(2))
        if k is not None:
            discount[k:] = 0
        limit = gains.shape[1] if k is None else min(k, gains.shape[1])
        args = (scores[i : i + 1], gains[i : i + 1].astype(np.float64), discount, np.cumsum(discount), limit)
        assert _core.dcg_rows(*args, ignore_ties, False)[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert _core.dcg_rows(*args, ignore_ties, True)[0] == pytest.approx(
            expected / ideal if ideal else 0.0, rel=1e-12, abs=1e-12
        )


def test_dcg_ties_among_many_relevant_labels_use_the_sorted_path():
    rng = np.random.default_rng(3)
    gains = rng.integers(0, 5, (200, 60))
    scores = rng.integers(0, 6, (200, 60)).astype(np.float32)
    for k in (None, 1, 7, 60):
        _same("ndcg_score", gains, scores, k=k)
        _same("dcg_score", gains.astype(np.float32) / 3, scores, k=k)
    # long rows: all tied, two levels, distinct scores (the sort's degenerate pivots)
    gains = rng.integers(1, 5, (3, 1500))
    for scores in (np.zeros((3, 1500)), rng.integers(0, 2, (3, 1500)) * 1.0, rng.random((3, 1500))):
        for k in (None, 10):
            _same("ndcg_score", gains, scores, k=k)


@settings(max_examples=examples(150), deadline=None)
@given(ranking_problems(max_labels=12), st.integers(1, 12), st.booleans())
def test_top_k_matches_sklearn_and_reference(problem, k, normalize):
    _, scores, weights = problem
    n, c = scores.shape
    y = np.arange(n) * 7 % c
    _same("top_k_accuracy_score", y, scores, k=k, normalize=normalize, sample_weight=weights, labels=np.arange(c))
    hits = _core.top_k_hits(scores, y.astype(np.int64), k, 2)
    assert hits.tolist() == [ref.top_k_hit(scores[i].tolist(), y[i], k) for i in range(n)]


def test_top_k_binary_and_labels():
    y = np.array([0, 1, 1, 0, 1])
    for scores in ([0.2, 0.7, 0.5, 0.6, 0.1], [-2.0, 3.0, 0.1, 0.0, 1.0]):
        for k in (1, 2):
            _same("top_k_accuracy_score", y, scores, k=k)
    _same("top_k_accuracy_score", ["b", "c", "a"], np.eye(3), k=1, labels=["a", "b", "c"])


def test_strided_and_fortran_matrices_are_read_in_place():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, (50, 9))
    scores = np.asfortranarray(rng.integers(0, 4, (50, 9)).astype(np.float64))
    wide = rng.random((50, 18))[:, ::2]
    for s in (scores, wide):
        for name in ROW_METRICS + ("ndcg_score", "dcg_score"):
            _same(name, y, s)
        _same("average_precision_score", y, s, average=None)
        _same("top_k_accuracy_score", np.arange(50) % 9, s, k=3)


def test_sparse_y_true_where_sklearn_takes_it():
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, (20, 6))
    scores = rng.random((20, 6))
    for name in ("label_ranking_average_precision_score", "label_ranking_loss"):
        assert getattr(pms, name)(sparse.csr_matrix(y), scores) == pytest.approx(getattr(metrics, name)(y, scores))
    with pytest.raises(TypeError):
        pms.coverage_error(sparse.csr_matrix(y), scores)


BAD_INPUTS = [
    ("roc_curve", ([0, 1, 2], [0.1, 0.2, 0.3]), {}),
    ("roc_curve", ([0, 1], [0.1, np.nan]), {}),
    ("roc_curve", ([0, 1], [0.1, 0.2, 0.3]), {}),
    ("roc_curve", (["a", "b"], [0.1, 0.2]), {}),
    ("precision_recall_curve", ([0, 1], [[0.1, 0.2], [0.3, 0.4]]), {}),
    ("precision_recall_curve", ([0, 1], [0.1, 0.2]), {"sample_weight": [1.0, np.inf]}),
    ("det_curve", ([1, 1], [0.1, 0.2]), {}),
    ("average_precision_score", ([0, 1], [0.1, 0.2]), {"pos_label": 2}),
    ("average_precision_score", ([0, 1, 2], np.array([0.1, 0.2, 0.3])), {}),
    ("average_precision_score", ([0, 1], [0.1, 0.2]), {"average": "median"}),
    ("average_precision_score", ([[0, 1], [1, 0]], [[0.1, 0.2], [0.3, 0.4]]), {"pos_label": 0}),
    ("label_ranking_average_precision_score", ([0, 1], [0.1, 0.2]), {}),
    ("label_ranking_average_precision_score", ([[0, 1]], [[0.1, 0.2, 0.3]]), {}),
    ("label_ranking_loss", ([[0, 2, 1]], [[0.1, 0.2, 0.3]]), {}),
    ("coverage_error", ([0, 1], [0.1, 0.2]), {}),
    ("coverage_error", ([[0, 1]], [[0.1, np.inf]]), {}),
    ("ndcg_score", ([[-1, 1]], [[0.1, 0.2]]), {}),
    ("ndcg_score", ([[1], [0]], [[0.1], [0.2]]), {}),
    ("ndcg_score", ([[1, 0]], [[0.1, 0.2]]), {"k": 0}),
    ("dcg_score", ([1, 0], [0.1, 0.2]), {}),
    ("dcg_score", ([[1, 0]], [[0.1, 0.2]]), {"log_base": -1}),
    ("top_k_accuracy_score", ([0, 1, 2], [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]), {}),
    ("top_k_accuracy_score", ([0, 1, 1], [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]), {}),
    ("top_k_accuracy_score", ([0, 1, 2], [[0.1, 0.2, 0.7]] * 3), {"labels": [0, 2, 1]}),
    ("top_k_accuracy_score", ([0, 1, 2], [[0.1, 0.2, 0.7]] * 3), {"k": 0}),
]


@pytest.mark.parametrize("name, args, kwargs", BAD_INPUTS, ids=lambda v: v if isinstance(v, str) else "")
def test_bad_inputs_raise_like_sklearn(name, args, kwargs):
    with pytest.raises(Exception) as theirs:
        _quiet(getattr(metrics, name), *args, **kwargs)
    with pytest.raises(type(theirs.value)):
        _quiet(getattr(pms, name), *args, **kwargs)


def test_sklearn_own_ranking_tests_on_pairmetrics(tmp_path):
    """scikit-learn's whole test_ranking.py with every function of pairmetrics.sklearn patched in."""
    import json
    import os
    import subprocess
    import sys

    import sklearn

    module = os.path.join(os.path.dirname(sklearn.__file__), "metrics", "tests", "test_ranking.py")
    if not os.path.exists(module):
        pytest.skip("this scikit-learn installation does not ship its tests")
    report = tmp_path / "report.json"
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in [here, *sys.path] if p),
        PAIRMETRICS_SKLEARN_SUITE_REPORT=str(report),
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "_sklearn_suite_plugin",
        "--import-mode=append",
        "--confcutdir",
        os.path.dirname(sklearn.__file__),
        module,
    ]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tally = json.loads(report.read_text())
    assert all(entry["outcome"] in ("passed", "xfailed") for entry in tally.values())
    called = {name for entry in tally.values() for name in entry["functions"]}
    assert called == set(pms.__all__)  # each of ours ran (not a silently kept original)
    print(
        f"\nscikit-learn's test_ranking.py on pairmetrics.sklearn: {len(tally)} run, "
        f"{sum(bool(e['calls']) for e in tally.values())} calling ours, "
        f"{sum(e['outcome'] == 'xfailed' for e in tally.values())} deliberate differences"
    )


def test_groups_give_each_groups_score():
    rng = np.random.default_rng(6)
    n = 300
    groups = rng.choice(["q1", "q2", "q3", "q4"], n)
    y = rng.integers(0, 2, n)
    y[groups == "q4"] = 0  # a group without positives: NaN, one warning
    scores = rng.random(n).round(2)
    weights = rng.random(n)
    with pytest.warns(RuntimeWarning, match="1 of 4 groups"):
        result = pms.average_precision_score(y, scores, sample_weight=weights, groups=groups)
    assert result.groups.tolist() == ["q1", "q2", "q3", "q4"]
    for g, value in zip(result.groups, result.average_precision):
        mask = groups == g
        if g == "q4":
            assert np.isnan(value)
        else:
            assert value == pytest.approx(
                metrics.average_precision_score(y[mask], scores[mask], sample_weight=weights[mask]), abs=1e-12
            )
    assert result.n_positive.tolist() == [int(y[groups == g].sum()) for g in result.groups]
    gains = rng.integers(0, 4, (n, 7))
    ranking = rng.random((n, 7)).round(1)
    grouped = pms.ndcg_score(gains, ranking, k=3, sample_weight=weights, groups=groups)
    for g, value in zip(grouped.groups, grouped.ndcg):
        mask = groups == g
        expected = metrics.ndcg_score(gains[mask], ranking[mask], k=3, sample_weight=weights[mask])
        assert value == pytest.approx(expected, abs=1e-12)
    assert pms.ndcg_score(gains, ranking, groups=np.zeros(n)).mean == pytest.approx(pms.ndcg_score(gains, ranking))
    with pytest.raises(ValueError, match="binary"):
        pms.average_precision_score(np.eye(3, dtype=int), np.eye(3), groups=[1, 2, 3])


@pytest.mark.parametrize("design", ["plain", "stratified", "clustered"])
def test_bootstrap_of_average_precision_takes_the_compiled_path_with_the_same_replicates(design):
    import pairmetrics as pm

    rng = np.random.default_rng(7)
    n = 120
    y = rng.integers(0, 2, n)
    scores = rng.integers(0, 8, n).astype(np.float32)  # ties
    options = (
        {"stratify": y} if design == "stratified" else {"cluster": np.arange(n) // 3} if design == "clustered" else {}
    )
    compiled = pm.bootstrap((y, scores), pms.average_precision_score, n_resamples=60, rng=3, **options)
    generic = _quiet(
        pm.bootstrap, (y, scores), lambda a, b: pms.average_precision_score(a, b), n_resamples=60, rng=3, **options
    )
    np.testing.assert_allclose(compiled.bootstrap_distribution, generic.bootstrap_distribution, rtol=1e-12, atol=1e-12)
    # labels whose positive class is not 1 keep the generic path (and its error)
    with pytest.raises(ValueError, match="pos_label"):
        pm.bootstrap((y + 5, scores), pms.average_precision_score, n_resamples=5, rng=3)


def test_docstring_examples_run():
    import doctest

    from pairmetrics import _label_ranking, _ranking_curves

    for module in (_ranking_curves, _label_ranking):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__
