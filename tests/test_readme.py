"""Every Python example in README.md prints exactly what the README shows.

Blocks are either doctest sessions (``>>>``) or scripts in which a line that
starts with "# " at column 0 is expected output. The blocks of one "## "
section share their variables.
"""

import itertools
import re
from pathlib import Path

import pytest
from _examples import run

README = Path(__file__).resolve().parents[1] / "README.md"


def _sections():
    sections = re.split(r"^## ", README.read_text(), flags=re.MULTILINE)[1:]
    found = []
    for section in sections:
        blocks = re.findall(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
        if blocks:
            found.append(pytest.param(blocks, id=section.splitlines()[0].strip()))
    return found


@pytest.mark.parametrize("blocks", _sections())
def test_readme_examples_print_what_the_readme_shows(blocks):
    namespace = {}
    for block in blocks:
        run(block, namespace, str(README))


def _headline():
    import importlib
    import sys

    sys.path.insert(0, str(README.parent / "bench"))
    try:
        return importlib.import_module("headline")
    finally:
        sys.path.pop(0)


def test_benchmark_table_comes_from_the_results_files():
    """The README's benchmark rows are generated from bench/results/*.json (``python bench/headline.py``): none is
    typed by hand, and every row measured on the current kernels is shown."""
    headline = _headline()
    lines = README.read_text().splitlines()
    start = lines.index("| capability | case | pairmetrics | anchor or peer | time / anchor |") + 2
    shown = set(itertools.takewhile(lambda line: line.startswith("| "), lines[start:]))
    measured = {f"| {' | '.join(headline.cells(row))} |" for row in headline.rows(include_stale=True)}
    current = {f"| {' | '.join(headline.cells(row))} |" for row in headline.rows()}
    assert shown and shown <= measured
    assert current <= shown
