"""Inference shared by the capabilities: confidence intervals (SciPy's result shape), normal intervals from a
variance, the chi-square test that k correlated estimates are equal, and adjusted p-values of a family."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ._result import Result
from ._routing import warn
from ._validation import check_real

__all__ = ["ConfidenceInterval", "ConfidenceIntervals"]

# Adjustments of a family of p-values (adjust_pvalues).
CORRECTIONS = ("holm-sidak", "benjamini-hochberg", "none")


@dataclasses.dataclass(frozen=True, eq=False)
class ConfidenceInterval(Result):
    """A confidence interval; unpacks as ``(low, high)`` like SciPy's.

    Attributes
    ----------
    low, high : float
        The bounds (NaN when the variance cannot be estimated).
    confidence_level : float
        The nominal coverage.
    """

    low: float
    high: float
    confidence_level: float
    _unpack = ("low", "high")


@dataclasses.dataclass(frozen=True, eq=False)
class ConfidenceIntervals(Result):
    """Confidence intervals of many estimates at once; unpacks as ``(low, high)``.

    Attributes
    ----------
    low, high : ndarray
        The bounds, one entry per estimate, in the shape of the estimates
        (NaN where the variance cannot be estimated).
    confidence_level : float
        The nominal coverage.
    """

    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    confidence_level: float
    _unpack = ("low", "high")


def normal_interval(
    estimate: float, variance: float, confidence_level: float, low: float, high: float
) -> ConfidenceInterval:
    """``estimate -+ z * sqrt(variance)`` clipped to [low, high]."""
    from scipy import stats  # loaded on first use: keeps `import pairmetrics` fast

    level = check_real(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    if not (math.isfinite(estimate) and math.isfinite(variance)):
        return ConfidenceInterval(math.nan, math.nan, level)
    half = float(stats.norm.ppf(0.5 + level / 2)) * math.sqrt(max(variance, 0.0))
    return ConfidenceInterval(max(low, estimate - half), min(high, estimate + half), level)


def normal_intervals(
    estimates: npt.ArrayLike, variances: npt.ArrayLike, confidence_level: float, low: float, high: float
) -> ConfidenceIntervals:
    """``estimate -+ z * sqrt(variance)`` clipped to [low, high], elementwise (NaN where either is not finite)."""
    from scipy import stats

    level = check_real(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    estimate = np.asarray(estimates, dtype=np.float64)
    variance = np.asarray(variances, dtype=np.float64)
    half = float(stats.norm.ppf(0.5 + level / 2)) * np.sqrt(np.maximum(variance, 0.0))
    defined = np.isfinite(estimate) & np.isfinite(variance)
    lower = np.where(defined, np.maximum(low, estimate - half), math.nan)
    upper = np.where(defined, np.minimum(high, estimate + half), math.nan)
    return ConfidenceIntervals(lower, upper, level)


def equality_test(estimates: npt.NDArray[np.float64], covariance: npt.NDArray[np.float64]) -> tuple[float, float, int]:
    """(chi-square statistic, p-value, df) of the hypothesis that k correlated estimates are equal:
    the k - 1 differences from the last, with a pseudo-inverse of their covariance (df = its rank).

    The answer does not depend on the order of the estimates. Differences that the covariance says are
    exact (outside its range: a model whose estimated variance is zero, such as a constant or a perfect
    ranking, differing from the others) make the test undefined: NaN, with a warning, rather than the
    certainty (statistic inf, p 0) that a variance estimate of zero would claim.
    """
    from scipy import stats

    k = estimates.shape[0]
    if k < 2 or not np.isfinite(covariance).all() or not np.isfinite(estimates).all():
        return math.nan, math.nan, 0
    contrast = np.hstack([np.eye(k - 1), -np.ones((k - 1, 1))])
    differences = contrast @ estimates
    spread = contrast @ covariance @ contrast.T
    scale = float(np.abs(spread).max())
    df = int(np.linalg.matrix_rank(spread, tol=scale * 1e-10)) if scale > 0 else 0
    inverse = np.linalg.pinv(spread, rcond=1e-10, hermitian=True) if scale > 0 else np.zeros_like(spread)
    outside = differences - spread @ (inverse @ differences)  # the part of the differences with no variance
    if np.abs(outside).max() > 1e-9 * max(float(np.abs(differences).max()), 1e-300):
        warn(
            "the estimates differ where their estimated variance is zero (a constant or perfect ranking, or a "
            "degenerate sample): the equality test is undefined (nan)",
            RuntimeWarning,
        )
        return math.nan, math.nan, df
    if df == 0:  # identical rankings: no evidence of a difference
        return 0.0, 1.0, 0
    statistic = float(differences @ inverse @ differences)
    return statistic, float(stats.chi2.sf(statistic, df)), df


def adjust_pvalues(pvalues: np.ndarray, correction: str) -> np.ndarray:
    """Family-wise (Holm-Sidak) or false-discovery (Benjamini-Hochberg) adjusted p-values."""
    p = np.asarray(pvalues, dtype=np.float64)
    if correction == "none" or p.size == 0:
        return p.copy()
    if correction == "benjamini-hochberg":
        from scipy.stats import false_discovery_control

        return np.asarray(false_discovery_control(p, method="bh"), dtype=np.float64)
    # Holm-Sidak step-down: the i-th smallest p-value is tested at the Sidak
    # level for m - i hypotheses; adjusted values are made monotone.
    order = np.argsort(p, kind="stable")
    m = p.size
    with np.errstate(divide="ignore"):  # p = 1 gives log1p(-1) = -inf, and an adjusted 1
        steps = -np.expm1((m - np.arange(m)) * np.log1p(-p[order]))
    adjusted = np.minimum(np.maximum.accumulate(steps), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def difference_test(difference: Any, spread: Any) -> tuple[Any, Any]:
    """(statistic, two-sided normal p-value) of a difference of AUCs whose variance is ``spread``
    (elementwise for groups). Without spread there is no evidence of a difference (statistic 0) when
    the AUCs are equal, and no test (NaN) when they differ; NaN stays NaN."""
    from scipy import stats  # loaded on first use: keeps `import pairmetrics` fast

    difference = np.asarray(difference, dtype=np.float64)
    spread = np.asarray(spread, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A difference with no estimated spread is not proven (see _inference.equality_test): nan.
        z = np.where(
            spread > 0, difference / np.sqrt(np.maximum(spread, 0.0)), np.where(difference == 0, 0.0, math.nan)
        )
    z = np.where(np.isnan(spread) | np.isnan(difference), math.nan, z)
    if np.any((spread <= 0) & (difference != 0)):
        warn(
            "the AUCs differ where their estimated variance is zero (a constant or perfect ranking): the test is "
            "undefined (nan)",
            RuntimeWarning,
        )
    return z, 2 * stats.norm.sf(np.abs(z))
