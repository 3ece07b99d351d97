"""``pairmetrics demo``: every capability on generated data, with timings."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

SEED = 20231


def _sizes(small: bool) -> dict[str, Any]:
    if small:
        return {
            "paired": 20_000,
            "two_vs_two": (500, 300),
            "crossmatch": (200, 300),
            "measures": 100_000,
            "multilabel": (2_000, 200),
        }
    return {
        "paired": 1_000_000,
        "two_vs_two": (10_000, 300),
        "crossmatch": (1_000, 300),
        "measures": 10_000_000,
        "multilabel": (100_000, 1_000),
    }


def _paired(rng, n):
    from . import compare_models

    labels = rng.integers(0, 5, n)  # an ordinal target, 0..4
    signal = labels + rng.normal(0, 2.0, n)
    better, worse = signal + rng.normal(0, 0.5, n), signal + rng.normal(0, 1.5, n)
    c = compare_models(labels, [better, worse], min_dist=0.5, n_jobs=-1)
    return f"{n:,} predictions, ordinal labels 0-4, min_dist 0.5", {
        "model A AUC": float(c.auc[0]),
        "model B AUC": float(c.auc[1]),
        "rankable pairs": c.n_rankable,
        "A vs B: chi-square (1 df)": c.statistic,
        "A vs B: p (DeLong's paired test)": c.pvalue,
    }


def _two_vs_two(rng, shape):
    from . import two_vs_two

    n, d = shape
    targets = rng.normal(size=(n, d)).astype(np.float32)
    predictions = (targets + rng.normal(0, 20.0, (n, d))).astype(np.float32)  # a noisy decoder
    r = two_vs_two(targets, predictions, n_jobs=-1)
    passed, total, accuracy = r.n_passed, r.n_total, r.accuracy
    return f"{n:,} predicted {d}-d vectors (float32), cosine, all pairs", {
        "pairs": total,
        "passed": passed,
        "2 vs 2 accuracy": accuracy,
    }


def _crossmatch(rng, shape):
    from . import crossmatch_test

    n, d = shape
    x = rng.normal(size=(n, d))
    y = rng.normal(size=(n, d))
    y[:, :30] += 0.3  # a small shift in 30 of the coordinates
    r = crossmatch_test(x, y, rng=rng)
    return f"two samples of {n:,} vectors in {d}-d, Euclidean, 30 coordinates shifted by 0.3", {
        "cross-matches": r.statistic,
        "expected under H0": r.expected,
        "z-score": r.zscore,
        "exact p-value": r.pvalue,
    }


def _measures(rng, n):
    from . import absolute_error, log_loss, rms_error, worst_case_error

    actual = rng.normal(size=n)
    predicted = actual + rng.normal(0, 0.3, n)
    outcome = (rng.random(n) < 0.3).astype(np.float64)
    probability = np.clip(0.3 + 0.4 * (outcome - 0.3) + rng.normal(0, 0.1, n), 0.01, 0.99)
    return f"{n:,} real-valued predictions and {n:,} probabilities", {
        "absolute error (sum)": absolute_error(actual, predicted),
        "absolute error (mean)": absolute_error(actual, predicted, average=True),
        "RMS error": rms_error(actual, predicted),
        "worst-case error": worst_case_error(actual, predicted),
        "log loss (nats)": log_loss(outcome, probability),
    }


def _multilabel(rng, shape):
    from scipy import sparse

    from . import multilabel_counts

    n, labels = shape
    truth = sparse.random(n, labels, density=0.01, format="csr", random_state=rng, data_rvs=np.ones)
    kept = truth.copy()
    kept.data = (rng.random(kept.nnz) < 0.7).astype(np.float64)  # the model finds 70% of the labels
    kept.eliminate_zeros()
    noise = sparse.random(n, labels, density=0.002, format="csr", random_state=rng, data_rvs=np.ones)
    predicted = ((kept + noise) > 0).astype(np.int8)
    r = multilabel_counts(truth.astype(np.int8), predicted, false_neg=5)
    return f"{n:,} samples x {labels:,} labels, sparse, 1% positive; false negatives cost 5", {
        "TP": r.tp,
        "FP": r.fp,
        "FN": r.fn,
        "TN": r.tn,
        "mean accuracy per sample": r.mean_sample_accuracy,
        "weighted score": r.weighted_score,
    }


STEPS = [
    ("Paired evaluation, two models compared", _paired, "paired"),
    ("2 vs 2 test", _two_vs_two, "two_vs_two"),
    ("Cross-match test", _crossmatch, "crossmatch"),
    ("Classic error measures", _measures, "measures"),
    ("Multi-label counts", _multilabel, "multilabel"),
]


def _format(value) -> str:
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def run_demo(small: bool = False, json_output: bool = False) -> dict[str, Any]:
    sizes = _sizes(small)
    report = {}
    total = time.perf_counter()
    for title, step, key in STEPS:
        rng = np.random.default_rng(SEED)
        start = time.perf_counter()
        description, values = step(rng, sizes[key])
        elapsed = time.perf_counter() - start
        report[key] = {
            "data": description,
            "seconds": elapsed,
            **{k: (v.item() if isinstance(v, np.generic) else v) for k, v in values.items()},
        }
        if not json_output:
            print(f"{title}  [{elapsed:.2f} s]")
            print(f"  data: {description}")
            width = max(map(len, values))
            for name, value in values.items():
                print(f"  {name:<{width}}  {_format(value)}")
            print()
    if json_output:
        print(json.dumps(report))
    else:
        print(f"total {time.perf_counter() - total:.1f} s")
    return report
