"""Reference rank statistics: every pair of samples visited, every rank counted by hand.

Kendall's pair counts, Somers' D with its asymptotic variance, Spearman's rho, Vigna's weighted tau
(by the pair definition), Mann-Whitney U, and the exact null distributions of U (all splits enumerated).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb, sqrt

__all__ = [
    "kendall_counts",
    "kendall_tau_b",
    "somers_d",
    "average_ranks",
    "spearman_rho",
    "weighted_tau",
    "mann_whitney_u",
    "mann_whitney_null_pmf",
    "mann_whitney_conditional_cdf",
    "kendall_null_pmf",
]


def _sign(v):
    return int(v > 0) - int(v < 0)


def kendall_counts(x, y):
    """(concordant, discordant, tied in x only, tied in y only, tied in both) over all pairs."""
    con = dis = tx = ty = both = 0
    for i, j in combinations(range(len(x)), 2):
        sx, sy = _sign(x[i] - x[j]), _sign(y[i] - y[j])
        if sx == 0 and sy == 0:
            both += 1
        elif sx == 0:
            tx += 1
        elif sy == 0:
            ty += 1
        elif sx == sy:
            con += 1
        else:
            dis += 1
    return con, dis, tx, ty, both


def kendall_tau_b(x, y):
    """(P - Q) / sqrt((P + Q + T) (P + Q + U))."""
    con, dis, tx, ty, _ = kendall_counts(x, y)
    return (con - dis) / sqrt((con + dis + tx) * (con + dis + ty))


def somers_d(x, y):
    """(D(Y|X), S): (P - Q) / pairs apart in x, and S = sum_k (c_k - d_k)^2 - (2 (P - Q))^2 / n."""
    n = len(x)
    con, dis, _, ty, _ = kendall_counts(x, y)
    per_sample = [sum(_sign(x[k] - x[j]) * _sign(y[k] - y[j]) for j in range(n) if j != k) for k in range(n)]
    s = sum(v * v for v in per_sample) - Fraction(4 * (con - dis) ** 2, n)
    return Fraction(con - dis, con + dis + ty), s


def average_ranks(values):
    """1-based ranks, tied values sharing the mean of their ranks."""
    return [sum(1 for w in values if w < v) + (sum(1 for w in values if w == v) + 1) / 2 for v in values]


def spearman_rho(x, y):
    """Pearson's correlation of the average ranks."""
    rx, ry = average_ranks(x), average_ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def weighted_tau(x, y, weights, additive=True):
    """Vigna's weighted tau with given element weights: each pair weighs w_i + w_j (or w_i w_j)."""
    n = len(x)
    num = tot = tx = ty = 0.0
    for i, j in combinations(range(n), 2):
        w = weights[i] + weights[j] if additive else weights[i] * weights[j]
        tot += w
        sx, sy = _sign(x[i] - x[j]), _sign(y[i] - y[j])
        num += w * sx * sy
        tx += w * (sx == 0)
        ty += w * (sy == 0)
    return num / sqrt(tot - tx) / sqrt(tot - ty)


def mann_whitney_u(x, y):
    """U of x: pairs with x above y, plus half the tied pairs."""
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)


def mann_whitney_null_pmf(m, n):
    """P(U = u), u = 0..m n, by enumerating the positions of the first sample among m + n distinct values."""
    counts = [0] * (m * n + 1)
    for chosen in combinations(range(m + n), m):
        counts[sum(p - k for k, p in enumerate(chosen))] += 1
    return [Fraction(c, comb(m + n, m)) for c in counts]


def mann_whitney_conditional_cdf(pooled, m, doubled_u):
    """P(2U <= doubled_u) over all choices of the m first-sample values among the pooled ones."""
    total = hits = 0
    n = len(pooled)
    for chosen in combinations(range(n), m):
        inside = set(chosen)
        a = [pooled[i] for i in chosen]
        b = [pooled[i] for i in range(n) if i not in inside]
        total += 1
        hits += 2 * mann_whitney_u(a, b) <= doubled_u
    return Fraction(hits, total)


def kendall_null_pmf(n):
    """P(D = k) for the inversions of a random permutation of n, k = 0..n(n-1)/2 (Mahonian numbers)."""
    row = [1]
    for j in range(2, n + 1):
        new = [0] * (len(row) + j - 1)
        for k, c in enumerate(row):
            for i in range(j):
                new[k + i] += c
        row = new
    total = sum(row)
    return [Fraction(c, total) for c in row]
