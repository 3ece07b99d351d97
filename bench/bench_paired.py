"""Paired evaluation: pairmetrics against pairedeval's procedure and numpy's sort pipeline.

The anchor is numpy doing only the sorting that any O(n log n) method needs
(``np.argsort(scores)``, gather the labels, ``np.sort(labels)``): the floor.
``pairedeval`` is not on the package registry; its procedure is timed through
the faithful re-implementation in ``pairmetrics.reference.paired`` (same
algorithm, pure Python), on the sizes where it finishes in reasonable time and
extrapolated as n log n beyond that.

The "default" column is the plain call, ``pe.pairedeval.paired_eval(scores, labels,
min_dist)``: every usable core (``n_jobs=None``), no tuning. The three
contenders are timed in interleaved rounds, so that a load change on a shared
machine hits them alike; each figure is the median over the rounds.

    python bench/bench_paired.py [--quick] [--sizes 1e6,1e7]

``--variance`` times instead what the variance of the AUC costs:
``paired_evaluation(..., variance=True)`` against the plain counts
(``variance=False``) of the same call, for uniform, binary and 5-class ordinal
labels, on one thread and on every core. With ``--baseline DIR`` (a directory
holding another build of the package, e.g. main's ``python/pairmetrics`` with
its ``_core*.so``) both builds are timed in interleaved rounds, each in a worker
process of its own, so that the ratios of the two share the machine's load:

    python bench/bench_paired.py --variance [--baseline DIR] [--sizes 1e6,1e7] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pairmetrics as pe
from pairmetrics.reference.paired import pairedeval_procedure

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import loglog_plot, markdown_table, median_time, write_results
except ImportError:  # as a script: python bench/bench_paired.py
    from _common import loglog_plot, markdown_table, median_time, write_results

CASES = {"uniform": 0.1, "binary": 0.5}


def _data(kind: str, n: int, rng):
    scores = rng.random(n)
    labels = rng.random(n) if kind == "uniform" else (rng.random(n) < 0.3).astype(np.float64)
    return scores, labels


def numpy_pipeline(scores, labels):
    order = np.argsort(scores)
    gathered = labels[order]
    return np.sort(labels), gathered


def interleaved_medians(funcs: dict, rounds: int) -> dict:
    """Median wall time of each function, timed in turn within each round."""
    times = {name: [] for name in funcs}
    for _ in range(rounds):
        for name, func in funcs.items():
            start = time.perf_counter()
            func()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def run(quick: bool = False, sizes=None) -> dict:
    pairedeval_max = 10**4 if quick else 10**6
    if sizes is None:
        sizes = [10**3, 10**4, 10**5] if quick else [10**3, 10**4, 10**5, 10**6, 10**7]
    else:
        pairedeval_max = 0  # spot checks: the pure-Python procedure is not timed
    rng = np.random.default_rng(0)
    rows = []
    for kind, min_dist in CASES.items():
        pairedeval_rate = None  # seconds per n log2 n, from the largest size timed
        for n in sizes:
            scores, labels = _data(kind, n, rng)
            rounds = 15 if n <= 10**5 else 7 if n <= 10**6 else 5
            timed = interleaved_medians(
                {
                    "numpy": lambda: numpy_pipeline(scores, labels),
                    "one": lambda: pe.paired_evaluation(labels, scores, min_dist=min_dist, n_jobs=1, warn=False),
                    "default": lambda: pe.pairedeval.paired_eval(scores, labels, min_dist),
                },
                rounds,
            )
            t_numpy, t_one, t_all = timed["numpy"], timed["one"], timed["default"]
            if n <= pairedeval_max:
                t_pairedeval = median_time(lambda: pairedeval_procedure(scores, labels, min_dist), 1, budget=0)
                pairedeval_rate = t_pairedeval / (n * math.log2(n))
                measured = True
            else:
                t_pairedeval = pairedeval_rate * n * math.log2(n) if pairedeval_rate else math.nan
                measured = False
            rows.append(
                {
                    "labels": kind,
                    "min_dist": min_dist,
                    "n": n,
                    "numpy_sort_pipeline_s": t_numpy,
                    "pairmetrics_1_thread_s": t_one,
                    "pairmetrics_all_threads_s": t_all,  # the default call: every usable core
                    "pairedeval_s": t_pairedeval,
                    "pairedeval_measured": measured,
                }
            )
    from pairmetrics._validation import max_threads

    return {
        "benchmark": "paired",
        "quick": quick,
        "default_threads": max_threads(),
        "rows": rows,
        "simd": simd_levels(10**5 if quick else 10**6, 7 if quick else 11),
    }


def simd_levels(n: int, rounds: int) -> list[dict]:
    """One thread, each vector level this CPU has, against the numpy pipeline on the same arrays (uniform labels,
    ``min_dist`` 0.1): the counts' own cost, the level forced through the kernel's private switch."""
    from pairmetrics import _core

    scores, labels = _data("uniform", n, np.random.default_rng(1))
    funcs = {"numpy": lambda: numpy_pipeline(scores, labels)}
    for level in ["scalar", *_core.paired_simd_levels()]:
        funcs[level] = lambda level=level: _core.paired_counts(scores, labels, 0.1, False, 1, simd=level)
    timed = interleaved_medians(funcs, rounds)
    return [
        {
            "level": level,
            "n": n,
            "seconds": timed[level],
            "numpy_s": timed["numpy"],
            "ratio": timed[level] / timed["numpy"],
        }
        for level in funcs
        if level != "numpy"
    ]


def table(result: dict) -> str:
    header = [
        "labels",
        "n",
        "numpy sort pipeline",
        "pairmetrics 1 thread",
        "pairmetrics default (all cores)",
        "pairedeval",
        "vs numpy (1 thr / default)",
        "speed-up vs pairedeval",
    ]
    body = []
    for r in result["rows"]:
        mark = "" if r["pairedeval_measured"] else " (est.)"
        body.append(
            [
                r["labels"],
                f"{r['n']:.0e}",
                f"{r['numpy_sort_pipeline_s'] * 1e3:.1f} ms",
                f"{r['pairmetrics_1_thread_s'] * 1e3:.1f} ms",
                f"{r['pairmetrics_all_threads_s'] * 1e3:.1f} ms",
                f"{r['pairedeval_s']:.3g} s{mark}",
                f"{r['pairmetrics_1_thread_s'] / r['numpy_sort_pipeline_s']:.2f}x / "
                f"{r['pairmetrics_all_threads_s'] / r['numpy_sort_pipeline_s']:.2f}x",
                f"{r['pairedeval_s'] / r['pairmetrics_1_thread_s']:.0f}x{mark}",
            ]
        )
    levels = markdown_table(
        ["vector level (1 thread)", "n", "counts", "numpy pipeline", "ratio"],
        [
            [
                s["level"],
                f"{s['n']:.0e}",
                f"{s['seconds'] * 1e3:.1f} ms",
                f"{s['numpy_s'] * 1e3:.1f} ms",
                f"{s['ratio']:.2f}x",
            ]
            for s in result.get("simd", [])
        ],
    )
    return markdown_table(header, body) + "\n\n" + levels


def plot(result: dict, path) -> None:
    """Time against n, log-log, one panel per label kind (pairedeval only where it was measured)."""
    curves = {
        "numpy_sort_pipeline_s": "numpy argsort + sort (the anchor)",
        "pairmetrics_1_thread_s": "pairmetrics, 1 thread",
        "pairmetrics_all_threads_s": "pairmetrics, default call (all cores)",
        "pairedeval_s": "pairedeval's procedure (measured sizes)",
    }
    panels = {}
    for kind in CASES:
        rows = [r for r in result["rows"] if r["labels"] == kind]
        panels[f"{kind} labels"] = {
            label: (
                [r["n"] for r in rows],
                [None if key == "pairedeval_s" and not r.get("pairedeval_measured", True) else r[key] for r in rows],
            )
            for key, label in curves.items()
        }
    loglog_plot(path, panels, xlabel="n (predictions)")


VARIANCE_CASES = {"uniform": 0.1, "binary": 0.5, "ordinal5": 0.5}


def _variance_data(kind: str, n: int):
    rng = np.random.default_rng(n)
    scores = rng.random(n)
    if kind == "ordinal5":
        return scores, rng.integers(0, 5, n).astype(np.float64)
    return _data(kind, n, rng)


def _worker() -> None:
    """Times requests read from stdin, one JSON line each: {kind, n, n_jobs, variance}; answers the seconds."""
    cache = {}
    for line in sys.stdin:
        request = json.loads(line)
        key = (request["kind"], request["n"])
        if key not in cache:
            cache.clear()
            cache[key] = _variance_data(*key)
        scores, labels = cache[key]
        start = time.perf_counter()
        pe.paired_evaluation(
            labels,
            scores,
            min_dist=VARIANCE_CASES[request["kind"]],
            n_jobs=request["n_jobs"],
            variance=request["variance"],
        )
        print(time.perf_counter() - start, flush=True)


class _Build:
    """A worker process timing the pairmetrics found on `path`."""

    def __init__(self, path: Path):
        env = dict(os.environ, PYTHONPATH=str(path))
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def time(self, **request) -> float:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def run_variance(sizes=None, baseline: Path | None = None, rounds: int = 5) -> dict:
    """variance=True against variance=False, per build, label kind, size and thread count (medians
    over interleaved rounds)."""
    sizes = sizes or [10**6, 10**7]
    builds = {"this": _Build(Path(pe.__file__).resolve().parent.parent)}
    if baseline is not None:
        builds["baseline"] = _Build(baseline)
    rows = []
    try:
        for kind in VARIANCE_CASES:
            for n in sizes:
                for n_jobs in (1, None):
                    times = {(b, v): [] for b in builds for v in (False, True)}
                    for r in range(rounds):
                        for name, build in builds.items():
                            for variance in (False, True) if r % 2 else (True, False):
                                t = build.time(kind=kind, n=n, n_jobs=n_jobs, variance=variance)
                                times[name, variance].append(t)
                    for name in builds:
                        plain, full = statistics.median(times[name, False]), statistics.median(times[name, True])
                        rows.append(
                            {
                                "labels": kind,
                                "n": n,
                                "n_jobs": n_jobs,
                                "build": name,
                                "plain_s": plain,
                                "variance_s": full,
                                "ratio": full / plain,
                            }
                        )
                        print(
                            f"{kind:9s} n={n:.0e} n_jobs={n_jobs} {name:8s} plain {plain * 1e3:8.1f} ms  "
                            f"variance {full * 1e3:8.1f} ms  ratio {full / plain:.2f}",
                            flush=True,
                        )
    finally:
        for build in builds.values():
            build.close()
    from pairmetrics._validation import max_threads

    return {"benchmark": "paired_variance", "rounds": rounds, "default_threads": max_threads(), "rows": rows}


def variance_table(result: dict) -> str:
    header = ["labels", "n", "n_jobs", "build", "plain counts", "variance=True", "ratio"]
    body = [
        [
            r["labels"],
            f"{r['n']:.0e}",
            r["n_jobs"] or "all",
            r["build"],
            f"{r['plain_s'] * 1e3:.1f} ms",
            f"{r['variance_s'] * 1e3:.1f} ms",
            f"{r['ratio']:.2f}x",
        ]
        for r in result["rows"]
    ]
    return markdown_table(header, body)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    parser.add_argument("--sizes", help="comma-separated sizes, e.g. 1e6,1e7 (results not written)")
    parser.add_argument("--variance", action="store_true", help="the cost of variance=True against the plain counts")
    parser.add_argument("--baseline", type=Path, help="with --variance: a directory holding another build to compare")
    parser.add_argument("--rounds", type=int, default=5, help="with --variance: interleaved rounds per figure")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(float(x)) for x in args.sizes.split(",")] if args.sizes else None
    if args.worker:
        _worker()
        return
    if args.variance:
        result = run_variance(sizes, args.baseline, args.rounds)
        print(variance_table(result))
        print("wrote", write_results("paired_variance", result))
        return
    result = run(args.quick, sizes)
    print(table(result))
    if not args.quick and sizes is None:
        path = write_results("paired", result)
        print("wrote", path)
        try:
            plot(result, path.with_suffix(".png"))
        except ImportError:
            pass


if __name__ == "__main__":
    main()
