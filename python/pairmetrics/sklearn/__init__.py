"""Drop-ins for :mod:`sklearn.metrics`: the same names, signatures, numbers and exceptions.

Change one import (``from pairmetrics.sklearn import roc_auc_score``) and keep the rest of a script.
"""

from .._label_ranking import (
    coverage_error,
    dcg_score,
    label_ranking_average_precision_score,
    label_ranking_loss,
    ndcg_score,
    top_k_accuracy_score,
)
from .._ranking_curves import average_precision_score, det_curve, precision_recall_curve, roc_curve
from .._roc_auc import roc_auc_score

__all__ = [
    "average_precision_score",
    "coverage_error",
    "dcg_score",
    "det_curve",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "ndcg_score",
    "precision_recall_curve",
    "roc_auc_score",
    "roc_curve",
    "top_k_accuracy_score",
]
