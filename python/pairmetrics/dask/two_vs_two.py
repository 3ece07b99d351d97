"""The 2 vs 2 test on Dask collections: two_vs_two, two_vs_two_permutation_test.

Both run their skeletons of :mod:`pairmetrics._two_vs_two` (``TWO_VS_TWO``,
``TWO_VS_TWO_PERMUTATION``): the checks (undefined rows, the magnitude limit of
each metric), the result and the permutation p-values are those of the
in-memory call; this module gathers the facts block by block and counts the
pairs tile by tile.

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
    """Per row block: non-finite reports, values beyond float64, rows the metric rejects (local),
    largest magnitudes."""
    report: dict[str, Any] = {"finite": (blocks.first_nonfinite(y), blocks.first_nonfinite(p))}
    report["beyond"] = tuple(_two_vs_two.beyond_float64(np.asarray(x)) for x in (y, p))
    if report["finite"][0][0] or report["finite"][1][0] or any(report["beyond"]):
        return report
    y = np.asarray(y, dtype=dtype)
    p = np.asarray(p, dtype=dtype)
    report["bad"] = [_distances.undefined_rows(x, metric) for x in (y, p)]
    report["big"] = (float(np.max(np.abs(y))) if y.size else 0.0, float(np.max(np.abs(p))) if p.size else 0.0)
    return report


def _tvt_scaled_sum(y, shift):
    """Column sums of the target rows scaled by 2**shift (exact scaling), for the Euclidean centre."""
    return np.ldexp(np.asarray(y, dtype=np.float64), shift).sum(axis=0)


def _tvt_facts(reports, offsets, n, d, metric, dtype):
    """The TwoVsTwoFacts of the whole arrays from the per-block reports."""
    nonfinite_y, nonfinite_p = (blocks.first_report([r["finite"][k] for r in reports], offsets, d) for k in (0, 1))
    nonfinite = (nonfinite_y, nonfinite_p)
    beyond = next((name for k, name in enumerate(("y_true", "y_pred")) if any(r["beyond"][k] for r in reports)), None)
    if nonfinite != (None, None) or beyond is not None:
        no_rows = np.empty(0, np.intp)
        return _two_vs_two.TwoVsTwoFacts(n, d, dtype, nonfinite, beyond, (no_rows, no_rows), (0.0, 0.0))
    undefined_y, undefined_p = (
        np.concatenate([r["bad"][k] + offsets[i] for i, r in enumerate(reports)]) for k in (0, 1)
    )
    undefined = (undefined_y, undefined_p)
    largest = (0.0, 0.0) if metric == "cosine" else tuple(max(r["big"][k] for r in reports) for k in (0, 1))
    return _two_vs_two.TwoVsTwoFacts(n, d, dtype, nonfinite, None, undefined, largest)


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


def _tvt_prepare(y_true, y_pred, metric):
    """Row-aligned dask arrays of tile-sized blocks and their facts (one pass over the data)."""
    from dask import delayed

    y = matrix_shape(blocks.to_dask_array(y_true, "y_true"), "y_true", min_rows=2)
    p = matrix_shape(blocks.to_dask_array(y_pred, "y_pred"), "y_pred", min_rows=2)
    _two_vs_two.check_same_shape(y, p)
    y, p = blocks.align_rows([y, p], ["y_true", "y_pred"])
    dtype = _two_vs_two.working_dtype(y, p)
    rows = _tvt_block_rows(y.shape[0], y.shape[1], np.dtype(dtype).itemsize)
    if len(y.chunks[0]) != math.ceil(y.shape[0] / rows) or max(y.chunks[0]) > rows:
        y, p = y.rechunk({0: rows, 1: -1}), p.rechunk({0: rows, 1: -1})
    blocks_y, blocks_p = y.to_delayed().ravel(), p.to_delayed().ravel()
    reports = blocks.compute(
        *[delayed(_tvt_check_block, pure=True)(a, b, metric, dtype) for a, b in zip(blocks_y, blocks_p)]
    )
    offsets = blocks.offsets(y.chunks[0])
    facts = _tvt_facts(reports, offsets, y.shape[0], y.shape[1], metric, dtype)
    return _Prepared(y, p, dtype, offsets, blocks_y, blocks_p, reports), facts


def _tvt_reference(prep, metric):
    """The reference (mean scaled target row, largest |coordinate|) with which every tile prepares
    its rows as the in-memory call prepares the whole."""
    from dask import delayed

    if metric not in ("euclidean", "sqeuclidean"):
        return None, -1.0
    # the shift of euclidean::power_of_two_shift: the largest coordinate in [1, 2)
    max_abs = max(max(r["big"]) for r in prep.reports)
    shift = -(math.frexp(max_abs)[1] - 1) if max_abs > 0 and math.isfinite(max_abs) else 0
    sums = blocks.compute(*[delayed(_tvt_scaled_sum, pure=True)(b, shift) for b in prep.blocks_y])
    return np.sum(sums, axis=0) / prep.y.shape[0], max_abs


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
    """The row-aligned inputs of one call, their row blocks and the blocks' reports."""

    y: Any
    p: Any
    dtype: type
    offsets: np.ndarray
    blocks_y: list[Any]
    blocks_p: list[Any]
    reports: tuple[Any, ...]


def _observed(prep, plan, n_threads, reference, progress):
    """The TwoVsTwoCounts of the data as given."""
    if plan.first is not None:
        return _tvt_sampled_counts(prep, plan, n_threads, progress)
    totals, per_block = _tvt_graph(
        prep.blocks_y, prep.blocks_p, prep.dtype, plan.metric, plan.rtol, plan.skip_same_target, n_threads, reference
    )
    totals, *per_block = blocks.compute(totals, *per_block, progress=progress)
    sample_passed, sample_tied, same = (np.concatenate([b[i] for b in per_block]) for i in range(3))
    return _two_vs_two.TwoVsTwoCounts(tuple(totals), sample_passed, sample_tied, same)


def _threads(n_jobs):
    return 1 if n_jobs is None else blocks.resolve_threads(n_jobs)


@register(_two_vs_two.two_vs_two)
def two_vs_two(
    y_true, y_pred, metric="cosine", ties="fail", pairs="all", rng=None, n_jobs=None, progress=False, rtol=None
):
    from .._validation import check_progress, check_rng

    generator = check_rng(rng)
    progress = check_progress(progress)
    prep, facts = _tvt_prepare(y_true, y_pred, metric)

    def count(plan):
        return _observed(prep, plan, _threads(n_jobs), _tvt_reference(prep, plan.metric), progress)

    return _two_vs_two.TWO_VS_TWO.run(count, facts, metric, ties, pairs, rtol, generator)


def _tvt_sampled_counts(prep, plan, n_threads, progress):
    """The TwoVsTwoCounts of the sampled pairs (plan.first, plan.second)."""
    n = int(prep.offsets[-1])
    tasks, rows = _tvt_sampled(
        prep.blocks_y,
        prep.blocks_p,
        prep.offsets,
        plan.first,
        plan.second,
        prep.dtype,
        plan.metric,
        plan.rtol,
        False,
        n_threads,
    )
    results = blocks.compute(*tasks, progress=progress)
    totals = _tvt_totals(*[r[0] for r in results])
    sample_passed = np.zeros(n, np.int64)
    sample_tied = np.zeros(n, np.int64)
    for (_, sp, st), local_rows in zip(results, rows):
        np.add.at(sample_passed, local_rows, sp)
        np.add.at(sample_tied, local_rows, st)
    return _two_vs_two.TwoVsTwoCounts(tuple(totals), sample_passed, sample_tied)


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
    from .._validation import check_progress, check_rng

    progress = check_progress(progress)
    generator = check_rng(rng)
    prep, facts = _tvt_prepare(y_true, y_pred, metric)

    def count(plan):
        test, n_threads = plan.test, _threads(n_jobs)
        reference = _tvt_reference(prep, test.metric)
        observed = _observed(prep, test, n_threads, reference, False)
        # The permutations of the in-memory call, drawn in the same order from the same generator.
        perms = [generator.permutation(test.n) for _ in range(plan.n_resamples)]
        null_totals = []
        for perm in perms:
            # y_i is paired with p_perm[i]: the prediction rows are permuted on the cluster.
            blocks_q = prep.p[perm].rechunk({0: prep.y.chunks[0], 1: -1}).to_delayed().ravel()
            if test.first is None:
                options = (test.metric, test.rtol, test.skip_same_target, n_threads, reference)
                totals, _ = _tvt_graph(prep.blocks_y, blocks_q, prep.dtype, *options, per_sample=False)
                null_totals.append(totals)
            else:
                listed = (test.metric, test.rtol, False, n_threads)
                tasks, _ = _tvt_sampled(
                    prep.blocks_y, blocks_q, prep.offsets, test.first, test.second, prep.dtype, *listed
                )
                null_totals.append(blocks.tree_reduce(_tvt_totals, [t[0] for t in tasks]))
        null_totals = list(blocks.compute(*null_totals, progress=progress))
        null = np.array(null_totals, dtype=np.int64).reshape(-1, 3)
        return _two_vs_two.PermutationCounts(observed, null[:, 0], null[:, 1])

    return _two_vs_two.TWO_VS_TWO_PERMUTATION.run(
        count, facts, n_resamples, alternative, metric, ties, pairs, rtol, generator
    )
