"""Concordance of censored survival times: drop-ins for lifelines and scikit-survival.

The checks and the assembly of results from pair counts are seams (names
without a leading underscore) shared with the Dask path in
:mod:`pairmetrics.dask.survival`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._comparable import check_comparable, latest_is_lone_event
from ._routing import routed
from ._skeleton import Skeleton
from ._typing import ArrayLike
from ._validation import (
    Nonfinite,
    as_numeric_array,
    as_vector,
    check_exact_integers,
    check_nonnegative_finite,
    check_same_length,
    first_nonfinite_entry,
    raise_if_nonfinite,
)

__all__ = ["concordance_index", "concordance_index_censored"]
# What the Dask and Spark layers may use besides __all__: the skeletons, their facts and counts, the shape checks.
__seams__ = [
    "lifelines_arrays",
    "LIFELINES",
    "SKSURV",
    "LifelinesFacts",
    "PairCountPlan",
    "PairCounts",
    "SksurvFacts",
    "check_event_shape",
    "check_lifelines_shapes",
    "event_vector",
    "lifelines_vector",
]


def lifelines_vector(arr: Any) -> Any:
    """lifelines' shapes: rows and columns of one are flattened (numpy or Dask arrays)."""
    if arr.ndim == 2 and (arr.shape[0] == 1 or arr.shape[1] == 1):
        arr = arr.ravel()
    return arr


def _float_vector(x: Any, name: str) -> np.ndarray:
    """lifelines' conversion: ``np.asarray(x, dtype=float)``; rows and columns of one are flattened."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:  # the class lifelines raises (strings: ValueError), naming the argument
        raise type(exc)(f"{name} must be array-like of numbers (or of strings that read as numbers)") from None
    arr = as_numeric_array(arr, name)  # record fields and unaligned views become contiguous copies
    return lifelines_vector(arr)


def check_lifelines_shapes(times_shape: tuple[int, ...], scores_shape: tuple[int, ...]) -> None:
    if tuple(times_shape) != tuple(scores_shape):
        raise ValueError(
            f"Event times and predictions must have the same shape: event_times has shape {tuple(times_shape)}, "
            f"predicted_scores {tuple(scores_shape)}"
        )
    if len(times_shape) != 1:
        raise ValueError(f"Event times can only be 1-dimensional: (n,); event_times has shape {tuple(times_shape)}")


def check_event_shape(flags_shape: tuple[int, ...], times_shape: tuple[int, ...]) -> None:
    if tuple(flags_shape) != tuple(times_shape):
        raise ValueError(
            "Observed events must be 1-dimensional of same length as event times: "
            f"event_observed has shape {tuple(flags_shape)}, event_times {tuple(times_shape)}"
        )


def check_no_nan(has_nan: Any, name: str) -> None:
    if has_nan:
        raise ValueError(f"NaNs detected in inputs, please correct or drop (in {name}).")


def lifelines_index(below: int, tied: int, above: int) -> float:
    """lifelines' concordance index from the counts of admissible pairs."""
    pairs = below + tied + above
    if pairs == 0:
        raise ZeroDivisionError("No admissable pairs in the dataset.")
    return (above + tied / 2) / pairs


def _is_integral(x: object) -> bool:
    try:
        return np.asarray(x).dtype.kind in "biu"
    except (TypeError, ValueError):  # ragged input: _float_vector names the argument in its error
        return False


@routed
def concordance_index(
    event_times: ArrayLike, predicted_scores: ArrayLike, event_observed: ArrayLike | None = None
) -> float:
    """Harrell's concordance index with lifelines' semantics (drop-in for
    ``lifelines.utils.concordance_index``).

    Parameters
    ----------
    event_times : array_like, shape (n,)
        Observed survival or censoring times.
    predicted_scores : array_like, shape (n,)
        Predictions where **higher means longer survival** (predicted times,
        or minus a hazard), as in lifelines.
    event_observed : array_like, shape (n,), optional
        Nonzero where the event was observed, zero where the time is
        censored. None means every event was observed.

    Returns
    -------
    float
        ``(correct + tied / 2) / admissible`` over admissible pairs.

    Raises
    ------
    ZeroDivisionError
        When no pair is admissible ("No admissable pairs in the dataset."),
        exactly as lifelines, so existing ``except`` clauses keep working.
    ValueError
        On NaN, or arrays of different shapes (lifelines' messages).

    Notes
    -----
    A pair (i, j) is admissible when ``T_i < T_j`` and ``i``'s event was
    observed, or when ``T_i == T_j``, ``i``'s event was observed and ``j``
    was censored (two events at the same time are not compared). It is
    correct when ``predicted_scores[j] > predicted_scores[i]`` and tied when
    they are equal (counted 1/2). Inputs are converted to float64 as lifelines
    does (``event_observed`` may hold strings such as ``"0"``/``"1"``);
    infinite times and scores are ordered like any others. The counts
    come from one sort by time and a Fenwick tree over score ranks: O(n log n)
    time, O(n) memory, identical to lifelines' own counts. Dask collections
    are counted on the cluster, never gathered, with the same counts (see
    :mod:`pairmetrics.dask.survival`).

    Examples
    --------
    >>> from pairmetrics import concordance_index
    >>> concordance_index([1, 2, 3, 4], [1.0, 3.0, 2.0, 4.0], [1, 1, 0, 1])
    0.8
    """
    times, scores, observed, facts = _lifelines_arrays_and_facts(event_times, predicted_scores, event_observed)
    return LIFELINES.run(lambda plan: count_in_memory(times, observed, scores, plan), facts)


def lifelines_arrays(
    event_times: ArrayLike, predicted_scores: ArrayLike, event_observed: ArrayLike | None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.uint8]]:
    """(times, scores, observed flags) of :func:`concordance_index`'s arguments, checked as lifelines does."""
    times, scores, observed, facts = _lifelines_arrays_and_facts(event_times, predicted_scores, event_observed)
    LIFELINES.plan(facts)
    return times, scores, observed


def _lifelines_arrays_and_facts(
    event_times: ArrayLike, predicted_scores: ArrayLike, event_observed: ArrayLike | None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.uint8], LifelinesFacts]:
    times = _float_vector(event_times, "event_times")
    scores = _float_vector(predicted_scores, "predicted_scores")
    check_lifelines_shapes(times.shape, scores.shape)
    if event_observed is None:
        observed = np.ones(times.shape[0], dtype=np.uint8)
        events_nan = False
    else:
        if _is_integral(event_observed):  # no NaN possible: skip lifelines' float copy
            flags = as_numeric_array(event_observed, "event_observed").ravel()
        else:  # floats, and anything float() reads (strings "0"/"1"), as lifelines
            flags = _float_vector(event_observed, "event_observed").ravel()
        check_event_shape(flags.shape, times.shape)
        events_nan = flags.dtype.kind == "f" and bool(np.isnan(flags).any())
        observed = (flags != 0).view(np.uint8)
    facts = LifelinesFacts(bool(np.isnan(times).any()), bool(np.isnan(scores).any()), events_nan)
    return times, scores, observed, facts


@dataclass(frozen=True)
class LifelinesFacts:
    """Whether each argument of lifelines' concordance index holds NaN."""

    times_nan: bool
    scores_nan: bool
    events_nan: bool


@dataclass(frozen=True)
class PairCountPlan:
    """What to count: the comparable pairs, with estimates within ``tied_tol`` counted as tied."""

    tied_tol: float


@dataclass(frozen=True)
class PairCounts:
    """Comparable pairs by the order of their estimates, and those tied in time (an event and a censoring)."""

    below: int
    tied: int
    above: int
    tied_time: int


def _plan_lifelines(facts: LifelinesFacts) -> PairCountPlan:
    check_no_nan(facts.times_nan, "event_times")
    check_no_nan(facts.scores_nan, "predicted_scores")
    check_no_nan(facts.events_nan, "event_observed")
    return PairCountPlan(0.0)


def _finish_lifelines(plan: PairCountPlan, counts: PairCounts) -> float:
    return lifelines_index(counts.below, counts.tied, counts.above)


LIFELINES = Skeleton("concordance_index", _plan_lifelines, _finish_lifelines)


def count_in_memory(
    times: npt.NDArray[np.float64], events: npt.NDArray[np.uint8], scores: npt.NDArray[np.float64], plan: PairCountPlan
) -> PairCounts:
    """The in-memory counter: one sort by time and a Fenwick tree over score ranks."""
    return PairCounts(**_core.concordance_counts(times, events, scores, plan.tied_tol))


def event_vector(events: Any) -> Any:
    """event_indicator (numpy or Dask) as a vector; shape (n, 1) is flattened."""
    if events.ndim == 2 and events.shape[1] == 1:
        events = events[:, 0]
    if events.ndim != 1:
        raise ValueError(f"event_indicator must be 1-D, got shape {events.shape}")
    return events


def check_sksurv_events(dtype: Any, n: int, any_event: Any) -> None:
    if dtype != np.bool_:
        raise ValueError(
            f"event_indicator: only boolean arrays are supported as class labels for survival analysis, got {dtype}"
        )
    if n < 2:
        raise ValueError("Need a minimum of two samples")
    if not any_event:
        raise ValueError("All samples are censored")


def sksurv_result(below: int, tied: int, above: int, tied_time: int) -> tuple[float, int, int, int, int]:
    """scikit-survival's (cindex, concordant, discordant, tied_risk, tied_time) from the pair counts."""
    comparable = below + tied + above
    with np.errstate(invalid="ignore"):
        cindex = float(np.float64(below + tied / 2) / np.float64(comparable)) if comparable else float("nan")
    return cindex, int(below), int(above), int(tied), int(tied_time)


@routed
def concordance_index_censored(
    event_indicator: ArrayLike, event_time: ArrayLike, estimate: ArrayLike, tied_tol: float = 1e-8
) -> tuple[float, int, int, int, int]:
    """Harrell's concordance index with scikit-survival's semantics (drop-in for
    ``sksurv.metrics.concordance_index_censored``).

    Parameters
    ----------
    event_indicator : array_like of bool, shape (n,)
        True where the event was observed (a bool dtype is required, as in
        scikit-survival).
    event_time : array_like, shape (n,)
        Event or censoring times.
    estimate : array_like, shape (n,)
        Risk scores: **higher means higher risk**, i.e. shorter survival.
    tied_tol : float, default 1e-8
        Estimates with ``|e_i - e_j| <= tied_tol`` count as tied.

    Returns
    -------
    (cindex, concordant, discordant, tied_risk, tied_time) : tuple
        ``cindex = (concordant + tied_risk / 2) / comparable``; the counts are
        ints. ``tied_time`` counts comparable pairs of an event and a sample
        censored at the same time.

    Raises
    ------
    ValueError
        Non-bool ``event_indicator``, fewer than two samples, every sample
        censored, non-finite values, or arrays of different lengths.
    sksurv.exceptions.NoComparablePairException
        When scikit-survival raises it (no event has a comparable partner);
        a ValueError subclass. Without scikit-survival installed, a ValueError.

    Notes
    -----
    An event ``i`` is comparable with every sample of a later time and with
    every sample censored at the same time; two events at the same time are
    not compared. The pair is concordant when ``estimate[i] > estimate[j]``
    and not tied. When every comparable set is empty (all events share the
    last time) ``cindex`` is NaN, as in scikit-survival. O(n log n) time (a
    sort by time and a Fenwick tree over estimate ranks), O(n) memory. Dask
    collections are counted on the cluster, never gathered, with the same
    counts (see :mod:`pairmetrics.dask.survival`).

    Differences from scikit-survival (deliberate): ``|e_i - e_j| <= tied_tol``
    is evaluated on the estimates converted exactly to float64 (integers
    beyond 2**53 are refused). scikit-survival subtracts in the estimate's
    own dtype, which wraps around for unsigned integers (uint8 estimates 1
    and 2 differ by 255 one way), so its tied and discordant counts for such
    input depend on the order of the subtraction.

    Examples
    --------
    >>> from pairmetrics import concordance_index_censored
    >>> concordance_index_censored([True, True, False, True], [1, 2, 3, 4], [4.0, 2.0, 3.0, 1.0])
    (0.8, 4, 1, 0, 0)
    """
    events = event_vector(np.asarray(event_indicator))
    times = as_vector(event_time, "event_time")
    estimates = as_vector(estimate, "estimate")
    check_same_length(events, times, "event_indicator", "event_time")
    check_same_length(times, estimates, "event_time", "estimate")
    facts = SksurvFacts(
        events.dtype,
        times.shape[0],
        int(np.count_nonzero(events)) if events.dtype == np.bool_ else 0,
        first_nonfinite_entry(times),
        first_nonfinite_entry(estimates),
        _largest_integer(times),
        _largest_integer(estimates),
        events.dtype == np.bool_ and times.shape[0] > 0 and latest_is_lone_event(events, times),
    )
    return SKSURV.run(
        lambda plan: count_in_memory(
            times.astype(np.float64, copy=False), events.view(np.uint8), estimates.astype(np.float64, copy=False), plan
        ),
        facts,
        tied_tol,
    )


def _largest_integer(arr: np.ndarray) -> tuple[np.dtype[Any], int]:
    """(dtype, largest |value|) of an integer array; 0 for any other dtype or no values."""
    if arr.dtype.kind not in "iu" or not arr.size:
        return arr.dtype, 0
    return arr.dtype, max(abs(int(arr.max())), abs(int(arr.min())))


@dataclass(frozen=True)
class SksurvFacts:
    """What scikit-survival's checks need to know of the data, however it was gathered."""

    event_dtype: np.dtype[Any]
    n: int
    n_events: int
    times_nonfinite: Nonfinite
    estimates_nonfinite: Nonfinite
    times_integers: tuple[np.dtype[Any], int]  # (dtype, largest |value| when integer)
    estimates_integers: tuple[np.dtype[Any], int]
    only_last_is_event: bool  # the latest time is held by one sample, an event


def _plan_sksurv(facts: SksurvFacts, tied_tol: float) -> PairCountPlan:
    raise_if_nonfinite(facts.times_nonfinite, "event_time")
    raise_if_nonfinite(facts.estimates_nonfinite, "estimate")
    tol = check_nonnegative_finite(tied_tol, "tied_tol")
    check_sksurv_events(facts.event_dtype, facts.n, facts.n_events > 0)
    check_exact_integers(*facts.times_integers, "event_time")
    check_exact_integers(*facts.estimates_integers, "estimate")
    check_comparable(facts.n_events, facts.only_last_is_event)
    return PairCountPlan(tol)


def _finish_sksurv(plan: PairCountPlan, counts: PairCounts) -> tuple[float, int, int, int, int]:
    return sksurv_result(counts.below, counts.tied, counts.above, counts.tied_time)


SKSURV = Skeleton("concordance_index_censored", _plan_sksurv, _finish_sksurv)
