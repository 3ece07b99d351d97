"""Every example of the documentation pages (docs/**/*.rst) prints what the page shows.

reST doctest blocks (``>>>`` at column 0) and ``.. code-block:: python`` scripts run in page order and share
one namespace per page; ``.. code-block:: console`` examples run in a temporary directory. The building of
the documentation itself (``python -m sphinx -W``) is a CI step.
"""

import re
import textwrap
from pathlib import Path

import pytest
from _examples import run, run_console

DOCS = Path(__file__).resolve().parents[1] / "docs"
# Pages whose examples take more than a few seconds (a Dask cluster, hundreds of matchings or permutations).
SLOW = {"guide/dask.rst", "guide/matching.rst", "guide/two_vs_two.rst"}


def examples(text: str) -> list[tuple[str, str]]:
    """(kind, code) of each example in a reST page, in order: kind is "python" or "console"."""
    found = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        directive = re.fullmatch(r"\.\. code-block:: (python|console)\s*", lines[i])
        if directive:
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                body.append(lines[i])
                i += 1
            found.append((directive.group(1), textwrap.dedent("\n".join(body)).strip("\n") + "\n"))
        elif lines[i].startswith(">>>"):
            body = []
            while i < len(lines) and lines[i].strip():
                body.append(lines[i])
                i += 1
            found.append(("python", "\n".join(body) + "\n"))
        else:
            i += 1
    return found


def _pages():
    pages = []
    for path in sorted(DOCS.rglob("*.rst")):
        name = path.relative_to(DOCS).as_posix()
        if name.startswith(("_build/", "generated/")) or not examples(path.read_text()):
            continue
        marks = [pytest.mark.slow] if name in SLOW else []
        pages.append(pytest.param(path, id=name, marks=marks))
    return pages


def test_examples_are_found():
    assert len(_pages()) >= 6
    assert ("console", "$ echo 1\n1\n") in examples(".. code-block:: console\n\n   $ echo 1\n   1\n\nText\n")


@pytest.mark.parametrize("path", _pages())
def test_page_examples_print_what_the_page_shows(path, tmp_path):
    namespace = {}
    for kind, code in examples(path.read_text()):
        if kind == "console":
            run_console(code, str(tmp_path))
        else:
            run(code, namespace, str(path))
