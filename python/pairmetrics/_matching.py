"""Exact minimum-weight perfect matching (blossom algorithm) with an LP dual certificate."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Callable, Optional

import numpy as np

from . import _core
from ._progress import progress_callback
from ._result import Result
from ._validation import as_matrix, as_numeric_array, check_finite

__all__ = [
    "MatchingResult",
    "min_weight_perfect_matching",
    "rank_mahalanobis",
]

# Size of the start graph: each point's K nearest neighbours (pricing adds the rest).
_DEFAULT_K = 10
# Euclidean distance tiles are computed this many rows at a time.
_TILE_ROWS = 1024
# Neighbours kept per point for pricing (the start graph uses the first k).
_STORE = 96
# Largest distances outside this range are solved on a rescaled copy, so that
# the integer scaling and squared distances stay far from under/overflow.
_SAFE_MIN, _SAFE_MAX = 1e-120, 1e120


def _int_scale(max_distance: float, n_vertices: int) -> float:
    """Factor turning distances into the solver's integers.

    The largest distance maps to ``M = max_weight(n) - 16`` (about 2**50 for
    small n, 2**59 / n for large n), so the rounding resolution is
    ``max_distance / M`` and no sum of duals can overflow int64.
    """
    top = float(_core._mwpm_max_weight(n_vertices) - 16)
    return top / max_distance if max_distance > 0 else 1.0


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
        integer solve (``max_distance / 2**k`` with k between about 44 and 50).
    max_distance : float
        The largest distance (an upper bound of it for point input).
    stats : dict
        Solver counters (pricing rounds, edges of the final subgraph, blossom
        events of the last round).
    """

    mate: np.ndarray
    pairs: np.ndarray
    cost: float
    dropped: Optional[int]
    y: np.ndarray = dataclasses.field(repr=False)
    z: np.ndarray = dataclasses.field(repr=False)
    blossom_parent: np.ndarray = dataclasses.field(repr=False)
    resolution: float = dataclasses.field(repr=False)
    max_distance: float = dataclasses.field(repr=False)
    stats: dict = dataclasses.field(repr=False, compare=False)
    _distances: Callable = dataclasses.field(repr=False, compare=False)

    def certificate(self) -> dict:
        """Check the LP dual certificate against every pair, in float64.

        The reduced cost of pair ij is ``d_ij - y_i - y_j + sum of z over the
        blossoms holding both``. Returns a dict with ``max_violation`` (largest
        amount by which a reduced cost is negative), ``max_matched_slack``
        (largest |reduced cost| of a matched pair), ``min_z``,
        ``dual_objective`` and ``gap_bound``: an upper bound on ``cost -
        optimum`` by weak duality (after lowering every y by
        ``max_violation / 2`` to make the duals feasible).
        """
        import scipy.sparse as sp

        y = self.y
        nv = y.shape[0]
        nb = self.z.shape[0]
        # Sparse membership (vertex x blossom) to add the z of common blossoms.
        rows, cols = [], []
        parent = self.blossom_parent
        for v in range(nv):
            b = parent[v]
            while b != -1:
                rows.append(v)
                cols.append(b - nv)
                b = parent[b]
        member = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(nv, nb))
        zmember = member @ sp.diags(self.z) if nb else member
        mate = self.mate_with_ghost()
        worst = 0.0
        matched = np.empty(nv)
        for lo in range(0, nv, _TILE_ROWS):
            hi = min(nv, lo + _TILE_ROWS)
            rc = self._distances(lo, hi) - y[lo:hi, None] - y[None, :]  # ghost included
            if nb:
                rc += (zmember[lo:hi] @ member.T).toarray()
            local = np.arange(hi - lo)
            matched[lo:hi] = rc[local, mate[lo:hi]]
            rc[local, np.arange(lo, hi)] = np.inf
            worst = min(worst, float(rc.min()))
        sizes = np.asarray(member.sum(axis=0)).ravel()
        dual = float(y.sum() - (self.z * (sizes - 1) / 2).sum())
        violation = -worst
        return {
            "max_violation": violation,
            "max_matched_slack": float(np.abs(matched).max()),
            "min_z": float(self.z.min()) if nb else 0.0,
            "dual_objective": dual,
            "gap_bound": self.cost - dual + nv * violation / 2,
        }

    def verify(self, rtol: float = 1e-9) -> bool:
        """Prove optimality from the dual certificate.

        True when every blossom dual is >= 0, every pair is dual feasible and
        every matched pair tight up to ``tol = resolution + 1e-11 *
        max_distance`` (integer rounding plus float64 recomputation of the
        distances), and the resulting bound on ``cost - optimum`` is at most
        ``rtol * cost + N * tol``. It recomputes all N^2 distances (in
        tiles), so it costs about as much as a solve.
        """
        c = self.certificate()
        nv = self.y.shape[0]
        tol = self.resolution + 1e-11 * self.max_distance
        return (
            c["min_z"] >= 0
            and c["max_violation"] <= tol
            and c["max_matched_slack"] <= tol
            and c["gap_bound"] <= rtol * abs(self.cost) + nv * tol
        )

    def mate_with_ghost(self) -> np.ndarray:
        """``mate`` over the vertices of the solved graph (the ghost is index N)."""
        if self.dropped is None:
            return self.mate
        out = np.append(self.mate, self.dropped)
        out[self.dropped] = self.mate.shape[0]
        return out


def rank_mahalanobis(X) -> np.ndarray:
    """Rosenbaum's rank-based Mahalanobis distances between the rows of X.

    Each column is replaced by its ranks (average ranks for ties), the
    covariance of the ranks is rescaled so that every column has the variance
    of untied ranks 1..n, and ``D[i, j] = (r_i - r_j)^T S^+ (r_i - r_j)`` with
    ``S^+`` the Moore-Penrose pseudo-inverse (singular values below
    ``sqrt(eps)`` times the largest are dropped). Like R's ``mahalanobis()``
    used in the crossmatch package this is the *squared* form. Constant
    columns carry no information and are ignored.
    """
    from scipy.stats import rankdata

    X = as_matrix(X, "X", min_rows=2)
    check_finite(X, "X")
    n = X.shape[0]
    R = rankdata(np.asarray(X, dtype=np.float64), axis=0, method="average")
    R = R[:, R.var(axis=0) > 0]
    if R.shape[1] == 0:
        return np.zeros((n, n))
    cv = np.atleast_2d(np.cov(R, rowvar=False))
    vuntied = np.var(np.arange(1, n + 1), ddof=1)
    rat = np.sqrt(vuntied / np.diag(cv))
    cv = rat[:, None] * cv * rat[None, :]
    u, s, vt = np.linalg.svd(cv)
    keep = s > np.sqrt(np.finfo(float).eps) * s[0]
    icov = (vt[keep].T / s[keep]) @ u[:, keep].T
    G = R @ icov @ R.T
    g = np.diag(G)
    D = g[:, None] + g[None, :] - G - G.T
    np.maximum(D, 0, out=D)
    np.fill_diagonal(D, 0)
    return (D + D.T) / 2


_CDIST_METRICS = (
    "braycurtis", "canberra", "chebyshev", "cityblock", "correlation", "cosine", "dice", "euclidean",
    "hamming", "jaccard", "jensenshannon", "kulczynski1", "mahalanobis", "matching", "minkowski",
    "rogerstanimoto", "russellrao", "seuclidean", "sokalmichener", "sokalsneath", "sqeuclidean", "yule",
)  # fmt: skip


def _check_metric(metric) -> None:
    if callable(metric):
        return
    if not isinstance(metric, str) or (metric not in _CDIST_METRICS and metric != "rank_mahalanobis"):
        raise ValueError(
            f"metric must be a scipy.spatial.distance.cdist metric name, 'rank_mahalanobis' or a callable; got {metric!r}"
        )


def _euclidean_distances(X, Y=None, *, squared: bool = False) -> np.ndarray:
    """Euclidean distances between rows through one matrix product (BLAS speed).

    The points are centred first, and every entry where the expansion
    ``|x|^2 + |y|^2 - 2 x.y`` could lose more than ~1e-12 relative accuracy
    to cancellation (near or duplicated points) is recomputed directly from
    the differences, so the result agrees with ``cdist`` to about 1e-12
    relative on every entry.
    """
    X = np.asarray(X, dtype=np.float64)
    same = Y is None
    Yv = X if same else np.asarray(Y, dtype=np.float64)
    mu = X.mean(axis=0) if same else np.concatenate([X, Yv]).mean(axis=0)
    Xc = X - mu
    Yc = Xc if same else Yv - mu
    sx = np.einsum("ij,ij->i", Xc, Xc)
    sy = sx if same else np.einsum("ij,ij->i", Yc, Yc)
    D2 = Xc @ Yc.T
    D2 *= -2
    D2 += sx[:, None]
    D2 += sy[None, :]
    tau = (X.shape[1] + 4) * np.finfo(np.float64).eps * 1e12
    bad = D2 < tau * (sx[:, None] + sy[None, :])
    if same:
        np.fill_diagonal(bad, False)
    i, j = np.nonzero(bad)
    for lo in range(0, i.shape[0], 65536):
        ii, jj = i[lo : lo + 65536], j[lo : lo + 65536]
        diff = Xc[ii] - Yc[jj]
        D2[ii, jj] = np.einsum("ij,ij->i", diff, diff)
    np.maximum(D2, 0, out=D2)
    if same:
        D2 = np.maximum(D2, D2.T)  # exactly symmetric
        np.fill_diagonal(D2, 0)
    return D2 if squared else np.sqrt(D2, out=D2)


def _pairwise_distances(X, metric="euclidean", **kwargs) -> np.ndarray:
    """The full distance matrix of the rows of X for a cdist metric or 'rank_mahalanobis'."""
    from scipy.spatial.distance import cdist

    _check_metric(metric)
    X = as_matrix(X, "X", min_rows=1)
    check_finite(X, "X")
    if metric == "rank_mahalanobis":
        return rank_mahalanobis(X)
    if metric in ("euclidean", "sqeuclidean") and not kwargs:
        return _euclidean_distances(X, squared=metric == "sqeuclidean")
    Xf = X if X.dtype.kind == "f" else X.astype(np.float64)
    D = cdist(Xf, Xf, metric=metric, **kwargs)
    if not np.isfinite(D).all():
        raise ValueError(f"metric {metric!r} gave non-finite distances for these points (e.g. zero vectors)")
    if (D < 0).any():
        raise ValueError(f"metric {metric!r} gave negative distances")
    np.fill_diagonal(D, 0)
    if not np.array_equal(D, D.T):  # the solver needs exact symmetry
        D = np.triu(D) + np.triu(D, 1).T
    return D


def _check_distance_matrix(D, name: str = "D") -> np.ndarray:
    D = as_numeric_array(D, name)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix, got shape {D.shape}")
    if D.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 points (N >= 2), got N = {D.shape[0]}")
    if D.dtype.kind in "biu" or D.dtype.itemsize > 8 or D.dtype == np.float16:
        D = D.astype(np.float64)
    check_finite(D, name)
    if (D < 0).any():
        raise ValueError(f"{name} must not contain negative distances")
    if (np.diagonal(D) != 0).any():
        raise ValueError(f"{name} must have a zero diagonal")
    big = float(D.max())
    if not np.array_equal(D, D.T):
        if np.abs(D - D.T).max() > 1e-12 * big:
            raise ValueError(f"{name} must be symmetric (|D - D.T| up to 1e-12 * max(D) is tolerated)")
        D = np.triu(D) + np.triu(D, 1).T  # the upper triangle defines each pair
    return D


def _check_k(k) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (numbers.Integral, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return int(k)


def _solve_dense(D: np.ndarray, *, k: int, progress: bool) -> MatchingResult:
    """Matching of the complete graph of a validated distance matrix."""
    n = D.shape[0]
    ghost = n % 2 == 1
    nv = n + ghost
    big = float(D.max())
    unit, Dsolve = 1.0, D
    if big > 0 and not (_SAFE_MIN <= big <= _SAFE_MAX):
        unit, Dsolve = big, D / big  # extreme magnitudes: solve on a rescaled copy
    scale = _int_scale(big / unit, nv)
    with progress_callback(progress, "matching") as cb:
        r = _core._mwpm_dense(Dsolve, scale, ghost, k, cb)
    mate_full = r["mate"].astype(np.int64)

    def distances(lo, hi):
        d = np.asarray(D[lo:hi], dtype=np.float64)
        if ghost:
            d = np.concatenate([d, np.zeros((d.shape[0], 1))], axis=1)
            if hi == n + 1:
                d = np.concatenate([d, np.zeros((1, n + 1))], axis=0)
        return d

    return _make_result(mate_full, r, n, scale, unit, big, distances, lambda i, j: D[i, j].astype(np.float64))


def _make_result(mate_full, r, n, scale, unit, big, distances, pair_distance) -> MatchingResult:
    """Package a solver answer: integers = distances / unit * scale (unit != 1 after rescaling)."""
    ghost = mate_full.shape[0] > n
    dropped = int(mate_full[n]) if ghost else None
    mate = mate_full[:n].copy()
    if ghost:
        mate[dropped] = -1
    i = np.flatnonzero(mate > np.arange(n))
    pairs = np.column_stack([i, mate[i]]).astype(np.int64)
    cost = float(np.sum(pair_distance(pairs[:, 0], pairs[:, 1]))) if pairs.size else 0.0
    stats = dict(r["stats"])
    for key in ("rounds", "edges", "extra_pairs"):
        if key in r:
            stats[key] = r[key]
    to_real = unit / (2.0 * scale)  # solver duals are doubled
    return MatchingResult(
        mate=mate,
        pairs=pairs,
        cost=cost,
        dropped=dropped,
        y=r["y"] * to_real,
        z=r["z"] * to_real,
        blossom_parent=r["parent"].astype(np.int64),
        resolution=unit / scale if big > 0 else 0.0,
        max_distance=big,
        stats=stats,
        _distances=distances,
    )


def _deflated_duals(r: dict) -> np.ndarray:
    """y_v minus half the z of the blossoms holding v: feasible without blossoms (warm start)."""
    y, parent, z = r["y"], r["parent"], r["z"]
    nv = y.shape[0]
    total = np.zeros(nv, dtype=np.int64)
    cur = parent[:nv].astype(np.int64)
    live = np.flatnonzero(cur != -1)
    while live.size:
        total[live] += z[cur[live] - nv]
        cur[live] = parent[cur[live]]
        live = live[cur[live] != -1]
    return y - total // 2


def _solve_points_euclidean(X: np.ndarray, *, squared: bool, k: int, progress: bool) -> MatchingResult:
    """Matching of the complete Euclidean graph without forming the N x N matrix.

    Pass 1 computes distance tiles (one matrix product each) and keeps each
    point's ``store`` nearest others with exact distances, plus a certified
    lower bound (``radius``) on its distance to every point outside that list.
    The solver starts on the k nearest; each round then prices the lists and,
    for the few points whose duals could reach past their radius, the pairs
    that could still be violated, adds every violated pair and re-solves.
    When no pair is violated the duals are feasible for the complete graph,
    so the matching is optimal for it.
    """
    n, d = X.shape
    ghost = n % 2 == 1
    nv = n + ghost
    Xc = np.array(X, dtype=np.float64)  # float64 before centring (float32 would lose digits)
    Xc -= Xc.mean(axis=0)
    spread = float(np.abs(Xc).max())
    if squared and spread > 1e152:
        raise ValueError("points are too large for metric='sqeuclidean': squared distances overflow float64")
    unit = 1.0  # distances are solved in units of `unit` (rescaled for extreme magnitudes)
    if spread > 0 and not (_SAFE_MIN <= spread <= _SAFE_MAX):
        Xc /= spread
        unit = spread * spread if squared else spread
    sq = np.einsum("ij,ij->i", Xc, Xc)
    reach = 2.0 * float(np.sqrt(sq.max())) * (1 + 1e-9)  # >= every distance (triangle inequality)
    big = reach * reach if squared else reach
    scale = _int_scale(big, nv)

    def exact(u, v):
        d2 = _core._pair_sqdist(Xc, u, v)
        return d2 if squared else np.sqrt(d2)

    def to_int(dist):
        return np.floor(dist * scale + 0.5).astype(np.int64)

    store = max(1, min(n - 1, max(k, _STORE)))
    kk = min(k, store)
    cand = np.empty((n, store), dtype=np.int64)
    cand_w = np.empty((n, store), dtype=np.int64)
    radius = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    # |fast - exact| for a squared distance is below c * eps * (|x_i|^2 + |x_j|^2).
    err = 4 * (d + 4) * np.finfo(np.float64).eps * (sq + sq.max())
    tile = max(64, min(_TILE_ROWS, (1 << 24) // max(n, 1)))
    with progress_callback(progress, "matching") as cb:
        for lo in range(0, n, tile):
            hi = min(n, lo + tile)
            D2 = Xc[lo:hi] @ Xc.T
            D2 *= -2
            D2 += sq[lo:hi, None]
            D2 += sq[None, :]
            D2[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
            rows = np.arange(hi - lo)[:, None]
            if store < n - 1:
                part = np.argpartition(D2, store, axis=1)
                idx = part[:, :store]
                lower = np.maximum(D2[rows[:, 0], part[:, store]] - err[lo:hi], 0.0)
                radius[lo:hi] = np.floor((lower if squared else np.sqrt(lower)) * scale).astype(np.int64)
            else:
                idx = np.argsort(D2, axis=1)[:, :store]
            u = np.repeat(np.arange(lo, hi), store)
            w = to_int(exact(u, idx.ravel())).reshape(hi - lo, store)
            order = np.argsort(w, axis=1, kind="stable")
            cand[lo:hi] = idx[rows, order]
            cand_w[lo:hi] = w[rows, order]
            if cb is not None:
                cb(hi, n)

    def keys_of(a, b):
        a, b = np.minimum(a, b), np.maximum(a, b)
        return a * nv + b

    start = [keys_of(np.repeat(np.arange(n), kk), cand[:, :kk].ravel()), keys_of(np.arange(n - 1), np.arange(1, n))]
    if ghost:
        start.append(keys_of(np.arange(n), np.full(n, n)))
    keys = np.unique(np.concatenate(start))
    eu, ev = keys // nv, keys % nv
    w = np.zeros(keys.shape[0], dtype=np.int64)
    real = ev < n
    w[real] = to_int(exact(eu[real], ev[real]))
    rounds = 0
    extra_pairs = 0
    r = None  # the previous round's solution (warm start)
    known_k = np.empty(0, dtype=np.int64)  # weights of pairs priced outside the lists
    known_w = np.empty(0, dtype=np.int64)
    while True:
        rounds += 1
        warm = {} if r is None else {"y0": _deflated_duals(r), "mate0": r["mate"]}
        r = _core._mwpm_sparse(nv, eu.astype(np.int32), ev.astype(np.int32), w, **warm)
        if not r["perfect"]:
            raise RuntimeError("matching: start graph without a perfect matching (internal error)")
        y = r["y"]
        yr = y[:n]
        new_u, new_v, new_rc = [], [], []

        def price(u, v, wuv):
            fast = 2 * wuv - y[u] - y[v] < 0
            if fast.any():
                u, v, wuv = u[fast], v[fast], wuv[fast]
                rc = _core._mwpm_reduced_costs(y, r["parent"], r["z"], u.astype(np.int32), v.astype(np.int32), wuv)
                bad = rc < 0
                new_u.append(u[bad])
                new_v.append(v[bad])
                new_rc.append(rc[bad])

        price(np.repeat(np.arange(n), store), cand.ravel(), cand_w.ravel())
        # Pairs in neither list weigh at least max(radius_i, radius_j): they
        # need y_j > c_i and y_i > c_j with c = 2 radius - y.
        with np.errstate(over="ignore"):
            c = np.where(radius == np.iinfo(np.int64).max, radius, 2 * radius - yr)
        by_y = np.argsort(-yr, kind="stable")
        ys = yr[by_y]
        reach_count = np.searchsorted(-ys, -c, side="left")  # how many j have y_j > c_i
        rows = np.flatnonzero(reach_count > 0)
        fresh_k, fresh_w = [], []
        for lo in range(0, rows.shape[0], 256):
            block = rows[lo : lo + 256]
            J = by_y[: int(reach_count[block].max())]
            mask = (yr[J][None, :] > c[block][:, None]) & (yr[block][:, None] > c[J][None, :])
            mask &= J[None, :] > block[:, None]  # each unordered pair once
            bi, bj = np.nonzero(mask)
            if not bi.size:
                continue
            u, v = block[bi], J[bj]
            # The same pairs come back round after round: keep their weights.
            kk_ = u * nv + v
            pos = np.minimum(np.searchsorted(known_k, kk_), known_k.shape[0] - 1)
            hit = known_k[pos] == kk_ if known_k.size else np.zeros(kk_.shape, dtype=bool)
            wuv = np.empty(kk_.shape, dtype=np.int64)
            wuv[hit] = known_w[pos[hit]]
            miss = ~hit
            if miss.any():
                wuv[miss] = to_int(exact(u[miss], v[miss]))
                fresh_k.append(kk_[miss])
                fresh_w.append(wuv[miss])
                extra_pairs += int(miss.sum())
            price(u, v, wuv)
        if fresh_k:
            allk = np.concatenate([known_k, *fresh_k])
            allw = np.concatenate([known_w, *fresh_w])
            order = np.argsort(allk, kind="stable")
            known_k, known_w = allk[order], allw[order]
        if new_u:
            # At most kk violated pairs per point and round, the most violated
            # first (ties between duplicated points can violate thousands).
            nu, nvv, nrc = np.concatenate(new_u), np.concatenate(new_v), np.concatenate(new_rc)
            order = np.lexsort((nrc, nu))
            nu, nvv = nu[order], nvv[order]
            group_start = np.searchsorted(nu, nu, side="left")
            keep = np.arange(nu.size) - group_start < kk
            add = np.unique(keys_of(nu[keep], nvv[keep]))
        else:
            add = np.empty(0, dtype=np.int64)
        if add.size == 0:
            break
        au, av = add // nv, add % nv
        eu = np.concatenate([eu, au])
        ev = np.concatenate([ev, av])
        w = np.concatenate([w, to_int(exact(au, av))])
    r["rounds"] = rounds
    r["edges"] = int(eu.shape[0])
    r["extra_pairs"] = extra_pairs
    mate_full = r["mate"].astype(np.int64)

    def distances(lo, hi):
        hi_real = min(hi, n)
        out = np.zeros((hi - lo, nv))
        if lo < hi_real:
            out[: hi_real - lo, :n] = _euclidean_distances(Xc[lo:hi_real], Xc, squared=squared) * unit
        return out

    return _make_result(mate_full, r, n, scale, unit, big * unit, distances, lambda u, v: exact(u, v) * unit)


def min_weight_perfect_matching(D=None, *, points=None, metric="euclidean", k: int = _DEFAULT_K,
                                progress: bool = False, **metric_kwargs) -> MatchingResult:  # fmt: skip
    """Exact minimum-weight perfect matching of the complete graph on N points.

    Give either a distance matrix ``D`` or ``points`` (rows) with a ``metric``.

    Parameters
    ----------
    D : array_like, shape (N, N), optional
        Symmetric distances with a zero diagonal, finite and >= 0. float32
        and float64 are read in place; other dtypes are converted to float64.
        An asymmetry up to 1e-12 * max(D) is tolerated: the upper triangle
        then defines each pair (on a symmetric copy).
    points : array_like, shape (N, d), optional
        Points; the distances are ``scipy.spatial.distance.cdist(points,
        points, metric, **metric_kwargs)`` or, with
        ``metric="rank_mahalanobis"``, :func:`rank_mahalanobis`. For
        ``"euclidean"`` and ``"sqeuclidean"`` the N x N matrix is never
        formed: neighbour search and pricing use distance tiles from one
        matrix product each, and every distance the solver uses is
        recomputed from the coordinate differences (in float64).
    metric : str or callable
        Used with ``points`` only.
    k : int
        The solver starts on each point's k nearest neighbours and adds every
        pair that the dual solution prices out as improving, until none is
        left; k only affects speed, never the result.
    progress : bool
        Show a progress bar (needs tqdm).

    Returns
    -------
    MatchingResult
        ``mate``, ``pairs``, ``cost`` and ``verify()``.

    Notes
    -----
    *Exactness.* Distances are rounded to integer multiples of
    ``resolution = max(D) / M`` (M between about 2**44 and 2**50, so the sum of
    N/2 matched weights and all duals fit in int64), and the blossom algorithm
    solves that integer problem exactly. The returned matching is optimal for
    the real distances to within ``N * resolution``; ``verify()`` proves it
    from the LP dual certificate in float64.

    *Ties.* Several matchings may be optimal (duplicated points, integer
    distances); which one is returned is deterministic but unspecified:
    compare costs, not pairs.

    *Odd N.* A ghost point at distance 0 from every point is added; the point
    matched to it is left out (``mate == -1``, ``dropped``), i.e. the point
    whose removal makes the remaining matching cheapest. This is how R's
    crossmatch package handles odd N.
    """
    if (D is None) == (points is None):
        raise ValueError("give exactly one of D (a distance matrix) or points=")
    k = _check_k(k)
    if points is not None:
        _check_metric(metric)
        X = as_matrix(points, "points", min_rows=1)
        if X.shape[0] < 2:
            raise ValueError(f"points needs at least 2 rows (N >= 2), got N = {X.shape[0]}")
        check_finite(X, "points")
        if metric in ("euclidean", "sqeuclidean") and not metric_kwargs:
            return _solve_points_euclidean(X, squared=metric == "sqeuclidean", k=k, progress=progress)
        D = _pairwise_distances(X, metric, **metric_kwargs)
        return _solve_dense(D, k=k, progress=progress)
    D = _check_distance_matrix(D, "D")
    return _solve_dense(D, k=k, progress=progress)
