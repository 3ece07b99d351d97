"""Reference ranking metrics: binary curves and average precision threshold by
threshold, and the row metrics (LRAP, coverage, ranking loss, DCG, top-k) label
by label, straight from their definitions.
"""

from __future__ import annotations

import math

__all__ = [
    "binary_curve",
    "average_precision",
    "label_ranking_average_precision",
    "coverage",
    "ranking_loss",
    "dcg",
    "ideal_dcg",
    "top_k_hit",
]


def binary_curve(positive, scores, weights=None):
    """(thresholds, tps, fps): every distinct score of nonzero weight, decreasing, with the total weight of
    positives and of negatives scored at or above it."""
    n = len(scores)
    weights = [1.0] * n if weights is None else [float(w) for w in weights]
    kept = [i for i in range(n) if weights[i] != 0]
    thresholds = sorted({scores[i] for i in kept}, reverse=True)
    tps = [sum(weights[i] for i in kept if positive[i] and scores[i] >= t) for t in thresholds]
    fps = [sum(weights[i] for i in kept if not positive[i] and scores[i] >= t) for t in thresholds]
    return thresholds, tps, fps


def average_precision(positive, scores, weights=None):
    """sum over thresholds (decreasing) of (recall - previous recall) * precision; None without positives."""
    _, tps, fps = binary_curve(positive, scores, weights)
    if not tps or tps[-1] == 0:
        return None
    total, previous = 0.0, 0.0
    for tp, fp in zip(tps, fps):
        precision = tp / (tp + fp) if tp + fp else 0.0
        total += (tp - previous) / tps[-1] * precision
        previous = tp
    return total


def label_ranking_average_precision(relevant, scores):
    """Mean over relevant labels j of |{relevant l: s_l >= s_j}| / |{l: s_l >= s_j}|; 1 when all or none
    are relevant."""
    labels = range(len(scores))
    chosen = [j for j in labels if relevant[j]]
    if not chosen or len(chosen) == len(scores):
        return 1.0
    ratios = []
    for j in chosen:
        rank = sum(1 for m in labels if scores[m] >= scores[j])
        rank_relevant = sum(1 for m in chosen if scores[m] >= scores[j])
        ratios.append(rank_relevant / rank)
    return sum(ratios) / len(ratios)


def coverage(relevant, scores):
    """|{l: s_l >= the lowest relevant score}|; 0 without relevant labels."""
    chosen = [scores[j] for j in range(len(scores)) if relevant[j]]
    if not chosen:
        return 0.0
    return float(sum(1 for s in scores if s >= min(chosen)))


def ranking_loss(relevant, scores):
    """The fraction of (relevant, irrelevant) pairs with the irrelevant label scored at least as high."""
    chosen = [j for j in range(len(scores)) if relevant[j]]
    others = [j for j in range(len(scores)) if not relevant[j]]
    if not chosen or not others:
        return 0.0
    wrong = sum(1 for r in chosen for q in others if scores[q] >= scores[r])
    return wrong / (len(chosen) * len(others))


def _discounts(n, k, log_base):
    return [(1 / (math.log(r + 2) / math.log(log_base)) if k is None or r < k else 0.0) for r in range(n)]


def dcg(gains, scores, k=None, log_base=2, ignore_ties=False):
    """DCG of one row. Tied scores: each gets the mean gain of its tie group and the group shares the
    discounts of the ranks it spans; ignore_ties ranks ties the later label first."""
    n = len(scores)
    discount = _discounts(n, k, log_base)
    if ignore_ties:
        order = sorted(range(n), key=lambda j: (scores[j], j), reverse=True)
        return sum(gains[j] * discount[r] for r, j in enumerate(order))
    total, start = 0.0, 0
    for value in sorted(set(scores), reverse=True):
        group = [j for j in range(n) if scores[j] == value]
        mean_gain = sum(gains[j] for j in group) / len(group)
        total += mean_gain * sum(discount[start : start + len(group)])
        start += len(group)
    return total


def ideal_dcg(gains, k=None):
    """DCG of the gains sorted decreasingly (log base 2)."""
    discount = _discounts(len(gains), k, 2)
    return sum(g * d for g, d in zip(sorted(gains, reverse=True), discount))


def top_k_hit(scores, label, k):
    """Whether `label` is among the k first labels ranked by score, ties ranked the later label first."""
    order = sorted(range(len(scores)), key=lambda j: (scores[j], j), reverse=True)
    return order.index(label) < k
