"""roc_auc_score against scikit-learn's and the plain-Python reference."""

import warnings

import numpy as np
import pairmetrics as pm
import pytest
from _dtypes import DTYPES
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics import _core
from pairmetrics.reference import roc_auc as ref

metrics = pytest.importorskip("sklearn.metrics")
from _hypothesis_budget import examples
from sklearn.exceptions import UndefinedMetricWarning  # noqa: E402


def _both(*args, **kwargs):
    """(pairmetrics, scikit-learn) results, warnings silenced. When scikit-learn
    raises a ValueError, pairmetrics must too; both are then returned as None.
    Where scikit-learn ends in numpy's ZeroDivisionError (every sample weight
    zero with average="samples"), pairmetrics raises a ValueError instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = metrics.roc_auc_score(*args, **kwargs)
        except (ValueError, ZeroDivisionError):
            with pytest.raises(ValueError):
                pm.sklearn.roc_auc_score(*args, **kwargs)
            return None, None
        return pm.sklearn.roc_auc_score(*args, **kwargs), theirs


def _close(ours, theirs):
    if ours is None and theirs is None:
        return
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float), rtol=1e-12, atol=1e-12)


@st.composite
def binary_problems(draw, max_n=40):
    n = draw(st.integers(2, max_n))
    y = draw(hnp.arrays(np.int8, n, elements=st.integers(0, 1)))
    if y.min() == y.max():
        y[draw(st.integers(0, n - 1))] = 1 - y[0]
    pool = draw(st.sampled_from([2, 3, 5, 0]))
    if pool:
        scores = draw(hnp.arrays(np.float64, n, elements=st.sampled_from([-1.0, 0.0, 0.25, 0.5, 2.0][:pool])))
    else:
        scores = draw(hnp.arrays(np.float64, n, elements=st.floats(-1e3, 1e3, allow_nan=False)))
    weights = None
    if draw(st.booleans()):
        weights = draw(hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25])))
    return y, scores, weights


@settings(max_examples=examples(120), deadline=None)
@given(binary_problems(), st.sampled_from([None, 1.0, 0.5, 0.1, 0.3, 0.999]))
def test_binary_matches_sklearn_and_reference(problem, max_fpr):
    y, scores, weights = problem
    ours, theirs = _both(y, scores, sample_weight=weights, max_fpr=max_fpr)
    if theirs is None:  # both raised: every weight zero, or no negative mass for a partial AUC
        return
    _close(ours, theirs)
    positive = (y == 1).tolist()
    w = None if weights is None else weights.tolist()
    total_pos = sum(1 if w is None else w[i] for i in range(len(y)) if positive[i])
    total_neg = sum(1 if w is None else w[i] for i in range(len(y)) if not positive[i])
    if total_pos > 0 and total_neg > 0:
        if max_fpr is None or max_fpr == 1:
            expected = ref.weighted_auc(positive, scores.tolist(), w)
        else:
            expected = ref.mcclish(ref.partial_auc(positive, scores.tolist(), max_fpr, w), max_fpr)
        assert ours == pytest.approx(expected, rel=1e-12, abs=1e-12)
    else:
        assert np.isnan(ours)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_score_dtype(dtype):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if np.dtype(dtype).kind == "b":
        scores = rng.integers(0, 2, 200).astype(bool)
    elif info is not None:
        scores = rng.integers(max(info.min, -50), min(info.max, 50), 200).astype(dtype)
    else:
        scores = rng.normal(size=200).astype(dtype)
    for kwargs in ({}, {"sample_weight": rng.random(200)}, {"max_fpr": 0.4}):
        _close(*_both(y, scores, **kwargs))


@pytest.mark.parametrize("labels", [([0, 1],), (["no", "yes"],), ([-1, 1],), ([False, True],), ([2.0, 7.0],)])
def test_binary_label_encodings(labels):
    rng = np.random.default_rng(2)
    y = np.asarray(labels[0])[rng.integers(0, 2, 60)]
    scores = rng.integers(0, 6, 60) / 5
    _close(*_both(y, scores))
    _close(*_both(y.reshape(-1, 1), scores.reshape(-1, 1)))


def test_extreme_and_signed_zero_scores():
    y = np.array([0, 1, 0, 1, 0, 1, 1, 0])
    scores = np.array([-0.0, 0.0, np.finfo(float).max, -np.finfo(float).max, 1e-308, -1e-308, 5e-324, 0.0])
    _close(*_both(y, scores))
    ints = np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max, -1, 1, 0, 2, -2], dtype=np.int64)
    _close(*_both(y, ints))
    uints = np.array([np.iinfo(np.uint64).max, 0, 1, 2**63, 2**63 - 1, 0, 3, 3], dtype=np.uint64)
    assert pm.sklearn.roc_auc_score(y, uints) == pytest.approx(
        ref.weighted_auc(y.tolist(), [int(v) for v in uints]), abs=1e-15
    )


@st.composite
def multilabel_problems(draw):
    n = draw(st.integers(2, 25))
    k = draw(st.integers(2, 4))
    y = draw(hnp.arrays(np.int64, (n, k), elements=st.integers(0, 1)))
    scores = draw(hnp.arrays(np.float64, (n, k), elements=st.sampled_from([0.0, 0.1, 0.5, 0.7, 1.0])))
    weights = draw(st.none() | hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 0.5, 1.0, 2.0])))
    return y, scores, weights


@settings(max_examples=examples(60), deadline=None)
@given(
    multilabel_problems(),
    st.sampled_from(["macro", "micro", "weighted", "samples", None]),
    st.sampled_from([None, 0.5]),
)
def test_multilabel_every_average(problem, average, max_fpr):
    y, scores, weights = problem
    _close(*_both(y, scores, average=average, sample_weight=weights, max_fpr=max_fpr))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(6, 40),
    st.integers(3, 5),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.sampled_from(["macro", "weighted", "micro", None]),
)
def test_multiclass_ovr_and_ovo(n, k, seed, weighted, average):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    probs = rng.integers(1, 4, (n, k)).astype(float)
    probs /= probs.sum(axis=1, keepdims=True)
    weights = rng.random(n) if weighted else None
    _close(*_both(y, probs, multi_class="ovr", average=average, sample_weight=weights))
    if average in ("macro", "weighted"):
        _close(*_both(y, probs, multi_class="ovo", average=average))
        # classes named by labels, some absent from y_true
        names = np.array([10, 20, 30, 40, 50, 60][: k + 1])
        wide = np.hstack([probs, np.zeros((n, 1))])
        _close(*_both(names[y], wide, multi_class="ovo", average=average, labels=names))
        _close(*_both(names[y], wide, multi_class="ovr", average=average, labels=names))


def test_one_class_present_warns_and_returns_nan_like_sklearn():
    y, scores = np.zeros(5, int), np.arange(5.0)
    with pytest.warns(UndefinedMetricWarning, match="Only one class"):
        ours = pm.sklearn.roc_auc_score(y, scores)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = metrics.roc_auc_score(y, scores)
    assert np.isnan(ours) and np.isnan(theirs)
    # every positive with zero weight: no positive mass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _both([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], sample_weight=[1, 0, 1, 0])
    assert np.isnan(ours) and np.isnan(theirs)


BAD_INPUTS = [
    ("continuous y_true", ([0.5, 1.5, 0.2], [0.1, 0.2, 0.3]), {}),
    ("length mismatch", ([0, 1, 1], [0.1, 0.2]), {}),
    ("binary with 2-column scores", ([0, 1, 1, 0], [[0.1, 0.9]] * 4), {}),
    ("multiclass without multi_class", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {}),
    ("multiclass 1-D scores", ([0, 1, 2, 1], [0.2, 0.3, 0.5, 0.1]), {"multi_class": "ovr"}),
    ("multiclass not probabilities", ([0, 1, 2, 1], [[0.2, 0.3, 0.6]] * 4), {"multi_class": "ovr"}),
    ("multiclass wrong column count", ([0, 1, 2, 1], [[0.5, 0.5]] * 4), {"multi_class": "ovr"}),
    ("multiclass with max_fpr", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovr", "max_fpr": 0.5}),
    ("ovo with weights", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovo", "sample_weight": [1, 1, 1, 1]}),
    ("ovo micro", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovo", "average": "micro"}),
    ("multiclass samples", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovr", "average": "samples"}),
    ("labels not unique", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovr", "labels": [0, 1, 1]}),
    ("labels not ordered", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovr", "labels": [0, 2, 1]}),
    ("labels missing a class", ([0, 1, 3, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovr", "labels": [0, 1, 2]}),
    ("bad average", ([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4]), {"average": "mean"}),
    ("bad multi_class", ([0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4), {"multi_class": "ovx"}),
    ("max_fpr zero", ([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4]), {"max_fpr": 0.0}),
    ("max_fpr above one", ([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4]), {"max_fpr": 1.5}),
    ("NaN score", ([0, 1, 1, 0], [0.1, np.nan, 0.3, 0.4]), {}),
    ("infinite score", ([0, 1, 1, 0], [0.1, np.inf, 0.3, 0.4]), {}),
    ("NaN y_true", ([0, np.nan, 1, 0], [0.1, 0.2, 0.3, 0.4]), {}),
    ("weights length", ([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4]), {"sample_weight": [1, 2]}),
    ("NaN weight", ([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4]), {"sample_weight": [1, np.nan, 1, 1]}),
    ("multiclass-multioutput", ([[0, 2], [1, 1], [2, 0]], [[0.1, 0.2]] * 3), {}),
    ("empty", ([], []), {}),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_inputs_raise_value_error_like_sklearn(case):
    _, args, kwargs = case
    with pytest.raises(ValueError):
        metrics.roc_auc_score(*args, **kwargs)
    with pytest.raises(ValueError):
        pm.sklearn.roc_auc_score(*args, **kwargs)


def test_ovo_average_none_is_not_implemented_like_sklearn():
    y, probs = [0, 1, 2, 1], [[0.2, 0.3, 0.5]] * 4
    for func in (metrics.roc_auc_score, pm.sklearn.roc_auc_score):
        with pytest.raises(NotImplementedError):
            func(y, probs, multi_class="ovo", average=None)


def test_messages_name_the_argument_and_unknown_keywords_fail():
    with pytest.raises(ValueError, match="y_score"):
        pm.sklearn.roc_auc_score([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="sample_weight"):
        pm.sklearn.roc_auc_score([0, 1], [0.1, 0.2], sample_weight=[1.0])
    with pytest.raises(ValueError, match="max_fpr"):
        pm.sklearn.roc_auc_score([0, 1], [0.1, 0.2], max_fpr=2)
    with pytest.raises(ValueError, match="average"):
        pm.sklearn.roc_auc_score([0, 1], [0.1, 0.2], average="all")
    with pytest.raises(TypeError, match="pos_label"):
        pm.sklearn.roc_auc_score([0, 1], [0.1, 0.2], pos_label=1)
    with pytest.raises(ValueError, match="y_true"):
        pm.sklearn.roc_auc_score([[0, 1, 2], [1, 1, 1]], [[0.1, 0.2, 0.3]] * 2)


def test_multilabel_shape_mismatch_is_an_error():
    y = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    with pytest.raises(ValueError, match="shape"):
        pm.sklearn.roc_auc_score(y, np.ones((3, 2)))


@pytest.mark.parametrize("shape", ["uniform", "clustered", "few_values"])
def test_large_input_sorted_in_buckets(shape):
    """Sizes that exercise every radix pass, skipped passes (clustered keys) and threads."""
    rng = np.random.default_rng(7)
    n = 300_000
    y = rng.random(n) < 0.4
    if shape == "uniform":
        scores = rng.random(n) + 0.2 * y
    elif shape == "clustered":  # most keys share their top bits: large buckets
        scores = np.where(rng.random(n) < 0.9, 1.0 + rng.random(n) * 1e-9, rng.normal(size=n)) + 1e-10 * y
    else:
        scores = rng.integers(0, 7, n) + y
    weights = rng.random(n)
    _close(*_both(y, scores))
    _close(*_both(y, scores, sample_weight=weights))
    _close(*_both(y, scores, max_fpr=0.2))
    positive = y.view(np.uint8)
    single = _core.roc_auc(scores, positive, None, 1.0, 1)
    assert _core.roc_auc(scores, positive, None, 1.0, 2) == single


def test_strided_columns_are_read_in_place():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, (100, 3))
    scores = np.asfortranarray(rng.random((100, 3)))
    _close(*_both(y, scores, average=None))
    _close(*_both(y[:, 1], scores[::1, 1]))
    _close(*_both(y[::2, 0], rng.random(200)[::4]))


# --------------------------------------------------------------------------- drop-in fidelity regressions


def test_float16_probabilities_summing_to_one_in_float16_are_accepted():
    # Each row sums to exactly 1 in float16 but not in float32: scikit-learn checks the sum in the
    # input dtype, so must we (the kernel reads float16 as float32).
    probs = np.array(
        [[0.2028, 0.5806, 0.2169], [0.1998, 0.404, 0.396], [0.4697, 0.3506, 0.1794], [0.2028, 0.5806, 0.2169]],
        dtype=np.float16,
    )
    assert (probs.sum(axis=1) == 1).all() and not np.allclose(1, probs.astype(np.float32).sum(axis=1))
    y = [0, 1, 2, 1]
    for multi_class in ("ovr", "ovo"):
        ours, theirs = _both(y, probs, multi_class=multi_class)
        assert theirs is not None
        _close(ours, theirs)
    ours, theirs = _both(y, probs.astype(np.float32), multi_class="ovr")
    assert ours is None and theirs is None  # the same values in float32 do not sum to one: both refuse
    # in a DataFrame or a list of numpy float16 scalars: the same dtype, the same answer (refused before)
    pd = pytest.importorskip("pandas")
    for container in (pd.DataFrame(probs), [list(row) for row in probs]):
        ours, theirs = _both(y, container, multi_class="ovr")
        assert theirs is not None
        _close(ours, theirs)
    ours, theirs = _both(y, probs.tolist(), multi_class="ovr")  # Python floats: float64 sums, both refuse
    assert ours is None and theirs is None


def test_negative_sample_weight_is_refused():
    y, scores, weights = [1, 1, 0, 0], [0.75, 0.54, 0.33, 0.79], [-1.0, 1.0, -1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            metrics.roc_auc_score(y, scores, sample_weight=weights)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        pm.sklearn.roc_auc_score(y, scores, sample_weight=weights)
    # deliberate difference: scikit-learn returns numbers for other negative weights; we refuse them all
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        pm.sklearn.roc_auc_score([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], sample_weight=[1, 2, 1, -0.5])
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        pm.sklearn.roc_auc_score([[0, 1], [1, 0], [1, 1], [0, 0]], np.ones((4, 2)), sample_weight=[1, 1, -1, 1])
    # the micro average repeats each weight per label; the error still names the caller's row
    with pytest.raises(ValueError, match=r"got -1\.0 \(first at index 2\)"):
        pm.sklearn.roc_auc_score(
            [[0, 1], [1, 0], [1, 1], [0, 0]], np.ones((4, 2)), average="micro", sample_weight=[1, 1, -1, 1]
        )
    with pytest.raises(ValueError, match=r"first at flat index 1, 1 non-finite in all"):
        pm.sklearn.roc_auc_score([[0, 1], [1, 0]], np.ones((2, 2)), average="micro", sample_weight=[1.0, np.nan])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_weights_are_not_checked_when_one_class_is_present(bad):
    y, scores, weights = [1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4], [1.0, bad, 1.0, 1.0]
    with pytest.warns(UndefinedMetricWarning, match="Only one class"):
        theirs = metrics.roc_auc_score(y, scores, sample_weight=weights)
    with pytest.warns(UndefinedMetricWarning, match="Only one class"):
        ours = pm.sklearn.roc_auc_score(y, scores, sample_weight=weights)
    assert np.isnan(ours) and np.isnan(theirs)
    # with two classes both refuse a NaN weight
    ours, theirs = _both([0, 1, 0, 1], scores, sample_weight=[1.0, np.nan, 1.0, 1.0])
    assert ours is None and theirs is None


def test_multilabel_minus_one_weighted_average_differs_deliberately():
    # scikit-learn weighs each label by the sum of its -1/1 entries (n_pos - n_neg): here 1 and -1,
    # whose sum is 0, so it returns 0. We weigh labels by their positives, as for 0/1 input.
    y = np.array([[1, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]])
    scores = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.1, 0.2], [0.5, 0.4]])
    assert metrics.roc_auc_score(y, scores, average="weighted") == 0
    zero_one = (y == 1).astype(int)
    _close(
        pm.sklearn.roc_auc_score(y, scores, average="weighted"),
        metrics.roc_auc_score(zero_one, scores, average="weighted"),
    )
    _close(pm.sklearn.roc_auc_score(y, scores, average=None), metrics.roc_auc_score(y, scores, average=None))


# --------------------------------------------------------------------------- scikit-learn's own tests

# Every test function of sklearn/metrics/tests/test_ranking.py that calls roc_auc_score.
SKLEARN_SUITE_TESTS = (
    "test_roc_curve",
    "test_roc_curve_toydata",
    "test_multiclass_ovo_roc_auc_toydata",
    "test_multiclass_ovo_roc_auc_toydata_binary",
    "test_multiclass_ovr_roc_auc_toydata",
    "test_perfect_imperfect_chance_multiclass_roc_auc",
    "test_micro_averaged_ovr_roc_auc",
    "test_roc_auc_score_multiclass_labels_error",
    "test_roc_auc_score_multiclass_error",
    "test_auc_score_non_binary_class",
    "test_multiclass_ranking_metrics_raise_for_incorrect_shape_of_y_score",
    "test_score_scale_invariance",
    "test_partial_roc_auc_score",
    "test_metric_at_thresholds",
)


def test_sklearn_own_roc_auc_tests_on_pairmetrics(tmp_path):
    """scikit-learn's test_ranking.py (shipped in its wheel) with roc_auc_score replaced by ours."""
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
    # confcutdir: scikit-learn's own conftest.py (its fixtures, such as global_random_seed) is loaded
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "_sklearn_suite_plugin",
        "--import-mode=append",  # the pairmetrics on PYTHONPATH, not one installed beside scikit-learn
        "--confcutdir",
        os.path.dirname(sklearn.__file__),
        *[f"{module}::{name}" for name in SKLEARN_SUITE_TESTS],
    ]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tally = json.loads(report.read_text())
    ran = {name.split("::")[-1].split("[")[0] for name in tally}
    assert ran == set(SKLEARN_SUITE_TESTS), set(SKLEARN_SUITE_TESTS) - ran  # renamed upstream: update the list
    assert all(entry["outcome"] in ("passed", "xfailed") for entry in tally.values())
    # every selected test function called ours (not a silently kept original) in at least one of its cases
    called = {name.split("::")[-1].split("[")[0] for name, entry in tally.items() if entry["calls"]}
    assert called == set(SKLEARN_SUITE_TESTS), set(SKLEARN_SUITE_TESTS) - called
    print(
        f"\nscikit-learn's ROC AUC tests on pairmetrics: {len(tally)} run, "
        f"{sum(e['outcome'] == 'xfailed' for e in tally.values())} deliberate differences"
    )
