"""Benchmark of pairmetrics.sklearn against scikit-learn's ranking metrics.

Each case times pairmetrics and scikit-learn in the same run, on the same
arrays, alternating (a busy machine slows both alike); the results are checked
to agree. Times are medians. One more row checks that the average precision of
float32 scores equals an exact int64-count computation.

    python bench/bench_sklearn.py            # the sizes of the goals (a few minutes)
    python bench/bench_sklearn.py --quick    # small sizes, a few seconds
"""

from __future__ import annotations

import warnings

import numpy as np
import pairmetrics.sklearn as pms

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import markdown_table, simple_main
    from .bench_dropins import alternating_medians
except ImportError:  # as a script: python bench/bench_sklearn.py
    from _common import markdown_table, simple_main
    from bench_dropins import alternating_medians


def cases(quick: bool, rng):
    """(case, n, ours, scikit-learn's) of every timed call."""
    import sklearn.metrics as skm

    scale = 100 if quick else 1
    n = 10**7 // scale
    y = rng.random(n) < 0.3
    scores = rng.random(n) + 0.3 * y
    out = [
        (f"average_precision_score, binary, n = {n:.0e}", n, "average_precision_score", (y, scores), {}),
        (f"roc_curve, n = {n:.0e}", n, "roc_curve", (y, scores), {}),
        (f"precision_recall_curve, n = {n:.0e}", n, "precision_recall_curve", (y, scores), {}),
    ]
    rows, labels = 10**5 // scale, 100
    graded = rng.integers(0, 5, (rows, labels))
    clicks = (rng.random((rows, labels)) < 0.05).astype(np.int64)
    ranking = rng.random((rows, labels))
    out += [
        (f"ndcg_score, graded gains, {rows:.0e} x {labels}", rows, "ndcg_score", (graded, ranking), {}),
        (f"ndcg_score, 5% binary gains, {rows:.0e} x {labels}", rows, "ndcg_score", (clicks, ranking), {}),
        (f"ndcg_score, k = 10, graded, {rows:.0e} x {labels}", rows, "ndcg_score", (graded, ranking), {"k": 10}),
    ]
    rows, labels = 2 * 10**4 // scale, 200
    relevant = rng.random((rows, labels)) < 0.1
    relevant[:, 0] = True  # no row without a relevant label
    label_scores = rng.random((rows, labels))
    for name in ("label_ranking_average_precision_score", "label_ranking_loss", "coverage_error"):
        out.append((f"{name}, {rows:.0e} x {labels}", rows, name, (relevant, label_scores), {}))
    rows, classes = 10**6 // scale, 100
    truth = rng.integers(0, classes, rows)
    class_scores = rng.random((rows, classes), dtype=np.float32)
    out.append(
        (
            f"top_k_accuracy_score, k = 5, {rows:.0e} x {classes} (float32)",
            rows,
            "top_k_accuracy_score",
            (truth, class_scores),
            {"k": 5},
        )
    )
    return [
        (case, size, getattr(pms, name), getattr(skm, name), args, kwargs) for case, size, name, args, kwargs in out
    ]


def _agree(ours, theirs) -> bool:
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    return all(np.allclose(a, b, rtol=1e-9, atol=1e-12) for a, b in zip(ours, theirs))


def float32_exactness(quick: bool, rng) -> dict:
    """AP of float32 scores against the exact computation from int64 counts per distinct score."""
    n = 2 * 10**7 // (100 if quick else 1)
    scores = rng.random(n, dtype=np.float32)
    y = rng.random(n) < scores
    ours = pms.average_precision_score(y, scores)
    values, inverse = np.unique(-scores, return_inverse=True)
    tp = np.cumsum(np.bincount(inverse, weights=y, minlength=values.size).astype(np.int64))
    seen = np.cumsum(np.bincount(inverse, minlength=values.size).astype(np.int64))
    exact = float(np.sum(np.diff(tp, prepend=0) * (tp / seen), dtype=np.longdouble) / tp[-1])
    return {
        "case": f"average_precision_score of float32 scores, n = {n:.0e}",
        "n": n,
        "pairmetrics": ours,
        "exact_int64_counts": exact,
        "abs_difference": abs(ours - exact),
    }


def run(quick: bool = False, repeats: int = 2) -> dict:
    rng = np.random.default_rng(0)
    rows = []
    for case, n, ours, theirs, args, kwargs in cases(quick, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (t_ours, t_peer), (c_ours, c_peer), results = alternating_medians(
                [lambda: ours(*args, **kwargs), lambda: theirs(*args, **kwargs)], repeats
            )
        rows.append(
            {
                "case": case,
                "n": n,
                "pairmetrics_s": t_ours,
                "sklearn_s": t_peer,
                "speedup": t_peer / t_ours,
                "pairmetrics_cpu_s": c_ours,
                "sklearn_cpu_s": c_peer,
                "agree": _agree(*results),
            }
        )
        print(f"{case}: {t_ours:.3f} s against {t_peer:.3f} s ({t_peer / t_ours:.1f}x)", flush=True)
    return {
        "benchmark": "sklearn",
        "quick": quick,
        "repeats": repeats,
        "rows": rows,
        "float32": float32_exactness(quick, rng),
    }


def table(result: dict) -> str:
    body = [
        [r["case"], f"{r['pairmetrics_s']:.3f}", f"{r['sklearn_s']:.3f}", f"{r['speedup']:.1f}x", r["agree"]]
        for r in result["rows"]
    ]
    f32 = result["float32"]
    return (
        markdown_table(["case", "pairmetrics (s)", "scikit-learn (s)", "speed-up", "same result"], body)
        + f"\n\n{f32['case']}: |ours - exact int64 counts| = {f32['abs_difference']:.1e}"
    )


if __name__ == "__main__":
    simple_main("sklearn", __doc__.splitlines()[0], run, table)
