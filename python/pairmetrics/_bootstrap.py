"""Bootstrap confidence intervals (SciPy's methods), with a compiled fast path for the binary ROC AUC."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._paired import ConfidenceInterval
from ._progress import progress_callback
from ._result import Result
from ._roc_auc import roc_auc_score
from ._routing import routed
from ._validation import (
    as_vector,
    check_choice,
    check_int,
    check_progress,
    check_real,
    check_rng,
    resolve_n_jobs,
)

__all__ = ["BootstrapResult", "bootstrap"]

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]

_METHODS = ("percentile", "basic", "BCa")


@dataclasses.dataclass(frozen=True, eq=False)
class BootstrapResult(Result):
    """What :func:`scipy.stats.bootstrap` returns.

    Attributes
    ----------
    confidence_interval : ConfidenceInterval
        ``low`` and ``high``; unpacks as ``(low, high)``.
    bootstrap_distribution : ndarray, shape (n_resamples,)
        The statistic on every resample.
    standard_error : float
        Standard deviation (ddof 1) of the bootstrap distribution.
    """

    confidence_interval: ConfidenceInterval
    bootstrap_distribution: Floats
    standard_error: float


@dataclasses.dataclass(frozen=True)
class _Design:
    """Nested resampling units: strata of clusters of samples (CSR offsets)."""

    stratum_offsets: Indices  # n_strata + 1 offsets into the clusters
    cluster_offsets: Indices  # n_clusters + 1 offsets into members
    members: Indices  # sample indices, cluster by cluster


def _codes(labels: Any, n: int, name: str) -> npt.NDArray[np.intp]:
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be 1-D with one label per sample ({n}), got shape {arr.shape}")
    try:
        return np.unique(arr, return_inverse=True)[1].ravel()
    except TypeError as exc:
        raise TypeError(f"{name} labels must be sortable: {exc}") from None


def resampling_design(n: int, stratify: Any = None, cluster: Any = None) -> _Design:
    """Strata (``stratify``; one when None) of clusters (``cluster``; one per sample when None)."""
    if stratify is None and cluster is None:
        return _Design(np.array([0, n], dtype=np.int64), np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64))
    strata = np.zeros(n, dtype=np.intp) if stratify is None else _codes(stratify, n, "stratify")
    clusters = np.arange(n) if cluster is None else _codes(cluster, n, "cluster")
    if cluster is not None and stratify is not None:
        per_cluster = np.unique(np.stack([clusters, strata]), axis=1)
        if per_cluster.shape[1] != np.unique(clusters).shape[0]:
            raise ValueError("every cluster must lie inside one stratum")
    order = np.lexsort((clusters, strata))  # samples grouped by stratum, then cluster
    new_cluster = np.r_[True, (np.diff(clusters[order]) != 0) | (np.diff(strata[order]) != 0)]
    cluster_starts = np.flatnonzero(new_cluster)
    cluster_strata = strata[order][cluster_starts]
    stratum_starts = np.flatnonzero(np.r_[True, np.diff(cluster_strata) != 0])
    return _Design(
        np.r_[stratum_starts, cluster_starts.shape[0]].astype(np.int64),
        np.r_[cluster_starts, n].astype(np.int64),
        order.astype(np.int64),
    )


def _resample(design: _Design, rng: np.random.Generator) -> Indices:
    """Sample indices of one resample: each stratum draws as many clusters as it has, with replacement."""
    counts = np.diff(design.stratum_offsets)
    drawn = design.stratum_offsets[:-1].repeat(counts) + (rng.random(int(counts.sum())) * counts.repeat(counts)).astype(
        np.int64
    )
    starts, sizes = design.cluster_offsets[drawn], np.diff(design.cluster_offsets)[drawn]
    # members of the drawn clusters, concatenated: a ramp within each cluster added to its start
    ramp = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return design.members[np.repeat(starts, sizes) + ramp]


def _jackknife_groups(design: _Design, clustered: bool) -> list[Indices]:
    """Leave-one-out units: clusters when resampling clusters, else samples."""
    if not clustered:
        return []
    return np.split(design.members, design.cluster_offsets[1:-1])


def _binary_auc_data(statistic: Callable[..., Any], data: tuple[Any, ...]) -> tuple[Any, Any] | None:
    """(positive flags, scores) when the call is ``roc_auc_score(y_true, y_score)`` on binary labels."""
    if statistic is not roc_auc_score or len(data) != 2:
        return None
    labels, scores = np.asarray(data[0]), np.asarray(data[1])
    if labels.ndim != 1 or scores.ndim != 1 or labels.shape != scores.shape or scores.dtype.kind not in "biuf":
        return None
    classes = np.unique(labels)
    if classes.shape[0] != 2:
        return None
    return labels == classes[1], as_vector(scores, "y_score")


def _fast_auc(
    positive: npt.NDArray[np.bool_],
    scores: Any,
    design: _Design,
    rng: np.random.Generator,
    n_resamples: int,
    threads: int,
    progress: bool,
) -> tuple[Floats, Any]:
    """Replicates from the compiled kernel, and a jackknife closure for BCa."""
    order = np.argsort(scores)  # equal scores form one group: their order does not matter
    sorted_scores = scores[order]
    group_end = np.r_[np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]) + 1, scores.shape[0]].astype(np.int64)
    position = np.empty(scores.shape[0], dtype=np.int64)
    position[order] = np.arange(scores.shape[0])
    seeds = rng.integers(0, 2**64, n_resamples, dtype=np.uint64, endpoint=False)
    flags = np.ascontiguousarray(positive[order]).view(np.uint8)
    members = position[design.members]
    if design.stratum_offsets.shape[0] == 2 and design.cluster_offsets.shape[0] == members.shape[0] + 1:
        members = np.arange(members.shape[0], dtype=np.int64)  # plain resampling: positions are drawn directly
    elif design.cluster_offsets.shape[0] == members.shape[0] + 1:  # one sample per cluster
        # any order within a stratum draws alike; sorted, one stratum is the identity (the kernel's plain case)
        stratum = np.repeat(np.arange(design.stratum_offsets.shape[0] - 1), np.diff(design.stratum_offsets))
        members = members[np.lexsort((members, stratum))]
    with progress_callback(progress, "bootstrap") as callback:
        replicates = _core.bootstrap_auc(
            flags, group_end, design.stratum_offsets, design.cluster_offsets, members, seeds, threads, progress=callback
        )

    def jackknife() -> Floats:
        return _auc_leave_one_out(flags.astype(bool), group_end)[np.argsort(order)]

    return replicates, jackknife


def _auc_leave_one_out(positive: npt.NDArray[np.bool_], group_end: Indices) -> Floats:
    """The AUC without each sample (in sorted order), in O(n) from each sample's credit."""
    group = np.repeat(np.arange(group_end.shape[0]), np.diff(np.r_[0, group_end]))
    pos_in = np.bincount(group, weights=positive).astype(np.float64)
    neg_in = np.bincount(group, weights=~positive).astype(np.float64)
    neg_below = np.cumsum(neg_in) - neg_in
    pos_above = pos_in.sum() - np.cumsum(pos_in)
    credit = np.where(positive, neg_below[group] + 0.5 * neg_in[group], pos_above[group] + 0.5 * pos_in[group])
    n_pos, n_neg = float(pos_in.sum()), float(neg_in.sum())
    total = float(credit[positive].sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        pairs = np.where(positive, (n_pos - 1) * n_neg, n_pos * (n_neg - 1))
        result: Floats = (total - credit) / pairs
    return result


def _interval(
    method: str, replicates: Floats, estimate: float, level: float, jackknife: Callable[[], Floats]
) -> ConfidenceInterval:
    """SciPy's percentile, basic and BCa intervals from the replicates."""
    from scipy import special

    alpha = (1 - level) / 2
    finite = replicates[~np.isnan(replicates)]
    if finite.shape[0] == 0:
        return ConfidenceInterval(math.nan, math.nan, level)
    if method == "BCa":
        below = np.count_nonzero(finite < estimate) + np.count_nonzero(finite <= estimate)
        z0 = float(special.ndtri(below / (2 * finite.shape[0])))
        theta = jackknife()
        spread = theta.mean() - theta
        denominator = 6 * float((spread**2).sum()) ** 1.5
        acceleration = float((spread**3).sum()) / denominator if denominator > 0 else 0.0
        z = special.ndtri(np.array([alpha, 1 - alpha]))
        quantiles = special.ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
        low, high = np.percentile(finite, 100 * quantiles)
        return ConfidenceInterval(float(low), float(high), level)
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    if method == "basic":
        low, high = 2 * estimate - high, 2 * estimate - low
    return ConfidenceInterval(float(low), float(high), level)


@routed
def bootstrap(
    statistic: Callable[..., Any],
    *data: Any,
    n_resamples: int = 9999,
    confidence_level: float = 0.95,
    method: str = "percentile",
    stratify: Any = None,
    cluster: Any = None,
    rng: Any = None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> BootstrapResult:
    """Bootstrap confidence interval of ``statistic(*data)``, resampling the samples together.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(*resampled_data)``; returns a number.
        :func:`roc_auc_score` on binary labels takes a compiled fast path.
    *data : array_like, each of shape (n, ...)
        Paired arrays (for example ``y_true, y_score``): one resample draws
        the same rows of every array.
    n_resamples : int, default 9999
        Number of resamples.
    confidence_level : float, default 0.95
        Nominal coverage, in (0, 1).
    method : {"percentile", "basic", "BCa"}, default "percentile"
        SciPy's interval methods. "BCa" needs a jackknife: O(n) on the
        fast path, ``n`` calls of ``statistic`` (or one per cluster) otherwise.
    stratify : array_like, shape (n,), optional
        Class labels: each resample draws within every class as many samples
        (or clusters) as it has, so class sizes stay fixed.
    cluster : array_like, shape (n,), optional
        Cluster labels: whole clusters are drawn with replacement.
    rng : None, int, numpy Generator, optional
        Randomness; the result depends only on it, never on ``n_jobs``.
    n_jobs : int, optional
        Threads of the fast path (None: every usable core). The generic path
        calls ``statistic`` in this thread.
    progress : bool, default False
        Show a progress bar (tqdm, when installed).

    Returns
    -------
    BootstrapResult
        ``confidence_interval``, ``bootstrap_distribution`` and
        ``standard_error``, as :func:`scipy.stats.bootstrap`.

    Notes
    -----
    The fast path sorts the scores once; each resample is a vector of draw
    counts swept over that order in O(n), on ``n_jobs`` threads. Replicates
    where a resample lacks a class (NaN) are left out of the interval (use
    ``stratify=y_true`` to keep both classes in every resample).

    Examples
    --------
    >>> import numpy as np
    >>> from pairmetrics import bootstrap, roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 500)
    >>> score = y + rng.normal(size=500)
    >>> result = bootstrap(roc_auc_score, y, score, n_resamples=999, stratify=y, rng=1)
    >>> low, high = result.confidence_interval
    >>> bool(low < roc_auc_score(y, score) < high), result.bootstrap_distribution.shape
    (True, (999,))
    """
    if not callable(statistic):
        raise TypeError(f"statistic must be callable, got {type(statistic).__name__}")
    if not data:
        raise TypeError("bootstrap() needs at least one data array after statistic")
    arrays = [np.asarray(d) for d in data]
    n = arrays[0].shape[0] if arrays[0].ndim else 0
    for k, arr in enumerate(arrays):
        if arr.ndim == 0 or arr.shape[0] != n:
            raise ValueError(f"data[{k}] must have one row per sample ({n}), got shape {arr.shape}")
    if n < 2:
        raise ValueError(f"data needs at least 2 samples, got {n}")
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    level = check_real(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    method = check_choice(method, "method", _METHODS)
    generator = check_rng(rng)
    threads = resolve_n_jobs(n_jobs)
    show = check_progress(progress)
    design = resampling_design(n, stratify, cluster)
    fast = _binary_auc_data(statistic, tuple(arrays))
    estimate = float(statistic(*arrays))
    if fast is not None:
        replicates, jackknife = _fast_auc(fast[0], fast[1], design, generator, n_resamples, threads, show)
        if cluster is not None:
            jackknife = _generic_jackknife(statistic, arrays, _jackknife_groups(design, True))
    else:
        replicates = _generic_replicates(statistic, arrays, design, generator, n_resamples, show)
        units = _jackknife_groups(design, cluster is not None) or [np.array([i]) for i in range(n)]
        jackknife = _generic_jackknife(statistic, arrays, units)
    interval = _interval(method, replicates, estimate, level, jackknife)
    finite = replicates[~np.isnan(replicates)]
    standard_error = float(np.std(finite, ddof=1)) if finite.shape[0] > 1 else math.nan
    return BootstrapResult(interval, replicates, standard_error)


def _generic_replicates(
    statistic: Callable[..., Any],
    arrays: list[Any],
    design: _Design,
    rng: np.random.Generator,
    n_resamples: int,
    show: bool,
) -> Floats:
    replicates = np.empty(n_resamples)
    with progress_callback(show, "bootstrap") as callback:
        for r in range(n_resamples):
            index = _resample(design, rng)
            replicates[r] = float(statistic(*(arr[index] for arr in arrays)))
            if callback is not None and r % 64 == 0:
                callback(r, n_resamples)
    return replicates


def _generic_jackknife(statistic: Callable[..., Any], arrays: list[Any], units: list[Indices]) -> Callable[[], Floats]:
    """Leave-one-unit-out values of the statistic, computed only when BCa asks for them."""

    def jackknife() -> Floats:
        n = arrays[0].shape[0]
        values = np.empty(len(units))
        for k, unit in enumerate(units):
            keep = np.ones(n, dtype=bool)
            keep[unit] = False
            values[k] = float(statistic(*(arr[keep] for arr in arrays)))
        return values

    return jackknife
