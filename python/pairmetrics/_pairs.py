"""The rankable-pair pieces shared by paired evaluation, compare_models, ROC AUC and the rank state.

Input vectors and their facts, the label extremes, the ddof factors and per-sample components of the
variance of a concordance (DeLong for binary labels, the one-sample U-statistic otherwise), the AUC of
pair counts, the grouped kernel's counts, and the warnings these results share. Written once here so
that no capability module imports another's internals.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from . import _core
from ._groups import segment_starts
from ._progress import progress_callback
from ._routing import warn as warn_caller
from ._typing import ArrayLike, FloatArray, IntArray
from ._validation import Nonfinite, as_vector, check_bool, check_same_length, first_nonfinite_entry

__all__: list[str] = []
# What the Dask layer may use: the facts of paired inputs, the label extremes and the variance terms.
__seams__ = [
    "PairedFacts",
    "auc_components",
    "component_factors",
    "label_extremes",
    "merge_label_extremes",
    "pair_totals",
    "sample_counts",
]


@dataclasses.dataclass(frozen=True)
class PairedFacts:
    """What the checks of paired evaluation need to know of its (length-checked) inputs."""

    n_samples: int
    scores_nonfinite: Nonfinite
    labels_nonfinite: Nonfinite


def vectors_and_facts(
    scores: ArrayLike, labels: ArrayLike, scores_name: str = "y_score", labels_name: str = "y_true"
) -> tuple[np.ndarray, np.ndarray, PairedFacts]:
    """(scores, labels) as vectors of one length, and their facts; the names are those of the caller's arguments."""
    scores = as_vector(scores, scores_name, min_length=2)
    labels = as_vector(labels, labels_name, min_length=2)
    check_same_length(scores, labels, scores_name, labels_name)
    # Both arrays go to the kernel in their own dtype (no copy): integer labels
    # are compared exactly there, whatever their size and signedness.
    facts = PairedFacts(labels.shape[0], first_nonfinite_entry(scores), first_nonfinite_entry(labels))
    return scores, labels, facts


# Up to this many samples paired_evaluation also computes the variance of auc
# by default (per-sample counts cost up to about 3 times the plain counts).
CHEAP_VARIANCE_SAMPLES = 100_000


def wants_variance(n: int, variance: bool | None) -> bool:
    """Whether paired_evaluation computes the variance: on request, else up to CHEAP_VARIANCE_SAMPLES."""
    return n <= CHEAP_VARIANCE_SAMPLES if variance is None else check_bool(variance, "variance")


def label_extremes(labels: Any) -> tuple[Any, int, Any, int]:
    """(smallest label, its count, largest label, its count) of a label array (or block)."""
    low, high = labels.min(), labels.max()
    return low, int(np.count_nonzero(labels == low)), high, int(np.count_nonzero(labels == high))


def merge_label_extremes(extremes: Any) -> tuple[Any, int, Any, int]:
    """The label_extremes of the concatenation of arrays from theirs."""
    low = min(e[0] for e in extremes)
    high = max(e[2] for e in extremes)
    return low, sum(e[1] for e in extremes if e[0] == low), high, sum(e[3] for e in extremes if e[2] == high)


def ddof_factor(m: Any) -> Any:
    """``m / (m - 1)``, the ddof-1 factor of ``m`` samples; NaN for a lone sample (a class of one has
    no spread to estimate: the variance is undefined, not zero); elementwise for arrays."""
    m = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(m > 1, m / np.maximum(m - 1, 1), np.where(m == 1, math.nan, 1.0))


def labels_are_binary(extremes: tuple[Any, Any, Any, Any], n: Any) -> Any:
    """Whether labels with these label_extremes (scalars, or arrays per group) take exactly two values."""
    low, n_low, high, n_high = extremes
    return (low != high) & (n_low + n_high == n)


def component_factors(labels: Any, extremes: tuple[Any, int, Any, int], n: int) -> FloatArray:
    """Per-sample ddof factors ``f_i`` of the variance (see _INTERVAL_NOTES) of a label array
    (or block) given the label_extremes of all ``n`` labels: per class for binary labels
    (DeLong), ``n / (n - 1)`` otherwise."""
    low, n_low, high, n_high = extremes
    if labels_are_binary(extremes, n):
        return np.where(labels == low, ddof_factor(n_low), ddof_factor(n_high))
    return np.full(labels.shape[0], float(ddof_factor(n)))


def variance_factors(n_low: int, n_high: int, n: int) -> tuple[float, float, float]:
    """The ddof factors ``f_i`` of the variance (see _INTERVAL_NOTES) of the samples with the
    smallest label, those with the largest (``n_high`` is 0 when every label is equal) and the
    rest, among ``n``: per class for binary labels (DeLong; the rest is then empty and its
    factor NaN), ``n / (n - 1)`` for every sample otherwise."""
    if n_high and n_low + n_high == n:
        return float(ddof_factor(n_low)), float(ddof_factor(n_high)), math.nan
    return (float(ddof_factor(n)),) * 3


def pair_totals(kernel: dict[str, Any]) -> tuple[int, int, int, int]:
    """(rankable, correct, tied, incorrect) of the paired kernels' result (``_core.paired_counts``, ``paired_moments``)."""
    return int(kernel["rankable"]), int(kernel["correct"]), int(kernel["tied"]), int(kernel["incorrect"])


def sample_counts(kernel: dict[str, Any]) -> tuple[IntArray, IntArray, IntArray]:
    """The per-sample (rankable, tied, incorrect) of ``_core.paired_counts(..., per_sample=True)``."""
    return kernel["sample_rankable"], kernel["sample_tied"], kernel["sample_incorrect"]


MOMENT_GROUPS = ("lowest", "highest", "others")


def moment_square_sum(kernel: dict[str, Any]) -> float:
    """``sum(f_i * g_i**2)`` (the g_i of auc_components) from the exact sums of the per-sample counts of
    ``_core.paired_moments`` (samples, r, q, rr, qr, qq for the samples with the smallest label, the largest
    and the rest).

    With ``q_i = 2 * correct_i + tied_i`` and ``Q = 2 * n_correct + n_tied``, ``g_i = (R q_i - Q r_i) / (2 R)``:
    the sum of squares of a group is an exact integer over ``4 R**2``, rounded once.
    """
    rankable, correct, tied, _ = pair_totals(kernel)
    if not rankable:
        return 0.0
    big_q = 2 * correct + tied
    groups = [kernel[g] for g in MOMENT_GROUPS]
    factors = variance_factors(groups[0]["samples"], groups[1]["samples"], sum(int(g["samples"]) for g in groups))
    total = 0.0
    for factor, group in zip(factors, groups):
        if group["samples"]:
            rr, qr, qq = group["rr"], group["qr"], group["qq"]
            numerator = rankable * rankable * qq - 2 * rankable * big_q * qr + big_q * big_q * rr
            total += factor * (numerator / (4 * rankable * rankable))
    return total


def sample_factors(labels: np.ndarray) -> FloatArray:
    """component_factors of a whole label array."""
    return component_factors(labels, label_extremes(labels), labels.shape[0])


def group_factors(labels: np.ndarray, sizes: IntArray) -> FloatArray:
    """component_factors of every group, for labels in the grouped kernels' order (group by group)."""
    starts = segment_starts(sizes)
    low, high = np.minimum.reduceat(labels, starts), np.maximum.reduceat(labels, starts)
    is_low, is_high = labels == np.repeat(low, sizes), labels == np.repeat(high, sizes)
    n_low, n_high = np.add.reduceat(is_low, starts), np.add.reduceat(is_high, starts)
    binary = np.repeat(labels_are_binary((low, n_low, high, n_high), sizes), sizes)
    per_class = np.where(is_low, np.repeat(ddof_factor(n_low), sizes), np.repeat(ddof_factor(n_high), sizes))
    return np.where(binary, per_class, np.repeat(ddof_factor(sizes), sizes))


def warn_undefined_variance() -> None:
    """The warning of an interval or test whose variance is undefined (a class of one sample)."""
    warn_caller("a class of the labels has a single sample: the variance is undefined (nan)", RuntimeWarning)


def warn_nothing_rankable(what: str = "") -> None:
    """The warning of a call where no pair of labels is min_dist apart (pointing at the caller's line)."""
    warn_caller("no pair of labels is min_dist apart: nothing is rankable" + what, RuntimeWarning)


def variance_of_sum(weighted_square_sum: Any, rankable: Any) -> Any:
    """``sum(f_i g_i**2) / n_rankable**2`` (elementwise for groups); NaN where nothing is rankable."""
    rankable = np.asarray(rankable, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rankable > 0, np.asarray(weighted_square_sum, dtype=np.float64) / rankable**2, math.nan)


def auc_of_counts(counts: Any) -> Any:
    """``(correct + tied / 2) / rankable`` of counts ``(..., 4)`` (elementwise); NaN where nothing is rankable."""
    counts = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts[..., 0] > 0, (counts[..., 1] + 0.5 * counts[..., 2]) / counts[..., 0], math.nan)


def auc_components(counts: Any, per_sample: tuple[IntArray, ...], sizes: IntArray | None = None) -> FloatArray:
    """``g_i = credit_i - auc * r_i`` from the kernel's per-sample counts; with ``sizes``, counts
    holds one row per group and the per-sample counts are in the grouped kernels' order."""
    rankable, tied, incorrect = per_sample
    evaluation_auc = auc_of_counts(counts)
    if sizes is not None:
        evaluation_auc = np.repeat(evaluation_auc, sizes)
    credit = (rankable - tied - incorrect).astype(np.float64) + 0.5 * tied
    return credit - evaluation_auc * rankable


def grouped_pair_counts(
    scores: np.ndarray,
    labels: np.ndarray,
    min_dist: float,
    codes: IntArray,
    n_groups: int,
    per_sample: bool,
    threads: int,
    progress: bool,
    what: str,
) -> tuple[IntArray, tuple[np.ndarray, ...]]:
    """Every group's counts (n_groups, 4) from the grouped kernel, and with per_sample (order,
    rankable, tied, incorrect) in its group order."""
    with progress_callback(progress, what) as callback:
        output = _core.grouped_paired_counts(
            scores, labels, codes, n_groups, min_dist, per_sample, threads, progress=callback
        )
    rest = tuple(output[k] for k in ("order", "rankable", "tied", "incorrect")) if per_sample else ()
    return output["counts"].astype(np.int64), rest


def grouped_auc_variance(
    labels: np.ndarray, counts: IntArray, per_sample: tuple[np.ndarray, ...], sizes: IntArray
) -> FloatArray:
    """Every group's variance of auc from the grouped kernel's per-sample output (order, rankable, tied,
    incorrect)."""
    order, rest = per_sample[0], per_sample[1:]
    g = auc_components(counts, rest, sizes)
    weighted = np.add.reduceat(group_factors(labels[order], sizes) * (g * g), segment_starts(sizes))
    return variance_of_sum(weighted, counts[:, 0])
