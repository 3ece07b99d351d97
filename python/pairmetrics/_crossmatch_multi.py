"""The cross-match test for K >= 2 samples (Mukherjee, Agarwal, Zhang & Bhattacharya, JASA 2022).

One exact minimum-distance perfect matching of all points; the statistic is
the Mahalanobis distance of the cross counts ``A_ij`` (matched pairs joining
groups i < j) from their exact mean under the permutation null.

Null moments. The matching is fixed and the labels are a uniformly random
arrangement of the group sizes ``n_1..n_K`` over the N matched points. One
matched pair joins groups i != j with probability ``2 n_i n_j / (N (N-1))``,
so ``E[A_ij] = n_i n_j / (N-1)`` over the N/2 pairs. Two distinct matched
pairs (four distinct points) join (i, j) and (k, l) with probability
``4 n_i n_j n_k n_l / N^(4)`` (falling powers; ``n_i (n_i - 1)`` replaces
``n_i n_i`` when an index repeats), which gives, with ``e = E[A]``:

- disjoint pairs {i, j}, {k, l}: ``Cov = 2 e_ij e_kl / (N-3)``;
- pairs sharing one group t: ``Cov = e_ij e_kl (2 - (N-1) / n_t) / (N-3)``;
- ``Var A_ij = e_ij ((N-1)(N-3) + 2 n_i n_j - (n_i + n_j - 1)(N-1)) / ((N-1)(N-3))``,

the formulas of R's ``multicross`` (``mhcccreate``) in a form without
cancellation. Summed up, ``Sigma = (N-2)/(N-3) diag(e) + V C V'`` with the K
columns ``v_t`` of V the means of the pairs with group t: see
:func:`mahalanobis_statistic`. For K = 2 the variance is Rosenbaum's ``2 n (n-1) m (m-1) / ((N-3)(N-1)^2)``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ._crossmatch import (
    CrossMatchResult,
    approx_pvalue,
    check_test_options,
    pool_dtype,
    result_from_matching,
    solve_in_random_order,
)
from ._inference import CORRECTIONS, adjust_pvalues
from ._matching import DEFAULT_N_NEIGHBORS, MatchingResult
from ._metric_transforms import DEFAULT_MAX_MATRIX_BYTES, checked_sample
from ._result import Result
from ._routing import routed
from ._typing import ArrayLike, FloatArray, IntArray, Metric, NJobs, Seed
from ._validation import (
    check_choice,
    check_finite,
    check_no_missing_labels,
    vector_shape,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MultiCrossMatchResult", "multi_crossmatch_test"]

# Most groups the test takes (its vectors have K (K - 1) / 2 entries, its eigenproblems are K x K).
MAX_GROUPS = 1000
# Largest K (K - 1) / 2 for which the result forms the dense covariance of the cross counts on request.
MAX_DENSE_PAIRS = 5000


def group_codes(labels: Any, name: str, n_rows: int) -> tuple[np.ndarray, IntArray]:
    """The distinct labels (sorted, or in order of appearance when they do not sort) and each row's index."""
    values = np.asarray(labels)
    if values.dtype.kind == "V":
        raise TypeError(
            f"{name} must be 1-D labels (numbers, strings or other hashable values), got dtype {values.dtype}"
        )
    values = vector_shape(values, name, min_length=1)
    if values.shape[0] != n_rows:
        raise ValueError(f"{name} has {values.shape[0]} labels but points has {n_rows} rows")
    check_no_missing_labels(values, name)
    if values.dtype.kind == "f":
        check_finite(values, name)
    try:
        groups, codes = np.unique(values, return_inverse=True)
    except TypeError:  # labels of types that do not compare, such as ints mixed with strings
        seen: dict[Any, int] = {}
        try:
            codes = np.fromiter((seen.setdefault(v, len(seen)) for v in values), dtype=np.intp, count=values.size)
        except TypeError as exc:
            raise TypeError(f"{name} must hold hashable labels: {exc}") from None
        groups = np.empty(len(seen), dtype=object)
        groups[:] = list(seen)
    if groups.size < 2:
        raise ValueError(f"{name} must contain at least 2 groups, got only {groups[0]!r}")
    if groups.size > MAX_GROUPS:
        raise ValueError(f"{name} has {groups.size} groups; the test takes at most {MAX_GROUPS}")
    return groups, np.asarray(codes, dtype=np.intp).ravel()


def cross_count_means(sizes: IntArray) -> FloatArray:
    """Exact null means ``n_i n_j / (N - 1)`` of the cross counts (i < j, in ``np.triu_indices`` order)."""
    n = np.asarray(sizes, dtype=np.float64)
    i, j = np.triu_indices(n.size, 1)
    return n[i] * n[j] / (n.sum() - 1)


def cross_count_variances(sizes: IntArray) -> FloatArray:
    """Exact null variances of the cross counts, in the order of :func:`cross_count_means`."""
    mean = cross_count_means(sizes)
    N = int(np.sum(sizes))
    if N < 4:  # one matched pair: each count is the indicator of one draw
        return mean * (1 - mean)
    i, j = np.triu_indices(len(sizes), 1)
    ni, nj = np.asarray(sizes, dtype=np.int64)[i], np.asarray(sizes, dtype=np.int64)[j]
    bracket = (N - 1) * (N - 3) + 2 * ni * nj - (ni + nj - 1) * (N - 1)  # exact in int64
    return mean * bracket / ((N - 1) * (N - 3))


def cross_count_moments(sizes: IntArray) -> tuple[FloatArray, FloatArray]:
    """Exact null mean and dense covariance of the cross counts, in the order of :func:`cross_count_means`.

    ``sizes`` are the numbers of matched points of each group (their sum N is even). For N >= 4,
    ``Sigma = (N-2)/(N-3) diag(e) + (2/(N-3)) e e' - (N-1)/(N-3) sum_t v_t v_t' / n_t`` with ``v_t`` the
    means of the pairs with group t (0 elsewhere); the diagonal is taken from :func:`cross_count_variances`.
    """
    mean = cross_count_means(sizes)
    N = int(np.sum(sizes))
    if N < 4:
        return mean, np.diag(mean) - np.outer(mean, mean)
    n = np.asarray(sizes, dtype=np.float64)
    i, j = np.triu_indices(n.size, 1)
    cov = (2.0 / (N - 3)) * np.outer(mean, mean)
    for t in np.flatnonzero(n > 0):  # pairs sharing group t
        with_t = np.flatnonzero((i == t) | (j == t))
        v = mean[with_t]
        cov[np.ix_(with_t, with_t)] -= ((N - 1) / (n[t] * (N - 3))) * np.outer(v, v)
    cov[np.diag_indices_from(cov)] = cross_count_variances(sizes)
    return mean, cov


def total_cross_variance(sizes: IntArray) -> float:
    """Exact null variance of the total of the cross counts (``1' Sigma 1``; 0 when the total never varies)."""
    n = np.asarray(sizes, dtype=np.float64)
    N = int(np.sum(sizes))
    total = float(cross_count_means(sizes).sum())
    if N < 4:
        return total * (1 - total)
    with_t = n * (N - n) / (N - 1)  # the means of the pairs with group t, summed
    shared = float(np.sum(np.divide(with_t**2, n, out=np.zeros_like(n), where=n > 0)))
    terms = ((N - 2) / (N - 3) * total, 2 / (N - 3) * total**2, -(N - 1) / (N - 3) * shared)
    var = sum(terms)
    return var if var > 1e-12 * sum(abs(t) for t in terms) else 0.0  # rounding of a total that never varies


def mahalanobis_statistic(deviation: FloatArray, sizes: IntArray) -> tuple[float, int]:
    """``d' Sigma^+ d`` for the cross counts' deviation d from their mean, and ``rank(Sigma)``.

    d lies in the range of Sigma, so any generalised inverse gives this value. Sigma is never formed:
    with ``D = (N-2)/(N-3) diag(e)`` and ``W = D^(-1/2) [v_1 .. v_K]`` (see :func:`cross_count_moments`;
    ``e = sum_t v_t / 2``), ``D^(-1/2) Sigma D^(-1/2) = I + W C W'`` is the identity off the K columns of
    W, so the work is two K x K eigenproblems and sums over the K (K - 1) / 2 pairs.
    """
    mean = cross_count_means(sizes)
    N = int(np.sum(sizes))
    varying = mean > 0  # a pair with an empty group never occurs
    if not varying.any():
        return 0.0, 0
    if N < 4:  # at most one pair can occur: a 1 x 1 problem
        var = mean * (1 - mean)
        occurs = var > 0
        return float(np.sum(deviation[occurs] ** 2 / var[occurs])), int(occurs.sum())
    K = len(sizes)
    i, j = np.triu_indices(K, 1)
    y = np.where(varying, deviation / np.sqrt(np.where(varying, mean * (N - 2) / (N - 3), 1.0)), 0.0)
    w = np.sqrt(mean * (N - 3) / (N - 2))  # the entries of W: pair (i, j) in the columns of i and j
    gram = np.zeros((K, K))
    gram[i, j] = gram[j, i] = w**2
    gram[np.diag_indices(K)] = np.bincount(i, w**2, minlength=K) + np.bincount(j, w**2, minlength=K)
    n = np.asarray(sizes, dtype=np.float64)
    inverse_sizes = np.divide(1.0, n, out=np.zeros(K), where=n > 0)
    core = np.full((K, K), 1.0 / (2 * (N - 3))) - np.diag(inverse_sizes * (N - 1) / (N - 3))
    lam, H = np.linalg.eigh(gram)
    keep = lam > lam[-1] * 1e-10
    H, root = H[:, keep], np.sqrt(lam[keep])
    z = (H.T @ (np.bincount(i, w * y, minlength=K) + np.bincount(j, w * y, minlength=K))) / root  # y on range(W)
    u = H @ (z / root)
    outside = y - w * (u[i] + u[j])  # y off range(W), where the scaled Sigma is the identity
    inner = np.eye(root.size) + root[:, None] * (H.T @ core @ H) * root[None, :]
    mu, Q = np.linalg.eigh(inner)
    positive = mu > max(1.0, float(np.abs(mu).max())) * 1e-10
    statistic = float(outside @ outside) + float(np.sum((Q[:, positive].T @ z) ** 2 / mu[positive]))
    return statistic, int(varying.sum()) - root.size + int(positive.sum())


def _chi2_pvalue(statistic: float, df: int) -> float:
    from scipy.special import chdtrc

    return float(chdtrc(df, statistic)) if df > 0 else 1.0


@dataclasses.dataclass(frozen=True, eq=False)
class MultiCrossMatchResult(Result):
    """Result of :func:`multi_crossmatch_test`.

    Attributes
    ----------
    statistic : float
        ``(A - E)' Sigma^+ (A - E)`` over the cross counts ``A_ij`` (i < j).
    pvalue : float
        ``P(chi2_df >= statistic)``: asymptotic, as in the paper (1 when ``df`` is 0).
    df : int
        Degrees of freedom: the rank of the null covariance ``Sigma``: ``K (K - 1) / 2`` when every group
        has at least 2 matched points; each group of one point takes 1 off, and pairs with an empty group
        do not count.
    groups : ndarray
        The distinct labels (sorted when they sort); rows and columns of the matrices below follow them.
    sizes : ndarray of int64, shape (K,)
        Matched points of each group (one point is left out when the total is odd).
    counts : ndarray of int64, shape (K, K)
        ``counts[i, j]``: matched pairs joining groups i and j (symmetric); the diagonal counts the pairs
        within a group.
    expected : ndarray of float64, shape (K, K)
        Their exact null means: ``n_i n_j / (N - 1)`` off the diagonal, ``n_i (n_i - 1) / (2 (N - 1))`` on it.
    pairs : ndarray of int64, shape (K (K - 1) / 2, 2)
        The group pairs (i, j), i < j, of ``pair_sd``, ``pair_dev``, ``pair_pvalue`` and ``covariance()``.
    pair_sd : ndarray of float64
        Exact null standard deviations of the cross counts.
    pair_dev, pair_pvalue : ndarray of float64
        ``(A_ij - E_ij) / sd_ij`` and its normal-approximation p-value for ``alternative`` (NaN when
        ``sd_ij`` is 0); not adjusted for multiplicity (see :meth:`to_frame`).
    cross, cross_expected, cross_dev, cross_pvalue
        The total of the cross counts (the statistic of R's ``multicross::mcm``), its null mean, its
        standardised value and normal-approximation p-value for ``alternative``.
    group_tests : tuple of CrossMatchResult
        Each group against all the others: :func:`crossmatch_test`'s exact results on this same matching.
    alternative : str
        Side of ``pair_pvalue``, ``cross_pvalue`` and the group tests.
    order : ndarray of int64
        The random order the matching solved the points in (its i-th point
        was row ``order[i]``), drawn from ``rng`` independently of the labels
        to break ties (see :func:`crossmatch_test`).
    N : int
        Points matched (even).
    matching : MatchingResult
        The optimal matching of all points (``matching.verify()`` proves it optimal).
    """

    statistic: float
    pvalue: float
    df: int
    groups: np.ndarray
    sizes: IntArray
    counts: IntArray
    expected: FloatArray = dataclasses.field(repr=False)
    pairs: IntArray = dataclasses.field(repr=False)
    pair_sd: FloatArray = dataclasses.field(repr=False)
    pair_dev: FloatArray = dataclasses.field(repr=False)
    pair_pvalue: FloatArray = dataclasses.field(repr=False)
    cross: int
    cross_expected: float
    cross_dev: float
    cross_pvalue: float
    group_tests: tuple[CrossMatchResult, ...] = dataclasses.field(repr=False)
    alternative: str
    N: int
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

    def covariance(self) -> FloatArray:
        """Exact null covariance of the cross counts in the order of ``pairs`` (a dense square matrix,
        formed on each call, for up to 5000 pairs: K <= 100)."""
        if self.pairs.shape[0] > MAX_DENSE_PAIRS:
            raise ValueError(
                f"the covariance of {self.pairs.shape[0]} cross counts is not formed (at most "
                f"{MAX_DENSE_PAIRS} pairs); pair_sd holds its diagonal"
            )
        return cross_count_moments(self.sizes)[1]

    def to_frame(self, by: str = "pair", correction: str = "holm-sidak") -> pd.DataFrame:
        """The per-pair or per-group table as a pandas DataFrame (needs pandas).

        Parameters
        ----------
        by : {"pair", "group"}
            ``"pair"``: one row per pair of groups, indexed by (group_a, group_b): ``count``,
            ``expected``, ``sd``, ``dev``, ``pvalue`` (normal approximation). ``"group"``: one row per
            group against the rest: ``n``, ``statistic``, ``expected``, ``variance``, ``zscore``,
            ``pvalue`` (exact).
        correction : {"holm-sidak", "benjamini-hochberg", "none"}
            Adjustment of ``pvalue`` into ``pvalue_adj``, as in :func:`compare_groups`.
        """
        by = check_choice(by, "by", ("pair", "group"))
        correction = check_choice(correction, "correction", CORRECTIONS)
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame() needs pandas: pip install pandas") from None
        if by == "group":
            rows = [(t.n_y, t.statistic, t.expected, t.variance, t.zscore, t.pvalue) for t in self.group_tests]
            table = pd.DataFrame(
                rows,
                columns=["n", "statistic", "expected", "variance", "zscore", "pvalue"],
                index=pd.Index(self.groups, name="group"),
            )
        else:
            a, b = self.pairs[:, 0], self.pairs[:, 1]
            index = pd.MultiIndex.from_arrays([self.groups[a], self.groups[b]], names=["group_a", "group_b"])
            table = pd.DataFrame(
                {
                    "count": self.counts[a, b],
                    "expected": self.expected[a, b],
                    "sd": self.pair_sd,
                    "dev": self.pair_dev,
                    "pvalue": self.pair_pvalue,
                },
                index=index,
            )
        table["pvalue_adj"] = adjust_pvalues(table["pvalue"].to_numpy(), correction)
        return table


def _counts(codes: IntArray, matching: MatchingResult, K: int) -> tuple[IntArray, IntArray]:
    """Matched points of each group, and the symmetric K x K matrix of matched pairs by group."""
    sizes = np.bincount(codes[matching.mate >= 0], minlength=K).astype(np.int64)
    a, b = codes[matching.pairs[:, 0]], codes[matching.pairs[:, 1]]
    upper = np.bincount(np.minimum(a, b) * K + np.maximum(a, b), minlength=K * K).reshape(K, K).astype(np.int64)
    return sizes, upper + upper.T - np.diag(np.diag(upper))


def multi_result(
    groups: np.ndarray, codes: IntArray, matching: MatchingResult, alternative: str, order: IntArray
) -> MultiCrossMatchResult:
    """The test's result from the group codes of the points and their matching."""
    K = groups.size
    sizes, counts = _counts(codes, matching, K)
    N = int(sizes.sum())
    mean = cross_count_means(sizes)
    i, j = np.triu_indices(K, 1)
    deviation = counts[i, j] - mean
    statistic, df = mahalanobis_statistic(deviation, sizes)
    expected = np.outer(sizes, sizes) / (N - 1)
    expected[np.diag_indices(K)] = sizes * (sizes - 1) / (2 * (N - 1))
    pair_sd = np.sqrt(np.clip(cross_count_variances(sizes), 0.0, None))
    cross_var = total_cross_variance(sizes)
    with np.errstate(divide="ignore", invalid="ignore"):
        pair_dev = deviation / pair_sd
        cross_dev = float(np.float64(np.sum(deviation)) / np.sqrt(np.float64(cross_var)))
    group_tests = tuple(
        result_from_matching((codes == g).astype(np.int8), matching, alternative, order) for g in range(K)
    )
    return MultiCrossMatchResult(
        statistic=statistic,
        pvalue=_chi2_pvalue(statistic, df),
        df=df,
        groups=groups,
        sizes=sizes,
        counts=counts,
        expected=expected,
        pairs=np.column_stack([i, j]).astype(np.int64),
        pair_sd=pair_sd,
        pair_dev=pair_dev,
        pair_pvalue=np.asarray(approx_pvalue(pair_dev, alternative), dtype=np.float64),
        cross=int(counts[i, j].sum()),
        cross_expected=float(mean.sum()),
        cross_dev=cross_dev,
        cross_pvalue=float(approx_pvalue(cross_dev, alternative)),
        group_tests=group_tests,
        alternative=alternative,
        N=N,
        matching=matching,
        _order=order,
    )


@routed
def multi_crossmatch_test(
    points: ArrayLike,
    labels: ArrayLike,
    *,
    metric: Metric = "euclidean",
    alternative: str = "less",
    n_neighbors: int = DEFAULT_N_NEIGHBORS,
    rng: Seed = None,
    n_jobs: NJobs = None,
    progress: bool = False,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
    **metric_kwargs: Any,
) -> MultiCrossMatchResult:
    """The cross-match test of whether K >= 2 samples come from one distribution.

    The multi-sample cross-match test of Mukherjee, Agarwal, Zhang and
    Bhattacharya (JASA 2022; R package ``multicross``): all points are paired
    by one exact minimum-distance perfect matching, and the numbers ``A_ij``
    of matched pairs joining groups i < j are compared with their exact mean
    ``E`` and covariance ``Sigma`` under the permutation null (the matching
    fixed, the labels shuffled). The statistic ``(A - E)' Sigma^+ (A - E)`` is
    referred to a chi-square distribution with ``df = rank(Sigma)`` degrees of
    freedom. To name the groups behind a rejection, the result also carries
    each pair's standardised deviation and each group's exact cross-match test
    against the rest, all on the same matching.

    Parameters
    ----------
    points : array_like, shape (N, d)
        All points (1-D input is one feature).
    labels : array_like, shape (N,)
        The group of each point: numbers, strings, a pandas Categorical or
        Series, or other hashable values; at least 2 distinct groups, no
        missing values.
    metric : str or callable
        As in :func:`crossmatch_test`.
    alternative : {'less', 'greater', 'two-sided'}
        Side of the per-pair, per-group and total-count p-values (``'less'``:
        fewer cross-matches than by chance, the groups differ). The
        chi-square statistic is an omnibus test and has no side.
    n_neighbors : int
        Start graph size of the matching (speed only).
    rng : None, int, numpy.random.Generator, BitGenerator or SeedSequence
        Source of the random order the matching sees the points in, which
        breaks ties independently of the labels (as in
        :func:`crossmatch_test`); give a seed for reproducible results on
        tied data.
    n_jobs : int or None
        Threads for the matching; None means every usable core.
    progress : bool
        Show a progress bar (needs tqdm).
    max_matrix_bytes : int
        As in :func:`crossmatch_test` (metrics that need an N x N matrix).
    **metric_kwargs
        ``p``, ``w``, ``V`` or ``VI`` for the cdist metrics that take them.

    Returns
    -------
    MultiCrossMatchResult
        ``statistic``, ``pvalue``, ``df``, the K x K ``counts`` and
        ``expected`` counts, the per-pair ``pair_dev`` / ``pair_pvalue``, the
        per-group ``group_tests`` and ``to_frame()``.

    Notes
    -----
    *The p-value is asymptotic* (chi-square, as in the paper); the mean and
    covariance are exact. R's ``mmcm`` inverts ``Sigma`` and uses
    ``K (K - 1) / 2`` degrees of freedom; this uses the pseudo-inverse and the
    rank, which agree whenever ``Sigma`` is invertible (every group with at
    least 2 matched points). A group of one point makes its cross counts sum
    to 1 and lowers the rank by one. ``Sigma`` is never formed: it is a
    diagonal plus a rank-K term, so the statistic costs two K x K
    eigenproblems. ``cross`` and ``cross_pvalue`` are the test of R's ``mcm``
    (the total count of cross pairs, normal approximation).

    *K = 2*: the statistic is ``dev**2`` of :func:`crossmatch_test` on the
    same two samples and ``pvalue`` is its two-sided normal approximation,
    ``crossmatch_test(x, y, alternative="two-sided").approx_pvalue``; use
    :func:`crossmatch_test` for Rosenbaum's exact one-sided p-value.

    *Odd N*: as in :func:`crossmatch_test`, a ghost point joins the matching
    and the point matched to it is left out (``matching.dropped``); ``N`` and
    ``sizes`` count the remaining points.

    At most 1000 groups. *Dask input:* the points and numeric labels are brought to the
    client as for :func:`crossmatch_test` (up to
    ``pairmetrics.dask.matching.MAX_GATHER_BYTES``); labels that are not
    numbers must be computed first.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> points = np.vstack([rng.normal(0, 1, (30, 3)), rng.normal(0, 1, (30, 3)), rng.normal(3, 1, (30, 3))])
    >>> labels = np.repeat(["a", "b", "c"], 30)
    >>> res = pm.multi_crossmatch_test(points, labels, rng=0)
    >>> res.df, bool(res.pvalue < 1e-6)
    (3, True)
    >>> [str(g) for g, t in zip(res.groups, res.group_tests) if t.pvalue < 0.01]
    ['c']
    """
    options = (metric, metric_kwargs, alternative, n_neighbors, rng, n_jobs, progress, max_matrix_bytes)
    alternative, n_neighbors, gen, max_matrix_bytes = check_test_options("multi_crossmatch_test", *options)
    X = checked_sample(points, "points", metric)
    if X.shape[0] < 2:
        raise ValueError(f"points needs at least 2 rows, got {X.shape[0]}")
    groups, codes = group_codes(labels, "labels", X.shape[0])
    X = X.astype(pool_dtype(X, X), copy=False)
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
    return multi_result(groups, codes, matching, alternative, order)
