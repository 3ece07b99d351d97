"""Benchmark: networkx's ``min_weight_matching`` with and without the pairmetrics backend.

The complete graph of N Gaussian points (Euclidean distances as float edge
weights) is built once as a networkx Graph (not timed). Timed are
``nx.min_weight_matching(G)`` (networkx's own code, the anchor, one run) and
``nx.min_weight_matching(G, backend="pairmetrics")`` with networkx's
conversion cache disabled, so every run converts the graph (median of
``repeats``). Both answers are compared as exact sums of the float weights.

    python bench/bench_networkx.py            # full run (several minutes: networkx at N = 400)
    python bench/bench_networkx.py --quick    # small sizes, < 1 min

Writes bench/results/networkx.json (full runs only, unless --out is given)
and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import machine, repeat_count
except ImportError:  # as a script: python bench/bench_networkx.py
    from _common import machine, repeat_count

HERE = Path(__file__).resolve().parent


def complete_graph(n: int, d: int, seed: int):
    import networkx as nx
    from scipy.spatial.distance import cdist

    X = np.random.default_rng(seed).normal(size=(n, d))
    D = cdist(X, X)  # not timed
    iu, ju = np.triu_indices(n, 1)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(zip(iu.tolist(), ju.tolist(), D[iu, ju].tolist()))
    return G


def exact_total(G, matching) -> float:
    return float(math.fsum(G[u][v]["weight"] for u, v in matching))


def case(n: int, d: int, *, with_networkx: bool, repeats: int, seed: int) -> dict:
    import networkx as nx

    t = time.perf_counter()
    G = complete_graph(n, d, seed)
    build = time.perf_counter() - t
    row = {"N": n, "d": d, "edges": G.number_of_edges(), "build_graph_seconds": build}
    saved = nx.config.cache_converted_graphs
    nx.config.cache_converted_graphs = False  # convert on every call: conversion is timed
    try:
        times, ours = [], None
        for _ in range(repeat_count(repeats)):
            t = time.perf_counter()
            ours = nx.min_weight_matching(G, backend="pairmetrics")
            times.append(time.perf_counter() - t)
    finally:
        nx.config.cache_converted_graphs = saved
    row["pairmetrics_seconds"] = statistics.median(times)
    from pairmetrics import networkx_backend

    t = time.perf_counter()
    networkx_backend.convert_from_nx(G, edge_attrs={"weight": 1})
    row["conversion_seconds"] = time.perf_counter() - t  # the part spent reading G (once)
    row["pairmetrics_weight"] = exact_total(G, ours)
    row["pairmetrics_pairs"] = len(ours)
    if with_networkx:
        t = time.perf_counter()
        theirs = nx.min_weight_matching(G, backend="networkx")
        row["networkx_seconds"] = time.perf_counter() - t
        row["networkx_weight"] = exact_total(G, theirs)
        row["networkx_pairs"] = len(theirs)
        row["speedup"] = row["networkx_seconds"] / row["pairmetrics_seconds"]
    return row


def run(quick: bool = False) -> dict:
    import networkx as nx
    from pairmetrics import networkx_backend

    networkx_backend._register_without_entry_points()  # a source checkout has no entry points
    if quick:
        cases = [(150, 2, True, 3), (150, 50, True, 3), (1000, 2, False, 3)]
    else:
        cases = [(400, 2, True, 3), (400, 50, True, 3), (1000, 2, False, 3), (4000, 2, False, 1), (4000, 50, False, 1)]
    rows = [case(n, d, with_networkx=nx_too, repeats=r, seed=1000 + n + d) for n, d, nx_too, r in cases]
    return {"machine": machine(), "quick": quick, "networkx": nx.__version__, "rows": rows}


def table(result: dict) -> str:
    lines = [
        "| N | d | edges | networkx (s) | pairmetrics backend (s) | of which reading G (s) | speed-up | same weight |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        nx_s = f"{r['networkx_seconds']:.2f}" if "networkx_seconds" in r else "not run"
        speed = f"{r['speedup']:.0f}x" if "speedup" in r else ""
        same = ""
        if "networkx_weight" in r:
            rel = (r["pairmetrics_weight"] - r["networkx_weight"]) / r["networkx_weight"]
            same = "yes" if rel == 0 else f"{rel:+.1e}"
        lines.append(
            f"| {r['N']} | {r['d']} | {r['edges']} | {nx_s} | {r['pairmetrics_seconds']:.3f} "
            f"| {r.get('conversion_seconds', float('nan')):.3f} | {speed} | {same} |"
        )
    m = result["machine"]
    lines.append("")
    lines.append(
        f"nx.min_weight_matching on complete Euclidean graphs, conversion included (networkx {result['networkx']}). "
        f"Machine: {m['cpu']}, {m['cores']} cores."
    )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 1 min)")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    out = args.out or (None if args.quick else HERE / "results" / "networkx.json")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    return result


if __name__ == "__main__":
    main()
