"""The pulp family's depth-first attention (issue 28): binding `attention_s8`, the layer
passes/fuse_attention.py makes of q·kᵀ → softmax → ·v, layer function templates/attention.c.j2,
cost model attention_cost.AttentionCost.

Jung et al. 2024 (anchors.md) tile multi-head attention depth first so that the L×L scores never
live whole; here, per head, per tile of `m_tile` rows of q, on every core of the cluster:
1. (per head) k's [d][L] and v's [L][dv] staged in L1 by DMA one after the other and transposed
   there into kᵀ and vᵀ with their uint8 corrections (tw_pulp_mm_act_transpose, mm_act.py);
2. (per tile) q's rows in by DMA; the scores tile [m_tile][L] = q·kᵀ requantized
   (tw_pulp_mm_act_<v>); the row op on it (each core its share of the rows: the row kernels of
   rows.py, tw_pulp_rows.h — iSoftmax, ITAMax); the context tile [m_tile][dv] = softmax·v
   requantized; its rows out by DMA.
Scores and softmax exist only as one tile in L1: the attention's L2 holds q, k, v and the output.

L1 scratch (`Geometry`, offsets 4-byte aligned): kᵀ round4(L·d) | vᵀ round4(dv·L) | corrections
4L and 4dv | words 16L and 16dv | a region that first stages k or v (max(d·L, L·dv)) and then holds
the tiles: q round4(m_tile·d), scores round4(m_tile·L), softmax round4(m_tile·L) (when there is a
row op), context m_tile·dv. m_tile: all the rows when the tiles take at most TILE_BYTES, else the
most even count that does.

Legal (`check`): each MatMul as the cluster's MatMul of two activations takes it alone
(mm_act.check: a int8 / uint8, b int8, shift requantization into 8 bits, heads every one or one
per operand), the row op as rows.py takes it (along the last axis), the output int8 or uint8.
Built for Arm (`arm`: the Cortex-M7, whose one core reads its SRAM in place, as mm_act.py's
Arm build): no DMA and no staging — kᵀ and vᵀ built from k and v where they are, q's rows read
and the context rows written in place, the row op by tw_int.h's own kernel; the scratch holds
kᵀ, vᵀ, the corrections, the unpacked rows of the SMLAD MatMul (4·round4(max(d, L)) bytes) and
the scores and softmax tiles. The scores still never exist whole: that is the memory saved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...ir.params import AttentionParams
from ...ir.tensor import dtype_bits
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from ..portable.common import u8_offset
from . import constants, mm_act, rows
from .common import FAMILY, render, round4
from .weighted import output_clamp

#: the bytes one row tile (q rows, scores, softmax, context rows) may take in L1
TILE_BYTES = 8192
UNTILED = TileRules(l3=False, untiled=True)


@dataclass(frozen=True)
class Geometry:
    """One attention's sizes, head steps (bytes), a-operand offsets, rows per tile and L1 offsets
    (module docstring)."""

    heads: int
    m: int
    d: int
    keys: int
    dv: int
    has_rows: bool
    dma: bool
    q_step: int
    k_step: int
    v_step: int
    y_step: int
    a1_off: int
    a2_off: int
    m_tile: int
    bt1_off: int
    bt2_off: int
    bias1_off: int
    bias2_off: int
    words1_off: int
    words2_off: int
    col_off: int
    region_off: int
    q_off: int
    s_off: int
    p_off: int
    o_off: int
    bytes: int


def _tile_bytes(r: int, d: int, keys: int, dv: int, has_rows: bool, dma: bool = True) -> int:
    scores = round4(r * keys) * (2 if has_rows else 1)
    return round4(r * d) + scores + r * dv if dma else scores


def m_tile(m: int, d: int, keys: int, dv: int, has_rows: bool, dma: bool = True) -> int:
    """Rows per tile: all m when their tiles fit TILE_BYTES, else the most even count that does
    (at least 1)."""
    if _tile_bytes(m, d, keys, dv, has_rows, dma) <= TILE_BYTES:
        return m
    t = max(1, m)
    while t > 1 and _tile_bytes(t, d, keys, dv, has_rows, dma) > TILE_BYTES:
        t -= 1
    return t - t % 2 if t > 1 else 1


def geometry(heads: int, m: int, d: int, keys: int, dv: int, has_rows: bool, arm: bool = False,
             steps=(0, 0, 0), a_offs=(0, 0)) -> Geometry:
    """The layout of module docstring (`arm`: the Arm build's)."""
    dma = not arm
    mt = m_tile(m, d, keys, dv, has_rows, dma)
    bt1 = 0
    bt2 = bt1 + round4(keys * d)
    bias1 = bt2 + round4(dv * keys)
    bias2 = bias1 + 4 * keys
    words1 = bias2 + 4 * dv
    words2 = words1 + (16 * keys if dma else 0)
    col = words2 + (16 * dv if dma else 0)
    region = col + (0 if dma else 4 * round4(max(d, keys)))
    q = region
    s = q + (round4(mt * d) if dma else 0)
    p = s + round4(mt * keys) if has_rows else s
    o = p + round4(mt * keys)
    if dma:
        total = region + max(round4(max(d * keys, keys * dv)), o - region + mt * dv)
    else:
        total = o
    return Geometry(heads, m, d, keys, dv, has_rows, dma, steps[0], steps[1], steps[2], m * dv, a_offs[0],
                    a_offs[1], mt, bt1, bt2, bias1, bias2, words1, words2, col, region, q, s, p, o, round4(total))


def nest_geometry(nest: LoopNest, has_rows: bool, arm: bool = False) -> Geometry:
    """The sizes of an attention layer's loop nest (fuse_attention.attention_layer: heads N·OY,
    rows OX, q's reduction C, keys IX, context columns K)."""
    return geometry(nest.N * nest.OY, nest.OX, nest.C, nest.IX, nest.K, has_rows, arm)


def _params(layer: Layer) -> AttentionParams:
    p = layer.params
    assert isinstance(p, AttentionParams), layer.name
    return p


def _view(layer: Layer, lg: LayerGraph) -> LayerGraph:
    """`lg` with the attention's inner tensors (the scores, the softmax) for its parts' checks."""
    return replace(lg, tensors={**lg.tensors, **_params(layer).inner})


def layer_geometry(layer: Layer, lg: LayerGraph, arm: bool = False) -> Geometry:
    p, view = _params(layer), _view(layer, lg)
    sq, sk = mm_act.head_steps(p.scores, view)
    _, sv = mm_act.head_steps(p.context, view)
    assert sq is not None and sk is not None and sv is not None, layer.name
    a2 = p.rows.output if p.rows is not None else p.scores.output
    return replace(nest_geometry(layer.nest, p.rows is not None, arm), q_step=sq, k_step=sk, v_step=sv,
                   a1_off=u8_offset(view, p.scores.inputs[0]), a2_off=u8_offset(view, a2))


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The legality of module docstring, or the reason."""
    p = layer.params
    if not isinstance(p, AttentionParams):
        return "not a depth-first attention"
    view = _view(layer, lg)
    for part in (p.scores, p.context):
        reason = mm_act.check(part, view)
        if reason is None and part.requant is None:
            reason = "a MatMul into int32 sums"
        if reason is not None:
            return f"its MatMul '{part.name}' is {reason}"
    if p.rows is not None:
        if p.rows.op not in (Op.INT_SOFTMAX, Op.ITA_MAX):
            return f"its row op '{p.rows.name}' is a {p.rows.op}"
        reason = rows._last_axis(p.rows, view)
        if reason is not None:
            return f"its row op '{p.rows.name}' is {reason}"
    if dtype_bits(lg.tensors[layer.output].dtype) != 8:
        return "an attention whose output is not 8-bit"
    return None


def scratch(has_rows: bool, arm: bool):
    """The L1 scratch bytes of `Geometry` (the layer runs untiled: sizes are the nest's)."""
    def f(nest: LoopNest, cores: int, k, c, oy, ox):
        return 0 * np.asarray(k) * np.asarray(oy) + nest_geometry(nest, has_rows, arm).bytes
    return f


def own_dma(has_rows: bool):
    """What the layer function moves (Binding.own_dma: (operand, transfers, chunks, bytes)): in,
    both words arrays once, per head k and v, per row tile q's rows; out, per row tile its context
    rows — each one 1-D transfer."""
    def f(nest: LoopNest) -> tuple[tuple[str, int, int, int], ...]:
        g = nest_geometry(nest, has_rows)
        tiles = -(-g.m // g.m_tile)
        ins = 2 + g.heads * (2 + tiles)
        outs = g.heads * tiles
        words = 16 * (g.keys + g.dv)
        return (("x", ins, ins, words + g.heads * (g.d * g.keys + g.keys * g.dv + g.m * g.d)),
                ("y", outs, outs, g.heads * g.m * g.dv))
    return f


def _words(part: Layer, view: LayerGraph, n: int) -> tuple[str, list[int], bool, dict]:
    rq = part.requant
    assert rq is not None
    v = mm_act.variant(part, view)
    words = np.stack(constants.words_of(rq, n, v), axis=1).reshape(-1)
    zp, qmin, qmax = output_clamp(part, view)
    return (f"tw_pulp_mm_act_{v}", [int(w) for w in words], bool((words.reshape(-1, 4) == words[:4]).all()),
            dict(zero_point=zp, qmin=qmin, qmax=qmax))


def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None, arm: bool = False) -> str:
    """templates/attention.c.j2 for the layer (its check passed)."""
    p, view = _params(layer), _view(layer, lg)
    g = layer_geometry(layer, lg, arm)
    k1, w1, u1, rq1 = _words(p.scores, view, g.keys)
    k2, w2, u2, rq2 = _words(p.context, view, g.dv)
    call, what = rows.softmax_call(p.rows, view, host=arm) if p.rows is not None else (None, "")
    return render("attention.c.j2", g=g, k1=k1, k2=k2, w1=w1, w2=w2, uniform1=u1, uniform2=u2, rq1=rq1,
                  rq2=rq2, call=call, what=what)


def bindings(cost, arm: bool = False) -> list[Binding]:
    """One binding per row op (int_softmax, ita_max, none: their scratch and cost differ), int8 or
    uint8 q (8 bits) into an 8-bit output; priced by `cost` (attention_cost.AttentionCost),
    built for Arm with `arm`."""
    out: list[Binding] = []
    for row in ("int_softmax", "ita_max", None):
        def chk(layer: Layer, lg: LayerGraph, row: str | None = row) -> str | None:
            p = layer.params
            if isinstance(p, AttentionParams) and (None if p.rows is None else str(p.rows.op)) != row:
                return f"an attention {'with a ' + str(p.rows.op) if p.rows is not None else 'without a row op'}"
            return check(layer, lg)
        name = f"attention_{row or 'norows'}_s8"
        out.extend(per_mode(FAMILY, cost.with_rows(row), name, Op.ATTENTION, (None,), Precision(8, 0, 8), "other",
                            chk, emit=partial(emit, arm=arm), whole=True, tiles=UNTILED,
                            scratch=scratch(row is not None, arm), own_dma=None if arm else own_dma(row is not None)))
    return out
