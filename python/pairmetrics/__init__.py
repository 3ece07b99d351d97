"""pairmetrics: fast, exact evaluation of model predictions.

Paired evaluation (a drop-in for ``pairedeval``), the 2 vs 2 test for vector
predictions, Rosenbaum's cross-match test with an exact Blossom matching, and
classic error measures. Plain-Python references of every kernel live in
:mod:`pairmetrics.reference`.
"""

from . import _core  # noqa: F401  (fail early if the extension is missing)
from ._paired import *  # noqa: F401,F403
from ._paired import __all__ as _paired_all
from ._two_vs_two import *  # noqa: F401,F403
from ._two_vs_two import __all__ as _two_vs_two_all
from ._matching import *  # noqa: F401,F403
from ._matching import __all__ as _matching_all
from ._crossmatch import *  # noqa: F401,F403
from ._crossmatch import __all__ as _crossmatch_all
from ._measures import *  # noqa: F401,F403
from ._measures import __all__ as _measures_all
from ._roc_auc import *  # noqa: F401,F403
from ._roc_auc import __all__ as _roc_auc_all
from ._survival import *  # noqa: F401,F403
from ._survival import __all__ as _survival_all
from ._crossmatch_groups import *  # noqa: F401,F403
from ._crossmatch_groups import __all__ as _crossmatch_groups_all
from ._concordance import *  # noqa: F401,F403
from ._concordance import __all__ as _concordance_all
from ._compare_models import *  # noqa: F401,F403
from ._compare_models import __all__ as _compare_models_all
from ._uno import *  # noqa: F401,F403
from ._uno import __all__ as _uno_all
from ._bootstrap import *  # noqa: F401,F403
from ._bootstrap import __all__ as _bootstrap_all

__version__ = "0.1.0"

__all__ = [*_paired_all, *_two_vs_two_all, *_matching_all, *_crossmatch_all, *_measures_all, *_roc_auc_all, *_survival_all,
           *_crossmatch_groups_all, *_concordance_all, *_compare_models_all, *_uno_all, *_bootstrap_all]
