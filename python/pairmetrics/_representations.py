"""Representations of a discrete target: indicator features and cut features.

For a target Y with domain ``values = [v_1, ..., v_k]``:

- indicators: k binary features, ``Y_i = 1`` exactly when ``Y = v_i``;
- cuts (ordered domains): k - 1 binary features ``Y <= v_i`` for i < k; the
  cut for the maximal value is always true and is omitted.

A prediction in either representation is a vector of reals per example; the
inverses turn exact 0/1 vectors back into values (``strict=True``) or
summarise real predictions (``strict=False``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ._routing import routed
from ._typing import ArrayLike
from ._validation import as_matrix, check_binary, check_bool, check_finite

__all__ = ["to_indicators", "to_cuts", "from_indicators", "from_cuts", "check_cuts"]


def _domain(values: Any, *, ordered: bool) -> np.ndarray:
    try:
        v = np.asarray(values)
    except Exception as exc:  # ragged input
        raise TypeError(f"values must be a 1-D sequence: {exc}") from None
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    if v.size == 0:
        raise ValueError("values must list at least one value, got an empty sequence")
    if v.dtype.kind == "f" and np.isnan(v).any():
        raise ValueError("values must not contain NaN (NaN equals nothing, so it cannot be matched)")
    if v.dtype.kind in "biuf":
        if ordered and v.size > 1 and not (v[1:] > v[:-1]).all():
            raise ValueError("values must be strictly increasing for cuts (they define the order Y <= v)")
    try:
        distinct = np.unique(v).size
    except TypeError:  # objects that do not sort: fall back to hashing
        distinct = len(set(v.tolist()))
    if distinct != v.size:
        raise ValueError(f"values must be distinct, got {v.size} values with {v.size - distinct} repeats")
    return v


def _codes(y: Any, v: np.ndarray) -> np.ndarray:
    """Position in ``v`` of every entry of ``y``; ValueError naming y for a value not in v."""
    try:
        arr = np.asarray(y)
    except Exception as exc:
        raise TypeError(f"y must be array-like: {exc}") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (one value per example), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("y is empty; it needs at least one example")
    try:
        order = np.argsort(v, kind="stable")
        sorted_v = v[order]
        pos = np.minimum(np.searchsorted(sorted_v, arr), v.size - 1)
        found = np.asarray(sorted_v[pos] == arr, dtype=bool)
    except TypeError:  # types that do not compare (numbers against strings, ...)
        index = {value: i for i, value in enumerate(v.tolist())}
        codes = [index.get(value, -1) for value in arr.tolist()]
        pos, order, found = np.asarray(codes), np.arange(v.size), np.asarray(codes) >= 0
        pos = np.where(found, pos, 0)
    if found.shape != arr.shape or not found.all():
        first = int(np.flatnonzero(~found)[0]) if found.shape == arr.shape else 0
        raise ValueError(f"y[{first}] = {arr[first].item()!r} is not in values")
    return order[pos]


def _feature_dtype(dtype: Any) -> np.dtype[Any]:
    """A real numeric (or bool) result dtype, refused with an error naming ``dtype``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a numpy dtype, got {dtype!r}") from None
    if dt.kind not in "biuf":
        raise TypeError(f"dtype must be a real numeric dtype, got {dt}")
    return dt


@routed
def to_indicators(y: ArrayLike, values: ArrayLike, *, dtype: npt.DTypeLike = np.float64) -> npt.NDArray[Any]:
    """One binary indicator feature per value: ``out[e, i] = 1`` exactly when ``y[e] == values[i]``.

    Parameters
    ----------
    y : array_like, shape (n,)
        The target value of each example; every entry must be in ``values``.
    values : sequence, length k
        The domain, distinct values (numbers, strings, ...); fixes the column order.
    dtype : dtype, default float64
        Dtype of the result (float64 so that arithmetic on it never wraps around).

    Returns
    -------
    numpy.ndarray, shape (n, k)
        Exactly one 1 in every row.
    """
    dtype = _feature_dtype(dtype)
    v = _domain(values, ordered=False)
    codes = _codes(y, v)
    out = np.zeros((codes.size, v.size), dtype=dtype)
    out[np.arange(codes.size), codes] = 1
    return out


@routed
def to_cuts(y: ArrayLike, values: ArrayLike, *, dtype: npt.DTypeLike = np.float64) -> npt.NDArray[Any]:
    """Cut features ``Y <= values[i]`` for every value but the largest.

    Parameters
    ----------
    y : array_like, shape (n,)
        The target value of each example; every entry must be in ``values``.
    values : sequence, length k
        The ordered domain, smallest first. Numbers must be strictly
        increasing; for other values (``["short", "medium", "long"]``) the
        order given is the order used.
    dtype : dtype, default float64
        Dtype of the result.

    Returns
    -------
    numpy.ndarray, shape (n, k - 1)
        Each row is some 0s followed by 1s; all 0s for the largest value.
    """
    dtype = _feature_dtype(dtype)
    v = _domain(values, ordered=True)
    codes = _codes(y, v)
    return (codes[:, None] <= np.arange(v.size - 1)).astype(dtype)


def _features(x: Any, name: str, n_columns: int, what: str) -> np.ndarray:
    arr = as_matrix(x, name, min_cols=0)
    if arr.shape[1] != n_columns:
        raise ValueError(f"{name} must have {n_columns} columns ({what}), got {arr.shape[1]}")
    check_finite(arr, name)
    return arr


@routed
def from_indicators(indicators: ArrayLike, values: ArrayLike, *, strict: bool = True) -> npt.NDArray[Any]:
    """The value each row of indicator features stands for (inverse of :func:`to_indicators`).

    Parameters
    ----------
    indicators : array_like, shape (n, k)
        One column per value, in the order of ``values``.
    values : sequence, length k
        The domain used to build the indicators.
    strict : bool, default True
        Require exact indicators: entries 0/1 with exactly one 1 per row.
        With ``strict=False`` any real predictions are accepted and each row
        gives the value with the largest prediction (the predicted mode; ties
        go to the earliest value).

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    v = _domain(values, ordered=False)
    ind = _features(indicators, "indicators", v.size, "one per value")
    if check_bool(strict, "strict"):
        check_binary(ind, "indicators")
        ones = np.count_nonzero(ind, axis=1)
        if (ones != 1).any():
            row = int(np.flatnonzero(ones != 1)[0])
            raise ValueError(f"indicators must have exactly one 1 per row, row {row} has {ones[row]}")
    return v[np.argmax(ind, axis=1)]


@routed
def from_cuts(cuts: ArrayLike, values: ArrayLike, *, strict: bool = True) -> npt.NDArray[Any]:
    """The value each row of cut features stands for (inverse of :func:`to_cuts`).

    Parameters
    ----------
    cuts : array_like, shape (n, k - 1)
        Column i is the feature ``Y <= values[i]``.
    values : sequence, length k
        The ordered domain used to build the cuts.
    strict : bool, default True
        Require exact, rational cuts: entries 0/1, non-decreasing along each
        row. With ``strict=False`` any real predictions of ``P(Y <= v)`` are
        accepted and each row gives the smallest value whose cut is at least
        0.5 (the predicted median), or the largest value if there is none.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    v = _domain(values, ordered=True)
    c = _features(cuts, "cuts", v.size - 1, "one per value but the largest")
    if check_bool(strict, "strict"):
        check_binary(c, "cuts")
        bad = check_cuts(c) if c.shape[1] > 1 else np.zeros(c.shape[0], dtype=bool)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"cuts must be non-decreasing along each row (Y <= v implies Y <= w for w > v); row {row} is not"
            )
    # Index of the first cut >= 0.5, or k - 1 when no cut is: an extra column of 1s gives that.
    reached = np.concatenate([c >= 0.5, np.ones((c.shape[0], 1), dtype=bool)], axis=1)
    return v[np.argmax(reached, axis=1)]


@routed
def check_cuts(pred_cuts: ArrayLike) -> npt.NDArray[np.bool_]:
    """Flag irrational cut predictions, one flag per example.

    Predictions of the cut features ``Y <= v_1, ..., Y <= v_{k-1}`` are
    rational when they never decrease along the row: ``Y <= v`` implies
    ``Y <= w`` for every ``w > v``, so it cannot be more probable.

    Parameters
    ----------
    pred_cuts : array_like, shape (n, k - 1)
        Predicted values of the cut features, smallest cut first.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True where some cut is predicted strictly higher than a later one.
        The comparison is exact (no tolerance); values outside [0, 1] are not
        flagged by themselves.
    """
    p = as_matrix(pred_cuts, "pred_cuts")
    check_finite(p, "pred_cuts")
    return np.asarray((p[:, 1:] < p[:, :-1]).any(axis=1))  # no np.diff: it wraps around for unsigned input
