"""Result objects: ``dataclasses.asdict``/``fields`` give the public fields only, private state
survives ``dataclasses.replace``, pickling and copying, and the public ``asdict()``, equality and
repr leave it out."""

import copy
import dataclasses
import pickle
import warnings

import numpy as np
import pairmetrics as pm
import pytest
from pairmetrics._inference import ConfidenceInterval, ConfidenceIntervals
from pairmetrics._result import Result


def _results():
    rng = np.random.default_rng(0)
    x, y = rng.random((8, 2)), rng.random((8, 2)) + 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            pm.PairedEvaluation: pm.paired_evaluation([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]),
            ConfidenceInterval: pm.paired_evaluation([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).confidence_interval(),
            pm.TwoVsTwoResult: pm.two_vs_two(x, y),
            pm.TwoVsTwoPermutationResult: pm.two_vs_two_permutation_test(x, y, n_resamples=5, rng=1),
            pm.MatchingResult: pm.min_weight_perfect_matching(points=x),
            pm.CrossMatchResult: pm.crossmatch_test(x, y),
            pm.CrossMatchNullDistribution: pm.crossmatch_null_distribution(10, 4),
            pm.CrossMatchResampleResult: pm.crossmatch_resample(x, y, sample_size=4, n_resamples=3, rng=2),
            pm.MultiCrossMatchResult: pm.multi_crossmatch_test(np.vstack([x, y]), np.arange(16) % 3),
            pm.Likelihood: pm.likelihood([0, 1, 1], [0.2, 0.7, 0.6]),
            pm.BestConstant: pm.best_constant([1.0, 2.0, 2.0], "absolute"),
            pm.MultilabelCounts: pm.multilabel_counts([[0, 1], [1, 1]], [[1, 1], [0, 1]]),
            pm.ConcordanceResult: pm.concordance([1, 2, 3, 4, 5], [1, 1, 0, 1, 1], [1.0, 3.0, 2.0, 4.0, 5.0]),
            pm.ModelComparison: pm.compare_models(
                [0, 0, 1, 1], np.array([[0.1, 0.4, 0.35, 0.8], [0.2, 0.1, 0.3, 0.9]])
            ),
            ConfidenceIntervals: pm.compare_models(
                [0, 0, 1, 1], np.array([[0.1, 0.4, 0.35, 0.8], [0.2, 0.1, 0.3, 0.9]])
            ).confidence_interval(),
            pm.EnergyTestResult: pm.energy_test(x, y, n_resamples=5, rng=4),
            pm.MMDTestResult: pm.mmd_test(x, y, n_resamples=5, rng=5),
            pm.BootstrapResult: pm.bootstrap(([1.0, 2.0, 4.0, 8.0, 16.0],), np.mean, n_resamples=9, rng=3),
            pm.GroupedResult: pm.GroupedResult(np.array([10, 20]), np.array([2, 3]), 0.5),
            pm.GroupedPairedEvaluation: pm.paired_evaluation([0, 1, 0, 0], [0.1, 0.4, 0.35, 0.8], groups=[1, 1, 2, 2]),
            pm.GroupedPairedComparison: pm.compare_models(
                [0, 1, 0, 1], [[0.1, 0.4, 0.35, 0.8], [0.2, 0.1, 0.3, 0.9]], groups=[5, 5, 7, 7]
            ),
            pm.GroupedRocAuc: pm.sklearn.roc_auc_score([0, 1, 0, 1], [0.1, 0.4, 0.35, 0.8], groups=[1, 1, 2, 2]),
            pm.GroupedAveragePrecision: pm.sklearn.average_precision_score(
                [0, 1, 0, 1], [0.1, 0.4, 0.35, 0.8], groups=[1, 1, 2, 2]
            ),
            pm.GroupedNdcg: pm.sklearn.ndcg_score(
                [[1, 0, 2], [0, 1, 1]], [[0.3, 0.2, 0.9], [0.1, 0.5, 0.4]], groups=[1, 2]
            ),
            pm.GroupedConcordance: pm.concordance([1, 2, 3, 4], None, [1.0, 3.0, 2.0, 4.0], groups=[1, 1, 2, 2]),
            pm.RankState: pm.RankState().update([0, 1, 1], [0.2, 0.7, 0.2], sample_weight=[1.0, 2.0, 0.5]),
            pm.RocAucResult: pm.RankState().update([0, 1, 1, 0], [0.2, 0.7, 0.2, 0.1]).roc_auc(),
        }


RESULTS = _results()
PRIVATE = {
    pm.PairedEvaluation: ("_variance",),
    pm.MatchingResult: ("_source", "_timings"),
    pm.RocAucResult: ("_variance",),
}


def test_every_public_result_class_is_covered():
    public = {getattr(pm, name) for name in pm.__all__}
    classes = {obj for obj in public if isinstance(obj, type) and issubclass(obj, Result)}
    assert classes <= set(RESULTS), classes - set(RESULTS)


def _same(a, b):
    if isinstance(a, dict):  # a from asdict(), which adds the derived values of nested results
        return a.keys() >= b.keys() and all(_same(a[k], b[k]) for k in b)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b or (a != a and b != b)


@pytest.mark.parametrize("cls", list(RESULTS), ids=lambda c: c.__name__)
def test_dataclasses_asdict_holds_public_fields_only(cls):
    result = RESULTS[cls]
    assert type(result) is cls
    names = [f.name for f in dataclasses.fields(result)]
    assert names and not [n for n in names if n.startswith("_")]
    as_dict = dataclasses.asdict(result)
    assert list(as_dict) == names
    # the method adds the derived values (properties) to the same fields, nested results as dicts
    public = result.asdict()
    assert list(public)[: len(names)] == names and not [n for n in public if n.startswith("_")]
    for name in names:
        assert _same(public[name], as_dict[name])
    assert "=_" not in repr(result) and ", _" not in repr(result)


@pytest.mark.parametrize("cls", list(PRIVATE), ids=lambda c: c.__name__)
def test_private_state_is_kept_out_of_fields_but_carried_over(cls):
    result = RESULTS[cls]
    for name in PRIVATE[cls]:
        value = getattr(result, name)
        assert value is not None and not (isinstance(value, float) and value != value)
        for other in (dataclasses.replace(result), copy.copy(result), copy.deepcopy(result)):
            assert _same(getattr(other, name), value) or name == "_source"
            assert other == result
        assert _same(getattr(pickle.loads(pickle.dumps(result)), name), value) or name == "_source"
    # equality ignores private state
    changed = dataclasses.replace(result, **{name: None for name in PRIVATE[cls]})
    assert changed == result


def test_replace_keeps_what_the_methods_need():
    evaluation = RESULTS[pm.PairedEvaluation]
    assert dataclasses.replace(evaluation).confidence_interval() == evaluation.confidence_interval()
    comparison = RESULTS[pm.ModelComparison]
    assert dataclasses.replace(comparison).confidence_interval() == comparison.confidence_interval()
    matching = RESULTS[pm.MatchingResult]
    assert dataclasses.replace(matching, cost=matching.cost).verify()
