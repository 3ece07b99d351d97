"""Plain-Python reference implementations of every pairmetrics kernel.

They are slow on purpose: short, loop-based transcriptions of the definitions,
used by the test suite and available to users who want to check a number.
"""

from . import matching  # noqa: F401
from . import measures  # noqa: F401
from . import paired  # noqa: F401
from . import two_vs_two  # noqa: F401
from . import roc_auc  # noqa: F401
from . import survival  # noqa: F401
from . import confidence  # noqa: F401
