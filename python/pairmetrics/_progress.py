"""Optional progress bars (tqdm when installed and asked for)."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Optional

# what the kernels call as they go: (done, total)
ProgressCallback = Callable[[int, int], None]


@contextlib.contextmanager
def progress_callback(enabled: bool, description: str) -> Iterator[Optional[ProgressCallback]]:
    """Yield a callback ``(done, total)`` for the compiled kernels, or None.

    With ``enabled`` and tqdm installed this drives a tqdm bar; without tqdm
    progress is silently off (it is an optional dependency).
    """
    if not enabled:
        yield None
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield None
        return
    bar = tqdm(total=0, desc=description, unit="block", leave=False)

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()
