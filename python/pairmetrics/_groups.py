"""Per-group results in one call (``groups=``): the group keys and their codes, and
the one home of grouped results (their fields, size-weighted mean, table and repr).

The kernels get the keys as int64 codes 0 .. n_groups - 1 (the sorted unique
keys' positions) and compute every group in one pass; see ``cpp/grouped.hpp``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ._inference import ConfidenceIntervals, normal_intervals
from ._result import Result
from ._routing import is_dask
from ._routing import warn as warn_caller
from ._typing import FloatArray, IntArray

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GroupedResult",
    "GroupedPairedEvaluation",
    "GroupedPairedComparison",
    "GroupedRocAuc",
    "GroupedConcordance",
    "GroupedAveragePrecision",
    "GroupedNdcg",
]
# What the Dask layer (and only it) may use besides __all__: the plan and finish steps it shares.
__seams__ = ["refuse_dask_groups"]

GROUPS_NOTES = """
    With ``groups``, every group's numbers are those of the ungrouped call on
    that group's samples alone (pairs never cross groups), computed in one
    pass: one sort with the group as the first key, then the kernel on each
    group's segment, threads spread over the groups. ``mean`` is the mean of
    the groups' estimates weighted by their numbers of samples; groups whose
    estimate is NaN are left out of it, with one warning."""


def _missing_keys(keys: np.ndarray) -> np.ndarray:
    """Where group keys are missing: NaN, NaT, None or pandas' NA."""
    if keys.dtype.kind in "fc":
        return np.isnan(keys)
    if keys.dtype.kind in "mM":
        return np.isnat(keys)
    if keys.dtype == object:
        return np.array(
            [
                k is None or (isinstance(k, float) and math.isnan(k)) or type(k).__name__ in ("NAType", "NaTType")
                for k in keys
            ],
            dtype=bool,
        )
    return np.zeros(keys.shape[0], dtype=bool)


def _small_integer_codes(keys: np.ndarray) -> tuple[np.ndarray, IntArray] | None:
    """np.unique's answer without a sort, for integer keys in a range not much wider than their count
    (keys that are already codes 0 .. k - 1 are used as they are)."""
    if keys.dtype.kind not in "biu" or keys.size == 0:
        return None
    low, high = int(keys.min()), int(keys.max())
    if high - low > 2 * keys.size + 1024 or high >= 2**62:
        return None
    shifted = keys.astype(np.int64, copy=False)
    if low:
        shifted = shifted - low
    present = np.bincount(shifted) > 0
    unique = (np.flatnonzero(present) + low).astype(keys.dtype)
    if present.all():
        return unique, shifted
    return unique, np.take(np.cumsum(present) - 1, shifted)


def factorize_groups(groups: Any, n: int, other: str = "labels", name: str = "groups") -> tuple[np.ndarray, IntArray]:
    """(sorted unique keys, int64 code of every sample) of ``groups``, checked: 1-D, ``n`` entries
    (as many as ``other``), no missing key, sortable. ``name`` is the argument's name in messages."""
    if is_dask(groups):
        raise TypeError(f"{name} must be an in-memory array here (compute the Dask collection first)")
    try:
        keys = np.asarray(groups)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like: {exc}") from None
    if keys.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one key per sample), got shape {keys.shape}")
    if keys.shape[0] != n:
        raise ValueError(f"{name} has {keys.shape[0]} entries but {other} has {n}")
    missing = _missing_keys(keys)
    if missing.any():
        raise ValueError(f"{name} contains a missing key (NaN or None; first at index {int(np.argmax(missing))})")
    fast = _small_integer_codes(keys)
    if fast is not None:
        return fast
    try:
        unique, codes = np.unique(keys, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"{name} must hold keys that sort against each other: {exc}") from None
    return unique, codes.reshape(-1).astype(np.int64, copy=False)


def refuse_dask_groups(groups: Any, function: str) -> None:
    """The error of a grouped call on Dask input (no Dask implementation computes groups)."""
    if groups is not None:
        raise TypeError(
            f"{function}() does not take groups= with Dask collections; compute the inputs first "
            "(for example x.compute()) if they fit in memory"
        )


def segment_starts(sizes: IntArray) -> IntArray:
    """Where each group's segment starts in the kernels' group order (sizes are all positive)."""
    return np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedResult(Result):
    """Per-group results of one call: one entry per group in every array field.

    Attributes
    ----------
    groups : ndarray
        The distinct group keys, sorted; every per-group array is aligned
        with it.
    n_samples : ndarray of int64
        Samples in each group.
    mean : float
        The mean of the groups' estimates weighted by ``n_samples``, over
        the groups whose estimate is defined (NaN when none is).
    """

    groups: np.ndarray
    n_samples: IntArray
    mean: float
    _estimate: ClassVar[str] = ""
    _undefined: ClassVar[str] = ""
    _range: ClassVar[tuple[float, float]] = (0.0, 1.0)

    def _estimate_variance(self) -> FloatArray | None:
        """Each group's variance of the estimate (None when it was not computed)."""
        return getattr(self, "variance", None)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceIntervals:
        """Each group's normal confidence interval of its estimate.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Nominal coverage, in (0, 1).

        Returns
        -------
        ConfidenceIntervals
            ``low`` and ``high``, arrays aligned with ``groups`` (clipped to
            the estimate's range; NaN where the estimate or its variance is
            undefined); unpacks as ``(low, high)``.

        Raises
        ------
        ValueError
            When the variance was not computed (see the function's notes).
        """
        variance = self._estimate_variance()
        if variance is None:
            raise ValueError(
                f"the variance of each group's {self._estimate} was not computed: it is computed by default up "
                "to 100000 samples; pass variance=True to paired_evaluation(..., groups=...)"
            )
        return normal_intervals(getattr(self, self._estimate), variance, confidence_level, *self._range)

    def to_frame(self) -> pd.DataFrame:
        """The per-group arrays as a pandas DataFrame indexed by group.

        Returns
        -------
        pandas.DataFrame
            One row per group (index ``group``), one column per per-group
            field.

        Raises
        ------
        ImportError
            When pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame() needs pandas: pip install pandas") from None
        columns = {name: getattr(self, name) for name in self._columns()}
        return pd.DataFrame(columns, index=pd.Index(self.groups, name="group"))

    def _columns(self) -> list[str]:
        """The per-group array fields besides ``groups``."""
        n = self.groups.shape[0]
        return [
            name
            for name in self._public_fields()
            if name != "groups" and isinstance(getattr(self, name), np.ndarray) and getattr(self, name).shape == (n,)
        ]

    def __repr__(self) -> str:
        name = type(self).__name__
        return (
            f"{name}({self.groups.shape[0]} groups, mean {self._estimate}={self.mean:.6g}; "
            f"per group: {', '.join(self._columns())}; to_frame() for a table)"
        )


def grouped_result(cls: type[Any], keys: np.ndarray, sizes: IntArray, warn: bool, **fields: Any) -> Any:
    """The result of class ``cls`` from its per-group fields: adds the size-weighted mean of the
    estimate and (with ``warn``) warns once when some groups' estimate is NaN."""
    estimate = np.asarray(fields[cls._estimate], dtype=np.float64)
    defined = ~np.isnan(estimate)
    if warn and not defined.all():
        missing = int(np.count_nonzero(~defined))
        warn_caller(
            f"{missing} of {estimate.shape[0]} groups have {cls._undefined}: their {cls._estimate} is nan and "
            "left out of the mean",
            RuntimeWarning,
        )
    weight = sizes[defined].astype(np.float64)
    mean = float(weight @ estimate[defined] / weight.sum()) if defined.any() else math.nan
    return cls(groups=keys, n_samples=sizes, mean=mean, **fields)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedPairedEvaluation(GroupedResult):
    """:func:`paired_evaluation` of every group, from one call with ``groups=``.

    Attributes
    ----------
    groups, n_samples, mean
        As in :class:`GroupedResult`; ``mean`` averages ``auc``.
    n_rankable, n_correct, n_tied, n_incorrect : ndarray of int64
        Each group's pair counts (pairs inside the group).
    auc : ndarray of float64
        Each group's AUC (NaN where nothing is rankable).
    variance : ndarray of float64 or None
        Each group's variance of ``auc`` (as
        :meth:`PairedEvaluation.confidence_interval` uses it; per-class
        DeLong factors when the group's labels are binary), or None when it
        was not computed.
    min_dist : float
        The label separation that made a pair rankable.
    """

    n_rankable: IntArray
    n_correct: IntArray
    n_tied: IntArray
    n_incorrect: IntArray
    auc: FloatArray
    variance: FloatArray | None
    min_dist: float
    _estimate: ClassVar[str] = "auc"
    _undefined: ClassVar[str] = "nothing rankable"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedPairedComparison(GroupedResult):
    """:func:`compare_models` of two models in every group, from one call with ``groups=``.

    Attributes
    ----------
    groups, n_samples, mean
        As in :class:`GroupedResult`; ``mean`` averages ``auc_difference``.
    n_rankable : ndarray of int64
        Each group's rankable pairs.
    auc_a, auc_b, auc_difference : ndarray of float64
        Each group's AUCs of the two models and their difference.
    variance_a, variance_b, covariance : ndarray of float64
        Each group's (co)variance estimates of the two AUCs (DeLong's for
        binary labels), as in :class:`ModelComparison`.
    statistic, pvalue : ndarray of float64
        Each group's normal test of equal AUCs: ``auc_difference`` over its
        standard error, and the two-sided p-value (the square root of
        :class:`ModelComparison`'s chi-square statistic for two models,
        with its sign).
    """

    n_rankable: IntArray
    auc_a: FloatArray
    auc_b: FloatArray
    auc_difference: FloatArray
    variance_a: FloatArray
    variance_b: FloatArray
    covariance: FloatArray
    statistic: FloatArray
    pvalue: FloatArray
    _estimate: ClassVar[str] = "auc_difference"
    _undefined: ClassVar[str] = "nothing rankable"
    _range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    def _estimate_variance(self) -> FloatArray:
        spread: FloatArray = self.variance_a + self.variance_b - 2 * self.covariance
        return np.maximum(spread, 0.0)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedRocAuc(GroupedResult):
    """:func:`pairmetrics.sklearn.roc_auc_score` of every group (binary ``y_true``), from one call with ``groups=``.

    Attributes
    ----------
    groups, n_samples, mean
        As in :class:`GroupedResult`; ``mean`` averages ``auc``.
    auc : ndarray of float64
        Each group's ROC AUC (partial, McClish-corrected, with ``max_fpr``);
        NaN where the group has one class only (or a class without weight).
    n_positive, n_negative : ndarray of int64
        Each group's positive and negative samples.
    variance : ndarray of float64 or None
        Each group's DeLong variance of ``auc`` (for
        :meth:`~GroupedResult.confidence_interval`): computed without
        ``sample_weight`` and ``max_fpr`` up to 100,000 samples in all; None
        otherwise (``paired_evaluation(y_true, y_score, groups=...,
        variance=True)`` gives it for larger unweighted inputs).
    """

    auc: FloatArray
    n_positive: IntArray
    n_negative: IntArray
    variance: FloatArray | None
    _estimate: ClassVar[str] = "auc"
    _undefined: ClassVar[str] = "one class only"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedConcordance(GroupedResult):
    """:func:`concordance` of every group (one model), from one call with ``groups=``.

    Attributes
    ----------
    groups, n_samples, mean
        As in :class:`GroupedResult`; ``mean`` averages ``estimate``.
    concordant, discordant, tied_predicted, tied_time, tied_both : ndarray of int64
        Each group's counts, as in :class:`ConcordanceResult`.
    estimate : ndarray of float64
        Each group's Harrell's C (NaN where no pair is comparable).
    variance : ndarray of float64
        Each group's infinitesimal-jackknife variance of ``estimate``.
    """

    concordant: IntArray
    discordant: IntArray
    tied_predicted: IntArray
    tied_time: IntArray
    tied_both: IntArray
    estimate: FloatArray
    variance: FloatArray
    _estimate: ClassVar[str] = "estimate"
    _undefined: ClassVar[str] = "no comparable pair"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedAveragePrecision(GroupedResult):
    """:func:`average_precision_score` of every group (binary ``y_true``), from one call with ``groups=``.

    Attributes
    ----------
    groups, n_samples, mean
        As in :class:`GroupedResult`; ``mean`` averages ``average_precision``.
    average_precision : ndarray of float64
        Each group's average precision; NaN where the group has no positive
        sample (of nonzero weight).
    n_positive : ndarray of int64
        Positives in each group.
    """

    average_precision: FloatArray
    n_positive: IntArray
    _estimate: ClassVar[str] = "average_precision"
    _undefined: ClassVar[str] = "no positive sample"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GroupedNdcg(GroupedResult):
    """:func:`ndcg_score` of every group of rows (one group per query, say), from one call with ``groups=``.

    Attributes
    ----------
    groups, n_samples, mean
        As in :class:`GroupedResult`; ``mean`` averages ``ndcg`` (weighted by
        the groups' numbers of rows, which is the mean over all rows without
        ``sample_weight``).
    ndcg : ndarray of float64
        Each group's mean NDCG over its rows (weighted by ``sample_weight``);
        NaN where the weights of a group sum to zero.
    """

    ndcg: FloatArray
    _estimate: ClassVar[str] = "ndcg"
    _undefined: ClassVar[str] = "no weight"
