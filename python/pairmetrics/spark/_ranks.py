"""Exact AUC and average precision of Spark DataFrames, computed on the executors.

The plan: bounds of score ranges from ``approxQuantile`` (one pass; equal scores share a range); in each input
partition, one :class:`~pairmetrics.RankState` of its rows (Arrow batches, one sort), cut into the states of
the score ranges (a map-side combine: O(distinct scores) crosses the network, not O(rows)); one shuffle that
brings each range's states to one task, which merges them and reduces them to a fixed-size summary; the driver
combines the summaries of the ranges, lowest first, in O(ranges) memory
(:func:`pairmetrics._rank_state.roc_auc_of_ranges`). The average precision needs the weight of the ranges
above each range: a cheap aggregation first, then the same shuffle.
Per-group results run ``groupBy(...).applyInPandas`` on the executors, one state per group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._rank_state import (
    SUMMARY_FIELDS,
    RankState,
    RocAucResult,
    average_precision_part,
    range_summary,
    roc_auc_of_ranges,
)

RANGE = "__pairmetrics_range"
LABEL, SCORE, WEIGHT = "__pairmetrics_label", "__pairmetrics_score", "__pairmetrics_weight"
# approxQuantile's relative error, as a fraction of one range's share of the rows
_QUANTILE_SLACK = 0.25


def _functions() -> Any:
    from pyspark.sql import functions

    return functions


def score_column(df: Any, name: str) -> Any:
    """The score as a double column: a double (or any number) itself, a vector its element 1 (MLlib's
    rawPrediction and probability vectors)."""
    functions = _functions()
    if name not in df.columns:
        raise ValueError(f"column {name!r} is not in the DataFrame (columns: {df.columns})")
    kind = df.schema[name].dataType.typeName()
    if kind in ("vector", "vectorudt"):
        from pyspark.ml.functions import vector_to_array

        return vector_to_array(functions.col(name))[1]
    if kind not in ("double", "float", "integer", "long", "short", "byte", "decimal", "boolean"):
        raise TypeError(f"column {name!r} must be numeric or a vector, got {kind}")
    return functions.col(name).cast("double")


def prepared(df: Any, label: Any, score: Any, weight_col: str | None, extra: tuple[str, ...] = ()) -> Any:
    """A DataFrame of (label, score, weight or nothing, extra columns) under private names."""
    functions = _functions()
    columns = [label.alias(LABEL), score.alias(SCORE)]
    if weight_col is not None:
        if weight_col not in df.columns:
            raise ValueError(f"column {weight_col!r} is not in the DataFrame (columns: {df.columns})")
        columns.append(functions.col(weight_col).cast("double").alias(WEIGHT))
    return df.select(*columns, *extra)


def range_count(df: Any) -> int:
    """How many score ranges: one per partition of the input (at least 2, at most 4096)."""
    return int(min(max(df.rdd.getNumPartitions(), 2), 4096))


def value_bounds(df: Any, column: str, n_ranges: int) -> list[float]:
    """Bounds of at most n_ranges ranges of ``column``'s values, at ``approxQuantile``'s quantiles (distinct,
    increasing); a value's range is the number of bounds below it, so equal values share a range."""
    probabilities = [k / n_ranges for k in range(1, n_ranges)]
    bounds = df.approxQuantile(column, probabilities, _QUANTILE_SLACK / n_ranges) if probabilities else []
    return sorted(set(float(b) for b in bounds if b is not None and np.isfinite(b)))


def range_expression(column: str, bounds: list[float]) -> Any:
    """The range number of ``column`` (see value_bounds) as a Spark column expression."""
    functions = _functions()
    number = functions.lit(0)
    for bound in bounds:
        number = number + (functions.col(column) > functions.lit(bound)).cast("int")
    return number


def _batch_columns(batch: Any, positive_above: float | None) -> tuple[Any, ...]:
    """(labels, scores, weights or None) of an Arrow batch; labels as MLlib reads them (``label > 0.5``) when
    positive_above is set."""
    names = batch.schema.names

    def column(name: str) -> np.ndarray:
        array = batch.column(names.index(name))
        if array.null_count:
            raise ValueError(f"the {name.replace('__pairmetrics_', '')} column contains nulls")
        return array.to_numpy(zero_copy_only=False)

    labels = column(LABEL)
    if positive_above is not None:
        labels = labels > positive_above
    return labels, column(SCORE), column(WEIGHT) if WEIGHT in names else None


def partition_state(batches: Iterator[Any], positive_above: float | None) -> RankState:
    """The state of a task's rows (one count over the partition's batches)."""
    parts = [_batch_columns(batch, positive_above) for batch in batches]
    if not parts:
        return RankState()
    labels, scores = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    weights = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
    return RankState().update(labels, scores, sample_weight=weights)


def split_by_range(state: RankState, bounds: list[float]) -> dict[int, RankState]:
    """A state cut into the states of its score ranges (its scores are sorted: each range is a slice)."""
    cuts = np.searchsorted(state.scores, np.asarray(bounds, dtype=np.float64), side="right")
    edges = [0, *cuts.tolist(), state.scores.shape[0]]
    pieces = {}
    for number in range(len(edges) - 1):
        piece = slice(edges[number], edges[number + 1])
        if piece.start < piece.stop:
            weights = (None, None) if not state.weighted else (w[piece] for w in state.weights())
            pieces[number] = RankState(state.scores[piece], state.n_positive[piece], state.n_negative[piece], *weights)
    return pieces


def _partial_states(bounds: list[float], positive_above: float | None) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def count(batches: Iterator[Any]) -> Iterator[Any]:
        """Before the shuffle: the state of every score range in an input partition (what crosses the network
        is O(distinct scores), not O(rows), as a map-side combine)."""
        import pyarrow as pa

        states = split_by_range(partition_state(batches, positive_above), bounds)
        numbers = sorted(states)
        yield pa.RecordBatch.from_arrays(
            [pa.array(numbers, pa.int32()), pa.array([states[k].to_bytes() for k in numbers], pa.large_binary())],
            names=[RANGE, "state"],
        )

    return count


def shuffled_states(df: Any, bounds: list[float], positive_above: float | None) -> Any:
    """The partial states of every input partition, shuffled so that each score range's meet in one task."""
    partial = df.mapInArrow(_partial_states(bounds, positive_above), f"{RANGE} int, state binary")
    return partial.repartition(len(bounds) + 1, RANGE)


def merged_states(batches: Iterator[Any]) -> dict[int, RankState]:
    """After the shuffle: the partial states of a task merged per score range."""
    states: dict[int, RankState] = {}
    for batch in batches:
        numbers = batch.column(0).to_pylist()
        for number, data in zip(numbers, batch.column(1).to_pylist()):
            states.setdefault(number, RankState()).merge(RankState.from_bytes(data))
    return states


def _summaries_task() -> Callable[[Iterator[Any]], Iterator[Any]]:
    def summarize(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        states = merged_states(batches)
        numbers = sorted(states)
        table = np.array([range_summary(states[k]) for k in numbers]).reshape(-1, len(SUMMARY_FIELDS))
        columns = [pa.array(numbers, pa.int32())] + [pa.array(table[:, j], pa.float64()) for j in range(table.shape[1])]
        yield pa.RecordBatch.from_arrays(columns, names=[RANGE, *SUMMARY_FIELDS])

    return summarize


def _summary_schema() -> str:
    return ", ".join([f"{RANGE} int"] + [f"{name} double" for name in SUMMARY_FIELDS])


def range_summaries(df: Any, positive_above: float | None) -> list[np.ndarray]:
    """The range_summary of every score range (lowest first; empty ranges count nothing)."""
    bounds = value_bounds(df, SCORE, range_count(df))
    rows = shuffled_states(df, bounds, positive_above).mapInArrow(_summaries_task(), _summary_schema()).collect()
    table = np.zeros((len(bounds) + 1, len(SUMMARY_FIELDS)))
    for row in rows:
        table[row[0]] = [row[name] for name in SUMMARY_FIELDS]
    return list(table)


def roc_auc(df: Any, weighted: bool, positive_above: float | None = None) -> RocAucResult:
    """The exact AUC (and DeLong's variance when unweighted) of a prepared DataFrame."""
    return roc_auc_of_ranges(range_summaries(df, positive_above), weighted=weighted)


def _precision_task(
    offsets: dict[int, tuple[float, float]], total: float, definition: str
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def contribute(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        states = merged_states(batches)
        numbers = sorted(states)
        parts = [average_precision_part(states[k], *offsets[k], total, definition) for k in numbers]
        yield pa.RecordBatch.from_arrays(
            [pa.array(numbers, pa.int32()), pa.array(parts, pa.float64())], names=[RANGE, "part"]
        )

    return contribute


def average_precision(df: Any, definition: str, positive_above: float | None = None) -> float:
    """The exact average precision of a prepared DataFrame ("step": scikit-learn's, "trapezoid": MLlib's)."""
    functions = _functions()
    bounds = value_bounds(df, SCORE, range_count(df))
    ranged = df.withColumn(RANGE, range_expression(SCORE, bounds))
    positive = (functions.col(LABEL) > 0.5) if positive_above is not None else (functions.col(LABEL) == 1)
    weight = functions.col(WEIGHT) if WEIGHT in df.columns else functions.lit(1.0)
    totals = ranged.groupBy(RANGE).agg(
        functions.sum(functions.when(positive, weight).otherwise(0.0)).alias("tp"),
        functions.sum(functions.when(positive, 0.0).otherwise(weight)).alias("fp"),
    )
    by_range = {row[RANGE]: (float(row["tp"]), float(row["fp"])) for row in totals.collect()}
    offsets, tp_above, fp_above = {}, 0.0, 0.0
    for number in sorted(by_range, reverse=True):  # the curve starts at the highest scores
        offsets[number] = (tp_above, fp_above)
        tp_above += by_range[number][0]
        fp_above += by_range[number][1]
    if not tp_above > 0:
        from .._labels import warn_undefined

        warn_undefined("No positive class found in the labels: average precision is undefined")
        return float("nan")
    task = _precision_task(offsets, tp_above, definition)
    parts = shuffled_states(df, bounds, positive_above).mapInArrow(task, f"{RANGE} int, part double").collect()
    return float(max(0.0, sum(row["part"] for row in parts)))


# --------------------------------------------------------------------------------- per group


def grouped(df: Any, groups_col: str, metric: str, weighted: bool) -> Any:
    """A Spark DataFrame of per-group results, computed on the executors (one state per group)."""
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    key = df.schema[groups_col]
    fields = [StructField(groups_col, key.dataType, key.nullable), StructField(metric, DoubleType())]
    fields += [StructField(name, LongType()) for name in ("n_positive", "n_negative")]
    if metric == "auc":
        fields += [StructField(name, DoubleType()) for name in ("positive_weight", "negative_weight", "variance")]
    schema = StructType(fields)

    def one_group(frame: Any) -> Any:
        import warnings

        import pandas as pd

        weights = frame[WEIGHT].to_numpy() if weighted else None
        state = RankState().update(frame[LABEL].to_numpy(), frame[SCORE].to_numpy(), sample_weight=weights)
        n_positive, n_negative = int(state.n_positive.sum()), int(state.n_negative.sum())
        row: dict[str, Any] = {groups_col: frame[groups_col].iloc[0]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a group of one class is NaN, as in memory
            if metric == "auc":
                result = state.roc_auc() if (weights is None or weights.any()) else None
                row["auc"] = result.auc if result is not None else float("nan")
                variance = None if result is None else result._variance
                row.update(
                    positive_weight=float(state.weights()[0].sum()),
                    negative_weight=float(state.weights()[1].sum()),
                    variance=variance,
                )
            else:
                row[metric] = state.average_precision()
        row.update(n_positive=n_positive, n_negative=n_negative)
        return pd.DataFrame([row], columns=[f.name for f in fields])

    return df.groupBy(groups_col).applyInPandas(one_group, schema)
