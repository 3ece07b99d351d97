import numpy as np
import pairmetrics as pm
import pytest
import scipy.sparse as sp
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics.reference import measures as ref

metrics = pytest.importorskip("sklearn.metrics")

FIELDS = [f"{k}_per_{axis}" for k in ("tp", "tn", "fp", "fn") for axis in ("label", "sample")]


def random_labels(rng, n, n_labels, density):
    return (rng.random((n, n_labels)) < density).astype(np.int64)


def check_against_reference(got, y_true, y_pred, false_pos=1.0, false_neg=1.0):
    want = ref.multilabel_counts(y_true.tolist(), y_pred.tolist(), false_pos, false_neg)
    for field in FIELDS + ["tp", "tn", "fp", "fn"]:
        np.testing.assert_array_equal(getattr(got, field), want[field], err_msg=field)
    for field in ("sample_accuracy", "label_accuracy", "weighted_score_per_sample"):
        np.testing.assert_allclose(getattr(got, field), want[field], rtol=1e-14, atol=1e-14, err_msg=field)
    np.testing.assert_allclose(got.mean_sample_accuracy, np.mean(want["sample_accuracy"]), rtol=1e-14)
    np.testing.assert_allclose(got.weighted_score, np.mean(want["weighted_score_per_sample"]), rtol=1e-14, atol=1e-14)


@st.composite
def label_pairs(draw):
    shape = st.tuples(st.integers(1, 12), st.integers(1, 8))
    shape = draw(shape)
    t = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 1)))
    p = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 1)))
    return t, p


@settings(max_examples=examples(100))
@given(
    label_pairs(),
    st.sampled_from([0.0, 1.0, 2.5]),
    st.sampled_from([0.0, 1.0, 5.0]),
    st.sampled_from(["dense", "csr", "csc", "coo", "mixed"]),
)
def test_matches_reference(tp, false_pos, false_neg, layout):
    t, p = tp
    if layout == "dense":
        a, b = t, p
    elif layout == "mixed":
        a, b = sp.csr_matrix(t), p
    else:
        a, b = getattr(sp, f"{layout}_array")(t), getattr(sp, f"{layout}_matrix")(p)
    got = pm.multilabel_counts(a, b, false_pos=false_pos, false_neg=false_neg)
    check_against_reference(got, t, p, false_pos, false_neg)


@pytest.mark.parametrize("sparse", [False, True])
def test_agrees_with_scikit_learn(sparse):
    rng = np.random.default_rng(0)
    t = random_labels(rng, 300, 40, 0.1)
    p = random_labels(rng, 300, 40, 0.1)
    a, b = (sp.csr_matrix(t), sp.csr_matrix(p)) if sparse else (t, p)
    got = pm.multilabel_counts(a, b)
    np.testing.assert_array_equal(got.confusion_matrices(), metrics.multilabel_confusion_matrix(a, b))
    np.testing.assert_allclose(got.hamming_loss, metrics.hamming_loss(a, b), rtol=1e-14)
    np.testing.assert_allclose(1 - got.mean_sample_accuracy, metrics.hamming_loss(t, p), rtol=1e-14)
    per_sample = metrics.multilabel_confusion_matrix(t, p, samplewise=True)
    np.testing.assert_array_equal(got.tp_per_sample, per_sample[:, 1, 1])
    np.testing.assert_array_equal(got.fn_per_sample, per_sample[:, 1, 0])


def test_weighted_score_penalises_missed_labels():
    t = np.array([[1, 0, 0, 1], [0, 0, 0, 0]])
    p = np.array([[1, 1, 0, 0], [0, 0, 0, 1]])
    got = pm.multilabel_counts(t, p, false_neg=5)
    # row 0: 2 correct, 1 false positive, 1 false negative; row 1: 3 correct, 1 false positive
    np.testing.assert_allclose(got.weighted_score_per_sample, [(2 - 1 - 5) / 4, (3 - 1) / 4])
    np.testing.assert_allclose(got.weighted_score, ((2 - 1 - 5) / 4 + (3 - 1) / 4) / 2)
    np.testing.assert_allclose(got.sample_accuracy, [0.5, 0.75])
    np.testing.assert_allclose(got.label_accuracy, [1, 0.5, 1, 0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(dtype):
    rng = np.random.default_rng(1)
    t = random_labels(rng, 20, 7, 0.3)
    p = random_labels(rng, 20, 7, 0.3)
    check_against_reference(pm.multilabel_counts(t.astype(dtype), p.astype(dtype)), t, p)
    check_against_reference(pm.multilabel_counts(sp.csr_matrix(t.astype(dtype)), sp.csr_matrix(p.astype(dtype))), t, p)


def test_readonly_noncontiguous_and_lists():
    rng = np.random.default_rng(2)
    t = random_labels(rng, 30, 12, 0.3)
    p = random_labels(rng, 30, 12, 0.3)
    want = pm.multilabel_counts(t[::2, ::3].copy(), p[::2, ::3].copy())
    ro_t, ro_p = t[::2, ::3], p[::2, ::3]
    ro_t.flags.writeable = False
    for a, b in [
        (t[::2, ::3], p[::2, ::3]),
        (ro_t, ro_p),
        (t[::2, ::3].tolist(), p[::2, ::3].tolist()),
        (np.asfortranarray(t[::2, ::3]), p[::2, ::3]),
    ]:
        got = pm.multilabel_counts(a, b)
        for field in FIELDS:
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


@pytest.mark.parametrize("order", ["C", "F", "mixed"])
def test_dense_long_columns(order):
    # more than 255 ones per column: the byte counters must be flushed in time
    rng = np.random.default_rng(5)
    t = np.ones((700, 5), dtype=bool)
    t[rng.integers(0, 700, 50), rng.integers(0, 5, 50)] = False
    p = np.ones((700, 5), dtype=np.uint8)
    a, b = (np.asfortranarray(t), np.asfortranarray(p) if order == "F" else p) if order != "C" else (t, p)
    got = pm.multilabel_counts(a, b)
    np.testing.assert_array_equal(got.tp_per_label, t.sum(axis=0))
    np.testing.assert_array_equal(got.fp_per_label, 700 - t.sum(axis=0))
    np.testing.assert_array_equal(got.tp_per_sample, t.sum(axis=1))
    assert got.tn == 0 and got.fn == 0


def test_sparse_stored_zeros_and_unsorted_indices():
    t = np.array([[1, 0, 1], [0, 1, 0]])
    p = np.array([[1, 1, 0], [0, 1, 1]])
    # stored zero at (1, 0), indices out of order in row 0
    messy = sp.csr_matrix((np.array([1, 1, 0, 1]), np.array([2, 0, 0, 1]), np.array([0, 2, 4])), shape=(2, 3))
    assert not messy.has_sorted_indices
    check_against_reference(pm.multilabel_counts(messy, sp.csr_matrix(p)), t, p)
    check_against_reference(pm.multilabel_counts(t, sp.coo_matrix(p)), t, p)


def test_sparse_int64_indices():
    rng = np.random.default_rng(6)
    t = random_labels(rng, 25, 9, 0.3)
    p = random_labels(rng, 25, 9, 0.3)
    wide = sp.csr_matrix(t)
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    check_against_reference(pm.multilabel_counts(wide, sp.csr_matrix(p)), t, p)


def test_huge_sparse_is_not_densified():
    # 10^6 x 10^6 would need a terabyte dense; stored entries only.
    n = 10**6
    rows = np.array([0, 5, 5, n - 1])
    cols = np.array([3, 7, n - 1, 0])
    t = sp.csr_matrix((np.ones(4), (rows, cols)), shape=(n, n))
    p = sp.csr_matrix((np.ones(3), (np.array([0, 5, 6]), np.array([3, 3, 3]))), shape=(n, n))
    got = pm.multilabel_counts(t, p)
    assert got.tp == 1 and got.fn == 3 and got.fp == 2
    assert got.tn == n * n - 6
    assert got.fp_per_label[3] == 2 and got.tp_per_sample[0] == 1


def test_bad_input():
    ok = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="same shape"):
        pm.multilabel_counts(ok, ok[:1])
    with pytest.raises(ValueError, match="same shape"):
        pm.multilabel_counts(sp.csr_matrix(ok), sp.csr_matrix(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="y_pred.*0 and 1"):
        pm.multilabel_counts(ok, [[0, 2], [1, 0]])
    with pytest.raises(ValueError, match="y_true.*0 and 1"):
        pm.multilabel_counts([[0, np.nan], [1, 0]], ok)
    with pytest.raises(ValueError, match="y_true.*0 and 1"):
        pm.multilabel_counts(np.array([[0, -1], [1, 0]], dtype=np.int8), ok)
    with pytest.raises(ValueError, match="y_true.*0 and 1"):
        pm.multilabel_counts(sp.csr_matrix(np.array([[0, 0.5], [1, 0]])), ok)
    duplicated = sp.coo_matrix((np.ones(2), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 2))
    with pytest.raises(ValueError, match="y_true.*0 and 1"):
        pm.multilabel_counts(duplicated, ok)
    raw = sp.csr_matrix((np.ones(2), np.array([1, 1]), np.array([0, 2, 2])), shape=(2, 2))  # not summed
    with pytest.raises(ValueError, match="y_pred.*more than once"):
        pm.multilabel_counts(ok, raw)
    with pytest.raises(ValueError, match="y_true.*2-D"):
        pm.multilabel_counts([0, 1], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        pm.multilabel_counts(np.zeros((0, 3)), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="false_pos"):
        pm.multilabel_counts(ok, ok, false_pos=-1)
    with pytest.raises(ValueError, match="false_neg"):
        pm.multilabel_counts(ok, ok, false_neg=np.inf)
    with pytest.raises(TypeError, match="false_neg"):
        pm.multilabel_counts(ok, ok, false_neg="5")
    with pytest.raises(TypeError, match="y_true"):
        pm.multilabel_counts([["a", "b"]], [[0, 1]])


# --------------------------------------------------------------------------- hardening regressions


def test_non_canonical_bools_count_as_ones():
    t = np.array([[2, 0, 1], [0, 3, 255]], np.uint8).view(bool)  # numpy prints True for 2, 3, 255
    p = np.array([[1, 0, 0], [0, 1, 1]], bool)
    canonical = t.view(np.uint8) != 0
    for got in (
        pm.multilabel_counts(t, p),
        pm.multilabel_counts(sp.csr_array(t), p),
        pm.multilabel_counts(t, sp.csr_array(p)),
    ):
        check_against_reference(got, canonical, p)
        assert got.tn == 2 and (got.tn_per_label >= 0).all() and (got.tn_per_sample >= 0).all()
    # stored non-canonical bools in a sparse matrix
    data = np.array([2, 1, 7], np.uint8).view(bool)
    m = sp.csr_array((data, np.array([0, 1, 2]), np.array([0, 2, 3])), shape=(2, 3))
    check_against_reference(pm.multilabel_counts(m, p), np.array([[1, 1, 0], [0, 0, 1]]), p)


def test_sparse_input_is_checked_before_the_kernel(monkeypatch):
    from pairmetrics import _core

    def refuse(*args, **kwargs):
        raise AssertionError("the kernel ran on invalid input")

    monkeypatch.setattr(_core, "_multilabel_sparse", refuse)
    dup = sp.csr_array((np.ones(2, np.int8), np.array([1, 1]), np.array([0, 2, 2])), shape=(2, 3))
    with pytest.raises(ValueError, match="y_true stores some entry more than once"):
        pm.multilabel_counts(dup, np.zeros((2, 3)))
    bad = sp.csr_array((np.ones(1, np.int8), np.array([0]), np.array([0, 1, 1])), shape=(2, 3))
    bad.indices[0] = 7  # out of range
    with pytest.raises(ValueError, match="y_pred is not a valid sparse matrix"):
        pm.multilabel_counts(np.zeros((2, 3)), bad)
    nan = sp.csr_array((np.array([np.nan]), np.array([0]), np.array([0, 1, 1])), shape=(2, 3))
    with pytest.raises(ValueError, match="y_true.*stored values.*NaN"):
        pm.multilabel_counts(nan, np.zeros((2, 3)))


def test_multilabel_does_not_import_scipy_for_dense_input():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "import pairmetrics._multilabel as ml\n"
        "before = 'scipy.sparse' in sys.modules\n"
        "ml.multilabel_counts(np.eye(3, dtype=bool), np.eye(3, dtype=bool))\n"
        "print(before, 'scipy.sparse' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # the package itself may load scipy elsewhere; the dense path must not need it
    assert out[1] == out[0]
