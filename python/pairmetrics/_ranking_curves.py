"""Binary ranking curves and average precision with scikit-learn's signatures and results.

Drop-ins for ``sklearn.metrics.roc_curve``, ``precision_recall_curve``,
``det_curve`` and ``average_precision_score``. One compiled pass per call:
positives and negatives radix-sorted by score and merged once from the top,
one point per distinct score (exact int64 counts without weights, whatever
the score dtype). The checks are those of :mod:`pairmetrics._labels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from . import _core
from ._groups import GroupedAveragePrecision, factorize_groups, grouped_result
from ._labels import (
    as_labels,
    as_scores,
    as_weights,
    binary_scores,
    check_binary_score_shape,
    check_sample_counts,
    invalid_parameter,
    is_integral,
    one_hot,
    target_type,
    unique_labels,
    warn_undefined,
)
from ._routing import routed, warn
from ._skeleton import Skeleton
from ._typing import ArrayLike, FloatArray, FloatOrArray
from ._validation import Nonfinite, check_finite, first_nonfinite_entry, raise_if_nonfinite, resolve_n_jobs

__all__ = ["average_precision_score", "det_curve", "precision_recall_curve", "roc_curve"]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = [
    "CurveFacts",
    "CurvePoints",
    "DET_CURVE",
    "AVERAGE_PRECISION",
    "PrecisionSums",
    "PRECISION_RECALL_CURVE",
    "ROC_CURVE",
    "check_average",
    "check_pos_label",
    "drop_intermediate_points",
]

_AVERAGES = ("micro", "macro", "samples", "weighted")
NO_POSITIVE = "No positive class found in y_true, recall is set to one for all thresholds."


def label_type(y: np.ndarray, uniques: np.ndarray) -> str:
    """scikit-learn's ``type_of_target`` of labels (numbers or strings), given their distinct values."""
    return target_type(uniques, y.ndim == 1 or y.shape[1] == 1, is_integral(uniques))


def check_curve_kind(kind: str, pos_label: Any) -> None:
    """The curves take binary y_true, or multi-class y_true with a pos_label."""
    if not (kind == "binary" or (kind == "multiclass" and pos_label is not None)):
        raise ValueError(f"{kind} format is not supported")


def resolve_pos_label(pos_label: Any, uniques: np.ndarray) -> Any:
    """scikit-learn's rule: without pos_label, y_true must take values in {0, 1} or {-1, 1} (or one of them)."""
    if pos_label is not None:
        return pos_label
    values = uniques.tolist()
    allowed = ([0, 1], [-1, 1], [0], [-1], [1])
    if uniques.dtype.kind in "OUS" or not any(values == a for a in allowed):
        shown = ", ".join(repr(v) for v in values)
        raise ValueError(
            f"y_true takes value in {{{shown}}} and pos_label is not specified: either make y_true take value "
            "in {0, 1} or {-1, 1} or pass pos_label explicitly."
        )
    return 1


def _positive_of(y: np.ndarray, pos_label: Any) -> np.ndarray:
    """uint8 0/1: y_true equal to pos_label."""
    if y.dtype == np.bool_ and isinstance(pos_label, (bool, np.bool_, int, np.integer)) and pos_label in (0, 1):
        return y.view(np.uint8) if pos_label else (~y).view(np.uint8)
    return np.asarray(y == pos_label, dtype=np.bool_).view(np.uint8)


def _checked_weights(sample_weight: ArrayLike | None, n: int) -> FloatArray | None:
    weight = as_weights(sample_weight, n)
    if weight is not None:
        check_finite(weight, "sample_weight")
    return weight


def zero_weights_error() -> ValueError:
    """The error of a binary problem whose weights are all zero (scikit-learn refuses it)."""
    return ValueError("sample_weight: Sample weights must contain at least one non-zero number.")


def _check_some_weight(weight: FloatArray | None) -> None:
    if weight is not None and not weight.any():
        raise zero_weights_error()


@dataclass(frozen=True, eq=False)
class CurveFacts:
    """The facts a binary curve's checks need: the target type and distinct labels of y_true, the shape of
    y_score, the first non-finite score and weight, whether every weight is zero."""

    kind: str
    uniques: np.ndarray
    score_shape: tuple[int, ...]
    scores_nonfinite: Nonfinite
    weights_nonfinite: Nonfinite
    all_weights_zero: bool


@dataclass(frozen=True)
class CurvePlan:
    """The positive label, the intermediate points the counter leaves out ('none', 'roc' or 'tps'), the
    number of distinct labels, and whether det_curve drops points itself."""

    pos_label: Any
    drop: str
    n_classes: int
    det_drop: bool = False


@dataclass(frozen=True, eq=False)
class CurvePoints:
    """The curve's points, one per distinct score kept, decreasing: false and true positive weights and the
    thresholds (in the scores' dtype)."""

    fps: FloatArray
    tps: FloatArray
    thresholds: np.ndarray

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CurvePoints) and all(
            np.array_equal(a, b) and a.dtype == b.dtype
            for a, b in zip((self.fps, self.tps, self.thresholds), (other.fps, other.tps, other.thresholds))
        )

    __hash__ = None  # type: ignore[assignment]


def _check_curve_values(facts: CurveFacts) -> None:
    """Finite scores of a binary problem's shape, finite weights, and some weight nonzero."""
    raise_if_nonfinite(facts.scores_nonfinite, "y_score")
    check_binary_score_shape(facts.score_shape)
    raise_if_nonfinite(facts.weights_nonfinite, "sample_weight")
    if facts.all_weights_zero:
        raise zero_weights_error()


def _plan_curve(facts: CurveFacts, pos_label: Any, drop: str, det_drop: bool = False) -> CurvePlan:
    check_curve_kind(facts.kind, pos_label)
    pos_label = resolve_pos_label(pos_label, facts.uniques)
    _check_curve_values(facts)
    return CurvePlan(pos_label, drop, int(facts.uniques.shape[0]), det_drop)


def _finish_roc(plan: CurvePlan, points: CurvePoints) -> tuple[FloatArray, FloatArray, FloatArray]:
    return roc_from_points(points.fps, points.tps, points.thresholds)


def _finish_precision_recall(plan: CurvePlan, points: CurvePoints) -> tuple[FloatArray, FloatArray, np.ndarray]:
    return precision_recall_from_points(points.fps, points.tps, points.thresholds)


def _finish_det(plan: CurvePlan, points: CurvePoints) -> tuple[FloatArray, FloatArray, FloatArray]:
    return det_from_points(points.fps, points.tps, points.thresholds, plan.n_classes, plan.det_drop)


ROC_CURVE = Skeleton("roc_curve", _plan_curve, _finish_roc)
PRECISION_RECALL_CURVE = Skeleton("precision_recall_curve", _plan_curve, _finish_precision_recall)
DET_CURVE = Skeleton("det_curve", _plan_curve, _finish_det)


def _binary_facts(
    y: np.ndarray, uniques: np.ndarray, kind: str, y_score: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[CurveFacts, np.ndarray, np.ndarray, FloatArray | None, np.dtype[Any]]:
    """(facts, y_true as a vector, scores, weights, the scores' given dtype) of a binary problem in memory."""
    scores, given = as_scores(y_score, finite=False)
    check_sample_counts(y.shape[0], scores.shape[0])
    if y.ndim == 2:
        y = y[:, 0]
    weight = as_weights(sample_weight, y.shape[0])
    weights_nonfinite = None if weight is None else first_nonfinite_entry(weight)
    all_zero = weight is not None and not weight.any()
    facts = CurveFacts(kind, uniques, scores.shape, first_nonfinite_entry(scores), weights_nonfinite, all_zero)
    return facts, y, scores, weight, given


def _curve(
    skeleton: Skeleton[..., CurvePlan, CurvePoints, Any],
    y_true: ArrayLike,
    y_score: ArrayLike,
    sample_weight: ArrayLike | None,
    pos_label: Any,
    drop: str,
    det_drop: bool = False,
) -> Any:
    """A binary curve in memory: the facts in one pass, the points from one compiled sort."""
    y = as_labels(y_true)
    uniques = unique_labels(y)
    facts, y, scores, weight, given = _binary_facts(y, uniques, label_type(y, uniques), y_score, sample_weight)

    def count(plan: CurvePlan) -> CurvePoints:
        positive = _positive_of(y, plan.pos_label)
        vector = binary_scores(scores)  # of the shape the plan checked
        curve = _core.binary_curve(vector, positive, weight, plan.drop, resolve_n_jobs(None))
        thresholds, tps, fps = curve["thresholds"], curve["tps"], curve["fps"]
        if given.kind == "f" and thresholds.dtype != given:
            thresholds = thresholds.astype(given)  # float16 scores were read as float32
        return CurvePoints(fps, tps, thresholds)

    return skeleton.run(count, facts, pos_label, drop, det_drop)


def _with_first(values: np.ndarray, first: float) -> FloatArray:
    """float64 [first, *values]."""
    out = np.empty(values.shape[0] + 1)
    out[0] = first
    out[1:] = values
    return out


def _rates(counts: FloatArray, undefined: str) -> FloatArray:
    """[0, *counts] / counts[-1] (NaN, with scikit-learn's warning, when the total is not positive)."""
    if not counts[-1] > 0:
        warn_undefined(undefined)
        return np.full(counts.shape[0] + 1, np.nan)
    out = np.empty(counts.shape[0] + 1)
    out[0] = 0.0
    np.divide(counts, counts[-1], out=out[1:])
    return out


@routed
def roc_curve(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label: Any = None,
    sample_weight: ArrayLike | None = None,
    drop_intermediate: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Receiver operating characteristic curve, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.roc_curve`: one point per distinct
    score (thresholds decreasing, the first one ``inf``), collinear points
    dropped with ``drop_intermediate``. Computed from one compiled sort.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Binary labels ({0, 1} or {-1, 1} unless ``pos_label`` is given).
    y_score : array_like, shape (n,)
        Scores; higher means more likely positive.
    pos_label : int, float, bool or str, optional
        The positive class.
    sample_weight : array_like, shape (n,), optional
        Sample weights (zero weights take no part).
    drop_intermediate : bool, default True
        Drop the thresholds of points collinear with their neighbours.

    Returns
    -------
    fpr, tpr : ndarray of float64
        False and true positive rates at each threshold (NaN, with an
        ``UndefinedMetricWarning``, when a class is absent).
    thresholds : ndarray of float64
        Decreasing thresholds; the first is ``inf``.

    Examples
    --------
    >>> from pairmetrics.sklearn import roc_curve
    >>> fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist(), thresholds.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0], [inf, 0.8, 0.4, 0.35, 0.1])
    """
    return _curve(ROC_CURVE, y_true, y_score, sample_weight, pos_label, "roc" if drop_intermediate else "none")


def roc_from_points(
    fps: FloatArray, tps: FloatArray, thresholds: np.ndarray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """roc_curve's results from the points of the distinct thresholds (decreasing; intermediate ones dropped)."""
    # written in place into the results (large curves: every temporary array costs page faults)
    fpr, tpr = (
        _rates(fps, "No negative samples in y_true, false positive value should be meaningless"),
        _rates(tps, "No positive samples in y_true, true positive value should be meaningless"),
    )
    return fpr, tpr, _with_first(thresholds, np.inf)


def drop_intermediate_points(
    kind: str, fps: FloatArray, tps: FloatArray, thresholds: np.ndarray
) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """The points the kernel keeps with drop_intermediate ('roc' or 'tps'), in numpy (for curves assembled
    from pieces)."""
    if fps.shape[0] <= 2:
        return fps, tps, thresholds
    if kind == "roc":
        inner = (np.diff(fps, 2) != 0) | (np.diff(tps, 2) != 0)
    else:
        inner = (np.diff(tps[:-1]) != 0) | (np.diff(tps[1:]) != 0)
    keep = np.flatnonzero(np.concatenate(([True], inner, [True])))
    return fps[keep], tps[keep], thresholds[keep]


@routed
def precision_recall_curve(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label: Any = None,
    sample_weight: ArrayLike | None = None,
    drop_intermediate: bool = False,
) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """Precision-recall pairs at every threshold, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.precision_recall_curve`: one point
    per distinct score, recall decreasing, the last point (precision 1,
    recall 0) without a threshold. Computed from one compiled sort.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Binary labels ({0, 1} or {-1, 1} unless ``pos_label`` is given).
    y_score : array_like, shape (n,)
        Scores; higher means more likely positive.
    pos_label : int, float, bool or str, optional
        The positive class.
    sample_weight : array_like, shape (n,), optional
        Sample weights (zero weights take no part).
    drop_intermediate : bool, default False
        Keep only the first and last threshold of each recall value.

    Returns
    -------
    precision, recall : ndarray of float64
        One more entry than ``thresholds``.
    thresholds : ndarray
        Increasing distinct scores, in the dtype of ``y_score``.

    Examples
    --------
    >>> from pairmetrics.sklearn import precision_recall_curve
    >>> precision, recall, thresholds = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> precision.round(3).tolist(), recall.tolist(), thresholds.tolist()
    ([0.5, 0.667, 0.5, 1.0, 1.0], [1.0, 1.0, 0.5, 0.5, 0.0], [0.1, 0.35, 0.4, 0.8])
    """
    return _curve(
        PRECISION_RECALL_CURVE, y_true, y_score, sample_weight, pos_label, "tps" if drop_intermediate else "none"
    )


def precision_recall_from_points(
    fps: FloatArray, tps: FloatArray, thresholds: np.ndarray
) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """precision_recall_curve's results from the points of the distinct thresholds (decreasing)."""
    m = tps.shape[0]
    precision = np.empty(m + 1)
    precision[m] = 1.0
    flipped = precision[:m][::-1]  # written in threshold order, read reversed
    np.add(tps, fps, out=flipped)
    np.divide(tps, flipped, out=flipped, where=flipped != 0)  # 0 where nothing is predicted positive
    recall = np.empty(m + 1)
    recall[m] = 0.0
    if tps[-1] == 0:
        warn(NO_POSITIVE)
        recall[:m] = 1.0
    else:
        np.divide(tps, tps[-1], out=recall[:m][::-1])
    return precision, recall, thresholds[::-1]


@routed
def det_curve(
    y_true: ArrayLike,
    y_score: ArrayLike,
    pos_label: Any = None,
    sample_weight: ArrayLike | None = None,
    drop_intermediate: bool = False,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Detection error tradeoff curve, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.det_curve`: false positive and false
    negative rates from the threshold where false positives start to the one
    where false negatives reach zero. Computed from one compiled sort.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Binary labels ({0, 1} or {-1, 1} unless ``pos_label`` is given).
    y_score : array_like, shape (n,)
        Scores; higher means more likely positive.
    pos_label : int, float, bool or str, optional
        The positive class.
    sample_weight : array_like, shape (n,), optional
        Sample weights (zero weights take no part).
    drop_intermediate : bool, default False
        Keep only the first and last threshold of each false negative rate.

    Returns
    -------
    fpr, fnr : ndarray of float64
        False positive rate (decreasing) and false negative rate.
    thresholds : ndarray of float64
        The matching thresholds (decreasing).

    Raises
    ------
    ValueError
        When ``y_true`` holds one class only, as scikit-learn.

    Examples
    --------
    >>> from pairmetrics.sklearn import det_curve
    >>> fpr, fnr, thresholds = det_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), fnr.tolist(), thresholds.tolist()
    ([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.35, 0.4, 0.8])
    """
    return _curve(DET_CURVE, y_true, y_score, sample_weight, pos_label, "none", drop_intermediate)


def det_from_points(
    fps: FloatArray, tps: FloatArray, thresholds: np.ndarray, n_classes: int, drop_intermediate: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """det_curve's results from the points of every distinct threshold (decreasing) and the number of
    distinct labels of y_true."""
    fps = np.concatenate(([0.0], fps))
    tps = np.concatenate(([0.0], tps))
    thresholds = np.concatenate(([np.inf], thresholds.astype(np.float64)))
    if drop_intermediate:
        fps, tps, thresholds = drop_intermediate_points("tps", fps, tps, thresholds)
    if n_classes != 2:
        raise ValueError(
            "Only one class is present in y_true. Detection error tradeoff curve is not defined in that case."
        )
    fns = tps[-1] - tps
    first = int(np.searchsorted(fps, fps[0], side="right")) - 1
    last = int(np.searchsorted(tps, tps[-1])) + 1
    part = slice(first if first >= 0 else None, last)
    return fps[part][::-1] / fps[-1], fns[part][::-1] / tps[-1], thresholds[part][::-1]


@dataclass(frozen=True)
class PrecisionSums:
    """The average precision's sum over the thresholds, divided by the positive weight, and that weight."""

    value: float
    total_positive: float


def _precision_sums(kernel: dict[str, Any]) -> PrecisionSums:
    """The PrecisionSums of the kernel's result."""
    return PrecisionSums(kernel["value"], kernel["positive_total"])


def _finish_average_precision(plan: CurvePlan, sums: PrecisionSums) -> float:
    return _precision_from_sums(sums)


def _precision_from_sums(sums: PrecisionSums) -> float:
    """The AP (0, with scikit-learn's warning, without positives)."""
    if sums.total_positive == 0:
        warn(NO_POSITIVE)
        return 0.0
    return float(max(0.0, sums.value))


AVERAGE_PRECISION = Skeleton("average_precision_score", _plan_curve, _finish_average_precision)


@dataclass(frozen=True, eq=False)
class GroupedPrecisionSums:
    """Per group (in the order of ``keys``): rows, positives and the average precision."""

    keys: np.ndarray
    sizes: np.ndarray
    n_positive: np.ndarray
    values: FloatArray


def _finish_grouped_average_precision(plan: CurvePlan, sums: GroupedPrecisionSums) -> GroupedAveragePrecision:
    result: GroupedAveragePrecision = grouped_result(
        GroupedAveragePrecision,
        sums.keys,
        sums.sizes,
        True,
        average_precision=np.maximum(sums.values, 0.0),
        n_positive=sums.n_positive,
    )
    return result


AVERAGE_PRECISION_GROUPED = Skeleton("average_precision_score(groups=)", _plan_curve, _finish_grouped_average_precision)


def binary_average_precision(positive: np.ndarray, scores: np.ndarray, weight: FloatArray | None) -> float:
    """The average precision of one binary problem of a multi-label or multi-class average."""
    _check_some_weight(weight)
    return _precision_from_sums(
        _precision_sums(_core.average_precision(scores, positive, weight, resolve_n_jobs(None)))
    )


def check_average(average: str | None) -> None:
    if average is not None and average not in _AVERAGES:
        raise invalid_parameter(f"The 'average' parameter must be one of {_AVERAGES} or None. Got {average!r} instead.")


def check_pos_label(kind: str, pos_label: Any, uniques: np.ndarray) -> None:
    if kind == "binary":
        if uniques.shape[0] == 2 and pos_label not in uniques.tolist():
            raise ValueError(f"pos_label={pos_label} is not a valid label. It should be one of {uniques}")
    elif kind in ("multilabel-indicator", "multiclass") and pos_label != 1:
        raise ValueError(
            f"Parameter pos_label is fixed to 1 for {kind} y_true. Do not set pos_label or set pos_label to 1."
        )


@overload
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: str | None = "macro",
    pos_label: Any = 1,
    sample_weight: ArrayLike | None = None,
    groups: None = None,
) -> FloatOrArray: ...
@overload
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: str | None = "macro",
    pos_label: Any = 1,
    sample_weight: ArrayLike | None = None,
    groups: ArrayLike,
) -> GroupedAveragePrecision: ...
@routed
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: str | None = "macro",
    pos_label: Any = 1,
    sample_weight: ArrayLike | None = None,
    groups: ArrayLike | None = None,
) -> FloatOrArray | GroupedAveragePrecision:
    """Average precision (the step-function area under the precision-recall curve), as scikit-learn.

    A drop-in for :func:`sklearn.metrics.average_precision_score`: binary,
    multi-label indicator and multi-class input, every ``average``,
    ``pos_label`` and ``sample_weight``. Each binary AP is one compiled pass
    (sort, then one merge from the top); without weights the counts are
    exact integers whatever the score dtype.

    Parameters
    ----------
    y_true : array_like, shape (n,) or (n, n_labels)
        Binary labels, a multi-label indicator matrix, or multi-class labels.
    y_score : array_like, shape (n,) or (n, n_labels)
        Scores; higher means more likely positive.
    average : {"macro", "micro", "weighted", "samples"} or None, default "macro"
        Averaging over labels (ignored for binary input); None returns the
        per-label array.
    pos_label : int, float, bool or str, default 1
        The positive class of binary input (must be 1 otherwise).
    sample_weight : array_like, shape (n,), optional
        Sample weights.
    groups : array_like, shape (n,), optional
        A group key per sample (numbers, strings, any sortable keys), binary
        ``y_true`` only: the AP of every group in one call, as a
        :class:`GroupedAveragePrecision` (NaN, with one warning
        for all of them, where a group has no positive). Not in scikit-learn.

    Returns
    -------
    float or ndarray or GroupedAveragePrecision
        0.0 with a warning when there is no positive sample, as scikit-learn.

    Notes
    -----
    Dask arrays, DataFrame columns and Series of binary ``y_true`` are
    computed on the cluster, never gathered: the rows are cut by score range
    into partitions (one shuffle), each partition's curve is computed with
    the weight of the partitions above it as an offset, and the partial sums
    are added; see :mod:`pairmetrics.dask.ranking_curves`.

    Examples
    --------
    >>> from pairmetrics.sklearn import average_precision_score
    >>> round(average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 4)
    0.8333
    """
    check_average(average)
    y = as_labels(y_true)
    uniques = unique_labels(y)
    kind = label_type(y, uniques)
    check_pos_label(kind, pos_label, uniques)
    if groups is not None and kind != "binary":  # (also on Dask: see pairmetrics.dask.ranking_curves)
        raise ValueError(f"groups= takes binary y_true only, got {kind} y_true")
    if kind == "binary":
        return _binary_average_precision(y, uniques, y_score, sample_weight, pos_label, groups)
    if kind not in ("multilabel-indicator", "multiclass"):
        raise ValueError(f"{kind} format is not supported")
    scores, _ = as_scores(y_score)
    check_sample_counts(y.shape[0], scores.shape[0])
    weight = _checked_weights(sample_weight, y.shape[0])
    if kind == "multiclass":
        if y.ndim == 2:
            y = y[:, 0]
        indicator = one_hot(np.searchsorted(uniques, y), uniques.shape[0])
        if scores.shape != indicator.shape:
            raise ValueError(
                "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple "
                f"classes. Got `y_score.shape={scores.shape}`."
            )
        return _average_labels(indicator, indicator, scores, average, weight)
    if scores.ndim != 2 or scores.shape != y.shape:
        raise ValueError(f"y_true has shape {y.shape} but y_score has shape {scores.shape}; they must match")
    return _average_labels(y, (y == 1).view(np.uint8), scores, average, weight)


def _binary_average_precision(
    y: np.ndarray,
    uniques: np.ndarray,
    y_score: ArrayLike,
    sample_weight: ArrayLike | None,
    pos_label: Any,
    groups: ArrayLike | None,
) -> float | GroupedAveragePrecision:
    """The AP of binary y_true in memory (of each group with ``groups``), on its skeleton."""
    facts, y, scores, weight, _ = _binary_facts(y, uniques, "binary", y_score, sample_weight)

    def count(plan: CurvePlan) -> PrecisionSums:
        positive, vector = _positive_of(y, plan.pos_label), binary_scores(scores)
        return _precision_sums(_core.average_precision(vector, positive, weight, resolve_n_jobs(None)))

    if groups is None:
        return AVERAGE_PRECISION.run(count, facts, pos_label, "none")
    keys = groups

    def count_groups(plan: CurvePlan) -> GroupedPrecisionSums:
        return _grouped_average_precision(_positive_of(y, plan.pos_label), binary_scores(scores), weight, keys)

    return AVERAGE_PRECISION_GROUPED.run(count_groups, facts, pos_label, "none")


def _grouped_average_precision(
    positive: np.ndarray, scores: np.ndarray, weight: FloatArray | None, groups: ArrayLike
) -> GroupedPrecisionSums:
    """The AP of each group's samples (one kernel call per group, on the samples gathered by group)."""
    keys, codes = factorize_groups(groups, positive.shape[0], "y_true")
    sizes = np.bincount(codes, minlength=keys.shape[0]).astype(np.int64)
    n_positive = np.bincount(codes, weights=positive, minlength=keys.shape[0]).astype(np.int64)
    order = np.argsort(codes, kind="stable")
    positive, scores = positive[order], scores[order]
    weight = None if weight is None else weight[order]
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    values = np.empty(keys.shape[0])
    for g in range(keys.shape[0]):
        part = slice(bounds[g], bounds[g + 1])
        part_weight = None if weight is None else weight[part]
        values[g] = _core.average_precision(scores[part], positive[part], part_weight, 1)["value"]
    return GroupedPrecisionSums(keys, sizes, n_positive, values)


def _average_labels(
    y: np.ndarray, positive: np.ndarray, scores: np.ndarray, average: str | None, weight: FloatArray | None
) -> FloatOrArray:
    """scikit-learn's ``_average_binary_score`` of the AP over the columns of an indicator matrix."""
    if average == "micro":
        repeated = None if weight is None else np.repeat(weight, y.shape[1])
        return binary_average_precision(
            np.ascontiguousarray(positive).ravel(), np.ascontiguousarray(scores).ravel(), repeated
        )
    average_weight: np.ndarray | None = None
    if average == "weighted":
        average_weight = (y * weight[:, None]).sum(axis=0) if weight is not None else y.sum(axis=0)
        if np.isclose(average_weight.sum(), 0.0):
            return 0  # an int, as scikit-learn returns
    if average == "samples":
        average_weight = weight
        values = np.array([binary_average_precision(positive[i], scores[i], None) for i in range(y.shape[0])])
    else:
        values = np.array([binary_average_precision(positive[:, c], scores[:, c], weight) for c in range(y.shape[1])])
    if average is None:
        return values
    if average_weight is not None:
        values[np.asarray(average_weight) == 0] = 0
    return float(np.average(values, weights=average_weight))
