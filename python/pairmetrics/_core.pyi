"""
Compiled kernels of pairmetrics (use the pairmetrics package, not this module).
"""

from __future__ import annotations

import typing

import numpy
import numpy.typing

__all__: list[str] = [
    "average_precision",
    "binary_curve",
    "average_ranks",
    "bootstrap_auc",
    "bootstrap_average_precision",
    "bootstrap_draw_counts",
    "bootstrap_pair_concordance",
    "concordance_counts",
    "concordance_pair_counts",
    "concordance_per_sample",
    "dcg_rows",
    "dense_ranks",
    "group_dominance",
    "grouped_concordance",
    "grouped_paired_counts",
    "grouped_roc_auc",
    "label_ranking_rows",
    "kendall_counts",
    "kendall_null_pmf",
    "mann_whitney_conditional_cdf",
    "mann_whitney_null_pmf",
    "mann_whitney_ranks",
    "paired_counts",
    "paired_moments",
    "paired_simd_levels",
    "rankable_bounds",
    "rankable_thresholds",
    "roc_auc",
    "top_k_hits",
    "spearman_sums",
    "weighted_tau",
]

def _crossmatch_batch(
    full: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    draws: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.int8],
    k: typing.SupportsInt | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> numpy.typing.NDArray[numpy.int64]:
    """
    Cross-match counts of many subsamples of one pooled distance matrix, in parallel.
    """

def _crossmatch_stack(
    Ds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.int8],
    k: typing.SupportsInt | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> numpy.typing.NDArray[numpy.int64]:
    """
    Cross-match counts of a stack of distance matrices, in parallel.
    """

def _distance_sums(
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    split: typing.SupportsInt | typing.SupportsIndex,
    root: bool,
    scale: typing.SupportsFloat | typing.SupportsIndex,
    kernel: str,
    gamma: typing.SupportsFloat | typing.SupportsIndex,
    indicators: typing.Any,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    tile: typing.SupportsInt | typing.SupportsIndex = 0,
    resample_block: typing.SupportsInt | typing.SupportsIndex = 0,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    Sums of v_ij = f(scale * |z_i - z_j|^(1 or 2)) without an n x n matrix: dict of to_first (per row, over columns < split), to_second (over columns >= split) and quadratic (s_p^T V s_p for each row of the packed little-endian bit matrix indicators).
    """

def _error_stats(a: numpy.ndarray, b: numpy.ndarray, per_column: bool) -> dict[str, typing.Any]:
    """
    Per-column (or total) sum |a-b|, sum (a-b)^2, max |a-b| and count of a != b in one pass: dict abs_sum, sq_sum, max_abs, n_wrong.
    """

def _euclidean_matrix(
    X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    squared: bool,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Euclidean distance matrix of the rows of X (BLAS tiles, cancellation-guarded).
    """

def _log_likelihood(
    y: numpy.ndarray, p: numpy.ndarray, per_column: bool, eps: typing.SupportsFloat | typing.SupportsIndex
) -> dict[str, typing.Any]:
    """
    Per-column (or total) natural log-likelihood of 0/1 outcomes y under probabilities p and the count of zero-probability outcomes: dict log_sum, n_zero.
    """

def _multilabel_dense(t: numpy.ndarray, p: numpy.ndarray) -> dict[str, typing.Any]:
    """
    Per-label and per-sample counts of 1s in both, in t and in p, for 2-D uint8 0/1 arrays: dict label_both, label_true, label_pred, sample_both, sample_true, sample_pred.
    """

def _multilabel_sparse(
    t_indptr: numpy.ndarray,
    t_indices: numpy.ndarray,
    p_indptr: numpy.ndarray,
    p_indices: numpy.ndarray,
    n_samples: typing.SupportsInt | typing.SupportsIndex,
    n_labels: typing.SupportsInt | typing.SupportsIndex,
) -> dict[str, typing.Any]:
    """
    The counts of _multilabel_dense from CSR indices holding only 1s (validated, without duplicates).
    """

def _mwpm_certificate_dense(
    D: typing.Annotated[numpy.typing.ArrayLike, "float64 or float32"],
    y: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    parent: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    mate: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    LP dual certificate of a matching against every pair of a distance matrix.
    """

def _mwpm_certificate_points(
    X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    squared: bool,
    y: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    parent: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    mate: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    LP dual certificate of a matching against every pair of Euclidean points.
    """

def _mwpm_dense(
    D: typing.Annotated[numpy.typing.ArrayLike, "float64 or float32"],
    max_distance: typing.SupportsFloat | typing.SupportsIndex,
    k: typing.SupportsInt | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    Exact minimum-weight perfect matching on the complete graph of a distance matrix
    (max_distance: the largest entry of D).
    """

def _mwpm_enclosing_z(
    parent: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    n_vertices: typing.SupportsInt | typing.SupportsIndex,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Sum of the blossom duals z over the blossoms holding each vertex.
    """

def _mwpm_max_weight(n: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    Largest integer edge weight accepted by the blossom solver for n vertices.
    """

def _mwpm_max_weight_128(n: typing.SupportsInt | typing.SupportsIndex) -> tuple[int, int]:
    """
    Largest 128-bit edge weight for n vertices, as (high, low) 64-bit halves.
    """

def _mwpm_points(
    X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    squared: bool,
    k: typing.SupportsInt | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
    screen_inside_from: typing.SupportsInt | typing.SupportsIndex = 512,
    screen_always: bool = False,
    resume: bool = True,
    full_pricing: bool = False,
) -> dict[str, typing.Any]:
    """
    Exact minimum-weight perfect matching on the complete Euclidean graph of the rows of X.
    """

def _mwpm_reduced_costs(
    y: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    parent: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    z: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    u: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    v: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    w: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
) -> numpy.typing.NDArray[numpy.int64]:
    """
    Exact reduced costs of pairs against a blossom dual solution.
    """

def _mwpm_sparse(
    n: typing.SupportsInt | typing.SupportsIndex,
    eu: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    ev: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    w: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    progress: typing.Any = None,
    y0: typing.Annotated[numpy.typing.ArrayLike, numpy.int64] | None = None,
    mate0: typing.Annotated[numpy.typing.ArrayLike, numpy.int32] | None = None,
) -> dict[str, typing.Any]:
    """
    Exact minimum-weight perfect matching on a sparse graph with integer weights
    (optionally warm-started from duals y0 and a matching mate0 of an earlier solve).
    """

def _mwpm_sparse_exact(
    n: typing.SupportsInt | typing.SupportsIndex,
    eu: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    ev: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    w_hi: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    w_lo: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64],
    wide: bool,
    price_above: typing.SupportsInt | typing.SupportsIndex,
    start_edges: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    Exact, priced and certified minimum-weight perfect matching of a sparse graph with
    integer weights: int64 (w_hi; wide=False) or 128-bit (w_hi * 2**64 + w_lo; wide=True).
    """

def _row_groups(
    x: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 1
) -> numpy.typing.NDArray[numpy.int32]:
    """
    Group ids of identical rows: the index of the first row equal to each row.
    """

def _two_vs_two_all(
    y: numpy.ndarray,
    p: numpy.ndarray,
    group_y: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    group_p: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    metric: str,
    rtol: typing.SupportsFloat | typing.SupportsIndex,
    skip_same_target: bool,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    tile: typing.Any = None,
    perm: typing.Any = None,
    progress: typing.Any = None,
    split: typing.SupportsInt | typing.SupportsIndex = 0,
    centre: typing.Any = None,
    max_abs: typing.SupportsFloat | typing.SupportsIndex = -1.0,
) -> dict[str, typing.Any]:
    """
    2 vs 2 counts over all pairs: dict of passed, tied, skipped, sample_passed, sample_tied. split > 0 counts only the pairs i < split <= j; centre (the mean scaled target row) and max_abs (largest |coordinate| of y and p) prepare a row block of a larger problem as the whole.
    """

def _two_vs_two_blas() -> dict[str, typing.Any]:
    """
    Whether a BLAS gemm and a way to set its thread count were found (dict gemm, thread_control).
    """

def _two_vs_two_pairs(
    y: numpy.ndarray,
    p: numpy.ndarray,
    group_y: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    group_p: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    first: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    second: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    metric: str,
    rtol: typing.SupportsFloat | typing.SupportsIndex,
    skip_same_target: bool,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    perm: typing.Any = None,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    2 vs 2 counts over the listed pairs (first[k], second[k]), as for _two_vs_two_all.
    """

def _two_vs_two_permuted(
    terms: numpy.ndarray,
    terms_t: numpy.ndarray,
    y: numpy.ndarray,
    p: numpy.ndarray,
    group_y: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    group_p: typing.Annotated[numpy.typing.ArrayLike, numpy.int32],
    perms: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    metric: str,
    rtol: typing.SupportsFloat | typing.SupportsIndex,
    skip_same_target: bool,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    tile: typing.Any = None,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    Passed and tied counts (dict of two arrays) for each row of perms (y_i paired with p_perm[i]).
    """

def _two_vs_two_terms(
    y: numpy.ndarray,
    p: numpy.ndarray,
    metric: str,
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    tile: typing.Any = None,
    progress: typing.Any = None,
) -> numpy.ndarray:
    """
    The n x n matrix of comparison terms (<y_i, p_j> of the prepared rows, or -d(y_i, p_j)).
    """

def average_precision(
    scores: numpy.ndarray,
    positive: numpy.typing.NDArray[numpy.uint8],
    weights: typing.Any,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> dict[str, typing.Any]:
    """
    dict value, positive_total, negative_total: the step-function average precision (NaN without positive weight).
    """

def binary_curve(
    scores: numpy.ndarray,
    positive: numpy.typing.NDArray[numpy.uint8],
    weights: typing.Any,
    drop_intermediate: str = "none",
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> dict[str, typing.Any]:
    """
    dict thresholds, tps, fps: each distinct score, decreasing, in the scores' dtype, with the cumulative positive and negative weight (count) at or above it; samples of zero weight are left out. drop_intermediate: 'none', 'roc' (roc_curve's) or 'tps' (precision_recall_curve's).
    """

def concordance_counts(
    times: numpy.typing.NDArray[numpy.float64],
    events: numpy.typing.NDArray[numpy.uint8],
    estimates: numpy.typing.NDArray[numpy.float64],
    tied_tol: typing.SupportsFloat | typing.SupportsIndex = 0.0,
) -> dict[str, typing.Any]:
    """
    dict below, tied, above, tied_time: counts over comparable pairs (event i, later or same-time censored j): estimate_j below, tied with or above estimate_i.
    """

def concordance_pair_counts(
    times: numpy.typing.NDArray[numpy.float64],
    events: numpy.typing.NDArray[numpy.uint8],
    estimates: numpy.typing.NDArray[numpy.float64],
    tied_tol: typing.SupportsFloat | typing.SupportsIndex = 0.0,
) -> dict[str, typing.Any]:
    """
    dict of the totals as concordance_per_sample's, and pairs: pairs[i] = sample i's comparable pairs that are concordant, discordant and tied in the estimate (float64).
    """

def concordance_per_sample(
    times: numpy.typing.NDArray[numpy.float64],
    events: numpy.typing.NDArray[numpy.uint8],
    estimates: numpy.typing.NDArray[numpy.float64],
    tied_tol: typing.SupportsFloat | typing.SupportsIndex = 0.0,
) -> dict[str, typing.Any]:
    """
    dict below, tied, above, tied_time, event_pairs_tied_time, event_pairs_tied_both, per_sample: per_sample[i] counts sample i's comparable partners with an estimate below, tied with or above its own, as the earlier event (columns 0-2) and as the later member (columns 3-5).
    """

def bootstrap_auc(
    positive: numpy.typing.NDArray[numpy.uint8],
    group_end: numpy.typing.NDArray[numpy.int64],
    stratum_offsets: numpy.typing.NDArray[numpy.int64],
    cluster: numpy.typing.NDArray[numpy.uint32],
    seeds: numpy.typing.NDArray[numpy.uint64],
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Bootstrap replicates of the binary ROC AUC over samples sorted by score (one per seed).
    """

def bootstrap_average_precision(
    positive: numpy.typing.NDArray[numpy.uint8],
    group_end: numpy.typing.NDArray[numpy.int64],
    stratum_offsets: numpy.typing.NDArray[numpy.int64],
    cluster: numpy.typing.NDArray[numpy.uint32],
    seeds: numpy.typing.NDArray[numpy.uint64],
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Bootstrap replicates of the average precision over samples sorted by decreasing score (one per seed).
    """

def bootstrap_pair_concordance(
    rank: numpy.typing.NDArray[numpy.uint32],
    bound: numpy.typing.NDArray[numpy.int64],
    query: numpy.typing.NDArray[numpy.uint8],
    stratum_offsets: numpy.typing.NDArray[numpy.int64],
    cluster: numpy.typing.NDArray[numpy.uint32],
    seeds: numpy.typing.NDArray[numpy.uint64],
    n_threads: typing.SupportsInt | typing.SupportsIndex,
    progress: typing.Any = None,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Bootstrap replicates of (correct + tied / 2) / comparable: each sample p with query[p] compared with the samples before bound[p] in sweep order, correct when their rank is below rank[p] (one per seed).
    """

def bootstrap_draw_counts(
    stratum_offsets: numpy.typing.NDArray[numpy.int64], seed: typing.SupportsInt | typing.SupportsIndex
) -> numpy.typing.NDArray[numpy.uint32]:
    """
    How often each cluster is drawn by the bootstrap resample of one seed (strata of clusters by offsets).
    """

def dcg_rows(
    scores: numpy.ndarray,
    gains: numpy.ndarray,
    discount: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    discount_cumsum: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    k: typing.SupportsInt | typing.SupportsIndex,
    ignore_ties: bool,
    normalize: bool,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Per-row DCG (NDCG when normalize) of float32/float64 scores and uint8/float32/float64 gains.
    """

def label_ranking_rows(
    scores: numpy.ndarray,
    truth: numpy.typing.NDArray[numpy.uint8],
    metric: str,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Per-row label ranking average precision, coverage or ranking loss of float32/float64 scores; truth is uint8 (nonzero: relevant).
    """

def rankable_bounds(
    sorted_labels: numpy.ndarray, min_dist: typing.SupportsFloat | typing.SupportsIndex
) -> numpy.typing.NDArray[numpy.int64]:
    """
    bound[p]: how many sorted labels q are at least min_dist below labels[p] (real labels: their difference in double precision; integer labels: exactly).
    """

def rankable_thresholds(
    labels: numpy.ndarray,
    min_dist: typing.SupportsFloat | typing.SupportsIndex,
    highest: typing.SupportsInt | typing.SupportsIndex | None = None,
) -> numpy.ndarray:
    """
    Real labels: t[i] is the smallest double t with fl(t - labels[i]) >= min_dist (+inf if none). Integer labels as uint64 order keys up to `highest` (< 2**64 - 1): the smallest key t with t - labels[i] >= min_dist, or highest + 1 if none. Either way the labels rankable above labels[i] are those >= t[i].
    """

def group_dominance(
    values: numpy.ndarray,
    groups: numpy.typing.NDArray[numpy.uint32],
    weights: numpy.typing.NDArray[numpy.uint32],
    thresholds: numpy.ndarray,
    query_groups: numpy.typing.NDArray[numpy.uint32],
    query_weights: numpy.typing.NDArray[numpy.uint32],
    n_groups: typing.SupportsInt | typing.SupportsIndex,
) -> dict[str, typing.Any]:
    """
    Values and thresholds both float64, or both uint64 (order keys). dict lower, same, higher: over the pairs (point i, query j) with values[i] >= thresholds[j], weighted by weights[i] * query_weights[j] (empty weights: 1 each), the weight of those whose groups[i] is below, equal to and above query_groups[j].
    """

def grouped_concordance(
    times: numpy.typing.NDArray[numpy.float64],
    events: numpy.typing.NDArray[numpy.uint8],
    estimates: numpy.typing.NDArray[numpy.float64],
    codes: numpy.typing.NDArray[numpy.int64],
    n_groups: typing.SupportsInt | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> dict[str, typing.Any]:
    """
    dict counts, order, per_sample: concordance counts (n_groups x 6, as concordance_per_sample's totals) of every group code, the input positions by group and the per-sample counts in that order.
    """

def grouped_paired_counts(
    scores: numpy.ndarray,
    labels: numpy.ndarray,
    codes: numpy.typing.NDArray[numpy.int64],
    n_groups: typing.SupportsInt | typing.SupportsIndex,
    min_dist: typing.SupportsFloat | typing.SupportsIndex,
    per_sample: bool = False,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
    progress: typing.Any = None,
) -> dict[str, typing.Any]:
    """
    dict counts, and with per_sample order, rankable, tied, incorrect: paired counts (n_groups x 4: rankable, correct, tied, incorrect) of every group code in one pass; with per_sample also the input positions by group (order) and the per-sample counts in that order.
    """

def grouped_roc_auc(
    scores: numpy.ndarray,
    positive: numpy.typing.NDArray[numpy.uint8],
    weights: typing.Any,
    codes: numpy.typing.NDArray[numpy.int64],
    n_groups: typing.SupportsInt | typing.SupportsIndex,
    max_fpr: typing.SupportsFloat | typing.SupportsIndex = 1.0,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> dict[str, typing.Any]:
    """
    dict area, positive_total, negative_total of every group code, as roc_auc computes them for one.
    """

def paired_counts(
    scores: numpy.ndarray,
    labels: numpy.ndarray,
    min_dist: typing.SupportsFloat | typing.SupportsIndex,
    per_sample: bool = False,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
    few_labels: typing.SupportsInt | typing.SupportsIndex = 4096,
    few_classes: typing.SupportsInt | typing.SupportsIndex = 16,
    progress: typing.Any = None,
    simd: str = "auto",
) -> dict[str, typing.Any]:
    """
    dict rankable, correct, tied, incorrect: pair counts; with per_sample also sample_rankable, sample_tied and sample_incorrect, the per-sample counts. Scores and labels of any real dtype, compared exactly (integer labels in their own type). few_labels: most distinct labels for the Fenwick path (0 forces the merge path; for tests); few_classes: most distinct labels for the per-class path of the totals (0 turns it off; for tests); simd: 'auto', or a level of paired_simd_levels() to force its vector code (for tests).
    """

def paired_moments(
    scores: numpy.ndarray,
    labels: numpy.ndarray,
    min_dist: typing.SupportsFloat | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
    few_labels: typing.SupportsInt | typing.SupportsIndex = 4096,
    few_classes: typing.SupportsInt | typing.SupportsIndex = 16,
    progress: typing.Any = None,
    simd: str = "auto",
) -> dict[str, typing.Any]:
    """
    dict of the totals of paired_counts and lowest, highest, others: for the samples with the smallest label, those with the largest (none when all labels are equal) and the rest, dicts of the exact sums samples, r, q, rr, qr, qq of their per-sample rankable counts r and q = 2 * correct + tied. Arguments as in paired_counts.
    """

def paired_simd_levels() -> list[str]:
    """
    Vector code levels of the paired kernel that this CPU runs ('scalar' always).
    """

def roc_auc(
    scores: numpy.ndarray,
    positive: numpy.typing.NDArray[numpy.uint8],
    weights: typing.Any,
    max_fpr: typing.SupportsFloat | typing.SupportsIndex = 1.0,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> dict[str, typing.Any]:
    """
    dict area, positive_total, negative_total: weighted ROC AUC, or the partial area up to max_fpr when max_fpr < 1; area is NaN when a class has no weight.
    """

def top_k_hits(
    scores: numpy.ndarray,
    labels: numpy.typing.NDArray[numpy.int64],
    k: typing.SupportsInt | typing.SupportsIndex,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
) -> numpy.typing.NDArray[numpy.uint8]:
    """
    uint8 per row: whether the label is among the k highest scores (ties: the later label first).
    """

def average_ranks(values: numpy.ndarray) -> dict[str, typing.Any]:
    """
    dict doubled_ranks, ties: twice the 1-based average rank of each value (uint64), and the tie sums.
    """

def dense_ranks(values: numpy.ndarray) -> dict[str, typing.Any]:
    """
    dict ranks, ties: dense 0-based ranks (uint32; equal values share one), and the tie sums.
    """

def kendall_counts(
    x: numpy.ndarray, y: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 1
) -> dict[str, typing.Any]:
    """
    dict discordant, joint_pairs, x_ties, y_ties: Kendall's pair counts of two real arrays; each ties dict is distinct, pairs (tied), cubic (sum t(t-1)(t-2)), spread (sum t(t-1)(2t+5)), cube_excess (sum t^3-t) over groups of t tied values.
    """

def kendall_null_pmf(
    n: typing.SupportsInt | typing.SupportsIndex, c: typing.SupportsInt | typing.SupportsIndex
) -> numpy.typing.NDArray[numpy.float64]:
    """
    P(D = k), k = 0..c: the null distribution of the inversions of a random permutation of n.
    """

def mann_whitney_conditional_cdf(
    group_sizes: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64],
    m: typing.SupportsInt | typing.SupportsIndex,
    max_doubled_u: typing.SupportsInt | typing.SupportsIndex,
) -> float:
    """
    P(2U <= max_doubled_u) of the first m pooled values' sample, given the groups of ties (sizes in ascending order of value).
    """

def mann_whitney_null_pmf(
    m: typing.SupportsInt | typing.SupportsIndex,
    n: typing.SupportsInt | typing.SupportsIndex,
    max_u: typing.SupportsInt | typing.SupportsIndex,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    P(U = u), u = 0..max_u: the null distribution of U for samples of m and n without ties.
    """

def mann_whitney_ranks(
    x: numpy.ndarray,
    y: numpy.ndarray,
    n_threads: typing.SupportsInt | typing.SupportsIndex = 1,
    with_groups: bool = False,
) -> dict[str, typing.Any]:
    """
    dict doubled_u, tie_cube_excess, max_tie, groups: 2U of x, sum t^3 - t over tied pooled groups, the largest group, and (with_groups) the group sizes in ascending order of value.
    """

def spearman_sums(
    x: numpy.ndarray, y: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 1
) -> dict[str, typing.Any]:
    """
    dict cross, x_ties, y_ties: the exact sum of products of doubled average ranks, and the tie sums.
    """

def weighted_tau(
    x: numpy.ndarray,
    y: numpy.ndarray,
    element_weights: typing.Any = None,
    rank_weights: typing.Any = None,
    additive: bool = True,
) -> float:
    """
    Vigna's weighted tau with x the ranking variable (NaN when x or y is constant); weights per element, or per rank (rank 0: largest x, ties by largest y), default 1 / (rank + 1).
    """
