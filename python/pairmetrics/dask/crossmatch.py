"""Cross-match resampling on Dask collections.

It runs the in-memory skeleton ``_crossmatch.RESAMPLE``: one pass per sample
gathers its facts (the first non-finite value and, for cosine and correlation,
the rows the metric is undefined for, at their global index); the plan checks
them and draws the subsamples (same generator, same order, so the same
subsamples); then one task per resample gathers only its ``2 * sample_size``
rows and solves the exact matching with ``_crossmatch.subsample_a1``. The
p-values and the result come from the skeleton's finish.
"""

from __future__ import annotations

import numpy as np

from .. import _crossmatch
from .._metric_transforms import DEFAULT_MAX_MATRIX_BYTES, matching_equivalent, sample_facts
from .._routing import register
from .._validation import matrix_shape
from . import _blocks as blocks


def _cm_sample(x, name):
    """A 2-D dask array (one chunk across columns) by the in-memory shape rules."""
    x = blocks.to_dask_array(x, name)
    if x.ndim == 1:
        x = x[:, None]
    return matrix_shape(x, name, min_rows=1).rechunk({1: -1})


def _cm_block_facts(block, metric):
    """The in-memory SampleFacts of one row block, its first non-finite entry as a block report."""
    _, rows, big = sample_facts(np.asarray(block), metric)
    return blocks.first_nonfinite(block), rows, big


def _cm_facts(x, metric):
    """The SampleFacts of a whole sample from its blocks' (global indices)."""
    from dask import delayed

    parts = blocks.compute(*[delayed(_cm_block_facts, pure=True)(b, metric) for b in x.to_delayed().ravel()])
    offsets = blocks.offsets(x.chunks[0])
    nonfinite = blocks.first_report([p[0] for p in parts], offsets, x.shape[1])
    if nonfinite is not None:
        return nonfinite, np.empty(0, np.intp), 0.0
    rows = np.concatenate([p[1] + offsets[k] for k, p in enumerate(parts)])
    return None, rows, max(p[2] for p in parts)


def _cm_repeat(xs, ys, dtype, metric, n_neighbors, metric_kwargs, order):
    """The cross-match count of one subsample (rows of x, then rows of y, solved in ``order``), in memory."""
    points = np.concatenate([np.asarray(xs, dtype=dtype), np.asarray(ys, dtype=dtype)])
    points, metric, metric_kwargs = matching_equivalent(points, metric, metric_kwargs, "a subsample of x then y")
    z = _crossmatch.subsample_labels(xs.shape[0], order)
    return int(_crossmatch.subsample_a1([points[order]], z, metric, metric_kwargs, n_neighbors, 1)[0])


@register(_crossmatch.crossmatch_resample)
def crossmatch_resample(
    x,
    y,
    sample_size=200,
    n_resamples=500,
    rng=None,
    n_jobs=None,
    alternative="less",
    metric="euclidean",
    n_neighbors=None,
    progress=False,
    max_matrix_bytes=DEFAULT_MAX_MATRIX_BYTES,
    metric_kwargs=None,
):
    from dask import delayed

    from .._validation import check_progress, check_rng

    if n_jobs is not None:
        blocks.resolve_threads(n_jobs)
    progress = check_progress(progress)
    gen = check_rng(rng)
    X = _cm_sample(x, "x")
    Y = _cm_sample(y, "y")
    dtype = _crossmatch.pool_dtype(X, Y)
    facts = _crossmatch.ResampleFacts(
        (X.shape[0], Y.shape[0]), (_cm_facts(X, metric), _cm_facts(Y, metric)), X.shape[1]
    )

    def count(plan):
        n, tasks = X.shape[0], []
        for d in plan.draws:  # the draws of the in-memory call, in its order
            xs = X[d[: plan.sample_size]].rechunk({0: -1}).to_delayed().ravel()[0]
            ys = Y[d[plan.sample_size :] - n].rechunk({0: -1}).to_delayed().ravel()[0]
            options = (dtype, plan.metric, plan.n_neighbors, plan.metric_kwargs, plan.order)
            tasks.append(delayed(_cm_repeat, pure=True)(xs, ys, *options))
        return tuple(int(a1) for a1 in blocks.compute(*tasks, progress=progress))

    options = (metric, metric_kwargs, alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes)
    return _crossmatch.RESAMPLE.run(count, facts, *options, gen)
