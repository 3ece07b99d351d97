"""``roc_auc_score`` on Dask collections: the in-memory numbers, computed on the cluster.

Every check and every result goes through the seams of
:mod:`pairmetrics._roc_auc`, so messages, warnings and averaging are those of
the in-memory call. What reaches the client: a few counts per block, the
distinct values of ``y_true`` (at most ``UNIQUE_LIMIT`` of them), a sample of
score rows, and six numbers per score partition and label.

One binary AUC (a label, a class, or a pair of classes) costs one shuffle:
the rows are cut by score range into partitions (equal scores share one,
from bounds placed on a sample of the scores), the C++ kernel finds each
partition's AUC and weight totals, and as every score of a partition lies
below every score of the next one, the pairs between partitions are all
correctly ranked or all mis-ranked: their area is a product of totals. A
partial AUC (``max_fpr``) reruns the kernel on the one partition where the
false positive rate crosses ``max_fpr``. The partitions' weight totals are
combined as shares of the class totals, so that any scale of weights works
(1e-300 to 1e300: no product of totals overflows or underflows). The sums can
differ from the in-memory ones in the last bits (a different order of
additions); counts are exact.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from .. import _labels
from .. import _roc_auc as roc
from .._routing import register, warn
from ._blocks import first_report
from ._helpers import (
    align_rows,
    compute,
    first_nonfinite,
    key_bounds,
    offsets,
    partition_count,
    partition_data,
    raise_nonfinite,
    sample_rows,
    split_by_key,
    to_dask_array,
    tree_reduce,
)

__all__ = ["UNIQUE_LIMIT"]

# Distinct values of y_true brought to the client; more means a continuous or
# multi-class target with more classes than any y_score has columns (an error).
UNIQUE_LIMIT = 4096


# --------------------------------------------------------------------------- one pass: checks and samples


def _summary(y, s, w, n_parts, n_blocks, seed, limit):
    """Per block: non-finite reports, distinct labels and counts (capped), whole labels,
    probability rows, and a sample of (label, score) rows."""
    y_bad = bool(y.dtype.kind == "f" and not np.isfinite(y).all())
    values, counts = np.unique(y, return_counts=True)
    integral = bool(y_bad or _labels.is_integral(values))
    reports = (first_nonfinite(s), first_nonfinite(w) if w is not None else (0, -1, False))
    probabilities = s.ndim != 2 or not s.shape[0] or roc.rows_sum_to_one(np.asarray(s, dtype=np.float64))
    take = sample_rows(s, n_parts, n_blocks, seed)
    negative = _negative_weights(w)
    return y_bad, values[:limit], counts[:limit], integral, reports, probabilities, y[take], s[take], negative


def _negative_weights(w):
    """(smallest weight, first local index of a negative one) of a block, or None without negative weights."""
    if w is None or not w.size:
        return None
    below = np.asarray(w) < 0
    if not below.any():
        return None
    return float(np.min(w)), int(np.argmax(below))


def _merge_uniques(parts, limit):
    values = np.concatenate([p[0] for p in parts])
    counts = np.concatenate([p[1] for p in parts])
    merged, inverse = np.unique(values, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=counts, minlength=merged.size).astype(np.int64)
    return merged[:limit], totals[:limit]


# --------------------------------------------------------------------------- one binary AUC


def _auc_partition(local_fpr, *pieces):
    """(positives, negatives, any weight, area, positive weight, negative weight) of one score partition."""
    from .. import _core

    _, scores, payload = partition_data(pieces)
    if payload.ndim == 2:
        positive, weight = (payload[:, 0] != 0).view(np.uint8), np.ascontiguousarray(payload[:, 1])
    else:
        positive, weight = (payload != 0).view(np.uint8), None
    n_pos = int(np.count_nonzero(positive))
    any_weight = weight is None or bool(np.any(weight))
    if not scores.size:
        return 0, 0, False, np.nan, 0.0, 0.0
    r = _core.roc_auc(scores, positive, weight, local_fpr, 1)
    area, total_pos, total_neg = (r[k] for k in ("area", "positive_total", "negative_total"))
    return n_pos, positive.size - n_pos, any_weight, float(area), float(total_pos), float(total_neg)


class _BinaryAuc:
    """The graph of one binary AUC over score partitions, and its result from their summaries."""

    def __init__(self, score, positive, weight, sampled_scores, n_parts):
        bounds = key_bounds(sampled_scores, n_parts)
        payload = positive.astype(np.float64)
        if weight is not None:
            payload = _stack_columns(payload, weight.astype(np.float64))
        self.pieces = split_by_key(score, payload, bounds)

    def partitions(self, local_fpr=1.0):
        from dask import delayed

        return [delayed(_auc_partition, pure=True)(local_fpr, *p) for p in self.pieces]

    def result(self, stats, max_fpr, partial_area, weights):
        """The AUC from the partition summaries (``partial_area(k, fpr)`` runs the kernel on partition k),
        through the skeleton: the facts are the partitions' class counts and ``weights`` (WeightFacts)."""
        n_pos = sum(s[0] for s in stats)
        facts = roc.BinaryFacts(n_pos, sum(s[1] for s in stats), any(s[2] for s in stats), weights)
        return roc.ROC_AUC.run(lambda plan: _area_counts(stats, plan, partial_area), facts, max_fpr)


def _area_counts(stats, plan, partial_area):
    """The Dask counter of one binary AUC: the area from the partitions' summaries.

    The partitions' weight totals enter as shares of their class total (each in [0, 1]), never as
    products of totals: weights from 1e-300 to 1e300 neither overflow nor underflow, as in memory."""
    if not plan.defined:
        return None
    pos_share, any_pos = _shares([s[4] for s in stats])
    neg_share, any_neg = _shares([s[5] for s in stats])
    if not (any_pos and any_neg):
        return roc.AreaCounts(np.nan, any_pos, any_neg)
    cut = plan.max_fpr if _labels.is_partial(plan.max_fpr) else np.inf  # a false positive rate
    area = 0.0
    fp_above = tp_above = 0.0  # rates above the current partition
    for k in reversed(range(len(stats))):  # the curve starts at the highest scores
        local, pos, neg = stats[k][3], pos_share[k], neg_share[k]
        if fp_above + neg > cut:  # max_fpr falls inside this partition
            if cut > fp_above:
                inside = partial_area(k, (cut - fp_above) / neg) * pos * neg if pos > 0 else 0.0
                area += inside + (cut - fp_above) * tp_above
            break
        if pos > 0 and neg > 0:
            area += local * pos * neg
        area += neg * tp_above
        fp_above += neg
        tp_above += pos
    return roc.AreaCounts(area, True, True)


def _shares(totals):
    """Each total's share of their sum, and whether the sum is positive; computed relative to the largest
    total, so that no sum of large weights overflows and no share of small ones underflows."""
    largest = max(totals, default=0.0)
    if not largest > 0:
        return [0.0] * len(totals), False
    relative = [t / largest for t in totals]
    whole = math.fsum(relative)
    return [r / whole for r in relative], True


def _stack_columns(a, b):
    import dask.array as da

    return da.stack([a, b], axis=1).rechunk({1: -1})


def _binary_aucs(problems, max_fpr, n_rows, weights=roc.UNWEIGHTED):
    """AUCs of (score, positive, weight, sampled scores) problems of at most n_rows rows: one shuffle
    each, computed together. ``weights``: the WeightFacts of weighted problems."""
    if not problems:
        return []
    n_parts = partition_count(n_rows)
    graphs = [_BinaryAuc(score, positive, weight, sampled, n_parts) for score, positive, weight, sampled in problems]
    stats = compute(*[g.partitions() for g in graphs])
    out = []
    for graph, column_stats in zip(graphs, stats):

        def partial_area(k, fpr, graph=graph):
            (result,) = compute(graph.partitions(fpr)[k])
            return result[3]

        out.append(graph.result(column_stats, max_fpr, partial_area, weights))
    return out


# --------------------------------------------------------------------------- averages over labels


def _samples_block(y01, s, w, max_fpr):
    """Sums of the per-row AUCs of one block (the 'samples' average), and the warnings they raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sums = roc.auc_sums(roc.sample_aucs(y01, s, max_fpr), w)
    return sums, {(str(m.message), m.category) for m in caught}


def _add_sample_sums(*parts):
    return (
        tuple(sum(p[0][i] for p in parts) for i in range(2)) + (any(p[0][2] for p in parts),),
        set().union(*[p[1] for p in parts]),
    )


def _average_binary(y01, s, average, w, max_fpr, sampled, weights):
    """The in-memory average's skeleton (``ROC_AUC_AVERAGE``), counts from the cluster."""
    from dask import delayed

    if s.ndim == 1:
        s = s[:, None]
        sampled = sampled[:, None]

    def count(plan):
        n_labels = y01.shape[1]
        if average == "micro":
            weight = None if w is None else _repeat_rows(w, n_labels, y01)
            problems = [(s.ravel(), y01.ravel(), weight, sampled.ravel())]
            return roc.AverageCounts(micro=_binary_aucs(problems, max_fpr, s.size, weights)[0])
        if average == "samples":
            parts = zip(
                y01.to_delayed().ravel(),
                s.to_delayed().ravel(),
                w.to_delayed().ravel() if w is not None else itertools.repeat(None),
            )
            sums = [delayed(_samples_block, pure=True)(a, b, c, max_fpr) for a, b, c in parts]
            ((total_sums, messages),) = compute(tree_reduce(_add_sample_sums, sums))
            for message, category in sorted(messages, key=str):
                warn(message, category)
            return roc.AverageCounts(sums=total_sums)
        label_weight = None
        if average == "weighted":
            totals = (y01 * w[:, None]).sum(axis=0) if w is not None else y01.astype(np.int64).sum(axis=0)
            (label_weight,) = compute(totals)
            if roc.weighted_average_is_empty(label_weight):
                return roc.AverageCounts(label_weight=label_weight)
        problems = [(s[:, c], y01[:, c], w, sampled[:, c]) for c in range(n_labels)]
        aucs = _binary_aucs(problems, max_fpr, s.shape[0], weights)
        return roc.AverageCounts(aucs=np.array(aucs, dtype=np.float64), label_weight=label_weight)

    facts = roc.AverageFacts(y01.shape, s.shape, weights if average == "samples" else roc.UNWEIGHTED)
    return roc.ROC_AUC_AVERAGE.run(count, facts, average, max_fpr)


def _repeat_rows(w, n_labels, like):
    import dask.array as da

    return da.broadcast_to(w[:, None], like.shape, chunks=like.chunks).ravel()


# --------------------------------------------------------------------------- multi-class


def _encode(y, classes):
    return np.searchsorted(classes, y)


def _one_hot_block(codes, n_classes):
    return _labels.one_hot(codes, n_classes)


def _multiclass(y, s, labels, multi_class, average, w, uniques, counts, probabilities, sampled_y, sampled_s, weights):
    """The in-memory multi-class skeleton (``ROC_AUC_MULTICLASS``), counts from the cluster."""

    def count(plan):
        classes = plan.classes
        encoded = y.map_blocks(_encode, classes, dtype=np.int64)
        sampled_codes = _encode(sampled_y, classes)
        if multi_class == "ovr":
            indicator = encoded.map_blocks(
                _one_hot_block, len(classes), dtype=np.uint8, new_axis=1, chunks=(encoded.chunks[0], (len(classes),))
            )
            return roc.MulticlassCounts(ovr=_average_binary(indicator, s, average, w, None, sampled_s, weights))
        present = np.unique(_encode(uniques, classes))
        class_counts = dict(zip(_encode(uniques, classes).tolist(), counts.tolist()))
        problems, prevalence = [], []
        for a, b in itertools.combinations(present, 2):
            ab = (encoded == a) | (encoded == b)
            prevalence.append((class_counts[a] + class_counts[b]) / y.shape[0])
            in_sample = (sampled_codes == a) | (sampled_codes == b)
            for c in (a, b):
                problems.append((s[:, c][ab], (encoded[ab] == c), None, sampled_s[in_sample, c]))
        aucs = _binary_aucs(problems, None, y.shape[0])
        pair_aucs = tuple((aucs[2 * i] + aucs[2 * i + 1]) / 2 for i in range(len(prevalence)))
        return roc.MulticlassCounts(pair_aucs=pair_aucs, prevalence=tuple(prevalence))

    facts = roc.MulticlassFacts(s.shape, probabilities, uniques, w is not None)
    return roc.ROC_AUC_MULTICLASS.run(count, facts, labels, multi_class, average)


# --------------------------------------------------------------------------- the public function


@register(roc.roc_auc_score)
def roc_auc_score(
    y_true, y_score, average="macro", sample_weight=None, max_fpr=None, multi_class="raise", labels=None, groups=None
):
    """:func:`pairmetrics.roc_auc_score` on Dask collections (numeric or bool ``y_true``; no ``groups``)."""
    from dask import delayed

    from .._groups import refuse_dask_groups

    refuse_dask_groups(groups, "roc_auc_score")

    max_fpr = roc.check_options(average, multi_class, max_fpr)
    y = to_dask_array(y_true, "y_true")
    _labels.check_label_shape(y.shape)
    s = to_dask_array(y_score, "y_score")
    _labels.check_score_shape(s.shape)
    _labels.check_sample_counts(y.shape[0], s.shape[0])
    arrays, names = [y, s], ["y_true", "y_score"]
    if sample_weight is not None:
        arrays.append(_labels.weight_vector(to_dask_array(sample_weight, "sample_weight"), y.shape[0]))
        names.append("sample_weight")
    y, s, *rest = align_rows(arrays, names)
    w = rest[0] if rest else None
    n_parts = partition_count(y.shape[0])
    y_blocks, s_blocks = y.to_delayed().ravel(), s.to_delayed().ravel()
    w_blocks = w.to_delayed().ravel() if w is not None else [None] * len(y_blocks)
    limit = max(UNIQUE_LIMIT, s.shape[1] + 1 if s.ndim == 2 else 3)
    summaries = compute(
        *[
            delayed(_summary, pure=True)(a, b, c, n_parts, len(y_blocks), k, limit)
            for k, (a, b, c) in enumerate(zip(y_blocks, s_blocks, w_blocks))
        ]
    )
    if any(r[0] for r in summaries):
        raise ValueError("y_true contains NaN or infinite values")
    row_offsets = offsets(y.chunks[0])
    width = s.shape[1] if s.ndim == 2 else 1
    raise_nonfinite([r[4][0] for r in summaries], "y_score", row_offsets, width)
    # checked by the plan where the in-memory call checks them (once both classes are present)
    weights = roc.UNWEIGHTED if w is None else _weight_facts(summaries, row_offsets)
    uniques, counts = _merge_uniques([(r[1], r[2]) for r in summaries], limit)
    integral = all(r[3] for r in summaries)
    sampled_y = np.concatenate([r[6] for r in summaries])
    sampled_s = np.concatenate([r[7] for r in summaries])
    kind = roc.problem_kind(
        _labels.target_type(uniques, y.ndim == 1 or y.shape[1] == 1, integral), s.shape, max_fpr, multi_class
    )
    if y.ndim == 2 and y.shape[1] == 1:
        y, sampled_y = y[:, 0], sampled_y[:, 0]
    if kind == "multiclass":
        probabilities = all(r[5] for r in summaries)
        return _multiclass(
            y, s, labels, multi_class, average, w, uniques, counts, probabilities, sampled_y, sampled_s, weights
        )
    if kind == "binary":
        s = _labels.binary_scores(s)
        sampled_s = _labels.binary_scores(sampled_s)
        positive = (y == uniques[-1]) if uniques.size == 2 else y.map_blocks(np.zeros_like, dtype=bool)
        return _binary_aucs([(s, positive, w, sampled_s)], max_fpr, s.shape[0], weights)[0]
    roc.check_indicator(uniques, s.shape)
    return _average_binary((y == 1).astype(np.uint8), s, average, w, max_fpr, sampled_s, weights)


def _weight_facts(summaries, row_offsets):
    """The WeightFacts of sample_weight from the block summaries, with global indices."""
    nonfinite = first_report([r[4][1] for r in summaries], row_offsets)
    negative = [(k, r[8]) for k, r in enumerate(summaries) if r[8] is not None]
    if not negative:
        return roc.WeightFacts(nonfinite, None)
    minimum = min(found[0] for _, found in negative)
    block, (_, local) = negative[0]
    return roc.WeightFacts(nonfinite, (minimum, int(row_offsets[block]) + local))
