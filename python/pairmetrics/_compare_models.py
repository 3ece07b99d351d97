"""k models scored on one test set: their AUCs, DeLong's covariance and the test that all are equal."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from . import _core
from ._groups import GROUPS_NOTES, GroupedPairedComparison, factorize_groups, grouped_result, segment_starts
from ._inference import ConfidenceIntervals, difference_test, equality_test, normal_intervals
from ._pairs import (
    auc_components,
    auc_of_counts,
    group_factors,
    grouped_pair_counts,
    pair_totals,
    sample_counts,
    sample_factors,
    variance_of_sum,
    vectors_and_facts,
    warn_nothing_rankable,
    warn_undefined_variance,
)
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, NJobs
from ._validation import (
    Nonfinite,
    as_numeric_array,
    check_positive_finite,
    check_progress,
    raise_if_nonfinite,
    resolve_n_jobs,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ModelComparison", "compare_models"]
# What the Dask layer (and only it) may use besides __all__: the skeleton, its facts and counts, the shape rule.
__seams__ = ["COMPARE_MODELS", "ComparisonCounts", "ComparisonFacts", "check_models"]


@dataclasses.dataclass(frozen=True, eq=False)
class ModelComparison(Result):
    """AUCs of k models on one test set, with their joint (DeLong) covariance.

    Attributes
    ----------
    auc : ndarray, shape (k,)
        Each model's concordance over the rankable pairs (ties count 1/2);
        the ROC AUC for binary labels.
    covariance : ndarray, shape (k, k)
        DeLong's covariance of the AUCs for binary labels (per-class ddof 1),
        the one-sample U-statistic covariance for other labels.
    statistic, pvalue : float
        Chi-square statistic (``df`` degrees of freedom) and p-value of the
        test that all k AUCs are equal (DeLong, DeLong & Clarke-Pearson 1988).
    df : int
        Rank of the covariance of the k - 1 differences.
    difference : ndarray, shape (k, k)
        ``difference[i, j] = auc[i] - auc[j]``.
    difference_pvalue : ndarray, shape (k, k)
        Two-sided normal p-value of each pairwise difference (1 on the diagonal).
    n_rankable : int
        Rankable pairs (the same for every model).
    """

    auc: npt.NDArray[np.float64]
    covariance: npt.NDArray[np.float64]
    statistic: float
    pvalue: float
    df: int
    difference: npt.NDArray[np.float64]
    difference_pvalue: npt.NDArray[np.float64]
    n_rankable: int
    _unpack = ("statistic", "pvalue")

    def to_frame(self) -> pd.DataFrame:
        """One row per model: its ``auc``, ``variance`` and 95 % interval (normal, clipped to [0, 1]).

        Returns
        -------
        pandas.DataFrame
            Indexed by ``model`` (0 to k - 1), columns ``auc``, ``variance``,
            ``low`` and ``high``.

        Raises
        ------
        ImportError
            When pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame() needs pandas: pip install pandas") from None
        variance = np.diag(self.covariance)
        low, high = normal_intervals(self.auc, variance, 0.95, 0.0, 1.0)
        columns = {"auc": self.auc, "variance": variance, "low": low, "high": high}
        return pd.DataFrame(columns, index=pd.RangeIndex(self.auc.shape[0], name="model"))

    def difference_variance(self) -> npt.NDArray[np.float64]:
        """``Var(auc[i] - auc[j])`` for every pair, shape (k, k)."""
        diag = np.diag(self.covariance)
        spread: npt.NDArray[np.float64] = diag[:, None] + diag[None, :] - 2 * self.covariance
        return np.maximum(spread, 0.0)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceIntervals:
        """Normal confidence intervals of every pairwise difference ``auc[i] - auc[j]``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Nominal coverage, in (0, 1).

        Returns
        -------
        ConfidenceIntervals
            ``low`` and ``high`` are arrays of shape (k, k): entry ``[i, j]``
            bounds ``auc[i] - auc[j]`` (clipped to [-1, 1]; the diagonal is
            0). Unpacks as ``(low, high)``.

        Examples
        --------
        >>> import numpy as np
        >>> from pairmetrics import compare_models
        >>> scores = np.array([[0.1, 0.2, 0.6, 0.4, 0.8, 0.9], [0.3, 0.1, 0.2, 0.5, 0.4, 0.7]])
        >>> low, high = compare_models([0, 0, 0, 1, 1, 1], scores).confidence_interval()
        >>> low.shape, high.shape
        ((2, 2), (2, 2))
        """
        return normal_intervals(self.difference, self.difference_variance(), confidence_level, -1.0, 1.0)


def _pairwise_pvalues(difference: npt.NDArray[np.float64], spread: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(difference) / np.sqrt(spread)
    pvalues: npt.NDArray[np.float64] = 2 * stats.norm.sf(z)
    pvalues[(spread == 0) & (difference == 0)] = 1.0  # identical rankings on every pair
    pvalues[(spread == 0) & (difference != 0)] = 0.0
    return pvalues


@overload
def compare_models(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    min_dist: float = 0.5,
    n_jobs: NJobs = None,
    progress: bool = False,
    groups: None = None,
) -> ModelComparison: ...
@overload
def compare_models(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    min_dist: float = 0.5,
    n_jobs: NJobs = None,
    progress: bool = False,
    groups: ArrayLike,
) -> GroupedPairedComparison: ...
@routed
def compare_models(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    min_dist: float = 0.5,
    n_jobs: NJobs = None,
    progress: bool = False,
    groups: ArrayLike | None = None,
) -> ModelComparison | GroupedPairedComparison:
    """Compare k models scored on the same samples: AUCs, covariance, equality test.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        True labels (binary, ordinal or real-valued).
    y_score : array_like, shape (k, n)
        One row of scores per model (``k >= 2``), of any real dtype.
    min_dist : float, default 0.5
        Labels must differ by at least this much for a pair to be rankable,
        as in :func:`paired_evaluation`.
    n_jobs : int, optional
        Threads for each model's counts (None: every usable core); results
        never depend on it.
    progress : bool, default False
        Show a progress bar (tqdm, when installed).
    groups : array_like, shape (n,), optional
        A group key per sample (numbers, strings, any sortable keys; no
        NaN): two models (``k == 2``) compared inside every group, only
        pairs inside a group counting. Not for Dask input.

    Returns
    -------
    ModelComparison
        ``auc``, ``covariance``, the chi-square ``statistic``/``pvalue`` of
        the test that all AUCs are equal, pairwise ``difference`` and
        ``difference_pvalue``, and ``confidence_interval()`` for the
        differences. Unpacks as ``(statistic, pvalue)``. With ``groups``, a
        :class:`GroupedPairedComparison`: each group's two AUCs, their
        (co)variances and the normal test of their difference (arrays aligned
        with its sorted ``groups``), the size-weighted ``mean``
        auc_difference and ``to_frame()``.

    Notes
    -----
    Each model's per-sample components ``g_i = credit_i - auc * r_i`` come
    from the O(n log n) merge passes of :func:`paired_evaluation`, so the
    whole comparison is O(k n log n) time and O(k n) memory. The covariance
    of models ``a`` and ``b`` is ``sum(f_i * g_a,i * g_b,i) / R**2`` over the
    ``R`` rankable pairs, with ``f_i = m / (m - 1)`` for the ``m`` samples
    of ``i``'s class when the labels are binary (exactly DeLong's S10 / m +
    S01 / n) and ``n / (n - 1)`` otherwise. The test statistic is
    ``x' (L S L')^+ x`` for the k - 1 differences from the last model, on as
    many degrees of freedom as ``L S L'`` has rank. For k = 2 it is the
    square of the normal statistic of the difference (DeLong's test). Dask arrays (scores of
    shape (k, n), labels) are counted on the cluster with the same numbers:
    see :mod:`pairmetrics.dask.paired`.

    {groups_notes}

    Examples
    --------
    >>> import numpy as np
    >>> from pairmetrics import compare_models
    >>> labels = [0, 0, 0, 1, 1, 1]
    >>> scores = np.array([[0.1, 0.2, 0.6, 0.4, 0.8, 0.9], [0.3, 0.1, 0.2, 0.5, 0.4, 0.7], [0.5, 0.6, 0.1, 0.2, 0.9, 0.3]])
    >>> result = compare_models(labels, scores)
    >>> result.auc.round(3)
    array([0.889, 1.   , 0.556])
    >>> result.df, round(result.pvalue, 4)
    (2, 0.2019)
    """
    models = check_models(as_numeric_array(y_score, "y_score"))
    check_orientation(models.shape, np.shape(y_true))
    prepared = [vectors_and_facts(row, y_true, f"y_score[{k}]") for k, row in enumerate(models)]
    labels_arr = prepared[0][1]
    facts = ComparisonFacts(
        labels_arr.shape[0], tuple(f.scores_nonfinite for _, _, f in prepared), prepared[0][2].labels_nonfinite
    )
    rows = [row for row, _, _ in prepared]
    if groups is not None:
        return COMPARE_GROUPED.run(
            lambda plan: _compare_groups(rows, labels_arr, plan, groups, n_jobs, progress), facts, min_dist
        )

    def count(plan: float) -> ComparisonCounts:
        threads = resolve_n_jobs(n_jobs)
        with progress_callback(check_progress(progress), "model comparison") as callback:
            outputs = [_core.paired_counts(row, labels_arr, plan, True, threads, progress=callback) for row in rows]
        totals = tuple(pair_totals(output) for output in outputs)
        gram = None
        if totals[0][0]:
            components = np.array([auc_components(t, sample_counts(o)) for t, o in zip(totals, outputs)])  # (k, n)
            gram = (components * sample_factors(labels_arr)) @ components.T
        return ComparisonCounts(totals, gram)

    return COMPARE_MODELS.run(count, facts, min_dist)


@dataclasses.dataclass(frozen=True)
class ComparisonFacts:
    """What the checks of compare_models need: the samples, the first non-finite entry of every model's
    scores and of the labels."""

    n_samples: int
    scores_nonfinite: tuple[Nonfinite, ...]
    labels_nonfinite: Nonfinite


@dataclasses.dataclass(frozen=True, eq=False)
class ComparisonCounts(LayerEqual):
    """Every model's totals (rankable, correct, tied, incorrect) and the (k, k) sums
    ``sum(f_i * g_a,i * g_b,i)`` (None when nothing is rankable)."""

    totals: tuple[tuple[int, int, int, int], ...]
    weighted_gram: Any

    RTOL = 1e-12  # float sums added in another order on the cluster


def _plan_compare(facts: ComparisonFacts, min_dist: float) -> float:
    """Every value check of compare_models, in order; the plan is the checked min_dist."""
    min_dist = check_positive_finite(min_dist, "min_dist")
    for k, fact in enumerate(facts.scores_nonfinite):
        raise_if_nonfinite(fact, f"y_score[{k}]")
        if k == 0:
            raise_if_nonfinite(facts.labels_nonfinite, "y_true")
    return min_dist


def _finish_compare(min_dist: float, counts: ComparisonCounts) -> ModelComparison:
    return _comparison_from_totals(list(counts.totals), counts.weighted_gram)


def _compare_groups(
    rows: list[np.ndarray], labels: np.ndarray, min_dist: float, groups: ArrayLike, n_jobs: NJobs, progress: bool
) -> GroupedPairedComparison:
    threads = resolve_n_jobs(n_jobs)
    if len(rows) != 2:
        raise ValueError(f"groups compares two models: y_score must have 2 rows, got {len(rows)}")
    return _grouped_comparison(rows[0], rows[1], labels, min_dist, groups, threads, check_progress(progress))


def _finish_grouped(min_dist: float, comparison: GroupedPairedComparison) -> GroupedPairedComparison:
    return comparison


def _grouped_comparison(
    scores_a: np.ndarray,
    scores_b: np.ndarray,
    labels: np.ndarray,
    min_dist: float,
    groups: ArrayLike,
    threads: int,
    progress: bool,
) -> GroupedPairedComparison:
    """Two models compared inside every group (:func:`compare_models` with ``groups``)."""
    keys, codes = factorize_groups(groups, labels.shape[0])
    sizes = np.bincount(codes, minlength=keys.shape[0]).astype(np.int64)
    runs = [
        grouped_pair_counts(s, labels, min_dist, codes, keys.shape[0], True, threads, progress, "paired comparison")
        for s in (scores_a, scores_b)
    ]
    (counts_a, (order, *rest_a)), (counts_b, (_, *rest_b)) = runs
    ga, gb = auc_components(counts_a, tuple(rest_a), sizes), auc_components(counts_b, tuple(rest_b), sizes)
    factors, starts = group_factors(labels[order], sizes), segment_starts(sizes)
    rankable = counts_a[:, 0]
    var_a, var_b, cov = (
        variance_of_sum(np.add.reduceat(factors * (x * y), starts), rankable) for x, y in ((ga, ga), (gb, gb), (ga, gb))
    )
    auc_a, auc_b = auc_of_counts(counts_a), auc_of_counts(counts_b)
    statistic, pvalue = difference_test(auc_a - auc_b, var_a + var_b - 2 * cov)
    return grouped_result(
        GroupedPairedComparison,
        keys,
        sizes,
        True,
        n_rankable=rankable,
        auc_a=auc_a,
        auc_b=auc_b,
        auc_difference=auc_a - auc_b,
        variance_a=var_a,
        variance_b=var_b,
        covariance=cov,
        statistic=statistic,
        pvalue=pvalue,
    )


COMPARE_MODELS = Skeleton("compare_models", _plan_compare, _finish_compare)
# the grouped counter builds the per-group comparison (its own variance terms per group)
COMPARE_GROUPED = Skeleton("compare_models(groups=)", _plan_compare, _finish_grouped)


if compare_models.__doc__:  # None under python -OO
    compare_models.__doc__ = compare_models.__doc__.replace("{groups_notes}", GROUPS_NOTES.strip())


def check_orientation(score_shape: tuple[int, ...], true_shape: tuple[int, ...]) -> None:
    """A hint for an (n, k) score matrix: one row per model is wanted."""
    n = true_shape[0] if len(true_shape) >= 1 else -1
    if len(score_shape) == 2 and score_shape[0] == n and score_shape[1] < n:
        raise ValueError(
            f"y_score has shape {score_shape}: one row per model is expected, (k, n) with n = {n} samples; "
            "pass y_score.T"
        )


def check_models(models: Any) -> Any:
    """The shape rule on the (k, n) scores of :func:`compare_models` (numpy or Dask); returns them."""
    if models.ndim != 2 or models.shape[0] < 2:
        raise ValueError(f"y_score must be 2-D (k models, n samples) with k >= 2, got shape {models.shape}")
    return models


def _comparison_from_totals(totals: list[tuple[int, int, int, int]], weighted_gram: Any) -> ModelComparison:
    """The ModelComparison of k models from their totals (rankable, correct, tied, incorrect) and
    the (k, k) sums ``sum(f_i * g_a,i * g_b,i)`` of their per-sample components (see
    :func:`pairmetrics._paired.auc_components`; unused when nothing is rankable)."""
    n_rankable = totals[0][0]
    auc = np.array([(t[1] + 0.5 * t[2]) / t[0] if t[0] else math.nan for t in totals])
    k = auc.shape[0]
    if n_rankable == 0:
        warn_nothing_rankable()
        nan = np.full((k, k), math.nan)
        return ModelComparison(auc, nan, math.nan, math.nan, 0, nan.copy(), nan.copy(), 0)
    covariance = np.asarray(weighted_gram, dtype=np.float64) / float(n_rankable) ** 2
    if np.isnan(covariance).any():
        warn_undefined_variance()
    statistic, pvalue, df = equality_test(auc, covariance)
    difference = auc[:, None] - auc[None, :]
    comparison = ModelComparison(auc, covariance, statistic, pvalue, df, difference, difference, n_rankable)
    pvalues = _pairwise_pvalues(difference, comparison.difference_variance())
    return dataclasses.replace(comparison, difference_pvalue=pvalues)
