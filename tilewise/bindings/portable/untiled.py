"""The portable family's untiled ops: softmax, logistic, concat and reshape, each the whole layer
function (`void @FN@(tw_layer_args_t *a)`, binding.whole_function), run by one core on the L2
tensors.

| layer op (mode)                | kernel                              | golden                          |
|--------------------------------|-------------------------------------|---------------------------------|
| softmax (tflite)               | tw_softmax_s8                       | golden/activation.py softmax    |
| softmax (tflite, int16)        | tw_softmax_s16 (two 513-entry tables) | golden/activation.py softmax_int16 |
| softmax (onnx, any axis)       | tw_softmax_onnx_s8                  | golden/onnx_ops.py softmax      |
| logistic (tflite)              | tw_lut_s8 (256-entry table)         | golden/activation.py logistic   |
| concat (onnx, two activations) | tw_concat2_s8 + golden tables       | golden/onnx_ops.py concat       |
| reshape (any; int8 and int16)  | a byte copy                         | —                               |

Templates: softmax_s8, softmax_onnx_s8, logistic_s8, concat_s8 and reshape.c.j2, each extending
whole_function.c.j2; their 256-entry tables are formatted by tables.j2 from the values passed here.
Broadcast add / sub / mul, also untiled, are elementwise.py's.
"""

from __future__ import annotations

import numpy as np

from ...golden.onnx_ops import requantize_values
from ...ir.layer import Layer, LayerGraph
from ...ir.params import ConcatParams, OnnxSoftmaxParams, TfliteLogisticParams, TfliteSoftmaxParams
from ...ir.tensor import dtype_range
from ..base import LayerConstants
from .common import render, u8_offset


def _rows_depth(layer: Layer, lg: LayerGraph) -> tuple[int, int]:
    """The input as rows of its last dimension: (rows, depth)."""
    x = lg.tensors[layer.inputs[0]]
    rows = int(np.prod(x.shape[:-1], dtype=np.int64)) if len(x.shape) > 1 else 1
    return rows, int(x.shape[-1])


def softmax_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite's int8 softmax (checks.softmax_tflite: output scale 1/256, zero point -128)."""
    a = layer.params
    assert isinstance(a, TfliteSoftmaxParams)
    rows, depth = _rows_depth(layer, lg)
    return render("softmax_s8.c.j2", rows=rows, depth=depth,
                  input_beta_multiplier=int(a.input_multiplier),
                  input_beta_left_shift=int(a.input_left_shift), diff_min=int(a.diff_min))


def softmax_s16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite's int16 softmax (checks.softmax_tflite16) with the node's two tables."""
    a = layer.params
    assert isinstance(a, TfliteSoftmaxParams) and len(a.exp_lut) == len(a.recip_lut) == 513
    rows, depth = _rows_depth(layer, lg)
    return render("softmax_s16.c.j2", rows=rows, depth=depth,
                  input_multiplier=int(a.input_multiplier),
                  input_left_shift=int(a.input_left_shift), exp_lut=list(a.exp_lut),
                  recip_lut=list(a.recip_lut))


def softmax_onnx_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """QLinearSoftmax over any axis with the node's float32 exp table: the input as
    [outer][depth][inner] around the axis."""
    a = layer.params
    assert isinstance(a, OnnxSoftmaxParams)
    shape = tuple(int(d) for d in lg.tensors[layer.inputs[0]].shape) or (1,)
    axis = int(a.axis) % len(shape)
    table = np.asarray(a.table, dtype=np.float32)
    assert table.shape == (256,)
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    y_off = u8_offset(lg, layer.output)
    yz = int(a.y_zero_point)
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    depth = shape[axis]
    rows = int(np.prod(shape, dtype=np.int64)) // max(depth, 1)
    return render("softmax_onnx_s8.c.j2", table=[float(v) for v in table], rows=rows, depth=depth,
                  inner=inner, axis=axis, y_scale_inv=a.y_scale_inv, y_zp=yz - y_off,
                  y_nonfinite=(hi if yz < 0 else lo) - y_off)


def logistic_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite's LOGISTIC on 8-bit tensors (checks.logistic): the node's table as the output is
    stored."""
    p = layer.params
    assert isinstance(p, TfliteLogisticParams)
    table = np.asarray(p.table, dtype=np.int64) - u8_offset(lg, layer.output)
    assert table.shape == (256,) and table.min() >= -128 and table.max() <= 127
    return render("logistic_s8.c.j2", table=[int(v) for v in table],
                  size=lg.tensors[layer.output].nbytes)


def concat_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """QLinearConcat of two activations (checks.concat_onnx): a requantization table for each
    input whose scale or zero point differs from the output's (golden onnx_ops.requantize_values
    on every input value, so the table is the golden function itself)."""
    a = layer.params
    assert isinstance(a, ConcatParams)
    assert len(layer.inputs) == 2 and not layer.const_inputs, \
        f"layer '{layer.name}' passed its check"
    y = lg.tensors[layer.output]
    axis = int(a.axis) % len(y.shape)
    ys, yz = a.output_quant
    lo, hi = dtype_range(y.dtype)
    inputs = []
    for i, (t, (xs, xz)) in enumerate(zip(layer.inputs, a.input_quant)):
        assert lg.tensors[t].dtype == y.dtype, f"layer '{layer.name}' passed its check"
        lut = None
        if not (np.float32(xs) == np.float32(ys) and int(xz) == int(yz)):
            vals = requantize_values(np.arange(lo, hi + 1), xs, xz, ys, yz, y.dtype)
            lut = [int(v) for v in vals - u8_offset(lg, layer.output)]
        inputs.append(dict(index=i, lut=lut,
                           inner=int(np.prod(lg.tensors[t].shape[axis:], dtype=np.int64))))
    return render("concat_s8.c.j2", inputs=inputs,
                  outer=int(np.prod(y.shape[:axis], dtype=np.int64)))


def reshape(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """A reshape whose bytes do not change (checks.reshape): a copy, for either precision."""
    return render("reshape.c.j2", size=lg.tensors[layer.output].nbytes)
