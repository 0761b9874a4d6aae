"""Partition: one placement (module + binding) per layer, for the whole layer, chosen by cost.

DESIGN.md "Pipeline" — between the lowered network and the schedule. For every layer:
1. the candidates are the bindings of every module whose key matches the layer's
   (bindings/keys.py: op, semantics mode, precisions in bits, loop-nest geometry);
2. each candidate is asked for its legality (`Binding.check`, then its constants layout's check);
   a candidate that runs untiled on the L2 tensors must also find them whole in L2;
3. each legal candidate is scheduled on the whole layer (the chosen tiler, schedule/api.py); a
   schedule that cannot fit is a reason too;
4. the network's cost is minimised, exactly, over every assignment of the legal candidates to the
   layers: Σ layer costs + Σ hand-offs (partition/handoff.py: a tensor copied between the
   exchange memories of its producer's and its consumers' modules; every consumer reading it in
   the representation it is stored in), by the DP of partition/dp.py over the cost table of
   partition/table.py; the oracle (partition/oracle.py) checks it in the tests. A layer's cost is
   its predicted cycles (``latency``), its energy (``energy``, the target's pJ figures,
   schedule/cost.py `energy_pj`) or their product (``edp``, per layer and per hand-off, summed);
   ties go to the lower latency, then to the order the target lists. With no hand-off cost (every
   built-in target: all modules exchange in L2, in int8) this is MATCH's module selection (seed 003
   §IV-B): every layer takes its cheapest candidate (`choose`).

Every reason a layer cannot run somewhere is known here, before anything is generated, so
`analyze` and `generate` (which both start from this choice) always agree; `analyze --why` shows
the rejected candidates. A layer no candidate can run is a one-sentence error naming the layer,
each candidate and its reason. The choice holds for all of a layer's L3→L2 tiles
(pipeline.py schedules them with the same placement).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

from ..bindings.keys import layer_key, matches
from ..errors import TilewiseError
from ..ir.layer import Layer, LayerGraph
from ..ir.layout import input_perm
from ..ir.operands import const_bytes
from ..schedule.api import get_tiler, schedule_placed
from ..schedule.cost import energy_pj
from ..schedule.placement import Placement, place
from ..schedule.space import LayerSchedule
from ..targets.base import Target
from .dp import solve
from .handoff import HandOff, move_cost, tensor_uses
from .table import Cost, CostTable, Option, Tensor, moves

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
    #: the representation the layer writes its output in (one of Binding.output_offsets)
    out_offset: int = 0


@dataclass(frozen=True)
class Partition:
    """One choice per layer, in execution order."""

    target: Target
    tiler: str
    objective: str
    choices: tuple[Choice, ...]
    #: the copies of tensors between exchange memories the choice makes
    handoffs: tuple[HandOff, ...] = ()
    #: the minimised network cost: Σ layer costs + Σ hand-offs, in the objective's unit, and the
    #: predicted cycles of the same sum (layers scheduled whole, before any L3→L2 cut)
    score: float = 0.0
    cycles: float = 0.0

    @property
    def handoff_cycles(self) -> float:
        return sum(h.cycles for h in self.handoffs)


def check_network(lg: LayerGraph) -> None:
    """What the generated C API takes: any number of inputs and outputs (tw_network_run takes
    them in graph order, codegen/network_c.py), at least one of each; integer activations it
    stores (8/16/32-bit, packed unsigned 4/2-bit — at the inputs and outputs too, as packed
    bytes). int32 tensors are the accumulator-wide values integer exports keep between nodes
    (NEMO's unclipped residual sums, Deeploy's convolution and MatMul outputs before their
    RequantShift); a layer reading or writing one runs where a binding takes its precisions, or
    partition says why not."""
    if not lg.inputs or not lg.outputs:
        raise TilewiseError(f"{lg.source or lg.name}: the network has {len(lg.inputs)} inputs and "
                            f"{len(lg.outputs)} outputs; tilewise deploys networks with at least "
                            f"one of each")
    for name, t in lg.tensors.items():
        if t.dtype in ("uint4", "uint2") and name in lg.inputs and input_perm(lg.meta) is not None:
            raise TilewiseError(f"{lg.source or lg.name}: the network input '{name}' is {t.dtype} "
                                f"and opens with a transpose folded into the input copy, which "
                                f"moves whole bytes; give the model an HWC sub-byte input")
        if t.dtype not in ("int8", "uint8", "int16", "int32", "uint4", "uint2"):
            raise TilewiseError(f"{lg.source or lg.name}: tensor '{name}' is {t.dtype}; tilewise "
                                f"deploys int8, uint8, int16, int32, uint4 and uint2 tensors only")


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


def candidates(layer: Layer, lg: LayerGraph, target: Target, tiler: str, objective: str,
               chains: bool = False
               ) -> tuple[list[Candidate], list[tuple[int, Placement, LayerSchedule]]]:
    """Every (module, binding) whose key matches the layer, with its reason or its schedule on
    the whole layer (module docstring, steps 1-3); the legal ones with their placement. With
    `chains`, the modules only fused chains run on too (Module.chains_only)."""
    key = layer_key(layer, lg)
    cands: list[Candidate] = []
    legal: list[tuple[int, Placement, LayerSchedule]] = []
    for m in target.modules:
        if m.chains_only and not chains:
            continue
        scheduled: dict[str, LayerSchedule] = {}
        for b in m.bindings:
            if not matches(b, key):
                continue
            p = place(target, m, b, layer)
            twin = scheduled.get(b.tiles_of) if b.tiles_of is not None else None
            if twin is not None and not twin.untiled:
                p = p.fixing(**twin.tile_sizes)
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
            scheduled[b.name] = s
            cands.append(Candidate(m.name, b.label, None, s.cycles, energy_pj(s, target)))
            legal.append((len(cands) - 1, p, s))
    if not legal:
        if not cands:
            raise TilewiseError(f"layer '{layer.name}' ({layer.op}): no module of {target.name} "
                                f"runs {key} ({key.nest_kind} geometry)")
        why = "; ".join(f"{c.module} {c.binding}: {c.reason}" for c in cands)
        raise TilewiseError(f"layer '{layer.name}' ({key}) cannot run on {target.name}: {why}")
    return cands, legal


def _chosen(layer: Layer, cands: list[Candidate], i: int, p: Placement, s: LayerSchedule,
            out_offset: int = 0) -> Choice:
    if out_offset:   # the binding's C writes the output in that representation
        b = p.binding
        p = replace(p, binding=replace(b, emit=partial(b.emit, out_offset=out_offset),
                                       output_offsets=(out_offset,)))
    c = cands[i]
    marked = list(cands)
    marked[i] = Candidate(c.module, c.binding, None, c.cycles, c.energy_pj, chosen=True)
    return Choice(layer.name, p, s, tuple(marked), out_offset)


def choose(layer: Layer, lg: LayerGraph, target: Target, tiler: str = "model",
           objective: str = "latency") -> Choice:
    """The layer's cheapest candidate on its own, hand-offs ignored (MATCH's per-layer choice,
    seed 003 §IV-B; `partition` minimises over the whole network instead)."""
    cands, legal = candidates(layer, lg, target, tiler, objective)
    i, p, s = min(legal, key=lambda x: _objective(objective, cands[x[0]].cycles or 0.0,
                                                   cands[x[0]].energy_pj or 0.0))
    return _chosen(layer, cands, i, p, s)


def alternative(layer: Layer, lg: LayerGraph, target: Target, tiler: str, objective: str,
                keep: Callable[[Placement, LayerSchedule], bool]) -> Choice | None:
    """The layer's cheapest legal candidate that `keep` accepts, as a Choice, or None: another
    placement than the partition's for a schedule that spans layers (pipeline.py: a fused
    chain's members on an untiled module, Module.chains_only's included)."""
    cands, legal = candidates(layer, lg, target, tiler, objective, chains=True)
    kept = [x for x in legal if keep(x[1], x[2])]
    if not kept:
        return None
    i, p, s = min(kept, key=lambda x: _objective(objective, cands[x[0]].cycles or 0.0,
                                                  cands[x[0]].energy_pj or 0.0))
    return _chosen(layer, cands, i, p, s)


def cost_table(lg: LayerGraph, target: Target, legal, cands, objective: str) -> CostTable:
    """The table the DP and the oracle minimise over (partition/table.py): one option per legal
    candidate and representation it can write; moves priced from the target's memories."""
    mems = tuple(m.name for m in target.memories)
    uses = tensor_uses(lg)
    index = {u.name: k for k, u in enumerate(uses)}
    options = []
    for cs, ls in zip(cands, legal):
        opts = []
        for i, p, _ in ls:
            c = cs[i]
            cost = (_objective(objective, c.cycles or 0.0, c.energy_pj or 0.0)[0], c.cycles or 0.0)
            for w in p.binding.output_offsets:
                opts.append(Option(c.module, c.binding, mems.index(p.module.exchange),
                                   p.binding.input_offset, w, cost, i))
        options.append(tuple(opts))
    tensors = []
    for u in uses:
        move = tuple(tuple(_move(target, a, b, u.nbytes, objective) for b in mems) for a in mems)
        tensors.append(Tensor(u.name, u.producer, u.consumers, u.output, move))
    return CostTable(mems, mems.index(target.io_memory), tuple(options), tuple(tensors),
                     tuple(tuple(index[t] for t in dict.fromkeys(layer.inputs))
                           for layer in lg.layers),
                     tuple(index[layer.output] for layer in lg.layers))


def _move(target: Target, src: str, dst: str, nbytes: int, objective: str) -> Cost:
    cycles, energy = move_cost(target, src, dst, nbytes)
    return _objective(objective, cycles, energy)[0], cycles


@dataclass(frozen=True, eq=False)
class Tables:
    """Every layer's candidates (with reasons), its legal ones scheduled, and the cost table."""

    candidates: tuple[tuple[Candidate, ...], ...]
    legal: tuple[tuple[tuple[int, Placement, LayerSchedule], ...], ...]
    table: CostTable


def tables(lg: LayerGraph, target: Target, tiler: str = "model",
           objective: str = "latency") -> Tables:
    """The candidates of every layer of `lg` on `target` and the cost table over them (what
    `partition` minimises; the tests hand the same table to the oracle)."""
    get_tiler(tiler)
    _check_objective(target, objective)
    check_network(lg)
    from ..progress import progress

    per_layer = []
    with progress(len(lg.layers), "scheduling layers") as step:
        for layer in lg.layers:
            per_layer.append(candidates(layer, lg, target, tiler, objective))
            step()
    cands = [c for c, _ in per_layer]
    legal = [l for _, l in per_layer]
    return Tables(tuple(tuple(c) for c in cands), tuple(tuple(l) for l in legal),
                  cost_table(lg, target, legal, cands, objective))


def partition(lg: LayerGraph, target: Target, tiler: str = "model",
              objective: str = "latency") -> Partition:
    """One placement per layer of `lg` on `target`, the network's cost minimised (module doc)."""
    t = tables(lg, target, tiler, objective)
    table = t.table
    best = solve(table)
    if best is None:
        raise TilewiseError(f"{lg.source or lg.name}: no assignment of {target.name}'s modules to "
                            f"the layers reads every tensor in the representation it is stored in")
    total, picks = best
    choices = []
    for layer, cs, ls, opts, j in zip(lg.layers, t.candidates, t.legal, table.options, picks):
        o = opts[j]
        i, p, s = next(x for x in ls if x[0] == o.ref)
        choices.append(_chosen(layer, list(cs), i, p, s, o.writes))
    handoffs = []
    for m in moves(table, picks) or ():
        name = table.tensors[m.tensor].name
        nbytes = int(lg.tensors[name].nbytes)
        src, dst = table.memories[m.src], table.memories[m.dst]
        handoffs.append(HandOff(name, src, dst, nbytes, *move_cost(target, src, dst, nbytes)))
    return Partition(target, tiler, objective, tuple(choices), tuple(handoffs), total[0],
                     total[1])
