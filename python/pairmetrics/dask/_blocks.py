"""Generic helpers of the Dask layer: conversion, row alignment, block reductions, cluster facts.

Every Dask module of :mod:`pairmetrics.dask` builds on these; none of them is
specific to one capability. Validation messages come from
:mod:`pairmetrics._validation` (one home), and indices in them are global:
a block reports local positions, :func:`raise_nonfinite` adds the block's offset.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "align_rows",
    "check_finite",
    "checked_dtype",
    "client",
    "cluster_threads",
    "compute",
    "da",
    "first_nonfinite",
    "first_report",
    "from_order_keys",
    "memory_capped",
    "offsets",
    "order_keys",
    "raise_nonfinite",
    "resolve_threads",
    "sum_arrays",
    "sum_int",
    "to_dask_array",
    "tree_reduce",
    "vector",
]

# A non-finite report of one block: (count, first local flat index, the first is NaN).
NonfiniteReport = tuple[int, int, bool]


def da() -> Any:
    """``dask.array``, imported on use (``import pairmetrics`` never loads dask)."""
    import dask.array

    return dask.array


def compute(*values: Any, progress: bool = False) -> tuple[Any, ...]:
    """``dask.compute`` on the active client (or the default scheduler), with an optional bar."""
    import dask

    if not progress:
        return tuple(dask.compute(*values))
    active = client()
    if active is not None:
        from distributed import progress as show

        futures = active.compute(list(values))
        show(futures)
        return tuple(active.gather(futures))
    from dask.diagnostics import ProgressBar

    with ProgressBar():
        return tuple(dask.compute(*values))


def client() -> Any:
    """The active ``distributed.Client``, or None."""
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def cluster_threads() -> int:
    """Threads of the cluster's workers (the usable cores without a client)."""
    active = client()
    if active is not None:
        try:
            return max(1, sum(active.nthreads().values()))
        except Exception:  # a client without workers yet
            return 1
    from .._validation import usable_cores

    return usable_cores()


def memory_capped(count: int, bytes_per_item: int) -> int:
    """``count``, or fewer when a worker's memory per thread holds fewer items of ``bytes_per_item``."""
    cap = count
    active = client()
    if active is not None:
        try:
            workers = active.scheduler_info()["workers"].values()
            limits = [w["memory_limit"] / max(1, w["nthreads"]) for w in workers if w.get("memory_limit")]
        except Exception:  # an older or remote scheduler without this information
            limits = []
        if limits:
            cap = min(cap, int(min(limits) // bytes_per_item))
    return max(1, cap)


def to_dask_array(x: Any, name: str) -> Any:
    """A dask array from a dask array, DataFrame/Series (lengths computed) or anything numpy accepts."""
    import dask
    from dask.array import Array

    if isinstance(x, Array):
        arr = x
    elif dask.is_dask_collection(x) and hasattr(x, "to_dask_array"):
        # lengths are computed below: to_dask_array(lengths=True) fails on a Parquet
        # column whose files dask merges into fewer partitions when reading one column
        arr = x.to_dask_array()
    elif dask.is_dask_collection(x):
        raise TypeError(f"{name} must be a dask array, DataFrame or Series, got {type(x).__name__}")
    else:
        from .._validation import as_numeric_array

        arr = da().from_array(as_numeric_array(x, name), chunks=-1)
    if any(math.isnan(c) for dim in arr.chunks for c in dim):
        arr = arr.compute_chunk_sizes()
    return checked_dtype(arr, name)


def checked_dtype(arr: Any, name: str) -> Any:
    """Apply ``as_numeric_array``'s dtype rules: reject non-numbers, widen float16, canonical bools."""
    from .._validation import as_numeric_array

    if arr.dtype.kind == "O":  # numpy converts object arrays; their blocks' dtypes are unknown here
        raise TypeError(f"{name} must contain numbers only; a dask array of dtype object is not accepted")
    out_dtype = as_numeric_array(np.zeros(1, dtype=arr.dtype), name).dtype  # the in-memory dtype rules
    return arr.map_blocks(lambda b: as_numeric_array(b, name), dtype=out_dtype)


def vector(x: Any, name: str, min_length: int = 1) -> Any:
    """A 1-D dask array with the in-memory shape rules (``(n, 1)`` flattened)."""
    from .._validation import vector_shape

    return vector_shape(to_dask_array(x, name), name, min_length=min_length)


def align_rows(arrays: Sequence[Any], names: Sequence[str]) -> list[Any]:
    """Rechunk along rows to the chunks of the most finely chunked array (one chunk across columns), without
    empty chunks: dask broadcasts an elementwise operation on one row into every empty chunk of it."""
    lengths = {a.shape[0] for a in arrays}
    if len(lengths) > 1:
        shapes = " and ".join(str(a.shape[0]) for a in arrays)
        raise ValueError(f"{' and '.join(names)} must have the same length, got {shapes}")
    reference = max(arrays, key=lambda a: len(a.chunks[0]))
    rows = tuple(c for c in reference.chunks[0] if c) or reference.chunks[0][:1]
    out = []
    for a in arrays:
        spec: dict[int, Any] = {0: rows}
        if a.ndim == 2:
            spec[1] = -1
        out.append(a.rechunk(spec) if a.chunks[0] != rows or (a.ndim == 2 and len(a.chunks[1]) > 1) else a)
    return out


def offsets(chunks: Sequence[int]) -> np.ndarray:
    """Global row offsets of the blocks, with the total last (int64, length blocks + 1)."""
    return np.concatenate([[0], np.cumsum(chunks)]).astype(np.int64)


def first_nonfinite(block: np.ndarray) -> NonfiniteReport:
    """(count, first local flat index, whether it is NaN) of the non-finite entries of a block."""
    if block.dtype.kind != "f":
        return 0, -1, False
    flat = np.asarray(block).ravel()
    bad = ~np.isfinite(flat)
    count = int(np.count_nonzero(bad))
    if not count:
        return 0, -1, False
    first = int(np.argmax(bad))
    return count, first, bool(np.isnan(flat[first]))


def raise_nonfinite(reports: Sequence[NonfiniteReport], name: str, row_offsets: np.ndarray, row_width: int = 1) -> None:
    """Raise the in-memory error from per-block :func:`first_nonfinite` reports, with the global index."""
    from .._validation import raise_if_nonfinite

    raise_if_nonfinite(first_report(reports, row_offsets, row_width), name)


def check_finite(arr: Any, name: str) -> None:
    """One pass over a dask array (blocks along rows only) raising the in-memory non-finite error."""
    from dask import delayed

    if arr.dtype.kind != "f":
        return
    if arr.ndim == 2 and len(arr.chunks[1]) > 1:
        arr = arr.rechunk({1: -1})
    reports = compute(*[delayed(first_nonfinite, pure=True)(b) for b in arr.to_delayed().ravel()])
    row_width = 1 if arr.ndim == 1 else int(np.prod(arr.shape[1:]))
    raise_nonfinite(list(reports), name, offsets(arr.chunks[0]), row_width)


def tree_reduce(func: Callable[..., Any], items: Iterable[Any], width: int = 8) -> Any:
    """Reduce delayed items with ``func(*group)`` along a tree of the given width."""
    from dask import delayed

    items = list(items)
    while len(items) > 1:
        items = [
            delayed(func, pure=True)(*items[i : i + width]) if len(items[i : i + width]) > 1 else items[i]
            for i in range(0, len(items), width)
        ]
    return items[0]


def sum_arrays(*arrays: np.ndarray) -> np.ndarray:
    """The elementwise sum of arrays of one shape (a new array)."""
    total = np.array(arrays[0], copy=True)
    for a in arrays[1:]:
        total += a
    return total


def sum_int(a: np.ndarray) -> int:
    """The sum of an integer array as a Python int."""
    return int(a.sum())


def resolve_threads(n_jobs: int | None) -> int:
    """Threads for a kernel inside one task, by the in-memory ``n_jobs`` rules."""
    from .._validation import resolve_n_jobs

    return resolve_n_jobs(n_jobs)


def order_keys(x: np.ndarray) -> np.ndarray:
    """Doubles as int64 keys in the same order (-0.0 and 0.0 share a key)."""
    bits = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, -(bits & np.int64(0x7FFFFFFFFFFFFFFF)), bits)


def from_order_keys(key: np.ndarray) -> np.ndarray:
    """The doubles of :func:`order_keys` (-0.0 comes back as 0.0)."""
    sign = np.int64(-0x8000000000000000)
    return np.where(key < 0, (-key) | sign, key).view(np.float64)


def first_report(
    reports: Sequence[tuple[Any, ...]], row_offsets: np.ndarray, row_width: int = 1
) -> tuple[Any, ...] | None:
    """From per-block (count, first local flat index, detail) reports: (global flat index of the first,
    its detail, the total count), or None when every count is 0."""
    total = sum(r[0] for r in reports)
    if not total:
        return None
    k = next(i for i, r in enumerate(reports) if r[0])
    return int(row_offsets[k]) * row_width + reports[k][1], reports[k][2], total
