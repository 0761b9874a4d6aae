"""The scheduled part of `tilewise analyze --target`: per-layer module, tiles, loop order, L1 use,
DMA bytes, predicted cycles and MAC/cycle; totals: peak L2 and its lower bound, weights in L2/L3,
predicted cycles, latency at the target clock, MAC/cycle.

JSON field names are stable (scripts use them): layers[].{name, op, macs, module, tiles, loop_order,
l1_bytes, dma_bytes, cycles} and totals.{macs, cycles, latency_ms, peak_l2_bytes,
l2_lower_bound_bytes, weights_l2_bytes, weights_l3_bytes}.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schedule.network import NetworkSchedule
from ..schedule.space import LayerSchedule


@dataclass(frozen=True)
class ScheduledRow:
    name: str
    module: str
    tiles: dict[str, dict[str, int]]
    loop_order: tuple[str, ...]
    buffering: int
    l1_bytes: int
    dma_bytes: int
    cycles: float
    mac_per_cycle: float
    #: the L3→L2 cut of this layer, when it has one
    l3: dict | None


def tiles_json(s: LayerSchedule) -> dict[str, dict[str, int]]:
    return {t.dim: {"size": t.size, "tile": t.tile, "count": t.count, "border": t.border} for t in s.tiles}


def scheduled_rows(ns: NetworkSchedule) -> tuple[ScheduledRow, ...]:
    rows = []
    for i, (layer, s) in enumerate(zip(ns.layers.layers, ns.schedules)):
        cycles = ns.layer_cycles(i)
        t = ns.l3_tiling(layer.name)
        l3 = None
        if t is not None:
            l3 = {"stage": t.stage, "k_tile": t.k_tile, "oy_tile": t.oy_tile, "tiles": t.n_tiles, "l3_bytes": t.l3_bytes,
                  "l3_transfers": t.l3_transfers, "order": t.order,
                  "tile_schedules": len(ns.l3_tiles[layer.name].schedules) if layer.name in ns.l3_tiles else 1}
        rows.append(ScheduledRow(
            name=layer.name, module=s.module, tiles=tiles_json(s), loop_order=tuple(s.loop_order),
            buffering=s.buffering, l1_bytes=s.l1_bytes, dma_bytes=ns.layer_dma(i).bytes, cycles=cycles,
            mac_per_cycle=layer.macs / cycles if cycles else 0.0, l3=l3,
        ))
    return tuple(rows)


def scheduled_totals(ns: NetworkSchedule) -> dict:
    cycles = ns.cycles
    return {
        "target": ns.target.name,
        "tiler": ns.tiler,
        "clock_mhz": ns.target.clock_mhz,
        "l1_free_bytes": ns.target.memory("L1").free,
        "l2_free_bytes": ns.target.memory("L2").free,
        "cycles": cycles,
        "latency_ms": ns.latency_ms,
        "mac_per_cycle": ns.macs / cycles if cycles else 0.0,
        "peak_l2_bytes": ns.memory.peak,
        "l2_lower_bound_bytes": ns.memory.lower_bound,
        "l2_planner": ns.memory.planner,
        "weights_l2_bytes": ns.weights_l2_bytes,
        "weights_l3_bytes": ns.weights_l3_bytes,
        "dma_bytes": sum(r.dma_bytes for r in scheduled_rows(ns)),
        "l3_activation_bytes": ns.l3_plan.bytes,
        "l3_tile_bytes": ns.l3_bytes,
    }
