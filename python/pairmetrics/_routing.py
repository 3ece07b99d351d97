"""Routing of public functions to other array namespaces (today: Dask).

This is the package's ground floor: it imports nothing from the package, so
every capability module can import it and nothing imports back.

A public function that takes arrays is decorated with :func:`routed`. When a
call carries a Dask collection, the wrapper imports :mod:`pairmetrics.dask`
(which registers its implementations with :func:`register`) and hands the
bound arguments to the implementation registered for that function object.
A function with no registered implementation refuses Dask input with a
``TypeError``: nothing is gathered silently.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["routed", "register", "implementation", "refusal", "is_dask", "any_dask", "warn", "PUBLIC_FUNCTIONS"]

# public function object -> its Dask implementation (called with keyword arguments only)
_DASK: dict[Callable[..., Any], Callable[..., Any]] = {}
# every routed public function, for the tests that enumerate them
PUBLIC_FUNCTIONS: list[Callable[..., Any]] = []

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_dask(value: object) -> bool:
    """True when ``value`` is a Dask collection (dask is never imported here)."""
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return bool(is_dask_collection(value))


def any_dask(*values: object) -> bool:
    """True when some value is a Dask collection (without importing dask)."""
    return "dask" in sys.modules and any(is_dask(v) for v in values)


def routed(func: Callable[P, R]) -> Callable[P, R]:
    """Route calls that carry a Dask collection to the registered implementation.

    The arguments are bound to ``func``'s own signature first, so an unknown
    keyword raises the same ``TypeError`` for Dask input as for numpy input.
    Without dask imported the wrapper costs one dictionary lookup.
    """
    signature = inspect.signature(func)
    name = func.__name__

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if "dask" in sys.modules and any(map(_holds_dask, (*args, *kwargs.values()))):
            raise refusal(name, "inside a list or tuple" + (" (pass one Dask array)" if _has_path(wrapper) else ""))
        if "dask" in sys.modules and any_dask(*args, *kwargs.values()):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{name}() {exc}") from None
            bound.apply_defaults()
            result: R = implementation(wrapper)(**bound.arguments)
            return result
        return func(*args, **kwargs)

    PUBLIC_FUNCTIONS.append(wrapper)
    return wrapper


def _holds_dask(value: object) -> bool:
    """True when a list or tuple holds a Dask collection (numpy would convert it: a silent gather)."""
    if not isinstance(value, (list, tuple)):
        return False
    kinds = {type(v) for v in value}  # one check per element type: lists of numbers stay cheap
    return any(is_dask(next(v for v in value if type(v) is kind)) for kind in kinds)


def _has_path(public: Callable[..., Any]) -> bool:
    import pairmetrics.dask  # noqa: F401  (registers the implementations)

    return public in _DASK


def refusal(name: str, where: str = "") -> TypeError:
    """The TypeError of a function that takes no Dask collections (``where``: how they were passed)."""
    found = f" {where}" if where else ""
    return TypeError(
        f"{name}() does not take Dask collections{found}; compute them first (for example x.compute()) "
        "if they fit in memory"
    )


def register(public: Callable[..., Any]) -> Callable[[F], F]:
    """Register the decorated function as the Dask implementation of ``public``."""

    def decorate(impl: F) -> F:
        _DASK[public] = impl
        return impl

    return decorate


def implementation(public: Callable[..., Any]) -> Callable[..., Any]:
    """The Dask implementation of ``public``, or a ``TypeError`` saying there is none."""
    if public not in _DASK:
        import pairmetrics.dask  # noqa: F401  (registers the implementations)
    try:
        return _DASK[public]
    except KeyError:
        raise refusal(public.__name__) from None


def _caller_stacklevel() -> int:
    """The stacklevel of the first frame outside this package (warnings point at the user's line)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the caller's line, however deep inside the package."""
    warnings.warn(message, category, stacklevel=_caller_stacklevel())
