"""Dask collections: the public functions computed on a cluster, with the same numbers.

Public functions that take arrays are routed here (see
``pairmetrics._routing``): when one of their array arguments is a Dask
collection (a dask array, a dask DataFrame or Series), the call is handed to
the implementation registered in :mod:`pairmetrics.dask`, which builds a task graph that runs the same C++ kernels on
blocks of the data and reduces small per-block results. Nothing here imports
dask unless dask is already imported by the caller, so ``import pairmetrics``
never loads it.

The graphs run on the active ``distributed.Client`` when there is one, or on
dask's default scheduler otherwise. No step brings the data to the client or
to a single task: what reaches the client are counts, quantile samples and
per-sample results the in-memory function also returns. Inside a task the
kernels use one thread (the workers' threads are the parallelism) unless
``n_jobs`` is given.

Costs (n samples in B input blocks, P score partitions, d features)
--------------------------------------------------------------------
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

2 vs 2: the row blocks of ``y_true`` (``y_pred`` is rechunked to match)
define B (B + 1) / 2 tiles of the upper triangle; a task reads two blocks,
O((|I| + |J|) d) memory, and runs the C++ tile kernel on the pairs between
them (|I| |J| d multiply-adds). Counts and per-sample pass rates are reduced
per block. The Euclidean metrics shift rows by the mean target row summed
block by block: it can differ from the in-memory mean in the last bit, which
the tie tolerance absorbs. Each permutation of the permutation test costs
one such pass (the predictions are permuted on the cluster).

Classic measures and multi-label counts: one pass, per-block sums reduced
along a tree (float sums equal the in-memory ones up to rounding; counts and
maxima exactly). The best constant: one pass for the mean and the midrange
(then one for its error); the median exactly, by histogram passes over order
keys that shrink a bracket SELECT_BINS-fold (a few passes) until at
most SELECT_GATHER values per column are gathered; the mode exactly, by one
shuffle of each block's distinct values and counts into hash groups. Cross-match resampling: one task per repeat, which gathers
only its ``2 * sample_size`` rows.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
import warnings

import numpy as np

from .._metric_transforms import DEFAULT_MAX_MATRIX_BYTES as _DEFAULT_MATRIX_BYTES

__all__: list[str] = []

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


# --------------------------------------------------------------------------- helpers


def _da():
    import dask.array as da

    return da


def _compute(*values, progress: bool = False):
    """``dask.compute`` on the active client (or the default scheduler), with an optional bar."""
    import dask

    if not progress:
        return dask.compute(*values)
    client = _client()
    if client is not None:
        from distributed import progress as show

        futures = client.compute(list(values))
        show(futures)
        return tuple(client.gather(futures))
    from dask.diagnostics import ProgressBar

    with ProgressBar():
        return dask.compute(*values)


def _client():
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def _cluster_threads() -> int:
    client = _client()
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # a client without workers yet
            return 1
    from .._validation import usable_cores

    return usable_cores()


def _partition_samples(per_sample: bool) -> int:
    """PARTITION_SAMPLES, or fewer when a worker's memory per thread holds fewer."""
    cap = PARTITION_SAMPLES
    client = _client()
    if client is not None:
        try:
            workers = client.scheduler_info()["workers"].values()
            limits = [w["memory_limit"] / max(1, w["nthreads"]) for w in workers if w.get("memory_limit")]
        except Exception:  # an older or remote scheduler without this information
            limits = []
        if limits:
            cap = min(cap, int(min(limits) // PARTITION_BYTES[per_sample]))
    return max(1, cap)


def _to_dask_array(x, name: str):
    """A dask array from a dask array, DataFrame/Series (lengths computed) or anything numpy accepts."""
    import dask
    from dask.array import Array

    da = _da()
    if isinstance(x, Array):
        arr = x
    elif dask.is_dask_collection(x) and hasattr(x, "to_dask_array"):
        # lengths are computed below: to_dask_array(lengths=True) fails on a Parquet
        # column whose files dask merges into fewer partitions when reading one column
        arr = x.to_dask_array()
    elif dask.is_dask_collection(x):
        raise TypeError(f"{name} must be a dask array, DataFrame or Series, got {type(x).__name__}")
    else:
        from .._validation import as_numeric_array

        arr = da.from_array(as_numeric_array(x, name), chunks=-1)
    if any(math.isnan(c) for dim in arr.chunks for c in dim):
        arr = arr.compute_chunk_sizes()
    return _checked_dtype(arr, name)


def _checked_dtype(arr, name: str):
    """Apply ``as_numeric_array``'s dtype rules: reject non-numbers, widen float16, canonical bools."""
    from .._validation import as_numeric_array

    kind = arr.dtype.kind
    if kind == "O":
        raise TypeError(f"{name} must contain numbers only; a dask array of dtype object is not accepted")
    if kind not in "biuf":
        raise TypeError(f"{name} must have a real numeric dtype, got dtype {arr.dtype}")
    out_dtype = as_numeric_array(np.zeros(1, dtype=arr.dtype), name).dtype
    return arr.map_blocks(lambda b: as_numeric_array(b, name), dtype=out_dtype)


def _vector(x, name: str, min_length: int = 1):
    from .._validation import vector_shape

    return vector_shape(_to_dask_array(x, name), name, min_length=min_length)


def _align_rows(arrays, names):
    """Rechunk along rows to the chunks of the first dask-chunked array (one chunk across columns)."""
    lengths = {a.shape[0] for a in arrays}
    if len(lengths) > 1:
        shapes = " and ".join(str(a.shape[0]) for a in arrays)
        raise ValueError(f"{' and '.join(names)} must have the same length, got {shapes}")
    reference = max(arrays, key=lambda a: len(a.chunks[0]))
    rows = reference.chunks[0]
    out = []
    for a in arrays:
        spec = {0: rows}
        if a.ndim == 2:
            spec[1] = -1
        out.append(a.rechunk(spec) if a.chunks[0] != rows or (a.ndim == 2 and len(a.chunks[1]) > 1) else a)
    return out


def _offsets(chunks):
    return np.concatenate([[0], np.cumsum(chunks)]).astype(np.int64)


def _first_nonfinite(block):
    """(count, first local index, 'NaN' or 'infinite values') of the non-finite entries of a float block."""
    if block.dtype.kind != "f":
        return 0, -1, ""
    bad = ~np.isfinite(block.ravel())
    count = int(np.count_nonzero(bad))
    if not count:
        return 0, -1, ""
    first = int(np.argmax(bad))
    return count, first, "NaN" if np.isnan(block.ravel()[first]) else "infinite values"


def _raise_nonfinite(reports, name, offsets, row_width=1):
    """Raise the in-memory message from per-block reports of _first_nonfinite."""
    total = sum(r[0] for r in reports)
    if not total:
        return
    k = next(i for i, r in enumerate(reports) if r[0])
    first = offsets[k] * row_width + reports[k][1]
    raise ValueError(f"{name} contains {reports[k][2]} (first at flat index {first}, {total} non-finite in all)")


# --------------------------------------------------------------------------- paired evaluation


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


def _ordered(x):
    """Doubles as int64 keys in the same order (-0.0 and 0.0 share a key)."""
    bits = x.view(np.int64)
    return np.where(bits < 0, -(bits & np.int64(0x7FFFFFFFFFFFFFFF)), bits)


def _unordered(key):
    sign = np.int64(-0x8000000000000000)
    return np.where(key < 0, (-key) | sign, key).view(np.float64)


def _bisect_up(y, min_dist):
    """Smallest t with fl(t - y) >= min_dist by bisection on the ordered keys (64 steps at most)."""
    with np.errstate(over="ignore", invalid="ignore"):
        high_value = np.maximum(y + 2 * min_dist, np.nextafter(y, np.inf))
        lo, hi = _ordered(y.copy()), _ordered(high_value)  # fl(y - y) = 0 < min_dist; hi satisfies
        while True:
            open_ = hi - 1 > lo  # hi - lo can exceed the int64 range
            if not open_.any():
                return _unordered(hi)
            mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)
            fits = (_unordered(mid) - y) >= min_dist
            hi = np.where(open_ & fits, mid, hi)
            lo = np.where(open_ & ~fits, mid, lo)


def _paired_sample(scores, labels, size, seed):
    """Validation reports and a random sample of the scores of one block."""
    report = (_first_nonfinite(scores), _first_nonfinite(labels))
    if labels.size and not report[1][0]:  # smallest and largest label and their counts (variance factors)
        low, high = labels.min(), labels.max()
        report += ((float(low), int(np.count_nonzero(labels == low)), float(high), int(np.count_nonzero(labels == high))),)
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


def _sum_arrays(*arrays):
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total


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
    n_threads = 1 if n_jobs is None else _resolve_threads(n_jobs)
    blocks_s = scores.to_delayed().ravel()
    blocks_y = labels.to_delayed().ravel()
    offsets = _offsets(scores.chunks[0])

    # 1. validation reports and a sample of the scores -> partition boundaries
    n_parts = max(_cluster_threads(), math.ceil(n / _partition_samples(per_sample)))
    n_parts = max(1, min(n_parts, n // 2 or 1))
    per_block = math.ceil(SAMPLES_PER_PARTITION * n_parts / len(blocks_s))
    sampled = [delayed(_paired_sample, pure=True)(s, y, per_block, k) for k, (s, y) in enumerate(zip(blocks_s, blocks_y))]
    results = _compute(*sampled)
    _raise_nonfinite([r[0][0] for r in results], scores_name, offsets)
    _raise_nonfinite([r[0][1] for r in results], "labels", offsets)
    ranges = [r[0][2] for r in results if len(r[0]) > 2]  # empty blocks have none
    low = min(r[0] for r in ranges)
    high = max(r[2] for r in ranges)
    n_low = sum(r[1] for r in ranges if r[0] == low)
    n_high = sum(r[3] for r in ranges if r[2] == high)
    label_range = (low, n_low, high, n_high)
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
    parts = [delayed(_paired_partition, nout=4, pure=True)(min_dist, n_threads, *partition_pieces[k])
             for k in range(n_parts)]  # fmt: skip (counts, per-sample arrays, sorted labels, thresholds)

    # 3. pairs of partitions p < q from their sorted labels, one task per side, so that
    #    both sides of a pair run at once and each moves one partition's labels.
    sides = {}  # (needles, reference) -> (above, below) per needle
    for p in range(n_parts):
        for q in range(n_parts):
            if p != q:
                sides[p, q] = delayed(_paired_side, nout=2, pure=True)(parts[p][2], parts[p][3], parts[q][2],
                                                                       parts[q][3])
    # the lower partition's side gives the totals: above = correct, below = incorrect
    low_sides = [sides[p, q] for p in range(n_parts) for q in range(p + 1, n_parts)]
    totals = delayed(_paired_totals, pure=True)([c[0] for c in parts], [delayed(_sum_int)(s[0]) for s in low_sides],
                                                [delayed(_sum_int)(s[1]) for s in low_sides])  # fmt: skip

    # 4. per-sample counts: sum over the partner partitions, then back to the input blocks
    back = []
    for p in range(n_parts):
        rank_terms = [delayed(np.add, pure=True)(*sides[p, q]) for q in range(n_parts) if q != p]
        inc_terms = [sides[p, q][1] if q > p else sides[p, q][0] for q in range(n_parts) if q != p]
        if rank_terms:
            rank = _tree(_sum_arrays, rank_terms)
            inc = _tree(_sum_arrays, inc_terms)
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
    parts = [delayed(_paired_partition_buckets, nout=2 + 2 * n_buckets, pure=True)(
                 min_dist, n_threads, k, bound_labels, bound_parts, *partition_pieces[k])
             for k in range(n_parts)]  # fmt: skip (counts, sizes, label pieces, threshold pieces)
    between = []
    if n_parts > 1:
        between = [delayed(_paired_bucket, nout=2, pure=True)(n_parts, min_dist, *[p[2 + b] for p in parts],
                                                              *[p[2 + n_buckets + b] for p in parts])
                   for b in range(n_buckets)]  # fmt: skip
        between.append(delayed(_paired_histogram, nout=2, pure=True)(*[p[1] for p in parts]))
    return delayed(_paired_totals, pure=True)([p[0] for p in parts], [b[0] for b in between],
                                              [b[1] for b in between])  # fmt: skip


def _sum_int(a):
    return int(a.sum())


def _zeros_like_partition(labels_k):
    return np.zeros(labels_k.size, np.int64)


def _tree(func, items, width: int = 8):
    """Reduce delayed items with ``func(*group)`` along a tree of the given width."""
    from dask import delayed

    items = list(items)
    while len(items) > 1:
        items = [delayed(func, pure=True)(*items[i : i + width]) if len(items[i : i + width]) > 1 else items[i]
                 for i in range(0, len(items), width)]  # fmt: skip
    return items[0]


def _paired_totals(within, correct_between, incorrect_between):
    rankable, correct, tied, incorrect = (sum(w[i] for w in within) for i in range(4))
    correct += sum(correct_between)
    incorrect += sum(incorrect_between)
    return rankable + sum(correct_between) + sum(incorrect_between), correct, tied, incorrect


def _resolve_threads(n_jobs):
    from .._validation import resolve_n_jobs

    return resolve_n_jobs(n_jobs)


def _paired_inputs(scores, labels, min_dist, scores_name="scores"):
    from .._validation import check_positive_finite

    scores = _vector(scores, scores_name, min_length=2)
    labels = _vector(labels, "labels", min_length=2)
    if scores.shape[0] != labels.shape[0]:
        raise ValueError(f"{scores_name} and labels must have the same length, got {scores.shape[0]} and {labels.shape[0]}")
    min_dist = check_positive_finite(min_dist, "min_dist")
    scores, labels = _align_rows([scores, labels], [scores_name, "labels"])
    return scores, labels, min_dist


def _dask_paired_eval(scores, labels, min_dist=0.5, n_jobs=None):
    result = _dask_paired_evaluation(scores, labels, min_dist, n_jobs=n_jobs, warn=False, variance=False)
    return result.n_rankable, result.n_correct


def _factors(labels, label_range, n):
    """Per-sample variance factors of ``_paired._component_factors`` from the global label range."""
    low, n_low, high, n_high = label_range
    if low != high and n_low + n_high == n:
        def factor(m):
            return m / (m - 1) if m > 1 else 1.0
        return np.where(labels == low, factor(n_low), factor(n_high))
    return np.full(labels.shape[0], n / (n - 1))


def _g_sums(labels, label_range, n, aucs, *blocks):
    """Per block: sums of g_a g_b over the model pairs (a, a), (b, b), (a, b), plain and
    weighted by the variance factors (g = credit - auc * rankable as in compare_paired)."""
    g = []
    for block, auc in zip(blocks, aucs):
        rankable, tied, incorrect = block
        credit = (rankable - tied - incorrect).astype(np.float64) + 0.5 * tied
        g.append(credit - auc * rankable)
    f = _factors(np.asarray(labels, dtype=np.float64), label_range, n)
    products = [(0, 0), (1, 1), (0, 1)] if len(g) == 2 else [(0, 0)]
    return np.array([g[i] @ g[j] for i, j in products] + [f @ (g[i] * g[j]) for i, j in products])


def _variance_sums(labels, label_range, aucs, *per_block):
    """Reduced _g_sums over the blocks (per-sample counts stay on the workers)."""
    from dask import delayed

    n = labels.shape[0]
    parts = [delayed(_g_sums, pure=True)(lab, label_range, n, aucs, *blocks)
             for lab, *blocks in zip(labels.to_delayed().ravel(), *per_block)]  # fmt: skip
    (sums,) = _compute(_tree(_sum_arrays, parts))
    return sums


def _dask_paired_evaluation(scores, labels, min_dist=0.5, n_jobs=None, warn=True, variance=None, progress=False):
    import dask

    from .._paired import _CHEAP_VARIANCE_SAMPLES, PairedEvaluation
    from .._validation import check_bool

    scores, labels, min_dist = _paired_inputs(scores, labels, min_dist)
    n = labels.shape[0]
    with_variance = n <= _CHEAP_VARIANCE_SAMPLES if variance is None else check_bool(variance, "variance")
    warn = check_bool(warn, "warn")
    progress = check_bool(progress, "progress")
    totals, per_block, label_range = _paired_graph(scores, labels, min_dist, with_variance, n_jobs)
    if with_variance:
        totals, per_block = dask.persist(totals, per_block)
    (rankable, correct, tied, incorrect), = _compute(totals, progress=progress)
    if rankable == 0 and warn:
        warnings.warn("no pair of labels is min_dist apart: nothing is rankable, auc is nan", RuntimeWarning, stacklevel=3)
    var = None
    if with_variance:
        var = math.nan
        if rankable:
            auc = (correct + 0.5 * tied) / rankable
            var = float(_variance_sums(labels, label_range, (auc,), per_block)[1]) / float(rankable) ** 2
    return PairedEvaluation(rankable, correct, tied, incorrect, min_dist, var)


def _dask_compare_paired(scores_a, scores_b, labels, min_dist=0.5, n_jobs=None, progress=False):
    import dask

    from .._paired import _comparison
    from .._validation import check_bool

    progress = check_bool(progress, "progress")
    a_scores, labels_a, min_dist = _paired_inputs(scores_a, labels, min_dist, "scores_a")
    b_scores, labels_b, _ = _paired_inputs(scores_b, labels, min_dist, "scores_b")
    # one row chunking for all three, so that per-block counts of both models line up
    a_scores, b_scores, labels = _align_rows([a_scores, b_scores, labels_b], ["scores_a", "scores_b", "labels"])
    totals_a, blocks_a, label_range = _paired_graph(a_scores, labels, min_dist, True, n_jobs, "scores_a")
    totals_b, blocks_b, _ = _paired_graph(b_scores, labels, min_dist, True, n_jobs, "scores_b")
    # Keep the per-sample counts on the workers while the totals give the AUCs.
    totals_a, totals_b, blocks_a, blocks_b = dask.persist(totals_a, totals_b, blocks_a, blocks_b)
    counts = _compute(totals_a, totals_b, progress=progress)
    n_rankable = counts[0][0]
    sums = None
    if n_rankable:
        aucs = tuple((c[1] + 0.5 * c[2]) / n_rankable for c in counts)
        sums = _variance_sums(labels, label_range, aucs, blocks_a, blocks_b)
    return _comparison(counts[0], counts[1], min_dist, a_scores.shape[0], sums, stacklevel=4)


# --------------------------------------------------------------------------- 2 vs 2


def _tvt_check_block(y, p, metric, dtype):
    """Per row block: non-finite reports, rows the metric rejects, largest magnitudes, column sums."""
    report = {"finite": (_first_nonfinite(y), _first_nonfinite(p))}
    if report["finite"][0][0] or report["finite"][1][0]:
        return report
    y = np.asarray(y, dtype=dtype)
    p = np.asarray(p, dtype=dtype)
    bad = []
    for x in (y, p):
        if metric == "cosine":
            rows = np.flatnonzero(~np.any(x != 0, axis=1))
        elif metric == "correlation":
            rows = np.flatnonzero(np.all(x == x[:, :1], axis=1))
        else:
            rows = np.empty(0, np.intp)
        bad.append(rows)
    report["bad"] = bad
    report["big"] = (float(np.max(np.abs(y))) if y.size else 0.0, float(np.max(np.abs(p))) if p.size else 0.0)
    return report


def _tvt_scaled_sum(y, shift):
    """Column sums of the target rows scaled by 2**shift (exact scaling), for the Euclidean centre."""
    return np.ldexp(np.asarray(y, dtype=np.float64), shift).sum(axis=0)


def _tvt_validate(reports, offsets, d, metric, dtype):
    """Raise the errors of the in-memory call, in its order, from the per-block reports."""
    from .._two_vs_two import _row_list

    for which, name in enumerate(("y_true", "y_pred")):
        _raise_nonfinite([r["finite"][which] for r in reports], name, offsets, row_width=d)
    finfo = np.finfo(dtype)
    for which, name in enumerate(("y_true", "y_pred")):
        rows = np.concatenate([r["bad"][which] + offsets[k] for k, r in enumerate(reports)])
        if metric == "cosine":
            if rows.size:
                raise ValueError(
                    f"{name} has all-zero rows {_row_list(rows)}: the cosine distance to a zero vector is undefined")
            continue
        if metric == "correlation":
            if rows.size:
                raise ValueError(
                    f"{name} has constant rows {_row_list(rows)}: the correlation distance to a constant vector is undefined")
            limit = float(finfo.max) / (4.0 * d)
        else:
            limit = math.sqrt(float(finfo.max) / (64.0 * d))
        big = max(r["big"][which] for r in reports)
        if big > limit:
            raise ValueError(
                f"{name} has values up to {big:.3g}, too large for the {metric} metric in {np.dtype(dtype)} "
                f"(limit {limit:.3g}); rescale the data or pass float64")


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
    counts = _core._two_vs_two_all(y, p, gy, gp, metric, rtol, skip_same, n_threads, None, None, None,
                                   split=0 if diagonal else ni, centre=centre, max_abs=max_abs)
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
    return tuple(_sum_arrays(*[t[i] for t in triples]) for i in range(3))


# 2 vs 2: the largest row block (bytes of one of y_true, y_pred); a tile holds two blocks of each.
TILE_BLOCK_BYTES = 64 << 20


def _tvt_block_rows(n, d, itemsize):
    """Rows per block: B = sqrt(32 threads) blocks make about 16 tiles per thread of the
    cluster (B (B + 1) / 2 tiles: every thread busy to the end, each tile a large product,
    few tasks), at most TILE_BLOCK_BYTES."""
    rows = math.ceil(n / math.ceil(math.sqrt(32 * _cluster_threads())))
    return max(1, min(rows, TILE_BLOCK_BYTES // (d * itemsize)))


def _tvt_prepare(y_true, y_pred, metric, ties, rtol, n_jobs):
    """Validated, row-aligned dask arrays and the resolved options (one pass over the data)."""
    from .._two_vs_two import METRICS, TIES
    from .._validation import check_choice

    metric = check_choice(metric, "metric", METRICS)
    y = _to_dask_array(y_true, "y_true")
    p = _to_dask_array(y_pred, "y_pred")
    for x, name in ((y, "y_true"), (p, "y_pred")):
        if x.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {x.shape}")
        if x.shape[0] < 2:
            raise ValueError(f"{name} needs at least 2 rows, got {x.shape[0]}")
        if x.shape[1] < 1:
            raise ValueError(f"{name} needs at least 1 columns, got {x.shape[1]}")
    if y.shape != p.shape:
        raise ValueError(f"y_true and y_pred must have the same shape, got {y.shape} and {p.shape}")
    y, p = _align_rows([y, p], ["y_true", "y_pred"])
    dtype = np.float32 if (y.dtype == np.float32 and p.dtype == np.float32) else np.float64
    rows = _tvt_block_rows(y.shape[0], y.shape[1], np.dtype(dtype).itemsize)
    if len(y.chunks[0]) != math.ceil(y.shape[0] / rows) or max(y.chunks[0]) > rows:
        y, p = y.rechunk({0: rows, 1: -1}), p.rechunk({0: rows, 1: -1})
    ties = check_choice(ties, "ties", TIES)
    n_threads = 1 if n_jobs is None else _resolve_threads(n_jobs)
    return y, p, metric, ties, dtype, n_threads


def _tvt_setup(y, p, metric, dtype, rtol):
    """Validate on the cluster; returns (rtol, reference, row offsets, blocks).

    The reference (mean scaled target row, largest |coordinate|) makes every
    tile prepare its rows as the in-memory call prepares the whole.
    """
    from dask import delayed

    from .._two_vs_two import _resolve_rtol

    n, d = y.shape
    blocks_y, blocks_p = y.to_delayed().ravel(), p.to_delayed().ravel()
    offsets = _offsets(y.chunks[0])
    reports = _compute(*[delayed(_tvt_check_block, pure=True)(a, b, metric, dtype) for a, b in zip(blocks_y, blocks_p)])
    _tvt_validate(reports, offsets, d, metric, dtype)
    rtol = _resolve_rtol(rtol, dtype, d)
    reference = (None, -1.0)
    if metric in ("euclidean", "sqeuclidean"):
        # the shift of euclidean::power_of_two_shift: the largest coordinate in [1, 2)
        max_abs = max(max(r["big"]) for r in reports)
        shift = -(math.frexp(max_abs)[1] - 1) if max_abs > 0 and math.isfinite(max_abs) else 0
        sums = _compute(*[delayed(_tvt_scaled_sum, pure=True)(b, shift) for b in blocks_y])
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
            tiles[i, j] = delayed(_tvt_tile, nout=3, pure=True)(*args, dtype, metric, rtol, skip_same, n_threads,
                                                                 reference)
    totals = _tree(_tvt_totals, [t[0] for t in tiles.values()])
    if not per_sample:
        return totals, None
    per_block = []
    for b in range(n_blocks):
        parts = [t[1] if i == b else t[2] for (i, j), t in tiles.items() if b in (i, j)]
        per_block.append(_tree(_tvt_sum_triples, parts))
    return totals, per_block


def _tvt_result(n, totals, sample_passed, sample_tied, same, ties, metric, pairs, rtol, first=None, second=None):
    """A TwoVsTwoResult from reduced counts, as the in-memory call builds it."""
    from .._two_vs_two import TwoVsTwoResult, _score, _tie_credit

    passed, tied, skipped = (int(v) for v in totals)
    if first is None:
        n_pairs = n * (n - 1) // 2 - skipped
        sample_pairs = np.full(n, n - 1, dtype=np.int64) - same
    else:
        n_pairs = first.size - skipped
        sample_pairs = np.bincount(first, minlength=n) + np.bincount(second, minlength=n)
    n_passed, n_total = _score(passed, tied, n_pairs, ties)
    accuracy = n_passed / n_total if n_total else math.nan
    credit = _tie_credit(ties)
    s_total = sample_pairs - (sample_tied if ties == "exclude" else 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sample_accuracy = np.where(s_total > 0, (sample_passed + credit * sample_tied) / np.maximum(s_total, 1), np.nan)
    standard_error = None
    if first is not None:
        standard_error = math.nan
        if n_total > 1:
            counted_ties = 0 if ties == "exclude" else tied
            mean_sq = (passed + credit**2 * counted_ties) / n_total
            var = max(mean_sq - accuracy**2, 0.0) * n_total / (n_total - 1)
            fpc = 1.0 - first.size / (n * (n - 1) // 2)
            standard_error = math.sqrt(var / n_total * fpc)
    if ties != "half":
        n_passed = int(n_passed)
    return TwoVsTwoResult(
        n_passed=n_passed, n_total=int(n_total), accuracy=float(accuracy), n_strict_passed=passed, n_tied=tied,
        n_pairs=int(n_pairs), standard_error=standard_error, sample_accuracy=sample_accuracy, metric=metric,
        ties=ties, pairs=pairs, rtol=rtol,
    )


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

    n = offsets[-1]
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
    del n
    return tasks, rows


def _dask_two_vs_two(y_true, y_pred, metric="cosine", ties="fail", pairs="all", rng=None, n_jobs=None,
                     progress=False, rtol=None):
    from .._two_vs_two import _resolve_pairs, _sample_pairs
    from .._validation import check_progress, check_rng

    generator = check_rng(rng)
    progress = check_progress(progress)
    y, p, metric, ties, dtype, n_threads = _tvt_prepare(y_true, y_pred, metric, ties, rtol, n_jobs)
    n = y.shape[0]
    pairs = _resolve_pairs(pairs, n)
    rtol, reference, offsets, blocks_y, blocks_p = _tvt_setup(y, p, metric, dtype, rtol)
    skip_same = pairs == "distinct_targets"
    if isinstance(pairs, int):
        first, second = _sample_pairs(n, pairs, generator)
        return _tvt_sampled_result(blocks_y, blocks_p, offsets, first, second, dtype, metric, rtol, n_threads,
                                   ties, pairs, progress)
    totals, per_block = _tvt_graph(blocks_y, blocks_p, dtype, metric, rtol, skip_same, n_threads, reference)
    totals, *per_block = _compute(totals, *per_block, progress=progress)
    sample_passed, sample_tied, same = (np.concatenate([b[i] for b in per_block]) for i in range(3))
    return _tvt_result(n, totals, sample_passed, sample_tied, same, ties, metric, pairs, rtol)


def _tvt_sampled_result(blocks_y, blocks_p, offsets, first, second, dtype, metric, rtol, n_threads, ties, pairs,
                        progress, counts_only=False):
    n = int(offsets[-1])
    tasks, rows = _tvt_sampled(blocks_y, blocks_p, offsets, first, second, dtype, metric, rtol, False, n_threads)
    results = _compute(*tasks, progress=progress)
    totals = _tvt_totals(*[r[0] for r in results])
    if counts_only:
        return totals
    sample_passed = np.zeros(n, np.int64)
    sample_tied = np.zeros(n, np.int64)
    for (_, sp, st), local_rows in zip(results, rows):
        np.add.at(sample_passed, local_rows, sp)
        np.add.at(sample_tied, local_rows, st)
    return _tvt_result(n, totals, sample_passed, sample_tied, 0, ties, metric, pairs, rtol, first, second)


def _dask_two_vs_two_permutation_test(y_true, y_pred, n_permutations=None, n_resamples=None, alternative="greater",
                                      rng=None, metric="cosine", ties="fail", pairs="all", n_jobs=None,
                                      progress=False, rtol=None):
    from .._two_vs_two import (
        ALTERNATIVES,
        TwoVsTwoPermutationResult,
        _exact_score,
        _resolve_pairs,
        _resolve_resamples,
        _sample_pairs,
    )
    from .._validation import check_choice, check_progress, check_rng

    n_permutations = _resolve_resamples(n_permutations, n_resamples)
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    progress = check_progress(progress)
    generator = check_rng(rng)
    y, p, metric, ties, dtype, n_threads = _tvt_prepare(y_true, y_pred, metric, ties, rtol, n_jobs)
    n = y.shape[0]
    pairs = _resolve_pairs(pairs, n)
    rtol, reference, offsets, blocks_y, blocks_p = _tvt_setup(y, p, metric, dtype, rtol)
    skip_same = pairs == "distinct_targets"
    first = second = None
    if isinstance(pairs, int):
        first, second = _sample_pairs(n, pairs, generator)
        observed = _tvt_sampled_result(blocks_y, blocks_p, offsets, first, second, dtype, metric, rtol, n_threads,
                                       ties, pairs, False)
    else:
        totals, per_block = _tvt_graph(blocks_y, blocks_p, dtype, metric, rtol, skip_same, n_threads, reference)
        totals, *per_block = _compute(totals, *per_block)
        sample_passed, sample_tied, same = (np.concatenate([b[i] for b in per_block]) for i in range(3))
        observed = _tvt_result(n, totals, sample_passed, sample_tied, same, ties, metric, pairs, rtol)
    # The permutations of the in-memory call, drawn in the same order from the same generator.
    perms = [generator.permutation(n) for _ in range(n_permutations)]
    rows = y.chunks[0]
    null_totals = []
    for perm in perms:
        # y_i is paired with p_perm[i]: the prediction rows are permuted on the cluster.
        permuted = p[perm].rechunk({0: rows, 1: -1})
        blocks_q = permuted.to_delayed().ravel()
        if first is None:
            totals, _ = _tvt_graph(blocks_y, blocks_q, dtype, metric, rtol, skip_same, n_threads, reference,
                                   per_sample=False)
            null_totals.append(totals)
        else:
            tasks, _ = _tvt_sampled(blocks_y, blocks_q, offsets, first, second, dtype, metric, rtol, False, n_threads)
            null_totals.append(_tree(_tvt_totals, [t[0] for t in tasks]))
    null_totals = _compute(*null_totals, progress=progress)
    n_pairs = observed.n_pairs
    null = np.empty(n_permutations)
    at_least = at_most = 0
    obs_num2, obs_den = _exact_score(observed.n_strict_passed, observed.n_tied, n_pairs, ties)
    for r, (passed, tied, _) in enumerate(null_totals):
        num2, den = _exact_score(int(passed), int(tied), n_pairs, ties)
        null[r] = num2 / (2 * den) if den else math.nan
        if den and obs_den:
            at_least += num2 * obs_den >= obs_num2 * den
            at_most += num2 * obs_den <= obs_num2 * den
    p_greater = (1 + at_least) / (1 + n_permutations)
    p_less = (1 + at_most) / (1 + n_permutations)
    pvalue = {"greater": p_greater, "less": p_less, "two-sided": min(1.0, 2 * min(p_greater, p_less))}[alternative]
    return TwoVsTwoPermutationResult(statistic=observed.accuracy, pvalue=pvalue, null_distribution=null,
                                     n_permutations=n_permutations, observed=observed, alternative=alternative)


# --------------------------------------------------------------------------- classic measures


def _measure_pair(y_true, y_pred):
    """Row-aligned dask arrays of one shape, with the in-memory rules ((n,) against (n, 1) allowed)."""
    yt = _to_dask_array(y_true, "y_true")
    yp = _to_dask_array(y_pred, "y_pred")
    for x, name in ((yt, "y_true"), (yp, "y_pred")):
        if x.ndim not in (1, 2):
            raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, t), got shape {x.shape}")
        if x.size == 0:
            raise ValueError(f"{name} is empty (shape {x.shape}); the measures need at least one example and target")
    if yt.shape != yp.shape:
        if yt.ndim != yp.ndim and yt.shape[0] == yp.shape[0] and yt.size == yp.size == yt.shape[0]:
            yt, yp = yt.reshape(-1), yp.reshape(-1)
        else:
            raise ValueError(f"y_true and y_pred must have the same shape, got {yt.shape} and {yp.shape}")
    return _align_rows([yt, yp], ["y_true", "y_pred"])


_MEASURES = {"zero_one": "zero_one_error", "absolute": "absolute_error", "squares": "sum_squares_error",
             "worst_case": "worst_case_error"}


def _measure_block(measure, yt, yp):
    """The in-memory measure of one row block, per target column (sums, or maxima for the worst case)."""
    from .. import _measures

    return getattr(_measures, _MEASURES[measure])(yt, yp, per_target=True)


def _measure_combine(measure, *values):
    return np.maximum.reduce(values) if measure == "worst_case" else _sum_arrays(*values)


def _measure_dask(y_true, y_pred, per_target, measure):
    """(n, per-target values or their total as a length-1 array) of one measure, block by block."""
    from dask import delayed

    from .._validation import check_bool

    yt, yp = _measure_pair(y_true, y_pred)
    per_target = check_bool(per_target, "per_target")
    parts = [delayed(_measure_block, pure=True)(measure, a, b)
             for a, b in zip(yt.to_delayed().ravel(), yp.to_delayed().ravel())]  # fmt: skip
    (values,) = _compute(_tree(functools.partial(_measure_combine, measure), parts))
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if not per_target:
        values = np.array([values.max() if measure == "worst_case" else values.sum()])
    return yt.shape[0], values


def _dask_zero_one_error(y_true, y_pred, average=False, per_target=False):
    from .._measures import _divide, _output

    n, wrong = _measure_dask(y_true, y_pred, per_target, "zero_one")
    return _output(_divide(wrong, n, average), per_target)


def _dask_absolute_error(y_true, y_pred, average=False, per_target=False):
    from .._measures import _divide, _output

    n, values = _measure_dask(y_true, y_pred, per_target, "absolute")
    return _output(_divide(values, n, average), per_target)


def _dask_sum_squares_error(y_true, y_pred, average=False, per_target=False):
    from .._measures import _divide, _output

    n, values = _measure_dask(y_true, y_pred, per_target, "squares")
    return _output(_divide(values, n, average), per_target)


def _dask_rms_error(y_true, y_pred, per_target=False):
    from .._measures import _output

    n, values = _measure_dask(y_true, y_pred, per_target, "squares")
    return _output(np.sqrt(values / n), per_target)


def _dask_worst_case_error(y_true, y_pred, per_target=False):
    from .._measures import _output

    _, values = _measure_dask(y_true, y_pred, per_target, "worst_case")
    return _output(values, per_target)


def _log_likelihood_block(yt, yp, eps):
    from .._measures import _log_likelihood

    return _log_likelihood(yt, yp, True, eps)[1]


def _log_likelihood_dask(y_true, y_pred, per_target, eps):
    from dask import delayed

    from .._measures import _check_eps
    from .._validation import check_bool

    yt, yp = _measure_pair(y_true, y_pred)
    per_target = check_bool(per_target, "per_target")
    _check_eps(eps)
    parts = [delayed(_log_likelihood_block, pure=True)(a, b, eps)
             for a, b in zip(yt.to_delayed().ravel(), yp.to_delayed().ravel())]  # fmt: skip
    (ll,) = _compute(_tree(_sum_arrays, parts))
    if not per_target:
        ll = np.array([ll.sum()])
    return yt.shape[0], ll


def _dask_likelihood(y_true, y_pred, per_target=False, eps=None):
    from .._measures import Likelihood, _output

    _, ll = _log_likelihood_dask(y_true, y_pred, per_target, eps)
    ll = _output(ll, per_target)
    return Likelihood(value=np.exp(ll), log=ll)


def _dask_log_likelihood(y_true, y_pred, average=False, per_target=False, eps=None, base=None):
    from .._measures import _divide, _log_base, _output

    scale = _log_base(base)
    n, ll = _log_likelihood_dask(y_true, y_pred, per_target, eps)
    return _output(_divide(ll / scale, n, average), per_target)


def _dask_log_loss(y_true, y_pred, per_target=False, eps=None, base=None):
    from .._measures import _log_base, _output

    scale = _log_base(base)
    n, ll = _log_likelihood_dask(y_true, y_pred, per_target, eps)
    return _output(-ll / (scale * n) + 0.0, per_target)


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
    return _ordered(np.asarray(block, dtype=np.float64).reshape(block.shape[0], -1))


def _constant_scan(block, binary):
    """Per block: the non-finite report, the non-binary report (count, first flat index,
    value) when `binary`, and per-column (sums, minimum keys, maximum keys)."""
    report, bad = _first_nonfinite(block), (0, -1, None)
    if binary and block.dtype.kind != "b":
        flags = ~((block == 0) | (block == 1)).ravel()
        if flags.any():
            first = int(np.argmax(flags))
            bad = int(np.count_nonzero(flags)), first, block.ravel()[first].item()
    if report[0] or not block.shape[0]:
        return report, bad, None
    keys = _column_keys(block)
    sums = np.asarray(block, dtype=np.float64).reshape(block.shape[0], -1).sum(axis=0)
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


def _select(blocks, rank, low, high):
    """Per column, the value of 0-based `rank` among the column's values, exactly, given
    the columns' smallest and largest keys: the key bracket [low, high] narrows by a
    histogram pass until few values are left in it, which are then gathered."""
    from dask import delayed

    low, high = low.copy(), high.copy()
    below = np.zeros(low.size, dtype=np.int64)  # values under the bracket
    inside = np.full(low.size, np.iinfo(np.int64).max)
    while ((inside > SELECT_GATHER) & (high > low)).any():
        width = (high.view(np.uint64) - low.view(np.uint64)) // np.uint64(SELECT_BINS) + np.uint64(1)
        parts = [delayed(_select_histogram, pure=True)(b, low, high, width) for b in blocks]
        (counts,) = _compute(_tree(_sum_arrays, parts))
        cumulative = np.cumsum(counts, axis=1)
        for j in range(low.size):
            b = int(np.searchsorted(cumulative[j], rank - below[j], side="right"))
            below[j] += cumulative[j, b - 1] if b else 0
            start = int(low[j]) + b * int(width[j])
            low[j], high[j] = start, min(start + int(width[j]) - 1, int(high[j]))
            inside[j] = counts[j, b]
    values = _unordered(low.copy())  # a bracket of one key: every value in it is that value
    wide = np.flatnonzero(high > low)
    if wide.size:
        gathered = _compute(*[delayed(_select_gather, pure=True)(b, low, high) for b in blocks])
        for j in wide:
            keys = np.sort(np.concatenate([g[j] for g in gathered]))
            values[j] = _unordered(keys[rank - below[j] : rank - below[j] + 1])[0]
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


def _modes(blocks, n, n_cols):
    """Per column, the most frequent value (the smallest of equally frequent ones)."""
    from dask import delayed

    n_groups = max(_cluster_threads(), math.ceil(n / MODE_GROUP_SAMPLES))
    splits = [delayed(_mode_split, pure=True)(b, n_groups) for b in blocks]
    best = _compute(*[delayed(_mode_group, pure=True)(j, g, *splits) for j in range(n_cols) for g in range(n_groups)])
    modes = np.empty(n_cols)
    for j in range(n_cols):
        count, key = max(best[j * n_groups : (j + 1) * n_groups], key=lambda r: (r[0], -r[1]))
        modes[j] = _unordered(np.array([key], dtype=np.int64))[0]
    return modes


def _dask_best_constant(y, loss):
    from dask import delayed

    from .._measures import LOSSES, BestConstant
    from .._validation import check_choice

    loss = check_choice(loss, "loss", LOSSES)
    arr = _to_dask_array(y, "y")
    if arr.ndim not in (1, 2):
        raise ValueError(f"y must be 1-D (n,) or 2-D (n, t), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"y is empty (shape {arr.shape}); the measures need at least one example and target")
    if arr.ndim == 2:
        arr = arr.rechunk({1: -1})
    blocks = arr.to_delayed().ravel()
    offsets = _offsets(arr.chunks[0])
    row_width = 1 if arr.ndim == 1 else arr.shape[1]
    scans = _compute(*[delayed(_constant_scan, pure=True)(b, loss == "log_loss") for b in blocks])
    _raise_nonfinite([r[0] for r in scans], "y", offsets, row_width)
    bad = [r[1] for r in scans]
    if any(b[0] for b in bad):
        k = next(i for i, b in enumerate(bad) if b[0])
        flat = offsets[k] * row_width + bad[k][1]
        index = flat if arr.ndim == 1 else divmod(flat, row_width)
        raise ValueError(f"y must hold only 0 and 1, found {bad[k][2]!r} at index {index} "
                         f"({sum(b[0] for b in bad)} such entries)")  # fmt: skip
    stats = [r[2] for r in scans if r[2] is not None]
    n, n_cols = arr.shape[0], row_width
    low = np.minimum.reduce([s[1] for s in stats])
    high = np.maximum.reduce([s[2] for s in stats])
    if loss == "zero_one":
        value = _modes(blocks, n, n_cols)
    elif loss == "absolute":  # the median; the midpoint of the two middle values for even n
        value = _select(blocks, (n - 1) // 2, low, high)
        if n % 2 == 0:
            value = (value + _select(blocks, n // 2, low, high)) / 2
    elif loss == "worst_case":
        value = (_unordered(low.copy()) + _unordered(high.copy())) / 2
    else:
        value = _sum_arrays(*[s[0] for s in stats]) / n
    constant = _da().broadcast_to(value if arr.ndim == 2 else value[0], arr.shape, chunks=arr.chunks)
    measure = {"zero_one": _dask_zero_one_error, "absolute": _dask_absolute_error,
               "squares": _dask_sum_squares_error, "worst_case": _dask_worst_case_error,
               "log_loss": _dask_log_loss}[loss]  # fmt: skip
    error = np.atleast_1d(np.asarray(measure(arr, constant, per_target=True), dtype=np.float64))
    if arr.ndim == 1:
        return BestConstant(value=np.float64(value[0]), error=np.float64(error[0]), loss=loss)
    return BestConstant(value=value, error=error, loss=loss)


# --------------------------------------------------------------------------- multi-label counts


def _multilabel_block(t, p):
    from .._multilabel import _counts_dense, _dense_binary

    t = _dense_binary(t, "y_true")
    p = _dense_binary(p, "y_pred")
    return _counts_dense(t, p)


def _multilabel_combine(*blocks):
    labels = tuple(_sum_arrays(*[b[0][i] for b in blocks]) for i in range(3))
    samples = tuple(np.concatenate([b[1][i] for b in blocks]) for i in range(3))
    return labels, samples


def _dask_multilabel_counts(y_true, y_pred, false_pos=1.0, false_neg=1.0):
    from dask import delayed

    from .._multilabel import _result_from_counts
    from .._validation import check_nonnegative_finite

    fp_penalty = check_nonnegative_finite(false_pos, "false_pos")
    fn_penalty = check_nonnegative_finite(false_neg, "false_neg")
    t = _to_dask_array(y_true, "y_true")
    p = _to_dask_array(y_pred, "y_pred")
    for x, name in ((t, "y_true"), (p, "y_pred")):
        if x.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {x.shape}")
    if t.shape != p.shape:
        raise ValueError(f"y_true and y_pred must have the same shape, got {t.shape} and {p.shape}")
    n_samples, n_labels = t.shape
    if n_samples == 0 or n_labels == 0:
        raise ValueError(f"y_true is empty (shape {t.shape}); need at least one sample and one label")
    t, p = _align_rows([t, p], ["y_true", "y_pred"])
    parts = [delayed(_multilabel_block, pure=True)(a, b) for a, b in zip(t.to_delayed().ravel(), p.to_delayed().ravel())]
    # Per-sample counts are part of the result (n values each); blocks keep their order.
    (counts,) = _compute(_tree(_multilabel_combine, parts))
    labels, samples = counts
    return _result_from_counts(labels, samples, n_samples, n_labels, fp_penalty, fn_penalty)


# --------------------------------------------------------------------------- cross-match resampling


def _cm_sample(x, name):
    x = _to_dask_array(x, name)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {x.shape}")
    if x.shape[0] < 1:
        raise ValueError(f"{name} needs at least 1 rows, got {x.shape[0]}")
    if x.shape[1] < 1:
        raise ValueError(f"{name} needs at least 1 columns, got {x.shape[1]}")
    return x.rechunk({1: -1})


def _cm_report(block):
    return _first_nonfinite(block)


def _cm_repeat(xs, ys, dtype, metric, k, metric_kwargs):
    """a1 of the cross-match test on one subsample (rows of x, then rows of y), by the in-memory solver."""
    from .. import _core
    from .._matching import _pairwise_distances
    from .._metric_transforms import matching_equivalent

    points = np.concatenate([np.asarray(xs, dtype=dtype), np.asarray(ys, dtype=dtype)])
    z = np.repeat(np.array([0, 1], dtype=np.int8), [xs.shape[0], ys.shape[0]])
    points, metric, metric_kwargs = matching_equivalent(points, metric, metric_kwargs, "a subsample of x then y")
    D = _pairwise_distances(points, metric, **metric_kwargs)
    return int(_core._crossmatch_stack(np.ascontiguousarray(D[None], dtype=np.float64), z, k, 1, None)[0])


def _dask_crossmatch_resample(x, y, sample_size=200, n_resamples=500, rng=None, n_jobs=None, alternative="less",
                              metric="euclidean", k=None, progress=False, n_repeats=None,
                              max_matrix_bytes=_DEFAULT_MATRIX_BYTES, metric_kwargs=None):
    from dask import delayed

    from .._crossmatch import CrossMatchResampleResult, _approx_pvalue, _moments, _pvalue_table, _resample_options
    from .._validation import check_progress, check_rng

    metric_kwargs = metric_kwargs or {}
    alternative, n_resamples, sample_size, k, _ = _resample_options(
        metric, metric_kwargs, alternative, n_resamples, n_repeats, sample_size, k, max_matrix_bytes
    )
    if n_jobs is not None:
        _resolve_threads(n_jobs)
    progress = check_progress(progress)
    gen = check_rng(rng)
    X = _cm_sample(x, "x")
    Y = _cm_sample(y, "y")
    for arr, name in ((X, "x"), (Y, "y")):
        reports = _compute(*[delayed(_cm_report, pure=True)(b) for b in arr.to_delayed().ravel()])
        _raise_nonfinite(list(reports), name, _offsets(arr.chunks[0]), row_width=arr.shape[1])
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"x and y must have the same dimensionality, got {X.shape[1]} and {Y.shape[1]} columns")
    n, m = X.shape[0], Y.shape[0]
    dtype = np.result_type(X.dtype, Y.dtype, np.float32) if X.dtype.kind == Y.dtype.kind == "f" else np.float64
    if sample_size > min(n, m):
        raise ValueError(f"sample_size must be <= min(len(x), len(y)) = {min(n, m)}, got {sample_size}")
    tasks = []
    for _ in range(n_resamples):  # the draws of the in-memory call, in its order
        ix = np.sort(gen.choice(n, sample_size, replace=False))
        iy = np.sort(gen.choice(m, sample_size, replace=False))
        xs = X[ix].rechunk({0: -1}).to_delayed().ravel()[0]
        ys = Y[iy].rechunk({0: -1}).to_delayed().ravel()[0]
        tasks.append(delayed(_cm_repeat, pure=True)(xs, ys, dtype, metric, k, metric_kwargs))
    a1 = np.array(_compute(*tasks, progress=progress), dtype=np.int64)
    N = 2 * sample_size
    support, table = _pvalue_table(N, sample_size, alternative)
    pval = table[np.searchsorted(support, a1)]
    ea1, va1 = _moments(N, sample_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = _approx_pvalue((a1 - ea1) / np.sqrt(va1), alternative)
    return CrossMatchResampleResult(
        mean_a1=float(a1.mean()), mean_pval=float(pval.mean()), Ea1=ea1, Va1=va1, sample_size=sample_size,
        n_repeats=n_resamples, a1=a1, pval=pval, approxpval=approx,
    )
