"""Bootstrap confidence intervals (SciPy's methods), with compiled paths for rank statistics."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from ._inference import ConfidenceInterval
from ._paired import paired_evaluation, prepare_scores
from ._progress import progress_callback
from ._ranking_curves import average_precision_score
from ._result import Result
from ._roc_auc import roc_auc_score
from ._routing import routed, warn
from ._survival import concordance_index, lifelines_arrays
from ._typing import ArrayLike, NJobs, Seed
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
    plain: bool = False  # one stratum, cluster i is sample i


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
        identity = np.arange(n + 1, dtype=np.int64)
        return _Design(np.array([0, n], dtype=np.int64), identity, identity[:n], plain=True)
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


# SplitMix64, the compiled kernels' generator (cpp/bootstrap.hpp): a resample is a function of its seed.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def splitmix64(seed: int | np.uint64, count: int) -> npt.NDArray[np.uint64]:
    """The first ``count`` outputs of SplitMix64 seeded with ``seed`` (arithmetic modulo 2**64)."""
    z = np.arange(1, count + 1, dtype=np.uint64) * _GOLDEN + np.uint64(seed)
    z = (z ^ (z >> np.uint64(30))) * _MIX[0]
    z = (z ^ (z >> np.uint64(27))) * _MIX[1]
    return z ^ (z >> np.uint64(31))


def drawn_clusters(stratum_offsets: Indices, seed: int | np.uint64) -> Indices:
    """The clusters one resample draws: each stratum as many as it has, with replacement.
    Draw k takes the top 32 bits ``u`` of output k and picks cluster ``first + (u * size >> 32)``."""
    sizes = np.diff(stratum_offsets)
    high = splitmix64(seed, int(stratum_offsets[-1])) >> np.uint64(32)
    offset = (high * np.repeat(sizes, sizes).astype(np.uint64)) >> np.uint64(32)
    return np.repeat(stratum_offsets[:-1], sizes) + offset.astype(np.int64)


def _resample(design: _Design, seed: int | np.uint64) -> Indices:
    """Sample indices of the resample of one seed (the members of its drawn clusters, in draw order)."""
    drawn = drawn_clusters(design.stratum_offsets, seed)
    starts, sizes = design.cluster_offsets[drawn], np.diff(design.cluster_offsets)[drawn]
    # members of the drawn clusters, concatenated: a ramp within each cluster added to its start
    ramp = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return design.members[np.repeat(starts, sizes) + ramp]


def _jackknife_groups(design: _Design, clustered: bool) -> list[Indices]:
    """Leave-one-out units: clusters when resampling clusters, else samples."""
    if not clustered:
        return []
    return np.split(design.members, design.cluster_offsets[1:-1])


Kernel = Callable[[npt.NDArray[np.uint32], Indices, npt.NDArray[np.uint64], int, Any], Floats]


@dataclasses.dataclass(frozen=True)
class _Sweep:
    """A compiled path: the samples in sweep order, the kernel of the replicates given the
    cluster at each sweep position, and (when cheap) the leave-one-sample-out statistic."""

    order: Indices
    kernel: Kernel
    leave_one_out: Callable[[], Floats] | None = None


def _unwrapped(statistic: Callable[..., Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """(function, keywords) of a statistic or a keyword-only functools.partial of one."""
    if isinstance(statistic, functools.partial) and not statistic.args:
        return statistic.func, dict(statistic.keywords)
    return statistic, {}


def _fast_sweep(statistic: Callable[..., Any], arrays: list[Any]) -> _Sweep | None:
    """The compiled path of a recognised statistic, or None (the generic path)."""
    function, keywords = _unwrapped(statistic)
    if function is roc_auc_score and not keywords:
        return _auc_sweep(arrays)
    if function is average_precision_score and not keywords:
        return _average_precision_sweep(arrays)
    if function is concordance_index and not keywords:
        return _concordance_sweep(arrays)
    if function is paired_evaluation and set(keywords) <= {"min_dist", "warn"}:
        return _paired_sweep(arrays, keywords.get("min_dist", 0.5))
    return None


def _auc_sweep(arrays: list[Any]) -> _Sweep | None:
    """``roc_auc_score(y_true, y_score)`` on binary labels: samples by score, tie groups of equal scores."""
    if len(arrays) != 2:
        return None
    labels, scores = arrays
    if labels.ndim != 1 or scores.ndim != 1 or labels.shape != scores.shape or scores.dtype.kind not in "biuf":
        return None
    if labels.dtype == np.bool_:  # no sort for the two classes of bool labels
        classes = np.array([False, True]) if labels.any() and not labels.all() else labels[:1]
    else:
        classes = np.unique(labels)
    if classes.shape[0] != 2:
        return None
    scores = as_vector(scores, "y_score")
    order = np.argsort(scores)  # equal scores form one group: their order does not matter
    sorted_scores = scores[order]
    group_end = np.r_[np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]) + 1, scores.shape[0]].astype(np.int64)
    flags = np.ascontiguousarray(labels[order] == classes[1]).view(np.uint8)

    def kernel(cluster: Any, offsets: Indices, seeds: Any, threads: int, progress: Any) -> Floats:
        return _core.bootstrap_auc(flags, group_end, offsets, cluster, seeds, threads, progress=progress)

    def leave_one_out() -> Floats:
        values = np.empty(order.shape[0])
        values[order] = _auc_leave_one_out(flags.astype(bool), group_end)
        return values

    return _Sweep(order, kernel, leave_one_out)


def _average_precision_sweep(arrays: list[Any]) -> _Sweep | None:
    """``average_precision_score(y_true, y_score)`` on binary labels whose positive class is 1 (or True):
    samples by decreasing score, tie groups of equal scores."""
    if len(arrays) != 2:
        return None
    labels, scores = arrays
    if labels.ndim != 1 or scores.ndim != 1 or labels.shape != scores.shape or scores.dtype.kind not in "biuf":
        return None
    if labels.dtype.kind not in "biuf" or (labels.dtype.kind == "f" and not np.isfinite(labels).all()):
        return None
    classes = np.unique(labels)
    if classes.shape[0] != 2 or classes[1] != 1:  # the statistic's pos_label=1 must be one of two classes
        return None
    scores = as_vector(scores, "y_score")
    order = np.argsort(scores)[::-1]  # equal scores form one group: their order does not matter
    sorted_scores = scores[order]
    group_end = np.r_[np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]) + 1, scores.shape[0]].astype(np.int64)
    flags = np.ascontiguousarray(labels[order] == 1).view(np.uint8)

    def kernel(cluster: Any, offsets: Indices, seeds: Any, threads: int, progress: Any) -> Floats:
        return _core.bootstrap_average_precision(flags, group_end, offsets, cluster, seeds, threads, progress=progress)

    return _Sweep(np.ascontiguousarray(order), kernel)


def _pair_sweep(order: Indices, rank: Any, bound: Indices, query: npt.NDArray[np.uint8]) -> _Sweep:
    """A pair concordance (see _core.bootstrap_pair_concordance) over samples in ``order``."""
    ranks = np.ascontiguousarray(rank, dtype=np.uint32)

    def kernel(cluster: Any, offsets: Indices, seeds: Any, threads: int, progress: Any) -> Floats:
        return _core.bootstrap_pair_concordance(
            ranks, bound, query, offsets, cluster, seeds, threads, progress=progress
        )

    return _Sweep(order, kernel)


def _concordance_sweep(arrays: list[Any]) -> _Sweep | None:
    """lifelines' ``concordance_index(event_times, predicted_scores[, event_observed])``: latest time
    first, censored before events at one time; an event is compared with every sample before its
    time's events, correct when that partner's score is higher."""
    if len(arrays) not in (2, 3):
        return None
    times, scores, observed = lifelines_arrays(arrays[0], arrays[1], arrays[2] if len(arrays) == 3 else None)
    order = np.lexsort((observed, -times))
    t, events = times[order], observed[order]
    start = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
    group = np.repeat(np.arange(start.shape[0]), np.diff(np.r_[start, t.shape[0]]))
    censored = np.bincount(group, weights=events == 0, minlength=start.shape[0]).astype(np.int64)
    bound = (start + censored)[group].astype(np.int64)
    rank = np.unique(-scores[order], return_inverse=True)[1].ravel()
    return _pair_sweep(order, rank, bound, np.ascontiguousarray(events, dtype=np.uint8))


def _paired_sweep(arrays: list[Any], min_dist: Any) -> _Sweep | None:
    """``paired_evaluation(y_true, y_score, min_dist=...).auc``: samples by label; each is compared
    with the labels at least min_dist below its own, correct when its score is higher."""
    if len(arrays) != 2:
        return None
    scores, labels, min_dist = prepare_scores(arrays[1], arrays[0], min_dist)
    # The labels keep their dtype: the rankable-pair rule compares integers exactly, at any magnitude.
    order = np.argsort(labels, kind="stable")
    bound = _core.rankable_bounds(np.ascontiguousarray(labels[order]), float(min_dist))
    rank = np.unique(scores[order], return_inverse=True)[1].ravel()
    return _pair_sweep(order, rank, bound, np.ones(order.shape[0], dtype=np.uint8))


def _fast_replicates(sweep: _Sweep, design: _Design, seeds: npt.NDArray[np.uint64], threads: int, show: bool) -> Floats:
    """Replicates from the compiled kernel: the same draws as the generic path, as counts per cluster."""
    if design.plain:
        cluster = sweep.order.astype(np.uint32)
    else:
        of_sample = np.empty(sweep.order.shape[0], dtype=np.uint32)
        sizes = np.diff(design.cluster_offsets)
        of_sample[design.members] = np.repeat(np.arange(sizes.shape[0], dtype=np.uint32), sizes)
        cluster = of_sample[sweep.order]
    with progress_callback(show, "bootstrap") as callback:
        return sweep.kernel(cluster, design.stratum_offsets, seeds, threads, callback)


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
    if np.ptp(finite) == 0:  # SciPy's degenerate case: one value in every resample estimates no spread
        warn(
            "every resample gives the same value: the bootstrap distribution is degenerate and the interval "
            "undefined (nan)",
            RuntimeWarning,
        )
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
    data: Sequence[ArrayLike],
    statistic: Callable[..., Any],
    *,
    n_resamples: int = 9999,
    confidence_level: float = 0.95,
    method: Literal["percentile", "basic", "BCa"] = "percentile",
    stratify: ArrayLike | None = None,
    cluster: ArrayLike | None = None,
    rng: Seed = None,
    n_jobs: NJobs = None,
    progress: bool = False,
) -> BootstrapResult:
    """Bootstrap confidence interval of ``statistic(*data)``, resampling the samples together.

    Parameters
    ----------
    data : sequence of array_like, each of shape (n, ...)
        Paired arrays (for example ``(y_true, y_score)``): one resample draws
        the same rows of every array (SciPy's ``paired=True``).
    statistic : callable
        Called as ``statistic(*resampled_data)``; returns a number, or a
        result object whose ``statistic`` is one (such as
        :class:`PairedEvaluation`, whose ``statistic`` is its ``auc``). Four
        statistics take a compiled path (see Notes):
        :func:`pairmetrics.sklearn.roc_auc_score` and
        :func:`pairmetrics.sklearn.average_precision_score` on binary labels
        (``y_true, y_score``), :func:`pairmetrics.lifelines.concordance_index`
        (``event_times, predicted_scores[, event_observed]``) and
        :func:`paired_evaluation` (``y_true, y_score``; also as
        ``functools.partial(paired_evaluation, min_dist=...)``).
    n_resamples : int, default 9999
        Number of resamples.
    confidence_level : float, default 0.95
        Nominal coverage, in (0, 1).
    method : {"percentile", "basic", "BCa"}, default "percentile"
        SciPy's interval methods. "BCa" needs a jackknife: O(n) for
        :func:`roc_auc_score` without ``cluster``, ``n`` calls of
        ``statistic`` (or one per cluster) otherwise.
    stratify : array_like, shape (n,), optional
        Class labels: each resample draws within every class as many samples
        (or clusters) as it has, so class sizes stay fixed.
    cluster : array_like, shape (n,), optional
        Cluster labels: whole clusters are drawn with replacement.
    rng : None, int, numpy Generator, optional
        Randomness; the result depends only on it, never on ``n_jobs``.
    n_jobs : int, optional
        Threads of the compiled path (None: every usable core). The generic
        path calls ``statistic`` in this thread.
    progress : bool, default False
        Show a progress bar (tqdm, when installed).

    Returns
    -------
    BootstrapResult
        ``confidence_interval``, ``bootstrap_distribution`` and
        ``standard_error``, as :func:`scipy.stats.bootstrap`.

    Notes
    -----
    Every resample is a function of one seed drawn from ``rng``: the
    generic path calls ``statistic`` on the rows it draws; the compiled path
    sorts the samples once and sweeps that order with the resample's draw
    counts as integer weights, on ``n_jobs`` threads: O(n) per resample for
    :func:`~pairmetrics.sklearn.roc_auc_score` and
    :func:`~pairmetrics.sklearn.average_precision_score`, O(n log n) (a
    Fenwick tree over the scores) for
    :func:`~pairmetrics.lifelines.concordance_index` and
    :func:`paired_evaluation`. Both paths give the
    same replicates (up to rounding), so the compiled path is only faster.

    A replicate whose resample has no comparable pair (one class for the
    AUC, nothing rankable, no admissible pair) is NaN on the compiled path
    and left out of the interval; use ``stratify=y_true`` to keep both
    classes in every resample. (Called on such a resample,
    :func:`concordance_index` itself raises ``ZeroDivisionError``, as
    lifelines.)

    Examples
    --------
    >>> import numpy as np
    >>> from pairmetrics import bootstrap
    >>> from pairmetrics.sklearn import roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 500)
    >>> score = y + rng.normal(size=500)
    >>> result = bootstrap((y, score), roc_auc_score, n_resamples=999, stratify=y, rng=1)
    >>> low, high = result.confidence_interval
    >>> bool(low < roc_auc_score(y, score) < high), result.bootstrap_distribution.shape
    (True, (999,))
    """
    if not callable(statistic):
        raise TypeError(f"statistic must be callable, got {type(statistic).__name__}")
    arrays = _sample_arrays(data)
    n = arrays[0].shape[0]
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    level = check_real(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    chosen = check_choice(method, "method", _METHODS)
    generator = check_rng(rng)
    threads = resolve_n_jobs(n_jobs)
    show = check_progress(progress)
    design = resampling_design(n, stratify, cluster)
    estimate = _number(statistic(*arrays))  # first: bad input gets the statistic's own error
    seeds = generator.integers(0, 2**64, n_resamples, dtype=np.uint64, endpoint=False)
    sweep = _fast_sweep(statistic, arrays)
    if sweep is not None:
        replicates = _fast_replicates(sweep, design, seeds, threads, show)
    else:
        replicates = _generic_replicates(statistic, arrays, design, seeds, show)
    if sweep is not None and sweep.leave_one_out is not None and cluster is None:
        jackknife = sweep.leave_one_out
    else:
        units = _jackknife_groups(design, cluster is not None) or [np.array([i]) for i in range(n)]
        jackknife = _generic_jackknife(statistic, arrays, units)
    interval = _interval(chosen, replicates, estimate, level, jackknife)
    finite = replicates[~np.isnan(replicates)]
    standard_error = float(np.std(finite, ddof=1)) if finite.shape[0] > 1 else math.nan
    return BootstrapResult(interval, replicates, standard_error)


def _sample_arrays(data: Sequence[ArrayLike]) -> list[np.ndarray]:
    """The arrays of ``data``, checked: at least one, each with one row per sample, at least 2 samples."""
    if callable(data):
        raise TypeError("data must be a sequence of arrays: bootstrap(data, statistic), as scipy.stats.bootstrap")
    try:
        arrays = [np.asarray(d) for d in data]
    except TypeError:
        raise TypeError(f"data must be a sequence of arrays, got {type(data).__name__}") from None
    if not arrays:
        raise ValueError("data must hold at least one array")
    n = arrays[0].shape[0] if arrays[0].ndim else 0
    for k, arr in enumerate(arrays):
        if arr.ndim == 0 or arr.shape[0] != n:
            raise ValueError(f"data[{k}] must have one row per sample ({n}), got shape {arr.shape}")
    if n < 2:
        raise ValueError(f"data needs at least 2 samples, got {n}")
    return arrays


def _number(value: Any) -> float:
    """A statistic's value: a number, or the ``statistic`` of a result object."""
    return float(getattr(value, "statistic") if isinstance(value, Result) else value)  # noqa: B009


def _generic_replicates(
    statistic: Callable[..., Any],
    arrays: list[Any],
    design: _Design,
    seeds: npt.NDArray[np.uint64],
    show: bool,
) -> Floats:
    replicates = np.empty(seeds.shape[0])
    with progress_callback(show, "bootstrap") as callback:
        for r, seed in enumerate(seeds):
            index = _resample(design, seed)
            replicates[r] = _number(statistic(*(arr[index] for arr in arrays)))
            if callback is not None and r % 64 == 0:
                callback(r, seeds.shape[0])
    return replicates


def _generic_jackknife(statistic: Callable[..., Any], arrays: list[Any], units: list[Indices]) -> Callable[[], Floats]:
    """Leave-one-unit-out values of the statistic, computed only when BCa asks for them."""

    def jackknife() -> Floats:
        n = arrays[0].shape[0]
        values = np.empty(len(units))
        for k, unit in enumerate(units):
            keep = np.ones(n, dtype=bool)
            keep[unit] = False
            values[k] = _number(statistic(*(arr[keep] for arr in arrays)))
        return values

    return jackknife
