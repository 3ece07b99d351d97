"""Matching and the cross-match test on Dask collections: the points are gathered, within a limit.

The exact matching needs every point (or every distance) in one process, so
:func:`pairmetrics.min_weight_perfect_matching`, :func:`pairmetrics.crossmatch_test` (points, or ``D=`` and
``labels=``), :func:`pairmetrics.multi_crossmatch_test` (numeric labels) and
:func:`pairmetrics.rank_mahalanobis` compute their Dask arguments on the cluster and bring them to the client as
numpy arrays, then run in memory. Above ``MAX_GATHER_BYTES`` (all gathered
arguments together) they raise a ``ValueError`` instead; raise the limit
(``pairmetrics.dask.matching.MAX_GATHER_BYTES = ...``) when the client has
the memory. :func:`pairmetrics.crossmatch_resample` has its own path that
gathers only its subsamples.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .. import _crossmatch, _crossmatch_multi, _matching
from .._routing import is_dask, register
from ._helpers import compute, to_dask_array

__all__ = ["MAX_GATHER_BYTES", "gather_arguments"]

# Largest total size (bytes) of the Dask arguments one call brings to the client.
MAX_GATHER_BYTES = 256 << 20


def gather_arguments(arguments: dict[str, Any], function_name: str) -> dict[str, Any]:
    """The Dask values among ``arguments`` computed to numpy arrays (one compute), within MAX_GATHER_BYTES."""
    lazy = {name: to_dask_array(value, name) for name, value in arguments.items() if is_dask(value)}
    total = sum(int(a.nbytes) for a in lazy.values())
    if total > MAX_GATHER_BYTES:
        sizes = ", ".join(f"{name} {int(a.nbytes):,}" for name, a in lazy.items())
        raise ValueError(
            f"{function_name}() needs its Dask input in one process: it would bring {total:,} bytes ({sizes}) "
            f"to the client, above pairmetrics.dask.matching.MAX_GATHER_BYTES = {MAX_GATHER_BYTES:,}; "
            "raise that limit if the client has the memory"
        )
    return dict(zip(lazy, compute(*lazy.values()))) if lazy else {}


def _gathering(public: Callable[..., Any]) -> Callable[..., Any]:
    """An implementation that gathers the Dask arguments (keyword arguments included) and calls ``public``."""
    extra = [p.name for p in inspect.signature(public).parameters.values() if p.kind is p.VAR_KEYWORD]

    def implementation(**arguments: Any) -> Any:
        keywords = arguments.pop(extra[0], {}) if extra else {}
        arguments.update(gather_arguments(arguments, public.__name__))
        keywords.update(gather_arguments(keywords, public.__name__))
        return public(**arguments, **keywords)

    implementation.__name__ = f"gathering_{public.__name__}"
    return implementation


for _public in (
    _matching.min_weight_perfect_matching,
    _matching.rank_mahalanobis,
    _crossmatch.crossmatch_test,
    _crossmatch_multi.multi_crossmatch_test,
):
    register(_public)(_gathering(_public))
