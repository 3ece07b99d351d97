"""Kernels called from several Python threads at once, and errors raised in
progress callbacks.

Every kernel runs from 4 threads at the same time, once with a different
input per thread and once with one shared read-only input; each answer must
equal the one computed alone, single-threaded, beforehand. The kernels
release the GIL, so the calls really overlap.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pairmetrics as pm
import pytest
import scipy.sparse as sp
from pairmetrics._result import Result


def _plain(value):
    if isinstance(value, Result):
        value = value.asdict()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "matching"}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _points(rng, n, d):
    return rng.normal(size=(n, d))


def _distances(x):
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))


def _inputs(seed):
    """One input per kernel: large enough that the threaded kernels split the work."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, 30_000).astype(float)
    scores = labels + rng.normal(size=labels.size)
    other = labels + 2 * rng.normal(size=labels.size)
    y = rng.normal(size=(400, 20))
    p = y + rng.normal(size=(400, 20))
    pts = _points(rng, 120, 3)
    x1, x2 = _points(rng, 60, 3), _points(rng, 60, 3) + 0.5
    truth = rng.integers(0, 2, (2000, 30))
    guess = rng.integers(0, 2, (2000, 30))
    probs = rng.random(50_000)
    outcomes = (rng.random(50_000) < probs).astype(np.int8)
    return dict(
        labels=labels,
        scores=scores,
        other=other,
        y=y,
        p=p,
        pts=pts,
        D=_distances(pts),
        x1=x1,
        x2=x2,
        z=np.r_[np.zeros(60), np.ones(60)],
        D12=_distances(np.vstack([x1, x2])),
        truth=truth,
        guess=guess,
        probs=probs,
        outcomes=outcomes,
        big=rng.normal(size=(20_000, 10)),
        big2=rng.normal(size=(20_000, 10)),
    )


KERNELS = {
    "paired_evaluation": lambda a: pm.paired_evaluation(a["labels"], a["scores"], n_jobs=2),
    "compare_paired": lambda a: pm.compare_models(a["labels"], [a["scores"], a["other"]], n_jobs=2),
    "two_vs_two": lambda a: pm.two_vs_two(a["y"], a["p"], metric="correlation", n_jobs=2),
    "two_vs_two_sampled": lambda a: pm.two_vs_two(a["y"], a["p"], metric="euclidean", pairs=5000, rng=1, n_jobs=2),
    "two_vs_two_permutation_test": lambda a: pm.two_vs_two_permutation_test(
        a["y"][:150], a["p"][:150], n_resamples=20, rng=3, n_jobs=2
    ),
    "matching_points": lambda a: pm.min_weight_perfect_matching(points=a["pts"]),
    "matching_distances": lambda a: pm.min_weight_perfect_matching(a["D"]),
    "crossmatch_test": lambda a: pm.crossmatch_test(a["x1"], a["x2"], metric="cityblock", rng=0),
    "crossmatch_from_distances": lambda a: pm.crossmatch_test(D=a["D12"], labels=a["z"], rng=0),
    "energy_test": lambda a: pm.energy_test(a["x1"], a["x2"], n_resamples=50, rng=6, n_jobs=2),
    "mmd_test": lambda a: pm.mmd_test(a["x1"], a["x2"], n_resamples=50, rng=7, n_jobs=2),
    "crossmatch_resample": lambda a: pm.crossmatch_resample(
        a["x1"], a["x2"], sample_size=20, n_resamples=40, rng=5, n_jobs=2
    ),
    "rank_mahalanobis": lambda a: pm.rank_mahalanobis(a["pts"]),
    "measures": lambda a: [
        f(a["big"], a["big2"], per_target=True)
        for f in (pm.zero_one_error, pm.absolute_error, pm.sum_squares_error, pm.rms_error, pm.worst_case_error)
    ],
    "log_loss": lambda a: (pm.log_loss(a["outcomes"], a["probs"]), pm.likelihood(a["outcomes"], a["probs"], eps=1e-9)),
    "multilabel_dense": lambda a: pm.multilabel_counts(a["truth"], a["guess"], false_neg=2.0),
    "multilabel_sparse": lambda a: pm.multilabel_counts(sp.csr_matrix(a["truth"]), sp.csr_matrix(a["guess"])),
}


@pytest.fixture(scope="module")
def inputs():
    data = [_inputs(seed) for seed in range(4)]
    for d in data:
        for v in d.values():
            v.flags.writeable = False
    return data


@pytest.fixture(scope="module", autouse=True)
def _quick_switches():
    # Switch threads often, so that calls interleave even in their Python parts.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)


def _run_together(calls):
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return [_plain(call()) for _ in range(2)]

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_four_threads_at_once_give_the_single_threaded_answers(name, inputs):
    kernel = KERNELS[name]
    alone = [_plain(kernel(a)) for a in inputs]
    different = _run_together([lambda a=a: kernel(a) for a in inputs])
    for i, answers in enumerate(different):
        assert answers == [alone[i], alone[i]], f"{name}: thread {i} with its own input"
    shared = _run_together([lambda: kernel(inputs[0])] * 4)
    for i, answers in enumerate(shared):
        assert answers == [alone[0], alone[0]], f"{name}: thread {i} on the shared input"


# --------------------------------------------------------------------------- errors in progress callbacks


class CallbackError(Exception):
    """Raised by the progress callback; must reach the caller as itself."""


@contextlib.contextmanager
def _raising_progress(enabled, description, unit="block", count=None):
    def callback(done, total):
        raise CallbackError(description)

    yield callback if enabled else None


def _patch_progress(monkeypatch):
    patched = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("pairmetrics.") and hasattr(module, "progress_callback"):
            monkeypatch.setattr(module, "progress_callback", _raising_progress)
            patched += 1
    assert patched, "no module uses pairmetrics._progress.progress_callback"


PROGRESS_KERNELS = {
    "two_vs_two": lambda a: pm.two_vs_two(a["y"], a["p"], n_jobs=2, progress=True),
    "two_vs_two_one_thread": lambda a: pm.two_vs_two(a["y"], a["p"], n_jobs=1, progress=True),
    "two_vs_two_permutation_test": lambda a: pm.two_vs_two_permutation_test(
        a["y"][:100], a["p"][:100], n_resamples=200, rng=0, n_jobs=2, progress=True
    ),
    "two_vs_two_permutation_recompute": lambda a: pm.two_vs_two_permutation_test(
        a["y"][:100], a["p"][:100], pairs=500, rng=0, n_resamples=200, n_jobs=2, progress=True
    ),
    "matching_points": lambda a: pm.min_weight_perfect_matching(points=a["pts"], progress=True),
    "matching_distances": lambda a: pm.min_weight_perfect_matching(a["D"], progress=True),
    "crossmatch_test": lambda a: pm.crossmatch_test(a["x1"], a["x2"], progress=True),
    "crossmatch_from_distances": lambda a: pm.crossmatch_test(D=a["D12"], labels=a["z"], progress=True),
    "energy_test": lambda a: pm.energy_test(a["big"][:3000], a["big2"][:3000], n_resamples=50, n_jobs=2, progress=True),
}


@pytest.mark.parametrize("name", sorted(PROGRESS_KERNELS))
def test_exception_in_progress_callback_reaches_the_caller_as_itself(name, inputs, monkeypatch):
    _patch_progress(monkeypatch)
    for _ in range(3):  # the worker/caller race must never turn it into something else
        with pytest.raises(CallbackError):
            PROGRESS_KERNELS[name](inputs[0])
    monkeypatch.undo()
    PROGRESS_KERNELS[name](inputs[1])  # and the library still works afterwards


def test_default_thread_count_follows_the_environment_variable(monkeypatch):
    from pairmetrics._validation import resolve_n_jobs, usable_cores

    monkeypatch.setenv("PAIRMETRICS_NUM_THREADS", "1")
    assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(-1) == 1
    assert resolve_n_jobs(8) == 1
    for bad in ("0", "-2", "two"):
        monkeypatch.setenv("PAIRMETRICS_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="PAIRMETRICS_NUM_THREADS"):
            resolve_n_jobs(None)
    monkeypatch.delenv("PAIRMETRICS_NUM_THREADS")
    assert 1 <= resolve_n_jobs(None) <= usable_cores()
    assert resolve_n_jobs(-1) == usable_cores()


def test_default_thread_count_honours_a_threadpoolctl_limit():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from pairmetrics._validation import max_threads, resolve_n_jobs

    if not threadpoolctl.threadpool_info():
        pytest.skip("threadpoolctl finds no BLAS or OpenMP library in this process")
    scores = np.random.default_rng(3).random(300_000)
    labels = np.round(scores + np.random.default_rng(4).normal(0, 0.3, scores.size), 2)
    free = pm.paired_evaluation(labels, scores, min_dist=0.1)
    with threadpoolctl.threadpool_limits(limits=1):
        assert resolve_n_jobs(None) == 1
        assert resolve_n_jobs(2) == min(2, max_threads())  # an explicit n_jobs is kept
        assert pm.paired_evaluation(labels, scores, min_dist=0.1) == free
    assert resolve_n_jobs(None) >= 1


# --------------------------------------------------------------------------- BLAS thread count


def _scipy_openblas_threads():
    """Get and set SciPy's OpenBLAS thread count (process-wide) through ctypes, or skip."""
    import ctypes
    import glob
    import os

    import scipy

    libs = glob.glob(os.path.join(os.path.dirname(scipy.__file__), os.pardir, "scipy.libs", "*openblas*"))
    if not libs:
        pytest.skip("SciPy does not bundle OpenBLAS here")
    lib = ctypes.CDLL(libs[0])
    for prefix in ("scipy_openblas", "openblas"):
        if hasattr(lib, f"{prefix}_get_num_threads") and hasattr(lib, f"{prefix}_set_num_threads"):
            get, set_ = getattr(lib, f"{prefix}_get_num_threads"), getattr(lib, f"{prefix}_set_num_threads")
            get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
            return get, set_
    pytest.skip("no OpenBLAS thread control found")


BLAS_KERNELS = {
    "two_vs_two": lambda a: pm.two_vs_two(a["y"], a["p"], n_jobs=2, progress=True),
    "two_vs_two_one_thread": lambda a: pm.two_vs_two(a["y"], a["p"], n_jobs=1, progress=True),
    "matching_points": lambda a: pm.min_weight_perfect_matching(points=a["big"][:3000, :3], n_jobs=2, progress=True),
    "energy_distance": lambda a: pm.energy_distance(a["big"][:3000], a["big2"][:3000], n_jobs=2, progress=True),
}


@pytest.mark.parametrize("name", sorted(BLAS_KERNELS))
def test_caller_blas_threads_survive_an_interrupted_kernel(name, inputs, monkeypatch):
    get_threads, set_threads = _scipy_openblas_threads()

    @contextlib.contextmanager
    def interrupting_progress(enabled, description, unit="block", count=None):
        def callback(done, total):
            raise KeyboardInterrupt

        yield callback if enabled else None

    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("pairmetrics.") and hasattr(module, "progress_callback"):
            monkeypatch.setattr(module, "progress_callback", interrupting_progress)
    before = get_threads()
    set_threads(3)  # the caller's own setting
    try:
        for _ in range(3):
            with pytest.raises(KeyboardInterrupt):
                BLAS_KERNELS[name](inputs[0])
            assert get_threads() == 3, "the interrupted kernel left the BLAS thread count changed"
        monkeypatch.undo()
        BLAS_KERNELS[name](inputs[0])
        assert get_threads() == 3, "the kernel left the BLAS thread count changed"
    finally:
        set_threads(before)
