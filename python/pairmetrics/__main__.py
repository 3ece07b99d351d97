"""Command line: ``python -m pairmetrics`` or ``pairmetrics``.

Subcommands: demo, paired, two-vs-two, crossmatch, measures, multilabel, bench.
Inputs are CSV, TSV, whitespace-separated text, Parquet or NPY files, or ``-``
for standard input (see ``pairmetrics COMMAND --help``). A progress bar on
stderr covers the whole run when stderr is a terminal (``--progress`` /
``--no-progress`` to force). Reading CSV, TSV and Parquet needs the ``cli``
extra (pyarrow, tqdm for the bar); NPY needs numpy only.

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
from collections.abc import Callable
from typing import Any

import numpy as np

from . import __version__
from ._io import FORMATS_HELP, MissingExtraError, column_position, load_array
from ._progress import RunProgress

EXIT_USAGE = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE in sysexits.h
EXIT_INTERRUPTED = 130

_READ_SHARE = 0.4  # of the progress bar, split between a command's inputs; the computation gets the rest

Output = tuple[dict[str, Any], list[str]]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        raise _UsageError(f"{self.prog}: error: {message}")


class _UsageError(Exception):
    pass


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _emit(args, record: dict[str, Any], lines: list[str]) -> None:
    if args.json:
        print(json.dumps(_jsonable(record), default=str))
    else:
        for line in lines:
            print(line)


class _Inputs:
    """Reads a command's inputs, each as one step of the run's progress bar; standard input at most once."""

    def __init__(self, args, run: RunProgress, count: int):
        self._header = args.header
        self._run = run
        self._share = _READ_SHARE / count
        self._stdin_used = False

    def __call__(self, source: str, what: str, **options) -> np.ndarray:
        if source == "-":
            if self._stdin_used:
                raise _UsageError("pairmetrics: error: only one input can be '-' (standard input)")
            self._stdin_used = True
        label = f"reading {what}"
        with self._run.step(label, self._share):
            progress = self._run.kernel_callback(label) if self._run.enabled else None
            try:
                return load_array(source, header=self._header, progress=progress, **options)
            except ValueError as exc:  # name the argument too: which of the inputs is wrong
                raise ValueError(f"{what} {exc}") from None


# --- subcommands -------------------------------------------------------------------


def _cmd_paired(args, run: RunProgress) -> Output:
    from . import compare_models, paired_evaluation

    read = _Inputs(args, run, 3 if args.compare else 2)
    labels = read(args.labels, "labels", column=args.label_column)
    scores = read(args.scores, "scores", column=args.column)
    progress = run.enabled
    if args.compare:
        other_column = args.column if args.compare_column is None else args.compare_column
        if _same_file(args.scores, args.compare) and _same_column(args, other_column):
            raise _UsageError(
                "pairmetrics paired: error: --compare names the same column of the same file as SCORES, which would "
                "compare a model with itself; pick the second model's column with --compare-column"
            )
        other = read(args.compare, "scores B", column=other_column)
        with run.step("paired comparison", 1.0):
            c = compare_models(labels, [scores, other], min_dist=args.min_dist, n_jobs=args.n_jobs, progress=progress)
            a, b = (
                paired_evaluation(labels, s, min_dist=args.min_dist, n_jobs=args.n_jobs, warn=False, variance=False)
                for s in (scores, other)
            )
        low, high = (float(x[0, 1]) for x in c.confidence_interval())
        record = {
            "a": a.asdict(),
            "b": b.asdict(),
            "auc_difference": float(c.difference[0, 1]),
            "confidence_interval": [low, high],
            "statistic": c.statistic,
            "pvalue": c.pvalue,
        }
        lines = [
            f"model {name}: AUC {m.auc:.6f} ({m.n_correct} of {m.n_rankable} rankable pairs correct, {m.n_tied} tied)"
            for name, m in (("A", a), ("B", b))
        ] + [
            f"difference {c.difference[0, 1]:+.6f}, 95% CI [{low:+.6f}, {high:+.6f}]: "
            f"chi-square = {c.statistic:.4f} (1 df), p = {c.pvalue:.4g} (DeLong's paired test)",
        ]
        return record, lines
    with run.step("paired evaluation", 1.0):
        r = paired_evaluation(
            labels, scores, min_dist=args.min_dist, n_jobs=args.n_jobs, warn=False, progress=progress, variance=True
        )
    low, high = (float(x) for x in r.confidence_interval())
    record = r.asdict() | {"auc": r.auc, "confidence_interval": [low, high]}
    lines = [
        f"rankable pairs  {r.n_rankable}",
        f"correct         {r.n_correct}",
        f"tied scores     {r.n_tied}",
        f"incorrect       {r.n_incorrect}",
        f"AUC             {r.auc:.6f}  (ties count 1/2; min_dist {r.min_dist:g})",
        f"95% CI          [{low:.6f}, {high:.6f}]  (DeLong)",
    ]
    return record, lines


def _cmd_two_vs_two(args, run: RunProgress) -> Output:
    from . import two_vs_two

    read = _Inputs(args, run, 2)
    targets = read(args.targets, "targets", ndim=2)
    predictions = read(args.predictions, "predictions", ndim=2)
    pairs = args.pairs if args.pairs in ("all", "distinct_targets") else _int_option(args.pairs, "--pairs")
    with run.step("2 vs 2", 1.0):
        r = two_vs_two(
            targets,
            predictions,
            metric=args.metric,
            ties=args.ties,
            pairs=pairs,
            rng=args.seed,
            n_jobs=args.n_jobs,
            progress=run.enabled,
        )
    passed, total, accuracy = r.n_passed, r.n_total, r.accuracy
    record = {"n_passed": passed, "n_total": total, "accuracy": accuracy, "metric": args.metric, "ties": args.ties}
    return record, [
        (f"2 vs 2 accuracy {accuracy:.6f}: {passed} of {total} pairs pass (metric {args.metric}, ties {args.ties})")
    ]


def _cmd_crossmatch(args, run: RunProgress) -> Output:
    from . import crossmatch_test

    read = _Inputs(args, run, 2)
    options = dict(rng=args.seed, n_neighbors=args.n_neighbors, progress=run.enabled)
    if args.groups or args.distances:
        if not (args.groups and args.distances) or args.x or args.y:
            raise _UsageError("pairmetrics crossmatch: error: give either X Y, or both --groups and --distances")
        groups, distances = read(args.groups, "groups"), read(args.distances, "distances", ndim=2)
        with run.step("cross-match", 1.0):
            r = crossmatch_test(D=distances, labels=groups, **options)
    else:
        if not (args.x and args.y):
            raise _UsageError("pairmetrics crossmatch: error: give the two samples X Y (or --groups Z --distances D)")
        x, y = read(args.x, "X", ndim=2), read(args.y, "Y", ndim=2)
        with run.step("cross-match", 1.0):
            r = crossmatch_test(x, y, metric=args.metric, **options)
    record = {name: value for name, value in r.asdict().items() if name not in ("order", "matching")}
    return record, [
        f"cross-matches  {r.statistic} (expected {r.expected:.4f} under H0, variance {r.variance:.4f})",
        f"exact p-value  {r.pvalue:.6g}",
        f"normal approx  z = {r.zscore:.4f}, p = {r.approx_pvalue:.6g}",
    ]


def _cmd_measures(args, run: RunProgress) -> Output:
    from . import absolute_error, rms_error, sum_squares_error, worst_case_error, zero_one_error

    read = _Inputs(args, run, 2)
    actual = read(args.actual, "actual values", column=args.column, ndim=None)
    predicted = read(args.predicted, "predictions", column=args.column, ndim=actual.ndim)
    record: dict[str, Any] = {}
    measures: list[tuple[str, Callable[..., Any]]] = [
        ("zero_one", zero_one_error),
        ("absolute", absolute_error),
        ("sum_squares", sum_squares_error),
        ("rms", rms_error),
        ("worst_case", worst_case_error),
    ]
    with run.step("error measures", 1.0):
        for name, func in measures:
            averaged = name not in ("rms", "worst_case")
            record[name] = float(func(actual, predicted, average=args.mean) if averaged else func(actual, predicted))
        if args.probabilities:
            from . import log_loss

            record["log_loss"] = float(log_loss(actual, predicted))
    kind = "mean per example" if args.mean else "sum over examples"
    return record, [f"{name:<12}{value:.6g}" for name, value in record.items()] + [
        f"(0/1, absolute and squares: {kind})"
    ]


def _cmd_multilabel(args, run: RunProgress) -> Output:
    from . import multilabel_counts

    read = _Inputs(args, run, 2)
    truth, guess = read(args.true, "true labels", ndim=2), read(args.pred, "predicted labels", ndim=2)
    with run.step("multi-label counts", 1.0):
        r = multilabel_counts(truth, guess, false_pos=args.false_pos, false_neg=args.false_neg)
    record = {
        "tp": r.tp,
        "tn": r.tn,
        "fp": r.fp,
        "fn": r.fn,
        "mean_sample_accuracy": r.mean_sample_accuracy,
        "weighted_score": r.weighted_score,
    }
    return record, [
        f"TP {r.tp}  TN {r.tn}  FP {r.fp}  FN {r.fn}",
        f"mean accuracy per sample {float(r.mean_sample_accuracy):.6f}",
        (
            f"weighted score {float(r.weighted_score):.6f} "
            f"(false positive -{args.false_pos:g}, false negative -{args.false_neg:g})"
        ),
    ]


def _bench_suite() -> Any:
    """The benchmark suite's ``run_all`` module from bench/ of a source checkout (wheels do not ship it)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "run_all.py"
    if not path.is_file():
        raise ValueError(
            "the benchmark suite lives in the repository, not in the installed package: "
            "run `python bench/run_all.py --quick` from a clone"
        )
    spec = importlib.util.spec_from_file_location("run_all", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cmd_bench(args, run: RunProgress) -> Output | None:
    suite = _bench_suite()
    names = args.only.split(",") if args.only else suite.available()
    unknown = sorted(set(names) - set(suite.available()))
    if unknown:
        raise _UsageError(
            f"pairmetrics bench: error: unknown benchmark(s) {', '.join(unknown)}; "
            f"available: {', '.join(suite.available())}"
        )
    out: Callable[..., None] = (lambda *a: None) if args.json else print
    results: dict[str, Any] = {}
    for name in names:
        with run.step(f"benchmark {name}", 1 / len(names)):
            results.update(suite.run_suite(args.quick, [name], write=False, out=out))
    return (results, []) if args.json else None


def _cmd_demo(args, run: RunProgress) -> None:
    from ._demo import run_demo

    with run.step("generated data", 1.0):
        run_demo(small=args.small, json_output=args.json)


# --- helpers ---------------------------------------------------------------------------


def _show_progress(args) -> bool:
    """A bar when asked (--progress), else when a person watches stderr on a terminal and tqdm is installed."""
    if args.progress is False:
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        if args.progress:
            raise MissingExtraError('--progress needs tqdm: pip install "pairmetrics[cli]"') from None
        return False
    return bool(args.progress) or sys.stderr.isatty()


def _same_column(args, other_column) -> bool:
    """Whether --column and the second model's column name one column (by name, index, or one of each)."""
    if other_column == args.column:
        return True
    position = column_position(args.scores, args.column, args.header)
    return position is not None and position == column_position(args.compare, other_column, args.header)


def _same_file(a: str, b: str) -> bool:
    """Whether two input arguments name one file (standard input is read once, so never twice)."""
    from pathlib import Path

    if "-" in (a, b):
        return False
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


def _int_option(text, option):
    try:
        return int(text)
    except ValueError:
        raise _UsageError(
            f"pairmetrics: error: {option} must be 'all', 'distinct_targets' or a whole number, got {text!r}"
        ) from None


_EPILOG = (
    FORMATS_HELP + " Exit status: 0 success, 2 a usage or data error (one line on stderr), "
    "70 an internal error (with its traceback), 130 interrupted."
)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pairmetrics", description="Fast, exact evaluation of model predictions.", epilog=_EPILOG)
    parser.add_argument("--version", action="version", version=f"pairmetrics {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name, func, help_text, reads_files=True):
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=FORMATS_HELP if reads_files else None)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
        p.add_argument(
            "--progress",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="show a progress bar on stderr over the whole run, or not (default: only when stderr is "
            "a terminal; needs tqdm)",
        )
        p.add_argument("--quiet", dest="progress", action="store_false", default=None, help="the same as --no-progress")
        if reads_files:
            first_row = p.add_mutually_exclusive_group()
            first_row.add_argument(
                "--header",
                dest="header",
                action="store_const",
                const=True,
                default=None,
                help="the first row of every text input is a header (skipped)",
            )
            first_row.add_argument(
                "--no-header",
                dest="header",
                action="store_const",
                const=False,
                help="the first row of every text input is data",
            )
        return p

    p = command("demo", _cmd_demo, "run every capability on generated data and print a report", reads_files=False)
    p.add_argument("--small", action="store_true", help="smaller data (a few seconds)")

    p = command("paired", _cmd_paired, "paired evaluation of scores against labels")
    p.add_argument("scores", metavar="SCORES", help="a model's scores, one per example (file or '-')")
    p.add_argument("labels", metavar="LABELS", help="the examples' labels, ordinal or real-valued (file or '-')")
    p.add_argument("--min-dist", type=float, default=0.5, help="label separation of a rankable pair (0.5)")
    p.add_argument("--column", help="column of SCORES by header name or 0-based index")
    p.add_argument("--label-column", help="column of LABELS by header name or 0-based index")
    p.add_argument("--compare", metavar="SCORES_B", help="a second model's scores: compare the two")
    p.add_argument(
        "--compare-column",
        help="column of SCORES_B by header name or 0-based index (default: --column); two columns of one file "
        "compare two models",
    )
    p.add_argument("--n-jobs", type=int, default=None, help="threads (default: every core this process may use)")

    p = command("two-vs-two", _cmd_two_vs_two, "the 2 vs 2 test of vector predictions")
    p.add_argument("targets", metavar="TARGETS", help="true vectors, one row per example (file or '-')")
    p.add_argument("predictions", metavar="PREDICTIONS", help="predicted vectors, rows matching TARGETS (file or '-')")
    p.add_argument(
        "--metric",
        default="cosine",
        choices=["cosine", "correlation", "euclidean", "sqeuclidean"],
        help="distance between vectors (cosine)",
    )
    p.add_argument(
        "--ties", default="fail", choices=["fail", "pass", "half", "exclude"], help="how a tied pair counts (fail)"
    )
    p.add_argument("--pairs", default="all", help="'all', 'distinct_targets' or a number of sampled pairs (all)")
    p.add_argument("--seed", type=int, default=None, help="seed for sampled pairs")
    p.add_argument("--n-jobs", type=int, default=None, help="threads (default: every core this process may use)")

    p = command("crossmatch", _cmd_crossmatch, "Rosenbaum's cross-match test of two samples")
    p.add_argument("x", nargs="?", metavar="X", help="the first sample, one point per row (file or '-')")
    p.add_argument("y", nargs="?", metavar="Y", help="the second sample, same number of columns as X (file or '-')")
    p.add_argument("--metric", default="euclidean", help="a scipy cdist metric or 'rank_mahalanobis' (euclidean)")
    p.add_argument("--groups", help="0/1 group labels (with --distances, instead of X Y)")
    p.add_argument("--distances", help="square distance matrix (with --groups)")
    p.add_argument("--seed", type=int, default=None, help="seed of the random order that breaks ties (tied points)")
    p.add_argument("--n-neighbors", type=int, default=10, help="start graph size of the matching, speed only (10)")

    p = command("measures", _cmd_measures, "classic error measures of point predictions")
    p.add_argument("actual", metavar="ACTUAL", help="actual values, a vector or a table (file or '-')")
    p.add_argument("predicted", metavar="PREDICTED", help="predicted values, the shape of ACTUAL (file or '-')")
    p.add_argument("--column", help="column (header name or 0-based index) in both tables")
    p.add_argument("--mean", action="store_true", help="means per example instead of sums")
    p.add_argument("--probabilities", action="store_true", help="also the log loss (0/1 actual, predicted in [0, 1])")

    p = command("multilabel", _cmd_multilabel, "multi-label TP/TN/FP/FN counts and penalised score")
    p.add_argument("true", metavar="TRUE", help="0/1 true labels, one row per example (file or '-')")
    p.add_argument("pred", metavar="PRED", help="0/1 predicted labels, the shape of TRUE (file or '-')")
    p.add_argument("--false-pos", type=float, default=1.0, help="penalty per false positive (1)")
    p.add_argument("--false-neg", type=float, default=1.0, help="penalty per false negative (1)")

    p = command("bench", _cmd_bench, "run the benchmark suite and print the comparison tables", reads_files=False)
    p.add_argument("--quick", action="store_true", help="small sizes, about a minute in all")
    p.add_argument("--only", help="comma-separated benchmark names (default: all)")
    return parser


def _is_user_error(exc: BaseException) -> bool:
    """True for errors that report a user mistake; False for bugs.

    User mistakes are the command line's own ``_UsageError``, an ``OSError``
    about a named file, and ``ValueError``/``TypeError`` raised by a ``raise``
    statement in pairmetrics' Python code (its validation). Anything raised
    inside numpy, scipy, the extension or the standard library is not.
    """
    if isinstance(exc, (_UsageError, MissingExtraError)):
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


def main(argv: list[str] | None = None) -> int:
    """Run the ``pairmetrics`` command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 success, 2 a usage or data error, 70 an internal
        error, 130 interrupted.

    Examples
    --------
    >>> from pairmetrics.__main__ import main
    >>> main(["--version"])  # doctest: +ELLIPSIS
    pairmetrics ...
    0
    """
    argv = sys.argv[1:] if argv is None else argv
    if not argv:  # a bare `pairmetrics`: what it can do, not an error message
        print(_parser().format_help(), end="", file=sys.stderr)
        return EXIT_USAGE
    try:
        args = _parser().parse_args(argv)
        with RunProgress(f"pairmetrics {args.command}", _show_progress(args)) as run, run.printing():
            output = args.func(args, run)
        if output is not None:  # after the bar is finished, so that it does not cut through the result
            _emit(args, *output)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
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
        print(
            "pairmetrics: internal error (a bug in pairmetrics; please report it with the traceback above)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return 0


if __name__ == "__main__":
    sys.exit(main())
