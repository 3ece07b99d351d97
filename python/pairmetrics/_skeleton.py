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

from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

__all__ = ["Skeleton", "SKELETONS"]

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
