"""The NE16 kernel family: GAP9's accelerator running conv 3×3 / 1×1, depthwise 3×3 and dense
layers, the cluster converting its input and requantizing its output (`c/`, copied into projects
as tw_ne16/ beside tw_pulp/ and tw_kernels/, which it builds on).

| binding            | op              | modes               | job (tw_ne16.h)       | consts             | L1 scratch |
|--------------------|-----------------|---------------------|-----------------------|--------------------|------------|
| conv2d_s8          | conv2d 3×3, 1×1 | tflite, onnx, shift | CONV3X3 / CONV1X1     | ne16               | ne16_bytes |
| depthwise_s8       | depthwise 3×3   | tflite, onnx, shift | DEPTHWISE3X3          | ne16               | ne16_bytes |
| fully_connected_s8 | fully_connected | tflite, onnx, shift | CONV1X1 on a          | ne16               | ne16_bytes |
|                    |                 |                     | one-pixel map         |                    |            |
| *_nq (the three)   | as above        | shift               | the same, with        | ne16 (scale, bias) | ne16_bytes |
|                    |                 |                     | norm-quant            |                    |            |
| *_mulh (the three) | as above        | tflite              | the same, requant in  | ne16 (mulh words)  | ne16_bytes |
|                    |                 |                     | one mulh (requant.py) |                    |            |
| *_u8in (all six)   | as above        | as above            | the same, input       | as above           | as above   |
|                    |                 |                     | already u8            |                    |            |
| conv2d_s8_im2col<p>| conv2d NE16     | tflite (one mulh)   | CONV1X1 over the      | ne16 (mulh words,  | im2col     |
| _mulh (p = 1..16)  | does not take   |                     | cluster's u8 im2col   | 1×1 weights)       | .scratch   |
| conv2d_s8_mulh_add | conv2d_add (a   | tflite (one mulh,   | CONV3X3 / CONV1X1     | ne16 (mulh words)  | ne16_bytes |
|                    | conv + its      | the add folded)     |                       |                    | + tables   |
|                    | residual add)   |                     |                       |                    |            |

conv2d_s8_mulh_add (residual.py): a conv and the residual add that alone reads its output
(passes/fuse_residual.py), the add applied by the cores as they requantize (its skip tensor
DMA'd into L1 as operand x2), 8-bit weights, the output int8 or u8; its _u8in twin reads both
inputs stored as u8.
The im2col bindings (im2col.py: any other kernel, stride or padding of an 8-bit conv, p the
padding of each tap's channels) exist for 8-bit weights only. The table holds for 8-bit weights;
each other row exists again for weights of b = 2..7 bits, named with
`_w<b>` after the `_s8` (conv2d_s8_w4, conv2d_s8_w4_nq, conv2d_s8_w4_nq_u8in, ...): the binding key's
weight precision is the layer's LoopNest.w_bits (never inferred from the weights' values; checks.py
refuses weights outside it), the constants hold b bit planes (constants.py), the job is programmed
with b (tw_ne16_task_init) and priced with b planes (bindings/ne16/cost.py `weight_bits`).

A tile: the cores convert the int8 input tile to u8 (x + 128) in the scratch; core 0 programs the
tile's row jobs (tw_ne16_task_*, tw_ne16_task_rows, dispatch, wait), each writing int32
accumulators into one of two scratch buffers, and while NE16 runs one the cluster's cores add the
bias (−128·Σw folded in) to the previous one's and requantize them with the pulp kernels' words
in the layer's mode (exact for every mode): pipeline.py. TFLite-mode layers whose accumulators
fit may take the *_mulh bindings instead: the same, requantized in one mulh per output (requant.py).
A shift-mode layer whose requantization NE16's norm-quant computes exactly (normquant.py: one
shift, an int8 or ReLU clamp, nothing leaving int32) may take the *_nq binding instead: the job
writes the int8 outputs itself, no cluster pass.
The *_u8in twins read an input tensor its producer stored as u8 (`Binding.input_offset` 128:
partition hands a tensor over as u8 when every consumer is NE16, partition/handoff.py): the job
reads the tile in place, no conversion (their cost model without `convert`), on the tiles of
their int8 binding (`Binding.tiles_of`; the same scratch is reserved). The cluster-
requantized bindings can write their output as u8 too (`output_offsets`: zero point and clamp +
128, as the pulp kernels, bindings/pulp/weighted.py).
What the job computes: arith.py (numpy) and c/tw_ne16.c (the functional model the host HAL runs),
tests/test_ne16.py. Legality: checks.py; cost: bindings/ne16/cost.py; constants: constants.py.
Input channels stay whole in a tile (no partial sums); depthwise k tiles are multiples of 16. Any
channel count: the weights are stored padded to 16 channels (LoopNest.w_c_block).
"""

from __future__ import annotations

from dataclasses import fields, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...templating import render as _render
from ..base import Binding, Family, LayerConstants, Precision, TileRules, per_mode
from ..portable.common import S8
from ..portable.common import TEMPLATES as PORTABLE_TEMPLATES
from ..portable.weighted import stored_pad
from ..pulp import constants as pulp_constants
from ..pulp.common import FAMILY as PULP
from ..pulp.common import TEMPLATES as PULP_TEMPLATES
from ..pulp.weighted import output_clamp
from . import arith, checks, constants, im2col, normquant, pipeline, requant, residual

FAMILY = Family(name="ne16", c_dir=Path(__file__).resolve().parent / "c", project_dir="tw_ne16",
                header="tw_ne16_kernels.h", requires=(PULP,), hal_headers=("tw_job_geometry.h",),
                jobs=("tw_ne16.h", "tw_ne16_jobs"))
TEMPLATES = Path(__file__).resolve().parent / "templates"
#: tw_ne16.h job kinds
KIND = {"conv3x3": "TW_NE16_CONV3X3", "dw3x3": "TW_NE16_DEPTHWISE3X3",
        "conv1x1": "TW_NE16_CONV1X1"}


def ne16_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """The tile's int32 accumulator buffers (pipeline.py `acc_words`: two of one row job's
    outputs when the tile has several row jobs; reserved by the norm-quant bindings too, which
    write int8 straight to the output tile) and its u8 input (its rows × columns × channels,
    depthwise the k_t channels)."""
    k, c, oy, ox = (np.asarray(v) for v in (k, c, oy, ox))
    iy, ix = (oy - 1) * nest.SY + nest.FY, (ox - 1) * nest.SX + nest.FX
    ch = k if nest.kind == "dwconv" else c
    return 4 * pipeline.acc_words(k, oy, ox) + (iy * ix * ch + 3) // 4 * 4


def _emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
          norm_quant: bool = False, u8_input: bool = False, out_offset: int = 0,
          mulh: bool = False, data_pad: bool = False, im2col: bool = False,
          residual_data: dict | None = None) -> str:
    """compute() of the layer's NE16 binding (templates/ne16_s8.c.j2); `norm_quant`: NE16
    requantizes (normquant.py), else the cluster does; `u8_input`: the input tile is u8 already;
    `out_offset` 128: the output is stored as u8 (module docstring); `mulh`: the cluster
    requantizes in the one-mulh form (requant.py); `data_pad`: the bottom and right padding are
    written into the u8 tile (`bindings` with `data_pad`); `residual_data`: the fused add's
    (`_emit_residual`)."""
    assert consts is not None and consts.const_bytes == pulp_constants.BYTES_PER_CHANNEL
    n = layer.nest
    nq = None
    if norm_quant:
        _, _, shift, relu = normquant.words(layer, lg)
        nq = dict(shift=shift, relu=int(relu))
    kind = ("dw3x3" if layer.op == Op.DEPTHWISE else
            "conv3x3" if (n.FY, n.FX) == (3, 3) and not im2col else "conv1x1")
    cols = None
    if im2col:
        from . import im2col as im2col_mod
        cols = dict(fy=n.FY, fx=n.FX, sy=n.SY, sx=n.SX, c_pad=im2col_mod.c_pad(n),
                    cols=int(im2col_mod.cols(n)))
    assert not (norm_quant and out_offset), "norm-quant writes int8"
    zp, qmin, qmax = output_clamp(layer, lg, out_offset)
    return _render("ne16_s8.c.j2", (TEMPLATES, PULP_TEMPLATES, PORTABLE_TEMPLATES), u8_input=u8_input,
                   kind=KIND[kind], w_bits=n.w_bits, stride=1 if im2col else n.SY, pad_u8=stored_pad(layer, lg) + 128,
                   dense=layer.op == Op.FULLY_CONNECTED, depthwise=layer.op == Op.DEPTHWISE,
                   kernel=requant.kernel(layer, lg, mulh),
                   rq=dict(zero_point=zp, qmin=qmin, qmax=qmax), norm_quant=nq,
                   jobs_max=pipeline.JOBS_MAX, data_pad=data_pad, im2col=cols,
                   residual=residual_data)


def _emit_residual(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                   data_pad: bool = False, u8_input: bool = False, out_offset: int = 0) -> str:
    """compute() of conv2d_s8_mulh_add (residual.py): conv2d_s8_mulh's, with the fused add;
    `u8_input`: its twin's, both inputs stored as u8; `out_offset` 128: the add's output stored
    as u8 (the conv's stays int8 in L1)."""
    a = residual.add_of(layer, lg, skip_u8=u8_input, out_offset=out_offset)
    assert a is not None, layer.name
    conv, view = residual.as_conv(layer, lg)
    return _emit(conv, view, consts, mulh=True, data_pad=data_pad, u8_input=u8_input,
                 residual_data=dict(tables=a.tables, shift=a.shift, qmin=a.qmin, qmax=a.qmax))


def _residual_scratch(nest: LoopNest, cores: int, k, c, oy, ox):
    """The add's two folded tables (residual.TABLES_BYTES, first), then `ne16_bytes`."""
    return residual.TABLES_BYTES + ne16_bytes(nest, cores, k, c, oy, ox)


def _residual_check(layer: Layer, lg: LayerGraph) -> str | None:
    """The fused add's (residual.py), then the NE16 conv's one-mulh checks on the conv."""
    why = residual.reason(layer, lg)
    if why is not None:
        return why
    return _mulh_check(*residual.as_conv(layer, lg))


def _residual_bindings(cost: Any, data_pad: bool) -> list[Binding]:
    """conv2d_s8_mulh_add (module docstring), priced as conv2d_s8_mulh plus the fused add, its
    output int8 or u8; but with `data_pad` its twin conv2d_s8_mulh_add_u8in, which reads both
    inputs stored as u8."""
    fused = partial(per_mode, FAMILY, op=Op.CONV2D_ADD, modes=("tflite",),
                    precision=Precision(S8, 8, S8), kind="conv", check=_residual_check,
                    consts=residual.CONSTS, scratch=_residual_scratch,
                    tiles=TileRules(l3_k_step=4), layer_rules=_rules, jobs_per_tile=1,
                    jobs_of_rows=pipeline.jobs)
    cost = replace(cost, residual=True)
    if data_pad:                # no u8 hand-off (`bindings`)
        return fused(cost, name="conv2d_s8_mulh_add", emit=partial(_emit_residual, data_pad=True))
    out = fused(cost, name="conv2d_s8_mulh_add", emit=_emit_residual, output_offsets=(0, 128))
    out += _twins(fused(replace(cost, convert=0.0), name="conv2d_s8_mulh_add_u8in",
                        emit=partial(_emit_residual, u8_input=True), input_offset=128,
                        output_offsets=(0, 128)))
    return out


def _rules(layer: Layer, rules: TileRules) -> TileRules:
    """Input channels whole (the job reads them all); depthwise k tiles in blocks of 16."""
    r = rules.with_whole("c", why="NE16 takes all input channels of a tile in one job")
    if layer.op == Op.DEPTHWISE:
        return TileRules(whole=r.whole, multiple=(("k", arith.TP_IN),), l3_k_step=arith.TP_IN,
                         why="NE16 takes depthwise channels in blocks of 16")
    return r


def bindings(cost: Any, data_pad: bool = False) -> tuple[Binding, ...]:
    """NE16's bindings priced by `cost` (bindings/ne16/cost.py `Ne16Kernels`): the table of the
    module docstring once per weight bit count 2..8 (checks.W_BITS; the binding key's weight
    precision; 8 bits keep the names above, b < 8 bits add `_w<b>`: conv2d_s8_w4_nq ...).
    `data_pad`: for an engine whose own bottom / right padding is only right on whole 3×3 output
    subtiles (GVSoC's NE16, targets/pulp_open_ne16.py): the cores write that padding into the u8
    tile they convert (templates/ne16_s8.c.j2), and the *_u8in twins, which read the producer's
    tile in place with no room for it, are left out."""
    out: list[Binding] = []
    for bits in checks.W_BITS:
        out += _bindings(replace(cost, weight_bits=bits), bits, data_pad)
    return tuple(out)


def _bindings(cost: Any, bits: int, data_pad: bool = False) -> list[Binding]:
    """NE16's bindings of `bits`-bit weights priced by `cost` (`bindings`)."""
    emit = partial(_emit, data_pad=True) if data_pad else _emit
    common = dict(precision=Precision(S8, bits, S8), scratch=ne16_bytes,
                  tiles=TileRules(l3_k_step=4), layer_rules=_rules, jobs_per_tile=1)
    add = partial(per_mode, FAMILY, cost, modes=("tflite", "onnx", "shift"), check=checks.ne16,
                  emit=emit, consts=constants.LAYOUT, jobs_of_rows=pipeline.jobs, **common)
    nq = partial(per_mode, FAMILY, replace(cost, norm_quant=True), modes=("shift",),
                 check=_normquant_check, emit=partial(emit, norm_quant=True),
                 consts=constants.NORMQUANT, **common)
    # the twins reading a u8 input in place (module docstring)
    add_u8 = partial(per_mode, FAMILY, replace(cost, convert=0.0),
                     modes=("tflite", "onnx", "shift"), check=checks.ne16,
                     emit=partial(_emit, u8_input=True), consts=constants.LAYOUT, input_offset=128,
                     output_offsets=(0, 128), jobs_of_rows=pipeline.jobs, **common)
    nq_u8 = partial(per_mode, FAMILY, replace(cost, norm_quant=True, convert=0.0),
                    modes=("shift",), check=_normquant_check,
                    emit=partial(_emit, norm_quant=True, u8_input=True),
                    consts=constants.NORMQUANT, input_offset=128, **common)
    # the cluster's requantization in one mulh (requant.py): tflite-mode layers that fit it
    mulh_cost = replace(cost, requant_tflite=cost.requant_mulh)
    mulh = partial(per_mode, FAMILY, mulh_cost, modes=("tflite",), check=_mulh_check,
                   emit=partial(emit, mulh=True), consts=constants.MULH,
                   jobs_of_rows=pipeline.jobs, **common)
    mulh_u8 = partial(per_mode, FAMILY, replace(mulh_cost, convert=0.0), modes=("tflite",),
                      check=_mulh_check, emit=partial(_emit, u8_input=True, mulh=True),
                      consts=constants.MULH, input_offset=128, output_offsets=(0, 128),
                      jobs_of_rows=pipeline.jobs, **common)
    out: list[Binding] = []
    if bits == 8:       # convs NE16 does not take, as a 1×1 job over the cluster's im2col
        out += _im2col_bindings(mulh_cost, emit, data_pad)
        out += _residual_bindings(mulh_cost, data_pad)     # a conv and its residual add
    w = "" if bits == 8 else f"_w{bits}"
    for name, op, kind in ((f"conv2d_s8{w}", Op.CONV2D, "conv"),
                           (f"depthwise_s8{w}", Op.DEPTHWISE, "dwconv"),
                           (f"fully_connected_s8{w}", Op.FULLY_CONNECTED, "fc")):
        if data_pad:            # no u8 hand-off: no u8in twins, no u8 output (`bindings`)
            out += [*add(name=name, op=op, kind=kind), *nq(name=f"{name}_nq", op=op, kind=kind),
                    *mulh(name=f"{name}_mulh", op=op, kind=kind)]
            continue
        out += [*add(name=name, op=op, kind=kind, output_offsets=(0, 128)),
                *nq(name=f"{name}_nq", op=op, kind=kind),
                *_twins(add_u8(name=f"{name}_u8in", op=op, kind=kind)),
                *_twins(nq_u8(name=f"{name}_nq_u8in", op=op, kind=kind)),
                *mulh(name=f"{name}_mulh", op=op, kind=kind, output_offsets=(0, 128)),
                *_twins(mulh_u8(name=f"{name}_mulh_u8in", op=op, kind=kind))]
    return out


def _im2col_bindings(cost: Any, emit: Any, data_pad: bool) -> list[Binding]:
    """conv2d_s8_im2col<c_pad>_mulh, one per input-channel padding (im2col.py)."""
    out: list[Binding] = []
    model = im2col.Ne16Im2col(**{f.name: getattr(cost, f.name) for f in fields(cost)})
    for pad in im2col.C_PADS:
        out += per_mode(FAMILY, model, name=f"conv2d_s8_im2col{pad}_mulh", op=Op.CONV2D,
                        modes=("tflite",), precision=Precision(S8, 8, S8), kind="conv",
                        check=partial(_im2col_check, pad=pad), emit=partial(emit, mulh=True,
                                                                            im2col=True),
                        consts=im2col.layout(pad), scratch=im2col.scratch,
                        tiles=TileRules(l3_k_step=4), layer_rules=_rules, jobs_per_tile=1,
                        jobs_of_rows=pipeline.jobs,
                        output_offsets=(0,) if data_pad else (0, 128))
    return out


def _im2col_check(layer: Layer, lg: LayerGraph, pad: int) -> str | None:
    return im2col.reason(layer, lg, pad)


def _twins(bs: list[Binding]) -> list[Binding]:
    """The u8-input twins take their int8 binding's tiles (Binding.tiles_of)."""
    return [replace(b, tiles_of=b.name.replace("_u8in", "")) for b in bs]


def _mulh_check(layer: Layer, lg: LayerGraph) -> str | None:
    """NE16's checks and the one-mulh requantization's (requant.py)."""
    return checks.ne16(layer, lg) or requant.reason(layer, lg)


def _normquant_check(layer: Layer, lg: LayerGraph) -> str | None:
    """NE16's checks and its norm-quant's (normquant.py)."""
    return checks.ne16(layer, lg) or normquant.reason(layer, lg)


__all__ = ["FAMILY", "arith", "bindings", "ne16_bytes", "pipeline"]
