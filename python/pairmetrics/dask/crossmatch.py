"""Cross-match resampling on Dask collections.

One pass checks both samples (finite values, reported at their global
index). The resamples are drawn on the client by the in-memory
``_crossmatch.draw_subsamples`` (same generator, same order, so the same
subsamples); then one task per resample gathers only its ``2 * sample_size``
rows and solves the exact matching with ``_crossmatch.subsample_a1``. The
p-values and the result come from ``_crossmatch.resample_result``.
"""

from __future__ import annotations

import numpy as np

from .. import _crossmatch
from .._metric_transforms import DEFAULT_MAX_MATRIX_BYTES, matching_equivalent
from .._routing import register
from .._validation import matrix_shape
from . import _blocks as blocks


def _cm_sample(x, name):
    """A 2-D dask array (one chunk across columns) by the in-memory shape rules, checked finite."""
    x = blocks.to_dask_array(x, name)
    if x.ndim == 1:
        x = x[:, None]
    x = matrix_shape(x, name, min_rows=1).rechunk({1: -1})
    blocks.check_finite(x, name)
    return x


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

    metric_kwargs = metric_kwargs or {}
    alternative, n_resamples, sample_size, n_neighbors, _ = _crossmatch.resample_options(
        metric, metric_kwargs, alternative, n_resamples, sample_size, n_neighbors, max_matrix_bytes
    )
    if n_jobs is not None:
        blocks.resolve_threads(n_jobs)
    progress = check_progress(progress)
    gen = check_rng(rng)
    X = _cm_sample(x, "x")
    Y = _cm_sample(y, "y")
    dtype = _crossmatch.pool_dtype(X, Y)
    n = X.shape[0]
    draws, order = _crossmatch.draw_subsamples(gen, n, Y.shape[0], sample_size, n_resamples)
    tasks = []
    for d in draws:  # the draws of the in-memory call, in its order
        xs = X[d[:sample_size]].rechunk({0: -1}).to_delayed().ravel()[0]
        ys = Y[d[sample_size:] - n].rechunk({0: -1}).to_delayed().ravel()[0]
        tasks.append(delayed(_cm_repeat, pure=True)(xs, ys, dtype, metric, n_neighbors, metric_kwargs, order))
    a1 = np.array(blocks.compute(*tasks, progress=progress), dtype=np.int64)
    return _crossmatch.resample_result(a1, sample_size, alternative, order)
