"""The portable family's host-only bindings: ops a host core runs whole on the L2 tensors and no
cluster or accelerator module lists (the modules named "cpu": targets/*.py).

`bindings(cost)` returns them for a host core priced by `cost`; `portable.bindings(cost,
host=True)` (and `pulp.bindings(cost, host=True)`) add them to the family's table. One binding
per row, each the whole layer function (whole_function.c.j2), one call on the L2 tensors:

| binding        | op         | modes         | bits (x→y)                  | C (tw_host.h)  | golden                       |
|----------------|------------|---------------|-----------------------------|----------------|------------------------------|
| quantize       | quantize   | tflite        | 8→8, 8→16, 16→8, 16→16      | tw_quantize    | quant_ops.quantize (Requantize) |
| quantize_onnx  | quantize   | onnx          | 8→8                         | tw_lut_s8      | onnx_ops.quantize (table of every value) |
| transpose      | transpose  | any           | 8→8, 16→16                  | tw_transpose   | shape_ops.transpose          |
| concat         | concat     | tflite, onnx  | 8→8, 16→16                  | tw_concat      | shape_ops.concat / onnx_ops.concat |
| fully_connected_acc32 | fully_connected | shift (identity) | 8x8→32       | its own loop   | linear.dense + requant.shift |

fully_connected_acc32 is a last dense layer without requantization (a NEMO network's Gemm /
MatMul whose output is the accumulator, notes/integer-onnx.md): the int32 accumulators are the
network's output; its constants take the portable layout (constants.py, one k tile).

Any rank up to tw_host.h's TW_TRANSPOSE_MAX_RANK, any permutation, any number of inputs on any
axis. uint8 tensors are stored biased (u − 128, common.py): quantize shifts its zero points by
128, concat's tables are indexed and filled as stored, transpose only moves bytes. A concat
input whose quantization differs from the output's goes through a 256-entry table made by the
golden function itself on every value (TFLite's float32 ConcatenationWithScaling for uint8,
onnxruntime's QLinearConcat requantization); 16-bit inputs are copied (the TFLite frontend
refuses a 16-bit concat that rescales).

Cost: the module's kernel model prices them as its untiled ("other") ops; a model that tells
them apart does so by the binding key (`for_key`: targets/pulp_kernels.py).
"""

from __future__ import annotations

import numpy as np

from ...golden.onnx_ops import requantize_values
from ...golden.shape_ops import rescale_values
from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import (ConcatParams, OnnxQuantizeParams, TfliteRequantizeParams,
                          TransposeParams)
from ...ir.tensor import dtype_bits, dtype_range
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from . import constants
from .common import FAMILY, S8, S16, render, u8_offset

#: tw_host.h TW_TRANSPOSE_MAX_RANK
MAX_RANK = 8

UNTILED = TileRules(l3=False, untiled=True)


def _int_types(layer: Layer, lg: LayerGraph) -> str | None:
    for t in (*layer.inputs, layer.output):
        if lg.tensors[t].dtype not in ("int8", "uint8", "int16"):
            return f"a {lg.tensors[t].dtype} tensor '{t}'"
    return None


# --- checks ---------------------------------------------------------------------------------

def check_quantize(layer: Layer, lg: LayerGraph) -> str | None:
    """TFLite requantization between integer types (not float -> int)."""
    if not isinstance(layer.params, TfliteRequantizeParams):
        return f"a quantize with {type(layer.params).__name__} (int -> int only)"
    return _int_types(layer, lg)


def check_quantize_onnx(layer: Layer, lg: LayerGraph) -> str | None:
    """onnx QuantizeLinear(DequantizeLinear(x)) between 8-bit types: a table of every value."""
    if not isinstance(layer.params, OnnxQuantizeParams):
        return f"a quantize with {type(layer.params).__name__}"
    return _int_types(layer, lg)


def check_transpose(layer: Layer, lg: LayerGraph) -> str | None:
    x = lg.tensors[layer.inputs[0]]
    if not 1 <= len(x.shape) <= MAX_RANK:
        return f"a transpose of rank {len(x.shape)} (1 to {MAX_RANK})"
    return _int_types(layer, lg)


def check_concat(layer: Layer, lg: LayerGraph) -> str | None:
    y = lg.tensors[layer.output]
    if layer.const_inputs:
        return "a concat of a constant tensor"
    for t in layer.inputs:
        if lg.tensors[t].dtype != y.dtype:
            return f"a concat of {lg.tensors[t].dtype} into {y.dtype}"
    return _int_types(layer, lg)


def check_fc_acc32(layer: Layer, lg: LayerGraph) -> str | None:
    """A dense layer whose requantization is the identity onto int32 (k = 1, λ = 0, d = 0)."""
    rq = layer.requant
    if rq is None or rq.mode != "shift":
        return "a dense layer with a requantization (int32 output only without one)"
    lam = np.zeros(1) if rq.bias is None else np.asarray(rq.bias)
    if (np.any(np.asarray(rq.multiplier) != 1) or np.any(lam != 0) or np.any(np.asarray(rq.shift) != 0)
            or rq.zero_point != 0 or (int(rq.qmin), int(rq.qmax)) != dtype_range("int32")):
        return "a requantization onto int32 that is not the identity"
    if lg.tensors[layer.inputs[0]].dtype not in ("int8", "uint8"):
        return f"a {lg.tensors[layer.inputs[0]].dtype} input"
    return constants.check(layer, lg)


# --- emission ---------------------------------------------------------------------------------

def quantize(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite's Requantize (check_quantize): tw_quantize with the zero points as stored."""
    p = layer.params
    assert isinstance(p, TfliteRequantizeParams), f"layer '{layer.name}' passed its check"
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    lo, hi = dtype_range(y.dtype)
    y_off = u8_offset(lg, layer.output)
    return render("quantize.c.j2", n=y.size, in_bytes=dtype_bits(x.dtype) // 8,
                  out_bytes=dtype_bits(y.dtype) // 8,
                  in_zp=int(p.input_zero_point) - u8_offset(lg, layer.inputs[0]),
                  mult=int(p.multiplier), shift=int(p.shift), out_zp=int(p.zero_point) - y_off,
                  qmin=lo - y_off, qmax=hi - y_off)


def quantize_onnx(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """onnx QuantizeLinear(DequantizeLinear(x)) on 8-bit tensors: the golden requantization of
    every stored value, as a table (tw_lut_s8)."""
    p = layer.params
    assert isinstance(p, OnnxQuantizeParams), f"layer '{layer.name}' passed its check"
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    lo, hi = dtype_range(x.dtype)
    vals = requantize_values(np.arange(lo, hi + 1), p.x_scale, p.x_zero_point, p.y_scale,
                             p.y_zero_point, y.dtype)
    ylo, yhi = dtype_range(y.dtype)
    vals = np.clip(vals, max(ylo, int(p.qmin)), min(yhi, int(p.qmax))) - u8_offset(lg, layer.output)
    return render("quantize_onnx.c.j2", table=[int(v) for v in vals], size=y.size)


def transpose(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """numpy.transpose(x, perm) (check_transpose): the output dims and, for each, the input
    stride of the dim it takes."""
    p = layer.params
    assert isinstance(p, TransposeParams)
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    shape = [int(d) for d in x.shape]
    strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    perm = [int(d) % len(shape) for d in p.perm]
    return render("transpose.c.j2", rank=len(shape), out_dims=[shape[d] for d in perm],
                  in_stride=[strides[d] for d in perm], perm=perm,
                  elem_bytes=dtype_bits(y.dtype) // 8)


def _concat_table(p: ConcatParams, j: int, dtype: str, y_off: int) -> list[int] | None:
    """Input j's 256 stored values requantized to the output as stored, None when copied."""
    (xs, xz), (ys, yz) = p.input_quant[j], p.output_quant
    if np.float32(xs) == np.float32(ys) and int(xz) == int(yz):
        return None
    lo, hi = dtype_range(dtype)
    assert hi - lo == 255, "16-bit concat inputs share the output's quantization (frontend)"
    values = np.arange(lo, hi + 1)
    if p.mode == "onnx":
        out = requantize_values(values, xs, xz, ys, yz, dtype)
    else:
        out = rescale_values(values, xs, xz, ys, yz, dtype)
    return [int(v) for v in out - y_off]


def concat(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """Concatenation of any number of activations on any axis (check_concat)."""
    p = layer.params
    assert isinstance(p, ConcatParams) and not layer.const_inputs
    y = lg.tensors[layer.output]
    axis = int(p.axis) % len(y.shape)
    size = dtype_bits(y.dtype) // 8
    y_off = u8_offset(lg, layer.output)
    n = len(layer.inputs)
    args = ["a->x", "a->x2"] if n <= 2 else [f"a->xs[{j}]" for j in range(n)]
    inputs = [dict(index=j, arg=args[j], lut=_concat_table(p, j, y.dtype, y_off),
                   inner=int(np.prod(lg.tensors[t].shape[axis:], dtype=np.int64)) * size)
              for j, t in enumerate(layer.inputs)]
    return render("concat.c.j2", inputs=inputs, axis=axis,
                  outer=int(np.prod(y.shape[:axis], dtype=np.int64)))


def fully_connected_acc32(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """Int32 accumulators of a dense layer (check_fc_acc32)."""
    assert consts is not None, f"layer '{layer.name}': constants built by constants.layout"
    nest = layer.nest
    rows = lg.tensors[layer.inputs[0]].size // nest.C
    return render("fully_connected_acc32.c.j2", rows=rows, c=nest.C, k=nest.K, w_offset=consts.w_offset)


def bindings(cost) -> tuple[Binding, ...]:
    """The host-only bindings priced by the kernel cost model `cost` (module docstring)."""
    out: list[Binding] = []

    def add(name: str, op: Op, modes: tuple[str | None, ...], prec: Precision, check,
            emit) -> None:
        out.extend(per_mode(FAMILY, cost, name, op, modes, prec, "other",
                            check,
                            emit=emit, whole=True, tiles=UNTILED))

    for x in (S8, S16):
        for y in (S8, S16):
            suffix = "" if (x, y) == (S8, S8) else f"_{x}_{y}"
            add("quantize" + suffix, Op.QUANTIZE, ("tflite",), Precision(x, 0, y), check_quantize,
                quantize)
    add("quantize_onnx", Op.QUANTIZE, ("onnx",), Precision(S8, 0, S8), check_quantize_onnx,
        quantize_onnx)
    for bits in (S8, S16):
        suffix = "" if bits == S8 else "_s16"
        add("transpose" + suffix, Op.TRANSPOSE, (None,), Precision(bits, 0, bits),
            check_transpose, transpose)
        add("concat" + suffix, Op.CONCAT, ("tflite", "onnx"), Precision(bits, 0, bits),
            check_concat, concat)
    out.extend(per_mode(FAMILY, cost, "fully_connected_acc32", Op.FULLY_CONNECTED, ("shift",),
                        Precision(S8, 8, 32), "fc", check_fc_acc32, emit=fully_connected_acc32,
                        whole=True, tiles=UNTILED, consts=constants.layout("k.c")))
    return tuple(out)
