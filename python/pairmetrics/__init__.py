"""pairmetrics: fast, exact evaluation of model predictions.

The top level holds the native API, one name per job: truth first
(``y_true, y_score`` for rankings, ``y_true, y_pred`` for point predictions,
observed times first for survival), options keyword-only, SciPy-style results.
Each peer's drop-ins live in a namespace named after it, with the peer's
signatures: :mod:`pairmetrics.sklearn`, :mod:`pairmetrics.scipy`,
:mod:`pairmetrics.lifelines`, :mod:`pairmetrics.sksurv` and
:mod:`pairmetrics.pairedeval`. Plain-Python references of every kernel live in
:mod:`pairmetrics.reference`.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import (
    _best_constant,
    _bootstrap,
    _compare_groups,
    _compare_models,
    _concordance,
    _core,  # noqa: F401  (fail early if the extension is missing)
    _crossmatch,
    _crossmatch_multi,
    _distance_tests,
    _groups,
    _inference,
    _matching,
    _measures,
    _paired,
    _rank_state,
    _two_vs_two,
)
from ._best_constant import *  # noqa: F401,F403
from ._bootstrap import *  # noqa: F401,F403
from ._compare_groups import *  # noqa: F401,F403
from ._compare_models import *  # noqa: F401,F403
from ._concordance import *  # noqa: F401,F403
from ._crossmatch import *  # noqa: F401,F403
from ._crossmatch_multi import *  # noqa: F401,F403
from ._distance_tests import *  # noqa: F401,F403
from ._groups import *  # noqa: F401,F403
from ._inference import *  # noqa: F401,F403
from ._matching import *  # noqa: F401,F403
from ._measures import *  # noqa: F401,F403

# already in _measures' names; imported again because type checkers cannot follow its __all__
from ._multilabel import *  # noqa: F401,F403
from ._paired import *  # noqa: F401,F403
from ._rank_state import *  # noqa: F401,F403
from ._representations import *  # noqa: F401,F403
from ._two_vs_two import *  # noqa: F401,F403

__version__ = "0.1.0"

__all__: list[str] = []
# extended in place (not unpacked into a list) so that type checkers follow the re-exports
__all__.extend(_paired.__all__)
__all__.extend(_groups.__all__)
__all__.extend(_inference.__all__)
__all__.extend(_two_vs_two.__all__)
__all__.extend(_matching.__all__)
__all__.extend(_crossmatch.__all__)
__all__.extend(_measures.__all__)
__all__.extend(_best_constant.__all__)
__all__.extend(_compare_groups.__all__)
__all__.extend(_crossmatch_multi.__all__)
__all__.extend(_concordance.__all__)
__all__.extend(_compare_models.__all__)
__all__.extend(_bootstrap.__all__)
__all__.extend(_distance_tests.__all__)
__all__.extend(_rank_state.__all__)

# The peers' namespaces, imported on first use (``pairmetrics.sklearn.roc_auc_score``).
NAMESPACES = ("sklearn", "scipy", "lifelines", "sksurv", "pairedeval", "reference", "dask", "spark")

# Names of earlier versions and where each went; an old name raises AttributeError naming its new home.
MOVED = {
    "paired_eval": "pairmetrics.pairedeval.paired_eval (pairedeval's signature), or "
    "pairmetrics.paired_evaluation(y_true, y_score) for the native result",
    "paired_auc": "pairmetrics.paired_evaluation(y_true, y_score, min_dist=...).auc",
    "compare_paired": "pairmetrics.compare_models(y_true, [y_score_a, y_score_b]) "
    "(with groups=, the per-group comparison of two models)",
    "PairedComparison": "pairmetrics.ModelComparison, returned by compare_models",
    "roc_auc_score": "pairmetrics.sklearn.roc_auc_score",
    "concordance_index": "pairmetrics.lifelines.concordance_index",
    "concordance_index_censored": "pairmetrics.sksurv.concordance_index_censored",
    "concordance_index_ipcw": "pairmetrics.sksurv.concordance_index_ipcw",
    "cumulative_dynamic_auc": "pairmetrics.sksurv.cumulative_dynamic_auc",
    "crossmatchtest": "pairmetrics.crossmatch_test(D=..., labels=...), R's field names from result.to_r()",
    "crossmatch_groups": "pairmetrics.compare_groups(data, groupby, test='crossmatch', categories=...)",
}


def __getattr__(name: str) -> Any:
    if name in NAMESPACES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in MOVED:
        raise AttributeError(f"pairmetrics.{name} has moved: use {MOVED[name]}")
    raise AttributeError(f"module 'pairmetrics' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(NAMESPACES))
