"""Benchmark of the command line's input reader (pyarrow's CSV reader) against its anchor, ``pandas.read_csv``.

The same CSV files (a column of 2e6 floats written to 17 digits, and a table
of 2e6 floats in 8 columns, each with a header row) are read by the anchor
``pandas.read_csv(path).to_numpy()`` and by the reader of ``pairmetrics
paired`` (``header=True``), taking turns so that a busy machine slows both
alike. Memory is the peak resident size added by one read in a fresh
process, per value read (8 bytes is the size of the numbers; not measured
with --quick, where fixed buffers dominate). The last column counts values
that differ from the ones written (pandas' default float parser is not
correctly rounded).

    python bench/bench_reader.py            # 2e6 values
    python bench/bench_reader.py --quick    # 2e4 values, a few seconds
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:  # as part of the installed package (pairmetrics.bench)
    from ._common import machine, markdown_table, simple_main
    from .bench_measures import alternating_medians
except ImportError:  # as a script: python bench/bench_reader.py
    from _common import machine, markdown_table, simple_main
    from bench_measures import alternating_medians

READERS = {
    "pandas.read_csv (anchor)": "pandas.read_csv(path).to_numpy()",
    "pairmetrics reader": "load_array(path, header=True, ndim=None)",
}

_MEMORY_SCRIPT = """
import sys
import numpy as np, pandas, pyarrow.csv
from pairmetrics._io import load_array
path = sys.argv[1]
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) * 1024
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # peak resident size := current
before = status("VmRSS:")
array = {call}
print(status("VmHWM:") - before, array.size)
"""


def _write_table(path: Path, n_values: int, columns: int, rng) -> np.ndarray:
    values = rng.normal(size=(n_values // columns, columns))
    header = ",".join(f"c{i}" for i in range(columns))
    np.savetxt(path, values, fmt="%.17g", delimiter=",", header=header, comments="")
    return values


def _bytes_per_value(call: str, path: Path) -> float | None:
    """Peak resident memory added by one read, per value, in a fresh process (Linux only)."""
    if not Path("/proc/self/clear_refs").exists():
        return None
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_SCRIPT.format(call=call), str(path)], capture_output=True, text=True, check=True
    )
    added, size = map(int, proc.stdout.split())
    return added / size


def run(quick: bool = False) -> dict:
    import pandas
    from pairmetrics._io import load_array

    n_values = 20_000 if quick else 2_000_000
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for columns in (1, 8):
            path = Path(tmp) / f"table{columns}.csv"
            values = _write_table(path, n_values, columns, rng)
            funcs = [
                lambda call=call, path=path: eval(call, {"pandas": pandas, "load_array": load_array, "path": path})
                for call in READERS.values()
            ]
            times = alternating_medians(funcs, repeats=3 if quick else 5)
            for (name, call), func, seconds in zip(READERS.items(), funcs, times):
                wrong = int((func().reshape(values.shape) != values).sum())  # written to 17 digits: exact
                rows.append(
                    {
                        "reader": name,
                        "columns": columns,
                        "values": n_values,
                        "seconds": seconds,
                        "values_not_exact": wrong,
                        "ratio_to_anchor": seconds / times[0],
                        "bytes_per_value": None if quick else _bytes_per_value(call, path),
                    }
                )
    return {"machine": machine(), "rows": rows}


def table(result: dict) -> str:
    body = [
        [
            r["reader"],
            r["columns"],
            f"{r['values']:.0e}",
            f"{r['seconds']:.3f}",
            f"{r['ratio_to_anchor']:.2f}",
            "n/a" if r["bytes_per_value"] is None else f"{r['bytes_per_value']:.1f}",
            r["values_not_exact"],
        ]
        for r in result["rows"]
    ]
    header = [
        "reader",
        "columns",
        "values",
        "seconds (median)",
        "x anchor",
        "peak bytes/value",
        "values off by rounding",
    ]
    return markdown_table(header, body)


if __name__ == "__main__":
    simple_main("reader", __doc__.splitlines()[0], run, table)
