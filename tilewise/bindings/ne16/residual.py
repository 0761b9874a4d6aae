"""A conv fused with its residual add on NE16 (op conv2d_add, passes/fuse_residual.py): the
binding conv2d_s8_mulh_add.

The tile runs as conv2d_s8_mulh's (pipeline.py: NE16's row jobs, the cluster requantizing each
job's int32 outputs in the one-mulh form, requant.py), with the skip tensor's tile DMA'd into L1
beside the input (operand x2, tiled as the output: ir/operands.py). Where conv2d_s8_mulh stores
the int8 output q, tw_ne16_requant_s8_mulh_add (c/tw_ne16_kernels.c) applies TFLite's add to q
and the skip tensor's s in the pulp family's folded form (bindings/pulp/addfold.py, proven
exact for the layer on every pair of codes; the skip tensor read as int8, or as u8 by the
u8-input twin conv2d_s8_mulh_add_u8in, whose input is u8 too): out = clamp((T_q[q] + T_s[s]) >> shift) — the two
inputs' folded tables (2 × 256 int32, computed here, addfold.tables, held by the layer's C and
copied by the cores on the layer's first tile into the start of the L1 scratch,
tw_pulp_add_fold_copy, as the folded onnx add does) — in the same loop as the
requantization (one hardware loop per channel), and stores only that: the conv's int8
output never exists in memory. Exact where the conv's binding and the add's folded form are
(golden/layers.py computes the two layers).

`as_conv` is the fused layer seen as its conv (its weights, bias, requantization and nest,
without the skip operand; the graph view with the conv's output tensor), on which the NE16
conv's checks, constants and C are reused; `add_of` the add and its folded form. Cost:
bindings/ne16/cost.py `residual` (per output and core on top of the requantization, the tables
on the first tile).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import ResidualAddParams
from ..base import ConstLayout, LayerConstants
from ..portable import checks as portable_checks
from ..portable import elementwise
from ..portable.common import u8_offset
from ..pulp import addfold

#: L1 bytes of the two folded tables at the start of the scratch (bindings/pulp/simple.py)
TABLES_BYTES = 2 * 256 * 4
INT32_MAX = 2**31 - 1


def as_conv(layer: Layer, lg: LayerGraph) -> tuple[Layer, LayerGraph]:
    """The conv of conv2d_add `layer` (its own weights, bias, requantization and nest without
    the residual operand) and the graph view holding the conv's output tensor."""
    p = layer.params
    assert isinstance(p, ResidualAddParams), layer.name
    conv = replace(layer, op=Op.CONV2D, inputs=layer.inputs[:1], output=p.conv.output,
                   params=None, node_inputs=(), nest=replace(layer.nest, residual=False))
    return conv, replace(lg, tensors={**lg.tensors, **p.inner})


@dataclass(frozen=True)
class AddOf:
    """The fused add in the folded form (addfold.py): the conv output's table then the skip
    tensor's (256 int32 each, entry i for the code i − 128 — the skip's of a u8 skip tensor,
    whose byte the kernel reads as int8, for the code (int8)i: c/tw_ne16_kernels.h), the output
    shift, the clamp."""

    tables: tuple[int, ...]
    shift: int
    qmin: int
    qmax: int


def add_of(layer: Layer, lg: LayerGraph, skip_u8: bool = False,
           out_offset: int = 0) -> AddOf | None:
    """The fused add of conv2d_add `layer` in the folded form, None where addfold.fold finds no
    exact one. `skip_u8`: the skip tensor is stored as u8 (code + 128, the u8-input twin,
    partition/handoff.py): its table's entry i is for the code i − 128. `out_offset` 128: the
    output is stored as u8 — 128·2^shift added to the conv's table, the clamp + 128 (the shifted
    sum is then the int8 one + 128 exactly); None where a table or a sum would leave int32."""
    p = layer.params
    assert isinstance(p, ResidualAddParams), layer.name
    _, view = as_conv(layer, lg)
    k = elementwise.TFLITE["add"](p.add, view, p.add.inputs)
    f = addfold.fold(k.p, False)
    if f is None:
        return None
    ta, tb = addfold.tables(k.p, False, f)
    if p.add.inputs.index(p.conv.output) == 1:
        ta, tb = tb, ta
    ta = ta + (out_offset << f.shift)
    if max(abs(int(ta.min())), abs(int(ta.max()))) + int(np.abs(tb).max()) > INT32_MAX:
        return None
    # entry i: the code i − 128; a u8 skip's (its byte read as int8): the code (int8)i
    tb = tb[np.r_[128:256, 0:128]] if skip_u8 else tb
    return AddOf(tuple(int(v) for v in (*ta, *tb)), f.shift, int(k.p["qmin"]) + out_offset,
                 int(k.p["qmax"]) + out_offset)


def reason(layer: Layer, lg: LayerGraph) -> str | None:
    """Why the fused add cannot run in NE16's requantization pass (None: it can): int8 tensors
    (u8 storage only as the hand-offs between NE16 layers make it), a folded form exact on every
    pair of codes, its tables in int32 with the u8 output's offset too (the bindings offer both
    representations of the output)."""
    p = layer.params
    if not isinstance(p, ResidualAddParams):
        return "not a conv fused with a residual add"
    _, view = as_conv(layer, lg)
    why = portable_checks.elementwise_s8(p.add, view)
    if why is not None:
        return why
    if any(u8_offset(view, t) for t in (*p.add.inputs, p.add.output)):
        return "the add's tensors are uint8 (the fused add takes int8)"
    if add_of(layer, lg) is None:
        return "the add has no folded form exact on every pair of codes (bindings/pulp/addfold.py)"
    if add_of(layer, lg, out_offset=128) is None:
        return "the add's folded tables leave int32 with a u8 output's offset"
    return None


def _constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """conv2d_s8_mulh's blob of the conv (constants.py `mulh_constants`)."""
    from .constants import mulh_constants

    return mulh_constants(*as_conv(layer, lg), s)


def _check(layer: Layer, lg: LayerGraph) -> str | None:
    from .constants import check

    return check(*as_conv(layer, lg))


def _layout() -> ConstLayout:
    from . import constants

    return replace(constants.MULH, build=_constants, check=_check)


#: the conv's constants as conv2d_s8_mulh lays them out (the add has none)
CONSTS = _layout()
