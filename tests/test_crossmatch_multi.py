"""multi_crossmatch_test: the cross-match test for K >= 2 samples on one exact matching."""

from fractions import Fraction

import numpy as np
import pairmetrics as pm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pairmetrics._crossmatch_multi import cross_count_moments, mahalanobis_statistic, total_cross_variance
from pairmetrics.reference import matching as ref
from scipy.spatial.distance import cdist


def _chain_mate(N):
    """The matching (0, 1), (2, 3), ... of N points (the last one left out when N is odd)."""
    mate = [i ^ 1 for i in range(N)]
    if N % 2:
        mate[-1] = -1
    return mate


@pytest.mark.parametrize(
    "sizes",
    [
        (1, 1),
        (2, 2),
        (1, 3),
        (3, 3),
        (1, 1, 2),
        (2, 2, 2),
        (1, 2, 3),
        (1, 1, 1, 1),
        (2, 1, 1, 2),
        (3, 2, 2, 1),
        (0, 2, 4),
        (1, 1, 1, 1, 2, 2),
    ],
)
def test_moments_formula_is_the_enumeration_over_label_arrangements(sizes):
    N = sum(sizes)
    mean, cov = ref.multi_crossmatch_moments(sizes)
    enum_mean, enum_cov = ref.multi_crossmatch_moments_enumerated(sizes, _chain_mate(N))
    assert mean == enum_mean and cov == enum_cov  # exact rationals
    fast_mean, fast_cov = cross_count_moments(np.array(sizes))
    np.testing.assert_allclose(fast_mean, [float(m) for m in mean], rtol=1e-13)
    np.testing.assert_allclose(fast_cov, [[float(c) for c in row] for row in cov], rtol=1e-12, atol=1e-14)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=2, max_size=6).filter(lambda s: sum(s) % 2 == 0 and sum(s) >= 2))
def test_closed_form_moments_match_the_pair_probabilities(sizes):
    mean, cov = ref.multi_crossmatch_moments(sizes)
    fast_mean, fast_cov = cross_count_moments(np.array(sizes))
    np.testing.assert_allclose(fast_mean, [float(m) for m in mean], rtol=1e-13)
    scale = max(1.0, float(np.abs(fast_cov).max()))
    np.testing.assert_allclose(fast_cov, [[float(c) for c in row] for row in cov], rtol=1e-11, atol=1e-13 * scale)


def _dense_statistic(deviation, cov):
    """d' Sigma^+ d and the rank by numpy's pseudo-inverse on the correlation scale."""
    sd = np.sqrt(np.diag(cov))
    on = sd > 0
    if not on.any():
        return 0.0, 0
    corr = cov[np.ix_(on, on)] / np.outer(sd[on], sd[on])
    scaled = deviation[on] / sd[on]
    return float(scaled @ np.linalg.pinv(corr, rcond=1e-10, hermitian=True) @ scaled), int(
        np.linalg.matrix_rank(corr, tol=1e-10 * np.abs(corr).max() * corr.shape[0], hermitian=True)
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=2, max_size=12), st.integers(0, 2**32 - 1))
def test_structured_statistic_is_the_dense_pseudo_inverse(sizes, seed):
    sizes[0] += sum(sizes) % 2
    if sum(sizes) < 2:
        sizes[:2] = [1, 1]
    sizes = np.array(sizes)
    mean, cov = cross_count_moments(sizes)
    # a deviation in the range of Sigma: the counts of a random arrangement of the labels on a chain matching
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    a, b = np.minimum(labels[0::2], labels[1::2]), np.maximum(labels[0::2], labels[1::2])
    K = sizes.size
    counts = np.bincount(a * K + b, minlength=K * K).reshape(K, K)
    i, j = np.triu_indices(K, 1)
    deviation = counts[i, j] - mean
    statistic, df = mahalanobis_statistic(deviation, sizes)
    dense, rank = _dense_statistic(deviation, cov)
    assert df == rank
    assert statistic == pytest.approx(dense, rel=1e-7, abs=1e-9)
    assert total_cross_variance(sizes) == pytest.approx(cov.sum(), rel=1e-9, abs=1e-9 * np.abs(cov).sum())


def test_degrees_of_freedom_by_group_sizes():
    # rank(Sigma) = k (k - 1) / 2 over the k groups with matched points, less one per group of one point
    import itertools

    for K in range(2, 6):
        for sizes in itertools.product(range(5), repeat=K):
            N = sum(sizes)
            if N % 2 or N < 4:
                continue
            k = sum(n > 0 for n in sizes)
            expected = max(0, k * (k - 1) // 2 - sum(n == 1 for n in sizes))
            assert mahalanobis_statistic(np.zeros(K * (K - 1) // 2), np.array(sizes))[1] == expected, sizes


def test_k2_moments_are_rosenbaums():
    for n, m in [(1, 3), (5, 7), (9, 9), (100, 36)]:
        N = n + m
        mean, cov = cross_count_moments(np.array([n, m]))
        assert mean[0] == pytest.approx(n * m / (N - 1), rel=1e-14)
        assert cov[0, 0] == pytest.approx(2 * n * (n - 1) * m * (m - 1) / ((N - 3) * (N - 1) ** 2), rel=1e-13)


def test_hand_computed_three_pairs():
    # Three far-apart pairs, each within one group: every cross count is 0, E = 4/5, Var = 32/75,
    # Cov = -8/75, so Sigma 1 = 16/75 1 and the statistic is 3 * (4/5) * (15/4) = 9 on 3 df.
    points = np.array([0.0, 0.1, 5.0, 5.1, 10.0, 10.1])
    res = pm.multi_crossmatch_test(points, ["a", "a", "b", "b", "c", "c"])
    assert res.statistic == pytest.approx(9.0, rel=1e-12) and res.df == 3
    from scipy.stats import chi2

    assert res.pvalue == pytest.approx(chi2.sf(9.0, 3), rel=1e-12)
    np.testing.assert_array_equal(res.counts, np.eye(3, dtype=np.int64))
    np.testing.assert_allclose(res.expected, np.where(np.eye(3) == 1, 0.2, 0.8))
    np.testing.assert_allclose(res.covariance(), np.where(np.eye(3) == 1, 32 / 75, -8 / 75), rtol=1e-13)
    np.testing.assert_allclose(res.pair_dev, -0.8 / np.sqrt(32 / 75), rtol=1e-13)
    assert res.cross == 0 and res.cross_expected == pytest.approx(2.4)
    assert list(res.groups) == ["a", "b", "c"] and list(res.sizes) == [2, 2, 2] and res.N == 6
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 12), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_random_points_and_labels_vs_reference(N, K, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(N, 2))  # ties included
    labels = rng.integers(0, K, size=N)
    labels[:2] = [0, 1]
    res = pm.multi_crossmatch_test(X, labels)
    mate = res.matching.mate.tolist()
    cost, _ = ref.min_weight_perfect_matching(cdist(X, X).tolist())
    assert res.matching.cost == pytest.approx(cost, rel=1e-12, abs=1e-12)
    groups, sizes, counts = ref.multi_crossmatch_counts(labels.tolist(), mate)
    assert list(res.groups) == groups and res.sizes.tolist() == sizes and res.counts.tolist() == counts
    statistic, df = ref.multi_crossmatch_statistic(labels.tolist(), mate)
    assert res.df == df
    assert res.statistic == pytest.approx(float(statistic), rel=1e-9, abs=1e-9)
    for g, test in zip(groups, res.group_tests):
        expected = ref.crossmatch_statistics((labels == g).astype(int).tolist(), mate)
        assert (test.statistic, test.pvalue) == (expected["a1"], pytest.approx(expected["pval"], rel=1e-10, abs=1e-14))


def test_two_groups_agree_with_crossmatch_test():
    rng = np.random.default_rng(1)
    for n, m, shift in [(20, 25, 0.0), (30, 30, 1.0), (11, 40, 0.5)]:
        x, y = rng.normal(size=(n, 3)), rng.normal(size=(m, 3)) + shift
        two = pm.crossmatch_test(x, y, alternative="two-sided")
        res = pm.multi_crossmatch_test(np.vstack([x, y]), np.repeat(["x", "y"], [n, m]))
        np.testing.assert_array_equal(res.matching.mate, two.matching.mate)
        assert res.df == 1 and res.cross == two.statistic and res.N == two.n_points
        assert res.statistic == pytest.approx(two.zscore**2, rel=1e-12)
        assert res.pvalue == pytest.approx(two.approx_pvalue, rel=1e-10)
        assert res.cross_dev == pytest.approx(two.zscore, rel=1e-12)
        assert res.pair_dev[0] == pytest.approx(two.zscore, rel=1e-12)
        less = pm.crossmatch_test(x, y)
        assert res.cross_pvalue == pytest.approx(less.approx_pvalue, rel=1e-10)
        assert res.group_tests[1].pvalue == less.pvalue and res.group_tests[1].statistic == less.statistic


def test_group_tests_are_each_group_against_the_rest_on_the_one_matching():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(0, 1, (25, 4)), rng.normal(0, 1, (20, 4)), rng.normal(2, 1, (30, 4))])
    labels = np.repeat([10, 20, 30], [25, 20, 30])
    res = pm.multi_crossmatch_test(X, labels, alternative="two-sided")
    assert res.matching.verify() and res.matching.dropped is not None  # 75 points: one is left out
    for g, test in enumerate(res.group_tests):
        assert test.matching is res.matching
        assert test.statistic == res.counts[g].sum() - res.counts[g, g] and test.n_y == res.sizes[g]
        z = (labels == res.groups[g]).astype(int)
        expected = ref.crossmatch_statistics(z.tolist(), res.matching.mate.tolist())
        assert test.statistic == expected["a1"] and test.variance == pytest.approx(expected["Va1"], rel=1e-12)
    # the matching of the distances is the same one (continuous data: the optimum is unique)
    alone = pm.crossmatch_test(D=cdist(X, X), labels=(labels == 30).astype(int))
    np.testing.assert_array_equal(alone.matching.mate, res.matching.mate)
    assert alone.statistic == res.group_tests[2].statistic


def test_null_calibration_and_power():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    labels = np.repeat(["a", "b", "c"], [15, 20, 25])
    pvalues = np.array([pm.multi_crossmatch_test(X, rng.permutation(labels), n_jobs=1).pvalue for _ in range(200)])
    # p-values roughly uniform under the null (an asymptotic test at N = 60)
    assert 0.4 < pvalues.mean() < 0.6
    assert 0.01 <= (pvalues < 0.05).mean() <= 0.1
    assert 0.05 <= (pvalues < 0.2).mean() <= 0.3
    shifted = X.copy()
    shifted[labels == "c"] += 2.0
    res = pm.multi_crossmatch_test(shifted, labels, n_jobs=1)
    assert res.pvalue < 1e-4
    table = res.to_frame()
    assert table["pvalue"].idxmax() == ("a", "b")  # the unshifted pair is the least unusual
    assert res.to_frame(by="group")["pvalue"].idxmin() == "c"


def test_labels_of_every_kind():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(16, 2))
    codes = np.repeat([0, 1, 2], [5, 5, 6])
    expected = pm.multi_crossmatch_test(X, codes)
    pd = pytest.importorskip("pandas")
    names = np.array(["ctrl", "stim", "zz"])[codes]
    for labels in (
        names,
        names.tolist(),
        pd.Categorical(names),
        pd.Series(names),
        codes.astype(np.float32),
        codes.astype(np.uint8)[:, None],
        np.array([b"a", b"b", b"c"])[codes],
    ):
        res = pm.multi_crossmatch_test(X, labels)
        assert (res.statistic, res.df) == (expected.statistic, expected.df)
        np.testing.assert_array_equal(res.counts, expected.counts)
    mixed = np.array([1, "b", (2, 3)], dtype=object)[codes]  # labels that do not sort: order of appearance
    res = pm.multi_crossmatch_test(X, mixed)
    assert list(res.groups) == [1, "b", (2, 3)] and res.statistic == expected.statistic
    assert pm.multi_crossmatch_test(X, codes == 0).groups.tolist() == [False, True]


def test_odd_n_and_a_group_of_one_point():
    X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.2], [100.0]])
    res = pm.multi_crossmatch_test(X, ["a", "b", "a", "b", "c", "c", "a"])
    assert res.matching.dropped == 6 and res.N == 6 and res.sizes.tolist() == [2, 2, 2]
    single = pm.multi_crossmatch_test(X[:6], ["a", "a", "b", "b", "b", "c"])
    # the lone c point is matched to someone: its two cross counts sum to 1, and the rank drops
    assert single.df == 2 and single.counts[2, :2].sum() == 1
    statistic, df = ref.multi_crossmatch_statistic(["a", "a", "b", "b", "b", "c"], single.matching.mate.tolist())
    assert df == 2 and single.statistic == pytest.approx(float(statistic), rel=1e-12)
    for rows in ([0, 1, 6], [0, 1, 2, 3, 6]):  # the b point is left out
        gone = pm.multi_crossmatch_test(X[rows], ["a"] * (len(rows) - 1) + ["b"])
        assert gone.N == len(rows) - 1 and gone.df == 0 and gone.statistic == 0.0 and gone.pvalue == 1.0
        assert np.isnan(gone.pair_dev[0]) and np.isnan(gone.cross_dev)


def test_to_frame():
    pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    labels = np.repeat(["a", "b", "c", "d"], 10)
    res = pm.multi_crossmatch_test(X, labels, alternative="greater")
    pairs = res.to_frame(correction="none")
    assert list(pairs.index) == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    np.testing.assert_array_equal(pairs["pvalue"], res.pair_pvalue)
    np.testing.assert_array_equal(pairs["pvalue_adj"], res.pair_pvalue)
    assert pairs.loc[("a", "c"), "count"] == res.counts[0, 2]
    np.testing.assert_allclose(pairs["dev"], (pairs["count"] - pairs["expected"]) / pairs["sd"], rtol=1e-12)
    groups = res.to_frame(by="group", correction="benjamini-hochberg")
    assert list(groups.index) == ["a", "b", "c", "d"] and (groups["n"] == 10).all()
    from scipy.special import ndtr

    assert res.cross_pvalue == pytest.approx(ndtr(-res.cross_dev))
    with pytest.raises(ValueError, match="by"):
        res.to_frame(by="cell")
    with pytest.raises(ValueError, match="correction"):
        res.to_frame(correction="bonferroni")
    np.testing.assert_allclose(np.sqrt(np.diag(res.covariance())), res.pair_sd, rtol=1e-14)
    many = pm.multi_crossmatch_test(np.arange(204.0), np.arange(204) // 2)  # 102 groups: 5151 pairs
    assert many.df == 5151 and many.cross == 0 and many.pvalue < 1e-12  # each group is one matched pair
    with pytest.raises(ValueError, match="pair_sd"):
        many.covariance()
    assert many.asdict()["df"] == 5151


def test_bad_input_names_the_argument():
    X = np.zeros((6, 2))
    X[:, 0] = np.arange(6)
    with pytest.raises(ValueError, match="labels must contain at least 2 groups"):
        pm.multi_crossmatch_test(X, ["a"] * 6)
    with pytest.raises(ValueError, match="labels has 5 labels but points has 6 rows"):
        pm.multi_crossmatch_test(X, ["a", "b"] * 2 + ["a"])
    with pytest.raises(ValueError, match="labels has 1 missing labels"):
        pm.multi_crossmatch_test(X, ["a", "b", None, "a", "b", "a"])
    with pytest.raises(ValueError, match="labels has 1 missing labels"):
        pm.multi_crossmatch_test(X, [0.0, 1.0, np.nan, 0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="labels must be 1-D"):
        pm.multi_crossmatch_test(X, np.zeros((6, 2)))
    with pytest.raises(ValueError, match="labels has 1001 groups; the test takes at most 1000"):
        pm.multi_crossmatch_test(np.arange(1002.0), np.minimum(np.arange(1002), 1000))
    with pytest.raises(ValueError, match="points"):
        pm.multi_crossmatch_test(np.array([[0.0], [np.inf]]), [0, 1])
    with pytest.raises(ValueError, match="points needs at least 2"):
        pm.multi_crossmatch_test(np.zeros((1, 2)), [0])
    with pytest.raises(ValueError, match="alternative"):
        pm.multi_crossmatch_test(X, [0, 1] * 3, alternative="smaller")
    with pytest.raises(ValueError, match="metric"):
        pm.multi_crossmatch_test(X, [0, 1] * 3, metric="bogus")
    with pytest.raises(TypeError, match="kk"):
        pm.multi_crossmatch_test(X, [0, 1] * 3, kk=1)
    with pytest.raises(ValueError, match="points"):
        pm.multi_crossmatch_test(np.zeros((4, 2)), [0, 1, 0, 1], metric="cosine")


def test_missing_labels_of_pandas_kinds():
    pd = pytest.importorskip("pandas")
    X = np.arange(8.0)
    for labels in (
        pd.array(["a", "b", None, "a"] * 2, dtype="string"),
        pd.Categorical(["a", None, "b", "a"] * 2),
        np.array(["2020-01-01", "NaT"] * 4, dtype="datetime64[D]"),
    ):
        with pytest.raises(ValueError, match="missing labels"):
            pm.multi_crossmatch_test(X, labels)
    with pytest.raises(ValueError, match="groupby has 2 missing labels"):
        pm.compare_groups(X[:, None], pd.array(["a", "b", None, "a"] * 2, dtype="string"))


def test_other_metrics_use_the_same_matching_as_crossmatch_test():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(12, 3)), rng.normal(size=(14, 3)) + 0.5
    for metric, kwargs in [("cityblock", {}), ("minkowski", {"p": 3}), ("cosine", {}), ("rank_mahalanobis", {})]:
        res = pm.multi_crossmatch_test(np.vstack([x, y]), [0] * 12 + [1] * 14, metric=metric, **kwargs)
        two = pm.crossmatch_test(x, y, metric=metric, **kwargs)
        assert res.cross == two.statistic and res.group_tests[1].pvalue == two.pvalue


def test_exact_rational_statistic_on_the_reference_matching():
    # The reference statistic is exact: on a case with a fraction-valued answer it is that fraction.
    statistic, df = ref.multi_crossmatch_statistic(list("aabbcc"), _chain_mate(6))
    assert (statistic, df) == (Fraction(9), 3)


def test_docstring_examples():
    import doctest

    from pairmetrics import _crossmatch_multi

    result = doctest.testmod(_crossmatch_multi, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_dask_input_is_gathered_and_string_labels_refused():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 3))
    codes = np.repeat([0, 1, 2], 10)
    expected = pm.multi_crossmatch_test(X, codes)
    res = pm.multi_crossmatch_test(da.from_array(X, chunks=7), da.from_array(codes, chunks=7))
    assert (res.statistic, res.df) == (expected.statistic, expected.df)
    np.testing.assert_array_equal(res.counts, expected.counts)
    with pytest.raises(TypeError, match="labels"):
        pm.multi_crossmatch_test(da.from_array(X, chunks=7), da.from_array(np.repeat(["a", "b", "c"], 10)))
    from pairmetrics.dask import matching

    limit = matching.MAX_GATHER_BYTES
    matching.MAX_GATHER_BYTES = 100
    try:
        with pytest.raises(ValueError, match="MAX_GATHER_BYTES"):
            pm.multi_crossmatch_test(da.from_array(X, chunks=7), codes)
    finally:
        matching.MAX_GATHER_BYTES = limit


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32, np.float64])
def test_point_dtypes_and_magnitudes(dtype):
    rng = np.random.default_rng(8)
    X = rng.integers(0, 2 if dtype == np.bool_ else 6, size=(30, 3))
    labels = np.repeat(["a", "b", "c"], 10)
    res = pm.multi_crossmatch_test(X.astype(dtype), labels)
    same = pm.multi_crossmatch_test(X.astype(dtype).astype(np.float64), labels)
    assert res.matching.cost == pytest.approx(same.matching.cost, rel=1e-9, abs=1e-12)
    if dtype == np.float64:
        jittered = X + rng.normal(size=X.shape) * 1e-3  # one optimal matching
        plain = pm.multi_crossmatch_test(jittered, labels)
        for scale in (2.0**-480, 2.0**480):  # the matching, hence the result, does not depend on the scale
            scaled = pm.multi_crossmatch_test(jittered * scale, labels)
            np.testing.assert_array_equal(scaled.matching.mate, plain.matching.mate)
            assert (scaled.statistic, scaled.pvalue) == (plain.statistic, plain.pvalue)


def test_dask_points_with_string_labels_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(9)
    X = rng.normal(size=(24, 2))
    labels = np.repeat(["x", "y", "z"], 8)
    res = pm.multi_crossmatch_test(da.from_array(X, chunks=5), labels, rng=1)
    assert res == pm.multi_crossmatch_test(X, labels, rng=1)


def test_null_calibration_on_tied_counts():
    # Three samples of one count distribution: the matching must not see the labels (rows arrive grouped by
    # sample, and ties broken by row order paired copies of a point inside one sample).
    from scipy.stats import kstest

    gen = np.random.default_rng(21)
    labels = np.repeat(["a", "b", "c"], 20)
    results = [pm.multi_crossmatch_test(gen.poisson(1.0, size=(60, 3)), labels, rng=gen, n_jobs=1) for _ in range(200)]
    pvalues = np.array([r.pvalue for r in results])
    assert 0.35 < pvalues.mean() < 0.65 and (pvalues < 0.05).mean() <= 0.1  # asymptotic chi-square
    # each group's exact test against the rest, made continuous by randomisation, is uniform
    uniform = []
    for r in results:
        test = r.group_tests[0]
        null = pm.crossmatch_null_distribution(test.n_points, test.n_y)
        i = int(np.searchsorted(null.a1, test.statistic))
        uniform.append(null.cdf[i] - null.pmf[i] + gen.uniform() * null.pmf[i])
    assert kstest(uniform, "uniform").pvalue > 1e-3
    binary = gen.integers(0, 2, size=(60, 3))
    seeded = pm.multi_crossmatch_test(binary, labels, rng=4)
    assert seeded == pm.multi_crossmatch_test(binary, labels, rng=4) and sorted(seeded.order) == list(range(60))
    assert (seeded.group_tests[1].order == seeded.order).all() and seeded.matching.verify()
