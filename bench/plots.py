"""The benchmark plots: one style for every chart (legends in words, below the data; readable log axes)."""

from __future__ import annotations

from pathlib import Path


def figure_and_axes(width: float = 6.0, height: float = 4.5, panels: int = 1):
    """A figure with ``panels`` axes side by side (Agg backend: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, panels, figsize=(width, height), squeeze=False)
    return (fig, axes[0]) if panels > 1 else (fig, axes[0][0])


def save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _log_axis(axis, low: float, high: float) -> None:
    """Ticks at powers of ten labelled 1e3, 1e4, ...; over less than two decades also at 2 and 5 times them,
    labelled in plain numbers. Minor ticks carry no label, so labels never overlap."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if high / low < 100:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        axis.set_major_locator(LogLocator(base=10, numticks=12))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")))
    axis.set_minor_formatter(NullFormatter())


def _ticks_at(axis, values) -> None:
    """Major ticks exactly at ``values``: plain numbers over less than two decades, else 1e3, 1e4, ...; no minor
    ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    plain = max(values) / min(values) < 100
    axis.set_major_locator(FixedLocator(values))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}" if plain else f"{v:.0e}".replace("e+0", "e")))
    axis.set_minor_locator(NullLocator())


def loglog_plot(path, panels: dict, xlabel: str = "n", notes: dict | None = None) -> None:
    """Median seconds against size, log-log: ``{panel title: {curve label: (sizes, seconds)}}``.

    Curve labels are words (the caller maps result keys to them). A curve measured at a single size is drawn as
    a large marker; ``notes[label]`` says why in the legend (for example, "too slow beyond n = 200"), and a
    generic "(one size only)" is added when no note is given.
    """
    notes = notes or {}
    fig, axes = figure_and_axes(width=5.5 * len(panels), height=4.8, panels=len(panels))
    axes = axes if len(panels) > 1 else [axes]
    handles: dict[str, object] = {}
    for ax, (title, curves) in zip(axes, panels.items()):
        for label, (sizes, seconds) in curves.items():
            points = [(n, s) for n, s in zip(sizes, seconds) if s is not None]
            if not points:
                continue
            xs, ys = zip(*points)
            text = label
            if len(points) == 1:
                text = f"{label} ({notes.get(label, 'one size only')})"
                (line,) = ax.loglog(xs, ys, marker="D", markersize=8, linestyle="none", label=text)
            else:
                (line,) = ax.loglog(xs, ys, marker="o", label=text)
            handles.setdefault(text, line)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("seconds (median, log scale)")
        ax.grid(True, which="major", alpha=0.3)
        sizes = sorted({n for sizes, _ in curves.values() for n in sizes})
        if len(sizes) <= 8:
            _ticks_at(ax.xaxis, sizes)  # every measured size labelled, the ends included
        else:
            _log_axis(ax.xaxis, *ax.get_xlim())
        _log_axis(ax.yaxis, *ax.get_ylim())
    # One legend under all panels: never over the data.
    fig.legend(
        list(handles.values()),
        list(handles.keys()),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(2, len(handles)),
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    save(fig, path)
