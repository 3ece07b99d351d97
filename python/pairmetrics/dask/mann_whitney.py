"""``mannwhitneyu`` (SciPy's) on 1-D Dask collections: the same plan and finish as in memory, counted on the
cluster.

The pooled values are cut by ranges (bounds placed on a sample; equal values share a partition, so every tie
group lies in one). The C++ kernel counts 2U and the tie term inside each partition; a value of ``x`` in a
later partition is above every value of ``y`` in an earlier one, which adds ``2 n_x(q) n_y(p)`` per pair of
partitions p < q. What reaches the client: per block a few counts and a sample, per partition four numbers.
Like SciPy, integers are compared as float64.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _mann_whitney as mw
from .._routing import register
from ._helpers import (
    compute,
    key_bounds,
    partition_count,
    partition_data,
    sample_rows,
    split_by_key,
    to_dask_array,
)

__all__: list[str] = []


def _summary(values, n_parts, n_blocks, seed):
    """Per block: the values that are not NaN, whether any is NaN, a sample of the values."""
    values = np.asarray(values, dtype=np.float64)
    nan = np.isnan(values)
    kept = values[~nan]
    take = sample_rows(kept, n_parts, n_blocks, seed) if kept.size else np.empty(0, np.intp)
    return int(kept.size), bool(nan.any()), kept[take]


def _partition_sums(*pieces):
    """(2U, tie term, largest tie, n_x, n_y) inside one value partition."""
    from .. import _core

    _, values, payload = partition_data(pieces)
    is_x = payload[:, 0] == 1
    x, y = np.ascontiguousarray(values[is_x]), np.ascontiguousarray(values[~is_x])
    ranks = _core.mann_whitney_ranks(x, y, 1, False)
    return int(ranks["doubled_u"]), int(ranks["tie_cube_excess"]), int(ranks["max_tie"]), x.size, y.size


def _rank_sums(x, y, n_parts, sampled):
    """The Dask counter: 2U of x, the tie term and the largest tie over the pooled values."""
    import dask.array as da
    from dask import delayed

    bounds = key_bounds(sampled, n_parts)
    values = da.concatenate([x, y])
    flags = da.concatenate([da.ones_like(x), da.zeros_like(y)])
    pieces = split_by_key(values, flags[:, None], bounds)
    parts = compute(*[delayed(_partition_sums, pure=True)(*p) for p in pieces])
    n_x = np.array([p[3] for p in parts], dtype=object)
    n_y_before = np.cumsum([0] + [p[4] for p in parts[:-1]], dtype=object)
    doubled_u = sum(p[0] for p in parts) + 2 * int(np.sum(n_x * n_y_before))
    return mw.RankSums(doubled_u, sum(p[1] for p in parts), max(p[2] for p in parts))


@register(mw.mannwhitneyu)
def mannwhitneyu(
    x, y, use_continuity=True, alternative="two-sided", axis=0, method="auto", *, nan_policy="propagate", keepdims=False
):
    """:func:`pairmetrics.scipy.mannwhitneyu` on 1-D Dask collections."""
    import dask.array as da
    from dask import delayed
    from scipy import stats
    from scipy.stats._mannwhitneyu import MannwhitneyuResult

    use_continuity, alternative, axis, method = mw.check_options(use_continuity, alternative, axis, method)
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError("nan_policy must be one of {'propagate', 'omit', 'raise'}")
    if isinstance(method, stats.PermutationMethod) or method == mw.CONDITIONAL:
        raise TypeError(
            f"mannwhitneyu(method={method!r}) is not computed on Dask (it needs the tie groups or resamples); "
            "use 'asymptotic', 'exact' or 'auto', or compute the arrays"
        )
    arrays = [to_dask_array(v, name).astype(np.float64) for v, name in ((x, "x"), (y, "y"))]
    if any(a.ndim != 1 for a in arrays) or axis not in (0, -1):
        raise ValueError("mannwhitneyu on Dask takes 1-D x and y (axis=0)")
    n_parts = partition_count(arrays[0].shape[0] + arrays[1].shape[0])
    summaries = []
    for a in arrays:
        blocks = a.to_delayed().ravel()
        summaries.append(
            compute(*[delayed(_summary, pure=True)(b, n_parts, len(blocks), k) for k, b in enumerate(blocks)])
        )
    has_nan = any(s[1] for part in summaries for s in part)
    if has_nan and nan_policy == "raise":
        raise ValueError("The input contains nan values")
    sizes = [sum(s[0] for s in part) for part in summaries]
    nan = np.float64(np.nan)
    if (has_nan and nan_policy == "propagate") or min(sizes) == 0:
        if min(sizes) == 0:
            warnings.warn(
                "After omitting NaNs, one or more sample arguments is too small; all returned values will be NaN.",
                stats.SmallSampleWarning if hasattr(stats, "SmallSampleWarning") else RuntimeWarning,
                stacklevel=3,
            )
        u1, p = nan, nan
    else:
        if has_nan:  # 'omit'
            arrays = [a[~da.isnan(a)] for a in arrays]
        sampled = np.concatenate([s[2] for part in summaries for s in part])
        u1, p = mw.MANN_WHITNEY.run(
            lambda plan: _rank_sums(arrays[0], arrays[1], n_parts, sampled),
            sizes[0],
            sizes[1],
            use_continuity,
            alternative,
            method,
        )
    statistic, pvalue = np.float64(u1), np.float64(p)
    if keepdims:
        return MannwhitneyuResult(np.array([statistic]), np.array([pvalue]))
    return MannwhitneyuResult(statistic, pvalue)
