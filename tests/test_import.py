import os
import subprocess
import sys

import pairmetrics
import pytest


def _run_python(*args, code):
    env = dict(os.environ)
    # The package this test process imported, wherever it came from.
    package_root = os.path.dirname(os.path.dirname(pairmetrics.__file__))
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_package_imports_and_exposes_version():
    assert pairmetrics.__version__
    assert hasattr(pairmetrics, "_core")


def test_every_public_name_exists():
    missing = [name for name in pairmetrics.__all__ if not hasattr(pairmetrics, name)]
    assert missing == []
    assert len(set(pairmetrics.__all__)) == len(pairmetrics.__all__)


@pytest.mark.parametrize("flag", ["-O", "-OO"])
def test_import_and_call_without_docstrings_or_asserts(flag):
    # -OO strips docstrings: nothing may edit them unguarded at import time.
    code = (
        "import pairmetrics as pm\n"
        "print(pm.pairedeval.paired_eval([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]))\n"
        "print(pm.pairedeval.paired_eval.__doc__ is None)\n"
    )
    proc = _run_python(flag, code=code)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert proc.stdout.splitlines()[0] == "(4, 3)"
    assert lines[-1] == ("True" if flag == "-OO" else "False")


# scipy is loaded by the first call that needs it: `import pairmetrics` costs numpy and
# the extension only (about 0.3 s on a 2-core machine, numpy itself half of that).
def test_import_loads_no_optional_dependency():
    code = (
        "import sys\n"
        "import pairmetrics\n"
        "heavy = ['scipy', 'dask', 'networkx', 'lifelines', 'sksurv', 'tqdm', 'pandas', 'sklearn', 'hypothesis']\n"
        "print(' '.join(m for m in heavy if m in sys.modules))\n"
    )
    proc = _run_python(code=code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_type_stub_lists_every_compiled_function():
    import ast
    from pathlib import Path

    import pairmetrics
    from pairmetrics import _core

    stub = Path(pairmetrics.__file__).with_name("_core.pyi")
    assert stub.exists(), "python/pairmetrics/_core.pyi is missing (see README, Development)"
    declared = {node.name for node in ast.parse(stub.read_text()).body if isinstance(node, ast.FunctionDef)}
    compiled = {name for name in dir(_core) if not name.startswith("__") and callable(getattr(_core, name))}
    assert compiled == declared, f"regenerate the stub: missing {compiled - declared}, stale {declared - compiled}"
