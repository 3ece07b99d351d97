"""The best constant prediction: the constant that minimises a classic measure on the data, and that minimum."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ._measures import (
    LOSSES,
    absolute_error,
    check_targets,
    log_loss,
    sum_squares_error,
    worst_case_error,
    zero_one_error,
)
from ._result import Result
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, FloatOrArray
from ._validation import (
    Nonbinary,
    Nonfinite,
    as_numeric_array,
    check_choice,
    first_nonbinary_entry,
    first_nonfinite_entry,
    raise_if_nonbinary,
    raise_if_nonfinite,
)

__all__ = ["best_constant", "BestConstant"]
# What the Dask layer (and only it) may use besides __all__: the skeleton, its facts, the measure of each loss.
__seams__ = ["BEST_CONSTANT", "ConstantCounts", "ConstantFacts", "loss_measure"]


@dataclasses.dataclass(frozen=True, eq=False)
class BestConstant(Result):
    """The constant prediction minimising a loss on the data, and the loss it attains.

    ``value`` is a float for 1-D data and one value per target for 2-D data;
    ``error`` is the measure of that loss at ``value`` (per target for 2-D
    data): the 0/1, absolute or sum-of-squares error summed over examples,
    the worst-case error, or the log loss (a mean over examples).
    """

    value: FloatOrArray
    error: FloatOrArray
    loss: str


def _column_mode(column: np.ndarray) -> float:
    values, counts = np.unique(column, return_counts=True)
    return values[np.argmax(counts)]  # first maximum: the smallest of the tied values


@routed
def best_constant(y: ArrayLike, loss: str) -> BestConstant:
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
    arr = check_targets(as_numeric_array(y, "y"), "y")
    data = arr.astype(np.float64, copy=False)
    columns = data if data.ndim == 2 else data[:, None]

    def count(plan: ConstantPlan) -> ConstantCounts:
        if plan.loss == "zero_one":
            value = np.array([_column_mode(columns[:, j]) for j in range(columns.shape[1])], dtype=np.float64)
        elif plan.loss == "absolute":
            value = np.median(columns, axis=0)
        elif plan.loss == "worst_case":
            value = (columns.min(axis=0) + columns.max(axis=0)) / 2
        else:
            value = columns.mean(axis=0)
        constant = np.broadcast_to(value, columns.shape)  # a zero-stride view, no copy
        return ConstantCounts(value, loss_measure(plan.loss)(columns, constant, per_target=True))

    facts = ConstantFacts(
        arr.ndim, first_nonfinite_entry(arr), first_nonbinary_entry(arr) if loss == "log_loss" else None
    )
    return BEST_CONSTANT.run(count, facts, loss, arr.shape)


@dataclasses.dataclass(frozen=True)
class ConstantFacts:
    """What the checks of best_constant need: the data's dimensions, its first non-finite entry and,
    for the log loss, its first entry other than 0 and 1."""

    ndim: int
    nonfinite: Nonfinite
    nonbinary: Nonbinary


@dataclasses.dataclass(frozen=True, eq=False)
class ConstantCounts(LayerEqual):
    """Per column: the constant and the measure it attains (equal between layers up to rounding)."""

    value: np.ndarray
    error: Any

    RTOL = 1e-12  # float sums added in another order on the cluster


@dataclasses.dataclass(frozen=True)
class ConstantPlan:
    loss: str
    ndim: int


def _plan_constant(facts: ConstantFacts, loss: str, shape: tuple[int, ...]) -> ConstantPlan:
    """Every value check of best_constant, in order."""
    loss = check_choice(loss, "loss", LOSSES)
    raise_if_nonfinite(facts.nonfinite, "y")
    if loss == "log_loss":
        raise_if_nonbinary(facts.nonbinary, "y", shape)
    return ConstantPlan(loss, facts.ndim)


def _finish_constant(plan: ConstantPlan, counts: ConstantCounts) -> BestConstant:
    """The BestConstant of per-column values and errors."""
    value = counts.value
    error = np.atleast_1d(np.asarray(counts.error, dtype=np.float64))
    if plan.ndim == 1:
        return BestConstant(value=np.float64(value[0]), error=np.float64(error[0]), loss=plan.loss)
    return BestConstant(value=value, error=error, loss=plan.loss)


BEST_CONSTANT = Skeleton("best_constant", _plan_constant, _finish_constant)


def loss_measure(loss: str) -> Callable[..., FloatOrArray]:
    """The public measure a loss of best_constant names (routed: it takes Dask arrays too)."""
    measures: dict[str, Callable[..., FloatOrArray]] = {
        "zero_one": zero_one_error,
        "absolute": absolute_error,
        "squares": sum_squares_error,
        "worst_case": worst_case_error,
        "log_loss": log_loss,
    }
    return measures[loss]
