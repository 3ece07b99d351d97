"""Counts for multi-label classification (many labels, few per example).

Inputs are 0/1 matrices of shape (n_samples, n_labels), dense or
``scipy.sparse``. Sparse inputs are never densified: every count comes from
the stored entries, in O(nnz) time and memory.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np

from . import _core
from ._result import Result
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, FloatArray, IntArray
from ._validation import (
    Nonbinary,
    as_matrix,
    as_numeric_array,
    check_binary,
    check_finite,
    check_nonnegative_finite,
    first_nonbinary_entry,
    raise_if_nonbinary,
)

__all__ = ["multilabel_counts", "MultilabelCounts"]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = [
    "LabelCounts",
    "MULTILABEL_COUNTS",
    "MultilabelFacts",
    "binary_bytes",
    "check_penalties",
    "check_shapes",
    "counts_dense",
]

# counts of 1s (in both, in y_true, in y_pred), one entry per label or per sample
_Triple = tuple[IntArray, ...]


@dataclasses.dataclass(frozen=True, eq=False)
class MultilabelCounts(Result):
    """True/false positives/negatives of a multi-label prediction, and scores built on them.

    Attributes
    ----------
    tp, tn, fp, fn : numpy.int64
        Totals over all samples and labels.
    tp_per_label, tn_per_label, fp_per_label, fn_per_label : numpy.ndarray, shape (n_labels,)
    tp_per_sample, tn_per_sample, fp_per_sample, fn_per_sample : numpy.ndarray, shape (n_samples,)
    sample_accuracy : numpy.ndarray, shape (n_samples,)
        Fraction of the labels predicted correctly, per sample: ``(tp + tn) / n_labels``.
    mean_sample_accuracy : numpy.float64
        Its mean over samples; ``1 - mean_sample_accuracy`` is the Hamming loss.
    label_accuracy : numpy.ndarray, shape (n_labels,)
        Fraction of the samples predicted correctly, per label: ``(tp + tn) / n_samples``.
    weighted_score_per_sample : numpy.ndarray, shape (n_samples,)
        ``(tp + tn - false_pos * fp - false_neg * fn) / n_labels`` per sample:
        +1 per correct label, minus the penalties per mistake. With the
        default penalties of 1 it lies in [-1, 1].
    weighted_score : numpy.float64
        Its mean over samples (like ``tp`` against ``tp_per_sample``, the
        name without a suffix is the summary).
    false_pos, false_neg : float
        The penalties used.
    """

    tp: np.int64
    tn: np.int64
    fp: np.int64
    fn: np.int64
    tp_per_label: IntArray
    tn_per_label: IntArray
    fp_per_label: IntArray
    fn_per_label: IntArray
    tp_per_sample: IntArray
    tn_per_sample: IntArray
    fp_per_sample: IntArray
    fn_per_sample: IntArray
    sample_accuracy: FloatArray
    mean_sample_accuracy: np.float64
    label_accuracy: FloatArray
    weighted_score_per_sample: FloatArray
    weighted_score: np.float64
    false_pos: float
    false_neg: float

    @property
    def n_samples(self) -> int:
        return self.tp_per_sample.size

    @property
    def n_labels(self) -> int:
        return self.tp_per_label.size

    @property
    def hamming_loss(self) -> np.float64:
        """The fraction of wrong (sample, label) entries: ``1 - mean_sample_accuracy``."""
        return np.float64((self.fp + self.fn) / (self.n_samples * self.n_labels))

    def confusion_matrices(self) -> IntArray:
        """Per-label 2 x 2 matrices ``[[tn, fp], [fn, tp]]``, shape (n_labels, 2, 2).

        The layout of ``sklearn.metrics.multilabel_confusion_matrix``.
        """
        return np.stack([self.tn_per_label, self.fp_per_label, self.fn_per_label, self.tp_per_label], axis=1).reshape(
            -1, 2, 2
        )


def _issparse(x: object) -> bool:
    """Whether x is a scipy.sparse matrix or array, without importing scipy
    (an object cannot be sparse unless scipy.sparse was imported already)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(x)


def _sparse_binary(x: Any, name: str) -> Any:
    """A valid CSR with only stored 1s (explicit zeros dropped, no index stored
    twice); no copy unless there are zeros or the input is not CSR."""
    import scipy.sparse as sp

    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_labels), got shape {x.shape}")
    try:
        m = sp.csr_array(x)  # shares the arrays of a CSR input
        m.check_format(full_check=True)  # indptr and indices in range
    except ValueError as exc:
        raise ValueError(f"{name} is not a valid sparse matrix: {exc}") from None
    data = as_numeric_array(m.data, f"{name} (stored values)")
    if data.dtype.kind == "f":
        check_finite(data, f"{name} (stored values)")
    check_binary(data, f"{name} (stored values)")
    if m.nnz and not data.all():
        m = sp.csr_array((data, m.indices, m.indptr), shape=m.shape, copy=True)
        m.eliminate_zeros()
    if not m.has_canonical_format:  # unsorted indices, or an index stored twice
        summed = m.copy()
        summed.sum_duplicates()
        if summed.nnz != m.nnz:
            raise ValueError(
                f"{name} stores some entry more than once; scipy.sparse adds duplicates up, "
                "which is not a 0/1 label (call sum_duplicates() to see the values)"
            )
    return m


def binary_bytes(arr: np.ndarray) -> np.ndarray:
    """Checked 0/1 entries as uint8: a view for 1-byte dtypes, else one converted copy."""
    if arr.dtype.itemsize == 1 and arr.dtype.kind in "biu":
        return arr.view(np.uint8)
    return (arr != 0).view(np.uint8)


def _counts_sparse(t: Any, p: Any) -> tuple[_Triple, _Triple]:
    """Per-label and per-sample counts of 1s in both, in t and in p, in one O(nnz) pass."""
    arrays = [t.indptr, t.indices, p.indptr, p.indices]
    index = np.int32 if all(a.dtype == np.int32 for a in arrays) else np.int64
    arrays = [np.ascontiguousarray(a, dtype=index) for a in arrays]
    return _split(_core._multilabel_sparse(*arrays, t.shape[0], t.shape[1]))  # type: ignore[call-arg]  # 4 arrays


def _split(counts: dict[str, IntArray], transposed: bool = False) -> tuple[_Triple, _Triple]:
    """(per-label, per-sample) triples of counts (both, true, pred) from the kernel's dict."""
    labels = tuple(counts[f"label_{k}"] for k in ("both", "true", "pred"))
    samples = tuple(counts[f"sample_{k}"] for k in ("both", "true", "pred"))
    return (samples, labels) if transposed else (labels, samples)


def counts_dense(t: np.ndarray, p: np.ndarray) -> tuple[_Triple, _Triple]:
    """Per-label and per-sample counts of 1s in both, in t and in p, in one pass over the bytes."""
    if t.strides[0] < t.strides[1] and p.strides[0] < p.strides[1]:
        # column-major: count the transposes (contiguous rows) and swap the roles
        return _split(_core._multilabel_dense(t.T, p.T), transposed=True)
    return _split(_core._multilabel_dense(t, p))


@routed
def multilabel_counts(
    y_true: ArrayLike, y_pred: ArrayLike, *, false_pos: float = 1.0, false_neg: float = 1.0
) -> MultilabelCounts:
    """TP, TN, FP, FN in total, per label and per sample, with accuracies and a weighted score.

    Parameters
    ----------
    y_true, y_pred : array_like or scipy.sparse matrix/array, shape (n_samples, n_labels)
        Actual and predicted label sets as 0/1 entries (bool, any integer or
        float dtype). Sparse inputs stay sparse: the work is O(nnz); a dense
        input paired with a sparse one is converted to sparse.
    false_pos : float, default 1.0
        Penalty subtracted for each false positive in the weighted score.
    false_neg : float, default 1.0
        Penalty for each false negative; e.g. 5 when a missed label is five
        times as bad as a correct label is good.

    Returns
    -------
    MultilabelCounts

    Notes
    -----
    ``confusion_matrices()`` of the result equals
    ``sklearn.metrics.multilabel_confusion_matrix(y_true, y_pred)`` and
    ``hamming_loss`` equals ``sklearn.metrics.hamming_loss``. Sparse
    duplicates are summed (so a duplicated stored 1 is an error); stored
    zeros are ignored.
    """
    fp_penalty, fn_penalty = check_penalties(false_pos, false_neg)
    sparse = _issparse(y_true) or _issparse(y_pred)
    # sparse inputs are checked as they are read (their stored values only); dense ones by the plan
    t = _sparse_binary(y_true, "y_true") if _issparse(y_true) else as_matrix(y_true, "y_true", min_rows=0, min_cols=0)
    p = _sparse_binary(y_pred, "y_pred") if _issparse(y_pred) else as_matrix(y_pred, "y_pred", min_rows=0, min_cols=0)
    t_fact = None if _issparse(y_true) else first_nonbinary_entry(t)
    p_fact = None if _issparse(y_pred) else first_nonbinary_entry(p)
    facts = MultilabelFacts(t.shape, p.shape, t_fact, p_fact)

    def count(plan: MultilabelPlan) -> LabelCounts:
        t01 = t if _issparse(t) else binary_bytes(t)
        p01 = p if _issparse(p) else binary_bytes(p)
        if sparse:
            import scipy.sparse as sp

            return LabelCounts(*_counts_sparse(sp.csr_array(t01), sp.csr_array(p01)))
        return LabelCounts(*counts_dense(t01, p01))

    return MULTILABEL_COUNTS.run(count, facts, fp_penalty, fn_penalty)


@dataclasses.dataclass(frozen=True)
class MultilabelFacts:
    """The shapes of y_true and y_pred and the first entry of each other than 0 and 1."""

    true_shape: tuple[int, ...]
    pred_shape: tuple[int, ...]
    true_nonbinary: Nonbinary
    pred_nonbinary: Nonbinary


@dataclasses.dataclass(frozen=True)
class MultilabelPlan:
    """The shape counted and the weighted score's penalties."""

    n_samples: int
    n_labels: int
    fp_penalty: float
    fn_penalty: float


@dataclasses.dataclass(frozen=True, eq=False)
class LabelCounts(LayerEqual):
    """Per label and per sample: counts of 1s in both, in y_true and in y_pred."""

    labels: _Triple
    samples: _Triple


def _plan_multilabel(facts: MultilabelFacts, fp_penalty: float, fn_penalty: float) -> MultilabelPlan:
    """``fp_penalty``, ``fn_penalty``: checked by :func:`check_penalties` before the inputs are read."""
    raise_if_nonbinary(facts.true_nonbinary, "y_true", facts.true_shape)
    raise_if_nonbinary(facts.pred_nonbinary, "y_pred", facts.pred_shape)
    n_samples, n_labels = check_shapes(facts.true_shape, facts.pred_shape)
    return MultilabelPlan(n_samples, n_labels, fp_penalty, fn_penalty)


def _finish_multilabel(plan: MultilabelPlan, counts: LabelCounts) -> MultilabelCounts:
    return result_from_counts(
        counts.labels, counts.samples, plan.n_samples, plan.n_labels, plan.fp_penalty, plan.fn_penalty
    )


MULTILABEL_COUNTS = Skeleton("multilabel_counts", _plan_multilabel, _finish_multilabel)


def check_shapes(shape_t: tuple[int, ...], shape_p: tuple[int, ...]) -> tuple[int, int]:
    """(n_samples, n_labels) of two 2-D inputs of one shape, not empty."""
    if shape_t != shape_p:
        raise ValueError(f"y_true and y_pred must have the same shape, got {shape_t} and {shape_p}")
    n_samples, n_labels = shape_t
    if n_samples == 0 or n_labels == 0:
        raise ValueError(f"y_true is empty (shape {shape_t}); need at least one sample and one label")
    return n_samples, n_labels


def check_penalties(false_pos: float, false_neg: float) -> tuple[float, float]:
    """The weighted score's penalties, checked: (false_pos, false_neg) as floats."""
    return check_nonnegative_finite(false_pos, "false_pos"), check_nonnegative_finite(false_neg, "false_neg")


def result_from_counts(
    labels: _Triple, samples: _Triple, n_samples: int, n_labels: int, fp_penalty: float, fn_penalty: float
) -> MultilabelCounts:
    """The result from per-label and per-sample (both, true, predicted) counts of 1s."""

    def split(counts: _Triple, size: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        tp, true, pred = counts
        fp, fn = pred - tp, true - tp
        return tp, size - tp - fp - fn, fp, fn

    tp_l, tn_l, fp_l, fn_l = split(labels, n_samples)
    tp_s, tn_s, fp_s, fn_s = split(samples, n_labels)
    tp, tn, fp, fn = (np.int64(c.sum()) for c in (tp_l, tn_l, fp_l, fn_l))
    correct_s = tp_s + tn_s
    score_s = correct_s - fp_penalty * fp_s - fn_penalty * fn_s
    n_entries = n_samples * n_labels
    return MultilabelCounts(
        tp=tp,
        tn=tn,
        fp=fp,
        fn=fn,
        tp_per_label=tp_l,
        tn_per_label=tn_l,
        fp_per_label=fp_l,
        fn_per_label=fn_l,
        tp_per_sample=tp_s,
        tn_per_sample=tn_s,
        fp_per_sample=fp_s,
        fn_per_sample=fn_s,
        sample_accuracy=correct_s / n_labels,
        mean_sample_accuracy=np.float64((tp + tn) / n_entries),
        label_accuracy=(tp_l + tn_l) / n_samples,
        weighted_score_per_sample=score_s / n_labels,
        weighted_score=np.float64((tp + tn - fp_penalty * fp - fn_penalty * fn) / n_entries),
        false_pos=fp_penalty,
        false_neg=fn_penalty,
    )
