"""The seed-001 bidirectional buffer-allocation stack (DORY §4.4.1), generalized to lifetimes.

Seed 001: L2 is one buffer holding two LIFO stacks that grow towards each other from its two ends.
Before layer i runs, its output buffer and its weight buffer are pushed, in that order (weights
nearest the pointer), onto the end selected by a begin/end flag; the flag flips after each layer's
weight allocation; buffers whose lifetime counter reached zero (residual outputs keep theirs until
their last consumer) are popped. For a chain the stack needs
D = maxᵢ(L2x,i + L2w,i + L2w,i+1 + L2x,i+1) — with the next layer's weights prefetched during layer
i, the four buffers live during step i.

Generalization used here (any set of lifetimes, not just a chain):
- at step t, every buffer with last < t is marked free on both stacks; free entries are popped from
  each stack top (a free entry below a live one stays: that is the fragmentation a stack accepts);
- buffers with first == t are pushed on the current end, longest-lived first so that the earliest
  to die sit on top (ties: activations before weights, as in the paper);
- the end flips after step t when `flips[t]` is true (default: a weight buffer was pushed at t —
  the paper's rule).
The stack size is max over steps of (top of the low stack + top of the high stack); low-stack
buffers sit at their stack position, high-stack ones at size − position − buffer size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .buffers import Buffer, align_up

_KIND_ORDER = {"activation": 0, "scratch": 1, "weight": 2}


@dataclass
class _Entry:
    buf: Buffer
    pos: int
    size: int


def plan_bidirectional(
    buffers: Sequence[Buffer], flips: Sequence[bool] | None = None, align: int = 1
) -> tuple[dict[str, int], int]:
    """Offsets by buffer name and the peak (bytes) of the bidirectional stack."""
    if not buffers:
        return {}, 0
    n_steps = max(b.last for b in buffers) + 1
    starts: dict[int, list[Buffer]] = {}
    for b in buffers:
        starts.setdefault(b.first, []).append(b)
    stacks: list[list[_Entry]] = [[], []]
    side_of: dict[str, int] = {}
    pos_of: dict[str, int] = {}
    end = 0
    peak = 0
    for t in range(n_steps):
        for st in stacks:
            while st and st[-1].buf.last < t:
                st.pop()
        new = sorted(starts.get(t, ()), key=lambda b: (-b.last, _KIND_ORDER[b.kind], b.name))
        st = stacks[end]
        for b in new:
            top = st[-1].pos + st[-1].size if st else 0
            e = _Entry(b, top, align_up(b.size, align))
            st.append(e)
            side_of[b.name] = end
            pos_of[b.name] = top
        tops = sum((s[-1].pos + s[-1].size) if s else 0 for s in stacks)
        peak = max(peak, tops)
        flip = flips[t] if flips is not None and t < len(flips) else any(
            b.kind == "weight" for b in new)
        if flip:
            end ^= 1
    offsets: dict[str, int] = {}
    for b in buffers:
        if side_of[b.name] == 0:
            offsets[b.name] = pos_of[b.name]
        else:
            offsets[b.name] = peak - pos_of[b.name] - align_up(b.size, align)
    return offsets, peak
