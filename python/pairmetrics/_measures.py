"""Classic error measures for point predictions (Poole & Mackworth, section 7.2.1).

Every measure follows the textbook: it is a **sum over examples and targets**
(the worst case is a maximum). ``average=True`` divides by the number of
examples ``n`` (not by ``n * t``), so a per-example mean summed over targets;
``per_target=True`` returns one value per target column instead of the total.

The sums are computed by a single pass in C++ over both arrays, in place,
whatever their strides; float32 input stays float32 in memory and is
accumulated in float64. Every input is validated here before the kernel runs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Literal, overload

import numpy as np

from . import _core
from ._multilabel import *  # noqa: F401,F403
from ._multilabel import __all__ as _multilabel_all
from ._representations import *  # noqa: F401,F403
from ._representations import __all__ as _representations_all
from ._result import Result
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, FloatArray, FloatOrArray
from ._validation import (
    Nonbinary,
    Nonfinite,
    as_numeric_array,
    check_bool,
    check_real,
    entry_index,
    first_nonbinary_entry,
    first_nonfinite_entry,
    raise_if_nonbinary,
    raise_if_nonfinite,
)

__all__ = [
    "zero_one_error",
    "absolute_error",
    "sum_squares_error",
    "rms_error",
    "worst_case_error",
    "likelihood",
    "log_likelihood",
    "log_loss",
    "Likelihood",
    *_representations_all,
    *_multilabel_all,
]
# What the Dask layer (and only it) may use besides __all__: the skeletons, their facts and counts, the block sums.
__seams__ = [
    "ERROR_MEASURE",
    "LOSSES",
    "ErrorCounts",
    "LIKELIHOOD",
    "LikelihoodFacts",
    "MeasureFacts",
    "SummedCounts",
    "check_eps",
    "check_targets",
    "error_sums",
    "exact_mismatches",
    "input_magnitude",
    "is_exact_zero_one",
    "likelihood_sums",
    "matched_pair",
    "merge_error_sums",
    "probability_report",
    "ranges_needed",
    "scaled_square_sum",
]

LOSSES = ("zero_one", "absolute", "squares", "worst_case", "log_loss")
_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # read in place by the kernels
_EXACT_INT = 2**53  # integers up to this magnitude are exact in float64


# --------------------------------------------------------------------------- input handling


def _as_targets(x: Any, name: str) -> np.ndarray:
    return check_targets(as_numeric_array(x, name), name)


def check_targets(arr: Any, name: str) -> Any:
    """The shape rules on one input (numpy or Dask): 1-D or 2-D, not empty."""
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, t), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); the measures need at least one example and target")
    return arr


def _pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as 1-D or 2-D arrays of one shape; (n,) against (n, 1) is allowed."""
    return matched_pair(_as_targets(y_true, "y_true"), _as_targets(y_pred, "y_pred"))


def matched_pair(yt: Any, yp: Any) -> tuple[Any, Any]:
    """Checked targets (numpy or Dask) of one shape; (n,) against (n, 1) becomes (n,) and (n,)."""
    if yt.shape != yp.shape:
        if yt.ndim != yp.ndim and yt.shape[0] == yp.shape[0] and yt.size == yp.size == yt.shape[0]:
            yt, yp = yt.reshape(-1), yp.reshape(-1)  # (n,) with (n, 1): one target, a view
        else:
            raise ValueError(f"y_true and y_pred must have the same shape, got {yt.shape} and {yp.shape}")
    return yt, yp


def output(values: np.ndarray, per_target: bool) -> FloatOrArray:
    """The public return value: per-target float64 values, or the total as numpy.float64."""
    return values.astype(np.float64) if per_target else np.float64(values[0])


def _int_range(arr: np.ndarray) -> tuple[int, int]:
    """(min, max) of an integer or bool array as Python ints."""
    return int(arr.min()), int(arr.max())


def check_operands(dtype_t: Any, dtype_p: Any, range_t: Any, range_p: Any) -> None:
    """Raise the error :func:`kernel_operands` raises for arrays of these dtypes and (min, max) ranges
    (None: not needed, or an empty input)."""
    arrays = [np.array(r if r is not None else (0, 0), dtype=d) for r, d in ((range_t, dtype_t), (range_p, dtype_p))]
    kernel_operands(arrays[0], arrays[1], (range_t, range_p))


def ranges_needed(dtype_t: Any, dtype_p: Any) -> tuple[bool, bool]:
    """Whether the operand rules need the (min, max) of y_true and of y_pred (8-byte integers only)."""
    dt, dp = np.dtype(dtype_t), np.dtype(dtype_p)
    wide_t, wide_p = (d.kind in "iu" and d.itemsize == 8 for d in (dt, dp))
    if not (wide_t or wide_p):
        return False, False
    if dp in _KERNEL_FLOATS or dt in _KERNEL_FLOATS:
        return wide_t and dp in _KERNEL_FLOATS, wide_p and dp not in _KERNEL_FLOATS
    return True, True


def operand_ranges(yt: np.ndarray, yp: np.ndarray) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The (min, max) of each input the operand rules need (None for the others, and for empty inputs)."""
    need_t, need_p = ranges_needed(yt.dtype, yp.dtype)
    return (
        _int_range(yt) if need_t and yt.size else None,
        _int_range(yp) if need_p and yp.size else None,
    )


def kernel_operands(
    yt: np.ndarray, yp: np.ndarray, ranges: tuple[Any, Any] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The two arrays the error kernel reads: any real dtype, then float32/float64.

    Every sum is symmetric in the two, so the float one goes second and
    nothing is copied unless neither input is float32/float64. Integers that
    float64 cannot hold exactly are never rounded silently: two integer arrays
    are subtracted exactly (the kernel then rounds each difference once), and
    such integers against floats are refused. ``ranges``: the inputs'
    :func:`operand_ranges`, when already known.
    """
    ranges = operand_ranges(yt, yp) if ranges is None else ranges
    if yp.dtype in _KERNEL_FLOATS or yt.dtype in _KERNEL_FLOATS:
        (a, name_a), (b, _) = (
            ((yt, "y_true"), (yp, "y_pred")) if yp.dtype in _KERNEL_FLOATS else ((yp, "y_pred"), (yt, "y_true"))
        )
        a_range = ranges[0] if a is yt else ranges[1]
        if a_range is not None:
            lo, hi = a_range
            if max(-lo, hi) > _EXACT_INT:
                raise ValueError(
                    f"{name_a} holds integers beyond 2**53 (up to {max(-lo, hi)}), which float64 cannot hold exactly, "
                    f"and the other input is floating point; convert both to one type first"
                )
        return a, b
    # two integer (or bool) arrays
    range_t, range_p = ranges
    if range_t is None or range_p is None or max(max(-lo, hi) for lo, hi in (range_t, range_p)) <= _EXACT_INT:
        return yt, np.asarray(yp, dtype=np.float64)
    (lo_t, hi_t), (lo_p, hi_p) = range_t, range_p
    if lo_t - hi_p < -(2**63) or hi_t - lo_p >= 2**63:
        raise ValueError(
            "y_true and y_pred hold integers whose differences exceed the int64 range; convert them to float64 first"
        )
    # Exact: int64 arithmetic wraps modulo 2**64 and the true differences fit.
    with np.errstate(over="ignore"):
        diff = yt.astype(np.int64) - yp.astype(np.int64)
    return diff, np.broadcast_to(np.zeros(1), diff.shape)


@dataclasses.dataclass(frozen=True)
class MeasureFacts:
    """What the checks of an error measure need of its matched inputs: the shape, the dtypes, the
    first non-finite entry of each and the (min, max) the operand rules need (see operand_ranges)."""

    shape: tuple[int, ...]
    dtypes: tuple[np.dtype[Any], np.dtype[Any]]
    nonfinite: tuple[Nonfinite, Nonfinite]
    ranges: tuple[tuple[int, int] | None, tuple[int, int] | None]


@dataclasses.dataclass(frozen=True)
class ErrorPlan:
    """The checked options of an error measure; ``exact``: a 0/1 error of two integer arrays, counted
    by comparing them (no kernel)."""

    measure: str
    n: int
    average: bool
    per_target: bool
    exact: bool
    ranges: tuple[tuple[int, int] | None, tuple[int, int] | None]


@dataclasses.dataclass(frozen=True, eq=False)
class SummedCounts(LayerEqual):
    """Sums of the kernel (a dict of arrays), equal between layers up to the order of summation."""

    sums: dict[str, Any]

    RTOL = 1e-12  # float sums added in another order on the cluster


@dataclasses.dataclass(frozen=True, eq=False)
class ErrorCounts(SummedCounts):
    """The error_sums of a measure (only n_wrong for an exact 0/1 error), and for the RMS error the
    passes its finish may ask for where the squares overflowed (see rms_from_sums)."""

    input_magnitude: Callable[[], np.ndarray] | None = None
    scaled_square_sum: Callable[[np.ndarray], np.ndarray] | None = None


def measure_facts(yt: np.ndarray, yp: np.ndarray, exact: bool) -> MeasureFacts:
    """The MeasureFacts of in-memory inputs (nothing to look at for an exact 0/1 error)."""
    if exact:
        return MeasureFacts(yt.shape, (yt.dtype, yp.dtype), (None, None), (None, None))
    nonfinite = first_nonfinite_entry(yt), first_nonfinite_entry(yp)
    ranges = operand_ranges(yt, yp) if nonfinite == (None, None) else (None, None)
    return MeasureFacts(yt.shape, (yt.dtype, yp.dtype), nonfinite, ranges)


def is_exact_zero_one(measure: str, dtype_t: Any, dtype_p: Any) -> bool:
    """A 0/1 error of two integer (or bool) arrays: counted by comparing them exactly."""
    return measure == "zero_one" and np.dtype(dtype_t).kind in "biu" and np.dtype(dtype_p).kind in "biu"


def _plan_error(facts: MeasureFacts, measure: str, average: bool, per_target: bool) -> ErrorPlan:
    """Every value check of an error measure, in order."""
    per_target = check_bool(per_target, "per_target")
    exact = is_exact_zero_one(measure, *facts.dtypes)
    if not exact:
        raise_if_nonfinite(facts.nonfinite[0], "y_true")
        raise_if_nonfinite(facts.nonfinite[1], "y_pred")
        if facts.ranges != (None, None):  # only wide integers can be refused
            check_operands(*facts.dtypes, *facts.ranges)
    average = check_bool(average, "average")
    return ErrorPlan(measure, facts.shape[0], average, per_target, exact, facts.ranges)


def _finish_error(plan: ErrorPlan, counts: ErrorCounts) -> FloatOrArray:
    if plan.measure == "rms":
        assert counts.input_magnitude is not None and counts.scaled_square_sum is not None
        return rms_from_sums(counts.sums, plan.n, plan.per_target, counts.input_magnitude, counts.scaled_square_sum)
    return measure_from_sums(plan.measure, counts.sums, plan.n, plan.average, plan.per_target)


# the 0/1, absolute, sum-of-squares, worst-case and RMS errors (the plan's measure names which)
ERROR_MEASURE = Skeleton("error measures", _plan_error, _finish_error)


def _error_measure(y_true: Any, y_pred: Any, measure: str, average: bool, per_target: bool) -> FloatOrArray:
    """An error measure of in-memory inputs, on its skeleton."""
    yt, yp = _pair(y_true, y_pred)

    def count(plan: ErrorPlan) -> ErrorCounts:
        if plan.exact:
            return ErrorCounts({"n_wrong": exact_mismatches(yt, yp, plan.per_target)})
        return ErrorCounts(
            error_sums(yt, yp, plan.per_target, plan.ranges),
            input_magnitude=lambda: input_magnitude(yt, yp, plan.per_target),
            scaled_square_sum=lambda exponent: scaled_square_sum(yt, yp, plan.per_target, exponent),
        )

    facts = measure_facts(yt, yp, is_exact_zero_one(measure, yt.dtype, yp.dtype))
    return ERROR_MEASURE.run(count, facts, measure, average, per_target)


def error_sums(yt: np.ndarray, yp: np.ndarray, per_target: bool, ranges: Any = None) -> dict[str, Any]:
    """The kernel's sums of checked, finite arrays (dict abs_sum, sq_sum, max_abs, n_wrong; arrays of
    length t, or 1 for the total); an empty row block gives zeros. ``ranges``: see kernel_operands."""
    if yt.size == 0:
        zero = np.zeros(yt.shape[1] if per_target and yt.ndim == 2 else 1)
        return {"abs_sum": zero, "sq_sum": zero, "max_abs": zero, "n_wrong": zero}
    return _core._error_stats(*kernel_operands(yt, yp, ranges), per_target)


def merge_error_sums(parts: Any) -> dict[str, Any]:
    """The error_sums of row blocks combined into those of the whole."""
    merged = {key: np.sum([p[key] for p in parts], axis=0) for key in ("abs_sum", "sq_sum", "n_wrong")}
    merged["max_abs"] = np.max([p["max_abs"] for p in parts], axis=0)
    return merged


def exact_mismatches(yt: np.ndarray, yp: np.ndarray, per_target: bool) -> np.ndarray:
    """Entries that differ (per target column, or in all as a length-1 array), compared exactly."""
    wrong = yt != yp  # exact, also for int64 against uint64
    if per_target and wrong.ndim == 2:
        return np.count_nonzero(wrong, axis=0).astype(np.float64)
    return np.array([np.count_nonzero(wrong)], dtype=np.float64)


def divide(values: Any, n: int, average: bool) -> Any:
    """The per-example mean when ``average``, else the sum."""
    return values / n if average else values


_SUM_OF = {"zero_one": "n_wrong", "absolute": "abs_sum", "squares": "sq_sum", "worst_case": "max_abs"}


def measure_from_sums(measure: str, stats: dict[str, Any], n: int, average: bool, per_target: bool) -> FloatOrArray:
    """The public value of a measure ("zero_one", "absolute", "squares", "worst_case") from error_sums."""
    values = np.asarray(stats[_SUM_OF[measure]], dtype=np.float64)
    if measure == "worst_case":
        return output(values, per_target)
    return output(divide(values, n, average), per_target)


# --------------------------------------------------------------------------- error measures


@overload
def zero_one_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: Literal[False] = ...
) -> float: ...
@overload
def zero_one_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: Literal[True]
) -> FloatArray: ...
@overload
def zero_one_error(y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: bool) -> FloatOrArray: ...
@routed
def zero_one_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = False, per_target: bool = False
) -> FloatOrArray:
    """The 0/1 error: the number of predictions that differ from the actual value.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,) or (n, t)
        Actual and predicted values of ``t`` target features on ``n`` examples.
        Any real dtype; shapes (n,) and (n, 1) may be mixed.
    average : bool, default False
        Divide by the number of examples ``n`` (not by ``n * t``).
    per_target : bool, default False
        Return one value per target column, shape (t,), instead of the total.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The count (a float, exact up to 2**53) or its per-example mean.

    Notes
    -----
    Values are compared exactly: 0.1 + 0.2 is not 0.3. Two integer arrays are
    compared as integers; an integer array against a float one is compared
    as floats, and refused when it holds integers beyond 2**53 (float64
    cannot hold them exactly). NaN or inf in either input raises
    ``ValueError``. For several targets this counts wrong *entries*, as the
    textbook does, not wrong examples (``sklearn.metrics.zero_one_loss`` counts
    a multi-label example as wrong if any of its labels is).
    """
    return _error_measure(y_true, y_pred, "zero_one", average, per_target)


@overload
def absolute_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: Literal[False] = ...
) -> float: ...
@overload
def absolute_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: Literal[True]
) -> FloatArray: ...
@overload
def absolute_error(y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: bool) -> FloatOrArray: ...
@routed
def absolute_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = False, per_target: bool = False
) -> FloatOrArray:
    """The absolute (L1) error: sum over examples and targets of ``|y_true - y_pred|``.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,) or (n, t)
        Actual and predicted values; any real dtype. Integers are converted to
        float64 (no unsigned wrap-around), float32 is read as is and summed in
        float64.
    average : bool, default False
        Divide by the number of examples ``n``: the mean absolute error for one
        target, the mean over examples of the per-example sum for several.
    per_target : bool, default False
        Return one value per target column, shape (t,).

    Returns
    -------
    numpy.float64 or numpy.ndarray

    See Also
    --------
    sum_squares_error, rms_error, worst_case_error : the other norms of the error.
    sklearn.metrics.mean_absolute_error : the per-example mean (divided by ``t`` too).

    Notes
    -----
    ``absolute_error(y, p, average=True, per_target=True)`` equals
    ``sklearn.metrics.mean_absolute_error(y, p, multioutput="raw_values")``.
    NaN or inf in either input raises ``ValueError``; a sum too large for
    float64 (from finite inputs) gives ``inf``. Two integer arrays are
    subtracted exactly (each difference is rounded once to float64);
    integers beyond 2**53 against floats are refused.
    """
    return _error_measure(y_true, y_pred, "absolute", average, per_target)


@overload
def sum_squares_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: Literal[False] = ...
) -> float: ...
@overload
def sum_squares_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: Literal[True]
) -> FloatArray: ...
@overload
def sum_squares_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = ..., per_target: bool
) -> FloatOrArray: ...
@routed
def sum_squares_error(
    y_true: ArrayLike, y_pred: ArrayLike, *, average: bool = False, per_target: bool = False
) -> FloatOrArray:
    """The sum-of-squares (squared L2) error: sum of ``(y_true - y_pred)**2``.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,) or (n, t)
        Actual and predicted values; any real dtype (see :func:`absolute_error`).
    average : bool, default False
        Divide by the number of examples ``n`` (the mean squared error for one target).
    per_target : bool, default False
        Return one value per target column, shape (t,).

    Returns
    -------
    numpy.float64 or numpy.ndarray
        ``inf`` when the sum exceeds the float64 range (see :func:`rms_error`
        for a root that never overflows).

    See Also
    --------
    rms_error : the root of the per-example mean, without overflow.
    sklearn.metrics.mean_squared_error : the per-example mean (divided by ``t`` too).
    """
    return _error_measure(y_true, y_pred, "squares", average, per_target)


@overload
def rms_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: Literal[False] = ...) -> float: ...
@overload
def rms_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: Literal[True]) -> FloatArray: ...
@overload
def rms_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: bool) -> FloatOrArray: ...
@routed
def rms_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: bool = False) -> FloatOrArray:
    """The root-mean-square error: ``sqrt(sum_squares_error / n)``.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,) or (n, t)
        Actual and predicted values; any real dtype.
    per_target : bool, default False
        Return one value per target column, ``sqrt(sum_e (y - p)**2 / n)``.

    Returns
    -------
    numpy.float64 or numpy.ndarray

    See Also
    --------
    sum_squares_error : the sum under the root.

    Notes
    -----
    ``n`` is the number of examples, as in the textbook. For several targets
    the total is ``sqrt(sum over targets of the per-target mean squares)``,
    which is *not* the mean of the per-target RMS errors.

    The result is finite and accurate whenever it is representable: where
    the squares would overflow or underflow (differences beyond about
    1e154 or below about 1e-154), the sum is recomputed on the differences
    scaled by a power of two.
    """
    return _error_measure(y_true, y_pred, "rms", False, per_target)


def rms_from_sums(
    stats: dict[str, Any],
    n: int,
    per_target: bool,
    input_magnitude: Callable[[], np.ndarray],
    scaled_square_sum: Callable[[np.ndarray], np.ndarray],
) -> FloatOrArray:
    """The RMS error from error_sums; where the squares overflowed or lost digits, from the sum of
    squares of the differences scaled by a power of two that brings max |difference| to [1, 2).

    ``input_magnitude()`` gives max(|y_true|, |y_pred|) and ``scaled_square_sum(exponent)`` the
    sum of squares of the differences scaled by 2**-exponent (see the functions of those names),
    per target or in all like the sums; they are called only when needed.
    """
    sq_sum, max_abs = stats["sq_sum"], stats["max_abs"]
    rms = np.sqrt(sq_sum / n)
    # Squares lose digits below 2**-1022 and overflow above 2**1024.
    rescale = (max_abs > 0) & ((max_abs < 2.0**-480) | (max_abs > 2.0**480) | ~np.isfinite(sq_sum))
    if not rescale.any():
        return output(rms, per_target)
    exponent = np.frexp(max_abs)[1] - 1  # max_abs in [2**e, 2**(e + 1))
    overflowed = ~np.isfinite(max_abs)
    if overflowed.any():  # |a - b| < 2 max(|a|, |b|) < 2**(e + 1), e the inputs' exponent
        exponent = np.where(overflowed, np.frexp(input_magnitude())[1], exponent)
    exponent = np.where(rescale, exponent, 0)
    scaled = np.ldexp(np.sqrt(scaled_square_sum(exponent) / n), exponent)
    return output(np.where(rescale, scaled, rms), per_target)


def _columns(yt: np.ndarray, per_target: bool) -> bool:
    return yt.ndim == 2 and per_target


def input_magnitude(yt: np.ndarray, yp: np.ndarray, per_target: bool) -> np.ndarray:
    """max(|y_true|, |y_pred|) per target column (or in all, length 1), as float64; 0 when empty."""
    axis = 0 if _columns(yt, per_target) else None
    a, b = (np.abs(x.astype(np.float64, copy=False)).max(axis=axis, initial=0.0) for x in (yt, yp))
    return np.atleast_1d(np.maximum(a, b))


def scaled_square_sum(yt: np.ndarray, yp: np.ndarray, per_target: bool, exponent: np.ndarray) -> np.ndarray:
    """The sum of squares of ``(y_true - y_pred) * 2**-exponent`` per target (or in all), exactly scaled."""
    a, b = yt.astype(np.float64), yp.astype(np.float64)
    columns = _columns(yt, per_target)
    # Scaling by 2**-e is exact (ldexp, also where 2**-e itself is beyond
    # float64), and no nonzero scaled difference underflows.
    shift = -exponent.reshape((1, -1) if columns else (1,) * yt.ndim)
    with np.errstate(over="ignore", invalid="ignore"):
        # Scaling down, the inputs are scaled (their difference may overflow).
        # Scaling up, the differences are (the inputs may be far larger than
        # they are, and |a - b| < 2**-480 is computed exactly).
        scaled = np.where(shift > 0, np.ldexp(a - b, shift), np.ldexp(a, shift) - np.ldexp(b, shift))
    return error_sums(scaled, np.zeros_like(scaled), per_target)["sq_sum"]


@overload
def worst_case_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: Literal[False] = ...) -> float: ...
@overload
def worst_case_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: Literal[True]) -> FloatArray: ...
@overload
def worst_case_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: bool) -> FloatOrArray: ...
@routed
def worst_case_error(y_true: ArrayLike, y_pred: ArrayLike, *, per_target: bool = False) -> FloatOrArray:
    """The worst-case (L-infinity) error: ``max |y_true - y_pred|`` over examples and targets.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,) or (n, t)
        Actual and predicted values; any real dtype.
    per_target : bool, default False
        Return the maximum per target column, shape (t,).

    Returns
    -------
    numpy.float64 or numpy.ndarray
    """
    return _error_measure(y_true, y_pred, "worst_case", False, per_target)


# --------------------------------------------------------------------------- likelihood family


@dataclasses.dataclass(frozen=True, eq=False)
class Likelihood(Result):
    """The likelihood of 0/1 data and its natural log.

    ``value`` underflows to 0.0 for long data sets; ``log`` never does (it is
    ``-inf`` only when some outcome had probability exactly 0).
    """

    value: FloatOrArray
    log: FloatOrArray


def check_eps(eps: float | None) -> float:
    """eps in (0, 0.5), or None (0.0: no clipping)."""
    return 0.0 if eps is None else check_real(eps, "eps", low=0, high=0.5, low_open=True, high_open=True)


def log_base(base: float | None) -> float:
    """The natural log of ``base`` (finite, > 0, != 1), 1.0 for None."""
    if base is None:
        return 1.0
    base = check_real(base, "base", low=0, low_open=True)
    if base == 1:
        raise ValueError("base must be finite, > 0 and != 1, got 1.0")
    return math.log(base)


def probability_report(p: np.ndarray) -> tuple[int, int, Any]:
    """(count, first flat index, its value) of the finite entries of an array (or block) outside [0, 1]."""
    outside = ((p < 0) | (p > 1)).ravel()
    count = int(np.count_nonzero(outside))
    if not count:
        return 0, -1, None
    first = int(np.argmax(outside))
    return count, first, p.ravel()[first].item()


def probability_error(name: str, shape: tuple[int, ...], flat: int, value: Any, count: int) -> ValueError:
    """The error for entries outside [0, 1] (flat index into the whole array of ``shape``)."""
    index = entry_index(shape, flat)
    return ValueError(f"{name} must hold probabilities in [0, 1], found {value!r} at index {index} ({count} outside)")


@dataclasses.dataclass(frozen=True)
class LikelihoodFacts:
    """What the checks of the likelihoods need: the shape, the first entry of y_true other than 0 and 1,
    the first non-finite entry of y_pred and its first finite entry outside [0, 1]."""

    shape: tuple[int, ...]
    nonbinary: Nonbinary
    nonfinite: Nonfinite
    outside: Nonbinary


@dataclasses.dataclass(frozen=True)
class LikelihoodPlan:
    """The checked options: which result, the examples, per target, the clipping, the log of the base."""

    result: str  # "likelihood", "log_likelihood" or "log_loss"
    n: int
    per_target: bool
    eps: float
    scale: float
    average: bool


def likelihood_facts(yt: np.ndarray, yp: np.ndarray) -> LikelihoodFacts:
    """The LikelihoodFacts of in-memory inputs (one min/max pass over y_pred when it is in [0, 1])."""
    nonfinite, outside = None, None
    if yp.size and not (yp.min() >= 0 and yp.max() <= 1):  # NaN fails both comparisons
        nonfinite = first_nonfinite_entry(yp)
        count, first, value = probability_report(yp)
        outside = (first, value, count) if count else None
    return LikelihoodFacts(yt.shape, first_nonbinary_entry(yt), nonfinite, outside)


def _plan_likelihood(
    facts: LikelihoodFacts,
    result: str,
    per_target: bool,
    eps: float | None,
    base: float | None = None,
    average: bool = False,
) -> LikelihoodPlan:
    """Every value check of the likelihoods, in order."""
    scale = log_base(base)
    per_target = check_bool(per_target, "per_target")
    eps = check_eps(eps)
    raise_if_nonbinary(facts.nonbinary, "y_true", facts.shape)
    raise_if_nonfinite(facts.nonfinite, "y_pred")
    if facts.outside is not None:
        raise probability_error("y_pred", facts.shape, *facts.outside)
    return LikelihoodPlan(result, facts.shape[0], per_target, eps, scale, check_bool(average, "average"))


def _finish_likelihood(plan: LikelihoodPlan, counts: SummedCounts) -> Likelihood | FloatOrArray:
    """The result from the summed likelihood_sums."""
    ll = log_likelihood_from_sums(counts.sums)
    if plan.result == "likelihood":
        value = output(ll, plan.per_target)
        return Likelihood(value=np.exp(value), log=value)
    if plan.result == "log_likelihood":
        return output(divide(ll / plan.scale, plan.n, plan.average), plan.per_target)
    return output(-ll / (plan.scale * plan.n) + 0.0, plan.per_target)  # + 0.0 turns -0.0 into 0.0


# likelihood, log_likelihood and log_loss (the plan's result names which)
LIKELIHOOD = Skeleton("likelihoods", _plan_likelihood, _finish_likelihood)


def _likelihood(y_true: Any, y_pred: Any, *options: Any) -> Any:
    """A likelihood of in-memory inputs, on its skeleton (options: those of _plan_likelihood)."""
    yt, yp = _pair(y_true, y_pred)

    def count(plan: LikelihoodPlan) -> SummedCounts:
        return SummedCounts(likelihood_sums(yt, yp, plan.per_target, plan.eps))

    return LIKELIHOOD.run(count, likelihood_facts(yt, yp), *options)


def likelihood_sums(yt: np.ndarray, yp: np.ndarray, per_target: bool, eps: float) -> dict[str, Any]:
    """The kernel's sums (dict log_sum, n_zero) of checked 0/1 outcomes and probabilities; zeros when empty."""
    if yt.size == 0:
        zero = np.zeros(yt.shape[1] if per_target and yt.ndim == 2 else 1)
        return {"log_sum": zero, "n_zero": zero}
    p = yp if yp.dtype in _KERNEL_FLOATS else np.asarray(yp, dtype=np.float64)
    return _core._log_likelihood(yt, p, per_target, eps)


def log_likelihood_from_sums(sums: dict[str, Any]) -> np.ndarray:
    """The natural log-likelihood (total or per target) from likelihood_sums: -inf where a probability was 0."""
    return np.where(np.asarray(sums["n_zero"]) > 0, -np.inf, sums["log_sum"])


@routed
def likelihood(
    y_true: ArrayLike, y_pred: ArrayLike, *, per_target: bool = False, eps: float | None = None
) -> Likelihood:
    """The likelihood of 0/1 data: the product of ``y_pred`` where y is 1 and ``1 - y_pred`` where it is 0.

    Parameters
    ----------
    y_true : array_like, shape (n,) or (n, t)
        Outcomes, each 0 or 1 (bool, any integer or float dtype).
    y_pred : array_like, same shape
        Predicted probabilities that the outcome is 1, each in [0, 1].
    per_target : bool, default False
        One likelihood per target column instead of the product over all.
    eps : float in (0, 0.5), optional
        Clip the probability given to each outcome to ``[eps, 1 - eps]``
        first (clipping the predictions, but without rounding ``1 - eps``).
        Off by default.

    Returns
    -------
    Likelihood
        ``value`` (the product, which underflows to 0.0 on long data) and
        ``log`` (its natural log, computed without underflow).

    Notes
    -----
    The product is accumulated as a mantissa and a binary exponent, with a
    single logarithm at the end, so ``log`` is accurate even where ``value``
    is far below the smallest float. A prediction of exactly 0 for an outcome
    1 (or 1 for an outcome 0) makes the likelihood 0 and its log ``-inf``;
    pass ``eps`` to clip instead.
    """
    result: Likelihood = _likelihood(y_true, y_pred, "likelihood", per_target, eps)
    return result


@overload
def log_likelihood(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    average: bool = ...,
    per_target: Literal[False] = ...,
    eps: float | None = ...,
    base: float | None = ...,
) -> float: ...
@overload
def log_likelihood(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    average: bool = ...,
    per_target: Literal[True],
    eps: float | None = ...,
    base: float | None = ...,
) -> FloatArray: ...
@overload
def log_likelihood(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    average: bool = ...,
    per_target: bool,
    eps: float | None = ...,
    base: float | None = ...,
) -> FloatOrArray: ...
@routed
def log_likelihood(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    average: bool = False,
    per_target: bool = False,
    eps: float | None = None,
    base: float | None = None,
) -> FloatOrArray:
    """The log-likelihood of 0/1 data: sum of ``y log p + (1 - y) log(1 - p)``.

    Parameters
    ----------
    y_true : array_like, shape (n,) or (n, t)
        Outcomes, each 0 or 1.
    y_pred : array_like, same shape
        Predicted probabilities of outcome 1, each in [0, 1].
    average : bool, default False
        Divide by the number of examples ``n``.
    per_target : bool, default False
        One value per target column.
    eps : float in (0, 0.5), optional
        Clip the probability given to each outcome to ``[eps, 1 - eps]``
        first (clipping the predictions, but without rounding ``1 - eps``).
        Off by default.
    base : float, optional
        Base of the logarithm; natural log by default, 2 for bits.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        At most 0 (higher is better); ``-inf`` when an outcome had probability 0.
    """
    result: FloatOrArray = _likelihood(y_true, y_pred, "log_likelihood", per_target, eps, base, average)
    return result


@overload
def log_loss(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    per_target: Literal[False] = ...,
    eps: float | None = ...,
    base: float | None = ...,
) -> float: ...
@overload
def log_loss(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    per_target: Literal[True],
    eps: float | None = ...,
    base: float | None = ...,
) -> FloatArray: ...
@overload
def log_loss(
    y_true: ArrayLike, y_pred: ArrayLike, *, per_target: bool, eps: float | None = ..., base: float | None = ...
) -> FloatOrArray: ...
@routed
def log_loss(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    per_target: bool = False,
    eps: float | None = None,
    base: float | None = None,
) -> FloatOrArray:
    """The log loss: minus the log-likelihood divided by the number of examples.

    Parameters
    ----------
    y_true : array_like, shape (n,) or (n, t)
        Outcomes, each 0 or 1.
    y_pred : array_like, same shape
        Predicted probabilities of outcome 1, each in [0, 1].
    per_target : bool, default False
        One value per target column (each divided by ``n``; they sum to the total).
    eps : float in (0, 0.5), optional
        Clip the probability given to each outcome to ``[eps, 1 - eps]``
        first (see :func:`log_likelihood`). Off by default, so a
        confident wrong prediction (0 or 1 against the opposite outcome) gives
        ``inf``, honestly.
    base : float, optional
        Base of the logarithm; natural log (nats) by default, 2 for bits.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        At least 0, lower is better.

    See Also
    --------
    log_likelihood, likelihood : the same data as a (log-)likelihood.
    sklearn.metrics.log_loss : scikit-learn's version (clips by default).

    Notes
    -----
    For one target this is ``sklearn.metrics.log_loss(y_true, y_pred)`` on the
    probability of the positive class, but without scikit-learn's clipping
    unless ``eps`` is given. For several targets the sum over targets is
    divided by ``n`` (the textbook's definition), not by ``n * t``.
    """
    result: FloatOrArray = _likelihood(y_true, y_pred, "log_loss", per_target, eps, base)
    return result
