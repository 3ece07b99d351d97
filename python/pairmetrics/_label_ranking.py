"""Ranking metrics of score matrices with scikit-learn's signatures and results.

Drop-ins for ``sklearn.metrics.label_ranking_average_precision_score``,
``coverage_error``, ``label_ranking_loss``, ``dcg_score``, ``ndcg_score`` and
``top_k_accuracy_score``. Every row is computed by a compiled kernel (threads
across rows, no Python loop, the scores read in place as float32 or float64);
the averages over rows are numpy's, as in scikit-learn.
"""

from __future__ import annotations

import numbers
from typing import Any, overload

import numpy as np

from . import _core
from ._groups import GroupedNdcg, factorize_groups, grouped_result
from ._labels import (
    as_labels,
    check_sample_counts,
    invalid_parameter,
    is_integral,
    target_type,
    unique_labels,
    warn_undefined,
)
from ._routing import routed
from ._typing import ArrayLike, FloatArray
from ._validation import as_numeric_array, check_finite, resolve_n_jobs

__all__ = [
    "coverage_error",
    "dcg_score",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "ndcg_score",
    "top_k_accuracy_score",
]


def _is_sparse(x: Any) -> bool:
    return hasattr(x, "toarray") and hasattr(x, "nnz")


def _score_matrix(y_score: ArrayLike, name: str = "y_score") -> np.ndarray:
    """Finite scores as float32 or float64 (other dtypes are widened to float64), read in place when they fit."""
    arr = as_numeric_array(y_score, name)
    check_finite(arr, name)
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    return arr


def _numeric_labels(y_true: ArrayLike) -> np.ndarray:
    """y_true of a multi-label metric: numbers only (scikit-learn's ``check_array``), sparse made dense."""
    if _is_sparse(y_true):
        y_true = y_true.toarray()  # type: ignore[union-attr]
    arr = as_labels(y_true)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"y_true must hold numbers, got dtype {arr.dtype}")
    return arr


def _label_kind(y: np.ndarray) -> str:
    """scikit-learn's type_of_target of y_true, without sorting it: only whether it holds one, two or more
    distinct values (and whether they are whole numbers) matters here."""
    if y.size == 0 or y.dtype.kind not in "biuf":
        uniques = unique_labels(y)
        return target_type(uniques, y.ndim == 1 or y.shape[1] == 1, is_integral(uniques))
    low, high = y.min(), y.max()
    at_ends = np.count_nonzero(y == low) + (np.count_nonzero(y == high) if high != low else 0)
    distinct = np.array([low] if low == high else [low, high] if at_ends == y.size else [low, high, high])
    return target_type(distinct, y.ndim == 1 or y.shape[1] == 1, is_integral(y))


def _multilabel_input(
    y_true: ArrayLike, y_score: ArrayLike, sample_weight: ArrayLike | None, allow_column: bool
) -> tuple[np.ndarray, np.ndarray, FloatArray | None]:
    """(relevant as uint8, scores, weights) with scikit-learn's checks of a multi-label ranking problem."""
    y = _numeric_labels(y_true)
    scores = _score_matrix(y_score)
    check_sample_counts(y.shape[0], scores.shape[0])
    weight = _sample_weight(sample_weight, y.shape[0])
    if y.shape != scores.shape:
        raise ValueError("y_true and y_score have different shape")
    kind = _label_kind(y)
    if kind != "multilabel-indicator" and not (allow_column and kind == "binary" and y.ndim == 2):
        raise ValueError(f"{kind} format is not supported")
    relevant = y.view(np.uint8) if y.dtype == np.bool_ else (y != 0).view(np.uint8)
    return relevant, scores, weight


def _sample_weight(sample_weight: ArrayLike | None, n: int) -> FloatArray | None:
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: y_true has {n}, sample_weight "
            f"{w.shape[0] if w.ndim else 'a scalar'}"
        )
    return w


def _rows(relevant: np.ndarray, scores: np.ndarray, metric: str) -> FloatArray:
    out: FloatArray = _core.label_ranking_rows(scores, relevant, metric, resolve_n_jobs(None))
    return out


@routed
def label_ranking_average_precision_score(
    y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Label ranking average precision (LRAP), with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.label_ranking_average_precision_score`:
    for each sample and each relevant label, the fraction of the labels scored
    at least as high that are relevant, averaged. Rows where every label or
    none is relevant score 1. One compiled pass over the rows (no Python loop).

    Parameters
    ----------
    y_true : array_like or sparse matrix, shape (n, n_labels)
        Relevance indicator (nonzero: relevant).
    y_score : array_like, shape (n, n_labels)
        Scores; higher ranks a label higher.
    sample_weight : array_like, shape (n,), optional
        Sample weights.

    Returns
    -------
    float

    Examples
    --------
    >>> from pairmetrics.sklearn import label_ranking_average_precision_score
    >>> round(label_ranking_average_precision_score([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]]), 4)
    0.4167
    """
    relevant, scores, weight = _multilabel_input(y_true, y_score, sample_weight, allow_column=True)
    values = _rows(relevant, scores, "average_precision")
    if weight is None:
        return float(values.sum() / values.shape[0])
    return float((values * weight).sum() / np.sum(weight))


@routed
def coverage_error(y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Coverage error, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.coverage_error`: how far down the
    ranking of labels one must go to cover every relevant label (ties count
    as covered), averaged over samples; 0 for a sample without relevant label.

    Parameters
    ----------
    y_true : array_like, shape (n, n_labels)
        Relevance indicator (nonzero: relevant).
    y_score : array_like, shape (n, n_labels)
        Scores; higher ranks a label higher.
    sample_weight : array_like, shape (n,), optional
        Sample weights.

    Returns
    -------
    float

    Examples
    --------
    >>> from pairmetrics.sklearn import coverage_error
    >>> coverage_error([[1, 0, 0], [0, 1, 1]], [[1, 0, 0], [0, 1, 1]])
    1.5
    """
    if _is_sparse(y_true):
        raise TypeError("coverage_error needs a dense y_true (scikit-learn refuses sparse input here too)")
    for name, given in (("y_true", y_true), ("y_score", y_score)):
        if np.ndim(given) != 2:
            raise ValueError(f"Expected 2D array, got {np.ndim(given)}D array instead: {name} must be 2-D here")
    relevant, scores, weight = _multilabel_input(y_true, y_score, sample_weight, allow_column=False)
    return float(np.average(_rows(relevant, scores, "coverage"), weights=weight))


@routed
def label_ranking_loss(y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Label ranking loss, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.label_ranking_loss`: the fraction of
    (relevant, irrelevant) label pairs ranked wrongly (a tie counts as wrong),
    averaged over samples; 0 for a sample where every label or none is relevant.

    Parameters
    ----------
    y_true : array_like or sparse matrix, shape (n, n_labels)
        Relevance indicator (nonzero: relevant).
    y_score : array_like, shape (n, n_labels)
        Scores; higher ranks a label higher.
    sample_weight : array_like, shape (n,), optional
        Sample weights.

    Returns
    -------
    float

    Examples
    --------
    >>> from pairmetrics.sklearn import label_ranking_loss
    >>> round(label_ranking_loss([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]]), 4)
    0.75
    """
    relevant, scores, weight = _multilabel_input(y_true, y_score, sample_weight, allow_column=False)
    return float(np.average(_rows(relevant, scores, "loss"), weights=weight))


def _check_k(k: Any, name: str = "k", optional: bool = True) -> int | None:
    if k is None and optional:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise invalid_parameter(
            f"The '{name}' parameter must be an int in the range [1, inf){' or None' * optional}. Got {k!r} instead."
        )
    return int(k)


def _gains(y: np.ndarray) -> np.ndarray:
    """y_true as the kernel reads it: uint8 when every value is an integer in [0, 255], else float32/float64."""
    if y.dtype == np.bool_:
        return y.view(np.uint8)
    if y.dtype.kind in "iu":
        if y.size and y.min() >= 0 and y.max() <= 255:
            return y.astype(np.uint8)
        return y.astype(np.float64)
    return y if y.dtype in (np.float32, np.float64) else y.astype(np.float64)


def _dcg_input(
    y_true: ArrayLike, y_score: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, FloatArray | None]:
    y = _numeric_labels(y_true)
    if y.dtype.kind == "f":
        check_finite(y, "y_true")
    y = as_numeric_array(y, "y_true")
    scores = _score_matrix(y_score)
    check_sample_counts(y.shape[0], scores.shape[0])
    return y, scores, _sample_weight(sample_weight, y.shape[0])


def _check_dcg_target(y: np.ndarray, scores: np.ndarray) -> None:
    supported = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")
    # numbers in two or more columns are always one of these: no pass over y is needed to know it
    kind = supported[0] if y.ndim == 2 and y.shape[1] > 1 and y.dtype.kind in "biuf" else _label_kind(y)
    if kind not in supported:
        raise ValueError(f"Only {supported} formats are supported. Got {kind} instead")
    if scores.shape != y.shape:
        raise ValueError(f"y_true has shape {y.shape} but y_score has shape {scores.shape}; they must match")


def _dcg_rows(
    y: np.ndarray, scores: np.ndarray, k: int | None, log_base: float, ignore_ties: bool, normalize: bool
) -> FloatArray:
    n_labels = y.shape[1]
    with np.errstate(divide="ignore"):
        discount = 1 / (np.log(np.arange(n_labels) + 2) / np.log(log_base))
    if k is not None:
        discount[k:] = 0
    cumsum = np.cumsum(discount)
    limit = n_labels if k is None else min(k, n_labels)
    out: FloatArray = _core.dcg_rows(
        scores, _gains(y), discount, cumsum, limit, bool(ignore_ties), normalize, resolve_n_jobs(None)
    )
    return out


@routed
def dcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
) -> float:
    """Discounted cumulative gain, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.dcg_score`: the gains of each row
    ranked by score, discounted by ``1 / log_base(rank + 1)``, summed over
    the first ``k`` ranks; tied scores share their mean gain (the average
    over the orders of the ties). One compiled pass over the rows: few
    relevant labels are placed by counting, otherwise the labels at or above
    the k-th score are selected and sorted.

    Parameters
    ----------
    y_true : array_like, shape (n, n_labels)
        True gains (relevance).
    y_score : array_like, shape (n, n_labels)
        Scores; higher ranks a label higher.
    k : int, optional
        Only the ``k`` highest ranks count.
    log_base : float, default 2
        Base of the logarithm of the discount.
    sample_weight : array_like, shape (n,), optional
        Sample weights.
    ignore_ties : bool, default False
        Rank tied scores one after the other (the later label first) instead
        of averaging over their orders.

    Returns
    -------
    float

    Examples
    --------
    >>> from pairmetrics.sklearn import dcg_score
    >>> round(dcg_score([[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]]), 4)
    9.4995
    """
    k = _check_k(k)
    if isinstance(log_base, bool) or not isinstance(log_base, numbers.Real) or not log_base > 0:
        raise invalid_parameter(
            f"The 'log_base' parameter must be a float in the range (0.0, inf). Got {log_base!r} instead."
        )
    y, scores, weight = _dcg_input(y_true, y_score, sample_weight)
    _check_dcg_target(y, scores)
    return float(np.average(_dcg_rows(y, scores, k, float(log_base), ignore_ties, False), weights=weight))


@overload
def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    groups: None = None,
) -> float: ...
@overload
def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    groups: ArrayLike,
) -> GroupedNdcg: ...
@routed
def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    groups: ArrayLike | None = None,
) -> float | GroupedNdcg:
    """Normalised discounted cumulative gain, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.ndcg_score`: each row's DCG (see
    :func:`dcg_score`) divided by the DCG of its ideal ranking (0 for a row
    without gain), averaged over rows.

    Parameters
    ----------
    y_true : array_like, shape (n, n_labels)
        True gains (relevance), non-negative.
    y_score : array_like, shape (n, n_labels)
        Scores; higher ranks a label higher.
    k : int, optional
        Only the ``k`` highest ranks count.
    sample_weight : array_like, shape (n,), optional
        Sample weights.
    ignore_ties : bool, default False
        Rank tied scores one after the other (the later label first).
    groups : array_like, shape (n,), optional
        A group key per row (a query id, say; numbers, strings, any sortable
        keys): the NDCG of every group in one call, as a
        :class:`GroupedNdcg` (each group's mean NDCG over its
        rows, weighted by ``sample_weight``). Not in scikit-learn.

    Returns
    -------
    float in [0, 1], or GroupedNdcg with ``groups``

    Examples
    --------
    >>> from pairmetrics.sklearn import ndcg_score
    >>> round(ndcg_score([[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]]), 4)
    0.6957
    """
    k = _check_k(k)
    y, scores, weight = _dcg_input(y_true, y_score, sample_weight)
    if y.size and y.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if y.ndim > 1 and y.shape[1] <= 1:
        raise ValueError(
            f"Computing NDCG is only meaningful when there is more than 1 document. Got {y.shape[1]} instead."
        )
    _check_dcg_target(y, scores)
    rows = _dcg_rows(y, scores, k, 2.0, ignore_ties, True)
    if groups is not None:
        return _grouped_mean(rows, weight, groups)
    return float(np.average(rows, weights=weight))


def _grouped_mean(rows: FloatArray, weight: FloatArray | None, groups: ArrayLike) -> GroupedNdcg:
    """Each group's (weighted) mean of the per-row values."""
    keys, codes = factorize_groups(groups, rows.shape[0], "y_true")
    sizes = np.bincount(codes, minlength=keys.shape[0]).astype(np.int64)
    w = np.ones(rows.shape[0]) if weight is None else weight
    totals = np.bincount(codes, weights=w, minlength=keys.shape[0])
    sums = np.bincount(codes, weights=rows * w, minlength=keys.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(totals != 0, sums / totals, np.nan)
    result: GroupedNdcg = grouped_result(GroupedNdcg, keys, sizes, True, ndcg=means)
    return result


def _top_k_classes(uniques: np.ndarray, labels: ArrayLike | None, n_score_classes: int) -> np.ndarray:
    """The classes (sorted) of top_k_accuracy_score (``uniques``: those of y_true), with scikit-learn's checks."""
    if labels is None:
        classes = uniques
        if classes.shape[0] != n_score_classes:
            raise ValueError(
                f"Number of classes in 'y_true' ({classes.shape[0]}) not equal to the number of classes in "
                f"'y_score' ({n_score_classes}).You can provide a list of all known classes by assigning it to the "
                "`labels` parameter."
            )
        return classes
    given = np.asarray(labels)
    if given.ndim == 2 and given.shape[1] == 1:
        given = given[:, 0]
    if given.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {given.shape}")
    classes = np.unique(given)
    if classes.shape[0] != given.shape[0]:
        raise ValueError("Parameter 'labels' must be unique.")
    if not np.array_equal(classes, given):
        raise ValueError("Parameter 'labels' must be ordered.")
    if classes.shape[0] != n_score_classes:
        raise ValueError(
            f"Number of given labels ({classes.shape[0]}) not equal to the number of classes in 'y_score' "
            f"({n_score_classes})."
        )
    if not np.isin(uniques, classes).all():
        raise ValueError("'y_true' contains labels not in parameter 'labels'.")
    return classes


@routed
def top_k_accuracy_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int = 2,
    normalize: bool = True,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
) -> float:
    """Top-k accuracy, with scikit-learn's signature and results.

    A drop-in for :func:`sklearn.metrics.top_k_accuracy_score`: the fraction
    (or number) of samples whose true class is among the ``k`` highest
    scores. Ties follow scikit-learn's order (the later class first); each
    row costs one pass over its scores (a count of the classes ranked before
    the true one), not a sort.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        True classes.
    y_score : array_like, shape (n,) or (n, n_classes)
        Scores (of the larger class, for binary input).
    k : int, default 2
        Number of top classes that count as a hit.
    normalize : bool, default True
        The fraction of hits; otherwise their (weighted) number.
    sample_weight : array_like, shape (n,), optional
        Sample weights.
    labels : array_like, optional
        Every class, sorted, when ``y_true`` lacks some.

    Returns
    -------
    float

    Examples
    --------
    >>> from pairmetrics.sklearn import top_k_accuracy_score
    >>> top_k_accuracy_score([0, 1, 2, 2], [[0.5, 0.2, 0.2], [0.3, 0.4, 0.2], [0.2, 0.4, 0.3], [0.7, 0.2, 0.1]])
    0.75
    """
    k = _check_k(k, optional=False) or 1
    y = as_labels(y_true)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    uniques = unique_labels(y)
    kind = target_type(uniques, y.ndim == 1, is_integral(uniques))
    if kind == "binary" and labels is not None and len(np.asarray(labels)) > 2:
        kind = "multiclass"
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"y type must be 'binary' or 'multiclass', got '{kind}' instead.")
    scores = _score_matrix(y_score)
    if kind == "binary":
        if scores.ndim == 2 and scores.shape[1] != 1:
            raise ValueError(
                f"`y_true` is binary while y_score is 2d with {scores.shape[1]} classes. If `y_true` does not "
                "contain all the labels, `labels` must be provided."
            )
        scores = scores.reshape(-1) if scores.ndim == 2 else scores
    elif scores.ndim != 2:
        raise ValueError(
            "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple classes. "
            f"Got `y_score.shape={scores.shape}`."
        )
    check_sample_counts(y.shape[0], scores.shape[0])
    weight = _sample_weight(sample_weight, y.shape[0])
    classes = _top_k_classes(uniques, labels, scores.shape[1] if scores.ndim == 2 else 2)
    if k >= classes.shape[0]:
        warn_undefined(
            f"'k' ({k}) greater than or equal to 'n_classes' ({classes.shape[0]}) will result in a perfect score "
            "and is therefore meaningless."
        )
    encoded = np.searchsorted(classes, y).astype(np.int64)
    if kind == "binary":
        if k == 1:
            threshold = 0.5 if scores.min() >= 0 and scores.max() <= 1 else 0
            hits = (scores > threshold).astype(np.int64) == encoded
        else:
            hits = np.ones(scores.shape, dtype=np.bool_)
    else:
        hits = _core.top_k_hits(scores, encoded, k, resolve_n_jobs(None)).view(np.bool_)
    if normalize:
        return float(np.average(hits, weights=weight))
    if weight is None:
        return float(np.sum(hits))
    return float(np.dot(hits, weight))
