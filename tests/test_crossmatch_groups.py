"""crossmatch_groups: each group against a reference, on AnnData objects and plain arrays."""

import numpy as np
import pairmetrics as pm
import pytest
from pairmetrics._crossmatch_groups import adjust_pvalues

pd = pytest.importorskip("pandas")
anndata = pytest.importorskip("anndata")
sparse = pytest.importorskip("scipy.sparse")


def _adata(rng, sizes=(30, 25, 20), shifts=(0.0, 2.0, 0.3), d=6):
    X = np.vstack([rng.normal(s, 1.0, (n, d)) for n, s in zip(sizes, shifts)])
    names = ["ctrl", "stim", "other"]
    labels = np.repeat(names, sizes)
    obs = pd.DataFrame({"condition": pd.Categorical(labels), "as_str": labels.astype(str)},
                       index=[f"cell{i}" for i in range(len(labels))])  # fmt: skip
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
    table = pm.crossmatch_groups(adata, "condition", reference="ctrl")
    assert list(table.index) == ["other", "stim"]
    X = adata.obsm["X_pca"]
    labels = adata.obs["condition"].astype(str).to_numpy()
    for group in table.index:
        res = pm.crossmatch_test(X[labels == group], X[labels == "ctrl"])
        row = table.loc[group]
        assert row["a1"] == res.statistic and row["pvalue"] == res.pvalue
        assert row["Ea1"] == res.expected and row["Va1"] == res.variance and row["dev"] == res.zscore
        assert row["n_cells"] == (labels == group).sum() and row["n_reference"] == 30
    assert table.loc["stim", "pvalue"] < 1e-3
    np.testing.assert_allclose(table["pvalue_adj"], _holm_sidak_loop(list(table["pvalue"])))


def test_rest_reference_string_column_and_array_input_agree():
    rng = np.random.default_rng(2)
    adata = _adata(rng)
    from_adata = pm.crossmatch_groups(adata, "as_str")
    from_arrays = pm.crossmatch_groups(adata.obsm["X_pca"], adata.obs["as_str"].to_numpy())
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
    table = pm.crossmatch_groups(view, "condition", reference="ctrl", use_rep=None)  # sparse X, densified per test
    dense = view.X.toarray()
    labels = view.obs["condition"].astype(str).to_numpy()
    res = pm.crossmatch_test(dense[labels == "stim"], dense[labels == "ctrl"])
    assert table.loc["stim", "pvalue"] == res.pvalue
    with pytest.raises(ValueError, match="view"):
        pm.crossmatch_groups(view, "condition", key_added="partner")
    pm.crossmatch_groups(adata, "condition", reference="ctrl", groups=["stim"], key_added="partner")
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
    table = pm.crossmatch_groups(X, labels, correction="benjamini-hochberg")
    assert table.loc["single", "n_cells"] == 1
    from scipy.stats import false_discovery_control

    np.testing.assert_allclose(table["pvalue_adj"], false_discovery_control(table["pvalue"].to_numpy()))
    none = pm.crossmatch_groups(X, labels, correction="none")
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
        pm.crossmatch_groups(adata, "condition", reference="missing")
    with pytest.raises(ValueError, match="groupby='nope'"):
        pm.crossmatch_groups(adata, "nope")
    with pytest.raises(ValueError, match="use_rep='X_umap'"):
        pm.crossmatch_groups(adata, "condition", use_rep="X_umap")
    with pytest.raises(ValueError, match="groups"):
        pm.crossmatch_groups(adata, "condition", groups=["stim", "unknown"])
    with pytest.raises(ValueError, match="correction"):
        pm.crossmatch_groups(adata, "condition", correction="bonferroni")
    adata.obs["with_missing"] = adata.obs["as_str"].where(np.arange(adata.n_obs) > 0)
    with pytest.raises(ValueError, match="missing labels"):
        pm.crossmatch_groups(adata, "with_missing")
    with pytest.raises(ValueError, match="labels but data has"):
        pm.crossmatch_groups(np.zeros((5, 2)), ["a", "b"])
    with pytest.raises(ValueError, match="key_added needs AnnData"):
        pm.crossmatch_groups(np.zeros((4, 2)), ["a", "a", "b", "b"], key_added="partner")
