"""pytest plugin for running scikit-learn's own ranking tests against pairmetrics.sklearn.

Loaded with ``-p _sklearn_suite_plugin``. Before scikit-learn's test module is
imported, every function of :mod:`pairmetrics.sklearn` replaces its namesake in
``sklearn.metrics`` and ``sklearn.metrics._ranking``; each test's calls to
ours are counted. The deliberate differences (documented in ``roc_auc_score``'s Notes)
are marked as expected failures with their reason. The tally goes to the JSON
file named by ``PAIRMETRICS_SKLEARN_SUITE_REPORT``.
"""

import json
import os

import pytest

# why our answer differs on purpose, by test function and a test of its parameters (ids vary between versions)
EXPECTED_DIFFERENCES = {
    "test_roc_auc_score_multiclass_error": (
        lambda params: (
            (params.get("kwargs") or {}).get("multi_class") == "ovo"
            and "sample_weight" in (params.get("kwargs") or {})
            and len((params.get("kwargs") or {})["sample_weight"]) == 0
        ),
        "sample_weight is validated before the multi-class options: an empty sample_weight is reported as a "
        "length mismatch (a ValueError naming sample_weight), not as unsupported with multi_class='ovo'",
    ),
}


def _expected_difference(item):
    """The reason an item is an expected failure, or None."""
    entry = EXPECTED_DIFFERENCES.get(getattr(item, "originalname", item.name))
    callspec = getattr(item, "callspec", None)
    if entry is None or callspec is None:
        return None
    applies, reason = entry
    return reason if applies(callspec.params) else None


_tally = {}
_calls = [0]
_functions = {}  # calls of each function in the current test


def pytest_configure(config):
    import functools

    import pairmetrics.sklearn
    import sklearn.metrics
    import sklearn.metrics._ranking

    def counting(function):
        @functools.wraps(function)
        def counted(*args, **kwargs):
            _calls[0] += 1
            _functions[function.__name__] = _functions.get(function.__name__, 0) + 1
            return function(*args, **kwargs)

        return counted

    for name in pairmetrics.sklearn.__all__:
        counted = counting(getattr(pairmetrics.sklearn, name))
        setattr(sklearn.metrics, name, counted)
        setattr(sklearn.metrics._ranking, name, counted)


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = _expected_difference(item)
        if reason:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    _calls[0] = 0
    _functions.clear()
    try:
        return (yield)
    finally:
        _tally[item.nodeid] = {"calls": _calls[0], "functions": dict(_functions)}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.nodeid in _tally:
        _tally[report.nodeid]["outcome"] = "xfailed" if hasattr(report, "wasxfail") else report.outcome


def pytest_sessionfinish(session):
    path = os.environ.get("PAIRMETRICS_SKLEARN_SUITE_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(_tally, f, indent=1)
