"""``average_precision_score`` (binary ``y_true``) and the curves on Dask collections: the in-memory results.

The checks, messages and warnings are those of
:mod:`pairmetrics._ranking_curves` (its seams). What reaches the client: a few
counts per block, the distinct values of ``y_true`` (at most
``UNIQUE_LIMIT``), a sample of scores, two weight totals per score partition
and one partial sum per partition (for the curves: each partition's points,
which make up the result).

The rows are cut by score range into partitions (equal scores share one,
from bounds placed on a sample of the scores). A first pass over the blocks
(no shuffle) totals the positive and negative weight of every partition, so
each partition knows the weight scored above it; after one shuffle the C++
kernel computes each partition's curve and the partition adds its terms
(new positives times the precision at each threshold, the weight above it
included). Counts are exact; weighted sums can differ from the in-memory ones
in the last bits (another order of additions).
"""

from __future__ import annotations

import numpy as np

from .. import _labels
from .. import _ranking_curves as rc
from .._groups import refuse_dask_groups
from .._routing import register
from ._blocks import first_report
from ._helpers import (
    align_rows,
    compute,
    first_nonfinite,
    key_bounds,
    offsets,
    partition_count,
    partition_data,
    sample_rows,
    split_by_key,
    to_dask_array,
)

__all__ = ["UNIQUE_LIMIT"]

# Distinct values of y_true brought to the client; more than two is an error for binary input anyway.
UNIQUE_LIMIT = 4096


def _summary(y, s, w, n_parts, n_blocks, seed):
    """Per block: whether y_true has non-finite values, its distinct values (capped), whether they are whole,
    the non-finite reports of the scores and weights, a sample of scores, and how many weights are nonzero."""
    y_bad = bool(y.dtype.kind == "f" and not np.isfinite(y).all())
    values = np.unique(y)[:UNIQUE_LIMIT]
    integral = bool(y_bad or _labels.is_integral(values))
    reports = (first_nonfinite(s), first_nonfinite(w) if w is not None else (0, -1, False))
    nonzero_weights = 0 if w is None else int(np.count_nonzero(w))
    return y_bad, values, integral, reports, s[sample_rows(s, n_parts, n_blocks, seed)], nonzero_weights


def _two_columns(a, b):
    return np.stack([a, b], axis=1)


def _partition_totals(s, positive, w, bounds):
    """Per score partition of one block: positive weight, negative weight."""
    part = np.searchsorted(bounds, np.asarray(s, dtype=np.float64), side="right")
    weight = np.ones(s.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    pos = np.bincount(part, weights=weight * positive, minlength=bounds.size + 1)
    neg = np.bincount(part, weights=weight * ~positive, minlength=bounds.size + 1)
    return pos, neg


def _partition_sum(tp_above, fp_above, *pieces):
    """The partition's terms of the average precision (before dividing by the positive total)."""
    from .. import _core

    _, scores, payload = partition_data(pieces)
    if not scores.size:
        return 0.0
    if payload.ndim == 2:
        positive, weight = (payload[:, 0] != 0).view(np.uint8), np.ascontiguousarray(payload[:, 1])
    else:
        positive, weight = (payload != 0).view(np.uint8), None
    curve = _core.binary_curve(scores, positive, weight, "none", 1)
    tps, fps = curve["tps"], curve["fps"]
    tp = tp_above + tps
    predicted = tp + fp_above + fps
    new = np.diff(tps, prepend=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.where((predicted != 0) & (new != 0), new * (tp / predicted), 0.0)))


class _Binary:
    """A binary problem on Dask: its facts from one pass over the blocks, then (``prepare``) its score
    partitions and the weight above each partition."""

    def __init__(self, y_true, y_score, sample_weight):
        from dask import delayed

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
        self.w = rest[0] if rest else None
        column = y.ndim == 1 or y.shape[1] == 1
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        n_parts = partition_count(y.shape[0])
        y_blocks, s_blocks = y.to_delayed().ravel(), s.to_delayed().ravel()
        self.w_blocks = self.w.to_delayed().ravel() if self.w is not None else [None] * len(y_blocks)
        summaries = compute(
            *[
                delayed(_summary, pure=True)(a, b, c, n_parts, len(y_blocks), k)
                for k, (a, b, c) in enumerate(zip(y_blocks, s_blocks, self.w_blocks))
            ]
        )
        if any(r[0] for r in summaries):
            raise ValueError("y_true contains NaN or infinite values")
        self.uniques = np.unique(np.concatenate([r[1] for r in summaries]))[:UNIQUE_LIMIT]
        kind = _labels.target_type(self.uniques, column, all(r[2] for r in summaries))
        self.y, self.s = y, s
        row_offsets = offsets(y.chunks[0])
        self.facts = rc.CurveFacts(
            kind,
            self.uniques,
            s.shape,
            first_report([r[3][0] for r in summaries], row_offsets, s.shape[1] if s.ndim == 2 else 1),
            first_report([r[3][1] for r in summaries], row_offsets),
            self.w is not None and not sum(r[5] for r in summaries),
        )
        self.sample = np.concatenate([r[4] for r in summaries])
        self.n_parts = n_parts

    def prepare(self, pos_label):
        """The score partitions of the rows, with pos_label positive, and the class weight of each."""
        from dask import delayed

        positive = self.y == pos_label
        self.s = _labels.binary_scores(self.s)  # of the shape the plan checked
        self.bounds = key_bounds(_labels.binary_scores(self.sample), self.n_parts)
        s_blocks = self.s.to_delayed().ravel()
        totals = compute(
            *[
                delayed(_partition_totals, pure=True)(b, p, c, self.bounds)
                for b, p, c in zip(s_blocks, positive.to_delayed().ravel(), self.w_blocks)
            ]
        )
        self.positive_weight = np.sum([t[0] for t in totals], axis=0)
        self.negative_weight = np.sum([t[1] for t in totals], axis=0)
        # weight of the partitions above each one (higher partitions hold higher scores)
        self.tp_above = np.concatenate((np.cumsum(self.positive_weight[::-1])[::-1][1:], [0.0]))
        self.fp_above = np.concatenate((np.cumsum(self.negative_weight[::-1])[::-1][1:], [0.0]))
        payload = positive.astype(np.float64)
        if self.w is not None:  # two columns, block by block
            payload = payload.map_blocks(
                _two_columns, self.w.astype(np.float64), new_axis=1, dtype=np.float64, chunks=(payload.chunks[0], (2,))
            )
        self.pieces = split_by_key(self.s, payload, self.bounds)

    def per_partition(self, function):
        """compute() of ``function(tp_above, fp_above, *pieces)`` on every partition, lowest scores first."""
        from dask import delayed

        return compute(
            *[
                delayed(function, pure=True)(float(self.tp_above[k]), float(self.fp_above[k]), *p)
                for k, p in enumerate(self.pieces)
            ]
        )


def _check_average_precision_kind(kind, pos_label, uniques):
    rc.check_pos_label(kind, pos_label, uniques)
    if kind != "binary":
        raise TypeError(
            f"average_precision_score() takes binary y_true only on Dask collections, got {kind} y_true; "
            "compute the inputs first (for example x.compute()) if they fit in memory"
        )


@register(rc.average_precision_score)
def average_precision_score(y_true, y_score, average="macro", pos_label=1, sample_weight=None, groups=None):
    """``average_precision_score`` on Dask collections (binary, numeric or bool ``y_true``; no ``groups``)."""
    refuse_dask_groups(groups, "average_precision_score")
    rc.check_average(average)
    problem = _Binary(y_true, y_score, sample_weight)
    _check_average_precision_kind(problem.facts.kind, pos_label, problem.uniques)

    def count(plan):
        problem.prepare(plan.pos_label)
        sums = problem.per_partition(_partition_sum)
        total_positive = float(problem.positive_weight.sum())
        return rc.PrecisionSums(sum(sums) / total_positive if total_positive else 0.0, total_positive)

    return rc.AVERAGE_PRECISION.run(count, problem.facts, pos_label, "none")


def _partition_curve(tp_above, fp_above, *pieces):
    """(thresholds, tps, fps) of one partition's distinct scores, decreasing, the weight above it included."""
    from .. import _core

    _, scores, payload = partition_data(pieces)
    if payload.ndim == 2:
        positive, weight = (payload[:, 0] != 0).view(np.uint8), np.ascontiguousarray(payload[:, 1])
    else:
        positive, weight = (payload != 0).view(np.uint8), None
    curve = _core.binary_curve(scores, positive, weight, "none", 1)
    return curve["thresholds"], curve["tps"] + tp_above, curve["fps"] + fp_above


def _points(problem):
    """The curve's points over all partitions, highest scores first (the size of the result)."""
    parts = problem.per_partition(_partition_curve)[::-1]
    return tuple(np.concatenate([p[i] for p in parts]) for i in (2, 1, 0))  # fps, tps, thresholds


def _curve(skeleton, y_true, y_score, sample_weight, pos_label, drop, det_drop=False):
    """A binary curve on Dask: the facts from one pass, the points from one shuffle by score range."""
    problem = _Binary(y_true, y_score, sample_weight)

    def count(plan):
        problem.prepare(plan.pos_label)
        fps, tps, thresholds = _points(problem)
        if plan.drop != "none":
            fps, tps, thresholds = rc.drop_intermediate_points(plan.drop, fps, tps, thresholds)
        return rc.CurvePoints(fps, tps, thresholds)

    return skeleton.run(count, problem.facts, pos_label, drop, det_drop)


@register(rc.roc_curve)
def roc_curve(y_true, y_score, pos_label=None, sample_weight=None, drop_intermediate=True):
    """``roc_curve`` on Dask collections (numeric or bool ``y_true``)."""
    return _curve(rc.ROC_CURVE, y_true, y_score, sample_weight, pos_label, "roc" if drop_intermediate else "none")


@register(rc.precision_recall_curve)
def precision_recall_curve(y_true, y_score, pos_label=None, sample_weight=None, drop_intermediate=False):
    """``precision_recall_curve`` on Dask collections (numeric or bool ``y_true``)."""
    drop = "tps" if drop_intermediate else "none"
    return _curve(rc.PRECISION_RECALL_CURVE, y_true, y_score, sample_weight, pos_label, drop)


@register(rc.det_curve)
def det_curve(y_true, y_score, pos_label=None, sample_weight=None, drop_intermediate=False):
    """``det_curve`` on Dask collections (numeric or bool ``y_true``)."""
    return _curve(rc.DET_CURVE, y_true, y_score, sample_weight, pos_label, "none", drop_intermediate)
