"""Paired evaluation on Dask collections: paired_evaluation, compare_models and the pairedeval drop-in.

paired_evaluation and paired_eval run the skeletons of :mod:`pairmetrics._paired`
(``PAIRED``, ``PAIRED_EVAL``: its checks and results): this module gathers the
facts in one pass over the blocks and counts the pairs on the cluster.
compare_models runs ``COMPARE_MODELS`` of :mod:`pairmetrics._compare_models` with
the same counts, each model's totals and the (k, k) sums of its variance terms.
Real labels compare as doubles, as in memory. Integer labels travel and compare
as unsigned offsets from the smallest label (in the narrowest unsigned dtype that
holds them), which keep every difference exactly, at any magnitude.

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
   label; and the input position for :func:`compare_models`), B * P pieces
   in all, each moved once. Float labels keep their width; integer labels
   move as offsets from the smallest label, in the narrowest unsigned dtype.
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
   16 for float64 (integer labels: their offsets' width). A pair whose larger label
   lies in the bucket of the smaller label's threshold is counted in that
   bucket by a sweep over the sorted labels and thresholds with a Fenwick
   tree over the partitions (a C++ kernel); a pair whose larger label lies
   in a higher bucket is always rankable and counted from the (bucket,
   partition) sizes alone. Labels are keyed by (label, partition), so the
   samples of one label value, however many, spread over several buckets.
5. With per-sample counts (the variance of :func:`paired_evaluation` up to
   100 000 samples, and :func:`compare_models`), the
   partition tasks send their kernel's per-sample counts back to the input
   blocks (B * P pieces), and the pairs between partitions are counted per
   sample by label bucket, in O(n log n log P) work and O(B P) tasks:
   every input block also cuts its (label, partition) runs into P label
   buckets (B * P pieces; bounds from quantiles of the sampled labels and
   thresholds together), three times: as points, and as the queries "how
   many partners with a label at or above my threshold" and "... whose
   threshold my label reaches", each split by partner partition above or
   below. A bucket answers its queries from its own points (a sort and a
   search per level of a binary tree over the P partitions: log2 P
   levels); the points of the buckets beyond come from a (bucket,
   partition) histogram. The answers go back to the blocks (B * P pieces),
   which add them to the kernel's counts: the per-sample (rankable, tied,
   incorrect) arrays stay on the workers while the totals give the AUCs,
   and the variance terms are summed block by block. A bucket holds about
   3 n / P entries of up to 40 bytes; a run of equal labels in one
   partition is one entry.

A score value shared by more than n / P samples makes its partition larger
than n / P (all its samples must meet in one kernel call).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _compare_models, _paired, _pairs
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
# Label buckets per score partition for the per-sample counts between partitions: a bucket
# gets about 3 n / (this * P) points and queries (about 40 bytes each at its peak).
QUERY_BUCKETS_PER_PARTITION = 1
# Scores sampled per partition to place the partition boundaries.
SAMPLES_PER_PARTITION = 2000


@dataclass(frozen=True)
class LabelRule:
    """How labels travel and compare on the cluster, and the rankable-pair rule between them.

    Real labels (``low`` None) travel in their own float dtype and compare as doubles.
    Integer labels travel as their offsets from the smallest label, ``low``, in the
    narrowest unsigned dtype that holds the largest offset ``top``, and compare as uint64:
    offsets keep every difference exactly, at any magnitude. The rule itself lives in
    the compiled module, with the kernel's.
    """

    min_dist: float
    low: int | None = None
    top: int = 0

    @classmethod
    def of(cls, dtype: np.dtype, label_range: Any, min_dist: float) -> LabelRule:
        """The rule of labels of this dtype with these label_extremes."""
        if dtype.kind == "f":
            return cls(min_dist)
        low, high = int(label_range[0]), int(label_range[2])
        if high - low == 2**64 - 1:
            raise ValueError(
                f"labels: integer labels of a Dask input must not span the whole 64-bit range; got {low} .. {high}"
            )
        return cls(min_dist, low, high - low)

    def travel(self, labels: np.ndarray) -> np.ndarray:
        """Labels as they travel between tasks: real labels as they are, integers as offsets."""
        labels = np.asarray(labels)
        if self.low is None:
            return labels if labels.dtype.kind == "f" else labels.astype(np.float64)
        wide = labels.astype(np.int64 if labels.dtype.kind in "ib" else np.uint64, copy=False)
        offsets = wide.view(np.uint64) - np.uint64(self.low % 2**64)  # wraps to the exact offset
        return offsets.astype(np.min_scalar_type(self.top), copy=False)

    def compared(self, values: np.ndarray) -> np.ndarray:
        """Travelled labels (or thresholds) as the kernels compare them: float64 or uint64."""
        return np.asarray(values, dtype=np.float64 if self.low is None else np.uint64)

    def up(self, values: np.ndarray) -> np.ndarray:
        """Per compared label y, the threshold t with: x rankable above y  <=>  x >= t
        (real: the smallest double t with fl(t - y) >= min_dist, inf if none; integer:
        top + 1 if none)."""
        from .. import _core

        if self.low is None:
            return _core.rankable_thresholds(self.compared(values), float(self.min_dist))
        return _core.rankable_thresholds(self.compared(values), float(self.min_dist), self.top)

    def below(self, values: np.ndarray) -> np.ndarray:
        """About the largest label that each compared label outranks (only to balance buckets)."""
        values = self.compared(values)
        if self.low is None:
            with np.errstate(over="ignore", invalid="ignore"):
                return values - self.min_dist
        gap = self.up(np.zeros(1, np.uint64))[0]
        return np.where(values >= gap, values - gap, np.uint64(0))

    def reachable(self, thresholds: np.ndarray) -> np.ndarray:
        """Where a threshold can be met by some label."""
        return np.isfinite(thresholds) if self.low is None else thresholds <= np.uint64(self.top)


def _paired_sample(scores, labels, size, seed):
    """Validation reports and a random sample of the scores of one block."""
    report: tuple[Any, ...] = (blocks.first_nonfinite(scores), blocks.first_nonfinite(labels))
    if labels.size and not report[1][0]:  # smallest and largest label and their counts (variance factors)
        report += (_pairs.label_extremes(labels),)
    rng = np.random.default_rng(seed)
    take = rng.choice(scores.shape[0], size=min(size, scores.shape[0]), replace=False)
    return report, np.asarray(scores[take], dtype=np.float64), np.asarray(labels[take])


def score_partition(scores, bounds):
    """The score partition of every entry, ``searchsorted(bounds, score, "right")``: equal scores
    share a partition and every score of a partition lies below those of the next."""
    with np.errstate(invalid="ignore", over="ignore"):  # compare in the scores' dtype when exact
        typed = bounds.astype(scores.dtype)
    if not np.array_equal(typed, bounds):
        typed = bounds
    return np.searchsorted(typed, scores, side="right")


def _paired_split(scores, labels, offset, bounds, per_sample, rule):
    """Split one block by score range: the pieces of every partition, in block order."""
    labels = rule.travel(labels)  # float32 keeps its width, integers their offsets' (bytes moved)
    if not bounds.size:
        pieces = [(scores, labels, np.arange(scores.shape[0], dtype=np.int64) + offset)]
    else:
        part = score_partition(scores, bounds)
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
    """The kernel's (rankable, correct, tied, incorrect) and, with per_sample, the per-sample
    (rankable, tied, incorrect) (else None)."""
    from .. import _core

    if scores.size < 2:
        zero = np.zeros(scores.size, np.uint64)
        return (0, 0, 0, 0), ((zero, zero, zero) if per_sample else None)
    counts = _core.paired_counts(scores, labels, min_dist, per_sample, n_threads)
    return _pairs.pair_totals(counts), (_pairs.sample_counts(counts) if per_sample else None)


def _runs(sorted_values):
    """A sorted array as (values, uint32 multiplicities) when runs of equal values make
    that much smaller, else (values, None)."""
    if sorted_values.size < 2:
        return sorted_values, None
    starts = np.flatnonzero(np.concatenate(([True], sorted_values[1:] != sorted_values[:-1])))
    if 4 * starts.size > 3 * sorted_values.size or sorted_values.size > np.iinfo(np.uint32).max:
        return sorted_values, None
    return sorted_values[starts], np.diff(np.append(starts, sorted_values.size)).astype(np.uint32)


def _paired_partition_buckets(rule, n_threads, k, bound_labels, bound_parts, *pieces):
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
    counts = _kernel_counts(scores, labels, rule.min_dist, False, n_threads)[0]
    del scores, pieces
    labels = np.sort(labels)  # in its own dtype: faster for float32 and narrow offsets
    thresholds = rule.up(labels)  # sorted, as up() is nondecreasing
    typed = bound_labels.astype(labels.dtype)  # exact: the bounds are sampled labels
    if not np.array_equal(typed, bound_labels):
        labels, typed = rule.compared(labels), bound_labels
    # (y, k) >= (b, p)  <=>  y > b, or y == b and k >= p;  (t, -1) >= (b, p)  <=>  t > b
    label_cuts = np.where(
        k >= bound_parts, np.searchsorted(labels, typed, "left"), np.searchsorted(labels, typed, "right")
    )
    threshold_cuts = np.searchsorted(thresholds, bound_labels, "right")
    label_pieces = [_runs(p) for p in np.split(labels, label_cuts)]
    del thresholds
    threshold_pieces = [_runs(p) for p in np.split(labels, threshold_cuts)]
    sizes = np.diff(np.stack([np.concatenate(([0], cuts, [labels.size])) for cuts in (label_cuts, threshold_cuts)]))
    return (counts, sizes, *label_pieces, *threshold_pieces)


def _stacked(rule, pieces):
    """Compared values, partition ids and weights (empty: weight 1 each) of one bucket."""
    values = np.concatenate([rule.compared(v) for v, _ in pieces])
    groups = np.concatenate([np.full(v.size, k, dtype=np.uint32) for k, (v, _) in enumerate(pieces)])
    weights = np.empty(0, dtype=np.uint32)
    if any(w is not None for _, w in pieces):
        weights = np.concatenate([np.ones(v.size, np.uint32) if w is None else w for v, w in pieces])
    return values, groups, weights


def _paired_bucket(n_parts, rule, *pieces):
    """(correct, incorrect) pairs between score partitions whose larger label and smaller
    label's threshold both lie in this bucket: a label at or above a threshold of a
    higher-score partition is a mis-ranked pair, of a lower-score partition a correct one."""
    from .. import _core

    points = _stacked(rule, pieces[:n_parts])
    labels, groups, weights = _stacked(rule, pieces[n_parts:])
    values, point_groups, point_weights = points
    thresholds = rule.up(labels)
    counts = _core.group_dominance(values, point_groups, point_weights, thresholds, groups, weights, n_parts)
    return counts["higher"], counts["lower"]


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
    return _key_quantiles(sample_labels, parts, n_buckets)


def _key_quantiles(values, tags, n_buckets):
    """At most n_buckets - 1 distinct (value, tag) bounds: quantiles of the keys in lexicographic order."""
    order = np.lexsort((tags, values))
    picks = order[(np.arange(1, n_buckets) * order.size) // n_buckets] if order.size else order
    values, tags = values[picks], tags[picks]
    new = np.concatenate(([True], (values[1:] != values[:-1]) | (tags[1:] != tags[:-1])))[: values.size]
    return values[new], tags[new]


# --------------------------------------------------------------------------- per-sample counts between partitions
#
# Sample i (label y, threshold u = up(y), score partition p) has a rankable partner j in
# another partition q when y_j >= u (j has the larger label) or up(y_j) <= y (the smaller).
# Its counts between partitions are four dominance counts over (label, partition):
#   a_hi = #{y_j >= u, q > p}  correct      a_lo = #{y_j >= u, q < p}  incorrect
#   b_hi = #{up(y_j) <= y, q > p}  incorrect   b_lo = #{up(y_j) <= y, q < p}  correct
# Each input block sends its (label, partition) runs to label buckets three times: as
# points, keyed (y, p); as "a" queries, keyed (u, -1); as "b" queries, keyed (d(y), P)
# with d(y) the largest x such that up(x) <= y. Keys compare lexicographically, so every
# point of a bucket above an "a" query's has y_j >= u, every point below has y_j < u
# (likewise for "b"): a bucket counts the points of its own range, and the bucket-by-
# partition histogram of the points gives the rest. Runs of equal labels within a
# partition are one point (with a weight) and one query, so heavily tied labels are few
# entries; the points of one label value still spread over buckets by partition.


def _query_bounds(sample_scores, sample_labels, score_bounds, n_buckets, rule):
    """(value, tag) bounds of the label buckets, from quantiles of the sampled keys of points and
    queries together, so that each bucket gets a similar number of both. Tags: -1 for "a"
    queries, the partition for points, P for "b" queries (``rule.below(y)`` stands for d(y):
    the bounds only balance the buckets, any bounds give exact counts)."""
    parts = np.searchsorted(score_bounds, sample_scores, side="right")
    n_parts = score_bounds.size + 1
    values = np.concatenate([sample_labels, rule.up(sample_labels), rule.below(sample_labels)])
    tags = np.concatenate([parts, np.full(parts.size, -1), np.full(parts.size, n_parts)])
    kept = rule.reachable(values)
    return _key_quantiles(values[kept], tags[kept], n_buckets)


def _key_bucket(values, tags, bound_values, bound_tags, n_parts):
    """Per entry, the number of bounds at or below the key (value, tag) in lexicographic order."""
    low = np.searchsorted(bound_values, values, "left")
    high = np.searchsorted(bound_values, values, "right")
    tie = high > low
    if not tie.any():
        return low
    # keys equal to a bound's value: compare the tags within that value's run of bounds
    width = n_parts + 2  # tags lie in -1 .. n_parts
    run_start = np.searchsorted(bound_values, bound_values, "left")
    composite = run_start * width + (bound_tags + 1)
    tags = np.broadcast_to(tags, values.shape)
    out = low.copy()
    out[tie] = np.searchsorted(composite, low[tie] * width + tags[tie] + 1, "right")
    return out


def _block_runs(scores, labels, score_bounds, bound_values, bound_tags, bound_thresholds, rule):
    """The (label, partition) runs of one block, their buckets and their pieces per bucket.

    Outputs: ``(meta, histogram, *pieces)``; meta is (run of each sample, partition, weight,
    "a" bucket, "b" bucket) per run, for :func:`_block_counts`; histogram the points' weight
    per (bucket, partition); piece c the points (label, partition, weight), "a" queries
    (threshold, partition) and "b" queries (label, partition) of bucket c. Runs are in
    (label, partition) order, so every bucket index is nondecreasing along them and each
    piece is a slice; the bucket's answers come back in the same order.
    """
    n_parts, n_buckets = score_bounds.size + 1, bound_values.size + 1
    parts = score_partition(scores, score_bounds) if score_bounds.size else np.zeros(scores.shape[0], np.intp)
    # (label, partition) order: a radix sort by partition, then a stable sort by label in its own dtype
    by_part = np.argsort(parts.astype(np.uint16) if n_parts <= 1 << 16 else parts, kind="stable")
    travelled = rule.travel(labels)  # integers as narrow offsets: a faster sort, the same order
    order = by_part[np.argsort(travelled[by_part], kind="stable")]
    ys, ps = rule.compared(travelled)[order], parts[order]
    new = np.concatenate(([True], (ys[1:] != ys[:-1]) | (ps[1:] != ps[:-1])))[: ys.size]
    starts = np.flatnonzero(new)
    run_of = np.empty(ys.size, dtype=np.int64)
    run_of[order] = np.cumsum(new) - 1
    values, run_parts = ys[starts], ps[starts].astype(np.int32)
    weights = np.diff(np.append(starts, ys.size)).astype(np.int64)
    thresholds = rule.up(values)
    point_bucket = _key_bucket(values, run_parts, bound_values, bound_tags, n_parts)
    a_bucket = _key_bucket(thresholds, np.int32(-1), bound_values, bound_tags, n_parts)
    b_bucket = np.searchsorted(bound_thresholds, values, "right")  # bound <= d(y)  <=>  up(bound) <= y
    histogram = np.bincount(point_bucket * n_parts + run_parts, weights, minlength=n_buckets * n_parts)
    edges = np.arange(n_buckets + 1)
    cuts = [np.searchsorted(b, edges, "left") for b in (point_bucket, a_bucket, b_bucket)]
    pieces = [
        (
            values[cuts[0][c] : cuts[0][c + 1]],
            run_parts[cuts[0][c] : cuts[0][c + 1]],
            weights[cuts[0][c] : cuts[0][c + 1]],
            thresholds[cuts[1][c] : cuts[1][c + 1]],
            run_parts[cuts[1][c] : cuts[1][c + 1]],
            values[cuts[2][c] : cuts[2][c + 1]],
            run_parts[cuts[2][c] : cuts[2][c + 1]],
        )
        for c in range(n_buckets)
    ]
    meta = (run_of, run_parts, weights, a_bucket, b_bucket)
    return (meta, histogram.astype(np.int64).reshape(n_buckets, n_parts), *pieces)


def _dominance(ranks, parts, weights, query_ranks, query_parts, n_parts):
    """Per query (r, p): the weight of the points with rank < r in partitions above p, and in
    partitions below p.

    For q != p, the highest bit s where q and p differ decides q > p; so level s compares a
    query with the points of its sibling segment (the partitions sharing the bits above s,
    with bit s flipped). Points and queries are sorted once by rank (a query before the
    points of its own rank); each of the log2(P) levels then orders them by segment with a
    stable radix sort and reads the counts off a running sum: O(n) a level, no search.
    """
    n_queries = query_ranks.size
    higher = np.zeros(n_queries, dtype=np.int64)
    lower = np.zeros(n_queries, dtype=np.int64)
    if not ranks.size or not n_queries:
        return higher, lower
    keys = np.concatenate([2 * np.asarray(query_ranks, np.int64), 2 * np.asarray(ranks, np.int64) + 1])
    order = np.argsort(keys, kind="stable")
    is_query = order < n_queries
    item_weights = np.concatenate([np.zeros(n_queries, np.int64), weights])[order]
    item_parts = np.concatenate([query_parts, parts])[order]
    query_slots = order[is_query]  # the query of each query item, in item order
    segment_dtype = np.uint16 if n_parts <= 1 << 16 else np.int64
    for level in range(max(0, (n_parts - 1).bit_length())):
        own = item_parts >> level
        segment = np.where(is_query, own ^ 1, own).astype(segment_dtype)  # a query looks in its sibling
        by_segment = np.argsort(segment, kind="stable")
        sorted_weights = item_weights[by_segment]
        running = np.cumsum(sorted_weights) - sorted_weights  # weight before each item
        # minus the weight of the segments before the item's own
        segment_weights = np.bincount(segment, item_weights, minlength=int(segment.max()) + 1).astype(np.int64)
        running -= (np.cumsum(segment_weights) - segment_weights)[segment[by_segment]]
        count = np.empty(order.size, dtype=np.int64)
        count[by_segment] = running
        count = count[is_query]
        above = ((item_parts[is_query] >> level) & 1) == 0
        higher[query_slots] += np.where(above, count, 0)
        lower[query_slots] += np.where(above, 0, count)
    return higher, lower


def _bucket_counts(n_parts, rule, *pieces):
    """The dominance counts of every query of one bucket against the bucket's points, as
    (a_hi, a_lo, b_hi, b_lo) per source block (in the order of its pieces)."""
    columns = [np.concatenate([p[k] for p in pieces]) for k in range(7)]
    labels, parts, weights, a_thresholds, a_parts, b_labels, b_parts = columns
    distinct = np.unique(labels)
    ranks = np.searchsorted(distinct, labels)
    a_ranks = np.searchsorted(distinct, a_thresholds, "left")  # y_j >= u  <=>  rank_j >= a_rank
    # up() is nondecreasing: up(y_j) <= y  <=>  rank_j < b_rank
    b_ranks = np.searchsorted(rule.up(distinct), b_labels, "right")
    higher, lower = _dominance(
        ranks, parts, weights, np.concatenate([a_ranks, b_ranks]), np.concatenate([a_parts, b_parts]), n_parts
    )
    per_part = np.bincount(parts, weights, minlength=n_parts).astype(np.int64)
    below = np.cumsum(per_part) - per_part
    above = per_part.sum() - np.cumsum(per_part)
    n_a = a_ranks.size
    a_hi, a_lo = above[a_parts] - higher[:n_a], below[a_parts] - lower[:n_a]
    b_hi, b_lo = higher[n_a:], lower[n_a:]
    a_cuts = np.cumsum([p[3].size for p in pieces])[:-1]
    b_cuts = np.cumsum([p[5].size for p in pieces])[:-1]
    return tuple(zip(*(np.split(a, a_cuts) for a in (a_hi, a_lo)), *(np.split(b, b_cuts) for b in (b_hi, b_lo))))


def _far_tables(*histograms):
    """From the blocks' (bucket, partition) histograms of the points: for an "a" query of
    bucket c and partition p, the points in buckets above c and partitions above / below p;
    for a "b" query, those in buckets below c."""
    points = blocks.sum_arrays(*histograms)
    above_bucket = np.cumsum(points[::-1], axis=0)[::-1] - points
    below_bucket = np.cumsum(points, axis=0) - points

    def split(table):
        cumulative = np.cumsum(table, axis=1)
        return table.sum(axis=1, keepdims=True) - cumulative, cumulative - table  # partitions above, below

    return (*split(above_bucket), *split(below_bucket))


def _paired_within(rule, n_threads, block_offsets, *pieces):
    """Within-partition totals and per-sample counts (C++ kernel) of one score partition,
    the latter as (index, rankable, tied, incorrect) per input block."""
    kept, scores, labels = _partition_data(pieces)
    totals, (rankable, tied, incorrect) = _kernel_counts(scores, labels, rule.min_dist, True, n_threads)
    index = np.concatenate([p[2] for p in kept])
    block = np.searchsorted(block_offsets, index, side="right") - 1
    sort = np.argsort(block, kind="stable")
    cuts = np.cumsum(np.bincount(block, minlength=block_offsets.size - 1))[:-1]
    arrays = (index, rankable.astype(np.int64), tied.astype(np.int64), incorrect.astype(np.int64))
    return (tuple(int(c) for c in totals), *zip(*(np.split(a[sort], cuts) for a in arrays)))


def _block_counts(offset, size, runs, tables, bucket_answers, *within):
    """The (3, block) per-sample (rankable, tied, incorrect) of one input block, in input order,
    and its samples' (correct, incorrect) pairs between partitions counted from the smaller label."""
    out = np.zeros((3, size), dtype=np.int64)
    between = (0, 0)
    if runs is not None:
        run_of, parts, weights, a_bucket, b_bucket = runs
        a_hi, a_lo, b_hi, b_lo = (np.concatenate([answer[k] for answer in bucket_answers]) for k in range(4))
        a_above, a_below, b_above, b_below = tables
        a_hi += a_above[a_bucket, parts]
        a_lo += a_below[a_bucket, parts]
        b_hi += b_above[b_bucket, parts]
        b_lo += b_below[b_bucket, parts]
        out[0] = (a_hi + a_lo + b_hi + b_lo)[run_of]
        out[2] = (a_lo + b_hi)[run_of]
        between = (int(weights @ a_hi), int(weights @ a_lo))
    for index, rankable, tied, incorrect in within:
        local = index - offset
        out[0, local] += rankable
        out[1, local] = tied
        out[2, local] += incorrect
    return out, between


def _partition_count(n, per_sample):
    """Score partitions: at least the cluster's threads, each at most a third of a worker's memory per thread."""
    n_parts = max(
        blocks.cluster_threads(), math.ceil(n / blocks.memory_capped(PARTITION_SAMPLES, PARTITION_BYTES[per_sample]))
    )
    return max(1, min(n_parts, n // 2 or 1))


def _paired_facts(scores, labels):
    """One pass over the blocks: the PairedFacts, and per block its reports and a sample of its
    (score, label) pairs (sized for the per-sample graph, which has the most partitions)."""
    from dask import delayed

    blocks_s, blocks_y = scores.to_delayed().ravel(), labels.to_delayed().ravel()
    per_block = math.ceil(SAMPLES_PER_PARTITION * _partition_count(scores.shape[0], True) / len(blocks_s))
    sampled = [
        delayed(_paired_sample, pure=True)(s, y, per_block, k) for k, (s, y) in enumerate(zip(blocks_s, blocks_y))
    ]
    results = blocks.compute(*sampled)
    offsets = blocks.offsets(scores.chunks[0])
    facts = _pairs.PairedFacts(
        scores.shape[0],
        blocks.first_report([r[0][0] for r in results], offsets),
        blocks.first_report([r[0][1] for r in results], offsets),
    )
    return facts, results


def _paired_graph(scores, labels, min_dist, per_sample, n_jobs, scores_name="y_score", labels_name="y_true"):
    """_sampled_graph of inputs whose facts are checked here (for compare_models)."""
    from .._validation import raise_if_nonfinite

    facts, results = _paired_facts(scores, labels)
    raise_if_nonfinite(facts.scores_nonfinite, scores_name)
    raise_if_nonfinite(facts.labels_nonfinite, labels_name)
    return _sampled_graph(scores, labels, results, min_dist, per_sample, n_jobs)


def _sampled_graph(scores, labels, results, min_dist, per_sample, n_jobs):
    """Delayed totals (rankable, correct, tied, incorrect), with per_sample one delayed (3, block)
    array of per-sample (rankable, tied, incorrect) per block of the input (else None), and the
    label_extremes of all labels, from the results of _paired_facts."""
    from dask import delayed

    n = scores.shape[0]
    n_threads = 1 if n_jobs is None else blocks.resolve_threads(n_jobs)
    blocks_s = scores.to_delayed().ravel()
    blocks_y = labels.to_delayed().ravel()
    offsets = blocks.offsets(scores.chunks[0])

    # 1. the sampled scores -> partition boundaries
    n_parts = _partition_count(n, per_sample)
    label_range = _pairs.merge_label_extremes([r[0][2] for r in results if len(r[0]) > 2])  # none for empty blocks
    rule = LabelRule.of(labels.dtype, label_range, min_dist)
    sample_scores = np.concatenate([r[1] for r in results])
    sample = np.sort(sample_scores)
    picks = sample[(np.arange(1, n_parts) * sample.size) // n_parts] if sample.size else sample
    bounds = np.unique(picks)
    n_parts = bounds.size + 1

    # 2. split every block by score range; partition k gathers its pieces
    split = [
        delayed(_paired_split, nout=n_parts, pure=True)(s, y, offsets[k], bounds, per_sample, rule)
        for k, (s, y) in enumerate(zip(blocks_s, blocks_y))
    ]
    partition_pieces = [[pieces[k] for pieces in split] for k in range(n_parts)]
    sample_labels = rule.compared(rule.travel(np.concatenate([r[2] for r in results])))
    if not per_sample:
        bound_labels, bound_parts = _label_bounds(sample_scores, sample_labels, bounds, BUCKETS_PER_PARTITION * n_parts)
        return _paired_totals_graph(partition_pieces, bound_labels, bound_parts, rule, n_threads), None, label_range
    bounds_values, bounds_tags = _query_bounds(
        sample_scores, sample_labels, bounds, QUERY_BUCKETS_PER_PARTITION * n_parts, rule
    )
    return (
        *_per_sample_graph(
            blocks_s, blocks_y, offsets, partition_pieces, bounds, bounds_values, bounds_tags, rule, n_threads
        ),
        label_range,
    )


def _per_sample_graph(
    blocks_s, blocks_y, offsets, partition_pieces, score_bounds, bound_values, bound_tags, rule, n_threads
):
    """Delayed totals and per-block (3, block) per-sample counts: within partitions by the C++
    kernel, between partitions by label bucket (see the comment above _query_bounds)."""
    from dask import delayed

    n_blocks, n_parts, n_buckets = len(blocks_s), len(partition_pieces), bound_values.size + 1
    within = [
        delayed(_paired_within, nout=1 + n_blocks, pure=True)(rule, n_threads, offsets, *pieces)
        for pieces in partition_pieces
    ]  # totals, per-block pieces
    answers: list[Any] = [()] * n_blocks
    runs, tables = [None] * n_blocks, None
    if n_parts > 1:
        bound_thresholds = rule.up(bound_values)
        split = [
            delayed(_block_runs, nout=2 + n_buckets, pure=True)(
                s, y, score_bounds, bound_values, bound_tags, bound_thresholds, rule
            )
            for s, y in zip(blocks_s, blocks_y)
        ]  # meta, histogram, bucket pieces
        runs = [b[0] for b in split]
        tables = delayed(_far_tables, nout=4, pure=True)(*[b[1] for b in split])
        buckets = [
            delayed(_bucket_counts, nout=n_blocks, pure=True)(n_parts, rule, *[b[2 + c] for b in split])
            for c in range(n_buckets)
        ]  # answers per source block
        answers = [[bucket[k] for bucket in buckets] for k in range(n_blocks)]
    per_block = [
        delayed(_block_counts, nout=2, pure=True)(
            offsets[k], offsets[k + 1] - offsets[k], runs[k], tables, answers[k], *[w[1 + k] for w in within]
        )
        for k in range(n_blocks)
    ]  # (3, block) counts, between-partition totals
    totals = delayed(_paired_totals, pure=True)(
        [w[0] for w in within], [b[1][0] for b in per_block], [b[1][1] for b in per_block]
    )
    return totals, [b[0] for b in per_block]


def _paired_totals_graph(partition_pieces, bound_labels, bound_parts, rule, n_threads):
    """Delayed totals: within score partitions by the C++ kernel; between them by label
    bucket (one shuffle of labels and thresholds) and bucket sizes."""
    from dask import delayed

    n_parts, n_buckets = len(partition_pieces), bound_labels.size + 1
    parts = [
        delayed(_paired_partition_buckets, nout=2 + 2 * n_buckets, pure=True)(
            rule, n_threads, k, bound_labels, bound_parts, *partition_pieces[k]
        )
        for k in range(n_parts)
    ]  # counts, sizes, label pieces, threshold pieces
    between = []
    if n_parts > 1:
        between = [
            delayed(_paired_bucket, nout=2, pure=True)(
                n_parts, rule, *[p[2 + b] for p in parts], *[p[2 + n_buckets + b] for p in parts]
            )
            for b in range(n_buckets)
        ]
        between.append(delayed(_paired_histogram, nout=2, pure=True)(*[p[1] for p in parts]))
    return delayed(_paired_totals, pure=True)([p[0] for p in parts], [b[0] for b in between], [b[1] for b in between])


def _paired_totals(within, correct_between, incorrect_between):
    rankable, correct, tied, incorrect = (sum(w[i] for w in within) for i in range(4))
    correct += sum(correct_between)
    incorrect += sum(incorrect_between)
    return rankable + sum(correct_between) + sum(incorrect_between), correct, tied, incorrect


def _paired_inputs(scores, labels, min_dist, scores_name="y_score", labels_name="y_true"):
    scores = blocks.vector(scores, scores_name, min_length=2)
    labels = blocks.vector(labels, labels_name, min_length=2)
    min_dist = _paired.check_inputs(scores, labels, min_dist, scores_name, labels_name)
    scores, labels = blocks.align_rows([scores, labels], [scores_name, labels_name])
    return scores, labels, min_dist


def _paired_vectors(scores, labels, scores_name="y_score", labels_name="y_true"):
    """Dask vectors of one length, in aligned blocks."""
    from .._validation import check_same_length

    scores = blocks.vector(scores, scores_name, min_length=2)
    labels = blocks.vector(labels, labels_name, min_length=2)
    check_same_length(scores, labels, scores_name, labels_name)
    return blocks.align_rows([scores, labels], [scores_name, labels_name])


def _counts(scores, labels, results, plan, n_jobs, progress=False):
    """The PairedCounts of the plan, computed on the cluster (its counter)."""
    import dask

    totals, per_block, label_range = _sampled_graph(scores, labels, results, plan.min_dist, plan.with_variance, n_jobs)
    if plan.with_variance:
        totals, per_block = dask.persist(totals, per_block)
    (counts,) = blocks.compute(totals, progress=progress)
    weighted = None
    if plan.with_variance:
        weighted = _variance_sums(labels, label_range, (counts,), per_block)[0, 0] if counts[0] else 0.0
    return _paired.PairedCounts(counts, weighted)


@register(_paired.paired_eval)
def paired_eval(scores, labels, min_dist=0.5):
    scores, labels = _paired_vectors(scores, labels, "scores", "labels")
    facts, results = _paired_facts(scores, labels)
    return _paired.PAIRED_EVAL.run(
        lambda plan: _counts(scores, labels, results, plan, None), facts, min_dist, False, False, "scores", "labels"
    )


def _g_sums(labels, label_range, n, totals, *row_blocks):
    """Per block: the (k, k) sums of g_a g_b over pairs of the k models' components (the g of
    the in-memory call), weighted by the variance factors."""
    g = np.array([_pairs.auc_components(counts, block) for block, counts in zip(row_blocks, totals)])
    f = _pairs.component_factors(labels, label_range, n)
    return (g * f) @ g.T


def _variance_sums(labels, label_range, totals, *per_block):
    """Reduced _g_sums over the row blocks (per-sample counts stay on the workers)."""
    from dask import delayed

    n = labels.shape[0]
    parts = [
        delayed(_g_sums, pure=True)(lab, label_range, n, totals, *row_blocks)
        for lab, *row_blocks in zip(labels.to_delayed().ravel(), *per_block)
    ]
    (sums,) = blocks.compute(blocks.tree_reduce(blocks.sum_arrays, parts))
    return sums


@register(_paired.paired_evaluation)
def paired_evaluation(
    y_true, y_score, min_dist=0.5, n_jobs=None, warn=True, variance=None, progress=False, groups=None
):
    from .._groups import refuse_dask_groups
    from .._validation import check_progress

    refuse_dask_groups(groups, "paired_evaluation")

    scores, labels = _paired_vectors(y_score, y_true)
    facts, results = _paired_facts(scores, labels)

    def count(plan):
        return _counts(scores, labels, results, plan, n_jobs, check_progress(progress))

    return _paired.PAIRED.run(count, facts, min_dist, variance, warn)


@register(_compare_models.compare_models)
def compare_models(y_true, y_score, min_dist=0.5, n_jobs=None, progress=False, groups=None):
    import dask

    from .._groups import refuse_dask_groups
    from .._validation import check_progress

    refuse_dask_groups(groups, "compare_models")
    models = _compare_models.check_models(blocks.to_dask_array(y_score, "y_score"))
    names = [f"y_score[{k}]" for k in range(models.shape[0])]
    rows = []
    for k, name in enumerate(names):
        row, labels_k = _paired_vectors(models[k], y_true, name)
        rows.append(row)
    *rows, labels = blocks.align_rows([*rows, labels_k], [*names, "y_true"])
    gathered = [_paired_facts(row, labels) for row in rows]
    facts = _compare_models.ComparisonFacts(
        labels.shape[0], tuple(f.scores_nonfinite for f, _ in gathered), gathered[0][0].labels_nonfinite
    )

    def count(min_dist):
        shown = check_progress(progress)
        graphs = [
            _sampled_graph(row, labels, results, min_dist, True, n_jobs) for row, (_, results) in zip(rows, gathered)
        ]
        # Keep the per-sample counts on the workers while the totals give the AUCs.
        totals, per_block = dask.persist([g[0] for g in graphs], [g[1] for g in graphs])
        totals = tuple(tuple(t) for t in blocks.compute(*totals, progress=shown))
        gram = _variance_sums(labels, graphs[0][2], totals, *per_block) if totals[0][0] else None
        return _compare_models.ComparisonCounts(totals, gram)

    return _compare_models.COMPARE_MODELS.run(count, facts, min_dist)
