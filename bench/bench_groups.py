"""Per-group results (``groups=``) against one ungrouped call on the same samples and a pandas groupby.

Binary labels (30 % positive), uniform scores, group keys drawn uniformly.
For each size: ``roc_auc_score(..., groups=)`` and ``paired_evaluation(...,
groups=)`` (counts only) against the same call without groups on all n
samples (the anchor; goal: at most 2x), and against
``df.groupby(key).apply(sklearn.metrics.roc_auc_score)`` (goal: at least
100x faster). The pandas anchor is timed on the rows of the first groups
only when all groups would take more than about a minute, and scaled per
group (the JSON says so).

    python bench/bench_groups.py [--quick]
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pairmetrics as pm

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import markdown_table, median_time, simple_main
except ImportError:  # as a script: python bench/bench_groups.py
    from _common import markdown_table, median_time, simple_main

PANDAS_BUDGET = 60.0  # seconds the full pandas anchor may take before it is timed on a subsample


def _data(n: int, n_groups: int, rng):
    labels = (rng.random(n) < 0.3).astype(np.int8)
    scores = rng.random(n) + 0.3 * labels
    groups = rng.integers(0, n_groups, n)
    return labels, scores, groups


def _pandas_groupby(labels, scores, groups):
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    frame = pd.DataFrame({"y": labels, "s": scores, "g": groups})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return frame.groupby("g")[["y", "s"]].apply(lambda d: roc_auc_score(d["y"], d["s"]))


def _pandas_seconds(labels, scores, groups, n_groups: int) -> dict:
    """Time of the pandas anchor on all groups, or on the first groups scaled per group."""
    probe_groups = max(1, min(n_groups, 200))
    rows = groups < probe_groups
    start = time.perf_counter()
    _pandas_groupby(labels[rows], scores[rows], groups[rows])
    probe = time.perf_counter() - start
    if probe * n_groups / probe_groups <= PANDAS_BUDGET:
        seconds = median_time(lambda: _pandas_groupby(labels, scores, groups), repeats=1, budget=PANDAS_BUDGET)
        return {"seconds": seconds, "groups_timed": n_groups, "scaled": False}
    timed = min(n_groups, max(probe_groups, int(10.0 * probe_groups / max(probe, 1e-9))))  # about 10 s
    rows = groups < timed
    start = time.perf_counter()
    _pandas_groupby(labels[rows], scores[rows], groups[rows])
    seconds = (time.perf_counter() - start) * n_groups / timed
    return {"seconds": seconds, "groups_timed": timed, "scaled": True}


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    sizes = [(100_000, 1_000)] if quick else [(1_000_000, 10_000), (10_000_000, 100_000)]
    cases = []
    for n, n_groups in sizes:
        labels, scores, groups = _data(n, n_groups, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            timings = {
                "roc_auc_groups": median_time(lambda: pm.sklearn.roc_auc_score(labels, scores, groups=groups)),
                "roc_auc_one_call": median_time(lambda: pm.sklearn.roc_auc_score(labels, scores)),
                "paired_groups": median_time(
                    lambda: pm.paired_evaluation(labels, scores, groups=groups, variance=False)
                ),
                "paired_one_call": median_time(lambda: pm.paired_evaluation(labels, scores, variance=False)),
            }
        pandas = _pandas_seconds(labels, scores, groups, n_groups)
        cases.append(
            {
                "n": n,
                "n_groups": n_groups,
                "seconds": timings,
                "pandas_groupby_sklearn": pandas,
                "roc_auc_groups_vs_one_call": timings["roc_auc_groups"] / timings["roc_auc_one_call"],
                "paired_groups_vs_one_call": timings["paired_groups"] / timings["paired_one_call"],
                "pandas_vs_roc_auc_groups": pandas["seconds"] / timings["roc_auc_groups"],
            }
        )
    return {
        "description": "groups= against one ungrouped call (ratio, goal <= 2) and a pandas groupby of "
        "sklearn.metrics.roc_auc_score (speed-up, goal >= 100); default n_jobs (every usable core). "
        "Medians of up to 3 runs; the machine was shared and loaded, so compare the ratios, not the seconds.",
        "cases": cases,
    }


def table(result: dict) -> str:
    rows = [
        [
            f"{c['n']:.0e}",
            c["n_groups"],
            f"{c['seconds']['roc_auc_groups']:.3f}",
            f"{c['roc_auc_groups_vs_one_call']:.2f}x",
            f"{c['paired_groups_vs_one_call']:.2f}x",
            f"{c['pandas_vs_roc_auc_groups']:.0f}x" + (" (scaled)" if c["pandas_groupby_sklearn"]["scaled"] else ""),
        ]
        for c in result["cases"]
    ]
    header = ["n", "groups", "roc_auc groups= (s)", "vs one call", "paired groups= vs one call", "pandas / ours"]
    return markdown_table(header, rows)


if __name__ == "__main__":
    simple_main("groups", __doc__.splitlines()[0], run, table)
