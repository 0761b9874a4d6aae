"""Partition: one placement (module + binding) per layer, for the whole layer, chosen by cost.

DESIGN.md "Pipeline" — between the lowered network and the schedule. For every layer:
1. the candidates are the bindings of every module whose key matches the layer's
   (bindings/keys.py: op, semantics mode, precisions in bits, loop-nest geometry);
2. each candidate is asked for its legality (`Binding.check`, then its constants layout's check);
   a candidate that runs untiled on the L2 tensors must also find them whole in L2;
3. each legal candidate is scheduled on the whole layer (the chosen tiler, schedule/api.py); a
   schedule that cannot fit is a reason too;
4. the cheapest by `objective` wins (MATCH's module selection, seed 003 §IV-B): ``latency``
   (predicted cycles), ``energy`` (the target's pJ figures, schedule/cost.py `energy_pj`) or
   ``edp`` (their product); ties go to the lower latency, then to the order the target lists.

Every reason a layer cannot run somewhere is known here, before anything is generated, so
`analyze` and `generate` (which both start from this choice) always agree; `analyze --why` shows
the rejected candidates. A layer no candidate can run is a one-sentence error naming the layer,
each candidate and its reason. The choice holds for all of a layer's L3→L2 tiles
(schedule/network.py schedules them with the same placement).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..bindings.keys import layer_key, matches
from ..errors import TilewiseError
from ..ir.layer import Layer, LayerGraph
from ..schedule.api import get_tiler, schedule_placed
from ..schedule.cost import energy_pj
from ..ir.operands import const_bytes
from ..schedule.placement import Placement, place
from ..schedule.space import LayerSchedule
from ..targets.base import Target

Objective = Literal["latency", "energy", "edp"]
OBJECTIVES: tuple[str, ...] = ("latency", "energy", "edp")


@dataclass(frozen=True)
class Candidate:
    """One (module, binding) that could run a layer, and what partition found."""

    module: str
    binding: str
    #: why it cannot run the layer (None: legal and scheduled)
    reason: str | None = None
    cycles: float | None = None
    energy_pj: float | None = None
    chosen: bool = False

    def to_json(self) -> dict:
        return {"module": self.module, "binding": self.binding, "chosen": self.chosen,
                "reason": self.reason, "cycles": self.cycles, "energy_pj": self.energy_pj}


@dataclass(frozen=True)
class Choice:
    """A layer's placement, its schedule on the whole layer, and every candidate considered."""

    layer: str
    placement: Placement
    schedule: LayerSchedule
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class Partition:
    """One choice per layer, in execution order."""

    target: Target
    tiler: str
    objective: str
    choices: tuple[Choice, ...]


def check_network(lg: LayerGraph) -> None:
    """What the generated C API takes: one input, one output, integer activations it stores."""
    if len(lg.inputs) != 1 or len(lg.outputs) != 1:
        raise TilewiseError(f"{lg.source or lg.name}: tilewise deploys networks with one input and "
                            f"one output (this one has {len(lg.inputs)} and {len(lg.outputs)})")
    for name, t in lg.tensors.items():
        if t.dtype not in ("int8", "uint8", "int16"):
            raise TilewiseError(f"{lg.source or lg.name}: tensor '{name}' is {t.dtype}; tilewise "
                                f"deploys int8, uint8 and int16 activations only")


def _l2_whole(layer: Layer, lg: LayerGraph, target: Target, p: Placement) -> str | None:
    """An untiled placement reads and writes the whole tensors in L2 (and its weights there,
    unless its module reads them from elsewhere)."""
    if not p.untiled or not target.has_memory("L2"):
        return None
    need = sum(lg.tensors[t].nbytes for t in (*layer.inputs, layer.output))
    if p.module.weights_from is None:
        need += const_bytes(layer, p.binding.const_bytes)
    free = target.memory("L2").free
    if need > free:
        return (f"it runs whole on the L2 tensors and needs {need} bytes of L2 for them, more "
                f"than the {free} free")
    return None


def _objective(obj: str, cycles: float, energy: float) -> tuple[float, float]:
    if obj == "energy":
        return energy, cycles
    if obj == "edp":
        return energy * cycles, cycles
    return cycles, 0.0


def _check_objective(target: Target, objective: str) -> None:
    if objective not in OBJECTIVES:
        raise TilewiseError(f"unknown objective '{objective}'; available: {', '.join(OBJECTIVES)}")
    if objective != "latency" and any(m.pj_per_cycle <= 0 for m in target.modules):
        unknown = ", ".join(m.name for m in target.modules if m.pj_per_cycle <= 0)
        raise TilewiseError(f"--objective {objective} needs energy figures, and target "
                            f"{target.name} has none for module(s) {unknown}; use --objective "
                            f"latency")


def choose(layer: Layer, lg: LayerGraph, target: Target, tiler: str = "model",
           objective: str = "latency") -> Choice:
    """The placement of one layer (module docstring)."""
    key = layer_key(layer, lg)
    cands: list[Candidate] = []
    best: tuple | None = None
    for m in target.modules:
        for b in m.bindings:
            if not matches(b, key):
                continue
            p = place(target, m, b, layer)
            reason = b.check(layer, lg)
            if reason is None and b.consts is not None:
                reason = b.consts.check(layer, lg)
            if reason is None:
                reason = _l2_whole(layer, lg, target, p)
            s = None
            if reason is None:
                try:
                    s = schedule_placed(b.nest_for(layer.nest), target, p, tiler)
                except TilewiseError as e:
                    reason = str(e)
            if s is None:
                cands.append(Candidate(m.name, b.label, reason))
                continue
            e_pj = energy_pj(s, target)
            cands.append(Candidate(m.name, b.label, None, s.cycles, e_pj))
            score = _objective(objective, s.cycles, e_pj)
            if best is None or score < best[0]:
                best = (score, len(cands) - 1, p, s)
    if best is None:
        if not cands:
            raise TilewiseError(f"layer '{layer.name}' ({layer.op}): no module of {target.name} "
                                f"runs {key} ({key.nest_kind} geometry)")
        why = "; ".join(f"{c.module} {c.binding}: {c.reason}" for c in cands)
        raise TilewiseError(f"layer '{layer.name}' ({key}) cannot run on {target.name}: {why}")
    _, i, p, s = best
    cands[i] = Candidate(cands[i].module, cands[i].binding, None, cands[i].cycles,
                         cands[i].energy_pj, chosen=True)
    return Choice(layer.name, p, s, tuple(cands))


def partition(lg: LayerGraph, target: Target, tiler: str = "model",
              objective: str = "latency") -> Partition:
    """One placement per layer of `lg` on `target` (module docstring)."""
    get_tiler(tiler)
    _check_objective(target, objective)
    check_network(lg)
    return Partition(target, tiler, objective,
                     tuple(choose(layer, lg, target, tiler, objective) for layer in lg.layers))
