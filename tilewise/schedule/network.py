"""Whole-network scheduling: every layer's module and L2→L1 schedule, L3→L2 tiling, the L2 plan.

`schedule_network(layers, target, tiler)` is the one function between the lowered network and
codegen/reporting (DESIGN.md pipeline: partition → schedule → memory plan):
1. each layer is scheduled at L2→L1 by `schedule_layer` (fastest module, the chosen tiler);
2. the L3→L2 decisions and the static L2 plan come from `schedule.l3.plan_memory` (seed 001 Eq. 5
   cascade, bidirectional stack vs best fit, weights in L2 or streamed from L3 with prefetch);
3. a layer cut at L3→L2 is rescheduled on the sub-layer its L2 tiles present (`L3Tiling.sub_nest`).
Errors name the first layer that cannot fit and the smallest memory it would need.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TilewiseError
from ..ir.layer import Layer, LayerGraph
from ..memory.network import LayerStep, NetworkPlan
from ..targets.base import Target
from .api import schedule_layer
from .l3 import L3Tiling, NetworkL3, l3_dma, plan_memory
from .space import LayerSchedule


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
        return s.cycles * t.n_tiles + t.l3_cycles

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
    schedules = [
        _schedule_one(layer, l3.tilings[layer.name].sub_nest, target, tiler) if layer.name in l3.tilings else s
        for layer, s in zip(lg.layers, first)
    ]
    return NetworkSchedule(lg, target, tiler, tuple(schedules), l3, plan)
