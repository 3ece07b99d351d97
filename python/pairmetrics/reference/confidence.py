"""Reference DeLong variances of binary-label AUCs: the placement values of
DeLong, DeLong & Clarke-Pearson (1988), from every (positive, negative) pair.
"""

from __future__ import annotations

import math

__all__ = ["placements", "delong_covariance", "delong_interval"]


def _psi(x, y):
    return 1.0 if x > y else 0.5 if x == y else 0.0


def placements(scores, positive):
    """(auc, V10 per positive, V01 per negative)."""
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    v10 = [sum(_psi(x, y) for y in neg) / len(neg) for x in pos]
    v01 = [sum(_psi(x, y) for x in pos) / len(pos) for y in neg]
    return sum(v10) / len(v10), v10, v01


def _cov(a, b):
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / (len(a) - 1)


def delong_covariance(scores_a, scores_b, positive):
    """DeLong's (Var(A), Var(B), Cov(A, B)): S10 / m + S01 / n, ddof 1 within each class."""
    _, a10, a01 = placements(scores_a, positive)
    _, b10, b01 = placements(scores_b, positive)
    m, n = len(a10), len(a01)
    var_a = _cov(a10, a10) / m + _cov(a01, a01) / n
    var_b = _cov(b10, b10) / m + _cov(b01, b01) / n
    cov = _cov(a10, b10) / m + _cov(a01, b01) / n
    return var_a, var_b, cov


def delong_interval(estimate, variance, z, low=0.0, high=1.0):
    """estimate -+ z sqrt(variance), clipped to [low, high]."""
    half = z * math.sqrt(variance)
    return max(low, estimate - half), min(high, estimate + half)
