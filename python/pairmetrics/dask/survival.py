"""``concordance_index`` (lifelines) and ``concordance_index_censored`` (scikit-survival) on Dask collections.

The same checks and results as in memory (the seams of
:mod:`pairmetrics._survival`), from pair counts computed on the cluster; the
counts are exact. The rows are cut by ranges of time into partitions (equal
times share one, from bounds placed on a sample of the times). The C++
kernel counts the comparable pairs inside each partition; a pair between
partitions p < q is comparable exactly when its earlier sample (in p) is an
event, so those pairs are counted from the sorted estimates of p's events and
of all of q's samples, one task per pair of partitions (with a tie tolerance
the comparison ``|e_j - e_i| <= tied_tol`` is evaluated in double precision,
as the kernel does). What reaches the client: per block a few counts and a
sample of times, per partition four counts.
"""

from __future__ import annotations

import numpy as np

from .. import _survival as sv
from .._routing import register
from .._validation import check_same_length, vector_shape
from ._blocks import first_report
from ._helpers import (
    align_rows,
    compute,
    first_nonfinite,
    key_bounds,
    offsets,
    partition_count,
    partition_data,
    sample_rows,
    split_by_key,
    to_dask_array,
)

__all__: list[str] = []


def _summary(times, events, scores, n_parts, n_blocks, seed):
    """Per block: non-finite reports of times and scores, NaN in float event flags, the number of
    events, (latest time, samples at it, events at it), largest |integer| of times and scores, a
    sample of times, NaN in times and scores."""
    flags = np.ones(times.shape[0], bool) if events is None else np.asarray(events) != 0
    events_nan = events is not None and events.dtype.kind == "f" and bool(np.isnan(events).any())
    reports = first_nonfinite(times), first_nonfinite(scores)
    nan = [x.dtype.kind == "f" and bool(np.isnan(x).any()) for x in (times, scores)]
    latest = None
    if times.size and not reports[0][0]:
        top = times.max()
        at_top = times == top
        latest = float(top), int(np.count_nonzero(at_top)), int(np.count_nonzero(flags[at_top]))
    big = [max(abs(int(x.max())), abs(int(x.min()))) if x.dtype.kind in "iu" and x.size else 0 for x in (times, scores)]
    take = sample_rows(times, n_parts, n_blocks, seed)
    sample = np.asarray(times[take], dtype=np.float64)
    return reports, events_nan, int(np.count_nonzero(flags)), latest, big, sample, nan


def _pair_counts_partition(tied_tol, *pieces):
    """(below, tied, above, tied_time) inside one time partition; sorted estimates of its events and of all."""
    from .. import _core

    _, times, payload = partition_data(pieces)
    events = (payload[:, 0] != 0).view(np.uint8)
    scores = np.ascontiguousarray(payload[:, 1])
    counts: tuple[int, ...] = (0, 0, 0, 0)
    if times.size >= 2:
        kernel = _core.concordance_counts(np.ascontiguousarray(times, dtype=np.float64), events, scores, tied_tol)
        counts = tuple(int(kernel[k]) for k in ("below", "tied", "above", "tied_time"))
    return counts, np.sort(scores[events == 1]), np.sort(scores)


def _count_difference(values, e, c, strict):
    """Per e: how many of the sorted values v have fl(v - e) < c (or <= c), as the kernel rounds."""
    u, first = np.unique(values, return_index=True)
    cum = np.append(first, values.size)  # values below u[i]: first[i]

    def holds(i):
        d = u[i] - e_sel
        return d < c if strict else d <= c

    idx = np.searchsorted(u, e + c, side="left" if strict else "right")
    for step in (-1, 1):  # fl(v - e) is nondecreasing in v: step to the first v where it fails
        active = np.ones(e.size, bool)
        while True:
            probe = idx + min(step, 0)
            active &= (idx > 0) if step < 0 else (idx < u.size)
            sel = np.flatnonzero(active)
            if not sel.size:
                break
            e_sel = e[sel]
            move = ~holds(probe[sel]) if step < 0 else holds(probe[sel])
            active[sel] = move
            idx[sel[move]] += step
    return cum[idx]


def _between(event_scores, later_scores, tied_tol):
    """(below, tied, above) over pairs (event of an earlier partition, sample of a later one)."""
    if not event_scores.size or not later_scores.size:
        return 0, 0, 0
    if tied_tol == 0:
        below = np.searchsorted(later_scores, event_scores, side="left")
        upto = np.searchsorted(later_scores, event_scores, side="right")
    else:
        below = _count_difference(later_scores, event_scores, -tied_tol, True)
        upto = _count_difference(later_scores, event_scores, tied_tol, False)
    below_total, tied_total = int(below.sum()), int((upto - below).sum())
    return below_total, tied_total, event_scores.size * later_scores.size - below_total - tied_total


def _pair_counts(times, events, scores, plan, n_parts, sampled_times):
    """The Dask counter: (below, tied, above, tied_time) over all comparable pairs, on the cluster."""
    import dask.array as da
    from dask import delayed

    bounds = key_bounds(sampled_times, n_parts)
    flags = da.ones(times.shape[0], dtype=np.float64, chunks=times.chunks) if events is None else events != 0
    payload = da.stack([flags.astype(np.float64), scores.astype(np.float64)], axis=1).rechunk({1: -1})
    pieces = split_by_key(times.astype(np.float64), payload, bounds)
    parts = [delayed(_pair_counts_partition, nout=3, pure=True)(plan.tied_tol, *p) for p in pieces]
    between = [
        delayed(_between, pure=True)(parts[p][1], parts[q][2], plan.tied_tol)
        for p in range(len(parts))
        for q in range(p + 1, len(parts))
    ]
    within, across = compute([p[0] for p in parts], between)
    totals = [sum(c[i] for c in within) for i in range(4)]
    for i in range(3):
        totals[i] += sum(c[i] for c in across)
    return sv.PairCounts(*totals)


def _summaries(times, events, scores):
    from dask import delayed

    n_parts = partition_count(times.shape[0])
    blocks = [times.to_delayed().ravel(), scores.to_delayed().ravel()]
    event_blocks = events.to_delayed().ravel() if events is not None else [None] * len(blocks[0])
    results = compute(
        *[
            delayed(_summary, pure=True)(t, e, s, n_parts, len(blocks[0]), k)
            for k, (t, e, s) in enumerate(zip(blocks[0], event_blocks, blocks[1]))
        ]
    )
    return n_parts, results


@register(sv.concordance_index)
def concordance_index(event_times, predicted_scores, event_observed=None):
    """:func:`pairmetrics.concordance_index` on Dask collections."""
    times = sv.lifelines_vector(to_dask_array(event_times, "event_times").astype(np.float64))
    scores = sv.lifelines_vector(to_dask_array(predicted_scores, "predicted_scores").astype(np.float64))
    sv.check_lifelines_shapes(times.shape, scores.shape)
    arrays, names = [times, scores], ["event_times", "predicted_scores"]
    if event_observed is not None:
        flags = to_dask_array(event_observed, "event_observed").ravel()
        sv.check_event_shape(flags.shape, times.shape)
        arrays.append(flags)
        names.append("event_observed")
    times, scores, *rest = align_rows(arrays, names)
    events = rest[0] if rest else None
    n_parts, results = _summaries(times, events, scores)
    facts = sv.LifelinesFacts(
        any(r[6][0] for r in results),
        any(r[6][1] for r in results),
        any(r[1] for r in results),
    )
    sampled_times = np.concatenate([r[5] for r in results])
    return sv.LIFELINES.run(lambda plan: _pair_counts(times, events, scores, plan, n_parts, sampled_times), facts)


@register(sv.concordance_index_censored)
def concordance_index_censored(event_indicator, event_time, estimate, tied_tol=1e-8):
    """:func:`pairmetrics.concordance_index_censored` on Dask collections."""
    events = sv.event_vector(to_dask_array(event_indicator, "event_indicator"))
    times = vector_shape(to_dask_array(event_time, "event_time"), "event_time")
    estimates = vector_shape(to_dask_array(estimate, "estimate"), "estimate")
    check_same_length(events, times, "event_indicator", "event_time")
    check_same_length(times, estimates, "event_time", "estimate")
    events, times, estimates = align_rows([events, times, estimates], ["event_indicator", "event_time", "estimate"])
    n_parts, results = _summaries(times, events, estimates)
    row_offsets = offsets(times.chunks[0])
    latest = [r[3] for r in results if r[3] is not None]
    top = max((t for t, _, _ in latest), default=None)
    facts = sv.SksurvFacts(
        events.dtype,
        times.shape[0],
        sum(r[2] for r in results),
        first_report([r[0][0] for r in results], row_offsets),
        first_report([r[0][1] for r in results], row_offsets),
        (times.dtype, max(r[4][0] for r in results)),
        (estimates.dtype, max(r[4][1] for r in results)),
        sum(c for t, c, _ in latest if t == top) == 1 and sum(e for t, _, e in latest if t == top) == 1,
    )
    sampled_times = np.concatenate([r[5] for r in results])
    return sv.SKSURV.run(
        lambda plan: _pair_counts(times, events, estimates, plan, n_parts, sampled_times), facts, tied_tol
    )
