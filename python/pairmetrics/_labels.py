"""Labels, scores and weights of the ranking metrics: conversion, structural checks and target types.

Shared by the capabilities that take scikit-learn's ``y_true, y_score`` (ROC AUC, the ranking curves,
the label rankings) and by their Dask layers, so that each check and message is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._routing import warn
from ._typing import FloatArray
from ._validation import as_numeric_array, check_finite

__all__: list[str] = []
# What the Dask layer may use: the structural checks and the target type.
__seams__ = [
    "binary_scores",
    "check_label_shape",
    "check_sample_counts",
    "check_score_shape",
    "is_integral",
    "is_partial",
    "one_hot",
    "target_type",
    "warn_undefined",
    "weight_vector",
]


def _undefined_metric_warning() -> type[Warning]:
    """scikit-learn's UndefinedMetricWarning when it is installed (so filters on it keep working)."""
    try:
        from sklearn.exceptions import UndefinedMetricWarning
    except ImportError:
        return RuntimeWarning
    return UndefinedMetricWarning


def warn_undefined(message: str) -> None:
    """scikit-learn's UndefinedMetricWarning (or RuntimeWarning), attributed to the caller's line."""
    warn(message, _undefined_metric_warning())


def invalid_parameter(message: str) -> ValueError:
    """scikit-learn's InvalidParameterError (a ValueError and a TypeError) when it is installed."""
    try:
        from sklearn.utils._param_validation import InvalidParameterError
    except ImportError:
        return ValueError(message)
    return InvalidParameterError(message)


def check_label_shape(shape: tuple[int, ...]) -> None:
    if len(shape) == 0 or len(shape) > 2 or 0 in shape:
        raise ValueError(f"y_true must be a non-empty 1-D or 2-D array, got shape {tuple(shape)}")


def check_score_shape(shape: tuple[int, ...]) -> None:
    if len(shape) == 0 or len(shape) > 2 or 0 in shape:
        raise ValueError(f"y_score must be a non-empty 1-D or 2-D array, got shape {tuple(shape)}")


def check_sample_counts(n_true: int, n_score: int) -> None:
    if n_score != n_true:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: y_true has {n_true}, y_score {n_score}"
        )


def weight_vector(w: Any, n: int) -> Any:
    """sample_weight (a numeric numpy or Dask array) as a vector of n entries; shape (n, 1) is flattened."""
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D, got shape {w.shape}")
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} entries but y_true has {n} samples")
    return w


def is_integral(values: np.ndarray) -> bool:
    """True when the numbers are whole (scikit-learn's test for class labels)."""
    return values.dtype.kind != "f" or bool(np.array_equal(values, np.round(values)))


def target_type(uniques: np.ndarray, column: bool, integral: bool) -> str:
    """scikit-learn's ``type_of_target`` for the cases roc_auc_score distinguishes, from the distinct
    values of y (sorted), whether y is one column and whether its numbers are whole."""
    numeric = uniques.dtype.kind in "biuf"
    integral = numeric and integral
    if not column:
        if integral and uniques.size < 3:
            return "multilabel-indicator"
        return ("multiclass" if integral or not numeric else "continuous") + "-multioutput"
    if numeric and not integral:
        return "continuous"
    return "multiclass" if uniques.size > 2 else "binary"


def binary_scores(scores: Any) -> Any:
    """The score vector of a binary problem (shape (n, 1) flattened)."""
    check_binary_score_shape(scores.shape)
    return scores[:, 0] if scores.ndim == 2 else scores


def check_binary_score_shape(shape: tuple[int, ...]) -> None:
    """y_score of a binary problem: a vector or one column."""
    if len(shape) != 1 and not (len(shape) == 2 and shape[1] == 1):
        raise ValueError(f"y_score should be a 1d array for binary y_true, got an array of shape {shape} instead")


def one_hot(encoded: np.ndarray, n_classes: int) -> np.ndarray:
    """The 0/1 indicator matrix of class codes."""
    indicator = np.zeros((encoded.shape[0], n_classes), dtype=np.uint8)
    indicator[np.arange(encoded.shape[0]), encoded] = 1
    return indicator


def as_labels(y_true: Any) -> np.ndarray:
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
    if arr.dtype.kind == "S":  # scikit-learn's type_of_target refuses bytes
        raise TypeError(
            "Support for labels represented as bytes is not supported. Convert the labels to a string or integer "
            "format."
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("y_true contains NaN or infinite values")
    if arr.dtype.kind not in "biufUS":
        raise ValueError(f"y_true must hold numbers or strings, got dtype {arr.dtype}")
    check_label_shape(arr.shape)
    return arr


def unique_labels(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)``, without a sort when y holds at most two values (the common, large case)."""
    if y.dtype.kind in "biuf" and y.size:
        low, high = y.min(), y.max()
        if low == high:
            return np.array([low])
        if y.dtype.kind == "b" or np.count_nonzero(y == low) + np.count_nonzero(y == high) == y.size:
            return np.array([low, high])
    return np.unique(y)


def as_scores(y_score: Any, *, finite: bool = True) -> tuple[np.ndarray, np.dtype[Any]]:
    """y_score for the kernel, and the dtype it came in (float16 is widened; sums of
    probabilities are checked in the caller's dtype, as scikit-learn does); ``finite``: refuse NaN and
    infinities here (else the caller's plan does, from the facts)."""
    if not isinstance(getattr(y_score, "dtype", None), np.dtype):  # a DataFrame, a list: the dtype numpy gives it
        try:
            y_score = np.asarray(y_score)
        except Exception:  # ragged and the like: as_numeric_array names the problem
            pass
    given = getattr(y_score, "dtype", None)
    arr = as_numeric_array(y_score, "y_score")
    check_score_shape(arr.shape)
    if finite:
        check_finite(arr, "y_score")
    return arr, given if isinstance(given, np.dtype) and given.kind == "f" else arr.dtype


def as_weights(sample_weight: Any, n: int) -> FloatArray | None:
    if sample_weight is None:
        return None
    w = weight_vector(as_numeric_array(sample_weight, "sample_weight"), n)
    return np.ascontiguousarray(w, dtype=np.float64)


# --------------------------------------------------------------------------- one binary AUC, as scikit-learn reports it


def is_partial(max_fpr: float | None) -> bool:
    return max_fpr is not None and max_fpr != 1


def binary_auc_defined(
    n_positive: int, n_negative: int, any_weight: bool, check_weights: Callable[[], None] | None = None
) -> bool:
    """Whether one binary AUC is defined: warns (one class present) or raises (all weights zero) otherwise.

    ``check_weights`` raises on non-finite or negative sample weights; as in scikit-learn, the weights are
    checked only once both classes are present (with one class the result is NaN whatever the weights)."""
    if n_positive == 0 or n_negative == 0:
        warn_undefined("Only one class is present in y_true. ROC AUC score is not defined in that case.")
        return False
    if check_weights is not None:
        check_weights()
    if not any_weight:
        raise ValueError("sample_weight must contain at least one non-zero number")
    return True


def binary_auc_value(area: float, total_pos: float, total_neg: float, max_fpr: float | None) -> float:
    """One binary AUC from the area under the curve normalised by the weight totals (the partial area up to
    max_fpr when partial), as scikit-learn reports it."""
    partial = is_partial(max_fpr)
    if partial and not total_neg > 0 and total_pos > 0:
        # scikit-learn's curve has a single point then and it raises.
        raise ValueError("max_fpr: no negative sample has nonzero weight, so the partial AUC is undefined")
    if not total_neg > 0:
        warn_undefined("No negative samples in y_true, false positive value should be meaningless")
        return np.nan
    if not total_pos > 0:
        warn_undefined("No positive samples in y_true, true positive value should be meaningless")
        return np.nan
    if not partial:
        return float(area)
    return float(mcclish(area, max_fpr))


def mcclish(area: Any, max_fpr: float | None) -> Any:
    """McClish's standardised partial AUC (elementwise): 0.5 for a non-discriminant model, 1 for a perfect one."""
    fpr = 1.0 if max_fpr is None else max_fpr  # not None when partial
    min_area = 0.5 * fpr**2
    return 0.5 * (1 + (area - min_area) / (fpr - min_area))
