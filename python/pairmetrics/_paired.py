"""Paired evaluation: how many rankable pairs of samples a model orders correctly."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _core
from ._groups import (
    GROUPS_NOTES,
    GroupedPairedComparison,
    GroupedPairedEvaluation,
    factorize_groups,
    grouped_result,
    segment_starts,
)
from ._inference import ConfidenceInterval, normal_interval
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._routing import warn as warn_caller
from ._skeleton import Skeleton
from ._typing import ArrayLike, FloatArray, IntArray, NJobs
from ._validation import (
    Nonfinite,
    as_vector,
    check_bool,
    check_positive_finite,
    check_progress,
    check_same_length,
    first_nonfinite_entry,
    raise_if_nonfinite,
    resolve_n_jobs,
)

__all__ = ["paired_evaluation", "PairedEvaluation"]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = [
    "EXACT_INTEGER_LABELS",
    "PAIRED",
    "PAIRED_EVAL",
    "PairedCounts",
    "PairedFacts",
    "auc_components",
    "check_inputs",
    "component_factors",
    "label_extremes",
    "merge_label_extremes",
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


def vectors_and_facts(
    scores: ArrayLike, labels: ArrayLike, scores_name: str = "y_score", labels_name: str = "y_true"
) -> tuple[np.ndarray, np.ndarray, PairedFacts]:
    """(scores, labels) as vectors of one length, and their facts; the names are those of the caller's arguments."""
    scores = as_vector(scores, scores_name, min_length=2)
    labels = as_vector(labels, labels_name, min_length=2)
    check_same_length(scores, labels, scores_name, labels_name)
    # Both arrays go to the kernel in their own dtype (no copy): integer labels
    # are compared exactly there, whatever their size and signedness.
    facts = PairedFacts(labels.shape[0], first_nonfinite_entry(scores), first_nonfinite_entry(labels))
    return scores, labels, facts


@dataclasses.dataclass(frozen=True)
class PairedFacts:
    """What the checks of paired evaluation need to know of its (length-checked) inputs."""

    n_samples: int
    scores_nonfinite: Nonfinite
    labels_nonfinite: Nonfinite


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
                f"{_CHEAP_VARIANCE_SAMPLES} samples); call paired_evaluation(..., variance=True)"
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
        return PairedCounts(_core.paired_counts(scores, labels, plan.min_dist, False, resolve_n_jobs(None)))

    return PAIRED_EVAL.run(count, facts, min_dist, False, False, "scores", "labels")


def _finish_paired_eval(plan: PairedPlan, counts: PairedCounts) -> tuple[int, int]:
    return int(counts.counts[0]), int(counts.counts[1])


def _finish_paired(plan: PairedPlan, counts: PairedCounts) -> PairedEvaluation:
    return evaluation_from_counts(counts.counts, plan.min_dist, plan.warn, counts.weighted_square_sum)


PAIRED = Skeleton("paired_evaluation", _plan_paired, _finish_paired)
PAIRED_EVAL = Skeleton("paired_eval", _plan_paired, _finish_paired_eval)


if paired_eval.__doc__:  # None under python -OO
    paired_eval.__doc__ = paired_eval.__doc__.replace("{semantics}", _SEMANTICS.strip())


# Integer labels below this magnitude, and their differences, are exact in float64.
EXACT_INTEGER_LABELS = 2**52

# Up to this many samples paired_evaluation also computes the variance of auc
# by default (per-sample counts cost up to about 3 times the plain counts).
_CHEAP_VARIANCE_SAMPLES = 100_000


def check_inputs(
    scores: Any, labels: Any, min_dist: float, scores_name: str = "y_score", labels_name: str = "y_true"
) -> float:
    """The rules on 1-D scores and labels (numpy or Dask) besides finiteness; returns min_dist."""
    check_same_length(scores, labels, scores_name, labels_name)
    return check_positive_finite(min_dist, "min_dist")


def wants_variance(n: int, variance: bool | None) -> bool:
    """Whether paired_evaluation computes the variance: on request, else up to _CHEAP_VARIANCE_SAMPLES."""
    return n <= _CHEAP_VARIANCE_SAMPLES if variance is None else check_bool(variance, "variance")


def label_extremes(labels: Any) -> tuple[Any, int, Any, int]:
    """(smallest label, its count, largest label, its count) of a label array (or block)."""
    low, high = labels.min(), labels.max()
    return low, int(np.count_nonzero(labels == low)), high, int(np.count_nonzero(labels == high))


def merge_label_extremes(extremes: Any) -> tuple[Any, int, Any, int]:
    """The label_extremes of the concatenation of arrays from theirs."""
    low = min(e[0] for e in extremes)
    high = max(e[2] for e in extremes)
    return low, sum(e[1] for e in extremes if e[0] == low), high, sum(e[3] for e in extremes if e[2] == high)


def ddof_factor(m: Any) -> Any:
    """``m / (m - 1)``, the ddof-1 factor of ``m`` samples; NaN for a lone sample (a class of one has
    no spread to estimate: the variance is undefined, not zero); elementwise for arrays."""
    m = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(m > 1, m / np.maximum(m - 1, 1), np.where(m == 1, math.nan, 1.0))


def labels_are_binary(extremes: tuple[Any, Any, Any, Any], n: Any) -> Any:
    """Whether labels with these label_extremes (scalars, or arrays per group) take exactly two values."""
    low, n_low, high, n_high = extremes
    return (low != high) & (n_low + n_high == n)


def component_factors(labels: Any, extremes: tuple[Any, int, Any, int], n: int) -> FloatArray:
    """Per-sample ddof factors ``f_i`` of the variance (see _INTERVAL_NOTES) of a label array
    (or block) given the label_extremes of all ``n`` labels: per class for binary labels
    (DeLong), ``n / (n - 1)`` otherwise."""
    low, n_low, high, n_high = extremes
    if labels_are_binary(extremes, n):
        return np.where(labels == low, ddof_factor(n_low), ddof_factor(n_high))
    return np.full(labels.shape[0], float(ddof_factor(n)))


def variance_factors(n_low: int, n_high: int, n: int) -> tuple[float, float, float]:
    """The ddof factors ``f_i`` of the variance (see _INTERVAL_NOTES) of the samples with the
    smallest label, those with the largest (``n_high`` is 0 when every label is equal) and the
    rest, among ``n``: per class for binary labels (DeLong; the rest is then empty and its
    factor NaN), ``n / (n - 1)`` for every sample otherwise."""
    if n_high and n_low + n_high == n:
        return float(ddof_factor(n_low)), float(ddof_factor(n_high)), math.nan
    return (float(ddof_factor(n)),) * 3


def moment_square_sum(counts: tuple[int, int, int, int], groups: Any) -> float:
    """``sum(f_i * g_i**2)`` (the g_i of auc_components) from the kernel's exact sums of the per-sample
    counts, ``(samples, r, q, r*r, q*r, q*q)`` for the samples with the smallest label, the
    largest and the rest (``_core.paired_moments``).

    With ``q_i = 2 * correct_i + tied_i`` and ``Q = 2 * n_correct + n_tied``, ``g_i = (R q_i - Q r_i) / (2 R)``:
    the sum of squares of a group is an exact integer over ``4 R**2``, rounded once.
    """
    rankable, correct, tied, _ = counts
    if not rankable:
        return 0.0
    big_q = 2 * correct + tied
    factors = variance_factors(groups[0][0], groups[1][0], sum(int(g[0]) for g in groups))
    total = 0.0
    for factor, (samples, _, _, rr, qr, qq) in zip(factors, groups):
        if samples:
            numerator = rankable * rankable * qq - 2 * rankable * big_q * qr + big_q * big_q * rr
            total += factor * (numerator / (4 * rankable * rankable))
    return total


def sample_factors(labels: np.ndarray) -> FloatArray:
    """component_factors of a whole label array."""
    return component_factors(labels, label_extremes(labels), labels.shape[0])


def group_factors(labels: np.ndarray, sizes: IntArray) -> FloatArray:
    """component_factors of every group, for labels in the grouped kernels' order (group by group)."""
    starts = segment_starts(sizes)
    low, high = np.minimum.reduceat(labels, starts), np.maximum.reduceat(labels, starts)
    is_low, is_high = labels == np.repeat(low, sizes), labels == np.repeat(high, sizes)
    n_low, n_high = np.add.reduceat(is_low, starts), np.add.reduceat(is_high, starts)
    binary = np.repeat(labels_are_binary((low, n_low, high, n_high), sizes), sizes)
    per_class = np.where(is_low, np.repeat(ddof_factor(n_low), sizes), np.repeat(ddof_factor(n_high), sizes))
    return np.where(binary, per_class, np.repeat(ddof_factor(sizes), sizes))


def warn_undefined_variance() -> None:
    """The warning of an interval or test whose variance is undefined (a class of one sample)."""
    warn_caller("a class of the labels has a single sample: the variance is undefined (nan)", RuntimeWarning)


def warn_nothing_rankable(what: str = "") -> None:
    """The warning of a call where no pair of labels is min_dist apart (pointing at the caller's line)."""
    warn_caller("no pair of labels is min_dist apart: nothing is rankable" + what, RuntimeWarning)


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


def variance_of_sum(weighted_square_sum: Any, rankable: Any) -> Any:
    """``sum(f_i g_i**2) / n_rankable**2`` (elementwise for groups); NaN where nothing is rankable."""
    rankable = np.asarray(rankable, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rankable > 0, np.asarray(weighted_square_sum, dtype=np.float64) / rankable**2, math.nan)


def auc_of_counts(counts: Any) -> Any:
    """``(correct + tied / 2) / rankable`` of counts ``(..., 4)`` (elementwise); NaN where nothing is rankable."""
    counts = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts[..., 0] > 0, (counts[..., 1] + 0.5 * counts[..., 2]) / counts[..., 0], math.nan)


def auc_components(counts: Any, per_sample: tuple[IntArray, ...], sizes: IntArray | None = None) -> FloatArray:
    """``g_i = credit_i - auc * r_i`` from the kernel's per-sample counts; with ``sizes``, counts
    holds one row per group and the per-sample counts are in the grouped kernels' order."""
    rankable, tied, incorrect = per_sample
    evaluation_auc = auc_of_counts(counts)
    if sizes is not None:
        evaluation_auc = np.repeat(evaluation_auc, sizes)
    credit = (rankable - tied - incorrect).astype(np.float64) + 0.5 * tied
    return credit - evaluation_auc * rankable


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
                counts, *label_groups = _core.paired_moments(scores, labels, plan.min_dist, threads, progress=callback)
                return PairedCounts(counts, moment_square_sum(counts, label_groups))
            return PairedCounts(_core.paired_counts(scores, labels, plan.min_dist, False, threads, progress=callback))

    return PAIRED.run(count, facts, min_dist, variance, warn)


def _grouped_counts(
    scores: np.ndarray,
    labels: np.ndarray,
    min_dist: float,
    codes: IntArray,
    n_groups: int,
    per_sample: bool,
    threads: int,
    progress: bool,
    what: str,
) -> tuple[IntArray, tuple[np.ndarray, ...]]:
    """Every group's counts (n_groups, 4) from the grouped kernel, and with per_sample (order,
    rankable, tied, incorrect) in its group order."""
    with progress_callback(progress, what) as callback:
        output = _core.grouped_paired_counts(
            scores, labels, codes, n_groups, min_dist, per_sample, threads, progress=callback
        )
    return output[0].astype(np.int64), tuple(output[1:])


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
    counts, per_sample = _grouped_counts(
        scores, labels, plan.min_dist, codes, keys.shape[0], plan.with_variance, threads, progress, "paired evaluation"
    )
    variance = None
    if plan.with_variance:
        order, rest = per_sample[0], per_sample[1:]
        g = auc_components(counts, rest, sizes)
        weighted = np.add.reduceat(group_factors(labels[order], sizes) * (g * g), segment_starts(sizes))
        variance = variance_of_sum(weighted, counts[:, 0])
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


def grouped_evaluation(
    scores: np.ndarray,
    labels: np.ndarray,
    min_dist: float,
    groups: ArrayLike,
    with_variance: bool,
    threads: int,
    progress: bool,
    warn: bool,
) -> GroupedPairedEvaluation:
    """paired_evaluation with groups of checked inputs (for other capabilities' grouped paths)."""
    plan = PairedPlan(min_dist, with_variance, warn)
    return _finish_grouped(plan, _count_groups(scores, labels, groups, plan, threads, progress))


if paired_evaluation.__doc__:  # None under python -OO
    paired_evaluation.__doc__ = paired_evaluation.__doc__.replace("{semantics}", _SEMANTICS.strip()).replace(
        "{groups_notes}", GROUPS_NOTES.strip()
    )


def grouped_comparison(
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
        _grouped_counts(s, labels, min_dist, codes, keys.shape[0], True, threads, progress, "paired comparison")
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


def difference_test(difference: Any, spread: Any) -> tuple[Any, Any]:
    """(statistic, two-sided normal p-value) of a difference of AUCs whose variance is ``spread``
    (elementwise for groups). Without spread there is no evidence of a difference (statistic 0) when
    the AUCs are equal, and no test (NaN) when they differ; NaN stays NaN."""
    from scipy import stats  # loaded on first use: keeps `import pairmetrics` fast

    difference = np.asarray(difference, dtype=np.float64)
    spread = np.asarray(spread, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A difference with no estimated spread is not proven (see _inference.equality_test): nan.
        z = np.where(
            spread > 0, difference / np.sqrt(np.maximum(spread, 0.0)), np.where(difference == 0, 0.0, math.nan)
        )
    z = np.where(np.isnan(spread) | np.isnan(difference), math.nan, z)
    if np.any((spread <= 0) & (difference != 0)):
        warn_caller(
            "the AUCs differ where their estimated variance is zero (a constant or perfect ranking): the test is "
            "undefined (nan)",
            RuntimeWarning,
        )
    return z, 2 * stats.norm.sf(np.abs(z))
