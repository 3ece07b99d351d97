"""Exact rank metrics of Spark DataFrames, computed on the executors (extra ``spark``: pyspark >= 3.5, pyarrow).

:class:`BinaryClassificationEvaluator` is MLlib's evaluator with the same Params, computing exactly;
:func:`roc_auc_score` (with DeLong's interval), :func:`average_precision_score` and :func:`concordance_index`
take a DataFrame and column names; ``groups_col`` gives a DataFrame of per-group results. No rows reach the
driver: only a fixed-size summary per score range (see :doc:`/guide/spark`).
"""

from __future__ import annotations

from typing import Any

from .._rank_state import RocAucResult
from ._concordance import concordance_index
from ._ranks import LABEL, SCORE, average_precision, grouped, prepared, roc_auc, score_column
from .evaluation import BinaryClassificationEvaluator

__all__ = ["BinaryClassificationEvaluator", "roc_auc_score", "average_precision_score", "concordance_index"]


def _label_column(df: Any, name: str) -> Any:
    from pyspark.sql import functions

    if name not in df.columns:
        raise ValueError(f"column {name!r} is not in the DataFrame (columns: {df.columns})")
    return functions.col(name).cast("double")


def _check_groups(df: Any, groups_col: str | None) -> tuple[str, ...]:
    if groups_col is None:
        return ()
    if groups_col not in df.columns:
        raise ValueError(f"column {groups_col!r} is not in the DataFrame (columns: {df.columns})")
    if groups_col in (LABEL, SCORE):
        raise ValueError(f"groups_col may not be named {groups_col!r}")
    return (groups_col,)


def roc_auc_score(
    df: Any, *, label_col: str, score_col: str, weight_col: str | None = None, groups_col: str | None = None
) -> RocAucResult | Any:
    """The exact area under the ROC curve of a Spark DataFrame, with DeLong's interval.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The predictions.
    label_col : str
        Binary labels: 0/1 numbers or booleans (1 is positive).
    score_col : str
        Scores (any numeric column; a vector column gives its element 1, the positive class's probability or
        raw prediction, as MLlib reads ``rawPrediction``).
    weight_col : str, optional
        Non-negative sample weights.
    groups_col : str, optional
        Per-group results: one row per group, computed on the executors.

    Returns
    -------
    RocAucResult or pyspark.sql.DataFrame
        The result of :meth:`pairmetrics.RankState.roc_auc` on all the rows: ``auc`` equals
        :func:`pairmetrics.sklearn.roc_auc_score` and, without weights, ``confidence_interval()`` that of
        :func:`pairmetrics.paired_evaluation`. With ``groups_col``, a DataFrame with the columns
        ``groups_col``, ``auc``, ``n_positive``, ``n_negative``, ``positive_weight``, ``negative_weight`` and
        ``variance`` (DeLong's; null with weights).

    Examples
    --------
    >>> from pairmetrics.spark import roc_auc_score  # doctest: +SKIP
    >>> result = roc_auc_score(predictions, label_col="label", score_col="probability")  # doctest: +SKIP
    >>> result.auc, result.confidence_interval()  # doctest: +SKIP
    """
    extra = _check_groups(df, groups_col)
    data = prepared(df, _label_column(df, label_col), score_column(df, score_col), weight_col, extra)
    if groups_col is not None:
        return grouped(data, groups_col, "auc", weight_col is not None)
    return roc_auc(data, weight_col is not None)


def average_precision_score(
    df: Any, *, label_col: str, score_col: str, weight_col: str | None = None, groups_col: str | None = None
) -> float | Any:
    """The exact average precision of a Spark DataFrame (scikit-learn's definition: no interpolation).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The predictions.
    label_col : str
        Binary labels: 0/1 numbers or booleans (1 is positive).
    score_col : str
        Scores (a vector column gives its element 1).
    weight_col : str, optional
        Non-negative sample weights.
    groups_col : str, optional
        Per-group results: one row per group, computed on the executors.

    Returns
    -------
    float or pyspark.sql.DataFrame
        Equal to scikit-learn's ``average_precision_score`` on the rows (NaN, with a warning, without
        positives). With ``groups_col``, a DataFrame with the columns ``groups_col``, ``average_precision``,
        ``n_positive`` and ``n_negative``.

    Examples
    --------
    >>> from pairmetrics.spark import average_precision_score  # doctest: +SKIP
    >>> average_precision_score(predictions, label_col="label", score_col="probability")  # doctest: +SKIP
    """
    extra = _check_groups(df, groups_col)
    data = prepared(df, _label_column(df, label_col), score_column(df, score_col), weight_col, extra)
    if groups_col is not None:
        return grouped(data, groups_col, "average_precision", weight_col is not None)
    return average_precision(data, "step")
