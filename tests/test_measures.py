import math

import numpy as np
import pairmetrics as pm
import pytest
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics.reference import measures as ref

ERRORS = {
    "zero_one": (pm.zero_one_error, ref.zero_one_error),
    "absolute": (pm.absolute_error, ref.absolute_error),
    "squares": (pm.sum_squares_error, ref.sum_squares_error),
}
HOLIDAY = [1, 6, 6, 2, 1]
DAYS = [1, 2, 3, 4, 5, 6]


def close(a, b, rel=1e-12, abs_=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rel, atol=abs_)


# --------------------------------------------------------------------------- textbook example 7.5


def test_holiday_raw_representation():
    best = pm.best_constant(HOLIDAY, "absolute")
    value, error = best.value, best.error
    assert value == 2 and error == 10
    assert pm.best_constant(HOLIDAY, "squares").value == pytest.approx(3.2, abs=1e-15)
    assert pm.best_constant(HOLIDAY, "worst_case").value == 3.5
    assert pm.best_constant(HOLIDAY, "worst_case").error == 2.5


def test_holiday_indicator_representation():
    ind = pm.to_indicators(HOLIDAY, DAYS)
    np.testing.assert_array_equal(pm.best_constant(ind, "absolute").value, np.zeros(6))
    # The book prints 0.1 for Y2, a misprint: that column holds one 1 in five examples.
    close(pm.best_constant(ind, "squares").value, [0.4, 0.2, 0, 0, 0, 0.4], abs_=1e-15)
    close(pm.best_constant(ind, "log_loss").value, [0.4, 0.2, 0, 0, 0, 0.4], abs_=1e-15)
    np.testing.assert_array_equal(pm.best_constant(ind, "worst_case").value, [0.5, 0.5, 0, 0, 0, 0.5])


def test_holiday_tables():
    ind = pm.to_indicators(HOLIDAY, DAYS)
    np.testing.assert_array_equal(
        ind, [[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 1], [0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]]
    )
    cuts = pm.to_cuts(HOLIDAY, DAYS)
    np.testing.assert_array_equal(cuts, [[1] * 5, [0] * 5, [0] * 5, [0, 1, 1, 1, 1], [1] * 5])
    np.testing.assert_array_equal(pm.from_indicators(ind, DAYS), HOLIDAY)
    np.testing.assert_array_equal(pm.from_cuts(cuts, DAYS), HOLIDAY)
    # Y <= 1 at 0.4 and 0.6 elsewhere is rational; Y <= 2 above Y <= 4 is not.
    flags = pm.check_cuts([[0.4, 0.6, 0.6, 0.6, 0.6], [0.4, 0.7, 0.6, 0.6, 0.6]])
    np.testing.assert_array_equal(flags, [False, True])


# --------------------------------------------------------------------------- against the reference

values = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False))


@st.composite
def pairs(draw, max_n=25):
    n = draw(st.integers(1, max_n))
    shape = draw(st.sampled_from([(n,), (n, 1), (n, draw(st.integers(2, 4)))]))
    a = draw(hnp.arrays(np.float64, shape, elements=values))
    b = draw(hnp.arrays(np.float64, shape, elements=values))
    return a, b


@settings(max_examples=examples(100))
@given(pairs(), st.booleans(), st.booleans())
def test_sums_match_reference(ab, average, per_target):
    a, b = ab
    for _name, (fast, slow) in ERRORS.items():
        got = fast(a, b, average=average, per_target=per_target)
        want = slow(a.tolist(), b.tolist(), average=average, per_target=per_target)
        close(got, want, rel=1e-12, abs_=1e-9)
        assert np.shape(got) == ((a.shape[1] if a.ndim == 2 else 1,) if per_target else ())


@settings(max_examples=examples(100))
@given(pairs(), st.booleans())
def test_rms_and_worst_case_match_reference(ab, per_target):
    a, b = ab
    close(pm.rms_error(a, b, per_target=per_target), ref.rms_error(a.tolist(), b.tolist(), per_target), abs_=1e-9)
    close(pm.worst_case_error(a, b, per_target=per_target), ref.worst_case_error(a.tolist(), b.tolist(), per_target))


probabilities = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 1e-300, 1 - 2**-53, 2**-70]), st.floats(0, 1))


@st.composite
def outcomes_and_probabilities(draw, max_n=25):
    n = draw(st.integers(1, max_n))
    shape = draw(st.sampled_from([(n,), (n, draw(st.integers(2, 3)))]))
    y = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 1)))
    p = draw(hnp.arrays(np.float64, shape, elements=probabilities))
    return y, p


@settings(max_examples=examples(150))
@given(outcomes_and_probabilities(), st.booleans(), st.sampled_from([None, 1e-15, 0.01]))
def test_log_likelihood_matches_reference(yp, per_target, eps):
    y, p = yp
    want = ref.log_likelihood(y.tolist(), p.tolist(), per_target=per_target, eps=eps)
    got = pm.log_likelihood(y, p, per_target=per_target, eps=eps)
    close(got, want, rel=1e-12, abs_=1e-10)
    close(
        pm.log_loss(y, p, per_target=per_target, eps=eps),
        ref.log_loss(y.tolist(), p.tolist(), per_target=per_target, eps=eps),
        rel=1e-12,
        abs_=1e-10,
    )
    lik = pm.likelihood(y, p, per_target=per_target, eps=eps)
    close(lik.log, want, rel=1e-12, abs_=1e-10)
    close(lik.value, np.exp(np.asarray(want)), rel=1e-9, abs_=0)


def test_blocked_paths_and_layouts_agree():
    # Long enough for the unrolled blocks, the tails and both per-target layouts.
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3001, 7))
    b = rng.normal(size=(3001, 7))
    for x, z in [
        (a, b),
        (np.asfortranarray(a), np.asfortranarray(b)),
        (a, np.asfortranarray(b)),
        (a[::-1], b[::-1]),
        (a[:, ::2], b[:, ::2]),
    ]:
        expected = [math.fsum(col) for col in np.abs(x - z).T]
        close(pm.absolute_error(x, z, per_target=True), expected, rel=1e-13)
        close(pm.absolute_error(x, z), math.fsum(expected), rel=1e-13)
    y = (rng.random((3001, 7)) < 0.3).astype(np.uint8)
    p = rng.random((3001, 7))
    want_ll = [math.fsum(np.log(np.where(y[:, j] == 1, p[:, j], 1 - p[:, j]))) for j in range(7)]
    for yy, pp in [(y, p), (np.asfortranarray(y), np.asfortranarray(p)), (y, np.asfortranarray(p))]:
        close(pm.log_likelihood(yy, pp, per_target=True), want_ll, rel=1e-13)
        close(pm.log_likelihood(yy, pp), math.fsum(want_ll), rel=1e-13)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_integer_operands_give_the_bits_of_their_float64_copy(dtype):
    # Integer and boolean first operands are widened to double a block at a time: every block boundary, tail and
    # layout must give exactly what the same values as float64 give.
    rng = np.random.default_rng(5)
    high = 2 if dtype == np.bool_ else 100
    a = rng.integers(0, high, size=(3 * 4096 + 5, 3)).astype(dtype)
    b = rng.normal(size=a.shape)
    for x, z in [(a, b), (np.asfortranarray(a), b), (a[::-2], b[::-2]), (a[:, 0], b[:, 0]), (a.ravel(), b.ravel())]:
        wide = x.astype(np.float64)
        for fn in (pm.absolute_error, pm.sum_squares_error, pm.worst_case_error, pm.zero_one_error):
            for per_target in (False, True):
                np.testing.assert_array_equal(fn(x, z, per_target=per_target), fn(wide, z, per_target=per_target))
        outcome = x > x.min() if dtype != np.bool_ else x
        proba = rng.random(outcome.shape).astype(np.float32)
        for per_target in (False, True):
            np.testing.assert_array_equal(
                pm.log_likelihood(outcome.astype(dtype), proba, per_target=per_target),
                pm.log_likelihood(outcome.astype(np.float64), proba, per_target=per_target),
            )


def test_log_likelihood_never_underflows():
    y = np.ones(100_000, dtype=bool)
    p = np.full(y.size, 1e-3)
    lik = pm.likelihood(y, p)
    assert lik.value == 0.0
    close(lik.log, y.size * math.log(1e-3), rel=1e-14)
    close(pm.log_loss(y, p, base=2), -math.log2(1e-3), rel=1e-14)


def test_confident_wrong_prediction_is_infinite_unless_clipped():
    y, p = [1, 0, 1], [0.9, 1.0, 0.5]
    assert pm.log_likelihood(y, p) == -np.inf
    assert pm.log_loss(y, p) == np.inf
    assert pm.likelihood(y, p).value == 0.0
    close(pm.log_loss(y, p, eps=1e-6), -(math.log(0.9) + math.log(1e-6) + math.log(0.5)) / 3)
    np.testing.assert_array_equal(pm.log_likelihood(np.c_[y, y], np.c_[p, [0.5] * 3], per_target=True)[0], -np.inf)


def test_perfect_predictions():
    assert pm.log_loss([0, 1], [0.0, 1.0]) == 0.0 and not math.copysign(1, pm.log_loss([0, 1], [0.0, 1.0])) < 0
    assert pm.absolute_error([1.5, 2], [1.5, 2]) == 0


# --------------------------------------------------------------------------- against scikit-learn


def test_agrees_with_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(2)
    y = rng.normal(size=(200, 3))
    p = y + rng.normal(size=(200, 3))
    for kw in ({"multioutput": "raw_values"},):
        close(pm.absolute_error(y, p, average=True, per_target=True), metrics.mean_absolute_error(y, p, **kw))
        close(pm.sum_squares_error(y, p, average=True, per_target=True), metrics.mean_squared_error(y, p, **kw))
    # sklearn averages over n * t; the textbook sum over targets is divided by n only.
    close(pm.absolute_error(y, p, average=True) / 3, metrics.mean_absolute_error(y, p))
    close(pm.rms_error(y[:, 0], p[:, 0]), math.sqrt(metrics.mean_squared_error(y[:, 0], p[:, 0])))
    close(pm.worst_case_error(y[:, 0], p[:, 0]), metrics.max_error(y[:, 0], p[:, 0]))
    labels = rng.integers(0, 4, 300)
    guess = rng.integers(0, 4, 300)
    close(pm.zero_one_error(labels, guess), metrics.zero_one_loss(labels, guess, normalize=False))
    close(pm.zero_one_error(labels, guess, average=True), metrics.zero_one_loss(labels, guess))
    outcome = rng.integers(0, 2, 300)
    prob = rng.uniform(0.01, 0.99, 300)
    close(pm.log_loss(outcome, prob), metrics.log_loss(outcome, prob, labels=[0, 1]), rel=1e-12)


# --------------------------------------------------------------------------- dtypes and layouts


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(dtype):
    a = np.array([0, 1, 1, 0, 1], dtype=dtype)
    b = np.array([1, 1, 0, 0, 0], dtype=dtype)  # unsigned a - b would wrap around
    assert pm.absolute_error(a, b) == 3
    assert pm.sum_squares_error(a, b) == 3
    assert pm.worst_case_error(a, b) == 1
    assert pm.zero_one_error(a, b) == 3
    close(pm.rms_error(a, b), math.sqrt(3 / 5))
    prob = np.array([0.5, 0.25, 0.75, 0.5, 1.0], dtype=np.float32 if dtype == np.float32 else np.float64)
    close(pm.log_likelihood(a, prob), ref.log_likelihood(a.tolist(), prob.tolist()), rel=1e-7)
    if dtype != np.bool_:
        assert pm.best_constant(np.array([1, 2, 2, 3], dtype=dtype), "zero_one").value == 2


@pytest.mark.parametrize("dtype", DTYPES + [np.float16])
@pytest.mark.parametrize("other", [np.float32, np.float64, np.int64])
def test_mixed_dtypes(dtype, other):
    a = np.array([0, 1, 1, 0, 1, 1], dtype=dtype)
    b = np.array([0.5, 1, 0, 0, 0.25, 1] if other != np.int64 else [0, 1, 0, 0, 1, 3], dtype=other)
    for x, z in [(a, b), (b, a)]:
        for _name, (fast, slow) in ERRORS.items():
            for per_target in (False, True):
                close(fast(x, z, per_target=per_target), slow(x.tolist(), z.tolist(), per_target=per_target))
        close(pm.worst_case_error(x, z), ref.worst_case_error(x.tolist(), z.tolist()))


def test_float32_is_accumulated_in_double():
    rng = np.random.default_rng(3)
    a = rng.random(100_000).astype(np.float32)
    b = np.zeros_like(a)
    close(pm.absolute_error(a, b), math.fsum(a.astype(float)), rel=1e-14)


def test_large_integers_compare_exactly():
    a = np.array([2**63 - 1, 2**62], dtype=np.int64)
    b = np.array([2**63 - 2, 2**62], dtype=np.uint64)
    assert pm.zero_one_error(a, b) == 1


def test_readonly_noncontiguous_and_lists_give_the_same_answer():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(40, 6))
    b = rng.normal(size=(40, 6))
    y = rng.random((40, 6)) < 0.5
    p = rng.random((40, 6))
    views = [(a[::2, ::3], b[::2, ::3]), (a.T, b.T), (a[::-1, 1:], b[::-1, 1:])]
    for x, z in views:
        x_ro, z_ro = x.copy(), z.copy()
        x_ro.flags.writeable = False
        z_ro.flags.writeable = False
        for fn in (pm.absolute_error, pm.sum_squares_error, pm.rms_error, pm.worst_case_error, pm.zero_one_error):
            for per_target in (False, True):
                want = fn(np.ascontiguousarray(x), np.ascontiguousarray(z), per_target=per_target)
                close(fn(x, z, per_target=per_target), want, rel=1e-14)
                close(fn(x_ro, z_ro, per_target=per_target), want, rel=1e-14)
                close(fn(x.tolist(), z.tolist(), per_target=per_target), want, rel=1e-14)
    for yy, pp in [(y[::2, ::3], p[::2, ::3]), (y.T, p.T), (y[::-1], p[::-1])]:
        want = pm.log_loss(np.ascontiguousarray(yy), np.ascontiguousarray(pp), per_target=True)
        close(pm.log_loss(yy, pp, per_target=True), want, rel=1e-14)
        close(pm.log_loss(yy.tolist(), pp.tolist(), per_target=True), want, rel=1e-14)


def test_column_vector_against_vector():
    a, b = np.arange(5.0), np.arange(5.0)[::-1]
    assert pm.absolute_error(a[:, None], b) == pm.absolute_error(a, b) == 12


# --------------------------------------------------------------------------- best constant


@settings(max_examples=examples(100))
@given(
    st.integers(1, 12).flatmap(
        lambda n: hnp.arrays(np.float64, st.sampled_from([(n,), (n, 2)]), elements=st.integers(-4, 4).map(float))
    ),
    st.sampled_from(["zero_one", "absolute", "squares", "worst_case"]),
)
def test_best_constant_matches_reference_and_is_optimal(y, loss):
    best = pm.best_constant(y, loss)
    value, error = best.value, best.error
    want_value, want_error = ref.best_constant(y.tolist(), loss)
    close(np.atleast_1d(value), want_value, abs_=1e-12)
    close(np.atleast_1d(error), want_error, abs_=1e-9)
    measure = {
        "zero_one": ref.zero_one_error,
        "absolute": ref.absolute_error,
        "squares": ref.sum_squares_error,
        "worst_case": ref.worst_case_error,
    }[loss]
    columns = y if y.ndim == 2 else y[:, None]
    for j, col in enumerate(columns.T):
        for c in np.unique(np.concatenate([col, col + 0.5, [col.mean()]])):
            assert np.atleast_1d(error)[j] <= measure(col.tolist(), [c] * len(col)) + 1e-9


def test_best_constant_tie_rules():
    assert pm.best_constant([3, 1, 3, 1, 2], "zero_one").value == 1  # smallest of the modes
    assert pm.best_constant([1, 2, 4, 10], "absolute").value == 3  # midpoint of the middle two


@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 15), st.integers(1, 3)), elements=st.integers(0, 1)))
def test_best_constant_log_loss(y):
    best = pm.best_constant(y, "log_loss")
    value, error = best.value, best.error
    want_value, want_error = ref.best_constant(y.tolist(), "log_loss")
    close(value, want_value)
    close(error, want_error, abs_=1e-12)


# --------------------------------------------------------------------------- representations


@given(st.lists(st.sampled_from(["short", "medium", "long"]), min_size=1, max_size=20))
def test_representations_round_trip_strings(y):
    domain = ["short", "medium", "long"]
    ind = pm.to_indicators(y, domain)
    np.testing.assert_array_equal(ind, ref.to_indicators(y, domain))
    assert list(pm.from_indicators(ind, domain)) == y
    cuts = pm.to_cuts(y, domain)
    np.testing.assert_array_equal(cuts, ref.to_cuts(y, domain))
    assert list(pm.from_cuts(cuts, domain)) == y
    assert not pm.check_cuts(cuts).any()


@given(
    hnp.arrays(
        np.float64, st.tuples(st.integers(1, 10), st.integers(1, 5)), elements=st.sampled_from([0.0, 0.2, 0.5, 1.0])
    )
)
def test_check_cuts_matches_reference(p):
    np.testing.assert_array_equal(pm.check_cuts(p), ref.check_cuts(p.tolist()))
    np.testing.assert_array_equal(pm.check_cuts(p.astype(np.float32)), ref.check_cuts(p.tolist()))


def test_check_cuts_unsigned_does_not_wrap():
    np.testing.assert_array_equal(pm.check_cuts(np.array([[1, 0], [0, 1]], dtype=np.uint8)), [True, False])


def test_lenient_inverses():
    days = DAYS
    pred = [[0.5, 0.3, 0.1, 0.1, 0.1, 0.5], [0, 0, 0.2, 0.7, 0, 0.1]]
    np.testing.assert_array_equal(pm.from_indicators(pred, days, strict=False), [1, 4])
    np.testing.assert_array_equal(
        pm.from_cuts([[0.4, 0.6, 0.6, 0.6, 0.6], [0, 0, 0, 0, 0.2]], days, strict=False), [2, 6]
    )


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "fn",
    [
        pm.absolute_error,
        pm.sum_squares_error,
        pm.rms_error,
        pm.worst_case_error,
        pm.zero_one_error,
        pm.log_loss,
        pm.log_likelihood,
        pm.likelihood,
    ],
)
def test_bad_shapes_and_values(fn):
    with pytest.raises(ValueError, match="same shape"):
        fn([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="same shape"):
        fn(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="y_true.*empty"):
        fn([], [])
    with pytest.raises(ValueError, match="y_pred"):
        fn(np.zeros(8), np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="y_true"):
        fn(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="y_pred.*NaN"):
        fn([0.0, 1.0], [0.5, np.nan])
    with pytest.raises(ValueError, match="y_true"):
        fn([np.inf, 1.0], [0.5, 0.5])
    with pytest.raises(TypeError, match="y_true"):
        fn(["a", "b"], [0.5, 0.5])
    with pytest.raises(TypeError, match="per_target"):
        fn([0, 1], [0, 1], per_target="yes")


def test_likelihood_family_bad_values():
    for fn in (pm.log_loss, pm.log_likelihood, pm.likelihood):
        with pytest.raises(ValueError, match="y_pred.*probabilities.*1.5"):
            fn([0, 1], [0.5, 1.5])
        with pytest.raises(ValueError, match="y_pred.*-0.1"):
            fn(np.array([[0, 1]]), np.array([[-0.1, 0.5]], dtype=np.float32))
        for bad in ([0, 2], [0.0, 0.5], [-1, 1], np.array([0, 255], dtype=np.uint8)):
            with pytest.raises(ValueError, match="y_true.*0 and 1"):
                fn(bad, [0.5, 0.5])
        with pytest.raises(ValueError, match="eps"):
            fn([0, 1], [0.5, 0.5], eps=0.7)
        with pytest.raises(TypeError, match="eps"):
            fn([0, 1], [0.5, 0.5], eps="small")
    with pytest.raises(ValueError, match="base"):
        pm.log_loss([0, 1], [0.5, 0.5], base=1)
    with pytest.raises(ValueError, match="base"):
        pm.log_likelihood([0, 1], [0.5, 0.5], base=-2)
    with pytest.raises(TypeError, match="average"):
        pm.log_likelihood([0, 1], [0.5, 0.5], average=1)


def test_overflow_is_an_honest_inf():
    assert pm.absolute_error([1e308], [-1e308]) == np.inf
    assert pm.zero_one_error([1e308], [-1e308]) == 1


def test_best_constant_bad_input():
    with pytest.raises(ValueError, match="loss"):
        pm.best_constant([1, 2], "l2")
    with pytest.raises(ValueError, match="y.*NaN"):
        pm.best_constant([1, np.nan], "squares")
    with pytest.raises(ValueError, match="y.*empty"):
        pm.best_constant([], "squares")
    with pytest.raises(ValueError, match="y.*0 and 1"):
        pm.best_constant([0, 2], "log_loss")


def test_representation_bad_input():
    with pytest.raises(ValueError, match=r"y\[1\] = 7 is not in values"):
        pm.to_indicators([1, 7], DAYS)
    with pytest.raises(ValueError, match=r"y\[0\].*not in values"):
        pm.to_cuts(["x"], DAYS)
    with pytest.raises(ValueError, match="not in values"):
        pm.to_indicators([np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="values.*distinct"):
        pm.to_indicators([1], [1, 1, 2])
    with pytest.raises(ValueError, match="values.*increasing"):
        pm.to_cuts([1], [3, 1, 2])
    with pytest.raises(ValueError, match="values.*empty"):
        pm.to_indicators([1], [])
    with pytest.raises(ValueError, match="y.*empty"):
        pm.to_indicators([], [1])
    with pytest.raises(ValueError, match="indicators.*6 columns"):
        pm.from_indicators(np.eye(3), DAYS)
    with pytest.raises(ValueError, match="indicators.*exactly one 1"):
        pm.from_indicators([[1, 1, 0]], [1, 2, 3])
    with pytest.raises(ValueError, match="indicators.*0 and 1"):
        pm.from_indicators([[0.5, 0.5, 0]], [1, 2, 3])
    with pytest.raises(ValueError, match="cuts.*non-decreasing"):
        pm.from_cuts([[1, 0]], [1, 2, 3])
    with pytest.raises(ValueError, match="cuts.*2 columns"):
        pm.from_cuts([[1, 0, 1]], [1, 2, 3])
    with pytest.raises(ValueError, match="pred_cuts.*NaN"):
        pm.check_cuts([[0.1, np.nan]])
    with pytest.raises(ValueError, match="pred_cuts.*2-D"):
        pm.check_cuts([0.1, 0.2])


# --------------------------------------------------------------------------- hardening regressions


@pytest.mark.parametrize("order", [">i8", ">i4", ">u2", ">f8", ">f4"])
def test_big_endian_outcomes_give_the_native_answer(order):
    y = np.array([0, 1, 1, 0, 1, 1])
    p = np.array([0.2, 0.9, 0.7, 0.1, 0.8, 0.6])
    big = y.astype(order)
    assert pm.log_loss(big, p) == pm.log_loss(y, p)
    assert pm.log_likelihood(big, p.astype(">f8")) == pm.log_likelihood(y, p)
    assert pm.likelihood(big, p).log == pm.likelihood(y, p).log
    assert pm.absolute_error(big, p) == pm.absolute_error(y, p)


def test_non_canonical_bools_read_as_true():
    s = np.array([2, 1], np.uint8).view(bool)  # numpy prints [True, True]
    assert pm.absolute_error(s, [1.0, 1.0]) == 0.0
    assert pm.zero_one_error(s, [1, 1]) == 0.0
    assert pm.sum_squares_error([1.0, 1.0], s) == 0.0
    assert pm.log_loss(s, [1.0, 1.0]) == 0.0


def test_validation_runs_before_the_kernel(monkeypatch):
    from pairmetrics import _core

    def refuse(*args, **kwargs):
        raise AssertionError("the kernel ran on invalid input")

    monkeypatch.setattr(_core, "_error_stats", refuse)
    monkeypatch.setattr(_core, "_log_likelihood", refuse)
    with pytest.raises(ValueError, match="y_pred.*NaN"):
        pm.absolute_error([1.0, 2.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="y_true.*infinite"):
        pm.rms_error([np.inf, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="y_true.*0 and 1"):
        pm.log_loss([0, 2], [0.5, 0.5])
    with pytest.raises(ValueError, match="y_pred.*probabilities"):
        pm.log_loss([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="y_pred.*NaN"):
        pm.likelihood([0, 1], [0.5, np.nan])


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300, 1e-310, 1.0])
def test_rms_error_never_overflows_or_underflows(scale):
    rng = np.random.default_rng(4)
    a = rng.normal(size=(50, 3))
    b = rng.normal(size=(50, 3))
    expected_total = math.sqrt(((a - b) ** 2).sum() / 50)
    expected_cols = np.sqrt(((a - b) ** 2).sum(axis=0) / 50)
    tol = 1e-12 if scale > 1e-300 else 1e-3  # subnormal inputs hold few digits
    got = pm.rms_error(a * scale, b * scale)
    assert math.isfinite(got) and got > 0
    close(got / scale, expected_total, rel=tol)
    cols = pm.rms_error(a * scale, b * scale, per_target=True)
    close(cols / scale, expected_cols, rel=tol)
    # one huge and one ordinary column: each is scaled on its own
    mixed = np.column_stack([a[:, 0] * scale, a[:, 1]])
    close(
        pm.rms_error(mixed, np.column_stack([b[:, 0] * scale, b[:, 1]]), per_target=True) / [scale, 1],
        expected_cols[:2],
        rel=tol,
    )
    assert pm.rms_error([scale, scale], [scale, scale]) == 0.0


def test_integers_beyond_2_53_are_exact_or_refused():
    big = 2**62
    a = np.array([big + 1, big + 3, 5])
    b = np.array([big, big, 5])
    assert pm.absolute_error(a, b) == 4.0
    assert pm.sum_squares_error(a, b) == 10.0
    assert pm.worst_case_error(a, b) == 3.0
    assert pm.zero_one_error(a, b) == 2.0
    u = np.array([2**64 - 1, 2**63 + 2], np.uint64)
    assert pm.absolute_error(u, np.array([2**64 - 3, 2**63], np.uint64)) == 4.0
    assert pm.absolute_error(u, np.array([2**64 - 1, 2**63 + 2], np.uint64)) == 0.0
    with pytest.raises(ValueError, match="int64 range"):
        pm.absolute_error(np.array([2**64 - 1], np.uint64), np.array([-(2**62)]))
    with pytest.raises(ValueError, match="y_true.*2\\*\\*53"):
        pm.absolute_error(np.array([big + 1]), np.array([float(big)]))
    with pytest.raises(ValueError, match="y_pred.*2\\*\\*53"):
        pm.zero_one_error(np.array([float(big)]), np.array([big + 1]))
    # small integers against floats are exact as before
    assert pm.absolute_error(np.array([2**53, 1]), np.array([2.0**53, 0.5])) == 0.5


def test_eps_and_base_use_the_shared_validators():
    with pytest.raises(ValueError, match="eps"):
        pm.log_loss([0, 1], [0.5, 0.5], eps=0.5)
    with pytest.raises(TypeError, match="eps"):
        pm.log_loss([0, 1], [0.5, 0.5], eps="0.1")
    with pytest.raises(ValueError, match="base"):
        pm.log_loss([0, 1], [0.5, 0.5], base=float("inf"))
    with pytest.raises(TypeError, match="base"):
        pm.log_loss([0, 1], [0.5, 0.5], base=True)
    assert pm.log_loss([0, 1], [0.5, 0.5], base=2) == pytest.approx(1.0)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0", reason="the examples show numpy 2's scalar repr")
def test_docstring_examples():
    import doctest

    from pairmetrics import _best_constant

    result = doctest.testmod(_best_constant, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_feature_dtype_is_validated():
    with pytest.raises(TypeError, match="dtype"):
        pm.to_indicators([1, 2], [1, 2], dtype="not a dtype")
    with pytest.raises(TypeError, match="dtype"):
        pm.to_cuts([1, 2], [1, 2], dtype=object)
    assert pm.to_indicators([1, 2], [1, 2], dtype=np.int8).dtype == np.int8


def test_rms_error_of_tiny_differences_between_large_values_and_of_overflowing_differences():
    tiny = 2.2250738585072014e-308
    a = np.array([[0.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
    b = np.array([[tiny, 4.0, 0.0], [0.0, 0.0, 0.0]])
    close(pm.rms_error(a, b), tiny / math.sqrt(2), rel=1e-12)
    close(pm.rms_error(a, b, per_target=True), [tiny / math.sqrt(2), 0.0, 0.0], rel=1e-12, abs_=0)
    # |a - b| = 2e308 overflows float64, its RMS over two rows does not
    close(pm.rms_error([1e308, 1e-300], [-1e308, 0.0]), math.sqrt(2) * 1e308, rel=1e-12)
    A, B = np.array([[1e308, 1.0], [1e-300, 2.0]]), np.array([[-1e308, 1.0], [0.0, 1.0]])
    close(pm.rms_error(A, B, per_target=True), [math.sqrt(2) * 1e308, math.sqrt(0.5)], rel=1e-12)
