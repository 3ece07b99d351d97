"""Classic error measures for point predictions (Poole & Mackworth, section 7.2.1).

Every measure follows the textbook: it is a **sum over examples and targets**
(the worst case is a maximum). ``average=True`` divides by the number of
examples ``n`` (not by ``n * t``), so a per-example mean summed over targets;
``per_target=True`` returns one value per target column instead of the total.

The sums are computed by a single pass in C++ over both arrays, in place,
whatever their strides; float32 input stays float32 in memory and is
accumulated in float64.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import _core
from ._dask import dispatch
from ._multilabel import *  # noqa: F401,F403
from ._multilabel import __all__ as _multilabel_all
from ._representations import *  # noqa: F401,F403
from ._representations import __all__ as _representations_all
from ._result import Result
from ._validation import as_numeric_array, check_binary, check_bool, check_choice, check_finite

__all__ = [
    "zero_one_error",
    "absolute_error",
    "sum_squares_error",
    "rms_error",
    "worst_case_error",
    "likelihood",
    "log_likelihood",
    "log_loss",
    "best_constant",
    "Likelihood",
    "BestConstant",
    *_representations_all,
    *_multilabel_all,
]

LOSSES = ("zero_one", "absolute", "squares", "worst_case", "log_loss")
_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # read in place by the kernels


# --------------------------------------------------------------------------- input handling


def _as_targets(x, name: str) -> np.ndarray:
    arr = as_numeric_array(x, name)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, t), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); the measures need at least one example and target")
    return arr


def _pair(y_true, y_pred):
    """Both inputs as 1-D or 2-D arrays of one shape; (n,) against (n, 1) is allowed."""
    yt = _as_targets(y_true, "y_true")
    yp = _as_targets(y_pred, "y_pred")
    if yt.shape != yp.shape:
        if yt.ndim != yp.ndim and yt.shape[0] == yp.shape[0] and yt.size == yp.size == yt.shape[0]:
            yt, yp = yt.reshape(-1), yp.reshape(-1)  # (n,) with (n, 1): one target, a view
        else:
            raise ValueError(f"y_true and y_pred must have the same shape, got {yt.shape} and {yp.shape}")
    return yt, yp


def _output(values: np.ndarray, per_target: bool):
    return values.astype(np.float64) if per_target else np.float64(values[0])


def _error_stats(y_true, y_pred, per_target: bool):
    yt, yp = _pair(y_true, y_pred)
    per_target = check_bool(per_target, "per_target")
    # The kernel reads its first array in any real dtype and its second as
    # float32/float64. Every sum is symmetric in the two, so the float one goes
    # second and nothing is copied unless neither input is float32/float64.
    if yp.dtype in _KERNEL_FLOATS:
        a, b = yt, yp
    elif yt.dtype in _KERNEL_FLOATS:
        a, b = yp, yt
    else:
        a, b = yt, np.asarray(yp, dtype=np.float64)
    if a.dtype.kind == "f" and a.dtype not in _KERNEL_FLOATS:  # float16, longdouble
        a = np.asarray(a, dtype=np.float64)
    abs_sum, sq_sum, max_abs, n_wrong = _core._error_stats(a, b, per_target)
    # Any NaN/inf input makes some |difference| NaN or inf, so a finite sum
    # proves finite inputs without a separate pass; an infinite sum from finite
    # inputs is an honest overflow and is returned as inf.
    if not np.isfinite(abs_sum).all():
        check_finite(yt, "y_true")
        check_finite(yp, "y_pred")
    return yt, yp, abs_sum, sq_sum, max_abs, n_wrong


def _divide(values, n: int, average: bool):
    return values / n if check_bool(average, "average") else values


# --------------------------------------------------------------------------- error measures


@dispatch
def zero_one_error(y_true, y_pred, *, average: bool = False, per_target: bool = False):
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
    compared as integers; otherwise both are compared as floats (int64 values
    beyond 2**53 may then compare equal). NaN or inf in either input raises
    ``ValueError``. For several targets this counts wrong *entries*, as the
    textbook does, not wrong examples (``sklearn.metrics.zero_one_loss`` counts
    a multi-label example as wrong if any of its labels is).
    """
    yt, yp = _pair(y_true, y_pred)
    per_target = check_bool(per_target, "per_target")
    if yt.dtype.kind in "biu" and yp.dtype.kind in "biu":
        wrong = yt != yp  # exact, also for int64 against uint64
        if per_target and wrong.ndim == 2:
            counts = np.count_nonzero(wrong, axis=0)
        else:
            counts = np.array([np.count_nonzero(wrong)])
        return _output(_divide(counts.astype(np.float64), yt.shape[0], average), per_target)
    _, _, _, _, _, n_wrong = _error_stats(yt, yp, per_target)
    return _output(_divide(n_wrong.astype(np.float64), yt.shape[0], average), per_target)


@dispatch
def absolute_error(y_true, y_pred, *, average: bool = False, per_target: bool = False):
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

    Notes
    -----
    ``absolute_error(y, p, average=True, per_target=True)`` equals
    ``sklearn.metrics.mean_absolute_error(y, p, multioutput="raw_values")``.
    NaN or inf in either input raises ``ValueError``; a difference too large
    for float64 (from finite inputs) gives ``inf``.
    """
    yt, _, abs_sum, _, _, _ = _error_stats(y_true, y_pred, per_target)
    return _output(_divide(abs_sum, yt.shape[0], average), per_target)


@dispatch
def sum_squares_error(y_true, y_pred, *, average: bool = False, per_target: bool = False):
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
    """
    yt, _, _, sq_sum, _, _ = _error_stats(y_true, y_pred, per_target)
    return _output(_divide(sq_sum, yt.shape[0], average), per_target)


@dispatch
def rms_error(y_true, y_pred, *, per_target: bool = False):
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

    Notes
    -----
    ``n`` is the number of examples, as in the textbook. For several targets
    the total is ``sqrt(sum over targets of the per-target mean squares)``,
    which is *not* the mean of the per-target RMS errors.
    """
    yt, _, _, sq_sum, _, _ = _error_stats(y_true, y_pred, per_target)
    return _output(np.sqrt(sq_sum / yt.shape[0]), per_target)


@dispatch
def worst_case_error(y_true, y_pred, *, per_target: bool = False):
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
    _, _, _, _, max_abs, _ = _error_stats(y_true, y_pred, per_target)
    return _output(max_abs, per_target)


# --------------------------------------------------------------------------- likelihood family


@dataclasses.dataclass(frozen=True, eq=False)
class Likelihood(Result):
    """The likelihood of 0/1 data and its natural log.

    ``value`` underflows to 0.0 for long data sets; ``log`` never does (it is
    ``-inf`` only when some outcome had probability exactly 0). Unpacks as
    ``value, log``.
    """

    value: object
    log: object
    _unpack = ("value", "log")


def _check_eps(eps) -> float:
    if eps is None:
        return 0.0
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise TypeError(f"eps must be a float or None, got {type(eps).__name__}")
    eps = float(eps)
    if not (0.0 < eps < 0.5):
        raise ValueError(f"eps must be None or in (0, 0.5), got {eps}")
    return eps


def _check_base(base) -> float:
    if base is None:
        return 1.0
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, (int, float, np.integer, np.floating)):
        raise TypeError(f"base must be a number or None, got {type(base).__name__}")
    base = float(base)
    if not (np.isfinite(base) and base > 0 and base != 1):
        raise ValueError(f"base must be finite, > 0 and != 1, got {base}")
    return math.log(base)


def _outcomes_for_kernel(y: np.ndarray) -> np.ndarray:
    # The kernel compares against 0 and 1; signed integers are reinterpreted as
    # unsigned of the same width (a view: negatives become large and fail the check).
    kind, size = y.dtype.kind, y.dtype.itemsize
    if kind in "biu":
        return y.view(np.dtype(f"u{size}"))
    return y if y.dtype in _KERNEL_FLOATS else y.astype(np.float64)


def _log_likelihood(y_true, y_pred, per_target, eps):
    """Natural log-likelihood, total or per target, with full validation."""
    yt, yp = _pair(y_true, y_pred)
    per_target = check_bool(per_target, "per_target")
    eps = _check_eps(eps)
    p = yp if yp.dtype in _KERNEL_FLOATS else np.asarray(yp, dtype=np.float64)
    log_sum, n_zero, bad_true, bad_pred = _core._log_likelihood(_outcomes_for_kernel(yt), p, per_target, eps)
    if bad_true:
        check_binary(yt, "y_true")
    if bad_pred:
        check_finite(yp, "y_pred")
        outside = np.flatnonzero(((yp < 0) | (yp > 1)).ravel())
        where = np.unravel_index(outside[0], yp.shape)
        raise ValueError(
            f"y_pred must hold probabilities in [0, 1], found {yp[where].item()!r} at index "
            f"{tuple(int(i) for i in where) if yp.ndim == 2 else int(where[0])} ({outside.size} outside)"
        )
    return yt, np.where(n_zero > 0, -np.inf, log_sum)


@dispatch
def likelihood(y_true, y_pred, *, per_target: bool = False, eps=None) -> Likelihood:
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
    _, ll = _log_likelihood(y_true, y_pred, per_target, eps)
    ll = _output(ll, per_target)
    return Likelihood(value=np.exp(ll), log=ll)


@dispatch
def log_likelihood(y_true, y_pred, *, average: bool = False, per_target: bool = False, eps=None, base=None):
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
    yt, ll = _log_likelihood(y_true, y_pred, per_target, eps)
    scale = _check_base(base)
    return _output(_divide(ll / scale, yt.shape[0], average), per_target)


@dispatch
def log_loss(y_true, y_pred, *, per_target: bool = False, eps=None, base=None):
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

    Notes
    -----
    For one target this is ``sklearn.metrics.log_loss(y_true, y_pred)`` on the
    probability of the positive class, but without scikit-learn's clipping
    unless ``eps`` is given. For several targets the sum over targets is
    divided by ``n`` (the textbook's definition), not by ``n * t``.
    """
    yt, ll = _log_likelihood(y_true, y_pred, per_target, eps)
    scale = _check_base(base)
    return _output(-ll / (scale * yt.shape[0]) + 0.0, per_target)  # + 0.0 turns -0.0 into 0.0


# --------------------------------------------------------------------------- best constant


@dataclasses.dataclass(frozen=True, eq=False)
class BestConstant(Result):
    """The constant prediction minimising a loss on the data, and the loss it attains.

    ``value`` is a float for 1-D data and one value per target for 2-D data;
    ``error`` is the measure of that loss at ``value`` (per target for 2-D
    data): the 0/1, absolute or sum-of-squares error summed over examples,
    the worst-case error, or the log loss (a mean over examples). Unpacks as
    ``value, error``.
    """

    value: object
    error: object
    loss: str
    _unpack = ("value", "error")


def _column_mode(column: np.ndarray) -> float:
    values, counts = np.unique(column, return_counts=True)
    return values[np.argmax(counts)]  # first maximum: the smallest of the tied values


def best_constant(y, loss: str) -> BestConstant:
    """The constant prediction that minimises ``loss`` on the data ``y``, per target.

    Parameters
    ----------
    y : array_like, shape (n,) or (n, t)
        Actual values of one or ``t`` target features, in any representation
        (raw values, indicators from :func:`to_indicators`, cuts from :func:`to_cuts`).
    loss : {"zero_one", "absolute", "squares", "worst_case", "log_loss"}
        The measure to minimise.

    Returns
    -------
    BestConstant
        ``value`` and the ``error`` it attains.

    Notes
    -----
    The minimisers, per target column:

    - ``"zero_one"``: the mode. With several equally frequent values the
      **smallest** is returned.
    - ``"absolute"``: the median. For an even count every value between the two
      middle values is optimal; the **midpoint** of the two is returned.
    - ``"squares"``: the mean (also the maximum-likelihood prediction for 0/1 data).
    - ``"worst_case"``: the midrange ``(min + max) / 2``, the unique minimiser
      for one target. For several targets the total worst case is a maximum
      over targets, so the constants of targets with a smaller range could
      move without changing it; each target's own midrange is returned.
    - ``"log_loss"``: the mean; ``y`` must be 0/1. A column of only 0s (or
      only 1s) gets 0 (or 1) and a log loss of 0.

    Examples
    --------
    The holiday-length data of Poole & Mackworth (Example 7.5):

    >>> import pairmetrics as pm
    >>> pm.best_constant([1, 6, 6, 2, 1], "absolute")
    BestConstant(value=np.float64(2.0), error=np.float64(10.0), loss='absolute')
    """
    loss = check_choice(loss, "loss", LOSSES)
    arr = _as_targets(y, "y")
    check_finite(arr, "y")
    data = arr.astype(np.float64, copy=False)
    columns = data if data.ndim == 2 else data[:, None]
    if loss == "zero_one":
        value = np.array([_column_mode(columns[:, j]) for j in range(columns.shape[1])], dtype=np.float64)
    elif loss == "absolute":
        value = np.median(columns, axis=0)
    elif loss == "worst_case":
        value = (columns.min(axis=0) + columns.max(axis=0)) / 2
    else:
        if loss == "log_loss":
            check_binary(arr, "y")
        value = columns.mean(axis=0)
    constant = np.broadcast_to(value, columns.shape)  # a zero-stride view, no copy
    if loss == "zero_one":
        error = zero_one_error(columns, constant, per_target=True)
    elif loss == "absolute":
        error = absolute_error(columns, constant, per_target=True)
    elif loss == "squares":
        error = sum_squares_error(columns, constant, per_target=True)
    elif loss == "worst_case":
        error = worst_case_error(columns, constant, per_target=True)
    else:
        error = log_loss(columns, constant, per_target=True)
    if data.ndim == 1:
        return BestConstant(value=np.float64(value[0]), error=np.float64(error[0]), loss=loss)
    return BestConstant(value=value, error=np.asarray(error, dtype=np.float64), loss=loss)

