"""Seed 002's analytical IDSP model (ch. 5): accesses per schedule, cycles, Pareto exploration.

The formulas are the checked reading in notes/idsp-model.md (seed 002 eqs. 5.1–5.24):
tiles (TOx, TOy, TOc, TOn, TKc), nX = ⌈X/TX⌉, Ntiles = Π nX; buffers
Bin = ((TOx−1)·Sx + Kx)·((TOy−1)·Sy + Ky)·TKc·TOn, Bw = Kx·Ky·TKc·TOc, Bout = TOx·TOy·TOc·TOn;
external accesses per tile by schedule (each is a tile-loop order, space.py):

    intra             Bin + Bw + (2 − 1/nKc)·Bout
    inter_kc          Bin + Bw + Bout/nKc                               order n,k,oy,ox,c
    inter_oc          Bin/nOc + Bw + (2 − 1/nKc)·Bout                   order n,oy,ox,c,k
    inter_oxoyon      Bin + Bw/(nOx·nOy·nOn) + (2 − 1/nKc)·Bout         order k,c,n,oy,ox
    inter_oxoyon_dir_ox  Bin_nol + Bin_ol/nOx + Bw/(nOx·nOy·nOn) + (2 − 1/nKc)·Bout
                      (sliding window along x: only the new columns of the input are fetched)

DMA transfers per tile: the same with every buffer = 1. Cycles (eq. 5.7–5.12):
CC_layer = CC_prolog + (Ntiles − 1)·max(CC_dsp, CC_bus) + CC_epilog, CC_tile = N_MACs/throughput,
CC_dsp = CC_tile + N_transfers·CC_dma_init, CC_bus = (N_ext + N_local)/bus,
CC_prolog = (Bin + Bw)/bus + 2·CC_dma_init + CC_tile, CC_epilog = Bout/bus + CC_dma_init.
Throughput = clock·2·MACs/CC_layer·10⁻³ GOps/s; memory efficiency = 2·MACs/(total accesses·
element size) Ops/B. Every tile is charged as a full tile (the seed's model; the generic model in
cost.py counts border tiles exactly instead).

Exploration is vectorized over the whole tile space (chunked along TOn to bound memory).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..ir.layer import LoopNest
from ..targets.base import Target

SCHEDULES = ("intra", "inter_kc", "inter_oc", "inter_oxoyon", "inter_oxoyon_dir_ox")
#: the tile-loop order (outer→inner, space.py dims) each inter-tile schedule is
LOOP_ORDERS = {
    "inter_kc": ("n", "k", "oy", "ox", "c"),
    "inter_oc": ("n", "oy", "ox", "c", "k"),
    "inter_oxoyon": ("k", "c", "n", "oy", "ox"),
    "inter_oxoyon_dir_ox": ("k", "c", "n", "oy", "ox"),
}


@dataclass(frozen=True)
class IdspLayer:
    Ox: int
    Oy: int
    Oc: int
    On: int
    Kx: int
    Ky: int
    Kc: int
    Sx: int = 1
    Sy: int = 1

    @classmethod
    def from_nest(cls, nest: LoopNest) -> IdspLayer:
        return cls(nest.OX, nest.OY, nest.K, nest.N, nest.FX, nest.FY, nest.C, nest.SX, nest.SY)

    @property
    def macs(self) -> int:
        return self.Ox * self.Oy * self.Oc * self.On * self.Kx * self.Ky * self.Kc


@dataclass(frozen=True)
class IdspSystem:
    """Table 5.1's system properties."""

    clock_mhz: float = 450.0
    macs_per_cycle: float = 32.0
    bus_elems_per_cycle: float = 32.0
    elem_bytes: int = 2
    dma_init: float = 150.0
    local_bytes: int = 128 * 1024
    n_local: float = 0.0

    @classmethod
    def from_target(cls, target: Target, elem_bytes: int = 2) -> IdspSystem:
        l1 = target.memory("L1")
        dsp = target.modules[0].bindings[0].cost
        return cls(target.clock_mhz, float(getattr(dsp, "macs_per_cycle")),
                   l1.bytes_per_cycle(target.clock_mhz) / elem_bytes, elem_bytes,
                   float(l1.dma_issue_cycles), l1.free)


@dataclass
class Tiles:
    """A batch of tiles (arrays of equal shape) and their derived quantities."""

    TOx: np.ndarray
    TOy: np.ndarray
    TOc: np.ndarray
    TOn: np.ndarray
    TKc: np.ndarray

    def at(self, i) -> tuple[int, int, int, int, int]:
        return tuple(int(np.broadcast_to(a, self.shape)[i]) for a in
                     (self.TOx, self.TOy, self.TOc, self.TOn, self.TKc))

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast(self.TOx, self.TOy, self.TOc, self.TOn, self.TKc).shape


def tile_space(layer: IdspLayer) -> Iterator[Tiles]:
    """Every tile of eq. 5.1, as broadcast grids; one chunk per TOn value."""
    ox = np.arange(1, layer.Ox + 1, dtype=np.float64).reshape(-1, 1, 1, 1)
    oy = np.arange(1, layer.Oy + 1, dtype=np.float64).reshape(1, -1, 1, 1)
    oc = np.arange(1, layer.Oc + 1, dtype=np.float64).reshape(1, 1, -1, 1)
    kc = np.arange(1, layer.Kc + 1, dtype=np.float64).reshape(1, 1, 1, -1)
    for on in range(1, layer.On + 1):
        yield Tiles(ox, oy, oc, np.float64(on), kc)


def buffers(layer: IdspLayer, t: Tiles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bin_ = ((t.TOx - 1) * layer.Sx + layer.Kx) * ((t.TOy - 1) * layer.Sy + layer.Ky) * t.TKc * t.TOn
    bw = layer.Kx * layer.Ky * t.TKc * t.TOc
    bout = t.TOx * t.TOy * t.TOc * t.TOn
    return bin_, bw, bout


def counts(layer: IdspLayer, t: Tiles) -> dict[str, np.ndarray]:
    return {"ox": np.ceil(layer.Ox / t.TOx), "oy": np.ceil(layer.Oy / t.TOy),
            "oc": np.ceil(layer.Oc / t.TOc), "on": np.ceil(layer.On / t.TOn),
            "kc": np.ceil(layer.Kc / t.TKc)}


def per_tile(layer: IdspLayer, sched: str, t: Tiles, unit: bool = False) -> np.ndarray:
    """External accesses (elements) per tile; with unit=True, DMA transfers per tile."""
    n = counts(layer, t)
    if unit:
        bin_, bw, bout = 1.0, 1.0, 1.0
        ol = nol = 1.0
    else:
        bin_, bw, bout = buffers(layer, t)
        rows = ((t.TOy - 1) * layer.Sy + layer.Ky) * t.TKc * t.TOn
        ol = (layer.Kx - layer.Sx) * rows
        nol = t.TOx * layer.Sx * rows
    out2 = (2 - 1 / n["kc"]) * bout
    if sched == "intra":
        return bin_ + bw + out2
    if sched == "inter_kc":
        return bin_ + bw + bout / n["kc"]
    if sched == "inter_oc":
        return bin_ / n["oc"] + bw + out2
    w = bw / (n["ox"] * n["oy"] * n["on"])
    if sched == "inter_oxoyon":
        return bin_ + w + out2
    if sched == "inter_oxoyon_dir_ox":
        return nol + ol / n["ox"] + w + out2
    raise KeyError(sched)


def n_tiles(layer: IdspLayer, t: Tiles) -> np.ndarray:
    n = counts(layer, t)
    return n["ox"] * n["oy"] * n["oc"] * n["on"] * n["kc"]


def total_accesses(layer: IdspLayer, sched: str, t: Tiles) -> np.ndarray:
    return n_tiles(layer, t) * per_tile(layer, sched, t)


def layer_cycles(layer: IdspLayer, sys: IdspSystem, sched: str, t: Tiles) -> np.ndarray:
    bin_, bw, bout = buffers(layer, t)
    nt = n_tiles(layer, t)
    cc_tile = t.TOx * t.TOy * t.TOc * t.TOn * layer.Kx * layer.Ky * t.TKc / sys.macs_per_cycle
    cc_dsp = cc_tile + per_tile(layer, sched, t, unit=True) * sys.dma_init
    cc_bus = (per_tile(layer, sched, t) + sys.n_local) / sys.bus_elems_per_cycle
    prolog = (bin_ + bw) / sys.bus_elems_per_cycle + 2 * sys.dma_init + cc_tile
    epilog = bout / sys.bus_elems_per_cycle + sys.dma_init
    return prolog + (nt - 1) * np.maximum(cc_dsp, cc_bus) + epilog


@dataclass(frozen=True)
class AccessOptimum:
    """Table 5.3 row: the access-minimizing tile of a schedule."""

    schedule: str
    tile: tuple[int, int, int, int, int]   # TOx, TOy, TOc, TOn, TKc
    accesses: float                        # layer total at `memory_bytes`
    min_accesses: float                    # over the unbounded tile space
    optimal_bytes: float                   # least buffer bytes reaching min_accesses
    memory_bytes: int | None               # smallest power of two reaching it (None: > max)


def _argmin(layer: IdspLayer, sched: str, limit: float, elem: int) -> tuple[float, tuple, float]:
    """Min accesses over tiles with buffer bytes ≤ limit, and the minimizer with the least buffer."""
    best_m, best_tile, best_b = np.inf, None, np.inf
    for t in tile_space(layer):
        shape = t.shape
        b = np.broadcast_to(sum(buffers(layer, t)) * elem, shape)
        acc = np.broadcast_to(np.where(b <= limit, total_accesses(layer, sched, t), np.inf), shape)
        m = float(acc.min())
        if not np.isfinite(m):
            continue
        if m < best_m * (1 - 1e-12):
            best_m, best_tile, best_b = m, None, np.inf
        if m <= best_m * (1 + 1e-12):
            bb = np.where(acc <= best_m * (1 + 1e-12), b, np.inf)
            i = int(np.argmin(bb))
            if bb.flat[i] < best_b:
                best_b, best_tile = float(bb.flat[i]), t.at(np.unravel_index(i, shape))
    return best_m, best_tile, best_b


def access_optimum(layer: IdspLayer, sched: str, elem_bytes: int = 2,
                   max_memory: int = 512 * 1024) -> AccessOptimum:
    """Seed 002 §5.2.6 / Appendix C: local memory swept over powers of two (128 B … 512 kB), the
    access-minimizing tile kept. The layer minimum is first reached at the smallest power of two
    holding the least-buffer minimizer, so one pass over the tile space finds it; when that exceeds
    `max_memory` (Table 5.3's '>512' rows) the best tile within `max_memory` is reported."""
    m_all, tile, opt = _argmin(layer, sched, np.inf, elem_bytes)
    mem = 128
    while mem < opt:
        mem *= 2
    if mem <= max_memory:
        return AccessOptimum(sched, tile, m_all, m_all, opt, mem)
    m, tile, _ = _argmin(layer, sched, max_memory, elem_bytes)
    return AccessOptimum(sched, tile, m, m_all, opt, None)


def accesses_of(layer: IdspLayer, sched: str, tile: tuple[int, int, int, int, int]) -> float:
    """Layer total external accesses of one tile (TOx, TOy, TOc, TOn, TKc)."""
    t = Tiles(*(np.float64(v) for v in tile))
    return float(total_accesses(layer, sched, t))


def buffer_bytes_of(layer: IdspLayer, tile: tuple[int, int, int, int, int],
                    elem_bytes: int = 2) -> float:
    t = Tiles(*(np.float64(v) for v in tile))
    return float(sum(buffers(layer, t)) * elem_bytes)


@dataclass(frozen=True)
class Solution:
    schedule: str
    tile: tuple[int, int, int, int, int]
    gops: float
    ops_per_byte: float
    cycles: float


@dataclass(frozen=True)
class Candidates:
    """The eligible tiles of one chunk of the tile space under one schedule, with their figures
    (arrays over the eligible tiles, in the chunk's flat order)."""

    schedule: str
    tiles: Tiles
    #: flat indices of the eligible tiles in the chunk's grid (`tiles.shape`)
    index: np.ndarray
    gops: np.ndarray
    ops_per_byte: np.ndarray
    cycles: np.ndarray

    def __len__(self) -> int:
        return len(self.index)

    def solution(self, i: int) -> Solution:
        tile = self.tiles.at(np.unravel_index(self.index[i], self.tiles.shape))
        return Solution(self.schedule, tile, float(self.gops[i]), float(self.ops_per_byte[i]),
                        float(self.cycles[i]))


def candidates(layer: IdspLayer, sys: IdspSystem, eligible_bytes: int | None = None,
               schedules: tuple[str, ...] = SCHEDULES, padded_work_limit: float | None = None
               ) -> Iterator[Candidates]:
    """Algorithm 1's solutions: every eligible tile × schedule, chunk by chunk. eligible_bytes
    defaults to half the local memory (double buffering). padded_work_limit: the optional
    heuristic dropping tiles whose padded work Ntiles·N_MACs exceeds limit × the layer MACs."""
    limit = sys.local_bytes // 2 if eligible_bytes is None else eligible_bytes
    macs = layer.macs
    for t in tile_space(layer):
        bin_, bw, bout = buffers(layer, t)
        ok = (bin_ + bw + bout) * sys.elem_bytes <= limit
        if padded_work_limit is not None:
            work = n_tiles(layer, t) * t.TOx * t.TOy * t.TOc * t.TOn * layer.Kx * layer.Ky * t.TKc
            ok = ok & (work <= padded_work_limit * macs)
        ok = np.broadcast_to(ok, np.broadcast(bin_, bw, bout).shape)
        idx = np.flatnonzero(ok)
        if len(idx) == 0:
            continue
        for sched in schedules:
            cyc = np.broadcast_to(layer_cycles(layer, sys, sched, t), ok.shape).ravel()[idx]
            acc = np.broadcast_to(total_accesses(layer, sched, t), ok.shape).ravel()[idx]
            yield Candidates(sched, t, idx, sys.clock_mhz * 2 * macs / cyc * 1e-3,
                             2 * macs / (acc * sys.elem_bytes), cyc)


def pareto(layer: IdspLayer, sys: IdspSystem, eligible_bytes: int | None = None,
           schedules: tuple[str, ...] = SCHEDULES, padded_work_limit: float | None = None
           ) -> tuple[int, list[Solution]]:
    """Algorithm 1 (`candidates`): returns (number of solutions, the non-dominated ones in
    (throughput, memory efficiency), fastest first)."""
    total = 0
    cands: list[Solution] = []
    for ch in candidates(layer, sys, eligible_bytes, schedules, padded_work_limit):
        total += len(ch)
        gops, eff = ch.gops, ch.ops_per_byte
        # superset of this chunk's front: running max of efficiency, fastest first
        o = np.lexsort((-eff, -gops))
        runmax = np.maximum.accumulate(eff[o])
        keep = o[eff[o] >= np.concatenate(([-np.inf], runmax[:-1]))]
        cands.extend(ch.solution(i) for i in keep)
    front = [s for s in cands if not any(
        (o.gops > s.gops and o.ops_per_byte >= s.ops_per_byte)
        or (o.ops_per_byte > s.ops_per_byte and o.gops >= s.gops) for o in cands)]
    front.sort(key=lambda s: -s.gops)
    return total, front


#: seed 002 Table 5.2: the small 4-layer ConvNet (batch 8, 16-bit elements)
LENET = {
    "conv1": IdspLayer(Ox=28, Oy=28, Oc=32, On=8, Kx=5, Ky=5, Kc=1),
    "conv2": IdspLayer(Ox=14, Oy=14, Oc=64, On=8, Kx=5, Ky=5, Kc=32),
    "fc3": IdspLayer(Ox=1, Oy=1, Oc=512, On=8, Kx=1, Ky=1, Kc=3136),
    "fc4": IdspLayer(Ox=1, Oy=1, Oc=10, On=8, Kx=1, Ky=1, Kc=512),
}
