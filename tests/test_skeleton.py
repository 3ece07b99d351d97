"""Every layer of a capability runs its one skeleton: the same plan and finish, only the counter differs."""

from __future__ import annotations

import numpy as np
import pairmetrics
import pytest
from pairmetrics import _paired, _routing, _survival
from pairmetrics._skeleton import SKELETONS, Skeleton


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


def _paired_data():
    rng = np.random.default_rng(5)
    return rng.integers(0, 4, 50), rng.integers(0, 10, 50).astype(float)


def _paired_evaluation_call(as_array):
    labels, scores = _paired_data()
    return pairmetrics.paired_evaluation(as_array(labels), as_array(scores), variance=False)


def _paired_eval_call(as_array):
    labels, scores = _paired_data()
    return pairmetrics.pairedeval.paired_eval(as_array(scores), as_array(labels))


# Served on Dask but still planned and finished by each layer on its own (from shared seams).
NOT_YET_SKELETONS: list[str] = [
    "_compare_models.compare_models",
    "_crossmatch.crossmatch_resample",
    "_crossmatch.crossmatch_test",
    "_crossmatch_multi.multi_crossmatch_test",
    "_matching.min_weight_perfect_matching",
    "_matching.rank_mahalanobis",
    "_measures.absolute_error",
    "_measures.best_constant",
    "_measures.likelihood",
    "_measures.log_likelihood",
    "_measures.log_loss",
    "_measures.rms_error",
    "_measures.sum_squares_error",
    "_measures.worst_case_error",
    "_measures.zero_one_error",
    "_multilabel.multilabel_counts",
    "_ranking_curves.average_precision_score",
    "_ranking_curves.det_curve",
    "_ranking_curves.precision_recall_curve",
    "_ranking_curves.roc_curve",
    "_roc_auc.roc_auc_score",
    "_two_vs_two.two_vs_two",
    "_two_vs_two.two_vs_two_permutation_test",
]

# (public function, its skeleton, a call taking an array converter)
CASES = [
    (_survival.concordance_index, _survival.LIFELINES, _lifelines_call),
    (_survival.concordance_index_censored, _survival.SKSURV, _sksurv_call),
    (_paired.paired_evaluation, _paired.PAIRED, _paired_evaluation_call),
    (_paired.paired_eval, _paired.PAIRED_EVAL, _paired_eval_call),
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


@pytest.mark.parametrize("function, skeleton, call", CASES, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_every_layer_plans_and_finishes_through_the_skeleton(function, skeleton, call, monkeypatch):
    spy = _Spy(skeleton, monkeypatch)
    in_memory = call(np.asarray)
    assert len(spy.plans) == len(spy.finished) == 1
    on_dask = call(_as_dask)
    assert len(spy.plans) == len(spy.finished) == 2
    assert spy.plans[0] == spy.plans[1]  # the same decisions from facts gathered another way
    assert spy.finished[0] == spy.finished[1]  # exact counts
    assert on_dask == in_memory


def test_every_routed_capability_with_a_dask_layer_has_a_case():
    """A function the Dask layer serves runs a skeleton; the ones not yet written as one are listed here."""
    pytest.importorskip("dask")
    import pairmetrics.dask  # noqa: F401  (registers the Dask implementations)

    served = set(_routing._DASK)
    covered = {function for function, _, _ in CASES}
    missing = sorted(f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}" for f in served - covered)
    assert missing == sorted(NOT_YET_SKELETONS)


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
