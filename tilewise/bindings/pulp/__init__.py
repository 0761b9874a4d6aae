"""The pulp kernel family: XpulpV2 kernels for the RI5CY 8-core cluster (`c/`, copied into projects
as tw_pulp/ beside the portable family's tw_kernels/, which it builds on).

`bindings(cost)` returns the family's bindings for a module priced by `cost` (cost.py PulpKernels
with a target's coefficients, or a peer library's model), e.g. `pulp.bindings(PulpKernels())`. Its
own kernels, one binding per row and mode:

| binding            | op              | modes         | kernel (tw_pulp_*)        | consts     | L1 scratch           |
|--------------------|-----------------|---------------|---------------------------|------------|----------------------|
| conv2d_s8          | conv2d          | tflite, onnx, | conv2d_s8_<v> (im2col +   | k.fy.fx.c  | im2col_bytes         |
|                    |                 | shift         | 4x2), conv1x1_s8_<v>      |            |                      |
| depthwise_s8       | depthwise       | tflite, onnx, | depthwise_s8_<v>          | k.fy.fx    | depthwise_bytes      |
|                    |                 | shift         | (kernel-row SIMD)         |            | (_arm)               |
| fully_connected_s8 | fully_connected | tflite, onnx, | fully_connected_s8_<v>    | k.c        | —                    |
|                    |                 | shift         |                           |            |                      |
| fully_connected_s8w16 | fully_connected | tflite     | fully_connected_s8w16_<v> | k.c.w16 | —                 |
|                    |                 |               | (Arm only: int16 weights, |            |                      |
|                    |                 |               | widened.py)               |            |                      |
| conv2d_s8w16       | conv2d          | tflite, onnx, | conv{2d,1x1}_s8w16_<v>    | k.fy.fx.c. | im2col_bytes_w16     |
|                    |                 | shift         | (Arm only: int16 weights, | w16        |                      |
|                    |                 |               | 2x4 MatMul, widened.py)   |            |                      |
| add_s8, sub_s8     | add, sub        | tflite        | add_fold_tables +         | —          | tables_bytes         |
|                    |                 |               | add_fold_s8 (folded       |            |                      |
|                    |                 |               | tables, addfold.py), else |            |                      |
|                    |                 |               | add_tables + add_s8       |            |                      |
| add_onnx_s8        | add             | onnx          | add_onnx_exact_s8         | —          | —                    |
|                    |                 |               | (QLinearAdd in integers), |            |                      |
|                    |                 |               | else the portable float   |            |                      |
|                    |                 |               | tw_add_onnx_s8 / _u8      |            |                      |
| add_onnx_fold_s8   | add             | onnx          | add_fold_copy +           | —          | tables_bytes         |
|                    |                 |               | add_fold_s8 (the folded   |            |                      |
|                    |                 |               | tables of                 |            |                      |
|                    |                 |               | simple.onnx_fold, where   |            |                      |
|                    |                 |               | one is exact on every     |            |                      |
|                    |                 |               | pair of codes)            |            |                      |
| mul_s8             | mul             | tflite        | mul_s8                    | —          | —                    |
| avg_pool_s8        | avg_pool        | tflite        | avgpool_s8                | —          | —                    |
| max_pool_s8        | max_pool        | any           | maxpool_s8 (pv.max.b)     | —          | —                    |
| global_avg_pool_s8 | global_avg_pool | tflite, onnx  | global_avgpool_s8 /       | —          | —                    |
|                    |                 |               | _rq_s8_onnx               |            |                      |
| conv2d_sb_x{X}w{W}y{Y} | conv2d          | tflite, onnx, | conv2d_sb_w<W>_<v>    | k rows,    | subbyte.im2col_bytes |
|                        |                 | shift         | (packed 8/4/2 bits,   | lane order |                      |
|                        |                 |               | subbyte.py)           |            |                      |
| fully_connected_sb_x{X}w{W}y{Y} | fully_connected | tflite, onnx, | idem (1x1 on | idem       | idem                 |
|                                 |                 | shift         | 1x1)         |            |                      |
| matmul_act_x8y{8,32} | matmul (two     | none; its sums'   | tw_pulp_mm_act_<v>  | —      | mm_act.scratch       |
|                      | activations)    | shift requant     | (4x4 / 4x2 sdotp4   |        | (bᵀ, words, tiles)   |
|                      |                 | fused, or int32   | on bᵀ, mm_act.py)   |        |                      |

<v> is the requantization variant (constants.variant: tflite, tflite_right, tflite_single, shift, shift32,
onnx, onnx24), fixed at compile time. conv2d_s8, depthwise_s8 and fully_connected_s8 have a
second onnx binding each (conv2d_s8_onnx24, ...: the onnx24 variant, no range check per output,
priced by requant_onnx24), legal where constants.onnx24_fits (|acc| ≤ 2^24, scales < 1/4).
The weighted bindings take the pulp constants layout
(constants.py: 20 bytes per channel — bias and four precomputed requantization words; depthwise
weights channel-major); checks are the portable family's plus the 32-bit requantization's
(checks.py). Every other key of the portable family's table keeps the portable binding (its C is
copied with this family): the onnx average pool (float32 work, soft-float on rv32imc), the
onnx add where its integer form does not exist (elementwise.add_onnx_exact), the broadcast elementwise ops, softmax,
logistic, concat, reshape and the 16x8 kernels.

Tile rules: output-channel tiles at L3→L2 in multiples of 4 (the MatMul's channel blocks), as the
portable family; the kernels take any tile size.

Row-wise integer ops and transpose (issue 28): rows.py's bindings run the integer exports'
iLayerNorm, iRMSNorm, iSoftmax, ITAMax, iGELU, iHardswish and requant along the last axis, and
the transpose, on the cluster's cores through L1 (c/tw_pulp_rows.h), priced by rows_cost.py;
cluster modules only (stm32h7's core keeps the portable kernels).

LSTM (issue 28): lstm.py's lstm_cluster_s8 runs TFLite's integer LSTM with the cells split over
the cores and the gate products as SIMD dot products (c/tw_pulp_lstm.h), priced by
lstm_cost.py; on the cluster modules and on Arm (one core, the weights read in place), while a
cluster target's host core keeps the portable lstm_s8.

Sub-byte (issue 15): c/tw_pulp_subbyte.h is the conv2d / dense kernel with packed 8/4/2-bit
operands (PULP-NN mixed precision, seed 004 §3.3.1), bit-exact on the host and on GVSoC
(tests/test_pulp_subbyte.py, tests/test_pulp_subbyte_net.py) and measured by
bench/pulp_subbyte.py and bench/pulp_subbyte_fit.py; subbyte.py holds its byte layouts, legality,
constants, tile rules and cost. Its bindings (one per bit mix but 8/8/8 and mode) are listed
for the cluster modules only (not `arm`, not `host`); their keys carry sub-byte precisions, so
every 8-bit placement is as before.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from ...ir.layer import LoopNest
from ...ir.ops import Op
from .. import portable
from ..base import Binding, Precision, TileRules, per_mode, specialized
from ..portable import checks as portable_checks
from ..portable.common import S8
from . import attention, checks, constants, lstm, lstm16, mm_act, rows, simple, subbyte, svdf, weighted, widened
from .attention_cost import ATTENTION_M7, AttentionCost
from .common import FAMILY
from .cost import MM_ACT_M7, MatMulActCost
from .lstm_cost import ARM as LSTM_ARM
from .lstm_cost import ARM16 as LSTM16_ARM
from .lstm_cost import CLUSTER as LSTM_CLUSTER
from .lstm_cost import CLUSTER16 as LSTM16_CLUSTER
from .rows_cost import RowsCost
from .svdf_cost import CLUSTER as SVDF_CLUSTER


def _round4(v):
    return (np.asarray(v) + 3) // 4 * 4


def im2col_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_pulp_conv2d_s8's im2col buffers: two receptive fields of round4(FY·FX·c_t) bytes per core
    (none for a 1x1 conv, whose HWC pixels are already contiguous)."""
    zero = 0 * np.asarray(k) * np.asarray(oy)
    if nest.FY * nest.FX == 1:
        return zero
    return zero + cores * 2 * _round4(nest.FY * nest.FX * np.asarray(c))


def im2col_bytes_arm(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_pulp_conv2d_s8 / conv1x1_s8 built for Arm: per core the two columns unpacked to int16
    pairs, 4·round4(FY·FX·c_t) bytes, and for a kernel larger than 1x1 an int8 receptive field
    of round4(FY·FX·c_t) more (tw_pulp_matmul_arm.h)."""
    per = 5 if nest.FY * nest.FX > 1 else 4
    zero = 0 * np.asarray(k) * np.asarray(oy)
    return zero + cores * per * _round4(nest.FY * nest.FX * np.asarray(c))


def im2col_bytes_w16(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_pulp_conv2d_s8w16 / conv1x1_s8w16 (Arm, one core): the four pixels' columns unpacked
    to int16 pairs, 8·L + 4 bytes (L = FY·FX·c_t, FX·c_t a multiple of 4), and for a kernel larger
    than 1x1 an int8 receptive field of L bytes more (c/tw_pulp_conv.c)."""
    n = nest.FY * nest.FX * np.asarray(c)
    per = 9 if nest.FY * nest.FX > 1 else 8
    return 0 * np.asarray(k) * np.asarray(oy) + per * n + 4


def depthwise_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_pulp_depthwise_s8's per-core ring of FY planar input rows of RL bytes and its FY weight
    rows of W4 bytes: W4 = round4(FX), RL = round4((ox_t − 1)·SX + W4)."""
    w4 = int(_round4(nest.FX))
    rl = _round4((np.asarray(ox) - 1) * nest.SX + w4)
    return 0 * np.asarray(k) * np.asarray(oy) + cores * nest.FY * (rl + w4)


def depthwise_bytes_arm(nest: LoopNest, cores: int, k, c, oy, ox):
    """The scratch of tw_pulp_depthwise_s8 built for Arm (ARMv7E-M: its four-channel path's ring
    of FY padded rows of (ox_t − 1)·SX + FX pixels, two words each, per core; the planar path's
    ring when that is larger, for the channels left after the groups of four)."""
    ring = cores * nest.FY * 8 * ((np.asarray(ox) - 1) * nest.SX + nest.FX)
    return np.maximum(ring + 0 * np.asarray(k) * np.asarray(oy),
                      depthwise_bytes(nest, cores, k, c, oy, ox))


def tables_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """The add / sub tables of both inputs (simple.TABLES_BYTES, either form), shared by the
    cores."""
    return 0 * np.asarray(k) * np.asarray(oy) + simple.TABLES_BYTES


WEIGHTED = TileRules(l3_k_step=4)
#: the widened dense: input-channel tiles in whole steps of 4 (widened.py pads each tile's)
WIDENED = TileRules(l3_k_step=4, multiple=(("c", 4),))
#: the widened conv: the reduction never tiled (its kernel takes the whole of it)
WIDENED_CONV = TileRules(l3_k_step=4, whole=frozenset({"c"}),
                         why="the widened conv takes the whole reduction in one tile")


def bindings(cost, arm: bool = False, host: bool = False) -> tuple[Binding, ...]:
    """The pulp family priced by the kernel cost model `cost` (module docstring), then the portable
    bindings of the keys it does not rewrite; `arm`: the kernels are built for an ARMv7E-M core
    (their Arm DSP paths, tw_pulp_isa.h): their scratch (im2col_bytes_arm, depthwise_bytes_arm)
    and requant variants (constants.variant), onnx mode on the core's FPU where `cost` prices
    that form (requant_onnx_fpu) below the integer one (cost.onnx_on_fpu); `host`: a host core's
    module, with the portable family's host-only bindings (portable/host.py)."""
    own: list[Binding] = []
    fpu = arm and getattr(cost, "onnx_on_fpu", False)

    def add(name: str, op: Op, modes: tuple[str | None, ...], prec: Precision, kind: str, check,
            **kw) -> None:
        own.extend(per_mode(FAMILY, cost, name, op, modes, prec, kind, check, **kw))

    rq = ("tflite", "onnx", "shift")
    p8w, p8 = Precision(S8, 8, S8), Precision(S8, 0, S8)
    def isa(f):
        """emit function f for the ISA the kernels are built for (its requant variants)"""
        return partial(f, arm=True) if arm else f

    def wisa(f):
        """isa(f) of a weighted kernel's emit function: also its onnx mode's form (`fpu`)"""
        return partial(f, arm=True, fpu=fpu) if arm else f

    # the weighted kernels may hand their output to NE16 as u8 (weighted.py), not built for Arm
    u8 = {} if arm else {"output_offsets": (0, 128)}

    add("conv2d_s8", Op.CONV2D, rq, p8w, "conv", portable_checks.weighted_s8,
        emit=wisa(weighted.conv2d_s8), scratch=im2col_bytes_arm if arm else im2col_bytes,
        consts=constants.layout("k.fy.fx.c", arm, fpu=fpu), tiles=WEIGHTED, **u8)
    add("depthwise_s8", Op.DEPTHWISE, rq, p8w, "dwconv", portable_checks.weighted_s8,
        emit=wisa(weighted.depthwise_s8), scratch=depthwise_bytes_arm if arm else depthwise_bytes,
        consts=constants.layout("k.fy.fx", arm, fpu=fpu), tiles=WEIGHTED, **u8)
    add("fully_connected_s8", Op.FULLY_CONNECTED, rq, p8w, "fc", portable_checks.weighted_s8,
        emit=wisa(weighted.fully_connected_s8), consts=constants.layout("k.c", arm, fpu=fpu), tiles=WEIGHTED,
        **u8)
    for name, op, emit in (("add_s8", Op.ADD, simple.add_s8), ("sub_s8", Op.SUB, simple.sub_s8)):
        add(name, op, ("tflite",), p8, "add", checks.elementwise_s8, emit=isa(emit),
            scratch=tables_bytes)
    add("add_onnx_s8", Op.ADD, ("onnx",), p8, "add", portable_checks.elementwise_s8,
        emit=simple.add_onnx_s8)
    fold = getattr(cost, "onnx_fold", None)
    own.extend(per_mode(FAMILY, fold() if fold is not None else cost, "add_onnx_fold_s8", Op.ADD,
                        ("onnx",), p8, "add", simple.onnx_fold_reason, emit=simple.add_onnx_fold_s8,
                        scratch=tables_bytes))
    add("mul_s8", Op.MUL, ("tflite",), p8, "add", checks.elementwise_s8, emit=simple.mul_s8)
    add("avg_pool_s8", Op.AVG_POOL, ("tflite",), p8, "pool", portable_checks.avg_pool_tflite,
        emit=simple.avg_pool_s8)
    add("max_pool_s8", Op.MAX_POOL, (None,), p8, "pool", portable_checks.max_pool,
        emit=simple.max_pool_s8)
    add("global_avg_pool_s8", Op.GLOBAL_AVG_POOL, ("tflite",), p8, "gap", checks.gap_tflite,
        emit=simple.global_avg_pool_s8)
    add("global_avg_pool_onnx_s8", Op.GLOBAL_AVG_POOL, ("onnx",), p8, "gap",
        portable_checks.gap_onnx, emit=simple.global_avg_pool_onnx_s8)
    # onnx mode without the range check where the layer's accumulators and scales allow it
    # (constants.onnx24_fits, the layout's check): a binding of its own, priced by the model's
    # requant_onnx24
    fast = getattr(cost, "onnx24", None)
    fast_cost = fast() if fast is not None else cost
    for b in [b for b in own if b.key.mode == "onnx" and b.consts is not None]:
        own.append(replace(b, name=b.name + "24", cost=specialized(fast_cost, b.key),
                           emit=partial(b.emit, onnx24=True),
                           consts=constants.layout(b.consts.weight_layout, arm, onnx24=True)))
    if not (arm or host):
        # the sub-byte conv / dense on the cluster (subbyte.py; inert for 8-bit layers)
        own.extend(subbyte.bindings(cost, rq))
        # the integer exports' row-wise ops and the transpose through L1 (rows.py, issue 28)
        own.extend(rows.bindings(RowsCost()))
        # q·kᵀ → softmax → ·v depth first (attention.py; passes/fuse_attention.py fuses them)
        own.extend(attention.bindings(AttentionCost()))
        # TFLite's SVDF, the filters and units over the cores through L1 (svdf.py)
        own.extend(svdf.bindings(SVDF_CLUSTER))
    if arm or not host:
        # TFLite's LSTM, the cells over the cores, SIMD gate products (lstm.py, issue 28); a
        # cluster's host core keeps the portable lstm_s8
        own.extend(lstm.bindings(LSTM_ARM if arm else LSTM_CLUSTER, arm=arm))
        # its 16x8 form (TFLite Micro's kernel), the same structure on int16 words (lstm16.py)
        own.extend(lstm16.bindings(LSTM16_ARM if arm else LSTM16_CLUSTER, arm=arm))
    if arm:
        # the depth-first attention built for Arm (attention.py): the scores one tile at a time
        own.extend(attention.bindings(ATTENTION_M7, arm=True))
        # the dense layer with its weights widened to int16 at codegen (widened.py), beside the
        # int8 one of the same keys: priced by the model's fcw_* (the cheaper is kept); TFLite's
        # requantization only, the one fcw_neuron is fitted with (an onnx layer's float or
        # 24-bit requantization is not in it: the int8 kernels keep those)
        if getattr(cost, "fcw_step", 0.0) > 0:
            fcw = replace(cost, widened=True)
            own.extend(per_mode(FAMILY, fcw, "fully_connected_s8w16", Op.FULLY_CONNECTED, ("tflite",), p8w,
                                "fc", portable_checks.weighted_s8,
                                emit=wisa(weighted.fully_connected_s8w16),
                                consts=widened.layout(fpu), tiles=WIDENED))
        # the conv and 1x1 conv with int16 weights (widened.py conv_layout) likewise, priced by
        # the model's cw_* (the same requantizations as the int8 conv: tw_pulp_rq4c)
        if getattr(cost, "cw_step", 0.0) > 0:
            own.extend(per_mode(FAMILY, replace(cost, widened=True), "conv2d_s8w16", Op.CONV2D,
                                rq, p8w, "conv", portable_checks.weighted_s8,
                                emit=wisa(weighted.conv2d_s8w16), scratch=im2col_bytes_w16,
                                consts=widened.conv_layout(fpu), tiles=WIDENED_CONV))
    keys = {b.key for b in own}
    rest = tuple(b for b in portable.bindings(cost, host=host) if b.key not in keys)
    if arm or not host:
        # the MatMul of two activations (mm_act.py; on the cluster, or an Arm core's module),
        # priced by its own model (cost.py), beside the portable tw_int_matmul of the same keys
        # (which takes what its check refuses: a uint8 b, other widths)
        rest += tuple(mm_act.bindings(getattr(cost, "mm_act", None) or (MM_ACT_M7 if arm else MatMulActCost()), arm))
    return (*own, *rest)


__all__ = ["FAMILY", "bindings", "depthwise_bytes", "depthwise_bytes_arm", "im2col_bytes",
           "im2col_bytes_arm", "im2col_bytes_w16"]
