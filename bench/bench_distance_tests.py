"""Benchmark of the energy and MMD tests (and the cross-match test on the same data).

Three parts, all in one run:

- the goals: ``energy_test`` at 1e4 vs 1e4 cells (d = 50, 1,000 permutations)
  and ``energy_distance`` at 1e5 vs 1e5 cells, each in a fresh process that
  reports its wall time and its peak memory beyond the input;
- the peer: dcor's ``energy_distance`` and ``homogeneity.energy_test`` (an
  N x N matrix, one relabelling of it per permutation) against ours, same data,
  same run, at sizes dcor handles;
- the three tests side by side: power at a fixed mean shift (repeated draws)
  and runtime on the same data.

    python bench/bench_distance_tests.py            # goals, peer, comparison (a few minutes)
    python bench/bench_distance_tests.py --quick    # small sizes, seconds
    python bench/bench_distance_tests.py --large    # also energy_test at 1e5 vs 1e5 (about 10 minutes)
    python bench/bench_distance_tests.py --goals    # only the goals, into the existing results file

Results go to ``bench/results/distance_tests.json``; tables are printed. The
machine may be shared: wall times are noisy, ratios measured in one run less so.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import RESULTS, markdown_table, write_results
except ImportError:  # as a script: python bench/bench_distance_tests.py
    from _common import RESULTS, markdown_table, write_results

D = 50

# One goal in a child process: time and peak resident memory beyond what it held before the call.
_CHILD = """
import json, resource, sys, time
import numpy as np
import pairmetrics as pm
kind, n, n_resamples, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
x = rng.normal(size=(n, d))
y = rng.normal(size=(n, d))
y[:, 0] += 0.05
usage = resource.getrusage(resource.RUSAGE_SELF)
before, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
start = time.perf_counter()
if kind == "energy_test":
    value = pm.energy_test(x, y, n_resamples=n_resamples, rng=0).pvalue
else:
    value = pm.energy_distance(x, y)
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime - cpu,
                  "extra_mib": (usage.ru_maxrss - before) / 1024, "input_mib": 2 * x.nbytes / 2**20,
                  "value": float(value)}))
"""


def run_goal(kind: str, n: int, n_resamples: int = 0) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(n), str(n_resamples), str(D)],
        check=True,
        capture_output=True,
        text=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {"function": kind, "n_per_sample": n, "n_resamples": n_resamples, "d": D, **result}


def timed(func) -> tuple[float, object]:
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


def peer_rows(sizes: list[int], n_resamples: int) -> list[dict]:
    """dcor against pairmetrics on the same data, the statistic checked equal."""
    import dcor
    import pairmetrics as pm

    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        x, y = rng.normal(size=(n, D)), rng.normal(0.05, size=(n, D))
        ours_s, ours = timed(lambda: pm.energy_distance(x, y))
        dcor_s, theirs = timed(lambda: dcor.energy_distance(x, y))
        assert abs(ours - theirs) <= 1e-10 * abs(theirs)
        rows.append({"what": "energy_distance", "n_per_sample": n, "pairmetrics_s": ours_s, "dcor_s": dcor_s})
        ours_s, ours_test = timed(lambda: pm.energy_test(x, y, n_resamples=n_resamples, rng=0))
        dcor_s, dcor_test = timed(lambda: dcor.homogeneity.energy_test(x, y, num_resamples=n_resamples, random_state=0))
        assert abs(ours_test.statistic - float(dcor_test.statistic)) <= 1e-10 * abs(float(dcor_test.statistic))
        rows.append(
            {
                "what": f"energy_test ({n_resamples} permutations)",
                "n_per_sample": n,
                "pairmetrics_s": ours_s,
                "dcor_s": dcor_s,
            }
        )
    for row in rows:
        row["ratio"] = row["dcor_s"] / row["pairmetrics_s"]
    return rows


def compare_tests(n: int, shift: float, repeats: int, n_resamples: int, d: int = 10) -> dict:
    """Power of the three tests at one mean shift (first coordinate), and their runtime, on the same draws."""
    import pairmetrics as pm

    rng = np.random.default_rng(1)
    runs = {
        "crossmatch": lambda x, y: pm.crossmatch_test(x, y),
        "energy": lambda x, y: pm.energy_test(x, y, n_resamples=n_resamples, rng=rng),
        "mmd": lambda x, y: pm.mmd_test(x, y, n_resamples=n_resamples, rng=rng),
    }
    rejected = dict.fromkeys(runs, 0)
    seconds = dict.fromkeys(runs, 0.0)
    for _ in range(repeats):
        x, y = rng.normal(size=(n, d)), rng.normal(size=(n, d))
        y[:, 0] += shift
        for name, run in runs.items():
            elapsed, result = timed(lambda: run(x, y))
            seconds[name] += elapsed / repeats
            rejected[name] += result.pvalue <= 0.05
    return {
        "n_per_sample": n,
        "d": d,
        "shift": shift,
        "repeats": repeats,
        "n_resamples": n_resamples,
        "power": {k: v / repeats for k, v in rejected.items()},
        "seconds": seconds,
    }


def run_goals(large: bool) -> list[dict]:
    goals = [run_goal("energy_test", 10_000, 1000), run_goal("energy_distance", 100_000)]
    if large:
        goals.append(run_goal("energy_test", 100_000, 1000))
    return goals


def run(quick: bool, large: bool = False) -> dict:
    if quick:
        goals = [run_goal("energy_test", 1000, 100), run_goal("energy_distance", 5000)]
        peers = peer_rows([300], 50)
        comparisons = [compare_tests(100, 0.5, 5, 99)]
    else:
        goals = run_goals(large)
        peers = peer_rows([1000, 2000], 200)
        comparisons = [compare_tests(200, 0.35, 40, 199), compare_tests(2000, 0.12, 4, 199)]
    return {"goals": goals, "peer": peers, "comparison": comparisons}


def table(result: dict) -> str:
    goals = markdown_table(
        ["function", "cells per sample", "permutations", "seconds", "CPU seconds", "MiB beyond input", "input MiB"],
        [
            [
                g["function"],
                g["n_per_sample"],
                g["n_resamples"],
                f"{g['seconds']:.1f}",
                f"{g.get('cpu_seconds', float('nan')):.1f}",
                f"{g['extra_mib']:.0f}",
                f"{g['input_mib']:.0f}",
            ]
            for g in result["goals"]
        ],
    )
    peers = markdown_table(
        ["what", "cells per sample", "pairmetrics s", "dcor s", "dcor / pairmetrics"],
        [
            [p["what"], p["n_per_sample"], f"{p['pairmetrics_s']:.3f}", f"{p['dcor_s']:.2f}", f"{p['ratio']:.0f}"]
            for p in result["peer"]
        ],
    )
    rows = []
    for c in result["comparison"]:
        for test in ("crossmatch", "energy", "mmd"):
            rows.append([c["n_per_sample"], c["shift"], test, f"{c['power'][test]:.2f}", f"{c['seconds'][test]:.3f}"])
    comparison = markdown_table(["cells per sample", "shift", "test", "power at 0.05", "seconds per test"], rows)
    return "\n\n".join([goals, peers, comparison])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--large", action="store_true", help="also energy_test at 1e5 vs 1e5 cells")
    parser.add_argument("--goals", action="store_true", help="only the goals, into the existing results file")
    args = parser.parse_args(argv)
    if args.goals:
        result = json.loads((RESULTS / "distance_tests.json").read_text())
        result["goals"] = run_goals(args.large)
        result.pop("machine", None)
    else:
        result = run(args.quick, args.large)
    print(table(result))
    if not args.quick:
        print("wrote", write_results("distance_tests", result))


if __name__ == "__main__":
    main()
