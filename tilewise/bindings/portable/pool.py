"""The portable family's int8 pooling kernels: the `compute()` of average, max and global average
pooling layers.

| layer op (mode)                   | kernel                        | golden                          |
|-----------------------------------|-------------------------------|---------------------------------|
| avg_pool (tflite), max_pool (any) | tw_avgpool_s8 / tw_maxpool_s8 | golden/pool.py, onnx_ops.py     |
| avg_pool (onnx)                   | tw_avgpool_onnx_s8            | golden/onnx_ops.py avg_pool     |
| global_avg_pool (tflite mean)     | tw_global_avgpool_s8          | golden/pool.py mean             |
| global_avg_pool (onnx)            | tw_global_avgpool_rq_s8       | golden/onnx_ops.py mean         |

Templates: pool_s8.c.j2 (extended by avg_pool_onnx_s8.c.j2), global_avg_pool_s8.c.j2 and
global_avg_pool_onnx_s8.c.j2 (the fields they share: global_avg_pool.j2).

uint8 (common.py): the input and output are stored alike (checks.py), so the max pool and both
global average pools are exact on the biased storage with their zero points and clamp lowered by
128. The onnx average pool adds y_zp in float32, so it gets y_zp and its clamp in the value domain
and an output offset. The tflite average pool rounds the raw window sum half away from zero, which
a shift of every value by −128 does not commute with, so its binding refuses uint8 (the family has
no binding for an op not listed).
"""

from __future__ import annotations

import numpy as np

from ...golden.pool import _mean_scale
from ...ir.layer import Layer, LayerGraph
from ...ir.params import MaxPoolParams, OnnxAvgPoolParams, OnnxMeanParams, TfliteAvgPoolParams, TfliteMeanParams
from ...ir.tensor import dtype_range
from ..base import LayerConstants
from .common import render, u8_offset, zero_point


def _storage_offset(layer: Layer, lg: LayerGraph) -> int:
    """The offset of the input's and output's storage (alike: checks._same_storage)."""
    off = u8_offset(lg, layer.output)
    assert u8_offset(lg, layer.inputs[0]) == off, f"layer '{layer.name}' passed its check"
    return off


def _clamp(layer: Layer, lg: LayerGraph, qmin: int, qmax: int) -> tuple[int, int]:
    """[qmin, qmax] within the output dtype's range, in the value domain."""
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    return max(lo, int(qmin)), min(hi, int(qmax))


def pool_call(layer: Layer, lg: LayerGraph, kernel: str) -> str:
    """compute() of an average (tflite) or max pooling layer calling `kernel` (tw_pool.h's
    contract: tw_avgpool_s8, tw_maxpool_s8, or another family's kernel with it)."""
    a = layer.params
    assert isinstance(a, (TfliteAvgPoolParams, MaxPoolParams))
    off = _storage_offset(layer, lg)
    qmin, qmax = _clamp(layer, lg, a.qmin, a.qmax)
    return render("pool_s8.c.j2", kernel=kernel, qmin=qmin - off, qmax=qmax - off)


def avg_pool_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite's average pooling (int8 only: checks.avg_pool_tflite)."""
    assert not u8_offset(lg, layer.inputs[0]), f"layer '{layer.name}' passed its check"
    return pool_call(layer, lg, "tw_avgpool_s8")


def max_pool_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """Max pooling (every mode)."""
    return pool_call(layer, lg, "tw_maxpool_s8")


def avg_pool_onnx_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """QLinearAveragePool: tw_avgpool_onnx_s8 with the float32 constants of the node."""
    a = layer.params
    assert isinstance(a, OnnxAvgPoolParams)
    off = _storage_offset(layer, lg)
    lo, hi = _clamp(layer, lg, a.qmin, a.qmax)
    return render("avg_pool_onnx_s8.c.j2", x_scale=a.x_scale, y_scale=a.y_scale,
                  x_zp=int(a.x_zero_point) - off, y_zp=int(a.y_zero_point),
                  count_include_pad=1 if a.count_include_pad else 0, lo=lo, hi=hi, y_off=off,
                  kernel="tw_avgpool_onnx_s8", qmin=-128, qmax=127)


def global_avg_pool_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                       kernel: str = "tw_global_avgpool_s8") -> str:
    """TFLite's mean over H and W, 1/pixels folded into its multiplier (QuantizedMeanOrSum);
    `kernel` with tw_global_avgpool_s8's contract."""
    a, nest = layer.params, layer.nest
    assert isinstance(a, TfliteMeanParams)
    off = _storage_offset(layer, lg)
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    mult, shift = _mean_scale(int(a.multiplier), int(a.shift), nest.IY * nest.IX)
    return render("global_avg_pool_s8.c.j2", kernel=kernel, in_zp=zero_point(lg, layer.inputs[0]) - off,
                  mult=mult, shift=shift, out_zp=zero_point(lg, layer.output) - off,
                  qmin=lo - off, qmax=hi - off)


def global_avg_pool_onnx_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                            kernel: str = "tw_global_avgpool_rq_s8") -> str:
    """QLinearGlobalAveragePool: Σx − zp_x·pixels, then the onnx requantization by one scale
    (checks.gap_onnx: count = IY·IX, a single scale); `kernel` with tw_global_avgpool_rq_s8's
    contract."""
    a, nest = layer.params, layer.nest
    assert isinstance(a, OnnxMeanParams)
    rq = a.requant
    assert (rq.mode == "onnx" and int(a.count) == nest.IY * nest.IX
            and np.size(rq.scale) == 1), f"layer '{layer.name}' passed its check"
    off = _storage_offset(layer, lg)
    qmin, qmax = _clamp(layer, lg, rq.qmin, rq.qmax)
    return render("global_avg_pool_onnx_s8.c.j2", kernel=kernel,
                  scale=float(np.atleast_1d(rq.scale)[0]),
                  in_zp=int(a.x_zero_point) - off, zero_point=int(rq.zero_point) - off,
                  qmin=qmin - off, qmax=qmax - off)
