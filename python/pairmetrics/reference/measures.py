"""Reference classic measures: loops over examples, straight from the definitions.

Inputs are lists of examples; an example is a number (one target) or a list
of numbers (one per target). Everything is computed with Python floats and
:func:`math.fsum`, so these are slow but as exact as a float answer can be.
"""

from __future__ import annotations

import math

__all__ = [
    "zero_one_error",
    "absolute_error",
    "sum_squares_error",
    "rms_error",
    "worst_case_error",
    "log_likelihood",
    "log_loss",
    "best_constant",
    "to_indicators",
    "to_cuts",
    "check_cuts",
    "multilabel_counts",
]


def _rows(y):
    """Each example as a list of target values."""
    return [list(map(float, e)) if isinstance(e, (list, tuple)) else [float(e)] for e in y]


def _per_target(y_true, y_pred, term):
    """Per-target lists of term(actual, predicted) over the examples."""
    rows_t, rows_p = _rows(y_true), _rows(y_pred)
    t = len(rows_t[0])
    return [[term(rt[j], rp[j]) for rt, rp in zip(rows_t, rows_p)] for j in range(t)]


def _sum(y_true, y_pred, term, average, per_target):
    n = len(y_true)
    columns = [math.fsum(col) / (n if average else 1) for col in _per_target(y_true, y_pred, term)]
    return columns if per_target else math.fsum(columns)


def zero_one_error(y_true, y_pred, average=False, per_target=False):
    return _sum(y_true, y_pred, lambda a, b: float(a != b), average, per_target)


def absolute_error(y_true, y_pred, average=False, per_target=False):
    return _sum(y_true, y_pred, lambda a, b: abs(a - b), average, per_target)


def sum_squares_error(y_true, y_pred, average=False, per_target=False):
    return _sum(y_true, y_pred, lambda a, b: (a - b) ** 2, average, per_target)


def rms_error(y_true, y_pred, per_target=False):
    mean_squares = sum_squares_error(y_true, y_pred, average=True, per_target=per_target)
    return [math.sqrt(v) for v in mean_squares] if per_target else math.sqrt(mean_squares)


def worst_case_error(y_true, y_pred, per_target=False):
    columns = [max(col) for col in _per_target(y_true, y_pred, lambda a, b: abs(a - b))]
    return columns if per_target else max(columns)


def log_likelihood(y_true, y_pred, per_target=False, eps=None):
    """Natural log; -inf when an outcome had probability 0."""

    def term(y, p):
        q = p if y == 1 else 1 - p
        if eps is not None:  # the probability given to the outcome, kept in [eps, 1 - eps]
            q = min(max(q, eps), 1 - eps)
        return math.log(q) if q > 0 else -math.inf

    columns = [math.fsum(col) if -math.inf not in col else -math.inf for col in _per_target(y_true, y_pred, term)]
    return columns if per_target else math.fsum(columns) if -math.inf not in columns else -math.inf


def log_loss(y_true, y_pred, per_target=False, eps=None, base=math.e):
    ll = log_likelihood(y_true, y_pred, per_target=per_target, eps=eps)
    n = len(y_true)
    if per_target:
        return [-v / n / math.log(base) for v in ll]
    return -ll / n / math.log(base)


def best_constant(y, loss):
    """Per-target minimiser, found from its definition; returns (values, errors)."""
    columns = list(zip(*_rows(y)))
    values, errors = [], []
    for col in columns:
        col = sorted(col)
        n = len(col)
        if loss == "zero_one":
            counts = {}
            for v in col:
                counts[v] = counts.get(v, 0) + 1
            best = max(counts.values())
            c = min(v for v, k in counts.items() if k == best)
            err = float(sum(v != c for v in col))
        elif loss == "absolute":
            c = col[n // 2] if n % 2 else (col[n // 2 - 1] + col[n // 2]) / 2
            err = math.fsum(abs(v - c) for v in col)
        elif loss == "squares":
            c = math.fsum(col) / n
            err = math.fsum((v - c) ** 2 for v in col)
        elif loss == "worst_case":
            c = (col[0] + col[-1]) / 2
            err = max(abs(v - c) for v in col)
        elif loss == "log_loss":
            c = math.fsum(col) / n
            err = -math.fsum((math.log(c) if v == 1 else math.log(1 - c)) for v in col) / n
        else:
            raise ValueError(f"unknown loss {loss!r}")
        values.append(c)
        errors.append(err)
    return values, errors


def to_indicators(y, values):
    return [[1.0 if v == value else 0.0 for value in values] for v in y]


def to_cuts(y, values):
    out = []
    for v in y:
        rank = list(values).index(v)
        out.append([1.0 if rank <= i else 0.0 for i in range(len(values) - 1)])
    return out


def check_cuts(pred_cuts):
    """True where some cut is predicted higher than a later one."""
    return [any(row[i] > row[j] for i in range(len(row)) for j in range(i + 1, len(row))) for row in pred_cuts]


def multilabel_counts(y_true, y_pred, false_pos=1.0, false_neg=1.0):
    """Dict of per-label and per-sample tp/tn/fp/fn lists, accuracies and per-sample weighted scores."""
    n, n_labels = len(y_true), len(y_true[0])
    out = {
        f"{k}_per_{axis}": [0] * size
        for k in ("tp", "tn", "fp", "fn")
        for axis, size in (("label", n_labels), ("sample", n))
    }
    for i in range(n):
        for j in range(n_labels):
            t, p = bool(y_true[i][j]), bool(y_pred[i][j])
            kind = "tp" if t and p else "tn" if not t and not p else "fp" if p else "fn"
            out[f"{kind}_per_label"][j] += 1
            out[f"{kind}_per_sample"][i] += 1
    for kind in ("tp", "tn", "fp", "fn"):
        out[kind] = sum(out[f"{kind}_per_label"])
    out["sample_accuracy"] = [(out["tp_per_sample"][i] + out["tn_per_sample"][i]) / n_labels for i in range(n)]
    out["label_accuracy"] = [(out["tp_per_label"][j] + out["tn_per_label"][j]) / n for j in range(n_labels)]
    out["weighted_score_per_sample"] = [
        (
            out["tp_per_sample"][i]
            + out["tn_per_sample"][i]
            - false_pos * out["fp_per_sample"][i]
            - false_neg * out["fn_per_sample"][i]
        )
        / n_labels
        for i in range(n)
    ]
    return out
