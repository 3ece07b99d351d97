"""Rosenbaum's (2005) cross-match test on top of the exact blossom matching."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from ._distances import (
    check_distance_matrix,
    check_metric,
    check_metric_kwargs,
    pairwise_distances,
)
from ._matching import (
    DEFAULT_N_NEIGHBORS,
    MatchingResult,
    MatchingSource,
    solve_dense,
    solve_points_metric,
)
from ._metric_transforms import (
    DEFAULT_MAX_MATRIX_BYTES,
    SampleFacts,
    check_matrix_size,
    check_max_matrix_bytes,
    check_sample_facts,
    checked_sample,
    matching_equivalent,
    sample_facts,
    sample_matrix,
)
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, FloatArray, IntArray, Metric, NJobs, Seed
from ._validation import (
    as_vector,
    check_choice,
    check_finite,
    check_int,
    check_progress,
    check_rng,
    resolve_n_jobs,
)

# Largest pooled distance matrix crossmatch_resample precomputes (bytes).
_FULL_MATRIX_BYTES = 512 << 20
# Distance matrices of subsamples handed to the kernel at once (bytes).
_STACK_BYTES = 128 << 20
ALTERNATIVES = ("less", "greater", "two-sided")
# Largest N of the null distribution: its support and log-factorials are exact in int64 and float64 up to here.
_MAX_POINTS = 2**53

__all__ = [
    "CrossMatchResult",
    "CrossMatchNullDistribution",
    "CrossMatchResampleResult",
    "crossmatch_test",
    "crossmatch_null_distribution",
    "crossmatch_resample",
]
# What the Dask layer and the multi-sample cross-match may use besides __all__.
__seams__ = [
    "RESAMPLE",
    "ResampleFacts",
    "approx_pvalue",
    "check_test_options",
    "pool_dtype",
    "result_from_matching",
    "solve_in_random_order",
    "subsample_a1",
    "subsample_labels",
]


def _null_support(N: int, n: int) -> tuple[IntArray, IntArray, IntArray]:
    """a1 values with positive null probability and the matching a0, a2."""
    I = N // 2
    m = N - n
    a1 = np.arange(n % 2, min(n, m) + 1, 2, dtype=np.int64)
    a2 = (n - a1) // 2
    a0 = I - a1 - a2
    return a0, a1, a2


def _log_pmf(N: int, n: int, a0: IntArray, a1: IntArray, a2: IntArray) -> FloatArray:
    """log P(A1 = a1) = log(2^a1 I! / (C(N, n) a0! a1! a2!)), exact at any N."""
    from scipy.special import gammaln

    I = N // 2
    log_choose = gammaln(N + 1) - gammaln(n + 1) - gammaln(N - n + 1)
    return a1 * math.log(2.0) + gammaln(I + 1) - log_choose - gammaln(a0 + 1) - gammaln(a1 + 1) - gammaln(a2 + 1)


def _moments(N: int, n: int) -> tuple[float, float]:
    """Exact null mean and variance of A1 (the closed forms of the R package)."""
    m = N - n
    ea1 = n * m / (N - 1)
    denom = (N - 3) * (N - 1) ** 2
    va1 = 2.0 * n * (n - 1) * m * (m - 1) / denom if denom != 0 else 0.0
    return ea1, va1


def _pvalue(N: int, n: int, a1: int, alternative: str = "less") -> float:
    """Exact null p-value of a1, summed in log space.

    ``less``: P(A1 <= a1) (few cross-matches: the samples differ);
    ``greater``: P(A1 >= a1); ``two-sided``: the total probability of the
    values no more likely than a1 (as scipy's ``binomtest``).
    """
    from scipy.special import logsumexp

    a0, s1, a2 = _null_support(N, n)
    logp = _log_pmf(N, n, a0, s1, a2)
    if alternative == "less":
        keep = s1 <= a1
    elif alternative == "greater":
        keep = s1 >= a1
    else:
        here = logp[s1 == a1]
        keep = logp <= (here[0] if here.size else -np.inf) + 1e-7
    if not keep.any():
        return 0.0
    # Normalise by the total (= 1 mathematically) to cancel rounding.
    return float(min(1.0, math.exp(logsumexp(logp[keep]) - logsumexp(logp))))


def approx_pvalue(dev: Any, alternative: str) -> Any:
    """Normal approximation of the p-value from the standardised a1."""
    from scipy.special import ndtr

    dev = np.asarray(dev, dtype=np.float64)
    if alternative == "less":
        out = ndtr(dev)
    elif alternative == "greater":
        out = ndtr(-dev)
    else:
        out = np.minimum(1.0, 2 * ndtr(-np.abs(dev)))
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class CrossMatchNullDistribution(Result):
    """Exact null distribution of the cross-match count A1 (like R's ``crossmatchdist``).

    Attributes ``a0``, ``a1``, ``a2`` (pairs within group 0, across, within
    group 1), ``pmf`` = P(A1 = a1) and ``cdf`` = P(A1 <= a1), over the values
    of a1 with positive probability, in increasing order.
    """

    N: int
    n: int
    a0: IntArray
    a1: IntArray
    a2: IntArray
    pmf: FloatArray
    cdf: FloatArray

    @property
    def mean(self) -> float:
        return float((self.a1 * self.pmf).sum())

    @property
    def var(self) -> float:
        mu = self.mean
        return float((((self.a1 - mu) ** 2) * self.pmf).sum())


@routed
def crossmatch_null_distribution(N: int, n: int) -> CrossMatchNullDistribution:
    """Exact null distribution of the number of cross-matched pairs A1.

    Under the null, the optimal matching is fixed and the n labels of group 1
    are spread at random over the N points, so
    ``P(A1 = a1) = 2^a1 (N/2)! / (C(N, n) a0! a1! a2!)`` with
    ``a1 + 2 a2 = n`` and ``a1 + 2 a0 = N - n``. Computed in log space, so
    any N works (R's ``crossmatchdist`` overflows beyond N of about 340).

    Parameters
    ----------
    N : int
        Total number of points, even and >= 2.
    n : int
        Size of group 1, ``0 <= n <= N``.

    Returns
    -------
    CrossMatchNullDistribution
        ``a0, a1, a2, pmf, cdf`` over the support, with ``mean`` and ``var``.
    """
    from scipy.special import logsumexp

    N = check_int(N, "N", low=2, high=_MAX_POINTS)
    n = check_int(n, "n", low=0, high=_MAX_POINTS)
    if N % 2:
        raise ValueError(f"N must be even (the matched points), got {N}")
    if n > N:
        raise ValueError(f"n must be <= N, got n = {n} and N = {N}")
    a0, a1, a2 = _null_support(N, n)
    logp = _log_pmf(N, n, a0, a1, a2)
    pmf = np.exp(logp - logsumexp(logp))
    return CrossMatchNullDistribution(N=N, n=n, a0=a0, a1=a1, a2=a2, pmf=pmf, cdf=np.minimum(np.cumsum(pmf), 1.0))


@dataclasses.dataclass(frozen=True, eq=False)
class CrossMatchResult(Result):
    """Result of :func:`crossmatch_test` (R's names of its fields: :meth:`to_r`).

    Attributes
    ----------
    statistic : int
        Number of matched pairs with one point from each sample (R's ``a1``).
    pvalue : float
        Exact p-value for ``alternative``: ``P(A1 <= statistic)`` for
        ``'less'`` (few cross-matches: the samples differ).
    expected, variance : float
        Exact null mean and variance of the statistic.
    zscore : float
        ``(statistic - expected) / sqrt(variance)``.
    approx_pvalue : float
        Normal approximation of the p-value (``Phi(zscore)`` for ``'less'``).
    within_x, within_y : int
        Matched pairs within sample x (group 0) and within sample y (group 1).
    n_points, n_y : int
        Points matched (even: one point is dropped when the total is odd)
        and how many of them are from y.
    alternative : str
        Side of ``pvalue`` and ``approx_pvalue``.
    order : ndarray of int64
        The random order the matching solved the stacked rows (x, then y)
        in: its i-th point was row ``order[i]``. Ties among optimal
        matchings are broken by this order, drawn from ``rng`` independently
        of the labels (see Notes of :func:`crossmatch_test`). A property:
        results that differ only in it compare equal.
    matching : MatchingResult
        The optimal matching, numbered by the stacked rows
        (``matching.verify()`` proves it optimal).
    """

    statistic: int
    pvalue: float
    expected: float
    variance: float
    zscore: float
    approx_pvalue: float
    within_x: int
    within_y: int
    n_points: int
    n_y: int
    alternative: str
    matching: MatchingResult = dataclasses.field(repr=False, compare=False)
    if TYPE_CHECKING:  # attributes to type checkers; at run time InitVars (see Result): not compared
        _order: IntArray | None = None
    else:
        _order: dataclasses.InitVar[IntArray | None] = None

    @property
    def order(self) -> IntArray:
        """The random order the solver saw the rows in (see the class's Attributes)."""
        assert self._order is not None  # always given by the functions that build results
        return self._order

    _unpack = ("statistic", "pvalue")

    def to_r(self) -> dict[str, float]:
        """The fields under the names of R's ``crossmatch::crossmatchtest``: ``a1, Ea1, Va1, dev, pval,
        approxpval``."""
        return {
            "a1": self.statistic,
            "Ea1": self.expected,
            "Va1": self.variance,
            "dev": self.zscore,
            "pval": self.pvalue,
            "approxpval": self.approx_pvalue,
        }


def _stats_from_mate(z: np.ndarray, mate: np.ndarray) -> tuple[int, int, int]:
    i = np.flatnonzero(mate > np.arange(mate.shape[0]))
    zi, zj = z[i], z[mate[i]]
    a1 = int((zi != zj).sum())
    a2 = int(((zi == 1) & (zj == 1)).sum())
    a0 = int(((zi == 0) & (zj == 0)).sum())
    return a0, a1, a2


def _statistics(a0: int, a1: int, a2: int, alternative: str = "less") -> dict[str, Any]:
    N = 2 * (a0 + a1 + a2)
    n = a1 + 2 * a2
    ea1, va1 = _moments(N, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = float(np.float64(a1 - ea1) / np.sqrt(np.float64(va1)))
    return dict(
        statistic=a1,
        pvalue=_pvalue(N, n, a1, alternative),
        expected=ea1,
        variance=va1,
        zscore=dev,
        approx_pvalue=float(approx_pvalue(dev, alternative)),
        within_x=a0,
        within_y=a2,
        n_points=N,
        n_y=n,
        alternative=alternative,
    )


def result_from_matching(
    z: np.ndarray, matching: MatchingResult, alternative: str, order: IntArray
) -> CrossMatchResult:
    """The test's result for 0/1 labels ``z`` of the points of ``matching`` (the dropped point's label unused)."""
    a0, a1, a2 = _stats_from_mate(z, matching.mate)
    return CrossMatchResult(**_statistics(a0, a1, a2, alternative), matching=matching, _order=order)


def _check_labels(z: Any, name: str = "labels") -> np.ndarray:
    z = as_vector(z, name, min_length=2)
    if z.dtype.kind == "f":
        check_finite(z, name)
    if not np.isin(z, (0, 1)).all():
        raise ValueError(f"{name} must contain only 0 and 1 (group labels)")
    z = z.astype(np.int8)
    if z.min() == z.max():
        raise ValueError(f"{name} must contain both groups (0 and 1), got only {int(z[0])}")
    return z


def in_input_order(solved: MatchingResult, order: IntArray, source: MatchingSource | None) -> MatchingResult:
    """The matching of rows solved in the order ``order`` (solved point i is input row ``order[i]``), renumbered
    to the input rows; ``source`` (the input rows' data) is what ``verify()`` reads."""
    n = solved.mate.shape[0]
    order = np.asarray(order, dtype=np.int64)
    mate = np.full(n, -1, dtype=np.int64)
    matched = solved.mate >= 0
    mate[order[matched]] = order[solved.mate[matched]]
    i = np.flatnonzero(mate > np.arange(n))
    vertex = np.concatenate([order, np.arange(n, solved.y.shape[0])])  # the ghost keeps its index N
    y = np.empty_like(solved.y)
    y[vertex] = solved.y
    parent = solved.blossom_parent.copy()
    parent[vertex] = solved.blossom_parent[: vertex.size]  # blossoms keep their numbers
    return dataclasses.replace(
        solved,
        mate=mate,
        pairs=np.column_stack([i, mate[i]]).astype(np.int64),
        dropped=None if solved.dropped is None else int(order[solved.dropped]),
        y=y,
        blossom_parent=parent,
        _source=source,
        _timings=solved._timings,
    )


def solve_in_random_order(
    X: np.ndarray,
    metric: Metric,
    metric_kwargs: dict[str, Any],
    gen: np.random.Generator,
    *,
    n_neighbors: int,
    n_jobs: NJobs,
    progress: bool,
    max_matrix_bytes: int,
) -> tuple[MatchingResult, IntArray]:
    """The exact matching of the rows of X solved in a random order from ``gen``, numbered by X's rows, and the order.

    Among several optimal matchings (tied points, tied distances) the solver's choice depends on the order of
    the rows. Rows arrive grouped by sample, so that choice would depend on the labels and pair copies of a
    point inside one sample; solved in an order drawn independently of the labels, the matching is a function
    of exchangeable points only, and the permutation null of the test is exact.
    """
    order = gen.permutation(X.shape[0]).astype(np.int64)
    solved = solve_points_metric(
        X[order],
        metric,
        metric_kwargs,
        n_neighbors=n_neighbors,
        n_jobs=n_jobs,
        progress=progress,
        max_matrix_bytes=max_matrix_bytes,
    )
    return in_input_order(solved, order, MatchingSource("points", X, metric, metric_kwargs, strong=True)), order


def _test_distances(
    labels: Any, D: Any, alternative: str, gen: np.random.Generator, n_neighbors: int, n_jobs: NJobs, progress: bool
) -> CrossMatchResult:
    """The test from 0/1 labels and a distance matrix (the call form of R's ``crossmatchtest(z, D)``)."""
    z = _check_labels(labels, "labels")
    source = MatchingSource("D", D)
    D = check_distance_matrix(D, "D")
    if D.shape[0] != z.shape[0]:
        raise ValueError(
            f"labels and D must describe the same points: len(labels) = {z.shape[0]} but D is "
            f"{D.shape[0]} x {D.shape[1]}"
        )
    order = gen.permutation(z.shape[0]).astype(np.int64)
    solved = solve_dense(
        np.ascontiguousarray(D[np.ix_(order, order)]), n_neighbors=n_neighbors, n_jobs=n_jobs, progress=progress
    )
    return result_from_matching(z, in_input_order(solved, order, source), alternative, order)


def _pool(x: Any, y: Any, metric: Metric) -> tuple[np.ndarray, int, int]:
    x = checked_sample(x, "x", metric)
    y = checked_sample(y, "y", metric)
    dtype = pool_dtype(x, y)
    X = np.concatenate([x.astype(dtype, copy=False), y.astype(dtype, copy=False)])
    return X, x.shape[0], y.shape[0]


def pool_dtype(x: Any, y: Any) -> np.dtype[Any]:
    """The dtype two samples (numpy or Dask, 2-D) are pooled in, once their dimensions agree."""
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must have the same dimensionality, got {x.shape[1]} and {y.shape[1]} columns")
    if x.dtype.kind == y.dtype.kind == "f":
        return np.result_type(x.dtype, y.dtype, np.float32)
    return np.dtype(np.float64)


def check_test_options(
    name: str,
    metric: Metric,
    metric_kwargs: dict[str, Any],
    alternative: str,
    n_neighbors: int,
    rng: Seed,
    n_jobs: NJobs,
    progress: bool,
    max_matrix_bytes: int,
) -> tuple[str, int, np.random.Generator, int]:
    """The options of a cross-match test (two samples or K groups), checked in one order: the alternative,
    ``n_neighbors``, the generator and ``max_matrix_bytes``."""
    check_metric(metric)
    check_metric_kwargs(metric, metric_kwargs, name)
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    n_neighbors = check_int(n_neighbors, "n_neighbors", low=1, high=2**31 - 1)
    gen = check_rng(rng)
    resolve_n_jobs(n_jobs)
    check_progress(progress)
    return alternative, n_neighbors, gen, check_max_matrix_bytes(max_matrix_bytes)


def _check_distances_call(x: Any, y: Any, D: Any, labels: Any, metric: Any, metric_kwargs: dict[str, Any]) -> None:
    """crossmatch_test's call form with a distance matrix: D= and labels=, without samples or a metric."""
    if x is not None or y is not None:
        raise TypeError("crossmatch_test() takes the samples x and y, or D= and labels=, not both")
    if D is None or labels is None:
        raise TypeError("crossmatch_test() needs both D= (the distances) and labels= (0 for x, 1 for y)")
    if metric != "euclidean" or metric_kwargs:
        raise TypeError("crossmatch_test() takes no metric for a precomputed distance matrix D")


@routed
def crossmatch_test(
    x: ArrayLike | None = None,
    y: ArrayLike | None = None,
    *,
    metric: Metric = "euclidean",
    alternative: str = "less",
    n_neighbors: int = DEFAULT_N_NEIGHBORS,
    rng: Seed = None,
    n_jobs: NJobs = None,
    progress: bool = False,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
    D: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    **metric_kwargs: Any,
) -> CrossMatchResult:
    """Rosenbaum's cross-match test of whether x and y come from one distribution.

    The pooled points are paired by an exact minimum-distance perfect
    matching; few pairs with one point from each sample is evidence that
    the distributions differ. The p-value is exact (Rosenbaum 2005).

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
        The two samples (1-D input is one feature). Leave them out to give
        ``D`` and ``labels`` instead.
    metric : str or callable
        Any ``scipy.spatial.distance.cdist`` metric, or ``"rank_mahalanobis"``
        for Rosenbaum's rank-based Mahalanobis distance (see
        :func:`pairmetrics.rank_mahalanobis`). Which metrics never form the
        N x N matrix, and which rows they refuse: see
        :func:`min_weight_perfect_matching`.
    alternative : {'less', 'greater', 'two-sided'}
        ``'less'`` (default, Rosenbaum's test): the samples differ, so fewer
        cross-matches than by chance, ``P(A1 <= a1)``. ``'greater'``: more
        cross-matches than by chance (e.g. paired or over-dispersed designs),
        ``P(A1 >= a1)``. ``'two-sided'``: the probability of every value no
        more likely than a1.
    n_neighbors : int
        Start graph size of the matching (speed only).
    rng : None, int, numpy.random.Generator, BitGenerator or SeedSequence
        Source of the random order in which the matching sees the points,
        which breaks ties between optimal matchings independently of the
        labels (see Notes). With continuous data the optimal matching is
        unique and the result does not depend on it; give a seed for
        reproducible results on tied data.
    n_jobs : int or None
        Threads for the matching; None means every usable core.
    progress : bool
        Show a progress bar (needs tqdm).
    max_matrix_bytes : int
        As in :func:`min_weight_perfect_matching` (by default N = 16384
        pooled points for a metric that needs the N x N matrix).
    D : array_like, shape (N, N), optional
        A precomputed distance matrix (symmetric, zero diagonal) of all the
        points, with ``labels``, instead of ``x`` and ``y``: the call form of
        R's ``crossmatchtest(z, D)``. The solver reads a copy of it in the
        random order (``8 * N**2`` more bytes for float64).
    labels : array_like of 0/1, shape (N,), optional
        With ``D``: the sample of each point (0 for x, 1 for y).
    **metric_kwargs
        ``p``, ``w``, ``V`` or ``VI`` for the cdist metrics that take them;
        any other keyword raises TypeError.

    Returns
    -------
    CrossMatchResult
        ``statistic`` (the cross-match count a1), ``pvalue``, the exact null
        ``expected`` and ``variance``, ``zscore``, ``approx_pvalue``; group 0
        is x and group 1 is y. ``to_r()`` gives R's names.

    Notes
    -----
    *Ties.* Tied points (counts, binary features, duplicates) and tied
    distances admit several optimal matchings. The test is exact when the
    matching does not depend on the labels, so the rows are handed to the
    solver in a random order drawn from ``rng`` (recorded in
    ``result.order``), never grouped by sample: were they, copies of a point
    would pair up inside one sample, and two samples from one discrete
    distribution would be called different.

    The exact p-value is computed at every N (R returns NA for N >= 340).
    For odd N the point matched to a ghost point at distance 0 is dropped
    (``n_points`` and ``n_y`` count the others), as in R.

    *Dask input:* gathered to the client, as for
    :func:`min_weight_perfect_matching`.

    Examples
    --------
    >>> import numpy as np, pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> res = pm.crossmatch_test(rng.normal(0, 1, (40, 3)), rng.normal(2, 1, (40, 3)), rng=0)
    >>> res.statistic < res.expected, bool(res.pvalue < 1e-6)
    (True, True)
    >>> sorted(res.to_r())
    ['Ea1', 'Va1', 'a1', 'approxpval', 'dev', 'pval']
    """
    options = (metric, metric_kwargs, alternative, n_neighbors, rng, n_jobs, progress, max_matrix_bytes)
    alternative, n_neighbors, gen, max_matrix_bytes = check_test_options("crossmatch_test", *options)
    if D is not None or labels is not None:
        _check_distances_call(x, y, D, labels, metric, metric_kwargs)
        return _test_distances(labels, D, alternative, gen, n_neighbors, n_jobs, progress)
    if x is None or y is None:
        raise TypeError("crossmatch_test() needs the samples x and y (or D= and labels=)")
    X, n, m = _pool(x, y, metric)
    if n + m < 2:
        raise ValueError("x and y together need at least 2 points (N >= 2)")
    z = np.repeat(np.array([0, 1], dtype=np.int8), [n, m])
    matching, order = solve_in_random_order(
        X,
        metric,
        metric_kwargs,
        gen,
        n_neighbors=n_neighbors,
        n_jobs=n_jobs,
        progress=progress,
        max_matrix_bytes=max_matrix_bytes,
    )
    return result_from_matching(z, matching, alternative, order)


@dataclasses.dataclass(frozen=True, eq=False)
class CrossMatchResampleResult(Result):
    """Repeated cross-match tests on subsamples (mean count and mean p-value).

    Attributes
    ----------
    statistic, pvalue : float
        Means of the cross-match count and of the p-value over the resamples.
    expected, variance : float
        Null mean and variance of the count for the subsample sizes.
    sample_size, n_resamples : int
        Points drawn from each sample, and the number of resamples.
    statistics, pvalues, approx_pvalues : ndarray
        One value per resample (p-values for the chosen ``alternative``).
    order : ndarray of int64
        The random order the matchings see each subsample's rows in (its
        ``sample_size`` rows from x, then its rows from y): position i holds
        row ``order[i]``. It breaks ties independently of the labels.
    """

    statistic: float
    pvalue: float
    expected: float
    variance: float
    sample_size: int
    n_resamples: int
    statistics: IntArray = dataclasses.field(repr=False)
    pvalues: FloatArray = dataclasses.field(repr=False)
    approx_pvalues: FloatArray = dataclasses.field(repr=False)
    if TYPE_CHECKING:  # attributes to type checkers; at run time InitVars (see Result): not compared
        _order: IntArray | None = None
    else:
        _order: dataclasses.InitVar[IntArray | None] = None

    @property
    def order(self) -> IntArray:
        """The random order the solver saw the rows in (see the class's Attributes)."""
        assert self._order is not None  # always given by the functions that build results
        return self._order

    _unpack = ("statistic", "pvalue")


def _pvalue_table(N: int, n: int, alternative: str) -> tuple[IntArray, FloatArray]:
    """Support of A1 and the p-value of each of its values, for one side."""
    null = crossmatch_null_distribution(N, n)
    pmf = null.pmf
    if alternative == "less":
        p = null.cdf
    elif alternative == "greater":
        p = np.minimum(np.cumsum(pmf[::-1])[::-1], 1.0)
    else:
        order = np.argsort(pmf, kind="stable")
        total = np.cumsum(pmf[order])
        upto = np.searchsorted(pmf[order], pmf * (1 + 1e-7), side="right")
        p = np.minimum(total[upto - 1], 1.0)
    return null.a1, p


@routed
def crossmatch_resample(
    x: ArrayLike,
    y: ArrayLike,
    *,
    sample_size: int = 200,
    n_resamples: int = 500,
    rng: Seed = None,
    n_jobs: NJobs = None,
    alternative: str = "less",
    metric: Metric = "euclidean",
    n_neighbors: int = DEFAULT_N_NEIGHBORS,
    progress: bool = False,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
    **metric_kwargs: Any,
) -> CrossMatchResampleResult:
    """Cross-match test on repeated random subsamples of x and y.

    Each resample draws ``sample_size`` points from x and ``sample_size``
    from y without replacement, runs the exact cross-match test and records
    its count and p-value; the result reports their means. Resamples are
    solved in C++ on ``n_jobs`` threads, each at its own integer scale; the
    draws come from one generator in order, so results do not depend on
    ``n_jobs``.

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
        The two samples (1-D input is one feature).
    sample_size : int
        Points drawn from each sample (at most ``min(len(x), len(y))``).
    n_resamples : int
        Number of subsamples.
    rng : None, int, numpy.random.Generator, BitGenerator or SeedSequence
        Source of the draws and of the order the matchings see the rows in
        (which breaks ties independently of the labels, as in
        :func:`crossmatch_test`).
    n_jobs : int or None
        Threads; None means every usable core, -1 all cores.
    alternative : {'less', 'greater', 'two-sided'}
        Side of each p-value (see :func:`crossmatch_test`).
    metric : str or callable
        As in :func:`crossmatch_test`. Metrics that estimate a scale from
        their data (``rank_mahalanobis``, ``mahalanobis``, ``seuclidean``)
        are computed on each subsample; others once on the pool when it fits
        in memory. ``"cosine"`` and ``"correlation"`` are computed as squared
        Euclidean distances of the unit (centred) rows.
    n_neighbors : int
        Start graph size of the matching (speed only).
    progress : bool
        Show a progress bar of the resamples (needs tqdm).
    max_matrix_bytes : int
        Largest distance matrix of one subsample (``8 * (2 *
        sample_size)**2`` bytes, every metric) and of the pool (otherwise
        the subsamples are computed one by one); default ``2**31``. A
        subsample above it raises ValueError.
    **metric_kwargs
        ``p``, ``w``, ``V`` or ``VI`` for the cdist metrics that take them.

    Returns
    -------
    CrossMatchResampleResult
        ``statistic`` and ``pvalue`` (the means) and the per-resample
        ``statistics``, ``pvalues``, ``approx_pvalues``.
    """
    threads = resolve_n_jobs(n_jobs)
    check_progress(progress)
    gen = check_rng(rng)
    x, y = sample_matrix(x, "x"), sample_matrix(y, "y")
    dtype = pool_dtype(x, y)
    facts = ResampleFacts((x.shape[0], y.shape[0]), (sample_facts(x, metric), sample_facts(y, metric)), x.shape[1])

    def count(plan: ResamplePlan) -> tuple[int, ...]:
        X = np.concatenate([x.astype(dtype, copy=False), y.astype(dtype, copy=False)])
        with progress_callback(progress, "cross-match resamples", unit="resamples") as cb:
            return tuple(_resample_a1(X, facts.sizes, plan, threads, cb).tolist())

    options = (metric, metric_kwargs, alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes)
    return RESAMPLE.run(count, facts, *options, gen)


def _resample_a1(X: np.ndarray, sizes: tuple[int, int], plan: ResamplePlan, threads: int, cb: Any) -> np.ndarray:
    """The cross-match count of every planned subsample of the pooled rows X, in memory."""
    (n, m), sample_size, n_resamples = sizes, plan.sample_size, plan.n_resamples
    X, metric, metric_kwargs = matching_equivalent(X, plan.metric, plan.metric_kwargs)
    N = 2 * sample_size
    z = subsample_labels(sample_size, plan.order)
    # Metrics that estimate a scale from the data they are given depend on
    # the subsample; every other metric can be computed once on the pool.
    per_subsample = metric in ("rank_mahalanobis", "mahalanobis", "seuclidean")
    pool_fits = (n + m) ** 2 * 8 <= min(_FULL_MATRIX_BYTES, plan.max_matrix_bytes)
    if not per_subsample and pool_fits and n_resamples * N * N >= (n + m) ** 2:
        # One pooled matrix, then every subsample is gathered and solved
        # in C++ (each at its own scale).
        full = np.ascontiguousarray(pairwise_distances(X, metric, **metric_kwargs), dtype=np.float64)
        draws = np.ascontiguousarray(plan.draws[:, plan.order])
        return _core._crossmatch_batch(full, draws, z, plan.n_neighbors, threads, cb)
    # Distance matrices of a chunk of subsamples, solved in C++.
    chunk = max(1, _STACK_BYTES // (N * N * 8))
    parts = []
    for lo in range(0, n_resamples, chunk):
        points = [X[d[plan.order]] for d in plan.draws[lo : lo + chunk]]
        parts.append(subsample_a1(points, z, metric, metric_kwargs, plan.n_neighbors, threads))
        if cb is not None:
            cb(min(n_resamples, lo + chunk), n_resamples)
    return np.concatenate(parts)


@dataclasses.dataclass(frozen=True, eq=False)
class ResampleFacts:
    """The sizes of the two samples and each one's SampleFacts."""

    sizes: tuple[int, int]
    samples: tuple[SampleFacts, SampleFacts]
    d: int


@dataclasses.dataclass(frozen=True, eq=False)
class ResamplePlan(LayerEqual):
    """The checked options and the drawn subsamples (rows in the pool, the solving order)."""

    metric: Metric
    metric_kwargs: dict[str, Any]
    alternative: str
    n_resamples: int
    sample_size: int
    n_neighbors: int
    max_matrix_bytes: int
    draws: np.ndarray
    order: IntArray


def _plan_resample(
    facts: ResampleFacts,
    metric: Metric,
    metric_kwargs: dict[str, Any] | None,
    alternative: str,
    n_resamples: int,
    sample_size: int,
    n_neighbors: int,
    max_matrix_bytes: int,
    gen: np.random.Generator,
) -> ResamplePlan:
    """Every value check of crossmatch_resample, in order, then the subsamples drawn from ``gen``."""
    metric_kwargs = metric_kwargs or {}
    alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes = resample_options(
        metric, metric_kwargs, alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes
    )
    for sample, name in zip(facts.samples, ("x", "y")):
        check_sample_facts(sample, name, metric, facts.d)
    draws, order = draw_subsamples(gen, *facts.sizes, sample_size, n_resamples)
    options = (alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes)
    return ResamplePlan(metric, metric_kwargs, *options, draws, order)


def _finish_resample(plan: ResamplePlan, a1: tuple[int, ...]) -> CrossMatchResampleResult:
    """The result of every subsample's cross-match count (a tuple of ints: exact on every layer)."""
    return resample_result(np.asarray(a1, dtype=np.int64), plan.sample_size, plan.alternative, plan.order)


RESAMPLE = Skeleton("crossmatch_resample", _plan_resample, _finish_resample)


def draw_subsamples(
    gen: np.random.Generator, n: int, m: int, sample_size: int, n_resamples: int
) -> tuple[np.ndarray, IntArray]:
    """The resamples' rows in the pool (x's n rows, then y's m; sorted within x and within y), and the order
    the matchings see each resample's rows in (drawn after them)."""
    if sample_size > min(n, m):
        raise ValueError(f"sample_size must be <= min(len(x), len(y)) = {min(n, m)}, got {sample_size}")
    # Sorted draws gather from the pooled matrix with far fewer cache misses.
    draws = np.stack(
        [
            np.concatenate(
                [
                    np.sort(gen.choice(n, sample_size, replace=False)),
                    n + np.sort(gen.choice(m, sample_size, replace=False)),
                ]
            )
            for _ in range(n_resamples)
        ]
    )
    return draws, gen.permutation(2 * sample_size).astype(np.int64)


def subsample_labels(sample_size: int, order: IntArray) -> np.ndarray:
    """0/1 labels of a resample's rows in the order the matchings see them."""
    return np.ascontiguousarray(np.repeat(np.array([0, 1], dtype=np.int8), [sample_size, sample_size])[order])


def subsample_a1(
    subsamples: Any, z: np.ndarray, metric: Metric, metric_kwargs: dict[str, Any], n_neighbors: int, threads: int
) -> np.ndarray:
    """Cross-match count of each subsample (rows in solving order, labels ``z``), by the C++ solver."""
    Ds = np.stack([pairwise_distances(points, metric, **metric_kwargs) for points in subsamples])
    return _core._crossmatch_stack(np.ascontiguousarray(Ds, dtype=np.float64), z, n_neighbors, threads, None)


def resample_result(a1: np.ndarray, sample_size: int, alternative: str, order: IntArray) -> CrossMatchResampleResult:
    """The CrossMatchResampleResult of the resamples' counts."""
    N = 2 * sample_size
    # The null law depends only on the sizes: p-values by table lookup.
    support, table = _pvalue_table(N, sample_size, alternative)
    pval = table[np.searchsorted(support, a1)]
    ea1, va1 = _moments(N, sample_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = approx_pvalue((a1 - ea1) / np.sqrt(va1), alternative)
    return CrossMatchResampleResult(
        statistic=float(a1.mean()),
        pvalue=float(pval.mean()),
        expected=ea1,
        variance=va1,
        sample_size=sample_size,
        n_resamples=int(a1.size),
        statistics=a1,
        pvalues=pval,
        approx_pvalues=approx,
        _order=order,
    )


def resample_options(
    metric: Metric,
    metric_kwargs: dict[str, Any],
    alternative: str,
    n_resamples: int,
    sample_size: int,
    n_neighbors: int,
    max_matrix_bytes: int,
) -> tuple[str, int, int, int, int]:
    """Checked options of :func:`crossmatch_resample` (in memory and on Dask)."""
    check_metric(metric)
    check_metric_kwargs(metric, metric_kwargs, "crossmatch_resample")
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    sample_size = check_int(sample_size, "sample_size", low=1)
    n_neighbors = check_int(n_neighbors, "n_neighbors", low=1, high=2**31 - 1)
    max_matrix_bytes = check_max_matrix_bytes(max_matrix_bytes)
    check_matrix_size(2 * sample_size, metric, max_matrix_bytes)  # every subsample's matrix
    return alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes
