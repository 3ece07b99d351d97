"""Benchmark of the 2 vs 2 test (cosine, all pairs, d = 300).

Compares, in one run and on the same data:

- ``pairmetrics.two_vs_two(y, p)``, the default call (every usable core);
- numpy's own ``Y @ P.T`` of the same shape: the product the test needs, with
  nothing else (the GEMM floor, the anchor of the ratios);
- a vectorised numpy implementation (normalise, products in row blocks,
  compare with broadcasting);
- the usual double loop over pairs with ``scipy.spatial.distance.cosine``
  (small n only).

Each timing is the median of several repeats, methods interleaved. Results go
to ``bench/results/two_vs_two.json``; a Markdown table is printed.

    python bench/bench_two_vs_two.py            # n = 1000 ... 20000
    python bench/bench_two_vs_two.py --quick    # small sizes, a few seconds
    python bench/bench_two_vs_two.py --large    # also n = 100000 float32 (minutes)

It also times sampled pairs (``pairs=3e6``, d = 30) at n = 3e4 and 3e5: the
cost must be O(pairs d) plus one O(n d) preparation, so the two should be close.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import loglog_plot, markdown_table, repeat_count, write_results
except ImportError:  # as a script: python bench/bench_two_vs_two.py
    from _common import loglog_plot, markdown_table, repeat_count, write_results

D = 300


# ---------------------------------------------------------------- peers


def blog_loop(y, p):
    """The classic double loop, one scipy cosine distance per call."""
    from scipy.spatial.distance import cosine

    n = len(y)
    passed = total = 0
    for i in range(n - 1):
        for j in range(i + 1, n):
            s = cosine(y[i], p[i]) + cosine(y[j], p[j])
            d = cosine(y[i], p[j]) + cosine(y[j], p[i])
            passed += s < d
            total += 1
    return passed, total, passed / total


def numpy_vectorised(y, p, block=1024):
    """Normalise, then compare S_ii + S_jj > S_ij + S_ji block of rows by block of rows."""
    yn = y / np.linalg.norm(y, axis=1, keepdims=True)
    pn = p / np.linalg.norm(p, axis=1, keepdims=True)
    own = np.einsum("ij,ij->i", yn, pn)
    n = len(y)
    passed = 0
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        s_ij = yn[i0:i1] @ pn[i0:].T
        s_ji = pn[i0:i1] @ yn[i0:].T
        better = (own[i0:i1, None] + own[None, i0:]) > (s_ij + s_ji)
        passed += int(np.triu(better, 1).sum())
    total = n * (n - 1) // 2
    return passed, total, passed / total


def gemm_floor(y, p):
    return y @ p.T


def pairmetrics_2v2(y, p):
    import pairmetrics

    r = pairmetrics.two_vs_two(y, p)  # the default call
    return r.n_passed, r.n_total


# ---------------------------------------------------------------- machine


def blas_info() -> dict:
    """The BLAS libraries loaded (numpy's and SciPy's, which pairmetrics uses)."""
    info = {}
    try:
        import scipy
        from pairmetrics import _core

        info["scipy"] = scipy.__version__
        info["pairmetrics_found_blas"] = dict(_core._two_vs_two_blas())
        from threadpoolctl import threadpool_info

        info["blas_libraries"] = [
            {k: lib.get(k) for k in ("filepath", "version", "architecture", "num_threads")}
            for lib in threadpool_info()
            if lib.get("user_api") == "blas"
        ]
    except Exception:  # threadpoolctl is optional
        pass
    return info


# ---------------------------------------------------------------- timing


def time_once(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def measure(n: int, dtype, repeats: int, with_loop: bool, with_numpy: bool = True) -> dict:
    rng = np.random.default_rng(n)
    y = rng.standard_normal((n, D)).astype(dtype)
    p = (y + 2.0 * rng.standard_normal((n, D))).astype(dtype)
    methods = {"pairmetrics": pairmetrics_2v2, "numpy_gemm": gemm_floor}
    if with_numpy:
        methods["numpy_vectorised"] = numpy_vectorised
    if with_loop:
        methods["blog_loop"] = blog_loop
    times = {name: [] for name in methods}
    answers = {}
    pairmetrics_2v2(y[:50], p[:50])  # warm up (BLAS lookup, threads)
    for r in range(repeat_count(repeats)):
        for name, fn in methods.items():
            if name == "blog_loop" and r > 0:
                continue  # seconds per call already; once is enough
            time.sleep(0.1)  # let BLAS worker threads of the previous call go idle
            t, out = time_once(fn, y, p)
            times[name].append(t)
            if name != "numpy_gemm":
                answers[name] = [float(v) for v in out]
            del out
    row = {"n": n, "d": D, "dtype": np.dtype(dtype).name, "times_s": times}
    row["median_s"] = {k: statistics.median(v) for k, v in times.items()}
    row["ratio_vs_gemm"] = {k: v / row["median_s"]["numpy_gemm"] for k, v in row["median_s"].items()}
    row["answers"] = answers
    return row


LARGE_SCRIPT = r"""
import json, resource, sys, time
import numpy as np
import pairmetrics
n, d = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(n)
y = rng.standard_normal((n, d), dtype=np.float32)
p = y + np.float32(2.0) * rng.standard_normal((n, d), dtype=np.float32)
t0 = time.perf_counter()
r = pairmetrics.two_vs_two(y, p)
t = time.perf_counter() - t0
# VmHWM is this process's own peak; ru_maxrss would include the parent's peak
# inherited through fork and exec.
try:
    with open("/proc/self/status") as f:
        rss = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM"))
except OSError:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
print(json.dumps({"seconds": t, "peak_rss_bytes": rss, "answer": [float(v) for v in r]}))
"""


def measure_large(n: int = 100_000) -> dict:
    """One float32 run in a fresh process, so that its peak RSS is its own."""
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", LARGE_SCRIPT, str(n), str(D)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update(n=n, d=D, dtype="float32", gflops=2.0 * n * n * D / res["seconds"] / 1e9)
    return res


def measure_sampled(sizes=(30_000, 300_000), n_pairs: int = 3_000_000, d: int = 30, repeats: int = 3) -> list:
    """Default call with sampled pairs at a fixed number of pairs, for growing n."""
    import pairmetrics

    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        y = rng.standard_normal((n, d))
        p = y + 2.0 * rng.standard_normal((n, d))
        times = []
        for _ in range(repeats):
            t, _ = time_once(lambda: pairmetrics.two_vs_two(y, p, pairs=n_pairs, rng=0))
            times.append(t)
        rows.append({"n": n, "d": d, "pairs": n_pairs, "times_s": times, "median_s": statistics.median(times)})
    return rows


# ---------------------------------------------------------------- report


def table(result: dict) -> str:
    header = [
        "n",
        "dtype",
        "pairmetrics (s)",
        "numpy `Y @ P.T` (s)",
        "pairmetrics / `Y @ P.T`",
        "vectorised numpy (s)",
        "vectorised / `Y @ P.T`",
        "blog loop (s)",
    ]
    rows = []
    for row in result["rows"]:
        m, r = row["median_s"], row["ratio_vs_gemm"]
        vec = (
            [f"{m['numpy_vectorised']:.3f}", f"{r['numpy_vectorised']:.2f}x"] if "numpy_vectorised" in m else ["-", "-"]
        )
        rows.append(
            [
                row["n"],
                row["dtype"],
                f"{m['pairmetrics']:.3f}",
                f"{m['numpy_gemm']:.3f}",
                f"{r['pairmetrics']:.2f}x",
                *vec,
                f"{m['blog_loop']:.2f}" if "blog_loop" in m else "-",
            ]
        )
    out = markdown_table(header, rows)
    sampled = result.get("sampled")
    if sampled:
        base = sampled[0]["median_s"]
        out += (
            "\n\nSampled pairs (default call): "
            + ", ".join(f"n = {r['n']}: {r['median_s']:.2f} s ({r['median_s'] / base:.2f}x)" for r in sampled)
            + f" for {sampled[0]['pairs']:.0e} pairs, d = {sampled[0]['d']}"
        )
    large = result.get("large")
    if large:
        out += (
            f"\n\nn = {large['n']}, d = {large['d']}, float32: {large['seconds']:.1f} s "
            f"({large['gflops']:.0f} GFLOP/s), peak RSS {large['peak_rss_bytes'] / 2**30:.2f} GiB"
        )
    return out


METHOD_NAMES = {
    "pairmetrics": "pairmetrics (default call)",
    "numpy_gemm": "numpy Y @ P.T (the anchor)",
    "numpy_vectorised": "vectorised numpy",
    "blog_loop": "blog loop (scipy cosine per pair)",
}


def plot(result: dict, path) -> None:
    """Median seconds against n for each method, one panel per dtype, log-log."""
    panels = {}
    for row in result["rows"]:
        curves = panels.setdefault(f"cosine, all pairs, d = {row['d']}, {row['dtype']}", {})
        for method, seconds in row["median_s"].items():
            sizes, times = curves.setdefault(METHOD_NAMES.get(method, method), ([], []))
            sizes.append(row["n"])
            times.append(seconds)
    notes = {METHOD_NAMES["blog_loop"]: "timed at the smallest n only: it is about 1000x slower"}
    loglog_plot(path, panels, xlabel="n (samples)", notes=notes)


def run(quick: bool = False, large: bool = False) -> dict:
    """Time every method; ``large`` adds one n = 100000 float32 run in a fresh process."""
    if quick:
        sizes, repeats, loop_sizes = [100, 500, 1000, 2000], 3, {100}
    else:
        sizes, repeats, loop_sizes = [200, 1000, 2000, 5000, 10000, 20000], 5, {200}
    result = {}
    if large:  # first, while this process is still small
        result["large"] = measure_large()
        print(f"  n=100000 float32: {result['large']['seconds']:.1f}s", file=sys.stderr)
    rows = []
    for dtype in (np.float32, np.float64):
        for n in sizes:
            rows.append(measure(n, dtype, repeats if n < 10000 else 3, with_loop=n in loop_sizes))
            print(f"  {row_summary(rows[-1])}", file=sys.stderr)
    if not quick:
        result["sampled"] = measure_sampled()
        print(f"  sampled: {[round(r['median_s'], 3) for r in result['sampled']]}", file=sys.stderr)
    return {
        **result,
        "benchmark": "two_vs_two",
        "command": "python bench/bench_two_vs_two.py" + (" --quick" if quick else "") + (" --large" if large else ""),
        "blas": blas_info(),
        "settings": {"d": D, "metric": "cosine", "ties": "fail", "pairs": "all", "n_jobs": None, "repeats": repeats},
        "rows": rows,
    }


def row_summary(row: dict) -> str:
    parts = ", ".join(f"{k} {v:.3f}s" for k, v in row["median_s"].items())
    return f"n={row['n']} {row['dtype']}: {parts}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    parser.add_argument("--large", action="store_true", help="also n = 100000 float32 in a fresh process")
    args = parser.parse_args(argv)
    result = run(quick=args.quick, large=args.large)
    print(table(result))
    if not args.quick:
        print("wrote", write_results("two_vs_two", result))


if __name__ == "__main__":
    main()
