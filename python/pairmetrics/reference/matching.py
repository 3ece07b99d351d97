"""Reference minimum-weight perfect matching and cross-match statistics.

Plain Python, exponential or quadratic on purpose: exhaustive matching for
small N, exact rational arithmetic for the cross-match null distribution.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache
from itertools import combinations

__all__ = [
    "min_weight_perfect_matching",
    "crossmatch_pmf",
    "crossmatch_moments",
    "crossmatch_counts",
    "crossmatch_statistics",
    "rank_mahalanobis",
    "multi_crossmatch_counts",
    "multi_crossmatch_moments",
    "multi_crossmatch_moments_enumerated",
    "multi_crossmatch_statistic",
]


def min_weight_perfect_matching(D):
    """Exhaustive optimum for small N (<= ~14): returns (cost, mate).

    Odd N: a ghost point at distance 0 from everyone joins the matching and
    its partner gets ``mate = -1``. Ties are broken towards the lowest index.
    """
    n = len(D)
    N = n + (n % 2)

    def d(i, j):
        return 0.0 if i >= n or j >= n else float(D[min(i, j)][max(i, j)])

    @cache
    def best(mask):
        if mask == 0:
            return 0.0, ()
        i = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << i)
        out = None
        j = 0
        while rest >> j:
            if rest >> j & 1:
                c, pairs = best(rest & ~(1 << j))
                c += d(i, j)
                if out is None or c < out[0]:
                    out = (c, ((i, j),) + pairs)
            j += 1
        return out

    cost, pairs = best((1 << N) - 1)
    mate = [-1] * n
    for i, j in pairs:
        if i < n and j < n:
            mate[i], mate[j] = j, i
    return cost, mate


def crossmatch_pmf(N, n):
    """Exact P(A1 = a1) as Fractions: {a1: probability} (N even)."""
    I = N // 2
    m = N - n
    out = {}
    for a1 in range(0, I + 1):
        if (n - a1) % 2 or a1 > n or a1 > m:
            continue
        a2 = (n - a1) // 2
        a0 = (m - a1) // 2
        out[a1] = Fraction(
            2**a1 * math.factorial(I), math.comb(N, n) * math.factorial(a0) * math.factorial(a1) * math.factorial(a2)
        )
    return out


def crossmatch_moments(N, n):
    """Null mean and variance of A1 from the exact distribution (Fractions)."""
    pmf = crossmatch_pmf(N, n)
    mean = sum(a * p for a, p in pmf.items())
    var = sum((a - mean) ** 2 * p for a, p in pmf.items())
    return mean, var


def crossmatch_counts(z, mate):
    """(a0, a1, a2): pairs within group 0, across groups, within group 1."""
    a = [0, 0, 0]
    for i, j in enumerate(mate):
        if j > i:
            a[int(z[i]) + int(z[j])] += 1
    return tuple(a)


def crossmatch_statistics(z, mate):
    """R crossmatch's fields from labels and a matching (mate -1 = dropped)."""
    a0, a1, a2 = crossmatch_counts(z, mate)
    N = 2 * (a0 + a1 + a2)
    n = a1 + 2 * a2
    mean, var = crossmatch_moments(N, n)
    pval = sum(p for a, p in crossmatch_pmf(N, n).items() if a <= a1)
    dev = (a1 - float(mean)) / math.sqrt(float(var)) if var > 0 else float("nan")
    approx = 0.5 * math.erfc(-dev / math.sqrt(2)) if not math.isnan(dev) else float("nan")
    return {"a1": a1, "Ea1": float(mean), "Va1": float(var), "dev": dev, "pval": float(pval), "approxpval": approx}


def _ranks(col):
    order = sorted(range(len(col)), key=lambda i: col[i])
    r = [0.0] * len(col)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and col[order[j + 1]] == col[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2 + 1
        i = j + 1
    return r


def rank_mahalanobis(X):
    """Rosenbaum's rank-based (squared) Mahalanobis distances, transcribed from the R recipe."""
    import numpy as np

    n = len(X)
    k = len(X[0])
    cols = [_ranks([X[i][j] for i in range(n)]) for j in range(k)]
    cols = [c for c in cols if max(c) != min(c)]
    if not cols:
        return [[0.0] * n for _ in range(n)]
    k = len(cols)
    mean = [sum(c) / n for c in cols]
    cv = [
        [sum((cols[a][i] - mean[a]) * (cols[b][i] - mean[b]) for i in range(n)) / (n - 1) for b in range(k)]
        for a in range(k)
    ]
    vuntied = sum((i + 1 - (n + 1) / 2) ** 2 for i in range(n)) / (n - 1)
    rat = [math.sqrt(vuntied / cv[a][a]) for a in range(k)]
    cv = [[rat[a] * cv[a][b] * rat[b] for b in range(k)] for a in range(k)]
    icov = np.linalg.pinv(np.array(cv), rcond=math.sqrt(2.220446049250313e-16)).tolist()
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            diff = [cols[a][i] - cols[a][j] for a in range(k)]
            out[i][j] = sum(diff[a] * icov[a][b] * diff[b] for a in range(k) for b in range(k))
    return out


def _cross_pairs(K):
    return list(combinations(range(K), 2))


def multi_crossmatch_counts(labels, mate):
    """(groups, sizes, counts): sorted distinct labels, matched points per group and the
    K x K symmetric matrix of matched pairs by group (diagonal: pairs within a group)."""
    groups = sorted(set(labels))
    code = {g: i for i, g in enumerate(groups)}
    K = len(groups)
    sizes = [0] * K
    counts = [[0] * K for _ in range(K)]
    for i, j in enumerate(mate):
        if j >= 0:
            sizes[code[labels[i]]] += 1
        if j > i:
            a, b = code[labels[i]], code[labels[j]]
            counts[a][b] += 1
            if a != b:
                counts[b][a] += 1
    return groups, sizes, counts


def _falling(sizes, sequence):
    """P(four (or two) given distinct points carry the groups of ``sequence``), labels shuffled."""
    N = sum(sizes)
    used = [0] * len(sizes)
    p = Fraction(1)
    for t, g in enumerate(sequence):
        p *= Fraction(sizes[g] - used[g], N - t)
        used[g] += 1
    return p


def multi_crossmatch_moments(sizes):
    """Exact null mean and covariance (Fractions) of the cross counts A_ij, i < j, from the probabilities
    that one matched pair joins (i, j) and that two distinct matched pairs join (i, j) and (k, l)."""
    N = sum(sizes)
    I = N // 2
    pairs = _cross_pairs(len(sizes))
    one = [_falling(sizes, (i, j)) + _falling(sizes, (j, i)) for i, j in pairs]
    mean = [I * p for p in one]
    cov = []
    for r, (i, j) in enumerate(pairs):
        row = []
        for s, (k, l) in enumerate(pairs):
            two = 0
            if I > 1:  # two distinct matched pairs exist
                two = sum(_falling(sizes, (a, b, c, d)) for a, b in ((i, j), (j, i)) for c, d in ((k, l), (l, k)))
            second = (mean[r] if r == s else 0) + I * (I - 1) * two  # E[A_r A_s]
            row.append(second - mean[r] * mean[s])
        cov.append(row)
    return mean, cov


def _arrangements(counts, length):
    """Every distinct sequence with ``counts[g]`` copies of g (each equally likely under shuffling)."""
    if length == 0:
        yield ()
        return
    for g, c in enumerate(counts):
        if c:
            counts[g] -= 1
            for rest in _arrangements(counts, length - 1):
                yield (g,) + rest
            counts[g] += 1


def multi_crossmatch_moments_enumerated(sizes, mate):
    """Mean and covariance (Fractions) of the cross counts over every arrangement of the labels on
    the matched points of ``mate`` (tiny N only)."""
    points = [i for i, j in enumerate(mate) if j >= 0]
    position = {p: t for t, p in enumerate(points)}
    matched = [(position[i], position[j]) for i, j in enumerate(mate) if j > i]
    pairs = _cross_pairs(len(sizes))
    seen = []
    for arrangement in _arrangements(list(sizes), len(points)):
        got = {pair: 0 for pair in pairs}
        for u, v in matched:
            a, b = sorted((arrangement[u], arrangement[v]))
            if a != b:
                got[(a, b)] += 1
        seen.append([got[pair] for pair in pairs])
    total = len(seen)
    mean = [Fraction(sum(v[r] for v in seen), total) for r in range(len(pairs))]
    cov = [
        [Fraction(sum(v[r] * v[s] for v in seen), total) - mean[r] * mean[s] for s in range(len(pairs))]
        for r in range(len(pairs))
    ]
    return mean, cov


def _solve_consistent(A, b):
    """(x, rank) with A x = b by exact Gauss-Jordan elimination; b must lie in the range of A."""
    n = len(A)
    rows = [list(A[r]) + [b[r]] for r in range(n)]
    pivots = []
    r = 0
    for c in range(n):
        pivot = next((t for t in range(r, n) if rows[t][c] != 0), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        rows[r] = [v / rows[r][c] for v in rows[r]]
        for t in range(n):
            if t != r and rows[t][c] != 0:
                f = rows[t][c]
                rows[t] = [v - f * w for v, w in zip(rows[t], rows[r])]
        pivots.append(c)
        r += 1
    assert all(row[-1] == 0 for row in rows[r:]), "b is not in the range of A"
    x = [Fraction(0)] * n
    for t, c in enumerate(pivots):
        x[c] = rows[t][-1]
    return x, len(pivots)


def multi_crossmatch_statistic(labels, mate):
    """The multi-sample cross-match statistic (A - E)' Sigma^- (A - E) and df = rank(Sigma), exactly.

    Any generalised inverse gives the same value since A - E lies in the range of Sigma.
    """
    groups, sizes, counts = multi_crossmatch_counts(labels, mate)
    mean, cov = multi_crossmatch_moments(sizes)
    d = [counts[i][j] - m for (i, j), m in zip(_cross_pairs(len(groups)), mean)]
    x, rank = _solve_consistent(cov, d)
    return sum(a * b for a, b in zip(d, x)), rank
