"""Buffers with lifetimes over the execution order, and the facts every L2 plan must respect.

A buffer is live on the closed step interval [first, last] of the execution order (step i = layer
i runs). Two buffers conflict when their lifetimes intersect; a plan is valid when no two
conflicting buffers share an address. The lower bound of any plan is the largest sum of sizes
live at one step (DESIGN.md "Memory planning": the report says how far the plan is from it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

#: activation: a layer output (or network input) that lives until its last consumer;
#: weight: a layer's constants (resident for the whole run, or a streamed-from-L3 buffer live from
#: the prefetch step to its layer); scratch: a per-step working buffer (e.g. L3-tile buffers).
BufferKind = Literal["activation", "weight", "scratch"]


@dataclass(frozen=True)
class Buffer:
    """One L2 buffer: `size` bytes, live on steps first..last (inclusive)."""

    name: str
    size: int
    first: int
    last: int
    kind: BufferKind = "activation"

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError(f"buffer {self.name!r}: negative size {self.size}")
        if self.last < self.first:
            raise ValueError(f"buffer {self.name!r}: lifetime [{self.first}, {self.last}] is empty")

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last


def align_up(n: int, align: int) -> int:
    """`n` rounded up to a multiple of `align` (align ≥ 1)."""
    return -(-n // align) * align


def live_bytes(buffers: Iterable[Buffer], align: int = 1) -> dict[int, int]:
    """Bytes live at each step that any buffer covers (sizes rounded up to `align`)."""
    live: dict[int, int] = {}
    for b in buffers:
        s = align_up(b.size, align)
        for t in range(b.first, b.last + 1):
            live[t] = live.get(t, 0) + s
    return live


def lower_bound(buffers: Iterable[Buffer], align: int = 1) -> int:
    """max over steps of the live bytes: no placement of these buffers can have a smaller peak."""
    live = live_bytes(buffers, align)
    return max(live.values(), default=0)


def conflicts(buffers: Sequence[Buffer], offsets: dict[str, int]) -> list[tuple[str, str]]:
    """Pairs of buffers that are live at a common step and overlap in address (empty = valid)."""
    bad: list[tuple[str, str]] = []
    items = sorted(buffers, key=lambda b: b.first)
    for i, a in enumerate(items):
        if a.size == 0:
            continue
        oa = offsets[a.name]
        for b in items[i + 1:]:
            if b.first > a.last:
                break
            if b.size == 0:
                continue
            ob = offsets[b.name]
            if oa < ob + b.size and ob < oa + a.size:
                bad.append((a.name, b.name))
    return bad
