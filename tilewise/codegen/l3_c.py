"""C of a layer tiled at the L3→L2 boundary: an outer L3 loop around its L2→L1 tiled code.

Seed 001 §4.2.1 (Eq. 5 and the x / w / y tiling stages) and DORY's triple buffering: L3↔L2 and
L2↔L1 both double buffered. What runs comes from the schedule (schedule/l3.py `L3Tiling.tiles`,
schedule/tiled.py `TiledLayer`): every L2 tile has its geometry (output channels, output rows,
the input rows it reads with the padding it synthesizes) and each distinct geometry has its own
L2→L1 schedule, emitted as its own function `tw_layer_NN_gG` (layer_c.py, with the channels per
pixel of the wider L2 tensors its tiles sit in: X_CH / Y_CH). The layer's function `tw_layer_NN`
is the driver, run by the sequencing core outside forks:

    for each L2 tile j in execution order (a table):
      [x in L3]  the row tile's input rows were read into one copy of the input tile buffer; when
                 tile j+1 starts a new row tile, its read is issued now into the other copy
      [w tiled]  the same for the weight k tile (one constant blob per k tile in the L3 image,
                 laid out for its geometry's schedule: constants.py)
      wait (tw_l3_wait) right before use for this tile's input and weight reads, and for the L3
      write that last used this output tile buffer
      run the geometry's function on L2 pointers: input rows (a copy, or the rows inside the L2
      input), constants, output rows (a copy of the output tile buffer, or the rows inside the L2
      output), offset by k0 channels where the tensor is wider than the tile
      [y in L3]  when the row tile's last k tile is done, write the output rows back (tw_l3_write)

L2 buffers are the memory plan's (memory/network.py): the layer's scratch `tmp:NAME` holds the
input tile buffers (per input in L3: 2 copies of iy_tile rows, 1 whole copy when rows are not
tiled) then 2 copies of the output tile buffer; `w:NAME` the 2 weight k-tile copies. L3 traffic
is exactly `L3Tiling.l3_bytes` / `l3_transfers`.

The driver's C is codegen/templates/l3_driver.c.j2; `driver` computes its data (the TILES table
and its flags, the tile buffers' offsets in the layer's scratch, row and buffer bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..bindings.base import Binding, LayerConstants
from ..ir.layer import Layer, LayerGraph, LoopNest
from ..ir.operands import REDUCING, whole_bytes
from ..pipeline import NetworkSchedule
from ..schedule.l3 import L2Tile, L3Tiling
from ..schedule.placement import Placement
from ..schedule.tiled import TiledLayer
from ..templating import render
from .layer_c import LayerEmit, emit_tiled, function_name


@dataclass(frozen=True)
class L3Layer:
    """What the project needs of one L3-tiled layer."""

    index: int
    #: the geometry functions' files, then the driver's (layer_NN.c)
    emits: tuple[LayerEmit, ...]
    #: constants: one blob for the whole layer (weights not k-tiled) or one per k tile
    consts: LayerConstants | None
    k_blobs: tuple[bytes, ...]
    l1_bytes: int
    cores: int


def _slice(a, k0: int, k: int, K: int):
    if a is None:
        return None
    arr = np.asarray(a)
    return arr[k0:k0 + k] if arr.ndim >= 1 and arr.shape[0] == K and K > 1 else arr


def sub_layer(layer: Layer, tile: L2Tile) -> Layer:
    """The layer one L2 tile computes: its geometry's nest, output channels [k0, k0+k)."""
    K = layer.nest.K
    if tile.k == K:
        return replace(layer, nest=tile.nest)
    rq = layer.requant
    if rq is not None:
        rq = replace(rq, multiplier=_slice(rq.multiplier, tile.k0, tile.k, K),
                     shift=_slice(rq.shift, tile.k0, tile.k, K),
                     scale=_slice(rq.scale, tile.k0, tile.k, K),
                     bias=_slice(rq.bias, tile.k0, tile.k, K))
    return replace(layer, nest=tile.nest, weights=_slice(layer.weights, tile.k0, tile.k, K),
                   bias=_slice(layer.bias, tile.k0, tile.k, K), requant=rq)


def _emit_geometries(i: int, layer: Layer, lg: LayerGraph, p: Placement, tl: TiledLayer,
                     l1_free: int | None) -> tuple[list[LayerEmit], int, int]:
    """One tiled function per L2 tile geometry (partition never leaves an L3-tiled layer to an
    untiled placement: its kernels need whole L2 tensors)."""
    n = layer.nest
    b = p.binding
    x_ch = n.C if n.kind in REDUCING else n.K
    emits, l1 = [], 4
    for g, s in enumerate(tl.schedules):
        assert not s.untiled, f"layer '{layer.name}': an untiled placement cut at L3"
        sub = sub_layer(layer, tl.tiles[tl.geometry.index(g)])
        consts = b.consts.build(sub, lg, s) if b.consts is not None else None
        emits.append(emit_tiled(i, sub, lg, s, p.module.cores, consts, l1_free,
                                [0] * len(layer.inputs), 0, b.emit(sub, lg, consts),
                                fn=f"{function_name(i)}_g{g}", x_ch=x_ch, y_ch=n.K))
        l1 = max(l1, s.l1_bytes)
    return emits, l1, p.module.cores


def _constants(layer: Layer, lg: LayerGraph, binding: Binding, t: L3Tiling, tl: TiledLayer
               ) -> tuple[LayerConstants | None, tuple[bytes, ...]]:
    """The layer's constant blob (weights not k-tiled) or one blob per k tile; the geometries
    that share a blob have the same L1 k / c tiles (schedule/tiled.py), so they lay it out
    alike."""
    if binding.consts is None or layer.weights is None:
        return None, ()
    blobs: dict[int, LayerConstants] = {}
    for j, tile in enumerate(tl.tiles):
        k = binding.consts.build(sub_layer(layer, tile), lg, tl.schedule_of(j))
        first = blobs.setdefault(tile.i_k, k)
        assert first.blob == k.blob, f"layer '{layer.name}': one blob laid out two ways"
    if not t.w_tiled:
        return blobs[0], ()
    return None, tuple(blobs[ik].blob for ik in sorted(blobs))


def emit_l3_layer(i: int, layer: Layer, ns: NetworkSchedule, l1_free: int | None) -> L3Layer:
    """The geometry functions and constants of L3-tiled layer i (the driver comes later, once the
    L2 and L3 offsets are known: `driver`)."""
    tl = ns.l3_tiles[layer.name]
    t = ns.l3.tilings[layer.name]
    p = ns.placement(i)
    emits, l1, cores = _emit_geometries(i, layer, ns.layers, p, tl, l1_free)
    consts, k_blobs = _constants(layer, ns.layers, p.binding, t, tl)
    return L3Layer(i, tuple(emits), consts, k_blobs, l1, cores)


@dataclass(frozen=True)
class Where:
    """Offsets the driver uses: L2 arena offsets of the layer's tensors in L2 (None when in L3),
    L3 offsets of those in L3, its scratch and weight buffers, its k-tile blobs in L3."""

    x_l2: tuple[int | None, ...]
    x_l3: tuple[int | None, ...]
    y_l2: int | None
    y_l3: int | None
    scratch: int | None
    w_buf: int | None
    w_const: str | None       # C expression of the whole constant blob (weights not k-tiled)
    k_blobs: tuple[int, ...]  # L3 offsets


@dataclass(frozen=True)
class L3Input:
    """An input of the driver: its layer-args field (x, x2), its L2 arena offset (None: in L3),
    its L3 offset (None: in L2) and, when in L3, the L2 offset of its tile buffer."""

    name: str
    arg: str
    l2: int | None
    l3: int | None
    buf: int | None


@dataclass(frozen=True)
class Geometry:
    """An L2 tile geometry (header comment): its nest, how many tiles, cycles of one."""

    nest: LoopNest
    count: int
    cycles: float


@dataclass(frozen=True)
class KBlob:
    """A weight k tile's constant blob in the L3 image."""

    offset: int
    bytes: int


def _tile_rows(tiles: tuple[L2Tile, ...], geometry: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The TILES table: geometry, k tile, channels, output rows, input rows, and the flags
    new_row (it starts a row tile), new_w (it starts a k tile), last_of_row (it ends its row
    tile)."""
    rows = []
    for j, tile in enumerate(tiles):
        new_x = int(j == 0 or tiles[j - 1].i_h != tile.i_h)
        new_w = int(j == 0 or tiles[j - 1].i_k != tile.i_k)
        last = int(j == len(tiles) - 1 or tiles[j + 1].i_h != tile.i_h)
        rows.append((geometry[j], tile.i_k, tile.k0, tile.k, tile.oy0, tile.oy, tile.iy0, tile.iy,
                     new_x, new_w, last))
    return rows


def driver(i: int, layer: Layer, ns: NetworkSchedule, lay: L3Layer, w: Where) -> LayerEmit:
    """layer_NN.c: the L3 loop over the layer's L2 tiles (l3_driver.c.j2)."""
    t = ns.l3.tilings[layer.name]
    tl = ns.l3_tiles[layer.name]
    n = layer.nest
    fn = function_name(i)
    xr = n.IX * n.C * whole_bytes(n.x_bits)     # bytes of one input row
    yr = n.OX * n.K * whole_bytes(n.y_bits)     # bytes of one output row
    rows_tiled = t.n_rows > 1
    x_copies = 2 if rows_tiled else 1
    x_buf_bytes = (t.iy_tile if rows_tiled else n.IY) * xr
    y_buf_bytes = t.oy_tile * yr
    # scratch layout: input tile buffers of the inputs in L3, then the output tile buffers
    inputs: list[L3Input] = []
    off = 0
    for x, arg, xl2, xl3 in zip(layer.inputs, ("x", "x2"), w.x_l2, w.x_l3):
        buf = None
        if xl3 is not None:
            assert w.scratch is not None
            buf = w.scratch + off
            off += x_copies * x_buf_bytes
        inputs.append(L3Input(x, arg, xl2, xl3, buf))
    y_buf_off = None
    if t.y_in_l3:
        assert w.scratch is not None
        y_buf_off = w.scratch + off
        off += 2 * y_buf_bytes
    plan_scratch = next((b.size for b in ns.memory.plan.buffers if b.name == f"tmp:{layer.name}"), 0)
    assert off <= plan_scratch, f"layer '{layer.name}': L3 tile buffers {off} > plan {plan_scratch}"
    w_copy = 0
    if t.w_tiled:
        w_copy = max(len(b) for b in lay.k_blobs)
        plan_w = next(b.size for b in ns.memory.plan.buffers if b.name == f"w:{layer.name}")
        assert 2 * w_copy <= plan_w, f"layer '{layer.name}': k tiles 2 x {w_copy} > plan {plan_w}"
    text = render(
        "l3_driver.c.j2", index=i, layer=layer, t=t, fn=fn,
        geometries=[Geometry(s.nest, tl.geometry.count(g), s.cycles) for g, s in enumerate(tl.schedules)],
        functions=[e.function for e in lay.emits], tiles=_tile_rows(tl.tiles, tl.geometry),
        k_blobs=[KBlob(o, len(b)) for o, b in zip(w.k_blobs, lay.k_blobs)] if t.w_tiled else [],
        inputs=inputs, in_l3=[x for x in inputs if x.l3 is not None],
        # the input tile is a k slice of a wider input (channels follow k)
        chan_off=n.kind not in REDUCING,
        x_row=xr, y_row=yr, x_copies=x_copies, x_buf_bytes=x_buf_bytes,
        y_l2=w.y_l2, y_l3=w.y_l3, y_buf=y_buf_off, y_buf_bytes=y_buf_bytes,
        w_buf=w.w_buf, w_copy=w_copy, w_const=w.w_const)
    return LayerEmit(fn, f"layer_{i:02d}.c", text)
