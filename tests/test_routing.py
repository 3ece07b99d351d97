"""Every public function that takes arrays either has a Dask path or refuses Dask input; none gathers silently."""

import inspect

import numpy as np
import pytest

dask = pytest.importorskip("dask")
import dask.array as da  # noqa: E402
import pairmetrics as pm  # noqa: E402
from pairmetrics import _routing  # noqa: E402

RNG = np.random.default_rng(0)
N = 12
SCORES = RNG.random(N)
LABELS = RNG.integers(0, 3, N).astype(np.float64)
BINARY = np.array([0, 1] * (N // 2))
Y2 = RNG.random((N, 3))
P2 = RNG.random((N, 3))
X = RNG.random((N, 2))
D = np.abs(X[:, None, 0] - X[None, :, 0])
Z = np.array([0, 1] * (N // 2))
INDICATORS = pm.to_indicators(LABELS, [0.0, 1.0, 2.0])
CUTS = pm.to_cuts(LABELS, [0.0, 1.0, 2.0])
# distinct times, the latest one censored (so the censoring distribution stays positive)
SURVIVAL = np.array(list(zip(BINARY == 0, np.arange(1.0, N + 1))), dtype=[("event", "?"), ("time", "<f8")])

# One call per public function, with numpy arrays; each array is passed as a dask array below.
CALLS = {
    "paired_eval": ((SCORES, LABELS), {}),
    "paired_evaluation": ((LABELS, SCORES), {}),
    "two_vs_two": ((Y2, P2), {}),
    "two_vs_two_permutation_test": ((Y2, P2), {"n_resamples": 2, "rng": 0}),
    "min_weight_perfect_matching": ((), {"points": X}),
    "rank_mahalanobis": ((X,), {}),
    "crossmatch_test": ((X[:6], X[6:]), {}),
    "crossmatch_null_distribution": ((np.int64(N), 6), {}),
    "compare_groups": ((X, Z), {}),
    "energy_distance": ((X[:6], X[6:]), {}),
    "energy_test": ((X[:6], X[6:]), {"n_resamples": 5, "rng": 0}),
    "mmd": ((X[:6], X[6:]), {}),
    "mmd_test": ((X[:6], X[6:]), {"n_resamples": 5, "rng": 0}),
    "multi_crossmatch_test": ((X, LABELS), {}),
    "crossmatch_resample": ((X[:6], X[6:]), {"sample_size": 3, "n_resamples": 2, "rng": 0}),
    "zero_one_error": ((BINARY, BINARY[::-1].copy()), {}),
    "absolute_error": ((SCORES, LABELS), {}),
    "sum_squares_error": ((SCORES, LABELS), {}),
    "rms_error": ((SCORES, LABELS), {}),
    "worst_case_error": ((SCORES, LABELS), {}),
    "likelihood": ((BINARY, SCORES), {}),
    "log_likelihood": ((BINARY, SCORES), {}),
    "log_loss": ((BINARY, SCORES), {}),
    "best_constant": ((SCORES, "squares"), {}),
    "to_indicators": ((LABELS, np.array([0.0, 1.0, 2.0])), {}),
    "to_cuts": ((LABELS, np.array([0.0, 1.0, 2.0])), {}),
    "from_indicators": ((INDICATORS, np.array([0.0, 1.0, 2.0])), {}),
    "from_cuts": ((CUTS, np.array([0.0, 1.0, 2.0])), {}),
    "check_cuts": ((CUTS,), {}),
    "multilabel_counts": ((INDICATORS, INDICATORS[::-1].copy()), {}),
    "roc_auc_score": ((BINARY, SCORES), {}),
    "average_precision_score": ((BINARY, SCORES), {}),
    "kendalltau": ((LABELS, SCORES), {}),
    "somersd": ((LABELS, SCORES), {}),
    "weightedtau": ((LABELS, SCORES), {}),
    "spearmanr": ((LABELS, SCORES), {}),
    "mannwhitneyu": ((SCORES[:10], SCORES[10:]), {}),
    "roc_curve": ((BINARY, SCORES), {}),
    "precision_recall_curve": ((BINARY, SCORES), {}),
    "det_curve": ((BINARY, SCORES), {}),
    "ndcg_score": ((INDICATORS, INDICATORS[::-1].astype(float)), {}),
    "dcg_score": ((INDICATORS, INDICATORS[::-1].astype(float)), {}),
    "label_ranking_average_precision_score": ((INDICATORS, INDICATORS[::-1].astype(float)), {}),
    "coverage_error": ((INDICATORS, INDICATORS[::-1].astype(float)), {}),
    "label_ranking_loss": ((INDICATORS, INDICATORS[::-1].astype(float)), {}),
    "top_k_accuracy_score": ((LABELS.astype(int), INDICATORS.astype(float) + 0.1 * np.arange(3)), {"k": 2}),
    "concordance_index": ((LABELS, SCORES, BINARY), {}),
    "concordance_index_censored": ((BINARY.astype(bool), LABELS, SCORES), {}),
    "concordance": ((LABELS + 1.0, BINARY, SCORES), {}),
    "compare_models": ((LABELS, np.vstack([SCORES, SCORES[::-1]])), {}),
    "concordance_index_ipcw": ((SURVIVAL, SURVIVAL, SCORES), {}),
    "cumulative_dynamic_auc": ((SURVIVAL, SURVIVAL, SCORES, np.array([5.0])), {}),
    "bootstrap": ((SCORES[None, :], np.mean), {"n_resamples": 20, "rng": 0}),  # data: a sequence of one array
}


def _public_functions():
    """Every public function: the top level's and each peer namespace's."""
    modules = [pm, pm.sklearn, pm.scipy, pm.lifelines, pm.sksurv, pm.pairedeval]
    return {name: getattr(m, name) for m in modules for name in m.__all__ if inspect.isfunction(getattr(m, name))}


def _lazy(value):
    """Arrays (and numpy integers, as 0-d arrays) as dask arrays; other values as they are."""
    if isinstance(value, np.integer):
        return da.from_array(np.asarray(value))
    return da.from_array(value, chunks=5) if isinstance(value, np.ndarray) else value


@pytest.fixture
def no_gathering(monkeypatch):
    """A dask array that numpy converts raises: np.asarray on a Dask collection fails the test."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("a dask array was converted with np.asarray (a silent gather)")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    with dask.config.set(scheduler="synchronous"):
        yield


def test_every_public_function_is_listed_and_routed():
    functions = _public_functions()
    assert set(CALLS) == set(functions), "add the new public function to CALLS"
    unrouted = [name for name, f in functions.items() if f not in _routing.PUBLIC_FUNCTIONS]
    assert unrouted == []
    import pairmetrics.dask  # noqa: F401  (registers the implementations)

    assert all(public in _routing.PUBLIC_FUNCTIONS for public in _routing._DASK)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_dask_input_runs_on_its_path_or_is_refused(name, no_gathering):
    function = _public_functions()[name]
    args, kwargs = CALLS[name]
    function(*args, **kwargs)  # the numpy call is valid
    lazy_args = [_lazy(a) for a in args]
    lazy_kwargs = {k: _lazy(v) for k, v in kwargs.items()}
    import pairmetrics.dask  # noqa: F401

    if function in _routing._DASK:
        function(*lazy_args, **lazy_kwargs)
    else:
        with pytest.raises(TypeError, match="does not take Dask collections"):
            function(*lazy_args, **lazy_kwargs)


def test_the_refusal_comes_before_any_work(no_gathering):
    with pytest.raises(TypeError, match=r"to_cuts\(\) does not take Dask collections"):
        pm.to_cuts(da.from_array(LABELS, chunks=5), [0.0, 1.0, 2.0])


def test_the_fixture_catches_a_gather(no_gathering):
    with pytest.raises(AssertionError, match="silent gather"):
        np.asarray(da.from_array(SCORES, chunks=5))


def test_dask_arrays_inside_a_list_are_refused_not_gathered(no_gathering):
    rows = [da.from_array(SCORES, chunks=5), da.from_array(SCORES[::-1].copy(), chunks=5)]
    with pytest.raises(TypeError, match=r"compare_models\(\) does not take Dask collections inside a list"):
        pm.compare_models(LABELS, rows)
    with pytest.raises(TypeError, match="pass one Dask array"):
        pm.compare_models(LABELS, rows)
    with pytest.raises(TypeError, match=r"to_cuts\(\) does not take Dask collections inside a list or tuple;"):
        pm.to_cuts([da.from_array(LABELS, chunks=5)], [0.0, 1.0, 2.0])
    pm.compare_models(LABELS, da.stack(rows))  # one dask array: computed on its path
    assert pm.pairedeval.paired_eval(list(SCORES), list(LABELS)) == pm.pairedeval.paired_eval(
        SCORES, LABELS
    )  # lists of numbers


def test_anndata_holding_dask_arrays_is_refused_not_gathered(no_gathering):
    anndata = pytest.importorskip("anndata")
    pd = pytest.importorskip("pandas")
    adata = anndata.AnnData(X=np.asarray(X), obs=pd.DataFrame({"group": np.where(Z == 1, "a", "b")}))
    adata.obsm["X_pca"] = da.from_array(X, chunks=5)
    with pytest.raises(TypeError, match=r"compare_groups\(\) does not take Dask collections in the AnnData"):
        pm.compare_groups(adata, "group")
