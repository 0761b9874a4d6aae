"""The pulp family's MatMul of two int8 activations (Deeploy / QuantLab attention: Q·Kᵀ, softmax·V):
binding `matmul_act_s8` (op matmul, a uint8 or int8, b int8; y int8 / uint8 with the requantization
fused by passes/fuse_matmul.py, or int32 sums), kernel c/tw_pulp_mm_act.h, layer function
templates/mm_act.c.j2, cost model cost.py `MatMulActCost`.

The layer function is the binding's own (`whole_function`: the scheduler sees an untiled layer
with `scratch` bytes of L1): on every core of the cluster it walks the heads and, on a module with
L1 (`dma`), for each head DMAs b ([k][n]) into L1, builds bᵀ and the uint8 correction there
(tw_pulp_mm_act_transpose), then moves a's rows in tiles of `m_tile` rows into L1, computes
each tile's [m_tile][n] outputs (4x2 sdotp4 blocks, requantized as they are formed) and DMAs
them back — head by head and row tile by row tile, so neither the L×L scores nor a head's int32
sums ever need to live whole (seed 001's L2→L1 tiling; Jung et al. 2024 tile attention per
head). Built for Arm (`arm`: the Cortex-M7, whose module reads its SRAM in place) a and y are
read and written where they are and only bᵀ, the corrections and the unpacked rows live in the
scratch.

L1 scratch (one formula, `Geometry`, for planning and emission; offsets 4-byte aligned):
bᵀ round4(n·k) | corrections 4n | words 16n (fused requant) | Arm rows cores·4·round4(k) |
(dma only) a's row tile round4(m_tile·k) | b's staging round4(k·n), then the output tile
m_tile·n·y_bytes (the larger), with m_tile the most rows (even, or all m) whose a rows and
outputs fit TILE_BYTES. b and a's first row tile move together; a lands during the transpose.

Legal (`check`): two activations, a int8 or uint8, b int8; batch dims where each operand has
every head or one (a head step or 0); the output int8 / uint8 with a shift requantization of one
value per tensor or per column, or int32 sums without one. Requantization variant (constants.py):
"shift32" when k·|acc| + |λ| fits int32 for every accumulator (|acc| ≤ k·max|a|·128), else
"shift".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...ir.params import MatMulParams
from ...ir.tensor import dtype_bits
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from ..portable.common import u8_offset
from . import constants
from .common import FAMILY, render, round4
from .weighted import output_clamp

#: the bytes a row tile (a's rows and their outputs) may take in L1, beyond b's staging
TILE_BYTES = 8192
UNTILED = TileRules(l3=False, untiled=True)
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Geometry:
    """One layer's sizes, head steps (bytes), rows per tile and L1 offsets (module docstring)."""

    heads: int
    m: int
    k: int
    n: int
    y_bytes: int
    a_step: int
    b_step: int
    y_step: int
    a_off: int
    dma: bool
    m_tile: int
    bt_off: int
    bias_off: int
    words_off: int
    col_off: int
    region_off: int
    a_tile_bytes: int
    bytes: int


def m_tile(m: int, k: int, n: int, y_bytes: int) -> int:
    """Rows per tile: all m when their a rows and outputs fit TILE_BYTES, else the most even
    count that does (at least 1)."""
    per = k + n * y_bytes
    if round4(m * k) + m * n * y_bytes <= TILE_BYTES:
        return m
    t = max(1, (TILE_BYTES - 3) // per)
    return t - t % 2 if t > 1 else 1


def geometry(heads: int, m: int, k: int, n: int, y_bytes: int, requant: bool, cores: int,
             arm: bool, a_step: int = 0, b_step: int = 0, a_off: int = 0) -> Geometry:
    """The layout of module docstring (`arm`: the kernels built for Arm, no DMA)."""
    dma = not arm
    mt = m_tile(m, k, n, y_bytes) if dma else m
    bt_off = 0
    bias_off = bt_off + round4(n * k)
    words_off = bias_off + 4 * n
    col_off = words_off + (16 * n if requant else 0)
    region_off = col_off + (cores * 4 * round4(k) if arm else 0)
    a_tile = round4(mt * k)
    region = a_tile + max(round4(k * n), mt * n * y_bytes) if dma else 0
    return Geometry(heads, m, k, n, y_bytes, a_step, b_step, m * n * y_bytes, a_off, dma, mt, bt_off,
                    bias_off, words_off, col_off, region_off, a_tile, round4(region_off + region))


def nest_geometry(nest: LoopNest, cores: int, arm: bool) -> Geometry:
    """The geometry of a matmul layer's loop nest (passes/lower.py: heads N·OY, rows OX, columns
    K, reduction C; y_bits 8 with a fused requantization, 32 without)."""
    yb = max(nest.y_bits, 8) // 8
    return geometry(nest.N * nest.OY, nest.OX, nest.C, nest.K, yb, yb == 1, cores, arm)


def scratch(nest: LoopNest, cores: int, k, c, oy, ox, arm: bool = False):
    """The L1 scratch bytes of `Geometry` (the layer runs untiled: sizes are the nest's)."""
    return 0 * np.asarray(k) * np.asarray(oy) + nest_geometry(nest, cores, arm).bytes


def own_dma(nest: LoopNest) -> tuple[tuple[str, int, int, int], ...]:
    """What the layer function moves on a module with L1 (Binding.own_dma: (operand, transfers,
    chunks, bytes)): in ("x"), the words once (a fused requantization), b's [k][n] per head and
    per row tile its a rows; out ("y"), per row tile its outputs — each one 1D transfer. The
    tiles do not depend on the cores (m_tile)."""
    g = nest_geometry(nest, 1, arm=False)
    tiles = -(-g.m // g.m_tile)
    words = 16 * g.n if g.y_bytes == 1 else 0
    ins = int(words > 0) + g.heads * (1 + tiles)
    outs = g.heads * tiles
    return (("x", ins, ins, words + g.heads * (g.k * g.n + g.m * g.k)),
            ("y", outs, outs, g.heads * g.m * g.n * g.y_bytes))


def _head_step(shape: tuple[int, ...], batch: tuple[int, ...], mat: int) -> int | None:
    """Bytes between heads of an operand of `shape` along the output's batch dims `batch`: its
    matrix size when it has every head, 0 when it has one, None otherwise."""
    own = tuple(shape[:-2])
    heads = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if int(np.prod(own, dtype=np.int64)) == 1:
        return 0
    full = (1,) * (len(batch) - len(own)) + own
    return mat if full == tuple(batch) and heads > 1 else None


def head_steps(layer: Layer, lg: LayerGraph) -> tuple[int | None, int | None]:
    """The bytes between heads of the MatMul's a and b (_head_step: its matrix size, 0 for one matrix
    every head reads, None otherwise); attention.py reads its scores' and context's."""
    a, b = (tuple(lg.tensors[t].shape) for t in layer.inputs)
    y = tuple(lg.tensors[layer.output].shape)
    return _head_step(a, y[:-2], a[-2] * a[-1]), _head_step(b, y[:-2], b[-2] * b[-1])


def _acc_bound(layer: Layer, lg: LayerGraph) -> int:
    """|acc| ≤ k·max|a|·128 (a uint8: values up to 255)."""
    a_max = 255 if lg.tensors[layer.inputs[0]].dtype == "uint8" else 128
    return layer.nest.C * a_max * 128


def variant(layer: Layer, lg: LayerGraph) -> str:
    """shift32 where every accumulator's k·acc + λ fits int32, else shift (module docstring)."""
    rq = layer.requant
    assert rq is not None
    k = int(np.abs(np.asarray(rq.multiplier, np.int64)).max())
    lam = 0 if rq.bias is None else int(np.abs(np.asarray(rq.bias, np.int64)).max())
    return "shift32" if k * _acc_bound(layer, lg) + lam <= INT32_MAX else "shift"


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The legality of module docstring, or the reason."""
    if not isinstance(layer.params, MatMulParams) or len(layer.inputs) != 2:
        return "not a MatMul of two activations"
    a, b = (lg.tensors[t].dtype for t in layer.inputs)
    y = lg.tensors[layer.output].dtype
    if a not in ("int8", "uint8") or b != "int8":
        return f"a MatMul of {a} by {b} (the cluster kernel takes int8 or uint8 by int8)"
    sa, sb = head_steps(layer, lg)
    if sa is None or sb is None:
        return "a MatMul whose batch broadcasts along some of its dims (every head or one per operand)"
    rq = layer.requant
    if rq is None:
        return None if y == "int32" else f"a MatMul into {y} without a requantization"
    if rq.mode != "shift" or y not in ("int8", "uint8"):
        return f"a MatMul requantized in {rq.mode} mode into {y} (shift into 8 bits)"
    d = np.asarray(rq.shift, np.int64)
    if d.min() < 0 or d.max() > 63:
        return "shift-mode right shifts outside 0..63"
    k = int(np.abs(np.asarray(rq.multiplier, np.int64)).max())
    lam = 0 if rq.bias is None else int(np.abs(np.asarray(rq.bias, np.int64)).max())
    if k >= 2**31 or lam >= 2**31:
        return "a requantization whose multiplier or offset does not fit int32"
    return None


def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None, arm: bool = False,
         cores: int = 8) -> str:
    """templates/mm_act.c.j2 for the layer (its check passed). `cores` only sizes the Arm rows'
    scratch offsets, which follow every other part (the template forks on the module's cores)."""
    a, b = (tuple(lg.tensors[t].shape) for t in layer.inputs)
    y = tuple(lg.tensors[layer.output].shape)
    sa, sb = head_steps(layer, lg)
    assert sa is not None and sb is not None, layer.name
    heads = int(np.prod(y[:-2], dtype=np.int64)) if len(y) > 2 else 1
    rq = layer.requant
    yb = dtype_bits(lg.tensors[layer.output].dtype) // 8
    g = geometry(heads, a[-2], a[-1], b[-1], yb, rq is not None, cores, arm, sa, sb,
                 u8_offset(lg, layer.inputs[0]))
    if rq is None:
        return render("mm_act.c.j2", g=g, kernel="tw_pulp_mm_act_i32", words=None, uniform=False,
                      rq=dict(zero_point=0, qmin=0, qmax=0))
    v = variant(layer, lg)
    words = np.stack(constants.words_of(rq, g.n, v), axis=1).reshape(-1)
    zp, qmin, qmax = output_clamp(layer, lg)
    uniform = bool((words.reshape(-1, 4) == words[:4]).all())
    return render("mm_act.c.j2", g=g, kernel=f"tw_pulp_mm_act_{v}", words=[int(w) for w in words], uniform=uniform,
                  rq=dict(zero_point=zp, qmin=qmin, qmax=qmax))


def bindings(cost, arm: bool = False, cores: int = 8) -> list[Binding]:
    """The binding per output width: 8 (requantized) and 32 (sums), a 8 bits; priced by `cost`
    (cost.py MatMulActCost)."""
    out: list[Binding] = []
    for y in (8, 32):
        out.extend(per_mode(FAMILY, cost, f"matmul_act_x8y{y}", Op.MATMUL, (None,), Precision(8, 0, y),
                            "other", check, emit=partial(emit, arm=arm, cores=cores), whole=True,
                            tiles=UNTILED, scratch=partial(scratch, arm=arm),
                            own_dma=None if arm else own_dma))
    return out
