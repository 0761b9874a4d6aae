"""The schedule space of a layer and `LayerSchedule`, the contract between tiler, memory and codegen.

A layer is the loop nest of `ir.layer.LoopNest` (DESIGN.md "Scheduling"; seed 002 §5 Listing 2).
Its *tile loops* run over the dimensions

    n (batch), k (output channels), c (input channels; conv/fc only), oy, ox (output rows/columns)

(FY, FX are never tiled). A schedule for the L2→L1 boundary is:

- a tile size per loop dimension; the last tile along a dimension may be smaller (the *border*
  tile, `DimTiling.border`): border tiles are first-class — their sizes, DMA and compute are
  counted separately, nothing is padded;
- a loop order of the tile loops (outer→inner). An operand's tile depends on a subset of the loops
  (x: n,c,oy,ox; w: k,c; b: k; y: n,k,oy,ox; depthwise/pool/add have no c loop, their channels
  follow k). An operand is (re)loaded at a tile iff every loop inner to its innermost relevant loop
  is at index 0 — it stays resident across those inner loops. This is how seed 002's intra /
  inter-Kc / inter-Oc / inter-OxOyOn schedules are loop orders. When C is tiled (c loop trip > 1)
  on a module without `psum_spill`, the c loop is innermost: 32-bit partial sums stay in L1
  (buffer ``psum``) and each output tile is written once, after its last C tile;
- single or double buffering (`buffering` 1 | 2).

DMA byte accounting (`LayerSchedule.dma_bytes`, what codegen must move, exactly):
- input tile (x, and x2 for add): the part of the tile's receptive field that lies inside the input
  tensor — rows [oy0·SY − pad_top, (oy0+oy_t−1)·SY − pad_top + FY − 1] ∩ [0, IY) and likewise
  columns — times its channels (c tile; k tile for depthwise/pool/add) and batch tile, x_bits
  each. Padding is never transferred: the kernel synthesizes it from the tile's pads
  (`TileStep.pads`). Every size is operands.py's formula (bits per element, ⌈elements·bits/8⌉).
- weights w: k_t·FY·FX·c_t (depthwise k_t·FY·FX) weights of w_bits per weight tile, one contiguous chunk:
  codegen stores every weight tile as one block in L2. The layer's natural layout (Layer.weights:
  conv [K][FY][FX][C], depthwise [K][FY][FX], dense [K][C]) already does so unless C is tiled;
  `weights_tiled` flags that case: store one [k_t][FY][FX][c_t] block per (k tile, c tile), in tile
  order. (A depthwise kernel wanting channel-last weights gets one [FY][FX][k_t] block per k tile.)
- constants b: k_t · Module.const_bytes_per_channel per k tile, one chunk: codegen stores each k
  tile's per-channel constants (bias, multiplier, shift as int32: 12 B) as one block.
- output y: n_t·oy_t·ox_t·k_t elements of y_bits per store. Partial sums never move (unless the
  binding spills them: then psum_bits per element, both ways).
- each load/store is one transfer (one DMA setup); its contiguous chunks are counted from the HWC
  layout (`hwc_chunks`): a tile spanning full rows×channels of a batch item is one chunk, full
  channels but partial rows is one chunk per row, partial channels one chunk per pixel.
`dma_bytes` = Σ over all tiles of all loads and stores (L2→L1 plus L1→L2).

L1 accounting (`plan_buffers`): each operand buffer holds the largest tile of that operand (4-byte
aligned); double buffering keeps two copies of every operand that is transferred more than once;
plus ``psum`` (psum_bits per output element of a tile, when C is tiled) and ``scratch`` (the
binding's scratch formula, e.g. im2col per core). The schedule is valid when the sum fits `Memory.free` of the
module's level.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..ir.layer import LoopNest
from ..ir.operands import REDUCING, operand_bytes, operands

DIMS = ("n", "k", "c", "oy", "ox")
ALIGN = 4


def loop_dims(kind: str) -> tuple[str, ...]:
    """The tile loops of a layer kind (no c loop where channels follow k)."""
    return ("n", "k", "c", "oy", "ox") if kind in REDUCING else ("n", "k", "oy", "ox")


def dim_size(nest: LoopNest, dim: str) -> int:
    return {"n": nest.N, "k": nest.K, "c": nest.C, "oy": nest.OY, "ox": nest.OX}[dim]


# --- geometry along one dimension -----------------------------------------------------------------

@dataclass(frozen=True)
class DimTiling:
    """Tiling of one loop dimension: `count` tiles of `tile`, the last one `border` long."""

    dim: str
    size: int
    tile: int

    @property
    def count(self) -> int:
        return -(-self.size // self.tile)

    @property
    def border(self) -> int:
        return self.size - (self.count - 1) * self.tile


@dataclass(frozen=True)
class TilePos:
    """One tile position along a dimension: output range and the input range actually loaded."""

    index: int
    start: int
    size: int
    in_start: int
    in_size: int
    pad_lo: int = 0
    pad_hi: int = 0

    @property
    def first(self) -> bool:
        return self.index == 0


def halo(nest: LoopNest, dim: str) -> tuple[int, int, int, int] | None:
    """(stride, kernel, pad_lo, input extent) for oy/ox, None for dimensions without a halo."""
    if dim == "oy":
        return nest.SY, nest.FY, nest.pads[0], nest.IY
    if dim == "ox":
        return nest.SX, nest.FX, nest.pads[1], nest.IX
    return None


def positions(nest: LoopNest, dim: str, tile: int) -> tuple[TilePos, ...]:
    """All tile positions along `dim` for tile size `tile` (border last)."""
    size = dim_size(nest, dim)
    if not 1 <= tile <= size:
        raise ValueError(f"tile {tile} out of range 1..{size} for {dim}")
    h = halo(nest, dim)
    out = []
    for i, start in enumerate(range(0, size, tile)):
        t = min(tile, size - start)
        if h is None:
            out.append(TilePos(i, start, t, start, t))
            continue
        s, f, pad_lo, extent = h
        lo = start * s - pad_lo
        hi = (start + t - 1) * s - pad_lo + f - 1          # inclusive
        a, b = max(lo, 0), min(hi, extent - 1)
        out.append(TilePos(i, start, t, a, max(b - a + 1, 0), a - lo, max(hi - (extent - 1), 0)))
    return tuple(out)


def hwc_chunks(extents: tuple[int, ...], full: tuple[int, ...]) -> int:
    """Contiguous chunks of a box of `extents` in a row-major tensor of shape `full` (outer→inner).

    The run length grows inward until the first dimension (from the inside) the box does not span
    fully; every combination of the outer extents is one chunk.
    """
    if any(e == 0 for e in extents):
        return 0
    q = None
    for j in range(len(full) - 1, -1, -1):
        if extents[j] < full[j]:
            q = j
            break
    if q is None:
        return 1
    return math.prod(extents[:q])


# --- the schedule ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Buffer:
    """A buffer in the module's memory level: `copies` × `bytes` at `offset` (copy i at
    offset + i·bytes). Names: x, x2, w, b, y (operand tiles), psum (int32 partial sums), scratch
    (kernel scratch, e.g. im2col for every core)."""

    name: str
    bytes: int
    copies: int
    offset: int
    #: the operand memory holding it when not the module's level (Module.operand_memory: DIANA's
    #: weight memory); "" = the level. The host's arena holds every memory's buffers, the level's
    #: first, then each operand memory's (the chip has them apart)
    memory: str = ""

    @property
    def total(self) -> int:
        return self.bytes * self.copies


@dataclass(frozen=True)
class Traffic:
    """DMA traffic of one operand over the whole layer (L2→L1 for inputs, L1→L2 for y)."""

    operand: str
    transfers: int
    chunks: int
    bytes: int


@dataclass(frozen=True)
class LayerSchedule:
    """How one layer runs: what `tilewise analyze` reports and what codegen executes.

    Fields:
    - nest: the layer's loop nest; target / module: names; binding: the binding's label
      ("portable/conv2d_s8_tflite"); tiler: "model" | "dory" | ...
    - level: memory the kernel computes from ("L1"); outer: where tiles come from ("L2"); for
      untiled schedules (module computing from L2, kind "other") level="L2", outer=None, no DMA.
    - tiles: one `DimTiling` per loop dimension of the kind (`loop_dims`), in that order.
    - loop_order: the tile loops outer→inner (all loop dims of the kind).
    - buffering: 1 single / 2 double (copies per operand are in `buffers`).
    - buffers: the L1 arena layout; l1_bytes: its total (aligned), ≤ the level's free bytes.
    - traffic: per-operand transfers / chunks / bytes; dma_bytes = Σ bytes (both directions);
      dma_transfers = Σ transfers.
    - n_tiles: number of tile steps (kernel calls).
    - compute_cycles: Σ over tiles of kernel cycles + DMA issue cycles; dma_cycles: Σ over tiles
      of DMA engine cycles; cycles: the predicted layer latency (schedule/cost.py).
    - weights_tiled: weights stored tile-major in L2 (C tiled) — see module docstring.
    """

    nest: LoopNest
    target: str
    module: str
    level: str
    outer: str | None
    tiles: tuple[DimTiling, ...]
    loop_order: tuple[str, ...]
    buffering: int
    buffers: tuple[Buffer, ...]
    l1_bytes: int
    traffic: tuple[Traffic, ...]
    dma_bytes: int
    dma_transfers: int
    n_tiles: int
    compute_cycles: float
    dma_cycles: float
    cycles: float
    tiler: str = "model"
    weights_tiled: bool = False
    #: the binding's per-output-channel constant bytes and partial-sum element bits (the b
    #: operand's and partial sums' sizes; bindings/base.py)
    const_bytes: int = 12
    psum_bits: int = 32
    binding: str = ""
    #: the weights and per-channel constants are read where they are stored, not copied
    #: (ir/operands.py `consts_in_place`)
    consts_in_place: bool = False
    notes: tuple[str, ...] = field(default=())

    def tiling(self, dim: str) -> DimTiling:
        for t in self.tiles:
            if t.dim == dim:
                return t
        raise KeyError(dim)

    @property
    def tile_sizes(self) -> dict[str, int]:
        return {t.dim: t.tile for t in self.tiles}

    @property
    def psum(self) -> bool:
        """Input channels are tiled: partial sums accumulate across c tiles."""
        return self.nest.kind in REDUCING and self.tiling("c").count > 1

    @property
    def untiled(self) -> bool:
        return self.outer is None

    def buffer(self, name: str) -> Buffer | None:
        for b in self.buffers:
            if b.name == name:
                return b
        return None

    def memory_bytes(self) -> dict[str, int]:
        """Bytes of the buffers per memory: the level's and each operand memory's."""
        out: dict[str, int] = {}
        for b in self.buffers:
            key = b.memory or self.level
            out[key] = out.get(key, 0) + b.total
        return out


# --- reuse analysis (loop order → which operand is resident) --------------------------------------

def inner_loops(order: tuple[str, ...], dims: frozenset[str],
                counts: dict[str, int] | None = None) -> tuple[str, ...]:
    """Loops inner to the innermost loop relevant to an operand with `dims` — the loops the operand
    stays resident across. Loops with a single trip are ignored when `counts` is given (an operand
    whose only relevant loops have one trip is loaded once, at the first tile)."""
    idx = [i for i, d in enumerate(order)
           if d in dims and (counts is None or counts.get(d, 1) > 1)]
    if not idx:
        return order
    return order[idx[-1] + 1:]


def fetch_count(order: tuple[str, ...], counts: dict[str, int], dims: frozenset[str]) -> int:
    """How many times an operand's tile is (re)loaded over the layer."""
    inner = set(inner_loops(order, dims, counts))
    return math.prod(counts[d] for d in order if d not in inner)


def valid_order(order: tuple[str, ...], counts: dict[str, int], psum_spill: bool) -> bool:
    """C tiled without spilling partial sums needs the c loop innermost (among loops with trips)."""
    if psum_spill or "c" not in order or counts.get("c", 1) == 1:
        return True
    return all(counts.get(d, 1) == 1 for d in order[order.index("c") + 1:])


# --- buffers --------------------------------------------------------------------------------------

def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def operand_tile_bytes(nest: LoopNest, op: str, ext: dict[str, int], const_bytes: int,
                       psum_bits: int = 32) -> int:
    """Bytes of one tile of operand `op` with extents ext (n, k, c, oy, ox; rows, cols: the input
    rows and columns of x) — operands.py's formula."""
    return int(operand_bytes(nest, op, const_bytes=const_bytes, psum_bits=psum_bits,
                             **{d: ext[d] for d in ("n", "k", "c", "oy", "ox", "rows", "cols")
                                if d in ext}))


def plan_buffers(nest: LoopNest, tiles: tuple[DimTiling, ...], order: tuple[str, ...],
                 buffering: int, const_bytes: int, psum_bits: int, psum_spill: bool,
                 scratch: int, consts_in_place: bool = False,
                 operand_memory: tuple[tuple[str, str], ...] = ()) -> tuple[Buffer, ...]:
    """The L1 arena: operand buffers (largest tile, copies), psum, scratch; sequential offsets.
    Operands in `operand_memory` (operand, memory) go after the level's buffers, tagged with
    their memory."""
    t = {d.dim: d for d in tiles}
    counts = {d: t[d].count for d in t}
    rows = max(p.in_size for p in positions(nest, "oy", t["oy"].tile))
    cols = max(p.in_size for p in positions(nest, "ox", t["ox"].tile))
    ext = {"n": t["n"].tile, "k": t["k"].tile, "c": t["c"].tile if "c" in t else t["k"].tile,
           "oy": t["oy"].tile, "ox": t["ox"].tile, "rows": rows, "cols": cols}
    bufs: list[Buffer] = []
    offset = 0
    spilled = psum_spill and nest.kind in REDUCING and counts.get("c", 1) > 1
    for op in operands(nest, const_bytes, consts_in_place):
        size = operand_tile_bytes(nest, op.name, ext, const_bytes, psum_bits)
        if op.name == "y" and spilled:
            size = max(size, operand_tile_bytes(nest, "psum", ext, const_bytes, psum_bits))
        size = _align(size)
        moves = fetch_count(order, counts, op.dims)
        copies = 2 if buffering == 2 and moves > 1 else 1
        bufs.append(Buffer(op.name, size, copies, offset))
        offset += size * copies
    if nest.kind in REDUCING and counts.get("c", 1) > 1 and not psum_spill:
        size = _align(operand_tile_bytes(nest, "psum", ext, const_bytes, psum_bits))
        bufs.append(Buffer("psum", size, 1, offset))
        offset += size
    if scratch > 0:
        bufs.append(Buffer("scratch", _align(scratch), 1, offset))
    side = dict(operand_memory)
    if not side:
        return tuple(bufs)
    out, offset = [], 0
    for b in [b for b in bufs if b.name not in side] + [b for b in bufs if b.name in side]:
        out.append(Buffer(b.name, b.bytes, b.copies, offset, side.get(b.name, "")))
        offset += b.total
    return tuple(out)


# --- explicit execution plan (what codegen emits, and the reference for the cost model) ---------

@dataclass(frozen=True)
class Transfer:
    """One DMA transfer of an operand tile: its box in the L2 tensor and its cost drivers.

    box: (start, size) per tensor dimension — x/x2: (n, row, col, ch) in the input tensor (rows and
    columns clipped to the tensor); y: (n, oy, ox, k); w: (k, c) tile indices' ranges; b: (k,).
    """

    operand: str
    box: tuple[tuple[int, int], ...]
    bytes: int
    chunks: int
    partial: bool = False   # spilled partial sums (psum_spill modules only)


@dataclass(frozen=True)
class TileStep:
    """One step of the tile loop: the kernel call and the transfers it needs."""

    index: dict[str, int]
    pos: dict[str, TilePos]
    pads: tuple[int, int, int, int]      # top, left, bottom, right to synthesize for this tile
    loads: tuple[Transfer, ...]
    stores: tuple[Transfer, ...]
    first_c: bool = True                 # first input-channel tile: start from the bias
    last_c: bool = True                  # last input-channel tile: requantize and store


def iter_tiles(s: LayerSchedule, const_bytes: int | None = None,
               psum_bits: int | None = None) -> Iterator[TileStep]:
    """Every tile step of a schedule in execution order, with its loads and stores.

    The cost model (schedule/cost.py) counts exactly these transfers; tests hold the two equal.
    const_bytes / psum_bits default to the schedule's (its binding's).
    """
    nest = s.nest
    const_bytes = s.const_bytes if const_bytes is None else const_bytes
    psum_bits = s.psum_bits if psum_bits is None else psum_bits
    t = {d.dim: d for d in s.tiles}
    pos = {d: positions(nest, d, t[d].tile) for d in t}
    ops = operands(nest, const_bytes, s.consts_in_place)
    counts = {d: t[d].count for d in t}
    inner = {op.name: set(inner_loops(s.loop_order, op.dims, counts)) for op in ops}
    C = nest.C
    ranges = [range(t[d].count) for d in s.loop_order]
    for idx in itertools.product(*ranges):
        index = dict(zip(s.loop_order, idx))
        p = {d: pos[d][index[d]] for d in t}
        ext = {"n": p["n"].size, "k": p["k"].size, "c": p["c"].size if "c" in p else p["k"].size,
               "oy": p["oy"].size, "ox": p["ox"].size, "rows": p["oy"].in_size,
               "cols": p["ox"].in_size}
        ch = p["c"] if nest.kind in REDUCING else p["k"]
        nch = nest.C if nest.kind in REDUCING else nest.K
        loads, stores = [], []
        for op in ops:
            fetch = all(index[d] == 0 for d in inner[op.name])
            flush = all(index[d] == t[d].count - 1 for d in inner[op.name])
            if op.name == "x2" and nest.residual:   # the skip tensor at the output's box
                box = ((p["n"].start, p["n"].size), (p["oy"].start, p["oy"].size),
                       (p["ox"].start, p["ox"].size), (p["k"].start, p["k"].size))
                if fetch:
                    loads.append(Transfer("x2", box, operand_tile_bytes(nest, "x2", ext,
                                                                        const_bytes),
                                          hwc_chunks(tuple(b[1] for b in box),
                                                     (nest.N, nest.OY, nest.OX, nest.K))))
            elif op.name in ("x", "x2"):
                box = ((p["n"].start, p["n"].size), (p["oy"].in_start, p["oy"].in_size),
                       (p["ox"].in_start, p["ox"].in_size), (ch.start, ch.size))
                full = (nest.N, nest.IY, nest.IX, nch)
                nbytes = operand_tile_bytes(nest, op.name, ext, const_bytes)
                if fetch and nbytes > 0:   # a tile entirely in the padding moves nothing
                    loads.append(Transfer(op.name, box, nbytes,
                                          hwc_chunks(tuple(b[1] for b in box), full)))
            elif op.name in ("w", "b"):
                if fetch:
                    box = ((p["k"].start, p["k"].size),)
                    if op.name == "w" and nest.kind in REDUCING:
                        box += ((p["c"].start, p["c"].size),)
                    loads.append(Transfer(op.name, box, operand_tile_bytes(nest, op.name, ext,
                                          const_bytes), 1))
            else:  # y
                box = ((p["n"].start, p["n"].size), (p["oy"].start, p["oy"].size),
                       (p["ox"].start, p["ox"].size), (p["k"].start, p["k"].size))
                full = (nest.N, nest.OY, nest.OX, nest.K)
                chunks = hwc_chunks(tuple(b[1] for b in box), full)
                first_c = "c" not in p or p["c"].first
                last_c = "c" not in p or p["c"].start + p["c"].size == C
                if fetch and not first_c:   # spilled partial sums come back
                    loads.append(Transfer("y", box, operand_tile_bytes(nest, "psum", ext,
                                          const_bytes, psum_bits), chunks, partial=True))
                if flush:
                    if last_c:
                        stores.append(Transfer("y", box, operand_tile_bytes(nest, "y", ext,
                                               const_bytes), chunks))
                    else:
                        stores.append(Transfer("y", box, operand_tile_bytes(nest, "psum", ext,
                                               const_bytes, psum_bits), chunks, partial=True))
        pads = (p["oy"].pad_lo, p["ox"].pad_lo, p["oy"].pad_hi, p["ox"].pad_hi)
        first_c = "c" not in p or p["c"].first
        last_c = "c" not in p or p["c"].start + p["c"].size == C
        yield TileStep(index, p, pads, tuple(loads), tuple(stores), first_c, last_c)
