"""C of a layer tiled at the L3→L2 boundary: an outer L3 loop around its L2→L1 tiled code.

Seed 001 §4.2.1 (Eq. 5 and the x / w / y tiling stages) and DORY's triple buffering: L3↔L2 and
L2↔L1 both double buffered. What runs comes from the schedule (schedule/l3.py `L3Tiling.tiles`,
schedule/network.py `TiledLayer`): every L2 tile has its geometry (output channels, output rows,
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
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..bindings.base import Binding, LayerConstants
from ..ir.layer import Layer, LayerGraph
from ..schedule.l3 import L2Tile, L3Tiling
from ..schedule.network import NetworkSchedule, TiledLayer
from ..schedule.operands import REDUCING, whole_bytes
from ..schedule.placement import Placement
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
    that share a blob have the same L1 k / c tiles (schedule/network.py), so they lay it out
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


def driver(i: int, layer: Layer, ns: NetworkSchedule, lay: L3Layer, w: Where) -> LayerEmit:
    """layer_NN.c: the L3 loop over the layer's L2 tiles."""
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
    chan_off = n.kind not in REDUCING     # the input tile is a k slice of a wider input
    # scratch layout: input tile buffers of the inputs in L3, then the output tile buffers
    x_buf_off: list[int | None] = []
    off = 0
    for xl3 in w.x_l3:
        if xl3 is None:
            x_buf_off.append(None)
        else:
            assert w.scratch is not None
            x_buf_off.append(w.scratch + off)
            off += x_copies * x_buf_bytes
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

    head = [f"layer_{i:02d}.c — layer {i} '{layer.name}' ({layer.op}), tiled at L3 -> L2 "
            f"(generated by tilewise).", "",
            f"L3 tiling (schedule/l3.py): stage '{t.stage}', {t.n_k} k tile(s) of {t.k_tile} "
            f"channels x {t.n_rows} row tile(s) of {t.oy_tile} output rows, order {t.order}.",
            "  input(s):  " + ", ".join(
                f"{x} in L3 @ {o}, read by row tiles" if o is not None else f"{x} in L2"
                for x, o in zip(layer.inputs, w.x_l3)),
            f"  output:    {layer.output} " + (f"in L3 @ {w.y_l3}, written by row tiles"
                                                if w.y_l3 is not None else "in L2"),
            "  weights:   " + ("k tiles read from L3 (one blob per k tile), double buffered"
                               if t.w_tiled else "as the memory plan places them"),
            f"  L3 traffic per inference: {t.l3_bytes} B in {t.l3_transfers} transfers "
            f"(predicted {t.l3_cycles:,.0f} cycles)", "",
            f"L2 tile geometries ({len(tl.tiles)} tiles; each runs its geometry's L2 -> L1 "
            f"schedule, layer_{i:02d}_gG.c):"]
    for g, s in enumerate(tl.schedules):
        gn = s.nest
        head.append(f"  g{g}: K={gn.K} OY={gn.OY} IY={gn.IY} pads t/b {gn.pads[0]}/{gn.pads[2]}"
                    f" - {tl.geometry.count(g)} tile(s), {s.cycles:,.0f} cycles each")
    L = ["/*", *[f" * {h}".rstrip() for h in head], " */", '#include "layers.h"', ""]
    L += [f"void {e.function}(tw_layer_args_t *a);" for e in lay.emits]
    L += ["", "/* one L2 tile: geometry, k tile, channels, output rows, input rows; flags: it starts a row\n"
          " * tile (new input rows, output buffer), a k tile (new weights), it ends its row tile */",
          "typedef struct { int g, ik, k0, k, oy0, oy, iy0, iy, new_row, new_w, last_of_row; } l3_tile_t;",
          f"static const l3_tile_t TILES[{len(tl.tiles)}] = {{"]
    tiles = tl.tiles
    for j, tile in enumerate(tiles):
        new_x = int(j == 0 or tiles[j - 1].i_h != tile.i_h)
        new_w = int(j == 0 or tiles[j - 1].i_k != tile.i_k)
        last = int(j == len(tiles) - 1 or tiles[j + 1].i_h != tile.i_h)
        L.append(f"    {{{tl.geometry[j]}, {tile.i_k}, {tile.k0}, {tile.k}, {tile.oy0}, {tile.oy}, {tile.iy0}, "
                 f"{tile.iy}, {new_x}, {new_w}, {last}}},")
    L += ["};", f"static void (*const GEOMETRY[{len(lay.emits)}])(tw_layer_args_t *) = {{"
          + ", ".join(e.function for e in lay.emits) + "};"]
    if t.w_tiled:
        L.append(f"static const uint32_t K_BLOB[{len(lay.k_blobs)}] = {{"
                 + ", ".join(str(o) for o in w.k_blobs) + "};   /* L3 offsets */")
        L.append(f"static const uint32_t K_BLOB_BYTES[{len(lay.k_blobs)}] = {{"
                 + ", ".join(str(len(b)) for b in lay.k_blobs) + "};")
    L.append("")
    in_l3 = [q for q, o in enumerate(w.x_l3) if o is not None]

    def x_read(q: int, tile: str, copy: str) -> str:
        return (f"tw_l3_read(a->l2 + {x_buf_off[q]} + ({copy}) * {x_buf_bytes}, "
                f"a->l3 + {w.x_l3[q]} + (uint32_t){tile}.iy0 * {xr}, (uint32_t){tile}.iy * {xr})")

    def w_read(tile: str, copy: str) -> str:
        return (f"tw_l3_read(a->l2 + {w.w_buf} + ({copy}) * {w_copy}, a->l3 + K_BLOB[{tile}.ik], "
                f"K_BLOB_BYTES[{tile}.ik])")

    L += [f"void {fn}(tw_layer_args_t *a)", "{", "    tw_layer_args_t s = *a;"]
    ids = ([f"x_id[{len(in_l3)}][2] = {{{{0}}}}"] if in_l3 else []) + (
        ["w_id[2] = {0, 0}"] if t.w_tiled else []) + (["y_id[2] = {0, 0}"] if t.y_in_l3 else [])
    if ids:
        L.append(f"    tw_dma_id_t {', '.join(ids)};")
    curs = ([f"x_cur = 0"] if in_l3 else []) + (["w_cur = 0"] if t.w_tiled else []) + (
        ["y_cur = 0"] if t.y_in_l3 else [])
    L.append(f"    int {', '.join(curs + ['j'])};")
    # prologue: the first tile's reads
    for k, q in enumerate(in_l3):
        L.append(f"    x_id[{k}][0] = {x_read(q, 'TILES[0]', '0')};")
    if t.w_tiled:
        L.append(f"    w_id[0] = {w_read('TILES[0]', '0')};")
    L += [f"    for (j = 0; j < {len(tiles)}; j++) {{", "        const l3_tile_t *c = &TILES[j];"]
    if in_l3 or t.w_tiled:
        L += [f"        if (j + 1 < {len(tiles)}) {{   /* prefetch the next tile's changing operands */",
              "            const l3_tile_t *nx = &TILES[j + 1];"]
        for k, q in enumerate(in_l3):
            L.append(f"            if (nx->new_row) x_id[{k}][x_cur ^ 1] = "
                     f"{x_read(q, '(*nx)', 'x_cur ^ 1')};")
        if t.w_tiled:
            L.append(f"            if (nx->new_w) w_id[w_cur ^ 1] = {w_read('(*nx)', 'w_cur ^ 1')};")
        L.append("        }")
        L.append("        /* wait right before use */")
        for k, _ in enumerate(in_l3):
            L.append(f"        if (c->new_row) tw_l3_wait(x_id[{k}][x_cur]);")
        if t.w_tiled:
            L.append("        if (c->new_w) tw_l3_wait(w_id[w_cur]);")
    if t.y_in_l3:
        L += ["        if (c->new_row && y_id[y_cur]) {   /* the write that last used this buffer */",
              "            tw_l3_wait(y_id[y_cur]);", "            y_id[y_cur] = 0;", "        }"]
    # pointers
    ch = "c->k0" if chan_off else "0"
    for q, name in enumerate(("x", "x2")[:len(layer.inputs)]):
        if w.x_l3[q] is not None:
            L.append(f"        s.{name} = a->l2 + {x_buf_off[q]} + x_cur * {x_buf_bytes} + {ch};")
        else:
            L.append(f"        s.{name} = a->l2 + {w.x_l2[q]} + c->iy0 * {xr} + {ch};")
    if len(layer.inputs) == 1:
        L.append("        s.x2 = NULL;")
    if t.y_in_l3:
        L.append(f"        s.y = a->l2 + {y_buf_off} + y_cur * {y_buf_bytes} + c->k0;")
    else:
        L.append(f"        s.y = a->l2 + {w.y_l2} + c->oy0 * {yr} + c->k0;")
    if t.w_tiled:
        L.append(f"        s.w = a->l2 + {w.w_buf} + w_cur * {w_copy};")
    else:
        L.append(f"        s.w = {w.w_const or 'NULL'};")
    L.append("        GEOMETRY[c->g](&s);")
    if t.y_in_l3:
        L += ["        if (c->last_of_row) {   /* the output rows are complete: back to L3 */",
              f"            y_id[y_cur] = tw_l3_write(a->l3 + {w.y_l3} + (uint32_t)c->oy0 * {yr}, "
              f"s.y - c->k0, (uint32_t)c->oy * {yr});",
              "            y_cur ^= 1;", "        }"]
    if in_l3:
        L.append(f"        if (j + 1 < {len(tiles)} && TILES[j + 1].new_row) x_cur ^= {x_copies - 1};")
    if t.w_tiled:
        L.append(f"        if (j + 1 < {len(tiles)} && TILES[j + 1].new_w) w_cur ^= 1;")
    L.append("    }")
    if t.y_in_l3:
        L += ["    if (y_id[0]) tw_l3_wait(y_id[0]);   /* the last writes */",
              "    if (y_id[1]) tw_l3_wait(y_id[1]);"]
    L += ["}", ""]
    return LayerEmit(fn, f"layer_{i:02d}.c", "\n".join(L))
