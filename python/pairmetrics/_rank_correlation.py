"""Rank correlations with SciPy's signatures and numbers, from exact pair counts.

``kendalltau``, ``somersd``, ``weightedtau`` and ``spearmanr`` of :mod:`scipy.stats`, computed from the
compiled counts (``_core.kendall_counts``, ``spearman_sums``, ``weighted_tau``, ``paired_moments``) in
O(n log n) without a contingency table. SciPy's own ``axis``/``nan_policy``/``keepdims`` machinery wraps the
one-dimensional computations (imported on first call: ``import pairmetrics`` loads no SciPy), so that
shapes, NaN handling, warnings and result objects are SciPy's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _core
from ._pairs import MOMENT_GROUPS, pair_totals
from ._routing import routed
from ._typing import ArrayLike
from ._validation import resolve_n_jobs, sortable

_WRAPPED: dict[str, Callable[..., Any]] = {}


def normal_pvalue(z: Any, alternative: str) -> Any:
    """p-value of a standard normal statistic, as SciPy's tests compute it."""
    from scipy import special

    if alternative == "less":
        return special.ndtr(z)
    if alternative == "greater":
        return special.ndtr(-z)
    if alternative == "two-sided":
        return 2 * special.ndtr(-np.abs(z))
    raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")


def _significance(statistic: Any, pvalue: Any) -> Any:
    from scipy.stats._stats_py import SignificanceResult

    result = SignificanceResult(statistic, pvalue)
    result.correlation = statistic
    return result


def _nan_result(*arrays: np.ndarray) -> Any:
    from scipy.stats._stats_py import _get_nan

    nan = _get_nan(*arrays)
    return _significance(nan, nan)


def kendall_exact_pvalue(n: int, concordant: int, alternative: str) -> float:
    """Exact p-value of Kendall's tau without ties (n values, ``concordant`` pairs), as SciPy defines it."""
    total = n * (n - 1) // 2
    in_right_tail = concordant >= total - concordant
    c = min(concordant, total - concordant)
    if n <= 0:
        raise ValueError(f"n ({n}) must be positive")
    if n <= 2:
        prob, mass = 1.0, 1.0 if n == 1 else 0.5
    elif c == 0:
        prob = 2.0 / math.factorial(n) if n < 171 else 0.0
        mass = prob / 2
    elif c == 1:
        prob = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
        mass = (n - 1) / math.factorial(n) if n < 171 else 0.0
    elif 4 * c == n * (n - 1) and alternative == "two-sided":
        prob, mass = 1.0, 0.0
    else:
        pmf = _core.kendall_null_pmf(n, c)
        prob, mass = 2.0 * float(pmf.sum()), float(pmf[-1])
    if alternative != "two-sided":
        prob = prob / 2 if in_right_tail == (alternative == "greater") else 1 - prob / 2 + mass
    return float(np.clip(prob, 0, 1))


def _kendalltau_1d(
    x: Any,
    y: Any,
    *,
    nan_policy: str = "propagate",
    method: str = "auto",
    variant: str = "b",
    alternative: str = "two-sided",
) -> Any:
    x = np.asarray(x).ravel()
    y = np.asarray(y).ravel()
    if x.size != y.size:
        raise ValueError("Array shapes are incompatible for broadcasting.")
    if not x.size:
        return _nan_result(x, y)
    size = x.size
    counts = _core.kendall_counts(sortable(x), sortable(y), resolve_n_jobs(None))
    discordant, joint, x_ties, y_ties = (counts[k] for k in ("discordant", "joint_pairs", "x_ties", "y_ties"))
    x_distinct, xtie, x0, x1 = (x_ties[k] for k in ("distinct", "pairs", "cubic", "spread"))
    y_distinct, ytie, y0, y1 = (y_ties[k] for k in ("distinct", "pairs", "cubic", "spread"))
    tot = size * (size - 1) // 2
    if xtie == tot or ytie == tot:  # SciPy has replaced x and y by integer ranks here: a float64 NaN
        return _nan_result(np.empty(0, dtype=np.intp))
    con_minus_dis = tot - xtie - ytie + joint - 2 * discordant
    if variant == "b":
        tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    elif variant == "c":
        minclasses = min(x_distinct, y_distinct)
        tau = np.float64(2 * con_minus_dis / (size**2 * (minclasses - 1) / minclasses))
    else:
        raise ValueError(f"Unknown variant of the method chosen: {variant}. variant must be 'b' or 'c'.")
    tau = np.minimum(1.0, max(-1.0, tau))
    if method == "exact" and (xtie != 0 or ytie != 0):
        raise ValueError("Ties found, exact method cannot be used.")
    if method == "auto":
        exact = xtie == 0 and ytie == 0 and (size <= 33 or min(discordant, tot - discordant) <= 1)
        method = "exact" if exact else "asymptotic"
    if xtie == 0 and ytie == 0 and method == "exact":
        pvalue = np.float64(kendall_exact_pvalue(size, tot - discordant, alternative))
    elif method == "asymptotic":
        m = size * (size - 1.0)
        var = (m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2))
        pvalue = normal_pvalue(con_minus_dis / np.sqrt(var), alternative)
    else:
        raise ValueError(f"Unknown method {method} specified.  Use 'auto', 'exact' or 'asymptotic'.")
    return _significance(tau[()], np.asarray(pvalue)[()])


def _weightedtau_n_samples(kwargs: dict[str, Any]) -> int:
    rank = kwargs.get("rank", False)
    return 2 if (isinstance(rank, bool) or rank is None) else 3


def _dense_int64(values: np.ndarray) -> np.ndarray:
    """Dense ranks from 1 with every NaN at 0 (SciPy's reduction of unsupported or NaN input)."""
    values = np.asarray(values)
    result = np.zeros(values.size, dtype=np.int64)
    nan = np.isnan(values) if values.dtype.kind in "fc" else np.zeros(values.size, dtype=bool)
    kept = ~nan
    if kept.any():
        ranks = _core.dense_ranks(sortable(values[kept]))["ranks"]
        result[kept] = ranks.astype(np.int64) + (1 if nan.any() else 0)
    return result


def _element_weights(ranks: np.ndarray, weigher: Callable[[Any], Any]) -> np.ndarray:
    unique, inverse = np.unique(ranks, return_inverse=True)
    return np.array([float(weigher(int(r))) for r in unique], dtype=np.float64)[inverse.reshape(-1)]


def _weighted_tau_directed(x: np.ndarray, y: np.ndarray, rank: Any, weigher: Any, additive: bool) -> float:
    if rank is not None:
        weights = 1.0 / (1.0 + rank.astype(np.float64)) if weigher is None else _element_weights(rank, weigher)
        return float(_core.weighted_tau(sortable(x), sortable(y), weights, None, bool(additive)))
    rank_weights = None
    if weigher is not None:
        rank_weights = np.array([float(weigher(r)) for r in range(x.size)], dtype=np.float64)
    return float(_core.weighted_tau(sortable(x), sortable(y), None, rank_weights, bool(additive)))


def _weightedtau_1d(x: Any, y: Any, rank: Any = True, weigher: Any = None, additive: bool = True) -> Any:
    x = np.asarray(x).ravel()
    y = np.asarray(y).ravel()
    from scipy.stats._stats_py import _get_nan

    nan = _get_nan(x, y)
    if x.size != y.size:
        raise ValueError("Array shapes are incompatible for broadcasting.")
    if not x.size:
        return _significance(nan, nan)
    if x.dtype.kind == "f" and np.isnan(np.sum(x)):
        x = _dense_int64(x)
    if y.dtype.kind == "f" and np.isnan(np.sum(y)):
        y = _dense_int64(y)
    if x.dtype != y.dtype:
        x = x if x.dtype == np.int64 else _dense_int64(x)
        y = y if y.dtype == np.int64 else _dense_int64(y)
    elif x.dtype not in (np.int32, np.int64, np.float32, np.float64):
        x, y = _dense_int64(x), _dense_int64(y)
    if rank is True:
        tau = (
            _weighted_tau_directed(x, y, None, weigher, additive)
            + _weighted_tau_directed(y, x, None, weigher, additive)
        ) / 2
        return _significance(np.float64(tau), nan)
    if rank is False:
        rank = np.arange(x.size, dtype=np.intp)
    elif rank is not None:
        rank = _dense_int64(np.asarray(rank).ravel()).astype(np.intp)
        if rank.size != x.size:
            raise ValueError(
                f"All inputs to `weightedtau` must be of the same size, found x-size {x.size} and rank-size {rank.size}"
            )
    tau = _weighted_tau_directed(x, y, rank, weigher, additive)
    return _significance(np.float64(tau), nan)


def _wrapped(name: str) -> Callable[..., Any]:
    """The one-dimensional computation ``name`` inside SciPy's axis/nan_policy/keepdims wrapper."""
    if name not in _WRAPPED:
        from scipy.stats._axis_nan_policy import _axis_nan_policy_factory
        from scipy.stats._stats_py import _pack_CorrelationResult, _unpack_CorrelationResult

        common = {"result_to_tuple": _unpack_CorrelationResult, "paired": True, "too_small": 1, "n_outputs": 3}
        if name == "kendalltau":
            factory = _axis_nan_policy_factory(_pack_CorrelationResult, default_axis=None, n_samples=2, **common)
            _WRAPPED[name] = factory(_kendalltau_1d)
        elif name == "weightedtau":
            factory = _axis_nan_policy_factory(
                _pack_CorrelationResult,
                default_axis=None,
                n_samples=_weightedtau_n_samples,
                override={"nan_propagation": False},
                **common,
            )
            _WRAPPED[name] = factory(_weightedtau_1d)
    return _WRAPPED[name]


@routed
def kendalltau(
    x: ArrayLike,
    y: ArrayLike,
    *,
    nan_policy: str = "propagate",
    method: str = "auto",
    variant: str = "b",
    alternative: str = "two-sided",
    axis: int | None = None,
    keepdims: bool = False,
) -> Any:
    """Kendall's tau (variant b or c) and its p-value: :func:`scipy.stats.kendalltau` in O(n log n).

    The same parameters, result (``statistic``, ``pvalue``, ``correlation``) and numbers as SciPy's. The pair
    counts are exact integers (merge-sort inversions with the tie counts of x, y and both); the asymptotic
    p-value's variance uses exact sums over the groups of ties, and the exact p-value (no ties) the null
    distribution of inversions in O(n c).

    Examples
    --------
    >>> from pairmetrics.scipy import kendalltau
    >>> res = kendalltau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0])
    >>> round(float(res.statistic), 6), round(float(res.pvalue), 6)
    (-0.471405, 0.282745)
    """
    return _wrapped("kendalltau")(
        x,
        y,
        nan_policy=nan_policy,
        method=method,
        variant=variant,
        alternative=alternative,
        axis=axis,
        keepdims=keepdims,
    )


@routed
def weightedtau(
    x: ArrayLike,
    y: ArrayLike,
    rank: Any = True,
    weigher: Callable[[int], float] | None = None,
    additive: bool = True,
    *,
    axis: int | None = None,
    nan_policy: str = "propagate",
    keepdims: bool = False,
) -> Any:
    """Vigna's weighted tau: :func:`scipy.stats.weightedtau` by a weighted merge sort in O(n log n).

    The same parameters and numbers as SciPy's (``pvalue`` is NaN, as there). The default hyperbolic
    weigher runs in compiled code; a Python ``weigher`` is called once per rank.

    Examples
    --------
    >>> from pairmetrics.scipy import weightedtau
    >>> round(float(weightedtau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]).statistic), 6)
    -0.566941
    """
    return _wrapped("weightedtau")(x, y, rank, weigher, additive, axis=axis, nan_policy=nan_policy, keepdims=keepdims)


def _rank_columns(data: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) of each column; NaN for a column holding NaN."""
    ranks = np.empty(data.shape, dtype=np.float64)
    for j in range(data.shape[1]):
        column = data[:, j]
        if column.dtype.kind in "fc" and np.isnan(column).any():
            ranks[:, j] = np.nan
            continue
        doubled = _core.average_ranks(sortable(column))["doubled_ranks"]
        ranks[:, j] = doubled / 2.0
    return ranks


def _spearman_pair(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho of two columns from the exact sums of their doubled average ranks."""
    n = x.size
    sums = _core.spearman_sums(sortable(x), sortable(y), resolve_n_jobs(None))
    total = n * (n + 1)  # sum of doubled ranks
    cube = 2 * n * (n + 1) * (2 * n + 1)

    def spread(ties: dict[str, int]) -> int:
        return n * ((cube - ties["cube_excess"]) // 3) - total * total  # n sum a^2 - (sum a)^2

    covariance = n * sums["cross"] - total * total
    rho = covariance / math.sqrt(spread(sums["x_ties"])) / math.sqrt(spread(sums["y_ties"]))
    return max(-1.0, min(1.0, rho))


@routed
def spearmanr(
    a: ArrayLike,
    b: ArrayLike | None = None,
    axis: int | None = 0,
    nan_policy: str = "propagate",
    alternative: str = "two-sided",
) -> Any:
    """Spearman's rho and its p-value: :func:`scipy.stats.spearmanr` with one rank pass per variable.

    The same parameters, results and warnings as SciPy's. For two variables the coefficient comes from exact
    integer sums of the doubled average ranks (radix-sorted, no ``rankdata``); for more, each variable is
    ranked once and correlated as SciPy does.

    Examples
    --------
    >>> from pairmetrics.scipy import spearmanr
    >>> res = spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    >>> round(float(res.statistic), 6), round(float(res.pvalue), 6)
    (0.820783, 0.088587)
    """
    import warnings

    from scipy import special, stats
    from scipy._lib._util import _contains_nan
    from scipy.stats import _mstats_basic

    if axis is not None and axis > 1:
        raise ValueError(
            "spearmanr only handles 1-D or 2-D arrays, "
            f"supplied axis argument {axis}, please use only "
            "values 0, 1 or None for axis"
        )
    data, axisout = (np.reshape(a, (-1,)), 0) if axis is None else (np.asarray(a), axis)
    data = np.reshape(data, (-1,)) if data.ndim == 0 else data
    if data.ndim > 2:
        raise ValueError("spearmanr only handles 1-D or 2-D arrays")
    if b is None:
        if data.ndim < 2:
            raise ValueError("`spearmanr` needs at least 2 variables to compare")
    else:
        other = np.reshape(b, (-1,)) if axis is None else np.asarray(b)
        other = np.reshape(other, (-1,)) if other.ndim == 0 else other
        data = np.column_stack((data, other)) if axisout == 0 else np.vstack((data, other))
    n_vars = data.shape[1 - axisout]
    n_obs = data.shape[axisout]
    if n_obs <= 1:
        return _significance(np.nan, np.nan)
    columns = data if axisout == 0 else data.T
    if (columns[:, 0][0] == columns[:, 0]).all() or (columns[:, 1][0] == columns[:, 1]).all():
        warnings.warn(
            stats.ConstantInputWarning("An input array is constant; the correlation coefficient is not defined."),
            stacklevel=2,
        )
        return _significance(np.nan, np.nan)
    variable_has_nan = np.zeros(n_vars, dtype=bool)
    if _contains_nan(data, nan_policy):
        if nan_policy == "omit":
            return _mstats_basic.spearmanr(data, axis=axis, nan_policy=nan_policy, alternative=alternative)
        if data.ndim == 1 or n_vars <= 2:
            return _significance(np.nan, np.nan)
        variable_has_nan = np.isnan(data).any(axis=axisout)
    if n_vars == 2:
        rs = np.array([[1.0, _spearman_pair(columns[:, 0], columns[:, 1])], [0.0, 1.0]])
        rs[1, 0] = rs[0, 1]
    else:
        rs = np.corrcoef(_rank_columns(columns), rowvar=False)
    dof = n_obs - 2
    with np.errstate(divide="ignore"):
        t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    if alternative == "less":
        prob = special.stdtr(dof, t)
    elif alternative == "greater":
        prob = special.stdtr(dof, -t)
    elif alternative == "two-sided":
        prob = 2 * special.stdtr(dof, -np.abs(t))
    else:
        raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")
    if rs.shape == (2, 2):
        return _significance(rs[1, 0], prob[1, 0])
    rs[variable_has_nan, :] = np.nan
    rs[:, variable_has_nan] = np.nan
    result = _significance(rs[()], prob[()])
    result.correlation = rs
    return result


class SomersDResult:
    """:func:`somersd`'s result: SciPy's fields; ``table`` is built on first access (it may be huge)."""

    def __init__(self, statistic: Any, pvalue: Any, table: Any = None, make_table: Callable[[], Any] | None = None):
        self.statistic = statistic
        self.pvalue = pvalue
        self.correlation = statistic
        self._table = table
        self._make_table = make_table

    @property
    def table(self) -> Any:
        if self._table is None and self._make_table is not None:
            self._table = self._make_table()
        return self._table

    def __repr__(self) -> str:
        return f"SomersDResult(statistic={self.statistic!r}, pvalue={self.pvalue!r}, table={self.table!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SomersDResult):
            return NotImplemented
        return (self.statistic, self.pvalue) == (other.statistic, other.pvalue) and np.array_equal(
            self.table, other.table
        )

    __hash__ = None  # type: ignore[assignment]


def _somers_from_table(table: np.ndarray) -> tuple[float, float, float]:
    """(P - Q, N^2 - sum of squared row sums, S) of a contingency table (rows: x), by 2-D cumulative sums."""
    a = table.astype(float)
    c = np.zeros((a.shape[0] + 1, a.shape[1] + 1))
    c[1:, 1:] = a.cumsum(0).cumsum(1)
    total = c[-1, -1]
    rows, cols = np.meshgrid(np.arange(a.shape[0]), np.arange(a.shape[1]), indexing="ij")
    below_left = c[rows, cols]  # rows < i, columns < j
    above_right = total - c[rows + 1, -1] - c[-1, cols + 1] + c[rows + 1, cols + 1]
    below_right = c[rows, -1] - c[rows, cols + 1]
    above_left = c[-1, cols] - c[rows + 1, cols]
    concordant = below_left + above_right
    discordant = below_right + above_left
    p_minus_q = float((a * (concordant - discordant)).sum())
    denominator = total**2 - float((a.sum(axis=1) ** 2).sum())
    s = float((a * (concordant - discordant) ** 2).sum()) - p_minus_q**2 / total
    return p_minus_q, denominator, s


def _somers_from_samples(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """The numbers of _somers_from_table for the table of two samples, without building it: exact counts."""

    def ordered(values: np.ndarray) -> np.ndarray:
        if values.dtype.kind in "fc" and np.isnan(values).any():  # NaN is one category, above the rest
            return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)
        return sortable(values)

    x_ranks = _core.dense_ranks(ordered(x))["ranks"]
    # scores y, labels x: rankable pairs are those apart in x; q - r = concordant - discordant per sample
    moments = _core.paired_moments(ordered(y), x_ranks.astype(np.int64), 1.0, resolve_n_jobs(None))
    rankable, correct, _, incorrect = pair_totals(moments)
    n = x.size
    groups = [moments[g] for g in MOMENT_GROUPS]
    square_sum = sum(int(g["rr"]) - 2 * int(g["qr"]) + int(g["qq"]) for g in groups)
    p_minus_q = 2 * (int(correct) - int(incorrect))
    s = (n * square_sum - p_minus_q * p_minus_q) / n
    return float(p_minus_q), float(2 * int(rankable)), s


@routed
def somersd(x: ArrayLike, y: ArrayLike | None = None, alternative: str = "two-sided") -> SomersDResult:
    """Somers' D(Y|X) and its p-value: :func:`scipy.stats.somersd` without a contingency table for samples.

    The same parameters, fields (``statistic``, ``pvalue``, ``table``, ``correlation``) and numbers as
    SciPy's. From two samples, the counts and the variance come from exact per-sample concordance sums in
    O(n log n), so continuous data of millions of values work; ``table`` is built only when read.

    Examples
    --------
    >>> from pairmetrics.scipy import somersd
    >>> res = somersd([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6])
    >>> round(float(res.statistic), 6)
    0.733333
    """
    x_arr, y_arr = np.array(x), np.array(y)
    if x_arr.ndim == 1:
        if x_arr.size != y_arr.size:
            raise ValueError("Rankings must be of equal length.")
        y_arr = y_arr.reshape(-1)

        def make_table() -> Any:
            from scipy.stats.contingency import crosstab

            return crosstab(x_arr, y_arr)[1]

        rows = np.unique(x_arr).size
        cols = np.unique(y_arr).size
        if rows <= 1 or cols <= 1:
            return SomersDResult(np.nan, np.nan, make_table=make_table)
        p_minus_q, denominator, s = _somers_from_samples(x_arr, y_arr)
        table: Any = None
    elif x_arr.ndim == 2:
        if np.any(x_arr < 0):
            raise ValueError("All elements of the contingency table must be non-negative.")
        if np.any(x_arr != x_arr.astype(int)):
            raise ValueError("All elements of the contingency table must be integer.")
        if x_arr.nonzero()[0].size < 2:
            raise ValueError("At least two elements of the contingency table must be nonzero.")
        table, make_table = x_arr, None  # type: ignore[assignment]
        if x_arr.shape[0] <= 1 or x_arr.shape[1] <= 1:
            return SomersDResult(np.nan, np.nan, table)
        p_minus_q, denominator, s = _somers_from_table(x_arr)
    else:
        raise ValueError("x must be either a 1D or 2D array")
    d = np.float64(p_minus_q / denominator)
    with np.errstate(divide="ignore"):
        z = np.float64(p_minus_q) / np.sqrt(np.float64(4 * s))
    pvalue = normal_pvalue(z, alternative)
    return SomersDResult(d, pvalue, table, make_table)
