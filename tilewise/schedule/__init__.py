"""Scheduling: the loop-nest schedule space of a layer, cost evaluation and search strategies.

- space.py: `LayerSchedule` (the contract with memory planning and codegen), tile geometry, reuse
  analysis, L1 buffer layout, `iter_tiles` (the explicit per-tile execution plan);
- cost.py: the generic cost model (async/blocking DMA, HWC chunks, border tiles) and
  `build_schedule`;
- model.py: the default `model` tiler (exact branch-and-bound over tile sizes × loop orders ×
  buffering); dory.py: the seed-001 CP-SAT tiler; idsp.py: the seed-002 analytical model;
- api.py: `schedule_layer`, the entry point.
"""

from .api import TILERS, get_tiler, schedule_layer
from .space import Buffer, DimTiling, LayerSchedule, TileStep, Traffic, Transfer, iter_tiles

__all__ = ["TILERS", "get_tiler", "schedule_layer", "Buffer", "DimTiling", "LayerSchedule",
           "TileStep", "Traffic", "Transfer", "iter_tiles"]
