"""The Dask layer is thin: it uses only the public-in-package seams of the capability modules."""

import ast
import pathlib

import pairmetrics

PACKAGE = pathlib.Path(pairmetrics.__file__).parent
DASK_MODULES = sorted((PACKAGE / "dask").glob("*.py"))
# the layers that supply only a counter to a capability's skeleton
LAYER_MODULES = DASK_MODULES + sorted((PACKAGE / "spark").glob("*.py"))
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


def _names_taken(path):
    """(module, name) of every package name a Dask module takes: ``from ..m import x`` and ``m.x``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    modules = {}  # the name bound in the file -> the package module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None:
            modules.update({a.asname or a.name: a.name for a in node.names if a.name != KERNELS})
    taken = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module not in (None, KERNELS):
            taken.update((node.module, a.name) for a in node.names)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            taken.add((modules[node.value.id], node.attr))
    return taken


# Modules of shared helpers, there to be imported by the capability modules (see "Where each concern lives").
SHARED_MODULES = {
    "_comparable",
    "_distances",
    "_groups",
    "_inference",
    "_labels",
    "_metric_transforms",
    "_pairs",
    "_progress",
    "_result",
    "_routing",
    "_skeleton",
    "_typing",
    "_validation",
}


def _capability_names_taken(path):
    """(module, name) of every name a package module takes from another capability module (``from ._m import x``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    taken = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module and node.module != path.stem:
            if node.module.startswith("_") and node.module not in SHARED_MODULES | {KERNELS}:
                taken.update((node.module, a.name) for a in node.names if a.name not in ("*", "__all__"))
    return taken


def test_layers_take_only_declared_seams():
    """Each capability module declares what other layers and other capability modules may use (``__all__`` and
    ``__seams__``); nothing else crosses, and every declared seam is used and exists."""
    import importlib

    taken = {pair for path in LAYER_MODULES for pair in _names_taken(path)}
    modules = [path for path in sorted(PACKAGE.glob("_*.py")) if not path.stem.startswith("__")]
    taken |= {pair for path in modules for pair in _capability_names_taken(path)}
    undeclared, used = [], set()
    for module_name, name in sorted(taken):
        if module_name == "_routing":
            continue
        module = importlib.import_module(f"pairmetrics.{module_name}")
        declared = set(getattr(module, "__all__", [])) | set(getattr(module, "__seams__", []))
        if name not in declared:
            undeclared.append(f"{module_name}.{name}")
        used.add((module_name, name))
    assert undeclared == []
    for path in sorted(PACKAGE.glob("_*.py")):
        module = importlib.import_module(f"pairmetrics.{path.stem}")
        for name in getattr(module, "__seams__", []):
            assert hasattr(module, name), f"{path.stem}.__seams__ names {name}, which does not exist"
            assert (path.stem, name) in used, f"{path.stem}.__seams__ names {name}, which no other layer uses"
