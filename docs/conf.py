"""Sphinx configuration of the pairmetrics documentation.

Build: ``pip install ".[docs]" && python -m sphinx -W -b html docs docs/_build/html``.
The API reference lists ``pairmetrics.__all__`` at build time, so new public
functions appear without editing these pages.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

try:
    import pairmetrics
except ImportError:  # a source checkout with a developer build (`cmake --build build/dev`)
    sys.path.insert(0, str(ROOT / "python"))
    import pairmetrics

project = "pairmetrics"
author = "the pairmetrics developers"
copyright = "the pairmetrics developers"
release = pairmetrics.__version__
version = ".".join(release.split(".")[:2])

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.mathjax", "numpydoc"]
exclude_patterns = ["_build", "generated/*.inc"]
templates_path: list[str] = []
html_theme = "alabaster"
html_static_path: list[str] = []
html_theme_options = {"description": "Fast, exact evaluation of model predictions", "fixed_sidebar": True}

autosummary_generate = True
autodoc_typehints = "none"  # the signatures carry the annotations; numpydoc's Parameters explain them
numpydoc_show_class_members = False  # result classes list their fields in their docstrings
numpydoc_validation_checks: set[str] = set()  # docstring style is checked by review, not by the build
numpydoc_xref_param_type = False
nitpicky = False

# Titles of the API reference sections, by the module that defines the object. A module not listed here
# (a new capability) gets a section named after it.
API_SECTIONS = {
    "pairmetrics._paired": "Paired evaluation",
    "pairmetrics._two_vs_two": "The 2 vs 2 test",
    "pairmetrics._matching": "Minimum-weight perfect matching",
    "pairmetrics._crossmatch": "Cross-match test",
    "pairmetrics._measures": "Classic measures",
    "pairmetrics._multilabel": "Multi-label counts",
    "pairmetrics._representations": "Indicators and cuts",
    "pairmetrics._roc_auc": "Drop-in: scikit-learn",
    "pairmetrics._survival": "Drop-in: lifelines and scikit-survival",
}


def api_listing() -> str:
    """reST for ``api.rst``: one autosummary table per defining module, functions before result classes."""
    sections: dict[str, list[str]] = {}
    for name in pairmetrics.__all__:
        module = getattr(getattr(pairmetrics, name), "__module__", "pairmetrics") or "pairmetrics"
        sections.setdefault(module, []).append(name)
    order = [m for m in API_SECTIONS if m in sections] + sorted(m for m in sections if m not in API_SECTIONS)
    lines = []
    for module in order:
        title = API_SECTIONS.get(module, module.replace("pairmetrics.", "").strip("_").replace("_", " ").capitalize())
        names = sorted(sections[module], key=lambda n: isinstance(getattr(pairmetrics, n), type))
        lines += [title, "-" * len(title), "", ".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {name}" for name in names] + [""]
    return "\n".join(lines)


(HERE / "generated").mkdir(exist_ok=True)
(HERE / "generated" / "api_listing.inc").write_text(api_listing())


class DocstringWarningsAreNotFatal(logging.Filter):
    """Reports markup problems inside docstrings without failing ``-W``.

    Public functions are added by many hands; a stray indentation in one docstring should not stop the
    documentation build. Problems in the pages themselves still fail it.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        location = str(getattr(record, "location", "") or "")
        if "docstring of" not in location:
            return True
        logging.getLogger("sphinx.pairmetrics").info("docstring markup (not fatal): %s: %s", location,
                                                    record.getMessage())
        return False


def setup(app) -> None:
    sphinx_logging = importlib.import_module("sphinx.util.logging")
    for handler in logging.getLogger("sphinx").handlers:
        if isinstance(handler, sphinx_logging.WarningStreamHandler):
            handler.filters.insert(0, DocstringWarningsAreNotFatal())
