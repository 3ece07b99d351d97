"""Dask: paired evaluation, the 2 vs 2 test and the drop-ins on a local cluster against the in-memory call.

Every case runs on a ``distributed.LocalCluster`` of 2 worker processes with
one thread each; the data are created on the workers (``dask.array.random``)
and never pass through the client. The anchor is the in-memory call on the
same machine (all cores), on the same numbers, in the same run. The client's
memory growth is its peak resident set during the dask call, sampled every
10 ms, minus its resident set before.

    python bench/bench_dask.py [--quick] [--paired-n N] [--two-vs-two-n N] [--dropins-n N] [--out-of-core N]
                               [--per-sample] [--skip paired --skip two_vs_two --skip dropins]

The drop-in cases are ``roc_auc_score`` (binary, and with sample weights),
``concordance_index`` (lifelines) and ``concordance_index_censored``
(scikit-survival) on ``--dropins-n`` rows (2e7 by default, 1e6 with --quick).

``--per-sample`` times ``paired_evaluation(variance=True)`` (per-sample counts
between score partitions) at n = 1e6 and 4e6 in blocks of 5e5, with P = 8, 32
and 128 score partitions, and reports the size of its task graph.

``--out-of-core N`` also writes N float32 predictions and labels to a Parquet
store under ``bench/.data`` and evaluates them from disk with workers limited
to 4 GiB each.
"""

from __future__ import annotations

import argparse
import math
import os
import threading
import time

import numpy as np
import pairmetrics as pm

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import markdown_table, write_results
except ImportError:  # as a script: python bench/bench_dask.py
    from _common import markdown_table, write_results

GIB = float(1 << 30)


class PeakRSS:
    """Peak resident set of this process while the block runs (sampled)."""

    def __init__(self, interval=0.01):
        import psutil

        self.process = psutil.Process()
        self.interval = interval

    def __enter__(self):
        self.start = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(self.interval)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def growth(self):
        return self.peak - self.start


def _cluster(memory_limit="8GiB"):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=memory_limit
    )
    return cluster, Client(cluster)


def paired_case(n: int, chunk: int) -> dict:
    import dask.array as da

    cluster, client = _cluster()
    try:
        rng = da.random.default_rng(0)
        scores = rng.random(n, chunks=chunk, dtype=np.float32)
        labels = rng.random(n, chunks=chunk, dtype=np.float32)
        scores, labels = client.persist([scores, labels])  # created on the workers, kept there
        distributed_wait(scores, labels)
        with PeakRSS() as rss:
            start = time.perf_counter()
            on_dask = pm.paired_evaluation(labels, scores, min_dist=0.1)
            t_dask = time.perf_counter() - start
        s, y = scores.compute(), labels.compute()
    finally:
        client.close()
        cluster.close()
    start = time.perf_counter()
    in_memory = pm.paired_evaluation(y, s, min_dist=0.1)
    t_memory = time.perf_counter() - start
    return {
        "n": n,
        "chunk": chunk,
        "dtype": "float32",
        "labels": "uniform",
        "min_dist": 0.1,
        "dask_s": t_dask,
        "in_memory_s": t_memory,
        "ratio": t_dask / t_memory,
        "client_growth_gib": rss.growth / GIB,
        "equal": on_dask == in_memory,
        "answer": list(on_dask.asdict().values())[:4],
    }


def per_sample_case(n: int, n_parts: int, chunk: int) -> dict:
    """paired_evaluation(variance=True) with P score partitions: the per-sample counts between
    partitions. Also the size of its task graph (len(graph): tasks of the per-sample path)."""
    import dask.array as da
    from pairmetrics.dask import paired as dask_paired

    cluster, client = _cluster()
    saved = dask_paired.PARTITION_SAMPLES
    dask_paired.PARTITION_SAMPLES = math.ceil(n / n_parts)  # P = ceil(n / PARTITION_SAMPLES) partitions
    try:
        rng = da.random.default_rng(4)
        scores = rng.random(n, chunks=chunk, dtype=np.float32)
        labels = rng.random(n, chunks=chunk, dtype=np.float32)
        scores, labels = client.persist([scores, labels])
        distributed_wait(scores, labels)
        totals, per_block, _ = dask_paired._paired_graph(scores, labels, 0.1, True, None)
        graph: dict = {}
        for value in (totals, *per_block):
            graph.update(value.__dask_graph__())
        start = time.perf_counter()
        on_dask = pm.paired_evaluation(labels, scores, min_dist=0.1, variance=True)
        t_dask = time.perf_counter() - start
        s, y = scores.compute(), labels.compute()
    finally:
        dask_paired.PARTITION_SAMPLES = saved
        client.close()
        cluster.close()
    start = time.perf_counter()
    in_memory = pm.paired_evaluation(y, s, min_dist=0.1, variance=True)
    t_memory = time.perf_counter() - start
    return {
        "n": n,
        "partitions": n_parts,
        "chunk": chunk,
        "tasks": len(graph),
        "dask_s": t_dask,
        "in_memory_s": t_memory,
        "ratio": t_dask / t_memory,
        "equal": on_dask == in_memory,
        "variance_relative_difference": abs(on_dask._variance - in_memory._variance) / in_memory._variance,
    }


def distributed_wait(*collections):
    from distributed import wait

    wait(list(collections))


def two_vs_two_case(n: int, d: int, chunk: int) -> dict:
    import dask.array as da

    cluster, client = _cluster()
    try:
        rng = da.random.default_rng(1)
        y = rng.standard_normal((n, d), chunks=(chunk, d), dtype=np.float32)
        p = (y + rng.standard_normal((n, d), chunks=(chunk, d), dtype=np.float32)).astype(np.float32)
        y, p = client.persist([y, p])
        distributed_wait(y, p)
        with PeakRSS() as rss:
            start = time.perf_counter()
            on_dask = pm.two_vs_two(y, p)
            t_dask = time.perf_counter() - start
        yy, pp = y.compute(), p.compute()
    finally:
        client.close()
        cluster.close()
    start = time.perf_counter()
    in_memory = pm.two_vs_two(yy, pp)
    t_memory = time.perf_counter() - start
    return {
        "n": n,
        "d": d,
        "chunk": chunk,
        "dtype": "float32",
        "metric": "cosine",
        "dask_s": t_dask,
        "in_memory_s": t_memory,
        "ratio": t_dask / t_memory,
        "client_growth_gib": rss.growth / GIB,
        "equal": on_dask == in_memory,
        "answer": [on_dask.n_passed, on_dask.n_total, on_dask.n_tied],
    }


def dropins_case(n: int, chunk: int) -> list:
    """roc_auc_score, concordance_index and concordance_index_censored on n rows made on the workers."""
    import dask.array as da

    cluster, client = _cluster()
    rows = []
    try:
        rng = da.random.default_rng(3)
        scores = rng.random(n, chunks=chunk)
        positive = (rng.random(n, chunks=chunk) < 0.3).astype(np.int8)
        weights = rng.random(n, chunks=chunk)
        times = rng.integers(0, 100_000, n, chunks=chunk).astype(np.float64)
        events = rng.random(n, chunks=chunk) < 0.7
        data = client.persist([scores, positive, weights, times, events])
        distributed_wait(*data)
        scores, positive, weights, times, events = data
        cases = [
            ("roc_auc_score", lambda *a: pm.sklearn.roc_auc_score(a[1], a[0]), False),
            (
                "roc_auc_score, sample_weight",
                lambda *a: pm.sklearn.roc_auc_score(a[1], a[0], sample_weight=a[2]),
                False,
            ),
            ("concordance_index", lambda *a: pm.lifelines.concordance_index(a[3], a[0], a[4]), False),
            ("concordance_index_censored", lambda *a: pm.sksurv.concordance_index_censored(a[4], a[3], a[0])[0], False),
        ]
        measured = []
        for name, call, _ in cases:
            with PeakRSS() as rss:
                start = time.perf_counter()
                value = call(scores, positive, weights, times, events)
                measured.append((name, call, value, time.perf_counter() - start, rss.growth / GIB))
        local = [x.compute() for x in (scores, positive, weights, times, events)]
    finally:
        client.close()
        cluster.close()
    for name, call, value, t_dask, growth in measured:
        start = time.perf_counter()
        expected = call(*local)
        t_memory = time.perf_counter() - start
        rows.append(
            {
                "case": name,
                "n": n,
                "chunk": chunk,
                "dask_s": t_dask,
                "in_memory_s": t_memory,
                "ratio": t_dask / t_memory,
                "client_growth_gib": growth,
                "answer": float(value),
                "relative_difference": abs(float(value) - float(expected)) / abs(float(expected)),
            }
        )
        print(rows[-1], flush=True)
    return rows


def out_of_core_case(n: int, chunk: int) -> dict:
    import dask.array as da
    import dask.dataframe as dd

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".data", f"paired_{n}.parquet")
    cluster, client = _cluster(memory_limit="4GiB")
    try:
        if not os.path.exists(path):
            rng = da.random.default_rng(2)
            frame = dd.concat(
                [
                    dd.from_dask_array(rng.random(n, chunks=chunk, dtype=np.float32), columns="score"),
                    dd.from_dask_array(rng.random(n, chunks=chunk, dtype=np.float32), columns="label"),
                ],
                axis=1,
            )
            start = time.perf_counter()
            frame.to_parquet(path)
            t_write = time.perf_counter() - start
        else:
            t_write = None
        frame = dd.read_parquet(path)
        with PeakRSS() as rss:
            start = time.perf_counter()
            result = pm.paired_evaluation(frame.label, frame.score, min_dist=0.1)
            t_dask = time.perf_counter() - start
    finally:
        client.close()
        cluster.close()
    out = {
        "n": n,
        "chunk": chunk,
        "write_s": t_write,
        "dask_s": t_dask,
        "client_growth_gib": rss.growth / GIB,
        "load_average_after": os.getloadavg()[0],
        "answer": [result.n_rankable, result.n_correct, result.n_tied, result.n_incorrect],
    }
    if n <= IN_MEMORY_CHECK:  # the same numbers in memory (about 50 bytes a sample)
        import pandas as pd

        frame = pd.read_parquet(path)
        start = time.perf_counter()
        expected = pm.paired_evaluation(frame.label.to_numpy(), frame.score.to_numpy(), min_dist=0.1)
        out.update(in_memory_s=time.perf_counter() - start, equal=expected == result)
    return out


# Out-of-core runs up to this size are also computed in memory, to compare.
IN_MEMORY_CHECK = 200_000_000


def table(result: dict) -> str:
    header = ["case", "size", "dask (2 workers)", "in memory (all cores)", "ratio", "client memory growth"]
    body = []
    for r in result.get("paired", []):
        body.append(
            [
                "paired_evaluation",
                f"n = {r['n']:.0e}",
                f"{r['dask_s']:.1f} s",
                f"{r['in_memory_s']:.1f} s",
                f"{r['ratio']:.2f}x",
                f"{r['client_growth_gib']:.3f} GiB",
            ]
        )
    for r in result.get("two_vs_two", []):
        body.append(
            [
                "two_vs_two",
                f"n = {r['n']:.0e}, d = {r['d']}",
                f"{r['dask_s']:.1f} s",
                f"{r['in_memory_s']:.1f} s",
                f"{r['ratio']:.2f}x",
                f"{r['client_growth_gib']:.3f} GiB",
            ]
        )
    for r in result.get("dropins", []):
        body.append(
            [
                r["case"],
                f"n = {r['n']:.0e}",
                f"{r['dask_s']:.1f} s",
                f"{r['in_memory_s']:.1f} s",
                f"{r['ratio']:.2f}x",
                f"{r['client_growth_gib']:.3f} GiB",
            ]
        )
    for r in result.get("per_sample", []):
        body.append(
            [
                f"paired_evaluation(variance=True), P = {r['partitions']}, {r['tasks']} tasks",
                f"n = {r['n']:.0e}",
                f"{r['dask_s']:.1f} s",
                f"{r['in_memory_s']:.2f} s",
                f"{r['ratio']:.1f}x",
                "-",
            ]
        )
    for r in result.get("out_of_core", []):
        memory = r.get("in_memory_s")
        body.append(
            [
                "paired_evaluation from Parquet, 4 GiB workers",
                f"n = {r['n']:.0e}",
                f"{r['dask_s']:.1f} s",
                "-" if memory is None else f"{memory:.1f} s",
                "-" if memory is None else f"{r['dask_s'] / memory:.2f}x",
                f"{r['client_growth_gib']:.3f} GiB",
            ]
        )
    return markdown_table(header, body)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    parser.add_argument("--paired-n", type=float, default=1e8)
    parser.add_argument("--two-vs-two-n", type=float, default=1e5)
    parser.add_argument("--dropins-n", type=float, default=2e7)
    parser.add_argument("--out-of-core", type=float, default=0)
    parser.add_argument(
        "--per-sample",
        action="store_true",
        help="per-sample counts (variance=True) at n = 1e6 and 4e6 with P = 8, 32, 128 partitions",
    )
    parser.add_argument("--skip", choices=["paired", "two_vs_two", "dropins"], action="append", default=[])
    args = parser.parse_args(argv)
    result = run(args.quick, args.paired_n, args.two_vs_two_n, args.dropins_n, args.skip, args.per_sample)
    if args.out_of_core:
        result["out_of_core"] = [out_of_core_case(int(args.out_of_core), 10_000_000)]
        print(result["out_of_core"][-1], flush=True)
    print(table(result))
    if not args.quick:
        print("wrote", write_results("dask", {**_previous_cases(), **result}))


def run(
    quick: bool = False,
    paired_n: float = 1e8,
    two_vs_two_n: float = 1e5,
    dropins_n: float = 2e7,
    skip: tuple[str, ...] | list[str] = (),
    per_sample: bool = False,
) -> dict:
    """The cases as run_all.py runs them (``run(quick)``) or as the command line asks."""
    paired_n = int(1e6 if quick else paired_n)
    tvt_n = int(5e3 if quick else two_vs_two_n)
    result = {"benchmark": "dask", "quick": quick, "workers": 2, "threads_per_worker": 1}
    if "paired" not in skip:
        result["paired"] = [paired_case(paired_n, min(paired_n, 5_000_000))]
        print(result["paired"][-1], flush=True)
    if "two_vs_two" not in skip:
        result["two_vs_two"] = [two_vs_two_case(tvt_n, 300, min(tvt_n, 10_000))]
        print(result["two_vs_two"][-1], flush=True)
    if "dropins" not in skip:
        dropins_n = int(1e6 if quick else dropins_n)
        result["dropins"] = dropins_case(dropins_n, min(dropins_n, 2_000_000))
    if per_sample:
        sizes = [200_000] if quick else [1_000_000, 4_000_000]
        result["per_sample"] = []
        for n in sizes:
            for n_parts in (8, 32) if quick else (8, 32, 128):
                result["per_sample"].append(per_sample_case(n, n_parts, 500_000))
                print(result["per_sample"][-1], flush=True)
    return result


def _previous_cases() -> dict:
    """The cases of the last results file, kept for those not run this time."""
    import json

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "dask.json")
    try:
        with open(path) as f:
            previous = json.load(f)
    except (OSError, ValueError):
        return {}
    kept = ("paired", "two_vs_two", "dropins", "out_of_core", "per_sample")
    return {key: previous[key] for key in kept if key in previous}


if __name__ == "__main__":
    main()
