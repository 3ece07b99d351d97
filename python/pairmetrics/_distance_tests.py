"""Two-sample tests from sums over all pairs: the energy distance and the maximum mean discrepancy (MMD).

Both statistics are linear in three block sums of a pairwise function ``v``
over the pooled sample (within the first, within the second, between), so
the compiled kernel never stores the ``N x N`` matrix: it sums ``v`` tile by
tile (one BLAS product per tile). A permutation relabels the pooled points;
its within-first sum is the quadratic form ``s^T V s`` of the indicator
vector ``s``, so ``P`` permutations cost one more product per tile against
the tile's rows of the ``N x P`` indicator matrix, not ``P`` passes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import _core
from ._metric_transforms import unit_rows
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._typing import ArrayLike, FloatArray, NJobs, Seed
from ._validation import (
    as_matrix,
    check_choice,
    check_finite,
    check_int,
    check_positive_finite,
    check_progress,
    check_rng,
    resolve_n_jobs,
)

__all__ = ["energy_distance", "energy_test", "mmd", "mmd_test", "EnergyTestResult", "MMDTestResult"]
# What other capability modules may use besides __all__: the names of the estimators and kernels (compare_groups).
__seams__ = ["ESTIMATORS", "KERNELS"]

METRICS = ("euclidean", "sqeuclidean", "cosine")
ESTIMATORS = ("v-statistic", "u-statistic")
KERNELS = ("rbf", "laplacian")
# Null statistics within this fraction of the statistic's scale (the mean
# pair value times the test's factor) of the observed one count as ties, so
# that rounding cannot turn an equal permutation into a smaller one.
_TIE_RTOL = 1e-9
# Pooled points whose pairwise distances set the median heuristic.
_MEDIAN_POINTS = 1000
# Permutations whose indicator vectors are generated (and later read) at once.
_LABEL_CHUNK = 16


@dataclasses.dataclass(frozen=True, eq=False)
class EnergyTestResult(Result):
    """Outcome of :func:`energy_test`; unpacks as ``(statistic, pvalue)``.

    Attributes
    ----------
    statistic : float
        ``n m / (n + m)`` times the energy distance (dcor's
        ``homogeneity.energy_test`` statistic).
    pvalue : float
        ``(1 + #{permutations with statistic >= observed}) / (1 + n_resamples)``.
    energy_distance : float
        The energy distance (see :func:`energy_distance`).
    null_distribution : ndarray of float, shape (n_resamples,)
        The statistic under each permutation of the pooled sample.
    n_resamples : int
        The number of permutations.
    metric, estimator : str
        The options used.
    """

    statistic: float
    pvalue: float
    energy_distance: float
    null_distribution: FloatArray = dataclasses.field(repr=False)
    n_resamples: int
    metric: str
    estimator: str

    _unpack = ("statistic", "pvalue")


@dataclasses.dataclass(frozen=True, eq=False)
class MMDTestResult(Result):
    """Outcome of :func:`mmd_test`; unpacks as ``(statistic, pvalue)``.

    Attributes
    ----------
    statistic : float
        The squared MMD (see :func:`mmd`).
    pvalue : float
        ``(1 + #{permutations with statistic >= observed}) / (1 + n_resamples)``.
    gamma : float
        The kernel's bandwidth parameter used (the median heuristic's value
        when none was given).
    null_distribution : ndarray of float, shape (n_resamples,)
        The statistic under each permutation of the pooled sample.
    n_resamples : int
        The number of permutations.
    kernel, metric, estimator : str
        The options used.
    """

    statistic: float
    pvalue: float
    gamma: float
    null_distribution: FloatArray = dataclasses.field(repr=False)
    n_resamples: int
    kernel: str
    metric: str
    estimator: str

    _unpack = ("statistic", "pvalue")


# ---------------------------------------------------------------------------
# plan: the pooled, prepared points and the pair function


@dataclasses.dataclass(frozen=True)
class PooledSamples:
    """Both samples stacked (first ``n_x`` rows: x), prepared for the kernel.

    The pair value is ``f(scale * |z_i - z_j|^(1 if root else 2))``; ``f`` is
    the identity for energy statistics and the MMD kernel otherwise.
    """

    z: np.ndarray
    n_x: int
    root: bool
    scale: float
    metric: str

    @property
    def n_y(self) -> int:
        return int(self.z.shape[0]) - self.n_x

    def distances(self, rows: np.ndarray) -> np.ndarray:
        """The metric's distances between the listed rows (square matrix, small inputs only)."""
        z = self.z[rows]
        norms = np.einsum("ij,ij->i", z, z)
        sq = np.maximum(norms[:, None] + norms[None, :] - 2.0 * (z @ z.T), 0.0)
        np.fill_diagonal(sq, 0.0)
        return self.scale * (np.sqrt(sq) if self.root else sq)


def pooled_samples(x: Any, y: Any, metric: str) -> PooledSamples:
    """Validate x and y and stack them as float64, centred (and scaled by a power of two, or unit rows)."""
    metric = check_choice(metric, "metric", METRICS)
    x = as_matrix(x, "x")
    y = as_matrix(y, "y")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must have the same number of columns, got {x.shape[1]} and {y.shape[1]}")
    check_finite(x, "x")
    check_finite(y, "y")
    if metric == "cosine":
        z = np.concatenate([unit_rows(x, metric, "x"), unit_rows(y, metric, "y")])
        shift, scale, root = 0, 0.5, False  # cosine distance = |u - v|^2 / 2 of unit rows
    else:
        z = np.concatenate([np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)])
        peak = float(np.max(np.abs(z)))
        _check_sums_fit(peak, metric, z.shape)
        # One power of two brings the largest |coordinate| into [1/2, 1): exact, and no square overflows.
        shift = int(np.frexp(peak)[1]) if peak > 0 else 0
        z = np.ldexp(z, -shift)
        root = metric == "euclidean"
        scale = math.ldexp(1.0, shift if root else 2 * shift)
    # Distances do not change under a shift; centring keeps the norms (and the expansion's rounding) small.
    z -= z.mean(axis=0)
    return PooledSamples(np.ascontiguousarray(z), int(x.shape[0]), root, scale, metric)


def _check_sums_fit(peak: float, metric: str, shape: tuple[int, ...]) -> None:
    """Refuse coordinates so large that a sum of N^2 pair distances could overflow float64."""
    largest = 2.0 * peak * math.sqrt(shape[1])  # the largest possible Euclidean distance
    if metric == "sqeuclidean":
        largest *= largest
    if largest * shape[0] * shape[0] > np.finfo(np.float64).max / 8:
        raise ValueError(
            f"x and y have values up to {peak:.3g}: sums of their {metric} distances overflow float64; rescale the data"
        )


def median_gamma(pooled: PooledSamples, kernel: str) -> float:
    """The median heuristic: ``1 / (2 sigma^2)`` (rbf) or ``1 / sigma`` (laplacian), sigma the median distance.

    sigma is the median over the pairs of at most 1000 pooled points (evenly
    spaced rows when there are more); the median of the nonzero distances when
    that is 0, and gamma is 1 when every distance is 0.
    """
    n = pooled.z.shape[0]
    rows = np.unique(np.linspace(0, n - 1, min(n, _MEDIAN_POINTS)).round().astype(np.intp))
    upper = pooled.distances(rows)[np.triu_indices(rows.size, 1)]
    sigma = float(np.median(upper)) if upper.size else 0.0
    if not sigma > 0:
        positive = upper[upper > 0]
        if not positive.size:
            return 1.0
        sigma = float(np.median(positive))
    return 1.0 / (2.0 * sigma * sigma) if kernel == "rbf" else 1.0 / sigma


# ---------------------------------------------------------------------------
# count: the compiled sums


def _pair_sums(
    pooled: PooledSamples,
    kernel: str,
    gamma: float,
    packed: np.ndarray | None,
    n_jobs: NJobs,
    progress: bool,
    what: str,
) -> dict[str, np.ndarray]:
    n_threads = resolve_n_jobs(n_jobs)
    with progress_callback(progress, what) as callback:
        sums: dict[str, np.ndarray] = _core._distance_sums(
            pooled.z,
            pooled.n_x,
            pooled.root,
            pooled.scale,
            kernel,
            gamma,
            packed,
            n_threads,
            progress=callback,
        )
    return sums


def permutation_indicators(rng: np.random.Generator, n_x: int, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """Indicator vectors of the first sample under uniformly random relabellings, as boolean row blocks."""
    base = np.zeros(n, dtype=bool)
    base[:n_x] = True
    for start in range(0, n_resamples, _LABEL_CHUNK):
        rows = min(_LABEL_CHUNK, n_resamples - start)
        yield rng.permuted(np.broadcast_to(base, (rows, n)), axis=1)


# ---------------------------------------------------------------------------
# finish: statistics from the block sums


def discrepancy(within_x: Any, between: Any, within_y: Any, n_x: int, n_y: int, estimator: str, diagonal: float) -> Any:
    """``mean(v_xx) + mean(v_yy) - 2 mean(v_xy)`` from block sums (scalars or arrays).

    The u-statistic leaves the ``n`` diagonal terms (each ``diagonal``) out of the within means.
    """
    if estimator == "u-statistic":
        mean_x = (within_x - n_x * diagonal) / (n_x * (n_x - 1.0))
        mean_y = (within_y - n_y * diagonal) / (n_y * (n_y - 1.0))
    else:
        mean_x = within_x / (float(n_x) * n_x)
        mean_y = within_y / (float(n_y) * n_y)
    return mean_x + mean_y - 2.0 * (between / (float(n_x) * n_y))


def _observed(pooled: PooledSamples, sums: dict[str, np.ndarray], estimator: str, diagonal: float) -> float:
    n_x = pooled.n_x
    within_x = math.fsum(sums["to_first"][:n_x])
    between = math.fsum(sums["to_second"][:n_x])
    within_y = math.fsum(sums["to_second"][n_x:])
    return float(discrepancy(within_x, between, within_y, n_x, pooled.n_y, estimator, diagonal))


def _permutation_test(
    pooled: PooledSamples,
    kernel: str,
    gamma: float,
    estimator: str,
    sign: float,
    factor: float,
    n_resamples: int,
    rng: np.random.Generator,
    n_jobs: NJobs,
    progress: bool,
    what: str,
) -> tuple[float, float, FloatArray]:
    """(statistic, pvalue, null) of ``sign * factor * discrepancy`` under random relabellings."""
    n = pooled.z.shape[0]
    packed = np.concatenate(
        [np.packbits(b, axis=1, bitorder="little") for b in permutation_indicators(rng, pooled.n_x, n, n_resamples)]
    )
    sums = _pair_sums(pooled, kernel, gamma, packed, n_jobs, progress, what)
    diagonal = 0.0 if kernel == "identity" else 1.0
    observed = sign * factor * _observed(pooled, sums, estimator, diagonal)
    row_sums = sums["to_first"] + sums["to_second"]
    total = math.fsum(row_sums)
    # s^T r for each relabelling: the sum of the new first sample's row sums.
    to_all = np.concatenate(
        [
            np.unpackbits(packed[start : start + _LABEL_CHUNK], axis=1, count=n, bitorder="little") @ row_sums
            for start in range(0, n_resamples, _LABEL_CHUNK)
        ]
    )
    within_x = sums["quadratic"]
    between = to_all - within_x
    within_y = total - 2.0 * to_all + within_x
    null = sign * factor * discrepancy(within_x, between, within_y, pooled.n_x, pooled.n_y, estimator, diagonal)
    tolerance = _TIE_RTOL * factor * abs(total) / (float(n) * n)
    count = int(np.count_nonzero(null >= observed - tolerance))
    return observed, (count + 1.0) / (n_resamples + 1.0), np.asarray(null, dtype=np.float64)


def _check_estimator(estimator: object, pooled: PooledSamples) -> str:
    estimator = check_choice(estimator, "estimator", ESTIMATORS)
    if estimator == "u-statistic" and min(pooled.n_x, pooled.n_y) < 2:
        raise ValueError(
            f"estimator='u-statistic' needs at least 2 rows in x and in y, got {pooled.n_x} and {pooled.n_y}"
        )
    return estimator


def _check_gamma(gamma: object, pooled: PooledSamples, kernel: str) -> float:
    if gamma is None:
        return median_gamma(pooled, kernel)
    return check_positive_finite(gamma, "gamma")


# ---------------------------------------------------------------------------
# public functions


@routed
def energy_distance(
    x: ArrayLike,
    y: ArrayLike,
    *,
    metric: str = "euclidean",
    estimator: str = "v-statistic",
    n_jobs: NJobs = None,
    progress: bool = False,
) -> float:
    """The energy distance between two samples, ``2 E|X - Y| - E|X - X'| - E|Y - Y'|``.

    Sums over all pairs, computed tile by tile at matrix-product speed with
    no ``N x N`` matrix (extra memory ``O(N d)`` plus a few MB per thread).

    Parameters
    ----------
    x, y : array-like of shape (n, d) and (m, d)
        The two samples, one row per observation; finite, any real dtype
        (computed in float64).
    metric : {"euclidean", "sqeuclidean", "cosine"}
        The distance ``|a - b|``. "sqeuclidean" is the energy distance with
        exponent 2 (it only compares the means); "cosine" is ``1 - cos``
        (all-zero rows are refused).
    estimator : {"v-statistic", "u-statistic"}
        "v-statistic" (default): every mean runs over all ``n^2``, ``m^2``
        and ``n m`` pairs, the diagonal's zeros included: dcor's
        ``energy_distance``. "u-statistic": the within-sample means run over
        the ``n (n - 1)`` pairs of distinct observations: dcor's
        ``estimation_stat="u_statistic"`` and pertpy's ``Edistance`` (with
        its default Euclidean distance).
    n_jobs : int, optional
        Threads: None (default) uses every core this process may use, ``k``
        at most ``k``, ``-1`` all cores.
    progress : bool
        Show a progress bar (needs tqdm).

    Returns
    -------
    float
        The energy distance.

    See Also
    --------
    energy_test : its permutation test.

    Notes
    -----
    Distances come from ``|a|^2 + |b|^2 - 2 <a, b>`` of the centred rows,
    recomputed from the rows where that expansion may have lost more than a
    relative ``2^-30`` of a squared distance; sums are in float64, in an
    order that does not depend on the threads (the result is the same for
    every ``n_jobs``).

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(200, 5)), rng.normal(0.5, size=(300, 5))
    >>> round(pm.energy_distance(x, y), 3)
    0.443
    """
    pooled = pooled_samples(x, y, metric)
    estimator = _check_estimator(estimator, pooled)
    progress = check_progress(progress)
    sums = _pair_sums(pooled, "identity", 1.0, None, n_jobs, progress, "energy distance")
    return -_observed(pooled, sums, estimator, 0.0)


@routed
def energy_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    n_resamples: int = 9999,
    rng: Seed = None,
    metric: str = "euclidean",
    estimator: str = "v-statistic",
    n_jobs: NJobs = None,
    progress: bool = False,
) -> EnergyTestResult:
    """The energy test of equal distributions: a permutation test of the energy distance.

    The statistic is ``n m / (n + m)`` times :func:`energy_distance` (dcor's
    ``homogeneity.energy_test``); the p-value is
    ``(1 + #{permutations with statistic >= observed}) / (1 + n_resamples)``.
    All permutations are evaluated in one pass over the pairs: each tile of
    distances is multiplied by the tile's rows of the ``N x n_resamples``
    indicator matrix (kept as bits), so the cost is ``O(N^2 (d + n_resamples))``
    with no ``N x N`` matrix.

    Parameters
    ----------
    x, y : array-like of shape (n, d) and (m, d)
        The two samples (see :func:`energy_distance`).
    n_resamples : int
        Random relabellings of the pooled sample (at least 1).
    rng : None, int seed or numpy Generator, optional
        Randomness of the permutations.
    metric, estimator : str
        As in :func:`energy_distance`.
    n_jobs : int, optional
        Threads (see :func:`energy_distance`).
    progress : bool
        Show a progress bar (needs tqdm).

    Returns
    -------
    EnergyTestResult
        Unpacks as ``(statistic, pvalue)``; also holds the energy distance
        and the null distribution.

    Notes
    -----
    A permutation statistic within ``1e-9`` times the mean pair distance
    (times ``n m / (n + m)``) of the observed one counts as at least as
    large, so that rounding cannot lower the p-value of tied data.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(100, 5)), rng.normal(1.0, size=(100, 5))
    >>> result = pm.energy_test(x, y, n_resamples=999, rng=0)
    >>> result.pvalue
    0.001
    """
    pooled = pooled_samples(x, y, metric)
    estimator = _check_estimator(estimator, pooled)
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    generator = check_rng(rng)
    progress = check_progress(progress)
    factor = pooled.n_x * pooled.n_y / float(pooled.n_x + pooled.n_y)
    statistic, pvalue, null = _permutation_test(
        pooled, "identity", 1.0, estimator, -1.0, factor, n_resamples, generator, n_jobs, progress, "energy test"
    )
    return EnergyTestResult(
        statistic=statistic,
        pvalue=pvalue,
        energy_distance=statistic / factor,
        null_distribution=null,
        n_resamples=n_resamples,
        metric=pooled.metric,
        estimator=estimator,
    )


@routed
def mmd(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: str = "rbf",
    gamma: float | None = None,
    metric: str = "euclidean",
    estimator: str = "v-statistic",
    n_jobs: NJobs = None,
    progress: bool = False,
) -> float:
    """The squared maximum mean discrepancy, ``E k(X, X') + E k(Y, Y') - 2 E k(X, Y)``.

    Sums over all pairs, tile by tile, with no ``N x N`` matrix (as
    :func:`energy_distance`).

    Parameters
    ----------
    x, y : array-like of shape (n, d) and (m, d)
        The two samples, one row per observation; finite, any real dtype
        (computed in float64).
    kernel : {"rbf", "laplacian"}
        ``k(a, b) = exp(-gamma t^2)`` (rbf, Gaussian) or ``exp(-gamma t)``
        (laplacian), ``t`` the metric's distance between ``a`` and ``b``.
    gamma : float, optional
        The kernel's parameter (> 0). None (default): the median heuristic,
        ``1 / (2 sigma^2)`` for rbf and ``1 / sigma`` for laplacian, with
        ``sigma`` the median distance between pooled points (over the pairs
        of at most 1000 evenly spaced pooled rows).
    metric : {"euclidean", "sqeuclidean", "cosine"}
        The distance ``t`` (see :func:`energy_distance`).
    estimator : {"v-statistic", "u-statistic"}
        "v-statistic" (default): the biased estimator, means over all pairs
        (always >= 0). "u-statistic": the unbiased estimator of Gretton et
        al. (2012), within-sample means over distinct pairs only.
    n_jobs : int, optional
        Threads (see :func:`energy_distance`).
    progress : bool
        Show a progress bar (needs tqdm).

    Returns
    -------
    float
        The squared MMD estimate.

    See Also
    --------
    mmd_test : its permutation test.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(200, 5)), rng.normal(0.5, size=(300, 5))
    >>> round(pm.mmd(x, y, gamma=0.1), 3)
    0.088
    """
    pooled = pooled_samples(x, y, metric)
    kernel = check_choice(kernel, "kernel", KERNELS)
    estimator = _check_estimator(estimator, pooled)
    gamma_value = _check_gamma(gamma, pooled, kernel)
    progress = check_progress(progress)
    sums = _pair_sums(pooled, kernel, gamma_value, None, n_jobs, progress, "MMD")
    return _observed(pooled, sums, estimator, 1.0)


@routed
def mmd_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    n_resamples: int = 9999,
    rng: Seed = None,
    kernel: str = "rbf",
    gamma: float | None = None,
    metric: str = "euclidean",
    estimator: str = "v-statistic",
    n_jobs: NJobs = None,
    progress: bool = False,
) -> MMDTestResult:
    """The kernel two-sample test: a permutation test of the squared MMD.

    The statistic is :func:`mmd`; the p-value is
    ``(1 + #{permutations with statistic >= observed}) / (1 + n_resamples)``,
    all permutations in one pass over the pairs (as :func:`energy_test`).
    With ``gamma=None`` the median heuristic is computed once, on the pooled
    sample (it does not change under relabelling).

    Parameters
    ----------
    x, y : array-like of shape (n, d) and (m, d)
        The two samples (see :func:`mmd`).
    n_resamples : int
        Random relabellings of the pooled sample (at least 1).
    rng : None, int seed or numpy Generator, optional
        Randomness of the permutations.
    kernel, gamma, metric, estimator :
        As in :func:`mmd`.
    n_jobs : int, optional
        Threads (see :func:`energy_distance`).
    progress : bool
        Show a progress bar (needs tqdm).

    Returns
    -------
    MMDTestResult
        Unpacks as ``(statistic, pvalue)``; also holds ``gamma`` and the null
        distribution.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(100, 5)), rng.normal(1.0, size=(100, 5))
    >>> result = pm.mmd_test(x, y, n_resamples=999, rng=0)
    >>> result.pvalue
    0.001
    """
    pooled = pooled_samples(x, y, metric)
    kernel = check_choice(kernel, "kernel", KERNELS)
    estimator = _check_estimator(estimator, pooled)
    gamma_value = _check_gamma(gamma, pooled, kernel)
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    generator = check_rng(rng)
    progress = check_progress(progress)
    statistic, pvalue, null = _permutation_test(
        pooled, kernel, gamma_value, estimator, 1.0, 1.0, n_resamples, generator, n_jobs, progress, "MMD test"
    )
    return MMDTestResult(
        statistic=statistic,
        pvalue=pvalue,
        gamma=gamma_value,
        null_distribution=null,
        n_resamples=n_resamples,
        kernel=kernel,
        metric=pooled.metric,
        estimator=estimator,
    )


# The statistic of each test, by the name compare_groups uses.
TESTS: dict[str, Callable[..., Any]] = {"energy": energy_test, "mmd": mmd_test}
