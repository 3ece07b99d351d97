"""Paired evaluation: pairmetrics against pairedeval's procedure and numpy's sort pipeline.

The anchor is numpy doing only the sorting that any O(n log n) method needs
(``np.argsort(scores)``, gather the labels, ``np.sort(labels)``): the floor.
``pairedeval`` is not on the package registry; its procedure is timed through
the faithful re-implementation in ``pairmetrics.reference.paired`` (same
algorithm, pure Python), on the sizes where it finishes in reasonable time and
extrapolated as n log n beyond that.

    python bench/bench_paired.py [--quick]
"""

from __future__ import annotations

import argparse
import math

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


def run(quick: bool = False) -> dict:
    sizes = [10**3, 10**4, 10**5] if quick else [10**3, 10**4, 10**5, 10**6, 10**7]
    pairedeval_max = 10**4 if quick else 10**6
    rng = np.random.default_rng(0)
    rows = []
    for kind, min_dist in CASES.items():
        pairedeval_rate = None  # seconds per n log2 n, from the largest size timed
        for n in sizes:
            scores, labels = _data(kind, n, rng)
            repeats = 5 if n <= 10**5 else 3
            t_numpy = median_time(lambda: numpy_pipeline(scores, labels), repeats)
            t_one = median_time(lambda: pe.paired_eval(scores, labels, min_dist, n_jobs=1), repeats)
            t_all = median_time(lambda: pe.paired_eval(scores, labels, min_dist, n_jobs=-1), repeats)
            if n <= pairedeval_max:
                t_pairedeval = median_time(lambda: pairedeval_procedure(scores, labels, min_dist), 1, budget=0)
                pairedeval_rate = t_pairedeval / (n * math.log2(n))
                measured = True
            else:
                t_pairedeval = pairedeval_rate * n * math.log2(n)
                measured = False
            rows.append(
                {
                    "labels": kind,
                    "min_dist": min_dist,
                    "n": n,
                    "numpy_sort_pipeline_s": t_numpy,
                    "pairmetrics_1_thread_s": t_one,
                    "pairmetrics_all_threads_s": t_all,
                    "pairedeval_s": t_pairedeval,
                    "pairedeval_measured": measured,
                }
            )
    return {"benchmark": "paired", "quick": quick, "rows": rows}


def table(result: dict) -> str:
    header = ["labels", "n", "numpy sort pipeline", "pairmetrics 1 thread", "pairmetrics all threads",
              "pairedeval", "vs numpy (1 thr / all)", "speed-up vs pairedeval"]
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
    return markdown_table(header, body)


def plot(result: dict, path) -> None:
    """Time against n, log-log, one panel per label kind."""
    curves = {"numpy_sort_pipeline_s": "numpy sort pipeline", "pairmetrics_1_thread_s": "pairmetrics, 1 thread",
              "pairmetrics_all_threads_s": "pairmetrics, all threads", "pairedeval_s": "pairedeval procedure"}
    panels = {}
    for kind in CASES:
        rows = [r for r in result["rows"] if r["labels"] == kind]
        panels[f"{kind} labels"] = {label: ([r["n"] for r in rows], [r[key] for r in rows]) for key, label in curves.items()}
    loglog_plot(path, panels)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    args = parser.parse_args(argv)
    result = run(args.quick)
    print(table(result))
    if not args.quick:
        path = write_results("paired", result)
        print("wrote", path)
        try:
            plot(result, path.with_suffix(".png"))
        except ImportError:
            pass


if __name__ == "__main__":
    main()
