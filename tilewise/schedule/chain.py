"""Fused chains: two layers computed row band by row band, the tensor between them never
materialised (issue 30; docs/memory.md "Fused chains").

A chain (producer → consumer) runs the consumer's output rows in bands of `band` rows. Band j
needs the consumer's input rows `span(j)` (the row window tw_input_span gives, codegen/c/
tw_runtime/tw_tile.h: the consumer's kernel rows and stride, its padding synthesized by the
kernel); the producer computes just the rows of that window not yet computed into a ring of
`ring_rows` producer output rows, the rows the next band reads again (k − s of them for a k-row,
stride-s consumer) moved to the ring's start first — the kernels take one row-major window, so the
ring rotates by one short copy per band instead of by pointer. The producer's rows are each
computed once (no recompute: the bands are taken in order and the ring keeps the overlap). This
is MCUNetV2's patch-based inference (Lin et al., NeurIPS 2021, §3.1) on full-width row bands, the
halo kept rather than recomputed.

Cost (`price`): each band is one call of each kernel on a band-sized loop nest, priced by the
binding's own cost model (`schedule_placed` on that nest: its per-call and per-row terms, the
ones bench/calibrate_m7.py fits on counted instructions), plus the ring's copies priced as the
target's L1 copies (Memory: issue, one run, bytes / bandwidth — stm32h7's DTCM figures,
counted). The band is the smallest whose chain stays within `budget` × the two layers' unfused
cycles; a chain is kept by the pipeline only when it lowers the plan's peak.

Memory: the middle tensor leaves the plan; the ring is the chain's scratch; the chain's output may
be written over the chain's input as the bands go (`lag`: the bytes its first byte must sit below
the input's, from the order the bands read and write: after band j's producer rows, the input rows
below the first row a later producer row still reads are dead).

Which layers chain (`chainable`): a pulp conv2d / 1x1 conv or depthwise (int8, batch 1) run
untiled on a one-core module (the stm32h7's Cortex-M7: the kernel reads and writes the tensors
where they are, in row order), whose output is read by the next layer only — a conv2d / 1x1 conv
or a depthwise of the same kind of placement reading nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..ir.layer import Layer, LayerGraph, LoopNest
from ..targets.base import Target

#: binding label prefixes whose compute() takes a row window (codegen/templates/layer.c.j2's
#: tile position) and runs on one core in row order (bindings/pulp/in_place.py)
ROW_KERNELS = ("pulp/conv2d_s8", "pulp/depthwise_s8")
#: a chain's predicted cycles at most this times the two layers' unfused cycles (issue 30:
#: counted instructions within 1.10x of the unfused schedule's)
BUDGET = 1.10


@dataclass(frozen=True)
class Span:
    """Rows [start, start + size) of a tensor of `extent` rows that output rows [o0, o0 + n)
    read, with the padding rows the kernel synthesizes before and after (tw_input_span)."""

    start: int
    size: int
    pad_lo: int
    pad_hi: int


def input_span(o0: int, n: int, stride: int, pad: int, kernel: int, extent: int) -> Span:
    """tw_input_span of codegen/c/tw_runtime/tw_tile.h."""
    lo = o0 * stride - pad
    hi = (o0 + n - 1) * stride - pad + kernel - 1
    a, b = max(lo, 0), min(hi, extent - 1)
    return Span(a, max(b - a + 1, 0), a - lo, max(hi - (extent - 1), 0))


def row_span(nest: LoopNest, o0: int, n: int) -> Span:
    return input_span(o0, n, nest.SY, nest.pads[0], nest.FY, nest.IY)


@dataclass(frozen=True)
class Band:
    """One band: consumer output rows [oy0, oy0 + rows); the producer rows it needs [lo, hi),
    of which [new_lo, hi) are computed for it (the rest are in the ring already)."""

    oy0: int
    rows: int
    lo: int
    hi: int
    new_lo: int


@dataclass(frozen=True)
class Chain:
    """Producer `layers[0]` → consumer `layers[1]` (consecutive in execution order), run in
    bands of `band` consumer output rows (module docstring)."""

    layers: tuple[str, str]
    band: int
    #: producer output rows the ring holds, and its bytes
    ring_rows: int
    ring_bytes: int
    #: bytes the chain's output must start below the chain's input to be written over it
    lag: int
    #: predicted cycles of the chain (both layers' band calls and the ring copies), and of the
    #: two layers unfused
    cycles: float
    unfused_cycles: float
    #: of `cycles`: the producer's band calls, the consumer's, the ring copies
    producer_cycles: float = 0.0
    consumer_cycles: float = 0.0
    copy_cycles: float = 0.0
    #: bytes the ring's rotations copy per inference
    copy_bytes: int = 0


def bands(prod: LoopNest, cons: LoopNest, band: int) -> list[Band]:
    """The bands of consumer output rows, in order, with the producer rows each needs."""
    out: list[Band] = []
    have = 0                                    # producer rows computed so far: [0, have)
    for oy0 in range(0, cons.OY, band):
        rows = min(band, cons.OY - oy0)
        s = row_span(cons, oy0, rows)
        lo, hi = s.start, s.start + s.size
        out.append(Band(oy0, rows, lo, hi, max(lo, have)))
        have = max(have, hi)
    return out


def ring_rows(bs: list[Band]) -> int:
    return max(b.hi - b.lo for b in bs)


def copied_rows(bs: list[Band]) -> list[int]:
    """Producer rows the ring moves to its start before each band (the overlap of its window
    with the previous band's)."""
    out, prev_hi = [], 0
    for b in bs:
        out.append(max(prev_hi - b.lo, 0) if b.oy0 else 0)
        prev_hi = b.hi
    return out


def chain_lag(prod: LoopNest, cons: LoopNest, bs: list[Band], align: int = 4) -> int:
    """Bytes the chain's output (the consumer's, row-major HWC) must start below the chain's
    input (the producer's) so that no band writes input bytes a later band's producer rows still
    read (module docstring); rounded up to `align`."""
    x_row = prod.IX * prod.C
    y_row = cons.OX * cons.K
    x_bytes = prod.IY * x_row
    lag = 0
    for j, b in enumerate(bs):
        later = [r for bb in bs[j + 1:] for r in range(bb.new_lo, bb.hi)]
        # the first input byte a later producer row reads (none left: the end of the input)
        first = min((row_span(prod, r, 1).start * x_row for r in later), default=x_bytes)
        lag = max(lag, (b.oy0 + b.rows) * y_row - first)
    return -(-lag // align) * align


def chainable(layer: Layer, label: str, cores: int, untiled: bool, lg: LayerGraph) -> bool:
    """A layer a chain may hold (module docstring)."""
    n = layer.nest
    if cores != 1 or not untiled or not label.startswith(ROW_KERNELS) or n.N != 1:
        return False
    if n.kind not in ("conv", "dwconv") or (n.kind == "dwconv" and n.K != n.C):
        return False
    ts = [lg.tensors[t] for t in (*layer.inputs[:1], layer.output)]
    return all(t.dtype == "int8" for t in ts) and layer.weights is not None


def candidates(lg: LayerGraph, ok: Callable[[int], bool]) -> list[int]:
    """Indices i such that layers i → i + 1 may form a chain: both `ok`, the producer's output
    read by the consumer alone (not a network output), the consumer reading nothing else."""
    readers: dict[str, int] = {}
    for layer in lg.layers:
        for t in layer.inputs:
            readers[t] = readers.get(t, 0) + 1
    out = []
    for i in range(len(lg.layers) - 1):
        p, c = lg.layers[i], lg.layers[i + 1]
        if (ok(i) and ok(i + 1) and tuple(c.inputs) == (p.output,)
                and readers.get(p.output) == 1 and p.output not in lg.outputs):
            out.append(i)
    return out


def band_nest(n: LoopNest, o0: int, rows: int) -> LoopNest:
    """The loop nest of output rows [o0, o0 + rows) of `n` (its input: the span's rows)."""
    s = row_span(n, o0, rows)
    return replace(n, OY=rows, IY=s.size, pads=(s.pad_lo, n.pads[1], s.pad_hi, n.pads[3]))


Cycles = Callable[[LoopNest], float]


def price(prod: LoopNest, cons: LoopNest, bs: list[Band], prod_cycles: Cycles, cons_cycles: Cycles,
          copy_cycles: Callable[[int], float]) -> tuple[float, float, float, int]:
    """(producer, consumer, copy) cycles of a chain's bands and the bytes its ring copies: one
    call of each kernel per band on the band's nest (`*_cycles`: the bindings' cost models), one
    copy of the overlap rows per band (`copy_cycles` of its bytes)."""
    p = sum(prod_cycles(band_nest(prod, b.new_lo, b.hi - b.new_lo)) for b in bs if b.hi > b.new_lo)
    c = sum(cons_cycles(band_nest(cons, b.oy0, b.rows)) for b in bs)
    copies = [r * prod.OX * prod.K for r in copied_rows(bs) if r]
    return p, c, sum(copy_cycles(n) for n in copies), sum(copies)


def plan_chain(names: tuple[str, str], prod: LoopNest, cons: LoopNest, prod_cycles: Cycles,
               cons_cycles: Cycles, copy_cycles: Callable[[int], float], budget: float = BUDGET,
               align: int = 4) -> Chain | None:
    """The chain of the smallest ring whose predicted cycles stay within `budget` × the unfused
    cycles (module docstring); None when no band does better than the whole layer."""
    unfused = prod_cycles(prod) + cons_cycles(cons)
    for band in range(1, cons.OY):
        bs = bands(prod, cons, band)
        rows = ring_rows(bs)
        if rows >= prod.OY:
            return None
        p, c, copy, nbytes = price(prod, cons, bs, prod_cycles, cons_cycles, copy_cycles)
        if p + c + copy <= budget * unfused:
            return Chain(names, band, rows, rows * prod.OX * prod.K, chain_lag(prod, cons, bs, align),
                         p + c + copy, unfused, p, c, copy, nbytes)
    return None


def copy_cycles(target: Target) -> Callable[[int], float]:
    """Cycles of one copy of n bytes by the core (a ring's rotation): the L1 level's copy figures
    (issue, one contiguous run, bytes / bandwidth); 0 without an L1."""
    if not target.has_memory("L1"):
        return lambda n: 0.0
    m = target.memory("L1")
    return lambda n: m.dma_issue_cycles + m.dma_chunk_cycles + n / m.bandwidth
