"""One C file per layer: the tiled loop nest that executes a `LayerSchedule` exactly.

The contract is tilewise/schedule/space.py: tile loops n, k, c, oy, ox in the schedule's loop
order; border tiles at the last index of a loop; an operand is (re)loaded at a tile iff every loop
inner to its innermost relevant loop is at index 0 (`inner_loops`), the output is stored when every
such loop is at its last index; buffers at the schedule's L1 offsets; exactly the transfers of
`iter_tiles`. The generated function, run on all cores of the module (tw_fork, DORY's calling
pattern, seed 001 Listing 1, README of codegen/c):

    core 0: [double buffering] issue the DMA of the NEXT tile's operands that change, into the
            other copy of their buffer; [single] issue the current tile's loads
    core 0: wait, right before use, for the current tile's loads and for the store that last
            used the output buffer
    barrier; every core computes its share of the tile (its binding's `compute`); barrier
    core 0: store the output tile when it is complete (last input-channel tile)

Cross-layer weight prefetch (schedule/prefetch.py): a layer whose first-tile w and b its
predecessor loads gets a function `tw_layer_NN_prefetch(l1)` that issues those two loads into its
buffers at `l1` (its arena) and keeps their ids; its prologue takes the ids instead of loading
(`CrossPrefetch.mine`). The predecessor calls that function on core 0 right before its last tile
computes, after that tile's loads are waited on (`CrossPrefetch.next_fn`). A layer whose w and b
move in one transfer (`CrossPrefetch.packed`) loads both with `load_wb()` where it would load w,
and never loads b on its own.

Loops whose dimension has a single tile are not emitted (their index is 0); the header comment
shows the whole schedule. Untiled layers (kind "other", or modules that compute from L2) run their
kernel once on the L2 tensors.

The C is in templates (codegen/templates: layer.c.j2 with layer_header.j2, layer_loaders.j2 and
layer_body.j2; layer_whole.c.j2); this module computes what they write from the schedule: the
emitted loops, each operand's copies, whether it is loaded ahead, and the loops that must be at
index 0 for it to be loaded (`TileOperand.fetch`, from space.py `inner_loops`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..bindings.base import LayerConstants
from ..ir.layer import Layer, LayerGraph
from ..schedule.space import REDUCING, LayerSchedule, fetch_count, inner_loops, operands
from ..templating import render


@dataclass(frozen=True)
class LayerEmit:
    """A layer's C: function name, file name and text."""

    function: str
    filename: str
    text: str


def function_name(index: int) -> str:
    return f"tw_layer_{index:02d}"


def rows_name(index: int) -> str:
    """The function computing a row band of layer `index` in its fused chain."""
    return f"tw_layer_{index:02d}_rows"


def _counts(s: LayerSchedule) -> dict[str, int]:
    return {t.dim: t.count for t in s.tiles}


def _active(s: LayerSchedule) -> list[str]:
    """Tile loops with more than one trip, outer to inner (the loops that are emitted)."""
    c = _counts(s)
    return [d for d in s.loop_order if c.get(d, 1) > 1]


def _inner_active(s: LayerSchedule, dims: frozenset[str]) -> tuple[str, ...]:
    """The emitted loops inner to the innermost loop of `dims`: an operand of those dims is
    (re)loaded when they are all at index 0 (space.py `inner_loops`)."""
    c = _counts(s)
    return tuple(d for d in inner_loops(s.loop_order, dims, c) if c.get(d, 1) > 1)


# --- template data ------------------------------------------------------------------------------

@dataclass(frozen=True)
class CrossPrefetch:
    """A layer's part in cross-layer prefetches (schedule/prefetch.py): `mine`, its first-tile
    w and b are loaded by its predecessor (through its `prefetch_fn`, reading its constants
    `const`); `next_fn` / `next_offset` / `next_index`: the next layer's prefetch function this
    layer calls before its last tile computes and the offset of that layer's L1 layout from this
    one's; `packed`: its w and b move in one transfer."""

    mine: bool = False
    prefetch_fn: str = ""
    const: str = ""
    prev_index: int = -1
    next_fn: str = ""
    next_offset: int = 0
    next_index: int = -1
    #: its w and b move in one transfer (schedule/prefetch.py `packs`): load_wb()
    packed: bool = False


NO_PREFETCH = CrossPrefetch()


@dataclass(frozen=True)
class TensorAt:
    """A tensor of the header comment: name, shape, offset in the L2 arena, dtype (4/2-bit ones
    are packed)."""

    name: str
    shape: list[int]
    offset: int
    dtype: str = "int8"


@dataclass(frozen=True)
class TileOperand:
    """An operand of a tiled layer as its C moves it: an input (loaded) or the output (stored);
    its L1 copies; `moves`: how often it is loaded / stored per inference; `resident`: the tile
    loops it stays resident across (space.py `inner_loops`); `fetch`: those of them that are
    emitted — it is loaded when they are all at index 0 (the output: stored when they are at
    their last index); `prefetch`: loaded one tile ahead into its other copy (double
    buffering)."""

    name: str
    output: bool
    copies: int
    moves: int
    resident: tuple[str, ...]
    fetch: tuple[str, ...]
    prefetch: bool


def _operands(s: LayerSchedule) -> list[TileOperand]:
    """The operands of tiled schedule `s`, in operands.py order (x, x2, w, b, y)."""
    counts = _counts(s)
    bufs = {b.name: b for b in s.buffers}
    double = s.buffering == 2
    ops = []
    for op in operands(s.nest, s.const_bytes, s.consts_in_place):
        copies = bufs[op.name].copies
        moves = fetch_count(s.loop_order, counts, op.dims)
        if not op.output and copies == 1 and double and moves > 1:
            raise AssertionError(f"{op.name} is reloaded but has one L1 copy under double buffering")
        ops.append(TileOperand(op.name, op.output, copies, moves,
                               tuple(inner_loops(s.loop_order, op.dims, counts)),
                               _inner_active(s, op.dims), double and not op.output and copies == 2))
    return ops


def _header_data(index: int, layer: Layer, lg: LayerGraph, s: LayerSchedule, cores: int,
                 l1_free: int | None, in_off: list[int], out_off: int) -> dict[str, Any]:
    """What layer_header.j2 shows: the layer, its tensors and the schedule's decisions."""
    return dict(index=index, layer=layer, s=s, n=s.nest, cores=cores, l1_free=l1_free,
                inputs=[TensorAt(t, list(lg.tensors[t].shape), o, lg.tensors[t].dtype)
                        for t, o in zip(layer.inputs, in_off)],
                output=TensorAt(layer.output, list(lg.tensors[layer.output].shape), out_off,
                                lg.tensors[layer.output].dtype),
                ops=[] if s.untiled else _operands(s))


def _layer_data(layer: Layer, s: LayerSchedule, consts: LayerConstants | None, code: str,
                fn: str, x_ch: int | None = None, y_ch: int | None = None
                ) -> dict[str, Any]:
    """What layer.c.j2 needs besides the header: geometry macros, constants, the binding's C."""
    n = s.nest
    return dict(consts=consts, code=code, fn=fn, reducing=layer.nest.kind in REDUCING,
                x_ch=x_ch if x_ch is not None else (n.C if n.kind in REDUCING else n.K),
                y_ch=y_ch if y_ch is not None else n.K,
                tiles=[t for t in s.tiles if t.dim != "n"])   # batch 1: no n macros


def _body_data(s: LayerSchedule, pf: CrossPrefetch = NO_PREFETCH) -> dict[str, Any]:
    """What layer_loaders.j2 and layer_body.j2 need besides the operands: the loops that are
    emitted, the buffering, the kernel's L1 buffers, the activations' and the stored weights' bits
    (below 8: packed; the binding keeps every DMA chunk whole bytes, C never tiled)."""
    n = s.nest
    ops = _operands(s)
    return dict(bufs={op.name: op for op in ops}, y=next(op for op in ops if op.output),
                active=_active(s), double=s.buffering == 2,
                psum=s.buffer("psum") is not None, scratch=s.buffer("scratch") is not None,
                depthwise=n.kind == "dwconv", w_block=n.w_c_block, w_bits=n.w_bits,
                w_k_block=n.w_k_block, x_bits=n.x_bits, y_bits=n.y_bits,
                in_place=s.consts_in_place and n.kind in ("conv", "fc", "dwconv"), pf=pf,
                last_tile=" && ".join(f"i_{d} == N_{d.upper()} - 1" for d in _active(s)) or "1",
                residual=n.residual)


# --- files ----------------------------------------------------------------------------------------

def _check(s: LayerSchedule, whole: bool = False) -> None:
    """What partition guarantees (the placement's tile rules and the binding's psum rule); a
    whole-layer function (`whole`) takes any batch."""
    assert s.nest.N == 1 or whole, "the kernels' bindings take batch 1"
    assert s.untiled or (s.level, s.outer) == ("L1", "L2"), (s.level, s.outer)
    assert not s.psum or s.buffer("psum") is not None, "partial sums spilled to L2"


def emit_tiled(index: int, layer: Layer, lg: LayerGraph, s: LayerSchedule, cores: int,
               consts: LayerConstants | None, l1_free: int | None, in_off: list[int],
               out_off: int, code: str, *, fn: str | None = None, x_ch: int | None = None,
               y_ch: int | None = None, pf: CrossPrefetch = NO_PREFETCH) -> LayerEmit:
    """The C file of a layer tiled L2 -> L1 by schedule `s`; `code` is its binding's C (the
    static helpers and `compute()`). `fn` / `x_ch` / `y_ch`: for one L2 tile geometry of a layer
    tiled at L3->L2 (l3_c.py): its function name, and the channels per pixel of the L2 tensors
    its tiles sit in. `pf`: its part in cross-layer prefetches (module docstring)."""
    _check(s)
    fn = fn or function_name(index)
    text = render("layer.c.j2", **_header_data(index, layer, lg, s, cores, l1_free, in_off, out_off),
                  **_layer_data(layer, s, consts, code, fn, x_ch, y_ch), **_body_data(s, pf),
                  rows_fn=None)
    return LayerEmit(fn, _filename(index, fn), text)


def _filename(index: int, fn: str) -> str:
    return f"layer_{index:02d}.c" if fn == function_name(index) else f"{fn[3:]}.c"


def emit_untiled(index: int, layer: Layer, lg: LayerGraph, s: LayerSchedule, cores: int,
                 consts: LayerConstants | None, l1_free: int | None, in_off: list[int],
                 out_off: int, code: str, whole: bool, *, fn: str | None = None,
                 rows_fn: str | None = None) -> LayerEmit:
    """A layer run whole on the L2 tensors: a `compute()` (`code`) called once by every core of
    the module (kinds conv ... gap on a module computing from L2), or, with `whole`, the
    binding's own layer function (untiled ops; `code` has `@FN@` for its name and, where it forks
    the module's cores itself — the pulp family's row ops and transpose — `@CORES@` for their
    number). `rows_fn`: also emit that function, the layer's rows for a fused chain
    (chain_c.py)."""
    _check(s, whole)
    fn = fn or function_name(index)
    head = _header_data(index, layer, lg, s, cores, l1_free, in_off, out_off)
    if whole:
        text = render("layer_whole.c.j2", **head, code=code.replace("@FN@", fn).replace("@CORES@", str(cores)))
    else:
        text = render("layer.c.j2", **head, **_layer_data(layer, s, consts, code, fn),
                      scratch=s.buffer("scratch") is not None, rows_fn=rows_fn,
                      two_inputs=len(layer.inputs) == 2)
    return LayerEmit(fn, _filename(index, fn), text)
