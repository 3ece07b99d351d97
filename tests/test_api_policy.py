"""The API policy (docs/development.rst, "The public API"), enforced over ``__all__`` and the signatures.

The native top level: truth first, options keyword-only, one meaning and one type per keyword, every parameter
annotated without ``Any``, results that unpack only as SciPy's do, no twins and no drop-in. Each peer's
namespace: the peer's exact signatures. Old names: an ``AttributeError`` naming their new home.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import pairmetrics as pm
import pytest
from pairmetrics._result import Result

# keyword -> the annotations it may carry (one type per keyword across the package)
KEYWORD_TYPES = {
    "n_jobs": {"NJobs", "int | None"},
    "rng": {"Seed"},
    "n_resamples": {"int"},
    "confidence_level": {"float"},
    "progress": {"bool"},
    "groups": {"ArrayLike | None"},
    "average": {"bool"},
    "alternative": {"str", "Literal['two-sided', 'less', 'greater']", "Literal['less', 'greater', 'two-sided']"},
    "n_neighbors": {"int"},
    "min_dist": {"float"},
    "sample_weight": {"ArrayLike | None"},
}
# Names that have one spelling in the package: the key is never a parameter, the value is.
RENAMED_KEYWORDS = {
    "n_permutations": "n_resamples",
    "n_repeats": "n_resamples",
    "k": "n_neighbors",
    "random_state": "rng",
    "seed": "rng",
    "level": "confidence_level",
}
# The order of the data arguments: rankings and point predictions are truth first; survival takes the
# observed truth (time, event) first.
TRUTH_FIRST = {"y_true": 0, "y_score": 1, "y_pred": 1, "time": 0, "event": 1}
SURVIVAL_TRUTH = 2  # y_score after time and event
# Positional parameters with a default: inputs that are alternatives to a keyword form (points or a distance
# matrix D), not options.
POSITIONAL_DEFAULTS = {("min_weight_perfect_matching", "D"), ("crossmatch_test", "x"), ("crossmatch_test", "y")}
# The results' tuple forms: SciPy's (statistic, pvalue) and its confidence intervals' (low, high).
UNPACKING = {(), ("statistic", "pvalue"), ("low", "high")}

PEERS = {
    "sklearn": "sklearn.metrics",
    "scipy": "scipy.stats",
    "lifelines": "lifelines.utils",
    "sksurv": "sksurv.metrics",
}
# pairedeval is not on the package registry: its one function's signature, from its README.
PAIREDEVAL_SIGNATURE = [
    ("scores", "POSITIONAL_OR_KEYWORD", None),
    ("labels", "POSITIONAL_OR_KEYWORD", None),
    ("min_dist", "POSITIONAL_OR_KEYWORD", 0.5),
]
# The one extension a drop-in may add to its peer's signature: per-group results, keyword-only, last.
DROP_IN_EXTENSIONS = ("groups",)


def policy_violations(name: str, function) -> list[str]:
    """What a native top-level function breaks of the policy (empty when it complies)."""
    problems = []
    parameters = list(inspect.signature(function).parameters.values())
    survival = any(p.name == "time" for p in parameters)
    for position, p in enumerate(parameters):
        where = f"{name}({p.name})"
        if p.kind is p.VAR_KEYWORD:
            continue  # **metric_kwargs: passed on to a metric, typed by it
        if p.annotation is inspect.Parameter.empty:
            problems.append(f"{where} is not annotated")
        elif "Any" in str(p.annotation).replace("Callable[..., Any]", ""):
            problems.append(f"{where} is annotated with Any")
        if p.name in RENAMED_KEYWORDS:
            problems.append(f"{where}: the package's name is {RENAMED_KEYWORDS[p.name]}")
        if p.name in KEYWORD_TYPES and p.annotation not in KEYWORD_TYPES[p.name]:
            problems.append(f"{where}: annotated {p.annotation}, the package's type is {KEYWORD_TYPES[p.name]}")
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty and (name, p.name) not in POSITIONAL_DEFAULTS:
            problems.append(f"{where} is an option: make it keyword-only")
        expected = SURVIVAL_TRUTH if survival and p.name in ("y_score", "y_pred") else TRUTH_FIRST.get(p.name)
        if expected is not None and position != expected:
            problems.append(f"{where} must be argument {expected + 1} (truth first)")
    if inspect.signature(function).return_annotation is inspect.Signature.empty:
        problems.append(f"{name} has no return annotation")
    return problems


def _native_functions():
    return {name: getattr(pm, name) for name in pm.__all__ if inspect.isfunction(getattr(pm, name))}


def _peer_namespaces():
    return {namespace: importlib.import_module(f"pairmetrics.{namespace}") for namespace in (*PEERS, "pairedeval")}


@pytest.mark.parametrize("name", sorted(_native_functions()))
def test_native_function_follows_the_policy(name):
    assert policy_violations(name, _native_functions()[name]) == []


def test_the_policy_check_catches_violations():
    def bad(y_score: Any, y_true, min_dist: float = 0.5, *, n_permutations: int = 9, n_jobs: str = "all"):
        return None

    problems = policy_violations("bad", bad)
    expected = [
        "bad(y_score) is annotated with Any",
        "bad(y_true) is not annotated",
        "min_dist) is an option",
        "bad(y_score) must be argument 2",
        "bad(y_true) must be argument 1",
        "n_resamples",
        "bad(n_jobs): annotated str",
        "bad has no return annotation",
    ]
    for fragment in expected:
        assert any(fragment in p for p in problems), (fragment, problems)


def test_results_unpack_only_as_scipy_does():
    classes = [getattr(pm, n) for n in pm.__all__ if isinstance(getattr(pm, n), type)]
    for cls in classes:
        assert issubclass(cls, Result), cls
        assert cls._unpack in UNPACKING, (cls.__name__, cls._unpack)


def test_no_twins_and_no_drop_in_at_the_top_level():
    functions = _native_functions()
    implementations = [getattr(f, "__wrapped__", f) for f in functions.values()]
    assert len(set(implementations)) == len(implementations)
    for namespace, module in _peer_namespaces().items():
        assert not set(module.__all__) & set(pm.__all__), namespace
    for old, home in pm.MOVED.items():
        assert old not in pm.__all__
        with pytest.raises(AttributeError, match=re.escape(home.split(" ")[0])):
            getattr(pm, old)


def _signature_parts(function):
    return [
        (p.name, p.kind.name, None if p.default is p.empty else p.default)
        for p in inspect.signature(function).parameters.values()
    ]


@pytest.mark.parametrize("namespace", [*PEERS, "pairedeval"])
def test_drop_ins_have_their_peers_signatures(namespace):
    module = _peer_namespaces()[namespace]
    for name in module.__all__:
        ours = getattr(module, name)
        if not callable(ours) or isinstance(ours, type):
            continue
        if namespace == "pairedeval":
            theirs = PAIREDEVAL_SIGNATURE
        else:
            peer = pytest.importorskip(PEERS[namespace])
            theirs = _signature_parts(getattr(peer, name))
        mine = _signature_parts(ours)
        extensions = [p for p in mine[len(theirs) :] if p[0] in DROP_IN_EXTENSIONS]
        assert all(kind == "KEYWORD_ONLY" and default is None for _, kind, default in extensions), name
        assert mine[: len(mine) - len(extensions)] == theirs, f"{namespace}.{name}"


def test_namespaces_load_no_peer():
    import subprocess
    import sys

    code = (
        "import sys, pairmetrics.sklearn, pairmetrics.scipy, pairmetrics.lifelines, pairmetrics.sksurv, "
        "pairmetrics.pairedeval\n"
        "print(' '.join(m for m in ['sklearn', 'lifelines', 'sksurv', 'pandas'] if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""
