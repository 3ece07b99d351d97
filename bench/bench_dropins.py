"""Benchmark of the drop-in functions against the libraries they replace.

Each case times pairmetrics and the original (scikit-learn's roc_auc_score,
lifelines' concordance_index, scikit-survival's concordance_index_censored)
in the same run, on the same arrays, alternating so that a busy machine slows
both alike; the results are checked to agree. Times are medians.

    python bench/bench_dropins.py            # roc_auc 1e7, lifelines 1e6, sksurv 2e4
    python bench/bench_dropins.py --quick    # small sizes, a few seconds
    python bench/bench_dropins.py --only bootstrap cumulative    # the cases whose names contain these
"""

from __future__ import annotations

import functools
import statistics
import time
import warnings

import numpy as np
import pairmetrics as pm

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import machine, markdown_table, repeat_count, simple_main
except ImportError:  # as a script: python bench/bench_dropins.py
    from _common import machine, markdown_table, repeat_count, simple_main


def alternating_medians(funcs, repeats: int, budget: float = 120.0):
    """Median wall and CPU (this process, all threads) times of functions run
    in turn (fewer rounds if a round is slow), and their last results."""
    times = [[] for _ in funcs]
    cpu = [[] for _ in funcs]
    results = [None] * len(funcs)
    start_all = time.perf_counter()
    for _ in range(repeat_count(repeats)):
        for k, func in enumerate(funcs):
            start, start_cpu = time.perf_counter(), time.process_time()
            results[k] = func()
            times[k].append(time.perf_counter() - start)
            cpu[k].append(time.process_time() - start_cpu)
        if time.perf_counter() - start_all > budget:
            break
    return [statistics.median(t) for t in times], [statistics.median(t) for t in cpu], results


def _peer(module: str, name: str):
    try:
        mod = __import__(module, fromlist=[name])
    except ImportError:
        return None
    return getattr(mod, name)


def cases(quick: bool, rng):
    n_auc = 10**5 if quick else 10**7
    n_lifelines = 10**4 if quick else 10**6
    n_sksurv = 2 * 10**3 if quick else 2 * 10**4

    y = rng.random(n_auc) < 0.3
    scores = rng.random(n_auc) + 0.3 * y
    weights = rng.random(n_auc)
    sk = _peer("sklearn.metrics", "roc_auc_score")
    out = [
        (
            f"roc_auc_score, binary, n = {n_auc:.0e}",
            n_auc,
            lambda: pm.sklearn.roc_auc_score(y, scores),
            sk and (lambda: sk(y, scores)),
            "scikit-learn",
        ),
        (
            f"roc_auc_score, binary, sample_weight, n = {n_auc:.0e}",
            n_auc,
            lambda: pm.sklearn.roc_auc_score(y, scores, sample_weight=weights),
            sk and (lambda: sk(y, scores, sample_weight=weights)),
            "scikit-learn",
        ),
        (
            f"roc_auc_score, binary, max_fpr = 0.1, n = {n_auc:.0e}",
            n_auc,
            lambda: pm.sklearn.roc_auc_score(y, scores, max_fpr=0.1),
            sk and (lambda: sk(y, scores, max_fpr=0.1)),
            "scikit-learn",
        ),
    ]

    times = np.round(rng.exponential(10, n_lifelines), 2)  # ties in time
    predicted = np.round(times + rng.normal(0, 5, n_lifelines), 1)  # and in predictions
    observed = rng.random(n_lifelines) < 0.7
    lifelines_ci = _peer("lifelines.utils", "concordance_index")
    out.append(
        (
            f"concordance_index, n = {n_lifelines:.0e}",
            n_lifelines,
            lambda: pm.lifelines.concordance_index(times, predicted, observed),
            lifelines_ci and (lambda: lifelines_ci(times, predicted, observed)),
            "lifelines",
        )
    )

    t2, e2, risk = times[:n_sksurv], observed[:n_sksurv], -predicted[:n_sksurv]
    sksurv_ci = _peer("sksurv.metrics", "concordance_index_censored")
    out.append(
        (
            f"concordance_index_censored, n = {n_sksurv:.0e}",
            n_sksurv,
            lambda: pm.sksurv.concordance_index_censored(e2, t2, risk),
            sksurv_ci and (lambda: sksurv_ci(e2, t2, risk)),
            "scikit-survival",
        )
    )
    out.append(
        (
            f"concordance_index_censored, n = {n_lifelines:.0e}",
            n_lifelines,
            lambda: pm.sksurv.concordance_index_censored(observed, times, -predicted),
            None,
            "scikit-survival",
        )
    )

    # IPCW measures: the test set doubles as the training set (as in scikit-survival's examples)
    y_surv = np.empty(n_sksurv, dtype=[("event", bool), ("time", float)])
    y_surv["event"], y_surv["time"] = e2, t2
    y_surv["event"][np.argmax(t2)] = False  # a censored last time keeps the censoring curve positive
    grid = np.quantile(t2, np.linspace(0.1, 0.8, 8))
    ipcw = _peer("sksurv.metrics", "concordance_index_ipcw")
    out.append(
        (
            f"concordance_index_ipcw, n = {n_sksurv:.0e}",
            n_sksurv,
            lambda: pm.sksurv.concordance_index_ipcw(y_surv, y_surv, risk),
            ipcw and (lambda: ipcw(y_surv, y_surv, risk)),
            "scikit-survival",
        )
    )
    dynamic = _peer("sksurv.metrics", "cumulative_dynamic_auc")
    out.append(
        (
            f"cumulative_dynamic_auc, 8 times, n = {n_sksurv:.0e}",
            n_sksurv,
            lambda: pm.sksurv.cumulative_dynamic_auc(y_surv, y_surv, risk, grid)[1],
            dynamic and (lambda: dynamic(y_surv, y_surv, risk, grid)[1]),
            "scikit-survival",
        )
    )
    return out


def bootstrap_cases(quick: bool, rng):
    """pairmetrics.bootstrap of each statistic with a compiled path, against a numpy + peer loop and
    against its own generic path (the same replicates, one statistic call per resample)."""
    n = 10**5 if quick else 10**6
    n_survival = 10**4 if quick else 10**5
    y = rng.random(n) < 0.3
    scores = rng.random(n) + 0.3 * y
    times = np.round(rng.exponential(10, n_survival), 2)
    predicted = np.round(times + rng.normal(0, 5, n_survival), 1)
    observed = rng.random(n_survival) < 0.7
    labels = rng.normal(size=n_survival)
    guess = labels + rng.normal(size=n_survival)
    sk = _peer("sklearn.metrics", "roc_auc_score")
    lifelines_ci = _peer("lifelines.utils", "concordance_index")

    def loop(statistic, arrays, size, resamples):
        draws = np.random.default_rng(1)
        indices = (draws.integers(0, size, size) for _ in range(resamples))
        return np.std([statistic(*(a[i] for a in arrays)) for i in indices], ddof=1)

    def ours(statistic, arrays, resamples):
        return lambda: pm.bootstrap(arrays, statistic, n_resamples=resamples, rng=1).standard_error

    def generic(statistic, arrays, resamples):  # an unrecognised callable: the generic path
        return ours(lambda *a: statistic(*a), arrays, resamples)

    paired = functools.partial(pm.paired_evaluation, min_dist=0.5)
    out = [
        (
            f"bootstrap of roc_auc_score, 100 resamples, n = {n:.0e}",
            n,
            ours(pm.sklearn.roc_auc_score, (y, scores), 100),
            sk and (lambda: loop(sk, (y, scores), n, 100)),
            "numpy + scikit-learn loop",
        ),
        (
            f"bootstrap of roc_auc_score, 20 resamples, n = {n:.0e}",
            n,
            ours(pm.sklearn.roc_auc_score, (y, scores), 20),
            generic(pm.sklearn.roc_auc_score, (y, scores), 20),
            "generic path",
        ),
        (
            f"bootstrap of concordance_index, 20 resamples, n = {n_survival:.0e}",
            n_survival,
            ours(pm.lifelines.concordance_index, (times, predicted, observed), 20),
            lifelines_ci and (lambda: loop(lifelines_ci, (times, predicted, observed), n_survival, 20)),
            "numpy + lifelines loop",
        ),
        (
            f"bootstrap of concordance_index, 20 resamples, n = {n_survival:.0e}",
            n_survival,
            ours(pm.lifelines.concordance_index, (times, predicted, observed), 20),
            generic(pm.lifelines.concordance_index, (times, predicted, observed), 20),
            "generic path",
        ),
        (
            f"bootstrap of paired_evaluation (real labels), 20 resamples, n = {n_survival:.0e}",
            n_survival,
            ours(paired, (labels, guess), 20),
            generic(paired, (labels, guess), 20),
            "generic path",
        ),
    ]
    return out


def _same(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(np.isclose(float(x), float(y), rtol=1e-9, atol=0) for x, y in zip(a, b))


def run(quick: bool = False, only: list[str] | None = None) -> dict:
    rng = np.random.default_rng(0)
    repeats = 3 if quick else 5
    rows = []
    for name, n, ours, peer, peer_name in [*cases(quick, rng), *bootstrap_cases(quick, rng)]:
        if only and not any(word in name for word in only):
            continue
        ours()  # warm up: page in the arrays, load code
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if peer is not None:
                (t_ours, t_peer), (c_ours, c_peer), (r_ours, r_peer) = alternating_medians([ours, peer], repeats)
                # a bootstrap against a loop with its own draws: standard errors of a few resamples agree roughly
                loose = name.startswith("bootstrap") and peer_name != "generic path"
                if not (abs(r_ours / r_peer - 1) < 0.6 if loose else _same(r_ours, r_peer)):
                    raise AssertionError(f"{name}: pairmetrics {r_ours} but {peer_name} {r_peer}")
            else:
                (t_ours,), (c_ours,), _ = alternating_medians([ours], repeats)
                t_peer = c_peer = None
        rows.append(
            {
                "case": name,
                "n": n,
                "peer": peer_name,
                "pairmetrics_s": t_ours,
                "peer_s": t_peer,
                "speedup": (t_peer / t_ours) if t_peer else None,
                "pairmetrics_cpu_s": c_ours,
                "peer_cpu_s": c_peer,
                "cpu_speedup": (c_peer / c_ours) if c_peer else None,
            }
        )
    return {
        "benchmark": "dropins",
        "machine": machine(),
        "repeats": repeats,
        "quick": quick,
        "threads": pm._validation.max_threads(),
        "rows": rows,
    }


def _seconds(s):
    return f"{s:.3g} s" if s >= 1 else f"{1e3 * s:.3g} ms"


def table(result: dict) -> str:
    header = ["case", "pairmetrics", "original", "original time", "speed-up (wall)", "speed-up (CPU)"]
    body = []
    for r in result["rows"]:
        body.append(
            [
                r["case"],
                _seconds(r["pairmetrics_s"]),
                r["peer"],
                _seconds(r["peer_s"])
                if r["peer_s"]
                else "(not run: O(n^2))"
                if r["peer"] == "scikit-survival"
                else "-",
                f"{r['speedup']:.0f}x" if r["speedup"] else "-",
                f"{r['cpu_speedup']:.0f}x" if r.get("cpu_speedup") else "-",
            ]
        )
    m = result["machine"]
    footer = (
        f"\n{m['cpu']}, {m['cores']} cores ({result['threads']} used), numpy {m['numpy']}; "
        f"median of up to {result['repeats']} alternating runs. CPU time sums this process's "
        "threads (a steadier measure on a shared machine; pairmetrics' sorts of the two classes "
        "run side by side in roc_auc_score)."
    )
    return markdown_table(header, body) + "\n" + footer


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    parser.add_argument("--only", nargs="+", metavar="TEXT", help="run the cases whose name contains one of these")
    args = parser.parse_args(argv)
    if not args.only:
        simple_main("dropins", __doc__.splitlines()[0], run, table, argv)
        return
    print(table(run(quick=args.quick, only=args.only)))  # a selection: printed, not written to results/


if __name__ == "__main__":
    main()
