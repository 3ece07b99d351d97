"""Drop-ins for :mod:`sklearn.metrics`: the same names, signatures, numbers and exceptions.

Change one import (``from pairmetrics.sklearn import roc_auc_score``) and keep the rest of a script.
"""

from .._roc_auc import roc_auc_score

__all__ = ["roc_auc_score"]
