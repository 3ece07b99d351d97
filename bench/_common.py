"""Shared helpers for the benchmark scripts: timing, machine description, output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

try:  # the benchmark modules take the plot helper from here
    from .plots import loglog_plot  # noqa: F401
except ImportError:
    from plots import loglog_plot  # noqa: F401

RESULTS = Path(__file__).resolve().parent / "results"


# Smoke runs (tests/test_bench.py) check that every benchmark runs against the current API: each
# timed call runs once, and the numbers mean nothing.
SMOKE = False


def repeat_count(repeats: int) -> int:
    """``repeats``, or 1 in a smoke run."""
    return 1 if SMOKE else repeats


def median_time(func, repeats: int = 3, budget: float = 20.0) -> float:
    """Median wall time of ``func()`` over ``repeats`` runs (fewer if a run is slow)."""
    times = []
    for _ in range(repeat_count(repeats)):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
        if sum(times) > budget:
            break
    return statistics.median(times)


def machine() -> dict:
    """CPU model, core count and numpy's BLAS, recorded next to the numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # older numpy
        blas = "unknown"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
    }


def write_results(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"machine": machine(), **payload}
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def markdown_table(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def simple_main(name: str, description: str, run, table, argv=None) -> None:
    """Command line of a benchmark with only --quick: prints the table and, for full sizes, writes results/<name>.json."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    print(table(result))
    if not args.quick:
        print("wrote", write_results(name, result))
