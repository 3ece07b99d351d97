import math

import numpy as np
import pairmetrics
import pytest
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics import _core, _two_vs_two, two_vs_two, two_vs_two_permutation_test
from pairmetrics.reference import two_vs_two as ref
from scipy.spatial import distance

METRICS = ["cosine", "correlation", "euclidean", "sqeuclidean"]
TIES = ["fail", "pass", "half", "exclude"]


def random_data(n, d, seed=0, noise=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(n, d))
    p = y + noise * rng.normal(size=(n, d))
    return y.astype(dtype), p.astype(dtype)


def tie_heavy_data(n, d, seed=0):
    """Repeated targets, repeated predictions and small integers (many exact ties)."""
    rng = np.random.default_rng(seed)
    base_y = rng.integers(-2, 3, size=(max(2, n // 3), d)).astype(float)
    base_y[np.all(base_y == base_y[:, :1], axis=1), 0] += 1  # no constant or zero rows
    y = base_y[rng.integers(0, len(base_y), size=n)]
    p = y + rng.integers(-1, 2, size=(n, d))
    p[rng.random(n) < 0.3] = p[0]
    p[np.all(p == p[:, :1], axis=1), -1] += 7
    return y, p


def assert_matches_reference(result, expected):
    assert result.n_strict_passed == expected["n_strict_passed"]
    assert result.n_tied == expected["n_tied"]
    assert result.n_pairs == expected["n_pairs"]
    assert result.n_total == expected["n_total"]
    assert result.n_passed == expected["n_passed"]
    if math.isnan(expected["accuracy"]):
        assert math.isnan(result.accuracy)
    else:
        assert result.accuracy == pytest.approx(expected["accuracy"], rel=1e-12)
    np.testing.assert_allclose(result.sample_accuracy, expected["sample_accuracy"], rtol=1e-12)


# ---------------------------------------------------------------- vs the reference


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("mode", ["all", "distinct_targets", "sampled"])
@pytest.mark.parametrize("kind", ["random", "tie_heavy"])
def test_matches_reference(metric, ties, mode, kind):
    y, p = random_data(23, 5, seed=1) if kind == "random" else tie_heavy_data(23, 4, seed=2)
    if mode == "sampled":
        pairs = 100
        first, second = _two_vs_two.sample_pairs(len(y), pairs, np.random.default_rng(5))
        expected = ref.two_vs_two(y, p, metric, ties, list(zip(first, second)))
        result = two_vs_two(y, p, metric=metric, ties=ties, pairs=pairs, rng=5)
        assert result.standard_error is not None and result.standard_error >= 0
    else:
        expected = ref.two_vs_two(y, p, metric, ties, mode)
        result = two_vs_two(y, p, metric=metric, ties=ties, pairs=mode)
        assert result.standard_error is None
    assert_matches_reference(result, expected)
    assert (result.metric, result.ties, result.pairs) == (metric, ties, pairs if mode == "sampled" else mode)
    if kind == "tie_heavy":
        assert result.n_tied > 0


small_values = st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])


@st.composite
def datasets(draw):
    n = draw(st.integers(2, 14))
    d = draw(st.integers(1, 4))
    values = st.one_of(small_values, st.floats(-5, 5, allow_nan=False, width=32))
    y = np.array(draw(st.lists(st.lists(values, min_size=d, max_size=d), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(st.lists(values, min_size=d, max_size=d), min_size=n, max_size=n)))
    if draw(st.booleans()):  # repeat some targets
        y[draw(st.integers(0, n - 1))] = y[0]
    if draw(st.booleans()):
        p[draw(st.integers(0, n - 1))] = p[-1]
    return y, p


def usable(y, p, metric):
    if metric == "cosine":
        return np.any(y != 0, axis=1).all() and np.any(p != 0, axis=1).all()
    if metric == "correlation":
        return (~np.all(y == y[:, :1], axis=1)).all() and (~np.all(p == p[:, :1], axis=1)).all()
    return True


@settings(max_examples=examples(60))
@given(datasets(), st.sampled_from(METRICS), st.sampled_from(TIES), st.sampled_from(["all", "distinct_targets"]))
def test_property_matches_reference(data, metric, ties, mode):
    y, p = data
    if not usable(y, p, metric):
        with pytest.raises(ValueError, match="y_true|y_pred"):
            two_vs_two(y, p, metric=metric)
        return
    assert_matches_reference(
        two_vs_two(y, p, metric=metric, ties=ties, pairs=mode), ref.two_vs_two(y, p, metric, ties, mode)
    )


# ---------------------------------------------------------------- ties, blocking, threads


def kernel_counts(y, p, metric, rtol, n_threads=1, tile=None):
    gy, gp = _core._row_groups(y), _core._row_groups(p)
    c = _core._two_vs_two_all(y, p, gy, gp, metric, rtol, False, n_threads, tile)
    passed, tied, skipped, sp, stt = c["passed"], c["tied"], c["skipped"], c["sample_passed"], c["sample_tied"]
    return passed, tied, skipped, sp.tolist(), stt.tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("metric", METRICS)
def test_identical_rows_are_exact_ties_in_every_path(metric, dtype):
    rng = np.random.default_rng(3)
    n, d = 40, 7
    y = rng.normal(size=(n, d)).astype(dtype) * 3.7
    p = (y + rng.normal(size=(n, d))).astype(dtype)
    y[rng.integers(0, n, 12)] = y[5]  # identical targets
    p[rng.integers(0, n, 8)] = p[9]  # identical predictions
    same = (y[:, None, :] == y[None, :, :]).all(-1) | (p[:, None, :] == p[None, :, :]).all(-1)
    n_exact = int(np.triu(same, 1).sum())
    results = set()
    for tile in [None, (3, 5), (7, 7), (16, 4)]:
        for n_threads in [1, 2, 3]:
            counts = kernel_counts(y, p, metric, 0.0, n_threads, tile)
            assert counts[1] == n_exact
            results.add(str(counts))
    assert len(results) == 1
    first, second = np.nonzero(np.triu(np.ones((n, n), bool), 1))
    res = two_vs_two(y, p, metric=metric, rtol=0.0, pairs=len(first), rng=0)
    assert res.n_tied == n_exact


@settings(max_examples=25)
@given(
    st.integers(2, 60),
    st.integers(1, 9),
    st.sampled_from(METRICS),
    st.sampled_from([np.float32, np.float64]),
    st.tuples(st.integers(1, 20), st.integers(1, 40)),
    st.integers(2, 4),
    st.integers(0, 2**31),
)
def test_counts_do_not_depend_on_tiles_or_threads(n, d, metric, dtype, tile, n_threads, seed):
    y, p = random_data(n, max(d, 2), seed=seed, dtype=dtype)
    rtol = _two_vs_two.default_rtol(dtype, y.shape[1])
    base = kernel_counts(y, p, metric, rtol)
    assert kernel_counts(y, p, metric, rtol, n_threads) == base
    # Another tiling may only move pairs within the rounding error of the
    # tolerance boundary: none in practice for continuous data.
    assert kernel_counts(y, p, metric, rtol, n_threads, tile) == base


def test_n_jobs_invariance_public():
    y, p = random_data(300, 12, seed=4, noise=2.0)
    results = [two_vs_two(y, p, n_jobs=j, pairs=pm) for j in (None, 1, 2, -1) for pm in ("all",)]
    for r in results[1:]:
        assert r.asdict().keys() == results[0].asdict().keys()
        assert (r.n_passed, r.n_tied) == (results[0].n_passed, results[0].n_tied)
        np.testing.assert_array_equal(r.sample_accuracy, results[0].sample_accuracy)
    sampled = {two_vs_two(y, p, pairs=5000, rng=1, n_jobs=j).n_passed for j in (1, 2)}
    assert len(sampled) == 1


@pytest.mark.parametrize("metric", METRICS)
def test_float32_agrees_with_float64_up_to_near_ties(metric):
    y, p = random_data(150, 40, seed=6, noise=1.5)
    y32, p32 = y.astype(np.float32), p.astype(np.float32)
    r32 = two_vs_two(y32, p32, metric=metric, ties="pass")
    r64 = two_vs_two(y32.astype(np.float64), p32.astype(np.float64), metric=metric, ties="pass")
    # |lhs - rhs| of every pair in float64 from the same float32 values.
    D = distance.cdist(y32.astype(np.float64), p32.astype(np.float64), metric)
    own = np.diag(D)
    delta = np.triu((own[:, None] + own[None, :]) - (D + D.T), 1)
    band = 4 * 4 * r32.rtol * (1 + np.abs(D).max())
    near = int((np.abs(delta[np.triu_indices(150, 1)]) <= band).sum())
    assert abs(r32.n_passed - r64.n_passed) <= near
    assert abs(r32.n_strict_passed - r64.n_strict_passed) <= near
    assert r32.n_pairs == r64.n_pairs


def test_rtol_widens_ties():
    y, p = random_data(60, 5, seed=7)
    narrow = two_vs_two(y, p, rtol=0.0)
    wide = two_vs_two(y, p, rtol=1e-2)
    huge = two_vs_two(y, p, rtol=10.0)
    assert narrow.n_tied <= wide.n_tied <= huge.n_tied == narrow.n_pairs
    assert huge.n_passed == 0 and two_vs_two(y, p, rtol=10.0, ties="exclude").n_total == 0
    assert math.isnan(two_vs_two(y, p, rtol=10.0, ties="exclude").accuracy)


# ---------------------------------------------------------------- semantics


def counts(result):
    """The three numbers of the original function: (n_passed, n_total, accuracy)."""
    return result.n_passed, result.n_total, result.accuracy


def test_counts_like_the_blog_function():
    y, p = random_data(30, 4, seed=8)
    result = two_vs_two(y, p)
    n_passed, n_total, accuracy = counts(result)
    with pytest.raises(TypeError, match="does not unpack"):
        tuple(result)
    assert n_total == 30 * 29 // 2
    assert accuracy == n_passed / n_total
    assert isinstance(n_passed, int)
    assert isinstance(two_vs_two(y, p, ties="half").n_passed, float)


def test_perfect_predictions_pass_every_pair():
    y, _ = random_data(50, 6, seed=9)
    for metric in METRICS:
        result = two_vs_two(y, y.copy(), metric=metric)
        assert result.accuracy == 1.0, metric
        np.testing.assert_array_equal(result.sample_accuracy, np.ones(50))


def test_joint_relabelling_does_not_change_counts():
    y, p = random_data(80, 5, seed=10, noise=2.0)
    order = np.random.default_rng(0).permutation(80)
    a, b = two_vs_two(y, p), two_vs_two(y[order], p[order])
    assert (a.n_passed, a.n_tied) == (b.n_passed, b.n_tied)
    np.testing.assert_array_equal(a.sample_accuracy[order], b.sample_accuracy)


def test_distinct_targets_leaves_out_pairs_with_identical_targets():
    y, p = random_data(20, 3, seed=11)
    y[1] = y[0]
    y[2] = y[0]
    all_pairs = two_vs_two(y, p)
    distinct = two_vs_two(y, p, pairs="distinct_targets")
    assert distinct.n_pairs == all_pairs.n_pairs - 3
    assert all_pairs.n_tied - distinct.n_tied == 3
    assert distinct.n_strict_passed == all_pairs.n_strict_passed


def test_sampled_pairs_are_distinct_and_valid():
    for n, m in [(2, 1), (5, 10), (100, 300), (100_000, 2000)]:
        i, j = _two_vs_two.sample_pairs(n, m, np.random.default_rng(0))
        assert i.size == m
        assert ((0 <= i) & (i < j) & (j < n)).all()
        assert np.unique(i * n + j).size == m
    i, j = _two_vs_two.sample_pairs(5, 10, np.random.default_rng(1))
    assert sorted(zip(i.tolist(), j.tolist())) == [(a, b) for a in range(5) for b in range(a + 1, 5)]


def test_sampled_standard_error():
    y, p = random_data(400, 6, seed=12, noise=3.0)
    full = two_vs_two(y, p)
    sampled = two_vs_two(y, p, pairs=4000, rng=3)
    acc, m = sampled.accuracy, sampled.n_total
    n_all = 400 * 399 // 2
    expected = math.sqrt(acc * (1 - acc) / (m - 1) * (1 - m / n_all))
    assert sampled.standard_error == pytest.approx(expected, rel=1e-9)
    assert abs(sampled.accuracy - full.accuracy) < 5 * sampled.standard_error
    every = two_vs_two(y, p, pairs=n_all, rng=0)
    assert every.standard_error == 0.0 and every.n_passed == full.n_passed


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_every_dtype(dtype, metric):
    rng = np.random.default_rng(13)
    if dtype == np.bool_:
        y = rng.random((25, 6)) < 0.5
        p = rng.random((25, 6)) < 0.5
        y[:, 0] = p[:, 0] = True  # no zero rows
    else:
        hi = 120 if np.dtype(dtype).kind == "i" else 250
        lo = 0 if np.dtype(dtype).kind in "u" else -hi
        y = rng.integers(lo + 1, hi, size=(25, 6)).astype(dtype)
        p = rng.integers(lo + 1, hi, size=(25, 6)).astype(dtype)
    result = two_vs_two(y, p, metric=metric)
    as64 = two_vs_two(y.astype(np.float64), p.astype(np.float64), metric=metric)
    if dtype == np.float32:
        assert result.rtol > as64.rtol
        as64 = two_vs_two(y.astype(np.float64), p.astype(np.float64), metric=metric, rtol=result.rtol)
    assert counts(result) == counts(as64)
    # uint8 differences must not wrap around
    assert_matches_reference(result, ref.two_vs_two(y, p, metric, "fail", "all"))


def test_strided_read_only_and_list_inputs():
    y, p = random_data(41, 9, seed=14, noise=2.0)
    base = two_vs_two(y[::2, 1::2], p[::2, 1::2])
    ro_y, ro_p = y.copy(), p.copy()
    ro_y.flags.writeable = ro_p.flags.writeable = False
    assert counts(two_vs_two(np.ascontiguousarray(y[::2, 1::2]), np.ascontiguousarray(p[::2, 1::2]))) == counts(base)
    assert counts(two_vs_two(ro_y, ro_p)) == counts(two_vs_two(y, p))
    assert counts(two_vs_two(np.asfortranarray(y), p.T.copy().T)) == counts(two_vs_two(y, p))
    assert counts(two_vs_two(y.tolist(), p.tolist())) == counts(two_vs_two(y, p))
    y32 = np.asfortranarray(y.astype(np.float32))[::-1]
    assert counts(two_vs_two(y32, p.astype(np.float32)[::-1])) == counts(
        two_vs_two(np.ascontiguousarray(y32), np.ascontiguousarray(p.astype(np.float32)[::-1]))
    )


@pytest.mark.parametrize("metric", METRICS)
def test_tiny_inputs(metric):
    y = np.array([[1.0, 2.0], [3.0, 1.0]])
    p = np.array([[1.5, 2.0], [2.0, 0.5]])
    result = two_vs_two(y, p, metric=metric)
    assert_matches_reference(result, ref.two_vs_two(y, p, metric, "fail", "all"))
    assert result.n_pairs == 1
    y1, p1 = np.array([[1.0], [2.0], [5.0]]), np.array([[1.2], [2.5], [3.0]])
    if metric in ("euclidean", "sqeuclidean"):  # d = 1
        assert_matches_reference(two_vs_two(y1, p1, metric=metric), ref.two_vs_two(y1, p1, metric, "fail", "all"))
    same = two_vs_two([[1.0, 2.0], [1.0, 2.0]], [[0.0, 1.0], [2.0, 5.0]], metric=metric, ties="exclude")
    assert same.n_total == 0 and same.n_tied == 1 and math.isnan(same.accuracy)


def test_large_values():
    y, p = random_data(20, 4, seed=15)
    big = two_vs_two(y * 1e150, p * 1e150, metric="cosine")
    assert counts(big) == counts(two_vs_two(y, p))
    assert counts(two_vs_two((y * 1e30), p * 1e30, metric="euclidean")) == counts(two_vs_two(y, p, metric="euclidean"))
    # float32 near its largest value: scaled by a power of two in the kernel.
    for metric in ("euclidean", "sqeuclidean"):
        y32, p32 = (y * 1e37).astype(np.float32), (p * 1e37).astype(np.float32)
        wide = two_vs_two(y32.astype(np.float64), p32.astype(np.float64), metric=metric)
        assert counts(two_vs_two(y32, p32, metric=metric)) == counts(wide)
    # Differences that would overflow float32 are refused, naming the input.
    with pytest.raises(ValueError, match="y_true.*too large"):
        two_vs_two(np.float32([[3e38, 1], [-3e38, 2]]), np.float32([[1, 2], [3, 4]]), metric="euclidean")


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
@pytest.mark.parametrize(
    "dtype, scales",
    [(np.float64, [2.0**-600, 1e-161, 1e-200, 1e-300, 1e-310, 1e100]), (np.float32, [1e-22, 1e-30, 1e-40])],
)
def test_euclidean_scale_invariance(metric, dtype, scales):
    # Squares of tiny coordinates underflow: the kernel rescales both sets by
    # one power of two, so counts never collapse to all ties.
    y, p = random_data(40, 6, seed=16)
    base = two_vs_two(y.astype(dtype), p.astype(dtype), metric=metric, ties="half")
    assert base.n_tied == 0
    for scale in scales:
        ys, ps = (y * scale).astype(dtype), (p * scale).astype(dtype)
        if np.any((ys != 0) & (np.abs(ys) < np.finfo(dtype).tiny)):
            # subnormal input has fewer digits: compare with the reference on the same values
            expected = ref.two_vs_two(
                ys.astype(np.float64) / scale, ps.astype(np.float64) / scale, metric, "half", "all"
            )
            got = two_vs_two(ys, ps, metric=metric, ties="half")
            assert got.n_tied == 0 and abs(got.accuracy - expected["accuracy"]) <= 2 / got.n_pairs
            continue
        got = two_vs_two(ys, ps, metric=metric, ties="half")
        assert counts(got) == counts(base), scale
        assert got.n_tied == 0


def test_expansion_guard_agrees_with_cdist_near_duplicates():
    # Near-duplicate rows: the expansion |y|^2 + |p|^2 - 2 y.p cancels; the
    # shared guard recomputes those entries from the rows.
    rng = np.random.default_rng(17)
    y = rng.normal(size=(30, 5)) * 1e3
    p = y + rng.normal(size=y.shape) * 1e-6
    for dtype in (np.float64,):
        terms = _core._two_vs_two_terms(y.astype(dtype), p.astype(dtype), "euclidean", 1)
        # the kernel works in units scaled by a power of two: max |coordinate| in [1, 2)
        shift = 1 - np.frexp(max(np.abs(y).max(), np.abs(p).max()))[1]
        exact = -distance.cdist(y, p) * 2.0**shift
        # (the centred rows carry eps * |y| of absolute error: about 1e-7 relative here)
        np.testing.assert_allclose(terms, exact, rtol=1e-5)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(y_true=np.ones((4, 3)), y_pred=np.ones((4, 2))), ValueError, "y_true and y_pred"),
        (dict(y_true=np.ones((4, 3)), y_pred=np.ones((5, 3))), ValueError, "y_true and y_pred"),
        (dict(y_true=np.ones(4), y_pred=np.ones(4)), ValueError, "y_true"),
        (dict(y_true=np.ones((4, 3, 1)), y_pred=np.ones((4, 3, 1))), ValueError, "y_true"),
        (dict(y_true=np.ones((1, 3)), y_pred=np.ones((1, 3))), ValueError, "y_true"),
        (dict(y_true=np.ones((4, 0)), y_pred=np.ones((4, 0))), ValueError, "y_true"),
        (dict(y_true=[[1, 2], [3]], y_pred=np.ones((2, 2))), TypeError, "y_true"),
        (dict(y_true=np.array([["a", "b"], ["c", "d"]]), y_pred=np.ones((2, 2))), TypeError, "y_true"),
        (dict(y_true=np.ones((4, 3)), y_pred=np.full((4, 3), np.nan)), ValueError, "y_pred contains NaN"),
        (dict(y_true=np.full((4, 3), np.inf), y_pred=np.ones((4, 3))), ValueError, "y_true contains infinite"),
        (
            dict(y_true=np.eye(4)[[0, 1, 2, 2]] * [[1], [1], [0], [1]], y_pred=np.ones((4, 4))),
            ValueError,
            r"y_true has all-zero rows \[2\]",
        ),
        (dict(y_true=np.eye(3), y_pred=np.eye(3) * 0), ValueError, r"y_pred has all-zero rows \[0, 1, 2\]"),
        (
            dict(y_true=np.eye(3), y_pred=np.array([[1, 2, 3], [4, 4, 4], [0, 1, 0]]), metric="correlation"),
            ValueError,
            r"y_pred has constant rows \[1\]",
        ),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), metric="cityblock"), ValueError, "metric"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), ties="random"), ValueError, "ties"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), pairs="some"), ValueError, "pairs"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), pairs=4), ValueError, r"pairs must lie in .*\[1, 3\]"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), pairs=0), ValueError, "pairs"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), pairs=True), TypeError, "pairs"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), pairs=2.0), TypeError, "pairs"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), n_jobs=0), ValueError, "n_jobs"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), n_jobs=1.5), TypeError, "n_jobs"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), rtol=-1.0), ValueError, "rtol"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), rtol=np.nan), ValueError, "rtol"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), rtol="x"), TypeError, "rtol"),
        (dict(y_true=np.eye(3), y_pred=np.eye(3), progress="yes"), TypeError, "progress"),
    ],
)
def test_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        two_vs_two(**kwargs)


def test_bad_permutation_input():
    with pytest.raises(ValueError, match="n_resamples"):
        two_vs_two_permutation_test(np.eye(3), np.eye(3), n_resamples=0)
    with pytest.raises(TypeError, match="n_resamples"):
        two_vs_two_permutation_test(np.eye(3), np.eye(3), n_resamples=2.5)
    with pytest.raises(ValueError, match="metric"):
        two_vs_two_permutation_test(np.eye(3), np.eye(3), metric="nope")


# ---------------------------------------------------------------- permutation test


@pytest.mark.parametrize("keep_terms", [True, False])
@pytest.mark.parametrize(
    "metric, ties, mode",
    [
        ("cosine", "fail", "all"),
        ("euclidean", "half", "distinct_targets"),
        ("correlation", "exclude", 40),
        ("sqeuclidean", "pass", "all"),
    ],
)
def test_permutation_test_matches_reference(monkeypatch, keep_terms, metric, ties, mode):
    if not keep_terms:
        monkeypatch.setattr(_two_vs_two, "_TERMS_MEMORY_LIMIT", 0)
    y, p = tie_heavy_data(16, 4, seed=16)
    k = 30
    result = two_vs_two_permutation_test(y, p, n_resamples=k, rng=7, metric=metric, ties=ties, pairs=mode, n_jobs=2)
    gen = np.random.default_rng(7)
    pairs = mode
    if isinstance(mode, int):
        first, second = _two_vs_two.sample_pairs(16, mode, gen)
        pairs = list(zip(first, second))
    perms = [gen.permutation(16) for _ in range(k)]
    observed, pvalue, null = ref.two_vs_two_permutation_test(y, p, perms, metric, ties, pairs)
    assert result.statistic == pytest.approx(observed, rel=1e-12)
    np.testing.assert_allclose(result.null_distribution, null, rtol=1e-12)
    assert result.pvalue == pytest.approx(pvalue)
    statistic, pv = result
    assert (statistic, pv) == (result.statistic, result.pvalue)
    assert result.observed.accuracy == result.statistic


def test_permutation_test_detects_signal_and_chance():
    y, p = random_data(60, 8, seed=17, noise=1.0)
    strong = two_vs_two_permutation_test(y, p, n_resamples=99, rng=0)
    assert strong.pvalue == 0.01
    assert strong.null_distribution.mean() == pytest.approx(0.5, abs=0.05)
    shuffled = two_vs_two_permutation_test(y, p[np.random.default_rng(1).permutation(60)], n_resamples=99, rng=0)
    assert shuffled.pvalue > 0.05


# ---------------------------------------------------------------- progress and cancellation


def test_progress_callback_and_cancellation():
    y, p = random_data(300, 8, seed=18)
    gy, gp = _core._row_groups(y), _core._row_groups(p)
    seen = []
    _core._two_vs_two_all(y, p, gy, gp, "cosine", 0.0, False, 2, (16, 32), None, lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1]

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _core._two_vs_two_all(y, p, gy, gp, "cosine", 0.0, False, 2, (16, 32), None, stop)
    # progress=True works with or without tqdm installed
    assert counts(two_vs_two(y, p, progress=True)) == counts(two_vs_two(y, p))


class _ProgressError(ValueError):
    pass


def _raising_progress(after):
    calls = []

    def progress(done, total):
        calls.append(done)
        if len(calls) >= after:
            raise _ProgressError(f"stop at {done}/{total}")

    return progress


@pytest.mark.parametrize("kernel", ["all", "pairs", "terms", "permuted"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_progress_exception_reaches_the_caller_unchanged(kernel, n_threads):
    # A progress callback that raises stops the kernel; the caller sees that
    # very exception (not a KeyboardInterrupt), whichever thread was working.
    y, p = random_data(400, 6, seed=21)
    gy, gp = _core._row_groups(y), _core._row_groups(p)
    first, second = _two_vs_two.sample_pairs(400, 50_000, np.random.default_rng(0))
    for _ in range(3):
        progress = _raising_progress(1)
        with pytest.raises(_ProgressError, match="stop at"):
            if kernel == "all":
                _core._two_vs_two_all(y, p, gy, gp, "euclidean", 0.0, False, n_threads, (16, 32), None, progress)
            elif kernel == "pairs":
                _core._two_vs_two_pairs(y, p, gy, gp, first, second, "cosine", 0.0, False, n_threads, None, progress)
            elif kernel == "terms":
                _core._two_vs_two_terms(y, p, "euclidean", n_threads, (16, 32), progress)
            else:
                terms = _core._two_vs_two_terms(y, p, "cosine", 1)
                perms = np.stack([np.random.default_rng(r).permutation(400) for r in range(4)])
                _core._two_vs_two_permuted(
                    terms,
                    np.ascontiguousarray(terms.T),
                    y,
                    p,
                    gy,
                    gp,
                    perms,
                    "cosine",
                    0.0,
                    False,
                    n_threads,
                    (16, 32),
                    progress,
                )
    # the public functions pass a tqdm callback only; a raising one must also surface
    with pytest.raises(_ProgressError):
        plan = _two_vs_two.TwoVsTwoPlan(y.shape[0], "cosine", "fail", "all", 0.0)
        _two_vs_two._InMemory(y, p, n_threads).count(plan, progress=_raising_progress(1))


def test_permutation_test_alternatives_and_resample_names():
    y, p = random_data(30, 5, seed=22, noise=0.5)
    greater = two_vs_two_permutation_test(y, p, n_resamples=49, rng=3)
    same = two_vs_two_permutation_test(y, p, n_resamples=49, rng=3)
    assert greater.pvalue == same.pvalue and greater.n_resamples == 49
    assert greater.alternative == "greater"
    null, stat = greater.null_distribution, greater.statistic
    less = two_vs_two_permutation_test(y, p, n_resamples=49, rng=3, alternative="less")
    both = two_vs_two_permutation_test(y, p, n_resamples=49, rng=3, alternative="two-sided")
    np.testing.assert_array_equal(less.null_distribution, null)
    assert greater.pvalue == (1 + np.sum(null >= stat)) / 50
    assert less.pvalue == (1 + np.sum(null <= stat)) / 50
    assert both.pvalue == min(1.0, 2 * min(greater.pvalue, less.pvalue))
    # agrees with scipy.stats.permutation_test's convention for the one-sided p-values
    assert greater.pvalue < 0.05 < less.pvalue
    with pytest.raises(ValueError, match="alternative"):
        two_vs_two_permutation_test(y, p, n_resamples=9, alternative="bigger")
    with pytest.raises(TypeError, match="n_permutations"):
        two_vs_two_permutation_test(y, p, n_permutations=9)  # the one name is n_resamples
    with pytest.raises(ValueError, match="n_resamples"):
        two_vs_two_permutation_test(y, p, n_resamples=0)
    with pytest.raises(TypeError, match="rng"):
        two_vs_two_permutation_test(y, p, n_resamples=9, rng="x")
    with pytest.raises(TypeError, match="rng"):
        two_vs_two(y, p, pairs=10, rng=1.5)
    with pytest.raises(TypeError, match="progress"):
        two_vs_two(y, p, progress=1)


def test_sampled_pairs_cost_does_not_grow_with_n_per_pair():
    # Per-sample counts go to shared counters: a call's kernel work is
    # O(pairs d), so the same pairs on a larger n give the same counts.
    y, p = random_data(3000, 4, seed=23)
    first, second = _two_vs_two.sample_pairs(300, 2000, np.random.default_rng(2))
    gy, gp = _core._row_groups(y), _core._row_groups(p)
    small = _core._two_vs_two_pairs(y[:300], p[:300], gy[:300], gp[:300], first, second, "cosine", 0.0, False, 2)
    large = _core._two_vs_two_pairs(y, p, gy, gp, first, second, "cosine", 0.0, False, 2)
    assert (small["passed"], small["tied"]) == (large["passed"], large["tied"])
    np.testing.assert_array_equal(small["sample_passed"], large["sample_passed"][:300])
    assert not large["sample_passed"][300:].any()


def test_exported():
    for name in ["two_vs_two", "two_vs_two_permutation_test", "TwoVsTwoResult", "TwoVsTwoPermutationResult"]:
        assert name in pairmetrics.__all__
        assert hasattr(pairmetrics, name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_groups(dtype):
    rng = np.random.default_rng(19)
    x = rng.integers(-1, 2, size=(700, 3)).astype(dtype)
    x[5] = [-0.0, 0.0, 1.0]
    x[6] = [0.0, -0.0, 1.0]
    for n_threads in (1, 3):
        ids = _core._row_groups(x, n_threads)
        first = {}
        expected = [first.setdefault(tuple(row), i) for i, row in enumerate(x.tolist())]
        np.testing.assert_array_equal(ids, expected)
    assert ids[6] == ids[5]


def test_blas_thread_count_is_restored():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    y, p = random_data(700, 20, seed=20)

    def scipy_blas_threads():
        return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if "scipy.libs" in lib["filepath"]]

    two_vs_two(y[:10], p[:10])  # make sure SciPy's BLAS is loaded
    before = scipy_blas_threads()
    for n_jobs in (1, 2, -1):
        two_vs_two(y, p, n_jobs=n_jobs)
        two_vs_two(y.astype(np.float32), p.astype(np.float32), n_jobs=n_jobs)
    two_vs_two_permutation_test(y[:100], p[:100], n_resamples=3, n_jobs=2)
    assert scipy_blas_threads() == before


def test_docstring_examples():
    import doctest

    result = doctest.testmod(_two_vs_two, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
