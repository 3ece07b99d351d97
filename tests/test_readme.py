"""Every Python example in README.md prints exactly what the README shows.

Blocks are either doctest sessions (``>>>``) or scripts in which a line that
starts with "# " at column 0 is expected output. The blocks of one "## "
section share their variables.
"""

import contextlib
import doctest
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

try:  # a source checkout has no entry points: make networkx see the backend
    from pairmetrics import networkx_backend

    networkx_backend._register_without_entry_points()
except ImportError:
    pass


def _sections():
    sections = re.split(r"^## ", README.read_text(), flags=re.M)[1:]
    found = []
    for section in sections:
        blocks = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
        if blocks:
            found.append(pytest.param(blocks, id=section.splitlines()[0].strip()))
    return found


def _run_doctest(block, namespace):
    test = doctest.DocTestParser().get_doctest(block, namespace, "README", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    report = io.StringIO()
    result = runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)  # DocTest works on a copy
    assert result.failed == 0, report.getvalue()


def _run_script(block, namespace):
    lines = block.splitlines()
    code = "\n".join(line for line in lines if not line.startswith("# "))
    expected = [line[2:] for line in lines if line.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), namespace)
    assert out.getvalue().splitlines() == expected


@pytest.mark.parametrize("blocks", _sections())
def test_readme_examples_print_what_the_readme_shows(blocks):
    namespace = {}
    for block in blocks:
        (_run_doctest if block.lstrip().startswith(">>>") else _run_script)(block, namespace)
