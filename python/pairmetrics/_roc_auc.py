"""ROC AUC with scikit-learn's signature and results (drop-in for ``sklearn.metrics.roc_auc_score``).

The checks, the target type and the assembly of a result from counts are
seams (names without a leading underscore) shared with the Dask path in
:mod:`pairmetrics.dask.roc_auc`, which computes the same numbers on a cluster.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from . import _core
from ._groups import GROUPS_NOTES, GroupedRocAuc, factorize_groups, grouped_result
from ._labels import (
    as_labels,
    as_scores,
    as_weights,
    binary_auc_defined,
    binary_auc_value,
    binary_scores,
    check_sample_counts,
    is_integral,
    is_partial,
    mcclish,
    one_hot,
    target_type,
    unique_labels,
)
from ._pairs import grouped_auc_variance, grouped_pair_counts, wants_variance
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, FloatArray, FloatOrArray
from ._validation import (
    Nonfinite,
    check_choice,
    check_real,
    first_nonfinite_entry,
    raise_if_nonfinite,
    resolve_n_jobs,
)

__all__ = ["roc_auc_score"]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = [
    "AreaCounts",
    "AverageCounts",
    "AverageFacts",
    "BinaryFacts",
    "ROC_AUC",
    "ROC_AUC_AVERAGE",
    "ROC_AUC_MULTICLASS",
    "MulticlassCounts",
    "MulticlassFacts",
    "UNWEIGHTED",
    "WeightFacts",
    "auc_sums",
    "check_indicator",
    "check_options",
    "problem_kind",
    "rows_sum_to_one",
    "sample_aucs",
    "weighted_average_is_empty",
]


# --------------------------------------------------------------------------- checks (numpy or Dask arrays)


def check_options(average: str | None, multi_class: str, max_fpr: float | None) -> float | None:
    """Validate the options; returns max_fpr as a float (or None)."""
    if average is not None:
        check_choice(average, "average", ("micro", "macro", "samples", "weighted"))
    check_choice(multi_class, "multi_class", ("raise", "ovr", "ovo"))
    if max_fpr is not None:
        max_fpr = check_real(max_fpr, "max_fpr", low=0, low_open=True, high=1)
    return max_fpr


def problem_kind(kind: str, score_shape: tuple[int, ...], max_fpr: float | None, multi_class: str) -> str:
    """'binary', 'multiclass' or 'multilabel' for a target type, or the error scikit-learn raises."""
    if kind == "multiclass" or (kind == "binary" and len(score_shape) == 2 and score_shape[1] > 2):
        if max_fpr is not None and max_fpr != 1.0:
            raise ValueError(
                "Partial AUC computation not available in multiclass setting, 'max_fpr' must be"
                f" set to `None`, received `max_fpr={max_fpr}` instead"
            )
        if multi_class == "raise":
            raise ValueError("multi_class must be in ('ovo', 'ovr') for multi-class y_true")
        return "multiclass"
    if kind == "binary":
        return "binary"
    if kind != "multilabel-indicator":
        raise ValueError(f"y_true: {kind} format is not supported")
    return "multilabel"


def check_indicator(uniques: np.ndarray, score_shape: tuple[int, ...]) -> None:
    if not (np.isin(uniques, (0, 1)).all() or np.isin(uniques, (-1, 1)).all()):
        raise ValueError(f"y_true: multilabel indicator values must be 0/1 (or -1/1), got {uniques.tolist()}")
    if len(score_shape) != 2:
        raise ValueError(
            f"y_score must be 2-D (n_samples, n_labels) for multilabel y_true, got shape {tuple(score_shape)}"
        )


def check_indicator_shapes(true_shape: tuple[int, ...], score_shape: tuple[int, ...]) -> None:
    if tuple(true_shape) != tuple(score_shape):
        raise ValueError(
            f"y_true has shape {tuple(true_shape)} but y_score has shape {tuple(score_shape)}; they must match"
        )


def check_multiclass(score_shape: tuple[int, ...], probabilities: bool, average: str | None, multi_class: str) -> None:
    """The multi-class checks on y_score and the options; ``probabilities``: every row sums to 1."""
    if len(score_shape) != 2:
        raise ValueError(
            "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple classes. "
            f"Got `y_score.shape={tuple(score_shape)}`."
        )
    if not probabilities:
        raise ValueError(
            "Target scores (y_score) need to be probabilities for multiclass roc_auc, "
            "i.e. they should sum up to 1.0 over classes"
        )
    options: tuple[str | None, ...] = ("macro", "weighted", None)
    if multi_class == "ovr":
        options = ("micro",) + options
    if average not in options:
        raise ValueError(f"average must be one of {options} for multiclass problems")
    if average is None and multi_class == "ovo":
        raise NotImplementedError("average=None is not implemented for multi_class='ovo'.")


def rows_sum_to_one(scores: np.ndarray, dtype: np.dtype[Any] | None = None) -> bool:
    """scikit-learn's probability test of multi-class scores (one block of rows suffices); ``dtype``: the
    dtype the caller's scores came in, which the sums are taken in (float16 scores are read as float32)."""
    return bool(np.allclose(1, scores.sum(axis=1, dtype=dtype)))


def multiclass_classes(labels: Any, uniques: np.ndarray, n_columns: int) -> np.ndarray:
    """The classes (sorted), from ``labels`` or the distinct values of y_true, checked against y_score."""
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim == 2 and labels.shape[1] == 1:
            labels = labels[:, 0]
        if labels.ndim != 1:
            raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
        classes = np.unique(labels)
        if len(classes) != len(labels):
            raise ValueError("Parameter 'labels' must be unique")
        if not np.array_equal(classes, labels):
            raise ValueError("Parameter 'labels' must be ordered")
        if len(classes) != n_columns:
            raise ValueError(
                f"Number of given labels, {len(classes)}, not equal to the number of columns in 'y_score', {n_columns}"
            )
        if len(np.setdiff1d(uniques, classes)):
            raise ValueError("'y_true' contains labels not in parameter 'labels'")
        return classes
    if len(uniques) != n_columns:
        raise ValueError("Number of classes in y_true not equal to the number of columns in 'y_score'")
    return uniques


def check_ovo_weight(multi_class: str, weighted: bool) -> None:
    if multi_class == "ovo" and weighted:
        raise ValueError(
            "sample_weight is not supported for multiclass one-vs-one ROC AUC, 'sample_weight' must be None in this case."
        )


# --------------------------------------------------------------------------- assembly from counts


def auc_sums(aucs: Any, weight: np.ndarray | None) -> tuple[float, float, bool]:
    """(sum of weighted AUCs, sum of weights, any weight nonzero) of a weighted average of AUCs; AUCs of zero
    weight count as 0 (so a NaN of a weightless label drops out). Sums of blocks add up."""
    aucs = np.asarray(aucs, dtype=np.float64)
    if weight is None:
        return float(aucs.sum()), float(aucs.size), True
    aucs = np.where(weight == 0, 0.0, aucs)
    return float(np.multiply(aucs, weight).sum()), float(np.sum(weight)), bool(np.any(weight))


def average_from_sums(total: float, weight_total: float, any_weight: bool) -> float:
    if not any_weight:  # scikit-learn ends in numpy's ZeroDivisionError here
        raise ValueError("sample_weight is zero for every sample: the 'samples' average is undefined")
    return float(total / weight_total)


def average_label_aucs(aucs: FloatArray, average: str | None, average_weight: np.ndarray | None) -> FloatOrArray:
    """The label (or class) AUCs averaged as ``average`` says (None: the array itself)."""
    if average is None:
        return aucs
    return average_from_sums(*auc_sums(aucs, average_weight))


def weighted_average_is_empty(label_weight: np.ndarray) -> bool:
    """The 'weighted' average of labels without positive weight is 0 (scikit-learn's rule)."""
    return bool(np.isclose(np.sum(label_weight), 0))


def ovo_average(pair_aucs: list[float], prevalence: list[float], average: str | None) -> float:
    """Hand & Till (2001): the mean over pairs of classes present in y_true."""
    return float(np.average(pair_aucs, weights=prevalence if average == "weighted" else None))


# --------------------------------------------------------------------------- one binary AUC: plan -> count -> finish


@dataclass(frozen=True, slots=True)
class WeightFacts:
    """What the checks of sample_weight need: its first non-finite entry, and (smallest weight, index of the
    first negative one) when a weight is negative."""

    nonfinite: Nonfinite
    negative: tuple[float, int] | None


UNWEIGHTED = WeightFacts(None, None)


def weight_facts(weight: np.ndarray | None) -> WeightFacts:
    """The :class:`WeightFacts` of in-memory weights."""
    if weight is None:
        return UNWEIGHTED
    nonfinite = first_nonfinite_entry(weight)
    below = weight < 0
    negative = (float(weight.min()), int(np.argmax(below))) if nonfinite is None and below.any() else None
    return WeightFacts(nonfinite, negative)


def check_weight_facts(facts: WeightFacts) -> None:
    """Finite and non-negative (when: see :func:`binary_auc_defined`)."""
    raise_if_nonfinite(facts.nonfinite, "sample_weight")
    if facts.negative is not None:
        minimum, first_index = facts.negative
        raise ValueError(f"sample_weight must be non-negative, got {minimum} (first at index {first_index})")


class BinaryFacts(NamedTuple):
    """The facts of one binary AUC: the rows of each class, whether any weight is nonzero, the weights' facts."""

    n_positive: int
    n_negative: int
    any_weight: bool
    weights: WeightFacts


class BinaryPlan(NamedTuple):
    """Whether the AUC is defined (both classes present) and the false positive rate the area stops at."""

    defined: bool
    max_fpr: float | None

    @property
    def area_fpr(self) -> float:
        """The false positive rate the counted area runs to (1: the whole curve)."""
        return self.max_fpr if self.max_fpr is not None and is_partial(self.max_fpr) else 1.0


class AreaCounts(NamedTuple):
    """The area under the curve up to the plan's false positive rate, normalised by the class weight totals
    (NaN unless both are positive), and whether each class has positive weight."""

    area: float
    positive_weight: bool
    negative_weight: bool


def _plan_binary(facts: BinaryFacts, max_fpr: float | None) -> BinaryPlan:
    weights = facts.weights
    check_weights = None if weights is UNWEIGHTED else lambda: check_weight_facts(weights)
    defined = binary_auc_defined(facts.n_positive, facts.n_negative, facts.any_weight, check_weights)
    return BinaryPlan(defined, max_fpr)


def _finish_binary(plan: BinaryPlan, counts: AreaCounts | None) -> float:
    if counts is None:
        return np.nan
    return binary_auc_value(counts.area, float(counts.positive_weight), float(counts.negative_weight), plan.max_fpr)


ROC_AUC = Skeleton("roc_auc_score", _plan_binary, _finish_binary)


# --------------------------------------------------------------------------- in memory


def _binary_auc(
    positive: np.ndarray,
    score: np.ndarray,
    weight: np.ndarray | None,
    max_fpr: float | None,
    sample_weight: np.ndarray | None = None,
) -> float:
    """One binary AUC: positive is a uint8 0/1 vector, score a 1-D view. ``sample_weight``: the caller's
    weights, when ``weight`` repeats them (the micro average), so that errors give the caller's index."""
    n_positive = int(np.count_nonzero(positive))
    any_weight = weight is None or bool(np.any(weight))
    facts = BinaryFacts(
        n_positive,
        positive.size - n_positive,
        any_weight,
        weight_facts(weight if sample_weight is None else sample_weight),
    )
    return ROC_AUC.run(lambda plan: count_area_in_memory(positive, score, weight, plan), facts, max_fpr)


def count_area_in_memory(
    positive: np.ndarray, score: np.ndarray, weight: np.ndarray | None, plan: BinaryPlan
) -> AreaCounts | None:
    """The in-memory counter: the compiled kernel's area and class weight totals."""
    if not plan.defined:
        return None
    r = _core.roc_auc(score, positive, weight, plan.area_fpr, resolve_n_jobs(None))
    area, total_pos, total_neg = (r[k] for k in ("area", "positive_total", "negative_total"))
    any_pos, any_neg = bool(total_pos > 0), bool(total_neg > 0)
    return AreaCounts(float(area) if any_pos and any_neg else np.nan, any_pos, any_neg)


def sample_aucs(y01: np.ndarray, y_score: np.ndarray, max_fpr: float | None) -> FloatArray:
    """The binary AUC of every row (the 'samples' average of a multi-label problem)."""
    rows = np.ascontiguousarray(y01), np.ascontiguousarray(y_score)
    return np.array([_binary_auc(rows[0][i], rows[1][i], None, max_fpr) for i in range(rows[0].shape[0])])


@dataclass(frozen=True)
class AverageFacts:
    """What the checks of an average over labels need: the indicator's and the scores' shapes and, for the
    'samples' average, the sample weights' facts."""

    true_shape: tuple[int, ...]
    score_shape: tuple[int, ...]
    weights: WeightFacts


@dataclass(frozen=True)
class AveragePlan:
    average: str | None
    max_fpr: float | None


@dataclass(frozen=True, eq=False)
class AverageCounts(LayerEqual):
    """The counts of one average: the micro AUC; the 'samples' sums (see auc_sums); or each label's AUC
    (None when the 'weighted' average has no weight) and the label weights of the 'weighted' average."""

    micro: float | None = None
    sums: tuple[float, float, bool] | None = None
    aucs: FloatArray | None = None
    label_weight: np.ndarray | None = None

    RTOL = 1e-12  # float sums added in another order on the cluster


def _plan_average(facts: AverageFacts, average: str | None, max_fpr: float | None) -> AveragePlan:
    """The checks of an average over the columns of a 0/1 indicator (each AUC plans its own)."""
    check_indicator_shapes(facts.true_shape, facts.score_shape)
    if average == "samples":
        check_weight_facts(facts.weights)
    return AveragePlan(average, max_fpr)


def _finish_average(plan: AveragePlan, counts: AverageCounts) -> FloatOrArray:
    if counts.micro is not None:
        return counts.micro
    if counts.sums is not None:
        return average_from_sums(*counts.sums)
    if counts.aucs is None:  # the 'weighted' average of labels without weight
        return 0.0
    return average_label_aucs(counts.aucs, plan.average, counts.label_weight)


# scikit-learn's _average_binary_score over the columns of an indicator: micro, samples, macro, weighted, None
ROC_AUC_AVERAGE = Skeleton("roc_auc_score(average=)", _plan_average, _finish_average)


def _average_binary(
    y01: np.ndarray, y_score: np.ndarray, average: str | None, weight: np.ndarray | None, max_fpr: float | None
) -> FloatOrArray:
    """scikit-learn's ``_average_binary_score`` over the columns of a 0/1 indicator matrix."""
    if y_score.ndim == 1:
        y_score = y_score[:, None]

    def count(plan: AveragePlan) -> AverageCounts:
        if average == "micro":
            score_weight = None if weight is None else np.repeat(weight, y01.shape[1])
            rows = np.ascontiguousarray(y01).ravel(), np.ascontiguousarray(y_score).ravel()
            return AverageCounts(micro=_binary_auc(*rows, score_weight, max_fpr, weight))
        if average == "samples":
            return AverageCounts(sums=auc_sums(sample_aucs(y01, y_score, max_fpr), weight))
        label_weight = None
        if average == "weighted":
            label_weight = (
                (y01 * weight[:, None]).sum(axis=0) if weight is not None else y01.sum(axis=0, dtype=np.int64)
            )
            if weighted_average_is_empty(label_weight):
                return AverageCounts(label_weight=label_weight)
        aucs = [_binary_auc(y01[:, c], y_score[:, c], weight, max_fpr) for c in range(y01.shape[1])]
        return AverageCounts(aucs=np.array(aucs, dtype=np.float64), label_weight=label_weight)

    weights = weight_facts(weight) if average == "samples" else UNWEIGHTED
    return ROC_AUC_AVERAGE.run(count, AverageFacts(y01.shape, y_score.shape, weights), average, max_fpr)


@overload
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Literal["micro", "macro", "samples", "weighted"] = "macro",
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: ArrayLike | None = None,
    groups: None = None,
) -> float: ...
@overload
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: None,
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: ArrayLike | None = None,
    groups: None = None,
) -> FloatOrArray: ...
@overload
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: str | None = "macro",
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: ArrayLike | None = None,
    groups: ArrayLike,
) -> GroupedRocAuc: ...
@routed
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: str | None = "macro",
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: ArrayLike | None = None,
    groups: ArrayLike | None = None,
) -> FloatOrArray | GroupedRocAuc:
    """Area under the ROC curve, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.roc_auc_score`: binary, multi-label
    indicator and multi-class (``ovr``, ``ovo``) input, every ``average``,
    ``sample_weight`` and ``max_fpr`` (McClish-corrected partial AUC). Each
    binary AUC comes from a compiled kernel in O(n log n): positives and
    negatives sorted by score and merged once, weights summed per tied score.

    Parameters
    ----------
    y_true : array_like, shape (n,) or (n, n_labels)
        True labels: binary (any two values; the larger one, in sorted order,
        is positive), multi-class, or a multi-label indicator matrix of 0/1.
    y_score : array_like, shape (n,) or (n, n_classes)
        Scores; higher means more likely positive. For multi-class input,
        probabilities that sum to one over the classes.
    average : {"macro", "micro", "weighted", "samples"} or None, default "macro"
        Averaging over labels (multi-label) or classes (multi-class); ignored
        for binary input. None returns the per-label array.
    sample_weight : array_like, shape (n,), optional
        Sample weights (zero weights take no part).
    max_fpr : float in (0, 1], optional
        Standardised partial AUC over ``[0, max_fpr]`` (binary and
        multi-label only).
    multi_class : {"raise", "ovr", "ovo"}, default "raise"
        One-vs-rest or one-vs-one (Hand & Till) for multi-class input.
    labels : array_like, optional
        The classes of multi-class input, in the order of ``y_score``'s columns.
    groups : array_like, shape (n,), optional
        A group key per sample (numbers, strings, any sortable keys; no
        NaN), binary ``y_true`` only: the AUC of every group in one call
        (with ``sample_weight`` and ``max_fpr`` as usual). Not for Dask input.

    Returns
    -------
    float or ndarray or GroupedRocAuc
        As scikit-learn: NaN, with an ``UndefinedMetricWarning``, when a
        binary problem has only one class. With ``groups``, a
        :class:`GroupedRocAuc`: each group's ``auc`` (NaN, with one
        ``RuntimeWarning`` for all of them, where a group has one class),
        aligned with its sorted ``groups``, the size-weighted ``mean`` and
        ``to_frame()``.

    Raises
    ------
    ValueError
        For the inputs scikit-learn refuses (bad shapes, unsupported target
        types, scores that are not probabilities in the multi-class case,
        inconsistent ``labels``, bad options), and the differences in Notes.
    NotImplementedError
        ``average=None`` with ``multi_class="ovo"``, as scikit-learn.

    Notes
    -----
    The AUC is the trapezoidal area under the ROC curve, which equals the
    weighted Mann-Whitney statistic with tied scores counted one half; the
    results agree with scikit-learn to rounding (1e-12). Every usable core
    sorts (see ``PAIRMETRICS_NUM_THREADS`` and ``threadpoolctl``); the result
    never depends on it.

    Deliberate differences from scikit-learn, each tested against it (the
    scikit-learn guide page explains them): negative, NaN or infinite weights
    are refused; -1/1 multi-label indicators weigh a label by its positives
    under ``average="weighted"``; a mismatched multi-label shape is an error.

    Probabilities of multi-class input are checked to sum to one in their own
    dtype (a float16 row summing to 1 in float16 is accepted), as in
    scikit-learn, although float16 scores are read as float32.

    Dask arrays, DataFrame columns and Series (numeric or bool ``y_true``)
    are computed on the cluster, never gathered: one shuffle by score range
    per binary AUC, with the same checks, warnings and numbers (sums may
    differ in the last bits); see :mod:`pairmetrics.dask.roc_auc`.

    {groups_notes}

    Examples
    --------
    >>> from pairmetrics import roc_auc_score
    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> per_site = roc_auc_score([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.3, 0.9],
    ...                          groups=["x", "x", "x", "x", "y", "y"])
    >>> per_site.auc.tolist(), round(per_site.mean, 4)
    ([0.75, 1.0], 0.8333)
    """
    max_fpr = check_options(average, multi_class, max_fpr)
    y = as_labels(y_true)
    scores, score_dtype = as_scores(y_score)
    check_sample_counts(y.shape[0], scores.shape[0])
    weight = as_weights(sample_weight, y.shape[0])
    uniques = unique_labels(y)
    kind = problem_kind(
        target_type(uniques, y.ndim == 1 or y.shape[1] == 1, is_integral(uniques)), scores.shape, max_fpr, multi_class
    )
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if kind == "multiclass" and groups is None:
        return _multiclass(y, scores, labels, multi_class, average, weight, score_dtype)
    if kind == "binary":
        positive, scores = _positive(y, uniques), binary_scores(scores)
        if groups is not None:
            return _grouped_auc(positive, scores, weight, max_fpr, groups)
        return _binary_auc(positive, scores, weight, max_fpr)
    if groups is not None:
        raise ValueError(f"groups= takes binary y_true only, got {kind} y_true")
    check_indicator(uniques, scores.shape)
    return _average_binary((y == 1).view(np.uint8), scores, average, weight, max_fpr)


def _positive(y: np.ndarray, uniques: np.ndarray) -> np.ndarray:
    """The uint8 0/1 positives of binary y_true (the larger of its two values; none with one value)."""
    if uniques.size != 2:
        return np.zeros(y.shape[0], np.uint8)
    if y.dtype == np.bool_:
        return y.view(np.uint8)
    return (y == uniques[-1]).view(np.uint8)


@dataclass(frozen=True)
class GroupedAreaCounts:
    """Per group (in the order of ``keys``): rows, positives, the kernel's area and class weight totals, and
    the DeLong variance when it is computed."""

    keys: np.ndarray
    sizes: np.ndarray
    n_positive: np.ndarray
    area: np.ndarray
    total_positive: np.ndarray
    total_negative: np.ndarray
    variance: np.ndarray | None


def _plan_grouped(weights: WeightFacts, max_fpr: float | None) -> BinaryPlan:
    """Every group's AUC is counted, so the weights are checked whatever the classes."""
    check_weight_facts(weights)
    return BinaryPlan(True, max_fpr)


def _finish_grouped(plan: BinaryPlan, counts: GroupedAreaCounts) -> GroupedRocAuc:
    area = counts.area
    if is_partial(plan.max_fpr):
        area = mcclish(area, plan.max_fpr)
    area = np.where((counts.total_positive > 0) & (counts.total_negative > 0), area, np.nan)  # a class without weight
    return grouped_result(
        GroupedRocAuc,
        counts.keys,
        counts.sizes,
        True,
        auc=area,
        n_positive=counts.n_positive,
        n_negative=counts.sizes - counts.n_positive,
        variance=counts.variance,
    )


ROC_AUC_GROUPED = Skeleton("roc_auc_score(groups=)", _plan_grouped, _finish_grouped)


def _grouped_auc(
    positive: np.ndarray, scores: np.ndarray, weight: np.ndarray | None, max_fpr: float | None, groups: ArrayLike
) -> GroupedRocAuc:
    keys, codes = factorize_groups(groups, positive.shape[0], "y_true")

    def count(plan: BinaryPlan) -> GroupedAreaCounts:
        r = _core.grouped_roc_auc(scores, positive, weight, codes, keys.shape[0], plan.area_fpr, resolve_n_jobs(None))
        area, total_pos, total_neg = (r[k] for k in ("area", "positive_total", "negative_total"))
        sizes = np.bincount(codes, minlength=keys.shape[0]).astype(np.int64)
        n_positive = np.bincount(codes, weights=positive, minlength=keys.shape[0]).astype(np.int64)
        variance = None
        if weight is None and not is_partial(plan.max_fpr) and wants_variance(positive.shape[0], None):
            # The AUC of binary labels is paired evaluation's concordance: its DeLong variance per group.
            flags = np.ascontiguousarray(positive, dtype=np.uint8)
            counts, per_sample = grouped_pair_counts(
                scores, flags, 0.5, codes, keys.shape[0], True, resolve_n_jobs(None), False, "ROC AUC"
            )
            variance = grouped_auc_variance(flags, counts, per_sample, sizes)
        return GroupedAreaCounts(keys, sizes, n_positive, area, total_pos, total_neg, variance)

    return ROC_AUC_GROUPED.run(count, weight_facts(weight), max_fpr)


@dataclass(frozen=True, eq=False)
class MulticlassFacts(LayerEqual):
    """What the checks of a multi-class AUC need: the scores' shape, whether every row sums to one, the
    classes present in y_true and whether sample weights were given."""

    score_shape: tuple[int, ...]
    probabilities: bool
    present: np.ndarray
    weighted: bool


@dataclass(frozen=True, eq=False)
class MulticlassPlan(LayerEqual):
    """The classes (``labels`` or those present), one-vs-rest or one-vs-one, and the average."""

    classes: np.ndarray
    multi_class: str
    average: str | None


@dataclass(frozen=True, eq=False)
class MulticlassCounts(LayerEqual):
    """One-vs-rest: the averaged AUC; one-vs-one: each pair of present classes' mean AUC and prevalence."""

    ovr: FloatOrArray | None = None
    pair_aucs: tuple[float, ...] = ()
    prevalence: tuple[float, ...] = ()

    RTOL = 1e-12  # float sums added in another order on the cluster


def _plan_multiclass(facts: MulticlassFacts, labels: Any, multi_class: str, average: str | None) -> MulticlassPlan:
    """The checks of a multi-class AUC, in order."""
    check_multiclass(facts.score_shape, facts.probabilities, average, multi_class)
    classes = multiclass_classes(labels, facts.present, facts.score_shape[1])
    check_ovo_weight(multi_class, facts.weighted)
    return MulticlassPlan(classes, multi_class, average)


def _finish_multiclass(plan: MulticlassPlan, counts: MulticlassCounts) -> FloatOrArray:
    if plan.multi_class == "ovr":
        assert counts.ovr is not None
        return counts.ovr
    return ovo_average(list(counts.pair_aucs), list(counts.prevalence), plan.average)


# one-vs-rest (each class's AUC averaged by ROC_AUC_AVERAGE) or one-vs-one (Hand & Till) multi-class AUC
ROC_AUC_MULTICLASS = Skeleton("roc_auc_score(multi_class=)", _plan_multiclass, _finish_multiclass)


def _multiclass(
    y: np.ndarray,
    scores: np.ndarray,
    labels: Any,
    multi_class: str,
    average: str | None,
    weight: np.ndarray | None,
    score_dtype: np.dtype[Any],
) -> FloatOrArray:
    probabilities = scores.ndim == 2 and rows_sum_to_one(scores, score_dtype)
    facts = MulticlassFacts(scores.shape, probabilities, np.unique(y), weight is not None)

    def count(plan: MulticlassPlan) -> MulticlassCounts:
        encoded = np.searchsorted(plan.classes, y)
        if multi_class == "ovr":
            return MulticlassCounts(
                ovr=_average_binary(one_hot(encoded, len(plan.classes)), scores, average, weight, None)
            )
        pair_aucs, prevalence = [], []
        for a, b in itertools.combinations(np.unique(encoded), 2):
            a_mask, b_mask = encoded == a, encoded == b
            ab = a_mask | b_mask
            prevalence.append(float(np.average(ab)))
            sub = scores[ab]
            a_auc = _binary_auc(a_mask[ab].view(np.uint8), sub[:, a], None, None)
            b_auc = _binary_auc(b_mask[ab].view(np.uint8), sub[:, b], None, None)
            pair_aucs.append((a_auc + b_auc) / 2)
        return MulticlassCounts(pair_aucs=tuple(pair_aucs), prevalence=tuple(prevalence))

    return ROC_AUC_MULTICLASS.run(count, facts, labels, multi_class, average)


if roc_auc_score.__doc__:  # None under python -OO
    roc_auc_score.__doc__ = roc_auc_score.__doc__.replace("{groups_notes}", GROUPS_NOTES.strip())
