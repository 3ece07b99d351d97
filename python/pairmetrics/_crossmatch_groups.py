"""The cross-match test of each group of cells against a reference (AnnData or arrays)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._crossmatch import crossmatch_test
from ._metric_transforms import DEFAULT_MAX_MATRIX_BYTES, check_max_matrix_bytes
from ._routing import is_dask, refusal, routed
from ._validation import check_choice, check_progress, resolve_n_jobs

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["crossmatch_groups"]

CORRECTIONS = ("holm-sidak", "benjamini-hochberg", "none")


def adjust_pvalues(pvalues: np.ndarray, correction: str) -> np.ndarray:
    """Family-wise (Holm-Sidak) or false-discovery (Benjamini-Hochberg) adjusted p-values."""
    p = np.asarray(pvalues, dtype=np.float64)
    if correction == "none" or p.size == 0:
        return p.copy()
    if correction == "benjamini-hochberg":
        from scipy.stats import false_discovery_control

        return np.asarray(false_discovery_control(p, method="bh"), dtype=np.float64)
    # Holm-Sidak step-down: the i-th smallest p-value is tested at the Sidak
    # level for m - i hypotheses; adjusted values are made monotone.
    order = np.argsort(p, kind="stable")
    m = p.size
    with np.errstate(divide="ignore"):  # p = 1 gives log1p(-1) = -inf, and an adjusted 1
        steps = -np.expm1((m - np.arange(m)) * np.log1p(-p[order]))
    adjusted = np.minimum(np.maximum.accumulate(steps), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def _labels_and_points(data: Any, groupby: Any, use_rep: str | None) -> tuple[np.ndarray, Any, Any]:
    """Group labels (object array), the points (rows = cells) and the obs names, if any."""
    if hasattr(data, "obs") and hasattr(data, "obsm"):
        if not isinstance(groupby, str):
            raise TypeError(f"groupby must name a column of adata.obs, got {type(groupby).__name__}")
        if groupby not in data.obs.columns:
            raise ValueError(f"groupby={groupby!r} is not a column of adata.obs")
        if use_rep is None:
            points = data.X
        elif use_rep not in data.obsm:
            raise ValueError(f"use_rep={use_rep!r} is not a key of adata.obsm (keys: {list(data.obsm.keys())})")
        else:
            points = data.obsm[use_rep]
        if is_dask(points):  # AnnData holds dask arrays; reading rows of them would gather them
            raise refusal("crossmatch_groups", "in the AnnData object")
        column = data.obs[groupby]
        if column.isna().any():
            raise ValueError(f"adata.obs[{groupby!r}] has {int(column.isna().sum())} missing labels; "
                             "filter those cells out first")  # fmt: skip
        return np.asarray(column.astype(str), dtype=object), points, data.obs_names
    labels = np.asarray(groupby, dtype=object)
    if labels.ndim != 1:
        raise ValueError(f"groupby must be 1-D labels for array input, got shape {labels.shape}")
    if labels.shape[0] != np.shape(data)[0]:
        raise ValueError(f"groupby has {labels.shape[0]} labels but data has {np.shape(data)[0]} rows")
    check_no_missing_labels(labels, "groupby")
    return labels.astype(str), data, None


def _is_missing(value: object) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # pandas' NA and NaT
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return isinstance(value, (np.datetime64, np.timedelta64)) and bool(np.isnat(value))


def check_no_missing_labels(labels: np.ndarray, name: str) -> None:
    """Refuse missing group labels (None, NaN, NaT, pandas' NA), saying how many there are."""
    if labels.dtype.kind == "f":
        missing = np.isnan(labels)
    elif labels.dtype.kind in "mM":
        missing = np.isnat(labels)
    elif labels.dtype.kind == "O":
        missing = np.fromiter((_is_missing(v) for v in labels.ravel()), dtype=bool, count=labels.size)
    else:
        return
    if missing.any():
        raise ValueError(f"{name} has {int(missing.sum())} missing labels; filter those rows out first")


def _rows(points: Any, mask: np.ndarray) -> np.ndarray:
    """Dense float rows of the selected cells (sparse matrices are densified per slice)."""
    rows = points[mask]
    if hasattr(rows, "toarray"):
        rows = rows.toarray()
    return np.asarray(rows)


def _tested_groups(labels: np.ndarray, groups: str | Sequence[str], reference: str) -> list[str]:
    present = list(dict.fromkeys(np.sort(labels)))
    if reference != "rest" and reference not in present:
        raise ValueError(f"reference={reference!r} is not a group of groupby (groups: {present})")
    if isinstance(groups, str):
        if groups != "all":
            raise ValueError(f"groups must be 'all' or a list of group names, got {groups!r}")
        chosen = present
    else:
        chosen = [str(g) for g in groups]
        unknown = [g for g in chosen if g not in present]
        if unknown:
            raise ValueError(f"groups {unknown} are not groups of groupby (groups: {present})")
    chosen = [g for g in chosen if g != reference]
    if not chosen:
        raise ValueError("no group to test: every chosen group is the reference")
    return chosen


@routed
def crossmatch_groups(
    data: Any,
    groupby: Any,
    *,
    reference: str = "rest",
    groups: str | Sequence[str] = "all",
    use_rep: str | None = "X_pca",
    correction: Literal["holm-sidak", "benjamini-hochberg", "none"] = "holm-sidak",
    key_added: str | None = None,
    metric: str = "euclidean",
    alternative: Literal["less", "greater", "two-sided"] = "less",
    n_jobs: int | None = None,
    progress: bool = False,
    max_matrix_bytes: int = DEFAULT_MAX_MATRIX_BYTES,
) -> pd.DataFrame:
    """The exact cross-match test of every group of cells against a reference.

    Follows scanpy's conventions: each group of ``adata.obs[groupby]`` is
    tested against ``reference`` (another group, or ``"rest"``: all other
    cells) with :func:`crossmatch_test` on ``adata.obsm[use_rep]``, and the
    p-values are adjusted for the number of groups tested.

    Parameters
    ----------
    data : AnnData or array_like, shape (n_cells, d)
        An AnnData object (views too), or the points themselves.
    groupby : str or array_like
        The ``adata.obs`` column with the groups (categorical, string or
        numeric), or, for array input, one label per row. Missing labels are
        refused (filter those cells out first).
    reference : str
        The group each group is compared with, or ``"rest"``.
    groups : "all" or list of str
        The groups to test (labels are compared as strings).
    use_rep : str or None
        The ``adata.obsm`` key of the representation (``"X_pca"`` by
        default); None uses ``adata.X`` (a sparse ``X`` is densified one
        test at a time). Ignored for array input.
    correction : {"holm-sidak", "benjamini-hochberg", "none"}
        Multiple-testing adjustment of ``pvalue`` into ``pvalue_adj``.
        Benjamini-Hochberg is :func:`scipy.stats.false_discovery_control`.
    key_added : str or None
        With AnnData input, write each tested cell's matched partner (its
        obs name in that group's test) to ``adata.obs[key_added]``; cells
        that were not tested, and the one cell left out of an odd pool, get
        a missing value. Not allowed on a view (write to the parent).
    metric, alternative : str
        As in :func:`crossmatch_test`.
    n_jobs : int or None
        Threads for each matching; None means every usable core.
    progress : bool
        Show a progress bar over the groups (needs tqdm).
    max_matrix_bytes : int
        As in :func:`crossmatch_test` (metrics that need an N x N matrix).

    Returns
    -------
    pandas.DataFrame
        Indexed by group: ``n_cells``, ``n_reference``, ``a1``, ``Ea1``,
        ``Va1``, ``dev``, ``pvalue`` (exact) and ``pvalue_adj``.

    Examples
    --------
    >>> import numpy as np
    >>> import pairmetrics as pm
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (40, 5)), rng.normal(2, 1, (40, 5)), rng.normal(0, 1, (40, 5))])
    >>> labels = ["ctrl"] * 40 + ["stim"] * 40 + ["ctrl2"] * 40
    >>> table = pm.crossmatch_groups(X, labels, reference="ctrl")
    >>> list(table.index), bool(table.loc["stim", "pvalue_adj"] < 0.01)
    (['ctrl2', 'stim'], True)
    """
    import pandas as pd

    correction = check_choice(correction, "correction", CORRECTIONS)  # type: ignore[assignment]
    check_progress(progress)
    resolve_n_jobs(n_jobs)
    check_max_matrix_bytes(max_matrix_bytes)
    labels, points, obs_names = _labels_and_points(data, groupby, use_rep)
    if key_added is not None:
        if obs_names is None:
            raise ValueError("key_added needs AnnData input (it writes to adata.obs)")
        if getattr(data, "is_view", False):
            raise ValueError("key_added cannot write to a view of an AnnData object; pass the parent or a copy")
    tested = _tested_groups(labels, groups, reference)
    partners = np.full(labels.shape[0], None, dtype=object)
    rows = []
    for group in _progress_over(tested, progress):
        in_group = labels == group
        in_reference = ~in_group if reference == "rest" else labels == reference
        res = crossmatch_test(_rows(points, in_group), _rows(points, in_reference), metric=metric,
                              alternative=alternative, n_jobs=n_jobs, max_matrix_bytes=max_matrix_bytes)  # fmt: skip
        rows.append(
            (
                str(group),
                int(in_group.sum()),
                int(in_reference.sum()),
                res.statistic,
                res.expected,
                res.variance,
                res.zscore,
                res.pvalue,
            )
        )
        if obs_names is not None:
            _record_partners(partners, res.matching.mate, in_group, in_reference, np.asarray(obs_names, dtype=object))
    table = pd.DataFrame(rows, columns=["group", "n_cells", "n_reference", "a1", "Ea1", "Va1", "dev", "pvalue"])
    table = table.set_index("group")
    table["pvalue_adj"] = adjust_pvalues(table["pvalue"].to_numpy(), correction)
    if key_added is not None:
        data.obs[key_added] = pd.Series(partners, index=data.obs_names, dtype=object)
    return table


def _record_partners(partners: np.ndarray, mate: np.ndarray, in_group: np.ndarray, in_reference: np.ndarray,
                     names: np.ndarray) -> None:  # fmt: skip
    """Partner names of the tested group's cells (the pool is the group's cells, then the reference's)."""
    pool = np.concatenate([np.flatnonzero(in_group), np.flatnonzero(in_reference)])
    n_group = int(in_group.sum())
    group_mates = mate[:n_group]
    matched = group_mates >= 0
    partners[pool[:n_group][matched]] = names[pool[group_mates[matched]]]


def _progress_over(items: list[str], enabled: bool) -> Any:
    if not enabled:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return items
    return tqdm(items, desc="cross-match groups", unit="group")
