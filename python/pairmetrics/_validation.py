"""Argument validation shared by every public function.

Everything is checked here, in Python, before any compiled kernel runs, so bad
input raises a ``ValueError``/``TypeError`` that names the argument instead of
crashing or returning a silently wrong number. Conversions use ``np.asarray``
and never copy when the dtype already fits.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

__all__ = [
    "as_numeric_array",
    "as_vector",
    "as_matrix",
    "check_finite",
    "check_same_length",
    "check_positive_finite",
    "check_choice",
    "resolve_n_jobs",
    "check_bool",
    "check_nonnegative_finite",
    "check_binary",
]


def as_numeric_array(x, name: str, *, allow_bool: bool = True) -> np.ndarray:
    """Convert ``x`` to an ndarray of a real numeric dtype (no copy if it already is one)."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be array-like of numbers: {exc}") from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must contain numbers only, got dtype object with non-numeric entries") from None
    kind = arr.dtype.kind
    if kind == "b" and not allow_bool:
        raise TypeError(f"{name} must be numeric, got dtype bool")
    if kind not in "biuf":
        raise TypeError(f"{name} must have a real numeric dtype, got dtype {arr.dtype}")
    return arr


def as_vector(x, name: str, *, min_length: int = 1) -> np.ndarray:
    """A 1-D numeric array; shape (n, 1) is accepted and flattened (as a view)."""
    arr = as_numeric_array(x, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    elif arr.ndim == 0:
        raise ValueError(f"{name} must be 1-D, got a scalar")
    elif arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D or of shape (n, 1), got shape {arr.shape}")
    if arr.shape[0] < min_length:
        raise ValueError(f"{name} needs at least {min_length} elements, got {arr.shape[0]}")
    return arr


def as_matrix(x, name: str, *, min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """A 2-D numeric array with at least ``min_rows`` rows and ``min_cols`` columns."""
    arr = as_numeric_array(x, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} rows, got {arr.shape[0]}")
    if arr.shape[1] < min_cols:
        raise ValueError(f"{name} needs at least {min_cols} columns, got {arr.shape[1]}")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if a float array holds NaN or +-inf (integer arrays are always finite)."""
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))
        what = "NaN" if np.isnan(arr.ravel()[bad[0]]) else "infinite values"
        raise ValueError(f"{name} contains {what} (first at flat index {bad[0]}, {bad.size} non-finite in all)")


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{name_a} and {name_b} must have the same length, got {a.shape[0]} and {b.shape[0]}")


def check_positive_finite(value, name: str) -> float:
    """A finite real number > 0, returned as float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def check_choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}")
    return value


def resolve_n_jobs(n_jobs) -> int:
    """scikit-learn semantics: None -> 1, -1 -> all cores, -2 -> all but one, k > 0 -> k."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (numbers.Integral, np.integer)):
        raise TypeError(f"n_jobs must be an int or None, got {type(n_jobs).__name__}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0 (use None or 1 for one thread, -1 for all cores)")
    cores = os.cpu_count() or 1
    return n_jobs if n_jobs > 0 else max(1, cores + 1 + n_jobs)


def check_bool(value, name: str) -> bool:
    """A Python or numpy bool (not an int: ``average=1`` is more likely a slip)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


def check_nonnegative_finite(value, name: str) -> float:
    """A finite real number >= 0, returned as float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {value}")
    return value


def check_binary(arr: np.ndarray, name: str) -> None:
    """Raise unless every entry of a numeric array is 0 or 1 (bool arrays always pass)."""
    kind = arr.dtype.kind
    if kind == "b" or arr.size == 0:
        return
    if kind == "u":
        if arr.max() <= 1:
            return
    elif kind == "i":
        if arr.min() >= 0 and arr.max() <= 1:
            return
    bad = np.flatnonzero(~((arr == 0) | (arr == 1)).ravel())
    if bad.size:
        first = np.unravel_index(bad[0], arr.shape)
        index = first[0] if arr.ndim == 1 else tuple(int(i) for i in first)
        raise ValueError(
            f"{name} must hold only 0 and 1, found {arr[first].item()!r} at index {index} ({bad.size} such entries)"
        )
