"""The 2 vs 2 test for vector predictions (word vectors, decoded brain activity, ...)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._distances import check_row_report, undefined_rows
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._skeleton import LayerEqual, Skeleton
from ._typing import ArrayLike, FloatArray, IntArray, NJobs, Seed
from ._validation import (
    Nonfinite,
    as_matrix,
    check_choice,
    check_int,
    check_nonnegative_finite,
    check_progress,
    check_rng,
    first_nonfinite_entry,
    raise_if_nonfinite,
    resolve_n_jobs,
)

__all__ = [
    "two_vs_two",
    "two_vs_two_permutation_test",
    "TwoVsTwoResult",
    "TwoVsTwoPermutationResult",
]
# What the Dask layer (and only it) may use besides __all__: the skeletons, their facts and counts, the shape rules.
__seams__ = [
    "PermutationCounts",
    "TWO_VS_TWO",
    "TWO_VS_TWO_PERMUTATION",
    "TwoVsTwoCounts",
    "TwoVsTwoFacts",
    "beyond_float64",
    "check_same_shape",
    "working_dtype",
]

METRICS = ("cosine", "correlation", "euclidean", "sqeuclidean")
TIES = ("fail", "pass", "half", "exclude")
PAIR_MODES = ("all", "distinct_targets")
ALTERNATIVES = ("greater", "less", "two-sided")

# A permutation test keeps the n x n matrix of products and its transpose
# while the two fit in this many bytes.
_TERMS_MEMORY_LIMIT = 1 << 30
# Permutations handed to the kernel at once (bounds the index memory).
_PERMUTATION_CHUNK = 64


@dataclasses.dataclass(frozen=True, eq=False)
class TwoVsTwoResult(Result):
    """Outcome of :func:`two_vs_two`.

    Attributes
    ----------
    n_passed : int or float
        Passed pairs, ties credited by the tie rule (a multiple of 0.5 for
        ``ties="half"``, an int otherwise).
    n_total : int
        Pairs in the denominator (tied pairs are left out for ``ties="exclude"``).
    accuracy : float
        ``n_passed / n_total`` (NaN when ``n_total`` is 0).
    n_strict_passed : int
        Pairs that pass outright, whatever the tie rule.
    n_tied : int
        Pairs judged tied: identical targets or identical predictions, or
        ``|lhs - rhs| <= rtol * scale`` (see :func:`two_vs_two`).
    n_pairs : int
        Pairs evaluated (all ``n (n - 1) / 2`` pairs, those with distinct
        targets, or the sampled ones), before any exclusion of ties.
    standard_error : float or None
        For sampled pairs, the standard error of ``accuracy`` as an estimate
        of the all-pairs accuracy; None when every pair was evaluated.
    sample_accuracy : ndarray of float, shape (n,)
        Per-sample pass rate: the accuracy over the evaluated pairs that
        contain sample ``i`` (same tie rule); NaN where there are none.
    metric, ties, pairs, rtol :
        The options used (``rtol`` after resolving the default).
    """

    n_passed: int | float
    n_total: int
    accuracy: float
    n_strict_passed: int
    n_tied: int
    n_pairs: int
    standard_error: float | None
    sample_accuracy: FloatArray = dataclasses.field(repr=False)
    metric: str
    ties: str
    pairs: str | int
    rtol: float


@dataclasses.dataclass(frozen=True, eq=False)
class TwoVsTwoPermutationResult(Result):
    """Outcome of :func:`two_vs_two_permutation_test`; unpacks as ``(statistic, pvalue)``.

    Attributes
    ----------
    statistic : float
        The observed 2 vs 2 accuracy.
    pvalue : float
        For ``alternative="greater"``,
        ``(1 + #{permutations with accuracy >= statistic}) / (1 + n_resamples)``;
        ``<=`` for "less"; twice the smaller of the two (at most 1) for
        "two-sided".
    null_distribution : ndarray of float, shape (n_resamples,)
        The accuracy under each permutation.
    n_resamples : int
        The number of permutations.
    observed : TwoVsTwoResult
        The full result for the unpermuted data.
    alternative : str
        The alternative hypothesis used.
    """

    statistic: float
    pvalue: float
    null_distribution: FloatArray = dataclasses.field(repr=False)
    n_resamples: int
    observed: TwoVsTwoResult = dataclasses.field(repr=False)
    alternative: str = "greater"

    _unpack = ("statistic", "pvalue")


# ---------------------------------------------------------------------------
# validation and preparation


def default_rtol(dtype: npt.DTypeLike, n_features: int) -> float:
    """The default tie tolerance: ``8 * sqrt(d) * eps`` of the working dtype."""
    return 8.0 * math.sqrt(n_features) * float(np.finfo(dtype).eps)


@dataclasses.dataclass(frozen=True, eq=False)
class TwoVsTwoFacts(LayerEqual):
    """What the checks of the 2 vs 2 test need: the shape and working dtype, each input's first
    non-finite entry, the first input too large for float64 (long doubles), the rows the named
    metric is undefined for (global indices) and each input's largest magnitude (0 where not needed)."""

    n: int
    d: int
    dtype: type[np.floating[Any]]
    nonfinite: tuple[Nonfinite, Nonfinite]
    beyond_float64: str | None
    undefined: tuple[np.ndarray, np.ndarray]
    largest: tuple[float, float]


_NO_ROWS = np.empty(0, np.intp)


def _in_memory_facts(y_true: Any, y_pred: Any, metric: str) -> tuple[np.ndarray, np.ndarray, TwoVsTwoFacts]:
    """The inputs as matrices of the working dtype and their facts (the rows of the metric as named)."""
    y = as_matrix(y_true, "y_true", min_rows=2)
    p = as_matrix(y_pred, "y_pred", min_rows=2)
    check_same_shape(y, p)
    (n, d), dtype = y.shape, working_dtype(y, p)
    nonfinite = first_nonfinite_entry(y), first_nonfinite_entry(p)
    beyond = None
    if nonfinite == (None, None):
        beyond = next((name for name, x in (("y_true", y), ("y_pred", p)) if beyond_float64(x)), None)
    if nonfinite != (None, None) or beyond is not None:
        return y, p, TwoVsTwoFacts(n, d, dtype, nonfinite, beyond, (_NO_ROWS, _NO_ROWS), (0.0, 0.0))
    y, p = np.asarray(y, dtype=dtype), np.asarray(p, dtype=dtype)
    undefined = undefined_rows(y, metric), undefined_rows(p, metric)
    largest = tuple(float(np.max(np.abs(x))) if metric != "cosine" else 0.0 for x in (y, p))
    return y, p, TwoVsTwoFacts(n, d, dtype, nonfinite, None, undefined, largest)  # type: ignore[arg-type]


def beyond_float64(x: np.ndarray) -> bool:
    """Whether a (long double) array holds values too large for float64."""
    return x.dtype.kind == "f" and x.dtype.itemsize > 8 and bool(np.abs(x).max() > np.finfo(np.float64).max)


@dataclasses.dataclass(frozen=True, eq=False)
class TwoVsTwoPlan(LayerEqual):
    """The checked options, and the sampled pairs (first, second) when ``pairs`` is an int."""

    n: int
    metric: str
    ties: str
    pairs: str | int
    rtol: float
    first: IntArray | None = None
    second: IntArray | None = None

    @property
    def skip_same_target(self) -> bool:
        return self.pairs == "distinct_targets"


@dataclasses.dataclass(frozen=True, eq=False)
class TwoVsTwoCounts(LayerEqual):
    """Totals (passed, tied, skipped), per-sample passed and tied counts, and with all pairs and
    distinct targets, per sample the other samples with its target (skipped)."""

    totals: tuple[int, int, int]
    sample_passed: np.ndarray
    sample_tied: np.ndarray
    same_target: np.ndarray | None = None


def _plan_two_vs_two(
    facts: TwoVsTwoFacts, metric: str, ties: str, pairs: object, rtol: float | None, generator: np.random.Generator
) -> TwoVsTwoPlan:
    """Every value check of the 2 vs 2 test, in order; draws the sampled pairs from ``generator``."""
    metric = check_choice(metric, "metric", METRICS)
    raise_if_nonfinite(facts.nonfinite[0], "y_true")
    raise_if_nonfinite(facts.nonfinite[1], "y_pred")
    if facts.beyond_float64 is not None:
        raise ValueError(f"{facts.beyond_float64} has values too large for float64")
    for k, name in enumerate(("y_true", "y_pred")):
        check_row_report(name, metric, facts.dtype, facts.d, facts.undefined[k], facts.largest[k])
    ties = check_choice(ties, "ties", TIES)
    pairs = resolve_pairs(pairs, facts.n)
    plan = TwoVsTwoPlan(facts.n, metric, ties, pairs, resolve_rtol(rtol, facts.dtype, facts.d))
    if isinstance(pairs, int):
        first, second = sample_pairs(facts.n, pairs, generator)
        plan = dataclasses.replace(plan, first=first, second=second)
    return plan


def _finish_two_vs_two(plan: TwoVsTwoPlan, counts: TwoVsTwoCounts) -> TwoVsTwoResult:
    return result_from_counts(
        plan.n,
        counts.totals,
        counts.sample_passed,
        counts.sample_tied,
        metric=plan.metric,
        ties=plan.ties,
        pairs=plan.pairs,
        rtol=plan.rtol,
        same_target=counts.same_target if plan.skip_same_target else None,
        first=plan.first,
        second=plan.second,
    )


TWO_VS_TWO = Skeleton("two_vs_two", _plan_two_vs_two, _finish_two_vs_two)


@dataclasses.dataclass(frozen=True, eq=False)
class PermutationPlan(LayerEqual):
    """The checked options of the permutation test: the 2 vs 2 plan, the resamples, the alternative."""

    test: TwoVsTwoPlan
    n_resamples: int
    alternative: str


@dataclasses.dataclass(frozen=True, eq=False)
class PermutationCounts(LayerEqual):
    """The observed counts and, per permutation, the passed and tied pairs."""

    observed: TwoVsTwoCounts
    null_passed: np.ndarray
    null_tied: np.ndarray


def _plan_permutation(
    facts: TwoVsTwoFacts,
    n_resamples: int,
    alternative: str,
    metric: str,
    ties: str,
    pairs: object,
    rtol: float | None,
    generator: np.random.Generator,
) -> PermutationPlan:
    """Every value check of the permutation test, in order (the sampled pairs are drawn first)."""
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    return PermutationPlan(_plan_two_vs_two(facts, metric, ties, pairs, rtol, generator), n_resamples, alternative)


def _finish_permutation(plan: PermutationPlan, counts: PermutationCounts) -> TwoVsTwoPermutationResult:
    observed = _finish_two_vs_two(plan.test, counts.observed)
    return permutation_result(observed, counts.null_passed, counts.null_tied, plan.alternative)


TWO_VS_TWO_PERMUTATION = Skeleton("two_vs_two_permutation_test", _plan_permutation, _finish_permutation)


def check_same_shape(y: Any, p: Any) -> None:
    """y_true and y_pred (numpy or Dask) must have one shape."""
    if y.shape != p.shape:
        raise ValueError(f"y_true and y_pred must have the same shape, got {y.shape} and {p.shape}")


def working_dtype(y: Any, p: Any) -> type[np.floating[Any]]:
    """float32 when both inputs are float32 (no copy), float64 for everything else."""
    return np.float32 if (y.dtype == np.float32 and p.dtype == np.float32) else np.float64


def resolve_pairs(pairs: object, n: int) -> str | int:
    n_all = n * (n - 1) // 2
    if isinstance(pairs, str):
        return check_choice(pairs, "pairs", PAIR_MODES)
    try:
        return check_int(pairs, "pairs", low=1, high=n_all)
    except TypeError:
        raise TypeError(f"pairs must be 'all', 'distinct_targets' or an int, got {type(pairs).__name__}") from None
    except ValueError:
        raise ValueError(f"pairs must lie in [1, n(n-1)/2] = [1, {n_all}] for n = {n}, got {pairs}") from None


def resolve_rtol(rtol: float | None, dtype: npt.DTypeLike, d: int) -> float:
    if rtol is None:
        return default_rtol(dtype, d)
    return check_nonnegative_finite(rtol, "rtol")


def sample_pairs(n: int, m: int, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
    """``m`` distinct pairs i < j drawn uniformly without replacement, sorted."""
    n_all = n * (n - 1) // 2
    k = np.sort(rng.choice(n_all, size=m, replace=False)).astype(np.int64)
    # Row i starts at offset s(i) = i (2n - i - 1) / 2 of the upper triangle.
    i = np.floor(((2 * n - 1) - np.sqrt((2.0 * n - 1) ** 2 - 8.0 * k)) / 2).astype(np.int64)
    i = np.clip(i, 0, n - 2)

    def start(r: IntArray) -> IntArray:
        return r * (2 * n - r - 1) // 2

    for _ in range(2):  # the float estimate is off by at most one
        i = np.where(start(i) > k, i - 1, i)
        i = np.where(start(i + 1) <= k, i + 1, i)
    j = k - start(i) + i + 1
    return i, j


# ---------------------------------------------------------------------------
# counting


class _InMemory:
    """The counter of in-memory inputs: the prepared matrices, their row groups and the threads."""

    def __init__(self, y: np.ndarray, p: np.ndarray, n_jobs: NJobs) -> None:
        self.y, self.p = y, p
        self.n_threads = resolve_n_jobs(n_jobs)
        self.group_y = _core._row_groups(y, self.n_threads)
        self.group_p = _core._row_groups(p, self.n_threads)

    def count(self, plan: TwoVsTwoPlan, perm: np.ndarray | None = None, progress: Any = None) -> dict[str, Any]:
        """The kernel's counts (dict: passed, tied, skipped, sample_passed, sample_tied), y_i paired with p_perm[i]."""
        gp = self.group_p if perm is None else self.group_p[perm]
        # The kernel wants group ids in [0, n); permuted ids still are.
        options = (plan.metric, plan.rtol, plan.skip_same_target, self.n_threads)
        if plan.first is None:
            return _core._two_vs_two_all(self.y, self.p, self.group_y, gp, *options, None, perm, progress)
        return _core._two_vs_two_pairs(
            self.y,
            self.p,
            self.group_y,
            gp,
            plan.first,
            plan.second,  # type: ignore[arg-type]  # set together with first
            *options,
            perm,
            progress,
        )

    def observed(self, plan: TwoVsTwoPlan, progress: Any = None) -> TwoVsTwoCounts:
        counts = self.count(plan, progress=progress)
        same_target = None
        if plan.first is None and plan.skip_same_target:
            same_target = np.bincount(self.group_y, minlength=plan.n)[self.group_y] - 1
        totals = (int(counts["passed"]), int(counts["tied"]), int(counts["skipped"]))
        return TwoVsTwoCounts(totals, counts["sample_passed"], counts["sample_tied"], same_target)


def _tie_credit(ties: str) -> float:
    return {"fail": 0.0, "pass": 1.0, "half": 0.5, "exclude": 0.0}[ties]


def _score(passed: int, tied: int, n_pairs: int, ties: str) -> tuple[int | float, int]:
    """(n_passed, n_total) under the tie rule; n_passed is 2x for 'half' kept exact."""
    if ties == "fail":
        return passed, n_pairs
    if ties == "pass":
        return passed + tied, n_pairs
    if ties == "half":
        return passed + tied / 2, n_pairs
    return passed, n_pairs - tied


def result_from_counts(
    n: int,
    totals: Any,
    sample_passed: np.ndarray,
    sample_tied: np.ndarray,
    *,
    metric: str,
    ties: str,
    pairs: str | int,
    rtol: float,
    same_target: np.ndarray | None = None,
    first: np.ndarray | None = None,
    second: np.ndarray | None = None,
) -> TwoVsTwoResult:
    """The TwoVsTwoResult of totals (passed, tied, skipped) and per-sample counts of ``n`` samples:
    of all pairs (``same_target[i]``: samples with row i's target, skipped for distinct targets)
    or of the sampled pairs ``(first, second)``."""
    passed, tied, skipped = (int(v) for v in totals)
    if first is None:
        n_pairs = n * (n - 1) // 2 - skipped
        sample_pairs = np.full(n, n - 1, dtype=np.int64)
        if same_target is not None:
            sample_pairs -= same_target
    else:
        n_pairs = first.size - skipped
        second_of: np.ndarray = second  # type: ignore[assignment]  # set together with first
        sample_pairs = np.bincount(first, minlength=n) + np.bincount(second_of, minlength=n)
    n_passed, n_total = _score(passed, tied, n_pairs, ties)
    accuracy = n_passed / n_total if n_total else math.nan

    credit = _tie_credit(ties)
    s_total = sample_pairs - (sample_tied if ties == "exclude" else 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sample_accuracy = np.where(s_total > 0, (sample_passed + credit * sample_tied) / np.maximum(s_total, 1), np.nan)

    standard_error = None
    if first is not None:
        standard_error = math.nan
        if n_total > 1:
            # Pair scores are 0, the tie credit or 1; a simple random sample
            # without replacement of the n (n - 1) / 2 pairs.
            counted_ties = 0 if ties == "exclude" else tied
            mean_sq = (passed + credit**2 * counted_ties) / n_total
            var = max(mean_sq - accuracy**2, 0.0) * n_total / (n_total - 1)
            fpc = 1.0 - first.size / (n * (n - 1) // 2)
            standard_error = math.sqrt(var / n_total * fpc)
    if ties != "half":
        n_passed = int(n_passed)
    return TwoVsTwoResult(
        n_passed=n_passed,
        n_total=int(n_total),
        accuracy=float(accuracy),
        n_strict_passed=passed,
        n_tied=tied,
        n_pairs=int(n_pairs),
        standard_error=standard_error,
        sample_accuracy=sample_accuracy,
        metric=metric,
        ties=ties,
        pairs=pairs,
        rtol=rtol,
    )


# ---------------------------------------------------------------------------
# public API


@routed
def two_vs_two(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    metric: str = "cosine",
    ties: str = "fail",
    pairs: str | int = "all",
    rng: Seed = None,
    n_jobs: NJobs = None,
    progress: bool = False,
    rtol: float | None = None,
) -> TwoVsTwoResult:
    """The 2 vs 2 test: how often the predictions tell two samples apart.

    For a pair of samples ``i < j`` with targets ``y_i, y_j`` and predictions
    ``p_i, p_j``, compare the distances of the correct assignment with the
    swapped one::

        lhs = d(y_i, p_i) + d(y_j, p_j)        rhs = d(y_i, p_j) + d(y_j, p_i)

    The pair *passes* when ``lhs < rhs``. The accuracy is the fraction of
    pairs that pass (0.5 is chance). All ``n (n - 1) / 2`` pairs cost one
    ``n x n x d`` matrix product, computed in tiles and compared on the fly:
    the ``n x n`` matrix is never stored (extra memory ``O(n d)`` plus a few
    MB per thread).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples, n_features)
        Targets and predictions, one row per sample; ``n >= 2``, ``d >= 1``,
        finite. float32 input (both arrays) is computed in float32 without a
        copy of the input; any other numeric dtype in float64.
    metric : {"cosine", "correlation", "euclidean", "sqeuclidean"}
        The distance ``d``, as in :func:`scipy.spatial.distance.cdist`.
        "cosine" rejects all-zero rows and "correlation" constant rows (the
        distance is undefined there).
    ties : {"fail", "pass", "half", "exclude"}
        How a tied pair (``lhs == rhs``, see below) counts: as a failure
        (strict ``<``, the usual definition), as a pass (``<=``), as half a
        pass, or not at all (dropped from the denominator).
    pairs : "all", "distinct_targets" or int
        "all" pairs; only pairs whose targets differ ("distinct_targets":
        pairs with identical targets are left out instead of being ties); or
        this many pairs drawn uniformly without replacement with ``rng`` (for
        large ``n``; ``standard_error`` is then reported).
    rng : None, int seed or numpy Generator, optional
        Randomness for ``pairs=int``.
    n_jobs : int, optional
        Threads: None (default) uses every core this process may use (CPU
        affinity and cgroup quota, lowered by the environment variable
        ``PAIRMETRICS_NUM_THREADS``), ``k`` at most ``k``, ``-1`` all cores,
        ``-2`` all but one. The result does not depend on it: the
        tiling is fixed and each tile's product runs on one thread.
    progress : bool
        Show a progress bar (needs tqdm).
    rtol : float, optional
        Tie tolerance, default ``8 * sqrt(d) * eps`` of the working dtype
        (about 1.7e-5 for float32 and 3e-14 for float64 at d = 300). A pair
        is tied when ``|lhs - rhs| <= rtol * scale``, where ``scale`` bounds
        the rounding error of the products: for cosine and correlation
        ``scale = 4`` (the squared norms of the four unit vectors), for
        sqeuclidean ``|y_i - c|^2 + |y_j - c|^2 + |p_i - c|^2 + |p_j - c|^2``
        with ``c`` the mean target row, for euclidean
        ``sqrt(|y_i - c|^2 + |p_i - c|^2) + sqrt(|y_j - c|^2 + |p_j - c|^2)``.
        Pairs with identical targets (``y_i == y_j``) or identical
        predictions (``p_i == p_j``) are tied exactly (both sides are equal in
        exact arithmetic), whatever ``rtol``. ``rtol=0`` keeps only those.

    Returns
    -------
    TwoVsTwoResult
        ``n_passed``, ``n_total``, ``accuracy``, the tie count, the
        per-sample pass rates and the options used.

    See Also
    --------
    two_vs_two_permutation_test : the p-value of the accuracy against chance.

    Notes
    -----
    The products run on the BLAS that SciPy loaded, one tile per thread,
    with the BLAS kept single-threaded meanwhile (its thread count is set
    to 1 and restored afterwards: OpenBLAS and MKL). With a BLAS whose
    thread count cannot be set, the tiles run on one thread and the BLAS
    parallelises each product, so the cores are never oversubscribed.

    For the Euclidean metrics both sets are scaled by one power of two (so
    that tiny or huge coordinates neither underflow nor overflow; this
    changes no comparison) and shifted by the mean target (distances do not
    change). Cross distances come from ``|a|^2 + |b|^2 - 2 <a, b>`` and are
    recomputed from the rows where that expansion may have lost too many
    digits to cancellation.

    With ``pairs=k`` the cost is ``O(k d)`` plus one ``O(n d)`` preparation.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(50, 10))
    >>> result = pm.two_vs_two(y, y + rng.normal(size=y.shape))
    >>> result.n_total
    1225
    """
    generator = check_rng(rng)
    progress = check_progress(progress)
    y, p, facts = _in_memory_facts(y_true, y_pred, metric)

    def count(plan: TwoVsTwoPlan) -> TwoVsTwoCounts:
        with progress_callback(progress, "2 vs 2") as callback:
            return _InMemory(y, p, n_jobs).observed(plan, progress=callback)

    return TWO_VS_TWO.run(count, facts, metric, ties, pairs, rtol, generator)


@routed
def two_vs_two_permutation_test(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    n_resamples: int = 1000,
    alternative: str = "greater",
    rng: Seed = None,
    metric: str = "cosine",
    ties: str = "fail",
    pairs: str | int = "all",
    n_jobs: NJobs = None,
    progress: bool = False,
    rtol: float | None = None,
) -> TwoVsTwoPermutationResult:
    """Permutation test of the 2 vs 2 accuracy against chance.

    The null distribution shuffles which prediction belongs to which target:
    for each of ``n_resamples`` random permutations ``pi``, ``y_i`` is
    paired with ``p_pi(i)`` and the 2 vs 2 accuracy recomputed. For the
    default ``alternative="greater"`` the p-value is
    ``(1 + #{permutations with accuracy >= observed}) / (1 + n_resamples)``
    (it is never 0; large accuracy is evidence against chance).

    Parameters
    ----------
    y_true, y_pred, metric, ties, pairs, n_jobs, progress, rtol
        As in :func:`two_vs_two`. With ``pairs=int`` the same sampled pairs
        are used for the observed data and every permutation.
    n_resamples : int, default 1000
        Number of random permutations (>= 1).
    alternative : {"greater", "less", "two-sided"}
        "greater" (default): the accuracy is above chance; "less": below;
        "two-sided": either, with twice the smaller one-sided p-value (at most 1).
    rng : None, int seed or numpy Generator, optional
        Randomness for the sampled pairs (drawn first) and the permutations.

    Returns
    -------
    TwoVsTwoPermutationResult
        Unpacks as ``(statistic, pvalue)``.

    Notes
    -----
    Cost: with all pairs, the ``n x n`` matrix of products is computed once
    (``2 n^2 d`` flops) and kept, with its transpose, when the two need at
    most 1 GiB (``n`` up to 11585 in float32, 8192 in float64); each
    permutation then costs ``O(n^2)`` gathers and comparisons and no products. Beyond that size
    every permutation recomputes the products, costing as much as one call
    to :func:`two_vs_two`. With sampled pairs each permutation costs
    ``O((n + pairs) d)``.

    See Also
    --------
    two_vs_two : the accuracy itself.
    scipy.stats.permutation_test : the general permutation test.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(40, 10))
    >>> test = pm.two_vs_two_permutation_test(y, y + rng.normal(size=y.shape), n_resamples=99, rng=1)
    >>> float(test.pvalue)
    0.01
    """
    progress = check_progress(progress)
    # One generator: the sampled pairs (if any) are drawn first, then the permutations.
    generator = check_rng(rng)
    y, p, facts = _in_memory_facts(y_true, y_pred, metric)

    def count(plan: PermutationPlan) -> PermutationCounts:
        with progress_callback(progress, "2 vs 2 permutations") as callback:
            return _count_permutations(_InMemory(y, p, n_jobs), plan, generator, callback)

    return TWO_VS_TWO_PERMUTATION.run(count, facts, n_resamples, alternative, metric, ties, pairs, rtol, generator)


def _count_permutations(
    data: _InMemory, plan: PermutationPlan, generator: np.random.Generator, callback: Any
) -> PermutationCounts:
    """The observed counts and those of plan.n_resamples permutations drawn from ``generator``."""
    test, n = plan.test, plan.test.n
    observed = data.observed(test)
    # The matrix of products and its transpose, when both fit in the limit.
    keep_terms = test.first is None and 2 * n * n * data.y.itemsize <= _TERMS_MEMORY_LIMIT
    if keep_terms:
        terms = _core._two_vs_two_terms(data.y, data.p, test.metric, data.n_threads)
        terms_t = np.ascontiguousarray(terms.T)
    passed = np.empty(plan.n_resamples, dtype=np.int64)
    tied = np.empty(plan.n_resamples, dtype=np.int64)
    done = 0
    while done < plan.n_resamples:
        k = min(_PERMUTATION_CHUNK, plan.n_resamples - done)
        perms = np.stack([generator.permutation(n) for _ in range(k)]).astype(np.int64)
        if keep_terms:
            counts = _core._two_vs_two_permuted(
                terms,
                terms_t,
                data.y,
                data.p,
                data.group_y,
                data.group_p,
                perms,
                test.metric,
                test.rtol,
                test.skip_same_target,
                data.n_threads,
            )
            passed[done : done + k], tied[done : done + k] = counts["passed"], counts["tied"]
        else:
            for r in range(k):
                counts = data.count(test, perm=perms[r])
                passed[done + r], tied[done + r] = counts["passed"], counts["tied"]
                if callback is not None:
                    callback(done + r + 1, plan.n_resamples)
        done += k
        if callback is not None:
            callback(done, plan.n_resamples)
    return PermutationCounts(observed, passed, tied)


def permutation_result(
    observed: TwoVsTwoResult, null_passed: Any, null_tied: Any, alternative: str
) -> TwoVsTwoPermutationResult:
    """The permutation test's result from the observed result and the null counts (passed, tied)."""
    n_permutations = len(null_passed)
    n_pairs = observed.n_pairs  # the evaluated pairs do not change under permutation
    null = np.empty(n_permutations)
    at_least = at_most = 0
    # Compare accuracies exactly as fractions (2x numerators keep 'half' integral).
    obs_num2, obs_den = _exact_score(observed.n_strict_passed, observed.n_tied, n_pairs, observed.ties)
    for r in range(n_permutations):
        num2, den = _exact_score(int(null_passed[r]), int(null_tied[r]), n_pairs, observed.ties)
        null[r] = num2 / (2 * den) if den else math.nan
        if den and obs_den:
            at_least += num2 * obs_den >= obs_num2 * den
            at_most += num2 * obs_den <= obs_num2 * den
    p_greater = (1 + at_least) / (1 + n_permutations)
    p_less = (1 + at_most) / (1 + n_permutations)
    pvalue = {"greater": p_greater, "less": p_less, "two-sided": min(1.0, 2 * min(p_greater, p_less))}[alternative]
    return TwoVsTwoPermutationResult(
        statistic=observed.accuracy,
        pvalue=pvalue,
        null_distribution=null,
        n_resamples=n_permutations,
        observed=observed,
        alternative=alternative,
    )


def _exact_score(passed: int, tied: int, n_pairs: int, ties: str) -> tuple[int, int]:
    """(2 * n_passed, n_total) as Python ints."""
    num, den = _score(passed, tied, n_pairs, ties)
    return int(round(2 * num)), int(den)
