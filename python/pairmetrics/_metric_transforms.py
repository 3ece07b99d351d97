"""Metrics solved on transformed points, and the size limit of the metrics that need an N x N matrix.

On rows scaled to unit length, ``|u - v|^2 = 2 - 2 u.v``: the cosine distance
is half the squared Euclidean distance, and the correlation distance is the
cosine distance of the centred rows. So both go through the Euclidean point
path (no N x N matrix), with every distance-valued output multiplied by
``UNIT_SCALE`` (a power of two: exact).
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np

from ._distances import check_metric_rows
from ._typing import Metric
from ._validation import check_int

__all__: list[str] = []
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = ["DEFAULT_MAX_MATRIX_BYTES", "matching_equivalent"]

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
