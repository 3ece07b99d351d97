"""scikit-survival's rule for data without a comparable pair, shared by Harrell's and Uno's concordance."""

from __future__ import annotations

import numpy as np

__all__ = ["check_comparable", "latest_is_lone_event", "no_comparable_pair_error"]


def no_comparable_pair_error() -> type[ValueError]:
    try:
        from sksurv.exceptions import NoComparablePairException
    except ImportError:  # the same message, as a ValueError (its base class)
        return ValueError
    return NoComparablePairException


def check_comparable(n_events: int, only_last_is_event: bool) -> None:
    """scikit-survival visits every event but one alone at the strictly latest time; with none to visit it
    raises. ``only_last_is_event``: the latest time is held by one sample only, and it is an event."""
    if n_events == 1 and only_last_is_event:
        raise no_comparable_pair_error()("Data has no comparable pairs, cannot estimate concordance index.")


def latest_is_lone_event(events: np.ndarray, times: np.ndarray) -> bool:
    """:func:`check_comparable`'s ``only_last_is_event`` from in-memory arrays."""
    last = np.argmax(times)
    return bool(events[last]) and np.count_nonzero(times == times[last]) == 1
