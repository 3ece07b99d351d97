"""The Dask layer is thin: it uses only the public-in-package seams of the capability modules."""

import ast
import pathlib

import pairmetrics

PACKAGE = pathlib.Path(pairmetrics.__file__).parent
DASK_MODULES = sorted((PACKAGE / "dask").glob("*.py"))
# The compiled kernels' underscore names are their binding names, not private Python code.
KERNELS = "_core"


def _package_modules_imported(tree):
    """Names bound to pairmetrics modules by `from .. import _x` in one file."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None:
            names.update(alias.asname or alias.name for alias in node.names)
    return names - {KERNELS}


def _private_borrowings(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    modules = _package_modules_imported(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module not in (None, KERNELS):
            found += [f"from ..{node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            if node.attr.startswith("_"):
                found.append(f"{node.value.id}.{node.attr}")
    return [f"{path.name}:{item}" for item in found]


def test_the_checker_sees_both_forms(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from .. import _paired\nfrom .._measures import _output\nx = _paired._comparison\n")
    assert _private_borrowings(sample) == ["sample.py:from .._measures import _output", "sample.py:_paired._comparison"]


def test_dask_modules_borrow_no_private_names():
    assert len(DASK_MODULES) >= 6
    assert [b for path in DASK_MODULES for b in _private_borrowings(path)] == []


def test_the_legacy_module_is_gone():
    assert not (PACKAGE / "dask" / "_legacy.py").exists()


def test_no_capability_module_imports_the_dask_layer():
    offenders = []
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = ("." * node.level) + (node.module or "")
                names = [a.name for a in node.names]
                if target in (".dask", "pairmetrics.dask") or (target == "." and "dask" in names):
                    offenders.append(path.name)
            elif isinstance(node, ast.Import) and any(a.name.startswith("pairmetrics.dask") for a in node.names):
                offenders.append(path.name)
    # the routing registry imports the layer on first Dask input: that is the one allowed door
    assert set(offenders) <= {"_routing.py"}
