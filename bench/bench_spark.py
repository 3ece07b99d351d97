"""Spark: the exact evaluator of pairmetrics.spark against MLlib's, in one run on a local Spark.

The data are generated on the executors (``spark.range`` and ``rand``: a 10% positive label and a skewed score
near 0, continuous and rounded to 1e-4 for ties), cached, and evaluated by

* ``pairmetrics.spark.BinaryClassificationEvaluator`` (exact),
* MLlib's ``BinaryClassificationEvaluator`` with its default ``numBins=1000`` (binned) and ``numBins=0``
  (exact),

areaUnderROC, each once untimed (Python workers and the JIT warm up; reported as "cold") and once timed; then
the per-group AUC of ``--groups`` groups (``roc_auc_score(..., groups_col=...)``, written to a noop sink so
that it stays on the executors). The driver's memory growth is the peak resident set of this Python process
during our timed call, sampled every 10 ms, minus its resident set before. ``--binning`` prints the table of
binning errors of docs/guide/spark.rst instead (numpy only).

    python bench/bench_spark.py [--rows 2e6] [--partitions 16] [--groups 1e4] [--master local[2]] [--binning]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import markdown_table, write_results
    from .bench_dask import GIB, PeakRSS
except ImportError:  # as a script: python bench/bench_spark.py
    from _common import markdown_table, write_results
    from bench_dask import GIB, PeakRSS


def _timed(call):
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def _case(df, column: str) -> dict:
    """Ours and MLlib's evaluators on one score column; each runs once untimed first (warm Python workers and
    JIT), then timed; the driver's growth is measured over our timed call."""
    from pairmetrics import spark as pms
    from pyspark.ml.evaluation import BinaryClassificationEvaluator as MLlib

    evaluators = {
        "ours": pms.BinaryClassificationEvaluator(rawPredictionCol=column),
        "mllib_binned": MLlib(rawPredictionCol=column),
        "mllib_exact": MLlib(rawPredictionCol=column, numBins=0),
    }
    values, seconds, cold = {}, {}, {}
    for name, evaluator in evaluators.items():
        _, cold[name] = _timed(lambda: evaluator.evaluate(df))
        if name == "ours":
            with PeakRSS() as rss:
                values[name], seconds[name] = _timed(lambda: evaluator.evaluate(df))
        else:
            values[name], seconds[name] = _timed(lambda: evaluator.evaluate(df))
    return {
        "auc": values,
        "binned_error": values["mllib_binned"] - values["mllib_exact"],
        "ours_minus_mllib_exact": values["ours"] - values["mllib_exact"],
        "seconds": seconds,
        "cold_seconds": cold,
        "ratio_to_mllib_binned": seconds["ours"] / seconds["mllib_binned"],
        "ratio_to_mllib_exact": seconds["ours"] / seconds["mllib_exact"],
        "driver_growth_gib": rss.growth / GIB,
    }


def run_spark(rows: int, partitions: int, groups: int, master: str) -> dict:
    from pairmetrics import spark as pms
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master(master)
        .appName("bench-spark")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        label = (F.rand(1) < 0.1).cast("double")
        df = spark.range(0, rows, numPartitions=partitions).select(
            label.alias("label"), (F.col("id") % groups).alias("group"), F.rand(2).alias("u")
        )
        # skewed scores near 0, shifted up for positives: continuous, and rounded to 1e-4 (ties)
        df = df.withColumn("continuous", F.pow(F.col("u"), F.lit(6.0)) * 0.5 + F.col("label") * F.rand(3) * 0.3)
        df = df.withColumn("rounded", F.round("continuous", 4)).drop("u").cache()
        df.count()
        cases = {column: _case(df, column) for column in ("rounded", "continuous")}
        per_group = pms.roc_auc_score(df, label_col="label", score_col="rounded", groups_col="group")
        _, t_groups = _timed(lambda: per_group.write.format("noop").mode("overwrite").save())
    finally:
        spark.stop()
    return {
        "rows": rows,
        "partitions": partitions,
        "groups": groups,
        "master": master,
        "cases": cases,
        "groups_seconds": t_groups,
    }


def _trapezoid_auc(tps, fps):
    """The trapezoidal area under ROC points given by cumulative counts from the highest threshold down."""
    tpr = np.concatenate([[0.0], tps / tps[-1], [1.0]])
    fpr = np.concatenate([[0.0], fps / fps[-1], [1.0]])
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def binned_aucs(state, n_bins):
    """The AUC after binning a RankState's curve to n_bins points, two ways: MLlib's (runs of
    ``distinct / n_bins`` consecutive distinct scores merged into one point) and equally spaced thresholds in
    [0, 1] (TensorFlow's ``AUC(num_thresholds=...)``, H2O-like fixed bins)."""
    pos, neg = (w[::-1] for w in state.weights())  # highest score first
    grouping = state.scores.size // n_bins
    ends = np.arange(grouping, state.scores.size + grouping, grouping) if grouping >= 2 else np.arange(pos.size) + 1
    ends = np.minimum(ends, pos.size)
    tps, fps = np.cumsum(pos), np.cumsum(neg)
    equal_count = _trapezoid_auc(tps[ends - 1], fps[ends - 1])
    thresholds = np.linspace(0, 1, n_bins)[::-1]
    above = np.searchsorted(-state.scores[::-1], -thresholds, side="left")  # scores > threshold
    spaced_tps = np.concatenate([[0.0], tps])[above]
    spaced_fps = np.concatenate([[0.0], fps])[above]
    return equal_count, _trapezoid_auc(np.append(spaced_tps, tps[-1]), np.append(spaced_fps, fps[-1]))


def binning_errors(n=10**6, seed=0) -> dict:
    """AUC errors of 1000, 400 and 200 bins against the exact AUC on skewed scores (no Spark needed)."""
    import pairmetrics as pm

    rng = np.random.default_rng(seed)
    calibrated = rng.beta(0.2, 20, n)  # a calibrated model's probabilities: mean 1%, most near 0
    label = rng.random(n) < calibrated
    cases = {
        "calibrated probabilities near 0": calibrated,
        "the same, rounded to 1e-3 (ties)": np.round(calibrated, 3),
        "probabilities near 0.5 (control)": np.clip(0.5 + (calibrated - 0.01) * 2, 0, 1),
    }
    out = {}
    for name, score in cases.items():
        state = pm.RankState().update(label, score)
        exact = state.roc_auc().auc
        out[name] = {"exact": exact, "distinct_scores": int(state.scores.size)}
        for n_bins in (1000, 400, 200):
            equal_count, spaced = binned_aucs(state, n_bins)
            out[name][n_bins] = {"equal_count_error": equal_count - exact, "spaced_error": spaced - exact}
    return out


def run(quick: bool = False) -> dict:
    """As run_all.py runs it: 2e5 rows and 1e3 groups with ``quick``, else the command line's defaults."""
    return run_spark(200_000 if quick else 2_000_000, 16, 1_000 if quick else 10_000, "local[2]")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e6)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--groups", type=float, default=1e4)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--binning", action="store_true", help="only the binning-error table (no Spark)")
    args = parser.parse_args(argv)
    if args.binning:
        errors = binning_errors()
        rows = [
            [
                name,
                f"{e['exact']:.6f}",
                *[f"{e[b]['equal_count_error']:+.2e} / {e[b]['spaced_error']:+.2e}" for b in (1000, 400, 200)],
            ]
            for name, e in errors.items()
        ]
        print(markdown_table(["scores", "exact AUC", "1000 bins", "400 bins", "200 bins"], rows))
        print("written to", write_results("spark_binning", {"errors": errors}))
        return
    result = run_spark(int(args.rows), args.partitions, int(args.groups), args.master)
    rows = []
    for name, case in result["cases"].items():
        seconds = case["seconds"]
        rows.append(
            [
                name,
                f"{result['rows']:.0e}",
                f"{seconds['ours']:.1f} ({case['cold_seconds']['ours']:.1f} cold)",
                f"{seconds['mllib_binned']:.1f}",
                f"{seconds['mllib_exact']:.1f}",
                f"{case['ratio_to_mllib_binned']:.2f}",
                f"{case['ratio_to_mllib_exact']:.2f}",
                f"{case['driver_growth_gib']:.3f}",
                f"{case['binned_error']:+.1e}",
                f"{case['ours_minus_mllib_exact']:+.1e}",
            ]
        )
    print(
        markdown_table(
            [
                "scores",
                "rows",
                "ours (s)",
                "MLlib numBins=1000 (s)",
                "MLlib numBins=0 (s)",
                "ours / binned",
                "ours / exact",
                "driver growth (GiB)",
                "binned - exact",
                "ours - exact",
            ],
            rows,
        )
    )
    print(f"per-group AUC of {result['groups']} groups: {result['groups_seconds']:.1f} s")
    print("written to", write_results("spark", result))


if __name__ == "__main__":
    main()
