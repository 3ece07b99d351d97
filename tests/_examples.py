"""Running documentation examples: the README's and the user guide's.

Python examples are either doctest sessions (``>>>``) or scripts in which a line that starts with "# " at
column 0 is the expected output. Console examples are lines starting with "$ ", each followed by its expected
output. The examples of one page (or README section) share their variables, in order.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import subprocess
import sys

try:  # a source checkout has no entry points: make networkx see the backend
    from pairmetrics import networkx_backend

    networkx_backend._register_without_entry_points()
except ImportError:
    pass


def run_doctest(block: str, namespace: dict, path: str) -> None:
    test = doctest.DocTestParser().get_doctest(block, namespace, os.path.basename(path), path, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    report = io.StringIO()
    result = runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)  # DocTest works on a copy
    assert result.failed == 0, report.getvalue()


def run_script(block: str, namespace: dict, path: str) -> None:
    lines = block.splitlines()
    code = "\n".join(line for line in lines if not line.startswith("# "))
    expected = [line[2:] for line in lines if line.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, path, "exec"), namespace)  # noqa: S102  (running the examples is the test)
    assert out.getvalue().splitlines() == expected


def run_console(block: str, directory: str) -> None:
    """Runs each "$ command" in ``directory``; ``pairmetrics`` is this interpreter's ``-m pairmetrics``."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    import pairmetrics

    # The same package as this process, wherever it came from (a source checkout on a relative PYTHONPATH too).
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(pairmetrics.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))}
    for command, expected in commands:
        if command.startswith("pairmetrics "):
            command = f"{sys.executable} -m pairmetrics " + command[len("pairmetrics ") :]
        done = subprocess.run(
            command, shell=True, cwd=directory, env=env, capture_output=True, text=True, check=False, timeout=300
        )
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.splitlines() == expected, command


def run(block: str, namespace: dict, path: str) -> None:
    """A Python block: a doctest session or a script."""
    (run_doctest if block.lstrip().startswith(">>>") else run_script)(block, namespace, path)
