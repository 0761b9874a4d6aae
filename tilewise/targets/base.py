"""Targets are data: memory levels, execution modules and their kernel cost models.

A `Target` is a frozen value (DESIGN.md "Targets are data"): adding a chip is one file of parameters
(`targets/<chip>.py`) and, where its kernels differ, one small kernel model (`targets/kernels/`).
Nothing here is a subclass per chip.

- `Memory`: one level of the hierarchy, innermost first (L1, L2, L3). The DMA fields describe the
  engine that moves data between this level and the next outer one:
  ``dma = dma_setup_cycles + chunks * dma_chunk_cycles + bytes / bandwidth`` per transfer (seed 003
  §V: a fixed overhead per contiguous chunk; seed 002 eq. 5.9: a fixed penalty per transfer), plus
  ``dma_issue_cycles`` of core time per transfer to program it (seed 002's CC_dma_init is core time).
- `Module`: an execution unit (8-core cluster, a single core, an accelerator) with the layer kinds
  it runs, the memory level it computes from, and its kernel model (`KernelModel`), which gives
  per-tile compute cycles as a sum of separable terms and the kernel's scratch bytes.
- `Energy` figures are optional (0 = unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..ir.layer import LoopNest
    from .compute import Term

KB = 1024
MB = 1024 * 1024


@dataclass(frozen=True)
class Memory:
    """One memory level. `size` is physical; `free` = size - reserved is what tiles may use."""

    name: str
    size: int
    #: bytes taken by stacks and the runtime (DESIGN.md: --l1/--l2 set size - reserved)
    reserved: int = 0
    #: DMA bandwidth between this level and the next outer one, bytes per core cycle
    bandwidth: float = 8.0
    #: DMA-side fixed cycles per transfer (latency of one command)
    dma_setup_cycles: float = 0.0
    #: DMA-side cycles per contiguous chunk of a transfer (seed 003: 27 on GAP9, 70 on DIANA)
    dma_chunk_cycles: float = 0.0
    #: core-side cycles to program one transfer (charged to the compute side of the tile)
    dma_issue_cycles: float = 0.0
    #: True: the DMA runs concurrently with compute (double buffering hides it); False: blocking
    dma_async: bool = True
    #: off-chip levels on their own clock: bandwidth in MB/s, converted with the target clock
    bandwidth_mb_s: float | None = None
    read_only: bool = False
    #: energy per byte moved into this level from the next outer one (pJ/B), 0 = unknown
    pj_per_byte: float = 0.0
    note: str = ""

    @property
    def free(self) -> int:
        return self.size - self.reserved

    def bytes_per_cycle(self, clock_mhz: float) -> float:
        if self.bandwidth_mb_s is not None:
            return self.bandwidth_mb_s / clock_mhz
        return self.bandwidth


class KernelModel(Protocol):
    """A kernel library's cost model (PULP-NN, CMSIS-NN, a SIMD DSP ...): frozen data + formulas.

    `terms(nest, cores)` returns the compute cycles of one tile as Σ coef·Π_dim f_dim(size, first,
    last) (see `targets.compute`): separable, so sums over tile grids factor per dimension, which
    makes the `model` tiler's bounds cheap and exact. Every factor must be superadditive in its
    dimension (splitting a tile never lowers the summed compute) — the tests check it.
    `scratch(nest, cores, k, c, oy, ox)` gives the kernel's L1 scratch bytes for a tile (numpy
    arrays broadcast); monotone non-decreasing in every size.
    """

    name: str

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]: ...

    def scratch(self, nest: LoopNest, cores: int, k: np.ndarray, c: np.ndarray, oy: np.ndarray,
                ox: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Module:
    """An execution module of a target (MATCH's "hardware execution module", seed 003 §IV)."""

    name: str
    cores: int
    #: layer kinds (LoopNest.kind) the module runs
    kinds: frozenset[str]
    kernel: KernelModel
    #: memory level the kernel reads and writes; "L2" = computes in place from L2, never tiled
    memory: str = "L1"
    #: per-output-channel constants moved with each weight tile: bias int32, multiplier int32,
    #: shift int32 (12 B); DORY counts k and lambda, 8 B (notes/dory-tiler.md)
    const_bytes_per_channel: int = 12
    #: bytes of one partial sum when the input channels are tiled (32-bit accumulators)
    psum_bytes: int = 4
    #: may partial sums leave L1 between input-channel tiles (IDSP schedules); False on MCUs:
    #: the input-channel loop is then innermost and partial sums stay in L1
    psum_spill: bool = False
    #: --cores applies to this module
    scalable: bool = False
    #: average energy per active cycle (pJ), 0 = unknown
    pj_per_cycle: float = 0.0
    #: fixed cycles once per layer, outside the per-tile sum (cold instruction cache of the layer's
    #: kernel, runtime set-up): added to every schedule of the layer alike, so it never changes
    #: which schedule is best and keeps the tile terms superadditive
    layer_overhead_cycles: float = 0.0
    #: bytes per cycle of the depthwise-input DMA when the runtime reorders it HWC -> CHW on the
    #: way in (one byte per bus beat); 0 = the memory level's bandwidth like every other operand
    dw_input_bytes_per_cycle: float = 0.0
    note: str = ""

    def runs(self, kind: str) -> bool:
        return kind in self.kinds


@dataclass(frozen=True)
class Target:
    """A chip: clock, memory levels (innermost first), execution modules, citations."""

    name: str
    description: str
    clock_mhz: float
    memories: tuple[Memory, ...]
    modules: tuple[Module, ...]
    sources: tuple[str, ...] = field(default=())

    def memory(self, name: str) -> Memory:
        for m in self.memories:
            if m.name == name:
                return m
        raise KeyError(f"target {self.name} has no memory level {name}")

    def outer(self, name: str) -> Memory | None:
        """The level a tile of level `name` is moved from (the next outer level), or None."""
        names = [m.name for m in self.memories]
        i = names.index(name)
        return self.memories[i + 1] if i + 1 < len(self.memories) else None

    def module(self, name: str) -> Module:
        for m in self.modules:
            if m.name == name:
                return m
        raise KeyError(f"target {self.name} has no module {name}")

    def modules_for(self, kind: str) -> tuple[Module, ...]:
        return tuple(m for m in self.modules if m.runs(kind))

    def with_overrides(self, *, l1_kb: float | None = None, l2_kb: float | None = None,
                       cores: int | None = None, clock_mhz: float | None = None) -> Target:
        """Copy with the CLI overrides applied.

        l1_kb / l2_kb set the *free* bytes of L1 / L2 (DESIGN.md: the space left after stacks and
        runtime reservations); the physical size becomes reserved + that. `cores` changes every
        scalable module; `clock_mhz` the clock (off-chip bandwidths given in MB/s follow it).
        """
        mems = list(self.memories)
        for name, kb in (("L1", l1_kb), ("L2", l2_kb)):
            if kb is None:
                continue
            if kb <= 0:
                raise ValueError(f"{name} size must be positive, got {kb} kB")
            i = [m.name for m in mems].index(name)
            mems[i] = replace(mems[i], size=mems[i].reserved + int(round(kb * KB)))
        mods = self.modules
        if cores is not None:
            if cores < 1:
                raise ValueError(f"cores must be >= 1, got {cores}")
            mods = tuple(replace(m, cores=cores) if m.scalable else m for m in mods)
        clock = self.clock_mhz if clock_mhz is None else float(clock_mhz)
        if clock <= 0:
            raise ValueError(f"clock must be positive, got {clock} MHz")
        return replace(self, memories=tuple(mems), modules=mods, clock_mhz=clock)
