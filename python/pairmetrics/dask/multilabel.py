"""Multi-label counts on Dask collections.

One pass: every row block is checked (0/1 entries, reported at their global
index) and counted by the in-memory kernel (``_multilabel.counts_dense``);
per-label counts are summed and per-sample counts concatenated along a tree,
so the client receives O(n + labels) numbers, as the in-memory result holds.
The checks and the result are those of the in-memory call (its skeleton).
"""

from __future__ import annotations

import numpy as np

from .. import _multilabel
from .._routing import register
from .._validation import binary_report, matrix_shape
from . import _blocks as blocks


def _multilabel_block(t, p):
    """Per row block: the non-binary reports of both inputs, and their counts when both pass."""
    reports = [(binary_report(t), binary_report(p))]
    if reports[0][0][0] or reports[0][1][0]:
        return reports, None
    return reports, _multilabel.counts_dense(_multilabel.binary_bytes(t), _multilabel.binary_bytes(p))


def _multilabel_combine(*parts):
    """Reports of consecutive blocks, and their counts (per label summed, per sample in order)."""
    reports = [r for part in parts for r in part[0]]
    if any(part[1] is None for part in parts):
        return reports, None
    labels = tuple(blocks.sum_arrays(*[part[1][0][i] for part in parts]) for i in range(3))
    samples = tuple(np.concatenate([part[1][1][i] for part in parts]) for i in range(3))
    return reports, (labels, samples)


@register(_multilabel.multilabel_counts)
def multilabel_counts(y_true, y_pred, false_pos=1.0, false_neg=1.0):
    from dask import delayed

    fp_penalty, fn_penalty = _multilabel.check_penalties(false_pos, false_neg)
    t = matrix_shape(blocks.to_dask_array(y_true, "y_true"), "y_true", min_rows=0, min_cols=0)
    p = matrix_shape(blocks.to_dask_array(y_pred, "y_pred"), "y_pred", min_rows=0, min_cols=0)
    _, n_labels = _multilabel.check_shapes(t.shape, p.shape)  # rows are aligned only when the shapes agree
    t, p = blocks.align_rows([t, p], ["y_true", "y_pred"])
    parts = [
        delayed(_multilabel_block, pure=True)(a, b) for a, b in zip(t.to_delayed().ravel(), p.to_delayed().ravel())
    ]
    # One pass gives the facts and the counts (per-sample counts are part of the result; blocks keep their order).
    ((reports, counts),) = blocks.compute(blocks.tree_reduce(_multilabel_combine, parts))
    offsets = blocks.offsets(t.chunks[0])
    bad = [blocks.first_report([r[which] for r in reports], offsets, n_labels) for which in (0, 1)]
    facts = _multilabel.MultilabelFacts(t.shape, p.shape, *bad)

    def count(plan):
        return _multilabel.LabelCounts(*counts)

    return _multilabel.MULTILABEL_COUNTS.run(count, facts, fp_penalty, fn_penalty)
