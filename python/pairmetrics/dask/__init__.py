"""The public functions on Dask collections, computed on the cluster.

Importing this package registers one implementation per public function with
the routing registry (:mod:`pairmetrics._routing`); calling a public function
with a Dask collection imports it on first use. It uses only the public
seams of the capability modules, so dependencies run one way.
"""

from __future__ import annotations

from .. import _crossmatch, _measures, _multilabel, _paired, _two_vs_two
from .._routing import register
from . import _legacy
from . import roc_auc as roc_auc  # noqa: F401  (registers its implementations)
from . import survival as survival  # noqa: F401
from . import matching as matching  # noqa: F401

for _public, _impl in [
    (_paired.paired_eval, _legacy._dask_paired_eval),
    (_paired.paired_evaluation, _legacy._dask_paired_evaluation),
    (_paired.compare_paired, _legacy._dask_compare_paired),
    (_two_vs_two.two_vs_two, _legacy._dask_two_vs_two),
    (_two_vs_two.two_vs_two_permutation_test, _legacy._dask_two_vs_two_permutation_test),
    (_measures.zero_one_error, _legacy._dask_zero_one_error),
    (_measures.absolute_error, _legacy._dask_absolute_error),
    (_measures.sum_squares_error, _legacy._dask_sum_squares_error),
    (_measures.rms_error, _legacy._dask_rms_error),
    (_measures.worst_case_error, _legacy._dask_worst_case_error),
    (_measures.likelihood, _legacy._dask_likelihood),
    (_measures.log_likelihood, _legacy._dask_log_likelihood),
    (_measures.log_loss, _legacy._dask_log_loss),
    (_measures.best_constant, _legacy._dask_best_constant),
    (_multilabel.multilabel_counts, _legacy._dask_multilabel_counts),
    (_crossmatch.crossmatch_resample, _legacy._dask_crossmatch_resample),
]:
    register(_public)(_impl)
