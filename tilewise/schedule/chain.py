"""Fused chains: runs of layers computed row band by row band, the tensors between them never
materialised (issue 30; docs/memory.md "Fused chains").

A chain of N members (consecutive layers, each after the first reading the previous one's output
alone) runs the last member's output rows in bands of `band` rows. The band's rows are driven
backwards through the members' receptive fields (`bands`): member k + 1's rows to compute need the
rows of intermediate tensor k in their input window (tw_input_span, codegen/c/tw_runtime/
tw_tile.h: the kernel rows and stride, the padding synthesized by the kernel); member k computes
just the rows of that window not yet computed, into a ring holding its output's window, the rows
the next window reads again moved to the ring's start first — the kernels take one row-major
window, so a ring rotates by one short copy per band instead of by pointer. Every intermediate row
is computed once (no recompute: the bands are taken in order and each ring keeps the overlap).
This is MCUNetV2's patch-based inference (Lin et al., NeurIPS 2021, §3.1) on full-width row
bands, the halo kept rather than recomputed.

Cost (`price`): each band is one call of each member's kernel on a band-sized loop nest, priced by
the binding's own cost model (`schedule_placed` on that nest: its per-call and per-row terms, the
ones bench/calibrate_m7.py fits on counted instructions), plus the rings' copies priced as the
target's L1 copies (Memory: issue, one run, bytes / bandwidth — stm32h7's DTCM figures,
counted). The band is the smallest whose chain stays within `budget` × the members' unfused
cycles; a chain is kept by the pipeline only when it lowers the plan's peak.

Memory: the intermediate tensors leave the plan; the rings (one after the other, `ring_offsets`)
are the chain's scratch; the chain's output may be written over the chain's input as the bands go
(`lag`: the bytes its first byte must sit below the input's, from the order the bands read and
write: after band j, the input rows below the first row a later band's first member reads are
dead).

Which layers chain (`chainable`): a pulp conv2d / 1x1 conv or depthwise (int8, batch 1) run
untiled (the kernel reads and writes the tensors where they are: the stm32h7's Cortex-M7, or
pulp-open's cores on the L2 tensors — the 8 cluster cores splitting each band's rows as they
split a tile, one fork per member and band: a member's band is done before the next member
reads it, so the band order the lag is computed from holds), whose output is read by the next
layer only; as the last member a residual add (pulp add_s8) of the last member's output and
either the chain's input (its skip, live through the chain) or a branch's.

A branch (`Chain.branch`, a residual block whose shortcut is a convolution: ResNet's stride-2
block, x → 3x3 s2 → 3x3 → add ← 1x1 s2 ← x) is a member right before the add that reads the
chain's input too: per band it computes the add's rows [oy0, oy0 + rows) of its output from the
chain's input into a ring of `band` rows (no halo: the add reads each row once), after the main
path's members and before the add. The bands are the main path's (the members but the branch);
the chain's input dies under the chain's output only below the first row a later band's first
member or branch reads (`chain_lag`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..ir.layer import Layer, LayerGraph, LoopNest
from ..targets.base import Target

#: binding label prefixes whose compute() takes a row window (codegen/templates/layer.c.j2's
#: tile position) and runs on one core in row order (bindings/pulp/in_place.py)
ROW_KERNELS = ("pulp/conv2d_s8", "pulp/depthwise_s8")
#: an add whose kernel takes a row window of both inputs (bindings/pulp/simple.py add_s8: its
#: tables built by its first call, at oy0 0, kept in its L1 scratch for the later calls)
ADD_KERNELS = ("pulp/add_s8",)
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
class Window:
    """The rows [lo, hi) of a chain's intermediate tensor the next member reads for one band,
    of which [new_lo, hi) its writer computes for it (the rest are in the ring already)."""

    lo: int
    hi: int
    new_lo: int


@dataclass(frozen=True)
class Band:
    """One band: the last member's output rows [oy0, oy0 + rows); `wins[k]` the window of
    intermediate tensor k (member k's output) it needs, None when member k + 1 computes no row
    in this band. `lo` / `hi` / `new_lo`: the first intermediate's (a pair's middle tensor)."""

    oy0: int
    rows: int
    wins: tuple[Window | None, ...]

    @property
    def lo(self) -> int:
        return self.wins[0].lo if self.wins[0] else 0

    @property
    def hi(self) -> int:
        return self.wins[0].hi if self.wins[0] else 0

    @property
    def new_lo(self) -> int:
        return self.wins[0].new_lo if self.wins[0] else 0


@dataclass(frozen=True)
class Chain:
    """Members `layers` (consecutive in execution order, each reading the previous one's output
    alone), run in bands of `band` output rows of the last member (module docstring)."""

    layers: tuple[str, ...]
    band: int
    #: rows each intermediate tensor's ring holds, and each ring's bytes
    ring_rows: tuple[int, ...]
    rings: tuple[int, ...]
    #: bytes the chain's output must start below the chain's input to be written over it
    lag: int
    #: predicted cycles of the chain (every member's band calls and the ring copies), and of the
    #: members unfused
    cycles: float
    unfused_cycles: float
    #: of `cycles`: each member's band calls (the chain's fixed call cost on the first), the ring
    #: copies
    member_cycles: tuple[float, ...] = ()
    copy_cycles: float = 0.0
    #: bytes the rings' rotations copy per inference
    copy_bytes: int = 0
    #: each member's L1 scratch offset in the L1 arena (an add's tables, kept across its band
    #: calls, after the other members' scratch) and the chain's L1 bytes
    l1_offsets: tuple[int, ...] = ()
    l1_bytes: int = 0
    #: the member (index in `layers`, right before the last, an add) reading the chain's input
    #: beside the first, its output the add's other input (module docstring: a branch); its ring
    #: is the last of `rings`
    branch: int | None = None

    @property
    def main(self) -> tuple[int, ...]:
        """The members of the main path (all but the branch), in order."""
        return main_path(len(self.layers), self.branch)

    @property
    def ring_bytes(self) -> int:
        """The chain's scratch: the rings one after the other, each 4-byte aligned."""
        return sum(-(-r // 4) * 4 for r in self.rings)


def main_path(n: int, branch: int | None) -> tuple[int, ...]:
    """The indices of a chain's `n` members but its branch."""
    return tuple(k for k in range(n) if k != branch)


def ring_offsets(rings: tuple[int, ...], align: int = 4) -> tuple[int, ...]:
    """Each ring's offset in the chain's scratch (the rings in order, `align`-aligned)."""
    out, at = [], 0
    for r in rings:
        out.append(at)
        at += -(-r // align) * align
    return tuple(out)


def bands(nests: Sequence[LoopNest], band: int) -> list[Band]:
    """The bands of the last member's output rows, in order, with the window of each
    intermediate tensor it needs: driven backwards through the members' receptive fields (the
    rows member k computes are those of its window not computed yet; the window of tensor k - 1
    is the input span of those rows). chain.c.j2's band loop is the same arithmetic."""
    last = nests[-1]
    have = [0] * (len(nests) - 1)              # rows of tensor k computed so far: [0, have[k])
    out: list[Band] = []
    for oy0 in range(0, last.OY, band):
        rows = min(band, last.OY - oy0)
        wins: list[Window | None] = [None] * (len(nests) - 1)
        c0, n = oy0, rows                     # the rows member k + 1 computes
        for k in range(len(nests) - 2, -1, -1):
            if n <= 0:
                break
            s = row_span(nests[k + 1], c0, n)
            lo, hi = s.start, s.start + s.size
            new_lo = max(lo, have[k])
            wins[k] = Window(lo, hi, new_lo)
            have[k] = max(have[k], hi)
            c0, n = new_lo, hi - new_lo
        out.append(Band(oy0, rows, tuple(wins)))
    return out


def _rings(bs: list[Band]) -> list[tuple[int, list[int]]]:
    """Per intermediate tensor: the ring's rows and the rows it moves to its start before each
    band (chain.c.j2's rotation: the window's rows already held move down, one memmove)."""
    out = []
    for k in range(len(bs[0].wins)):
        lo = hi = size = 0
        moved = []
        for b in bs:
            w = b.wins[k]
            m = 0
            if w is not None:
                if w.lo >= hi:
                    lo = hi = w.lo
                elif w.lo > lo:
                    m, lo = hi - w.lo, w.lo
                hi = max(hi, w.hi)
                size = max(size, hi - lo)
            moved.append(m)
        out.append((size, moved))
    return out


def ring_rows(bs: list[Band]) -> int:
    """The first intermediate's ring rows (a pair's ring)."""
    return _rings(bs)[0][0]


def copied_rows(bs: list[Band]) -> list[int]:
    """Rows the first intermediate's ring moves to its start before each band."""
    return _rings(bs)[0][1]


def chain_lag(nests: Sequence[LoopNest], bs: list[Band], align: int = 4,
              branch: LoopNest | None = None) -> int:
    """Bytes the chain's output (the last member's, row-major HWC) must start below the chain's
    input (the first member's) so that no band writes input bytes a later band's first-member
    rows — or its branch's rows (`branch`: the branch's nest) — still read (module docstring);
    rounded up to `align`. `nests`: the main path's."""
    first_n, last = nests[0], nests[-1]
    x_row = first_n.IX * first_n.C
    y_row = last.OX * last.K
    x_bytes = first_n.IY * x_row
    lag = 0
    for j, b in enumerate(bs):
        later = [w.new_lo for bb in bs[j + 1:] for w in bb.wins[:1] if w is not None and w.hi > w.new_lo]
        # the first input byte a later first-member row reads (none left: the end of the input)
        first = min((row_span(first_n, r, 1).start * x_row for r in later), default=x_bytes)
        if branch is not None and j + 1 < len(bs):
            first = min(first, row_span(branch, bs[j + 1].oy0, 1).start * x_row)
        lag = max(lag, (b.oy0 + b.rows) * y_row - first)
    return -(-lag // align) * align


def l1_layout(l1: Sequence[int], kept: Sequence[bool], align: int = 8) -> tuple[tuple[int, ...], int]:
    """Each member's L1 scratch offset and the chain's L1 bytes: the members whose scratch lives
    only during one call (`kept` False) share offset 0; the others (an add's tables, built by
    its first band call) each after them."""
    at = -(-max((b for b, k in zip(l1, kept) if not k), default=0) // align) * align
    out = []
    for b, k in zip(l1, kept):
        if k:
            out.append(at)
            at += -(-b // align) * align
        else:
            out.append(0)
    return tuple(out), max(at, max(l1, default=0))


def is_add(label: str) -> bool:
    return label.startswith(ADD_KERNELS)


def chainable(layer: Layer, label: str, cores: int, untiled: bool, lg: LayerGraph) -> bool:
    """A layer a chain may hold (module docstring)."""
    n = layer.nest
    if not untiled or n.N != 1 or cores < 1:
        return False
    if is_add(label):
        return (len(layer.inputs) == 2 and all(lg.tensors[t].dtype == "int8"
                                                for t in (*layer.inputs, layer.output)))
    if not label.startswith(ROW_KERNELS):
        return False
    if n.kind not in ("conv", "dwconv") or (n.kind == "dwconv" and n.K != n.C):
        return False
    ts = [lg.tensors[t] for t in (*layer.inputs[:1], layer.output)]
    return all(t.dtype == "int8" for t in ts) and layer.weights is not None


def candidates(lg: LayerGraph, ok: Callable[[int], bool], longest: int = 8) -> list[tuple[int, int]]:
    """Index ranges [i, j) (2 <= j - i <= `longest`) of layers that may form a chain: each
    `ok`, each member after the first reading the previous one's output, which no other layer
    reads and which is not a network output, and nothing else — but a two-input last member (a
    residual add) whose other input is the chain's input (its skip, live through the chain)."""
    readers: dict[str, int] = {}
    for layer in lg.layers:
        for t in layer.inputs:
            readers[t] = readers.get(t, 0) + 1

    def link(i: int) -> bool:
        p, c = lg.layers[i], lg.layers[i + 1]
        return (ok(i) and ok(i + 1) and tuple(c.inputs) == (p.output,)
                and readers.get(p.output) == 1 and p.output not in lg.outputs)

    def skip_link(i: int, head: int) -> bool:
        """Layer i + 1 an add of layer i's output and the input of the chain's first member."""
        p, c = lg.layers[i], lg.layers[i + 1]
        return (ok(i) and ok(i + 1) and len(c.inputs) == 2 and p.output in c.inputs
                and set(c.inputs) == {p.output, lg.layers[head].inputs[0]}
                and c.inputs[0] != c.inputs[1]
                and readers.get(p.output) == 1 and p.output not in lg.outputs)

    def branch_link(i: int, head: int) -> bool:
        """Layer i + 1 a branch reading the chain's input alone, layer i + 2 an add of layer i's
        output and the branch's (module docstring)."""
        if i + 2 >= len(lg.layers):
            return False
        p, b, c = lg.layers[i], lg.layers[i + 1], lg.layers[i + 2]
        return (ok(i) and ok(i + 1) and ok(i + 2) and tuple(b.inputs) == (lg.layers[head].inputs[0],)
                and len(c.inputs) == 2 and set(c.inputs) == {p.output, b.output}
                and b.nest.OY == c.nest.OY and p.nest.OY == c.nest.OY
                and all(readers.get(t) == 1 and t not in lg.outputs for t in (p.output, b.output)))

    links = [link(i) for i in range(len(lg.layers) - 1)]
    out = []
    for i in range(len(links)):
        j = i
        while j < len(links) and j + 1 - i < longest:
            if links[j]:
                j += 1
                out.append((i, j + 1))
            else:
                if skip_link(j, i):
                    out.append((i, j + 2))
                elif branch_link(j, i):
                    out.append((i, j + 3))
                break
    return out


def branch_of(lg: LayerGraph, i: int, j: int) -> int | None:
    """The branch (its index in the members) of the candidate run [i, j): the member before the
    last that reads the chain's input (`candidates`' branch_link), None for a linear run."""
    if j - i >= 3 and tuple(lg.layers[j - 2].inputs) == (lg.layers[i].inputs[0],) \
            and j - 2 != i:
        return j - 2 - i
    return None


def band_nest(n: LoopNest, o0: int, rows: int) -> LoopNest:
    """The loop nest of output rows [o0, o0 + rows) of `n` (its input: the span's rows)."""
    s = row_span(n, o0, rows)
    return replace(n, OY=rows, IY=s.size, pads=(s.pad_lo, n.pads[1], s.pad_hi, n.pads[3]))


#: a member's cycles on a band's nest, its first band call or a later one (schedule/cost.py
#: `band_cycles`: an add builds its tables in its first call only)
Cycles = Callable[[LoopNest, bool], float]


def price(nests: Sequence[LoopNest], bs: list[Band], cycles: Sequence[Cycles],
          copy_cycles: Callable[[int], float], branch: int | None = None
          ) -> tuple[list[float], float, int]:
    """Each member's cycles over the chain's bands, the rings' copy cycles and the bytes they
    copy: one call of each member's kernel per band it computes rows in, on the band's nest
    (`cycles`: the bindings' cost models; an add's tables in its first call only), one copy of
    each ring's kept rows per band
    (`copy_cycles` of its bytes); a branch (`branch`: its index in `nests`, every member's) one
    call per band on the band's rows, nothing copied. `bs`: the main path's bands."""
    main = main_path(len(nests), branch)
    mn = [nests[k] for k in main]
    per = [0.0] * len(nests)
    called: set[int] = set()

    def call(k: int, n: LoopNest) -> None:
        per[k] += cycles[k](n, k not in called)
        called.add(k)

    for b in bs:
        for k, w in enumerate(b.wins):
            if w is not None and w.hi > w.new_lo:
                call(main[k], band_nest(mn[k], w.new_lo, w.hi - w.new_lo))
        call(len(nests) - 1, band_nest(nests[-1], b.oy0, b.rows))
        if branch is not None:
            call(branch, band_nest(nests[branch], b.oy0, b.rows))
    copies = [r * mn[k].OX * mn[k].K for k, (_, moved) in enumerate(_rings(bs))
              for r in moved if r]
    return per, sum(copy_cycles(n) for n in copies), sum(copies)


def plan_chain(names: tuple[str, ...], nests: Sequence[LoopNest], cycles: Sequence[Cycles],
               copy_cycles: Callable[[int], float], budget: float = BUDGET,
               align: int = 4, branch: int | None = None) -> Chain | None:
    """The chain of the smallest band whose predicted cycles stay within `budget` × the
    unfused cycles (module docstring); None when a ring would hold its whole tensor first.
    `branch`: the branch member's index (module docstring), its ring the last."""
    unfused = sum(c(n, True) for c, n in zip(cycles, nests))
    mn = [nests[k] for k in main_path(len(nests), branch)]
    for band in range(1, nests[-1].OY):
        bs = bands(mn, band)
        rings = [(size, mn[k].OX * mn[k].K) for k, (size, _) in enumerate(_rings(bs))]
        if branch is not None:
            rings.append((band, nests[branch].OX * nests[branch].K))
        if any(size >= mn[k].OY for k, (size, _) in enumerate(rings[:len(mn) - 1])):
            return None
        per, copy, nbytes = price(nests, bs, cycles, copy_cycles, branch)
        if sum(per) + copy <= budget * unfused:
            return Chain(tuple(names), band, tuple(size for size, _ in rings),
                         tuple(size * row for size, row in rings),
                         chain_lag(mn, bs, align, None if branch is None else nests[branch]),
                         sum(per) + copy, unfused, tuple(per), copy, nbytes, branch=branch)
    return None


def copy_cycles(target: Target) -> Callable[[int], float]:
    """Cycles of one copy of n bytes by the core (a ring's rotation): the L1 level's copy figures
    (issue, one contiguous run, bytes / bandwidth); 0 without an L1."""
    if not target.has_memory("L1"):
        return lambda n: 0.0
    m = target.memory("L1")
    return lambda n: m.dma_issue_cycles + m.dma_chunk_cycles + n / m.bandwidth
