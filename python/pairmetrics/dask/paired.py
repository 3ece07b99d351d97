"""Paired evaluation on Dask collections: paired_eval, paired_evaluation, compare_paired.

Validation rules, the variance terms and the results are those of
:mod:`pairmetrics._paired` (its seams ``check_inputs``, ``label_extremes``,
``auc_components``, ``component_factors``, ``evaluation_from_counts``,
``comparison_from_counts``); this module only counts the pairs on the cluster.
Integer labels are compared as float64 here, so they must lie strictly
between -2**52 and 2**52 (the in-memory call compares them exactly at any size).

Costs (n samples in B input blocks, P score partitions)
-------------------------------------------------------
Paired evaluation (exact, for any chunking):

1. One pass reads every block to validate it and sample it; the client
   gets ``2000 P`` sampled (score, label) pairs and picks P - 1 boundaries between
   distinct score values, so equal scores always share a partition.
   ``P = max(threads of the cluster, ceil(n / S))``, where S is the largest
   partition that takes at most a third of a worker's memory per thread (a
   partition task peaks near 48 bytes per sample, 96 with per-sample counts).
2. One shuffle: every block is cut by score range into P pieces (score,
   label; and the input position for :func:`compare_paired`), B * P pieces
   in all, each moved once. Float labels keep their width.
3. The C++ kernel counts the pairs inside each partition: O(n/P log(n/P))
   work and O(n/P) memory per task; the task also sorts the partition's
   labels and computes one exact threshold per label
   (``fl(y_i - y_j) >= min_dist  <=>  y_i >= t(y_j)``, nondecreasing in y).
4. Pairs between partitions p < q: all scores of p are below those of q, so
   a rankable pair is correct or incorrect by its labels alone and never
   tied. The totals count them by label bucket, in O(n log n) work: the
   client also picks 3P - 1 label bounds from the sampled (label, partition)
   pairs, and a second shuffle sends every label twice, once to the bucket
   of the label and once to the bucket of its threshold (runs of equal
   values as one entry with a count): 8 bytes a sample for float32 labels,
   16 for float64. A pair whose larger label
   lies in the bucket of the smaller label's threshold is counted in that
   bucket by a sweep over the sorted labels and thresholds with a Fenwick
   tree over the partitions (a C++ kernel); a pair whose larger label lies
   in a higher bucket is always rankable and counted from the (bucket,
   partition) sizes alone. Labels are keyed by (label, partition), so the
   samples of one label value, however many, spread over several buckets.
5. With per-sample counts (the variance of :func:`paired_evaluation` up to
   100 000 samples, and :func:`compare_paired`), the pairs between
   partitions are counted per sample instead: one partition's sorted
   thresholds are searched in another's sorted labels, in cache-sized
   steps, as two tasks per pair of partitions, each moving one partition's
   labels (P (P - 1) tasks, P - 1 searches per sample). The per-sample
   (rankable, tied, incorrect) counts then go back to the input blocks (a
   shuffle of n records) and stay on the workers while the totals give the
   AUCs; the variance terms are summed block by block.

A score value shared by more than n / P samples makes its partition larger
than n / P (all its samples must meet in one kernel call).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _paired
from .._routing import register
from . import _blocks as blocks

# Paired evaluation: the largest score partition (samples) when the data are
# split by score; the number of partitions is at least the threads of the
# cluster. Between-partition work grows as (partitions - 1) passes over the
# labels, so partitions are kept few and as large as the workers' memory allows:
# a partition task peaks near 48 bytes per sample (96 with per-sample counts)
# and may take a third of its worker's memory per thread (the worker keeps
# other results in memory up to its spill threshold, 60% by default).
PARTITION_SAMPLES = 200_000_000
PARTITION_BYTES = {False: 144, True: 288}
# Label buckets per score partition, for the pairs between partitions: a bucket task
# peaks near 120 bytes per sample of its bucket (labels and thresholds, sorted records).
BUCKETS_PER_PARTITION = 3
# Scores sampled per partition to place the partition boundaries.
SAMPLES_PER_PARTITION = 2000


# Integer labels below this magnitude, and their differences, are exact in float64.
_EXACT_INTEGER_LABELS = 2.0**52


def _threshold_up(y: np.ndarray, min_dist: float) -> np.ndarray:
    """The smallest double t with fl(t - y) >= min_dist, per entry (inf if none).

    Rounded subtraction is monotone, so {x : fl(x - y) >= min_dist} = {x >= t}
    exactly: counting labels >= t gives the kernel's rankable test bit for bit.
    Usually t = fl(y + min_dist); otherwise (near zero, or where the sum
    rounds the wrong way) a bisection over the ordered doubles finds it.
    """
    y = np.asarray(y, dtype=np.float64)
    t = np.empty_like(y)
    step = max(1, min(y.size, _STEP))
    work = np.empty(step)  # small scratch arrays, reused: stays in cache, no page faults
    flags = np.empty(step, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, y.size, step):
            yy, tt = y[start : start + step], t[start : start + step]
            w, f = work[: yy.size], flags[: yy.size]
            np.add(yy, min_dist, out=tt)
            # t = fl(y + min_dist) is the threshold when fl(t - y) >= min_dist > fl(t- - y)
            np.less(np.subtract(tt, yy, out=w), min_dist, out=f)
            if not f.any():
                np.subtract(np.nextafter(tt, -np.inf, out=w), yy, out=w)
                np.greater_equal(w, min_dist, out=f)
                if not f.any():
                    continue
            tt[:] = _threshold_search(yy, tt.copy(), min_dist)
    return t


# Elements per step of the chunked loops (thresholds, searches): small enough for the cache.
_STEP = 1 << 16


def _threshold_search(y, t, min_dist):
    """_threshold_up where fl(y + min_dist) is not the threshold: a few ulp steps, then bisection."""
    for _ in range(3):  # usually one ulp off, if at all
        low = (t - y) < min_dist
        if not low.any():
            break
        t[low] = np.nextafter(t[low], np.inf)
    for _ in range(3):
        below = np.nextafter(t, -np.inf)
        fits = (below - y) >= min_dist
        if not fits.any():
            break
        t[fits] = below[fits]
    done = ((t - y) >= min_dist) & ((np.nextafter(t, -np.inf) - y) < min_dist)
    if not done.all():
        bad = ~done
        t[bad] = _bisect_up(y[bad], min_dist)
    return t


def _count_below(haystack, needles, side):
    """``np.searchsorted(haystack, needles, side)`` for sorted needles, in cache-sized steps
    (each step searches only the stretch of the haystack its needles fall in)."""
    out = np.empty(needles.size, dtype=np.int64)
    low = 0
    for start in range(0, needles.size, _STEP):
        part = needles[start : start + _STEP]
        high = int(np.searchsorted(haystack, part[-1], side=side))
        low = low + int(np.searchsorted(haystack[low:high], part[0], side=side))
        out[start : start + part.size] = np.searchsorted(haystack[low:high], part, side=side)
        out[start : start + part.size] += low
    return out


def _bisect_up(y, min_dist):
    """Smallest t with fl(t - y) >= min_dist by bisection on the ordered keys (64 steps at most)."""
    with np.errstate(over="ignore", invalid="ignore"):
        high_value = np.maximum(y + 2 * min_dist, np.nextafter(y, np.inf))
        lo, hi = blocks.order_keys(y.copy()), blocks.order_keys(high_value)  # fl(y - y) = 0 < min_dist; hi satisfies
        while True:
            open_ = hi - 1 > lo  # hi - lo can exceed the int64 range
            if not open_.any():
                return blocks.from_order_keys(hi)
            mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)
            fits = (blocks.from_order_keys(mid) - y) >= min_dist
            hi = np.where(open_ & fits, mid, hi)
            lo = np.where(open_ & ~fits, mid, lo)


def _paired_sample(scores, labels, size, seed):
    """Validation reports and a random sample of the scores of one block."""
    report = (blocks.first_nonfinite(scores), blocks.first_nonfinite(labels))
    if labels.size and not report[1][0]:  # smallest and largest label and their counts (variance factors)
        report += (_paired.label_extremes(labels),)
    rng = np.random.default_rng(seed)
    take = rng.choice(scores.shape[0], size=min(size, scores.shape[0]), replace=False)
    return report, np.asarray(scores[take], dtype=np.float64), np.asarray(labels[take], dtype=np.float64)


def _paired_split(scores, labels, offset, bounds, per_sample):
    """Split one block by score range: the pieces of every partition, in block order."""
    if labels.dtype.kind != "f":  # float labels keep their width (half the bytes moved for float32)
        labels = np.asarray(labels, dtype=np.float64)
    if not bounds.size:
        pieces = [(scores, labels, np.arange(scores.shape[0], dtype=np.int64) + offset)]
    else:
        with np.errstate(invalid="ignore", over="ignore"):  # compare in the scores' dtype when exact
            typed = bounds.astype(scores.dtype)
        if not np.array_equal(typed, bounds):
            typed = bounds
        part = np.searchsorted(typed, scores, side="right")
        if bounds.size < 65535:  # narrow ids: a radix sort below
            part = part.astype(np.uint8 if bounds.size < 255 else np.uint16)
        order = np.argsort(part, kind="stable")
        cuts = np.cumsum(np.bincount(part, minlength=bounds.size + 1))[:-1]
        index = np.split(order.astype(np.int64) + offset, cuts) if per_sample else [None] * (bounds.size + 1)
        pieces = list(zip(np.split(scores[order], cuts), np.split(labels[order], cuts), index))
    if per_sample:
        return tuple(pieces)
    return tuple((s, y) for s, y, _ in pieces)


def _partition_data(pieces):
    """The non-empty pieces of one score partition and its scores and labels, concatenated."""
    kept = [p for p in pieces if p[0].size] or list(pieces[:1])
    return kept, np.concatenate([p[0] for p in kept]), np.concatenate([p[1] for p in kept])


def _kernel_counts(scores, labels, min_dist, per_sample, n_threads):
    from .. import _core

    if scores.size >= 2:
        return _core.paired_counts(scores, labels, min_dist, per_sample, n_threads)
    zero = np.zeros(scores.size, np.uint64)
    return ((0, 0, 0, 0), zero, zero, zero) if per_sample else (0, 0, 0, 0)


def _paired_partition(min_dist, n_threads, *pieces):
    """Within-partition counts and per-sample arrays by the C++ kernel, the partition's
    sorted labels (float64) and their thresholds.

    Four outputs, so that a task needing the counts does not receive the arrays.
    """
    kept, scores, labels = _partition_data(pieces)
    totals, rankable, tied, incorrect = _kernel_counts(scores, labels, min_dist, True, n_threads)
    index = np.concatenate([p[2] for p in kept])
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order].astype(np.float64)
    arrays = (index, rankable.astype(np.int64), tied.astype(np.int64), incorrect.astype(np.int64), order)
    del scores, labels, kept, pieces
    # fl(y_i - y_j) >= min_dist  <=>  y_i >= up(y_j), and up() is nondecreasing: the
    # thresholds of sorted labels are sorted too.
    return tuple(int(c) for c in totals), arrays, sorted_labels, _threshold_up(sorted_labels, min_dist)


def _runs(sorted_values):
    """A sorted array as (values, uint32 multiplicities) when runs of equal values make
    that much smaller, else (values, None)."""
    if sorted_values.size < 2:
        return sorted_values, None
    starts = np.flatnonzero(np.concatenate(([True], sorted_values[1:] != sorted_values[:-1])))
    if 4 * starts.size > 3 * sorted_values.size or sorted_values.size > np.iinfo(np.uint32).max:
        return sorted_values, None
    return sorted_values[starts], np.diff(np.append(starts, sorted_values.size)).astype(np.uint32)


def _paired_partition_buckets(min_dist, n_threads, k, bound_labels, bound_parts, *pieces):
    """Within-partition counts of score partition k, and its labels cut by label bucket.

    Outputs: the counts; the (2, B) bucket sizes of its labels and thresholds; B pieces
    of labels as labels; B pieces of labels whose thresholds fall in the bucket (the
    labels travel, not the float64 thresholds: half the bytes for float32). A label y
    of partition k lies in the bucket of the key (y, k), a threshold t in the bucket
    of (t, -1): the buckets are ranges of these keys between the (label, partition)
    bounds, so equal labels of different partitions can fall in different buckets,
    while every label >= t lies in t's bucket or above it.
    """
    _, scores, labels = _partition_data(pieces)
    counts = tuple(int(c) for c in _kernel_counts(scores, labels, min_dist, False, n_threads))
    del scores, pieces
    labels = np.sort(labels)  # in its own dtype: faster for float32
    thresholds = _threshold_up(labels, min_dist)  # sorted, as up() is nondecreasing
    typed = bound_labels.astype(labels.dtype)  # exact: the bounds are sampled labels
    if not np.array_equal(typed, bound_labels):
        labels, typed = labels.astype(np.float64), bound_labels
    # (y, k) >= (b, p)  <=>  y > b, or y == b and k >= p;  (t, -1) >= (b, p)  <=>  t > b
    label_cuts = np.where(k >= bound_parts, np.searchsorted(labels, typed, "left"),
                          np.searchsorted(labels, typed, "right"))  # fmt: skip
    threshold_cuts = np.searchsorted(thresholds, bound_labels, "right")
    label_pieces = [_runs(p) for p in np.split(labels, label_cuts)]
    del thresholds
    threshold_pieces = [_runs(p) for p in np.split(labels, threshold_cuts)]
    sizes = np.diff(np.stack([np.concatenate(([0], cuts, [labels.size])) for cuts in (label_cuts, threshold_cuts)]))
    return (counts, sizes, *label_pieces, *threshold_pieces)


def _stacked(pieces):
    """Values (float64), partition ids and weights (empty: weight 1 each) of one bucket."""
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v, _ in pieces])
    groups = np.concatenate([np.full(v.size, k, dtype=np.uint32) for k, (v, _) in enumerate(pieces)])
    weights = np.empty(0, dtype=np.uint32)
    if any(w is not None for _, w in pieces):
        weights = np.concatenate([np.ones(v.size, np.uint32) if w is None else w for v, w in pieces])
    return values, groups, weights


def _paired_bucket(n_parts, min_dist, *pieces):
    """(correct, incorrect) pairs between score partitions whose larger label and smaller
    label's threshold both lie in this bucket: a label at or above a threshold of a
    higher-score partition is a mis-ranked pair, of a lower-score partition a correct one."""
    from .. import _core

    points = _stacked(pieces[:n_parts])
    labels, groups, weights = _stacked(pieces[n_parts:])
    lower, _, higher = _core.group_dominance(*points, _threshold_up(labels, min_dist), groups, weights, n_parts)
    return higher, lower


def _paired_histogram(*sizes):
    """(correct, incorrect) pairs between score partitions whose larger label lies in a
    bucket above the smaller label's threshold: every such pair is rankable."""
    labels = np.stack([s[0] for s in sizes], axis=1).astype(object)  # [bucket, partition], exact integers
    thresholds = np.stack([s[1] for s in sizes], axis=1).astype(object)
    above = np.cumsum(labels[::-1], axis=0)[::-1]  # labels in this bucket or above
    above = np.concatenate([above[1:], np.zeros_like(above[:1])])  # strictly above
    lower_parts = np.cumsum(above, axis=1) - above  # from partitions below the threshold's
    higher_parts = above.sum(axis=1, keepdims=True) - np.cumsum(above, axis=1)
    return int((thresholds * higher_parts).sum()), int((thresholds * lower_parts).sum())


def _label_bounds(sample_scores, sample_labels, score_bounds, n_buckets):
    """(label, partition) bounds of n_buckets label buckets, from quantiles of a sample
    ordered by label, then score partition."""
    parts = np.searchsorted(score_bounds, sample_scores, side="right")
    order = np.lexsort((parts, sample_labels))
    picks = order[(np.arange(1, n_buckets) * order.size) // n_buckets] if order.size else order
    labels, parts = sample_labels[picks], parts[picks]
    new = np.concatenate(([True], (labels[1:] != labels[:-1]) | (parts[1:] != parts[:-1])))[: labels.size]
    return labels[new], parts[new]


def _paired_side(needles_y, needles_up, ref_y, ref_up):
    """Per needle i: partners j of the reference with y_j - y_i >= min_dist (above) and
    with y_i - y_j >= min_dist (below); neither is ever a tie.

    Between a lower-score partition and a higher one, a pair is correct when the
    sample of the higher-score partition has the larger label: for needles of
    the lower partition, ``above`` counts correct and ``below`` incorrect
    partners; for needles of the higher partition the other way round.
    """
    above = ref_y.size - _count_below(ref_y, needles_up, "left")
    below = _count_below(ref_up, needles_y, "right")
    return above, below


def _paired_finish(within, between_rankable, between_incorrect, n_chunks_offsets):
    """Per-sample (rankable, tied, incorrect) of one partition, split by the original block they came from."""
    index, rankable, tied, incorrect, order = within
    rankable = rankable.copy()
    incorrect = incorrect.copy()
    # between-partition counts are in sorted-label order
    rankable[order] += between_rankable
    incorrect[order] += between_incorrect
    block = np.searchsorted(n_chunks_offsets, index, side="right") - 1
    sort = np.argsort(block, kind="stable")
    cuts = np.cumsum(np.bincount(block, minlength=n_chunks_offsets.size - 1))[:-1]
    return tuple(zip(*(np.split(a[sort], cuts) for a in (index, rankable, tied, incorrect))))


def _paired_assemble(offset, size, *pieces):
    """The per-sample arrays of one original block, in input order."""
    out = np.zeros((3, size), dtype=np.int64)
    for index, rankable, tied, incorrect in pieces:
        local = index - offset
        out[0, local] = rankable
        out[1, local] = tied
        out[2, local] = incorrect
    return out


def _paired_graph(scores, labels, min_dist, per_sample, n_jobs, scores_name="scores"):
    """Delayed totals (rankable, correct, tied, incorrect) and, with per_sample, one delayed
    (3, block) array of per-sample (rankable, tied, incorrect) per block of the input."""
    from dask import delayed

    n = scores.shape[0]
    n_threads = 1 if n_jobs is None else blocks.resolve_threads(n_jobs)
    blocks_s = scores.to_delayed().ravel()
    blocks_y = labels.to_delayed().ravel()
    offsets = blocks.offsets(scores.chunks[0])

    # 1. validation reports and a sample of the scores -> partition boundaries
    n_parts = max(
        blocks.cluster_threads(), math.ceil(n / blocks.memory_capped(PARTITION_SAMPLES, PARTITION_BYTES[per_sample]))
    )
    n_parts = max(1, min(n_parts, n // 2 or 1))
    per_block = math.ceil(SAMPLES_PER_PARTITION * n_parts / len(blocks_s))
    sampled = [
        delayed(_paired_sample, pure=True)(s, y, per_block, k) for k, (s, y) in enumerate(zip(blocks_s, blocks_y))
    ]
    results = blocks.compute(*sampled)
    blocks.raise_nonfinite([r[0][0] for r in results], scores_name, offsets)
    blocks.raise_nonfinite([r[0][1] for r in results], "labels", offsets)
    label_range = _paired.merge_label_extremes([r[0][2] for r in results if len(r[0]) > 2])  # none for empty blocks
    low, high = float(label_range[0]), float(label_range[2])
    if labels.dtype.kind in "iu" and max(-low, high) >= _EXACT_INTEGER_LABELS:
        raise ValueError("labels: integer labels of a Dask input are compared as float64 on the cluster and "
                         f"must lie strictly between -2**52 and 2**52; got {low:.17g} .. {high:.17g}")  # fmt: skip
    sample_scores = np.concatenate([r[1] for r in results])
    sample = np.sort(sample_scores)
    picks = sample[(np.arange(1, n_parts) * sample.size) // n_parts] if sample.size else sample
    bounds = np.unique(picks)
    n_parts = bounds.size + 1

    # 2. split every block by score range; partition k gathers its pieces
    split = [delayed(_paired_split, nout=n_parts, pure=True)(s, y, offsets[k], bounds, per_sample)
             for k, (s, y) in enumerate(zip(blocks_s, blocks_y))]  # fmt: skip
    partition_pieces = [[pieces[k] for pieces in split] for k in range(n_parts)]
    if not per_sample:
        bound_labels, bound_parts = _label_bounds(sample_scores, np.concatenate([r[2] for r in results]), bounds,
                                                  BUCKETS_PER_PARTITION * n_parts)  # fmt: skip
        return _paired_totals_graph(partition_pieces, bound_labels, bound_parts, min_dist, n_threads), None, label_range
    parts = [
        delayed(_paired_partition, nout=4, pure=True)(min_dist, n_threads, *partition_pieces[k]) for k in range(n_parts)
    ]  # fmt: skip (counts, per-sample arrays, sorted labels, thresholds)

    # 3. pairs of partitions p < q from their sorted labels, one task per side, so that
    #    both sides of a pair run at once and each moves one partition's labels.
    sides = {}  # (needles, reference) -> (above, below) per needle
    for p in range(n_parts):
        for q in range(n_parts):
            if p != q:
                sides[p, q] = delayed(_paired_side, nout=2, pure=True)(
                    parts[p][2], parts[p][3], parts[q][2], parts[q][3]
                )
    # the lower partition's side gives the totals: above = correct, below = incorrect
    low_sides = [sides[p, q] for p in range(n_parts) for q in range(p + 1, n_parts)]
    totals = delayed(_paired_totals, pure=True)([c[0] for c in parts], [delayed(blocks.sum_int)(s[0]) for s in low_sides],
                                                [delayed(blocks.sum_int)(s[1]) for s in low_sides])  # fmt: skip

    # 4. per-sample counts: sum over the partner partitions, then back to the input blocks
    back = []
    for p in range(n_parts):
        rank_terms = [delayed(np.add, pure=True)(*sides[p, q]) for q in range(n_parts) if q != p]
        inc_terms = [sides[p, q][1] if q > p else sides[p, q][0] for q in range(n_parts) if q != p]
        if rank_terms:
            rank = blocks.tree_reduce(blocks.sum_arrays, rank_terms)
            inc = blocks.tree_reduce(blocks.sum_arrays, inc_terms)
        else:  # a single partition: nothing between partitions
            rank = inc = delayed(_zeros_like_partition, pure=True)(parts[p][2])
        back.append(delayed(_paired_finish, nout=len(blocks_s), pure=True)(parts[p][1], rank, inc, offsets))
    per_block = [
        delayed(_paired_assemble, pure=True)(offsets[k], offsets[k + 1] - offsets[k], *[b[k] for b in back])
        for k in range(len(blocks_s))
    ]
    return totals, per_block, label_range


def _paired_totals_graph(partition_pieces, bound_labels, bound_parts, min_dist, n_threads):
    """Delayed totals: within score partitions by the C++ kernel; between them by label
    bucket (one shuffle of labels and thresholds) and bucket sizes."""
    from dask import delayed

    n_parts, n_buckets = len(partition_pieces), bound_labels.size + 1
    parts = [
        delayed(_paired_partition_buckets, nout=2 + 2 * n_buckets, pure=True)(
            min_dist, n_threads, k, bound_labels, bound_parts, *partition_pieces[k]
        )
        for k in range(n_parts)
    ]  # fmt: skip (counts, sizes, label pieces, threshold pieces)
    between = []
    if n_parts > 1:
        between = [delayed(_paired_bucket, nout=2, pure=True)(n_parts, min_dist, *[p[2 + b] for p in parts],
                                                              *[p[2 + n_buckets + b] for p in parts])
                   for b in range(n_buckets)]  # fmt: skip
        between.append(delayed(_paired_histogram, nout=2, pure=True)(*[p[1] for p in parts]))
    return delayed(_paired_totals, pure=True)([p[0] for p in parts], [b[0] for b in between],
                                              [b[1] for b in between])  # fmt: skip


def _zeros_like_partition(labels_k):
    return np.zeros(labels_k.size, np.int64)


def _paired_totals(within, correct_between, incorrect_between):
    rankable, correct, tied, incorrect = (sum(w[i] for w in within) for i in range(4))
    correct += sum(correct_between)
    incorrect += sum(incorrect_between)
    return rankable + sum(correct_between) + sum(incorrect_between), correct, tied, incorrect


def _paired_inputs(scores, labels, min_dist, scores_name="scores"):
    scores = blocks.vector(scores, scores_name, min_length=2)
    labels = blocks.vector(labels, "labels", min_length=2)
    min_dist = _paired.check_inputs(scores, labels, min_dist, scores_name)
    scores, labels = blocks.align_rows([scores, labels], [scores_name, "labels"])
    return scores, labels, min_dist


@register(_paired.paired_eval)
def paired_eval(scores, labels, min_dist=0.5, n_jobs=None):
    result = paired_evaluation(scores, labels, min_dist, n_jobs=n_jobs, warn=False, variance=False)
    return result.n_rankable, result.n_correct


def _g_sums(labels, label_range, n, totals, *row_blocks):
    """Per block: sums of g_a g_b over the model pairs (a, a), (b, b), (a, b), plain and
    weighted by the variance factors (the components g of the in-memory call)."""
    g = [_paired.auc_components(counts, block) for block, counts in zip(row_blocks, totals)]
    f = _paired.component_factors(labels, label_range, n)
    products = [(0, 0), (1, 1), (0, 1)] if len(g) == 2 else [(0, 0)]
    return np.array([g[i] @ g[j] for i, j in products] + [f @ (g[i] * g[j]) for i, j in products])


def _variance_sums(labels, label_range, totals, *per_block):
    """Reduced _g_sums over the row blocks (per-sample counts stay on the workers)."""
    from dask import delayed

    n = labels.shape[0]
    parts = [delayed(_g_sums, pure=True)(lab, label_range, n, totals, *row_blocks)
             for lab, *row_blocks in zip(labels.to_delayed().ravel(), *per_block)]  # fmt: skip
    (sums,) = blocks.compute(blocks.tree_reduce(blocks.sum_arrays, parts))
    return sums


@register(_paired.paired_evaluation)
def paired_evaluation(scores, labels, min_dist=0.5, n_jobs=None, warn=True, variance=None, progress=False,
                      groups=None):  # fmt: skip
    import dask

    from .._groups import refuse_dask_groups
    from .._validation import check_bool, check_progress

    refuse_dask_groups(groups, "paired_evaluation")

    scores, labels, min_dist = _paired_inputs(scores, labels, min_dist)
    with_variance = _paired.wants_variance(labels.shape[0], variance)
    warn = check_bool(warn, "warn")
    progress = check_progress(progress)
    totals, per_block, label_range = _paired_graph(scores, labels, min_dist, with_variance, n_jobs)
    if with_variance:
        totals, per_block = dask.persist(totals, per_block)
    (counts,) = blocks.compute(totals, progress=progress)
    weighted = None
    if with_variance:
        weighted = _variance_sums(labels, label_range, (counts,), per_block)[1] if counts[0] else 0.0
    return _paired.evaluation_from_counts(counts, min_dist, warn, weighted)


@register(_paired.compare_paired)
def compare_paired(scores_a, scores_b, labels, min_dist=0.5, n_jobs=None, progress=False, groups=None):
    import dask

    from .._groups import refuse_dask_groups
    from .._validation import check_progress

    refuse_dask_groups(groups, "compare_paired")

    progress = check_progress(progress)
    a_scores, _, min_dist = _paired_inputs(scores_a, labels, min_dist, "scores_a")
    b_scores, labels_b, _ = _paired_inputs(scores_b, labels, min_dist, "scores_b")
    # one row chunking for all three, so that per-block counts of both models line up
    a_scores, b_scores, labels = blocks.align_rows([a_scores, b_scores, labels_b], ["scores_a", "scores_b", "labels"])
    totals_a, blocks_a, label_range = _paired_graph(a_scores, labels, min_dist, True, n_jobs, "scores_a")
    totals_b, blocks_b, _ = _paired_graph(b_scores, labels, min_dist, True, n_jobs, "scores_b")
    # Keep the per-sample counts on the workers while the totals give the AUCs.
    totals_a, totals_b, blocks_a, blocks_b = dask.persist(totals_a, totals_b, blocks_a, blocks_b)
    counts = blocks.compute(totals_a, totals_b, progress=progress)
    sums = None
    if counts[0][0]:
        sums = _variance_sums(labels, label_range, counts, blocks_a, blocks_b)
    return _paired.comparison_from_counts(counts[0], counts[1], min_dist, a_scores.shape[0], sums)
