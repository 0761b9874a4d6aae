"""In-place execution in the static plan: an output that overwrites its input as the layer runs,
expressed as an alias with an offset.

A link (`Link`) says: the buffer `output` starts `lag` bytes below the buffer `input`, whose last
reader is the step that writes `output` (the kernel consumes the input in an order that never
lets a write reach input bytes still to be read: bindings/pulp/in_place.py derives the lag from
each kernel's loop order). At that step the pair takes max(out, lag + in) bytes instead of
out + in — TinyEngine's in-place depthwise (MCUNet, NeurIPS 2020, §3.2), generalised to the
kernels whose order allows it. Links chain (a depthwise over a conv's output, a pointwise over
the depthwise's): every buffer of a chain then sits at a fixed offset from the chain's base.

Planning (`plan_linked`): the greedy offset planner of bestfit.py generalised to rigid units — a
unit is one buffer, or a chain of linked buffers with their relative offsets; units are placed in
a priority order at the lowest base (first fit) where no member overlaps, in address and in time,
a buffer already placed (a linked pair overlaps on purpose and is not a conflict). The same priority
orders and seeded random restarts as bestfit.py; the lower bound counts each linked pair at its
shared step as its extent (`lower_bound_linked`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .bestfit import ORDERS, search_orders
from .buffers import Buffer, align_up


@dataclass(frozen=True)
class Link:
    """Buffer `output` starts `lag` bytes (≥ 0, a multiple of the plan's alignment) below buffer
    `input`, which dies at the step `output` is written."""

    output: str
    input: str
    lag: int


def units(buffers: Sequence[Buffer], links: Iterable[Link]) -> list[list[tuple[Buffer, int]]]:
    """The rigid units: each buffer alone, or a chain of linked buffers with its offset relative
    to the chain's lowest byte."""
    by_name = {b.name: b for b in buffers}
    below = {lk.input: lk for lk in links}            # input → the link of the output over it
    above = {lk.output: lk for lk in below.values()}
    out: list[list[tuple[Buffer, int]]] = []
    for b in buffers:
        if b.name in above:       # not the head of its chain (the head: the oldest input)
            continue
        chain, rel, name = [(b, 0)], 0, b.name
        while name in below:
            lk = below[name]
            rel -= lk.lag
            chain.append((by_name[lk.output], rel))
            name = lk.output
        low = min(r for _, r in chain)
        out.append([(m, r - low) for m, r in chain])
    return out


def _place(order: list[list[tuple[Buffer, int]]], align: int) -> tuple[dict[str, int], int]:
    placed: list[tuple[Buffer, int, int]] = []   # buffer, offset, aligned size
    offsets: dict[str, int] = {}
    peak = 0
    for unit in order:
        # base values forbidden by each (member, placed buffer) live at a common step
        spans = sorted((o - r - align_up(m.size, align) + 1, o + s - r)
                       for m, r in unit if m.size for p, o, s in placed
                       if s and p.overlaps_in_time(m))
        base = 0
        for lo, hi in spans:              # the lowest base outside every forbidden span
            if lo <= base < hi:
                base = align_up(hi, align)
        for m, r in unit:
            offsets[m.name] = base + r
            placed.append((m, base + r, align_up(m.size, align)))
            peak = max(peak, base + r + align_up(m.size, align))
    return offsets, peak


def _extent(unit: list[tuple[Buffer, int]], align: int) -> int:
    return max(r + align_up(m.size, align) for m, r in unit)


def plan_linked(buffers: Sequence[Buffer], links: Sequence[Link], align: int = 1,
                restarts: int = 0, goal: int = 0, seed: int = 0) -> tuple[dict[str, int], int, str]:
    """Offsets, peak and the winning priority order of the rigid-unit best-fit (module
    docstring); after the fixed orders, up to `restarts` random ones while the peak is above
    `goal`."""
    us = units(buffers, links)

    def key(name: str):
        # a unit sorts by its head buffer's key, with its extent as the size
        def k(u: list[tuple[Buffer, int]]):
            head = u[0][0]
            first = min(m.first for m, _ in u)
            last = max(m.last for m, _ in u)
            return ORDERS[name](Buffer(head.name, _extent(u, align), first, last, head.kind))
        return k

    return search_orders(us, lambda order: _place(order, align), key, tuple(ORDERS), restarts, goal,
                         seed)


def lower_bound_linked(buffers: Sequence[Buffer], links: Sequence[Link], align: int = 1) -> int:
    """max over steps of the live bytes, a linked pair counted at its shared step as the extent
    of its two buffers: no placement of these buffers with these links has a smaller peak."""
    return max(live_linked(buffers, links, align).values(), default=0)


def live_linked(buffers: Sequence[Buffer], links: Sequence[Link], align: int = 1) -> dict[int, int]:
    """The live bytes of each step as lower_bound_linked counts them."""
    by_name = {b.name: b for b in buffers}
    live: dict[int, int] = {}
    for b in buffers:
        for t in range(b.first, b.last + 1):
            live[t] = live.get(t, 0) + align_up(b.size, align)
    for lk in links:
        i, o = by_name[lk.input], by_name[lk.output]
        si, so = align_up(i.size, align), align_up(o.size, align)
        live[o.first] -= si + so - max(so, lk.lag + si)
    return live


def linked_conflicts(buffers: Sequence[Buffer], offsets: Mapping[str, int],
                     links: Sequence[Link]) -> list[tuple[str, str]]:
    """Pairs of buffers live at a common step that overlap in address, but for linked pairs
    placed at their link's offset (empty = valid)."""
    ok = {frozenset((lk.input, lk.output)) for lk in links
          if offsets[lk.input] - offsets[lk.output] == lk.lag}
    bad: list[tuple[str, str]] = []
    items = sorted((b for b in buffers if b.size), key=lambda b: b.first)
    for n, a in enumerate(items):
        oa = offsets[a.name]
        for b in items[n + 1:]:
            if b.first > a.last:
                break
            ob = offsets[b.name]
            if oa < ob + b.size and ob < oa + a.size and frozenset((a.name, b.name)) not in ok:
                bad.append((a.name, b.name))
    return bad
