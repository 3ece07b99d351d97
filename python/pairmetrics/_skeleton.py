"""One skeleton per capability: plan -> count -> finish.

A capability writes its two shared steps once, in a :class:`Skeleton`:

* **plan** takes the *facts* of the data (shapes, dtypes, the first
  non-finite entry, extremes: whatever its checks need) and the options,
  raises on bad input and decides what to count;
* **finish** turns the counts into the result, its variance and interval.

Each layer (in memory, ``groups=``, Dask, Spark) supplies only what differs:
how the facts are gathered and a counter, a function of the plan that returns
the counts. So the checks, their order and their messages, and the numbers
built from the counts, are the same whichever layer computed them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, Generic, ParamSpec, TypeVar

import numpy as np

__all__ = ["Skeleton", "SKELETONS", "LayerEqual", "same_values"]

P = ParamSpec("P")
PlanT = TypeVar("PlanT")
CountsT = TypeVar("CountsT")
ResultT = TypeVar("ResultT")


class Skeleton(Generic[P, PlanT, CountsT, ResultT]):
    """A capability's plan and finish, shared by every layer that counts for it.

    Parameters
    ----------
    name : str
        The capability's public name (for messages and the layering tests).
    plan : callable
        ``plan(facts..., options...) -> plan``: the checks and the choices.
    finish : callable
        ``finish(plan, counts) -> result``.
    """

    def __init__(self, name: str, plan: Callable[P, PlanT], finish: Callable[[PlanT, CountsT], ResultT]) -> None:
        self.name = name
        self.plan = plan
        self.finish = finish
        SKELETONS.append(self)

    def run(self, count: Callable[[PlanT], CountsT], /, *args: P.args, **kwargs: P.kwargs) -> ResultT:
        """Plan from the facts and options, count with ``count``, finish."""
        plan = self.plan(*args, **kwargs)
        return self.finish(plan, count(plan))

    def __repr__(self) -> str:
        return f"Skeleton({self.name!r})"


# every skeleton, in the order its module was imported (for the layering tests)
SKELETONS: list[Skeleton[..., Any, Any, Any]] = []


def same_values(a: Any, b: Any, rtol: float = 0.0) -> bool:
    """Whether two facts, plans or counts found on different layers agree: arrays elementwise (NaN equal to
    NaN), floating values within ``rtol`` (0: exactly), tuples, lists and dicts item by item; functions
    (a counter's further passes) are not compared."""
    if a is None or b is None:
        return a is b
    if isinstance(a, LayerEqual):
        return a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_values(a[k], b[k], rtol) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(same_values(x, y, rtol) for x, y in zip(a, b))
    if callable(a) and not isinstance(a, type):
        return callable(b)
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return False
    if x.dtype.kind in "fc" and y.dtype.kind in "fciu":
        return bool(np.allclose(x, y, rtol=rtol, atol=0, equal_nan=True))
    return bool(np.array_equal(x, y))


class LayerEqual:
    """Equality for the facts, plans and counts dataclasses (declared with ``eq=False``): equal when every
    field is (see :func:`same_values`); ``RTOL`` > 0 where a layer adds float sums in another order."""

    RTOL: ClassVar[float] = 0.0

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        fields = dataclasses.fields(self)  # type: ignore[arg-type]
        return all(same_values(getattr(self, f.name), getattr(other, f.name), self.RTOL) for f in fields)

    __hash__ = None  # type: ignore[assignment]
