"""Reference paired evaluation: the O(n^2) definition, and a re-implementation
of the O(n log n) procedure described by the ``pairedeval`` package.

A pair (i, j) is rankable when the larger label minus the smaller is at least
``min_dist``; it is correct when the scores order it the same way (strictly),
tied when the scores are equal, incorrect otherwise. Integer (and bool) labels
are subtracted exactly, as Python integers; float labels in double precision.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pair_counts", "per_sample_counts", "pairedeval_procedure", "concordance_variance", "group_dominance"]


def _label(value):
    """A label as Python sees it exactly: int for integers and bools, float otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def _gap(a, b):
    """Larger minus smaller: exact for integers, in double precision for floats."""
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b) - min(a, b)
    return float(max(a, b)) - float(min(a, b))


def pair_counts(scores, labels, min_dist=0.5):
    """(rankable, correct, tied, incorrect) by looking at every pair."""
    scores, labels = list(scores), [_label(v) for v in labels]
    rankable = correct = tied = 0
    for i in range(len(scores)):
        for j in range(i + 1, len(scores)):
            if _gap(labels[i], labels[j]) < min_dist:
                continue
            rankable += 1
            high, low = (i, j) if labels[i] > labels[j] else (j, i)
            if scores[high] == scores[low]:
                tied += 1
            elif scores[high] > scores[low]:
                correct += 1
    return rankable, correct, tied, rankable - correct - tied


def per_sample_counts(scores, labels, min_dist=0.5):
    """Per sample i: how many rankable pairs it is in, and of those how many
    are tied and how many incorrect."""
    n = len(scores)
    rankable, tied, incorrect = [0] * n, [0] * n, [0] * n
    labels = [_label(v) for v in labels]
    for i in range(n):
        for j in range(n):
            if i == j or _gap(labels[i], labels[j]) < min_dist:
                continue
            rankable[i] += 1
            high, low = (i, j) if labels[i] > labels[j] else (j, i)
            if scores[high] == scores[low]:
                tied[i] += 1
            elif scores[high] < scores[low]:
                incorrect[i] += 1
    return rankable, tied, incorrect


def pairedeval_procedure(scores, labels, min_dist=0.5):
    """The O(n log n) procedure of ``pairedeval.paired_eval``, written afresh.

    Rankable pairs: two pointers over the sorted labels. Mis-ranked pairs:
    labels put in the order of ``np.argsort(scores)`` and merge-sorted (top
    down, element by element on numpy arrays, as the original does) while
    counting pairs whose earlier label is at least ``min_dist`` above the later
    one. Correct = rankable - mis-ranked. Like the original, tied scores are
    ordered by ``np.argsort`` (so the result depends on input order when
    scores tie); on tie-free scores it equals :func:`pair_counts`. Labels are
    compared in float64 here (the original subtracts in the input dtype).
    """
    labels = np.asarray(labels, dtype=np.float64)
    ordered = np.sort(labels)
    rankable = 0
    low = 0
    for high in range(len(ordered)):
        while low < high and ordered[high] - ordered[low] >= min_dist:
            low += 1
        rankable += low
    sequence = labels[np.argsort(scores)]
    workspace = np.empty_like(sequence)
    misranked = _merge_count(sequence, workspace, 0, len(sequence), min_dist)
    return rankable, rankable - misranked


def _merge_count(seq, work, begin, end, min_dist):
    """Sorts seq[begin:end] in place; returns #{p < q : seq[p] - seq[q] >= min_dist}."""
    if end - begin < 2:
        return 0
    mid = (begin + end) // 2
    count = _merge_count(seq, work, begin, mid, min_dist) + _merge_count(seq, work, mid, end, min_dist)
    start = begin  # first left label at least min_dist above the current right one
    i, k = begin, begin
    for j in range(mid, end):
        while start < mid and seq[start] - seq[j] < min_dist:
            start += 1
        count += mid - start
        while i < mid and seq[i] <= seq[j]:
            work[k] = seq[i]
            i, k = i + 1, k + 1
        work[k] = seq[j]
        k += 1
    work[k:end] = seq[i:mid]
    seq[begin:end] = work[begin:end]
    return count


def concordance_variance(scores_a, scores_b, labels, min_dist=0.5):
    """Brute-force U-statistic (co)variances of two concordance indices.

    The concordance index of a model is C = sum of credits / rankable pairs,
    with credit 1 for a correct pair and 1/2 for a tied one. With per-sample
    components g_i = sum_j (credit_ij - C) over the rankable partners j of i,
    Var(C) = n / (n - 1) * sum_i g_i**2 / R**2, and likewise the covariance
    of two models. Returns (C_a, C_b, var_a, var_b, cov).
    """
    labels = [_label(v) for v in labels]
    n = len(labels)
    credit = {"a": [[0.0] * n for _ in range(n)], "b": [[0.0] * n for _ in range(n)]}
    rankable = [[False] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i == j or _gap(labels[i], labels[j]) < min_dist:
                continue
            rankable[i][j] = True
            high, low = (i, j) if labels[i] > labels[j] else (j, i)
            for name, s in (("a", scores_a), ("b", scores_b)):
                credit[name][i][j] = 1.0 if s[high] > s[low] else 0.5 if s[high] == s[low] else 0.0
    total = sum(map(sum, rankable)) / 2
    if total == 0:
        return (math.nan,) * 5
    c = {k: sum(map(sum, v)) / 2 / total for k, v in credit.items()}
    g = {k: [sum(credit[k][i][j] - c[k] for j in range(n) if rankable[i][j]) for i in range(n)] for k in credit}
    scale = n / (n - 1) / total**2
    var_a = scale * sum(x * x for x in g["a"])
    var_b = scale * sum(x * x for x in g["b"])
    cov = scale * sum(x * y for x, y in zip(g["a"], g["b"]))
    return c["a"], c["b"], var_a, var_b, cov


def group_dominance(values, groups, thresholds, query_groups, weights=None, query_weights=None):
    """(lower, same, higher): over the pairs (point i, query j) with
    ``values[i] >= thresholds[j]``, weighted by ``weights[i] * query_weights[j]``
    (default 1), the weight of those whose ``groups[i]`` is below, equal to and
    above ``query_groups[j]`` (the between-partition step of paired evaluation
    on a cluster)."""
    weights = [1] * len(values) if weights is None else [int(w) for w in weights]
    query_weights = [1] * len(thresholds) if query_weights is None else [int(w) for w in query_weights]
    lower = same = higher = 0
    for value, group, weight in zip(values, groups, weights):
        for threshold, query_group, query_weight in zip(thresholds, query_groups, query_weights):
            if value >= threshold:
                pair = weight * query_weight
                lower += pair * (group < query_group)
                same += pair * (group == query_group)
                higher += pair * (group > query_group)
    return lower, same, higher
