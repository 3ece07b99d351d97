"""Plain-Python reference implementations of every pairmetrics kernel.

They are slow on purpose: short, loop-based transcriptions of the definitions,
used by the test suite and available to users who want to check a number.
"""

from . import (
    confidence,  # noqa: F401
    distance_tests,  # noqa: F401
    groups,  # noqa: F401
    matching,  # noqa: F401
    measures,  # noqa: F401
    paired,  # noqa: F401
    rank_statistics,  # noqa: F401
    ranking,  # noqa: F401
    roc_auc,  # noqa: F401
    survival,  # noqa: F401
    two_vs_two,  # noqa: F401
)
