"""Reference ROC AUC of binary labels: every (positive, negative) pair, and
the ROC curve walked threshold by threshold for the partial area.
"""

from __future__ import annotations

__all__ = ["weighted_auc", "partial_auc", "mcclish"]


def weighted_auc(positive, scores, weights=None):
    """sum of w_p w_n ([s_p > s_n] + [s_p == s_n] / 2) over pairs, divided by W_pos W_neg."""
    n = len(scores)
    weights = [1.0] * n if weights is None else [float(w) for w in weights]
    total = credit = 0.0
    for i in range(n):
        if not positive[i]:
            continue
        for j in range(n):
            if positive[j]:
                continue
            pair = weights[i] * weights[j]
            total += pair
            if scores[i] > scores[j]:
                credit += pair
            elif scores[i] == scores[j]:
                credit += pair / 2
    return credit / total


def roc_points(positive, scores, weights=None):
    """(fpr, tpr) after each distinct threshold, from the highest score down, starting at (0, 0)."""
    n = len(scores)
    weights = [1.0] * n if weights is None else [float(w) for w in weights]
    total_pos = sum(w for w, p in zip(weights, positive) if p)
    total_neg = sum(w for w, p in zip(weights, positive) if not p)
    points = [(0.0, 0.0)]
    tps = fps = 0.0
    for threshold in sorted(set(scores), reverse=True):
        for i in range(n):
            if scores[i] == threshold:
                if positive[i]:
                    tps += weights[i]
                else:
                    fps += weights[i]
        points.append((fps / total_neg, tps / total_pos))
    return points


def partial_auc(positive, scores, max_fpr, weights=None):
    """Trapezoidal area under the ROC curve over [0, max_fpr] (linear interpolation at max_fpr)."""
    points = roc_points(positive, scores, weights)
    area = 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x1 > max_fpr:
            y = y0 + (y1 - y0) * (max_fpr - x0) / (x1 - x0)
            return area + (max_fpr - x0) * (y0 + y) / 2
        area += (x1 - x0) * (y0 + y1) / 2
    return area


def mcclish(partial_area, max_fpr):
    """McClish's standardisation: 0.5 for a non-discriminant model, 1 for a perfect one."""
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1 + (partial_area - min_area) / (max_fpr - min_area))
