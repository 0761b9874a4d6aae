"""The L2 tiles of a layer cut at L3→L2, scheduled one geometry at a time, and the L2↔L1 DMA and
accelerator jobs a schedule's tiles issue — the per-layer pieces the network pipeline
(tilewise/pipeline.py) assembles.

A layer cut at L3→L2 (schedule/l3.py `L3Tiling.tiles`: interior tiles, the border k tile, the
first / last row tiles with their padding halos) is rescheduled on every distinct sub-layer its L2
tiles present, deduplicated by geometry (`TiledLayer`), with the same placement — one module runs
the whole layer — and, for geometries that share a constant blob (the same output channels), the
same L1 k and c tiles, so the blob has one layout; its cycles and L2↔L1 DMA are the sums over the
tiles the code runs (`embedded_dma`: a tile's rows are a k tile of a wider tensor — more chunks,
the same bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import TilewiseError
from ..ir.layer import Layer
from ..targets.base import Target
from .api import schedule_placed
from .l3 import L2Tile, L3Tiling
from .placement import Placement
from .space import REDUCING, LayerSchedule, hwc_chunks, iter_tiles

if TYPE_CHECKING:
    from ..bindings.base import Binding


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

    @property
    def interior(self) -> LayerSchedule:
        """The schedule of the most frequent geometry (the interior tile's): the one reported."""
        g = max(range(len(self.schedules)), key=lambda k: self.geometry.count(k))
        return self.schedules[g]


@dataclass(frozen=True)
class Dma:
    """L2↔L1 DMA of a layer: bytes, transfers and contiguous chunks on the L2 side."""

    bytes: int
    transfers: int
    chunks: int


def embedded_dma(s: LayerSchedule, x_channels: int, y_channels: int) -> Dma:
    """DMA of schedule `s` run on an L2 tile whose input / output rows are `x_channels` /
    `y_channels` channels wide (a k tile of a wider tensor: more chunks, same bytes)."""
    if s.untiled:   # none, or what a kernel streaming its own blocks declared (Binding.own_dma)
        return Dma(s.dma_bytes, s.dma_transfers, sum(t.chunks for t in s.traffic))
    n = s.nest
    if x_channels == (n.C if n.kind in REDUCING else n.K) and y_channels == n.K:
        return Dma(s.dma_bytes, s.dma_transfers, sum(t.chunks for t in s.traffic))
    b = tr = ch = 0
    for step in iter_tiles(s):
        for t in (*step.loads, *step.stores):
            b, tr = b + t.bytes, tr + 1
            ext = tuple(x[1] for x in t.box)
            if t.operand == "x" or (t.operand == "x2" and not n.residual):
                ch += hwc_chunks(ext, (n.N, n.IY, n.IX, x_channels))
            elif t.operand == "y" or t.operand == "x2":     # y, or a residual's skip tile
                ch += hwc_chunks(ext, (n.N, n.OY, n.OX, y_channels))
            else:
                ch += t.chunks
    return Dma(b, tr, ch)


def tile_schedules(layer: Layer, t: L3Tiling, p: Placement, target: Target, tiler: str
                   ) -> TiledLayer:
    """Schedules of the distinct L2 tile geometries of an L3-tiled layer, most frequent first;
    geometries with the same output channels share a constant blob, so they take the first one's
    L1 k and c tiles (module docstring). A geometry that cannot be scheduled is refused naming
    the layer."""
    tiles = t.tiles
    count: dict = {}
    for tile in tiles:
        count[tile.nest] = count.get(tile.nest, 0) + 1
    order = sorted(count, key=lambda n: -count[n])
    scheds: dict = {}
    shared: dict[int, dict[str, int]] = {}
    for nest in order:
        fixed = shared.get(nest.K)
        pl = p.fixing(**fixed) if fixed and layer.weights is not None else p
        try:
            s = schedule_placed(nest, target, pl, tiler)
        except TilewiseError as e:
            raise TilewiseError(f"layer '{layer.name}' ({layer.op}) cannot be scheduled on "
                                f"{target.name}: {e}") from None
        scheds[nest] = s
        if not s.untiled:
            shared.setdefault(nest.K, {d: s.tiling(d).tile for d in ("k", "c")
                                       if d in s.tile_sizes})
    geoms: dict = {}
    for tile in tiles:
        geoms.setdefault(tile.nest, len(geoms))
    return TiledLayer(tiles, tuple(scheds[n] for n in geoms),
                      tuple(geoms[tile.nest] for tile in tiles))


def tile_jobs(s: LayerSchedule, binding: Binding) -> int:
    """Accelerator jobs of the tiles of schedule `s`: jobs_per_tile each, or jobs_of_rows of each
    tile's output rows (the oy tiles, then the border one, times the tiles of the other dims)."""
    if binding.jobs_of_rows is None:
        return binding.jobs_per_tile * s.n_tiles
    oy = next((t for t in s.tiles if t.dim == "oy"), None)
    if oy is None:
        return int(binding.jobs_of_rows(1)) * s.n_tiles
    per = (oy.count - 1) * int(binding.jobs_of_rows(oy.tile)) + int(binding.jobs_of_rows(oy.border))
    return s.n_tiles // oy.count * per
