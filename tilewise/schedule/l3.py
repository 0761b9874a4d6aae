"""L3→L2 tiling of a layer whose tensors do not fit L2 (seed 001 §4.2.1, Eq. 5).

Seed 001 checks L2w,next + L2w,curr + L2x + L2y ≤ L2 — the next layer's weights are being
prefetched while this layer runs — and, when it fails, tries five stages in order and keeps the
first that fits:
  none → tile x (input rows; only when the previous layer's output was left in L3) → tile w (by
  output channel; only when the input is in L2) → tile y (output rows, written back to L3) → tile
  w and y.
Tiled buffers are double buffered at this boundary (DORY's triple buffering: L3↔L2 and L2↔L1
both double buffered). Within a stage DORY maximizes L2 occupancy, i.e. the largest tiles; here:
the fewest tiles that fit, ties to the larger L2 occupancy.

`strategy="search"` is the same choice one level up as DESIGN.md asks: every combination of input
row tiling, output channel tiling, output row tiling and loop order that fits L2 is costed by its
L3 traffic (bytes and transfers, with the L3 memory's bandwidth and DMA setup) and the cheapest
wins. An output left in L3 costs twice (written here, read back by the next layer).

What may be cut is the placement's (its binding's `TileRules`: `l3` — untiled kernels and the
16x8 ones are never cut —, `l3_k_step`) and the target's (activations go to L3 only where an
outer memory holds them, weights only where one holds weights). An input read from L3 by row
tiles is never combined with output-channel tiles of a layer without an input-channel loop (its
input tile would be a channel slice of the L3 rows).

The result names the L2 buffer sizes the memory planner must reserve (`l2_x`, `l2_y`, `l2_w`) and
the sub-layer an interior L3 tile presents to the L2→L1 scheduler (`sub_nest`). `l2_tiles` lists
every L2 tile the code runs, in execution order, with its own sub-layer (border k tile, first and
last row tiles with their padding halos): the L3 traffic (`l3_bytes`, `l3_transfers`) is what
generated code moves for this layer — input row tiles as they are clipped to the tensor, weight
k tiles once per pass, output row tiles written once (the next layer pays its own read-back; the
search still charges an output left in L3 for that read when it ranks candidates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ..bindings.base import TileRules
from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..ir.operands import REDUCING, WEIGHTED, operand_bytes, weights_bytes
from ..memory.network import LayerStep, NetworkPlan, activation_buffers, aliases, plan_network
from .space import positions

Stage = Literal["none", "x", "w", "y", "wy", "x+w", "x+y", "x+wy"]
Order = Literal["rows_outer", "k_outer"]


@dataclass(frozen=True)
class L3Tiling:
    """How one layer is cut at the L3→L2 boundary."""

    stage: str
    #: output channels per L2 weight tile (K when weights are not L3-tiled)
    k_tile: int
    #: output rows per L2 tile (OY when activations are not row-tiled)
    oy_tile: int
    #: input rows per L2 input tile (IY when the input is whole in L2)
    iy_tile: int
    x_in_l3: bool
    w_tiled: bool
    y_in_l3: bool
    #: L2 bytes of input, output and weight buffers (double-buffered tiles counted twice); l2_x
    #: counts every input: whole for inputs in L2, tile buffers for inputs streamed from L3
    l2_x: int
    l2_y: int
    l2_w: int
    #: next layer's weights prefetched during this layer (counted in Eq. 5)
    l2_w_next: int
    order: Order
    #: bytes moved between L3 and L2 by this layer (input reads, weight tile reads, output writes
    #: and the next layer's read-back of an L3 output); whole weights are the planner's business
    l3_bytes: int
    l3_transfers: int
    #: predicted L3 DMA cycles (setup per transfer + bytes / bandwidth)
    l3_cycles: float
    sub_nest: LoopNest
    #: the layer's full output channels and rows (for tile counts)
    k_full: int
    oy_full: int
    #: L2 bytes of the tile buffers of the inputs streamed from L3 (part of l2_x)
    l2_x_tiles: int = 0
    #: the whole layer (for `tiles`)
    nest: LoopNest | None = None

    @property
    def l2_total(self) -> int:
        return self.l2_x + self.l2_y + self.l2_w + self.l2_w_next

    @property
    def tiled(self) -> bool:
        return self.stage != "none"

    @property
    def n_k(self) -> int:
        return -(-self.k_full // self.k_tile)

    @property
    def n_rows(self) -> int:
        return -(-self.oy_full // self.oy_tile)

    @property
    def n_tiles(self) -> int:
        return self.n_k * self.n_rows

    @property
    def tiles(self) -> tuple[L2Tile, ...]:
        """Every L2 tile the layer runs, in execution order (`l2_tiles`)."""
        assert self.nest is not None
        return l2_tiles(self.nest, self.k_tile, self.oy_tile, self.order)


@dataclass(frozen=True)
class L2Tile:
    """One L3→L2 tile of a layer: output channels [k0, k0+k), output rows [oy0, oy0+oy) reading
    input rows [iy0, iy0+iy) (clipped to the tensor); `nest` is the layer its L2→L1 schedule sees
    (K=k, OY=oy, IY=iy, the top/bottom padding this tile synthesizes)."""

    i_k: int
    i_h: int
    k0: int
    k: int
    oy0: int
    oy: int
    iy0: int
    iy: int
    nest: LoopNest


def _row_tiles(nest: LoopNest, oy_tile: int) -> list[tuple[int, int, int, int, int, int]]:
    """(oy0, oy, iy0, iy, pad_top, pad_bottom) of each output row tile (space.py positions)."""
    if nest.kind in ("fc", "other") or oy_tile >= nest.OY:
        return [(0, nest.OY, 0, nest.IY, nest.pads[0], nest.pads[2])]
    return [(p.start, p.size, p.in_start, p.in_size, p.pad_lo, p.pad_hi)
            for p in positions(nest, "oy", oy_tile)]


def _tile_nest(nest: LoopNest, k: int, row: tuple[int, int, int, int, int, int]) -> LoopNest:
    c = nest.C if nest.kind in ("conv", "fc") else k * nest.C // nest.K
    oy0, oy, iy0, iy, pt, pb = row
    if oy == nest.OY:
        return nest if k == nest.K else replace(nest, K=k, C=c)
    _, pl, _, pr = nest.pads
    return replace(nest, K=k, C=c, OY=oy, IY=iy, pads=(pt, pl, pb, pr))


def l2_tiles(nest: LoopNest, k_tile: int, oy_tile: int, order: str = "rows_outer"
             ) -> tuple[L2Tile, ...]:
    """Every L2 tile of `nest` cut into `k_tile` channels × `oy_tile` rows, in execution order
    (rows outer, k inner for "rows_outer"; k outer for "k_outer")."""
    ks = [(k0, min(k_tile, nest.K - k0)) for k0 in range(0, nest.K, k_tile)]
    rows = _row_tiles(nest, oy_tile)
    pairs = ([(ik, ih) for ih in range(len(rows)) for ik in range(len(ks))] if order == "rows_outer"
             else [(ik, ih) for ik in range(len(ks)) for ih in range(len(rows))])
    out = []
    for ik, ih in pairs:
        k0, k = ks[ik]
        r = rows[ih]
        out.append(L2Tile(ik, ih, k0, k, r[0], r[1], r[2], r[3], _tile_nest(nest, k, r)))
    return tuple(out)


def _in_rows(nest: LoopNest, oy: int) -> int:
    return min(nest.IY, (oy - 1) * nest.SY + nest.FY)


def _n_inputs(nest: LoopNest) -> int:
    return 2 if nest.kind == "add" else 1


def _x_row_bytes(nest: LoopNest) -> int:
    """Bytes of one input row of one input tensor."""
    return int(operand_bytes(nest, "x", n=nest.N, k=nest.C, c=nest.C, rows=1, cols=nest.IX))


def _y_row_bytes(nest: LoopNest) -> int:
    return int(operand_bytes(nest, "y", n=nest.N, k=nest.K, oy=1, ox=nest.OX))


def _sub_nest(nest: LoopNest, k: int, oy: int, rows_tiled: bool) -> LoopNest:  # noqa: D401
    """The L2-resident layer one L3 tile presents to the L2→L1 scheduler (an interior tile)."""
    c = k * nest.C // nest.K if nest.kind != "conv" and nest.kind != "fc" else nest.C
    if not rows_tiled:
        return nest if k == nest.K else replace(nest, K=k, C=c)
    pt, pl, pb, pr = nest.pads
    return replace(nest, K=k, C=c, OY=oy, IY=_in_rows(nest, oy), pads=(0, pl, 0, pr))


def _l2_parts(nest: LoopNest, k: int, oy: int, x_l3: int, y_l3: bool,
              chan_const: int, w_l2: bool = True) -> tuple[int, int, int, int, bool, int]:
    """(l2_x, l2_x_tiles, l2_y, l2_w, rows tiled, input rows per tile) of one L3 tiling."""
    rows_tiled = oy < nest.OY
    iy = _in_rows(nest, oy) if rows_tiled else nest.IY
    xr, yr = _x_row_bytes(nest), _y_row_bytes(nest)
    x_full = nest.IY * xr
    x_tiles = x_l3 * (2 * iy * xr if rows_tiled else x_full)
    l2_x = x_tiles + (_n_inputs(nest) - x_l3) * x_full
    l2_y = 2 * oy * yr if y_l3 else nest.OY * yr
    if not w_l2:
        l2_w = 0
    elif k < nest.K:
        l2_w = 2 * weights_bytes(nest, k, chan_const)
    else:
        l2_w = weights_bytes(nest, nest.K, chan_const)
    return l2_x, x_tiles, l2_y, l2_w, rows_tiled, iy


def _fits(nest: LoopNest, k: int, oy: int, x_l3: int, y_l3: bool, w_next: int, chan_const: int,
          w_l2: bool, l2_bytes: int) -> bool:
    x, _, y, w, _, _ = _l2_parts(nest, k, oy, x_l3, y_l3, chan_const, w_l2)
    return x + y + w + w_next <= l2_bytes


def _candidate(nest: LoopNest, k: int, oy: int, x_l3: int, y_l3: bool, order: Order,
               w_next: int, chan_const: int, bw: float, setup: float, w_l2: bool = True
               ) -> L3Tiling:
    """One L3 tiling: `x_l3` of the layer's inputs stream from L3 (the others are whole in L2)."""
    K, OY = nest.K, nest.OY
    n_k, n_h = -(-K // k), -(-OY // oy)
    w_tiled = k < K
    l2_x, x_tiles, l2_y, l2_w, rows_tiled, iy = _l2_parts(nest, k, oy, x_l3, y_l3, chan_const,
                                                           w_l2)
    xr, yr = _x_row_bytes(nest), _y_row_bytes(nest)
    x_full, y_full = nest.IY * xr, OY * yr
    # L3 traffic
    w_full = weights_bytes(nest, K, chan_const) if w_l2 else 0
    bytes_, transfers = 0, 0
    # one pass over an input: the row tiles as clipped to the tensor, halos included
    x_pass = sum(r[3] for r in _row_tiles(nest, oy)) * xr if rows_tiled else x_full
    if x_l3:
        passes = n_k if (order == "k_outer" and w_tiled and rows_tiled) else 1
        bytes_ += passes * x_l3 * x_pass
        transfers += passes * x_l3 * n_h
    if w_tiled:
        passes = n_h if (order == "rows_outer" and rows_tiled) else 1
        bytes_ += passes * w_full
        transfers += passes * n_k
    if y_l3:
        bytes_ += y_full  # output row tiles written back to L3 (the consumer pays its reads)
        transfers += n_h
    cycles = transfers * setup + bytes_ / bw
    stage = "+".join(s for s, on in (("x", x_l3 > 0), ("w", w_tiled), ("y", y_l3)) if on)
    stage = {"": "none", "w+y": "wy", "x+w+y": "x+wy"}.get(stage, stage)
    return L3Tiling(stage, k, oy, iy, x_l3 > 0, w_tiled, y_l3, l2_x, l2_y, l2_w, w_next, order,
                    bytes_, transfers, cycles, _sub_nest(nest, k, oy, rows_tiled), K, OY,
                    x_tiles, nest)


def _rank(t: L3Tiling, nest: LoopNest, mk: dict) -> float:
    """Search cost of a candidate: its L3 cycles, plus the next layer's read of an output left
    in L3 (one pass, one transfer per row tile)."""
    if not t.y_in_l3:
        return t.l3_cycles
    return t.l3_cycles + t.n_rows * mk["setup"] + nest.OY * _y_row_bytes(nest) / mk["bw"]


def _k_tiles(nest: LoopNest, k_step: int = 1) -> list[int]:
    """Output-channel tiles for weight tiling, largest first: multiples of the depthwise
    multiplier, and of the binding's `l3_k_step` when K allows it."""
    if nest.kind not in WEIGHTED:
        return [nest.K]
    step = nest.K // nest.C if nest.kind == "dwconv" and nest.K % nest.C == 0 else 1
    if nest.K % (k_step * step) == 0:
        step *= k_step
    return list(range(nest.K, 0, -step))


def _sliced_x(nest: LoopNest, k: int, x_in_l3: int) -> bool:
    """Input rows read from L3 with output-channel tiles of a layer whose input channels follow
    its output channels (depthwise, pool, add): its input tile would be a channel slice of the L3
    rows, which the generated L3 loop does not move."""
    return bool(x_in_l3) and k < nest.K and nest.kind not in REDUCING


def plan_l3(
    nest: LoopNest, l2_bytes: int, *, w_next_bytes: int = 0, x_in_l3: bool | int = False,
    strategy: Literal["cascade", "search"] = "cascade", chan_const_bytes: int = 8,
    l3_bandwidth: float = 1.0, l3_setup_cycles: float = 0.0, layer_name: str = "layer",
    y_to_l3: bool = True, rules: TileRules | None = None, w_to_l3: bool = True,
    w_in_l2: bool = True,
) -> L3Tiling:
    """Cut `nest` at the L3→L2 boundary so that Eq. 5 holds in `l2_bytes` of L2.

    `x_in_l3`: the previous layer left this layer's input in L3 (so input rows must be tiled);
    for a two-input add, the number of its inputs in L3 (True: all).
    `l3_bandwidth` (bytes/cycle) and `l3_setup_cycles` price the traffic for `strategy="search"`
    and for the reported `l3_cycles`. `y_to_l3=False`: the output must stay in L2 (a network
    output, which the caller reads from L2, or no L3 to hold it). `rules`: the placement's tile
    rules (`l3=False`: the layer is never cut; `l3_k_step`); `w_to_l3=False`: no L3 holds weights,
    so they are never streamed by output-channel tiles. Raises TilewiseError when no stage fits.
    """
    rules = rules or TileRules(l3_k_step=4)
    if not rules.l3:
        if x_in_l3:
            raise TilewiseError(f"layer '{layer_name}' cannot read its input from L3 (its kernel "
                                f"needs the whole tensors in L2)")
        y_to_l3 = False
        w_to_l3 = False
    if nest.kind == "other":
        need = (_n_inputs(nest) * int(operand_bytes(nest, "x", n=nest.N, k=nest.C, c=nest.C,
                                                   rows=nest.IY, cols=nest.IX))
                + int(operand_bytes(nest, "y", n=nest.N, k=nest.K, oy=nest.OY, ox=nest.OX)))
        if need + w_next_bytes > l2_bytes:
            raise TilewiseError(
                f"layer '{layer_name}' ({nest.kind}) is never tiled and needs {need} bytes of L2 "
                f"for its input and output (plus {w_next_bytes} of prefetched weights), more than "
                f"the {l2_bytes} available.")
    if nest.kind in ("fc", "other"):
        rows = [1]
    else:
        rows = list(range(nest.OY, 0, -1))
    ks = _k_tiles(nest, rules.l3_k_step) if w_to_l3 and w_in_l2 else [nest.K]
    if x_in_l3 is True:
        x_in_l3 = _n_inputs(nest)
    x_in_l3 = int(x_in_l3)
    if not 0 <= x_in_l3 <= _n_inputs(nest):
        raise ValueError(f"x_in_l3={x_in_l3} for a layer with {_n_inputs(nest)} input(s)")
    mk = dict(w_next=w_next_bytes, chan_const=chan_const_bytes, w_l2=w_in_l2, bw=l3_bandwidth,
              setup=l3_setup_cycles)

    if strategy == "cascade":
        # (w tiled, y in L3) per stage; x is L3-tiled in every stage when the input is in L3
        stages = [(False, False), (True, False), (False, True), (True, True)]
        for w_t, y_t in stages:
            if y_t and (nest.kind == "other" or not y_to_l3):
                continue
            if w_t and x_in_l3 and not y_t:
                # seed 001: weight tiling alone "can only be selected when the output of the
                # previous layer is already in L2"; with x in L3 it goes with output tiling
                continue
            best: L3Tiling | None = None
            for k in (ks if w_t else [nest.K]):
                if (w_t and k == nest.K) or _sliced_x(nest, k, x_in_l3):
                    continue
                for oy in (rows if (y_t or x_in_l3) else [nest.OY]):
                    if y_t and oy == nest.OY and nest.OY > 1:
                        continue
                    if not _fits(nest, k, oy, x_in_l3, y_t, w_next_bytes, chan_const_bytes,
                                 w_in_l2, l2_bytes):
                        continue
                    t = _candidate(nest, k, oy, x_in_l3, y_t, "rows_outer", **mk)
                    if best is None or (-t.n_tiles, t.l2_total) > (-best.n_tiles, best.l2_total):
                        best = t
            if best is not None:
                return best
    elif strategy == "search":
        best = None
        for y_t in ((False,) if nest.kind == "other" or not y_to_l3 else (False, True)):
            for k in ks:
                if _sliced_x(nest, k, x_in_l3):
                    continue
                for oy in (rows if (y_t or x_in_l3) else [nest.OY]):
                    if not _fits(nest, k, oy, x_in_l3, y_t, w_next_bytes, chan_const_bytes,
                                 w_in_l2, l2_bytes):
                        continue
                    for order in ("rows_outer", "k_outer"):
                        if order == "k_outer" and y_t and k < nest.K and oy < nest.OY:
                            continue  # an output row tile would complete only at the last k tile
                        t = _candidate(nest, k, oy, x_in_l3, y_t, order, **mk)  # type: ignore[arg-type]
                        key = (_rank(t, nest, mk), t.l2_total, t.n_tiles)
                        if best is None or key < (_rank(best, nest, mk), best.l2_total,
                                                  best.n_tiles):
                            best = t
        if best is not None:
            return best
    else:
        raise ValueError(f"unknown L3 strategy {strategy!r}")
    smallest = _candidate(nest, ks[-1], 1, x_in_l3, nest.OY > 1 and y_to_l3, "rows_outer", **mk)
    raise TilewiseError(
        f"layer '{layer_name}' cannot be tiled from L3 into L2 of {l2_bytes} bytes: even one "
        f"output row with {ks[-1]} output channel(s) needs {smallest.l2_total} bytes of L2 "
        f"(including {w_next_bytes} bytes of the next layer's prefetched weights).")


@dataclass(frozen=True)
class NetworkL3:
    """L3 decisions of a whole network, ready for `memory.plan_network`."""

    #: per layer name (only layers that needed L3 tiling)
    tilings: dict[str, L3Tiling] = field(hash=False)
    #: steps with L3 tile buffers as scratch and weight tiles as streamed weight buffers
    steps: tuple[LayerStep, ...]
    #: activation tensors left in L3
    l3_tensors: frozenset[str]


def l3_network(
    steps: Sequence[LayerStep], nests: Mapping[str, LoopNest], tensor_bytes: Mapping[str, int],
    l2_bytes: int, *, outputs: Sequence[str] = (), strategy: Literal["cascade", "search"] = "cascade",
    chan_const_bytes: int = 8, l3_bandwidth: float = 1.0, l3_setup_cycles: float = 0.0,
    rules: Mapping[str, TileRules] | None = None, l3_acts: bool = True, l3_weights: bool = True,
    const_per_channel: Mapping[str, int] | None = None,
) -> NetworkL3:
    """Decide L3→L2 tiling for every layer in execution order.

    A network output is never left in L3 (the caller reads it from L2). A layer is L3-tiled when
    Eq. 5 fails in the L2 left by the other activations live across its step (residuals); its input
    is L3-tiled when a producer left it in L3. L2w,next is the weight buffer the next layer needs
    (its whole weights, or its double-buffered weight tiles when it is weight-tiled itself): a
    first pass decides every layer without prefetch to size those buffers, the second pass decides
    with them. When a layer cannot fit with the next layer's weights prefetched, the next layer
    loads its weights at its own start instead (`LayerStep.prefetch`). The returned steps carry the
    L2 tile buffers so the static planner reserves them; the planner (`memory.plan_network`) is the
    final check.

    `rules`: each layer's placement rules (plan_l3); an output is left in L3 only when an L3 holds
    activations (`l3_acts`) and every reader of it may read from L3. `l3_weights`: an L3 holds
    weights (else they are never streamed). A step without weight bytes keeps its constants out
    of L2 (a read-only memory holds them). `const_per_channel`: each layer's per-channel constant
    bytes (its binding's; `chan_const_bytes` for layers not named).
    """
    kw = dict(strategy=strategy, chan_const_bytes=chan_const_bytes, l3_bandwidth=l3_bandwidth,
              l3_setup_cycles=l3_setup_cycles, w_to_l3=l3_weights)
    rules = rules or {}
    acts = activation_buffers(steps, tensor_bytes, outputs)
    view_of = aliases(steps)   # a reshape's output shares its input's buffer (memory/network.py)
    readers_ok = {s.output: l3_acts for s in steps}
    for s in steps:
        for t in s.inputs:
            if t in readers_ok and s.name in rules and not rules[s.name].l3:
                readers_ok[t] = False

    def forward(w_next_of) -> tuple[list[L3Tiling], set[str], set[int]]:
        l3: set[str] = set()
        out: list[L3Tiling] = []
        no_prefetch: set[int] = set()
        for i, s in enumerate(steps):
            mine = {f"act:{view_of.get(t, t)}" for t in (*s.inputs, s.output)}
            others = sum(b.size for b in acts if b.first <= i <= b.last and b.name not in mine
                         and b.name[4:] not in l3)
            x_l3 = min(sum(t in l3 for t in s.inputs), _n_inputs(nests[s.name]))
            w_next = w_next_of(i)
            y_ok = s.output not in outputs and readers_ok[s.output]  # a network output stays in L2
            own = dict(rules=rules.get(s.name), w_in_l2=s.weight_bytes > 0, **kw)
            if const_per_channel and s.name in const_per_channel:
                own["chan_const_bytes"] = const_per_channel[s.name]
            try:
                t = plan_l3(nests[s.name], l2_bytes - others, w_next_bytes=w_next, x_in_l3=x_l3,
                            layer_name=s.name, y_to_l3=y_ok, **own)
            except TilewiseError:
                if w_next == 0:
                    raise
                t = plan_l3(nests[s.name], l2_bytes - others, x_in_l3=x_l3, layer_name=s.name,
                            y_to_l3=y_ok, **own)
                no_prefetch.add(i + 1)
            if t.y_in_l3:
                l3.add(s.output)
            out.append(t)
        return out, l3, no_prefetch

    alone, _, _ = forward(lambda i: 0)

    def w_next_of(i: int) -> int:
        if i + 1 >= len(steps) or steps[i + 1].weight_bytes <= 0:
            return 0
        return alone[i + 1].l2_w

    final, l3, no_prefetch = forward(w_next_of)
    tilings: dict[str, L3Tiling] = {}
    out_steps: list[LayerStep] = []
    for i, (s, t) in enumerate(zip(steps, final)):
        s = replace(s, prefetch=s.prefetch and i not in no_prefetch)
        if t.tiled:
            tilings[s.name] = t
            scratch = t.l2_x_tiles + (t.l2_y if t.y_in_l3 else 0)
            s = replace(s, scratch_bytes=s.scratch_bytes + scratch,
                        streamed_weight_bytes=t.l2_w if t.w_tiled else s.streamed_weight_bytes)
        out_steps.append(s)
    return NetworkL3(tilings, tuple(out_steps), frozenset(l3))


def l3_dma(target) -> dict[str, float]:
    """`plan_l3` / `l3_network` keyword arguments pricing L3 traffic on `target`: the DMA between
    its L2 and the next outer level (bytes per cycle at the target clock, setup cycles)."""
    l2 = target.memory("L2")
    return {"l3_bandwidth": l2.bytes_per_cycle(target.clock_mhz),
            "l3_setup_cycles": float(l2.dma_setup_cycles)}


def plan_memory(
    steps: Sequence[LayerStep], nests: Mapping[str, LoopNest], tensor_bytes: Mapping[str, int],
    l2_bytes: int, *, outputs: Sequence[str] = (), strategy: Literal["cascade", "search"] = "cascade",
    chan_const_bytes: int = 8, l3_bandwidth: float = 1.0, l3_setup_cycles: float = 0.0,
    align: int = 4, attempts: int = 12, keep: int = 3,
    rules: Mapping[str, TileRules] | None = None, l3_acts: bool = True, l3_weights: bool = True,
    const_per_channel: Mapping[str, int] | None = None, caller_inputs: frozenset[str] = frozenset(),
    hold_inputs: bool = False, arena_outputs: frozenset[str] = frozenset(),
) -> tuple[NetworkL3, NetworkPlan]:
    """L3→L2 tiling of the layers that need it, then the static L2 plan of the whole network.

    The L3 decisions use Eq. 5 against the L2 left by the other live activations; the offset
    planner may still need more (fragmentation, weights pinned in L2). So the L3 tiler runs with
    budgets of L2, L2·31/32, L2·30/32 ... (at most `attempts`); among the first `keep` that the
    planner fits, the one with the least L3 traffic (cycles) wins. When none fits, the planner's
    error for the full budget stands (it names the first layer that does not fit).
    `rules`, `l3_acts`, `l3_weights`, `const_per_channel`: see `l3_network`; without an L3 for
    weights every weight stays in L2. `caller_inputs`, `hold_inputs`, `arena_outputs`:
    memory/network.py `plan_network`.
    """
    step = max(align, l2_bytes // 32)
    found: list[tuple[float, int, NetworkL3, NetworkPlan]] = []
    first_err: TilewiseError | None = None
    for i in range(attempts):
        budget = l2_bytes - i * step
        if budget <= 0:
            break
        try:
            net = l3_network(steps, nests, tensor_bytes, budget, outputs=outputs,
                             strategy=strategy, chan_const_bytes=chan_const_bytes,
                             l3_bandwidth=l3_bandwidth, l3_setup_cycles=l3_setup_cycles,
                             rules=rules, l3_acts=l3_acts, l3_weights=l3_weights,
                             const_per_channel=const_per_channel)
            plan = plan_network(list(net.steps), tensor_bytes, l2_bytes, outputs=outputs,
                                l3_tensors=net.l3_tensors, align=align, stream=l3_weights,
                                caller_inputs=caller_inputs, hold_inputs=hold_inputs,
                                arena_outputs=arena_outputs)
        except TilewiseError as e:
            first_err = first_err or e
            continue
        cost = sum(t.l3_cycles for t in net.tilings.values())
        found.append((cost, i, net, plan))
        if len(found) >= keep or cost == 0:
            break
    if not found:
        assert first_err is not None
        raise first_err
    _, _, net, plan = min(found, key=lambda f: (f[0], f[1]))
    return net, plan
