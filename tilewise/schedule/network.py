"""Whole-network scheduling: every layer's module and L2→L1 schedule, L3→L2 tiling, the L2 plan.

`schedule_network(layers, target, tiler)` is the one function between the lowered network and
codegen/reporting (DESIGN.md pipeline: partition → schedule → memory plan):
1. each layer is scheduled at L2→L1 by `schedule_layer` (fastest module, the chosen tiler);
2. the L3→L2 decisions and the static L2 plan come from `schedule.l3.plan_memory` (seed 001 Eq. 5
   cascade, bidirectional stack vs best fit, weights in L2 or streamed from L3 with prefetch);
3. a layer cut at L3→L2 is rescheduled on every distinct sub-layer its L2 tiles present
   (`L3Tiling.tiles`: interior tiles, the border k tile, the first / last row tiles with their
   padding halos), deduplicated by geometry (`TiledLayer`); its cycles and L2↔L1 DMA are the sums
   over the tiles the code runs;
4. the activations left in L3 get static L3 offsets (`memory.l3.plan_l3_activations`).
Errors name the first layer that cannot fit and the smallest memory it would need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import TilewiseError
from ..ir.layer import Layer, LayerGraph
from ..memory.l3 import L3Plan, plan_l3_activations
from ..memory.network import LayerStep, NetworkPlan
from ..targets.base import Target
from .api import schedule_layer
from .l3 import L2Tile, L3Tiling, NetworkL3, l3_dma, plan_memory
from .space import REDUCING, LayerSchedule, hwc_chunks, iter_tiles


@dataclass(frozen=True)
class TiledLayer:
    """The L2 tiles of an L3-tiled layer and one L2→L1 schedule per distinct tile geometry."""

    #: every L2 tile in execution order
    tiles: tuple[L2Tile, ...]
    #: the schedules of the distinct geometries (`L2Tile.nest`), in order of first use
    schedules: tuple[LayerSchedule, ...]
    #: tile j runs schedules[geometry[j]]
    geometry: tuple[int, ...]

    def schedule_of(self, j: int) -> LayerSchedule:
        return self.schedules[self.geometry[j]]


@dataclass(frozen=True)
class Dma:
    """L2↔L1 DMA of a layer: bytes, transfers and contiguous chunks on the L2 side."""

    bytes: int
    transfers: int
    chunks: int


def embedded_dma(s: LayerSchedule, x_channels: int, y_channels: int) -> Dma:
    """DMA of schedule `s` run on an L2 tile whose input / output rows are `x_channels` /
    `y_channels` channels wide (a k tile of a wider tensor: more chunks, same bytes)."""
    if s.untiled:
        return Dma(0, 0, 0)
    n = s.nest
    if x_channels == (n.C if n.kind in REDUCING else n.K) and y_channels == n.K:
        return Dma(s.dma_bytes, s.dma_transfers, sum(t.chunks for t in s.traffic))
    b = tr = ch = 0
    for step in iter_tiles(s):
        for t in (*step.loads, *step.stores):
            b, tr = b + t.bytes, tr + 1
            ext = tuple(x[1] for x in t.box)
            if t.operand in ("x", "x2"):
                ch += hwc_chunks(ext, (n.N, n.IY, n.IX, x_channels))
            elif t.operand == "y":
                ch += hwc_chunks(ext, (n.N, n.OY, n.OX, y_channels))
            else:
                ch += t.chunks
    return Dma(b, tr, ch)


@dataclass(frozen=True, eq=False)
class NetworkSchedule:
    """The decisions for a whole network: what `analyze` reports and `generate` emits."""

    layers: LayerGraph
    target: Target
    tiler: str
    #: one per layer, in execution order (for an L3-tiled layer: the schedule of one L2 tile)
    schedules: tuple[LayerSchedule, ...]
    #: L3→L2 tiling of the layers that needed it, by layer name
    l3: NetworkL3
    memory: NetworkPlan
    #: per L3-tiled layer (by name): its L2 tiles and their schedules
    l3_tiles: dict[str, TiledLayer] = field(default_factory=dict, hash=False)
    #: offsets in L3 of the activations left there
    l3_plan: L3Plan = field(default_factory=lambda: L3Plan({}, 0))

    def schedule(self, name: str) -> LayerSchedule:
        for layer, s in zip(self.layers.layers, self.schedules):
            if layer.name == name:
                return s
        raise KeyError(name)

    def l3_tiling(self, name: str) -> L3Tiling | None:
        return self.l3.tilings.get(name)

    def layer_cycles(self, i: int) -> float:
        """Predicted cycles of layer i: its L2 tiles' L1 schedules plus its L3 traffic."""
        layer = self.layers.layers[i]
        t = self.l3.tilings.get(layer.name)
        s = self.schedules[i]
        if t is None:
            return s.cycles
        tl = self.l3_tiles.get(layer.name)
        if tl is None:
            return s.cycles * t.n_tiles + t.l3_cycles
        return sum(tl.schedule_of(j).cycles for j in range(len(tl.tiles))) + t.l3_cycles

    def layer_dma(self, i: int) -> Dma:
        """L2↔L1 DMA of layer i as its code moves it (summed over its L2 tiles)."""
        layer = self.layers.layers[i]
        tl = self.l3_tiles.get(layer.name)
        s = self.schedules[i]
        if tl is None:
            return embedded_dma(s, s.nest.C if s.nest.kind in REDUCING else s.nest.K, s.nest.K)
        n = layer.nest
        xc = n.C if n.kind in REDUCING else n.K
        parts = [embedded_dma(tl.schedule_of(j), xc, n.K) for j in range(len(tl.tiles))]
        return Dma(sum(p.bytes for p in parts), sum(p.transfers for p in parts),
                   sum(p.chunks for p in parts))

    @property
    def l3_bytes(self) -> int:
        """L3↔L2 bytes the L3-tiled layers move per inference (input / output row tiles, weight
        k tiles; whole streamed weights are counted by the memory plan)."""
        return sum(t.l3_bytes for t in self.l3.tilings.values())

    @property
    def cycles(self) -> float:
        return sum(self.layer_cycles(i) for i in range(len(self.schedules)))

    @property
    def latency_ms(self) -> float:
        return self.cycles / (self.target.clock_mhz * 1e3)

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers.layers)

    @property
    def weights_l2_bytes(self) -> int:
        names = set(self.memory.weights_in_l2)
        return sum(const_bytes(l, self) for l in self.layers.layers if l.name in names)

    @property
    def weights_l3_bytes(self) -> int:
        names = set(self.memory.weights_in_l3)
        return sum(const_bytes(l, self) for l in self.layers.layers if l.name in names)


def const_bytes(layer: Layer, ns: NetworkSchedule | None = None, per_channel: int | None = None) -> int:
    """L2 bytes of a layer's constants: weights plus per-output-channel constants (bias,
    multiplier, shift) of its module (Module.const_bytes_per_channel)."""
    if layer.weights is None:
        return 0
    if per_channel is None:
        assert ns is not None
        s = ns.schedule(layer.name)
        per_channel = ns.target.module(s.module).const_bytes_per_channel
    return int(layer.weights.size) * layer.nest.w_bytes + layer.nest.K * per_channel


def _schedule_one(layer: Layer, nest, target: Target, tiler: str) -> LayerSchedule:
    try:
        return schedule_layer(nest, target, tiler)
    except TilewiseError as e:
        raise TilewiseError(f"layer '{layer.name}' ({layer.op}) cannot be scheduled on {target.name}: {e}") from None


def schedule_network(lg: LayerGraph, target: Target, tiler: str = "model", l3_strategy: str = "cascade") -> NetworkSchedule:
    """Schedule every layer of `lg` on `target` and plan its memory."""
    first = [_schedule_one(layer, layer.nest, target, tiler) for layer in lg.layers]
    per_channel = {layer.name: target.module(s.module).const_bytes_per_channel for layer, s in zip(lg.layers, first)}
    steps = [
        LayerStep(layer.name, layer.inputs, layer.output, weight_bytes=const_bytes(layer, per_channel=per_channel[layer.name]))
        for layer in lg.layers
    ]
    nests = {layer.name: layer.nest for layer in lg.layers}
    tensor_bytes = {name: t.nbytes for name, t in lg.tensors.items()}
    l2 = target.memory("L2")
    l3, plan = plan_memory(
        steps, nests, tensor_bytes, l2.free, outputs=lg.outputs, strategy=l3_strategy,  # type: ignore[arg-type]
        chan_const_bytes=max(per_channel.values(), default=12), **l3_dma(target),
    )
    tiled: dict[str, TiledLayer] = {}
    schedules = list(first)
    for i, layer in enumerate(lg.layers):
        t = l3.tilings.get(layer.name)
        if t is None:
            continue
        tiles = t.tiles
        geoms: dict = {}
        for tile in tiles:
            geoms.setdefault(tile.nest, len(geoms))
        scheds = tuple(_schedule_one(layer, nest, target, tiler) for nest in geoms)
        tiled[layer.name] = TiledLayer(tiles, scheds, tuple(geoms[tile.nest] for tile in tiles))
        # the reported schedule: the interior tile's (the most frequent geometry)
        g = max(range(len(scheds)), key=lambda k: sum(x.nest == scheds[k].nest for x in tiles))
        schedules[i] = scheds[g]
    l3_plan = plan_l3_activations(l3.steps, tensor_bytes, l3.l3_tensors, lg.outputs)
    return NetworkSchedule(lg, target, tiler, tuple(schedules), l3, plan, tiled, l3_plan)
