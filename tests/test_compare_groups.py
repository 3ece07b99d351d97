"""compare_groups: each group against a reference (cross-match, energy, MMD), on AnnData objects and plain arrays."""

import numpy as np
import pairmetrics as pm
import pytest
from pairmetrics._inference import adjust_pvalues

pd = pytest.importorskip("pandas")
anndata = pytest.importorskip("anndata")
sparse = pytest.importorskip("scipy.sparse")


def _adata(rng, sizes=(30, 25, 20), shifts=(0.0, 2.0, 0.3), d=6):
    X = np.vstack([rng.normal(s, 1.0, (n, d)) for n, s in zip(sizes, shifts)])
    names = ["ctrl", "stim", "other"]
    labels = np.repeat(names, sizes)
    obs = pd.DataFrame(
        {"condition": pd.Categorical(labels), "as_str": labels.astype(str)},
        index=[f"cell{i}" for i in range(len(labels))],
    )
    adata = anndata.AnnData(X=sparse.csr_matrix(X), obs=obs)
    adata.obsm["X_pca"] = X[:, :4].copy()
    return adata


def _holm_sidak_loop(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, 1 - (1 - p[i]) ** (m - rank))
        out[i] = min(running, 1.0)
    return out


def test_pvalues_equal_crossmatch_test_on_the_same_slices():
    rng = np.random.default_rng(1)
    adata = _adata(rng)
    table = pm.compare_groups(adata, "condition", reference="ctrl")
    assert list(table.index) == ["other", "stim"]
    X = adata.obsm["X_pca"]
    labels = adata.obs["condition"].astype(str).to_numpy()
    for group in table.index:
        res = pm.crossmatch_test(X[labels == group], X[labels == "ctrl"])
        row = table.loc[group]
        assert row["statistic"] == res.statistic and row["pvalue"] == res.pvalue
        assert row["expected"] == res.expected and row["variance"] == res.variance and row["zscore"] == res.zscore
        assert row["n_cells"] == (labels == group).sum() and row["n_reference"] == 30
    assert table.loc["stim", "pvalue"] < 1e-3
    np.testing.assert_allclose(table["pvalue_adj"], _holm_sidak_loop(list(table["pvalue"])))


def test_rest_reference_string_column_and_array_input_agree():
    rng = np.random.default_rng(2)
    adata = _adata(rng)
    from_adata = pm.compare_groups(adata, "as_str")
    from_arrays = pm.compare_groups(adata.obsm["X_pca"], adata.obs["as_str"].to_numpy())
    pd.testing.assert_frame_equal(from_adata, from_arrays)
    labels = adata.obs["as_str"].to_numpy()
    X = adata.obsm["X_pca"]
    res = pm.crossmatch_test(X[labels == "stim"], X[labels != "stim"])
    assert from_adata.loc["stim", "pvalue"] == res.pvalue


def test_views_sparse_x_and_key_added():
    rng = np.random.default_rng(3)
    adata = _adata(rng)
    view = adata[adata.obs["condition"] != "other"]
    assert view.is_view
    table = pm.compare_groups(view, "condition", reference="ctrl", use_rep=None)  # sparse X, densified per test
    dense = view.X.toarray()
    labels = view.obs["condition"].astype(str).to_numpy()
    res = pm.crossmatch_test(dense[labels == "stim"], dense[labels == "ctrl"])
    assert table.loc["stim", "pvalue"] == res.pvalue
    with pytest.raises(ValueError, match="view"):
        pm.compare_groups(view, "condition", key_added="partner")
    pm.compare_groups(adata, "condition", reference="ctrl", categories=["stim"], key_added="partner")
    partners = adata.obs["partner"]
    stim = adata.obs_names[adata.obs["condition"] == "stim"]
    pool = set(stim) | set(adata.obs_names[adata.obs["condition"] == "ctrl"])
    assert partners[stim].notna().sum() >= len(stim) - 1  # at most the one odd cell is unmatched
    assert set(partners[stim].dropna()) <= pool
    assert partners[adata.obs["condition"] == "other"].isna().all()
    for cell, mate in partners[stim].dropna().items():
        if mate in set(stim):
            assert partners[mate] == cell  # a stim-stim pair is recorded from both ends


def test_group_of_one_cell_and_multiple_testing_choices():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(21, 3))
    labels = np.array(["a"] * 10 + ["b"] * 10 + ["single"])
    table = pm.compare_groups(X, labels, correction="benjamini-hochberg")
    assert table.loc["single", "n_cells"] == 1
    from scipy.stats import false_discovery_control

    np.testing.assert_allclose(table["pvalue_adj"], false_discovery_control(table["pvalue"].to_numpy()))
    none = pm.compare_groups(X, labels, correction="none")
    np.testing.assert_array_equal(none["pvalue_adj"], none["pvalue"])


def test_adjust_pvalues_holm_sidak_matches_a_plain_loop():
    rng = np.random.default_rng(5)
    for m in (1, 2, 7, 30):
        p = rng.uniform(size=m) ** 3
        # the loop's 1 - (1 - p)**k loses digits for small p; ours keeps them
        np.testing.assert_allclose(adjust_pvalues(p, "holm-sidak"), _holm_sidak_loop(list(p)), rtol=1e-6)
    np.testing.assert_allclose(adjust_pvalues(np.array([1e-20, 0.5]), "holm-sidak"), [2e-20, 0.5], rtol=1e-12)
    np.testing.assert_allclose(adjust_pvalues(np.array([0.0, 1.0, 0.5]), "holm-sidak"), [0.0, 1.0, 0.75])


def test_bad_input_names_the_argument():
    rng = np.random.default_rng(6)
    adata = _adata(rng)
    with pytest.raises(ValueError, match="reference='missing'"):
        pm.compare_groups(adata, "condition", reference="missing")
    with pytest.raises(ValueError, match="groupby='nope'"):
        pm.compare_groups(adata, "nope")
    with pytest.raises(ValueError, match="use_rep='X_umap'"):
        pm.compare_groups(adata, "condition", use_rep="X_umap")
    with pytest.raises(ValueError, match="categories"):
        pm.compare_groups(adata, "condition", categories=["stim", "unknown"])
    with pytest.raises(ValueError, match="correction"):
        pm.compare_groups(adata, "condition", correction="bonferroni")
    adata.obs["with_missing"] = adata.obs["as_str"].where(np.arange(adata.n_obs) > 0)
    with pytest.raises(ValueError, match="missing labels"):
        pm.compare_groups(adata, "with_missing")
    with pytest.raises(ValueError, match="labels but data has"):
        pm.compare_groups(np.zeros((5, 2)), ["a", "b"])
    with pytest.raises(ValueError, match="key_added needs AnnData"):
        pm.compare_groups(np.zeros((4, 2)), ["a", "a", "b", "b"], key_added="partner")


@pytest.mark.parametrize("test", ["energy", "mmd"])
def test_energy_and_mmd_equal_their_functions_on_the_same_slices(test):
    rng = np.random.default_rng(7)
    adata = _adata(rng)
    table = pm.compare_groups(adata, "condition", test=test, reference="ctrl", n_resamples=99, rng=3)
    X = adata.obsm["X_pca"]
    labels = adata.obs["condition"].astype(str).to_numpy()
    generator = np.random.default_rng(3)  # one generator, the categories in order
    for group in ["other", "stim"]:
        run = pm.energy_test if test == "energy" else pm.mmd_test
        res = run(X[labels == group], X[labels == "ctrl"], n_resamples=99, rng=generator)
        row = table.loc[group]
        assert row["statistic"] == res.statistic and row["pvalue"] == res.pvalue
        own = "energy_distance" if test == "energy" else "gamma"
        assert row[own] == getattr(res, own)
    assert list(table.columns) == ["n_cells", "n_reference", "statistic", own, "pvalue", "pvalue_adj"]
    assert table.loc["stim", "pvalue"] == 0.01


def test_labels_one_and_string_one_stay_apart():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 3))
    labels = np.array([1] * 10 + ["1"] * 10 + ["ref"] * 10, dtype=object)
    table = pm.compare_groups(X, labels, reference="ref")
    assert len(table) == 2 and table["n_cells"].tolist() == [10, 10]
    obs = pd.DataFrame({"mixed": labels}, index=[f"c{i}" for i in range(30)])
    adata = anndata.AnnData(X=X, obs=obs)
    adata.obsm["X_pca"] = X
    from_adata = pm.compare_groups(adata, "mixed", reference="ref", categories=[1])
    assert from_adata["n_cells"].tolist() == [10]
    res = pm.crossmatch_test(X[:10], X[20:])
    assert from_adata["pvalue"].iloc[0] == res.pvalue


def test_single_category_names_groupby():
    rng = np.random.default_rng(9)
    adata = _adata(rng)
    adata.obs["one"] = "same"
    with pytest.raises(ValueError, match=r"groupby \('one'\) has a single category"):
        pm.compare_groups(adata, "one")
    with pytest.raises(ValueError, match="groupby .* single category"):
        pm.compare_groups(np.zeros((4, 2)), ["a"] * 4)


def test_nan_in_the_representation_names_use_rep():
    rng = np.random.default_rng(10)
    adata = _adata(rng)
    adata.obsm["X_pca"][3, 1] = np.nan
    with pytest.raises(ValueError, match=r"adata.obsm\['X_pca'\] \(use_rep='X_pca'\) contains NaN"):
        pm.compare_groups(adata, "condition")
    with pytest.raises(ValueError, match="data contains NaN"):
        pm.compare_groups(adata.obsm["X_pca"], adata.obs["as_str"].to_numpy(), test="energy")


def test_options_of_another_test_are_refused():
    rng = np.random.default_rng(11)
    adata = _adata(rng)
    with pytest.raises(ValueError, match="kernel applies to test='mmd' only"):
        pm.compare_groups(adata, "condition", kernel="laplacian")
    with pytest.raises(ValueError, match="alternative applies to test='crossmatch' only"):
        pm.compare_groups(adata, "condition", test="energy", alternative="greater")
    with pytest.raises(ValueError, match="key_added applies to test='crossmatch' only"):
        pm.compare_groups(adata, "condition", test="mmd", key_added="partner")
    with pytest.raises(ValueError, match="test must be one of"):
        pm.compare_groups(adata, "condition", test="t-test")
    with pytest.raises(ValueError, match="n_resamples"):
        pm.compare_groups(adata, "condition", test="energy", n_resamples=0)
    assert "crossmatch_groups" not in pm.__all__ and "compare_groups" in pm.__all__


def test_docstring_examples():
    import doctest

    from pairmetrics import _compare_groups

    result = doctest.testmod(_compare_groups, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
