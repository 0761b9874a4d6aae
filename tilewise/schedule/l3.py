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

The result names the L2 buffer sizes the memory planner must reserve (`l2_x`, `l2_y`, `l2_w`) and
the sub-layer each L3 tile presents to the L2→L1 scheduler (`sub_nest`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from collections.abc import Mapping, Sequence

from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..memory.network import LayerStep, activation_buffers

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
    #: L2 bytes of input, output and weight buffers (double-buffered tiles counted twice)
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


def _weights_bytes(nest: LoopNest, k: int, chan_const_bytes: int) -> int:
    if nest.kind == "dwconv":
        w = k * nest.FY * nest.FX
    elif nest.kind in ("conv", "fc"):
        w = k * nest.C * nest.FY * nest.FX
    else:
        return 0
    return w * nest.w_bytes + k * chan_const_bytes


def _in_rows(nest: LoopNest, oy: int) -> int:
    return min(nest.IY, (oy - 1) * nest.SY + nest.FY)


def _x_row_bytes(nest: LoopNest) -> int:
    n = nest.N * nest.C * nest.IX * nest.in_bytes
    return 2 * n if nest.kind == "add" else n


def _y_row_bytes(nest: LoopNest) -> int:
    return nest.N * nest.K * nest.OX * nest.out_bytes


def _sub_nest(nest: LoopNest, k: int, oy: int, rows_tiled: bool) -> LoopNest:
    if not rows_tiled:
        return replace(nest, K=k, C=k * nest.C // nest.K if nest.kind == "dwconv" else nest.C) \
            if k != nest.K else nest
    pt, pl, pb, pr = nest.pads
    c = k * nest.C // nest.K if nest.kind in ("dwconv", "pool", "add") and k != nest.K else nest.C
    return replace(nest, K=k, C=c, OY=oy, IY=_in_rows(nest, oy), pads=(0, pl, 0, pr))


def _candidate(nest: LoopNest, k: int, oy: int, x_l3: bool, y_l3: bool, order: Order,
               w_next: int, chan_const: int, bw: float, setup: float) -> L3Tiling:
    K, OY = nest.K, nest.OY
    n_k, n_h = -(-K // k), -(-OY // oy)
    rows_tiled = n_h > 1 or oy < OY
    w_tiled = k < K
    iy = _in_rows(nest, oy) if rows_tiled else nest.IY
    xr, yr = _x_row_bytes(nest), _y_row_bytes(nest)
    l2_x = (2 * iy * xr if rows_tiled else nest.IY * xr) if x_l3 else nest.IY * xr
    l2_y = 2 * oy * yr if y_l3 else OY * yr
    if w_tiled:
        l2_w = 2 * _weights_bytes(nest, k, chan_const)
    else:
        l2_w = _weights_bytes(nest, K, chan_const)
    # L3 traffic
    x_full, y_full = nest.IY * xr, OY * yr
    w_full = _weights_bytes(nest, K, chan_const)
    bytes_, transfers = 0, 0
    x_pass = (n_h * iy * xr) if rows_tiled else x_full  # one pass over the input, halos included
    if x_l3:
        passes = n_k if (order == "k_outer" and w_tiled and rows_tiled) else 1
        bytes_ += passes * x_pass
        transfers += passes * n_h
    if w_tiled:
        passes = n_h if (order == "rows_outer" and rows_tiled) else 1
        bytes_ += passes * w_full
        transfers += passes * n_k
    if y_l3:
        bytes_ += 2 * y_full  # written back here, read again by the next layer
        transfers += 2 * n_h
    cycles = transfers * setup + bytes_ / bw
    stage = "+".join(s for s, on in (("x", x_l3), ("w", w_tiled), ("y", y_l3)) if on) or "none"
    stage = {"w+y": "wy", "x+w+y": "x+wy"}.get(stage, stage)
    return L3Tiling(stage, k, oy, iy, x_l3, w_tiled, y_l3, l2_x, l2_y, l2_w, w_next, order,
                    bytes_, transfers, cycles, _sub_nest(nest, k, oy, rows_tiled), K, OY)


def _k_tiles(nest: LoopNest) -> list[int]:
    """Output-channel tiles for weight tiling, largest first: multiples of the depthwise
    multiplier, and of 4 (PULP-NN's MATMUL_CH) when K allows it."""
    if nest.kind not in ("conv", "fc", "dwconv"):
        return [nest.K]
    step = nest.K // nest.C if nest.kind == "dwconv" and nest.K % nest.C == 0 else 1
    if nest.K % (4 * step) == 0:
        step *= 4
    return list(range(nest.K, 0, -step))


def plan_l3(
    nest: LoopNest, l2_bytes: int, *, w_next_bytes: int = 0, x_in_l3: bool = False,
    strategy: Literal["cascade", "search"] = "cascade", chan_const_bytes: int = 8,
    l3_bandwidth: float = 1.0, l3_setup_cycles: float = 0.0, layer_name: str = "layer",
) -> L3Tiling:
    """Cut `nest` at the L3→L2 boundary so that Eq. 5 holds in `l2_bytes` of L2.

    `x_in_l3`: the previous layer left this layer's input in L3 (so input rows must be tiled).
    `l3_bandwidth` (bytes/cycle) and `l3_setup_cycles` price the traffic for `strategy="search"`
    and for the reported `l3_cycles`. Raises TilewiseError when no stage fits.
    """
    if nest.kind in ("fc",):
        rows = [1]
    else:
        rows = list(range(nest.OY, 0, -1))
    ks = _k_tiles(nest)
    mk = dict(w_next=w_next_bytes, chan_const=chan_const_bytes, bw=l3_bandwidth,
              setup=l3_setup_cycles)

    def fits(t: L3Tiling) -> bool:
        return t.l2_total <= l2_bytes

    if strategy == "cascade":
        # (w tiled, y in L3) per stage; x is L3-tiled in every stage when the input is in L3
        stages = [(False, False), (True, False), (False, True), (True, True)]
        for w_t, y_t in stages:
            if w_t and x_in_l3 and not y_t:
                # seed 001: weight tiling alone "can only be selected when the output of the
                # previous layer is already in L2"; with x in L3 it goes with output tiling
                continue
            best: L3Tiling | None = None
            for k in (ks if w_t else [nest.K]):
                if w_t and k == nest.K:
                    continue
                for oy in (rows if (y_t or x_in_l3) else [nest.OY]):
                    if y_t and oy == nest.OY and nest.OY > 1:
                        continue
                    t = _candidate(nest, k, oy, x_in_l3, y_t, "rows_outer", **mk)
                    if fits(t) and (best is None or (-t.n_tiles, t.l2_total) > (-best.n_tiles, best.l2_total)):
                        best = t
            if best is not None:
                return best
    elif strategy == "search":
        best = None
        for y_t in (False, True):
            for k in ks:
                for oy in (rows if (y_t or x_in_l3) else [nest.OY]):
                    for order in ("rows_outer", "k_outer"):
                        t = _candidate(nest, k, oy, x_in_l3, y_t, order, **mk)  # type: ignore[arg-type]
                        if not fits(t):
                            continue
                        key = (t.l3_cycles, t.l2_total, t.n_tiles)
                        if best is None or key < (best.l3_cycles, best.l2_total, best.n_tiles):
                            best = t
        if best is not None:
            return best
    else:
        raise ValueError(f"unknown L3 strategy {strategy!r}")
    smallest = _candidate(nest, ks[-1], 1, x_in_l3, nest.OY > 1, "rows_outer", **mk)
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
) -> NetworkL3:
    """Decide L3→L2 tiling for every layer in execution order.

    A layer is L3-tiled when Eq. 5 fails in the L2 left by the other activations live across its
    step (residuals); its input is L3-tiled when a producer left it in L3. The returned steps carry
    the L2 tile buffers so the static planner reserves them.
    """
    acts = activation_buffers(steps, tensor_bytes, outputs)
    l3: set[str] = set()
    tilings: dict[str, L3Tiling] = {}
    out_steps: list[LayerStep] = []
    for i, s in enumerate(steps):
        nest = nests[s.name]
        mine = {f"act:{t}" for t in (*s.inputs, s.output)}
        others = sum(b.size for b in acts if b.first <= i <= b.last and b.name not in mine
                     and b.name[4:] not in l3)
        w_next = steps[i + 1].weight_bytes if i + 1 < len(steps) else 0
        x_l3 = any(t in l3 for t in s.inputs)
        t = plan_l3(nest, l2_bytes - others, w_next_bytes=w_next, x_in_l3=x_l3,
                    strategy=strategy, chan_const_bytes=chan_const_bytes,
                    l3_bandwidth=l3_bandwidth, l3_setup_cycles=l3_setup_cycles, layer_name=s.name)
        if not t.tiled:
            out_steps.append(s)
            continue
        tilings[s.name] = t
        if t.y_in_l3:
            l3.add(s.output)
        scratch = (t.l2_x if t.x_in_l3 else 0) + (t.l2_y if t.y_in_l3 else 0)
        out_steps.append(replace(s, scratch_bytes=s.scratch_bytes + scratch,
                                 streamed_weight_bytes=t.l2_w if t.w_tiled else s.streamed_weight_bytes))
    return NetworkL3(tilings, tuple(out_steps), frozenset(l3))
