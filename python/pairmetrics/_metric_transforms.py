"""Metrics solved on transformed points, the size limit of the metrics that need an N x N matrix, and the
samples of points of the cross-match tests (their shape rules and the checks of their rows).

On rows scaled to unit length, ``|u - v|^2 = 2 - 2 u.v``: the cosine distance
is half the squared Euclidean distance, and the correlation distance is the
cosine distance of the centred rows. So both go through the Euclidean point
path (no N x N matrix), with every distance-valued output multiplied by
``UNIT_SCALE`` (a power of two: exact).
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np

from ._distances import check_metric_rows, check_row_report, undefined_rows
from ._typing import Metric
from ._validation import Nonfinite, as_matrix, check_int, first_nonfinite_entry, raise_if_nonfinite

__all__: list[str] = []
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = ["DEFAULT_MAX_MATRIX_BYTES", "matching_equivalent", "sample_facts"]

# metric name -> whether its rows are centred before they are scaled to unit length
_TRANSFORMS = {"cosine": False, "correlation": True}
# Cosine (or correlation) distance per squared Euclidean distance of the unit rows.
UNIT_SCALE = 0.5
# Default of the public ``max_matrix_bytes`` keyword: a float64 N x N matrix of 2 GiB (N = 16384).
DEFAULT_MAX_MATRIX_BYTES = 2**31


def is_transformed(metric: object, metric_kwargs: dict[str, Any]) -> TypeGuard[str]:
    """True when ``metric`` is solved as squared Euclidean distances of transformed rows."""
    return isinstance(metric, str) and metric in _TRANSFORMS and not metric_kwargs


def unit_rows(X: Any, metric: str, name: str = "points") -> np.ndarray:
    """The rows of X (centred for correlation) scaled to unit length, as float64.

    Rows for which the metric is undefined (all-zero for cosine, constant for
    correlation) are refused with a ValueError naming them.
    """
    X = np.asarray(X, dtype=np.float64)
    check_metric_rows(X, name, metric)
    X = _peak_scaled(X)
    if _TRANSFORMS[metric]:
        X = _peak_scaled(X - X.mean(axis=1, keepdims=True))
    X /= np.sqrt(np.einsum("ij,ij->i", X, X))[:, None]
    return X


def matching_equivalent(
    X: Any, metric: Metric, metric_kwargs: dict[str, Any], name: str = "points"
) -> tuple[Any, Metric, dict[str, Any]]:
    """``(points, metric, metric_kwargs)`` with the same minimum-weight matchings as the input's.

    Cosine and correlation become squared Euclidean distances of unit rows
    (distances halved: the matching, hence a1, is unchanged); other metrics
    are returned as they are.
    """
    if not is_transformed(metric, metric_kwargs):
        return X, metric, metric_kwargs
    return unit_rows(X, metric, name), "sqeuclidean", {}


def _peak_scaled(X: np.ndarray) -> np.ndarray:
    """Each (nonzero) row divided by a power of two near its largest magnitude: exact, and
    neither its mean nor its squared norm can overflow or underflow."""
    peak = np.max(np.abs(X), axis=1, keepdims=True)
    return np.ldexp(X, -np.frexp(peak)[1])


def check_max_matrix_bytes(value: object) -> int:
    """The validated ``max_matrix_bytes`` keyword."""
    return check_int(value, "max_matrix_bytes", low=0)


def check_matrix_size(n: int, metric: Metric, max_matrix_bytes: int) -> None:
    """Refuse an N x N float64 distance matrix larger than ``max_matrix_bytes``."""
    need = 8 * n * n
    if need > max_matrix_bytes:
        name = getattr(metric, "__name__", "callable") if callable(metric) else repr(metric)
        raise ValueError(
            f"metric {name} needs an N x N distance matrix: N = {n} points take {need} bytes "
            f"({need / 2**30:.3g} GiB), above max_matrix_bytes={max_matrix_bytes}; pass "
            f"max_matrix_bytes={need} (or more) to allow it, or use a metric solved without a matrix "
            "('euclidean', 'sqeuclidean', 'cosine' or 'correlation' without metric keywords)"
        )


# --------------------------------------------------------------------------- samples of points


# A sample's facts: its first non-finite entry, and for a metric solved on transformed rows the rows it is
# undefined for and the largest magnitude (see _distances.check_row_report).
SampleFacts = tuple[Nonfinite, np.ndarray, float]


def sample_matrix(x: Any, name: str) -> np.ndarray:
    """A sample as 2-D rows (1-D input is one feature): the structural rules only."""
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except ValueError as exc:  # ragged lists
            raise ValueError(f"{name} must be a rectangular table of numbers (rows of one length): {exc}") from None
    if getattr(x, "ndim", None) == 1:
        x = x[:, None]
    return as_matrix(x, name, min_rows=1)


def sample_facts(x: np.ndarray, metric: Metric) -> SampleFacts:
    """The SampleFacts of an in-memory sample (or row block: undefined rows are then local)."""
    nonfinite = first_nonfinite_entry(x)
    if nonfinite is not None or not is_transformed(metric, {}):
        return nonfinite, np.empty(0, np.intp), 0.0
    rows = x.astype(np.float64, copy=False)  # the dtype distances are computed in
    big = float(np.max(np.abs(rows))) if rows.size and metric != "cosine" else 0.0
    return None, undefined_rows(rows, metric), big


def check_sample_facts(facts: SampleFacts, name: str, metric: Metric, d: int) -> None:
    """The checks of one sample: finite, and defined for a metric solved on transformed rows."""
    raise_if_nonfinite(facts[0], name)
    if is_transformed(metric, {}):
        check_row_report(name, metric, np.float64, d, facts[1], facts[2])


def checked_sample(x: Any, name: str, metric: Metric) -> np.ndarray:
    """A sample as finite 2-D rows (1-D input is one feature), refused where the metric is undefined."""
    x = sample_matrix(x, name)
    check_sample_facts(sample_facts(x, metric), name, metric, x.shape[1])
    return x
