"""The public functions on Dask collections, computed on the cluster.

Public functions that take arrays are routed here (see
:mod:`pairmetrics._routing`): when one of their array arguments is a Dask
collection (a dask array, a dask DataFrame or Series), the call goes to the
implementation that the modules of this package register for it. Each builds
a task graph that runs the same C++ kernels on blocks of the data and reduces
small per-block results, then validates and assembles them with the very code
of the in-memory function (its public-in-package seams), so both paths give the
same numbers and the same errors. Nothing imports dask unless the caller has,
so ``import pairmetrics`` never loads it, and no capability module imports
this package.

The graphs run on the active ``distributed.Client`` when there is one, or on
dask's default scheduler otherwise. No step brings the data to the client or
to a single task: what reaches the client are counts, quantile samples and
per-sample results the in-memory function also returns. Inside a task the
kernels use one thread (the workers' threads are the parallelism) unless
``n_jobs`` is given. The cost of each path is described in its module:
:mod:`.paired`, :mod:`.two_vs_two`, :mod:`.measures`, :mod:`.multilabel`,
:mod:`.crossmatch`, :mod:`.roc_auc`, :mod:`.ranking_curves`, :mod:`.survival`, :mod:`.mann_whitney`,
:mod:`.matching` (which
gathers point sets up to a limit the user can raise).
"""

from __future__ import annotations

from . import (
    crossmatch,
    mann_whitney,
    matching,
    measures,
    multilabel,
    paired,
    ranking_curves,
    roc_auc,
    survival,
    two_vs_two,
)

__all__ = [
    "crossmatch",
    "mann_whitney",
    "matching",
    "measures",
    "multilabel",
    "paired",
    "ranking_curves",
    "roc_auc",
    "survival",
    "two_vs_two",
]
