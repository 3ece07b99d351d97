"""Benchmark of the classic measures and the multi-label counts.

Each pairmetrics measure is timed against its anchor, the shortest numpy
expression computing the same number with no input checks (one chain of
ufuncs ending in a reduction), and against the scikit-learn equivalent, all
in the same run on the same arrays. Times are medians over repeats.

    python bench/bench_measures.py            # 1e7 elements, 1e6 x 1e4 sparse labels
    python bench/bench_measures.py --quick    # small sizes, a few seconds
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pairmetrics as pm
import scipy.sparse as sp

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import machine, markdown_table, median_time, simple_main
except ImportError:  # as a script: python bench/bench_measures.py
    from _common import machine, markdown_table, median_time, simple_main


def alternating_medians(funcs, repeats: int) -> list:
    """Median times of several functions run in turn, so that a busy machine
    slows them alike and their ratio stays meaningful."""
    for func in funcs:
        func()  # warm up: page in the arrays, load code
    times = [[] for _ in funcs]
    for _ in range(repeats):
        for func, bucket in zip(funcs, times):
            start = time.perf_counter()
            func()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(bucket) for bucket in times]


def _sklearn():
    try:
        import sklearn.metrics as metrics
    except ImportError:
        return None
    return metrics


def dense_cases(n: int, rng):
    metrics = _sklearn()
    a = rng.normal(size=n)
    b = a + rng.normal(size=n)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    labels = rng.integers(0, 10, n)
    guess = np.where(rng.random(n) < 0.8, labels, rng.integers(0, 10, n))
    y = rng.random(n) < 0.3
    p = np.clip(np.where(y, 0.7, 0.3) + rng.normal(scale=0.2, size=n), 0.01, 0.99)
    a2, b2 = a.reshape(-1, 10), b.reshape(-1, 10)

    def rmse(x, z):
        if hasattr(metrics, "root_mean_squared_error"):
            return metrics.root_mean_squared_error(x, z)
        return np.sqrt(metrics.mean_squared_error(x, z))

    cases = [
        (
            "zero_one_error (int64 labels)",
            lambda: pm.zero_one_error(labels, guess),
            lambda: np.count_nonzero(labels != guess),
            metrics and (lambda: metrics.zero_one_loss(labels, guess, normalize=False)),
        ),
        (
            "absolute_error",
            lambda: pm.absolute_error(a, b),
            lambda: np.abs(a - b).sum(),
            metrics and (lambda: metrics.mean_absolute_error(a, b)),
        ),
        (
            "absolute_error (float32)",
            lambda: pm.absolute_error(a32, b32),
            lambda: np.abs(a32 - b32).sum(),
            metrics and (lambda: metrics.mean_absolute_error(a32, b32)),
        ),
        (
            "absolute_error (n/10 x 10, per target)",
            lambda: pm.absolute_error(a2, b2, per_target=True),
            lambda: np.abs(a2 - b2).sum(axis=0),
            metrics and (lambda: metrics.mean_absolute_error(a2, b2, multioutput="raw_values")),
        ),
        (
            "sum_squares_error",
            lambda: pm.sum_squares_error(a, b),
            lambda: ((a - b) ** 2).sum(),
            metrics and (lambda: metrics.mean_squared_error(a, b)),
        ),
        (
            "rms_error",
            lambda: pm.rms_error(a, b),
            lambda: np.sqrt(((a - b) ** 2).sum() / n),
            metrics and (lambda: rmse(a, b)),
        ),
        (
            "worst_case_error",
            lambda: pm.worst_case_error(a, b),
            lambda: np.abs(a - b).max(),
            metrics and (lambda: metrics.max_error(a, b)),
        ),
        (
            "log_loss",
            lambda: pm.log_loss(y, p),
            lambda: -np.log(np.where(y, p, 1 - p)).sum() / n,
            metrics and (lambda: metrics.log_loss(y, p)),
        ),
        ("likelihood", lambda: pm.likelihood(y, p), lambda: np.log(np.where(y, p, 1 - p)).sum(), None),
    ]
    return cases


def random_labels(rng, n, n_labels, per_row):
    nnz = n * per_row
    indptr = np.arange(0, nnz + 1, per_row, dtype=np.int64)
    m = sp.csr_matrix(
        (np.ones(nnz, dtype=np.int8), rng.integers(0, n_labels, nnz, dtype=np.int32), indptr), shape=(n, n_labels)
    )
    m.sum_duplicates()
    m.data[:] = 1
    return m


def label_cases(n: int, n_labels: int, dense_shape, rng):
    metrics = _sklearn()
    per_row = max(1, round(n_labels * 0.001))
    t = random_labels(rng, n, n_labels, per_row)
    # a prediction that keeps about 70 % of the true labels and adds as many wrong ones
    keep = t.multiply(sp.csr_matrix((rng.random(t.nnz) < 0.7, t.indices, t.indptr), shape=t.shape))
    extra = random_labels(rng, n, n_labels, max(1, round(0.3 * per_row)))
    p = (keep + extra).tocsr()
    p.data[:] = 1
    p = p.astype(np.int8)

    def anchor():  # the same counts straight from scipy, no checks
        both = t.multiply(p)
        return (
            np.bincount(both.indices, minlength=n_labels),
            np.bincount(t.indices, minlength=n_labels),
            np.bincount(p.indices, minlength=n_labels),
        )

    cases = []
    if dense_shape:
        dt = rng.random(dense_shape) < 0.01
        dp = dt ^ (rng.random(dense_shape) < 0.005)

        def dense_anchor():
            both = dt & dp
            return [x.sum(axis=axis) for x in (both, dt, dp) for axis in (0, 1)]

        cases.append(
            (
                f"multilabel_counts (dense bool {dense_shape[0]:.0e} x {dense_shape[1]:.0e})",
                lambda: pm.multilabel_counts(dt, dp),
                dense_anchor,
                metrics and (lambda: metrics.multilabel_confusion_matrix(dt, dp)),
            )
        )
    name = f"multilabel_counts (sparse {n:.0e} x {n_labels:.0e}, {t.nnz:.1e} nnz)"
    cases.append(
        (
            name,
            lambda: pm.multilabel_counts(t, p),
            anchor,
            metrics and (lambda: metrics.multilabel_confusion_matrix(t, p)),
        )
    )
    return cases


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    n = 10**5 if quick else 10**7
    sparse_shape = (10**4, 10**3) if quick else (10**6, 10**4)
    dense_shape = (10**3, 10**2) if quick else (10**4, 10**3)
    repeats = 5 if quick else 11
    rows = []
    for name, ours, anchor, peer in dense_cases(n, rng) + label_cases(*sparse_shape, dense_shape, rng):
        t_ours, t_anchor = alternating_medians([ours, anchor], repeats)
        t_peer = median_time(peer, max(1, repeats // 2)) if peer else None
        rows.append(
            {
                "case": name,
                "pairmetrics_s": t_ours,
                "anchor_s": t_anchor,
                "sklearn_s": t_peer,
                "ratio_vs_anchor": t_ours / t_anchor,
                "speedup_vs_sklearn": (t_peer / t_ours) if t_peer else None,
            }
        )
    return {
        "benchmark": "measures",
        "machine": machine(),
        "n": n,
        "sparse_shape": list(sparse_shape),
        "dense_labels_shape": list(dense_shape),
        "repeats": repeats,
        "quick": quick,
        "rows": rows,
    }


def table(result: dict) -> str:
    header = ["case", "pairmetrics", "numpy anchor", "ratio vs anchor", "scikit-learn", "speed-up vs sklearn"]
    body = []
    for r in result["rows"]:
        body.append(
            [
                r["case"],
                f"{1e3 * r['pairmetrics_s']:.1f} ms",
                f"{1e3 * r['anchor_s']:.1f} ms",
                f"{r['ratio_vs_anchor']:.2f}",
                f"{1e3 * r['sklearn_s']:.1f} ms" if r["sklearn_s"] else "-",
                f"{r['speedup_vs_sklearn']:.1f}x" if r["speedup_vs_sklearn"] else "-",
            ]
        )
    m = result["machine"]
    footer = (
        f"\n{m['cpu']}, {m['cores']} cores, numpy {m['numpy']} ({m['blas']}); "
        f"n = {result['n']:.0e}, median of {result['repeats']}."
    )
    return markdown_table(header, body) + "\n" + footer


def main(argv=None) -> None:
    simple_main("measures", __doc__.splitlines()[0], run, table, argv)


if __name__ == "__main__":
    main()
