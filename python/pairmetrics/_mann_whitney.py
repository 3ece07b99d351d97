"""The Mann-Whitney U test with SciPy's signature and numbers, plus an exact test given the ties.

``U`` of the first sample comes from one pass over both samples sorted (``_core.mann_whitney_ranks``: the AUC
identity with midranks, exact integers), with the tie term of the normal approximation. The exact null
distribution without ties is a Gaussian binomial coefficient built in O(m u) (``mann_whitney_null_pmf``);
``method="exact-conditional"`` (not in SciPy) gives the exact permutation p-value given the observed ties.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from ._routing import routed
from ._skeleton import Skeleton
from ._typing import ArrayLike
from ._validation import resolve_n_jobs, sortable

__all__ = ["mannwhitneyu"]
# What the Dask layer may use besides __all__: the skeleton, its plan and counts, the option checks.
__seams__ = ["CONDITIONAL", "MANN_WHITNEY", "RankSums", "check_options"]

CONDITIONAL = "exact-conditional"
_WRAPPED: list[Callable[..., Any]] = []


def _validated(x: Any, y: Any, use_continuity: Any, alternative: Any, axis: Any, method: Any) -> tuple[Any, ...]:
    """SciPy's checks and conversions of mannwhitneyu's arguments, with its messages."""

    x, y = np.atleast_1d(x), np.atleast_1d(y)
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("`x` and `y` must not contain NaNs.")
    if x.size == 0 or y.size == 0:
        raise ValueError("`x` and `y` must be of nonzero size.")
    dtype = np.result_type(x, y)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    x, y = x.astype(dtype, copy=False), y.astype(dtype, copy=False)
    use_continuity, alternative, axis, method = check_options(use_continuity, alternative, axis, method)
    return x, y, use_continuity, alternative, axis, method


def check_options(use_continuity: Any, alternative: Any, axis: Any, method: Any) -> tuple[bool, str, int, Any]:
    """SciPy's checks of mannwhitneyu's options, with its messages."""
    from scipy import stats

    bools = {True, False}
    if use_continuity not in bools:
        raise ValueError(f"`use_continuity` must be one of {bools}.")
    alternatives = {"two-sided", "less", "greater"}
    alternative = alternative.lower()
    if alternative not in alternatives:
        raise ValueError(f"`alternative` must be one of {alternatives}.")
    if axis != int(axis):
        raise ValueError("`axis` must be an integer.")
    if not isinstance(method, stats.PermutationMethod):
        methods = {"asymptotic", "exact", "auto", CONDITIONAL}
        method = method.lower()
        if method not in methods:
            raise ValueError(f"`method` must be one of {methods}.")
    return use_continuity, alternative, int(axis), method


def exact_sf(u: int, m: int, n: int) -> float:
    """P(U >= u) under the null without ties, as SciPy's exact method evaluates it (mass at u included)."""
    complement = m * n - u
    if u < complement:  # the left tail holds u: 1 - P(U <= u) + P(U = u)
        pmf = _core.mann_whitney_null_pmf(m, n, u)
        return float(1.0 - pmf.sum() + pmf[-1])
    return float(_core.mann_whitney_null_pmf(m, n, complement).sum())


def conditional_pvalue(doubled_u: int, groups: np.ndarray, m: int, n: int, alternative: str) -> float:
    """Exact p-value given the ties: all splits of the pooled values into samples of m and n equally likely.

    ``greater`` is P(U >= u), ``less`` P(U <= u), ``two-sided`` twice the smaller of the two, at most 1.
    """
    # P(U_x <= u) with x first; P(U_x >= u) = P(U_y <= m n - u) with y first (same pooled groups)
    low = _core.mann_whitney_conditional_cdf(groups, m, doubled_u) if alternative != "greater" else 1.0
    high = _core.mann_whitney_conditional_cdf(groups, n, 2 * m * n - doubled_u) if alternative != "less" else 1.0
    if alternative == "less":
        return float(low)
    if alternative == "greater":
        return float(high)
    return float(min(1.0, 2 * min(low, high)))


@dataclass(frozen=True)
class MannWhitneyPlan:
    """The sample sizes and options of one test (``method`` as given: ``"auto"`` is resolved from the counts)."""

    m: int
    n: int
    use_continuity: bool
    alternative: str
    method: str

    @property
    def needs_groups(self) -> bool:
        return self.method == CONDITIONAL


@dataclass(frozen=True)
class RankSums:
    """2U of the first sample, the tie term sum(t**3 - t) over tied pooled values, the largest tie and, for the
    exact-conditional test, the tied groups' sizes in ascending order of value."""

    doubled_u: int
    tie_term: int
    max_tie: int
    groups: np.ndarray | None = None


def _plan(m: int, n: int, use_continuity: bool, alternative: str, method: str) -> MannWhitneyPlan:
    return MannWhitneyPlan(m, n, use_continuity, alternative, method)


def _finish(plan: MannWhitneyPlan, sums: RankSums) -> tuple[float, float]:
    """(U of the first sample, p-value), as SciPy computes them from U and the ties."""
    m, n, alternative, method = plan.m, plan.n, plan.alternative, plan.method
    u1 = sums.doubled_u / 2
    u2 = m * n - u1
    if method == "auto":
        method = "asymptotic" if (m > 8 and n > 8) or sums.max_tie > 1 else "exact"
    if method == CONDITIONAL:
        assert sums.groups is not None  # counted because plan.needs_groups
        return u1, conditional_pvalue(int(sums.doubled_u), sums.groups, m, n, alternative)
    u, factor = (u1, 1) if alternative == "greater" else (u2, 1) if alternative == "less" else (max(u1, u2), 2)
    if method == "exact":
        p = exact_sf(int(u), m, n)
    else:
        from scipy import special

        total = m + n
        s = np.sqrt(m * n / 12 * ((total + 1) - sums.tie_term / (total * (total - 1))))
        numerator = u - m * n / 2 - (0.5 if plan.use_continuity else 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = float(special.ndtr(-np.float64(numerator) / s))
    return u1, float(np.clip(p * factor, 0.0, 1.0))


MANN_WHITNEY = Skeleton("mannwhitneyu", _plan, _finish)


def _one_pvalue(
    x: np.ndarray, y: np.ndarray, use_continuity: bool, alternative: str, method: str
) -> tuple[float, float]:
    def count(plan: MannWhitneyPlan) -> RankSums:
        ranks = _core.mann_whitney_ranks(sortable(x), sortable(y), resolve_n_jobs(None), plan.needs_groups)
        groups = ranks["groups"] if plan.needs_groups else None
        return RankSums(int(ranks["doubled_u"]), int(ranks["tie_cube_excess"]), int(ranks["max_tie"]), groups)

    return MANN_WHITNEY.run(count, x.size, y.size, use_continuity, alternative, method)


def _mannwhitneyu_nd(
    x: Any, y: Any, use_continuity: bool = True, alternative: str = "two-sided", axis: int = 0, method: Any = "auto"
) -> Any:
    from scipy import stats
    from scipy.stats._mannwhitneyu import MannwhitneyuResult

    x, y, use_continuity, alternative, axis, method = _validated(x, y, use_continuity, alternative, axis, method)
    if isinstance(method, stats.PermutationMethod):

        def statistic(a: np.ndarray, b: np.ndarray, axis: int) -> Any:
            return mannwhitneyu(
                a, b, use_continuity=use_continuity, alternative=alternative, axis=axis, method="asymptotic"
            ).statistic

        res = stats.permutation_test((x, y), statistic, axis=axis, **method._asdict(), alternative=alternative)
        u1 = mannwhitneyu(x, y, use_continuity, alternative, axis, "asymptotic").statistic
        return MannwhitneyuResult(u1, np.clip(res.pvalue, 0.0, 1.0))
    shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])  # the wrapper moved `axis` last
    xb = np.broadcast_to(x, shape + x.shape[-1:])
    yb = np.broadcast_to(y, shape + y.shape[-1:])
    u1 = np.empty(shape, dtype=x.dtype)
    p = np.empty(shape, dtype=x.dtype)
    for index in np.ndindex(shape):
        u1[index], p[index] = _one_pvalue(xb[index], yb[index], use_continuity, alternative, method)
    return MannwhitneyuResult(u1[()], p[()])


@routed
def mannwhitneyu(
    x: ArrayLike,
    y: ArrayLike,
    use_continuity: bool = True,
    alternative: str = "two-sided",
    axis: int = 0,
    method: Any = "auto",
    *,
    nan_policy: str = "propagate",
    keepdims: bool = False,
) -> Any:
    """The Mann-Whitney U test: :func:`scipy.stats.mannwhitneyu` from one sorted pass, exact tests faster.

    The same parameters, result (``statistic``: U of ``x``; ``pvalue``) and numbers as SciPy's, and one
    more ``method``: ``"exact-conditional"``, the exact p-value of the permutation distribution given the
    ties (SciPy's ``"exact"`` ignores ties); its two-sided p-value is twice the smaller tail.

    1-D Dask arrays are counted on the cluster, never gathered (``"asymptotic"``, ``"exact"`` and ``"auto"``;
    see :mod:`pairmetrics.dask.mann_whitney`), with the same U and p-value.

    Examples
    --------
    >>> from pairmetrics.scipy import mannwhitneyu
    >>> res = mannwhitneyu([19, 22, 16, 29, 24], [20, 11, 17, 12], method="exact")
    >>> float(res.statistic), round(float(res.pvalue), 6)
    (17.0, 0.111111)
    """
    if not _WRAPPED:
        from scipy.stats._axis_nan_policy import _axis_nan_policy_factory
        from scipy.stats._mannwhitneyu import MannwhitneyuResult

        _WRAPPED.append(_axis_nan_policy_factory(MannwhitneyuResult, n_samples=2)(_mannwhitneyu_nd))
    return _WRAPPED[0](x, y, use_continuity, alternative, axis, method, nan_policy=nan_policy, keepdims=keepdims)
