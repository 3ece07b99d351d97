"""Benchmark: exact minimum-weight perfect matching and the cross-match test.

pairmetrics against PyMatching (anchor), rustworkx ``max_weight_matching``
and networkx ``min_weight_matching`` on the complete graph of Gaussian points
(Euclidean distances), measured in one run on this machine, plus the
cross-match resampling protocol. Each timing is the median of ``repeats``
runs; every peer's matching cost is compared with ours.

    python bench/bench_matching.py            # full run (several minutes)
    python bench/bench_matching.py --quick    # small sizes, < 20 s
    python bench/bench_matching.py --scaling --max-n 100000   # scaling table only
    python bench/bench_matching.py --scaling --sizes 200000 --kinds gaussian   # chosen sizes
    python bench/bench_matching.py --scale    # N = 1e5 ... 1e6, phase times (one big run at a time!)
    python bench/bench_matching.py --cosine   # crossmatch_test, metric="cosine" against "euclidean"

The scaling table times ``min_weight_perfect_matching(points=X)`` (the
default call: every usable core) and ``verify()`` on Gaussian, clustered
(30 Gaussians in 50-D) and hard inputs (1-D, heavy tails, many duplicated
points) for N = 1e3 ... --max-n, each size in a fresh process so that its
peak RSS is its own, and fits the exponent of time against N. CPU seconds
are recorded beside wall seconds: on a shared machine the wall time
measures the load as much as the code.

The cosine mode times ``crossmatch_test(ctrl, stim, metric=...)`` on
20,000 x 50 points (two samples of 10,000) for "cosine" and its anchor
"euclidean", alternating, each call in a fresh process (peak RSS of the
call above the process's RSS before it), and reports medians and ratios
(bench/results/matching_cosine.json).

Writes bench/results/matching.json (full runs only, unless --out is given)
and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pairmetrics as pm

try:
    from pairmetrics._distances import euclidean_matrix
except ImportError:  # a build before the distance inputs had their own module
    from pairmetrics._matching import _euclidean_matrix as euclidean_matrix

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import loglog_plot, machine, repeat_count
except ImportError:  # as a script: python bench/bench_matching.py
    from _common import loglog_plot, machine, repeat_count

HERE = Path(__file__).resolve().parent


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeat_count(repeats)):
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
    H = sp.csc_matrix(
        (np.ones(2 * m, dtype=np.uint8), (np.concatenate([iu, ju]), np.tile(np.arange(m), 2))), shape=(n, m)
    )
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
    D = euclidean_matrix(X)
    rows = []
    t, res = timed(lambda: pm.min_weight_perfect_matching(points=X), repeats)
    ours = res.cost
    tv, ok = timed(lambda: res.verify(), 1)
    rows.append(
        {
            "case": "complete graph",
            "N": n,
            "d": d,
            "tool": "pairmetrics (points)",
            "seconds": t,
            "cost": ours,
            "verified": bool(ok),
            "verify_seconds": tv,
            "verify_over_solve": tv / t,
        }
    )
    t, res = timed(lambda: pm.min_weight_perfect_matching(D), repeats)
    rows.append(
        {"case": "complete graph", "N": n, "d": d, "tool": "pairmetrics (matrix D)", "seconds": t, "cost": res.cost}
    )
    runners = {"pymatching": run_pymatching, "rustworkx": run_rustworkx, "networkx": run_networkx}
    for name in peers:
        slow = name != "pymatching" or n >= 2000  # single runs for the slow peers
        try:
            t, cost = timed(lambda: runners[name](D), 1 if slow else repeats)
        except ImportError:  # an optional peer that is not installed
            continue
        rows.append({"case": "complete graph", "N": n, "d": d, "tool": name, "seconds": t, "cost": cost})
    for row in rows:
        row["cost_rel_diff"] = (row["cost"] - ours) / ours
    return rows


def resample_case(pool: int, sample_size: int, n_repeats: int, d: int, repeats: int, rng) -> list:
    x = rng.normal(size=(pool, d))
    y = rng.normal(size=(pool, d)) + 0.05
    rows = []
    for jobs in (1, -1):
        t, res = timed(
            lambda: pm.crossmatch_resample(x, y, sample_size=sample_size, n_resamples=n_repeats, rng=0, n_jobs=jobs),
            repeats,
        )
        rows.append(
            {
                "case": f"crossmatch_resample {n_repeats} x ({sample_size}+{sample_size})",
                "N": 2 * sample_size,
                "d": d,
                "tool": f"pairmetrics (n_jobs={jobs})",
                "seconds": t,
                "mean_a1": res.statistic,
                "mean_pval": res.pvalue,
            }
        )
    return rows


# ---------------------------------------------------------------- scaling

SCALING_KINDS = ("gaussian", "clustered", "1-d", "heavy tails", "duplicates")
SCALE_SIZES = (100000, 200000, 500000, 1000000)  # --scale: toward the N = 1e6 goal
SCALE_KINDS = ("gaussian", "clustered")


def scaling_points(kind: str, n: int, seed: int = 0) -> np.ndarray:
    """The inputs of the scaling table (d = 50 unless the kind says otherwise)."""
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        return rng.normal(size=(n, 50))
    if kind == "clustered":  # 30 Gaussians in 50-D, like cells in PCA space
        centres = rng.normal(size=(30, 50)) * 3.0
        return centres[rng.integers(0, 30, n)] + rng.normal(size=(n, 50))
    if kind == "1-d":
        return rng.normal(size=(n, 1))
    if kind == "heavy tails":
        return rng.standard_cauchy(size=(n, 2))
    if kind == "duplicates":  # about n / 10 distinct points, each repeated
        return rng.normal(size=(max(2, n // 10), 50))[rng.integers(0, max(2, n // 10), n)]
    raise ValueError(kind)


# Wall seconds per phase, as the solver's stats name them (verify: the bench's own clock).
PHASES = (
    "seconds_neighbours",
    "seconds_first_solve",
    "seconds_solve",
    "seconds_pricing",
    "seconds_screen",
    "seconds_verify",
)


def scaling_case(kind: str, n: int, verify: bool = True) -> dict:
    """One size in this process: wall and CPU seconds of the solve, of each phase and of verify; peak RSS (up to the
    end of the solve, and of the whole run)."""
    X = scaling_points(kind, n)
    cpu0, t0 = time.process_time(), time.perf_counter()
    res = pm.min_weight_perfect_matching(points=X)
    solve, solve_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    row = {
        "kind": kind,
        "N": n,
        "d": X.shape[1],
        "seconds": solve,
        "cpu_seconds": solve_cpu,
        "cost": res.cost,
        "stats": {**res.stats, **(res._timings or {})},
        "load_average_before": os.getloadavg()[0],
        "solve_peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if verify:
        cpu0, t0 = time.process_time(), time.perf_counter()
        row["verified"] = bool(res.verify())
        row["verify_seconds"] = time.perf_counter() - t0
        row["verify_cpu_seconds"] = time.process_time() - cpu0
        row["stats"]["seconds_verify"] = row["verify_seconds"]
    row["phases"] = {k: row["stats"][k] for k in PHASES if k in row["stats"]}
    row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def phase_line(row: dict) -> str:
    """One run's wall seconds per phase, for the console."""
    names = {
        "seconds_neighbours": "neighbours",
        "seconds_first_solve": "first solve",
        "seconds_solve": "solves",
        "seconds_pricing": "pricing",
        "seconds_screen": "(screens",
        "seconds_verify": "verify",
    }
    parts = [f"{names[k]} {v:.2f}" + (")" if k == "seconds_screen" else "") for k, v in row["phases"].items()]
    return (
        "      " + ", ".join(parts) + f"; rounds {row['stats'].get('rounds')}, extra pairs "
        f"{row['stats'].get('extra_pairs')}, screens {row['stats'].get('screens')}+{row['stats'].get('partial_screens')}"
    )


def scaling_case_subprocess(kind: str, n: int, verify: bool = True) -> dict:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_matching as b; "
        "print(json.dumps(b.scaling_case(sys.argv[2], int(sys.argv[3]), sys.argv[4] == '1')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(HERE), kind, str(n), "1" if verify else "0"],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ.copy(),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- cosine against euclidean

COSINE_SCRIPT = """
import json, sys, time
import numpy as np
import pairmetrics as pm

def rss(field):
    with open("/proc/self/status") as f:  # this process's own figures (not the parent's)
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))

n, d, metric = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
ctrl = rng.normal(size=(n // 2, d))
stim = rng.normal(size=(n - n // 2, d))
stim[:, :5] += 0.3
before = rss("VmRSS:")
cpu, t = time.process_time(), time.perf_counter()
r = pm.crossmatch_test(ctrl, stim, metric=metric)
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
print(json.dumps({"metric": metric, "seconds": seconds, "cpu_seconds": cpu, "a1": int(r.statistic), "pvalue": r.pvalue,
                  "extra_peak_bytes": rss("VmHWM:") - before, "peak_rss_bytes": rss("VmHWM:")}))
"""


def cosine_call(n: int, d: int, metric: str) -> dict:
    """One crossmatch_test in a fresh process, so that its peak RSS is its own."""
    out = subprocess.run(
        [sys.executable, "-c", COSINE_SCRIPT, str(n), str(d), metric],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ.copy(),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_cosine(n: int = 20000, d: int = 50, repeats: int = 3) -> dict:
    """crossmatch_test with metric="cosine" against the anchor "euclidean", alternating calls."""
    runs = []
    for _ in range(repeats):
        for metric in ("euclidean", "cosine"):
            runs.append(cosine_call(n, d, metric))
            print(
                f"  {metric:9s} {runs[-1]['seconds']:7.2f} s (cpu {runs[-1]['cpu_seconds']:7.2f}) "
                f"extra peak {runs[-1]['extra_peak_bytes'] / 2**20:7.0f} MiB",
                flush=True,
            )
    med = {
        m: {
            k: statistics.median(r[k] for r in runs if r["metric"] == m)
            for k in ("seconds", "cpu_seconds", "extra_peak_bytes", "peak_rss_bytes")
        }
        for m in ("euclidean", "cosine")
    }
    return {
        "machine": machine(),
        "N": n,
        "d": d,
        "repeats": repeats,
        "runs": runs,
        "median": med,
        "time_ratio": med["cosine"]["seconds"] / med["euclidean"]["seconds"],
        "cpu_ratio": med["cosine"]["cpu_seconds"] / med["euclidean"]["cpu_seconds"],
        "extra_peak_bytes_over_euclidean": med["cosine"]["extra_peak_bytes"] - med["euclidean"]["extra_peak_bytes"],
        "load_average": os.getloadavg(),
    }


def cosine_markdown(result: dict) -> str:
    lines = [
        "| metric | median seconds | median CPU seconds | extra peak RSS of the call (MiB) |",
        "|---|---:|---:|---:|",
    ]
    for metric, m in result["median"].items():
        mib = m["extra_peak_bytes"] / 2**20
        lines.append(f"| {metric} | {m['seconds']:.2f} | {m['cpu_seconds']:.2f} | {mib:.0f} |")
    lines.append("")
    lines.append(
        f"N = {result['N']}, d = {result['d']}, {result['repeats']} alternating runs each: cosine / euclidean "
        f"time {result['time_ratio']:.2f}x (CPU {result['cpu_ratio']:.2f}x), extra peak memory "
        f"{result['extra_peak_bytes_over_euclidean'] / 2**20:+.0f} MiB; load average "
        f"{result['load_average'][0]:.1f} at the end."
    )
    return "\n".join(lines)


def fitted_exponent(rows: list) -> float | None:
    """Slope of log(seconds) against log(N) over the sizes >= 4000 (least squares)."""
    pts = [(r["N"], r["seconds"]) for r in rows if r["N"] >= 4000] or [(r["N"], r["seconds"]) for r in rows]
    if len(pts) < 2:
        return None
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def run_scaling(sizes, kinds=SCALING_KINDS, in_process: bool = False, on_row=None) -> dict:
    """Each kind at each size; ``on_row(partial result)`` after every run (long runs keep what they measured)."""
    rows, exponents = [], {}
    for kind in kinds:
        mine = []
        for n in sizes:
            row = scaling_case(kind, n) if in_process else scaling_case_subprocess(kind, n)
            print(
                f"  {kind:12s} N={n:>7d} solve {row['seconds']:8.2f} s (cpu {row['cpu_seconds']:8.2f}) "
                f"verify {row.get('verify_seconds', float('nan')):7.2f} s  rss {row.get('solve_peak_rss_mib', float('nan')):7.0f} "
                f"(with verify {row['peak_rss_mib']:7.0f}) MiB",
                flush=True,
            )
            print(phase_line(row), flush=True)
            mine.append(row)
            if on_row is not None:
                on_row({"rows": rows + mine, "exponents": exponents})
        exponents[kind] = fitted_exponent(mine)
        rows += mine
    return {"rows": rows, "exponents": exponents}


def merged_scaling(path: Path, partial: dict) -> dict:
    """The scaling rows already at ``path``, with those of ``partial`` replacing the same kind and size."""
    old = json.loads(path.read_text())["scaling"]["rows"] if path.exists() else []
    fresh = {(r["kind"], r["N"]) for r in partial["rows"]}
    rows = sorted(
        [r for r in old if (r["kind"], r["N"]) not in fresh] + partial["rows"], key=lambda r: (r["kind"], r["N"])
    )
    return {
        "rows": rows,
        "exponents": {k: fitted_exponent([r for r in rows if r["kind"] == k]) for k in {r["kind"] for r in rows}},
    }


def scaling_markdown(result: dict) -> str:
    lines = [
        "| input | N | d | seconds | CPU seconds | neighbours | solves | pricing | verify | verify / solve "
        "| peak RSS to the solve's end (MiB) | with verify (MiB) | pricing rounds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    nan = float("nan")
    for r in result["rows"]:
        ratio = r["verify_seconds"] / r["seconds"] if r.get("verify_seconds") else nan
        s = r["stats"]
        lines.append(
            f"| {r['kind']} | {r['N']} | {r['d']} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | "
            f"{s.get('seconds_neighbours', nan):.2f} | {s.get('seconds_solve', nan):.2f} | "
            f"{s.get('seconds_pricing', nan):.2f} | {r.get('verify_seconds', nan):.2f} | "
            f"{ratio:.2f} | {r.get('solve_peak_rss_mib', nan):.0f} | {r['peak_rss_mib']:.0f} | "
            f"{s.get('rounds', '')} |"
        )
    lines.append("")
    lines.append(
        "Fitted exponent of seconds against N (sizes >= 4000): "
        + ", ".join(f"{k} {v:.2f}" for k, v in result["exponents"].items() if v is not None)
    )
    return "\n".join(lines)


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(20240601)
    rows = []
    if quick:
        rows += matching_case(150, 50, ("pymatching", "rustworkx", "networkx"), 3, rng)
        rows += matching_case(1000, 50, ("pymatching",), 3, rng)
        rows += resample_case(400, 200, 40, 300, 1, rng)
        scaling = run_scaling((1000, 2000), in_process=True)  # RSS: of the whole run
    else:
        rows += matching_case(300, 50, ("pymatching", "rustworkx", "networkx"), 3, rng)
        rows += matching_case(1000, 50, ("pymatching", "rustworkx"), 3, rng)
        rows += matching_case(2000, 50, ("pymatching",), 3, rng)
        rows += matching_case(4000, 50, (), 3, rng)  # PyMatching needs > 5 min here
        rows += matching_case(10000, 300, (), 1, rng)
        rows += resample_case(2000, 200, 500, 300, 3, rng)
        scaling = run_scaling((1000, 2000, 4000, 8000, 16000))
    # Ratios against the anchor (PyMatching) measured in the same run.
    anchors = {(r["N"], r["d"]): r["seconds"] for r in rows if r["tool"] == "pymatching"}
    for r in rows:
        a = anchors.get((r["N"], r["d"])) if r["case"] == "complete graph" else None
        r["speedup_vs_pymatching"] = (a / r["seconds"]) if a else None
    return {"machine": machine(), "quick": quick, "rows": rows, "scaling": scaling}


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
    if result.get("scaling"):
        lines.append("")
        lines.append(scaling_markdown(result["scaling"]))
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
    notes = {"networkx": "timed at the smallest N only: 29 s there"}
    loglog_plot(
        path,
        {"minimum-weight perfect matching, complete graph, Gaussian points, d = 50": curves},
        xlabel="N (points)",
        notes=notes,
    )


def write_json(path: Path | None, result: dict) -> None:
    """The results as JSON at ``path`` (nothing when None)."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 20 s)")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    parser.add_argument("--scaling", action="store_true", help="only the scaling table (N = 1e3 ... --max-n)")
    parser.add_argument(
        "--scale",
        action="store_true",
        help="N = 1e5, 2e5, 5e5, 1e6 (gaussian, clustered; --sizes/--kinds to change), phase times "
        "and peak RSS per run, written to bench/results/matching_scale.json",
    )
    parser.add_argument("--max-n", type=int, default=16000, help="largest N of the scaling table")
    parser.add_argument("--kinds", default=",".join(SCALING_KINDS), help="comma-separated inputs of the scaling table")
    parser.add_argument(
        "--sizes", default=None, help="comma-separated N of the scaling table (instead of 1e3 ... --max-n), e.g. 200000"
    )
    parser.add_argument(
        "--cosine",
        action="store_true",
        help="only crossmatch_test with metric='cosine' against 'euclidean' (20,000 x 50)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs of each metric in --cosine")
    args = parser.parse_args(argv)
    if args.cosine:
        result = run_cosine(n=2000 if args.quick else 20000, repeats=args.repeats)
        write_json(args.out or (None if args.quick else HERE / "results" / "matching_cosine.json"), result)
        print(cosine_markdown(result))
        return result
    if args.scale:
        sizes = [int(float(n)) for n in args.sizes.split(",")] if args.sizes else list(SCALE_SIZES)
        kinds = tuple(args.kinds.split(",")) if args.kinds != ",".join(SCALING_KINDS) else SCALE_KINDS
        path = args.out or HERE / "results" / "matching_scale.json"
        header = {
            "machine": machine(),
            "note": "one run per row; load_average_before: the 1-minute load average "
            "before the run (the run itself adds about 2 on this 2-core machine)",
        }

        def save(partial):  # each row keeps its own load average; other sizes and kinds in the file stay
            write_json(path, {**header, "scaling": merged_scaling(path, partial)})

        result = {**header, "scaling": run_scaling(sizes, kinds, on_row=save)}
        save(result["scaling"])
        print(scaling_markdown(result["scaling"]))
        return result
    if args.scaling:
        if args.sizes:
            sizes = [int(float(n)) for n in args.sizes.split(",")]
        else:
            sizes = [n for n in (1000, 2000, 4000, 8000, 16000, 20000, 32000, 64000, 100000, 200000) if n <= args.max_n]
        result = {"machine": machine(), "scaling": run_scaling(sizes, tuple(args.kinds.split(",")))}
        write_json(args.out or HERE / "results" / "matching_scaling.json", result)
        print(scaling_markdown(result["scaling"]))
        return result
    result = run(quick=args.quick)
    write_json(args.out or (None if args.quick else HERE / "results" / "matching.json"), result)
    print(markdown(result))
    return result


if __name__ == "__main__":
    main()
