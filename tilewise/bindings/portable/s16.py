"""The portable family's 16x8 kernels: the `compute()` of int16 conv, dense, add and sub layers.

16x8 layers (TFLite: int16 activations, int8 weights, int64 or int32 bias, golden Requant.wide =
TFLite's int64 MultiplyByQuantizedMultiplier, golden/fixedpoint.py multiply_by_quantized_multiplier_64)
map to the kernels of tw_kernels/tw_s16.h:

| layer op                    | kernel                           | golden                                              |
|-----------------------------|----------------------------------|-----------------------------------------------------|
| conv2d (any FY·FX)          | tw_conv2d_s16                    | golden/conv.py conv2d_acc + requant.py (wide)       |
| depthwise (multiplier 1)    | tw_depthwise_s16                 | golden/conv.py conv2d_acc (groups = C) + requant.py |
|                             |                                  | (wide)                                              |
| avg_pool (tflite), max_pool | tw_avgpool_s16 / tw_maxpool_s16  | golden/pool.py                                      |
| fully_connected             | tw_fully_connected_s16           | golden/conv.py dense_acc + requant.py (wide, "real" |
|                             |                                  | rounding: round(double(acc)·s_x·s_w/s_y) as         |
|                             |                                  | LiteRT's reference FC)                              |
| add / sub / mul (tflite,    | tw_add_s16 / tw_sub_s16 /        | golden/elementwise.py add / sub / mul               |
| same-shaped operands)       | tw_mul_s16                       |                                                     |
| reshape                     | byte copy (untiled.py)           | —                                                   |

The integer exports (NEMO's unclipped residual sums feeding a conv) run the same conv, depthwise
and dense kernels with a shift or div requantization (golden/requant.py) to int16 or 8-bit
outputs (`*_s16_int`, checks.weighted_s16_int): the per-channel block [bias | k | λ] of
constants.py, shift mode's d an array of the layer file.

Broadcast add / sub / mul and pad on int16 tensors are host-core bindings (host.py), the int16
softmax an untiled one (untiled.py); layers tiled at L3->L2 and the non-wide int32-bias 16x8 form are
refused by the binding's check (checks.py) at partition time.

The kernels accumulate in int64 but keep C-tile partial sums in the schedule's int32 psum buffer
(the binding's psum_bits = 32): the binding's tile rules tile C only when |bias| + 32768·Σ|w| fits
int32 for every output channel (checks.s16_rules), which bounds every partial sum, so the int32
psum is exact. Templates: weighted_s16.c.j2 (requant16.c.j2) extended by conv2d_s16 and
fully_connected_s16.c.j2; add_s16.c.j2 (PARAMS: add_params.j2, as the int8 add's).
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.params import MaxPoolParams, TfliteAddSubParams, TfliteAvgPoolParams, TfliteMulParams
from ...ir.tensor import dtype_bits
from ..base import LayerConstants
from .checks import INT32_MAX, acc_bound
from .common import render, u8_offset, zero_point
from .elementwise import add_sub_params


def _weighted(layer: Layer, kernel: str, template: str) -> str:
    rq = layer.requant
    assert rq is not None and rq.wide, f"layer '{layer.name}' passed checks.weighted_s16"
    real = None
    if rq.rounding == "real":
        assert rq.scale is not None
        # repr: the shortest decimal that reads back as the same double (C's strtod rounds exactly)
        real = [repr(float(v)) for v in np.broadcast_to(np.asarray(rq.scale, np.float64),
                                                         (layer.nest.K,))]
    return render(template, kernel=kernel, zero_point=int(rq.zero_point), qmin=int(rq.qmin),
                  qmax=int(rq.qmax), real_scales=real, acc32=int(acc_bound(layer) <= INT32_MAX))


def conv2d_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _weighted(layer, "tw_conv2d_s16", "conv2d_s16.c.j2")


def depthwise_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _weighted(layer, "tw_depthwise_s16", "depthwise_s16.c.j2")


def _weighted_int(layer: Layer, lg: LayerGraph, kernel: str, template: str) -> str:
    """The integer exports' 16x8 layers (checks.weighted_s16_int): shift / div requantization
    (per-channel block [bias | k | λ], shift mode's d in the layer file), int16 or 8-bit output
    as stored (uint8: − 128)."""
    rq = layer.requant
    assert rq is not None and rq.mode in ("shift", "div"), f"layer '{layer.name}' passed its check"
    off = u8_offset(lg, layer.output)
    k = layer.nest.K
    int_rq = dict(mode=rq.mode, post_mult=int(rq.post_multiplier), divisor=int(rq.divisor),
                  trunc=rq.division == "trunc",
                  shift_d=[int(v) for v in np.broadcast_to(np.asarray(rq.shift).reshape(-1), (k,))])
    return render(template, kernel=kernel, zero_point=int(rq.zero_point) - off, qmin=int(rq.qmin) - off,
                  qmax=int(rq.qmax) - off, real_scales=None, int_rq=int_rq,
                  out_bytes=dtype_bits(lg.tensors[layer.output].dtype) // 8, pad_value=int(layer.pad_value),
                  acc32=int(acc_bound(layer) <= INT32_MAX))


def conv2d_s16_int(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _weighted_int(layer, lg, "tw_conv2d_s16", "conv2d_s16.c.j2")


def depthwise_s16_int(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _weighted_int(layer, lg, "tw_depthwise_s16", "depthwise_s16.c.j2")


def fully_connected_s16_int(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _weighted_int(layer, lg, "tw_fully_connected_s16", "fully_connected_s16.c.j2")


def _pool(layer: Layer, lg: LayerGraph, kernel: str) -> str:
    a = layer.params
    assert isinstance(a, (TfliteAvgPoolParams, MaxPoolParams))
    return render("pool_s16.c.j2", kernel=kernel, qmin=max(-32768, int(a.qmin)),
                  qmax=min(32767, int(a.qmax)))


def avg_pool_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _pool(layer, lg, "tw_avgpool_s16")


def max_pool_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _pool(layer, lg, "tw_maxpool_s16")


def fully_connected_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _weighted(layer, "tw_fully_connected_s16", "fully_connected_s16.c.j2")


def _add_sub(layer: Layer, lg: LayerGraph, kernel: str) -> str:
    """tw_add_params_t of the int16 operands (zero points as they are: int16 is stored as is)."""
    a = layer.params
    assert isinstance(a, TfliteAddSubParams)
    zps = tuple(zero_point(lg, t) for t in (*layer.inputs, layer.output))
    return render("add_s16.c.j2", kernel=kernel, params="add_params.j2", p=add_sub_params(a, zps, 0))


def add_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _add_sub(layer, lg, "tw_add_s16")


def sub_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _add_sub(layer, lg, "tw_sub_s16")


def mul_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_mul_params_t of the int16 operands (TFLite's MUL: golden/elementwise.py mul)."""
    a = layer.params
    assert isinstance(a, TfliteMulParams)
    za, zb, zo = (zero_point(lg, t) for t in (*layer.inputs, layer.output))
    return render("add_s16.c.j2", kernel="tw_mul_s16", params="mul_params.j2",
                  p=dict(a_zp=za, b_zp=zb, out_mult=int(a.output_multiplier),
                         out_shift=int(a.output_shift), out_zp=zo, qmin=int(a.qmin),
                         qmax=int(a.qmax)))
