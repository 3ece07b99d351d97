"""Paired evaluation: how many rankable pairs of samples a model orders correctly."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _core
from ._groups import (
    GROUPS_NOTES,
    GroupedPairedEvaluation,
    factorize_groups,
    grouped_result,
)
from ._inference import ConfidenceInterval, normal_interval
from ._pairs import (
    CHEAP_VARIANCE_SAMPLES,
    PairedFacts,
    auc_of_counts,
    grouped_auc_variance,
    grouped_pair_counts,
    moment_square_sum,
    pair_totals,
    variance_of_sum,
    vectors_and_facts,
    wants_variance,
    warn_nothing_rankable,
    warn_undefined_variance,
)
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._skeleton import Skeleton
from ._typing import ArrayLike, FloatArray, IntArray, NJobs
from ._validation import (
    check_bool,
    check_positive_finite,
    check_progress,
    check_same_length,
    raise_if_nonfinite,
    resolve_n_jobs,
)

__all__ = ["paired_evaluation", "PairedEvaluation"]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = [
    "prepare_scores",
    "PAIRED",
    "PAIRED_EVAL",
    "PairedCounts",
    "check_inputs",
    "paired_eval",
]

_SEMANTICS = """
    A pair of samples (i, j) is *rankable* when its labels differ by at least
    ``min_dist``: ``max(label_i, label_j) - min(label_i, label_j) >= min_dist``.
    Integer and bool labels are compared exactly in their own type (int64 and
    uint64 of any magnitude, no conversion to float); float labels as
    pairedeval does, the difference computed in double precision. Scores of
    every dtype are compared exactly. A rankable pair is *correct* when the sample with the
    larger label has the strictly larger score, *tied* when the two scores are
    equal, and *incorrect* otherwise. Tied pairs are never counted as correct,
    and no count depends on the order of the input."""


def prepare_scores(
    scores: ArrayLike, labels: ArrayLike, min_dist: float, scores_name: str = "y_score", labels_name: str = "y_true"
) -> tuple[np.ndarray, np.ndarray, float]:
    """(scores, labels, min_dist) checked; the names are those of the caller's arguments."""
    scores, labels, facts = vectors_and_facts(scores, labels, scores_name, labels_name)
    return scores, labels, _plan_paired(facts, min_dist, False, False, scores_name, labels_name).min_dist


@dataclasses.dataclass(frozen=True)
class PairedPlan:
    """The checked options: the label separation, whether to compute the variance, whether to warn."""

    min_dist: float
    with_variance: bool
    warn: bool


@dataclasses.dataclass(frozen=True)
class PairedCounts:
    """Totals (rankable, correct, tied, incorrect) and, when the plan asks for the variance,
    ``sum(f_i * g_i**2)`` (see auc_components)."""

    counts: tuple[int, int, int, int]
    weighted_square_sum: float | None = None


def _plan_paired(
    facts: PairedFacts,
    min_dist: float,
    variance: bool | None = False,
    warn: bool = False,
    scores_name: str = "y_score",
    labels_name: str = "y_true",
) -> PairedPlan:
    """Every value check of paired evaluation, in order; the names are those of the caller's arguments."""
    min_dist = check_positive_finite(min_dist, "min_dist")
    raise_if_nonfinite(facts.scores_nonfinite, scores_name)
    raise_if_nonfinite(facts.labels_nonfinite, labels_name)
    with_variance = wants_variance(facts.n_samples, variance)
    return PairedPlan(min_dist, with_variance, check_bool(warn, "warn"))


_INTERVAL_NOTES = """
    The interval is ``auc -+ z * se``, normal approximation, clipped to
    [0, 1]. Its variance is the U-statistic (DeLong) estimate with
    per-sample components: sample ``i`` has ``r_i`` rankable partners and
    ``credit_i`` correct plus half its tied pairs, ``g_i = credit_i - auc * r_i``
    and ``Var(auc) = sum(f_i * g_i**2) / n_rankable**2``.

    * Binary labels (two distinct values): ``f_i = m / (m - 1)`` for the ``m``
      samples of ``i``'s class, which is exactly DeLong et al. (1988):
      ``S10 / m + S01 / n`` with the placement values' variances (ddof 1),
      class sizes held fixed. With a class of one sample the variance is
      undefined (NaN, and the interval NaN with a warning), not zero.
    * Ordinal and real-valued labels: ``f_i = n / (n - 1)``, the delta-method
      variance of a ratio of one-sample U-statistics (Harrell's C, as in
      Pencina & D'Agostino 2004): the samples are treated as independent
      draws of (label, score) and ``min_dist`` as fixed. It is the variance
      of the concordance probability over rankable pairs, not of any single
      binary AUC."""


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PairedEvaluation(Result):
    """Pair counts of one model on one test set.

    Attributes
    ----------
    n_rankable, n_correct, n_tied, n_incorrect : int
        Counts of unordered pairs; ``n_correct + n_tied + n_incorrect == n_rankable``.
    auc : float
        ``(n_correct + n_tied / 2) / n_rankable``: ties count one half. For
        binary labels and ``0 < min_dist <= 1`` this is the ROC AUC. NaN when
        nothing is rankable.
    min_dist : float
        The label separation that made a pair rankable.

    Notes
    -----
    The result keeps the variance of ``auc`` (one float, or None when it was
    not computed) for :meth:`confidence_interval`, never the inputs.
    """

    n_rankable: int
    n_correct: int
    n_tied: int
    n_incorrect: int
    min_dist: float
    if TYPE_CHECKING:  # an attribute to type checkers; at run time an InitVar (see Result)
        _variance: float | None = None
    else:
        _variance: dataclasses.InitVar[float | None] = None

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Confidence interval for ``auc`` (DeLong's for binary labels).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Nominal coverage, in (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``.low`` and ``.high`` (NaN when nothing is rankable or the
            variance is undefined); unpacks as ``(low, high)``.

        Raises
        ------
        ValueError
            When the variance was not computed: :func:`paired_evaluation`
            computes it by default only up to 100,000 samples (it needs
            per-sample counts; see its ``variance``); pass ``variance=True``
            there for larger inputs.

        Notes
        -----
        {interval_notes}
        """
        if self._variance is None:
            raise ValueError(
                "the variance of auc was not computed (paired_evaluation computes it by default only up to "
                f"{CHEAP_VARIANCE_SAMPLES} samples); call paired_evaluation(..., variance=True)"
            )
        if math.isnan(self._variance) and not math.isnan(self.auc):
            warn_undefined_variance()
        return normal_interval(self.auc, self._variance, confidence_level, 0.0, 1.0)

    @property
    def auc(self) -> float:
        return float(auc_of_counts((self.n_rankable, self.n_correct, self.n_tied, self.n_incorrect)))

    @property
    def statistic(self) -> float:
        """The estimate, ``auc``, under SciPy's name (what :func:`bootstrap` resamples)."""
        return self.auc

    if confidence_interval.__doc__:  # None under python -OO
        confidence_interval.__doc__ = confidence_interval.__doc__.replace(
            "{interval_notes}", _INTERVAL_NOTES.strip().replace("\n    ", "\n        ")
        )

    def __repr__(self) -> str:
        return (
            f"PairedEvaluation(n_rankable={self.n_rankable}, n_correct={self.n_correct}, "
            f"n_tied={self.n_tied}, n_incorrect={self.n_incorrect}, auc={self.auc:.6g}, min_dist={self.min_dist})"
        )


@routed
def paired_eval(scores: ArrayLike, labels: ArrayLike, min_dist: float = 0.5) -> tuple[int, int]:
    """Count rankable pairs and correctly ranked pairs (drop-in for ``pairedeval``).

    Parameters
    ----------
    scores : array_like, shape (n,) or (n, 1)
        Prediction scores of any real dtype.
    labels : array_like, shape (n,) or (n, 1)
        True labels (binary, ordinal or real-valued; bool and unsigned
        integers are handled without wraparound).
    min_dist : float, default 0.5
        Labels must differ by at least this much for a pair to be rankable.
        0.5 suits integer labels (binary, ordinal); for real-valued labels use
        the expected measurement noise.
    Returns
    -------
    (n_rankable, n_correct) : tuple of int
        Identical to ``pairedeval.paired_eval`` whenever the scores have no
        ties. Divide the second by the first for an AUC estimate.

    Notes
    -----
    {semantics}

    Runs on every usable core (see :func:`pairmetrics.paired_evaluation`'s ``n_jobs``).

    ``pairedeval`` breaks score ties by the order of ``np.argsort``, so its
    answer can change when the input is shuffled; here a tied pair is never
    correct. Use :func:`paired_evaluation` to see how many pairs are tied.
    Runs in O(n log n) time and O(n) extra memory.

    Differences from ``pairedeval`` (deliberate): besides the ties above,
    ``pairedeval`` subtracts labels in their input dtype, so float32 labels
    whose difference lies within float32 rounding of ``min_dist`` can be
    rankable there and not here (or the reverse); here float labels are
    subtracted in double precision and integer labels exactly.

    Examples
    --------
    >>> from pairmetrics.pairedeval import paired_eval
    >>> paired_eval([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    (4, 3)
    """
    # Counts only: no per-sample pass for a variance nobody reads.
    scores, labels, facts = vectors_and_facts(scores, labels, "scores", "labels")

    def count(plan: PairedPlan) -> PairedCounts:
        return PairedCounts(
            pair_totals(_core.paired_counts(scores, labels, plan.min_dist, False, resolve_n_jobs(None)))
        )

    return PAIRED_EVAL.run(count, facts, min_dist, False, False, "scores", "labels")


def _finish_paired_eval(plan: PairedPlan, counts: PairedCounts) -> tuple[int, int]:
    return int(counts.counts[0]), int(counts.counts[1])


def _finish_paired(plan: PairedPlan, counts: PairedCounts) -> PairedEvaluation:
    return evaluation_from_counts(counts.counts, plan.min_dist, plan.warn, counts.weighted_square_sum)


PAIRED = Skeleton("paired_evaluation", _plan_paired, _finish_paired)
PAIRED_EVAL = Skeleton("paired_eval", _plan_paired, _finish_paired_eval)


if paired_eval.__doc__:  # None under python -OO
    paired_eval.__doc__ = paired_eval.__doc__.replace("{semantics}", _SEMANTICS.strip())


def check_inputs(
    scores: Any, labels: Any, min_dist: float, scores_name: str = "y_score", labels_name: str = "y_true"
) -> float:
    """The rules on 1-D scores and labels (numpy or Dask) besides finiteness; returns min_dist."""
    check_same_length(scores, labels, scores_name, labels_name)
    return check_positive_finite(min_dist, "min_dist")


def evaluation_from_counts(
    counts: tuple[int, int, int, int], min_dist: float, warn: bool, weighted_square_sum: Any = None
) -> PairedEvaluation:
    """The PairedEvaluation of totals (rankable, correct, tied, incorrect); with the sum of
    ``f_i g_i**2`` (see auc_components) it carries the variance of auc."""
    rankable, correct, tied, incorrect = counts
    if rankable == 0 and warn:
        warn_nothing_rankable(", auc is nan")
    var = None
    if weighted_square_sum is not None:
        var = float(variance_of_sum(weighted_square_sum, rankable))
    return PairedEvaluation(rankable, correct, tied, incorrect, min_dist, var)


@overload
def paired_evaluation(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    min_dist: float = 0.5,
    n_jobs: NJobs = None,
    warn: bool = True,
    variance: bool | None = None,
    progress: bool = False,
    groups: None = None,
) -> PairedEvaluation: ...
@overload
def paired_evaluation(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    min_dist: float = 0.5,
    n_jobs: NJobs = None,
    warn: bool = True,
    variance: bool | None = None,
    progress: bool = False,
    groups: ArrayLike,
) -> GroupedPairedEvaluation: ...
@routed
def paired_evaluation(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    min_dist: float = 0.5,
    n_jobs: NJobs = None,
    warn: bool = True,
    variance: bool | None = None,
    progress: bool = False,
    groups: ArrayLike | None = None,
) -> PairedEvaluation | GroupedPairedEvaluation:
    """Pair counts and the concordance (AUC) of one model's scores.

    Parameters
    ----------
    y_true : array_like, shape (n,) or (n, 1)
        True labels (binary, ordinal or real-valued; bool and unsigned
        integers are handled without wraparound); ``n >= 2``, finite values.
    y_score : array_like, shape (n,) or (n, 1)
        Prediction scores of any real dtype, finite.
    min_dist : float, default 0.5
        Labels must differ by at least this much for a pair to be rankable.
        0.5 suits integer labels (binary, ordinal); for real-valued labels use
        the expected measurement noise.
    n_jobs : int, optional
        Threads for the sorts and merge passes: None uses every core this
        process may use (CPU affinity, cgroup quota, lowered by the
        environment variable ``PAIRMETRICS_NUM_THREADS``), ``-1`` too, ``k``
        at most ``k`` (scikit-learn semantics). Inputs below about 10**5
        samples run on one thread. Results never depend on it.
    warn : bool, default True
        Warn when nothing is rankable (``auc`` is then NaN).
    variance : bool, optional
        Also compute the variance of ``auc`` for
        :meth:`PairedEvaluation.confidence_interval`. It needs every sample's
        counts, which the kernel sums exactly as it goes (no per-sample
        arrays): about 1.1-1.7 times the time of the plain counts for labels
        with at most 16 distinct values (binary, ordinal), about 2-3 times for
        real-valued labels (measured at 10**6 and 10**7 samples). None (the
        default) computes it up to 100,000 samples only.
    progress : bool, default False
        Show a progress bar (tqdm, when installed; a Dask progress bar for
        Dask input).
    groups : array_like, shape (n,), optional
        A group key per sample (numbers, strings, any sortable keys; no
        NaN): the result holds every group's counts, ``auc`` and variance,
        only pairs inside a group counting. Not for Dask input.

    Returns
    -------
    PairedEvaluation or GroupedPairedEvaluation
        ``n_rankable``, ``n_correct``, ``n_tied``, ``n_incorrect``, ``auc``.
        ``confidence_interval()`` gives a confidence interval for ``auc``.
        With ``groups``, a :class:`GroupedPairedEvaluation`: the same per
        group (arrays aligned with its sorted ``groups``), their size-weighted
        ``mean`` auc and ``to_frame()``.

    Notes
    -----
    {semantics}

    {groups_notes}

    Examples
    --------
    >>> import pairmetrics as pm
    >>> result = pm.paired_evaluation([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.3, 0.2],
    ...                               groups=["a", "a", "a", "a", "b", "b"])
    >>> result.groups.tolist(), result.auc.tolist(), round(result.mean, 4)
    (['a', 'b'], [0.75, 0.0], 0.5)
    """
    scores, labels, facts = vectors_and_facts(y_score, y_true)
    if groups is not None:
        return PAIRED_GROUPED.run(
            lambda plan: _count_groups(scores, labels, groups, plan, n_jobs, progress), facts, min_dist, variance, warn
        )

    def count(plan: PairedPlan) -> PairedCounts:
        threads = resolve_n_jobs(n_jobs)
        with progress_callback(check_progress(progress), "paired evaluation") as callback:
            if plan.with_variance:  # sums of the per-sample counts: no per-sample arrays
                moments = _core.paired_moments(scores, labels, plan.min_dist, threads, progress=callback)
                return PairedCounts(pair_totals(moments), moment_square_sum(moments))
            counts = _core.paired_counts(scores, labels, plan.min_dist, False, threads, progress=callback)
            return PairedCounts(pair_totals(counts))

    return PAIRED.run(count, facts, min_dist, variance, warn)


@dataclasses.dataclass(frozen=True)
class GroupedPairedCounts:
    """Every group's keys, sizes, counts (n_groups, 4) and, when planned, variance of auc."""

    keys: np.ndarray
    sizes: IntArray
    counts: IntArray
    variance: FloatArray | None


def _count_groups(
    scores: np.ndarray, labels: np.ndarray, groups: ArrayLike, plan: PairedPlan, n_jobs: NJobs, progress: bool
) -> GroupedPairedCounts:
    threads = resolve_n_jobs(n_jobs)
    progress = check_progress(progress)
    keys, codes = factorize_groups(groups, labels.shape[0])
    sizes = np.bincount(codes, minlength=keys.shape[0]).astype(np.int64)
    counts, per_sample = grouped_pair_counts(
        scores, labels, plan.min_dist, codes, keys.shape[0], plan.with_variance, threads, progress, "paired evaluation"
    )
    variance = grouped_auc_variance(labels, counts, per_sample, sizes) if plan.with_variance else None
    return GroupedPairedCounts(keys, sizes, counts, variance)


def _finish_grouped(plan: PairedPlan, grouped: GroupedPairedCounts) -> GroupedPairedEvaluation:
    counts = grouped.counts
    return grouped_result(
        GroupedPairedEvaluation,
        grouped.keys,
        grouped.sizes,
        plan.warn,
        n_rankable=counts[:, 0],
        n_correct=counts[:, 1],
        n_tied=counts[:, 2],
        n_incorrect=counts[:, 3],
        auc=auc_of_counts(counts),
        variance=grouped.variance,
        min_dist=plan.min_dist,
    )


PAIRED_GROUPED = Skeleton("paired_evaluation(groups=)", _plan_paired, _finish_grouped)


if paired_evaluation.__doc__:  # None under python -OO
    paired_evaluation.__doc__ = paired_evaluation.__doc__.replace("{semantics}", _SEMANTICS.strip()).replace(
        "{groups_notes}", GROUPS_NOTES.strip()
    )
