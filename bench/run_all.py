"""Run every benchmark in one go: results/*.json, Markdown tables, PNG plots.

    python bench/run_all.py [--quick] [--only paired,two_vs_two,...]
    python bench/run_all.py --plots-only     (no timing: plots and headline from results/*.json)
    python bench/run_all.py --quick --json after.json; python bench/compare_runs.py before.json after.json

Each ``bench_<name>.py`` module provides ``run(quick) -> dict`` and
``table(result) -> str``, and optionally ``plot(result, path)``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def available() -> list:
    return sorted(m.name[len("bench_") :] for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))


def _module(name: str):
    if __package__:
        return importlib.import_module(f"{__package__}.bench_{name}")
    sys.path.insert(0, str(HERE))
    return importlib.import_module(f"bench_{name}")


def run_suite(quick: bool = False, only=None, write: bool = True, out=print) -> dict:
    """Run the selected benchmarks; returns {name: result}."""
    if __package__:
        from ._common import write_results
    else:
        sys.path.insert(0, str(HERE))
        from _common import write_results
    names = only or available()
    unknown = set(names) - set(available())
    if unknown:
        raise ValueError(f"unknown benchmark(s) {sorted(unknown)}; available: {available()}")
    results = {}
    for name in names:
        module = _module(name)
        out(f"\n## {name}{' (quick)' if quick else ''}\n")
        result = module.run(quick)
        results[name] = result
        out(module.table(result) if hasattr(module, "table") else str(result))
        if write and not quick:
            path = write_results(name, result)
            out(f"\nwrote {path}")
            if hasattr(module, "plot"):
                try:
                    module.plot(result, path.with_suffix(".png"))
                    out(f"wrote {path.with_suffix('.png')}")
                except ImportError:
                    out("(matplotlib is not installed: no plot)")
    return results


def headline_chart(out=print) -> None:
    """The headline table and ratio chart (results/headline.png) from results/*.json."""
    if __package__:
        from . import headline
    else:
        sys.path.insert(0, str(HERE))
        import headline
    found = headline.rows()
    headline.plot(found, HERE / "results" / "headline.png")
    out(f"wrote {HERE / 'results' / 'headline.png'}\n\n{headline.markdown(found)}")
    if headline.stale():
        out(f"\nleft out of the headline (rerun them): {', '.join(headline.stale())}")


def plots_only(only=None, out=print) -> None:
    """Redraw every plot and the headline chart from the results already in results/*.json."""
    for name in only or available():
        module = _module(name)
        path = HERE / "results" / f"{name}.json"
        if hasattr(module, "plot") and path.exists():
            module.plot(json.loads(path.read_text()), path.with_suffix(".png"))
            out(f"wrote {path.with_suffix('.png')}")
    headline_chart(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the pairmetrics benchmark suite.")
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute in all")
    parser.add_argument("--only", help=f"comma-separated subset of {available()}")
    parser.add_argument(
        "--plots-only",
        action="store_true",
        help="time nothing: redraw the plots and the headline chart from results/*.json",
    )
    parser.add_argument("--json", metavar="PATH", help="also write every result to PATH (for compare_runs.py)")
    args = parser.parse_args(argv)
    only = args.only.split(",") if args.only else None
    if args.plots_only:
        plots_only(only)
    else:
        results = run_suite(args.quick, only)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1, default=float) + "\n")
        if not args.quick:
            headline_chart()


if __name__ == "__main__":
    main()
