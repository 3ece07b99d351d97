"""``average_precision_score`` on Dask collections (binary ``y_true``): the in-memory number, on the cluster.

The checks, messages and warnings are those of
:mod:`pairmetrics._ranking_curves` (its seams). What reaches the client: a few
counts per block, the distinct values of ``y_true`` (at most
``UNIQUE_LIMIT``), a sample of scores, two weight totals per score partition
and one partial sum per partition.

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

from .. import _ranking_curves as rc
from .. import _roc_auc as roc
from .._groups import refuse_dask_groups
from .._routing import register, warn
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
)

__all__ = ["UNIQUE_LIMIT"]

# Distinct values of y_true brought to the client; more than two is an error for binary input anyway.
UNIQUE_LIMIT = 4096


def _summary(y, s, w, n_parts, n_blocks, seed):
    """Per block: whether y_true has non-finite values, its distinct values (capped), whether they are whole,
    the non-finite reports of the scores and weights, and a sample of scores."""
    y_bad = bool(y.dtype.kind == "f" and not np.isfinite(y).all())
    values = np.unique(y)[:UNIQUE_LIMIT]
    integral = bool(y_bad or roc.is_integral(values))
    reports = (first_nonfinite(s), first_nonfinite(w) if w is not None else (0, -1, False))
    return y_bad, values, integral, reports, s[sample_rows(s, n_parts, n_blocks, seed)]


def _partition_totals(s, positive, w, bounds):
    """Per score partition of one block: positive weight, negative weight; and the nonzero weights."""
    part = np.searchsorted(bounds, np.asarray(s, dtype=np.float64), side="right")
    weight = np.ones(s.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    pos = np.bincount(part, weights=weight * positive, minlength=bounds.size + 1)
    neg = np.bincount(part, weights=weight * ~positive, minlength=bounds.size + 1)
    return pos, neg, int(np.count_nonzero(weight))


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
    _, tps, fps = _core.binary_curve(scores, positive, weight, "none", 1)
    tp = tp_above + tps
    predicted = tp + fp_above + fps
    new = np.diff(tps, prepend=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.where((predicted != 0) & (new != 0), new * (tp / predicted), 0.0)))


@register(rc.average_precision_score)
def average_precision_score(y_true, y_score, average="macro", pos_label=1, sample_weight=None, groups=None):
    """``average_precision_score`` on Dask collections (binary, numeric or bool ``y_true``; no ``groups``)."""
    from dask import delayed

    refuse_dask_groups(groups, "average_precision_score")
    rc.check_average(average)
    y = to_dask_array(y_true, "y_true")
    roc.check_label_shape(y.shape)
    s = to_dask_array(y_score, "y_score")
    roc.check_score_shape(s.shape)
    roc.check_sample_counts(y.shape[0], s.shape[0])
    arrays, names = [y, s], ["y_true", "y_score"]
    if sample_weight is not None:
        arrays.append(roc.weight_vector(to_dask_array(sample_weight, "sample_weight"), y.shape[0]))
        names.append("sample_weight")
    y, s, *rest = align_rows(arrays, names)
    w = rest[0] if rest else None
    column = y.ndim == 1 or y.shape[1] == 1
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    n_parts = partition_count(y.shape[0])
    y_blocks, s_blocks = y.to_delayed().ravel(), s.to_delayed().ravel()
    w_blocks = w.to_delayed().ravel() if w is not None else [None] * len(y_blocks)
    summaries = compute(*[delayed(_summary, pure=True)(a, b, c, n_parts, len(y_blocks), k)
                          for k, (a, b, c) in enumerate(zip(y_blocks, s_blocks, w_blocks))])  # fmt: skip
    if any(r[0] for r in summaries):
        raise ValueError("y_true contains NaN or infinite values")
    uniques = np.unique(np.concatenate([r[1] for r in summaries]))[:UNIQUE_LIMIT]
    kind = roc.target_type(uniques, column, all(r[2] for r in summaries))
    rc.check_pos_label(kind, pos_label, uniques)
    if kind != "binary":
        raise TypeError(
            f"average_precision_score() takes binary y_true only on Dask collections, got {kind} y_true; "
            "compute the inputs first (for example x.compute()) if they fit in memory"
        )
    s = roc.binary_scores(s)
    s_blocks = s.to_delayed().ravel()
    row_offsets = offsets(y.chunks[0])
    raise_nonfinite([r[3][0] for r in summaries], "y_score", row_offsets)
    raise_nonfinite([r[3][1] for r in summaries], "sample_weight", row_offsets)
    bounds = key_bounds(roc.binary_scores(np.concatenate([r[4] for r in summaries])), n_parts)
    positive = y == pos_label
    totals = compute(*[delayed(_partition_totals, pure=True)(b, p, c, bounds)
                       for b, p, c in zip(s_blocks, positive.to_delayed().ravel(), w_blocks)])  # fmt: skip
    pos = np.sum([t[0] for t in totals], axis=0)
    neg = np.sum([t[1] for t in totals], axis=0)
    if w is not None and not sum(t[2] for t in totals):
        raise rc.zero_weights_error()
    # weight of the partitions above each one (higher partitions hold higher scores)
    tp_above = np.concatenate((np.cumsum(pos[::-1])[::-1][1:], [0.0]))
    fp_above = np.concatenate((np.cumsum(neg[::-1])[::-1][1:], [0.0]))
    payload = positive.astype(np.float64)
    if w is not None:
        import dask.array as da

        payload = da.stack([payload, w.astype(np.float64)], axis=1).rechunk({1: -1})
    pieces = split_by_key(s, payload, bounds)
    sums = compute(*[delayed(_partition_sum, pure=True)(float(tp_above[k]), float(fp_above[k]), *p)
                     for k, p in enumerate(pieces)])  # fmt: skip
    total_positive = float(pos.sum())
    if total_positive == 0:
        warn(rc.NO_POSITIVE)
        return 0.0
    return float(max(0.0, sum(sums) / total_positive))
