"""pairmetrics: fast, exact evaluation of model predictions.

Paired evaluation (a drop-in for ``pairedeval``), the 2 vs 2 test for vector
predictions, Rosenbaum's cross-match test with an exact Blossom matching, and
classic error measures. Plain-Python references of every kernel live in
:mod:`pairmetrics.reference`.
"""

from . import (
    _bootstrap,
    _compare_groups,
    _compare_models,
    _concordance,
    _core,  # noqa: F401  (fail early if the extension is missing)
    _crossmatch,
    _crossmatch_multi,
    _distance_tests,
    _groups,
    _matching,
    _measures,
    _paired,
    _roc_auc,
    _survival,
    _two_vs_two,
    _uno,
)
from ._bootstrap import *  # noqa: F401,F403
from ._compare_groups import *  # noqa: F401,F403
from ._compare_models import *  # noqa: F401,F403
from ._concordance import *  # noqa: F401,F403
from ._crossmatch import *  # noqa: F401,F403
from ._crossmatch_multi import *  # noqa: F401,F403
from ._distance_tests import *  # noqa: F401,F403
from ._groups import *  # noqa: F401,F403
from ._matching import *  # noqa: F401,F403
from ._measures import *  # noqa: F401,F403

# already in _measures' names; imported again because type checkers cannot follow its __all__
from ._multilabel import *  # noqa: F401,F403
from ._paired import *  # noqa: F401,F403
from ._representations import *  # noqa: F401,F403
from ._roc_auc import *  # noqa: F401,F403
from ._survival import *  # noqa: F401,F403
from ._two_vs_two import *  # noqa: F401,F403
from ._uno import *  # noqa: F401,F403

__version__ = "0.1.0"

__all__: list[str] = []
# extended in place (not unpacked into a list) so that type checkers follow the re-exports
__all__.extend(_paired.__all__)
__all__.extend(_groups.__all__)
__all__.extend(_two_vs_two.__all__)
__all__.extend(_matching.__all__)
__all__.extend(_crossmatch.__all__)
__all__.extend(_measures.__all__)
__all__.extend(_roc_auc.__all__)
__all__.extend(_survival.__all__)
__all__.extend(_compare_groups.__all__)
__all__.extend(_crossmatch_multi.__all__)
__all__.extend(_concordance.__all__)
__all__.extend(_compare_models.__all__)
__all__.extend(_uno.__all__)
__all__.extend(_bootstrap.__all__)
__all__.extend(_distance_tests.__all__)
