"""Ctrl-C (SIGINT) stops every long kernel within a second and leaves the process usable.

One child process runs the long kernels one after another, each in a loop so
that the signal finds it inside compiled code; the parent sends SIGINT while
it runs and measures (on the shared monotonic clock) how long the child takes
to raise KeyboardInterrupt. The child then runs the same kernel on a small
input to show that nothing was left broken.
"""

from __future__ import annotations

import json
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pairmetrics
import pytest

# One worker runs this file: its module fixture is expensive (xdist's loadgroup, set in pyproject.toml).
pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"), pytest.mark.xdist_group("sigint")]

LIMIT = 1.0  # seconds from SIGINT to KeyboardInterrupt

CHILD = r"""
import functools, json, signal, sys, time
import numpy as np
import pairmetrics as pm

# Python's own handler, also when this runs under a shell that ignores SIGINT (background jobs)
signal.signal(signal.SIGINT, signal.default_int_handler)

@functools.lru_cache(maxsize=None)
def data(what):
    rng = np.random.default_rng(0)
    if what == "paired":
        labels = rng.normal(size=10_000_000)
        return labels + rng.normal(size=labels.size), labels + rng.normal(size=labels.size), labels
    if what == "vectors":
        y = rng.normal(size=(12_000, 64)).astype(np.float32)
        return y, y + rng.normal(size=y.shape).astype(np.float32)
    if what == "points":
        return rng.normal(size=(6_000, 2))
    if what == "wide points":
        return rng.normal(size=(6_000, 200))
    if what == "big":
        return rng.normal(size=(12_000_000, 2)), rng.normal(size=(12_000_000, 2))
    if what == "groups":
        return rng.integers(0, 100_000, 10_000_000)
    if what == "survival":  # time, predicted, event
        return rng.exponential(size=10_000_000), rng.normal(size=10_000_000), rng.random(10_000_000) < 0.7
    if what == "labels":
        return rng.integers(0, 2, (200_000, 100)).astype(bool), rng.integers(0, 2, (200_000, 100)).astype(bool)
    return rng.normal(size=(40, 3))

KERNELS = {
    "paired_evaluation": lambda cut: pm.paired_evaluation(*[a[:cut] for a in data("paired")[::-2]], min_dist=0.1,
                                                          n_jobs=2),
    "compare_models": lambda cut: pm.compare_models(data("paired")[2][:cut], [a[:cut] for a in data("paired")[:2]],
                                                    min_dist=0.1, n_jobs=2),
    "two_vs_two": lambda cut: pm.two_vs_two(*[a[:cut] for a in data("vectors")], n_jobs=2),
    "two_vs_two_permutation_test": lambda cut: pm.two_vs_two_permutation_test(
        *[a[:cut or 3000] for a in data("vectors")], n_resamples=5 if cut else 100_000, rng=0, n_jobs=2),
    "matching": lambda cut: pm.min_weight_perfect_matching(points=data("points")[:cut]),
    "crossmatch_test": lambda cut: pm.crossmatch_test(data("points")[:cut or 3000], data("points")[3000:][:cut] + 0.1),
    "crossmatch_cityblock": lambda cut: pm.crossmatch_test(
        data("wide points")[:cut or 3000], data("wide points")[3000:][:cut] + 0.1, metric="cityblock"),
    "crossmatch_resample": lambda cut: pm.crossmatch_resample(
        data("points")[:3000], data("points")[3000:], sample_size=5 if cut else 300, n_resamples=3 if cut else 100_000,
        rng=0, n_jobs=2),
    "energy_test": lambda cut: pm.energy_test(*[a[:cut] for a in data("vectors")], n_resamples=2000, rng=0, n_jobs=2),
    "measures": lambda cut: pm.absolute_error(*[a[:cut] for a in data("big")], per_target=True),
    "multilabel_counts": lambda cut: pm.multilabel_counts(*[a[:cut] for a in data("labels")]),
    "bootstrap_auc": lambda cut: pm.bootstrap((data("paired")[2][:cut or 10**6] > 0, data("paired")[0][:cut or 10**6]),
        pm.sklearn.roc_auc_score, n_resamples=10 if cut else 100_000, rng=0, n_jobs=2),
    "bootstrap_concordance": lambda cut: pm.bootstrap([a[:cut or 10**6] for a in data("paired")],
        pm.lifelines.concordance_index, n_resamples=10 if cut else 100_000, rng=0, n_jobs=2),
    "concordance": lambda cut: pm.concordance(*[data("survival")[i][:cut] for i in (0, 2, 1)]),
    "paired_evaluation_groups": lambda cut: pm.paired_evaluation(
        *[a[:cut] for a in data("paired")[::-2]], min_dist=0.1, n_jobs=2, groups=data("groups")[:cut], warn=False),
    "paired_evaluation_two_groups": lambda cut: pm.paired_evaluation(
        *[a[:cut] for a in data("paired")[::-2]], min_dist=0.1, n_jobs=2, groups=data("groups")[:cut] % 2, warn=False),
}

for name in sys.argv[1:]:
    kernel = KERNELS[name]
    kernel(50)  # builds the input; a small call
    print(json.dumps({"event": "start", "name": name}), flush=True)
    try:
        while True:
            kernel(None)
            print(json.dumps({"event": "finished one call", "name": name}), flush=True)
    except KeyboardInterrupt:
        stopped = time.monotonic()
    kernel(50)  # still usable
    print(json.dumps({"event": "stopped", "name": name, "at": stopped}), flush=True)
"""

# Kernels known not to meet the bound yet (remove a name once it does: strict).
_NOT_YET: set = set()
_NOT_YET_MARK = pytest.mark.xfail(strict=True, reason="the paired kernels do not poll for Ctrl-C often enough yet")
KERNELS = [
    "two_vs_two",
    "two_vs_two_permutation_test",
    "matching",
    "crossmatch_test",
    "crossmatch_cityblock",
    "crossmatch_resample",
    "energy_test",
    "measures",
    "multilabel_counts",
    "paired_evaluation",
    "compare_models",
    "bootstrap_auc",
    "bootstrap_concordance",
    "concordance",
    "paired_evaluation_groups",
    "paired_evaluation_two_groups",
]


def _interrupt_each(names, wait=0.8, give_up=4.0):
    """{name: seconds from SIGINT to KeyboardInterrupt} for the kernels, run in one child.

    A kernel that does not stop within ``give_up`` seconds gets ``inf``; the
    child is then killed and a new one takes the remaining kernels.
    """
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(pairmetrics.__file__))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    delays, todo = {}, list(names)
    while todo:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, *todo],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(json.loads(x)) for x in child.stdout], daemon=True).start()

        def next_event(timeout):
            # one deadline for the whole wait: a child that keeps finishing calls
            # (a signal that never arrived) must not keep the parent waiting
            deadline = time.monotonic() + timeout
            while True:
                event = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                if event["event"] != "finished one call":
                    return event

        try:
            while todo:
                name = todo[0]
                try:
                    event = next_event(timeout=300)  # data generation and imports on a loaded machine
                except queue.Empty:
                    pytest.fail(f"the child never started {name}: {child.stderr.read() if child.poll() else ''}")
                assert event == {"event": "start", "name": name}, event
                time.sleep(wait)  # well inside the (looping) kernel
                sent = time.monotonic()
                child.send_signal(signal.SIGINT)
                todo.pop(0)
                try:
                    event = next_event(timeout=give_up)
                except queue.Empty:
                    delays[name] = math.inf
                    break  # kill this child; a new one takes the rest
                assert event.get("event") == "stopped" and event["name"] == name, event
                delays[name] = event["at"] - sent
            else:
                assert child.wait(timeout=60) == 0, child.stderr.read()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    return delays


@pytest.fixture(scope="module")
def delays():
    first = _interrupt_each(KERNELS)
    # A shared, loaded machine can stall one attempt: a kernel that does not
    # poll is slow twice.
    slow = sorted(name for name, delay in first.items() if delay > LIMIT and name not in _NOT_YET)
    again = _interrupt_each(slow) if slow else {}
    return {name: min(first[name], again.get(name, math.inf)) for name in KERNELS}


@pytest.mark.parametrize("name", [pytest.param(n, marks=_NOT_YET_MARK) if n in _NOT_YET else n for n in KERNELS])
def test_sigint_stops_the_kernel_within_a_second(name, delays):
    assert delays[name] <= LIMIT, f"{name}: {delays[name]:.2f} s from SIGINT to KeyboardInterrupt (all: {delays})"
