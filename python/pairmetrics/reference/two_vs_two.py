"""Reference 2 vs 2 test: a double loop over pairs calling scipy.spatial.distance.

Same semantics as :func:`pairmetrics.two_vs_two` (tie rules, pair modes, the
tie tolerance), computed in float64 one pair at a time.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import distance

__all__ = ["two_vs_two", "two_vs_two_permutation_test", "default_rtol"]


def default_rtol(float32: bool, n_features: int) -> float:
    """``8 * sqrt(d) * eps`` of float32 (both inputs float32) or float64."""
    eps = np.finfo(np.float32 if float32 else np.float64).eps
    return 8.0 * math.sqrt(n_features) * float(eps)


def _scales(y, p, metric):
    """Per-sample parts of the tie scale: scale_ij = s_i + s_j."""
    n = len(y)
    if metric in ("cosine", "correlation"):
        return [2.0] * n  # |unit y_i|^2 + |unit p_i|^2
    c = y.mean(axis=0)
    s = []
    for i in range(n):
        sq = float(np.dot(y[i] - c, y[i] - c) + np.dot(p[i] - c, p[i] - c))
        s.append(math.sqrt(sq) if metric == "euclidean" else sq)
    return s


def _pair_outcome(y, p, i, j, metric, rtol, scales):
    """'pass', 'tie' or 'fail' for the pair (i, j)."""
    if np.array_equal(y[i], y[j]) or np.array_equal(p[i], p[j]):
        return "tie"
    dist = getattr(distance, metric)
    lhs = dist(y[i], p[i]) + dist(y[j], p[j])
    rhs = dist(y[i], p[j]) + dist(y[j], p[i])
    if abs(lhs - rhs) <= rtol * (scales[i] + scales[j]):
        return "tie"
    return "pass" if lhs < rhs else "fail"


def two_vs_two(y_true, y_pred, metric="cosine", ties="fail", pairs="all", rtol=None):
    """Returns a dict with n_passed, n_total, accuracy, n_tied, n_pairs, sample_accuracy.

    ``pairs`` is "all", "distinct_targets" or an explicit sequence of (i, j).
    ``rtol=None`` uses :func:`default_rtol` for the input dtypes.
    """
    float32 = np.asarray(y_true).dtype == np.float32 and np.asarray(y_pred).dtype == np.float32
    y = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    n, d = y.shape
    if rtol is None:
        rtol = default_rtol(float32, d)
    if isinstance(pairs, str):
        pair_list = []
        for i in range(n):
            for j in range(i + 1, n):
                if pairs == "distinct_targets" and np.array_equal(y[i], y[j]):
                    continue
                pair_list.append((i, j))
    else:
        pair_list = [(int(i), int(j)) for i, j in pairs]
    scales = _scales(y, p, metric)
    credit = {"fail": 0.0, "pass": 1.0, "half": 0.5, "exclude": 0.0}[ties]
    passed = tied = 0
    s_score = [0.0] * n
    s_count = [0] * n
    for i, j in pair_list:
        outcome = _pair_outcome(y, p, i, j, metric, rtol, scales)
        if outcome == "pass":
            passed += 1
            score = 1.0
        elif outcome == "tie":
            tied += 1
            if ties == "exclude":
                continue
            score = credit
        else:
            score = 0.0
        for k in (i, j):
            s_score[k] += score
            s_count[k] += 1
    n_pairs = len(pair_list)
    n_passed = passed + credit * tied if ties != "exclude" else passed
    n_total = n_pairs - tied if ties == "exclude" else n_pairs
    return {
        "n_passed": n_passed,
        "n_total": n_total,
        "accuracy": n_passed / n_total if n_total else math.nan,
        "n_strict_passed": passed,
        "n_tied": tied,
        "n_pairs": n_pairs,
        "sample_accuracy": np.array([s / c if c else math.nan for s, c in zip(s_score, s_count)]),
    }


def two_vs_two_permutation_test(y_true, y_pred, permutations, metric="cosine", ties="fail", pairs="all", rtol=None):
    """(observed accuracy, p-value, null accuracies) for the given permutations.

    Permutation ``pi`` pairs ``y_i`` with ``y_pred[pi[i]]``.
    """
    if rtol is None:
        float32 = np.asarray(y_true).dtype == np.float32 and np.asarray(y_pred).dtype == np.float32
        rtol = default_rtol(float32, np.shape(y_true)[1])
    observed = two_vs_two(y_true, y_pred, metric, ties, pairs, rtol)["accuracy"]
    y_pred = np.asarray(y_pred)
    null = [two_vs_two(y_true, y_pred[np.asarray(pi)], metric, ties, pairs, rtol)["accuracy"] for pi in permutations]
    exceed = sum(1 for a in null if a >= observed)
    return observed, (1 + exceed) / (1 + len(null)), np.array(null)
