"""Optional progress bars (tqdm when installed and asked for).

A function called with ``progress=True`` gets a bar of its own, unless a
:class:`RunProgress` is active (the command line opens one over its whole
run): then the kernels' progress fills the share of the current step of
that single bar.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

ProgressCallback = Callable[[int, int], None]

_ACTIVE: contextvars.ContextVar[RunProgress | None] = contextvars.ContextVar("pairmetrics_run", default=None)


@contextlib.contextmanager
def progress_callback(
    enabled: bool, description: str, unit: str = "block", count: int | None = None
) -> Iterator[ProgressCallback | None]:
    """Yield a callback ``(done, total)`` for the compiled kernels, or None.

    With ``enabled`` and tqdm installed this drives a tqdm bar (the step of
    the active :class:`RunProgress`, if any); without tqdm progress is
    silently off (it is an optional dependency). ``unit`` names what the bar
    counts (samples, resamples, points); with ``count`` the kernel's
    ``done / total`` is shown as that share of ``count`` units (for kernels
    whose own steps are internal).
    """
    run = _ACTIVE.get()
    if enabled and run is not None:
        yield run.kernel_callback(description)
        return
    if not enabled:
        yield None
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield None
        return
    bar = tqdm(total=0, desc=description, unit=f" {unit}", leave=False)

    def update(done: int, total: int) -> None:
        if count is not None:
            done, total = (round(done * count / total) if total > 0 else 0), count
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()


class RunProgress:
    """One bar from the start to the end of a run, in steps with fixed shares of it.

    The bar stays on screen when the run ends, shows the elapsed time even
    while a step reports nothing, and is drawn on ``sys.stderr``. Disabled,
    every method does nothing. Needs tqdm when enabled.
    """

    _UNITS = 1000
    _TICK = 0.5  # seconds between redraws of a step that reports nothing

    def __init__(self, description: str, enabled: bool):
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self._UNITS,
                desc=description,
                leave=True,
                file=sys.stderr,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}]",
            )
        self._description = description
        self._lock = threading.Lock()
        self._start = 0.0  # of the current step, in shares of the run
        self._share = 0.0
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)

    @property
    def enabled(self) -> bool:
        """Whether a bar is shown (pass it as ``progress=`` to fill the current step)."""
        return self._bar is not None

    @contextlib.contextmanager
    def step(self, label: str, share: float) -> Iterator[None]:
        """A step taking ``share`` (0 to 1) of the run; the bar is at the step's end when it returns."""
        if self._bar is None:
            yield
            return
        with self._lock:
            self._share = min(share, 1.0 - self._start)
            self._bar.set_description_str(f"{self._description}: {label}", refresh=False)
            self._draw(self._start)
        yield
        with self._lock:
            self._start += self._share
            self._share = 0.0
            self._draw(self._start)

    def kernel_callback(self, label: str) -> ProgressCallback:
        """A ``(done, total)`` callback filling the current step's share."""
        with self._lock:
            self._bar.set_description_str(f"{self._description}: {label}", refresh=False)

        def update(done: int, total: int) -> None:
            fraction = min(done / total, 1.0) if total > 0 else 0.0
            with self._lock:
                self._draw(self._start + self._share * fraction)

        return update

    @contextlib.contextmanager
    def printing(self) -> Iterator[None]:
        """Lines printed to ``sys.stdout`` meanwhile go above the bar instead of through it."""
        if self._bar is None:
            yield
            return
        from tqdm.contrib import DummyTqdmFile

        with contextlib.redirect_stdout(DummyTqdmFile(sys.stdout)):
            yield

    def _draw(self, position: float) -> None:
        units = min(round(position * self._UNITS), self._UNITS)
        if units > self._bar.n:  # never backwards: a second kernel of a step starts again from 0
            self._bar.n = units
            self._bar.refresh()

    def _tick(self) -> None:
        while not self._stop.wait(self._TICK):
            with self._lock:
                self._bar.refresh()

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._token = _ACTIVE.set(self)
            self._ticker.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._bar is None:
            return
        self._stop.set()
        self._ticker.join()
        _ACTIVE.reset(self._token)
        with self._lock:
            if exc_type is None:
                self._bar.set_description_str(self._description, refresh=False)
                self._draw(1.0)
            self._bar.close()
