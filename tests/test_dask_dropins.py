"""The scikit-learn, lifelines and scikit-survival drop-ins on Dask collections give the in-memory answers."""

import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

# One worker runs this file: its module fixture is expensive (xdist's loadgroup, set in pyproject.toml).
pytestmark = pytest.mark.xdist_group("dask")

import dask.array as da  # noqa: E402
import pairmetrics as pm  # noqa: E402
import pairmetrics.dask.matching  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pairmetrics.dask import paired as dask_paired  # noqa: E402
from test_dask import client, scheduler  # noqa: E402,F401  (the cluster; synchronous unless asked for)

SETTINGS = dict(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@st.composite
def chunkings(draw, n):
    """Row chunks summing to n: chunks of one, one chunk, or uneven cuts with empty chunks."""
    kind = draw(st.sampled_from(["single", "whole", "uneven"]))
    if kind == "single" and n <= 30:
        return (1,) * n
    if kind == "whole":
        return (n,)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))  # repeated cuts: empty chunks
    edges = [0, *cuts, n]
    return tuple(b - a for a, b in zip(edges, edges[1:]))


def _lazy(x, chunks):
    return None if x is None else da.from_array(x, chunks=(chunks,) + tuple((s,) for s in x.shape[1:]))


def _outcome(function, *args, **kwargs):
    """(result or exception text, warning messages) of one call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = function(*args, **kwargs)
        except (ValueError, ZeroDivisionError, NotImplementedError) as exc:
            result = f"{type(exc).__name__}: {exc}"
    return result, sorted({str(w.message) for w in caught})


def _assert_same(got, expected):
    assert got[1] == expected[1]
    if isinstance(expected[0], str) or isinstance(got[0], str):
        assert got[0] == expected[0]
    elif isinstance(expected[0], tuple):
        assert got[0][1:] == expected[0][1:]
        np.testing.assert_allclose(got[0][0], expected[0][0], rtol=1e-12, equal_nan=True)
    else:
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-14, equal_nan=True)


@pytest.fixture
def few_per_partition(monkeypatch):
    """Partitions of a few samples: many partitions, many pairs of them."""
    monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", 3)


# --------------------------------------------------------------------------- ROC AUC


@st.composite
def binary_problems(draw):
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = (rng.random(n) < draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))).astype(np.int64)
    if draw(st.booleans()):
        y = np.where(y == 1, 7, -2)  # any two labels: the larger is positive
    levels = draw(st.sampled_from([2, 5, 1000]))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int32]))
    scores = (rng.integers(0, levels, n) * (1 if dtype == np.int32 else 1 / levels)).astype(dtype)
    weights = None
    if draw(st.booleans()):
        weights = rng.choice([0.0, 0.5, 1.0, 3.25], n)
    return y, scores, weights, draw(chunkings(n))


@settings(**SETTINGS)
@given(problem=binary_problems(), max_fpr=st.sampled_from([None, 1.0, 0.5, 0.1, 0.999]))
def test_binary_roc_auc_equals_in_memory(few_per_partition, problem, max_fpr):
    y, scores, weights, chunks = problem
    expected = _outcome(pm.sklearn.roc_auc_score, y, scores, sample_weight=weights, max_fpr=max_fpr)
    got = _outcome(
        pm.sklearn.roc_auc_score,
        _lazy(y, chunks),
        _lazy(scores, chunks),
        sample_weight=_lazy(weights, chunks),
        max_fpr=max_fpr,
    )
    _assert_same(got, expected)


@settings(**SETTINGS)
@given(problem=binary_problems(), pos_label=st.sampled_from([1, 7]))
def test_binary_average_precision_equals_in_memory(few_per_partition, problem, pos_label):
    from pairmetrics.sklearn import average_precision_score

    y, scores, weights, chunks = problem
    expected = _outcome(average_precision_score, y, scores, sample_weight=weights, pos_label=pos_label)
    got = _outcome(
        average_precision_score,
        _lazy(y, chunks),
        _lazy(scores, chunks),
        sample_weight=_lazy(weights, chunks),
        pos_label=pos_label,
    )
    _assert_same(got, expected)


@settings(**SETTINGS)
@given(
    problem=binary_problems(),
    pos_label=st.sampled_from([None, 7]),
    drop=st.booleans(),
    name=st.sampled_from(["roc_curve", "precision_recall_curve", "det_curve"]),
)
def test_curves_equal_in_memory(few_per_partition, problem, pos_label, drop, name):
    import pairmetrics.sklearn as pms

    y, scores, weights, chunks = problem
    curve = getattr(pms, name)
    options = {"pos_label": pos_label, "sample_weight": weights, "drop_intermediate": drop}
    expected = _outcome(curve, y, scores, **options)
    options["sample_weight"] = _lazy(weights, chunks)
    got = _outcome(curve, _lazy(y, chunks), _lazy(scores, chunks), **options)
    assert got[1] == expected[1]
    if isinstance(expected[0], str) or isinstance(got[0], str):
        assert got[0] == expected[0]
    else:
        for a, b in zip(got[0], expected[0]):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, equal_nan=True)


def test_average_precision_on_dask_refuses_multilabel_and_groups():
    from pairmetrics.sklearn import average_precision_score

    y = da.from_array(np.eye(4, dtype=np.int64), chunks=2)
    with pytest.raises(TypeError, match="binary y_true only"):
        average_precision_score(y, da.from_array(np.eye(4), chunks=2))
    with pytest.raises(TypeError, match="groups"):
        average_precision_score(da.from_array(np.array([0, 1])), da.from_array(np.array([0.1, 0.2])), groups=[1, 2])


@st.composite
def label_problems(draw):
    n = draw(st.integers(2, 40))
    k = draw(st.integers(2, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    multilabel = draw(st.booleans())
    if multilabel:
        y = (rng.random((n, k)) < 0.4).astype(np.int64)
        scores = rng.choice([0.0, 0.1, 0.5, 0.7, 1.0], (n, k))
    else:
        y = rng.integers(0, k, n)
        scores = rng.random((n, k))
        scores /= scores.sum(axis=1, keepdims=True)
    weights = rng.choice([0.0, 0.5, 1.0, 2.0], n) if draw(st.booleans()) else None
    return multilabel, y, scores, weights, draw(chunkings(n))


@settings(**SETTINGS)
@given(
    problem=label_problems(),
    average=st.sampled_from(["macro", "micro", "weighted", "samples", None]),
    multi_class=st.sampled_from(["ovr", "ovo"]),
    max_fpr=st.sampled_from([None, 0.5]),
)
def test_multilabel_and_multiclass_roc_auc_equal_in_memory(few_per_partition, problem, average, multi_class, max_fpr):
    multilabel, y, scores, weights, chunks = problem
    options = dict(average=average, multi_class=multi_class, max_fpr=max_fpr if multilabel else None)
    expected = _outcome(pm.sklearn.roc_auc_score, y, scores, sample_weight=weights, **options)
    got = _outcome(
        pm.sklearn.roc_auc_score,
        _lazy(y, chunks),
        _lazy(scores, chunks),
        sample_weight=_lazy(weights, chunks),
        **options,
    )
    _assert_same(got, expected)


def test_roc_auc_on_dataframe_columns_of_unknown_length(client):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"y": rng.integers(0, 2, 5000), "s": np.round(rng.random(5000), 3), "w": rng.random(5000)})
    lazy = dd.from_pandas(frame, npartitions=7)
    lazy = lazy[lazy.s >= 0]  # a filter: partition lengths unknown
    expected = pm.sklearn.roc_auc_score(frame.y, frame.s, sample_weight=frame.w, max_fpr=0.2)
    assert pm.sklearn.roc_auc_score(lazy.y, lazy.s, sample_weight=lazy.w, max_fpr=0.2) == pytest.approx(
        expected, rel=1e-12
    )


def test_roc_auc_errors_match_in_memory(client):
    y, s = np.array([0, 1, 1, 0, 1]), np.array([0.1, 0.2, np.nan, 0.4, 0.5])
    for args in [(y, s), (y, np.zeros(4)), (y.astype(float) / 2, np.zeros(5)), (np.arange(5), np.zeros(5))]:
        expected = _outcome(pm.sklearn.roc_auc_score, *args)
        got = _outcome(pm.sklearn.roc_auc_score, *[da.from_array(a, chunks=2) for a in args])
        assert isinstance(expected[0], str) and got == expected
    with pytest.raises(ValueError, match="max_fpr"):
        pm.sklearn.roc_auc_score(da.from_array(y, chunks=2), np.zeros(5), max_fpr=2)
    # a negative weight: the same error, with the global index of the first one
    scores, weights = np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([1.0, 1.0, 1.0, -2.0, -3.0])
    expected = _outcome(pm.sklearn.roc_auc_score, y, scores, sample_weight=weights)
    got = _outcome(
        pm.sklearn.roc_auc_score,
        *(da.from_array(a, chunks=2) for a in (y, scores)),
        sample_weight=da.from_array(weights, chunks=2),
    )
    assert "first at index 3" in expected[0] and got == expected
    with pytest.raises(TypeError, match="unexpected keyword"):
        pm.sklearn.roc_auc_score(da.from_array(y, chunks=2), np.zeros(5), sample_weights=None)


@pytest.mark.parametrize("average", ["samples", "micro", "weighted"])
def test_one_row_with_empty_chunks_equals_in_memory(client, average):
    """Regression: dask broadcasts an elementwise operation on one row into every empty chunk of it (the
    comparison with a label had three rows here, and the averages failed); rows are aligned without them."""

    def one_row(x):
        return da.from_array(x, chunks=((0, 1, 0),) + tuple((n,) for n in x.shape[1:]))

    y, scores, weights = np.array([[1, 0, 1]]), np.array([[0.8, 0.2, 0.5]]), np.array([2.0])
    expected = _outcome(pm.sklearn.roc_auc_score, y, scores, average=average, sample_weight=weights)
    got = _outcome(
        pm.sklearn.roc_auc_score, one_row(y), one_row(scores), average=average, sample_weight=one_row(weights)
    )
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got_part, expected_part in zip(
            pm.sklearn.roc_curve(one_row(y[:, 0]), one_row(scores[:, 0]), sample_weight=one_row(weights)),
            pm.sklearn.roc_curve(y[:, 0], scores[:, 0], sample_weight=weights),
        ):
            np.testing.assert_array_equal(got_part, expected_part)


@pytest.mark.parametrize("bad", [-2.0, np.nan, np.inf])
def test_roc_auc_checks_weights_where_in_memory_does(client, bad):
    """Weights are checked only once a score is defined (scikit-learn's order): with one class present
    a bad weight gives NaN and a warning, on Dask as in memory; elsewhere the same error, or none."""
    weights = np.array([1.0, 1.0, 1.0, bad, 1.0])
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    labels = np.array([[0, 1], [0, 1], [0, 0], [0, 1], [0, 0]])  # the first label has one class only
    probabilities = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5], [0.3, 0.7], [0.9, 0.1]])
    cases = [(np.ones(5, dtype=np.int64), scores, {}), (np.array([0, 1, 1, 0, 1]), scores, {})]
    cases += [(labels, probabilities, {"average": average}) for average in (None, "micro", "samples", "weighted")]
    # class 0 absent: its one-vs-rest AUC is undefined (a warning) before class 1's checks the weights
    cases += [
        (np.array([1, 2, 2, 1, 1]), np.c_[np.zeros(5), probabilities], {"multi_class": "ovr", "labels": [0, 1, 2]})
    ]
    for y, s, options in cases:
        expected = _outcome(pm.sklearn.roc_auc_score, y, s, sample_weight=weights, **options)
        got = _outcome(
            pm.sklearn.roc_auc_score,
            _lazy(y, (2, 2, 1)),
            _lazy(s, (2, 2, 1)),
            sample_weight=_lazy(weights, (2, 2, 1)),
            **options,
        )
        _assert_same(got, expected)
    one_class = _outcome(
        pm.sklearn.roc_auc_score,
        _lazy(np.ones(5, dtype=np.int64), (5,)),
        _lazy(scores, (5,)),
        sample_weight=_lazy(weights, (5,)),
    )
    assert np.isnan(one_class[0]) and one_class[1] == [
        "Only one class is present in y_true. ROC AUC score is not defined in that case."
    ]


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e-160, 1e155, 1e200, 1e300, 2.0**-990, 2.0**1000])
def test_roc_auc_weights_of_any_scale_equal_in_memory(few_per_partition, scale):
    # The partitions' weight totals were multiplied together: NaN from about 1e155, ZeroDivisionError
    # below about 1e-162 and a 3e-6 error at 1e-160.
    rng = np.random.default_rng(5)
    n = 120
    y, s, w = rng.integers(0, 2, n), np.round(rng.normal(size=n), 1), rng.random(n) + 0.1
    y[:2] = [0, 1]
    chunks = (40, 50, 30)
    for max_fpr in (None, 0.3):
        want = pm.sklearn.roc_auc_score(y, s, sample_weight=w * scale, max_fpr=max_fpr)
        got = pm.sklearn.roc_auc_score(
            _lazy(y, chunks), _lazy(s, chunks), sample_weight=_lazy(w * scale, chunks), max_fpr=max_fpr
        )
        unscaled = pm.sklearn.roc_auc_score(
            _lazy(y, chunks), _lazy(s, chunks), sample_weight=_lazy(w, chunks), max_fpr=max_fpr
        )
        assert got == pytest.approx(want, rel=1e-12) and np.isfinite(got)
        if np.frexp(scale)[0] == 0.5:  # a power of two: the shares of the totals are exactly the same
            assert got == unscaled
    labels = (rng.random((n, 4)) < 0.4).astype(np.int64)
    labels[:, 0], labels[:, 1] = 1 - labels[:, 3], labels[:, 3]  # both classes in every row and column
    scores = np.round(rng.random((n, 4)), 1)
    for average in ("macro", "micro", "weighted", "samples"):
        want = pm.sklearn.roc_auc_score(labels, scores, sample_weight=w * scale, average=average)
        got = pm.sklearn.roc_auc_score(
            _lazy(labels, chunks), _lazy(scores, chunks), sample_weight=_lazy(w * scale, chunks), average=average
        )
        assert got == pytest.approx(want, rel=1e-12), average


# --------------------------------------------------------------------------- concordance


@st.composite
def survival_problems(draw):
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    times = rng.integers(0, draw(st.sampled_from([3, 20, 10**6])), n).astype(
        draw(st.sampled_from([np.float64, np.int64]))
    )
    events = rng.random(n) < draw(st.sampled_from([0.0, 0.5, 1.0]))
    scores = np.round(rng.random(n), draw(st.sampled_from([1, 2, 6]))) * draw(st.sampled_from([1.0, 1e9]))
    return times, events, scores, draw(chunkings(n))


@settings(**SETTINGS)
@given(problem=survival_problems(), pass_events=st.booleans())
def test_concordance_index_equals_in_memory(few_per_partition, problem, pass_events):
    times, events, scores, chunks = problem
    events = events.astype(np.int64) if pass_events else None
    expected = _outcome(pm.lifelines.concordance_index, times, scores, events)
    got = _outcome(pm.lifelines.concordance_index, _lazy(times, chunks), _lazy(scores, chunks), _lazy(events, chunks))
    _assert_same(got, expected)


@settings(**SETTINGS)
@given(problem=survival_problems(), tied_tol=st.sampled_from([0.0, 1e-8, 0.05, 1e3]))
def test_concordance_index_censored_equals_in_memory(few_per_partition, problem, tied_tol):
    times, events, scores, chunks = problem
    expected = _outcome(pm.sksurv.concordance_index_censored, events, times, scores, tied_tol)
    got = _outcome(
        pm.sksurv.concordance_index_censored,
        _lazy(events, chunks),
        _lazy(times, chunks),
        _lazy(scores, chunks),
        tied_tol,
    )
    _assert_same(got, expected)


def test_concordance_tolerance_is_evaluated_in_double_precision(client, few_per_partition):
    # differences of exactly the tolerance, and ones that round onto it
    scores = np.array([0.1, 0.2, 0.3, 0.30000000000000004, 1e9, 1e9 + 0.1, 0.7, 0.8])
    times = np.arange(8.0)
    events = np.ones(8, bool)
    for tol in (0.1, 0.2, 0.1 + 1e-17):
        expected = pm.sksurv.concordance_index_censored(events, times, scores, tol)
        assert (
            pm.sksurv.concordance_index_censored(
                da.from_array(events, chunks=3), da.from_array(times, chunks=3), da.from_array(scores, chunks=3), tol
            )
            == expected
        )


def test_concordance_infinite_values_and_dataframes(client):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "t": rng.integers(0, 50, 3000).astype(float),
            "e": rng.integers(0, 2, 3000),
            "s": np.round(rng.random(3000), 2),
        }
    )
    frame.loc[::97, "t"] = np.inf
    frame.loc[::89, "s"] = -np.inf
    lazy = dd.from_pandas(frame, npartitions=5)
    lazy = lazy[lazy.t >= 0]
    assert pm.lifelines.concordance_index(lazy.t, lazy.s, lazy.e) == pm.lifelines.concordance_index(
        frame.t, frame.s, frame.e
    )
    finite = frame[np.isfinite(frame.t) & np.isfinite(frame.s)]
    lazy = dd.from_pandas(finite, npartitions=4)
    events = lazy.e.astype(bool)
    assert pm.sksurv.concordance_index_censored(events, lazy.t, lazy.s) == pm.sksurv.concordance_index_censored(
        finite.e.astype(bool), finite.t, finite.s
    )


def test_concordance_errors_match_in_memory(client):
    t, s = np.array([1.0, 2.0, np.nan, 4.0]), np.array([0.1, 0.2, 0.3, 0.4])
    e = np.array([True, False, True, True])
    cases = [
        (pm.lifelines.concordance_index, (t, s)),
        (pm.lifelines.concordance_index, (s, s, np.array([1.0, np.nan, 0.0, 1.0]))),
        (pm.lifelines.concordance_index, (s, s[:3])),
        (pm.lifelines.concordance_index, (np.ones(4), s, np.ones(4))),
        (pm.sksurv.concordance_index_censored, (e, t, s)),
        (pm.sksurv.concordance_index_censored, (e.astype(int), s, s)),
        (pm.sksurv.concordance_index_censored, (np.zeros(4, bool), s, s)),
        (pm.sksurv.concordance_index_censored, (e[:1], s[:1], s[:1])),
        (pm.sksurv.concordance_index_censored, (np.array([False, False, False, True]), s, s)),
        (pm.sksurv.concordance_index_censored, (e, np.array([1, 2, 2**60, 3]), s)),
    ]
    for function, args in cases:
        expected = _outcome(function, *args)
        got = _outcome(function, *[da.from_array(a, chunks=2) for a in args])
        assert isinstance(expected[0], str) and got == expected, (function.__name__, args)


# --------------------------------------------------------------------------- gathered point sets


def test_matching_and_crossmatch_gather_within_the_limit(client, monkeypatch):
    rng = np.random.default_rng(2)
    x, y = rng.random((40, 3)), rng.random((30, 3)) + 0.3
    lazy_x, lazy_y = da.from_array(x, chunks=7), da.from_array(y, chunks=11)
    assert pm.crossmatch_test(lazy_x, lazy_y, rng=0) == pm.crossmatch_test(x, y, rng=0)
    assert pm.crossmatch_test(lazy_x, lazy_y, metric="minkowski", p=3, rng=0) == pm.crossmatch_test(
        x, y, metric="minkowski", p=3, rng=0
    )
    assert pm.min_weight_perfect_matching(points=lazy_x).cost == pm.min_weight_perfect_matching(points=x).cost
    np.testing.assert_array_equal(pm.rank_mahalanobis(lazy_x), pm.rank_mahalanobis(x))
    D = pm.rank_mahalanobis(np.vstack([x, y]))
    z = np.repeat([0, 1], [40, 30])
    lazy = pm.crossmatch_test(D=da.from_array(D, chunks=20), labels=da.from_array(z, chunks=9), rng=1)
    assert lazy == pm.crossmatch_test(D=D, labels=z, rng=1)
    monkeypatch.setattr(pairmetrics.dask.matching, "MAX_GATHER_BYTES", x.nbytes - 1)
    with pytest.raises(ValueError, match="MAX_GATHER_BYTES"):
        pm.crossmatch_test(lazy_x, y)


def test_drop_ins_bring_only_summaries_to_the_client(monkeypatch):
    """Everything the drop-ins compute to the client is a small fraction of the data."""
    import pickle

    from pairmetrics.dask import _helpers, roc_auc, survival

    received = []
    for module in (roc_auc, survival):

        def counting(*values, compute=module.compute, **kwargs):
            results = compute(*values, **kwargs)
            received.append(len(pickle.dumps(results)))
            return results

        monkeypatch.setattr(module, "compute", counting)
    monkeypatch.setattr(_helpers, "cluster_threads", lambda: 2)  # 2 partitions: 4000 samples
    n = 400_000
    rng = da.random.default_rng(4)
    scores, times = rng.random(n, chunks=50_000), rng.integers(0, 1000, n, chunks=50_000)
    labels, weights = rng.random(n, chunks=50_000) < 0.3, rng.random(n, chunks=50_000)
    with dask.config.set(scheduler="threads"):
        assert 0.45 < pm.sklearn.roc_auc_score(labels, scores, sample_weight=weights, max_fpr=0.5) < 0.55
        assert 0.45 < pm.sksurv.concordance_index_censored(labels, times, scores)[0] < 0.55
    assert 0 < sum(received) < 0.05 * 8 * n
