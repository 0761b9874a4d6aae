"""The scheduled part of `tilewise analyze --target`: per-layer module and binding (partition's
choice), tiles, loop order, L1 use, DMA bytes, predicted cycles and MAC/cycle; with `--why`, every
candidate (module, binding) partition weighed and why it was rejected or not chosen; totals: peak
L2 and its lower bound, weights in L2/L3/flash, RAM and flash, predicted cycles, latency at the
target clock, MAC/cycle.

JSON field names are stable (scripts use them): layers[].{name, op, macs, module, binding, tiles,
loop_order, l1_bytes, dma_bytes, cycles[, candidates]} and totals.{macs, cycles, latency_ms,
peak_l2_bytes, l2_lower_bound_bytes, weights_l2_bytes, weights_l3_bytes, flash_bytes, ram_bytes,
layers_per_module, handoff_cycles, network_cycles, handoffs}. cycles include network_cycles
(tw_network_run's own steps and copies, NetworkSchedule.network_cycles) and handoff_cycles: the copies of tensors
between modules' exchange memories partition chose to pay (handoffs[]: tensor, from, to, bytes,
cycles, energy_pj; none on the built-in targets, whose modules all exchange in L2).
ram_bytes = the L1 arena + the L2 plan's peak (activations and weights kept in L2); flash_bytes =
constants kept in read-only memory, which no RAM holds. memory_summary: flash / RAM as MCU users
read them (memory_summary.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pipeline import NetworkSchedule
from ..schedule.space import LayerSchedule
from .memory_summary import memory_summary, with_code


@dataclass(frozen=True)
class ScheduledRow:
    name: str
    module: str
    binding: str
    tiles: dict[str, dict[str, int]]
    loop_order: tuple[str, ...]
    buffering: int
    l1_bytes: int
    dma_bytes: int
    cycles: float
    mac_per_cycle: float
    #: the L3→L2 cut of this layer, when it has one
    l3: dict | None
    #: with --why: every candidate partition weighed (Candidate.to_json)
    candidates: tuple[dict, ...] | None = None
    #: the output written over its dying input as the layer runs (memory/network.py): {"over":
    #: the input tensor, "lag_bytes": how far below the input the output starts}; None: not
    in_place: dict | None = None
    #: the fused chain holding this layer (schedule/chain.py): {"chain": its members' indices,
    #: "role" (producer: the first, consumer: the last, branch: the member reading the chain's
    #: input for the add's skip, middle), "branch" (its index, None), "band_rows", "ring_bytes",
    #: "recomputed_rows" (0: the rings keep the overlap), "cycles" / "unfused_cycles" of the chain}; None: not fused
    fused: dict | None = None


def fused_json(ns: NetworkSchedule, i: int) -> dict | None:
    """The `fused` entry of layer i (ScheduledRow)."""
    layer = ns.layers.layers[i]
    ch = ns.chain_of(layer.name)
    if ch is None:
        return None
    k = ch.layers.index(layer.name)
    h = i - k
    return {"chain": list(range(h, h + len(ch.layers))),
            "role": "producer" if k == 0 else "consumer" if k == len(ch.layers) - 1
            else "branch" if k == ch.branch else "middle",
            "branch": None if ch.branch is None else h + ch.branch,
            "band_rows": ch.band, "ring_bytes": ch.ring_bytes, "recomputed_rows": 0,
            "cycles": ch.cycles, "unfused_cycles": ch.unfused_cycles}


def tiles_json(s: LayerSchedule) -> dict[str, dict[str, int]]:
    return {t.dim: {"size": t.size, "tile": t.tile, "count": t.count, "border": t.border} for t in s.tiles}


def scheduled_rows(ns: NetworkSchedule, why: bool = False) -> tuple[ScheduledRow, ...]:
    rows = []
    for i, (layer, s) in enumerate(zip(ns.layers.layers, ns.schedules)):
        cycles = ns.layer_cycles(i)
        t = ns.l3_tiling(layer.name)
        l3 = None
        if t is not None:
            l3 = {"stage": t.stage, "k_tile": t.k_tile, "oy_tile": t.oy_tile, "tiles": t.n_tiles,
                  "l3_bytes": t.l3_bytes,
                  "l3_transfers": t.l3_transfers, "order": t.order,
                  "tile_schedules": len(ns.l3_tiles[layer.name].schedules) if layer.name in ns.l3_tiles else 1}
        cands = None
        if why and ns.partition is not None:
            cands = tuple(c.to_json() for c in ns.partition.choices[i].candidates)
        rows.append(ScheduledRow(
            name=layer.name, module=s.module, binding=s.binding, tiles=tiles_json(s),
            loop_order=tuple(s.loop_order), buffering=s.buffering, l1_bytes=s.l1_bytes,
            dma_bytes=ns.layer_dma(i).bytes, cycles=cycles,
            mac_per_cycle=layer.macs / cycles if cycles else 0.0, l3=l3, candidates=cands,
            in_place=({"over": ns.memory.in_place[layer.output][0],
                       "lag_bytes": ns.memory.in_place[layer.output][1]}
                      if layer.output in ns.memory.in_place else None),
            fused=fused_json(ns, i),
        ))
    return tuple(rows)


def scheduled_totals(ns: NetworkSchedule, code: dict | None = None) -> dict:
    """The network's totals; `code`: its measured code size (memory_summary.with_code)."""
    cycles = ns.cycles
    summary = memory_summary(ns)
    return {
        "target": ns.target.name,
        "tiler": ns.tiler,
        "objective": ns.partition.objective if ns.partition else "latency",
        "clock_mhz": ns.target.clock_mhz,
        "hypothetical": ns.target.hypothetical,
        "l1_free_bytes": ns.target.memory("L1").free,
        "l2_free_bytes": ns.target.memory("L2").free,
        "cycles": cycles,
        # what those cycles are (stm32h7: "cycles (Cortex-M7 model, estimated)"), and short
        "cycles_unit": ns.target.cycles_unit,
        "cycles_column": ns.target.cycles_column,
        "latency_ms": ns.latency_ms,
        "mac_per_cycle": ns.macs / cycles if cycles else 0.0,
        "peak_l2_bytes": ns.memory.peak,
        "l2_lower_bound_bytes": ns.memory.lower_bound,
        "l2_planner": ns.memory.planner,
        **({"peak_l2_without_in_place_bytes": ns.memory.peak_without_in_place}
           if ns.memory.peak_without_in_place is not None else {}),
        **({"inputs_in_arena": list(ns.memory.inputs_in_arena)} if ns.memory.inputs_in_arena
           else {}),
        "weights_l2_bytes": ns.weights_l2_bytes,
        "weights_l3_bytes": ns.weights_l3_bytes,
        "flash_bytes": ns.flash_bytes,
        "ram_bytes": ns.ram_bytes,
        "dma_bytes": sum(r.dma_bytes for r in scheduled_rows(ns)),
        "l3_activation_bytes": ns.l3_plan.bytes,
        "l3_tile_bytes": ns.l3_bytes,
        "layers_per_module": layers_per_module(ns),
        "handoff_cycles": ns.handoff_cycles,
        "network_cycles": ns.network_cycles,
        "handoffs": [h.to_json() for h in ns.partition.handoffs] if ns.partition else [],
        "memory_summary": with_code(summary, code) if code else summary,
        # schedule/prefetch.py: layers whose first-tile w and b their predecessor loads, the
        # network cycles that saves, and layers moving w and b in one transfer
        "prefetch": {"layers": [p.layer for p in ns.prefetch.prefetches],
                     "saved_cycles": sum(p.saved for p in ns.prefetch.prefetches),
                     "one_transfer_layers": sorted(ns.prefetch.packed)},
    }


def layers_per_module(ns: NetworkSchedule) -> dict[str, int]:
    """How many layers each module of the target runs (the target's module order)."""
    count = {m.name: 0 for m in ns.target.modules}
    for i in range(len(ns.schedules)):
        count[ns.placement(i).module.name] += 1
    return count
