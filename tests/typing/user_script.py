"""A user's script calling the whole public API; ``mypy --strict`` must accept it
(tests/test_typing.py). It also runs: every call is real, on tiny inputs."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pairmetrics as pm
import pairmetrics.lifelines
import pairmetrics.pairedeval
import pairmetrics.sklearn
import pairmetrics.sksurv


def paired() -> None:
    scores, labels = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    n_rankable, n_correct = pm.pairedeval.paired_eval(scores, labels)
    assert (n_rankable, n_correct) == (4, 3)
    evaluation: pm.PairedEvaluation = pm.paired_evaluation(labels, np.asarray(scores), min_dist=0.5, n_jobs=1)
    counts: int = evaluation.n_rankable + evaluation.n_correct + evaluation.n_tied + evaluation.n_incorrect
    auc: float = evaluation.auc
    low, high = evaluation.confidence_interval(confidence_level=0.9)
    assert counts == 8 and low <= auc <= high and evaluation.min_dist == 0.5
    comparison: pm.ModelComparison = pm.compare_models(labels, [scores, [0.2, 0.1, 0.3, 0.9]])
    aucs: npt.NDArray[np.float64] = comparison.auc
    interval = comparison.confidence_interval()
    statistic, pvalue = comparison
    assert aucs.shape == (2,) and 0 <= comparison.pvalue <= 1 and interval.confidence_level == 0.95
    assert statistic == comparison.statistic and pvalue == comparison.pvalue and comparison.n_rankable == 4
    bootstrapped: pm.BootstrapResult = pm.bootstrap((labels, scores), pm.paired_evaluation, n_resamples=9, rng=0)
    assert bootstrapped.bootstrap_distribution.shape == (9,)


def two_vs_two() -> None:
    rng = np.random.default_rng(0)
    y, p = rng.random((8, 3)), rng.random((8, 3))
    result: pm.TwoVsTwoResult = pm.two_vs_two(y, p, metric="euclidean", ties="half", pairs=10, rng=rng, n_jobs=1)
    accuracy: float = result.accuracy
    per_sample: npt.NDArray[np.float64] = result.sample_accuracy
    assert 0 <= accuracy <= 1 and per_sample.shape == (8,) and result.n_pairs == 10
    test: pm.TwoVsTwoPermutationResult = pm.two_vs_two_permutation_test(y, p, n_resamples=9, rng=1)
    null: npt.NDArray[np.float64] = test.null_distribution
    assert 0 < test.pvalue <= 1 and null.shape == (9,) and test.n_resamples == 9 and test.observed.n_total == 28


def matching_and_crossmatch() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.random((6, 2)), rng.random((6, 2)) + 0.5
    matching: pm.MatchingResult = pm.min_weight_perfect_matching(
        points=np.vstack([x, y]), metric="cityblock", n_neighbors=4
    )
    pairs: npt.NDArray[np.int64] = matching.pairs
    ok: bool = matching.verify(points=np.vstack([x, y]))
    assert pairs.shape == (6, 2) and matching.cost > 0 and matching.dropped is None and ok
    ranks: npt.NDArray[np.float64] = pm.rank_mahalanobis(x)
    assert ranks.shape == (6, 6)
    test: pm.CrossMatchResult = pm.crossmatch_test(x, y, alternative="two-sided")
    statistic: int = test.statistic
    assert 0 <= test.pvalue <= 1 and statistic == test.to_r()["a1"] and test.matching.pairs.shape == (6, 2)
    z = np.repeat([0, 1], 6)
    distances = np.abs(np.subtract.outer(np.arange(12.0), np.arange(12.0)))
    assert pm.crossmatch_test(D=distances, labels=z, rng=0).n_points == 12
    null: pm.CrossMatchNullDistribution = pm.crossmatch_null_distribution(12, 6)
    pmf: npt.NDArray[np.float64] = null.pmf
    assert abs(float(pmf.sum()) - 1) < 1e-12 and null.mean > 0 and null.var > 0
    table = pm.compare_groups(np.vstack([x, y]), np.repeat(["a", "b"], 6), reference="b", correction="none")
    assert float(table.loc["a", "pvalue"]) == pm.crossmatch_test(x, y).pvalue
    resampled: pm.CrossMatchResampleResult = pm.crossmatch_resample(x, y, sample_size=3, n_resamples=4, rng=2)
    per_resample: npt.NDArray[np.float64] = resampled.pvalues
    assert per_resample.shape == (4,) and resampled.n_resamples == 4 and 0 <= resampled.pvalue <= 1
    several: pm.MultiCrossMatchResult = pm.multi_crossmatch_test(np.vstack([x, y]), np.repeat(["a", "b"], 6))
    counts: npt.NDArray[np.int64] = several.counts
    df: int = several.df
    by_pair = several.to_frame(by="pair", correction="none")
    assert counts.shape == (2, 2) and df == 1 and 0 <= several.pvalue <= 1 and len(by_pair) == 1
    assert several.group_tests[1].statistic == several.cross == test.statistic


def measures() -> None:
    y, p = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.5, 2.0], [2.0, 4.0]])
    total: float = pm.zero_one_error(y, p)
    columns: npt.NDArray[np.float64] = pm.absolute_error(y, p, average=True, per_target=True)
    assert total == 2 and columns.shape == (2,)
    assert pm.sum_squares_error(y, p) == 1.25 and pm.rms_error(y, p) > 0 and pm.worst_case_error(y, p) == 1
    outcomes, probabilities = [0, 1, 1], [0.2, 0.7, 0.6]
    likelihood: pm.Likelihood = pm.likelihood(outcomes, probabilities)
    value, log = likelihood.value, likelihood.log
    assert float(value) > 0 and float(log) < 0 and likelihood.value == value
    assert pm.log_likelihood(outcomes, probabilities, base=2) < 0 < pm.log_loss(outcomes, probabilities, eps=1e-6)
    best: pm.BestConstant = pm.best_constant(y, "squares")
    assert best.loss == "squares" and np.shape(best.value) == (2,)
    values = [1, 2, 3]
    indicators = pm.to_indicators([1, 3], values)
    cuts = pm.to_cuts([1, 3], values, dtype=np.float32)
    assert pm.from_indicators(indicators, values).tolist() == [1, 3] == pm.from_cuts(cuts, values).tolist()
    irrational: npt.NDArray[np.bool_] = pm.check_cuts([[0.2, 0.9], [0.8, 0.3]])
    assert irrational.tolist() == [False, True]
    counts: pm.MultilabelCounts = pm.multilabel_counts([[0, 1], [1, 1]], [[1, 1], [0, 1]], false_pos=0.5)
    matrices: npt.NDArray[np.int64] = counts.confusion_matrices()
    assert int(counts.tp) == 2 and counts.n_labels == 2 and matrices.shape == (2, 2, 2) and counts.hamming_loss == 0.5


def drop_ins() -> None:
    auc = pm.sklearn.roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], sample_weight=[1, 1, 2, 1])
    per_label = pm.sklearn.roc_auc_score([[0, 1], [1, 0], [1, 1]], [[0.2, 0.8], [0.7, 0.1], [0.9, 0.6]], average=None)
    assert 0 <= float(auc) <= 1 and np.shape(per_label) == (2,)
    c: float = pm.lifelines.concordance_index([1, 2, 3, 4], [1.0, 3.0, 2.0, 4.0], [1, 1, 0, 1])
    cindex, concordant, discordant, tied_risk, tied_time = pm.sksurv.concordance_index_censored(
        [True, True, False, True], [1, 2, 3, 4], [4.0, 2.0, 3.0, 1.0], tied_tol=0.0
    )
    assert c == 0.8 == cindex and concordant + discordant + tied_risk + tied_time == 5


def inference() -> None:
    times, events = [1, 2, 3, 4, 5], [1, 1, 0, 1, 1]
    one: pm.ConcordanceResult = pm.concordance(times, events, [1.0, 3.0, 2.0, 4.0, 5.0])
    low, high = one.confidence_interval(confidence_level=0.9)
    n_pairs = one.concordant + one.discordant
    assert low < float(one.estimate) < high and int(n_pairs) > 0 and one.n == 5
    two = pm.concordance(times, None, np.array([[1.0, 3, 2, 4, 5], [5.0, 4, 3, 2, 1]]), strata=[0, 0, 0, 1, 1])
    covariance: npt.NDArray[np.float64] = two.covariance
    assert np.shape(two.estimate) == (2,) and covariance.shape == (2, 2) and two.df == 1 and 0 <= two.pvalue <= 1
    two_low, two_high = two.confidence_interval()  # arrays of length 2, one interval per model
    assert np.shape(two_low) == np.shape(two_high) == (2,)
    labels = [0, 0, 0, 1, 1, 1]
    scores = np.array([[0.1, 0.2, 0.6, 0.4, 0.8, 0.9], [0.3, 0.1, 0.2, 0.5, 0.4, 0.7]])
    models: pm.ModelComparison = pm.compare_models(labels, scores, n_jobs=1)
    aucs: npt.NDArray[np.float64] = models.auc
    statistic, pvalue = models
    interval = models.confidence_interval()  # (k, k) arrays of bounds, one interval per pairwise difference
    difference_low: npt.NDArray[np.float64] = interval.low
    difference_high: npt.NDArray[np.float64] = interval.high
    assert aucs.shape == (2,) and models.df == 1 and statistic == models.statistic and 0 <= pvalue <= 1
    assert difference_low.shape == difference_high.shape == (2, 2) and bool(np.all(difference_low <= difference_high))
    assert models.difference_variance().shape == models.difference.shape
    y = np.array(
        [(True, 1.0), (False, 2.0), (True, 3.0), (True, 4.0), (False, 5.0)], dtype=[("event", bool), ("time", float)]
    )
    uno, concordant, discordant, tied_risk, tied_time = pm.sksurv.concordance_index_ipcw(
        y, y, [5.0, 3.0, 4.0, 1.0, 2.0]
    )
    assert 0 <= uno <= 1 and concordant + discordant + tied_risk + tied_time > 0
    dynamic, mean_auc = pm.sksurv.cumulative_dynamic_auc(y, y, [5.0, 3.0, 1.0, 4.0, 2.0], [1.5, 3.5])
    per_time: npt.NDArray[np.float64] = dynamic
    assert per_time.shape == (2,) and 0 <= mean_auc <= 1
    rng = np.random.default_rng(0)
    outcome = rng.integers(0, 2, 60)
    score = outcome + rng.normal(size=60)
    boot: pm.BootstrapResult = pm.bootstrap(
        (outcome, score), pm.sklearn.roc_auc_score, n_resamples=99, stratify=outcome, rng=1
    )
    boot_low, boot_high = boot.confidence_interval
    replicates: npt.NDArray[np.float64] = boot.bootstrap_distribution
    assert boot_low <= boot_high and replicates.shape == (99,) and boot.standard_error >= 0


def grouped() -> None:
    scores, other, labels, site = [0.1, 0.4, 0.35, 0.8], [0.2, 0.1, 0.3, 0.9], [0, 1, 0, 1], ["a", "a", "b", "b"]
    evaluation: pm.GroupedPairedEvaluation = pm.paired_evaluation(labels, scores, groups=site, variance=True)
    aucs: npt.NDArray[np.float64] = evaluation.auc
    keys: npt.NDArray[np.str_] = evaluation.groups
    mean: float = evaluation.mean
    assert keys.tolist() == ["a", "b"] and aucs.shape == (2,) and 0 <= mean <= 1 and evaluation.variance is not None
    comparison: pm.GroupedPairedComparison = pm.compare_models(labels, [scores, other], groups=site)
    pvalues: npt.NDArray[np.float64] = comparison.pvalue
    per_site: pm.GroupedRocAuc = pm.sklearn.roc_auc_score(labels, scores, groups=np.array(site))
    survival: pm.GroupedConcordance = pm.concordance([1, 2, 3, 4], None, scores, groups=[1, 1, 2, 2])
    sizes: npt.NDArray[np.int64] = per_site.n_samples
    assert pvalues.shape == sizes.shape == survival.estimate.shape == (2,)
    plain: pm.PairedEvaluation = pm.paired_evaluation(labels, scores)
    assert plain.n_rankable == 4 and isinstance(comparison, pm.GroupedResult)


def rank_state() -> None:
    state: pm.RankState = pm.RankState().update([0, 1, 1], [0.1, 0.4, 0.3], sample_weight=None)
    state = state.merge(pm.RankState.from_bytes(pm.RankState().update([0, 1], [0.5, 0.9]).to_bytes()))
    result: pm.RocAucResult = state.roc_auc()
    low, high = result.confidence_interval()
    precision, recall, thresholds = state.precision_recall_curve()
    ap: float = state.average_precision(definition="step")
    pairs: pm.PairedEvaluation = state.paired_evaluation()
    assert 0 <= low <= high <= 1 and 0 <= ap <= 1 and pairs.n_rankable == 6 and precision.shape == recall.shape
    assert thresholds.shape[0] == 5


def main() -> None:
    paired()
    two_vs_two()
    matching_and_crossmatch()
    measures()
    drop_ins()
    inference()
    grouped()
    rank_state()
    assert pm.__version__ and "paired_evaluation" in pm.__all__ and "roc_auc_score" in pm.sklearn.__all__


if __name__ == "__main__":
    main()
