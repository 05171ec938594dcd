"""Intervals for pass rates: Wilson's score interval for one arm, Newcombe's hybrid score interval
for the difference between two (his method 10, built from the two Wilson intervals), and a paired
bootstrap interval for the same difference.

Wilson and Newcombe are closed formulas: the same counts always give the same interval (a second run
of the same suite reproduces its report), they stay inside [0, 1] and [-1, 1], and they behave at 0/n
and n/n, where the textbook normal interval collapses to a point. Newcombe's interval treats the arms
as independent samples; the runs are paired (same task, same run number), and for paired data that is
conservative (wider than needed), never the other way. The paired bootstrap uses the pairing: it
resamples the pairs' differences (+1 with only, -1 without only, 0 both or neither) with a fixed seed,
so it too is a function of the runs alone. A percentile bootstrap never reaches past what was
observed: when every pair agrees it is a single point, so with few pairs Newcombe's is the one to read.
"""
from __future__ import annotations

import math
import random

Z95 = 1.959963984540054


def wilson(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval of `passed` out of `total` ((0, 1) when nothing ran)."""
    if total <= 0:
        return (0.0, 1.0)
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe(passed_a: int, total_a: int, passed_b: int, total_b: int, z: float = Z95) -> tuple[float, float]:
    """The 95% interval of rate(a) - rate(b) (Newcombe 1998, method 10)."""
    if total_a <= 0 or total_b <= 0:
        return (-1.0, 1.0)
    pa, pb = passed_a / total_a, passed_b / total_b
    la, ua = wilson(passed_a, total_a, z)
    lb, ub = wilson(passed_b, total_b, z)
    d = pa - pb
    lower = d - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    upper = d + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


RESAMPLES = 2000
SEED = 30  # fixed: the same pairs always give the same interval


def paired_bootstrap(diffs: list[int], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the mean of paired differences (each -1, 0 or +1):
    `resamples` draws of len(diffs) pairs with replacement, from a generator seeded with `seed`.
    (-1, 1) when there is no pair."""
    n = len(diffs)
    if n == 0:
        return (-1.0, 1.0)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    lower = means[math.ceil(0.025 * resamples) - 1]
    upper = means[math.ceil(0.975 * resamples) - 1]
    return (lower, upper)
