"""Argument validation shared by every public function.

Everything is checked here, in Python, before any compiled kernel runs, so bad
input raises a ``ValueError``/``TypeError`` that names the argument instead of
crashing or returning a silently wrong number. Conversions use ``np.asarray``
and never copy when the dtype already fits.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import sys
from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np
import numpy.typing as npt

__all__ = [
    "as_numeric_array",
    "as_vector",
    "as_matrix",
    "check_finite",
    "check_same_length",
    "check_positive_finite",
    "check_choice",
    "resolve_n_jobs",
    "check_bool",
    "check_nonnegative_finite",
    "check_binary",
    "check_real",
    "check_int",
    "check_rng",
    "check_progress",
    "usable_cores",
    "max_threads",
    "threadpoolctl_limit",
    "sortable",
    "check_exact_integers",
    "as_exact_float64",
    "first_nonfinite_entry",
    "raise_if_nonfinite",
]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = ["binary_report", "matrix_shape", "vector_shape"]


def as_numeric_array(x: Any, name: str, *, allow_bool: bool = True) -> np.ndarray:
    """Convert ``x`` to an ndarray of a real numeric dtype the kernels read in place.

    No copy when the array already fits. A copy is made only where reading
    in place would be wrong: another byte order, a bool array holding bytes
    other than 0 and 1, an unaligned or record-field view, float16 (widened to
    float32) and longdouble (narrowed to float64 when that is exact).
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be array-like of numbers: {type(exc).__name__}: {exc}") from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{name} must contain numbers only, got dtype object with non-numeric entries") from None
    kind = arr.dtype.kind
    if kind == "b" and not allow_bool:
        raise TypeError(f"{name} must be numeric, got dtype bool")
    if kind not in "biuf":
        raise TypeError(f"{name} must have a real numeric dtype, got dtype {arr.dtype}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if kind == "b" and arr.size and arr.view(np.uint8).max() > 1:
        arr = arr.view(np.uint8) != 0  # numpy prints such bytes as True; so do we
    if kind == "f" and arr.dtype.itemsize == 2:
        arr = arr.astype(np.float32)
    elif kind == "f" and arr.dtype.itemsize > 8:
        narrowed = arr.astype(np.float64)
        with np.errstate(invalid="ignore"):
            exact = np.array_equal(narrowed, arr, equal_nan=True)
        if not exact:
            raise TypeError(f"{name} has dtype {arr.dtype} with values that float64 cannot hold exactly; convert it")
        arr = narrowed
    if not arr.flags.aligned or any(s % arr.itemsize for s in arr.strides):
        arr = arr.copy()  # record fields and unaligned views: kernels step in whole elements
    return arr


def as_vector(x: Any, name: str, *, min_length: int = 1) -> np.ndarray:
    """A 1-D numeric array; shape (n, 1) is accepted and flattened (as a view)."""
    vector: np.ndarray = vector_shape(as_numeric_array(x, name), name, min_length=min_length)
    return vector


def vector_shape(arr: Any, name: str, *, min_length: int = 1) -> Any:
    """``arr`` (numpy or Dask) as 1-D: shape (n, 1) flattened, anything else but (n,) refused."""
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    elif arr.ndim == 0:
        raise ValueError(f"{name} must be 1-D, got a scalar")
    elif arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D or of shape (n, 1), got shape {arr.shape}")
    if arr.shape[0] < min_length:
        raise ValueError(f"{name} needs at least {min_length} elements, got {arr.shape[0]}")
    return arr


def as_matrix(x: Any, name: str, *, min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """A 2-D numeric array with at least ``min_rows`` rows and ``min_cols`` columns."""
    return matrix_shape(as_numeric_array(x, name), name, min_rows=min_rows, min_cols=min_cols)


def matrix_shape(arr: Any, name: str, *, min_rows: int = 1, min_cols: int = 1) -> Any:
    """``arr`` (numpy or Dask) if it is 2-D with at least ``min_rows`` rows and ``min_cols`` columns."""
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} rows, got {arr.shape[0]}")
    if arr.shape[1] < min_cols:
        raise ValueError(f"{name} needs at least {min_cols} columns, got {arr.shape[1]}")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if a float array holds NaN or +-inf (integer arrays are always finite)."""
    raise_if_nonfinite(first_nonfinite_entry(arr), name)


# The first non-finite entry of an array: (flat index, whether it is NaN, how many in all); None when all are finite.
Nonfinite = tuple[int, bool, int] | None


def first_nonfinite_entry(arr: np.ndarray) -> Nonfinite:
    """The :data:`Nonfinite` fact of an in-memory array (integer arrays are always finite)."""
    if arr.dtype.kind != "f" or np.isfinite(arr).all():
        return None
    bad = np.flatnonzero(~np.isfinite(arr.ravel()))
    return int(bad[0]), bool(np.isnan(arr.ravel()[bad[0]])), int(bad.size)


def raise_if_nonfinite(fact: Nonfinite, name: str) -> None:
    """Raise the non-finite error of :func:`check_finite` from a :data:`Nonfinite` fact, however it was found."""
    if fact is not None:
        raise nonfinite_error(name, fact[1], fact[0], fact[2])


def nonfinite_error(name: str, is_nan: bool, first: int, count: int) -> ValueError:
    """The error for non-finite input: the first bad entry (flat index into the whole array) and the count."""
    what = "NaN" if is_nan else "infinite values"
    return ValueError(f"{name} contains {what} (first at flat index {first}, {count} non-finite in all)")


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{name_a} and {name_b} must have the same length, got {a.shape[0]} and {b.shape[0]}")


def _is_real_number(value: object) -> TypeGuard[numbers.Real | np.floating[Any] | np.integer[Any]]:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (numbers.Real, np.floating, np.integer))


def check_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite real number within [low, high] (either end open on request), as float."""
    if not _is_real_number(value):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if not math.isfinite(value) or too_low or too_high:
        lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f"{'<' if high_open else '<='} {high}"
        bounds = " and ".join(b for b in (lo, hi) if b)
        raise ValueError(f"{name} must be finite{' and ' + bounds if bounds else ''}, got {value}")
    return value


def check_positive_finite(value: Any, name: str) -> float:
    """A finite real number > 0, returned as float."""
    return check_real(value, name, low=0, low_open=True)


def check_nonnegative_finite(value: Any, name: str) -> float:
    """A finite real number >= 0, returned as float."""
    return check_real(value, name, low=0)


def check_int(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (Python or numpy, not bool) within [low, high], as int."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = " and ".join(
            b for b in (f">= {low}" if low is not None else "", f"<= {high}" if high is not None else "") if b
        )
        raise ValueError(f"{name} must be {bounds}, got {value}")
    return value


def check_rng(rng: Any) -> np.random.Generator:
    """``rng`` as a Generator: None, an int seed, a SeedSequence, a BitGenerator or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (numbers.Integral, np.integer)):
        raise TypeError(f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}")
    if int(rng) < 0:
        raise ValueError(f"rng seed must be >= 0, got {int(rng)}")
    return np.random.default_rng(int(rng))


def check_progress(progress: Any) -> bool:
    """``progress`` must be True or False (a tqdm bar when True and tqdm is installed)."""
    return check_bool(progress, "progress")


def check_choice(value: Any, name: str, choices: Sequence[str | None]) -> str:
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}")
    return value


_MAX_THREADS_ENV = "PAIRMETRICS_NUM_THREADS"


@functools.cache
def usable_cores() -> int:
    """Cores this process may run on: CPU affinity and a cgroup CPU quota, not ``os.cpu_count()``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def max_threads() -> int:
    """Usable cores, lowered by the environment variable ``PAIRMETRICS_NUM_THREADS``."""
    cores = usable_cores()
    limit = os.environ.get(_MAX_THREADS_ENV, "").strip()
    if limit:
        try:
            value = int(limit)
        except ValueError:
            raise ValueError(
                f"environment variable {_MAX_THREADS_ENV} must be a positive integer, got {limit!r}"
            ) from None
        if value < 1:
            raise ValueError(f"environment variable {_MAX_THREADS_ENV} must be a positive integer, got {limit!r}")
        cores = min(cores, value)
    return cores


# threadpoolctl's view of the loaded native libraries, rebuilt when modules
# were imported since (a new import may load another BLAS or OpenMP runtime).
_threadpool_view = None


def threadpoolctl_limit() -> int | None:
    """The thread limit threadpoolctl currently applies, or None.

    Only consulted when the program has imported ``threadpoolctl`` (this
    module never imports it): the smallest thread count it reports for the
    BLAS and OpenMP libraries of the process, so that inside
    ``with threadpool_limits(k):`` the default ``n_jobs=None`` uses at most
    ``k`` threads. Reading the counts costs microseconds; finding the
    libraries (a few milliseconds) happens again only after new imports.
    """
    global _threadpool_view
    module = sys.modules.get("threadpoolctl")
    if module is None:
        return None
    view = _threadpool_view
    if view is None or view[0] is not module or view[1] != len(sys.modules):
        try:
            view = (module, len(sys.modules), module.ThreadpoolController().lib_controllers)
        except Exception:  # an unknown threadpoolctl version: no limit rather than no result
            return None
        _threadpool_view = view
    counts = []
    for library in view[2]:
        try:
            counts.append(int(library.get_num_threads()))
        except Exception:
            continue
    counts = [c for c in counts if c >= 1]
    return min(counts) if counts else None


def resolve_n_jobs(n_jobs: object) -> int:
    """Threads for a kernel, at most :func:`max_threads`.

    None means every usable core (see :func:`max_threads`), lowered by an
    active ``threadpoolctl`` limit (see :func:`threadpoolctl_limit`);
    ``k > 0`` means ``k`` threads, capped at the usable cores; ``-1`` all
    cores, ``-2`` all but one, and so on (scikit-learn's convention). Kernels
    still use one thread for inputs too small to gain from more.
    """
    cores = max_threads()
    if n_jobs is None:
        limit = threadpoolctl_limit()
        return cores if limit is None else max(1, min(cores, limit))
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (numbers.Integral, np.integer)):
        raise TypeError(f"n_jobs must be an int or None, got {type(n_jobs).__name__}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0 (None for every core, 1 for one thread, -1 for all cores)")
    return min(n_jobs, cores) if n_jobs > 0 else max(1, cores + 1 + n_jobs)


def check_bool(value: Any, name: str) -> bool:
    """A Python or numpy bool (not an int: ``average=1`` is more likely a slip)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


def check_binary(arr: np.ndarray, name: str) -> None:
    """Raise unless every entry of a numeric array is 0 or 1 (bool arrays always pass)."""
    raise_if_nonbinary(first_nonbinary_entry(arr), name, arr.shape)


# The first entry other than 0 and 1: (flat index, its value, how many in all); None when all are 0 or 1.
Nonbinary = tuple[int, Any, int] | None


def first_nonbinary_entry(arr: np.ndarray) -> Nonbinary:
    """The :data:`Nonbinary` fact of an in-memory array (quick for bool and integer arrays of 0 and 1)."""
    kind = arr.dtype.kind
    if kind == "b" or arr.size == 0:
        return None
    if kind == "u":
        if arr.max() <= 1:
            return None
    elif kind == "i":
        if arr.min() >= 0 and arr.max() <= 1:
            return None
    count, first, value = binary_report(arr)
    return (first, value, count) if count else None


def raise_if_nonbinary(fact: Nonbinary, name: str, shape: tuple[int, ...]) -> None:
    """Raise the error of :func:`check_binary` from a :data:`Nonbinary` fact, however it was found."""
    if fact is not None:
        raise not_binary_error(name, shape, *fact)


def binary_report(arr: np.ndarray) -> tuple[int, int, Any]:
    """(count, first flat index, its value) of the entries of an array (or block) other than 0 and 1."""
    if arr.dtype.kind == "b" or arr.size == 0:
        return 0, -1, None
    bad = ~((arr == 0) | (arr == 1)).ravel()
    count = int(np.count_nonzero(bad))
    if not count:
        return 0, -1, None
    first = int(np.argmax(bad))
    return count, first, arr.ravel()[first].item()


def entry_index(shape: tuple[int, ...], flat: int) -> int | tuple[int, ...]:
    """The index of a flat position as errors show it: an int for 1-D, a tuple otherwise."""
    index = np.unravel_index(flat, shape)
    return int(index[0]) if len(shape) == 1 else tuple(int(i) for i in index)


def not_binary_error(name: str, shape: tuple[int, ...], flat: int, value: Any, count: int) -> ValueError:
    """The error for entries other than 0 and 1 (flat index into the whole array of ``shape``)."""
    index = entry_index(shape, flat)
    return ValueError(f"{name} must hold only 0 and 1, found {value!r} at index {index} ({count} such entries)")


def _is_missing(value: object) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # pandas' NA and NaT
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return isinstance(value, (np.datetime64, np.timedelta64)) and bool(np.isnat(value))


def check_no_missing_labels(labels: np.ndarray, name: str) -> None:
    """Refuse missing group labels (None, NaN, NaT, pandas' NA), saying how many there are."""
    if labels.dtype.kind == "f":
        missing = np.isnan(labels)
    elif labels.dtype.kind in "mM":
        missing = np.isnat(labels)
    elif labels.dtype.kind == "O":
        missing = np.fromiter((_is_missing(v) for v in labels.ravel()), dtype=bool, count=labels.size)
    else:
        return
    if missing.any():
        raise ValueError(f"{name} has {int(missing.sum())} missing labels; filter those rows out first")


def sortable(values: np.ndarray) -> np.ndarray:
    """A 1-D array the kernels read (a real dtype in native byte order) with the order of ``values``."""
    values = np.ravel(values)
    kind = values.dtype.kind
    if kind in "biuf" and values.dtype.itemsize <= 8 and values.dtype != np.float16:
        return values if values.dtype.isnative else values.astype(values.dtype.newbyteorder("="))
    if values.dtype == np.float16:
        return values.astype(np.float32)
    if kind in "mM":  # datetimes and timedeltas order as their integers
        return values.view(np.int64)
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)  # dense ranks keep the order


def check_exact_integers(dtype: Any, max_abs: Any, name: str) -> None:
    """float64 for the kernel; integers beyond 2**53 would merge distinct values, so they are refused."""
    if np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize == 8 and max_abs > 2**53:
        raise ValueError(f"{name} has integers beyond 2**53 that float64 cannot hold exactly")


def as_exact_float64(arr: np.ndarray, name: str) -> npt.NDArray[np.float64]:
    """float64 for the kernel; integers beyond 2**53 would merge distinct values, so they are refused."""
    if arr.size and arr.dtype.kind in "iu" and arr.dtype.itemsize == 8:
        check_exact_integers(arr.dtype, max(abs(int(arr.max())), abs(int(arr.min()))), name)
    return arr.astype(np.float64, copy=False)
