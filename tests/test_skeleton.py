"""Every layer of a capability runs its one skeleton: the same plan and finish, only the counter differs."""

from __future__ import annotations

import numpy as np
import pairmetrics
import pytest
from pairmetrics import (
    _best_constant,
    _compare_models,
    _crossmatch,
    _mann_whitney,
    _measures,
    _multilabel,
    _paired,
    _ranking_curves,
    _roc_auc,
    _routing,
    _survival,
    _two_vs_two,
)
from pairmetrics._skeleton import SKELETONS, LayerEqual, Skeleton, same_values


def _survival_data():
    rng = np.random.default_rng(3)
    time = rng.integers(0, 20, 60).astype(float)
    event = rng.random(60) < 0.6
    score = rng.integers(0, 8, 60).astype(float)
    return time, event, score


def _lifelines_call(as_array):
    time, event, score = _survival_data()
    return pairmetrics.lifelines.concordance_index(as_array(time), as_array(score), as_array(event.astype(float)))


def _sksurv_call(as_array):
    time, event, score = _survival_data()
    return pairmetrics.sksurv.concordance_index_censored(as_array(event), as_array(time), as_array(score))


def _binary_auc_data():
    rng = np.random.default_rng(5)
    y = rng.random(60) < 0.4
    score = rng.integers(0, 8, 60).astype(float)
    return y, score


def _roc_auc_call(as_array):
    y, score = _binary_auc_data()
    return pairmetrics.sklearn.roc_auc_score(as_array(y), as_array(score))


def _curve_call(name):
    def call(as_array):
        y, score = _binary_auc_data()
        weight = (np.arange(60) % 4).astype(float)  # whole weights: sums exact in any order
        return getattr(pairmetrics.sklearn, name)(as_array(y), as_array(score / 8), sample_weight=as_array(weight))

    call.__name__ = f"_{name}_call"
    return call


def _average_precision_call(as_array):
    # weights for which Dask's sums over partitions come out bit-identical to the in-memory kernel's
    y, score = _binary_auc_data()
    weight = (np.arange(60) % 2).astype(float) + 1
    return pairmetrics.sklearn.average_precision_score(as_array(y), as_array(score), sample_weight=as_array(weight))


def _multilabel_call(as_array):
    rng = np.random.default_rng(7)
    y_true, y_pred = rng.random((60, 5)) < 0.3, (rng.random((60, 5)) < 0.4).astype(np.int8)
    return pairmetrics.multilabel_counts(as_array(y_true), as_array(y_pred), false_neg=2.0)


def _paired_data():
    rng = np.random.default_rng(5)
    return rng.integers(0, 4, 50), rng.integers(0, 10, 50).astype(float)


def _paired_evaluation_call(as_array):
    labels, scores = _paired_data()
    return pairmetrics.paired_evaluation(as_array(labels), as_array(scores), variance=False)


def _paired_eval_call(as_array):
    labels, scores = _paired_data()
    return pairmetrics.pairedeval.paired_eval(as_array(scores), as_array(labels))


def _compare_models_call(as_array):
    labels, scores = _paired_data()
    models = np.stack([scores, np.roll(scores, 3)])
    result = pairmetrics.compare_models(as_array(labels), as_array(models))
    return (result.auc, result.covariance, result.statistic, result.pvalue)


def _measures_data():
    rng = np.random.default_rng(5)
    y = (rng.random((60, 2)) < 0.4).astype(np.float64)
    p = np.clip(rng.random((60, 2)), 0.05, 0.95)
    return y, p


def _measure_call(name, **options):
    def call(as_array):
        y, p = _measures_data()
        return (np.asarray(getattr(pairmetrics, name)(as_array(y), as_array(p), **options)),)

    return call


def _likelihood_call(as_array):
    y, p = _measures_data()
    result = pairmetrics.likelihood(as_array(y), as_array(p), per_target=True)
    return (result.value, result.log)


def _best_constant_call(loss):
    def call(as_array):
        y, _ = _measures_data()
        result = pairmetrics.best_constant(as_array(y), loss)
        return (result.value, result.error)

    return call


def _two_vs_two_data():
    rng = np.random.default_rng(6)
    y = rng.normal(size=(40, 3))
    return y, y + rng.normal(size=y.shape)


def _two_vs_two_call(as_array):
    y, p = _two_vs_two_data()
    result = pairmetrics.two_vs_two(as_array(y), as_array(p), pairs="distinct_targets")
    return (result.n_passed, result.n_total, result.sample_accuracy)


def _two_vs_two_permutation_call(as_array):
    y, p = _two_vs_two_data()
    result = pairmetrics.two_vs_two_permutation_test(as_array(y), as_array(p), n_resamples=9, rng=1, pairs=200)
    return (result.statistic, result.pvalue, result.null_distribution)


def _crossmatch_resample_call(as_array):
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(40, 2)), rng.normal(0.5, size=(30, 2))
    result = pairmetrics.crossmatch_resample(as_array(x), as_array(y), sample_size=10, n_resamples=5, rng=2)
    return (result.statistics, result.pvalues)


def _roc_auc_average_call(average, weighted=False):
    def call(as_array):
        rng = np.random.default_rng(8)
        y = (rng.random((60, 3)) < 0.4).astype(np.int64)
        score = np.round(rng.random((60, 3)), 1)
        weight = as_array(rng.random(60)) if weighted else None
        return (
            np.asarray(
                pairmetrics.sklearn.roc_auc_score(as_array(y), as_array(score), average=average, sample_weight=weight)
            ),
        )

    return call


def _multiclass_call(multi_class, average):
    def call(as_array):
        rng = np.random.default_rng(9)
        y = rng.integers(0, 3, 60)
        score = rng.random((60, 3))
        score /= score.sum(axis=1, keepdims=True)
        auc = pairmetrics.sklearn.roc_auc_score(as_array(y), as_array(score), multi_class=multi_class, average=average)
        return (np.asarray(auc),)

    return call


# Served on Dask by gathering: the exact matching needs every point in one process, so the Dask layer computes
# the arguments (within a size limit) and calls the in-memory function itself; one code path plans, counts and
# finishes on both, and there is no layer of its own to keep in step.
GATHERED: list[str] = [
    "_crossmatch.crossmatch_test",
    "_crossmatch_multi.multi_crossmatch_test",
    "_matching.min_weight_perfect_matching",
    "_distances.rank_mahalanobis",
]
# Served on Dask but still planned and finished by each layer on its own (from shared seams).
# (average_precision_score's label averages exist in memory only.)
NOT_YET_SKELETONS: list[str] = []


def _mannwhitneyu_call(as_array):
    rng = np.random.default_rng(4)
    x, y = np.round(rng.normal(size=50), 1), np.round(rng.normal(0.3, size=40), 1)
    return tuple(pairmetrics.scipy.mannwhitneyu(as_array(x), as_array(y)))


# (public function, its skeleton, a call taking an array converter[, the results' rtol when not exact])
CASES = [
    (_mann_whitney.mannwhitneyu, _mann_whitney.MANN_WHITNEY, _mannwhitneyu_call),
    (_survival.concordance_index, _survival.LIFELINES, _lifelines_call),
    (_survival.concordance_index_censored, _survival.SKSURV, _sksurv_call),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC, _roc_auc_call),
    (_multilabel.multilabel_counts, _multilabel.MULTILABEL_COUNTS, _multilabel_call),
    (_ranking_curves.roc_curve, _ranking_curves.ROC_CURVE, _curve_call("roc_curve")),
    (
        _ranking_curves.precision_recall_curve,
        _ranking_curves.PRECISION_RECALL_CURVE,
        _curve_call("precision_recall_curve"),
    ),
    (_ranking_curves.det_curve, _ranking_curves.DET_CURVE, _curve_call("det_curve")),
    (
        _ranking_curves.average_precision_score,
        _ranking_curves.AVERAGE_PRECISION,
        _average_precision_call,
    ),
    (_paired.paired_evaluation, _paired.PAIRED, _paired_evaluation_call),
    (_paired.paired_eval, _paired.PAIRED_EVAL, _paired_eval_call),
    (_measures.zero_one_error, _measures.ERROR_MEASURE, _measure_call("zero_one_error", per_target=True)),
    (_measures.absolute_error, _measures.ERROR_MEASURE, _measure_call("absolute_error", average=True), 1e-12),
    (_measures.sum_squares_error, _measures.ERROR_MEASURE, _measure_call("sum_squares_error"), 1e-12),
    (_measures.rms_error, _measures.ERROR_MEASURE, _measure_call("rms_error", per_target=True), 1e-12),
    (_measures.worst_case_error, _measures.ERROR_MEASURE, _measure_call("worst_case_error")),
    (_measures.likelihood, _measures.LIKELIHOOD, _likelihood_call, 1e-12),
    (_measures.log_likelihood, _measures.LIKELIHOOD, _measure_call("log_likelihood", base=2.0), 1e-12),
    (_measures.log_loss, _measures.LIKELIHOOD, _measure_call("log_loss", eps=1e-3), 1e-12),
    (_best_constant.best_constant, _best_constant.BEST_CONSTANT, _best_constant_call("absolute"), 1e-12),
    (_two_vs_two.two_vs_two, _two_vs_two.TWO_VS_TWO, _two_vs_two_call),
    (_two_vs_two.two_vs_two_permutation_test, _two_vs_two.TWO_VS_TWO_PERMUTATION, _two_vs_two_permutation_call),
    (_crossmatch.crossmatch_resample, _crossmatch.RESAMPLE, _crossmatch_resample_call),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_AVERAGE, _roc_auc_average_call("macro"), 1e-12),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_MULTICLASS, _multiclass_call("ovr", "macro"), 1e-12),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_MULTICLASS, _multiclass_call("ovo", "weighted"), 1e-12),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_AVERAGE, _roc_auc_average_call("micro"), 1e-12),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_AVERAGE, _roc_auc_average_call(None), 1e-12),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_AVERAGE, _roc_auc_average_call("samples", True), 1e-12),
    (_roc_auc.roc_auc_score, _roc_auc.ROC_AUC_AVERAGE, _roc_auc_average_call("weighted", True), 1e-12),
    # float sums added in another order on the cluster: the results agree to rounding
    (_compare_models.compare_models, _compare_models.COMPARE_MODELS, _compare_models_call, 1e-12),
]


class _Spy:
    def __init__(self, skeleton: Skeleton, monkeypatch: pytest.MonkeyPatch) -> None:
        self.plans: list[object] = []
        self.finished: list[object] = []
        plan, finish = skeleton.plan, skeleton.finish

        def spy_plan(*args, **kwargs):
            self.plans.append(plan(*args, **kwargs))
            return self.plans[-1]

        def spy_finish(p, counts):
            self.finished.append(counts)
            return finish(p, counts)

        monkeypatch.setattr(skeleton, "plan", spy_plan)
        monkeypatch.setattr(skeleton, "finish", spy_finish)


def _as_dask(x):
    da = pytest.importorskip("dask.array")
    return da.from_array(np.asarray(x), chunks=17)


@pytest.mark.parametrize(
    "function, skeleton, call, rtol",
    [case if len(case) == 4 else (*case, 0.0) for case in CASES],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_every_layer_plans_and_finishes_through_the_skeleton(function, skeleton, call, rtol, monkeypatch):
    spy = _Spy(skeleton, monkeypatch)
    in_memory = call(np.asarray)
    assert len(spy.plans) == len(spy.finished) == 1
    on_dask = call(_as_dask)
    assert len(spy.plans) == len(spy.finished) == 2
    assert spy.plans[0] == spy.plans[1]  # the same decisions from facts gathered another way
    assert spy.finished[0] == spy.finished[1]  # exact counts (each counts type says where sums may round)
    if isinstance(in_memory, tuple):  # a curve: arrays of different lengths
        assert len(on_dask) == len(in_memory)
        for got, expected in zip(on_dask, in_memory):
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)
    else:
        assert on_dask == in_memory


@pytest.mark.parametrize(
    "skeleton, grouped_call, field, per_group",
    [
        (_roc_auc.ROC_AUC_GROUPED, _roc_auc.roc_auc_score, "auc", pairmetrics.sklearn.roc_auc_score),
        (
            _ranking_curves.AVERAGE_PRECISION_GROUPED,
            _ranking_curves.average_precision_score,
            "average_precision",
            pairmetrics.sklearn.average_precision_score,
        ),
    ],
    ids=["roc_auc", "average_precision"],
)
def test_grouped_calls_plan_and_finish_through_their_skeleton(skeleton, grouped_call, field, per_group, monkeypatch):
    """groups= (in memory only) counts every group at once, planned and finished by its own skeleton."""
    spy = _Spy(skeleton, monkeypatch)
    y, score = _binary_auc_data()
    groups = np.arange(60) % 3
    grouped = grouped_call(y, score, groups=groups)
    assert len(spy.plans) == len(spy.finished) == 1
    for k in range(3):
        assert getattr(grouped, field)[k] == pytest.approx(per_group(y[groups == k], score[groups == k]))


def test_every_routed_capability_with_a_dask_layer_has_a_case():
    """A function the Dask layer serves runs a skeleton; the ones not yet written as one are listed here."""
    pytest.importorskip("dask")
    import pairmetrics.dask  # noqa: F401  (registers the Dask implementations)

    served = set(_routing._DASK)
    covered = {case[0] for case in CASES}
    missing = {f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}": f for f in served - covered}
    assert sorted(set(missing) - set(GATHERED)) == sorted(NOT_YET_SKELETONS)
    for name in GATHERED:  # each gathers, then calls the in-memory function
        assert _routing._DASK[missing[name]].__name__ == f"gathering_{missing[name].__name__}"


def test_skeletons_are_registered_once_by_name():
    names = [s.name for s in SKELETONS]
    assert len(names) == len(set(names))
    assert all(isinstance(s, Skeleton) for s in SKELETONS)


def _positive_plan(x: int) -> int:
    if x <= 0:
        raise ValueError("x must be > 0")
    return x


def _sum_finish(plan: int, counts: int) -> int:
    return plan + counts


def test_a_plan_error_stops_before_counting():
    counted = []
    skeleton = Skeleton("demo", _positive_plan, _sum_finish)
    SKELETONS.remove(skeleton)
    with pytest.raises(ValueError, match="x must be > 0"):
        skeleton.run(lambda plan: counted.append(plan), -1)
    assert counted == []
    assert skeleton.run(lambda plan: plan * 2, 3) == 9


def test_paired_variance_plans_alike_on_every_layer(monkeypatch):
    """With the variance the sums differ in rounding between layers, never the counts or the plan."""
    spy = _Spy(_paired.PAIRED, monkeypatch)
    labels, scores = _paired_data()
    in_memory = pairmetrics.paired_evaluation(labels, scores, variance=True)
    on_dask = pairmetrics.paired_evaluation(_as_dask(labels), _as_dask(scores), variance=True)
    assert spy.plans[0] == spy.plans[1] and spy.plans[0].with_variance
    assert spy.finished[0].counts == spy.finished[1].counts
    assert spy.finished[0].weighted_square_sum == pytest.approx(spy.finished[1].weighted_square_sum, rel=1e-12)
    assert on_dask.confidence_interval() == pytest.approx(in_memory.confidence_interval(), rel=1e-12)


def test_paired_groups_plan_as_the_whole(monkeypatch):
    """The groups= path takes the plan of paired_evaluation, and its finish builds the per-group result."""
    plans = _Spy(_paired.PAIRED_GROUPED, monkeypatch).plans
    labels, scores = _paired_data()
    keys = np.arange(50) % 3
    grouped = pairmetrics.paired_evaluation(labels, scores, groups=keys, variance=False)
    assert plans == [_paired.PairedPlan(0.5, False, True)]
    for k, key in enumerate(grouped.groups):
        whole = pairmetrics.paired_evaluation(labels[keys == key], scores[keys == key], variance=False)
        assert grouped.n_correct[k] == whole.n_correct and grouped.n_rankable[k] == whole.n_rankable


def test_same_values_compares_what_layers_find():
    assert same_values((1, np.array([1.0, np.nan])), (1, np.array([1.0, np.nan])))  # NaN equals NaN
    assert not same_values(np.array([1, 2]), np.array([1, 3]))
    assert not same_values(1.0, 1.0 + 1e-15) and same_values(1.0, 1.0 + 1e-15, rtol=1e-12)
    assert not same_values(10**15, 10**15 + 1, rtol=1e-12)  # integers exactly, whatever the tolerance
    assert same_values({"a": [1, None]}, {"a": [1, None]}) and not same_values({"a": 1}, {"b": 1})
    assert same_values(lambda: 1, lambda: 2)  # a counter's further passes are not compared
    assert not same_values(np.zeros(2), np.zeros(3))


def test_layer_equal_dataclasses():
    import dataclasses

    @dataclasses.dataclass(frozen=True, eq=False)
    class Sums(LayerEqual):
        total: float
        rows: np.ndarray

        RTOL = 1e-12

    assert Sums(1.0, np.arange(3)) == Sums(1.0 + 1e-15, np.arange(3))
    assert Sums(1.0, np.arange(3)) != Sums(1.0, np.arange(1, 4))
    assert Sums(1.0, np.arange(3)).__eq__(object()) is NotImplemented
