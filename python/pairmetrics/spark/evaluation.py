"""MLlib's ``BinaryClassificationEvaluator``, exact: the same Params, computed with pairmetrics' plan."""

from __future__ import annotations

from typing import Any

from pyspark.ml.evaluation import BinaryClassificationEvaluator as _MLlibEvaluator

from ._ranks import average_precision, prepared, roc_auc, score_column

__all__ = ["BinaryClassificationEvaluator"]


class BinaryClassificationEvaluator(_MLlibEvaluator):
    """Drop-in for :class:`pyspark.ml.evaluation.BinaryClassificationEvaluator` that computes exactly.

    The same Params, defaults, getters and setters (``labelCol``,
    ``rawPredictionCol`` as a double or a vector, ``weightCol``,
    ``metricName`` ``"areaUnderROC"`` or ``"areaUnderPR"``), usable in
    ``CrossValidator`` and ``TrainValidationSplit``. ``numBins`` is accepted
    and ignored: no binning happens. As in MLlib, a label above 0.5 is
    positive, a vector's element 1 is the score, ``areaUnderROC`` is the
    trapezoidal area under the ROC curve and ``areaUnderPR`` the trapezoidal
    area under the (recall, precision) points of every distinct score,
    starting at (0, 1) (see :meth:`pairmetrics.RankState.average_precision`,
    ``definition="trapezoid"``). The numbers equal MLlib's with
    ``numBins=0`` (to rounding).

    Examples
    --------
    >>> from pairmetrics.spark import BinaryClassificationEvaluator  # doctest: +SKIP
    >>> BinaryClassificationEvaluator(rawPredictionCol="probability").evaluate(predictions)  # doctest: +SKIP
    """

    def _evaluate(self, dataset: Any) -> float:
        from pyspark.sql import functions

        label = functions.col(self.getLabelCol()).cast("double")
        weight_col = self.getOrDefault(self.weightCol) if self.isDefined(self.weightCol) else None
        weight_col = weight_col or None  # MLlib treats an empty weightCol as none
        data = prepared(dataset, label, score_column(dataset, self.getRawPredictionCol()), weight_col)
        metric = self.getMetricName()
        if metric == "areaUnderROC":
            return float(roc_auc(data, weight_col is not None, positive_above=0.5).auc)
        if metric == "areaUnderPR":
            return average_precision(data, "trapezoid", positive_above=0.5)
        raise ValueError(f"metricName must be 'areaUnderROC' or 'areaUnderPR', got {metric!r}")

    def isLargerBetter(self) -> bool:
        return True
