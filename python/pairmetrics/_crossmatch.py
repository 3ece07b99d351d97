"""Rosenbaum's (2005) cross-match test on top of the exact blossom matching."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from . import _core
from ._matching import (
    _DEFAULT_K,
    MatchingResult,
    _check_distance_matrix,
    _check_metric,
    _check_metric_kwargs,
    _pairwise_distances,
    _solve_dense,
    _solve_points_metric,
    _Source,
)
from ._metric_transforms import (
    DEFAULT_MAX_MATRIX_BYTES,
    check_matrix_size,
    check_max_matrix_bytes,
    is_transformed,
    matching_equivalent,
)
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._two_vs_two import check_metric_rows
from ._typing import ArrayLike, FloatArray, IntArray, Metric, NJobs, Seed
from ._validation import (
    as_matrix,
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

__all__ = [
    "CrossMatchResult",
    "CrossMatchNullDistribution",
    "CrossMatchResampleResult",
    "crossmatch_test",
    "crossmatchtest",
    "crossmatch_null_distribution",
    "crossmatch_resample",
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

    N = check_int(N, "N", low=2)
    n = check_int(n, "n", low=0)
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
    """Cross-match test result, with the fields of R's ``crossmatchtest``.

    Attributes
    ----------
    a1 : int
        Number of matched pairs with one point from each sample (the statistic).
    Ea1, Va1 : float
        Exact null mean and variance of a1.
    dev : float
        ``(a1 - Ea1) / sqrt(Va1)``.
    pval : float
        Exact p-value: ``P(A1 <= a1)`` (small a1 means the samples differ),
        or the other side with ``alternative=`` in :func:`crossmatch_test`.
    approxpval : float
        Normal approximation (``Phi(dev)`` for the default side).
    a0, a2 : int
        Pairs within sample 0 / sample 1.
    N, n : int
        Points used (N is even: one point is dropped when the total is odd)
        and how many of them are from sample 1.
    matching : MatchingResult
        The optimal matching (``matching.verify()`` proves it optimal).
    """

    a1: int
    Ea1: float
    Va1: float
    dev: float
    pval: float
    approxpval: float
    a0: int
    a2: int
    N: int
    n: int
    matching: MatchingResult = dataclasses.field(repr=False, compare=False)

    _unpack = ("statistic", "pvalue")

    @property
    def statistic(self) -> int:
        return self.a1

    @property
    def pvalue(self) -> float:
        return self.pval


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
    return dict(a1=a1, Ea1=ea1, Va1=va1, dev=dev, pval=_pvalue(N, n, a1, alternative),
                approxpval=float(approx_pvalue(dev, alternative)), a0=a0, a2=a2, N=N, n=n)  # fmt: skip


def result_from_matching(z: np.ndarray, matching: MatchingResult, alternative: str = "less") -> CrossMatchResult:
    """The test's result for 0/1 labels ``z`` of the points of ``matching`` (the dropped point's label unused)."""
    a0, a1, a2 = _stats_from_mate(z, matching.mate)
    return CrossMatchResult(**_statistics(a0, a1, a2, alternative), matching=matching)


def _check_labels(z: Any, name: str = "z") -> np.ndarray:
    z = as_vector(z, name, min_length=2)
    if z.dtype.kind == "f":
        check_finite(z, name)
    if not np.isin(z, (0, 1)).all():
        raise ValueError(f"{name} must contain only 0 and 1 (group labels)")
    z = z.astype(np.int8)
    if z.min() == z.max():
        raise ValueError(f"{name} must contain both groups (0 and 1), got only {int(z[0])}")
    return z


@routed
def crossmatchtest(
    z: ArrayLike, D: ArrayLike, *, k: int = _DEFAULT_K, n_jobs: NJobs = None, progress: bool = False
) -> CrossMatchResult:
    """Cross-match test from group labels and a distance matrix (R-compatible form).

    Parameters
    ----------
    z : array_like of 0/1, shape (N,)
        Group of each point.
    D : array_like, shape (N, N)
        Symmetric distances with a zero diagonal.
    k : int
        Start graph size of the matching (speed only, see
        :func:`min_weight_perfect_matching`).
    n_jobs : int or None
        Threads for the matching; None means every usable core.
    progress : bool
        Show a progress bar (needs tqdm).

    Returns
    -------
    CrossMatchResult
        ``a1, Ea1, Va1, dev, pval, approxpval`` as in R's crossmatch package,
        plus ``.statistic`` (a1) and ``.pvalue`` (pval).

    Notes
    -----
    The exact p-value is computed at every N (R returns NA for N >= 340).
    For odd N a ghost point at distance 0 is added and the point matched to
    it is dropped; N and n then refer to the remaining points, as in R.
    R's ``nonbimatch`` rounds scaled distances to integers, so with near-ties
    R and this exact matching may pick different optimal pairs.

    *Dask input:* the labels and distances are computed on the cluster and
    brought to the client as one array (this solver needs them in one process); above
    ``pairmetrics.dask.matching.MAX_GATHER_BYTES`` (256 MiB by default, all
    gathered arguments together) the call raises a ValueError instead.
    """
    z = _check_labels(z, "z")
    source = _Source("D", D)
    D = _check_distance_matrix(D, "D")
    if D.shape[0] != z.shape[0]:
        raise ValueError(
            f"z and D must describe the same points: len(z) = {z.shape[0]} but D is {D.shape[0]} x {D.shape[1]}"
        )
    k = check_int(k, "k", low=1, high=2**31 - 1)
    resolve_n_jobs(n_jobs)
    check_progress(progress)
    return result_from_matching(z, _solve_dense(D, k=k, n_jobs=n_jobs, progress=progress, source=source))


def _as_sample(x: Any, name: str) -> np.ndarray:
    x = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if getattr(x, "ndim", None) == 1:
        x = x[:, None]
    x = as_matrix(x, name, min_rows=1)
    check_finite(x, name)
    return x


def checked_sample(x: Any, name: str, metric: Metric) -> np.ndarray:
    """A sample as finite 2-D rows (1-D input is one feature), refused where the metric is undefined."""
    x = _as_sample(x, name)
    if is_transformed(metric, {}):  # rows the metric is undefined for, named in their own sample
        check_metric_rows(x.astype(np.float64, copy=False), name, metric)  # the dtype distances are computed in
    return x


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


@routed
def crossmatch_test(x: ArrayLike, y: ArrayLike, *, metric: Metric = "euclidean", alternative: str = "less",
                    k: int = _DEFAULT_K, n_jobs: NJobs = None, progress: bool = False,
                    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
                    **metric_kwargs: Any) -> CrossMatchResult:  # fmt: skip
    """Rosenbaum's cross-match test of whether x and y come from one distribution.

    The pooled points are paired by an exact minimum-distance perfect
    matching; few pairs with one point from each sample (a1) is evidence that
    the distributions differ. The p-value is exact (Rosenbaum 2005).

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
        The two samples (1-D input is one feature).
    metric : str or callable
        Any ``scipy.spatial.distance.cdist`` metric, or ``"rank_mahalanobis"``
        for Rosenbaum's rank-based Mahalanobis distance (see
        :func:`pairmetrics.rank_mahalanobis`). ``"euclidean"``,
        ``"sqeuclidean"``, ``"cosine"`` and ``"correlation"`` (without metric
        keywords) never form the N x N matrix (see
        :func:`min_weight_perfect_matching`); cosine refuses all-zero rows
        and correlation constant rows. Every other metric builds it (``8 *
        N**2`` bytes), up to ``max_matrix_bytes``.
    alternative : {'less', 'greater', 'two-sided'}
        ``'less'`` (default, Rosenbaum's test): the samples differ, so fewer
        cross-matches than by chance, ``P(A1 <= a1)``. ``'greater'``: more
        cross-matches than by chance (e.g. paired or over-dispersed designs),
        ``P(A1 >= a1)``. ``'two-sided'``: the probability of every value no
        more likely than a1.
    k : int
        Start graph size of the matching (speed only).
    n_jobs : int or None
        Threads for the matching; None means every usable core.
    progress : bool
        Show a progress bar (needs tqdm).
    max_matrix_bytes : int
        Largest N x N distance matrix a metric that needs one may build
        (default ``2**31`` bytes: N = 16384 pooled points); a larger one
        raises ValueError saying how many bytes it would take.
    **metric_kwargs
        ``p``, ``w``, ``V`` or ``VI`` for the cdist metrics that take them;
        any other keyword raises TypeError.

    Returns
    -------
    CrossMatchResult
        See :func:`crossmatchtest`; group 0 is x and group 1 is y. ``pval``
        and ``approxpval`` are for ``alternative``.

    Notes
    -----
    *Dask input:* the samples are computed on the cluster and brought to the
    client as one array (this solver needs them in one process); above
    ``pairmetrics.dask.matching.MAX_GATHER_BYTES`` (256 MiB by default, all
    gathered arguments together) the call raises a ValueError instead.
    """
    _check_metric(metric)
    _check_metric_kwargs(metric, metric_kwargs, "crossmatch_test")
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    k = check_int(k, "k", low=1, high=2**31 - 1)
    resolve_n_jobs(n_jobs)
    check_progress(progress)
    max_matrix_bytes = check_max_matrix_bytes(max_matrix_bytes)
    X, n, m = _pool(x, y, metric)
    if n + m < 2:
        raise ValueError("x and y together need at least 2 points (N >= 2)")
    z = np.repeat(np.array([0, 1], dtype=np.int8), [n, m])
    matching = _solve_points_metric(X, metric, metric_kwargs, k=k, n_jobs=n_jobs, progress=progress,
                                    max_matrix_bytes=max_matrix_bytes)  # fmt: skip
    return result_from_matching(z, matching, alternative)


@dataclasses.dataclass(frozen=True, eq=False)
class CrossMatchResampleResult(Result):
    """Repeated cross-match tests on subsamples (mean a1 and mean p-value).

    Attributes
    ----------
    mean_a1, mean_pval : float
        Means of ``a1`` and ``pval`` over the resamples (also ``.statistic``
        and ``.pvalue``).
    Ea1, Va1 : float
        Null mean and variance of a1 for the subsample sizes.
    sample_size, n_repeats : int
        Points drawn from each sample, and the number of resamples (also
        ``.n_resamples``).
    a1, pval, approxpval : ndarray
        One value per resample (p-values for the chosen ``alternative``).
    """

    mean_a1: float
    mean_pval: float
    Ea1: float
    Va1: float
    sample_size: int
    n_repeats: int
    a1: IntArray = dataclasses.field(repr=False)
    pval: FloatArray = dataclasses.field(repr=False)
    approxpval: FloatArray = dataclasses.field(repr=False)

    _unpack = ("mean_a1", "mean_pval")

    @property
    def statistic(self) -> float:
        return self.mean_a1

    @property
    def pvalue(self) -> float:
        return self.mean_pval

    @property
    def n_resamples(self) -> int:
        return self.n_repeats


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
def crossmatch_resample(x: ArrayLike, y: ArrayLike, sample_size: int = 200, n_resamples: int = 500, rng: Seed = None,
                        n_jobs: NJobs = None, *, alternative: str = "less", metric: Metric = "euclidean",
                        k: int = _DEFAULT_K, progress: bool = False, n_repeats: int | None = None,
                        max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
                        **metric_kwargs: Any) -> CrossMatchResampleResult:  # fmt: skip
    """Cross-match test on repeated random subsamples of x and y.

    Each resample draws ``sample_size`` points from x and ``sample_size``
    from y without replacement, runs the exact cross-match test and records
    a1 and its p-value; the result reports their means. Resamples are solved
    in C++ on ``n_jobs`` threads, each at its own integer scale; the draws
    come from one generator in order, so results do not depend on
    ``n_jobs``.

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
        The two samples (1-D input is one feature).
    sample_size : int
        Points drawn from each sample (at most ``min(len(x), len(y))``).
    n_resamples : int
        Number of subsamples (``n_repeats`` is accepted as another name).
    rng : None, int, numpy.random.Generator, BitGenerator or SeedSequence
        Source of the draws.
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
    k : int
        Start graph size of the matching (speed only).
    progress : bool
        Show a progress bar (needs tqdm).
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
        ``mean_a1`` and ``mean_pval`` (also ``.statistic``, ``.pvalue``) and
        the per-resample ``a1``, ``pval``, ``approxpval``.
    """
    alternative, n_resamples, sample_size, k, max_matrix_bytes = resample_options(
        metric, metric_kwargs, alternative, n_resamples, n_repeats, sample_size, k, max_matrix_bytes
    )
    threads = resolve_n_jobs(n_jobs)
    check_progress(progress)
    gen = check_rng(rng)
    X, n, m = _pool(x, y, metric)
    draws = draw_subsamples(gen, n, m, sample_size, n_resamples)
    X, metric, metric_kwargs = matching_equivalent(X, metric, metric_kwargs)
    N = 2 * sample_size
    z = np.repeat(np.array([0, 1], dtype=np.int8), [sample_size, sample_size])
    # Metrics that estimate a scale from the data they are given depend on
    # the subsample; every other metric can be computed once on the pool.
    per_subsample = metric in ("rank_mahalanobis", "mahalanobis", "seuclidean")
    pool_fits = (n + m) ** 2 * 8 <= min(_FULL_MATRIX_BYTES, max_matrix_bytes)
    with progress_callback(progress, "cross-match resamples") as cb:
        if not per_subsample and pool_fits and n_resamples * N * N >= (n + m) ** 2:
            # One pooled matrix, then every subsample is gathered and solved
            # in C++ (each at its own scale).
            full = np.ascontiguousarray(_pairwise_distances(X, metric, **metric_kwargs), dtype=np.float64)
            a1 = _core._crossmatch_batch(full, draws, z, k, threads, cb)
        else:
            # Distance matrices of a chunk of subsamples, solved in C++.
            chunk = max(1, _STACK_BYTES // (N * N * 8))
            parts = []
            for lo in range(0, n_resamples, chunk):
                parts.append(subsample_a1([X[d] for d in draws[lo : lo + chunk]], metric, metric_kwargs, k, threads))
                if cb is not None:
                    cb(min(n_resamples, lo + chunk), n_resamples)
            a1 = np.concatenate(parts)
    return resample_result(a1, sample_size, alternative)


def draw_subsamples(gen: np.random.Generator, n: int, m: int, sample_size: int, n_resamples: int) -> np.ndarray:
    """The resamples' rows in the pool (x's n rows, then y's m), sorted within x and within y."""
    if sample_size > min(n, m):
        raise ValueError(f"sample_size must be <= min(len(x), len(y)) = {min(n, m)}, got {sample_size}")
    # Sorted draws: the order of points does not matter to the test, and
    # sorted indices gather from the pooled matrix with far fewer cache misses.
    return np.stack([
        np.concatenate([np.sort(gen.choice(n, sample_size, replace=False)),
                        n + np.sort(gen.choice(m, sample_size, replace=False))])
        for _ in range(n_resamples)
    ])  # fmt: skip


def subsample_a1(subsamples: Any, metric: Metric, metric_kwargs: dict[str, Any], k: int, threads: int) -> np.ndarray:
    """a1 of each subsample (its first half from x, its second from y), by the C++ solver."""
    sample_size = subsamples[0].shape[0] // 2
    z = np.repeat(np.array([0, 1], dtype=np.int8), [sample_size, sample_size])
    Ds = np.stack([_pairwise_distances(points, metric, **metric_kwargs) for points in subsamples])
    return _core._crossmatch_stack(np.ascontiguousarray(Ds, dtype=np.float64), z, k, threads, None)


def resample_result(a1: np.ndarray, sample_size: int, alternative: str) -> CrossMatchResampleResult:
    """The CrossMatchResampleResult of the resamples' a1."""
    N = 2 * sample_size
    n_resamples = a1.size
    # The null law depends only on the sizes: p-values by table lookup.
    support, table = _pvalue_table(N, sample_size, alternative)
    pval = table[np.searchsorted(support, a1)]
    ea1, va1 = _moments(N, sample_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = approx_pvalue((a1 - ea1) / np.sqrt(va1), alternative)
    return CrossMatchResampleResult(
        mean_a1=float(a1.mean()),
        mean_pval=float(pval.mean()),
        Ea1=ea1,
        Va1=va1,
        sample_size=sample_size,
        n_repeats=n_resamples,
        a1=a1,
        pval=pval,
        approxpval=approx,
    )


def resample_options(
    metric: Metric,
    metric_kwargs: dict[str, Any],
    alternative: str,
    n_resamples: int,
    n_repeats: int | None,
    sample_size: int,
    k: int,
    max_matrix_bytes: int,
) -> tuple[str, int, int, int, int]:
    """Checked options of :func:`crossmatch_resample` (in memory and on Dask)."""
    _check_metric(metric)
    _check_metric_kwargs(metric, metric_kwargs, "crossmatch_resample")
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    if n_repeats is not None:
        if n_resamples != 500:
            raise TypeError("give n_resamples or n_repeats (another name of it), not both")
        n_resamples = check_int(n_repeats, "n_repeats", low=1)
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    sample_size = check_int(sample_size, "sample_size", low=1)
    k = check_int(k, "k", low=1, high=2**31 - 1)
    max_matrix_bytes = check_max_matrix_bytes(max_matrix_bytes)
    check_matrix_size(2 * sample_size, metric, max_matrix_bytes)  # every subsample's matrix
    return alternative, n_resamples, sample_size, k, max_matrix_bytes
