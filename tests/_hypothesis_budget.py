"""Example counts of the hypothesis tests, by profile.

CI's first run uses the full counts (profile "ci"); the repeat runs on other
builds (numpy's floor, the sanitizers) and quick local runs use
HYPOTHESIS_PROFILE=dev, where no test draws more than ``QUICK_CAP`` examples,
including those that ask for more.
"""

from __future__ import annotations

import os

QUICK_CAP = 50
QUICK = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "dev"


def examples(n: int) -> int:
    """``n``, or at most ``QUICK_CAP`` under the dev profile."""
    return min(n, QUICK_CAP) if QUICK else n
