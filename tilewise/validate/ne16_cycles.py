"""NE16's own predicted cycles of a layer, to set beside what the firmware measures on GVSoC with
NE16 in the cluster (pulp-open-ne16: TW_NE16 lines, firmware_run.py): the binding's engine terms
(bindings/ne16/cost.py `Ne16Kernels.engine_terms`: its jobs from trigger to end, no programming,
no cluster work) summed over every L1 tile of the layer's schedule — the whole tiles and the
border ones of each dimension, as the schedule cuts them (schedule/space.py DimTiling), over its
L2 tiles when it is tiled at L3.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..bindings.cost_terms import tile_cycles
from ..pipeline import NetworkSchedule
from ..schedule.space import LayerSchedule


def schedule_engine_cycles(s: LayerSchedule, cost) -> float:
    """Σ over the tiles of schedule `s` of `cost.engine_terms` (module docstring)."""
    terms = cost.engine_terms(s.nest)
    dims = [[(t.dim, t.tile, t.count - 1, False), (t.dim, t.border, 1, True)] for t in s.tiles]
    # a dimension the terms name that the kind's loops lack (a dense layer's oy, ox): extent 1
    missing = {d: np.asarray(1) for t in terms for d, _ in t.factors}
    missing = {d: v for d, v in missing.items() if d not in {t.dim for t in s.tiles}}
    total = 0.0
    for combo in itertools.product(*dims):
        n = 1
        for _, _, c, _ in combo:
            n *= c
        if n == 0:
            continue
        size = {**missing, **{d: np.asarray(v) for d, v, _, _ in combo}}
        last = {d: np.asarray(True) for d in size} | {d: np.asarray(b) for d, _, _, b in combo}
        first = {d: np.asarray(True) for d in size}
        total += n * float(tile_cycles(terms, size, first, last))
    return total


def engine_cycles(ns: NetworkSchedule, i: int) -> float:
    """Layer i's predicted NE16 cycles (module docstring); the layer runs on a binding whose cost
    model has `engine_terms` (the ne16 family)."""
    cost = ns.placement(i).binding.cost
    tl = ns.l3_tiles.get(ns.layers.layers[i].name)
    if tl is None:
        return schedule_engine_cycles(ns.schedules[i], cost)
    return sum(schedule_engine_cycles(tl.schedule_of(j), cost) for j in range(len(tl.tiles)))
