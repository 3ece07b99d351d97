"""Drop-ins for :mod:`scipy.stats`' rank statistics: the same names, signatures, result fields and numbers.

Change one import (``from pairmetrics.scipy import kendalltau``) and keep the rest of a script. SciPy itself
is imported on the first call.
"""

from .._mann_whitney import mannwhitneyu
from .._rank_correlation import kendalltau, somersd, spearmanr, weightedtau

__all__ = ["kendalltau", "mannwhitneyu", "somersd", "spearmanr", "weightedtau"]
