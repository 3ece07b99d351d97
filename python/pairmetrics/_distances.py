"""Distance inputs of the matching and the cross-match test: metric names and keywords, distance matrices,
points scaled exactly, full distance matrices of a metric, and Rosenbaum's rank-based Mahalanobis distance."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._routing import routed
from ._typing import ArrayLike, FloatArray, Metric, NJobs
from ._validation import as_matrix, as_numeric_array, check_finite, resolve_n_jobs

__all__ = [
    "rank_mahalanobis",
    "CDIST_METRICS",
    "check_metric",
    "check_metric_kwargs",
    "check_distance_matrix",
    "prepare_points",
    "euclidean_matrix",
    "pairwise_distances",
    "check_metric_rows",
    "undefined_rows",
    "check_row_report",
]

# Coordinate spreads between these are used as given; beyond them points are scaled by a power of two.
_SAFE_MIN, _SAFE_MAX = 1e-120, 1e120


@routed
def rank_mahalanobis(X: ArrayLike) -> FloatArray:
    """Rosenbaum's rank-based Mahalanobis distances between the rows of X.

    Each column is replaced by its ranks (average ranks for ties), the
    covariance of the ranks is rescaled so that every column has the variance
    of untied ranks 1..n, and ``D[i, j] = (r_i - r_j)^T S^+ (r_i - r_j)`` with
    ``S^+`` the Moore-Penrose pseudo-inverse (singular values below
    ``sqrt(eps)`` times the largest are dropped). Like R's ``mahalanobis()``
    used in the crossmatch package this is the *squared* form. Constant
    columns carry no information and are ignored.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Points (rows), n >= 2, finite.

    Returns
    -------
    ndarray, shape (n, n)
        Symmetric, zero diagonal, >= 0.

    Notes
    -----
    *Dask input:* the points are computed on the cluster and brought to the
    client as one array (this solver needs them in one process); above
    ``pairmetrics.dask.matching.MAX_GATHER_BYTES`` (256 MiB by default, all
    gathered arguments together) the call raises a ValueError instead.
    """
    from scipy.stats import rankdata

    X = as_matrix(X, "X", min_rows=2)
    check_finite(X, "X")
    n = X.shape[0]
    R = rankdata(np.asarray(X, dtype=np.float64), axis=0, method="average")
    R = R[:, R.var(axis=0) > 0]
    if R.shape[1] == 0:
        return np.zeros((n, n))
    cv = np.atleast_2d(np.cov(R, rowvar=False))
    vuntied = np.var(np.arange(1, n + 1), ddof=1)
    rat = np.sqrt(vuntied / np.diag(cv))
    cv = rat[:, None] * cv * rat[None, :]
    u, s, vt = np.linalg.svd(cv)
    keep = s > np.sqrt(np.finfo(float).eps) * s[0]
    icov = (vt[keep].T / s[keep]) @ u[:, keep].T
    G = R @ icov @ R.T
    g = np.diag(G)
    D = g[:, None] + g[None, :] - G - G.T
    np.maximum(D, 0, out=D)
    np.fill_diagonal(D, 0)
    return (D + D.T) / 2


CDIST_METRICS = (
    "braycurtis",
    "canberra",
    "chebyshev",
    "cityblock",
    "correlation",
    "cosine",
    "dice",
    "euclidean",
    "hamming",
    "jaccard",
    "jensenshannon",
    "kulczynski1",
    "mahalanobis",
    "matching",
    "minkowski",
    "rogerstanimoto",
    "russellrao",
    "seuclidean",
    "sokalmichener",
    "sokalsneath",
    "sqeuclidean",
    "yule",
)


def check_metric(metric: object) -> None:
    if callable(metric):
        return
    if not isinstance(metric, str) or (metric not in CDIST_METRICS and metric != "rank_mahalanobis"):
        raise ValueError(
            f"metric must be a scipy.spatial.distance.cdist metric name, 'rank_mahalanobis' or a callable; got {metric!r}"
        )


# Keyword arguments scipy's cdist takes for its metrics (besides out=).
METRIC_KWARGS = {"p": ("minkowski",), "V": ("seuclidean",), "VI": ("mahalanobis",), "w": None}


def check_metric_kwargs(metric: Metric, kwargs: dict[str, Any], function: str) -> None:
    """An unknown keyword raises a short TypeError naming it (never forwarded blindly to cdist)."""
    for name in kwargs:
        allowed = METRIC_KWARGS.get(name, ())
        if (
            name not in METRIC_KWARGS
            or callable(metric)
            or metric == "rank_mahalanobis"
            or (allowed is not None and metric not in allowed)
        ):
            hint = f" (not a parameter of metric {metric!r})" if name in METRIC_KWARGS and not callable(metric) else ""
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}{hint}")


def prepare_points(X: np.ndarray, squared: bool) -> tuple[FloatArray, float, bool]:
    """Points as contiguous float64, scaled by a power of two when extreme; (X, unit, squared).

    The scaling is exact or refused, so distances of the copy times ``unit``
    are those of the caller's points.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    spread = coordinate_spread(X)
    unit = 1.0
    if spread > 0 and not (_SAFE_MIN <= spread <= _SAFE_MAX):
        e = math.frexp(spread)[1]
        Xs = np.ldexp(X, -e)  # a power of two: exact unless coordinates fall below 2**-1022
        if not np.array_equal(np.ldexp(Xs, e), X):
            raise ValueError(
                "points span too many orders of magnitude: with a coordinate spread of "
                f"{spread:.3g}, coordinates below {math.ldexp(1.0, e - 1022):.3g} in magnitude (other than 0) "
                "cannot be represented exactly"
            )
        X, unit = Xs, math.ldexp(1.0, e)
    if squared:
        unit = unit * unit
        if not math.isfinite(unit) or unit == 0:
            raise ValueError(
                "points are too large or too small for metric='sqeuclidean': squared distances leave float64"
            )
    return X, unit, squared


def coordinate_spread(X: np.ndarray) -> float:
    """Largest coordinate range of the rows of X; ValueError when a difference of coordinates overflows."""
    if not X.size:
        return 0.0
    low, high = X.min(axis=0), X.max(axis=0)
    with np.errstate(over="ignore"):
        spread = high - low
    if not np.isfinite(spread).all():
        raise ValueError(
            "points: coordinate differences overflow float64 (a column spans more than 1.8e308); "
            "distances between such points are not representable"
        )
    return float(spread.max())


def euclidean_matrix(X: Any, *, squared: bool = False, n_jobs: NJobs = 1) -> np.ndarray:
    """Euclidean distance matrix of the rows of X (BLAS tiles; near pairs from the differences)."""
    Xs, unit, squared = prepare_points(np.asarray(X, dtype=np.float64), squared)
    D = _core._euclidean_matrix(Xs, squared, resolve_n_jobs(n_jobs))
    if unit != 1.0:
        D *= unit
    return D


def pairwise_distances(X: Any, metric: Metric = "euclidean", **kwargs: Any) -> np.ndarray:
    """The full distance matrix of the rows of X for a cdist metric or 'rank_mahalanobis'."""
    check_metric(metric)
    X = as_matrix(X, "X", min_rows=1)
    check_finite(X, "X")
    if metric == "rank_mahalanobis":
        return rank_mahalanobis(X)
    if metric in ("euclidean", "sqeuclidean") and not kwargs:
        return euclidean_matrix(X, squared=metric == "sqeuclidean")
    from scipy.spatial.distance import cdist

    Xf = X if X.dtype.kind == "f" else X.astype(np.float64)
    n, d = Xf.shape
    D = np.empty((n, n))
    # Blocks of a few milliseconds each: cdist does not look at signals, and
    # Ctrl-C is taken between two blocks. Without V / VI, seuclidean and
    # mahalanobis estimate them from all rows given, so they take one block.
    rows = max(1, (1 << 22) // (n * max(d, 1)))
    if (metric == "seuclidean" and "V" not in kwargs) or (metric == "mahalanobis" and "VI" not in kwargs):
        rows = n
    for start in range(0, n, rows):
        cdist(Xf[start : start + rows], Xf, metric=metric, out=D[start : start + rows], **kwargs)
    if not np.isfinite(D).all():
        raise ValueError(f"metric {metric!r} gave non-finite distances for these points (e.g. zero vectors)")
    if (D < 0).any():
        raise ValueError(f"metric {metric!r} gave negative distances")
    np.fill_diagonal(D, 0)
    if not np.array_equal(D, D.T):  # the solver needs exact symmetry
        D = np.triu(D) + np.triu(D, 1).T
    return D


def check_distance_matrix(D: Any, name: str = "D") -> np.ndarray:
    D = as_numeric_array(D, name)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix, got shape {D.shape}")
    if D.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 points (N >= 2), got N = {D.shape[0]}")
    if D.dtype.kind in "biu" or D.dtype.itemsize > 8 or D.dtype == np.float16:
        D = D.astype(np.float64)
    check_finite(D, name)
    if (D < 0).any():
        raise ValueError(f"{name} must not contain negative distances")
    if (np.diagonal(D) != 0).any():
        raise ValueError(f"{name} must have a zero diagonal")
    big = float(D.max())
    if not np.array_equal(D, D.T):
        if np.abs(D - D.T).max() > 1e-12 * big:
            raise ValueError(f"{name} must be symmetric (|D - D.T| up to 1e-12 * max(D) is tolerated)")
        D = np.triu(D) + np.triu(D, 1).T  # the upper triangle defines each pair
    return D


def check_metric_rows(x: np.ndarray, name: str, metric: str) -> None:
    """Reject rows for which the metric is undefined, or values too large for it."""
    big = float(np.max(np.abs(x))) if x.size and metric != "cosine" else 0.0
    check_row_report(name, metric, x.dtype, x.shape[1], undefined_rows(x, metric), big)


def undefined_rows(x: np.ndarray, metric: str) -> np.ndarray:
    """Indices of the rows of a 2-D array (or row block) the metric is undefined for."""
    if metric == "cosine":
        return np.flatnonzero(~np.any(x != 0, axis=1))
    if metric == "correlation":
        return np.flatnonzero(np.all(x == x[:, :1], axis=1))
    return np.empty(0, np.intp)


def magnitude_limit(metric: str, dtype: npt.DTypeLike, d: int) -> float:
    """The largest |value| the metric takes in ``dtype`` with ``d`` features (inf: no limit)."""
    finfo = np.finfo(dtype)
    if metric == "cosine":
        return math.inf
    if metric == "correlation":
        return float(finfo.max) / (4.0 * d)
    # The kernel scales both sets by one power of two before squaring, so
    # no finite input overflows: only the differences must stay finite.
    return float(finfo.max) / 4.0


def check_row_report(name: str, metric: str, dtype: npt.DTypeLike, d: int, bad_rows: np.ndarray, big: float) -> None:
    """Raise for the rows a metric is undefined for (global indices) or values beyond its limit."""
    if bad_rows.size:
        what = {"cosine": ("all-zero", "a zero"), "correlation": ("constant", "a constant")}[metric]
        raise ValueError(
            f"{name} has {what[0]} rows {_row_list(bad_rows)}: the {metric} distance to {what[1]} vector is undefined"
        )
    limit = magnitude_limit(metric, dtype, d)
    if big > limit:
        raise ValueError(
            f"{name} has values up to {big:.3g}, too large for the {metric} metric in {np.dtype(dtype)} "
            f"(limit {limit:.3g}); rescale the data or pass float64"
        )


def _row_list(rows: np.ndarray, limit: int = 10) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    return f"[{shown}{', ...' if rows.size > limit else ''}] ({rows.size} in all)"
