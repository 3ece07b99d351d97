"""ROC AUC with scikit-learn's signature and results (drop-in for ``sklearn.metrics.roc_auc_score``)."""

from __future__ import annotations

import itertools
import warnings
from typing import Any, Optional

import numpy as np

from . import _core
from ._typing import ArrayLike, FloatArray, FloatOrArray
from ._validation import as_numeric_array, check_choice, check_finite, check_real, resolve_n_jobs

__all__ = ["roc_auc_score"]


def _undefined_metric_warning() -> type[Warning]:
    """scikit-learn's UndefinedMetricWarning when it is installed (so filters on it keep working)."""
    try:
        from sklearn.exceptions import UndefinedMetricWarning
    except ImportError:
        return RuntimeWarning
    return UndefinedMetricWarning


def _warn(message: str) -> None:
    warnings.warn(message, _undefined_metric_warning(), stacklevel=4)


def _as_labels(y_true: Any) -> np.ndarray:
    """y_true as an ndarray of any dtype (strings allowed), NaN refused."""
    if hasattr(y_true, "toarray") and hasattr(y_true, "nnz"):  # scipy.sparse indicator matrix
        y_true = y_true.toarray()
    try:
        arr = np.asarray(y_true)
    except Exception as exc:
        raise ValueError(f"y_true must be array-like: {type(exc).__name__}: {exc}") from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            arr = arr.astype(str)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("y_true contains NaN or infinite values")
    if arr.dtype.kind not in "biufUS":
        raise ValueError(f"y_true must hold numbers or strings, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.ndim > 2 or arr.size == 0:
        raise ValueError(f"y_true must be a non-empty 1-D or 2-D array, got shape {arr.shape}")
    return arr


def _unique(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)``, without a sort when y holds at most two values (the common, large case)."""
    if y.dtype.kind in "biuf" and y.size:
        low, high = y.min(), y.max()
        if low == high:
            return np.array([low])
        if y.dtype.kind == "b" or np.count_nonzero(y == low) + np.count_nonzero(y == high) == y.size:
            return np.array([low, high])
    return np.unique(y)


def _target_type(y: np.ndarray) -> str:
    """scikit-learn's ``type_of_target`` for the cases roc_auc_score distinguishes."""
    column = y.ndim == 1 or y.shape[1] == 1
    uniques = _unique(y)
    numeric = y.dtype.kind in "biuf"
    integral = numeric and (y.dtype.kind != "f" or np.array_equal(uniques, np.round(uniques)))
    if not column:
        if integral and uniques.size < 3:
            return "multilabel-indicator"
        return ("multiclass" if integral or not numeric else "continuous") + "-multioutput"
    if numeric and not integral:
        return "continuous"
    return "multiclass" if uniques.size > 2 else "binary"


def _scores(y_score: Any) -> tuple[np.ndarray, np.dtype[Any]]:
    """y_score for the kernel, and the dtype it came in (float16 is widened; sums of
    probabilities are checked in the caller's dtype, as scikit-learn does)."""
    given = getattr(y_score, "dtype", None)
    arr = as_numeric_array(y_score, "y_score")
    if arr.ndim == 0 or arr.ndim > 2 or arr.size == 0:
        raise ValueError(f"y_score must be a non-empty 1-D or 2-D array, got shape {arr.shape}")
    check_finite(arr, "y_score")
    return arr, given if isinstance(given, np.dtype) and given.kind == "f" else arr.dtype


def _weights(sample_weight: Any, n: int) -> Optional[FloatArray]:
    if sample_weight is None:
        return None
    w = as_numeric_array(sample_weight, "sample_weight")
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D, got shape {w.shape}")
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} entries but y_true has {n} samples")
    return np.ascontiguousarray(w, dtype=np.float64)


def _check_weight_values(weight: np.ndarray) -> None:
    """Finite and non-negative. Checked only once a score is defined, as scikit-learn does:
    with one class present it returns NaN (and warns) whatever the weights."""
    check_finite(weight, "sample_weight")
    if (weight < 0).any():
        raise ValueError(
            f"sample_weight must be non-negative, got {weight.min()} (first at index {int(np.argmax(weight < 0))})"
        )


def _binary_auc(positive: np.ndarray, score: np.ndarray, weight: Optional[np.ndarray], max_fpr: Optional[float]) -> float:
    """One binary AUC: positive is a uint8 0/1 vector, score a 1-D view."""
    if positive.size == 0 or positive.min() == positive.max():
        _warn("Only one class is present in y_true. ROC AUC score is not defined in that case.")
        return np.nan
    if weight is not None:
        _check_weight_values(weight)
    if weight is not None and not np.any(weight):
        raise ValueError("sample_weight must contain at least one non-zero number")
    fpr = 1.0 if max_fpr is None else max_fpr
    partial = fpr != 1
    area, total_pos, total_neg = _core.roc_auc(score, positive, weight, fpr, resolve_n_jobs(None))
    if partial and not total_neg > 0 and total_pos > 0:
        # scikit-learn's curve has a single point then and it raises.
        raise ValueError("max_fpr: no negative sample has nonzero weight, so the partial AUC is undefined")
    if not total_neg > 0:
        _warn("No negative samples in y_true, false positive value should be meaningless")
        return np.nan
    if not total_pos > 0:
        _warn("No positive samples in y_true, true positive value should be meaningless")
        return np.nan
    if not partial:
        return float(area)
    # McClish correction: 0.5 for a non-discriminant model, 1 for a perfect one.
    min_area = 0.5 * fpr**2
    return float(0.5 * (1 + (area - min_area) / (fpr - min_area)))


def _average_binary(
    y01: np.ndarray, y_score: np.ndarray, average: Optional[str], weight: Optional[np.ndarray], max_fpr: Optional[float]
) -> FloatOrArray:
    """scikit-learn's ``_average_binary_score`` over the columns of a 0/1 indicator matrix."""
    if y_score.ndim == 1:
        y_score = y_score[:, None]
    if y01.shape != y_score.shape:
        raise ValueError(f"y_true has shape {y01.shape} but y_score has shape {y_score.shape}; they must match")
    average_weight = None
    score_weight = weight
    if average == "micro":
        if weight is not None:
            score_weight = np.repeat(weight, y01.shape[1])
        return _binary_auc(np.ascontiguousarray(y01).ravel(), np.ascontiguousarray(y_score).ravel(), score_weight, max_fpr)
    if average == "weighted":
        average_weight = (y01 * weight[:, None]).sum(axis=0) if weight is not None else y01.sum(axis=0, dtype=np.int64)
        if np.isclose(average_weight.sum(), 0):
            return 0.0
    elif average == "samples":
        average_weight, score_weight = weight, None
        if weight is not None:
            _check_weight_values(weight)
    if average == "samples":
        rows = np.ascontiguousarray(y01), np.ascontiguousarray(y_score)
        score = np.array([_binary_auc(rows[0][i], rows[1][i], None, max_fpr) for i in range(y01.shape[0])])
    else:
        score = np.array(
            [_binary_auc(y01[:, c], y_score[:, c], score_weight, max_fpr) for c in range(y01.shape[1])], dtype=np.float64
        )
    if average is None:
        return score
    if average_weight is not None:
        if not np.any(average_weight):  # scikit-learn ends in numpy's ZeroDivisionError here
            raise ValueError("sample_weight is zero for every sample: the 'samples' average is undefined")
        score[average_weight == 0] = 0
    return float(np.average(score, weights=average_weight))


def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Optional[str] = "macro",
    sample_weight: Optional[ArrayLike] = None,
    max_fpr: Optional[float] = None,
    multi_class: str = "raise",
    labels: Optional[ArrayLike] = None,
) -> FloatOrArray:
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

    Returns
    -------
    float or ndarray
        As scikit-learn: NaN, with an ``UndefinedMetricWarning``, when a
        binary problem has only one class.

    Raises
    ------
    ValueError
        For the inputs scikit-learn refuses (bad shapes, unsupported target
        types, scores that are not probabilities in the multi-class case,
        inconsistent ``labels``, bad options), and negative, NaN or infinite
        ``sample_weight`` once a score is defined. Unlike scikit-learn, a
        multi-label ``y_score`` whose shape differs from ``y_true``'s is an
        error instead of being silently truncated.
    NotImplementedError
        ``average=None`` with ``multi_class="ovo"``, as scikit-learn.

    Notes
    -----
    The AUC is the trapezoidal area under the ROC curve, which equals the
    weighted Mann-Whitney statistic with tied scores counted one half; the
    results agree with scikit-learn to rounding (1e-12). Every usable core
    sorts (see ``PAIRMETRICS_NUM_THREADS`` and ``threadpoolctl``); the result
    never depends on it.

    Differences from scikit-learn (deliberate; each is tested against it):

    * Multi-label indicators written with -1/1 and ``average="weighted"``:
      each label is weighted by its (weighted) number of positives.
      scikit-learn sums the raw indicator values, so a label weighs
      ``n_pos - n_neg``, which can be zero or negative.
    * A negative ``sample_weight`` is refused with a ``ValueError``.
      scikit-learn has no check: depending on the order of the scores it
      returns a number (possibly outside [0, 1]) or fails inside ``auc``.
    * NaN or infinite weights are refused for ``average="samples"`` too,
      where scikit-learn returns NaN. As in scikit-learn, weights are checked
      only once a score is defined: with one class present the result is
      NaN with a warning, whatever the weights.
    * A multi-label ``y_score`` whose shape differs from ``y_true``'s is an
      error (see Raises).

    Probabilities of multi-class input are checked to sum to one in their own
    dtype (a float16 row summing to 1 in float16 is accepted), as in
    scikit-learn, although float16 scores are read as float32.

    Examples
    --------
    >>> from pairmetrics import roc_auc_score
    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    if average is not None:
        check_choice(average, "average", ("micro", "macro", "samples", "weighted"))
    check_choice(multi_class, "multi_class", ("raise", "ovr", "ovo"))
    if max_fpr is not None:
        max_fpr = check_real(max_fpr, "max_fpr", low=0, low_open=True, high=1)
    y = _as_labels(y_true)
    scores, score_dtype = _scores(y_score)
    if scores.shape[0] != y.shape[0]:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: y_true has {y.shape[0]}, y_score {scores.shape[0]}"
        )
    weight = _weights(sample_weight, y.shape[0])
    kind = _target_type(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if kind == "multiclass" or (kind == "binary" and scores.ndim == 2 and scores.shape[1] > 2):
        if max_fpr is not None and max_fpr != 1.0:
            raise ValueError(
                "Partial AUC computation not available in multiclass setting, 'max_fpr' must be"
                f" set to `None`, received `max_fpr={max_fpr}` instead"
            )
        if multi_class == "raise":
            raise ValueError("multi_class must be in ('ovo', 'ovr') for multi-class y_true")
        return _multiclass(y, scores, labels, multi_class, average, weight, score_dtype)
    if kind == "binary":
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.ndim != 1:
            raise ValueError(f"y_score should be a 1d array for binary y_true, got an array of shape {scores.shape} instead")
        classes = _unique(y)
        if classes.size != 2:
            positive = np.zeros(y.shape[0], np.uint8)
        elif y.dtype == np.bool_:
            positive = y.view(np.uint8)
        else:
            positive = (y == classes[-1]).view(np.uint8)
        return _binary_auc(positive, scores, weight, max_fpr)
    if kind != "multilabel-indicator":
        raise ValueError(f"y_true: {kind} format is not supported")
    values = _unique(y)
    if not (np.isin(values, (0, 1)).all() or np.isin(values, (-1, 1)).all()):
        raise ValueError(f"y_true: multilabel indicator values must be 0/1 (or -1/1), got {values.tolist()}")
    if scores.ndim != 2:
        raise ValueError(f"y_score must be 2-D (n_samples, n_labels) for multilabel y_true, got shape {scores.shape}")
    return _average_binary((y == 1).view(np.uint8), scores, average, weight, max_fpr)


def _multiclass(
    y: np.ndarray, scores: np.ndarray, labels: Any, multi_class: str, average: Optional[str],
    weight: Optional[np.ndarray], score_dtype: np.dtype[Any],
) -> FloatOrArray:
    if scores.ndim != 2:
        raise ValueError(
            "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple classes. "
            f"Got `y_score.shape={scores.shape}`."
        )
    if not np.allclose(1, scores.sum(axis=1, dtype=score_dtype)):
        raise ValueError(
            "Target scores (y_score) need to be probabilities for multiclass roc_auc, "
            "i.e. they should sum up to 1.0 over classes"
        )
    options: tuple[Optional[str], ...] = ("macro", "weighted", None)
    if multi_class == "ovr":
        options = ("micro",) + options
    if average not in options:
        raise ValueError(f"average must be one of {options} for multiclass problems")
    if average is None and multi_class == "ovo":
        raise NotImplementedError("average=None is not implemented for multi_class='ovo'.")
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
        if len(classes) != scores.shape[1]:
            raise ValueError(
                f"Number of given labels, {len(classes)}, not equal to the number of columns in 'y_score', {scores.shape[1]}"
            )
        if len(np.setdiff1d(y, classes)):
            raise ValueError("'y_true' contains labels not in parameter 'labels'")
    else:
        classes = np.unique(y)
        if len(classes) != scores.shape[1]:
            raise ValueError("Number of classes in y_true not equal to the number of columns in 'y_score'")
    encoded = np.searchsorted(classes, y)
    if multi_class == "ovo":
        if weight is not None:
            raise ValueError(
                "sample_weight is not supported for multiclass one-vs-one ROC AUC, "
                "'sample_weight' must be None in this case."
            )
        # Hand & Till (2001): mean over pairs of classes present in y_true.
        present = np.unique(encoded)
        pair_scores, prevalence = [], []
        for a, b in itertools.combinations(present, 2):
            a_mask, b_mask = encoded == a, encoded == b
            ab = a_mask | b_mask
            prevalence.append(np.average(ab))
            sub = scores[ab]
            a_auc = _binary_auc(a_mask[ab].view(np.uint8), sub[:, a], None, None)
            b_auc = _binary_auc(b_mask[ab].view(np.uint8), sub[:, b], None, None)
            pair_scores.append((a_auc + b_auc) / 2)
        return float(np.average(pair_scores, weights=prevalence if average == "weighted" else None))
    indicator = np.zeros((y.shape[0], len(classes)), dtype=np.uint8)
    indicator[np.arange(y.shape[0]), encoded] = 1
    return _average_binary(indicator, scores, average, weight, None)
