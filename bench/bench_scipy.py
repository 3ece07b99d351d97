"""Benchmark of pairmetrics.scipy against scipy.stats (the same calls, the same data, one run).

The goals of the drop-ins, each timed for both libraries with the calls interleaved (median of a few runs;
SciPy's slow calls once):

- ``kendalltau``, n = 1e7 integers with ties (x in 1000 levels, y = x + noise in 1000 levels);
- ``spearmanr``, n = 1e7 continuous values;
- ``mannwhitneyu``, asymptotic, 5e6 vs 5e6 continuous values;
- ``mannwhitneyu``, exact, 400 vs 400 (40 vs 40 with ``--quick``);
- ``weightedtau``, n = 1e6 continuous values;
- ``somersd`` of continuous x and y, n = 1e6 (pairmetrics only: SciPy's contingency table would need 1e12 cells).

SciPy keeps the exact null distribution of U for the last pair of sample sizes; the benchmark clears it
before each call (a repeated call at the same sizes costs SciPy only a lookup). The results go to ``bench/results/scipy.json``; a Markdown table is printed. The machine may be shared:
the ratios (measured in the same run) matter, not the seconds.

    python bench/bench_scipy.py            # the goal sizes (a few minutes)
    python bench/bench_scipy.py --quick    # sizes / 100 (seconds)
"""

from __future__ import annotations

import sys

import numpy as np

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import markdown_table, median_time, simple_main
except ImportError:  # as a script: python bench/bench_scipy.py
    from _common import markdown_table, median_time, simple_main


def cases(scale: float) -> list[dict]:
    """Each case: a name, its n, the data and the keyword arguments of the call."""
    rng = np.random.default_rng(0)
    n = int(1e7 * scale)
    tied_x = rng.integers(0, 1000, n)
    tied_y = tied_x + rng.integers(0, 1000, n)
    xs = rng.normal(size=n)
    ys = xs + rng.normal(size=n)
    small = int(1e6 * scale)
    exact = max(40, int(400 * scale))  # SciPy's exact null distribution grows steeply with the sizes
    exact_x, exact_y = rng.normal(size=exact), rng.normal(size=exact) + 0.1
    return [
        {"call": "kendalltau", "case": "n = 1e7, ties", "n": n, "args": (tied_x, tied_y), "kwargs": {}, "goal": 5},
        {"call": "spearmanr", "case": "n = 1e7, continuous", "n": n, "args": (xs, ys), "kwargs": {}, "goal": 2},
        {
            "call": "mannwhitneyu",
            "case": "asymptotic, 5e6 vs 5e6",
            "n": n,
            "args": (xs[: n // 2], ys[n // 2 :]),
            "kwargs": {"method": "asymptotic"},
            "goal": 3,
        },
        {
            "call": "mannwhitneyu",
            "case": f"exact, {exact} vs {exact}",
            "n": 2 * exact,
            "args": (exact_x, exact_y),
            "kwargs": {"method": "exact"},
            "goal": 10,
        },
        {
            "call": "weightedtau",
            "case": "n = 1e6",
            "n": small,
            "args": (xs[:small], ys[:small]),
            "kwargs": {},
            "goal": 3,
        },
        {
            "call": "somersd",
            "case": "continuous, n = 1e6",
            "n": small,
            "args": (xs[:small], ys[:small]),
            "kwargs": {},
            "goal": None,
        },
    ]


def measure(case: dict, repeats: int) -> dict:
    import pairmetrics.scipy
    import scipy.stats

    ours = getattr(pairmetrics.scipy, case["call"])
    theirs = getattr(scipy.stats, case["call"])
    args, kwargs = case["args"], case["kwargs"]
    row = {k: case[k] for k in ("call", "case", "n", "goal")}
    result = ours(*args, **kwargs)
    row["pairmetrics_s"] = median_time(lambda: ours(*args, **kwargs), repeats)
    row["statistic"], row["pvalue"] = float(result.statistic), float(result.pvalue)
    if case["call"] == "somersd":  # SciPy builds an n x n table
        row["scipy_s"], row["ratio"] = None, None
        return row

    def call_scipy():
        # SciPy keeps the exact null distribution of the last (m, n) per thread: time a call for new sizes
        from scipy.stats import _mannwhitneyu

        if hasattr(_mannwhitneyu._mwu_state, "s"):
            del _mannwhitneyu._mwu_state.s
        return theirs(*args, **kwargs)

    reference = call_scipy()
    row["scipy_s"] = median_time(call_scipy, repeats, budget=30.0)
    row["ratio"] = row["scipy_s"] / row["pairmetrics_s"]
    row["same_statistic"] = bool(np.isclose(result.statistic, reference.statistic, rtol=1e-9, atol=0))
    row["same_pvalue"] = bool(np.isclose(result.pvalue, reference.pvalue, rtol=1e-9, atol=1e-300))
    return row


def run(quick: bool = False) -> dict:
    rows = []
    for case in cases(0.01 if quick else 1.0):
        rows.append(measure(case, repeats=3))
        print(f"  {rows[-1]['call']} {rows[-1]['case']}: {rows[-1]['ratio']}", file=sys.stderr)
    return {
        "benchmark": "scipy",
        "command": "python bench/bench_scipy.py" + (" --quick" if quick else ""),
        "rows": rows,
    }


def table(result: dict) -> str:
    rows = []
    for r in result["rows"]:
        scipy_s = "-" if r["scipy_s"] is None else f"{r['scipy_s']:.3f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.1f}x"
        goal = "<= 10 s" if r["goal"] is None else f">= {r['goal']}x"
        rows.append([r["call"], r["case"], f"{r['pairmetrics_s']:.3f}", scipy_s, ratio, goal])
    return markdown_table(["call", "case", "pairmetrics (s)", "SciPy (s)", "ratio", "goal"], rows)


def main(argv=None) -> None:
    simple_main("scipy", __doc__.splitlines()[0], run, table, argv)


if __name__ == "__main__":
    main()
