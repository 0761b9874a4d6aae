"""L2 offset plan of a set of buffers: run both planners, keep the smaller peak (DESIGN.md).

The planners are the seed-001 bidirectional stack (`bidirectional.py`) and a best-fit offset
assignment (`bestfit.py`). The plan records both peaks, which planner won, and the lower bound
(max over steps of live bytes), so a report can say how far from optimal the plan is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .bestfit import plan_best_fit
from .bidirectional import plan_bidirectional
from .buffers import Buffer, conflicts, live_bytes, lower_bound
from .inplace import Link, linked_conflicts, lower_bound_linked, plan_linked


@dataclass(frozen=True)
class Plan:
    """Static offsets of `buffers` in one memory; `peak` bytes are needed from offset 0."""

    buffers: tuple[Buffer, ...]
    offsets: dict[str, int] = field(hash=False)
    peak: int
    lower_bound: int
    #: "bidirectional" or "best-fit/<order>"
    planner: str
    #: peak of each planner tried, by planner name
    peaks: dict[str, int] = field(hash=False)
    align: int = 1
    #: outputs written over their dying input (memory/inplace.py); empty: no buffer shares bytes
    links: tuple[Link, ...] = ()

    def offset(self, name: str) -> int:
        return self.offsets[name]

    @property
    def gap(self) -> float:
        """Relative distance of the peak from the lower bound (0 = provably optimal)."""
        return 0.0 if self.lower_bound == 0 else self.peak / self.lower_bound - 1.0


#: random orders the best-fit planner may try when its fixed orders miss the goal
RESTARTS = 400


def plan_buffers(
    buffers: Sequence[Buffer], flips: Sequence[bool] | None = None, align: int = 1,
    capacity: int | None = None, restarts: int = RESTARTS,
) -> Plan:
    """Plan `buffers` with both planners and keep the smaller peak (ties: the DORY stack).

    The best-fit planner stops searching once its peak reaches the lower bound, or `capacity` when
    given (a feasibility check: any plan that fits will do).
    """
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"duplicate buffer names: {dup}")
    lb = lower_bound(buffers, align)
    bi_off, bi_peak = plan_bidirectional(buffers, flips, align)
    goal = max(lb, capacity or 0)
    bf_off, bf_peak, order = plan_best_fit(
        buffers, align, restarts=restarts if bi_peak > goal else 0, goal=goal)
    bf_name = f"best-fit/{order}"
    peaks = {"bidirectional": bi_peak, bf_name: bf_peak}
    if bi_peak <= bf_peak:
        offsets, peak, planner = bi_off, bi_peak, "bidirectional"
    else:
        offsets, peak, planner = bf_off, bf_peak, bf_name
    bad = conflicts(buffers, offsets)
    assert not bad, f"{planner} produced overlapping buffers {bad[:3]}"
    return Plan(tuple(buffers), offsets, peak, lb, planner, peaks, align)


def plan_in_place(buffers: Sequence[Buffer], links: Sequence[Link], align: int = 1,
                  restarts: int = RESTARTS) -> Plan:
    """Plan `buffers` with the links (inplace.py) that lower the peak: links are tried one at a
    time, those at the steps with the most live bytes first, each kept when the planned peak does
    not rise (a long chain of links is one rigid unit whose lags add up, so linking everything
    can raise the peak); the lower bound is the linked one of the kept links."""
    live = live_bytes(buffers, align)
    first = {b.name: b.first for b in buffers}
    kept: list[Link] = []
    peak = plan_linked(buffers, [], align)[1]
    for lk in sorted(links, key=lambda lk: (-live[first[lk.output]], first[lk.output])):
        trial = plan_linked(buffers, [*kept, lk], align)[1]
        if trial <= peak:
            kept, peak = [*kept, lk], trial
    lb = lower_bound_linked(buffers, kept, align)
    offsets, peak, order = plan_linked(buffers, kept, align, restarts=restarts, goal=lb)
    bad = linked_conflicts(buffers, offsets, kept)
    assert not bad, f"in-place plan produced overlapping buffers {bad[:3]}"
    name = f"in-place/{order}"
    return Plan(tuple(buffers), offsets, peak, lb, name, {name: peak}, align, tuple(kept))
