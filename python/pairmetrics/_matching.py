"""Exact minimum-weight perfect matching (blossom algorithm) with an LP dual certificate."""

from __future__ import annotations

import dataclasses
import math
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from ._distances import (
    check_distance_matrix,
    check_metric,
    check_metric_kwargs,
    pairwise_distances,
    prepare_points,
    rank_mahalanobis,
)
from ._metric_transforms import (
    DEFAULT_MAX_MATRIX_BYTES,
    UNIT_SCALE,
    check_matrix_size,
    check_max_matrix_bytes,
    is_transformed,
    unit_rows,
)
from ._progress import progress_callback
from ._result import Result
from ._routing import routed
from ._typing import ArrayLike, FloatArray, IntArray, Metric, NJobs
from ._validation import (
    as_matrix,
    check_finite,
    check_int,
    check_progress,
    check_real,
    resolve_n_jobs,
)

__all__ = [
    "MatchingResult",
    "min_weight_perfect_matching",
    "rank_mahalanobis",
]
# What the cross-match tests may use besides __all__: the default start graph and the solvers they build on.
__seams__ = ["DEFAULT_N_NEIGHBORS", "MatchingSource", "solve_dense", "solve_points_metric"]

# Size of the start graph: each point's n_neighbors nearest neighbours (pricing adds the rest).
DEFAULT_N_NEIGHBORS = 10
# Coordinate spreads outside this range are solved on a copy of the points
# scaled by a power of two (refused unless exact), so that the squares of the
# distance tiles stay far from under/overflow. Distance matrices are never scaled.
# Inputs below this many points run on one thread.
_PARALLEL_MIN_N = 2000


class MatchingSource:
    """What verify() needs to see the distances again, without holding an N x N matrix.

    Point input: the (validated) points, N x d. Matrix input: a weak reference
    to the caller's array only, so the result never keeps a distance matrix
    alive; verify(D) takes it explicitly once the caller has dropped it.
    Pickling and copying drop the reference (verify then takes the data).
    """

    __slots__ = ("kind", "metric", "kwargs", "_strong", "_weak")

    def __init__(
        self,
        kind: str,
        obj: Any = None,
        metric: Any = None,
        kwargs: dict[str, Any] | None = None,
        strong: bool = False,
    ) -> None:
        self.kind = kind
        self.metric = metric
        self.kwargs = dict(kwargs or {})
        self._strong = obj if strong else None
        self._weak = None
        if obj is not None and not strong:
            try:
                self._weak = weakref.ref(obj)
            except TypeError:  # lists and the like: nothing to refer to
                pass

    def data(self) -> Any:
        if self._strong is not None:
            return self._strong
        return self._weak() if self._weak is not None else None

    def __reduce__(self) -> tuple[type[MatchingSource], tuple[Any, ...]]:
        return (MatchingSource, (self.kind, None, self.metric, self.kwargs))


@dataclasses.dataclass(frozen=True, eq=False)
class MatchingResult(Result):
    """A minimum-weight perfect matching and its optimality certificate.

    Attributes
    ----------
    mate : ndarray of int64, shape (N,)
        ``mate[i]`` is the point matched to ``i``; ``-1`` for the one point
        left out when N is odd (the point matched to the ghost).
    pairs : ndarray of int64, shape (N // 2, 2)
        The matched pairs ``(i, j)`` with ``i < j``, sorted by ``i``.
    cost : float
        Sum of the distances of the matched pairs (the dropped point costs 0).
    dropped : int or None
        The point left out when N is odd, else None.
    y, z, blossom_parent : ndarray
        The dual solution (vertex duals ``y``; for odd N the last entry is the
        ghost's), blossom duals ``z`` and the laminar family of blossoms:
        ``blossom_parent[i]`` is the blossom (numbered ``len(y) + b``)
        directly containing vertex or blossom ``i``, or -1. See ``verify``.
    resolution : float
        Distances were rounded to integer multiples of this before the exact
        integer solve (see Notes of :func:`min_weight_perfect_matching`).
    max_distance : float
        The largest distance (an upper bound of it for point input).
    stats : dict
        Solver counters (pricing rounds, passes, edges of the final subgraph,
        blossom events of the last round, pairs priced outside the neighbour
        lists by where they came from (``prefix_pairs``, ``inside_pairs``,
        ``screen_pairs``) and how many were violated, pairs a float32 screen
        ruled out without an exact distance (``prefix_screened``,
        ``inside_screened``), screens of every pair and of some rows, rounds
        solved by resuming the last round's solver with its blossoms
        (``resumes``) or afresh (``rebuilds``) and the vertices and blossoms
        the repairs of the new pairs freed and opened (``resume_freed``,
        ``resume_opened``), seconds per phase; ``dirty_rows``: points whose
        dual rose or whose top-level blossom changed since the last complete
        pricing, summed over the rounds of the pricing prefix (only pairs
        whose duals rose in sum are priced again), ``prefix_skipped``:
        entries of the prefix left out so, ``inside_skipped``: points of
        unchanged blossoms left out; ``duplicate_pairs``: pairs of
        copies of one point matched up front, when there were any).

    Notes
    -----
    For point input the result keeps a reference to the points (N x d, never
    an N x N matrix) so that ``verify()`` can recheck every pair; for a
    distance matrix it keeps only a weak reference to the caller's array, and
    ``verify(D)`` takes the matrix once the caller no longer holds it.
    """

    mate: IntArray
    pairs: IntArray
    cost: float
    dropped: int | None
    y: FloatArray = dataclasses.field(repr=False)
    z: FloatArray = dataclasses.field(repr=False)
    blossom_parent: IntArray = dataclasses.field(repr=False)
    resolution: float = dataclasses.field(repr=False)
    max_distance: float = dataclasses.field(repr=False)
    stats: dict[str, Any] = dataclasses.field(repr=False, compare=False)
    if TYPE_CHECKING:  # attributes to type checkers; at run time InitVars (see Result)
        _source: MatchingSource | None = None
        _timings: dict[str, float] | None = None
    else:
        _source: dataclasses.InitVar[MatchingSource | None] = None
        _timings: dataclasses.InitVar[dict[str, float] | None] = None  # seconds per phase

    def certificate(
        self,
        D: ArrayLike | None = None,
        *,
        points: ArrayLike | None = None,
        n_jobs: NJobs = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """Check the LP dual certificate against every pair of the complete graph.

        The reduced cost of pair ij is ``d_ij - y_i - y_j + sum of z over the
        blossoms holding both``. Pairs that tiles or the matrix cannot rule
        out are evaluated exactly, each with a bound of its float64 rounding
        error. Runs in C++ on ``n_jobs`` threads; its cost is about one
        neighbour search of the solve.

        Parameters
        ----------
        D : array_like, shape (N, N), optional
            The distance matrix the matching was computed from. Needed only
            when the caller no longer holds it (the result keeps a weak
            reference to it).
        points : array_like, shape (N, d), optional
            The points (and the result's metric); defaults to the points the
            matching was computed from.
        n_jobs : int or None
            Threads; None means every usable core.
        progress : bool
            Show a progress bar (needs tqdm).

        Returns
        -------
        dict
            ``max_violation`` (largest amount by which a reduced cost is
            negative), ``max_violation_bound`` (the same plus rounding error
            bounds), ``max_matched_slack`` (largest |reduced cost| of a matched
            pair), ``min_z``, ``dual_objective``, ``cost`` (recomputed),
            ``gap_bound`` (an upper bound on ``cost - optimum`` by weak
            duality, after lowering every y by ``max_violation / 2``),
            ``certified_gap_bound`` (the same with every rounding error
            bounded, each vertex's dual lowered by half the largest violation
            bound at it) and ``complete`` (False when a negative blossom dual
            made the check of every pair impossible), ``magnitude`` (sum of the
            absolute terms of cost and dual objective, plus the largest
            distance: the scale of their rounding).
        """
        threads = resolve_n_jobs(n_jobs)
        check_progress(progress)
        kind, data, unit, squared = self._verification_data(D, points)
        nv = self.y.shape[0]
        mate = self.mate_with_ghost()
        if mate.shape[0] != nv or (mate < 0).any() or (mate >= nv).any() or (mate[mate] != np.arange(nv)).any():
            raise ValueError("mate is not a perfect matching of the points")
        args = (self.y / unit, self.blossom_parent.astype(np.int32), self.z / unit, mate.astype(np.int32))
        if (
            self.y.shape[0] not in (data.shape[0], data.shape[0] + 1)
            or self.blossom_parent.shape[0] != nv + self.z.shape[0]
        ):
            raise ValueError("the data do not have the size of the matching")
        threads = 1 if data.shape[0] < _PARALLEL_MIN_N else threads
        start = time.perf_counter()
        with progress_callback(progress, "certificate", unit="points", count=data.shape[0]) as cb:
            if kind == "points":
                c = _core._mwpm_certificate_points(data, squared, *args, threads, cb)
            else:
                c = _core._mwpm_certificate_dense(data, *args, threads, cb)
        if self._timings is not None:
            self._timings["seconds_verify"] = time.perf_counter() - start
        keys = (
            "max_violation",
            "max_violation_bound",
            "max_matched_slack",
            "min_z",
            "dual_objective",
            "cost",
            "error_bound",
            "lowering",
            "magnitude",
        )
        for key in keys:
            c[key] *= unit
        c["gap_bound"] = c["cost"] - c["dual_objective"] + nv * c["max_violation"] / 2
        # Lowering each y_v by half the largest violation bound at v makes the
        # duals feasible for every pair (rounding errors included).
        c["certified_gap_bound"] = c["cost"] - c["dual_objective"] + c.pop("lowering") + c.pop("error_bound")
        return c

    def verify(
        self,
        D: ArrayLike | None = None,
        *,
        points: ArrayLike | None = None,
        rtol: float = 1e-9,
        n_jobs: NJobs = None,
        progress: bool = False,
    ) -> bool:
        """Prove optimality from the dual certificate, on the real distances.

        True when every blossom dual is >= 0 and the certified bound on
        ``cost - optimum`` (every pair checked, every float64 rounding error
        bounded, no allowance for the integer rounding of the solve) is at
        most ``rtol * cost`` plus ``16 + N`` float64 epsilons of the magnitude
        of the duals, the cost and the largest distance
        (``certificate()["magnitude"]``), the limit
        of what N float64 duals can resolve. A matching that is not optimal to within
        ``rtol`` is never called optimal. Takes ``D`` or ``points`` like
        :meth:`certificate`; costs about one neighbour search of the solve.
        """
        rtol = check_real(rtol, "rtol", low=0)
        c = self.certificate(D, points=points, n_jobs=n_jobs, progress=progress)
        # Rounding of float64 duals themselves: each of the N resolves its
        # constraints to about eps times their magnitude, so a gap below
        # (16 + N) eps times it is below what float64 can tell apart (e.g. cost
        # 0 with duals +-1), and their absolute grid: a few subnormal steps each.
        n = self.y.shape[0]
        floor = (16 + n) * np.finfo(np.float64).eps * c["magnitude"] + 4 * n * math.ulp(0.0)
        return bool(c["complete"] and c["min_z"] >= 0 and c["certified_gap_bound"] <= rtol * abs(c["cost"]) + floor)

    def _verification_data(self, D: Any, points: Any) -> tuple[str, np.ndarray, float, bool]:
        """(kind, array, unit, squared) for the certificate kernels."""
        source = self._source
        if D is not None and points is not None:
            raise ValueError("give at most one of D or points=")
        metric, kwargs = "euclidean", {}
        if source is not None and source.kind == "points":
            metric, kwargs = source.metric, source.kwargs
        if D is None and points is None and source is not None:
            data = source.data()
            if data is None:
                raise ValueError(
                    "verify() needs the distances again: the result keeps no reference to a distance "
                    "matrix the caller has dropped; pass it as verify(D) or verify(points=X)"
                )
            if source.kind == "points":
                points = data
            else:
                D = data
        elif D is None and points is None:
            raise ValueError("verify() needs the distances: pass verify(D) or verify(points=X)")
        if points is not None:
            X = as_matrix(points, "points", min_rows=2)
            check_finite(X, "points")
            if X.shape[0] != self.mate.shape[0]:
                raise ValueError(f"points must have N = {self.mate.shape[0]} rows, got {X.shape[0]}")
            if metric in ("euclidean", "sqeuclidean") and not kwargs:
                Xs, unit, squared = prepare_points(X, metric == "sqeuclidean")
                return "points", Xs, unit, squared
            if is_transformed(metric, kwargs):
                Xs, unit, squared = prepare_points(unit_rows(X, metric), True)
                return "points", Xs, unit * UNIT_SCALE, squared
            D = pairwise_distances(X, metric, **kwargs)
        else:
            D = check_distance_matrix(D, "D")
            if D.shape[0] != self.mate.shape[0]:
                raise ValueError(f"D must be {self.mate.shape[0]} x {self.mate.shape[0]}, got {D.shape}")
        return "D", D, 1.0, False

    def mate_with_ghost(self) -> IntArray:
        """``mate`` over the vertices of the solved graph (the ghost is index N)."""
        if self.dropped is None:
            return self.mate
        out = np.append(self.mate, self.dropped)
        out[self.dropped] = self.mate.shape[0]
        return out


def solve_sparse_matching(
    n: int,
    eu: ArrayLike,
    ev: ArrayLike,
    w: ArrayLike,
    *,
    y0: ArrayLike | None = None,
    mate0: ArrayLike | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Exact minimum-weight perfect matching of a sparse graph with integer weights.

    The stable low-level entry point of the blossom solver (used by the
    networkx backend): ``n`` vertices, edges ``(eu[i], ev[i])`` with int64
    weights ``0 <= w[i] <= _core._mwpm_max_weight(n)``. Returns a dict with
    ``perfect`` (False when no perfect matching exists), ``mate``, the duals
    ``y`` and ``z`` (both doubled, integers), ``parent`` (laminar family of
    blossoms) and solver ``stats``. ``y0``/``mate0`` warm-start from an
    earlier solution; ``progress`` is an optional callable ``(done, total)``.
    """
    kwargs = {}
    if y0 is not None or mate0 is not None:
        kwargs = {"y0": y0, "mate0": mate0}
    return _core._mwpm_sparse(n, eu, ev, w, progress, **kwargs)


def matched_cost(
    pairs: np.ndarray, *, D: Any = None, points: Any = None, squared: bool = False, unit: float = 1.0
) -> float:
    """Sum of the distances of ``pairs`` in the caller's data, correctly rounded; ValueError when it overflows.

    ``points`` may be a copy of the caller's points scaled exactly by a power of two; ``unit`` is the
    distance (for ``squared``, the squared distance) of the copy that is 1 in the caller's units.
    """
    if D is not None:
        d = np.asarray(D[pairs[:, 0], pairs[:, 1]], dtype=np.float64)
    else:
        diff = points[pairs[:, 0]] - points[pairs[:, 1]]
        big = np.abs(diff).max(axis=1) if diff.shape[1] else np.zeros(diff.shape[0])
        safe = np.where(big > 0, big, 1.0)
        norm = np.sqrt(((diff / safe[:, None]) ** 2).sum(axis=1))  # no square under- or overflows
        with np.errstate(over="ignore"):
            d = (norm * big) ** 2 * unit if squared else norm * big * unit  # unit is squared for squared
    try:
        total = math.fsum(d.tolist())
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):
        what = "D" if D is not None else "the points"
        raise ValueError(
            f"the matching's total distance overflows float64 (distances near 1.8e308 in {what}); scale {what} down"
        )
    return total


def _threads(n_jobs: NJobs, n: int) -> int:
    threads = resolve_n_jobs(n_jobs)
    return 1 if n < _PARALLEL_MIN_N else threads


def solve_dense(
    D: np.ndarray,
    *,
    n_neighbors: int,
    n_jobs: NJobs = None,
    progress: bool = False,
    source: MatchingSource | None = None,
) -> MatchingResult:
    """Matching of the complete graph of a validated distance matrix."""
    n = D.shape[0]
    with progress_callback(progress, "matching", unit="points", count=n) as cb:
        r = _core._mwpm_dense(D, float(D.max()), min(n_neighbors, n), _threads(n_jobs, n), cb)
    return _make_result(r, n, 1.0, source, lambda pairs: matched_cost(pairs, D=D))


def _solve_points(
    X: np.ndarray,
    *,
    squared: bool,
    n_neighbors: int,
    n_jobs: NJobs = None,
    progress: bool = False,
    source: MatchingSource | None = None,
    scale: float = 1.0,
) -> MatchingResult:
    """Matching of the complete Euclidean graph of the rows of X, without the N x N matrix.

    ``scale`` multiplies every distance-valued output (the units of a metric
    solved on transformed points).
    """
    n = X.shape[0]
    Xs, unit, squared = prepare_points(X, squared)
    # Copies of a point are paired up front (exact for a metric, not for
    # squared distances); a row occurring 4 or more times keeps 2 or 3 copies.
    groups = None if squared else _duplicate_groups(Xs)
    r = None
    if groups is not None:
        keep, kept, removed = groups
        for _ in range(3):
            with progress_callback(progress, "matching", unit="points", count=n) as cb:
                reduced = _core._mwpm_points(
                    Xs[keep], squared, min(n_neighbors, keep.size), _threads(n_jobs, keep.size), cb
                )
            r, failed = _expand_duplicates(reduced, n, keep, kept, removed)
            if r is not None or len(failed) == len(kept):
                break
            # Rows whose kept copies cannot carry the others are solved in full.
            back = np.concatenate([removed[g] for g in failed])
            keep = np.sort(np.concatenate([keep, back]))
            ok = np.ones(len(kept), dtype=bool)
            ok[failed] = False
            kept = [c for c, good in zip(kept, ok) if good]
            removed = [c for c, good in zip(removed, ok) if good]
            r = None
    if r is None:
        with progress_callback(progress, "matching", unit="points", count=n) as cb:
            r = _core._mwpm_points(Xs, squared, min(n_neighbors, n), _threads(n_jobs, n), cb)
    return _make_result(
        r, n, unit * scale, source, lambda pairs: matched_cost(pairs, points=Xs, squared=squared, unit=unit * scale)
    )


def _duplicate_groups(X: np.ndarray) -> tuple[IntArray, list[IntArray], list[IntArray]] | None:
    """Rows repeated 4 or more times, for pairing copies up front (Euclidean only).

    Returns None when no row occurs 4 times, else ``(keep, kept, removed)``:
    the rows solved (sorted: per distinct row its first three copies when
    it occurs an odd number of times, else its first two), and for each row
    occurring 4 or more times its kept copies and its other copies (an even
    number of them).
    """
    n = X.shape[0]
    if n < 4:
        return None
    # Cheap test first: every first coordinate distinct means no duplicate.
    first = np.sort(X[:, 0])
    if not (first[1:] == first[:-1]).any():
        return None
    rows = np.ascontiguousarray(X).view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))).ravel()
    _, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    if counts.max() < 4:
        return None
    order = np.argsort(inverse, kind="stable")  # copies of each row, by index
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # Three copies of a row occurring an odd number of times, two otherwise:
    # the solver then usually matches two of them together, and of two
    # coincident matched points one has a dual that can carry the others.
    n_kept = np.minimum(counts, np.where(counts % 2 == 1, 3, 2))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(start, counts)  # copy number of each point
    keep = np.flatnonzero(rank < n_kept[inverse])
    if keep.size < 2:  # one point repeated an odd number of times
        return None
    groups = np.flatnonzero(counts >= 4)
    kept = [order[start[g] : start[g] + n_kept[g]] for g in groups]
    removed = [order[start[g] + n_kept[g] : start[g] + counts[g]] for g in groups]
    return keep, kept, removed


def _expand_duplicates(
    r: dict[str, Any], n: int, keep: np.ndarray, kept: list[IntArray], removed: list[IntArray]
) -> tuple[dict[str, Any] | None, list[int]]:
    """The solution of all N points from the one of the kept copies: (dict, []) or (None, failed).

    Two coincident points can be matched together in some optimal matching
    (exchange argument: for a metric, d(a, b) <= d(a, p) + d(p, b)), so the
    copies left out are paired among themselves. Their duals: each takes the
    dual y of a kept copy k of its row, and k and these copies form an odd
    blossom with z = 2 y_k inside every blossom holding k. Every pair then
    has the reduced cost of a pair of the kept problem, the pairs of copies
    are tight and the dual objective is unchanged, so the certificate holds
    for all N points. This needs y_k >= half the z of the blossoms holding k
    (so that z >= 0); the rows where no kept copy has it are returned.
    """
    m = keep.size
    y_red = np.asarray(r["y"], dtype=np.float64)
    ghost = y_red.size > m
    nv = n + (1 if ghost else 0)
    position = np.full(n, -1, dtype=np.int64)
    position[keep] = np.arange(m)
    # Reduced node ids -> full ids: kept points, the ghost, then the blossoms.
    parent_red = np.asarray(r["parent"], dtype=np.int64)
    nb = parent_red.size - y_red.size
    to_full = np.concatenate([keep, [n] if ghost else [], nv + np.arange(nb)]).astype(np.int64)
    # z over the blossoms holding each vertex (the solver's blossom forest).
    above = _core._mwpm_enclosing_z(parent_red.astype(np.int32), np.asarray(r["z"], dtype=np.float64), y_red.size)
    # The blossom below k gets z = 2 y_k - (z above k), >= 0. It is 0 for
    # two copies matched together in one blossom: up to the rounding of the
    # real duals (each an integer times the unit), which the certificate's
    # tolerance absorbs.
    slack = y_red - above / 2
    tol = 1e-12 * (np.abs(y_red) + above)
    reps, z_new, failed = [], [], []
    for g, copies in enumerate(kept):
        pos = position[copies]
        best = int(np.argmax(slack[pos]))  # first of the largest
        if slack[pos[best]] < -tol[pos[best]]:
            failed.append(g)
        reps.append(int(copies[best]))
        z_new.append(max(2 * slack[pos[best]], 0.0))
    if failed:
        return None, failed
    n_new = len(reps)
    parent = np.full(nv + nb + n_new, -1, dtype=np.int64)
    has_parent = parent_red >= 0
    parent[to_full[has_parent]] = to_full[parent_red[has_parent]]
    y = np.empty(nv, dtype=np.float64)
    y[to_full[: y_red.size]] = y_red
    mate = np.empty(nv, dtype=np.int64)
    mate_red = np.asarray(r["mate"], dtype=np.int64)
    mate[to_full[: y_red.size]] = to_full[mate_red]
    for t, (k, copies) in enumerate(zip(reps, removed)):
        b = nv + nb + t
        parent[b] = parent[k]
        parent[k] = b
        parent[copies] = b
        y[copies] = y[k]
        mate[copies[0::2]] = copies[1::2]
        mate[copies[1::2]] = copies[0::2]
    out = dict(r)
    out["mate"] = mate
    out["y"] = y
    out["z"] = np.concatenate([np.asarray(r["z"], dtype=np.float64), z_new])
    out["parent"] = parent
    out["stats"] = {**r["stats"], "duplicate_pairs": int(sum(c.size for c in removed) // 2)}
    return out, []


def _make_result(
    r: dict[str, Any], n: int, unit: float, source: MatchingSource | None, cost_of: Callable[[np.ndarray], float]
) -> MatchingResult:
    """Package a solver answer (distances were solved in units of ``unit``; ``cost_of(pairs)`` in the caller's)."""
    mate_full = r["mate"].astype(np.int64)
    ghost = mate_full.shape[0] > n
    dropped = int(mate_full[n]) if ghost else None
    mate = mate_full[:n].copy()
    if ghost:
        mate[dropped] = -1
    i = np.flatnonzero(mate > np.arange(n))
    pairs = np.column_stack([i, mate[i]]).astype(np.int64)
    return MatchingResult(
        mate=mate,
        pairs=pairs,
        cost=cost_of(pairs),
        dropped=dropped,
        y=r["y"] * unit,
        z=r["z"] * unit,
        blossom_parent=r["parent"].astype(np.int64),
        resolution=float(r["resolution"]) * unit,
        max_distance=float(r["max_distance"]) * unit,
        stats={k: v for k, v in r["stats"].items() if not k.startswith("seconds_")},
        _source=source,
        _timings={k: v for k, v in r["stats"].items() if k.startswith("seconds_")},
    )


@routed
def min_weight_perfect_matching(
    D: ArrayLike | None = None,
    *,
    points: ArrayLike | None = None,
    metric: Metric = "euclidean",
    n_neighbors: int = DEFAULT_N_NEIGHBORS,
    n_jobs: NJobs = None,
    progress: bool = False,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
    **metric_kwargs: Any,
) -> MatchingResult:
    """Exact minimum-weight perfect matching of the complete graph on N points.

    Give either a distance matrix ``D`` or ``points`` (rows) with a ``metric``.

    Parameters
    ----------
    D : array_like, shape (N, N), optional
        Symmetric distances with a zero diagonal, finite and >= 0; float32
        and float64 are read in place (any strides). An asymmetry up to
        1e-12 * max(D) is tolerated: the upper triangle then defines a pair.
    points : array_like, shape (N, d), optional
        Points, N >= 2; the distances are ``scipy.spatial.distance.cdist(
        points, points, metric, **metric_kwargs)`` or, with
        ``metric="rank_mahalanobis"``, :func:`rank_mahalanobis`. For
        ``"euclidean"`` and ``"sqeuclidean"`` the N x N matrix is never
        formed: distance tiles from matrix products (their rounding bounded)
        steer the search, and every distance the solver uses is computed in
        float64 from the coordinate differences.
    metric : str or callable
        Used with ``points`` only. ``"cosine"`` and ``"correlation"`` (without
        metric keywords) take the same path, without the N x N matrix: on rows
        scaled to unit length (centred first for correlation) the cosine
        distance is half the squared Euclidean one; results are reported in
        cosine units. All-zero rows (cosine) and constant rows (correlation)
        are refused. Every other metric builds the N x N float64 matrix
        (``8 * N**2`` bytes), up to ``max_matrix_bytes``.
    n_neighbors : int
        The solver starts on each point's ``n_neighbors`` nearest neighbours
        and adds the pairs the duals price out as improving: speed only.
    n_jobs : int or None
        Threads for the neighbour search, the pricing and the certificate:
        None (default) every usable core, ``-1`` all cores; inputs below 2000
        points run on one thread. The result does not depend on it.
    progress : bool
        Show a progress bar (needs tqdm).
    max_matrix_bytes : int
        Largest N x N matrix a metric that needs one may build (default
        ``2**31`` bytes: N = 16384); above it, a ValueError says how many.
    **metric_kwargs
        ``p``, ``w``, ``V`` or ``VI`` for the cdist metrics that take them.

    Returns
    -------
    MatchingResult
        ``mate``, ``pairs``, ``cost`` and ``verify()``.

    Raises
    ------
    ValueError
        Bad distances or points (shape, NaN, negative, asymmetric, N < 2),
        rows the metric is undefined for, a matrix above ``max_matrix_bytes``,
        or a float64 limit (a total cost or coordinate differences that
        overflow, points spanning too many orders of magnitude).
    TypeError
        Non-numeric input, a non-integer ``n_neighbors``, an unknown keyword.

    Notes
    -----
    *Exactness.* The blossom algorithm solves exactly the distances rounded to
    multiples of ``resolution`` (2**-42 to 2**-50 of the largest distance, or
    of the cost when that is far smaller); any finite float64 input is solved,
    never rescaled. ``cost`` is summed from the caller's distances, and
    ``verify()`` proves optimality within ``rtol`` from the LP dual
    certificate. *Ties:* which optimal matching is returned is unspecified:
    compare costs, not pairs. *Odd N:* a ghost point at distance 0 joins; the
    point matched to it is left out (``mate == -1``, ``dropped``), as in R.
    *Dask input:* gathered to the client, up to
    ``pairmetrics.dask.matching.MAX_GATHER_BYTES``. Details and float64
    limits: the matching guide page.

    Examples
    --------
    >>> import numpy as np, pairmetrics as pm
    >>> X = np.array([[0.0], [0.1], [5.0], [5.2]])
    >>> m = pm.min_weight_perfect_matching(points=X)
    >>> m.pairs.tolist(), round(m.cost, 6)
    ([[0, 1], [2, 3]], 0.3)
    >>> m.verify()
    True
    >>> c = pm.min_weight_perfect_matching(points=[[1.0, 0.0], [2.0, 0.1], [0.0, 1.0], [0.1, 3.0]], metric="cosine")
    >>> c.pairs.tolist(), c.verify()
    ([[0, 1], [2, 3]], True)
    """
    if (D is None) == (points is None):
        raise ValueError("give exactly one of D (a distance matrix) or points=")
    n_neighbors = check_int(n_neighbors, "n_neighbors", low=1, high=2**31 - 1)
    resolve_n_jobs(n_jobs)
    check_progress(progress)
    max_matrix_bytes = check_max_matrix_bytes(max_matrix_bytes)
    if points is not None:
        check_metric(metric)
        check_metric_kwargs(metric, metric_kwargs, "min_weight_perfect_matching")
        X = as_matrix(points, "points", min_rows=2)
        check_finite(X, "points")
        return solve_points_metric(
            X,
            metric,
            metric_kwargs,
            n_neighbors=n_neighbors,
            n_jobs=n_jobs,
            progress=progress,
            max_matrix_bytes=max_matrix_bytes,
        )
    if metric_kwargs:
        name = next(iter(metric_kwargs))
        raise TypeError(f"min_weight_perfect_matching() got an unexpected keyword argument {name!r}")
    source = MatchingSource("D", D)
    D = check_distance_matrix(D, "D")
    return solve_dense(D, n_neighbors=n_neighbors, n_jobs=n_jobs, progress=progress, source=source)


def solve_points_metric(
    X: np.ndarray,
    metric: Metric,
    metric_kwargs: dict[str, Any],
    *,
    n_neighbors: int,
    n_jobs: NJobs,
    progress: bool,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
) -> MatchingResult:
    """Validated points: the Euclidean kernel (cosine and correlation on unit rows), or the matrix of another metric."""
    source = MatchingSource("points", X, metric, metric_kwargs, strong=True)
    if metric in ("euclidean", "sqeuclidean") and not metric_kwargs:
        return _solve_points(
            X, squared=metric == "sqeuclidean", n_neighbors=n_neighbors, n_jobs=n_jobs, progress=progress, source=source
        )
    if is_transformed(metric, metric_kwargs):
        return _solve_points(
            unit_rows(X, metric),
            squared=True,
            n_neighbors=n_neighbors,
            n_jobs=n_jobs,
            progress=progress,
            source=source,
            scale=UNIT_SCALE,
        )
    check_matrix_size(X.shape[0], metric, max_matrix_bytes)
    D = pairwise_distances(X, metric, **metric_kwargs)
    return solve_dense(D, n_neighbors=n_neighbors, n_jobs=n_jobs, progress=progress, source=source)
