"""Inverse-probability-of-censoring-weighted discrimination: Uno's C and the
cumulative/dynamic AUC, drop-ins for scikit-survival's functions."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._comparable import check_comparable, latest_is_lone_event
from ._routing import routed
from ._typing import ArrayLike
from ._validation import as_exact_float64, as_numeric_array, check_finite, check_nonnegative_finite

__all__ = ["concordance_index_ipcw", "cumulative_dynamic_auc"]

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.intp]


def survival_arrays(y: Any, name: str) -> tuple[npt.NDArray[np.bool_], Floats]:
    """(event, time) of a scikit-survival structured array: a bool field, then a time field (>= 0)."""
    if not isinstance(y, np.ndarray) or y.dtype.fields is None or len(y.dtype.fields) != 2:
        raise ValueError(
            f"{name} must be a structured array with the first field being a binary class event indicator "
            "and the second field the time of the event/censoring"
        )
    event_field, time_field = y.dtype.names
    event = np.asarray(y[event_field]).ravel()
    if event.dtype != np.bool_:
        raise ValueError(f"{name}: elements of event indicator must be boolean, but found {event.dtype}")
    if not event.any():
        raise ValueError(f"{name}: all samples are censored")
    time = as_numeric_array(y[time_field], f"{name} time").ravel()
    check_finite(time, f"{name} time")
    time = as_exact_float64(time, f"{name} time")
    if (time < 0).any():
        raise ValueError(f"{name}: observed time contains values smaller zero")
    return event, time


def time_groups(event: npt.NDArray[np.bool_], time: Floats, order: Indices) -> tuple[Floats, Indices, Indices]:
    """(distinct times, samples at each, events at each) given ``order``, an argsort of ``time``."""
    t = time[order]
    first = np.empty(t.shape[0], dtype=bool)  # np.r_ costs more than the whole comparison at this size
    first[0] = True
    np.not_equal(t[1:], t[:-1], out=first[1:])
    start = np.flatnonzero(first)
    total = np.diff(start, append=t.shape[0])
    events = np.add.reduceat(event[order].astype(np.int64), start)
    return t[start], total, events


def kaplan_meier(unique: Floats, total: Indices, events: Indices, *, reverse: bool = False) -> tuple[Floats, Floats]:
    """Kaplan-Meier survival at each distinct time of :func:`time_groups` (``reverse``: of the censoring
    times), prefixed with ``(-inf, 1)``; as scikit-survival, an uncensored sample makes the censoring curve 1."""
    if reverse and (events == total).all():
        return np.concatenate(([-np.inf], unique)), np.ones(unique.shape[0] + 1)
    at_risk = int(total.sum()) - np.concatenate(([0], np.cumsum(total)[:-1]))
    if reverse:  # the censored samples are the "events"; an event leaves the risk set first
        at_risk, events = at_risk - events, total - events
    ratio = np.divide(events, at_risk, out=np.zeros(unique.shape[0]), where=events != 0)
    return np.concatenate(([-np.inf], unique)), np.concatenate(([1.0], np.cumprod(1.0 - ratio)))


def step_lookup(unique: Floats, prob: Floats, at: Floats) -> Floats:
    """The step function ``prob`` (right-continuous, knots ``unique``) at ``at``; 0 beyond the last knot,
    which is an error unless the curve reached 0 (the estimate is undefined there). Sorted ``at`` is
    searched fastest."""
    beyond = at > unique[-1]
    if prob[-1] > 0 and beyond.any():
        raise ValueError(f"time must be smaller than largest observed time point: {unique[-1]}")
    out = np.zeros(at.shape[0])
    inside = at[~beyond]
    index = np.searchsorted(unique, inside)
    exact = np.abs(unique[index] - inside) < np.finfo(np.float64).eps
    index[~exact] -= 1
    out[~beyond] = prob[index]
    return out


def censoring_weights(
    train: Any,
    weighted: npt.NDArray[np.bool_],
    time: Floats,
    order: Indices,
    test: tuple[npt.NDArray[np.bool_], tuple[Floats, Indices, Indices]] | None = None,
) -> Floats:
    """``1 / G(t_i)`` for the ``weighted`` samples and 0 for the others, with ``G`` the Kaplan-Meier
    estimate of the censoring distribution in ``train``; ``order`` sorts ``time``. ``test``: the test
    set's events and :func:`time_groups`, reused when ``train`` holds the same samples."""
    train_event, train_time = survival_arrays(train, "survival_train")
    same_times = np.array_equal(train_time, time)
    if same_times and test is not None and np.array_equal(train_event, test[0]):
        groups = test[1]
    else:
        groups = time_groups(train_event, train_time, order if same_times else np.argsort(train_time))
    unique, prob = kaplan_meier(*groups, reverse=True)
    events_in_order = order[weighted[order]]
    g = step_lookup(unique, prob, time[events_in_order])  # sorted times: a merge-like search
    if (g == 0).any():
        raise ValueError("censoring survival function is zero at one or more time points")
    weights = np.zeros(time.shape[0])
    weights[events_in_order] = 1.0 / g
    return weights


def _estimates(estimate: Any, n: int) -> npt.NDArray[np.float64]:
    arr = as_numeric_array(estimate, "estimate")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim not in (1, 2) or arr.shape[0] != n:
        raise ValueError(f"estimate must have one row per test sample ({n}), got shape {arr.shape}")
    check_finite(arr, "estimate")
    return as_exact_float64(arr, "estimate")


@routed
def concordance_index_ipcw(
    survival_train: ArrayLike,
    survival_test: ArrayLike,
    estimate: ArrayLike,
    tau: float | None = None,
    tied_tol: float = 1e-8,
) -> tuple[float, int, int, int, int]:
    """Uno's concordance index with inverse probability of censoring weights (drop-in for
    ``sksurv.metrics.concordance_index_ipcw``).

    Parameters
    ----------
    survival_train : structured array, shape (n_train,)
        A bool event field and a time field; the censoring distribution is
        estimated from it (Kaplan-Meier).
    survival_test : structured array, shape (n,)
        The test samples' events and times.
    estimate : array_like, shape (n,)
        Risk scores: **higher means shorter survival**.
    tau : float, optional
        Only events before ``tau`` get weight (truncation).
    tied_tol : float, default 1e-8
        Estimates with ``|e_i - e_j| <= tied_tol`` count as tied.

    Returns
    -------
    (cindex, concordant, discordant, tied_risk, tied_time) : tuple
        As scikit-survival: the counts are those of
        :func:`concordance_index_censored` (unweighted); ``cindex`` weights
        every comparable pair of event ``i`` by ``1 / G(t_i)**2``.

    Raises
    ------
    ValueError
        Malformed structured arrays, all samples censored, test times beyond
        the censoring curve, a zero censoring probability, non-finite
        estimates; ``NoComparablePairException`` as scikit-survival.

    Notes
    -----
    Each event's comparable partners are counted in one O(n log n) sweep
    (the kernel of :func:`concordance_index_censored`, with per-sample
    output), so the weighted sums take O(n log n) time where scikit-survival
    loops over the events in O(n**2).

    Examples
    --------
    >>> import numpy as np
    >>> from pairmetrics import concordance_index_ipcw
    >>> dtype = [("event", bool), ("time", float)]
    >>> y = np.array([(True, 1.0), (False, 2.0), (True, 3.0), (True, 4.0), (False, 5.0)], dtype=dtype)
    >>> cindex, *counts = concordance_index_ipcw(y, y, [5.0, 3.0, 4.0, 1.0, 2.0])
    >>> round(cindex, 4), counts
    (0.8095, [6, 1, 0, 0])
    """
    event, time = survival_arrays(survival_test, "survival_test")
    estimates = _estimates(estimate, time.shape[0])
    if estimates.ndim != 1:
        raise ValueError(f"estimate must be 1-D, got shape {estimates.shape}")
    tied_tol = check_nonnegative_finite(tied_tol, "tied_tol")
    weighted = event if tau is None else event & (time < tau)
    if not weighted.any():
        raise ValueError(f"survival_test: all samples before tau={tau} are censored")
    weights = censoring_weights(survival_train, weighted, time, np.argsort(time)) ** 2
    check_comparable(int(event.sum()), latest_is_lone_event(event, time))
    counts = _core.concordance_per_sample(time, event.view(np.uint8), estimates, tied_tol)
    below, tied, above, tied_time = (counts[k] for k in ("below", "tied", "above", "tied_time"))
    per_sample = counts["per_sample"]
    earlier = per_sample[:, :3].astype(np.float64)
    # elementwise sums, not BLAS dot products: a busy BLAS thread pool costs more than the whole sum
    numerator = np.sum(weights * (earlier[:, 0] + 0.5 * earlier[:, 1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        cindex = float(np.float64(numerator) / np.sum(weights * earlier.sum(axis=1)))
    return cindex, int(below), int(above), int(tied), int(tied_time)


def _dynamic_auc(scores: Floats, level: Indices, case_weight: Floats, n_cutoffs: int, tied_tol: float) -> Floats:
    """AUC(t) at every (sorted) cutoff for one column of risk scores: weighted cases (time <= t) against
    controls (time > t), ties counted 1/2; ``level``: how many cutoffs lie below each sample's time.
    Neighbouring sorted scores within ``tied_tol`` are tied (ties chain, as in scikit-survival). One sort,
    then one histogram of the samples over (tie group, cutoffs below their time): O(n log n + groups * cutoffs)."""
    order = np.argsort(scores)  # tie groups are formed from the values: any order of equal scores will do
    sorted_scores = scores[order]
    group = np.cumsum(np.diff(sorted_scores, prepend=sorted_scores[0]) > tied_tol)  # sorted: no negative step
    n_groups, width = int(group[-1]) + 1, n_cutoffs + 1
    cell = group * width + level[order]  # a control at the first `level` cutoffs, a case from there on
    counts = np.bincount(cell, minlength=n_groups * width).reshape(n_groups, width)
    weights = np.bincount(cell, weights=case_weight[order], minlength=n_groups * width).reshape(n_groups, width)
    controls = np.cumsum(counts[:, ::-1], axis=1)[:, -2::-1]  # per group and cutoff k: level > k
    cases = np.cumsum(weights, axis=1)[:, :-1]  # level <= k
    below = np.cumsum(controls, axis=0) - controls  # controls in lower groups
    numerator = np.sum(cases * (below + 0.5 * controls), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):  # no case yet: NaN, as scikit-survival
        aucs: Floats = numerator / (cases.sum(axis=0) * controls.sum(axis=0).astype(np.float64))
    return aucs


@routed
def cumulative_dynamic_auc(
    survival_train: ArrayLike, survival_test: ArrayLike, estimate: ArrayLike, times: ArrayLike, tied_tol: float = 1e-8
) -> tuple[Floats, float]:
    """Cumulative/dynamic AUC at given times (drop-in for ``sksurv.metrics.cumulative_dynamic_auc``).

    Parameters
    ----------
    survival_train : structured array, shape (n_train,)
        Events and times from which the censoring distribution is estimated.
    survival_test : structured array, shape (n,)
        The test samples' events and times.
    estimate : array_like, shape (n,) or (n, n_times)
        Risk scores (higher = shorter survival); one column per time for
        time-dependent risks.
    times : array_like, shape (n_times,)
        Time points, within ``[min(test time), max(test time))``; sorted and
        made unique as in scikit-survival.
    tied_tol : float, default 1e-8
        Neighbouring sorted estimates within ``tied_tol`` are tied (ties chain).

    Returns
    -------
    (auc, mean_auc) : (ndarray, float)
        ``auc[k]``: the IPCW-weighted probability that a case (event by
        ``times[k]``) has a higher risk than a control (alive after it),
        ties counted 1/2. ``mean_auc`` integrates ``auc`` over the test
        set's Kaplan-Meier survival curve.

    Notes
    -----
    The scores are sorted once (per column); one pass then counts the
    controls and weighs the cases of every tie group at every time point
    (a histogram over tie groups and time points), not a sort per time point.

    Examples
    --------
    >>> import numpy as np
    >>> from pairmetrics import cumulative_dynamic_auc
    >>> dtype = [("event", bool), ("time", float)]
    >>> y = np.array([(True, 1.0), (False, 2.0), (True, 3.0), (True, 4.0), (False, 5.0)], dtype=dtype)
    >>> auc, mean_auc = cumulative_dynamic_auc(y, y, [5.0, 3.0, 1.0, 4.0, 2.0], [1.5, 3.5])
    >>> auc.round(4), round(mean_auc, 4)
    (array([1.    , 0.4286]), 0.6735)
    """
    event, time = survival_arrays(survival_test, "survival_test")
    estimates = _estimates(estimate, time.shape[0])
    tied_tol = check_nonnegative_finite(tied_tol, "tied_tol")
    cutoffs = as_numeric_array(np.atleast_1d(times), "times").ravel()
    check_finite(cutoffs, "times")
    cutoffs = np.unique(cutoffs.astype(np.float64))
    if cutoffs.size == 0 or cutoffs.max() >= time.max() or cutoffs.min() < time.min():
        raise ValueError(f"all times must be within follow-up time of test data: [{time.min()}; {time.max()}[")
    if estimates.ndim == 2 and estimates.shape[1] != cutoffs.shape[0]:
        raise ValueError(f"expected estimate with {cutoffs.shape[0]} columns, but got {estimates.shape[1]}")
    order = np.argsort(time)
    groups = time_groups(event, time, order)
    weights = censoring_weights(survival_train, event, time, order, (event, groups))
    level = np.empty(time.shape[0], dtype=np.intp)  # cutoffs below each time: searched once per distinct time
    level[order] = np.repeat(np.searchsorted(cutoffs, groups[0], side="left"), groups[1])
    if estimates.ndim == 1:
        aucs = _dynamic_auc(estimates, level, weights, cutoffs.shape[0], tied_tol)
    else:  # column k at cutoff k: a control when at least k + 1 cutoffs lie below its time
        aucs = np.array(
            [
                _dynamic_auc(estimates[:, k], (level > k).astype(np.intp), weights, 1, tied_tol)[0]
                for k in range(cutoffs.shape[0])
            ]
        )
    if cutoffs.shape[0] == 1:
        return aucs, float(aucs[0])
    unique, prob = kaplan_meier(*groups)
    survival = step_lookup(unique, prob, cutoffs)
    steps = -np.diff(survival, prepend=1.0)
    return aucs, float((aucs * steps).sum() / (1.0 - survival[-1]))
