"""Benchmark: exact minimum-weight perfect matching and the cross-match test.

pairmetrics against PyMatching (anchor), rustworkx ``max_weight_matching``
and networkx ``min_weight_matching`` on the complete graph of Gaussian points
(Euclidean distances), measured in one run on this machine, plus the
cross-match resampling protocol. Each timing is the median of ``repeats``
runs; every peer's matching cost is compared with ours.

    python bench/bench_matching.py            # full run (several minutes)
    python bench/bench_matching.py --quick    # small sizes, < 20 s

Writes bench/results/matching.json (full runs only, unless --out is given)
and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

import pairmetrics as pm
from pairmetrics._matching import _euclidean_distances

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import loglog_plot, machine
except ImportError:  # as a script: python bench/bench_matching.py
    from _common import loglog_plot, machine

HERE = Path(__file__).resolve().parent


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def pairs_cost(D, pairs) -> float:
    pairs = np.asarray(pairs)
    return float(D[pairs[:, 0], pairs[:, 1]].sum())


def run_pymatching(D):
    import pymatching
    import scipy.sparse as sp

    n = D.shape[0]
    iu, ju = np.triu_indices(n, 1)
    m = iu.size
    H = sp.csc_matrix((np.ones(2 * m, dtype=np.uint8), (np.concatenate([iu, ju]), np.tile(np.arange(m), 2))), shape=(n, m))
    matching = pymatching.Matching.from_check_matrix(H, weights=D[iu, ju])
    pairs = matching.decode_to_matched_dets_array(np.ones(n, dtype=np.uint8))
    return pairs_cost(D, pairs)


def run_rustworkx(D):
    import rustworkx as rx

    n = D.shape[0]
    iu, ju = np.triu_indices(n, 1)
    # Integer weights (rustworkx needs int): maximise C - d at 1e-9 of max(D).
    scale = 1e9 / max(float(D.max()), 1e-300)
    w = (np.rint((D.max() - D[iu, ju]) * scale) + 1).astype(np.int64)
    g = rx.PyGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(list(zip(iu.tolist(), ju.tolist(), w.tolist())))
    pairs = list(rx.max_weight_matching(g, max_cardinality=True, weight_fn=lambda e: e))
    return pairs_cost(D, pairs)


def run_networkx(D):
    import networkx as nx

    n = D.shape[0]
    g = nx.Graph()
    iu, ju = np.triu_indices(n, 1)
    g.add_weighted_edges_from(zip(iu.tolist(), ju.tolist(), D[iu, ju].tolist()))
    return pairs_cost(D, list(nx.min_weight_matching(g)))


def matching_case(n: int, d: int, peers: tuple, repeats: int, rng) -> list:
    X = rng.normal(size=(n, d))
    D = _euclidean_distances(X)
    rows = []
    t, res = timed(lambda: pm.min_weight_perfect_matching(points=X), repeats)
    ours = res.cost
    rows.append({"case": "complete graph", "N": n, "d": d, "tool": "pairmetrics (points)", "seconds": t, "cost": ours,
                 "verified": bool(res.verify()) if n <= 4000 else None})  # fmt: skip
    t, res = timed(lambda: pm.min_weight_perfect_matching(D), repeats)
    rows.append({"case": "complete graph", "N": n, "d": d, "tool": "pairmetrics (matrix D)", "seconds": t, "cost": res.cost})
    runners = {"pymatching": run_pymatching, "rustworkx": run_rustworkx, "networkx": run_networkx}
    for name in peers:
        slow = name != "pymatching" or n >= 2000  # single runs for the slow peers
        t, cost = timed(lambda: runners[name](D), 1 if slow else repeats)
        rows.append({"case": "complete graph", "N": n, "d": d, "tool": name, "seconds": t, "cost": cost})
    for row in rows:
        row["cost_rel_diff"] = (row["cost"] - ours) / ours
    return rows


def resample_case(pool: int, sample_size: int, n_repeats: int, d: int, repeats: int, rng) -> list:
    x = rng.normal(size=(pool, d))
    y = rng.normal(size=(pool, d)) + 0.05
    rows = []
    for jobs in (1, -1):
        t, res = timed(lambda: pm.crossmatch_resample(x, y, sample_size, n_repeats, rng=0, n_jobs=jobs), repeats)
        rows.append({"case": f"crossmatch_resample {n_repeats} x ({sample_size}+{sample_size})", "N": 2 * sample_size,
                     "d": d, "tool": f"pairmetrics (n_jobs={jobs})", "seconds": t, "mean_a1": res.mean_a1,
                     "mean_pval": res.mean_pval})  # fmt: skip
    return rows


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(20240601)
    rows = []
    if quick:
        rows += matching_case(150, 50, ("pymatching", "rustworkx", "networkx"), 3, rng)
        rows += matching_case(1000, 50, ("pymatching",), 3, rng)
        rows += resample_case(400, 200, 40, 300, 1, rng)
    else:
        rows += matching_case(300, 50, ("pymatching", "rustworkx", "networkx"), 3, rng)
        rows += matching_case(1000, 50, ("pymatching", "rustworkx"), 3, rng)
        rows += matching_case(2000, 50, ("pymatching",), 3, rng)
        rows += matching_case(4000, 50, (), 3, rng)  # PyMatching needs > 5 min here
        rows += matching_case(10000, 300, (), 1, rng)
        rows += resample_case(2000, 200, 500, 300, 3, rng)
    # Ratios against the anchor (PyMatching) measured in the same run.
    anchors = {(r["N"], r["d"]): r["seconds"] for r in rows if r["tool"] == "pymatching"}
    for r in rows:
        a = anchors.get((r["N"], r["d"])) if r["case"] == "complete graph" else None
        r["speedup_vs_pymatching"] = (a / r["seconds"]) if a else None
    return {"machine": machine(), "quick": quick, "rows": rows}


def markdown(result: dict) -> str:
    lines = [
        "| case | N | d | tool | seconds | vs PyMatching | cost vs pairmetrics |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in result["rows"]:
        speed = f"{r['speedup_vs_pymatching']:.3g}x" if r.get("speedup_vs_pymatching") else ""
        cost = f"{r['cost_rel_diff']:+.1e}" if "cost_rel_diff" in r else f"mean a1 {r['mean_a1']:.2f}"
        lines.append(f"| {r['case']} | {r['N']} | {r['d']} | {r['tool']} | {r['seconds']:.3f} | {speed} | {cost} |")
    m = result["machine"]
    lines.append("")
    lines.append(f"Machine: {m['cpu']}, {m['cores']} cores, numpy {m['numpy']} with {m['blas']}.")
    return "\n".join(lines)


table = markdown  # the name the suite runner looks for


def plot(result: dict, path) -> None:
    """Seconds against N for each tool on the complete graphs, log-log."""
    curves = {}
    for row in result["rows"]:
        if row["case"] == "complete graph" and row["d"] == 50:
            sizes, seconds = curves.setdefault(row["tool"], ([], []))
            sizes.append(row["N"])
            seconds.append(row["seconds"])
    loglog_plot(path, {"complete graph, Gaussian points, d = 50": curves}, xlabel="N")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 20 s)")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    out = args.out or (None if args.quick else HERE / "results" / "matching.json")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    return result


if __name__ == "__main__":
    main()
