"""Pareto fronts of a sweep: per model, the points no other point beats on both the objective
(latency, energy or EDP) and the chip's memory (seed 002 Alg. 3 / Fig. 5.12 search the same kind
of front over tile sizes × schedules, performance against memory traffic).

Memory is the chip's: the kB free for tiles at L1 plus at L2 of the point's (hypothetical) target,
`chip_l1_kb + chip_l2_kb` — the design variable a sweep varies (what the network then uses is in
the rows' l1_bytes / ram_bytes). A point is dominated when another of the same model is no worse
on both and better on one; ties keep both.

A second front (`pareto_ram`) takes the RAM the network itself uses (`ram_bytes`: the L1 arena plus
the L2 plan's peak) as the memory axis: what `--ram-budget` trades against cycles (fused chains,
pipeline.py) on one chip.
"""

from __future__ import annotations

from collections.abc import Sequence

METRIC = {"latency": "latency_ms", "energy": "energy_uj", "edp": "edp"}


def chip_memory_kb(row: dict) -> float | None:
    if row.get("chip_l1_kb") is None or row.get("chip_l2_kb") is None:
        return None
    return row["chip_l1_kb"] + row["chip_l2_kb"]


def ram_kb(row: dict) -> float | None:
    """kB of RAM the point's network uses (L1 arena + L2 plan peak), None when it did not run."""
    return None if row.get("ram_bytes") is None else row["ram_bytes"] / 1024


def front(pairs: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the non-dominated (x, y) pairs, both minimized, sorted by x then y."""
    order = sorted(range(len(pairs)), key=lambda i: pairs[i])
    out: list[int] = []
    best_y = float("inf")
    for i in order:
        x, y = pairs[i]
        if y < best_y or (out and pairs[out[-1]] == (x, y)):
            out.append(i)
            best_y = min(best_y, y)
    return out


def mark_pareto(rows: list[dict], objective: str = "latency") -> None:
    """Set each row's `pareto` (True on its model's front of objective × chip memory; False off
    it or when the point has no value for either) and `pareto_ram` (the same against the RAM the
    network uses, `ram_kb`)."""
    for flag, memory in (("pareto", chip_memory_kb), ("pareto_ram", ram_kb)):
        _mark(rows, METRIC[objective], flag, memory)


def _mark(rows: list[dict], key: str, flag: str, memory) -> None:
    by_model: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        r[flag] = False
        if r.get("status") == "ok" and r.get(key) is not None and memory(r) is not None:
            by_model.setdefault(r["model"], []).append(i)
    for idx in by_model.values():
        pairs = [(memory(rows[i]), rows[i][key]) for i in idx]
        for j in front(pairs):
            rows[idx[j]][flag] = True
