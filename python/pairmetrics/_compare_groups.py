"""Each group of cells against a reference (AnnData or arrays) with a two-sample test: cross-match, energy or MMD."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._crossmatch import crossmatch_test
from ._distance_tests import ESTIMATORS, KERNELS, energy_test, mmd_test
from ._inference import CORRECTIONS, adjust_pvalues
from ._metric_transforms import DEFAULT_MAX_MATRIX_BYTES, check_max_matrix_bytes
from ._routing import is_dask, refusal, routed
from ._typing import ArrayLike, NJobs, Seed
from ._validation import (
    check_choice,
    check_int,
    check_no_missing_labels,
    check_progress,
    check_rng,
    nonfinite_error,
    resolve_n_jobs,
)

if TYPE_CHECKING:
    import pandas as pd
    from anndata import AnnData

__all__ = ["compare_groups"]

TESTS = ("crossmatch", "energy", "mmd")
# Columns of each test after n_cells, n_reference and statistic (then pvalue, pvalue_adj).
_TEST_COLUMNS = {"crossmatch": ["expected", "variance", "zscore"], "energy": ["energy_distance"], "mmd": ["gamma"]}


def _labels_and_points(data: Any, groupby: Any, use_rep: str | None) -> tuple[np.ndarray, list[Any], Any, Any, str]:
    """Labels (object array, values kept as they are), the categories in order, the points (rows = cells),
    the obs names (None for arrays) and the points' name for messages."""
    if hasattr(data, "obs") and hasattr(data, "obsm"):
        if not isinstance(groupby, str):
            raise TypeError(f"groupby must name a column of adata.obs, got {type(groupby).__name__}")
        if groupby not in data.obs.columns:
            raise ValueError(f"groupby={groupby!r} is not a column of adata.obs")
        if use_rep is None:
            points, where = data.X, "adata.X"
        elif use_rep not in data.obsm:
            raise ValueError(f"use_rep={use_rep!r} is not a key of adata.obsm (keys: {list(data.obsm.keys())})")
        else:
            points, where = data.obsm[use_rep], f"adata.obsm[{use_rep!r}] (use_rep={use_rep!r})"
        if is_dask(points):  # AnnData holds dask arrays; reading rows of them would gather them
            raise refusal("compare_groups", "in the AnnData object")
        column = data.obs[groupby]
        name = f"adata.obs[{groupby!r}] (groupby)"
        labels = np.asarray(column.to_numpy(dtype=object), dtype=object)
        check_no_missing_labels(labels, name)
        present = set(labels)
        if hasattr(column, "cat"):
            categories = [c for c in column.cat.categories if c in present]
        else:
            categories = _ordered(labels)
        return labels, categories, points, data.obs_names, where
    labels = np.asarray(groupby, dtype=object)
    if labels.ndim != 1:
        raise ValueError(f"groupby must be 1-D labels for array input, got shape {labels.shape}")
    if labels.shape[0] != np.shape(data)[0]:
        raise ValueError(f"groupby has {labels.shape[0]} labels but data has {np.shape(data)[0]} rows")
    check_no_missing_labels(labels, "groupby")
    return labels, _ordered(labels), data, None, "data"


def _ordered(labels: np.ndarray) -> list[Any]:
    """The distinct labels, sorted when they sort (else in order of appearance); 1 and "1" stay apart."""
    distinct = list(dict.fromkeys((isinstance(v, (str, bytes)), v) for v in labels))
    try:
        return sorted(v for _, v in distinct)
    except TypeError:
        return [v for _, v in distinct]


def _check_points(points: Any, where: str) -> None:
    """Refuse NaN or infinite values in the representation, naming it."""
    values = points.data if hasattr(points, "toarray") else np.asarray(points)
    values = np.asarray(values)
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        bad = np.flatnonzero(~np.isfinite(values.ravel()))
        raise nonfinite_error(where, bool(np.isnan(values.ravel()[bad[0]])), int(bad[0]), int(bad.size))


def _mask(labels: np.ndarray, value: Any) -> np.ndarray:
    """Rows whose label is ``value`` (same type family: 1 and "1" differ, 1 and 1.0 do not)."""
    return np.fromiter((_same_label(v, value) for v in labels), dtype=bool, count=labels.size)


def _same_label(a: Any, b: Any) -> bool:
    if isinstance(a, (str, bytes)) != isinstance(b, (str, bytes)):
        return False
    return bool(a == b)


def _tested(categories: list[Any], selection: str | Sequence[Any], reference: Any, groupby_name: str) -> list[Any]:
    if len(categories) < 2:
        raise ValueError(
            f"groupby ({groupby_name}) has a single category ({categories[0]!r}): there is nothing to compare it with"
        )

    def contains(value: Any) -> bool:
        return any(_same_label(c, value) for c in categories)

    if not (isinstance(reference, str) and reference == "rest") and not contains(reference):
        raise ValueError(f"reference={reference!r} is not a category of groupby (categories: {categories})")
    if isinstance(selection, str):
        if selection != "all":
            raise ValueError(f"categories must be 'all' or a list of categories of groupby, got {selection!r}")
        chosen = list(categories)
    else:
        chosen = list(selection)
        unknown = [c for c in chosen if not contains(c)]
        if unknown:
            raise ValueError(f"categories {unknown} are not categories of groupby (categories: {categories})")
    chosen = [c for c in chosen if not _same_label(c, reference)]
    if not chosen:
        raise ValueError("no category to test: every chosen category is the reference")
    return chosen


def _rows(points: Any, mask: np.ndarray) -> np.ndarray:
    """Dense float rows of the selected cells (sparse matrices are densified per slice)."""
    rows = points[mask]
    if hasattr(rows, "toarray"):
        rows = rows.toarray()
    return np.asarray(rows)


def _test_options(test: str, **given: Any) -> dict[str, Any]:
    """The validated keywords of the chosen test's function; an option of another test, changed from its
    default, is refused."""
    check_choice(test, "test", TESTS)
    defaults = {
        "alternative": "less",
        "max_matrix_bytes": DEFAULT_MAX_MATRIX_BYTES,
        "key_added": None,
        "kernel": "rbf",
        "gamma": None,
        "estimator": "v-statistic",
    }
    users = {
        "alternative": ("crossmatch",),
        "max_matrix_bytes": ("crossmatch",),
        "key_added": ("crossmatch",),
        "kernel": ("mmd",),
        "gamma": ("mmd",),
        "estimator": ("energy", "mmd"),
    }
    for name, tests in users.items():
        value, default = given[name], defaults[name]
        if test not in tests and not (value is default or value == default):
            used_by = " or ".join(repr(t) for t in tests)
            raise ValueError(f"{name} applies to test={used_by} only, not to test={test!r}")
    resolve_n_jobs(given["n_jobs"])
    check_max_matrix_bytes(given["max_matrix_bytes"])
    check_choice(given["kernel"], "kernel", KERNELS)
    check_choice(given["estimator"], "estimator", ESTIMATORS)
    # one generator for every comparison: the cross-match's tie order, the permutations of the others
    options = {"metric": given["metric"], "n_jobs": given["n_jobs"], "rng": check_rng(given["rng"])}
    if test == "crossmatch":
        return {**options, "alternative": given["alternative"], "max_matrix_bytes": given["max_matrix_bytes"]}
    options.update(n_resamples=check_int(given["n_resamples"], "n_resamples", low=1))
    options["estimator"] = given["estimator"]
    if test == "mmd":
        options.update(kernel=given["kernel"], gamma=given["gamma"])
    return options


@routed
def compare_groups(
    data: ArrayLike | AnnData,
    groupby: str | ArrayLike,
    *,
    test: Literal["crossmatch", "energy", "mmd"] = "crossmatch",
    reference: Hashable = "rest",
    categories: str | Sequence[Hashable] = "all",
    use_rep: str | None = "X_pca",
    n_resamples: int = 9999,
    correction: Literal["holm-sidak", "benjamini-hochberg", "none"] = "holm-sidak",
    key_added: str | None = None,
    rng: Seed = None,
    metric: str = "euclidean",
    alternative: Literal["less", "greater", "two-sided"] = "less",
    kernel: str = "rbf",
    gamma: float | None = None,
    estimator: str = "v-statistic",
    n_jobs: NJobs = None,
    progress: bool = False,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
) -> pd.DataFrame:
    """A two-sample test of every group of cells against a reference: cross-match, energy or MMD.

    Follows scanpy's conventions: each category of ``adata.obs[groupby]`` is
    tested against ``reference`` (another category, or ``"rest"``) on
    ``adata.obsm[use_rep]``; p-values are adjusted for the categories tested.

    Parameters
    ----------
    data : AnnData or array_like, shape (n_cells, d)
        An AnnData object (views too), or the points themselves.
    groupby : str or array_like
        The ``adata.obs`` column with the groups, or one label per row for
        array input. Labels compare by value (``1`` and ``"1"`` differ);
        missing labels are refused (filter those cells out first).
    test : {"crossmatch", "energy", "mmd"}
        :func:`crossmatch_test` (exact p-value), :func:`energy_test` or
        :func:`mmd_test` (permutation p-values).
    reference : label
        The category each category is compared with, or ``"rest"``.
    categories : "all" or list of labels
        The categories to test (the reference itself is skipped).
    use_rep : str or None
        The ``adata.obsm`` key of the points; None uses ``adata.X`` (a sparse
        ``X`` is densified one test at a time). Ignored for array input.
    n_resamples : int
        Permutations of each energy or MMD test.
    correction : {"holm-sidak", "benjamini-hochberg", "none"}
        Adjustment of ``pvalue`` into ``pvalue_adj`` (Benjamini-Hochberg:
        :func:`scipy.stats.false_discovery_control`).
    key_added : str or None
        Cross-match only, AnnData input (not a view): each tested cell's
        matched partner (its obs name) goes to ``adata.obs[key_added]``; other
        cells, and one cell left out of an odd pool, get a missing value.
    rng : None, int seed or numpy Generator, optional
        Randomness of the permutations and of the cross-match's tie order
        (one generator for all categories, used in their order).
    metric : str
        Any metric of :func:`crossmatch_test`; "euclidean", "sqeuclidean" or
        "cosine" for the energy and MMD tests.
    alternative : {"less", "greater", "two-sided"}
        Cross-match only (see :func:`crossmatch_test`).
    kernel, gamma : str, float or None
        MMD only (see :func:`mmd`).
    estimator : {"v-statistic", "u-statistic"}
        Energy and MMD only (see :func:`energy_distance`).
    n_jobs : int or None
        Threads for each test; None means every usable core.
    progress : bool
        Show a progress bar over the categories (needs tqdm).
    max_matrix_bytes : int
        Cross-match only, as in :func:`crossmatch_test`.

    Returns
    -------
    pandas.DataFrame
        Indexed by category (``"group"``): ``n_cells``, ``n_reference``,
        ``statistic`` (the cross-match count, ``n m / (n + m)`` times the
        energy distance, or the squared MMD), the test's own columns
        (``expected``, ``variance``, ``zscore``; ``energy_distance``;
        ``gamma``), ``pvalue`` and ``pvalue_adj``.

    Examples
    --------
    >>> import numpy as np, pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (40, 5)), rng.normal(2, 1, (40, 5)), rng.normal(0, 1, (40, 5))])
    >>> labels = ["ctrl"] * 40 + ["stim"] * 40 + ["ctrl2"] * 40
    >>> table = pm.compare_groups(X, labels, reference="ctrl")
    >>> list(table.index), bool(table.loc["stim", "pvalue_adj"] < 0.01)
    (['ctrl2', 'stim'], True)
    """
    import pandas as pd

    options = _test_options(
        test,
        n_resamples=n_resamples,
        rng=rng,
        metric=metric,
        alternative=alternative,
        kernel=kernel,
        gamma=gamma,
        estimator=estimator,
        n_jobs=n_jobs,
        max_matrix_bytes=max_matrix_bytes,
        key_added=key_added,
    )
    correction = check_choice(correction, "correction", CORRECTIONS)  # type: ignore[assignment]
    check_progress(progress)
    labels, present, points, obs_names, where = _labels_and_points(data, groupby, use_rep)
    _check_points(points, where)
    _check_key_added(data, obs_names, key_added)
    tested = _tested(present, categories, reference, repr(groupby) if isinstance(groupby, str) else "the labels")
    rows, partners = _comparisons(test, labels, points, tested, reference, options, progress, obs_names)
    columns = ["group", "n_cells", "n_reference", "statistic", *_TEST_COLUMNS[test], "pvalue"]
    table = pd.DataFrame(rows, columns=columns).set_index("group")
    table["pvalue_adj"] = adjust_pvalues(table["pvalue"].to_numpy(), correction)
    if key_added is not None:
        data.obs[key_added] = pd.Series(partners, index=data.obs_names, dtype=object)  # type: ignore[union-attr]
    return table


def _check_key_added(data: Any, obs_names: Any, key_added: str | None) -> None:
    if key_added is None:
        return
    if obs_names is None:
        raise ValueError("key_added needs AnnData input (it writes to adata.obs)")
    if getattr(data, "is_view", False):
        raise ValueError("key_added cannot write to a view of an AnnData object; pass the parent or a copy")


def _comparisons(
    test: str,
    labels: np.ndarray,
    points: Any,
    tested: list[Any],
    reference: Any,
    options: dict[str, Any],
    progress: bool,
    obs_names: Any,
) -> tuple[list[list[Any]], np.ndarray]:
    """One table row per tested category, and each cell's matched partner (cross-match on AnnData)."""
    in_rest = isinstance(reference, str) and reference == "rest"
    partners = np.full(labels.shape[0], None, dtype=object)
    rows = []
    for category in _progress_over(tested, progress):
        in_group = _mask(labels, category)
        in_reference = ~in_group if in_rest else _mask(labels, reference)
        x, y = _rows(points, in_group), _rows(points, in_reference)
        statistic, own, pvalue, mate = _one_test(test, x, y, options)
        if mate is not None and obs_names is not None:
            _record_partners(partners, mate, in_group, in_reference, np.asarray(obs_names, dtype=object))
        rows.append([category, int(in_group.sum()), int(in_reference.sum()), statistic, *own, pvalue])
    return rows, partners


def _one_test(test: str, x: np.ndarray, y: np.ndarray, options: dict[str, Any]) -> tuple[Any, list[Any], float, Any]:
    """(statistic, the test's own columns, pvalue, the matching's mates or None) of one comparison."""
    if test == "crossmatch":
        crossmatch = crossmatch_test(x, y, **options)
        own = [crossmatch.expected, crossmatch.variance, crossmatch.zscore]
        return crossmatch.statistic, own, crossmatch.pvalue, crossmatch.matching.mate
    if test == "energy":
        energy = energy_test(x, y, **options)
        return energy.statistic, [energy.energy_distance], energy.pvalue, None
    kernel_test = mmd_test(x, y, **options)
    return kernel_test.statistic, [kernel_test.gamma], kernel_test.pvalue, None


def _record_partners(
    partners: np.ndarray, mate: np.ndarray, in_group: np.ndarray, in_reference: np.ndarray, names: np.ndarray
) -> None:
    """Partner names of the tested category's cells (the pool is the category's cells, then the reference's)."""
    pool = np.concatenate([np.flatnonzero(in_group), np.flatnonzero(in_reference)])
    n_group = int(in_group.sum())
    group_mates = mate[:n_group]
    matched = group_mates >= 0
    partners[pool[:n_group][matched]] = names[pool[group_mates[matched]]]


def _progress_over(items: list[Any], enabled: bool) -> Any:
    if not enabled:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return items
    return tqdm(items, desc="compare groups", unit="group")
