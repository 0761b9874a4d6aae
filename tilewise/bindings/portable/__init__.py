"""The portable kernel family: tilewise's C99 kernels (`c/`, copied into projects as tw_kernels/).

`bindings(cost)` returns the family's bindings for a module whose kernels are priced by `cost`
(cost.py's PulpNN, CmsisNN or SimdDsp with a target's coefficients, or the pulp family's model
where the pulp family keeps these bindings). The table, one binding per row (mode "any" = every semantics mode):

| binding                      | op               | modes              | bits      | geometry | C                      |
|                              |                  |                    | (x/w→y)   |          |                        |
|------------------------------|------------------|--------------------|-----------|----------|------------------------|
| conv2d_s8                    | conv2d           | tflite, onnx,      | 8x8→8     | conv     | tw_conv2d_s8 (im2col + |
|                              |                  | shift, adc         |           |          | 4x2), tw_conv1x1_s8    |
| depthwise_s8                 | depthwise        | tflite, onnx,      | 8x8→8     | dwconv   | tw_depthwise_s8        |
|                              |                  | shift, adc         |           |          |                        |
| fully_connected_s8           | fully_connected  | tflite, onnx,      | 8x8→8     | fc       | tw_fully_connected_s8  |
|                              |                  | shift, adc         |           |          |                        |
| conv2d_s16                   | conv2d           | tflite (int64 acc) | 16x8→16   | conv     | tw_conv2d_s16          |
| fully_connected_s16          | fully_connected  | tflite (int64 acc) | 16x8→16   | fc       | tw_fully_connected_s16 |
| depthwise_s16                | depthwise        | tflite (int64 acc) | 16x8→16   | dwconv   | tw_depthwise_s16       |
| conv2d/depthwise/            | conv2d,          | shift, div         | 16x8→16,  | conv,    | the 16x8 kernels with  |
| fully_connected_s16_int(_y8) | depthwise,       |                    | 16x8→8    | dwconv,  | the integer exports'   |
|                              | fully_connected  |                    |           | fc       | requantization         |
| avg_pool_s16, max_pool_s16   | avg_pool,        | tflite (max: any)  | 16→16     | pool     | tw_avgpool_s16 /       |
|                              | max_pool         |                    |           |          | tw_maxpool_s16         |
| add_s8, sub_s8, mul_s8       | add, sub, mul    | tflite (add: onnx) | 8→8       | add      | tw_add_s8 ...          |
|                              |                  |                    |           |          | tw_add_onnx_s8/_u8     |
| add_table_s8                 | add              | none               | 8→8       | add      | tw_add_table_s8: the   |
|                              |                  | (TableAddParams)   |           |          | integer exports'       |
|                              |                  |                    |           |          | requantized adds by    |
|                              |                  |                    |           |          | two tables             |
| add_s16, sub_s16, mul_s16    | add, sub, mul    | tflite             | 16→16     | add      | tw_add_s16 /           |
|                              |                  |                    |           |          | tw_sub_s16 /           |
|                              |                  |                    |           |          | tw_mul_s16             |
| *_const_lut_s8               | add, sub, mul    | tflite             | 8→8       | other    | tw_lut_s8: an          |
|                              |                  |                    |           |          | activation and a       |
|                              |                  |                    |           |          | constant of one value, |
|                              |                  |                    |           |          | the golden op's table  |
| *_broadcast_s8               | add, sub, mul    | tflite (add: onnx) | 8→8       | other    | the elementwise kernel |
|                              |                  |                    |           |          | per pixel              |
| avg_pool_s8                  | avg_pool         | tflite, onnx       | 8→8       | pool     | tw_avgpool_s8 /        |
|                              |                  |                    |           |          | tw_avgpool_onnx_s8     |
| max_pool_s8                  | max_pool         | any                | 8→8       | pool     | tw_maxpool_s8          |
| global_avg_pool_s8           | global_avg_pool  | tflite, onnx       | 8→8       | gap      | tw_global_avgpool_s8 / |
|                              |                  |                    |           |          | _rq_s8                 |
| softmax_s8                   | softmax          | tflite, onnx       | 8→8       | other    | tw_softmax_s8 /        |
|                              |                  |                    |           |          | tw_softmax_onnx_s8     |
|                              |                  |                    |           |          | (any axis)             |
| softmax_s16                  | softmax          | tflite             | 16→16     | other    | tw_softmax_s16         |
| logistic_s8                  | logistic         | tflite             | 8→8       | other    | tw_lut_s8              |
| tanh_s8                      | tanh             | tflite             | 8→8       | other    | tw_lut_s8              |
| concat_s8                    | concat           | onnx               | 8→8       | other    | tw_concat2_s8          |
| reshape                      | reshape          | any                | 8→8,      | other    | a byte copy            |
|                              |                  |                    | 16→16,    |          |                        |
|                              |                  |                    | 32→32     |          |                        |

Weighted bindings take the portable constants layout (constants.py: 12 bytes per channel); their
adc mode (DIANA's analog chain, tw_requant.h TW_RQ_ADC) runs a ternary layer the analog core
cannot take on the CPU.
conv2d's L1 scratch is its im2col buffer: two receptive fields per core, 2·FY·FX·c_t bytes each
(tw_conv.h), none for 1×1. Output-channel tiles at L3→L2 are multiples of 4 when K allows (the
4×2 MatMul's channel blocks). The 16x8 kernels are not cut at L3→L2 and keep C whole when a
partial sum could exceed int32 (checks.s16_rules); untiled ops run whole on the L2 tensors.

Emission: each binding has its own emit function — weighted.py (conv2d_s8, depthwise_s8,
fully_connected_s8), s16.py (the 16x8 bindings), elementwise.py (add, sub, mul, tiled and
broadcast), pool.py (the pools), untiled.py (softmax, logistic, concat, reshape) — which computes
the call's data (kernel name, parameters, zero points, clamps, tables) and renders the family's
template of that kernel (templates/*.j2, common.render). A tiled kernel's C is its static
helpers and `compute(t, m, flags, core, cores)` (compute.c.j2), which gets the tile's position
(`tw_tile_pos_t`: channel, row and column ranges and the input spans with their pads) and its
buffers (`tw_tile_bufs_t`), so that the tiled loop nest (codegen/layer_c.py) and layers run
whole on L2 call the same code; an untiled op's is the whole layer function
(whole_function.c.j2). The kernels' call contracts are the headers of `c/`. Every emit function
runs after its binding's check (checks.py) passed: it asserts what the check guarantees, so an
AssertionError there is a bug, never a user error. uint8 tensors run through the int8 kernels
stored biased (common.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ..base import Binding, Precision, TileRules, per_mode
from . import checks, constants, elementwise, pool, s16, untiled, weighted
from . import host as host_only
from .common import FAMILY, S8, S16

Check = Callable[[Layer, LayerGraph], "str | None"]


def im2col_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_conv2d_s8's im2col buffer: two receptive fields of FY·FX·c_t bytes per core (none for a
    1×1 conv, whose HWC pixels are already contiguous)."""
    zero = 0 * np.asarray(k) * np.asarray(oy)
    if nest.FY * nest.FX == 1:
        return zero
    return zero + cores * 2 * nest.FY * nest.FX * np.asarray(c)


def add_tables_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """add_table_s8's two tables in L1: 2 × 256 int32, shared by the cores."""
    return 0 * np.asarray(k) * np.asarray(oy) + 2 * 256 * 4


TILED = TileRules()
WEIGHTED = TileRules(l3_k_step=4)
NO_L3 = TileRules(l3=False)
UNTILED = TileRules(l3=False, untiled=True)


def bindings(cost, *, depthwise_input_bytes_per_cycle: float = 0.0,
             host: bool = False) -> tuple[Binding, ...]:
    """The portable family priced by the kernel cost model `cost` (module docstring).

    `depthwise_input_bytes_per_cycle`: the rate of the depthwise input DMA when the target's
    runtime reorders it on the way in (gap9's MATCH model; Binding.x_dma_bytes_per_cycle).
    `host`: a host core's module (named "cpu"): with the host-only bindings too (host.py:
    quantize, transpose, concatenation of any inputs), which no other module lists."""
    out: list[Binding] = []

    def add(name: str, op: Op, modes: tuple[str | None, ...], prec: Precision, kind: str,
            check: Check, **kw) -> None:
        out.extend(per_mode(FAMILY, cost, name, op, modes, prec, kind, check, **kw))

    rq = ("tflite", "onnx", "shift", "adc", "div")
    p8w, p16w = Precision(S8, 8, S8), Precision(S16, 8, S16, acc=64)
    p8, p16 = Precision(S8, 0, S8), Precision(S16, 0, S16)
    add("conv2d_s8", Op.CONV2D, rq, p8w, "conv", checks.weighted_s8, emit=weighted.conv2d_s8,
        scratch=im2col_bytes, consts=constants.layout("k.fy.fx.c"), tiles=WEIGHTED)
    add("depthwise_s8", Op.DEPTHWISE, rq, p8w, "dwconv", checks.weighted_s8,
        emit=weighted.depthwise_s8, consts=constants.layout("fy.fx.k"), tiles=WEIGHTED,
        x_dma_bytes_per_cycle=depthwise_input_bytes_per_cycle)
    add("fully_connected_s8", Op.FULLY_CONNECTED, rq, p8w, "fc", checks.weighted_s8,
        emit=weighted.fully_connected_s8, consts=constants.layout("k.c"), tiles=WEIGHTED)
    add("conv2d_s16", Op.CONV2D, ("tflite",), p16w, "conv", checks.weighted_s16,
        emit=s16.conv2d_s16, consts=constants.layout("k.fy.fx.c"), tiles=NO_L3,
        layer_rules=checks.s16_rules)
    add("depthwise_s16", Op.DEPTHWISE, ("tflite",), p16w, "dwconv", checks.depthwise_s16,
        emit=s16.depthwise_s16, consts=constants.layout("fy.fx.k"), tiles=NO_L3,
        x_dma_bytes_per_cycle=depthwise_input_bytes_per_cycle)
    add("avg_pool_s16", Op.AVG_POOL, ("tflite",), p16, "pool", checks.pool_s16,
        emit=s16.avg_pool_s16, tiles=NO_L3)
    add("max_pool_s16", Op.MAX_POOL, (None,), p16, "pool", checks.pool_s16,
        emit=s16.max_pool_s16, tiles=NO_L3)
    add("fully_connected_s16", Op.FULLY_CONNECTED, ("tflite",), p16w, "fc", checks.weighted_s16,
        emit=s16.fully_connected_s16, consts=constants.layout("k.c"), tiles=NO_L3,
        layer_rules=checks.s16_rules)
    for y in (S8, S16):   # the integer exports' 16x8 layers (s16.py *_s16_int)
        sfx = "_y8" if y == S8 else ""
        p16i = Precision(S16, 8, y)
        add("conv2d_s16_int" + sfx, Op.CONV2D, ("shift", "div"), p16i, "conv", checks.weighted_s16_int,
            emit=s16.conv2d_s16_int, consts=constants.layout("k.fy.fx.c"), tiles=NO_L3,
            layer_rules=checks.s16_rules)
        add("depthwise_s16_int" + sfx, Op.DEPTHWISE, ("shift", "div"), p16i, "dwconv",
            checks.weighted_s16_int, emit=s16.depthwise_s16_int, consts=constants.layout("fy.fx.k"),
            tiles=NO_L3, x_dma_bytes_per_cycle=depthwise_input_bytes_per_cycle)
        add("fully_connected_s16_int" + sfx, Op.FULLY_CONNECTED, ("shift", "div"), p16i, "fc",
            checks.weighted_s16_int, emit=s16.fully_connected_s16_int, consts=constants.layout("k.c"),
            tiles=NO_L3, layer_rules=checks.s16_rules)
    add("add_s8", Op.ADD, ("tflite", "onnx"), p8, "add", checks.elementwise_s8,
        emit={"tflite": elementwise.add_s8, "onnx": elementwise.add_onnx_s8}, tiles=TILED)
    add("add_table_s8", Op.ADD, (None,), p8, "add", checks.add_table, emit=elementwise.add_table_s8,
        scratch=add_tables_bytes, tiles=TILED)
    # before the broadcast kernels: the same layers where the constant has one value, by a table
    lookup = cost.lookup() if hasattr(cost, "lookup") else cost
    for op, name in ((Op.ADD, "add_const_lut_s8"), (Op.SUB, "sub_const_lut_s8"), (Op.MUL, "mul_const_lut_s8")):
        out.extend(per_mode(FAMILY, lookup, name, op, ("tflite",), p8, "other", checks.const_lookup_s8,
                            emit=elementwise.const_lookup_s8, whole=True, tiles=UNTILED))
    add("add_broadcast_s8", Op.ADD, ("tflite", "onnx"), p8, "other", checks.broadcast_s8,
        emit={"tflite": elementwise.add_broadcast_s8, "onnx": elementwise.add_broadcast_onnx_s8},
        whole=True, tiles=UNTILED)
    add("sub_s8", Op.SUB, ("tflite",), p8, "add", checks.elementwise_s8, emit=elementwise.sub_s8,
        tiles=TILED)
    add("sub_broadcast_s8", Op.SUB, ("tflite",), p8, "other", checks.broadcast_s8,
        emit=elementwise.sub_broadcast_s8, whole=True, tiles=UNTILED)
    add("mul_s8", Op.MUL, ("tflite",), p8, "add", checks.elementwise_s8, emit=elementwise.mul_s8,
        tiles=TILED)
    add("mul_broadcast_s8", Op.MUL, ("tflite",), p8, "other", checks.broadcast_s8,
        emit=elementwise.mul_broadcast_s8, whole=True, tiles=UNTILED)
    add("add_s16", Op.ADD, ("tflite",), p16, "add", checks.elementwise_s16, emit=s16.add_s16,
        tiles=NO_L3)
    add("sub_s16", Op.SUB, ("tflite",), p16, "add", checks.elementwise_s16, emit=s16.sub_s16,
        tiles=NO_L3)
    add("mul_s16", Op.MUL, ("tflite",), p16, "add", checks.elementwise_s16, emit=s16.mul_s16,
        tiles=NO_L3)
    add("avg_pool_s8", Op.AVG_POOL, ("tflite",), p8, "pool", checks.avg_pool_tflite,
        emit=pool.avg_pool_s8)
    add("avg_pool_onnx_s8", Op.AVG_POOL, ("onnx",), p8, "pool", checks.avg_pool_onnx,
        emit=pool.avg_pool_onnx_s8)
    add("max_pool_s8", Op.MAX_POOL, (None,), p8, "pool", checks.max_pool, emit=pool.max_pool_s8)
    add("global_avg_pool_s8", Op.GLOBAL_AVG_POOL, ("tflite",), p8, "gap", checks.gap_tflite,
        emit=pool.global_avg_pool_s8)
    add("global_avg_pool_onnx_s8", Op.GLOBAL_AVG_POOL, ("onnx",), p8, "gap", checks.gap_onnx,
        emit=pool.global_avg_pool_onnx_s8)
    add("softmax_s8", Op.SOFTMAX, ("tflite",), p8, "other", checks.softmax_tflite,
        emit=untiled.softmax_s8, whole=True, tiles=UNTILED)
    add("softmax_s16", Op.SOFTMAX, ("tflite",), p16, "other", checks.softmax_tflite16,
        emit=untiled.softmax_s16, whole=True, tiles=UNTILED)
    add("softmax_onnx_s8", Op.SOFTMAX, ("onnx",), p8, "other", checks.softmax_onnx,
        emit=untiled.softmax_onnx_s8, whole=True, tiles=UNTILED)
    add("logistic_s8", Op.LOGISTIC, ("tflite",), p8, "other", checks.logistic,
        emit=untiled.logistic_s8, whole=True, tiles=UNTILED)
    add("tanh_s8", Op.TANH, ("tflite",), p8, "other", checks.logistic,
        emit=untiled.logistic_s8, whole=True, tiles=UNTILED)
    add("concat_s8", Op.CONCAT, ("onnx",), p8, "other", checks.concat_onnx,
        emit=untiled.concat_s8, whole=True, tiles=UNTILED)
    for name, p in (("reshape", p8), ("reshape_s16", p16), ("reshape_s32", Precision(32, 0, 32))):
        add(name, Op.RESHAPE, (None,), p, "other", checks.reshape, emit=untiled.reshape,
            whole=True, tiles=UNTILED)
    if host:
        out.extend(host_only.bindings(cost))
    return tuple(out)


__all__ = ["FAMILY", "bindings", "im2col_bytes"]
