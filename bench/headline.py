"""The headline of the benchmarks: each capability's time as a ratio to an anchor timed in the same run.

Reads ``results/*.json`` (nothing is timed here) and gives the Markdown table of the README and of the
documentation's benchmarks page, and the ratio chart ``results/headline.png``:

    python bench/headline.py            # prints the table, writes the chart
    python bench/run_all.py --plots-only  # the same, with every capability's own plots

A row enters the headline only when its results file is newer than the last commit that changed the code it
times (checked with git when the clone has its history): numbers of an earlier kernel are left out, and
``stale()`` says which files need a rerun.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
ROOT = HERE.parent

# The kernels (or, for Dask, the task graphs) each results file times: a rerun is needed after any commit that
# touches them (git pathspecs: a * matches any file name). Changes to the Python layer above a kernel
# (validation, routing) do not count.
TIMED_CODE = {
    "paired": ["cpp/paired*", "cpp/key_sort.hpp", "cpp/bindings/register_paired.cpp"],
    "measures": ["cpp/measures.cpp", "cpp/measures.hpp", "cpp/bindings/register_measures.cpp"],
    "dropins": ["cpp/roc_auc.cpp", "cpp/roc_auc.hpp", "cpp/concordance.cpp", "cpp/concordance.hpp", "cpp/key_sort.hpp"],
    "two_vs_two": [
        "cpp/two_vs_two.cpp",
        "cpp/two_vs_two.hpp",
        "cpp/euclidean.hpp",
        "cpp/bindings/register_two_vs_two.cpp",
    ],
    "matching_scaling": ["cpp/matching*", "cpp/euclidean.hpp"],
    "networkx": ["cpp/matching*", "python/pairmetrics/networkx_backend.py"],
    "distance_tests": ["cpp/distance_sums*", "cpp/euclidean.hpp", "cpp/bindings/register_distance_tests.cpp"],
    "dask": ["python/pairmetrics/dask", "python/pairmetrics/_routing.py", "cpp/group_dominance.cpp"],
}


@dataclass(frozen=True)
class Row:
    capability: str
    case: str
    seconds: float
    anchor: str
    anchor_seconds: float

    @property
    def ratio(self) -> float:
        return self.seconds / self.anchor_seconds


def _load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _formatting_commits() -> set[str]:
    """Commits listed in .git-blame-ignore-revs (formatting only): they change no measured code."""
    path = ROOT / ".git-blame-ignore-revs"
    if not path.is_file():
        return set()
    return {line.split()[0] for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")}


def _commit_time(*paths: str) -> int | None:
    """Unix time of the last commit touching ``paths``, formatting commits aside; None without git history."""
    try:
        out = subprocess.run(
            ["git", "log", "--format=%H %ct", "--", *paths],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return None
    skip = _formatting_commits()
    for line in out:
        if line.strip():
            commit, time = line.split()
            if commit not in skip:
                return int(time)
    return None


def stale() -> list[str]:
    """Results files measured before the last change of the code they time (empty without git history)."""
    found = []
    for name, code in TIMED_CODE.items():
        measured, changed = _commit_time(f"bench/results/{name}.json"), _commit_time(*code)
        if measured is not None and changed is not None and changed > measured:
            found.append(name)
    return found


def _paired(result: dict) -> list[Row]:
    rows = []
    for r in result["rows"]:
        if r["n"] in (1_000_000, 10_000_000):
            kind = "uniform labels" if r["labels"] == "uniform" else "binary labels"
            rows.append(
                Row(
                    "paired evaluation",
                    f"{kind}, n = {_size(r['n'])}",
                    r["pairmetrics_all_threads_s"],
                    "numpy argsort + sort",
                    r["numpy_sort_pipeline_s"],
                )
            )
            if r["n"] == 1_000_000:
                rows.append(
                    Row(
                        "paired evaluation",
                        f"{kind}, n = {_size(r['n'])}",
                        r["pairmetrics_all_threads_s"],
                        "pairedeval's procedure",
                        r["pairedeval_s"],
                    )
                )
    return rows


def _measures(result: dict) -> list[Row]:
    wanted = {"absolute_error": "absolute_error, n = 1e7", "log_loss": "log_loss, n = 1e7"}
    rows = []
    for r in result["rows"]:
        if r["case"] in wanted:
            rows.append(
                Row("classic measures", wanted[r["case"]], r["pairmetrics_s"], "numpy expression", r["anchor_s"])
            )
            if r.get("sklearn_s"):
                rows.append(
                    Row("classic measures", wanted[r["case"]], r["pairmetrics_s"], "scikit-learn", r["sklearn_s"])
                )
        elif r["case"].startswith("multilabel_counts (sparse"):
            rows.append(
                Row(
                    "multi-label counts",
                    "sparse 1e6 x 1e4, 1e7 non-zeros",
                    r["pairmetrics_s"],
                    "scipy product + bincount",
                    r["anchor_s"],
                )
            )
    return rows


def _dropins(result: dict) -> list[Row]:
    rows = []
    for r in result["rows"]:
        case = r["case"].replace("1e+07", "1e7").replace("1e+06", "1e6").replace("2e+04", "2e4")
        rows.append(Row("drop-in", case, r["pairmetrics_s"], r["peer"], r["peer_s"]))
    return rows


def _two_vs_two(result: dict) -> list[Row]:
    return [
        Row(
            "2 vs 2 test",
            f"n = {r['n']}, d = {r['d']}, {r['dtype']}",
            r["median_s"]["pairmetrics"],
            "numpy Y @ P.T",
            r["median_s"]["numpy_gemm"],
        )
        for r in result["rows"]
        if r["n"] == 20000
    ]


def _dask(result: dict) -> list[Row]:
    rows = [
        Row("Dask", f"paired evaluation, {_size(r['n'])} {r['dtype']}", r["dask_s"], "in-memory call", r["in_memory_s"])
        for r in result.get("paired", [])
    ]
    rows += [
        Row("Dask", f"2 vs 2, n = {_size(r['n'])}, d = {r['d']}", r["dask_s"], "in-memory call", r["in_memory_s"])
        for r in result.get("two_vs_two", [])
    ]
    return rows


def _distance_tests(result: dict) -> list[Row]:
    return [
        Row(
            "energy test",
            f"{r['what']}, {_size(r['n_per_sample'])} vs {_size(r['n_per_sample'])}, d = 50",
            r["pairmetrics_s"],
            "dcor",
            r["dcor_s"],
        )
        for r in result["peer"]
        if r["n_per_sample"] == max(p["n_per_sample"] for p in result["peer"])
    ]


READERS = {
    "paired": _paired,
    "two_vs_two": _two_vs_two,
    "measures": _measures,
    "dropins": _dropins,
    "dask": _dask,
    "distance_tests": _distance_tests,
}


def rows(include_stale: bool = False) -> list[Row]:
    """Headline rows from the results files; those of stale files only with ``include_stale``."""
    skip = set() if include_stale else set(stale())
    found = []
    for name, read in READERS.items():
        if name not in skip and (RESULTS / f"{name}.json").exists():
            found += [row for row in read(_load(name)) if row.seconds and row.anchor_seconds]  # not timed: None
    return found


def _size(n: int) -> str:
    """1e6 rather than 1e+06."""
    return f"{n:.0e}".replace("e+0", "e").replace("e+", "e")


def _seconds(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def _ratio(r: float) -> str:
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x ({1 / r:.0f}x faster)"


HEADER = ["capability", "case", "pairmetrics", "anchor or peer", "time / anchor"]


def cells(r: Row) -> list[str]:
    return [r.capability, r.case, _seconds(r.seconds), f"{r.anchor} {_seconds(r.anchor_seconds)}", _ratio(r.ratio)]


def markdown(found: list[Row]) -> str:
    """The headline table: time / anchor below 1 means faster than the anchor."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    return "\n".join(lines + ["| " + " | ".join(cells(r)) + " |" for r in found])


def rst(found: list[Row]) -> str:
    """The same table as a reST list-table (for the documentation); a sentence when no row is current."""
    if not found:
        return "No result is current: every results file predates a change of the code it times.\n"
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [HEADER] + [cells(r) for r in found]:
        lines += [f"   * - {row[0]}"] + [f"     - {cell}" for cell in row[1:]]
    return "\n".join(lines) + "\n"


def plot(found: list[Row], path: Path) -> None:
    """Horizontal bars of time / anchor on a log axis; the anchor is the line at 1."""
    try:
        from .plots import figure_and_axes, save
    except ImportError:
        from plots import figure_and_axes, save

    labels = [f"{r.capability}: {r.case}\nvs {r.anchor}" for r in found]
    ratios = [r.ratio for r in found]
    fig, ax = figure_and_axes(width=9, height=0.55 * len(found) + 1.6)
    positions = range(len(found))[::-1]
    colours = ["#2a7ab9" if x < 1 else "#c8553d" for x in ratios]
    ax.barh(list(positions), ratios, color=colours, height=0.6)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlim(right=max(2.0, 1.5 * max(ratios)))
    ax.set_yticks(list(positions), labels, fontsize=8)
    ax.set_xlabel("pairmetrics time / anchor time in the same run (log scale; left of the line: faster)")
    for y, x in zip(positions, ratios):
        ax.annotate(f"{x:.2g}x", (x, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_title("pairmetrics against an anchor timed in the same run (shared 2-core machine)")
    save(fig, path)


def main() -> None:
    found = rows()
    print(markdown(found))
    left_out = stale()
    if left_out:
        print(f"\nleft out (measured before the last change of the code they time): {', '.join(left_out)}")
    try:
        plot(found, RESULTS / "headline.png")
        print(f"wrote {RESULTS / 'headline.png'}")
    except ImportError:
        print("(matplotlib is not installed: no chart)")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(HERE))
    main()
