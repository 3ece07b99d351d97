"""The public API is typed: ``mypy --strict`` accepts a user script that calls all of it."""

import os
import site
import subprocess
import sys
import sysconfig

import pairmetrics
import pytest

# One worker runs this file: its module fixture is expensive (xdist's loadgroup, set in pyproject.toml).
pytestmark = pytest.mark.xdist_group("typing")

pytest.importorskip("mypy", reason="mypy is not installed (it is in the 'test' extra)")

SCRIPT = os.path.join(os.path.dirname(__file__), "typing", "user_script.py")


def _mypy_path():
    """The directory holding the imported pairmetrics, unless mypy finds it by itself (site-packages)."""
    parent = os.path.dirname(os.path.dirname(os.path.abspath(pairmetrics.__file__)))
    installed = {os.path.abspath(p) for p in [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]}
    return None if parent in installed else parent


WRONG_CALLS = (
    "import pairmetrics as pm, pairmetrics.pairedeval, pairmetrics.sklearn\n"
    "n: str = pm.pairedeval.paired_eval([1.0, 2.0], [0, 1])[0]\n"
    "pm.sklearn.roc_auc_score([0, 1], [0.1, 0.2], averag='macro')\n"
    "x: str = pm.two_vs_two([[1.0]], [[1.0]]).accuracy\n"
    "a: str = pm.sklearn.roc_auc_score([0, 1], [0.1, 0.2])\n"
)


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory):
    """``mypy --strict`` over the user script and a script of wrong calls, in one run (it is slow to start)."""
    tmp = tmp_path_factory.mktemp("mypy")
    wrong = tmp / "wrong_calls.py"
    wrong.write_text(WRONG_CALLS)
    env = dict(os.environ)
    path = _mypy_path()
    if path is not None:
        env["MYPYPATH"] = path
    # Only the scripts' own errors are reported (CI runs mypy over the package separately).
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--follow-imports=silent",
        "--no-error-summary",
        "--cache-dir",
        str(tmp / "cache"),
        SCRIPT,
        str(wrong),
    ]
    run = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp, timeout=600)
    return run.stdout + run.stderr


def test_user_script_passes_mypy_strict(mypy_output):
    assert "user_script.py" not in mypy_output, mypy_output


def test_wrong_calls_are_caught(mypy_output):
    # Guards against the API silently degrading to Any (which would accept anything).
    for line in (2, 3, 4, 5):
        assert f"wrong_calls.py:{line}: error" in mypy_output, mypy_output


def test_user_script_runs():
    # The script's assertions hold at run time too: its calls are real, not only type-checked.
    run = subprocess.run(
        [sys.executable, SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_core_stub_matches_the_extension():
    """_core.pyi names every function of the compiled module with its parameters (pybind11's own signatures)."""
    import ast
    import inspect
    import re

    from pairmetrics import _core

    stub_path = os.path.join(os.path.dirname(os.path.abspath(pairmetrics.__file__)), "_core.pyi")
    tree = ast.parse(open(stub_path, encoding="utf-8").read())
    stubbed = {
        node.name: [a.arg for a in (*node.args.args, *node.args.kwonlyargs)]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }
    compiled = {name for name, obj in vars(_core).items() if callable(obj) and not name.startswith("__")}
    assert set(stubbed) == compiled
    for name in compiled:
        doc = inspect.getdoc(getattr(_core, name)) or ""
        # an overloaded function's doc lists "1. name(...)", "2. name(...)"; their parameters are named alike
        signature = re.search(rf"^(?:\d+\. )?{name}\(((?!\*args).*)\) ->", doc, re.MULTILINE)
        assert signature, doc
        parameters = [p.split(":")[0].strip() for p in re.split(r", (?=\w+:)", signature.group(1)) if p]
        assert stubbed[name] == parameters, name
