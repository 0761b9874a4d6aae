"""Bindings: what an execution module can run, and how — one frozen value per kernel and key.

DESIGN.md "Pipeline": a `Binding` is the unit of "what a module can run and how". Its key is
(op, semantics mode, operand precisions in bits, loop-nest geometry); the module it belongs to is
the module whose `bindings` tuple holds it. It carries, in one place, everything the later stages
would otherwise re-derive:

- `check(layer, lg)`: legality — None, or the one-sentence reason this kernel cannot run the layer
  (every refusal `generate` could make is a reason known at partition time);
- `cost`: the kernel cost model whose separable terms the schedule model sums (the family's
  bindings/<family>/cost.py, in the terms of bindings/cost_terms.py);
- `scratch(nest, cores, k, c, oy, ox)`: the kernel's L1 scratch bytes for a tile — the one formula
  that planning reserves and emission hands to the kernel;
- `rules(layer)`: tile constraints (dimensions never tiled, tile multiples, whether the layer may be
  cut at L3→L2, whether it runs untiled on the L2 tensors);
- `consts`: the constants layout (per-channel bytes, weight bits and layout, the blob builder);
- `emit(layer, lg, consts)`: the C the layer file calls (the kernel's `compute()` helper or, for
  untiled ops, the whole layer function), written from the family's templates;
- `family`: the kernel family (a folder of bindings and its C sources, copied into projects).

Bindings of one family are built by the family's folder (`bindings/<family>/`) for a module's cost
model; a target file lists its modules with their bindings. Tools that learn from public code call
the same thing a "pattern table with a check function" (TVM's CMSIS-NN backend) or a "binding"
(Deeploy): one candidate implementation, its type check and its template.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..ir.layer import Layer, LayerGraph, LoopNest
    from .cost_terms import KernelModel

#: the loop dimensions a tile rule may name (schedule/space.py)
TILE_DIMS = ("n", "k", "c", "oy", "ox")


@dataclass(frozen=True)
class Precision:
    """Operand precisions in bits: input activations, weights (0 = none), output, accumulator.

    Bits, not bytes (ZigZag's per-operand precision): the representation is ready for packed
    4- and 2-bit tensors; today's kernels take 8 and 16.
    """

    x: int
    w: int
    y: int
    acc: int = 32

    def __str__(self) -> str:
        w = f"x{self.w}" if self.w else ""
        return f"{self.x}{w}->{self.y}"


@dataclass(frozen=True)
class BindingKey:
    """What a binding runs: an op of the IR vocabulary, its semantics mode (None for ops without
    one), operand precisions and the loop-nest geometry (LoopNest.kind) it tiles."""

    op: str
    mode: str | None
    precision: Precision
    nest_kind: str

    def __str__(self) -> str:
        mode = f" {self.mode}" if self.mode else ""
        return f"{self.op}{mode} {self.precision}"


@dataclass(frozen=True)
class TileRules:
    """Tile constraints of a kernel for one layer.

    - whole: loop dimensions never tiled at L2→L1 (the tile is the full extent);
    - fixed: dimensions whose L1 tile size is imposed (e.g. every L2 tile of an L3-tiled layer
      that shares a constant blob must lay it out alike);
    - multiple: tile sizes must be a multiple of this (the border tile takes the rest);
    - l3: the layer may be cut at L3→L2 (into output-channel and row tiles);
    - l3_k_step: output-channel tiles at L3→L2 are multiples of this when K allows (keeps the
      kernel's channel blocks whole);
    - untiled: the kernel runs once on the whole L2 tensors (no L1 tiles, no DMA);
    - why: what a layer-specific rule is for (said when a layer cannot fit because of it).
    """

    whole: frozenset[str] = frozenset()
    fixed: tuple[tuple[str, int], ...] = ()
    multiple: tuple[tuple[str, int], ...] = ()
    l3: bool = True
    l3_k_step: int = 1
    untiled: bool = False
    why: str = ""

    def allowed(self, dim: str, size: int) -> np.ndarray:
        """The tile sizes 1..size this rule allows along `dim` (ascending)."""
        fixed = dict(self.fixed)
        if dim in self.whole:
            return np.array([size])
        if dim in fixed:
            return np.array([min(fixed[dim], size)])
        m = dict(self.multiple).get(dim, 1)
        vals = np.arange(1, size + 1)
        if m > 1:
            vals = vals[(vals % m == 0) | (vals == size)]
        return vals

    def with_fixed(self, **dims: int) -> TileRules:
        return replace(self, fixed=tuple(sorted((dict(self.fixed) | dims).items())))

    def with_whole(self, *dims: str, why: str = "") -> TileRules:
        return replace(self, whole=self.whole | frozenset(dims), why=why or self.why)

    def describe(self) -> str:
        """The constraints in words (for errors), '' when there are none."""
        parts = []
        if self.whole:
            parts.append(f"keeps {', '.join(sorted(self.whole))} whole")
        if self.fixed:
            parts.append("imposes tiles " + ", ".join(f"{d}={v}" for d, v in self.fixed))
        if self.multiple:
            parts.append("takes tiles in multiples " + ", ".join(f"{d}×{v}" for d, v in self.multiple))
        text = "; ".join(parts)
        return f"{text} ({self.why})" if text and self.why else text


class ScratchFn(Protocol):
    """L1 scratch bytes of one tile (numpy arrays broadcast; monotone in every size)."""

    def __call__(self, nest: LoopNest, cores: int, k: Any, c: Any, oy: Any, ox: Any) -> Any: ...


def no_scratch(nest: LoopNest, cores: int, k: Any, c: Any, oy: Any, ox: Any) -> Any:
    return 0 * np.asarray(k) * np.asarray(oy)


@dataclass(frozen=True)
class LayerConstants:
    """One layer's constant blob (as the schedule moves it) and where its parts start."""

    blob: bytes
    b_offset: int          # per-channel blocks
    w_offset: int          # weight blocks
    const_bytes: int       # bytes per output channel of the b blocks
    #: extra per-channel data the layer's C file holds as arrays (e.g. shift mode's right shifts)
    extra: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def size(self) -> int:
        return len(self.blob)


@dataclass(frozen=True)
class ConstLayout:
    """How a kernel wants its constants (DESIGN.md "Binding": per-channel words, packing, layout).

    bytes_per_channel: the per-output-channel block moved with each k tile (the `b` operand);
    weight_layout: a name the C template and the builder agree on (e.g. "k.fy.fx.c" tile-major,
    "fy.fx.k" channel-last per k tile); `build(layer, lg, schedule)` returns the blob;
    `check(layer, lg)` returns a reason when the layer's constants cannot be laid out (e.g. a
    value beyond int32).
    """

    bytes_per_channel: int
    weight_layout: str
    build: Callable[[Layer, LayerGraph, Any], LayerConstants]
    check: Callable[[Layer, LayerGraph], str | None] = field(default=lambda layer, lg: None)
    #: input channels (depthwise: channels) of the stored weights padded to a multiple of this
    #: (LoopNest.w_c_block)
    c_block: int = 1
    #: bits of one stored weight when the layout packs them (DIANA's analog core: 2-bit ternary
    #: codes; LoopNest.w_bits of the placement); 0 = the layer's own
    w_bits: int = 0
    #: output channels of every k tile's stored weights padded to a multiple of this, and stored
    #: rows per depthwise channel (LoopNest.w_k_block, w_rows)
    k_block: int = 1
    rows: int = 1


@dataclass(frozen=True)
class Family:
    """A kernel family: its name, the folder of C sources copied into every project that uses it
    (as `project_dir/`), the header a layer file includes, and the families whose C it builds on
    (copied with it: e.g. a SIMD family reusing the portable family's argument structs)."""

    name: str
    c_dir: Path
    project_dir: str
    header: str
    requires: tuple[Family, ...] = ()
    #: shipped headers of the HAL folder (codegen/c/tw_hal) the family's C includes, copied into
    #: the project's tw_hal/ with it (the accelerator families: tw_job_geometry.h)
    hal_headers: tuple[str, ...] = ()
    #: an accelerator family's job counter as (header, function returning the jobs dispatched
    #: so far): the host harness sums them (codegen/host.py); None = no jobs
    jobs: tuple[str, str] | None = None
    #: the family's whole layer functions (Binding.whole_function) run on the core that calls
    #: them, with no fork of the module's cores (the portable family's: one core on the L2
    #: tensors, bindings/portable/untiled.py); False where they fork the cores themselves (the
    #: pulp family's row ops, transpose, LSTM and activation MatMul)
    direct_functions: bool = False

    def closure(self) -> tuple[Family, ...]:
        """The families this one needs, dependencies first, then itself."""
        out: dict[str, Family] = {}
        for f in self.requires:
            for g in f.closure():
                out.setdefault(g.name, g)
        out.setdefault(self.name, self)
        return tuple(out.values())


@dataclass(frozen=True, eq=False)
class Binding:
    """One kernel of a family for one key, on the module whose bindings hold it (module doc)."""

    family: Family
    #: the kernel's name in reports (e.g. "conv2d_s8")
    name: str
    key: BindingKey
    cost: KernelModel
    check: Callable[[Layer, LayerGraph], str | None]
    emit: Callable[[Layer, LayerGraph, LayerConstants | None], str]
    scratch: ScratchFn = no_scratch
    consts: ConstLayout | None = None
    #: static tile rules; `layer_rules` may tighten them per layer
    tiles: TileRules = TileRules()
    layer_rules: Callable[[Layer, TileRules], TileRules] | None = None
    #: the emitted C is the whole layer function (`void @FN@(tw_layer_args_t *a)`, untiled ops on
    #: the L2 tensors) rather than a `compute()` helper the tiled loop nest calls
    whole_function: bool = False
    #: partial sums when input channels are tiled: bits of one element, and whether they may leave
    #: L1 between input-channel tiles (IDSP-style schedules; no kernel of tilewise spills today)
    psum_bits: int = 32
    psum_spill: bool = False
    #: input DMA rate (bytes per cycle) when the kernel's layout makes the DMA reorder the input
    #: on the way in (gap9's HWC→CHW depthwise); 0 = the memory level's bandwidth
    x_dma_bytes_per_cycle: float = 0.0
    #: accelerator jobs the kernel dispatches per tile (NE16 with norm-quant: one); the host HAL
    #: counts them and validate holds the count against the schedule's (NetworkSchedule.layer_jobs)
    jobs_per_tile: int = 0
    #: or, when a tile's jobs depend on its output rows (NE16's row jobs, bindings/ne16/
    #: pipeline.py): the jobs of a tile of that many output rows (overrides jobs_per_tile)
    jobs_of_rows: Callable[[int], int] | None = None
    #: the representation the kernel reads its activation inputs in: stored = value + offset
    #: (0: the tensor's own; 128: u8 = int8 + 128, as NE16 reads it). A kernel that converts its
    #: input itself reads offset 0 and prices the conversion in its cost model
    input_offset: int = 0
    #: the representations the kernel can write its output in (its requantization's zero point
    #: and clamp range + offset: the same bytes); partition chooses one per tensor so that every
    #: consumer reads it as stored (partition/handoff.py)
    output_offsets: tuple[int, ...] = (0,)
    #: a binding of the same module this one differs from in representation only (same tiles,
    #: scratch, constants): it takes that binding's L1 tiles for a layer both run, priced by its
    #: own cost model (NE16's u8-input twins), instead of a search of its own
    tiles_of: str | None = None
    #: the DMA a whole-layer kernel moves itself between L2 and L1 (untiled for the scheduler, it
    #: streams its own blocks: the pulp family's row ops, bindings/pulp/rows.py): per operand
    #: ("x" in, "y" out) its (transfers, chunks, bytes) over the layer, from the loop nest; the
    #: schedule's traffic, which validate holds the HAL's counters against. None: no DMA
    own_dma: Callable[[LoopNest], tuple[tuple[str, int, int, int], ...]] | None = None
    note: str = ""

    @property
    def direct_call(self) -> bool:
        """The layer is the binding's own function called by the network's core with no fork of
        the module's cores (a whole function of a family with direct_functions): its fixed cost
        is the module's call_overhead_cycles, not the forking layers' layer_overhead_cycles."""
        return self.whole_function and self.family.direct_functions

    @property
    def label(self) -> str:
        return f"{self.family.name}/{self.name}"

    def rules(self, layer: Layer) -> TileRules:
        return self.tiles if self.layer_rules is None else self.layer_rules(layer, self.tiles)

    @property
    def const_bytes(self) -> int:
        """Per-output-channel constant bytes (the `b` operand); 0 without constants."""
        return 0 if self.consts is None else self.consts.bytes_per_channel

    def nest_for(self, nest: LoopNest) -> LoopNest:
        """A layer's loop nest as this kernel stores its weights (ConstLayout.c_block, k_block,
        rows, w_bits)."""
        c = self.consts
        if c is None:
            return nest
        if c.w_bits:
            nest = replace(nest, w_bits=c.w_bits)
        if (c.c_block, c.k_block, c.rows) != (1, 1, 1):
            nest = replace(nest, w_c_block=c.c_block, w_k_block=c.k_block, w_rows=c.rows)
        return nest


def per_mode(family: Family, cost: KernelModel, name: str, op: str, modes: tuple[str | None, ...],
             precision: Precision, kind: str, check: Callable[[Layer, LayerGraph], str | None], *,
             emit: Callable[[Layer, LayerGraph, LayerConstants | None], str]
             | dict[str | None, Callable[[Layer, LayerGraph, LayerConstants | None], str]],
             whole: bool = False, **kw: Any) -> list[Binding]:
    """One binding of `family` per mode of `modes` (named with the mode when there are several;
    `emit` per mode where the modes' kernels differ): a family's table row."""
    out = []
    for mode in modes:
        suffix = f"_{mode}" if len(modes) > 1 else ""
        key = BindingKey(str(op), mode, precision, kind)
        out.append(Binding(family=family, name=name + suffix, key=key, cost=specialized(cost, key),
                           check=check, emit=emit[mode] if isinstance(emit, dict) else emit,
                           whole_function=whole, **kw))
    return out


def specialized(cost: KernelModel, key: BindingKey) -> KernelModel:
    """The cost model of one binding: a model whose kernels cost differently per key (the mode's
    requantization, the elementwise op) gives its copy for the key (`for_key`)."""
    for_key = getattr(cost, "for_key", None)
    return cost if for_key is None else for_key(key)
