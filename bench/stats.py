"""Statistics of repeated measurements: medians and ratios computed run by run.

Issue 5: medians of at least five runs after a warm-up; a ratio between two engines is computed in
each run (both measured in the same round, so a slow moment of the shared machine hits both) and
the median of those per-run ratios is reported — not the ratio of the medians.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def median(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("median of no values")
    return float(statistics.median(xs))


def run_ratios(num: Sequence[float], den: Sequence[float]) -> list[float]:
    """Per-run ratios num[i] / den[i] of two series measured in the same rounds."""
    if len(num) != len(den):
        raise ValueError(f"ratio of series of different lengths ({len(num)} vs {len(den)})")
    return [a / b for a, b in zip(num, den)]


def median_ratio(num: Sequence[float], den: Sequence[float]) -> float:
    return median(run_ratios(num, den))


def spread(xs: Sequence[float]) -> float:
    """Relative spread (max - min) / median of a series, to show how noisy a measurement was."""
    m = median(xs)
    return (max(xs) - min(xs)) / m if m else 0.0


def interleaved_wall_times(fns: Sequence[Callable[[], object]], runs: int, warmup: int = 1) -> list[list[float]]:
    """Wall seconds of each function over `runs` rounds, the functions alternating within a round
    (after `warmup` untimed rounds)."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    out: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            out[i].append(time.perf_counter() - t0)
    return out
