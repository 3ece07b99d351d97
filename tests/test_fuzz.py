"""Fuzz test of the whole public API and of every command-line subcommand.

Every public function is called with arguments drawn from wide strategies:
every integer and float width in both byte orders, bool (canonical or not),
complex, object, strings, datetimes; empty, (n, 1), 2-D and 3-D shapes; NaN,
+-inf, 1e300, 1e-300, integers beyond 2**53, ties and constant rows;
strided, negative-stride, Fortran-ordered, read-only and record-field views,
lists, pandas objects and scipy.sparse matrices; and options of the wrong
type or out of range. Each call must end in one of two ways:

* an answer equal to the same call on a contiguous, native-endian copy of the
  same values (and, for plain inputs, to the plain-Python reference), or
* a ``ValueError`` / ``TypeError`` whose message names an argument of the
  function and is not some other library's text.

Never a crash, a hang (a watchdog aborts after a minute), another exception
type or a numpy floating-point warning.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import math
import os
import re
import signal
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pairmetrics as pm
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pairmetrics import reference as ref
from pairmetrics._result import Result

# Examples per test; PAIRMETRICS_FUZZ_EXAMPLES scales them (CI keeps the default).
_EXAMPLES = int(os.environ.get("PAIRMETRICS_FUZZ_EXAMPLES", "80"))
FUZZ = settings(
    max_examples=_EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
FEW = settings(FUZZ, max_examples=max(1, _EXAMPLES // 2))


class Hang(Exception):
    pass


@pytest.fixture(autouse=True)
def _watchdog():
    """A hang is a failure: an alarm raises in the test after two minutes (the
    kernels poll for signals), and a stuck process is killed after three."""

    def alarm(signum, frame):
        raise Hang("no answer within 120 s")

    previous = signal.signal(signal.SIGALRM, alarm) if hasattr(signal, "SIGALRM") else None
    if previous is not None:
        signal.alarm(120)
    faulthandler.dump_traceback_later(180, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
    if previous is not None:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------- arrays

NUMERIC = [
    "?",
    "i1",
    "i2",
    "i4",
    "i8",
    "u1",
    "u2",
    "u4",
    "u8",
    "f2",
    "f4",
    "f8",
    ">i2",
    ">i4",
    ">i8",
    ">u2",
    ">u4",
    ">u8",
    ">f4",
    ">f8",
    ">f2",
    "g",
    "longlong",
    "ulonglong",
    "intc",
]
FOREIGN_DTYPES = ["c8", "c16", "O", "Ostr", "U3", "S2", "M8[ns]", "m8[s]"]


def _dtype(name: str) -> np.dtype:
    if name == "longlong":
        return np.dtype(np.longlong)
    if name == "ulonglong":
        return np.dtype(np.ulonglong)
    if name == "intc":
        return np.dtype(np.intc)
    return np.dtype(name)


def _values(draw, shape, kind, dtype_name):
    """Float64 values (or Python ints for 'bigint') of the given shape."""
    size = int(np.prod(shape)) if shape else 1
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    if kind == "small":  # few distinct values: ties everywhere
        vals = rng.integers(0, 3, size).astype(float)
    elif kind == "binary":
        vals = rng.integers(0, 2, size).astype(float)
    elif kind == "prob":
        vals = np.round(rng.random(size), 3)
    elif kind == "normal":
        vals = np.round(rng.normal(size=size) * 3, 6)
    elif kind == "constant":
        vals = np.full(size, 1.5)
    else:  # extreme
        pool = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, -0.0, 0.0, 1.0, 2.0**53 + 1, 1e-161])
        vals = pool[rng.integers(0, pool.size, size)]
    return vals.reshape(shape)


def _cast(vals, kind, dtype: np.dtype, rng):
    """The values in ``dtype`` (integers clipped, non-canonical bools on request)."""
    if dtype.kind == "b":
        if kind == "noncanonical":
            raw = rng.integers(0, 4, vals.shape).astype(np.uint8)
            return raw.view(np.bool_)
        return (np.nan_to_num(vals) > 0).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if kind == "bigint" and info.bits == 64:
            base = 2**62 if dtype.kind == "i" else 2**63 + 5
            out = np.array(
                [base + int(v) for v in np.nan_to_num(vals, posinf=3, neginf=-3).ravel() % 4],
                dtype=dtype.newbyteorder("="),
            )
            return out.reshape(vals.shape).astype(dtype)
        clean = np.nan_to_num(vals, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(np.round(clean), info.min, info.max).astype(dtype)
    with np.errstate(over="ignore"):
        return vals.astype(dtype)


def _foreign(vals, dtype_name):
    if dtype_name == "O":
        obj = vals.astype(object)
    elif dtype_name == "Ostr":
        obj = np.array([str(v) for v in vals.ravel()], dtype=object).reshape(vals.shape)
    elif dtype_name in ("U3", "S2"):
        obj = vals.astype(dtype_name)
    elif dtype_name[0] in "Mm":
        obj = np.nan_to_num(vals, nan=0, posinf=0, neginf=0).astype(np.int64).astype(dtype_name)
    else:
        obj = vals.astype(dtype_name)
    return obj


@st.composite
def arrays(
    draw,
    shape,
    kinds=("small", "normal", "extreme", "bigint", "noncanonical", "constant"),
    dtypes=None,
    foreign=True,
    layouts=None,
):
    """(object passed to the API, canonical ndarray of the same values or None, description)."""
    names = list(dtypes or NUMERIC) + (FOREIGN_DTYPES if foreign else [])
    dtype_name = draw(st.sampled_from(names))
    kind = draw(st.sampled_from(kinds))
    vals = _values(draw, shape, kind if kind not in ("bigint", "noncanonical") else "small", dtype_name)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if dtype_name in FOREIGN_DTYPES:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return _foreign(vals, dtype_name), None, f"{dtype_name} {kind} {shape}"
    dtype = _dtype(dtype_name)
    base = np.asarray(_cast(np.asarray(vals), kind, dtype, rng))
    canonical = np.array(base, dtype=base.dtype.newbyteorder("="), order="C")  # keeps 0-d arrays 0-d
    if canonical.dtype.kind == "b":
        canonical = canonical.view(np.uint8) != 0
    layout = draw(
        st.sampled_from(
            layouts
            or ["plain", "strided", "reversed", "fortran", "readonly", "record", "list", "pandas", "sparse", "memory"]
        )
    )
    obj = _layout(base, canonical, layout, draw)
    if obj is None:
        obj, layout = base, "plain"
    return obj, canonical, f"{dtype_name} {kind} {shape} {layout}"


def _layout(base, canonical, layout, draw):
    if layout == "plain":
        return base
    if layout == "strided" and base.ndim >= 1:
        big = np.zeros((2 * base.shape[0] + 1,) + base.shape[1:], dtype=base.dtype)
        big[1::2] = base
        return big[1::2]
    if layout == "reversed" and base.ndim >= 1:
        return base[::-1].copy()[::-1]
    if layout == "fortran" and base.ndim == 2:
        return np.asfortranarray(base)
    if layout == "readonly":
        out = base.copy()
        out.flags.writeable = False
        return out
    if layout == "record":
        rec = np.zeros(base.shape, dtype=[("pad", "u1"), ("value", base.dtype)])
        rec["value"] = base
        return rec["value"]
    if layout == "list":
        return canonical.tolist()
    if layout == "memory":
        return memoryview(canonical) if canonical.dtype.kind != "b" and canonical.size else None
    if layout == "pandas" and canonical.ndim in (1, 2):
        import pandas as pd

        return pd.Series(canonical) if canonical.ndim == 1 else pd.DataFrame(canonical)
    if (
        layout == "sparse"
        and canonical.ndim == 2
        and canonical.dtype.kind in "biuf"
        and 4 <= canonical.dtype.itemsize <= 8
        or layout == "sparse"
        and canonical.ndim == 2
        and canonical.dtype.kind in "biu"
    ):
        import scipy.sparse as sp

        fmt = draw(st.sampled_from(["csr", "csc", "coo", "lil", "dok", "csr_array"]))
        if fmt == "csr_array":
            return sp.csr_array(canonical)
        return sp.coo_matrix(canonical).asformat(fmt)
    return None


def _same_values(obj, canonical) -> bool:
    """Whether ``obj`` reaches the API as the canonical values in the canonical dtype."""
    try:
        import scipy.sparse as sp

        if sp.issparse(obj):
            return False  # may be refused (TypeError naming the argument) where dense is accepted
    except ImportError:
        pass
    if isinstance(obj, list):
        return np.asarray(obj).dtype == canonical.dtype
    if isinstance(obj, memoryview):
        return True
    return True


# --------------------------------------------------------------------------- options

INTS_BAD = [1.5, "x", None, True, np.float64(2.0), 2**63, -(2**63) - 1, 2**31, [1], float("nan")]


def option(valid, invalid=(), p_invalid=0.25):
    return (
        st.one_of(st.sampled_from(list(valid)), st.sampled_from(list(invalid)))
        if invalid
        else st.sampled_from(list(valid))
    )


N_JOBS = option([None, 1, 2, -1, np.int64(2)], [0, 1.5, "x", 2**40, True, -(2**40), [2]])
BOOL = option([False, True, np.bool_(True)], [1, "yes", None, 0.0])


# --------------------------------------------------------------------------- outcomes

FOREIGN_TEXT = [
    "incompatible function arguments",
    "Invoked with",
    "ufunc",
    "could not be broadcast",
    "setting an array element",
    "could not convert",
    "unsupported operand",
    "not supported between instances",
    "out of bounds for axis",
    "Cannot cast",
    "cannot be safely cast",
    "invalid literal",
    "unhashable",
    "has no len",
    "SeedSequence",
    "float() argument",
    "int() argument",
    "object cannot be interpreted",
    "cdist_",
    "pybind11",
    "not subscriptable",
    "Python int too large",
    "bit generator",
    "nonzero",
    "truth value",
]


class Raised:
    def __init__(self, exc):
        self.type = type(exc)
        self.message = str(exc)

    def __repr__(self):
        return f"{self.type.__name__}({self.message!r})"


def call(func, kwargs, names):
    """Run func(**kwargs); return its value or a Raised, checking the error's message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = func(**kwargs)
        except (ValueError, TypeError) as exc:
            check_message(exc, names, func)
            value = Raised(exc)
        except ZeroDivisionError as exc:
            # lifelines' own exception when no pair is admissible: code written
            # for lifelines catches exactly this, so the drop-in keeps it.
            if func is not pm.lifelines.concordance_index or "No admissable pairs" not in str(exc):
                raise
            value = Raised(exc)
    numpy_warnings = [str(w.message) for w in caught if "encountered in" in str(w.message)]
    assert not numpy_warnings, f"{func.__name__}: numpy warning leaked: {numpy_warnings}"
    return value


def check_message(exc, names, func):
    message = str(exc)
    assert message, f"{func.__name__}: {type(exc).__name__} without a message"
    named = [n for n in names if re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z])", message)]
    assert named, f"{func.__name__}: message names no argument ({', '.join(names)}): {type(exc).__name__}: {message}"
    bad = [t for t in FOREIGN_TEXT if t in message]
    assert not bad, f"{func.__name__}: foreign text {bad} in: {message}"
    assert len(message) < 600, f"{func.__name__}: message of {len(message)} characters: {message[:300]}..."


def plain(value):
    if isinstance(value, Result):
        return {k: plain(v) for k, v in value.asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def assert_same(a, b, rtol=1e-12, where="result"):
    if isinstance(a, Raised) or isinstance(b, Raised):
        assert isinstance(a, Raised) and isinstance(b, Raised) and a.type is b.type, f"{where}: {a!r} vs {b!r}"
        return
    a, b = plain(a), plain(b)
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], rtol, f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: {a} vs {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{where}: shapes {a.shape} vs {b.shape}"
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            assert np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True), f"{where}: {a} vs {b}"
        else:
            assert np.array_equal(a, b), f"{where}: {a} vs {b}"
    elif isinstance(a, float) or isinstance(b, float):
        assert isinstance(b, (int, float)) and isinstance(a, (int, float)), f"{where}: {a!r} vs {b!r}"
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), f"{where}: {a} vs {b}"
        else:
            assert a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=0), f"{where}: {a} vs {b}"
    elif callable(a):
        return
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def check_layouts(func, names, fancy: dict, canonical: dict, exact_values: bool, rtol=1e-12):
    """Call with the drawn objects and with canonical copies; return the canonical outcome."""
    got = call(func, fancy, names)
    if not exact_values:
        return None
    want = call(func, canonical, names)
    if isinstance(got, Raised) and not isinstance(want, Raised):
        pytest.fail(f"{func.__name__}: {got!r} on the drawn layout, an answer on a contiguous copy")
    assert_same(got, want, rtol, func.__name__)
    return want


def split(drawn: dict):
    """(fancy kwargs, canonical kwargs or None when the values differ or are not numeric)."""
    fancy, canon, exact = {}, {}, True
    for name, value in drawn.items():
        if isinstance(value, tuple) and len(value) == 3 and isinstance(value[2], str):
            obj, c, _ = value
            fancy[name] = obj
            if c is None or not _same_values(obj, c):
                exact = False
            canon[name] = c
        else:
            fancy[name] = value
            canon[name] = value
    return fancy, canon, exact


def fresh(kwargs):
    """Generators are stateful: give each call its own."""
    return {k: (np.random.default_rng(0) if isinstance(v, np.random.Generator) else v) for k, v in kwargs.items()}


def shapes(n_max=8, d_max=3, vector=True):
    n = st.integers(0, n_max)
    if vector:
        return st.one_of(
            n.map(lambda k: (k,)),
            n.map(lambda k: (k, 1)),
            st.just(()),
            st.tuples(n, st.integers(2, 3)),
            st.tuples(n, st.just(1), st.just(2)),
        )
    return st.one_of(st.tuples(n, st.integers(0, d_max)), n.map(lambda k: (k,)), st.tuples(n, st.just(2), st.just(1)))


# --------------------------------------------------------------------------- paired evaluation

MIN_DIST = option([0.5, 1.0, 0.25, 1e-300, np.float32(0.5), 2], [0, -1.0, float("nan"), float("inf"), "x", None, True])


@FUZZ
@given(data=st.data())
def test_paired(data):
    shape = data.draw(shapes())
    drawn = {"y_score": data.draw(arrays(shape)), "y_true": data.draw(arrays(shape, foreign=data.draw(st.booleans())))}
    if data.draw(st.booleans()):  # mismatched lengths
        drawn["y_true"] = data.draw(arrays(data.draw(shapes())))
    drawn["min_dist"] = data.draw(MIN_DIST)
    drawn["n_jobs"] = data.draw(N_JOBS)
    fancy, canon, exact = split(drawn)
    names = ["y_score", "y_true", "min_dist", "n_jobs", "warn"]
    result = check_layouts(pm.paired_evaluation, names, {**fancy, "warn": False}, {**canon, "warn": False}, exact)

    def as_pairedeval(kw):
        return {"scores": kw["y_score"], "labels": kw["y_true"], "min_dist": kw["min_dist"]}

    check_layouts(
        pm.pairedeval.paired_eval, ["scores", "labels", "min_dist"], as_pairedeval(fancy), as_pairedeval(canon), exact
    )
    if result is None or isinstance(result, Raised):
        return
    scores, labels = canon["y_score"].ravel().tolist(), canon["y_true"].ravel().tolist()
    want = ref.paired.pair_counts(scores, labels, float(canon["min_dist"]))
    assert (result.n_rankable, result.n_correct, result.n_tied, result.n_incorrect) == want


def _beyond_2_53(arr) -> bool:
    return arr.dtype.kind in "iu" and arr.size > 0 and int(np.abs(arr.astype(object)).max()) > 2**53


def test_paired_integer_labels_beyond_2_53_are_exact():
    labels = np.array([2**62, 2**62 + 1, 0])
    assert pm.pairedeval.paired_eval([1.0, 2.0, 3.0], labels) == (3, 1)
    assert pm.pairedeval.paired_eval([1.0, 2.0, 3.0], labels.astype(np.uint64)) == (3, 1)


def test_error_measures_of_integers_beyond_2_53_are_exact():
    a, b = np.array([2**62 + 1, 5]), np.array([2**62, 5])
    assert pm.absolute_error(a, b) == 1.0
    assert pm.sum_squares_error(a, b) == 1.0
    assert pm.worst_case_error(a, b) == 1.0
    assert pm.zero_one_error(a, b) == 1.0


@FUZZ
@given(data=st.data())
def test_compare_models(data):
    shape = data.draw(shapes(n_max=7))
    drawn = {
        "y_true": data.draw(arrays(shape, foreign=False)),
        "y_score": data.draw(arrays((2, *shape) if len(shape) == 1 else shape)),
        "min_dist": data.draw(MIN_DIST),
        "n_jobs": data.draw(N_JOBS),
    }
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_score", "min_dist", "n_jobs"]
    result = check_layouts(pm.compare_models, names, fancy, canon, exact, rtol=1e-9)
    if result is None or isinstance(result, Raised):
        return
    labels = canon["y_true"].ravel().tolist()
    for auc, row in zip(result.auc, canon["y_score"]):
        want = ref.paired.pair_counts(row.tolist(), labels, float(canon["min_dist"]))
        expected = (want[1] + want[2] / 2) / want[0] if want[0] else np.nan
        np.testing.assert_allclose(auc, expected, rtol=1e-12)


# --------------------------------------------------------------------------- 2 vs 2

METRICS_2V2 = option(["cosine", "correlation", "euclidean", "sqeuclidean"], ["manhattan", None, 3, "Cosine"])
TIES = option(["fail", "pass", "half", "exclude"], ["none", 0.5, None])
PAIRS = option(["all", "distinct_targets", 3, np.int64(5)], [0, -1, 1.5, "some", None, 2**70])
RTOL = option([None, 0.0, 1e-9, np.float32(1e-6)], [-1.0, float("nan"), "x", float("inf")])
RNG = option([0, 7, np.random.default_rng(0), np.random.SeedSequence(3)], ["x", -1, 1.5, [1, "a"]])


@FUZZ
@given(data=st.data())
def test_two_vs_two(data):
    shape = data.draw(shapes(n_max=7, vector=False))
    other = shape if data.draw(st.integers(0, 5)) else data.draw(shapes(n_max=7, vector=False))
    drawn = {
        "y_true": data.draw(arrays(shape)),
        "y_pred": data.draw(arrays(other)),
        "metric": data.draw(METRICS_2V2),
        "ties": data.draw(TIES),
        "pairs": data.draw(PAIRS),
        "rng": data.draw(RNG),
        "n_jobs": data.draw(N_JOBS),
        "progress": data.draw(BOOL),
        "rtol": data.draw(RTOL),
    }
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_pred", "metric", "ties", "pairs", "rng", "n_jobs", "progress", "rtol"]
    result = check_layouts(lambda **kw: pm.two_vs_two(**fresh(kw)), names, fancy, canon, exact)
    if result is None or isinstance(result, Raised) or not isinstance(canon["pairs"], str):
        return
    y, p = canon["y_true"], canon["y_pred"]
    if not (np.abs(y).max(initial=0) < 1e100 and np.abs(p).max(initial=0) < 1e100):
        return  # the reference works in float64 without rescaling
    want = ref.two_vs_two.two_vs_two(
        y, p, metric=canon["metric"], ties=canon["ties"], pairs=canon["pairs"], rtol=canon["rtol"]
    )
    assert (result.n_passed, result.n_total) == (want["n_passed"], want["n_total"])


@FEW
@given(data=st.data())
def test_two_vs_two_permutation_test(data):
    shape = data.draw(shapes(n_max=6, vector=False))
    drawn = {
        "y_true": data.draw(arrays(shape)),
        "y_pred": data.draw(arrays(shape)),
        "n_resamples": data.draw(option([1, 5, np.int32(3)], [0, -2, 2.5, "10", None])),
        "rng": data.draw(RNG),
        "metric": data.draw(METRICS_2V2),
        "ties": data.draw(TIES),
        "pairs": data.draw(PAIRS),
        "n_jobs": data.draw(N_JOBS),
        "progress": data.draw(BOOL),
        "rtol": data.draw(RTOL),
    }
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_pred", "n_resamples", "rng", "metric", "ties", "pairs", "n_jobs", "progress", "rtol"]
    check_layouts(lambda **kw: pm.two_vs_two_permutation_test(**fresh(kw)), names, fancy, canon, exact)


# --------------------------------------------------------------------------- matching and the cross-match test

CDIST = option(
    ["euclidean", "sqeuclidean", "cityblock", "chebyshev", "rank_mahalanobis"], ["nope", 3, None, "Euclidean"]
)
K = option([1, 3, 10, np.int16(4)], [0, -1, 2.5, "3", None, True])


def _distance_matrix(points: np.ndarray) -> np.ndarray:
    diff = points[:, None, :] - points[None, :, :]
    return np.sqrt((diff**2).sum(-1))


@st.composite
def distance_matrices(draw):
    n = draw(st.integers(0, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    pts = np.round(rng.normal(size=(n, 2)) * draw(st.sampled_from([1.0, 1e-150, 1e150, 1e6])), 3)
    if n >= 2 and draw(st.booleans()):
        pts[1] = pts[0]  # duplicated points
    D = _distance_matrix(pts) if n else np.zeros((0, 0))
    spoil = draw(st.sampled_from(["none", "none", "none", "asym", "negative", "nan", "diag", "shape"]))
    if n >= 2 and spoil == "asym":
        D[0, 1] += 1.0
    elif n >= 2 and spoil == "negative":
        D[0, 1] = D[1, 0] = -1.0
    elif n >= 1 and spoil == "nan":
        D[0, -1] = D[-1, 0] = np.nan
    elif n >= 1 and spoil == "diag":
        D[0, 0] = 1.0
    elif spoil == "shape":
        D = D[:, :-1] if n else np.zeros(3)
    dtype = draw(st.sampled_from(["f8", "f4", ">f8", "i8", ">i4", "u2", "f2", "g", "c16", "O"]))
    with np.errstate(over="ignore", invalid="ignore"):
        if np.dtype(dtype).kind in "iu":
            D = np.round(np.clip(np.nan_to_num(D), 0 if np.dtype(dtype).kind == "u" else -1e6, 1e6))
        base = D.astype(dtype)
    if base.dtype.kind in "biuf":
        canonical = np.array(base, dtype=base.dtype.newbyteorder("="), order="C")
        layout = draw(
            st.sampled_from(
                ["plain", "strided", "reversed", "fortran", "readonly", "record", "list", "pandas", "sparse"]
            )
        )
        obj = _layout(base, canonical, layout, draw)
        return (base if obj is None else obj), canonical, f"D {dtype} {spoil} {layout}"
    return base, None, f"D {dtype}"


@FUZZ
@given(data=st.data())
def test_min_weight_perfect_matching_from_distances(data):
    drawn = {"D": data.draw(distance_matrices()), "n_neighbors": data.draw(K), "progress": data.draw(BOOL)}
    fancy, canon, exact = split(drawn)
    names = ["D", "n_neighbors", "progress", "points"]
    result = check_layouts(pm.min_weight_perfect_matching, names, fancy, canon, exact, rtol=1e-9)
    if result is None or isinstance(result, Raised):
        return
    D = canon["D"].astype(np.float64)
    cost, _ = ref.matching.min_weight_perfect_matching(D.tolist())
    assert result.cost == pytest.approx(cost, rel=1e-9, abs=1e-12 * D.max(initial=0) * D.shape[0])
    assert result.verify()


@FUZZ
@given(data=st.data())
def test_min_weight_perfect_matching_from_points(data):
    shape = data.draw(shapes(n_max=8, vector=False))
    drawn = {
        "points": data.draw(arrays(shape, kinds=("small", "normal", "extreme", "constant"))),
        "metric": data.draw(CDIST),
        "n_neighbors": data.draw(K),
        "progress": data.draw(BOOL),
    }
    fancy, canon, exact = split(drawn)
    names = ["points", "metric", "n_neighbors", "progress", "D"]
    extra = {}  # unknown keywords: test_unknown_keyword_is_a_short_type_error_naming_it
    result = check_layouts(
        pm.min_weight_perfect_matching, names, {**fancy, **extra}, {**canon, **extra}, exact, rtol=1e-9
    )
    if result is None or isinstance(result, Raised):
        return
    assert result.verify()


@FEW
@given(data=st.data())
def test_rank_mahalanobis(data):
    drawn = {"X": data.draw(arrays(data.draw(shapes(n_max=8, vector=False))))}
    fancy, canon, exact = split(drawn)
    result = check_layouts(pm.rank_mahalanobis, ["X"], fancy, canon, exact, rtol=1e-9)
    if result is None or isinstance(result, Raised) or canon["X"].shape[0] < 2:
        return
    want = np.asarray(ref.matching.rank_mahalanobis(canon["X"].astype(np.float64)))
    assert np.allclose(result, want, rtol=1e-9, atol=1e-12)


@FUZZ
@given(data=st.data())
def test_crossmatch(data):
    n, m = data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5))
    d = data.draw(st.integers(1, 3))
    drawn = {
        "x": data.draw(arrays(data.draw(st.sampled_from([(n, d), (n,)])))),
        "y": data.draw(arrays(data.draw(st.sampled_from([(m, d), (m,), (m, d + 1)])))),
        "metric": data.draw(CDIST),
        "n_neighbors": data.draw(K),
        "rng": data.draw(RNG),
        "progress": data.draw(BOOL),
    }
    fancy, canon, exact = split(drawn)
    extra = {}  # unknown keywords: test_unknown_keyword_is_a_short_type_error_naming_it
    names = ["x", "y", "metric", "n_neighbors", "rng", "progress"]
    result = check_layouts(
        lambda **kw: pm.crossmatch_test(**fresh(kw)), names, {**fancy, **extra}, {**canon, **extra}, exact, rtol=1e-9
    )
    if result is None or isinstance(result, Raised):
        return
    assert 0 <= result.pvalue <= 1 and result.within_x + result.statistic + result.within_y == result.n_points // 2


@FUZZ
@given(data=st.data())
def test_crossmatch_from_distances(data):
    D = data.draw(distance_matrices())
    n = D[0].shape[0] if hasattr(D[0], "shape") and D[0].ndim else 0
    z_shape = data.draw(st.sampled_from([(n,), (n, 1), (max(n - 1, 0),)]))
    drawn = {
        "labels": data.draw(arrays(z_shape, kinds=("binary", "binary", "small", "extreme", "noncanonical"))),
        "D": D,
        "n_neighbors": data.draw(K),
        "rng": data.draw(RNG),
        "progress": data.draw(BOOL),
    }
    fancy, canon, exact = split(drawn)
    names = ["labels", "D", "n_neighbors", "rng", "progress"]
    result = check_layouts(lambda **kw: pm.crossmatch_test(**fresh(kw)), names, fancy, canon, exact, rtol=1e-9)
    if result is None or isinstance(result, Raised):
        return
    assert 0 <= result.pvalue <= 1


@FUZZ
@given(
    N=option([2, 4, 10, 340, np.int64(12)], [0, 1, 3, -2, 2.0, "4", None, True]),
    n=option([0, 1, 2, 5, 340], [-1, 1.5, "2", None, 10**6]),
)
def test_crossmatch_null_distribution(N, n):
    result = call(pm.crossmatch_null_distribution, {"N": N, "n": n}, ["N", "n"])
    if isinstance(result, Raised):
        return
    assert result.pmf.sum() == pytest.approx(1.0)
    if int(N) <= 40:
        want = ref.matching.crossmatch_pmf(int(N), int(n))
        assert sorted(want) == result.a1.tolist()
        assert np.allclose(result.pmf, [float(want[a]) for a in sorted(want)], rtol=1e-9, atol=1e-300)


@FEW
@given(data=st.data())
def test_crossmatch_resample(data):
    n, m = data.draw(st.integers(0, 8)), data.draw(st.integers(0, 8))
    drawn = {
        "x": data.draw(arrays((n, 2))),
        "y": data.draw(arrays(data.draw(st.sampled_from([(m, 2), (m, 3)])))),
        "sample_size": data.draw(option([1, 2, 3], [0, -1, 1.5, "2", 10**6])),
        "n_resamples": data.draw(option([1, 4], [0, 2.5, None])),
        "rng": data.draw(RNG),
        "n_jobs": data.draw(N_JOBS),
        "metric": data.draw(CDIST),
        "n_neighbors": data.draw(K),
    }
    fancy, canon, exact = split(drawn)
    names = ["x", "y", "sample_size", "n_resamples", "rng", "n_jobs", "metric", "n_neighbors"]
    check_layouts(lambda **kw: pm.crossmatch_resample(**fresh(kw)), names, fancy, canon, exact, rtol=1e-9)


# --------------------------------------------------------------------------- error measures

ERRORS = [pm.zero_one_error, pm.absolute_error, pm.sum_squares_error, pm.rms_error, pm.worst_case_error]


@FUZZ
@given(data=st.data())
def test_error_measures(data):
    func = data.draw(st.sampled_from(ERRORS))
    shape = data.draw(shapes(n_max=6))
    other = shape if data.draw(st.integers(0, 4)) else data.draw(shapes(n_max=6))
    drawn = {"y_true": data.draw(arrays(shape)), "y_pred": data.draw(arrays(other)), "per_target": data.draw(BOOL)}
    if func in (pm.zero_one_error, pm.absolute_error, pm.sum_squares_error):
        drawn["average"] = data.draw(BOOL)
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_pred", "per_target", "average"]
    result = check_layouts(func, names, fancy, canon, exact, rtol=1e-9)
    if result is None or isinstance(result, Raised):
        return
    yt, yp = canon["y_true"], canon["y_pred"]
    if yt.ndim == 2 and yp.ndim == 1 or yt.ndim == 1 and yp.ndim == 2:
        yt, yp = yt.reshape(-1), yp.reshape(-1)
    if _beyond_2_53(yt) or _beyond_2_53(yp):
        return  # the reference works in float64; test_error_measures_of_integers_beyond_2_53_are_exact
    values = np.concatenate([yt.ravel(), yp.ravel()]).astype(np.float64)
    if not (np.isfinite(values).all() and np.abs(values).max(initial=0) < 1e100):
        return
    kwargs = {k: bool(canon[k]) for k in ("per_target", "average") if k in canon}
    want = getattr(ref.measures, func.__name__)(yt.tolist(), yp.tolist(), **kwargs)
    assert np.allclose(np.asarray(result, dtype=float), np.asarray(want, dtype=float), rtol=1e-9, atol=1e-300)


EPS = option([None, 1e-15, 0.1, np.float32(1e-3)], [0.5, -1.0, float("nan"), "x", 1])
BASE = option([None, 2, 10.0, math.e], [1, 0, -2.0, "e", float("nan")])


@FUZZ
@given(data=st.data())
def test_likelihood_measures(data):
    func = data.draw(st.sampled_from([pm.likelihood, pm.log_likelihood, pm.log_loss]))
    shape = data.draw(shapes(n_max=6))
    drawn = {
        "y_true": data.draw(arrays(shape, kinds=("binary", "binary", "small", "extreme", "noncanonical"))),
        "y_pred": data.draw(arrays(shape, kinds=("prob", "prob", "binary", "extreme", "normal"))),
        "per_target": data.draw(BOOL),
        "eps": data.draw(EPS),
    }
    if func is not pm.likelihood:
        drawn["base"] = data.draw(BASE)
    if func is pm.log_likelihood:
        drawn["average"] = data.draw(BOOL)
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_pred", "per_target", "eps", "base", "average"]
    result = check_layouts(func, names, fancy, canon, exact, rtol=1e-9)
    if result is None or isinstance(result, Raised) or func is not pm.log_loss or canon["base"] is not None:
        return
    yt, yp = canon["y_true"], canon["y_pred"]
    eps = canon["eps"]
    want = ref.measures.log_loss(
        yt.tolist(), yp.tolist(), per_target=bool(canon["per_target"]), eps=None if eps is None else float(eps)
    )
    assert np.allclose(np.asarray(result, dtype=float), np.asarray(want, dtype=float), rtol=1e-9)


@FEW
@given(data=st.data())
def test_best_constant(data):
    drawn = {
        "y": data.draw(arrays(data.draw(shapes(n_max=6)))),
        "loss": data.draw(
            option(["zero_one", "absolute", "squares", "worst_case", "log_loss"], ["rms", None, 0, "Absolute"])
        ),
    }
    fancy, canon, exact = split(drawn)
    check_layouts(pm.best_constant, ["y", "loss"], fancy, canon, exact, rtol=1e-9)


@FUZZ
@given(data=st.data())
def test_representations(data):
    func = data.draw(st.sampled_from([pm.to_indicators, pm.to_cuts, pm.from_indicators, pm.from_cuts, pm.check_cuts]))
    n = data.draw(st.integers(0, 6))
    k = data.draw(st.integers(0, 4))
    values = data.draw(
        st.one_of(
            st.just(list(range(k))),
            st.just(["a", "b", "c"][:k]),
            st.just([0.5, 0.5, 1.0]),
            st.just([]),
            st.just(np.arange(k)[::-1]),
            st.just(None),
            st.just([[0, 1], [2, 3]]),
            st.just([np.nan, 1.0]),
        )
    )
    if func in (pm.to_indicators, pm.to_cuts):
        drawn = {
            "y": data.draw(
                arrays(data.draw(st.sampled_from([(n,), (n, 1), (n, 2)])), kinds=("small", "binary", "extreme"))
            ),
            "values": values,
            "dtype": data.draw(
                option([np.float64, np.float32, np.int8, bool, "f8"], ["nope", None, object, np.complex128])
            ),
        }
        names = ["y", "values", "dtype"]
    elif func is pm.check_cuts:
        drawn = {"pred_cuts": data.draw(arrays((n, k), kinds=("prob", "binary", "extreme", "small")))}
        names = ["pred_cuts"]
    else:
        key = "indicators" if func is pm.from_indicators else "cuts"
        drawn = {
            key: data.draw(
                arrays(
                    data.draw(st.sampled_from([(n, k), (n, max(k - 1, 0)), (n,)])),
                    kinds=("prob", "binary", "extreme", "small"),
                )
            ),
            "values": values,
            "strict": data.draw(BOOL),
        }
        names = [key, "values", "strict"]
    fancy, canon, exact = split(drawn)
    check_layouts(func, names, fancy, canon, exact, rtol=1e-12)


@FUZZ
@given(data=st.data())
def test_multilabel_counts(data):
    n, k = data.draw(st.integers(0, 6)), data.draw(st.integers(0, 5))
    other = (n, k) if data.draw(st.integers(0, 5)) else (n, k + 1)
    kinds = ("binary", "binary", "binary", "small", "noncanonical", "extreme")
    drawn = {
        "y_true": data.draw(arrays(data.draw(st.sampled_from([(n, k), (n,), (n, k, 1)])), kinds=kinds)),
        "y_pred": data.draw(arrays(other, kinds=kinds)),
        "false_pos": data.draw(option([1.0, 0, 2.5, np.float32(1)], [-1.0, float("nan"), "1", None])),
        "false_neg": data.draw(option([1.0, 5], [float("inf"), [1.0]])),
    }
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_pred", "false_pos", "false_neg"]
    result = check_layouts(pm.multilabel_counts, names, fancy, canon, exact, rtol=1e-12)
    if result is None or isinstance(result, Raised):
        return
    want = ref.measures.multilabel_counts(
        canon["y_true"].tolist(), canon["y_pred"].tolist(), float(canon["false_pos"]), float(canon["false_neg"])
    )
    assert (int(result.tp), int(result.tn), int(result.fp), int(result.fn)) == tuple(
        want[k] for k in ("tp", "tn", "fp", "fn")
    )


# --------------------------------------------------------------------------- unknown keywords

# Functions that forward extra keywords to scipy's cdist, whose own error is a
# page-long signature dump (remove a name once fixed: the mark is strict).
_KWARGS_NOT_YET = set()
_KWARGS_MARK = pytest.mark.xfail(strict=True, reason="unknown keywords reach scipy's cdist")
_PUBLIC_FUNCTIONS = [n for n in pm.__all__ if callable(getattr(pm, n)) and not isinstance(getattr(pm, n), type)]


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=_KWARGS_MARK) if n in _KWARGS_NOT_YET else n for n in _PUBLIC_FUNCTIONS]
)
def test_unknown_keyword_is_a_short_type_error_naming_it(name):
    func = getattr(pm, name)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 2))
    guesses = {
        "crossmatch_null_distribution": ((4, 2), {}),
        "best_constant": (([1.0, 2.0], "absolute"), {}),
        "check_cuts": ((np.array([[0.9, 0.1]]),), {}),
        "to_indicators": (([0, 1], [0, 1]), {}),
        "to_cuts": (([0, 1], [0, 1]), {}),
        "from_indicators": ((np.eye(2), [0, 1]), {}),
        "from_cuts": ((np.ones((2, 1)), [0, 1]), {}),
        "rank_mahalanobis": ((x,), {}),
        "min_weight_perfect_matching": ((), {"points": x}),
        "multi_crossmatch_test": ((x, ["a", "b", "c"] * 2), {}),
        "multilabel_counts": ((np.eye(3), np.eye(3)), {}),
        "crossmatch_resample": ((x, x), {"sample_size": 2, "n_resamples": 1, "rng": 0}),
        "roc_auc_score": (([0, 1, 0, 1, 0, 1], x[:, 0]), {}),
        "concordance_index": ((x[:, 1], x[:, 0]), {}),
        "concordance_index_censored": (([1, 0, 1, 1, 0, 1], x[:, 1], x[:, 0]), {}),
        "compare_paired": ((x[:, 0], x[:, 1], [0, 1, 0, 1, 0, 1]), {}),
    }
    args, kwargs = guesses.get(
        name, ((x, x + 1) if "two_vs_two" in name or "crossmatch" in name else (x[:, 0], [0, 1, 0, 1, 0, 1]), {})
    )
    with pytest.raises(TypeError) as info:
        func(*args, **kwargs, kk=3)
    message = str(info.value)
    assert "kk" in message and len(message) < 300, message


# --------------------------------------------------------------------------- command line


def run_cli(argv):
    from pairmetrics.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _write(path: Path, obj, fmt: str):
    if fmt == "npy":
        np.save(path.with_suffix(".npy"), obj, allow_pickle=True)
        return path.with_suffix(".npy")
    if fmt == "garbage":
        path.with_suffix(".csv").write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 64, dtype=np.uint8)))
        return path.with_suffix(".csv")
    arr = np.asarray(obj)
    text = "\n".join(",".join(str(v) for v in np.atleast_1d(row)) for row in arr) if arr.ndim else str(arr)
    if fmt == "header":
        text = "a" + ",b" * (arr.shape[1] - 1 if arr.ndim == 2 else 0) + "\n" + text
    path.with_suffix(".csv").write_text(text)
    return path.with_suffix(".csv")


SUBCOMMANDS = {
    "paired": (
        2,
        lambda: [],
        [
            ["--min-dist", "0.5"],
            ["--min-dist", "-1"],
            ["--n-jobs", "x"],
            ["--n-jobs", "0"],
            ["--column", "b"],
            ["--compare", "{0}"],
            [],
        ],
    ),
    "two-vs-two": (
        2,
        None,
        [
            ["--metric", "euclidean"],
            ["--pairs", "3", "--seed", "1"],
            ["--pairs", "x"],
            ["--ties", "half"],
            ["--n-jobs", "-1"],
            [],
        ],
    ),
    "crossmatch": (2, None, [["--metric", "cityblock"], ["--metric", "nope"], []]),
    "measures": (2, None, [["--mean"], ["--probabilities"], ["--column", "0"], []]),
    "multilabel": (2, None, [["--false-pos", "2"], ["--false-neg", "x"], []]),
}


@FUZZ
@given(data=st.data())
def test_cli_subcommands(data):
    command = data.draw(st.sampled_from(sorted(SUBCOMMANDS)))
    n = data.draw(st.integers(0, 6))
    shape = data.draw(st.sampled_from([(n,), (n, 2), (n, 1), (n, 2, 2)]))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(SUBCOMMANDS[command][0]):
            obj, _, _ = data.draw(
                arrays(shape, kinds=("small", "binary", "extreme", "bigint", "noncanonical"), layouts=["plain"])
            )
            fmt = data.draw(st.sampled_from(["npy", "npy", "csv", "header", "garbage"]))
            paths.append(_write(Path(tmp) / f"f{i}", obj, fmt))
        extra = [a.format(*paths) for a in data.draw(st.sampled_from(SUBCOMMANDS[command][2]))]
        json_flag = data.draw(st.sampled_from([[], ["--json"]]))
        code, out, err = run_cli([command, *paths, *extra, *json_flag, "--quiet"])
    assert code in (0, 2), f"exit {code}:\n{err}"
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert err.startswith("pairmetrics"), err
    else:
        assert out.strip(), "no output"
        if json_flag:
            json.loads(out)


# --------------------------------------------------------------------------- drop-in AUC and concordance


@FUZZ
@given(data=st.data())
def test_roc_auc_score(data):
    shape = data.draw(shapes(n_max=8))
    drawn = {
        "y_true": data.draw(arrays(shape, kinds=("binary", "binary", "small", "extreme", "noncanonical"))),
        "y_score": data.draw(arrays(shape)),
        "average": data.draw(option(["macro", "micro", None, "weighted"], ["mean", 3])),
        "max_fpr": data.draw(option([None, 0.5, 1.0], [0.0, -1.0, 2.0, "x"])),
    }
    if data.draw(st.booleans()):
        drawn["sample_weight"] = data.draw(arrays(shape[:1], kinds=("small", "normal", "extreme")))
    fancy, canon, exact = split(drawn)
    names = ["y_true", "y_score", "average", "sample_weight", "max_fpr", "multi_class", "labels"]
    check_layouts(pm.sklearn.roc_auc_score, names, fancy, canon, exact, rtol=1e-9)


@FUZZ
@given(data=st.data())
def test_concordance_index(data):
    n = data.draw(st.integers(0, 8))
    shape = data.draw(st.sampled_from([(n,), (n, 1), (max(n - 1, 0),)]))
    drawn = {
        "event_times": data.draw(arrays((n,), kinds=("small", "normal", "extreme", "constant"))),
        "predicted_scores": data.draw(arrays(shape)),
        "event_observed": data.draw(st.one_of(st.none(), arrays((n,), kinds=("binary", "noncanonical", "small")))),
    }
    fancy, canon, exact = split(drawn)
    check_layouts(
        pm.lifelines.concordance_index,
        ["event_times", "predicted_scores", "event_observed"],
        fancy,
        canon,
        exact,
        rtol=1e-12,
    )


@FUZZ
@given(data=st.data())
def test_concordance_index_censored(data):
    n = data.draw(st.integers(0, 8))
    drawn = {
        "event_indicator": data.draw(arrays((n,), kinds=("binary", "noncanonical", "small"))),
        "event_time": data.draw(arrays((n,), kinds=("small", "normal", "extreme"))),
        "estimate": data.draw(arrays(data.draw(st.sampled_from([(n,), (n, 1), (n + 1,)])))),
        "tied_tol": data.draw(option([1e-8, 0.0, 0.5], [-1.0, float("nan"), "x", None])),
    }
    fancy, canon, exact = split(drawn)
    check_layouts(
        pm.sksurv.concordance_index_censored,
        ["event_indicator", "event_time", "estimate", "tied_tol"],
        fancy,
        canon,
        exact,
        rtol=1e-12,
    )
