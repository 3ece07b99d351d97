"""Reference energy and MMD statistics: the full matrix of pair values, then plain means.

Same definitions as :func:`pairmetrics.energy_distance`, :func:`pairmetrics.mmd`
and their tests, computed in float64 from ``scipy.spatial.distance.cdist``
(O(N^2) memory: small inputs only).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import distance

__all__ = ["pair_values", "energy_distance", "mmd", "energy_statistic", "mmd_statistic", "median_gamma"]


def pair_values(a, b, metric="euclidean", kernel="identity", gamma=1.0):
    """The matrix of ``f(t(a_i, b_j))``: ``t`` the metric's distance, ``f`` the identity or the MMD kernel."""
    t = distance.cdist(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), metric=metric)
    if kernel == "rbf":
        return np.exp(-gamma * t * t)
    if kernel == "laplacian":
        return np.exp(-gamma * t)
    return t


def _mean_within(v, estimator, diagonal):
    n = v.shape[0]
    if estimator == "u-statistic":
        return (v.sum() - n * diagonal) / (n * (n - 1))
    return v.mean()


def _discrepancy(x, y, metric, kernel, gamma, estimator):
    diagonal = 0.0 if kernel == "identity" else 1.0
    xx = _mean_within(pair_values(x, x, metric, kernel, gamma), estimator, diagonal)
    yy = _mean_within(pair_values(y, y, metric, kernel, gamma), estimator, diagonal)
    xy = pair_values(x, y, metric, kernel, gamma).mean()
    return xx + yy - 2.0 * xy


def energy_distance(x, y, metric="euclidean", estimator="v-statistic"):
    """``2 mean d(x, y) - mean d(x, x') - mean d(y, y')``."""
    return -_discrepancy(x, y, metric, "identity", 1.0, estimator)


def mmd(x, y, kernel="rbf", gamma=1.0, metric="euclidean", estimator="v-statistic"):
    """``mean k(x, x') + mean k(y, y') - 2 mean k(x, y)``."""
    return _discrepancy(x, y, metric, kernel, gamma, estimator)


def energy_statistic(pooled, first, metric="euclidean", estimator="v-statistic"):
    """The energy test statistic ``n m / (n + m) * energy_distance`` of the split given by a boolean mask."""
    first = np.asarray(first, dtype=bool)
    n, m = int(first.sum()), int((~first).sum())
    return n * m / (n + m) * energy_distance(pooled[first], pooled[~first], metric, estimator)


def mmd_statistic(pooled, first, kernel="rbf", gamma=1.0, metric="euclidean", estimator="v-statistic"):
    """The squared MMD of the split given by a boolean mask."""
    first = np.asarray(first, dtype=bool)
    return mmd(pooled[first], pooled[~first], kernel, gamma, metric, estimator)


def median_gamma(pooled, kernel="rbf", metric="euclidean", max_points=1000):
    """The median heuristic over the pairs of at most ``max_points`` evenly spaced rows."""
    n = len(pooled)
    rows = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(np.intp))
    t = distance.pdist(np.asarray(pooled, dtype=np.float64)[rows], metric=metric)
    sigma = float(np.median(t)) if t.size else 0.0
    if not sigma > 0:
        if not np.any(t > 0):
            return 1.0
        sigma = float(np.median(t[t > 0]))
    return 1.0 / (2.0 * sigma * sigma) if kernel == "rbf" else 1.0 / sigma
