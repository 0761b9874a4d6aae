"""A network schedule re-priced in executed instructions (validate's predicted_instructions; in
validate, above the pipeline whose NetworkSchedule it reads), for a target whose cost model is in
another unit (stm32h7: estimated Cortex-M7 cycles) but whose runs are also counted in
instructions (`validate --on count`).

What it owns: the same decisions (every layer's placement, tile sizes, loop order, buffering —
what the generated C executes) priced by `Target.instruction_model(target)`: each layer's binding
of the same key and name on the module of the same name there, its schedule rebuilt with
schedule/cost.py (`untiled_schedule` for a layer run whole, `Evaluator.build` for a tiled one),
plus the layer's L3 traffic and the network's own figures as NetworkSchedule sums them
(pipeline.py); a fused chain's layers by their band calls and ring copies (schedule/chain.py
`price`, the band the schedule chose). Nothing is re-decided: a schedule the instruction model would have chosen
differently is still priced as the one generated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..schedule import chain as chains
from ..schedule.cost import Evaluator, band_cycles, untiled_schedule
from ..schedule.placement import Placement
from ..schedule.space import LayerSchedule

if TYPE_CHECKING:  # pragma: no cover
    from ..pipeline import NetworkSchedule
    from ..targets.base import Target


@dataclass(frozen=True)
class InstructionPrediction:
    """Predicted executed instructions of one inference and of each layer (execution order)."""

    total: float
    layers: tuple[float, ...]


def predicted_instructions(ns: NetworkSchedule) -> InstructionPrediction | None:
    """`ns` priced in instructions; None when its target has no instruction model."""
    model = ns.target.instruction_model
    if model is None:
        return None
    it = model(ns.target)
    layers = tuple(_layer(ns, it, i) for i in range(len(ns.schedules)))
    return InstructionPrediction(sum(layers) + ns.handoff_cycles + ns.network_cycles, layers)


def _layer(ns: NetworkSchedule, it: Target, i: int) -> float:
    p = _placement(ns.placement(i), it)
    layer = ns.layers.layers[i]
    ch = ns.chain_of(layer.name)
    if ch is not None:
        return _chain_layer(ns, it, i)
    t = ns.l3.tilings.get(layer.name)
    if t is None:
        return _cycles(ns.schedules[i], it, p)
    tl = ns.l3_tiles.get(layer.name)
    if tl is None:
        return _cycles(ns.schedules[i], it, p) * t.n_tiles + t.l3_cycles
    return sum(_cycles(tl.schedule_of(j), it, p) for j in range(len(tl.tiles))) + t.l3_cycles


def _placement(p: Placement, it: Target) -> Placement:
    module = it.module(p.module.name)
    binding = next(b for b in module.bindings
                   if b.key == p.binding.key and b.name == p.binding.name)
    return replace(p, module=module, binding=binding)


def _cycles(s: LayerSchedule, it: Target, p: Placement) -> float:
    if p.untiled:
        return untiled_schedule(s.nest, it, p).cycles
    return Evaluator(s.nest, it, p).build({t.dim: t.tile for t in s.tiles}, tuple(s.loop_order),
                                          s.buffering).cycles


def _chain_layer(ns: NetworkSchedule, it: Target, i: int) -> float:
    """Layer i of a fused chain: its band calls (the first member: with every member's fixed
    cost; the last: with the rings' copies — NetworkSchedule.layer_cycles' split)."""
    ch = ns.chain_of(ns.layers.layers[i].name)
    assert ch is not None
    k = ch.layers.index(ns.layers.layers[i].name)
    h = i - k
    idx = range(h, h + len(ch.layers))
    ps = [_placement(ns.placement(j), it) for j in idx]

    def band(p: Placement):
        return lambda n, first: band_cycles(n, p, first)

    nests = [ns.schedules[j].nest for j in idx]
    per, copy, _ = chains.price(nests, chains.bands([nests[m] for m in ch.main], ch.band),
                                [band(p) for p in ps], chains.copy_cycles(it), ch.branch)
    if k == 0:
        return per[0] + sum(p.module.fixed_cycles(p.binding.direct_call) for p in ps)
    return per[k] + (copy if k == len(ch.layers) - 1 else 0.0)
