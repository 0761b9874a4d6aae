"""Cross-layer weight prefetch: the next layer's first-tile constants loaded during this layer.

DORY double-buffers a layer's tiles (seed 001 §III-C: the next tile's DMA is issued before the
current tile computes); this carries it across a layer boundary. A layer tiled L2 -> L1 loads its
first tile's operands in a prologue nobody hides (schedule/cost.py: one tile costs L + C + S).
When layer j = i + 1 has its weights in L2 and its first-tile weight and per-channel constant
buffers (w and b, copy 0) fit in L1 beside every L1 buffer of layer i, layer i issues those two
loads right before its last tile computes (after that tile's own loads are waited on), and layer
j waits on them instead of issuing them: layer j starts with its weights resident.

Where it applies (`plan_prefetch`): consecutive layers both tiled L2 -> L1 by the pulp kernel
family (the cluster of pulp-open, pulp-open-ne16, gap8, gap9) on a level with asynchronous DMA,
neither tiled at L3, layer j double-buffered with constants copied from L2 (not in L3, not read
in place), and an L1 placement of layer j's arena (`LayerPrefetch.base`: the offset of its whole
L1 layout in the arena) where its w and b copies 0 do not overlap layer i's L1 layout at its own
base and the layout still fits the level's free bytes. Bases tried, lowest first: 0, right below
layer i's layout, right above it; the first that fits is taken. Nothing else in the arena moves.

One transfer for w and b (`packs`): a layer that loads its weights and per-channel constants once
(one k tile, one c tile: the first tile's w and b are the layer's whole blob) and whose L1 layout
puts b right after w (operands.py order, no alignment gap) moves them in one transfer: codegen
lays its L2 blob weights first (codegen/project.py `weights_first`), so the two blocks follow each
other on both sides. Its prologue, or the prefetch serving it, programs one transfer instead of
two: dma_setup + dma_chunk less on the DMA side (exposed in a prologue, seed 003 §V-B), one
dma_issue_cycles less on the core (gap9: 967 cycles a layer, MATCH's per-transfer 920 + 27 + 20;
pulp-open: 719, measured below).

Where it pays: only where PF (below) exceeds the core cycles to program the two transfers. Below
that, layer j's prologue already covers their DMA while core 0 programs its later loads, and the
prefetch only moves work into layer i (measured on GVSoC pulp-open, 644 cycles per transfer: kws's
prefetches of 219–520 DMA cycles saved nothing in the layers they served and cost their issuers
~700 each; ad's of 1,456 saved 1,200–2,100 net).

Price (the DMA engine runs the transfers in issue order; seed 003 §V-B's L = max(L_ops, L_mem)
overlap of one transfer with compute):
- PF = Σ over the two transfers of dma_setup + dma_chunk + bytes / bandwidth (one chunk each,
  schedule/space.py: a weight tile and a constants tile are one block in L2), the same figure
  layer j's prologue charged them;
- the window they hide under is layer i's last tile's kernel: its compute per tile (compute
  cycles less the layer's fixed overhead and its transfers' issue cycles, averaged over its
  tiles), less, when it has several tiles and double buffering, the DMA of one output store (the
  previous tile's store, queued ahead of the prefetch);
- layer i: + max(0, PF − window) (the part its last tile's store then waits for) + the core
  cycles to program the two transfers, now core 0's in layer i: one dma_issue_cycles for the
  pair. A transfer's dma_issue_cycles is fitted over whole layers (pulp-open's 644: 2-D/3-D
  splits, waits and all); the prefetch's two are plain 1-D block copies, the HAL's fast path,
  and measured so on GVSoC: issuers +672 / +698 cycles (ad_autoencoder layers 1 and 5), +672
  (kws's pool), the layers they serve −PF − 656 … 914;
- layer j: − PF (its prologue no longer loads w and b) − the same issue cycles.
Per network: min(PF, window) cycles fewer per prefetched pair. Layer j's own fixed overhead
(fork, cold instruction cache) would hide more of a long prefetch; it is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.operands import operand_bytes
from ..targets.base import Target
from .space import LayerSchedule

#: the kernel family whose tiled layer C (codegen/templates/layer_body.j2) issues and waits on it
FAMILY = "pulp"
ALIGN = 4


@dataclass(frozen=True)
class LayerPrefetch:
    """Layer `layer`'s first-tile w and b loads, issued by layer `layer - 1`."""

    layer: int
    #: bytes of the two transfers (w, b) and their DMA-engine cycles (PF)
    w_bytes: int
    b_bytes: int
    dma_cycles: float
    #: the issuer's last-tile kernel cycles the transfers overlap
    window: float
    #: core cycles to program the two transfers (moved from layer j to the issuer: one fitted
    #: transfer's, module docstring)
    issue_cycles: float
    #: the DMA cycles of what the prefetch issues: dma_cycles, or one transfer less when layer j
    #: moves w and b in one (`packs`)
    moved_cycles: float = -1.0

    def __post_init__(self) -> None:
        if self.moved_cycles < 0:
            object.__setattr__(self, "moved_cycles", self.dma_cycles)

    @property
    def exposed(self) -> float:
        """Cycles of PF the issuer's window does not hide (its last store waits for them)."""
        return max(0.0, self.moved_cycles - self.window)

    @property
    def saved(self) -> float:
        """Network cycles the prefetch saves (packing's own saving apart)."""
        return self.moved_cycles - self.exposed


@dataclass(frozen=True)
class NetworkPrefetch:
    """The network's prefetches and each layer's L1 arena offset."""

    prefetches: tuple[LayerPrefetch, ...]
    #: per layer: offset of its L1 layout in the arena (0 unless moved for a prefetch)
    bases: tuple[int, ...]
    #: layers whose w and b move in one transfer (`packs`), and what that saves each: the DMA of
    #: one transfer's set-up and chunk (`packed_dma`) and one transfer's programming (`packed_issue`)
    packed: frozenset[int] = frozenset()
    packed_dma: float = 0.0
    packed_issue: float = 0.0

    def of(self, layer: int) -> LayerPrefetch | None:
        """The prefetch of layer `layer`'s constants (issued by layer - 1), if any."""
        return next((p for p in self.prefetches if p.layer == layer), None)

    def issued_by(self, layer: int) -> LayerPrefetch | None:
        return self.of(layer + 1)

    def delta(self, layer: int) -> float:
        """Cycles the prefetches add to (issuer) or take from (prefetched layer) `layer`."""
        d = 0.0
        mine, nxt = self.of(layer), self.of(layer + 1)
        if mine is not None:
            d -= mine.dma_cycles + mine.issue_cycles
        elif layer in self.packed:
            d -= self.packed_dma
        if layer in self.packed:
            d -= self.packed_issue
        if nxt is not None:
            d += nxt.exposed + nxt.issue_cycles
        return d

    def l1_bytes(self, schedules: tuple[LayerSchedule, ...]) -> int:
        """The L1 arena: the end of the furthest layout."""
        return max((b + s.l1_bytes for b, s in zip(self.bases, schedules)), default=0)


NONE = NetworkPrefetch((), ())


def _tiled_pulp(s: LayerSchedule, family: str) -> bool:
    return family == FAMILY and not s.untiled and (s.level, s.outer) == ("L1", "L2")


def _first_tile(s: LayerSchedule) -> dict[str, int]:
    return {t.dim: t.tile if t.count > 1 else t.border for t in s.tiles}


def _wb_bytes(s: LayerSchedule) -> tuple[int, int]:
    """Bytes of the first tile's weight and constants transfers (layer_loaders.j2 moves exactly
    operands.py's sizes)."""
    e = _first_tile(s)
    w = int(operand_bytes(s.nest, "w", k=e["k"], c=e.get("c", e["k"])))
    b = int(operand_bytes(s.nest, "b", const_bytes=s.const_bytes, k=e["k"]))
    return w, b


def _eligible(s: LayerSchedule, family: str) -> bool:
    """Layer j's first-tile w and b can be loaded by its predecessor: tiled on L1 with double
    buffering (its prologue loads them), constants copied from L2, both operands present."""
    if not _tiled_pulp(s, family) or s.buffering != 2 or s.consts_in_place:
        return False
    return s.buffer("w") is not None and s.buffer("b") is not None


def packs(s: LayerSchedule, family: str) -> bool:
    """`s` loads its weights and per-channel constants once, as one block in L1 (w, then b right
    after it, each exactly its bytes): one transfer moves both (module docstring)."""
    if not _tiled_pulp(s, family) or s.consts_in_place:
        return False
    w, b = s.buffer("w"), s.buffer("b")
    if w is None or b is None or w.copies != 1 or b.copies != 1:
        return False
    if any(t.count > 1 for t in s.tiles if t.dim in ("k", "c")):
        return False
    wb, bb = _wb_bytes(s)
    return (w.bytes, b.bytes) == (wb, bb) and w.offset + w.bytes == b.offset and bb > 0


def _window(s: LayerSchedule, target: Target, overhead: float) -> float:
    """The issuer's last-tile kernel cycles (module docstring)."""
    level = target.memory(s.level)
    kernel = (s.compute_cycles - overhead - level.dma_issue_cycles * s.dma_transfers) / s.n_tiles
    if s.n_tiles > 1 and s.buffering == 2:
        y = next((t for t in s.traffic if t.operand == "y"), None)
        if y is not None and y.transfers:
            bw = level.bytes_per_cycle(target.clock_mhz)
            kernel -= (level.dma_setup_cycles + level.dma_chunk_cycles * y.chunks / y.transfers
                       + y.bytes / y.transfers / bw)
    return max(0.0, kernel)


def _spans(s: LayerSchedule, base: int) -> list[tuple[int, int]]:
    """The L1 byte ranges copy 0 of w and b take when the layout sits at `base`."""
    out = []
    for name in ("w", "b"):
        b = s.buffer(name)
        assert b is not None
        out.append((base + b.offset, base + b.offset + b.bytes))
    return out


def _place(prev: LayerSchedule, prev_base: int, s: LayerSchedule, free: int) -> int | None:
    """The lowest base of layer j's layout (module docstring) whose w and b miss layer i's."""
    lo, hi = prev_base, prev_base + prev.l1_bytes
    first = min(s.buffer(n).offset for n in ("w", "b"))   # type: ignore[union-attr]
    last = max(s.buffer(n).offset + s.buffer(n).bytes for n in ("w", "b"))   # type: ignore[union-attr]
    up = -(-(hi - first) // ALIGN) * ALIGN
    down = (lo - last) // ALIGN * ALIGN
    for base in (0, down, up):
        if base < 0 or base + s.l1_bytes > free:
            continue
        if all(e <= lo or b >= hi for b, e in _spans(s, base)):
            return base
    return None


def plan_prefetch(schedules: tuple[LayerSchedule, ...], families: tuple[str, ...],
                  overheads: tuple[float, ...], weights_in_l2: frozenset[int],
                  l3_tiled: frozenset[int], target: Target) -> NetworkPrefetch:
    """The prefetches of a network in execution order (module docstring). `families`: each
    layer's binding family; `overheads`: its module's fixed cycles per layer; `weights_in_l2`:
    layers whose constants the L2 plan holds; `l3_tiled`: layers tiled at L3 -> L2."""
    if not target.has_memory("L1"):
        return NONE
    level = target.memory("L1")
    if not level.dma_async:
        return NONE
    bases = [0] * len(schedules)
    out: list[LayerPrefetch] = []
    bw = level.bytes_per_cycle(target.clock_mhz)
    one = level.dma_setup_cycles + level.dma_chunk_cycles
    packed = frozenset(j for j, s in enumerate(schedules)
                       if j not in l3_tiled and j in weights_in_l2 and s.level == level.name
                       and packs(s, families[j]))
    for j in range(1, len(schedules)):
        i = j - 1
        prev, s = schedules[i], schedules[j]
        if (i in l3_tiled or j in l3_tiled or j not in weights_in_l2
                or not _tiled_pulp(prev, families[i]) or not _eligible(s, families[j])
                or prev.level != s.level):
            continue
        w, b = _wb_bytes(s)
        pf = sum(one + n / bw for n in (w, b) if n)
        if pf <= 2 * level.dma_issue_cycles:
            continue    # nothing to hide (module docstring "Where it pays")
        base = _place(prev, bases[i], s, level.free)
        if base is None:
            continue
        bases[j] = base
        out.append(LayerPrefetch(j, w, b, pf, _window(prev, target, overheads[i]),
                                 level.dma_issue_cycles, pf - one if j in packed else pf))
    return NetworkPrefetch(tuple(out), tuple(bases), packed, one, level.dma_issue_cycles)
