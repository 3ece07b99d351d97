"""Compare the ratios of two runs of the suite: ``python bench/compare_runs.py BEFORE.json AFTER.json``.

Each file is written by ``python bench/run_all.py [--quick] --json PATH``. Every number whose key names a
ratio (``ratio``, ``ratio_to_...``, ``..._ratio``; for a ratio per method, pairmetrics' entry) is matched by its
path in both runs; the table lists the change of each, and marks those where pairmetrics fell behind its anchor
by more than the tolerance (5 % by default). Most ratios are pairmetrics' time over the anchor's, so a rise is
a loss; those in ``SPEEDUPS`` are the peer's time over pairmetrics', so a fall is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# Ratios that are a peer's time over pairmetrics' (a speed-up): a fall is a loss there.
SPEEDUPS = ("/scipy/", "/distance_tests/peer")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def ratios(node: object, path: str = "") -> dict[str, float]:
    """Every ratio in a result tree, keyed by its path (list items by index)."""
    found: dict[str, float] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}/{key}"
            if "ratio" in str(key) and _number(value):
                found[here] = float(value)
            elif "ratio" in str(key) and isinstance(value, dict) and _number(value.get("pairmetrics")):
                found[f"{here}/pairmetrics"] = float(value["pairmetrics"])  # one ratio per method
            else:
                found.update(ratios(value, here))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.update(ratios(value, f"{path}[{i}]"))
    return found


def compare(before: dict, after: dict, tolerance: float) -> tuple[list[list[str]], int]:
    old, new = ratios(before), ratios(after)
    rows, beyond = [], 0
    for key in sorted(old.keys() & new.keys()):
        change = new[key] / old[key] - 1 if old[key] else float("nan")
        worse = change < -tolerance if key.startswith(SPEEDUPS) else change > tolerance
        beyond += worse
        rows.append([key, f"{old[key]:.4g}", f"{new[key]:.4g}", f"{change:+.1%}", "slower" if worse else ""])
    return rows, beyond


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.05, help="relative change that counts (0.05)")
    args = parser.parse_args(argv)
    rows, beyond = compare(json.loads(args.before.read_text()), json.loads(args.after.read_text()), args.tolerance)
    print("| result | before | after | change | |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n{len(rows)} ratios compared, {beyond} more than {args.tolerance:.0%} worse for pairmetrics after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
