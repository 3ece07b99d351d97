"""Run every benchmark in one go: results/*.json, Markdown tables, PNG plots.

    python bench/run_all.py [--quick] [--only paired,two_vs_two,...]
    pairmetrics bench [--quick]          (the same, from an installed package)

Each ``bench_<name>.py`` module provides ``run(quick) -> dict`` and
``table(result) -> str``, and optionally ``plot(result, path)``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def available() -> list:
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))


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


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the pairmetrics benchmark suite.")
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute in all")
    parser.add_argument("--only", help=f"comma-separated subset of {available()}")
    args = parser.parse_args(argv)
    run_suite(args.quick, args.only.split(",") if args.only else None)


if __name__ == "__main__":
    main()
