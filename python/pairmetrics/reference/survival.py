"""Reference concordance of censored survival times: every pair of samples.

An event i is comparable with a sample j when T_i < T_j, or when T_i == T_j
and j is censored (two events at one time are not compared).
"""

from __future__ import annotations

__all__ = [
    "comparable_pairs",
    "lifelines_concordance",
    "sksurv_concordance",
    "concordance_counts",
    "concordance_jackknife",
]


def comparable_pairs(times, events):
    """Ordered pairs (i, j): i an event, j later or censored at the same time."""
    n = len(times)
    for i in range(n):
        if not events[i]:
            continue
        for j in range(n):
            if j != i and (times[i] < times[j] or (times[i] == times[j] and not events[j])):
                yield i, j


def lifelines_concordance(times, scores, events=None):
    """(correct, tied, admissible): higher score = longer survival."""
    events = [1] * len(times) if events is None else list(events)
    correct = tied = pairs = 0
    for i, j in comparable_pairs(times, events):
        pairs += 1
        if scores[j] > scores[i]:
            correct += 1
        elif scores[j] == scores[i]:
            tied += 1
    return correct, tied, pairs


def sksurv_concordance(events, times, estimate, tied_tol=1e-8):
    """(cindex, concordant, discordant, tied_risk, tied_time): higher estimate = higher risk."""
    concordant = discordant = tied_risk = tied_time = 0
    for i, j in comparable_pairs(times, events):
        if times[i] == times[j]:
            tied_time += 1
        if abs(estimate[j] - estimate[i]) <= tied_tol:
            tied_risk += 1
        elif estimate[j] < estimate[i]:
            concordant += 1
        else:
            discordant += 1
    total = concordant + discordant + tied_risk
    cindex = (concordant + tied_risk / 2) / total if total else float("nan")
    return cindex, concordant, discordant, tied_risk, tied_time


def concordance_counts(times, predicted, events=None, strata=None):
    """R's survival counts and per-sample counts, higher prediction = longer survival.

    Returns ``(counts, per_sample)``: ``counts`` holds concordant, discordant,
    tied on the prediction, tied on time only and tied on both (pairs of two
    events at one time); ``per_sample[i]`` the concordant, discordant and
    prediction-tied comparable pairs that sample ``i`` belongs to.
    """
    n = len(times)
    events = [1] * n if events is None else list(events)
    strata = [0] * n if strata is None else list(strata)
    counts = [0, 0, 0, 0, 0]
    per_sample = [[0, 0, 0] for _ in range(n)]
    for i, j in comparable_pairs(times, events):
        if strata[i] != strata[j]:
            continue
        column = 0 if predicted[j] > predicted[i] else 1 if predicted[j] < predicted[i] else 2
        counts[column] += 1
        per_sample[i][column] += 1
        per_sample[j][column] += 1
    for i in range(n):
        for j in range(i + 1, n):
            if strata[i] == strata[j] and events[i] and events[j] and times[i] == times[j]:
                counts[4 if predicted[i] == predicted[j] else 3] += 1
    return counts, per_sample


def concordance_jackknife(times, predicted, events=None, strata=None):
    """(estimate, variance): Harrell's C and its infinitesimal-jackknife variance as R's
    ``survival::concordance`` computes it (unit weights): with Somers' d ``d = (C - D) / N``
    over the ``N`` comparable pairs, ``dfbeta_i = ((c_i - d_i) - d * (c_i + d_i + t_i)) / N`` and
    ``Var(C) = sum(dfbeta_i ** 2) / 4``."""
    counts, per_sample = concordance_counts(times, predicted, events, strata)
    pairs = counts[0] + counts[1] + counts[2]
    somers_d = (counts[0] - counts[1]) / pairs
    dfbeta = [((c - d) - somers_d * (c + d + t)) / pairs for c, d, t in per_sample]
    return (somers_d + 1) / 2, sum(x * x for x in dfbeta) / 4
