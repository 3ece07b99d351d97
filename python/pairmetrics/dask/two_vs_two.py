"""The 2 vs 2 test on Dask collections: two_vs_two, two_vs_two_permutation_test.

Validation (undefined rows, the magnitude limit of each metric), the result
and the permutation p-values are those of :mod:`pairmetrics._two_vs_two`
(``undefined_rows``, ``check_row_report``, ``result_from_counts``,
``permutation_result``); this module counts the pairs tile by tile.

Costs (n rows in B row blocks, d features)
------------------------------------------
2 vs 2: the row blocks of ``y_true`` (``y_pred`` is rechunked to match)
define B (B + 1) / 2 tiles of the upper triangle; a task reads two blocks,
O((|I| + |J|) d) memory, and runs the C++ tile kernel on the pairs between
them (|I| |J| d multiply-adds). Counts and per-sample pass rates are reduced
per block. The Euclidean metrics shift rows by the mean target row summed
block by block: it can differ from the in-memory mean in the last bit, which
the tie tolerance absorbs. Each permutation of the permutation test costs
one such pass (the predictions are permuted on the cluster).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .. import _distances, _two_vs_two
from .._routing import register
from .._validation import matrix_shape
from . import _blocks as blocks


def _tvt_check_block(y, p, metric, dtype):
    """Per row block: non-finite reports, rows the metric rejects (local), largest magnitudes."""
    report: dict[str, Any] = {"finite": (blocks.first_nonfinite(y), blocks.first_nonfinite(p))}
    if report["finite"][0][0] or report["finite"][1][0]:
        return report
    y = np.asarray(y, dtype=dtype)
    p = np.asarray(p, dtype=dtype)
    report["bad"] = [_distances.undefined_rows(x, metric) for x in (y, p)]
    report["big"] = (float(np.max(np.abs(y))) if y.size else 0.0, float(np.max(np.abs(p))) if p.size else 0.0)
    return report


def _tvt_scaled_sum(y, shift):
    """Column sums of the target rows scaled by 2**shift (exact scaling), for the Euclidean centre."""
    return np.ldexp(np.asarray(y, dtype=np.float64), shift).sum(axis=0)


def _tvt_validate(reports, offsets, d, metric, dtype):
    """Raise the errors of the in-memory call, in its order, from the per-block reports."""
    for which, name in enumerate(("y_true", "y_pred")):
        blocks.raise_nonfinite([r["finite"][which] for r in reports], name, offsets, row_width=d)
    for which, name in enumerate(("y_true", "y_pred")):
        rows = np.concatenate([r["bad"][which] + offsets[k] for k, r in enumerate(reports)])
        big = max(r["big"][which] for r in reports)
        _distances.check_row_report(name, metric, dtype, d, rows, big)


def _tvt_tile(yi, pi, yj, pj, dtype, metric, rtol, skip_same, n_threads, reference):
    """Counts of one tile: the pairs inside a row block (yj is None) or between two blocks.

    Returns ((passed, tied, skipped), (sample_passed, sample_tied, same_target) of block I,
    the same of block J or None).
    """
    from .. import _core

    diagonal = yj is None
    y = np.asarray(yi if diagonal else np.concatenate([yi, yj]), dtype=dtype)
    p = np.asarray(pi if diagonal else np.concatenate([pi, pj]), dtype=dtype)
    ni = yi.shape[0]
    n = y.shape[0]
    if n < 2:
        zero = np.zeros(n, np.int64)
        return (0, 0, 0), (zero, zero, zero), None
    gy = _core._row_groups(y, n_threads)
    gp = _core._row_groups(p, n_threads)
    centre, max_abs = reference
    counts = _core._two_vs_two_all(
        y,
        p,
        gy,
        gp,
        metric,
        rtol,
        skip_same,
        n_threads,
        None,
        None,
        None,
        split=0 if diagonal else ni,
        centre=centre,
        max_abs=max_abs,
    )
    passed, tied, skipped = counts["passed"], counts["tied"], counts["skipped"]
    sp, st = counts["sample_passed"], counts["sample_tied"]
    same = np.zeros(n, np.int64)
    if skip_same:
        if diagonal:
            same = np.bincount(gy, minlength=n)[gy] - 1
        else:
            same[:ni] = np.bincount(gy[ni:], minlength=n)[gy[:ni]]
            same[ni:] = np.bincount(gy[:ni], minlength=n)[gy[ni:]]
    totals = (int(passed), int(tied), int(skipped))
    if diagonal:
        return totals, (sp, st, same), None
    return totals, (sp[:ni], st[:ni], same[:ni]), (sp[ni:], st[ni:], same[ni:])


def _tvt_totals(*totals):
    return tuple(sum(t[i] for t in totals) for i in range(3))


def _tvt_sum_triples(*triples):
    return tuple(blocks.sum_arrays(*[t[i] for t in triples]) for i in range(3))


# 2 vs 2: the largest row block (bytes of one of y_true, y_pred); a tile holds two blocks of each.
TILE_BLOCK_BYTES = 64 << 20


def _tvt_block_rows(n, d, itemsize):
    """Rows per block: B = sqrt(32 threads) row_blocks make about 16 tiles per thread of the
    cluster (B (B + 1) / 2 tiles: every thread busy to the end, each tile a large product,
    few tasks), at most TILE_BLOCK_BYTES."""
    rows = math.ceil(n / math.ceil(math.sqrt(32 * blocks.cluster_threads())))
    return max(1, min(rows, TILE_BLOCK_BYTES // (d * itemsize)))


def _tvt_prepare(y_true, y_pred, metric, ties, rtol, n_jobs):
    """Validated, row-aligned dask arrays and the resolved options (one pass over the data)."""
    from .._validation import check_choice

    metric = check_choice(metric, "metric", _two_vs_two.METRICS)
    y = matrix_shape(blocks.to_dask_array(y_true, "y_true"), "y_true", min_rows=2)
    p = matrix_shape(blocks.to_dask_array(y_pred, "y_pred"), "y_pred", min_rows=2)
    _two_vs_two.check_same_shape(y, p)
    y, p = blocks.align_rows([y, p], ["y_true", "y_pred"])
    dtype = _two_vs_two.working_dtype(y, p)
    rows = _tvt_block_rows(y.shape[0], y.shape[1], np.dtype(dtype).itemsize)
    if len(y.chunks[0]) != math.ceil(y.shape[0] / rows) or max(y.chunks[0]) > rows:
        y, p = y.rechunk({0: rows, 1: -1}), p.rechunk({0: rows, 1: -1})
    ties = check_choice(ties, "ties", _two_vs_two.TIES)
    n_threads = 1 if n_jobs is None else blocks.resolve_threads(n_jobs)
    return y, p, metric, ties, dtype, n_threads


def _tvt_setup(y, p, metric, dtype, rtol):
    """Validate on the cluster; returns (rtol, reference, row offsets, row_blocks).

    The reference (mean scaled target row, largest |coordinate|) makes every
    tile prepare its rows as the in-memory call prepares the whole.
    """
    from dask import delayed

    n, d = y.shape
    blocks_y, blocks_p = y.to_delayed().ravel(), p.to_delayed().ravel()
    offsets = blocks.offsets(y.chunks[0])
    reports = blocks.compute(
        *[delayed(_tvt_check_block, pure=True)(a, b, metric, dtype) for a, b in zip(blocks_y, blocks_p)]
    )
    _tvt_validate(reports, offsets, d, metric, dtype)
    rtol = _two_vs_two.resolve_rtol(rtol, dtype, d)
    reference = (None, -1.0)
    if metric in ("euclidean", "sqeuclidean"):
        # the shift of euclidean::power_of_two_shift: the largest coordinate in [1, 2)
        max_abs = max(max(r["big"]) for r in reports)
        shift = -(math.frexp(max_abs)[1] - 1) if max_abs > 0 and math.isfinite(max_abs) else 0
        sums = blocks.compute(*[delayed(_tvt_scaled_sum, pure=True)(b, shift) for b in blocks_y])
        reference = (np.sum(sums, axis=0) / n, max_abs)
    return rtol, reference, offsets, blocks_y, blocks_p


def _tvt_graph(blocks_y, blocks_p, dtype, metric, rtol, skip_same, n_threads, reference, per_sample=True):
    """Delayed totals and per-block (sample_passed, sample_tied, same_target) over the upper triangle of tiles."""
    from dask import delayed

    n_blocks = len(blocks_y)
    tiles = {}
    for i in range(n_blocks):
        for j in range(i, n_blocks):
            if i == j:
                args = (blocks_y[i], blocks_p[i], None, None)
            else:
                args = (blocks_y[i], blocks_p[i], blocks_y[j], blocks_p[j])
            tiles[i, j] = delayed(_tvt_tile, nout=3, pure=True)(
                *args, dtype, metric, rtol, skip_same, n_threads, reference
            )
    totals = blocks.tree_reduce(_tvt_totals, [t[0] for t in tiles.values()])
    if not per_sample:
        return totals, None
    per_block = []
    for b in range(n_blocks):
        parts = [t[1] if i == b else t[2] for (i, j), t in tiles.items() if b in (i, j)]
        per_block.append(blocks.tree_reduce(_tvt_sum_triples, parts))
    return totals, per_block


def _tvt_listed(yi, pi, yj, pj, first, second, dtype, metric, rtol, skip_same, n_threads):
    """Counts of listed pairs (local indices into the rows of I followed by those of J)."""
    from .. import _core

    y = np.asarray(yi if yj is None else np.concatenate([yi, yj]), dtype=dtype)
    p = np.asarray(pi if pj is None else np.concatenate([pi, pj]), dtype=dtype)
    gy = _core._row_groups(y, n_threads)
    gp = _core._row_groups(p, n_threads)
    counts = _core._two_vs_two_pairs(y, p, gy, gp, first, second, metric, rtol, skip_same, n_threads, None, None)
    totals = (int(counts["passed"]), int(counts["tied"]), int(counts["skipped"]))
    return totals, counts["sample_passed"], counts["sample_tied"]


def _tvt_sampled(blocks_y, blocks_p, offsets, first, second, dtype, metric, rtol, skip_same, n_threads):
    """Sampled pairs grouped by tile; returns delayed totals and a list of (global rows, delayed counts)."""
    from dask import delayed

    bi = np.searchsorted(offsets, first, side="right") - 1
    bj = np.searchsorted(offsets, second, side="right") - 1
    key = bi * len(blocks_y) + bj
    order = np.argsort(key, kind="stable")
    tasks, rows = [], []
    for k in np.unique(key):
        sel = order[key[order] == k]
        i, j = divmod(int(k), len(blocks_y))
        li = first[sel] - offsets[i]
        if i == j:
            lj = second[sel] - offsets[i]
            local_rows = np.arange(offsets[i], offsets[i + 1])
            args = (blocks_y[i], blocks_p[i], None, None)
        else:
            lj = second[sel] - offsets[j] + (offsets[i + 1] - offsets[i])
            local_rows = np.r_[np.arange(offsets[i], offsets[i + 1]), np.arange(offsets[j], offsets[j + 1])]
            args = (blocks_y[i], blocks_p[i], blocks_y[j], blocks_p[j])
        tasks.append(delayed(_tvt_listed, pure=True)(*args, li, lj, dtype, metric, rtol, skip_same, n_threads))
        rows.append(local_rows)
    return tasks, rows


@dataclasses.dataclass
class _Prepared:
    """Checked inputs and options of one call, and the row blocks the counts run on."""

    y: object
    p: object
    metric: str
    ties: str
    pairs: object
    dtype: type
    rtol: float
    n_threads: int
    reference: tuple[Any, ...]
    offsets: np.ndarray
    blocks_y: list[Any]
    first: np.ndarray | None = None
    second: np.ndarray | None = None

    @property
    def skip_same(self) -> bool:
        return self.pairs == "distinct_targets"


def _observed(y_true, y_pred, metric, ties, pairs, generator, n_jobs, rtol, progress):
    """The TwoVsTwoResult of the data as given, and the prepared call (for permutations)."""
    y, p, metric, ties, dtype, n_threads = _tvt_prepare(y_true, y_pred, metric, ties, rtol, n_jobs)
    n = y.shape[0]
    pairs = _two_vs_two.resolve_pairs(pairs, n)
    rtol, reference, offsets, blocks_y, blocks_p = _tvt_setup(y, p, metric, dtype, rtol)
    prep = _Prepared(y, p, metric, ties, pairs, dtype, rtol, n_threads, reference, offsets, blocks_y)
    if isinstance(pairs, int):
        prep.first, prep.second = _two_vs_two.sample_pairs(n, pairs, generator)
        return _tvt_sampled_result(prep, blocks_p, progress), prep
    totals, per_block = _tvt_graph(blocks_y, blocks_p, dtype, metric, rtol, prep.skip_same, n_threads, reference)
    totals, *per_block = blocks.compute(totals, *per_block, progress=progress)
    sample_passed, sample_tied, same = (np.concatenate([b[i] for b in per_block]) for i in range(3))
    result = _two_vs_two.result_from_counts(
        n,
        totals,
        sample_passed,
        sample_tied,
        metric=metric,
        ties=ties,
        pairs=pairs,
        rtol=rtol,
        same_target=same if prep.skip_same else None,
    )
    return result, prep


@register(_two_vs_two.two_vs_two)
def two_vs_two(
    y_true, y_pred, metric="cosine", ties="fail", pairs="all", rng=None, n_jobs=None, progress=False, rtol=None
):
    from .._validation import check_progress, check_rng

    generator = check_rng(rng)
    progress = check_progress(progress)
    return _observed(y_true, y_pred, metric, ties, pairs, generator, n_jobs, rtol, progress)[0]


def _tvt_sampled_result(prep, blocks_p, progress):
    """The result on the sampled pairs (prep.first, prep.second)."""
    n = int(prep.offsets[-1])
    tasks, rows = _tvt_sampled(
        prep.blocks_y,
        blocks_p,
        prep.offsets,
        prep.first,
        prep.second,
        prep.dtype,
        prep.metric,
        prep.rtol,
        False,
        prep.n_threads,
    )
    results = blocks.compute(*tasks, progress=progress)
    totals = _tvt_totals(*[r[0] for r in results])
    sample_passed = np.zeros(n, np.int64)
    sample_tied = np.zeros(n, np.int64)
    for (_, sp, st), local_rows in zip(results, rows):
        np.add.at(sample_passed, local_rows, sp)
        np.add.at(sample_tied, local_rows, st)
    return _two_vs_two.result_from_counts(
        n,
        totals,
        sample_passed,
        sample_tied,
        metric=prep.metric,
        ties=prep.ties,
        pairs=prep.pairs,
        rtol=prep.rtol,
        first=prep.first,
        second=prep.second,
    )


@register(_two_vs_two.two_vs_two_permutation_test)
def two_vs_two_permutation_test(
    y_true,
    y_pred,
    n_resamples=1000,
    alternative="greater",
    rng=None,
    metric="cosine",
    ties="fail",
    pairs="all",
    n_jobs=None,
    progress=False,
    rtol=None,
):
    from .._validation import check_choice, check_int, check_progress, check_rng

    n_permutations = check_int(n_resamples, "n_resamples", low=1)
    alternative = check_choice(alternative, "alternative", _two_vs_two.ALTERNATIVES)
    progress = check_progress(progress)
    generator = check_rng(rng)
    observed, prep = _observed(y_true, y_pred, metric, ties, pairs, generator, n_jobs, rtol, False)
    n = prep.y.shape[0]
    # The permutations of the in-memory call, drawn in the same order from the same generator.
    perms = [generator.permutation(n) for _ in range(n_permutations)]
    null_totals = []
    for perm in perms:
        # y_i is paired with p_perm[i]: the prediction rows are permuted on the cluster.
        blocks_q = prep.p[perm].rechunk({0: prep.y.chunks[0], 1: -1}).to_delayed().ravel()
        if prep.first is None:
            totals, _ = _tvt_graph(
                prep.blocks_y,
                blocks_q,
                prep.dtype,
                prep.metric,
                prep.rtol,
                prep.skip_same,
                prep.n_threads,
                prep.reference,
                per_sample=False,
            )
            null_totals.append(totals)
        else:
            tasks, _ = _tvt_sampled(
                prep.blocks_y,
                blocks_q,
                prep.offsets,
                prep.first,
                prep.second,
                prep.dtype,
                prep.metric,
                prep.rtol,
                False,
                prep.n_threads,
            )
            null_totals.append(blocks.tree_reduce(_tvt_totals, [t[0] for t in tasks]))
    null_totals = list(blocks.compute(*null_totals, progress=progress))
    return _two_vs_two.permutation_result(
        observed, [t[0] for t in null_totals], [t[1] for t in null_totals], alternative
    )
