"""Every Python example in README.md prints exactly what the README shows.

Blocks are either doctest sessions (``>>>``) or scripts in which a line that
starts with "# " at column 0 is expected output. The blocks of one "## "
section share their variables.
"""

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
