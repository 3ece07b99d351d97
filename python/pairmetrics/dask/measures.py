"""The classic measures and the best constant on Dask collections.

Costs (n rows in B row blocks, t targets)
-----------------------------------------
Every function runs its skeleton of :mod:`pairmetrics._measures` (``ERROR_MEASURE``,
``LIKELIHOOD``) or :mod:`pairmetrics._best_constant` (``BEST_CONSTANT``): the same checks
and results as in memory, from facts gathered per block.

Error measures: one pass; each block returns its non-finite reports, the
integer ranges the operand rules need and the in-memory kernel's sums
(``_measures.error_sums``), reduced on the client (float sums equal the
in-memory ones up to the order of summation; counts and maxima exactly).
``rms_error`` finishes with the in-memory overflow-safe formula: where the
squares overflowed or lost digits it adds one pass for the scaled sum of
squares (and one for the input magnitudes when the differences overflowed).
Likelihoods: one pass; the facts of the 0/1 and probability checks are found
per block with global indices. Empty blocks (``x[x > 0.5]``) count as nothing.

The best constant: one pass for the mean and the midrange (then one for its
error); the median exactly, by histogram passes over order keys that shrink a
bracket SELECT_BINS-fold (a few passes) until at most SELECT_GATHER values per
column are gathered; the mode exactly, by one shuffle of each block's distinct
values and counts into hash groups.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _best_constant, _measures
from .._routing import register
from .._validation import binary_report
from . import _blocks as blocks


def _measure_pair(y_true, y_pred):
    """Row-aligned dask arrays of one shape, by the in-memory rules ((n,) against (n, 1) allowed)."""
    yt = _measures.check_targets(blocks.to_dask_array(y_true, "y_true"), "y_true")
    yp = _measures.check_targets(blocks.to_dask_array(y_pred, "y_pred"), "y_pred")
    return blocks.align_rows(list(_measures.matched_pair(yt, yp)), ["y_true", "y_pred"])


def _row_width(arr) -> int:
    return 1 if arr.ndim == 1 else arr.shape[1]


def _flag(value):
    """A boolean option as the blocks use it before the plan checks it (a wrong one gives unused sums)."""
    return bool(value) if isinstance(value, (bool, np.bool_)) else False


def _int_range(block, wanted):
    """(min, max) of a block as Python ints when the operand rules want it (None otherwise or when empty)."""
    if not wanted or not block.size:
        return None
    return int(block.min()), int(block.max())


def _merged_range(ranges):
    ranges = [r for r in ranges if r is not None]
    return (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else None


def _error_block(yt, yp, per_target, exact, wanted):
    """Per row block: non-finite reports, the ranges the operand rules want and the in-memory sums.

    No sums when the block is not finite or the operand rules refuse it; the plan then
    refuses the whole array as well.
    """
    if exact:  # two integer arrays: the exact count of the in-memory 0/1 error
        return (
            ((0, -1, False), (0, -1, False)),
            (None, None),
            {"n_wrong": _measures.exact_mismatches(yt, yp, per_target)},
        )
    reports = (blocks.first_nonfinite(yt), blocks.first_nonfinite(yp))
    ranges = (_int_range(yt, wanted[0]), _int_range(yp, wanted[1]))
    if reports[0][0] or reports[1][0]:
        return reports, ranges, None
    try:
        return reports, ranges, _measures.error_sums(yt, yp, per_target)
    except ValueError:
        return reports, ranges, None


def _error_measure(y_true, y_pred, measure, average, per_target):
    """An error measure on Dask: one pass gathers the facts and the block sums, then the skeleton runs."""
    yt, yp = _measure_pair(y_true, y_pred)
    exact = _measures.is_exact_zero_one(measure, yt.dtype, yp.dtype)
    wanted = _measures.ranges_needed(yt.dtype, yp.dtype)
    parts = _block_pass(_error_block, yt, yp, _flag(per_target), exact, wanted)
    offsets, width = blocks.offsets(yt.chunks[0]), _row_width(yt)
    nonfinite_t, nonfinite_p = (blocks.first_report([r[0][k] for r in parts], offsets, width) for k in (0, 1))
    ranges = tuple(_merged_range([r[1][k] for r in parts]) for k in (0, 1))
    nonfinite = (nonfinite_t, nonfinite_p)
    facts = _measures.MeasureFacts(yt.shape, (yt.dtype, yp.dtype), nonfinite, ranges)

    def count(plan):
        if plan.exact:
            return _measures.ErrorCounts({"n_wrong": np.sum([r[2]["n_wrong"] for r in parts], axis=0)})
        return _measures.ErrorCounts(
            _measures.merge_error_sums([r[2] for r in parts]),
            input_magnitude=lambda: np.max(_block_pass(_measures.input_magnitude, yt, yp, plan.per_target), axis=0),
            scaled_square_sum=lambda e: np.sum(
                _block_pass(_measures.scaled_square_sum, yt, yp, plan.per_target, e), axis=0
            ),
        )

    return _measures.ERROR_MEASURE.run(count, facts, measure, average, per_target)


def _block_pass(func, yt, yp, *args):
    """``func(block of yt, block of yp, *args)`` for every row block, computed."""
    from dask import delayed

    return blocks.compute(
        *[delayed(func, pure=True)(a, b, *args) for a, b in zip(yt.to_delayed().ravel(), yp.to_delayed().ravel())]
    )


@register(_measures.zero_one_error)
def zero_one_error(y_true, y_pred, average=False, per_target=False):
    return _error_measure(y_true, y_pred, "zero_one", average, per_target)


@register(_measures.absolute_error)
def absolute_error(y_true, y_pred, average=False, per_target=False):
    return _error_measure(y_true, y_pred, "absolute", average, per_target)


@register(_measures.sum_squares_error)
def sum_squares_error(y_true, y_pred, average=False, per_target=False):
    return _error_measure(y_true, y_pred, "squares", average, per_target)


@register(_measures.worst_case_error)
def worst_case_error(y_true, y_pred, per_target=False):
    return _error_measure(y_true, y_pred, "worst_case", False, per_target)


@register(_measures.rms_error)
def rms_error(y_true, y_pred, per_target=False):
    return _error_measure(y_true, y_pred, "rms", False, per_target)


def _likelihood_block(yt, yp, per_target, eps):
    """Per row block: the reports of the in-memory checks, and the kernel's sums when they pass."""
    reports = (binary_report(yt), blocks.first_nonfinite(yp), _measures.probability_report(yp))
    if any(r[0] for r in reports):
        return reports, None
    try:  # options the plan refuses give no sums
        return reports, _measures.likelihood_sums(yt, yp, per_target, _measures.check_eps(eps))
    except (TypeError, ValueError):
        return reports, None


def _likelihood(y_true, y_pred, result, per_target, eps, *options):
    """A likelihood on Dask: one pass gathers the facts and the block sums, then the skeleton runs."""
    yt, yp = _measure_pair(y_true, y_pred)
    parts = _block_pass(_likelihood_block, yt, yp, _flag(per_target), eps)
    offsets, width = blocks.offsets(yt.chunks[0]), _row_width(yt)
    nonbinary, nonfinite, outside = (blocks.first_report([r[0][k] for r in parts], offsets, width) for k in range(3))
    facts = _measures.LikelihoodFacts(yt.shape, nonbinary, nonfinite, outside)

    def count(plan):
        return _measures.SummedCounts(
            {key: np.sum([r[1][key] for r in parts], axis=0) for key in ("log_sum", "n_zero")}
        )

    return _measures.LIKELIHOOD.run(count, facts, result, per_target, eps, *options)


@register(_measures.likelihood)
def likelihood(y_true, y_pred, per_target=False, eps=None):
    return _likelihood(y_true, y_pred, "likelihood", per_target, eps)


@register(_measures.log_likelihood)
def log_likelihood(y_true, y_pred, average=False, per_target=False, eps=None, base=None):
    return _likelihood(y_true, y_pred, "log_likelihood", per_target, eps, base, average)


@register(_measures.log_loss)
def log_loss(y_true, y_pred, per_target=False, eps=None, base=None):
    return _likelihood(y_true, y_pred, "log_loss", per_target, eps, base)


# --------------------------------------------------------------------------- best constant

# Order statistics (the median): a bracket of order keys per column narrows SELECT_BINS-fold
# a pass; its values are gathered once at most SELECT_GATHER per column remain.
SELECT_BINS = 1024
SELECT_GATHER = 1_000_000
# Modes: distinct values are counted in groups (by a hash of the value) of at most this
# many samples on average, at least one group per thread of the cluster.
MODE_GROUP_SAMPLES = 10_000_000


def _column_keys(block):
    """Order keys (int64, -0.0 and 0.0 alike) of a block, as (rows, columns)."""
    return blocks.order_keys(np.asarray(block, dtype=np.float64).reshape(block.shape[0], _row_width(block)))


def _constant_scan(block, binary):
    """Per block: the non-finite report, the non-binary report (count, first flat index,
    value) when `binary`, and per-column (sums, minimum keys, maximum keys)."""
    report = blocks.first_nonfinite(block)
    bad = binary_report(block) if binary else (0, -1, None)
    if report[0] or not block.shape[0]:
        return report, bad, None
    keys = _column_keys(block)
    sums = np.asarray(block, dtype=np.float64).reshape(keys.shape).sum(axis=0)
    return report, bad, (sums, keys.min(axis=0), keys.max(axis=0))


def _select_histogram(block, low, high, width):
    """Per column: counts of the keys in [low, high] in SELECT_BINS bins of `width` keys."""
    keys = _column_keys(block)
    counts = np.zeros((keys.shape[1], SELECT_BINS), dtype=np.int64)
    for j in range(keys.shape[1]):
        column = keys[:, j]
        inside = column[(column >= low[j]) & (column <= high[j])]
        offset = (inside.view(np.uint64) - low[j : j + 1].view(np.uint64)) // width[j]
        counts[j] = np.bincount(offset.astype(np.int64), minlength=SELECT_BINS)
    return counts


def _select_gather(block, low, high):
    """Per column: the keys of one block in [low, high]."""
    keys = _column_keys(block)
    return [keys[(keys[:, j] >= low[j]) & (keys[:, j] <= high[j]), j] for j in range(keys.shape[1])]


def _select(row_blocks, rank, low, high):
    """Per column, the value of 0-based `rank` among the column's values, exactly, given
    the columns' smallest and largest keys: the key bracket [low, high] narrows by a
    histogram pass until few values are left in it, which are then gathered."""
    from dask import delayed

    low, high = low.copy(), high.copy()
    below = np.zeros(low.size, dtype=np.int64)  # values under the bracket
    inside = np.full(low.size, np.iinfo(np.int64).max)
    while ((inside > SELECT_GATHER) & (high > low)).any():
        width = (high.view(np.uint64) - low.view(np.uint64)) // np.uint64(SELECT_BINS) + np.uint64(1)
        parts = [delayed(_select_histogram, pure=True)(b, low, high, width) for b in row_blocks]
        (counts,) = blocks.compute(blocks.tree_reduce(blocks.sum_arrays, parts))
        cumulative = np.cumsum(counts, axis=1)
        for j in range(low.size):
            b = int(np.searchsorted(cumulative[j], rank - below[j], side="right"))
            below[j] += cumulative[j, b - 1] if b else 0
            start = int(low[j]) + b * int(width[j])
            low[j], high[j] = start, min(start + int(width[j]) - 1, int(high[j]))
            inside[j] = counts[j, b]
    values = blocks.from_order_keys(low.copy())  # a bracket of one key: every value in it is that value
    wide = np.flatnonzero(high > low)
    if wide.size:
        gathered = blocks.compute(*[delayed(_select_gather, pure=True)(b, low, high) for b in row_blocks])
        for j in wide.tolist():
            keys = np.sort(np.concatenate([g[j] for g in gathered]))
            values[j] = blocks.from_order_keys(keys[rank - below[j] : rank - below[j] + 1])[0]
    return values


def _mode_split(block, n_groups):
    """Per column: the block's distinct keys and their counts, split into groups by a hash."""
    keys = _column_keys(block)
    out = []
    for j in range(keys.shape[1]):
        values, counts = np.unique(keys[:, j], return_counts=True)
        group = ((values.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) % np.uint64(n_groups)
        order = np.argsort(group, kind="stable")
        cuts = np.cumsum(np.bincount(group.astype(np.int64), minlength=n_groups))[:-1]
        out.append(list(zip(np.split(values[order], cuts), np.split(counts[order], cuts))))
    return out


def _mode_group(j, g, *splits):
    """(largest count, smallest key with it) in group g of column j."""
    values = np.concatenate([s[j][g][0] for s in splits])
    if not values.size:
        return 0, 0
    counts = np.concatenate([s[j][g][1] for s in splits])
    keys, inverse = np.unique(values, return_inverse=True)
    totals = np.bincount(inverse, weights=counts).astype(np.int64)
    best = int(np.argmax(totals))  # first maximum: the smallest key
    return int(totals[best]), int(keys[best])


def _modes(row_blocks, n, n_cols):
    """Per column, the most frequent value (the smallest of equally frequent ones)."""
    from dask import delayed

    n_groups = max(blocks.cluster_threads(), math.ceil(n / MODE_GROUP_SAMPLES))
    splits = [delayed(_mode_split, pure=True)(b, n_groups) for b in row_blocks]
    best = blocks.compute(
        *[delayed(_mode_group, pure=True)(j, g, *splits) for j in range(n_cols) for g in range(n_groups)]
    )
    modes = np.empty(n_cols)
    for j in range(n_cols):
        count, key = max(best[j * n_groups : (j + 1) * n_groups], key=lambda r: (r[0], -r[1]))
        modes[j] = blocks.from_order_keys(np.array([key], dtype=np.int64))[0]
    return modes


@register(_best_constant.best_constant)
def best_constant(y, loss):
    from dask import delayed

    arr = _measures.check_targets(blocks.to_dask_array(y, "y"), "y")
    if arr.ndim == 2:
        arr = arr.rechunk({1: -1})
    row_blocks = arr.to_delayed().ravel()
    offsets = blocks.offsets(arr.chunks[0])
    row_width = 1 if arr.ndim == 1 else arr.shape[1]
    scans = blocks.compute(*[delayed(_constant_scan, pure=True)(b, loss == "log_loss") for b in row_blocks])
    facts = _best_constant.ConstantFacts(
        arr.ndim,
        blocks.first_report([r[0] for r in scans], offsets, row_width),
        blocks.first_report([r[1] for r in scans], offsets, row_width),
    )

    def count(plan):
        stats = [r[2] for r in scans if r[2] is not None]
        n, n_cols = arr.shape[0], row_width
        low = np.minimum.reduce([s[1] for s in stats])
        high = np.maximum.reduce([s[2] for s in stats])
        if plan.loss == "zero_one":
            value = _modes(row_blocks, n, n_cols)
        elif plan.loss == "absolute":  # the median; the midpoint of the two middle values for even n
            value = _select(row_blocks, (n - 1) // 2, low, high)
            if n % 2 == 0:
                value = (value + _select(row_blocks, n // 2, low, high)) / 2
        elif plan.loss == "worst_case":
            value = (blocks.from_order_keys(low.copy()) + blocks.from_order_keys(high.copy())) / 2
        else:
            value = blocks.sum_arrays(*[s[0] for s in stats]) / n
        constant = blocks.da().broadcast_to(value if arr.ndim == 2 else value[0], arr.shape, chunks=arr.chunks)
        error = _best_constant.loss_measure(plan.loss)(arr, constant, per_target=True)
        return _best_constant.ConstantCounts(value, error)

    return _best_constant.BEST_CONSTANT.run(count, facts, loss, arr.shape)
