"""Every benchmark module runs at its quick sizes against the current API (``run_all.py --quick`` does this),
each timed call once.

Nothing here is timed or compared: the numbers belong to ``bench/``. Spark's module starts a JVM and is run by
``python bench/run_all.py --quick``; its code paths are the ones ``tests/test_spark.py`` covers.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
MODULES = sorted(p.stem[len("bench_") :] for p in BENCH.glob("bench_*.py") if p.stem != "bench_spark")


@pytest.fixture(scope="module")
def bench_path():
    sys.path.insert(0, str(BENCH))
    common = importlib.import_module("_common")
    common.SMOKE = True  # every timed call once: these runs check the code, not the numbers
    yield
    common.SMOKE = False
    sys.path.remove(str(BENCH))


@pytest.mark.slow
@pytest.mark.parametrize("name", MODULES)
def test_quick_run_produces_a_table(name, bench_path):
    if name == "dask":
        pytest.importorskip("distributed")
    module = importlib.import_module(f"bench_{name}")
    result = module.run(True)
    assert isinstance(result, dict) and result
    if hasattr(module, "table"):
        assert "|---" in module.table(result)
