"""Reference per-group results: the ungrouped reference run on each group's
samples, one group after another, and the size-weighted mean of the estimates.
"""

from __future__ import annotations

import math

from . import paired, roc_auc, survival

__all__ = ["split", "weighted_mean", "pair_counts", "auc", "concordance"]


def split(groups, *arrays):
    """(sorted distinct keys, per key the tuple of each array's entries in that group, in input order)."""
    keys = sorted(set(groups.tolist() if hasattr(groups, "tolist") else groups))
    parts = []
    for key in keys:
        rows = [i for i, g in enumerate(groups) if g == key]
        parts.append(tuple(None if a is None else [a[i] for i in rows] for a in arrays))
    return keys, parts


def weighted_mean(estimates, sizes):
    """Mean of the estimates weighted by the group sizes, leaving NaN estimates out (NaN if all are)."""
    kept = [(e, s) for e, s in zip(estimates, sizes) if not math.isnan(e)]
    if not kept:
        return math.nan
    return sum(e * s for e, s in kept) / sum(s for _, s in kept)


def pair_counts(scores, labels, groups, min_dist=0.5):
    """(keys, [(rankable, correct, tied, incorrect) of each group])."""
    keys, parts = split(groups, scores, labels)
    return keys, [paired.pair_counts(s, y, min_dist) for s, y in parts]


def auc(positive, scores, groups, weights=None):
    """(keys, [ROC AUC of each group]), NaN where a group lacks a class (or its weight)."""
    keys, parts = split(groups, positive, scores, weights)
    out = []
    for p, s, w in parts:
        has_both = any(p) and not all(p)
        if w is not None:
            has_both = any(wi > 0 for pi, wi in zip(p, w) if pi) and any(wi > 0 for pi, wi in zip(p, w) if not pi)
        out.append(roc_auc.weighted_auc(p, s, w) if has_both else math.nan)
    return keys, out


def concordance(times, predicted, events, groups):
    """(keys, [(counts, estimate, variance) of each group]); estimate and variance NaN without comparable pairs."""
    keys, parts = split(groups, times, predicted, events)
    out = []
    for t, x, e in parts:
        counts, _ = survival.concordance_counts(t, x, e)
        if counts[0] + counts[1] + counts[2] == 0:
            out.append((counts, math.nan, math.nan))
        else:
            out.append((counts, *survival.concordance_jackknife(t, x, e)))
    return keys, out
