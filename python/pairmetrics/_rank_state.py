"""A mergeable exact state of binary rank metrics: AUC (with DeLong's variance), average precision and the
precision-recall curve from per-distinct-score counts, for data that arrives in parts (batches, partitions,
workers).

The counting lives here once: a state is a table of the distinct scores with, for each, the number and the
weight of the positives and the negatives. Every binary rank metric is a function of that table (DeLong's
placement values depend on the ranks of the scores only), so states of any split of the data, merged in any
order, give the numbers of the whole. A score range's table reduces to a fixed-size summary
(:func:`range_summary`); summaries of consecutive score ranges combine into the AUC and its variance
(:func:`roc_auc_of_ranges`), which is how :mod:`pairmetrics.spark` finishes on the driver.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._inference import ConfidenceInterval, normal_interval
from ._labels import binary_auc_defined, binary_auc_value, warn_undefined
from ._paired import PairedEvaluation
from ._pairs import ddof_factor, warn_nothing_rankable
from ._result import Result
from ._typing import ArrayLike, FloatArray, IntArray
from ._validation import as_vector, check_finite

__all__ = ["RankState", "RocAucResult"]
# What the Spark layer may use besides __all__: the range summaries it counts on the executors and their finish.
__seams__ = ["SUMMARY_FIELDS", "average_precision_part", "range_summary", "roc_auc_of_ranges"]

# to_bytes(): magic, format version, flags (bit 0: weighted), two reserved bytes, number of distinct scores
_MAGIC = b"PMRS"
_FORMAT_VERSION = 1
_HEADER = struct.Struct("<4sBBxxQ")


@dataclasses.dataclass(frozen=True, eq=False)
class RocAucResult(Result):
    """The area under the ROC curve of binary labels, with DeLong's variance.

    Attributes
    ----------
    auc : float
        The area under the ROC curve (tied scores count one half), equal to
        :func:`pairmetrics.sklearn.roc_auc_score` with the same weights; NaN
        when a class has no weight.
    n_positive, n_negative : int
        Samples of each class.
    positive_weight, negative_weight : float
        The classes' total weights (the counts without weights).
    """

    auc: float
    n_positive: int
    n_negative: int
    positive_weight: float
    negative_weight: float
    if TYPE_CHECKING:  # an attribute to type checkers; at run time an InitVar (see Result)
        _variance: float | None = None
    else:
        _variance: dataclasses.InitVar[float | None] = None

    @property
    def statistic(self) -> float:
        """The estimate, ``auc``, under SciPy's name."""
        return self.auc

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """DeLong's confidence interval for ``auc``, clipped to [0, 1].

        Parameters
        ----------
        confidence_level : float, default 0.95
            Nominal coverage, in (0, 1).

        Returns
        -------
        ConfidenceInterval
            Equal to ``paired_evaluation(y_true, y_score).confidence_interval()``
            on the same samples; NaN bounds when a class is empty.

        Raises
        ------
        ValueError
            For weighted samples: DeLong's variance is defined for counts.
        """
        if self._variance is None:
            raise ValueError("DeLong's variance is defined for unweighted samples; these samples were weighted")
        return normal_interval(self.auc, self._variance, confidence_level, 0.0, 1.0)


@dataclasses.dataclass(eq=False, repr=False)
class RankState(Result):
    """A mergeable exact state of binary rank metrics (AUC, average precision, the precision-recall curve).

    Feed it the data in any number of parts with :meth:`update`, combine
    states of other parts (other batches, partitions, processes, machines)
    with :meth:`merge`, and finish with :meth:`roc_auc`,
    :meth:`paired_evaluation`, :meth:`average_precision` or
    :meth:`precision_recall_curve`: the numbers equal those of the in-memory
    functions on all the data, whatever the split and the order of merging.
    Its size is O(distinct scores): per distinct score, the count and the
    weight of positives and of negatives (``to_bytes()`` takes 24 bytes per
    distinct score, 40 with weights).

    Attributes
    ----------
    scores : ndarray of float64
        The distinct scores, increasing.
    n_positive, n_negative : ndarray of int64
        Positive and negative samples at each score.
    positive_weight, negative_weight : ndarray of float64 or None
        Their weights, or None when no part came with ``sample_weight``.

    Notes
    -----
    Labels are binary: bool, or numbers that are all 0 or 1 (1 is
    positive), so that every part means the same by "positive". Scores are
    compared as float64 (exact for float32, float64 and integers up to
    2**53 in magnitude). Weights are finite and non-negative.

    The serialized format (:meth:`to_bytes`), version 1, little-endian: a
    16-byte header (the 4 bytes ``PMRS``, the format version as one byte, a
    flags byte whose bit 0 says weighted, two zero bytes, the number ``m`` of
    distinct scores as uint64), then ``scores`` (float64), ``n_negative`` and
    ``n_positive`` (int64), and for weighted states ``negative_weight`` and
    ``positive_weight`` (float64), ``m`` entries each. Later versions keep
    reading version 1.

    Examples
    --------
    >>> import pairmetrics as pm
    >>> state = pm.RankState()
    >>> state = state.update([0, 0, 1], [0.1, 0.4, 0.35])
    >>> other = pm.RankState().update([1, 0, 1], [0.8, 0.3, 0.9])
    >>> merged = pm.RankState.from_bytes(state.merge(other).to_bytes())
    >>> round(merged.roc_auc().auc, 4), merged.scores.size
    (0.8889, 6)
    """

    scores: FloatArray = dataclasses.field(default_factory=lambda: np.empty(0, np.float64))
    n_positive: IntArray = dataclasses.field(default_factory=lambda: np.empty(0, np.int64))
    n_negative: IntArray = dataclasses.field(default_factory=lambda: np.empty(0, np.int64))
    positive_weight: FloatArray | None = None
    negative_weight: FloatArray | None = None

    def __post_init__(self) -> None:
        self.scores = np.ascontiguousarray(self.scores, dtype=np.float64)
        self.n_positive = np.ascontiguousarray(self.n_positive, dtype=np.int64)
        self.n_negative = np.ascontiguousarray(self.n_negative, dtype=np.int64)
        m = self.scores.shape[0]
        if self.scores.ndim != 1 or self.n_positive.shape != (m,) or self.n_negative.shape != (m,):
            raise ValueError("scores, n_positive and n_negative must be 1-D arrays of one length")
        if m > 1 and not bool(np.all(self.scores[1:] > self.scores[:-1])):
            raise ValueError("scores must be distinct and increasing")
        check_finite(self.scores, "scores")
        if (self.positive_weight is None) != (self.negative_weight is None):
            raise ValueError("positive_weight and negative_weight come together (or both None)")
        if self.positive_weight is not None and self.negative_weight is not None:
            self.positive_weight = np.ascontiguousarray(self.positive_weight, dtype=np.float64)
            self.negative_weight = np.ascontiguousarray(self.negative_weight, dtype=np.float64)
            if self.positive_weight.shape != (m,) or self.negative_weight.shape != (m,):
                raise ValueError("the weights must have one entry per score")

    def __repr__(self) -> str:
        return (
            f"RankState(distinct_scores={self.scores.shape[0]}, n_positive={int(self.n_positive.sum())}, "
            f"n_negative={int(self.n_negative.sum())}, weighted={self.weighted})"
        )

    @property
    def weighted(self) -> bool:
        """Whether any part came with ``sample_weight``."""
        return self.positive_weight is not None

    def weights(self) -> tuple[FloatArray, FloatArray]:
        """(positive, negative) weight per distinct score (the counts when unweighted)."""
        if self.positive_weight is not None and self.negative_weight is not None:
            return self.positive_weight, self.negative_weight
        return self.n_positive.astype(np.float64), self.n_negative.astype(np.float64)

    # ----------------------------------------------------------------------------------------- building

    def update(self, y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None) -> RankState:
        """Add samples (in place); returns the state.

        Parameters
        ----------
        y_true : array_like, shape (n,)
            Binary labels: bool, or numbers that are all 0 or 1.
        y_score : array_like, shape (n,)
            Scores, finite; higher means more likely positive.
        sample_weight : array_like, shape (n,), optional
            Non-negative finite weights.

        Returns
        -------
        RankState
            This state.
        """
        labels = as_vector(y_true, "y_true", min_length=0)
        scores = as_vector(y_score, "y_score", min_length=0)
        if labels.shape[0] != scores.shape[0]:
            raise ValueError(f"y_true has {labels.shape[0]} samples but y_score has {scores.shape[0]}")
        check_finite(labels, "y_true")
        check_finite(scores, "y_score")
        if labels.dtype != np.bool_ and not bool(np.all((labels == 0) | (labels == 1))):
            raise ValueError("y_true must be bool or hold only 0 and 1 (1 is positive)")
        positive = labels.astype(bool)
        weight = None
        if sample_weight is not None:
            weight = np.asarray(as_vector(sample_weight, "sample_weight", min_length=0), dtype=np.float64)
            if weight.shape[0] != labels.shape[0]:
                raise ValueError(f"sample_weight has {weight.shape[0]} entries but y_true has {labels.shape[0]}")
            check_finite(weight, "sample_weight")
            if bool((weight < 0).any()):
                raise ValueError(f"sample_weight must be non-negative, got {float(weight.min())}")
        part = _count(np.asarray(scores, dtype=np.float64), positive, weight)
        return self._absorb(part)

    def merge(self, other: RankState) -> RankState:
        """Add the samples of another state (in place); returns this state.

        Parameters
        ----------
        other : RankState
            A state of other samples (it is not modified).

        Returns
        -------
        RankState
            This state, now counting the samples of both.
        """
        if not isinstance(other, RankState):
            raise TypeError(f"other must be a RankState, got {type(other).__name__}")
        return self._absorb(other)

    def _absorb(self, other: RankState) -> RankState:
        if other.scores.shape[0] == 0 and not other.weighted:
            return self
        weighted = self.weighted or other.weighted
        (pa, na), (pb, nb) = self.weights(), other.weights()
        keys = np.concatenate([self.scores, other.scores])
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if keys.size else order

        def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.add.reduceat(np.concatenate([a, b])[order], starts) if starts.size else a[:0]

        self.n_positive = add(self.n_positive, other.n_positive)
        self.n_negative = add(self.n_negative, other.n_negative)
        if weighted:
            self.positive_weight, self.negative_weight = add(pa, pb), add(na, nb)
        self.scores = keys[starts]
        return self

    # ----------------------------------------------------------------------------------------- serialization

    def to_bytes(self) -> bytes:
        """The state in the documented binary format (see Notes of :class:`RankState`).

        Returns
        -------
        bytes
            ``RankState.from_bytes(state.to_bytes()) == state``.
        """
        header = _HEADER.pack(_MAGIC, _FORMAT_VERSION, int(self.weighted), self.scores.shape[0])
        arrays = [self.scores.astype("<f8"), self.n_negative.astype("<i8"), self.n_positive.astype("<i8")]
        if self.positive_weight is not None and self.negative_weight is not None:
            arrays += [self.negative_weight.astype("<f8"), self.positive_weight.astype("<f8")]
        return header + b"".join(a.tobytes() for a in arrays)

    @classmethod
    def from_bytes(cls, data: bytes) -> RankState:
        """A state from :meth:`to_bytes`.

        Parameters
        ----------
        data : bytes
            The serialized state (any bytes-like object).

        Returns
        -------
        RankState
        """
        view = memoryview(data).cast("B")
        if view.nbytes < _HEADER.size:
            raise ValueError("data is too short to be a serialized RankState")
        magic, version, flags, m = _HEADER.unpack_from(view)
        if magic != _MAGIC:
            raise ValueError("data is not a serialized RankState (wrong magic bytes)")
        if version != _FORMAT_VERSION:
            raise ValueError(f"unknown RankState format version {version} (this version reads 1)")
        weighted = bool(flags & 1)
        expected = _HEADER.size + m * 8 * (5 if weighted else 3)
        if view.nbytes != expected:
            raise ValueError(f"a serialized RankState of {m} scores has {expected} bytes, got {view.nbytes}")

        def array(k: int, dtype: str) -> np.ndarray:
            return np.frombuffer(view, dtype=dtype, count=m, offset=_HEADER.size + k * 8 * m).astype(dtype[1:])

        weights = (array(4, "<f8"), array(3, "<f8")) if weighted else (None, None)
        return cls(array(0, "<f8"), array(2, "<i8"), array(1, "<i8"), *weights)

    # ----------------------------------------------------------------------------------------- finishing

    def roc_auc(self) -> RocAucResult:
        """The area under the ROC curve, with DeLong's variance for unweighted samples.

        Returns
        -------
        RocAucResult
            ``auc`` equals :func:`pairmetrics.sklearn.roc_auc_score` on the
            samples (NaN, with scikit-learn's warning, when a class is
            absent); ``confidence_interval()`` equals that of
            :func:`pairmetrics.paired_evaluation`.
        """
        return roc_auc_of_ranges([range_summary(self)], weighted=self.weighted)

    def paired_evaluation(self) -> PairedEvaluation:
        """The pair counts of :func:`pairmetrics.paired_evaluation` (``min_dist=0.5``) with its variance.

        Returns
        -------
        PairedEvaluation
            The same counts, ``auc`` and ``confidence_interval()`` as the
            in-memory call on the samples.

        Raises
        ------
        ValueError
            For weighted samples (pairs are counted, not weighed).
        """
        if self.weighted:
            raise ValueError("paired_evaluation counts pairs of unweighted samples; these samples were weighted")
        pos, neg = self.n_positive, self.n_negative
        n_pos, n_neg = int(pos.sum()), int(neg.sum())
        rankable = n_pos * n_neg
        neg_below = np.cumsum(neg) - neg
        correct, tied = _exact_dot(pos, neg_below), _exact_dot(pos, neg)
        if not rankable:
            warn_nothing_rankable(", auc is nan")
        variance = roc_auc_of_ranges([range_summary(self)], weighted=False, warn=False)._variance
        return PairedEvaluation(rankable, correct, tied, rankable - correct - tied, 0.5, variance)

    def average_precision(self, *, definition: str = "step") -> float:
        """Average precision.

        Parameters
        ----------
        definition : {"step", "trapezoid"}, default "step"
            ``"step"``: scikit-learn's ``average_precision_score`` (the sum
            of precisions at each threshold weighted by the increase in
            recall, no interpolation). ``"trapezoid"``: Spark MLlib's
            ``areaUnderPR``, the trapezoidal area under the curve of
            (recall, precision) points of every distinct score, starting at
            (0, 1).

        Returns
        -------
        float
            NaN, with a warning, without positive weight (scikit-learn gives 0
            then for ``"step"``: every recall is one).
        """
        if definition not in ("step", "trapezoid"):
            raise ValueError(f"definition must be 'step' or 'trapezoid', got {definition!r}")
        total_pos = float(self.weights()[0].sum())
        if not total_pos > 0:
            warn_undefined("No positive class found in y_true: average precision is undefined")
            return float("nan")
        return float(max(0.0, average_precision_part(self, 0.0, 0.0, total_pos, definition)))

    def precision_recall_curve(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """scikit-learn's ``precision_recall_curve`` of the samples.

        Returns
        -------
        precision, recall : ndarray
            Decreasing recall, ending at (precision 1, recall 0), as
            scikit-learn returns them.
        thresholds : ndarray
            The distinct scores of samples with nonzero weight, increasing.
        """
        precision, tps = _pr_points(self)
        thresholds = self.scores[::-1][_kept(self)]
        if tps.size and tps[-1] > 0:
            recall = tps / tps[-1]
        else:
            warn_undefined("No positive class found in y_true, recall is set to one for all thresholds.")
            recall = np.ones_like(tps)
        return (
            np.concatenate([precision[::-1], [1.0]]),
            np.concatenate([recall[::-1], [0.0]]),
            np.ascontiguousarray(thresholds[::-1]),
        )


def _exact_dot(a: IntArray, b: IntArray) -> int:
    """``sum(a * b)`` of non-negative counts as an exact integer (int64 while the total fits)."""
    if int(a.sum()) * int(b.sum()) < 2**63:
        return int(np.dot(a, b))
    return int(sum(int(x) * int(y) for x, y in zip(a.tolist(), b.tolist())))


def _count(scores: FloatArray, positive: np.ndarray, weight: FloatArray | None) -> RankState:
    """The state of one part."""
    distinct, inverse = np.unique(scores, return_inverse=True)
    inverse = inverse.ravel()
    m = distinct.shape[0]
    n_pos = np.bincount(inverse[positive], minlength=m).astype(np.int64)
    n_neg = np.bincount(inverse[~positive], minlength=m).astype(np.int64)
    if weight is None:
        return RankState(distinct, n_pos, n_neg)
    w_pos = np.bincount(inverse[positive], weights=weight[positive], minlength=m).astype(np.float64)
    w_neg = np.bincount(inverse[~positive], weights=weight[~positive], minlength=m).astype(np.float64)
    return RankState(distinct, n_pos, n_neg, w_pos, w_neg)


def _kept(state: RankState) -> np.ndarray:
    """Mask (highest score first) of the scores with nonzero weight: scikit-learn drops samples of zero weight."""
    pos, neg = state.weights()
    return ((pos + neg) > 0)[::-1] if state.weighted else np.ones(state.scores.shape[0], bool)


def _pr_points(state: RankState, tp_above: float = 0.0, fp_above: float = 0.0) -> tuple[FloatArray, FloatArray]:
    """(precision, true-positive weight) at each kept threshold, highest score first, after the given weights
    of higher scores."""
    pos, neg = state.weights()
    keep = _kept(state)
    tps = tp_above + np.cumsum(pos[::-1])[keep]
    fps = fp_above + np.cumsum(neg[::-1])[keep]
    predicted = tps + fps
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted != 0, tps / predicted, 0.0)
    return precision, tps


# --------------------------------------------------------------------------------- score ranges


def average_precision_part(
    state: RankState, tp_above: float, fp_above: float, total_positive: float, definition: str
) -> float:
    """The part of the average precision from the thresholds of one score range, given the positive and
    negative weight of the ranges above it: the parts of consecutive ranges add up to the whole."""
    precision, tps = _pr_points(state, tp_above, fp_above)
    rise = np.diff(tps, prepend=tp_above) / total_positive
    if definition == "step":
        return float(np.sum(rise * precision))
    above = tp_above + fp_above
    first = tp_above / above if above > 0 else 1.0  # the point before this range's first: (0, 1) at the top
    left = np.concatenate([[first], precision[:-1]])
    return float(np.sum(rise * (precision + left) / 2))


# range_summary's fields, in order
SUMMARY_FIELDS = (
    "n_positive",
    "n_negative",
    "positive_weight",
    "negative_weight",
    "area",
    "positive_placement_mean",
    "positive_placement_m2",
    "negative_placement_mean",
    "negative_placement_m2",
)


def range_summary(state: RankState) -> FloatArray:
    """The fixed-size summary of a state whose scores form one range (see SUMMARY_FIELDS).

    ``area`` is the weighted area of the pairs inside the range (a positive above a negative counts its two
    weights' product, a tie half of it). The placements are DeLong's, in counts: a positive's number of
    negatives below it plus half those tied, a negative's number of positives above it plus half those tied;
    their mean and sum of squared deviations over each class.
    """
    pos, neg = state.n_positive, state.n_negative
    w_pos, w_neg = state.weights()
    pos_above = np.cumsum(w_pos[::-1])[::-1] - w_pos
    area = float(np.dot(w_neg, pos_above + 0.5 * w_pos))
    neg_placement = (np.cumsum(pos[::-1])[::-1] - pos) + 0.5 * pos  # of each negative at this score
    pos_placement = (np.cumsum(neg) - neg) + 0.5 * neg
    pos_mean, pos_m2 = _mean_m2(pos_placement, pos)
    neg_mean, neg_m2 = _mean_m2(neg_placement, neg)
    return np.array(
        [pos.sum(), neg.sum(), w_pos.sum(), w_neg.sum(), area, pos_mean, pos_m2, neg_mean, neg_m2], dtype=np.float64
    )


def _mean_m2(values: FloatArray, counts: IntArray) -> tuple[float, float]:
    total = counts.sum()
    if not total:
        return 0.0, 0.0
    mean = float(np.dot(values, counts) / total)
    return mean, float(np.dot(counts, (values - mean) ** 2))


def roc_auc_of_ranges(summaries: Sequence[FloatArray], *, weighted: bool, warn: bool = True) -> RocAucResult:
    """The AUC and DeLong's variance from the range_summary of consecutive score ranges, lowest first.

    Every score of a range lies below every score of the next one, so the pairs between ranges are all
    correctly or all wrongly ordered: their area is a product of totals, and a placement value shifts by the
    other class's count in the ranges below (negatives) or above (positives).
    """
    table = np.asarray(summaries, dtype=np.float64).reshape(-1, len(SUMMARY_FIELDS))
    n_pos, n_neg, w_pos, w_neg, area = (table[:, j] for j in range(5))
    total_pos, total_neg = float(w_pos.sum()), float(w_neg.sum())
    count_pos, count_neg = int(n_pos.sum()), int(n_neg.sum())
    pos_above = np.cumsum(w_pos[::-1])[::-1] - w_pos  # positive weight in the ranges above each range
    total_area = float(area.sum() + np.dot(w_neg, pos_above))
    if warn and not binary_auc_defined(count_pos, count_neg, total_pos + total_neg > 0):
        auc = float("nan")
    elif not warn and not (total_pos > 0 and total_neg > 0):
        auc = float("nan")
    else:
        ratio = total_area / (total_pos * total_neg) if total_pos > 0 and total_neg > 0 else float("nan")
        auc = binary_auc_value(ratio, total_pos, total_neg, None)
    variance = None if weighted else _delong_variance(table, auc)
    return RocAucResult(auc, count_pos, count_neg, total_pos, total_neg, variance)


def _delong_variance(table: FloatArray, auc: float) -> float:
    """``sum(f_i g_i**2) / (P N)**2`` (see PairedEvaluation.confidence_interval) from the range summaries."""
    n_pos, n_neg = table[:, 0], table[:, 1]
    count_pos, count_neg = n_pos.sum(), n_neg.sum()
    if not (count_pos and count_neg) or auc != auc:
        return float("nan")
    neg_below = np.cumsum(n_neg) - n_neg
    pos_above = np.cumsum(n_pos[::-1])[::-1] - n_pos
    # sum over a class of (placement - auc * other class size)**2: the ranges' spreads plus their shifted means
    pos_squares = table[:, 6].sum() + np.dot(n_pos, (table[:, 5] + neg_below - auc * count_neg) ** 2)
    neg_squares = table[:, 8].sum() + np.dot(n_neg, (table[:, 7] + pos_above - auc * count_pos) ** 2)
    weighted = ddof_factor(count_pos) * pos_squares + ddof_factor(count_neg) * neg_squares
    return float(weighted / (count_pos * count_neg) ** 2)
