"""Best-fit static offset assignment over buffer lifetimes (the alternative to the DORY stack).

Buffers are placed one at a time in a priority order; each goes into the smallest address gap that
holds it among the buffers already placed whose lifetimes intersect its own (or on top of them when
no gap fits). This is the greedy offset planner of the "by size" family used by TFLite Micro's
arena planner and by the static-allocation literature; it is not from the seeds, which keep only
the stack (DESIGN.md asks for both and keeps the smaller peak). Several priority orders are tried
and the smallest peak wins; ties go to the earlier order. Greedy placement is sensitive to the order
(fragmentation), so when no fixed order reaches the goal (by default the lower bound, i.e. a
provably optimal plan) a bounded number of seeded random orders follow — deterministic, and cheap
(a placement of 30 buffers takes ~0.1 ms).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .buffers import Buffer, align_up

T = TypeVar("T")

#: priority orders (name → sort key); the first three are the usual ones, the last places
#: buffers in execution order (a first-fit "arena" allocator)
ORDERS: dict[str, Callable[[Buffer], tuple]] = {
    "size": lambda b: (-b.size, -(b.last - b.first), b.first, b.name),
    "area": lambda b: (-b.size * (b.last - b.first + 1), -b.size, b.first, b.name),
    "lifetime": lambda b: (-(b.last - b.first), -b.size, b.first, b.name),
    "start": lambda b: (b.first, -b.size, b.name),
}


def _place(order: list[Buffer], align: int) -> tuple[dict[str, int], int]:
    placed: list[tuple[Buffer, int, int]] = []  # buffer, offset, aligned size
    offsets: dict[str, int] = {}
    peak = 0
    for b in order:
        size = align_up(b.size, align)
        busy = sorted((o, o + s) for p, o, s in placed if s and p.overlaps_in_time(b))
        best: tuple[int, int] | None = None  # (gap size, offset)
        cursor = 0
        for lo, hi in busy:
            gap = lo - cursor
            if gap >= size and (best is None or gap < best[0]):
                best = (gap, cursor)
            cursor = max(cursor, hi)
        offset = best[1] if best is not None else cursor
        offsets[b.name] = offset
        placed.append((b, offset, size))
        peak = max(peak, offset + size)
    return offsets, peak


def plan_best_fit(
    buffers: Sequence[Buffer], align: int = 1, orders: Sequence[str] = tuple(ORDERS),
    restarts: int = 0, goal: int = 0, seed: int = 0,
) -> tuple[dict[str, int], int, str]:
    """Offsets, peak and the winning priority order ("size", ..., "random") of the planner.

    After the fixed `orders`, up to `restarts` random orders are tried while the peak is above
    `goal` (pass the lower bound: no order can beat it).
    """
    return search_orders(buffers, lambda order: _place(order, align), lambda name: ORDERS[name],
                         orders, restarts, goal, seed)


def search_orders(items: Sequence[T], place: Callable[[list[T]], tuple[dict[str, int], int]],
                  key_of: Callable[[str], Callable[[T], Any]], orders: Sequence[str] = tuple(ORDERS),
                  restarts: int = 0, goal: int = 0, seed: int = 0) -> tuple[dict[str, int], int, str]:
    """The best of `place` over the priority `orders` (items sorted by key_of(name)), then up to
    `restarts` random orders while the peak is above `goal`: (offsets, peak, winning order's
    name or "random"). Shared by plan_best_fit and inplace.plan_linked (its rigid units)."""
    best: tuple[dict[str, int], int, str] | None = None
    for name in orders:
        offsets, peak = place(sorted(items, key=key_of(name)))
        if best is None or peak < best[1]:
            best = (offsets, peak, name)
    assert best is not None
    rng = random.Random(seed)
    order = sorted(items, key=key_of("size"))
    for _ in range(restarts):
        if best[1] <= goal:
            break
        rng.shuffle(order)
        offsets, peak = place(order)
        if peak < best[1]:
            best = (offsets, peak, "random")
    return best
