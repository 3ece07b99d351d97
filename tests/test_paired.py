import math
import signal
import warnings

import numpy as np
import pairmetrics as pe
import pytest
from _dtypes import DTYPES
from _hypothesis_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pairmetrics import _core
from pairmetrics._pairs import MOMENT_GROUPS, pair_totals, sample_counts
from pairmetrics.reference import paired as ref


def _values(dtype, pool):
    """Elements of a dtype; a small pool makes ties likely."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = st.integers(int(info.min), int(info.max))
        return st.integers(max(int(info.min), -3), min(int(info.max), pool)) if pool else wide
    width = 32 if dtype == np.float32 else 64
    if pool:
        return st.sampled_from([-1.5, 0.0, 0.25, 0.5, 1.0, 2.0, 3.0][: max(pool, 2)])
    return st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=width)


@st.composite
def problems(draw, max_n=40):
    n = draw(st.integers(2, max_n))
    score_dtype = draw(st.sampled_from(DTYPES))
    label_dtype = draw(st.sampled_from(DTYPES))
    scores = draw(hnp.arrays(score_dtype, n, elements=_values(score_dtype, draw(st.sampled_from([0, 1, 3, 6])))))
    labels = draw(hnp.arrays(label_dtype, n, elements=_values(label_dtype, draw(st.sampled_from([0, 1, 2, 4, 6])))))
    min_dist = draw(st.sampled_from([0.5, 1.0, 1.5, 0.25, 1e-9, 2.0, 0.75, 3.0, 2.0**53 + 2, 2.0**63, 1e19, 2.0**64]))
    return scores, labels, min_dist


# The kernel has three paths for the totals: per-class key sorts and merge walks
# when labels take at most few_classes (and few_labels) distinct values,
# Fenwick trees over label ranks up to few_labels distinct values, merge passes
# otherwise. Per-sample counts take the last two. Each entry: (few_labels,
# few_classes); (0, 0) forces the merge path.
PATHS = {
    "classes": (4096, 16),
    "classes_limit": (4096, 2),
    "fenwick": (4096, 0),
    "merge": (0, 0),
    "fenwick_limit": (3, 0),
}


# The merge path of the totals with real labels has vector code (AVX2,
# AVX-512), picked at run time; every level this CPU runs is forced in turn.
def _counts(*args, **kwargs):
    """(rankable, correct, tied, incorrect) of _core.paired_counts."""
    return pair_totals(_core.paired_counts(*args, **kwargs))


def _per_sample(*args, **kwargs):
    """(totals, (rankable, tied, incorrect)) of _core.paired_counts with per_sample."""
    output = _core.paired_counts(*args, **kwargs)
    return pair_totals(output), sample_counts(output)


def _moments(*args, **kwargs):
    """(totals, [(samples, r, q, rr, qr, qq) of the lowest, highest and other labels]) of _core.paired_moments."""
    output = _core.paired_moments(*args, **kwargs)
    fields = ("samples", "r", "q", "rr", "qr", "qq")
    return pair_totals(output), [tuple(output[g][f] for f in fields) for g in MOMENT_GROUPS]


SIMD_LEVELS = _core.paired_simd_levels()


@settings(max_examples=examples(1000))
@given(problems(), st.sampled_from([1, 2]))
def test_counts_match_quadratic_reference(problem, n_jobs):
    scores, labels, min_dist = problem
    result = pe.paired_evaluation(labels, scores, min_dist=min_dist, n_jobs=n_jobs, warn=False)
    expected = ref.pair_counts(scores.tolist(), labels.tolist(), min_dist)
    assert (result.n_rankable, result.n_correct, result.n_tied, result.n_incorrect) == expected
    assert pe.pairedeval.paired_eval(scores, labels, min_dist) == expected[:2]
    for limit in PATHS.values():
        assert _counts(scores, labels, min_dist, False, n_jobs, *limit) == expected
    for simd in SIMD_LEVELS:
        assert _counts(scores, labels, min_dist, False, n_jobs, 0, 0, simd=simd) == expected


def _all_pairs_counts(scores, labels, min_dist):
    """The O(n^2) definition, vectorised, for inputs too large for the loop reference."""
    y = labels.astype(np.float64)
    s = scores.astype(np.float64) if scores.dtype.kind != "u" else scores.astype(np.uint64)
    upper = np.triu(np.ones((len(y), len(y)), dtype=bool), 1)
    high_first = y[:, None] > y[None, :]
    gap = np.where(high_first, y[:, None] - y[None, :], y[None, :] - y[:, None])
    rankable = upper & (gap >= min_dist)
    s_high = np.where(high_first, s[:, None], s[None, :])
    s_low = np.where(high_first, s[None, :], s[:, None])
    tied = rankable & (s_high == s_low)
    correct = rankable & (s_high > s_low)
    return int(rankable.sum()), int(correct.sum()), int(tied.sum()), int((rankable & ~tied & ~correct).sum())


@settings(max_examples=examples(200), deadline=None)
@given(
    st.integers(1, 400),
    st.integers(1, 18),
    st.sampled_from(["f8", "f4", "i8", "u8", "i1", "bool"]),
    st.sampled_from(["distinct", "tied", "constant"]),
    st.sampled_from([0.5, 1.0, 1e-9, 2.0, 0.25]),
    st.integers(0, 2**32),
    st.sampled_from([1, 2]),
)
def test_per_class_path_matches_all_pairs(n, k, label_dtype, score_kind, min_dist, seed, threads):
    # Binary, bool, ordinal and small-integer labels; k near the class limits
    # (2, 8, 16) so that the path is taken, refused and taken again.
    rng = np.random.default_rng(seed)
    if label_dtype == "bool":
        labels = rng.random(n) < rng.random()
    elif label_dtype in ("f8", "f4"):
        pool = np.concatenate([[-0.0, 0.0], rng.normal(size=k) * 3]).astype(label_dtype)  # -0.0 and 0.0: one class
        labels = rng.choice(pool[: k + 1], n)
    else:
        low = 0 if label_dtype[0] == "u" else -k // 2
        labels = rng.integers(low, low + k, n).astype(label_dtype)
    scores = {
        "distinct": rng.random(n),
        "tied": rng.integers(0, 4, n).astype(np.float32),
        "constant": np.full(n, -0.0),
    }[score_kind]
    if score_kind == "tied":
        scores[rng.random(n) < 0.3] = -0.0  # -0.0 and 0.0 are tied scores
    expected = _all_pairs_counts(scores, labels, min_dist)
    for few_classes in (2, 8, 16):
        assert _counts(scores, labels, min_dist, False, threads, 4096, few_classes) == expected
    assert _counts(scores, labels, min_dist, False, threads) == expected


@pytest.mark.parametrize("layout", ["shuffled", "sorted", "rare_class"])
def test_per_class_path_with_chunks_that_see_different_classes(layout):
    # Large inputs are split into chunks, each finding its own classes; the
    # chunks' classes are merged before the keys are scattered.
    rng = np.random.default_rng(44)
    n = 400_000
    labels = rng.integers(0, 6, n)
    if layout == "sorted":
        labels = np.sort(labels)  # each chunk sees one or two classes
    elif layout == "rare_class":
        labels = (rng.random(n) < 0.5).astype(np.int64)
        labels[-3:] = 7  # a class only the last chunk sees
    scores = rng.integers(0, 50_000, n).astype(np.float64)  # ties between and within classes
    reference = _core.paired_counts(scores, labels, 1.0, False, 1, 0, 0)  # merge passes
    for threads in (1, 2, 3, 4):
        assert _core.paired_counts(scores, labels, 1.0, False, threads, 4096, 16) == reference
        assert _core.paired_counts(scores, labels.astype(np.float32), 1.0, False, threads) == reference
    assert _core.paired_counts(scores, labels, 1.0, False, 2, 4096, 5) == reference  # too many classes: Fenwick


@settings(max_examples=examples(60))
@given(st.integers(60, 1500), st.integers(0, 2**32), st.sampled_from([0.1, 0.5, 1.0]), st.booleans())
def test_merge_path_at_sizes_that_interleave_several_merges(n, seed, min_dist, tied_scores):
    rng = np.random.default_rng(seed)
    labels = rng.normal(size=n).round(int(rng.integers(0, 3)))  # label ties too
    scores = rng.integers(0, 20, n).astype(np.float32) if tied_scores else rng.random(n)
    expected = _all_pairs_counts(scores, labels, min_dist)
    for threads in (1, 2):
        for simd in SIMD_LEVELS:
            assert _counts(scores, labels, min_dist, False, threads, 0, simd=simd) == expected
        assert _counts(scores, labels, min_dist, True, threads, 0) == expected


@settings(max_examples=examples(150), deadline=None)
@given(
    st.integers(1, 700),
    st.integers(0, 2**32),
    st.sampled_from(["uniform", "clustered", "huge", "zeros", "ties"]),
    st.sampled_from([1e-9, 0.1, 0.5, 1.0, 3.0]),
)
def test_vector_code_matches_all_pairs(n, seed, kind, min_dist):
    # Run lengths around the vector widths (8, 16) and their tails; labels
    # where most pairs are near (windows that move on), magnitudes where
    # a - b rounds, and -0.0 next to 0.0.
    rng = np.random.default_rng(seed)
    labels = {
        "uniform": rng.random(n) * 4,
        "clustered": np.where(rng.random(n) < 0.9, rng.random(n) * 0.05, rng.random(n) * 5),
        "huge": 1e16 + rng.integers(-8, 8, n) * 2.0,
        "zeros": rng.choice([-0.0, 0.0, 1.0, -1.0], n),
        "ties": rng.integers(0, 5, n) * 0.5,
    }[kind]
    scores = rng.random(n) if seed % 2 else rng.integers(0, 30, n).astype(np.float64)
    expected = _all_pairs_counts(scores, labels, min_dist)
    for simd in SIMD_LEVELS:
        for threads in (1, 2):
            assert _counts(scores, labels, min_dist, False, threads, 0, simd=simd) == expected


def test_simd_switch():
    assert "scalar" in SIMD_LEVELS
    assert set(SIMD_LEVELS) <= {"scalar", "avx2", "avx512"}
    with pytest.raises(ValueError, match="simd"):
        _core.paired_counts(np.zeros(3), np.zeros(3), 1.0, simd="sse9")
    for level in {"avx2", "avx512"} - set(SIMD_LEVELS):  # a level this CPU lacks is refused, not emulated
        with pytest.raises(ValueError, match="not supported on this CPU"):
            _core.paired_counts(np.zeros(3), np.zeros(3), 1.0, simd=level)


@settings(max_examples=examples(300))
@given(problems(max_n=25), st.sampled_from(sorted(PATHS)))
def test_per_sample_counts_match_reference(problem, path):
    scores, labels, min_dist = problem
    _, (rankable, tied, incorrect) = _per_sample(scores, labels, min_dist, True, 1, *PATHS[path])
    expected = ref.per_sample_counts(scores.tolist(), labels.tolist(), min_dist)
    assert rankable.tolist() == expected[0]
    assert tied.tolist() == expected[1]
    assert incorrect.tolist() == expected[2]


def _moments_of(labels, rankable, tied, incorrect):
    """The sums (samples, r, q, r*r, q*r, q*q) of per-sample counts over the samples with the
    smallest label, the largest (none when all are equal) and the rest, in Python integers."""
    low, high = labels.min(), labels.max()
    groups = [[0] * 6 for _ in range(3)]
    for label, r, t, w in zip(labels, map(int, rankable), map(int, tied), map(int, incorrect)):
        q = 2 * (r - w) - t
        group = groups[0 if label == low else 1 if label == high else 2]
        for k, value in enumerate((1, r, q, r * r, q * r, q * q)):
            group[k] += value
    return [tuple(g) for g in groups]


@settings(max_examples=examples(300))
@given(problems(max_n=25), st.sampled_from(sorted(PATHS)), st.sampled_from([1, 2]))
def test_moments_of_per_sample_counts_match_reference(problem, path, threads):
    scores, labels, min_dist = problem
    totals, groups = _moments(scores, labels, min_dist, threads, *PATHS[path])
    assert totals == ref.pair_counts(scores.tolist(), labels.tolist(), min_dist)
    expected = _moments_of(labels, *ref.per_sample_counts(scores.tolist(), labels.tolist(), min_dist))
    assert groups == expected
    for simd in SIMD_LEVELS:
        assert _moments(scores, labels, min_dist, threads, *PATHS[path], simd=simd) == (totals, groups)


def test_moments_of_tiny_inputs():
    for n in range(4):
        scores, labels = np.arange(n, dtype=np.float64), np.arange(n) % 2
        totals, groups = _moments(scores, labels, 0.5)
        assert totals == ref.pair_counts(scores.tolist(), labels.tolist(), 0.5)
        expected = (
            _moments_of(labels, *ref.per_sample_counts(scores.tolist(), labels.tolist(), 0.5)) if n else [(0,) * 6] * 3
        )
        assert [tuple(g) for g in groups] == expected


@pytest.mark.parametrize("kind", ["uniform", "binary", "ordinal", "tied_scores", "rare_class"])
def test_moments_agree_with_per_sample_arrays_on_every_path_at_scale(kind):
    # Large enough for the class runs, pieces and merge passes to be split over threads.
    rng = np.random.default_rng(12)
    n = 300_000
    scores = rng.random(n) if kind != "tied_scores" else rng.integers(0, 1000, n).astype(np.float32)
    labels = {
        "uniform": rng.random(n),
        "binary": (rng.random(n) < 0.3).astype(np.float64),
        "ordinal": rng.integers(0, 5, n),
        "tied_scores": rng.integers(-3, 4, n) * 0.05,
        "rare_class": np.where(rng.random(n) < 1e-4, 9, rng.integers(0, 3, n)),
    }[kind]
    totals, (rankable, tied, incorrect) = _per_sample(scores, labels, 0.1, True, 2, 0)
    q = 2 * (rankable - incorrect) - tied
    low, high = labels.min(), labels.max()
    expected = []
    for member in (labels == low, (labels == high) & (labels != low), (labels != low) & (labels != high)):
        r, qm = rankable[member], q[member]
        sums = (int(member.sum()), r.sum(), qm.sum(), (r * r).sum(), (qm * r).sum(), (qm * qm).sum())
        expected.append(tuple(int(x) for x in sums))
    for threads in (1, 2, 3):
        for path in PATHS.values():
            got_totals, groups = _moments(scores, labels, 0.1, threads, *path)
            assert got_totals == totals
            assert groups == expected


@settings(max_examples=examples(200), deadline=None)
@given(problems(max_n=40))
def test_variance_from_moments_matches_per_sample_components(problem):
    from pairmetrics._pairs import auc_components, sample_factors

    scores, labels, min_dist = problem
    result = pe.paired_evaluation(labels, scores, min_dist=min_dist, warn=False, variance=True)
    totals, per_sample = _per_sample(scores, labels, min_dist, True, 1)
    if totals[0] == 0:
        assert math.isnan(result._variance)
        return
    g = auc_components(totals, per_sample)
    expected = float(sample_factors(labels) @ (g * g)) / float(totals[0]) ** 2
    if math.isnan(expected):  # a class of one sample: undefined on both paths
        assert math.isnan(result._variance)
        return
    assert result._variance == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=examples(300))
@given(st.integers(2, 60), st.sampled_from(["binary", "ordinal", "real"]), st.floats(0.01, 3), st.integers(0, 2**32))
def test_identical_to_pairedeval_procedure_without_score_ties(n, kind, min_dist, seed):
    rng = np.random.default_rng(seed)
    scores = rng.permutation(n) + rng.random(n) * 0.5  # distinct
    labels = {"binary": rng.integers(0, 2, n), "ordinal": rng.integers(0, 5, n), "real": rng.normal(size=n)}[kind]
    assert pe.pairedeval.paired_eval(scores, labels, min_dist) == ref.pairedeval_procedure(scores, labels, min_dist)


def test_large_inputs_with_threads_match_pairedeval_procedure():
    rng = np.random.default_rng(7)
    n = 300_000  # above the size where the merge passes are split across threads
    scores, labels = rng.random(n), rng.random(n)
    single = pe.paired_evaluation(labels, scores, min_dist=0.1, n_jobs=1)
    assert pe.paired_evaluation(labels, scores, min_dist=0.1, n_jobs=2) == single
    assert pe.paired_evaluation(labels, scores, min_dist=0.1, n_jobs=-1) == single
    rounded = np.round(labels, 2)  # 101 distinct labels: the Fenwick path
    assert _counts(scores, rounded, 0.1, False, 2) == _counts(scores, rounded, 0.1, False, 1, 0)
    small = slice(0, 3000)
    assert pe.pairedeval.paired_eval(scores[small], labels[small], 0.1) == ref.pairedeval_procedure(
        scores[small], labels[small], 0.1
    )


@pytest.mark.parametrize("distribution", ["skewed", "heavy_tailed", "few_values", "clumped"])
def test_large_skewed_scores_depend_only_on_their_order(distribution):
    # The score sort buckets keys by their top bits: skewed keys give buckets of
    # every size. Counts depend only on the order of the scores, so ranks or a
    # monotone transform of the scores must give the same counts.
    rng = np.random.default_rng(12)
    n = 300_000
    scores = {
        "skewed": np.where(rng.random(n) < 0.8, 0.5, rng.random(n)),
        "heavy_tailed": rng.standard_cauchy(n),
        "few_values": rng.integers(0, 7, n).astype(np.float32),
        # Half the scores are 4096 neighbouring doubles: buckets of the last
        # radix level hold many records each.
        "clumped": np.where(rng.random(n) < 0.5, 1.0 + rng.integers(0, 4096, n) * 2.0**-52, rng.random(n)),
    }[distribution]
    labels = rng.normal(size=n)
    ranks = np.unique(scores, return_inverse=True)[1].astype(np.int64)
    expected = _counts(ranks, labels, 0.5, False, 1, 0)
    for values in (scores, scores * 2.0, ranks[::-1][::-1]):  # doubling is exact: same order
        for threads in (1, 2):
            assert _counts(values, labels, 0.5, False, threads, 0) == expected
    assert _counts(scores, labels, 0.5, True, 2, 0) == expected


def test_counts_past_32_bits():
    n = 100_000  # n (n - 1) / 2 > 2**32
    labels = np.arange(n, dtype=np.float64)
    result = pe.paired_evaluation(labels, labels, min_dist=0.5)
    assert result.n_rankable == n * (n - 1) // 2 > 2**32
    assert result.n_correct == result.n_rankable
    reversed_result = pe.paired_evaluation(labels, -labels, min_dist=0.5)
    assert reversed_result.n_incorrect == result.n_rankable


@settings(max_examples=examples(200))
@given(st.integers(2, 80), st.integers(0, 2**32), st.sampled_from([0.5, 1.0, 1e-3]))
def test_auc_equals_roc_auc_for_binary_labels(n, seed, min_dist):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    labels[0], labels[1] = 0, 1
    scores = rng.integers(0, 5, n).astype(float)  # many ties: they count one half
    assert pe.paired_evaluation(labels, scores, min_dist=min_dist).auc == pytest.approx(
        roc_auc_score(labels, scores), abs=1e-12
    )


def test_counts_agree_with_kendall_tau_when_every_pair_is_rankable():
    from scipy import stats

    rng = np.random.default_rng(3)
    labels = rng.permutation(200).astype(float)
    scores = rng.integers(0, 30, 200)
    r = pe.paired_evaluation(labels, scores, min_dist=0.5)
    pairs = 200 * 199 / 2
    tau_b = stats.kendalltau(scores, labels).statistic
    # No label ties: tau_b = (C - D) / sqrt((P - T_scores) * P).
    assert tau_b == pytest.approx((r.n_correct - r.n_incorrect) / math.sqrt((pairs - r.n_tied) * pairs))


@given(problems(max_n=30), st.integers(0, 2**32))
def test_input_order_does_not_matter(problem, seed):
    scores, labels, min_dist = problem
    order = np.random.default_rng(seed).permutation(len(scores))
    assert pe.paired_evaluation(labels, scores, min_dist=min_dist, warn=False) == pe.paired_evaluation(
        labels[order], scores[order], min_dist=min_dist, warn=False
    )


def test_read_only_non_contiguous_lists_series_and_column_vectors_give_the_same_answer():
    import pandas as pd

    rng = np.random.default_rng(11)
    wide_scores = rng.random((500, 3))
    wide_labels = rng.integers(0, 4, (500, 2)).astype(np.float32)
    scores, labels = wide_scores[:, 1], wide_labels[:, 0]  # strided views
    assert not scores.flags.c_contiguous
    expected = pe.paired_evaluation(labels.copy(), scores.copy())
    frozen = scores.copy()
    frozen.flags.writeable = False
    assert pe.paired_evaluation(labels, scores) == expected
    assert pe.paired_evaluation(labels, frozen) == expected
    assert pe.paired_evaluation(labels.tolist(), scores.tolist()) == expected
    assert pe.paired_evaluation(pd.Series(labels), pd.Series(scores)) == expected
    assert pe.paired_evaluation(labels[:, None], scores[:, None]) == expected
    assert pe.paired_evaluation(labels, scores[::-1][::-1]) == expected


def test_uint8_labels_do_not_wrap_around():
    labels = np.array([0, 1, 200, 255], dtype=np.uint8)
    scores = np.array([0.1, 0.2, 0.3, 0.4])
    assert pe.pairedeval.paired_eval(scores, labels, 100) == (4, 4)
    assert pe.pairedeval.paired_eval(scores, labels.astype(bool), 0.5) == (3, 3)


def test_result_fields():
    r = pe.paired_evaluation([0, 0, 1, 1, 0], [0.1, 0.4, 0.35, 0.8, 0.8])
    with pytest.raises(TypeError, match="does not unpack"):
        tuple(r)
    assert (r.n_rankable, r.n_correct) == (6, 3) and r.statistic == r.auc
    assert (r.n_tied, r.n_incorrect) == (1, 2)
    assert r.auc == pytest.approx(3.5 / 6)
    assert isinstance(r.n_rankable, int)
    assert "auc=" in repr(r)


def test_nothing_rankable_gives_zero_counts_and_nan_auc_with_a_warning():
    with pytest.warns(RuntimeWarning, match="nothing is rankable"):
        r = pe.paired_evaluation([0.0, 0.1, 0.2], [1, 2, 3], min_dist=0.5)
    assert (r.n_rankable, r.n_correct, r.n_tied) == (0, 0, 0)
    assert math.isnan(r.auc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pe.pairedeval.paired_eval([1, 2], [0, 0]) == (0, 0)


@pytest.mark.parametrize(
    ("scores", "labels", "min_dist", "error", "match"),
    [
        ([1, 2, 3], [0, 1], 0.5, ValueError, "same length"),
        ([1], [0], 0.5, ValueError, "scores needs at least 2"),
        ([1, np.nan], [0, 1], 0.5, ValueError, "scores contains NaN"),
        ([1, 2], [0, np.inf], 0.5, ValueError, "labels contains infinite"),
        ([1, 2], [0, 1], 0.0, ValueError, "min_dist must be finite and > 0"),
        ([1, 2], [0, 1], -1, ValueError, "min_dist"),
        ([1, 2], [0, 1], np.nan, ValueError, "min_dist"),
        ([1, 2], [0, 1], "0.5", TypeError, "min_dist must be a real number"),
        (["a", "b"], [0, 1], 0.5, TypeError, "scores must have a real numeric dtype"),
        ([1, 2], [1 + 1j, 0], 0.5, TypeError, "labels"),
        (np.ones((3, 2)), [0, 1, 1], 0.5, ValueError, r"scores must be 1-D or of shape \(n, 1\)"),
        ([1, 2, 3], np.ones((1, 3)), 0.5, ValueError, "labels must be 1-D"),
        (5.0, [0, 1], 0.5, ValueError, "scores must be 1-D"),
        ([[1], [2, 3]], [0, 1], 0.5, TypeError, "scores"),
    ],
)
def test_bad_input_is_rejected_with_a_message_naming_the_argument(scores, labels, min_dist, error, match):
    with pytest.raises(error, match=match):
        pe.pairedeval.paired_eval(scores, labels, min_dist)
    native = match.replace("scores", "y_score").replace("labels", "y_true")
    with pytest.raises(error, match=native):
        pe.paired_evaluation(labels, scores, min_dist=min_dist)


def test_bad_n_jobs():
    with pytest.raises(ValueError, match="n_jobs"):
        pe.paired_evaluation([1, 2], [0, 1], n_jobs=0)
    with pytest.raises(TypeError, match="n_jobs"):
        pe.paired_evaluation([1, 2], [0, 1], n_jobs=1.5)


# --- comparing two models -------------------------------------------------------


@settings(max_examples=examples(150))
@given(st.integers(3, 25), st.integers(0, 2**32), st.sampled_from(["binary", "ordinal", "real"]))
def test_comparison_variance_matches_brute_force(n, seed, kind):
    rng = np.random.default_rng(seed)
    labels = {"binary": rng.integers(0, 2, n), "ordinal": rng.integers(0, 4, n), "real": rng.normal(size=n)}[kind]
    labels[0], labels[1] = 0, 3
    a = rng.integers(0, 4, n).astype(float)
    b = a + rng.normal(size=n)
    result = pe.compare_models(labels, [a, b], min_dist=0.5)
    ca, cb, va, vb, cov = ref.concordance_variance(a, b, labels, 0.5)
    classes, sizes = np.unique(labels, return_counts=True)
    if classes.shape[0] == 2:  # binary labels: DeLong's per-class estimate, for the test too
        if sizes.min() < 2:
            return
        from pairmetrics.reference.confidence import delong_covariance

        va, vb, cov = delong_covariance(a, b, labels == classes[1])
    assert result.auc[0] == pytest.approx(ca)
    assert result.auc[1] == pytest.approx(cb)
    assert result.covariance[0, 0] == pytest.approx(va, abs=1e-12)
    assert result.covariance[1, 1] == pytest.approx(vb, abs=1e-12)
    assert result.covariance[0, 1] == pytest.approx(cov, abs=1e-12)


def test_comparison_is_delongs_for_binary_labels():
    rng = np.random.default_rng(5)
    n = 400
    labels = rng.integers(0, 2, n)
    a = labels + rng.normal(size=n)
    b = a + 2 * rng.normal(size=n)  # a worse model whose errors include a's
    result = pe.compare_models(labels, [a, b])

    # DeLong's structural components for the same data.
    pos, neg = labels == 1, labels == 0
    m, k = pos.sum(), neg.sum()

    def components(s):
        psi = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
        return psi.mean(axis=1), psi.mean(axis=0)

    (v10a, v01a), (v10b, v01b) = components(a), components(b)
    delong = np.cov(v10a, v10b)[0, 1] / m + np.cov(v01a, v01b)[0, 1] / k
    assert result.covariance[0, 1] == pytest.approx(delong, rel=1e-10)  # the test uses DeLong's estimate too
    delong_a = np.var(v10a, ddof=1) / m + np.var(v01a, ddof=1) / k
    assert result.covariance[0, 0] == pytest.approx(delong_a, rel=1e-10)
    statistic, pvalue = result
    assert statistic == result.statistic and 0 <= pvalue < 0.01
    difference = result.auc[0] - result.auc[1]
    spread = result.covariance[0, 0] + result.covariance[1, 1] - 2 * result.covariance[0, 1]
    assert statistic == pytest.approx(difference**2 / spread, rel=1e-10)  # DeLong's z, squared


@settings(max_examples=examples(100))
@given(st.integers(4, 40), st.integers(0, 2**32), st.booleans())
def test_comparison_test_and_interval_agree(n, seed, binary):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2 if binary else 4, n)
    labels[0], labels[1] = 0, 1
    a = labels + rng.normal(size=n)
    b = labels + rng.normal(size=n)
    result = pe.compare_models(labels, [a, b])
    low, high = (x[0, 1] for x in result.confidence_interval())
    cov = result.covariance
    if np.isnan(cov).any():  # a class of one sample: the variance is undefined
        return
    se = max(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1], 0.0) ** 0.5
    if se == 0:
        return
    assert result.statistic == pytest.approx((result.difference[0, 1] / se) ** 2, rel=1e-9)
    if -1 < low and high < 1:  # unclipped: the interval excludes 0 exactly when p < 0.05
        assert (low > 0 or high < 0) == (result.pvalue < 0.05) or abs(result.pvalue - 0.05) < 1e-9


def test_comparison_of_a_model_with_itself_has_no_difference():
    labels = [0, 1, 0, 1, 2, 2, 0]
    scores = [0.1, 0.5, 0.3, 0.2, 0.9, 0.7, 0.0]
    result = pe.compare_models(labels, [scores, scores])
    assert result.statistic == 0.0 and result.pvalue == 1.0


def test_comparison_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="y_score"):  # ragged rows
        pe.compare_models([0, 1, 1], [[1, 2, 3], [1, 2]])
    with pytest.raises(ValueError, match="y_true and y_score|y_score.*y_true"):
        pe.compare_models([0, 1, 1], [[1, 2], [1, 2]])
    with pytest.raises(ValueError, match=r"y_score\[0\] contains NaN"):
        pe.compare_models([0, 1], [[1, np.nan], [1, 2]])


# --- exactness, unusual dtypes and memory layouts --------------------------------


def test_int64_and_uint64_labels_beyond_2_53_are_compared_exactly():
    labels = np.array([2**62, 2**62 + 1, 0])
    assert pe.pairedeval.paired_eval([1.0, 2.0, 3.0], labels) == (3, 1)
    assert pe.pairedeval.paired_eval([1.0, 2.0, 3.0], labels.astype(np.uint64)) == (3, 1)
    top = np.array([2**64 - 1, 2**64 - 2, 0, 2**63], dtype=np.uint64)
    scores = np.array([4.0, 3.0, 1.0, 2.0])
    assert pe.paired_evaluation(top, scores, min_dist=1).n_rankable == 6
    # One apart only for the two largest: min_dist just above 1 drops that pair.
    assert pe.paired_evaluation(top, scores, min_dist=1.0000001).n_rankable == 5
    extremes = np.array([-(2**63), 2**63 - 1, 2**63 - 2, -(2**63) + 1])
    for min_dist in (1, 1.5, 2.0**63, 2.0**64 - 2048, 2.0**64, 1e30):
        for path in PATHS.values():
            got = _counts(scores, extremes, min_dist, False, 1, *path)
            assert got == ref.pair_counts(scores.tolist(), extremes.tolist(), min_dist)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.integers(2, 30),
    st.sampled_from([np.int64, np.uint64]),
    st.integers(0, 2**32),
    st.sampled_from([1, 2.5, 2.0**40, 2.0**62 + 2**11, 2.0**63, 2.0**64 - 4096]),
    st.sampled_from(sorted(PATHS)),
)
def test_wide_integer_labels_match_exact_reference(n, dtype, seed, min_dist, path):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    centres = [int(info.min), int(info.max), 0, 2**62]
    centre = centres[int(rng.integers(len(centres)))]
    offsets = [int(o) * [1, 2**40, 2**61][int(rng.integers(3))] for o in rng.integers(-4, 5, n)]
    labels = np.array([min(max(centre + int(o), int(info.min)), int(info.max)) for o in offsets], dtype=dtype)
    scores = rng.integers(0, 5, n).astype(np.int64) * (2**60) + 2**62  # int64 scores beyond 2**53, with ties
    expected = ref.pair_counts(scores.tolist(), labels.tolist(), min_dist)
    assert _counts(scores, labels, min_dist, False, 1, *PATHS[path]) == expected
    _, (rankable, tied, incorrect) = _per_sample(scores, labels, min_dist, True, 2, *PATHS[path])
    assert [rankable.tolist(), tied.tolist(), incorrect.tolist()] == list(
        map(list, ref.per_sample_counts(scores.tolist(), labels.tolist(), min_dist))
    )


def test_non_canonical_bools_are_read_as_true():
    odd = np.array([2, 1], np.uint8).view(bool)  # numpy prints [True, True]
    r = pe.paired_evaluation([1, 0], odd)
    assert (r.n_rankable, r.n_correct, r.n_tied) == (1, 0, 1)
    scores = np.array([0.2, 0.1, 0.3, 0.4])
    odd_labels = np.array([0, 7, 1, 255], np.uint8).view(bool)
    assert pe.paired_evaluation(odd_labels, scores) == pe.paired_evaluation(odd_labels.view(np.uint8) != 0, scores)
    odd_scores = np.array([0, 3, 1, 0], np.uint8).view(bool)
    assert pe.paired_evaluation([0, 1, 1, 0], odd_scores) == pe.paired_evaluation([0, 1, 1, 0], [0, 1, 1, 0])


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("dtype", ["i2", "i4", "i8", "u4", "u8", "f4", "f8"])
def test_any_byte_order_and_type_object(dtype, order):
    rng = np.random.default_rng(4)
    scores, labels = rng.integers(0, 50, 300), rng.integers(0, 6, 300)
    expected = pe.paired_evaluation(labels.astype(np.float64), scores.astype(np.float64))
    assert pe.paired_evaluation(labels.astype(order + dtype), scores.astype(order + dtype)) == expected
    assert pe.pairedeval.paired_eval(np.array([0.1, 0.3, 0.2, 0.9], ">f8"), np.array([0, 1, 2, 3], ">i8")) == (6, 5)
    assert pe.paired_evaluation(labels.astype(np.longlong), scores.astype(np.longlong)) == expected
    assert pe.paired_evaluation(labels.astype(np.ulonglong), scores.astype(np.intc)) == expected


def test_record_array_columns_are_read_with_their_stride():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    n = 5000
    frame = pd.DataFrame(
        {
            "flag": rng.integers(0, 2, n).astype(np.int8),
            "score": rng.random(n),
            "label": rng.integers(0, 5, n).astype(np.int32),
            "small": rng.random(n).astype(np.float32),
        }
    )
    records = frame.to_records()
    assert records.dtype.itemsize % 8 != 0  # fields not 8 bytes wide: a stride that is no multiple of 8
    expected = pe.paired_evaluation(frame["label"].to_numpy(), frame["score"].to_numpy())
    assert pe.paired_evaluation(records["label"], records["score"]) == expected
    assert pe.paired_evaluation(records["flag"], records["small"]) == pe.paired_evaluation(
        frame["flag"].to_numpy(), frame["small"].to_numpy()
    )
    compared = pe.compare_models(records["label"], [records["score"], records["small"]])
    assert compared == pe.compare_models(
        frame["label"].to_numpy(), [frame["score"].to_numpy(), frame["small"].to_numpy()]
    )


@pytest.mark.parametrize("kind", ["uniform", "binary", "ordinal_int", "tied_scores"])
def test_every_path_and_thread_count_gives_identical_counts(kind):
    rng = np.random.default_rng(21)
    n = 400_000  # large enough for every thread split, in the sorts and in the merge passes
    scores = rng.random(n) if kind != "tied_scores" else rng.integers(0, 1000, n).astype(np.float32)
    labels = {
        "uniform": rng.random(n),
        "binary": (rng.random(n) < 0.3).astype(np.float64),
        "ordinal_int": rng.integers(-3, 4, n),
        "tied_scores": rng.normal(size=n),
    }[kind]
    reference = _counts(scores, labels, 0.1, False, 1, 0, simd="scalar")
    for threads in (1, 2, 3, 4):
        for path in PATHS.values():
            assert _counts(scores, labels, 0.1, False, threads, *path) == reference
        for simd in SIMD_LEVELS:
            assert _counts(scores, labels, 0.1, False, threads, 0, 0, simd=simd) == reference
    assert _counts(scores, labels, 0.1, True, 3, 0) == reference


def test_import_does_not_load_scipy_stats():
    import subprocess
    import sys

    code = "import sys, pairmetrics; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("output", ["counts", "per_sample", "moments"])
def test_ctrl_c_stops_the_kernel_within_a_second(output):
    import _thread
    import threading
    import time

    rng = np.random.default_rng(2)
    n = 3_000_000
    scores, labels = rng.random(n), rng.random(n)
    kernel = {
        "counts": lambda: _core.paired_counts(scores, labels, 0.1, False, 1, 0),
        "per_sample": lambda: _core.paired_counts(scores, labels, 0.1, True, 1, 0),
        "moments": lambda: _core.paired_moments(scores, labels, 0.1, 1, 0),
    }[output]

    def seconds_to_stop():
        sent = []

        def interrupt():
            sent.append(time.perf_counter())
            _thread.interrupt_main()

        timer = threading.Timer(0.2, interrupt)
        timer.start()
        deadline = time.perf_counter() + 60
        try:
            with pytest.raises(KeyboardInterrupt):
                while time.perf_counter() < deadline:  # until the interrupt lands, inside the kernel or between calls
                    kernel()
        finally:
            timer.cancel()
        assert sent
        return time.perf_counter() - sent[0]

    # Python's own handler, also when the tests run where SIGINT is ignored (background jobs)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # a shared, loaded machine can stall one attempt: a kernel that does not poll is slow twice
        assert min(seconds_to_stop(), seconds_to_stop()) < 1.0
    finally:
        signal.signal(signal.SIGINT, previous)
    assert pe.pairedeval.paired_eval([0.1, 0.2], [0, 1]) == (1, 1)  # still usable


def test_per_sample_counts_agree_between_merge_and_fenwick_paths_at_scale():
    # Beyond the in-cache blocks the merge passes are cut into pieces spread
    # over threads; the Fenwick path shares none of that code.
    rng = np.random.default_rng(33)
    n = 120_000
    labels = rng.integers(0, 40, n) * 0.25
    scores = rng.integers(0, 5000, n).astype(np.float64)  # ties too
    fenwick = _per_sample(scores, labels, 0.6, True, 1, 4096)
    for threads in (1, 3):
        merged = _per_sample(scores, labels, 0.6, True, threads, 0)
        assert merged[0] == fenwick[0]
        for got, expected in zip(merged[1], fenwick[1]):
            np.testing.assert_array_equal(got, expected)
    rankable, tied, incorrect = fenwick[1]
    assert rankable.sum() == 2 * fenwick[0][0] and tied.sum() == 2 * fenwick[0][2]
    assert incorrect.sum() == 2 * fenwick[0][3]


def test_progress_reaches_the_end_and_is_validated():
    rng = np.random.default_rng(5)
    scores, labels = rng.random(300_000), rng.random(300_000)
    seen = []
    _core.paired_counts(scores, labels, 0.1, True, 2, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] > 0
    assert pe.paired_evaluation(labels, scores, min_dist=0.1, progress=False) == pe.paired_evaluation(
        labels, scores, min_dist=0.1
    )
    with pytest.raises(TypeError, match="progress"):
        pe.paired_evaluation(labels, scores, min_dist=0.1, progress="yes")
    with pytest.raises(TypeError, match="progress"):
        pe.compare_models(labels, [scores, scores], min_dist=0.1, progress=1)


# --------------------------------------------------------------------------- group dominance (pairs between partitions)

_dominance_values = st.sampled_from([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, math.inf])


@settings(max_examples=examples(300), deadline=None)
@given(
    points=st.lists(
        st.tuples(_dominance_values.filter(math.isfinite), st.integers(0, 3), st.integers(1, 4)), max_size=25
    ),
    queries=st.lists(st.tuples(_dominance_values, st.integers(0, 3), st.integers(1, 4)), max_size=25),
    weighted=st.booleans(),
)
def test_group_dominance_matches_reference(points, queries, weighted):
    def arrays(rows):
        values = np.array([r[0] for r in rows], dtype=np.float64)
        groups = np.array([r[1] for r in rows], dtype=np.uint32)
        weights = np.array([r[2] for r in rows], dtype=np.uint32) if weighted else np.empty(0, np.uint32)
        return values, groups, weights

    (v, g, w), (t, q, qw) = arrays(points), arrays(queries)
    got = _core.group_dominance(v, g, w, t, q, qw, 4)
    expected = ref.group_dominance(v, g, t, q, w if weighted else None, qw if weighted else None)
    assert (got["lower"], got["same"], got["higher"]) == expected


def test_group_dominance_refuses_a_group_out_of_range():
    one = np.ones(1, np.uint32)
    with pytest.raises(ValueError, match="n_groups"):
        _core.group_dominance(np.zeros(1), 2 * one, one, np.zeros(1), 0 * one, one, 2)


def test_paired_auc_is_the_auc_of_paired_evaluation():
    rng = np.random.default_rng(3)
    labels = rng.normal(size=200)
    scores = labels + rng.normal(size=200)
    for min_dist in (0.1, 1.0):
        assert (
            pe.paired_evaluation(labels, scores, min_dist=min_dist).auc
            == pe.paired_evaluation(labels, scores, min_dist=min_dist).auc
        )
    with pytest.warns(RuntimeWarning, match="nothing is rankable"):
        assert math.isnan(pe.paired_evaluation([0.0, 0.0], [1.0, 2.0]).auc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(pe.paired_evaluation([0.0, 0.0], [1.0, 2.0], warn=False).auc)
