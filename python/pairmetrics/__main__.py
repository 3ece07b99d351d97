"""Command line: ``python -m pairmetrics`` or ``pairmetrics``.

Subcommands: demo, paired, two-vs-two, crossmatch, measures, multilabel, bench.

Exit codes: 0 success; 2 a user mistake (bad command line, unreadable file,
data the library refuses), reported on one line; 70 an internal error (a
bug), reported with its traceback; 130 interrupted (Ctrl-C).

A ``ValueError``/``TypeError`` counts as a user mistake only when pairmetrics'
own Python code raised it with a ``raise`` statement (its validation layer,
which names the offending argument). The same exception types coming out of
numpy, scipy or the compiled extension are bugs: they must not be hidden
behind a one-line message.
"""

from __future__ import annotations

import argparse
import dis
import json
import math
import sys
import traceback

import numpy as np

from ._io import load_array

EXIT_USAGE = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE in sysexits.h
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        raise _UsageError(f"{self.prog}: error: {message}")


class _UsageError(Exception):
    pass


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _emit(args, record: dict, lines) -> None:
    if args.json:
        print(json.dumps(_jsonable(record)))
    else:
        for line in lines:
            print(line)


# --- subcommands -------------------------------------------------------------------


def _cmd_paired(args):
    from . import compare_paired, paired_evaluation

    labels = load_array(args.labels, column=args.label_column)
    scores = load_array(args.scores, column=args.column)
    if args.compare:
        other = load_array(args.compare, column=args.column)
        c = compare_paired(scores, other, labels, args.min_dist, n_jobs=args.n_jobs)
        record = {"a": c.a.asdict() | {"auc": c.a.auc}, "b": c.b.asdict() | {"auc": c.b.auc},
                  "fisher_odds_ratio": c.fisher_odds_ratio, "fisher_pvalue": c.fisher_pvalue,
                  "auc_difference": c.auc_difference, "statistic": c.statistic, "pvalue": c.pvalue}
        lines = [
            f"model A: AUC {c.a.auc:.6f} ({c.a.n_correct} of {c.a.n_rankable} rankable pairs correct, {c.a.n_tied} tied)",
            f"model B: AUC {c.b.auc:.6f} ({c.b.n_correct} of {c.b.n_rankable} rankable pairs correct, {c.b.n_tied} tied)",
            f"difference {c.auc_difference:+.6f}: z = {c.statistic:.4f}, p = {c.pvalue:.4g} (paired U-statistic test)",
            f"Fisher's exact test on the 2x2 pair table: p = {c.fisher_pvalue:.4g} (treats pairs as independent)",
        ]
    else:
        r = paired_evaluation(scores, labels, args.min_dist, n_jobs=args.n_jobs, warn=False)
        record = r.asdict() | {"auc": r.auc}
        lines = [
            f"rankable pairs  {r.n_rankable}",
            f"correct         {r.n_correct}",
            f"tied scores     {r.n_tied}",
            f"incorrect       {r.n_incorrect}",
            f"AUC             {r.auc:.6f}  (ties count 1/2; min_dist {r.min_dist:g})",
        ]
    _emit(args, record, lines)


def _cmd_two_vs_two(args):
    from . import two_vs_two

    targets = load_array(args.targets, ndim=2)
    predictions = load_array(args.predictions, ndim=2)
    pairs = args.pairs if args.pairs in ("all", "distinct_targets") else _int_option(args.pairs, "--pairs")
    r = two_vs_two(targets, predictions, metric=args.metric, ties=args.ties, pairs=pairs,
                   rng=args.seed, n_jobs=args.n_jobs, progress=_show_progress(args))
    passed, total, accuracy = r
    record = {"n_passed": passed, "n_total": total, "accuracy": accuracy, "metric": args.metric, "ties": args.ties}
    _emit(args, record, [f"2 vs 2 accuracy {accuracy:.6f}: {passed} of {total} pairs pass "
                         f"(metric {args.metric}, ties {args.ties})"])


def _cmd_crossmatch(args):
    from . import crossmatch_test, crossmatchtest

    if args.groups or args.distances:
        if not (args.groups and args.distances) or args.x or args.y:
            raise _UsageError("pairmetrics crossmatch: error: give either X Y, or both --groups and --distances")
        r = crossmatchtest(load_array(args.groups), load_array(args.distances, ndim=2), progress=_show_progress(args))
    else:
        if not (args.x and args.y):
            raise _UsageError("pairmetrics crossmatch: error: give the two samples X Y (or --groups Z --distances D)")
        r = crossmatch_test(load_array(args.x, ndim=2), load_array(args.y, ndim=2), metric=args.metric,
                            progress=_show_progress(args))
    record = {k: getattr(r, k) for k in ("a1", "Ea1", "Va1", "dev", "pval", "approxpval")}
    _emit(args, record, [
        f"cross-matches a1 = {r.a1} (expected {r.Ea1:.4f} under H0, variance {r.Va1:.4f})",
        f"exact p-value  {r.pval:.6g}",
        f"normal approx  dev = {r.dev:.4f}, p = {r.approxpval:.6g}",
    ])


def _cmd_measures(args):
    from . import (absolute_error, rms_error, sum_squares_error, worst_case_error, zero_one_error)

    actual = load_array(args.actual, column=args.column, ndim=None)
    predicted = load_array(args.predicted, column=args.column, ndim=actual.ndim)
    record = {}
    for name, func in [("zero_one", zero_one_error), ("absolute", absolute_error),
                       ("sum_squares", sum_squares_error), ("rms", rms_error), ("worst_case", worst_case_error)]:
        record[name] = float(func(actual, predicted, average=args.mean)) if name not in ("rms", "worst_case") \
            else float(func(actual, predicted))
    if args.probabilities:
        from . import log_loss
        record["log_loss"] = float(log_loss(actual, predicted))
    kind = "mean per example" if args.mean else "sum over examples"
    _emit(args, record, [f"{name:<12}{value:.6g}" for name, value in record.items()] + [f"(0/1, absolute and squares: {kind})"])


def _cmd_multilabel(args):
    from . import multilabel_counts

    r = multilabel_counts(load_array(args.true, ndim=2), load_array(args.pred, ndim=2),
                          false_pos=args.false_pos, false_neg=args.false_neg)
    record = {"tp": r.tp, "tn": r.tn, "fp": r.fp, "fn": r.fn, "mean_sample_accuracy": r.mean_sample_accuracy,
              "weighted_score": r.weighted_score}
    _emit(args, record, [
        f"TP {r.tp}  TN {r.tn}  FP {r.fp}  FN {r.fn}",
        f"mean accuracy per sample {float(r.mean_sample_accuracy):.6f}",
        f"weighted score {float(r.weighted_score):.6f} (false positive -{args.false_pos:g}, false negative -{args.false_neg:g})",
    ])


def _cmd_bench(args):
    try:
        from .bench.run_all import run_suite  # installed: the suite ships inside the package
    except ImportError:  # a source checkout: bench/ next to python/
        import importlib.util
        from pathlib import Path

        path = Path(__file__).resolve().parents[2] / "bench" / "run_all.py"
        if not path.is_file():
            raise ValueError("the benchmark suite is not installed with this copy of pairmetrics") from None
        spec = importlib.util.spec_from_file_location("run_all", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        run_suite = module.run_suite

    run_suite(args.quick, args.only.split(",") if args.only else None, write=False)


def _cmd_demo(args):
    from ._demo import run_demo

    run_demo(small=args.small, json_output=args.json)


# --- helpers ---------------------------------------------------------------------------


def _show_progress(args) -> bool:
    """Progress bars only for a person watching a terminal (and tqdm installed)."""
    return not args.quiet and sys.stderr.isatty()


def _int_option(text, option):
    try:
        return int(text)
    except ValueError:
        raise _UsageError(
            f"pairmetrics: error: {option} must be 'all', 'distinct_targets' or a whole number, got {text!r}"
        ) from None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pairmetrics", description="Fast, exact evaluation of model predictions.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name, func, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
        p.add_argument("--quiet", action="store_true", help="no progress bars")
        return p

    p = command("demo", _cmd_demo, "run every capability on generated data and print a report")
    p.add_argument("--small", action="store_true", help="smaller data (a few seconds)")

    p = command("paired", _cmd_paired, "paired evaluation of scores against labels")
    p.add_argument("scores")
    p.add_argument("labels")
    p.add_argument("--min-dist", type=float, default=0.5, help="label separation of a rankable pair (0.5)")
    p.add_argument("--column", help="column of SCORES (name or index) in a table")
    p.add_argument("--label-column", help="column of LABELS (name or index) in a table")
    p.add_argument("--compare", metavar="SCORES_B", help="a second model's scores: compare the two")
    p.add_argument("--n-jobs", type=int, default=None)

    p = command("two-vs-two", _cmd_two_vs_two, "the 2 vs 2 test of vector predictions")
    p.add_argument("targets")
    p.add_argument("predictions")
    p.add_argument("--metric", default="cosine", choices=["cosine", "correlation", "euclidean", "sqeuclidean"])
    p.add_argument("--ties", default="fail", choices=["fail", "pass", "half", "exclude"])
    p.add_argument("--pairs", default="all", help="'all', 'distinct_targets' or a number of sampled pairs")
    p.add_argument("--seed", type=int, default=None, help="seed for sampled pairs")
    p.add_argument("--n-jobs", type=int, default=None)

    p = command("crossmatch", _cmd_crossmatch, "Rosenbaum's cross-match test of two samples")
    p.add_argument("x", nargs="?")
    p.add_argument("y", nargs="?")
    p.add_argument("--metric", default="euclidean", help="a scipy cdist metric or 'rank_mahalanobis'")
    p.add_argument("--groups", help="0/1 group labels (with --distances)")
    p.add_argument("--distances", help="square distance matrix (with --groups)")

    p = command("measures", _cmd_measures, "classic error measures of point predictions")
    p.add_argument("actual")
    p.add_argument("predicted")
    p.add_argument("--column", help="column (name or index) in both tables")
    p.add_argument("--mean", action="store_true", help="means per example instead of sums")
    p.add_argument("--probabilities", action="store_true", help="also the log loss (0/1 actual, predicted in [0, 1])")

    p = command("multilabel", _cmd_multilabel, "multi-label TP/TN/FP/FN counts and penalised score")
    p.add_argument("true")
    p.add_argument("pred")
    p.add_argument("--false-pos", type=float, default=1.0, help="penalty per false positive (1)")
    p.add_argument("--false-neg", type=float, default=1.0, help="penalty per false negative (1)")

    p = command("bench", _cmd_bench, "run the benchmark suite and print the comparison tables")
    p.add_argument("--quick", action="store_true", help="about a minute")
    p.add_argument("--only", help="comma-separated benchmark names")
    return parser


def _is_user_error(exc: BaseException) -> bool:
    """True for errors that report a user mistake; False for bugs.

    User mistakes are the command line's own ``_UsageError``, an ``OSError``
    about a named file, and ``ValueError``/``TypeError`` raised by a ``raise``
    statement in pairmetrics' Python code (its validation). Anything raised
    inside numpy, scipy, the extension or the standard library is not.
    """
    if isinstance(exc, _UsageError):
        return True
    if isinstance(exc, OSError):
        return exc.filename is not None
    if not isinstance(exc, (ValueError, TypeError)):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    module = frame.f_globals.get("__name__", "")
    if module != __name__ and module.split(".")[0] != "pairmetrics":
        return False
    # An exception set by a C function (numpy, the extension) leaves the
    # frame at its call instruction; a validation error at a raise statement.
    for instruction in dis.get_instructions(frame.f_code):
        if instruction.offset == tb.tb_lasti:
            return instruction.opname == "RAISE_VARARGS"
    return False


def main(argv=None) -> int:
    try:
        args = _parser().parse_args(argv)
        args.func(args)
    except KeyboardInterrupt:
        print("pairmetrics: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if _is_user_error(exc):
            message = str(exc)
            if not message.startswith("pairmetrics"):
                message = f"pairmetrics: error: {message}"
            print(message.splitlines()[0] if message else type(exc).__name__, file=sys.stderr)
            return EXIT_USAGE
        traceback.print_exc()
        print("pairmetrics: internal error (a bug in pairmetrics; please report it with the traceback above)",
              file=sys.stderr)
        return EXIT_INTERNAL
    return 0


if __name__ == "__main__":
    sys.exit(main())
