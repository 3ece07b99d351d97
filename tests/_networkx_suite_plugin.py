"""pytest plugin for running networkx's own test modules against the pairmetrics backend.

Loaded with ``-p _networkx_suite_plugin`` in networkx's backend test mode
(``NETWORKX_TEST_BACKEND=pairmetrics``). It counts, per test, the calls that
the backend ran and the calls it declined (networkx then ran its own code; a declined call
is counted in both),
and writes the tally to the JSON file named by ``PAIRMETRICS_NX_SUITE_REPORT``.
"""

import json
import os

import pytest

_tally = {}
_current = {"ran": 0, "declined": 0}


def _wrap(interface, name):
    func = getattr(interface, name)

    def counted(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except NotImplementedError:
            _current["declined"] += 1
            raise
        finally:
            _current["ran"] += 1  # includes calls that raised networkx's own errors

    setattr(interface, name, staticmethod(counted))


def pytest_configure(config):
    from pairmetrics import networkx_backend as nb

    original_can_run = nb.BackendInterface.can_run

    def can_run(name, args, kwargs):
        ok = original_can_run(name, args, kwargs)
        if ok is not True and name in nb._FUNCTIONS:
            _current["declined"] += 1
        return ok

    nb.BackendInterface.can_run = staticmethod(can_run)
    for name in nb._FUNCTIONS:
        _wrap(nb.BackendInterface, name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    _current.update(ran=0, declined=0)
    try:
        return (yield)
    finally:
        _tally[item.nodeid] = dict(_current)


def pytest_runtest_logreport(report):
    if report.when == "call" and report.nodeid in _tally:
        _tally[report.nodeid]["outcome"] = report.outcome


def pytest_sessionfinish(session):
    path = os.environ.get("PAIRMETRICS_NX_SUITE_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(_tally, f, indent=1)
