"""Harrell's C (lifelines' definition) of a Spark DataFrame, exact, computed on the executors.

A pair (i, j) is admissible when ``i`` is an event and ``T_i < T_j`` (or ``T_i == T_j`` and ``j`` is
censored); it is correct when ``j``'s score is higher. The rows are cut twice, by time range and by score
range (bounds from ``approxQuantile``; equal values share a range). Pairs inside one time range: the
in-memory kernel, one task per range. Pairs across time ranges (``T_i < T_j`` for sure, admissible when
``i`` is an event): inside one score range, counted from the per-(score, time range) counts of the task;
across score ranges the order of the scores is known, so a (score range x time range) table of events and of
samples counts them on the driver. What reaches the driver: three counts per time range, three counts and two
rows of ``time ranges`` numbers per score range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._survival import LIFELINES, LifelinesFacts, PairCountPlan, PairCounts

_TIME, _EVENT, _SCORE = "__pairmetrics_time", "__pairmetrics_event", "__pairmetrics_score"
_TIME_RANGE, _SCORE_RANGE = "__pairmetrics_time_range", "__pairmetrics_score_range"


def _columns(batches: Iterator[Any], names: tuple[str, ...]) -> list[np.ndarray]:
    """The named columns of a task's Arrow batches, concatenated."""
    parts: list[list[np.ndarray]] = [[] for _ in names]
    for batch in batches:
        for k, name in enumerate(names):
            array = batch.column(batch.schema.names.index(name))
            if array.null_count:
                raise ValueError(f"the {name.replace('__pairmetrics_', '')} column contains nulls")
            parts[k].append(array.to_numpy(zero_copy_only=False))
    return [np.concatenate(p) if p else np.empty(0) for p in parts]


def _within_time_ranges(batches: Iterator[Any]) -> Iterator[Any]:
    """(below, tied, above) of the admissible pairs inside each time range of the task."""
    import pyarrow as pa

    from .. import _core

    ranges, times, events, scores = _columns(batches, (_TIME_RANGE, _TIME, _EVENT, _SCORE))
    totals = np.zeros(3, dtype=np.int64)
    for number in np.unique(ranges):
        rows = ranges == number
        if np.count_nonzero(rows) >= 2:
            counts = _core.concordance_counts(
                np.ascontiguousarray(times[rows], dtype=np.float64),
                np.ascontiguousarray(events[rows] != 0).view(np.uint8),
                np.ascontiguousarray(scores[rows], dtype=np.float64),
                0.0,
            )
            totals += np.array([int(counts[k]) for k in ("below", "tied", "above")], dtype=np.int64)
    yield pa.RecordBatch.from_arrays(
        [pa.array(totals[k : k + 1], pa.int64()) for k in range(3)], names=["below", "tied", "above"]
    )


def _across_time_ranges(n_time: int) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def count(batches: Iterator[Any]) -> Iterator[Any]:
        """Per score range of the task: (below, tied, above) of the pairs (event i, sample j in a later time
        range) inside it, and the counts of its events and samples per time range."""
        import pyarrow as pa

        score_ranges, time_ranges, events, scores = _columns(batches, (_SCORE_RANGE, _TIME_RANGE, _EVENT, _SCORE))
        out: list[list[Any]] = [[] for _ in range(6)]
        for number in np.unique(score_ranges):
            rows = score_ranges == number
            counts, by_event, by_all = _cross_counts(
                scores[rows], time_ranges[rows].astype(np.int64), events[rows] != 0, n_time
            )
            for k, value in enumerate([int(number), *counts, by_event.tolist(), by_all.tolist()]):
                out[k].append(value)
        types = [pa.int32(), pa.int64(), pa.int64(), pa.int64(), pa.list_(pa.int64()), pa.list_(pa.int64())]
        names = ["score_range", "below", "tied", "above", "events", "samples"]
        yield pa.RecordBatch.from_arrays([pa.array(v, t) for v, t in zip(out, types)], names=names)

    return count


def _cross_counts(
    scores: np.ndarray, time_ranges: np.ndarray, events: np.ndarray, n_time: int
) -> tuple[tuple[int, int, int], np.ndarray, np.ndarray]:
    """(below, tied, above) over pairs (event i, sample j) with j in a later time range than i, and the events
    and samples per time range."""
    distinct, index = np.unique(scores, return_inverse=True)
    cells = index.ravel() * n_time + time_ranges
    size = distinct.size * n_time
    every = np.bincount(cells, minlength=size).reshape(distinct.size, n_time)
    event = np.bincount(cells[events], minlength=size).reshape(distinct.size, n_time)
    # samples in a later time range than p, at each score: later[u, p] = sum over p' > p of every[u, p']
    later = np.cumsum(every[:, ::-1], axis=1)[:, ::-1] - every
    below_scores = np.cumsum(later, axis=0) - later  # at lower scores
    above_scores = np.cumsum(later[::-1], axis=0)[::-1] - later  # at higher scores
    counts = (int(np.sum(event * below_scores)), int(np.sum(event * later)), int(np.sum(event * above_scores)))
    return counts, event.sum(axis=0), every.sum(axis=0)


def concordance_index(df: Any, *, time_col: str, score_col: str, event_col: str | None = None) -> float:
    """Harrell's concordance index of a Spark DataFrame, with lifelines' definition, exact.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The predictions.
    time_col : str
        Observed survival or censoring times.
    score_col : str
        Predictions where higher means longer survival, as in lifelines.
    event_col : str, optional
        Nonzero where the event was observed; None means every event was observed.

    Returns
    -------
    float
        Equal to :func:`pairmetrics.lifelines.concordance_index` on the rows.

    Raises
    ------
    ZeroDivisionError
        When no pair is admissible, as lifelines.
    ValueError
        When a column holds NaN or null (lifelines' message), or is missing.

    Examples
    --------
    >>> from pairmetrics.spark import concordance_index  # doctest: +SKIP
    >>> concordance_index(predictions, time_col="time", score_col="predicted", event_col="event")  # doctest: +SKIP
    """
    from pyspark.sql import functions

    for name in (time_col, score_col, event_col):
        if name is not None and name not in df.columns:
            raise ValueError(f"column {name!r} is not in the DataFrame (columns: {df.columns})")
    event = functions.lit(1.0) if event_col is None else functions.col(event_col).cast("double")
    data = df.select(
        functions.col(time_col).cast("double").alias(_TIME),
        event.alias(_EVENT),
        functions.col(score_col).cast("double").alias(_SCORE),
    )
    missing = [functions.sum((functions.isnan(c) | functions.isnull(c)).cast("long")) for c in (_TIME, _SCORE, _EVENT)]
    nan_counts = data.select(*missing).first()
    facts = LifelinesFacts(*(bool(n) for n in nan_counts))
    return float(LIFELINES.run(lambda plan: _pair_counts(data, df, plan), facts))


def _pair_counts(data: Any, df: Any, plan: PairCountPlan) -> PairCounts:
    """The Spark counter: comparable pairs within time ranges, then across score ranges, on the executors."""

    from ._ranks import range_count, range_expression, value_bounds

    n_ranges = range_count(df)
    time_bounds, score_bounds = value_bounds(data, _TIME, n_ranges), value_bounds(data, _SCORE, n_ranges)
    n_time, n_score = len(time_bounds) + 1, len(score_bounds) + 1
    data = data.withColumn(_TIME_RANGE, range_expression(_TIME, time_bounds))
    data = data.withColumn(_SCORE_RANGE, range_expression(_SCORE, score_bounds))
    within = data.repartition(n_time, _TIME_RANGE).mapInArrow(_within_time_ranges, "below long, tied long, above long")
    totals = [sum(int(row[k]) for row in within.collect()) for k in range(3)]
    schema = "score_range int, below long, tied long, above long, events array<long>, samples array<long>"
    across = data.repartition(n_score, _SCORE_RANGE).mapInArrow(_across_time_ranges(n_time), schema).collect()
    events, samples = np.zeros((n_score, n_time), np.int64), np.zeros((n_score, n_time), np.int64)
    for row in across:
        for k, name in enumerate(("below", "tied", "above")):
            totals[k] += int(row[name])
        events[row["score_range"]], samples[row["score_range"]] = row["events"], row["samples"]
    # across score ranges a < b: the later sample scores above an event of a, below an event of b
    later = np.cumsum(samples[:, ::-1], axis=1)[:, ::-1] - samples  # per score range, samples after time range p
    later_above = np.cumsum(later[::-1], axis=0)[::-1] - later  # ... in higher score ranges
    later_below = np.cumsum(later, axis=0) - later  # ... in lower score ranges
    totals[2] += int(np.sum(events * later_above))
    totals[0] += int(np.sum(events * later_below))
    return PairCounts(totals[0], totals[1], totals[2], 0)
