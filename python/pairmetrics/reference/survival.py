"""Reference concordance of censored survival times: every pair of samples.

An event i is comparable with a sample j when T_i < T_j, or when T_i == T_j
and j is censored (two events at one time are not compared).
"""

from __future__ import annotations

__all__ = ["comparable_pairs", "lifelines_concordance", "sksurv_concordance"]


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
