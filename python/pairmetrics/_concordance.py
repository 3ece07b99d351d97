"""Harrell's concordance of censored survival times with its infinitesimal-jackknife
variance (as R's ``survival::concordance``), for one model or k models."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from . import _core
from ._groups import GroupedConcordance, factorize_groups, grouped_result, segment_starts
from ._inference import ConfidenceInterval, ConfidenceIntervals, equality_test, normal_interval, normal_intervals
from ._result import Result
from ._routing import routed, warn
from ._typing import ArrayLike
from ._validation import as_exact_float64, as_numeric_array, as_vector, check_binary, resolve_n_jobs

__all__ = ["ConcordanceResult", "concordance"]

FloatOrArray = float | npt.NDArray[np.float64]
IntOrArray = int | npt.NDArray[np.int64]


@dataclasses.dataclass(frozen=True, eq=False)
class ConcordanceResult(Result):
    """Harrell's C of one model (1-D ``y_score``) or of k models (2-D).

    For k models every count, ``estimate`` and ``variance`` is an array of
    length k, and ``statistic``/``pvalue`` test that all k concordances are
    equal.

    Attributes
    ----------
    concordant, discordant : int or ndarray
        Comparable pairs ordered like / against their survival times.
    tied_predicted : int or ndarray
        Comparable pairs with equal predictions (R's ``tied.x``).
    tied_time : int or ndarray
        Pairs of two events at the same time with different predictions (R's
        ``tied.y``); such pairs are not comparable.
    tied_both : int or ndarray
        Pairs of two events at the same time with equal predictions (R's
        ``tied.xy``); not comparable.
    estimate : float or ndarray
        ``(concordant + tied_predicted / 2) / (concordant + discordant +
        tied_predicted)``, equal to :func:`concordance_index`; NaN when no
        pair is comparable.
    variance : float or ndarray
        The infinitesimal-jackknife variance of ``estimate``.
    covariance : ndarray, shape (k, k)
        The infinitesimal-jackknife covariance of the estimates (1 x 1 for
        one model).
    statistic, pvalue : float
        For k models, the chi-square statistic (``df`` degrees of freedom)
        and p-value of the test that all concordances are equal. For one
        model, ``statistic`` is the estimate and ``pvalue`` the two-sided
        normal p-value of the hypothesis that it is 1/2 (no better than
        chance), from its variance.
    df : int
        Rank of the covariance of the differences (0 for one model).
    n : int
        Number of samples.
    """

    concordant: IntOrArray
    discordant: IntOrArray
    tied_predicted: IntOrArray
    tied_time: IntOrArray
    tied_both: IntOrArray
    estimate: FloatOrArray
    variance: FloatOrArray
    covariance: npt.NDArray[np.float64]
    statistic: float
    pvalue: float
    df: int
    n: int

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval | ConfidenceIntervals:
        """Normal confidence interval for ``estimate``, clipped to [0, 1].

        Parameters
        ----------
        confidence_level : float, default 0.95
            Nominal coverage, in (0, 1).

        Returns
        -------
        ConfidenceInterval or ConfidenceIntervals
            ``estimate -+ z * sqrt(variance)``; unpacks as ``(low, high)``:
            floats for one model, arrays of length k (``ConfidenceIntervals``)
            for k models; NaN where nothing is comparable.
        """
        if np.ndim(self.estimate) == 0:
            return normal_interval(float(self.estimate), float(self.variance), confidence_level, 0.0, 1.0)
        return normal_intervals(self.estimate, self.variance, confidence_level, 0.0, 1.0)


def _chance_pvalue(estimate: float, variance: float) -> float:
    """Two-sided normal p-value of the hypothesis that a concordance is 1/2 (NaN without a variance)."""
    from scipy import stats

    if not (math.isfinite(estimate) and math.isfinite(variance) and variance > 0):
        return 1.0 if estimate == 0.5 and variance == 0 else math.nan  # a zero variance proves nothing
    return float(2 * stats.norm.sf(abs(estimate - 0.5) / math.sqrt(variance)))


def _times(time: Any) -> npt.NDArray[np.float64]:
    times = as_vector(time, "time", min_length=2)
    times = as_exact_float64(times, "time")
    if np.isnan(times).any():
        raise ValueError(f"time contains NaN (first at index {int(np.flatnonzero(np.isnan(times))[0])})")
    return times


def _events(event: Any, n: int) -> npt.NDArray[np.uint8]:
    if event is None:
        return np.ones(n, dtype=np.uint8)
    flags = as_vector(event, "event")
    if flags.shape[0] != n:
        raise ValueError(f"event and time must have the same length, got {flags.shape[0]} and {n}")
    check_binary(flags, "event")
    return np.ascontiguousarray(flags != 0).view(np.uint8)


def _predictions(y_score: Any, n: int) -> npt.NDArray[np.float64]:
    """``y_score`` as a (k, n) float64 array (no NaN; infinities are ordered like any value)."""
    arr = as_numeric_array(y_score, "y_score")
    if arr.ndim == 1:
        arr = arr[np.newaxis, :]
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"y_score must be 1-D (n,) or 2-D (k models, n samples), got shape {arr.shape}")
    if arr.shape[1] != n:
        raise ValueError(f"y_score must have one column per sample: got shape {arr.shape} for {n} samples")
    arr = as_exact_float64(arr, "y_score")
    if np.isnan(arr).any():
        raise ValueError("y_score contains NaN")
    return arr


def _strata_groups(strata: Any, n: int) -> list[npt.NDArray[np.intp]] | None:
    """Indices of each stratum (None: one stratum)."""
    if strata is None:
        return None
    _, codes = factorize_groups(strata, n, "time", "strata")
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds)


def concordance_components(
    times: npt.NDArray[np.float64],
    events: npt.NDArray[np.uint8],
    predicted: npt.NDArray[np.float64],
    groups: list[npt.NDArray[np.intp]] | None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Counts (concordant, discordant, tied_predicted, tied_time, tied_both) of one model and
    the per-sample counts (n, 3) of the concordant, discordant and prediction-tied comparable pairs
    each sample belongs to, within strata."""
    n = times.shape[0]
    totals = np.zeros(5, dtype=np.int64)
    per_sample = np.zeros((n, 3), dtype=np.float64)
    for index in [slice(None)] if groups is None else groups:
        counts = _core.concordance_pair_counts(times[index], events[index], predicted[index], 0.0)
        totals += concordance_totals(np.array([counts[k] for k in KERNEL_COUNTS], dtype=np.int64))
        per_sample[index] = counts["pairs"]  # pair_columns of the per-sample counts, in C++ (stops for Ctrl-C)
    return totals, per_sample


# The kernel's six counts in the order of its grouped (n_groups, 6) array.
KERNEL_COUNTS = ("below", "tied", "above", "tied_time", "event_pairs_tied_time", "event_pairs_tied_both")


def concordance_totals(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(concordant, discordant, tied_predicted, tied_time, tied_both) from the kernel's counts
    ``(..., 6)``: (below, tied, above, tied_time, event_pairs_tied_time, event_pairs_tied_both)."""
    below, tied, above, event_pairs, event_pairs_tied = (counts[..., j] for j in (0, 1, 2, 4, 5))
    return np.stack([above, below, tied, event_pairs - event_pairs_tied, event_pairs_tied], axis=-1)


def pair_columns(columns: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
    """Per-sample (concordant, discordant, tied) comparable pairs from the kernel's per-sample columns."""
    columns = columns.astype(np.float64)
    # earlier event: a later partner above is concordant; later member: an earlier event below is
    return np.stack(
        [columns[:, 2] + columns[:, 3], columns[:, 0] + columns[:, 5], columns[:, 1] + columns[:, 4]], axis=1
    )


def jackknife_influence(
    totals: npt.NDArray[np.int64], per_sample: npt.NDArray[np.float64], sizes: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[np.float64]:
    """R's ``dfbeta`` of Somers' d from the counts (the influence of each sample; NaN without pairs).
    With ``sizes``, totals has one row per group and per_sample is in the grouped kernel's order."""
    pairs = (totals[..., 0] + totals[..., 1] + totals[..., 2]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        somers_d = (totals[..., 0] - totals[..., 1]) / pairs
    if sizes is not None:
        pairs, somers_d = np.repeat(pairs, sizes), np.repeat(somers_d, sizes)
    with np.errstate(divide="ignore", invalid="ignore"):
        influence = ((per_sample[:, 0] - per_sample[:, 1]) - somers_d * per_sample.sum(axis=1)) / pairs
    return np.where(pairs > 0, influence, math.nan)


def concordance_estimate(totals: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Harrell's C of counts ``(..., 5)``: (concordant + tied_predicted / 2) / comparable pairs; NaN without pairs."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (totals[..., 0] + 0.5 * totals[..., 2]) / totals[..., :3].sum(axis=-1)


@overload
def concordance(
    time: ArrayLike,
    event: ArrayLike | None,
    y_score: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    groups: None = None,
) -> ConcordanceResult: ...
@overload
def concordance(
    time: ArrayLike,
    event: ArrayLike | None,
    y_score: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    groups: ArrayLike,
) -> GroupedConcordance: ...
@routed
def concordance(
    time: ArrayLike,
    event: ArrayLike | None,
    y_score: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    groups: ArrayLike | None = None,
) -> ConcordanceResult | GroupedConcordance:
    """Harrell's C for censored survival times with its variance, for one or k models.

    Parameters
    ----------
    time : array_like, shape (n,)
        Event or censoring times (``n >= 2``; no NaN).
    event : array_like of 0/1 or bool, shape (n,), or None
        1 where the event was observed, 0 where the time is censored; None
        means every event was observed.
    y_score : array_like, shape (n,) or (k, n)
        Predictions where **larger means longer survival** (lifelines'
        orientation; pass minus a risk score). A 2-D array holds k models
        scored on the same samples.
    strata : array_like, shape (n,), optional
        Stratum labels: only pairs inside one stratum count, pooled into one
        estimate.
    groups : array_like, shape (n,), optional
        Group keys (numbers, strings, any sortable keys; no NaN), one model
        only: one estimate per group (see Notes). Not together with
        ``strata``.

    Returns
    -------
    ConcordanceResult or GroupedConcordance
        The counts R's ``survival::concordance`` reports, ``estimate``,
        ``variance``, ``covariance``, the chi-square test of equal
        concordances for k models, and ``confidence_interval()``. With
        ``groups``, a :class:`GroupedConcordance`: each group's counts,
        ``estimate`` and ``variance`` (arrays aligned with its sorted
        ``groups``), their size-weighted ``mean`` and ``to_frame()``.

    Notes
    -----
    An event ``i`` is comparable with every sample of a later time and with
    a sample censored at its own time (two events at one time are not
    compared). The pair is concordant when the later sample has the larger
    prediction, tied when the predictions are equal (counted 1/2).

    The variance is the infinitesimal jackknife that R's ``survival``
    package computes (Therneau's vignette "The concordance statistic"): with
    ``N`` comparable pairs, Somers' ``d = (concordant - discordant) / N`` and
    ``c_i``, ``d_i``, ``t_i`` the concordant, discordant and tied comparable
    pairs sample ``i`` belongs to, the influence of sample ``i`` is
    ``u_i = ((c_i - d_i) - d * (c_i + d_i + t_i)) / N`` and
    ``Cov(C_a, C_b) = sum(u_a,i * u_b,i) / 4``. The equality test uses the
    k - 1 differences from the last model: ``x' (L V L')^+ x`` on as many
    degrees of freedom as ``L V L'`` has rank. Per-sample counts come from
    two sweeps over the samples in time order with a Fenwick tree over
    prediction ranks: O(k n log n) time, O(n) memory per model. Unlike R,
    times are compared exactly (no ``timefix`` rounding) and there are no
    case weights or time weights.

    ``strata`` and ``groups`` both keep pairs inside one stratum or group,
    but ``strata`` gives one pooled estimate (the counts of all strata
    added up, R's ``strata()``), while ``groups`` gives one estimate and
    variance per group, as separate calls on each group's samples would.
    Groups are computed in one pass: one sort with the group as the first
    key, then the kernel on each group's segment, threads spread over the
    groups. ``mean`` weights the groups' estimates by their numbers of
    samples; groups without a comparable pair are left out of it, with one
    warning.

    Examples
    --------
    >>> import numpy as np
    >>> from pairmetrics import concordance
    >>> result = concordance([1, 2, 3, 4, 5], [1, 1, 0, 1, 1], [1.0, 3.0, 2.0, 4.0, 5.0])
    >>> result.concordant, result.discordant, round(result.estimate, 4)
    (7, 1, 0.875)
    >>> low, high = result.confidence_interval()
    >>> bool(low < result.estimate < high)
    True
    >>> two = concordance([1, 2, 3, 4, 5], None, np.array([[1.0, 3, 2, 4, 5], [5.0, 4, 3, 2, 1]]))
    >>> two.estimate.round(2), round(two.pvalue, 4)
    (array([0.9, 0. ]), 0.0)
    >>> per_center = concordance([1, 2, 3, 4, 5, 6], None, [1.0, 3.0, 2.0, 4.0, 6.0, 5.0], groups=[0, 0, 0, 1, 1, 1])
    >>> per_center.estimate.round(4).tolist(), round(per_center.mean, 4)
    ([0.6667, 0.6667], 0.6667)
    """
    times = _times(time)
    n = times.shape[0]
    events = _events(event, n)
    models = _predictions(y_score, n)
    if groups is not None:
        if strata is not None:
            raise ValueError("pass strata (one pooled estimate) or groups (one estimate per group), not both")
        if models.shape[0] != 1:
            raise ValueError(f"groups takes one model (1-D y_score), got {models.shape[0]} models")
        return _grouped_concordance(times, events, models[0], groups)
    return _pooled_concordance(times, events, models, _strata_groups(strata, n), np.ndim(y_score) == 1)


def _pooled_concordance(
    times: npt.NDArray[Any],
    events: npt.NDArray[Any],
    models: npt.NDArray[Any],
    groups: list[npt.NDArray[np.intp]] | None,
    one_model: bool,
) -> ConcordanceResult:
    """concordance() without groups=: the k models' counts, pooled over the strata, and their covariance."""
    n = times.shape[0]
    counts, influence = [], []
    for row in models:
        totals, per_sample = concordance_components(times, events, row, groups)
        counts.append(totals)
        influence.append(jackknife_influence(totals, per_sample))
    table = np.array(counts)  # (k, 5)
    pairs = table[:, :3].sum(axis=1)
    if not pairs.all():
        warn("no pair of samples is comparable: the concordance is nan", RuntimeWarning)
    estimates = concordance_estimate(table)
    u = np.array(influence)  # (k, n)
    covariance = (u @ u.T) / 4
    statistic, pvalue, df = equality_test(estimates, covariance)
    if one_model:
        c, d, tp, tt, tb = (int(x) for x in table[0])
        estimate, variance = float(estimates[0]), float(covariance[0, 0])
        return ConcordanceResult(
            c, d, tp, tt, tb, estimate, variance, covariance, estimate, _chance_pvalue(estimate, variance), 0, n
        )
    return ConcordanceResult(
        table[:, 0].copy(),
        table[:, 1].copy(),
        table[:, 2].copy(),
        table[:, 3].copy(),
        table[:, 4].copy(),
        estimates,
        np.diag(covariance).copy(),
        covariance,
        statistic,
        pvalue,
        df,
        n,
    )


def _grouped_concordance(
    times: npt.NDArray[np.float64], events: npt.NDArray[np.uint8], predicted: npt.NDArray[np.float64], groups: Any
) -> GroupedConcordance:
    keys, codes = factorize_groups(groups, times.shape[0], "time")
    sizes = np.bincount(codes, minlength=keys.shape[0]).astype(np.int64)
    grouped = _core.grouped_concordance(
        times, events, np.ascontiguousarray(predicted), codes, keys.shape[0], resolve_n_jobs(None)
    )
    totals = concordance_totals(grouped["counts"].astype(np.int64))
    influence = jackknife_influence(totals, pair_columns(grouped["per_sample"]), sizes)
    variance = np.add.reduceat(influence * influence, segment_starts(sizes)) / 4
    c, d, tp, tt, tb = (totals[:, j] for j in range(5))
    return grouped_result(
        GroupedConcordance,
        keys,
        sizes,
        True,
        concordant=c,
        discordant=d,
        tied_predicted=tp,
        tied_time=tt,
        tied_both=tb,
        estimate=concordance_estimate(totals),
        variance=variance,
    )
