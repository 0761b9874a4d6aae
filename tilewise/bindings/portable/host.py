"""The portable family's host-only bindings: ops a host core runs whole on the L2 tensors and no
cluster or accelerator module lists (the modules named "cpu": targets/*.py).

`bindings(cost)` returns them for a host core priced by `cost`; `portable.bindings(cost,
host=True)` (and `pulp.bindings(cost, host=True)`) add them to the family's table. One binding
per row, each the whole layer function (whole_function.c.j2), one call on the L2 tensors:

| binding                  | op               | modes       | bits     | C (tw_host.h)     | golden                    |
|                          |                  |             | (x→y)    |                   |                           |
|--------------------------|------------------|-------------|----------|-------------------|---------------------------|
| quantize                 | quantize         | tflite      | 8→8,     | tw_quantize       | quant_ops.quantize        |
|                          |                  |             | 8→16,    |                   | (Requantize)              |
|                          |                  |             | 16→8,    |                   |                           |
|                          |                  |             | 16→16    |                   |                           |
| quantize_onnx            | quantize         | onnx        | 8→8      | tw_lut_s8         | onnx_ops.quantize (table  |
|                          |                  |             |          |                   | of every value)           |
| clamp                    | clamp            | none        | 8→8      | tw_lut_s8         | onnx_ops.clamp (table of  |
|                          |                  |             |          |                   | every value)              |
| transpose                | transpose        | any         | 8→8,     | tw_transpose      | shape_ops.transpose       |
|                          |                  |             | 16→16    |                   |                           |
| concat                   | concat           | tflite,     | 8→8,     | tw_concat         | shape_ops.concat /        |
|                          |                  | onnx        | 16→16    |                   | onnx_ops.concat           |
| transpose_conv           | transpose_conv   | tflite      | 8x8→8,   | tw_transpose_conv | linear.transpose_conv     |
|                          |                  |             | 16x8→16  |                   | (conv.transpose_conv_acc) |
|                          |                  |             | (int64   |                   |                           |
|                          |                  |             | acc)     |                   |                           |
| pad                      | pad              | any         | 8→8,     | tw_pad            | shape_ops.pad             |
|                          |                  |             | 16→16    |                   |                           |
| add/sub/mul_bcast        | add, sub, mul    | tflite      | 8→8,     | tw_binary         | elementwise.add / sub /   |
|                          |                  |             | 16→16    |                   | mul                       |
| transpose/concat/pad_s32 | transpose,       | any         | 32→32    | tw_transpose /    | idem                      |
|                          | concat, pad      |             | (int32   | tw_concat /       |                           |
|                          |                  |             | tensors  | tw_pad            |                           |
|                          |                  |             | of       |                   |                           |
|                          |                  |             | integer  |                   |                           |
|                          |                  |             | exports) |                   |                           |
| int_ops.py's table       | conv2d,          | shift, div, | any of   | tw_int.h          | golden/int_ops.py, conv + |
|                          | depthwise,       | none        | 8/16/32  |                   | requant                   |
|                          | fully_connected, |             | bits     |                   |                           |
|                          | requant,         |             |          |                   |                           |
|                          | add/sub/mul,     |             |          |                   |                           |
|                          | matmul, reduce,  |             |          |                   |                           |
|                          | hardswish, slice |             |          |                   |                           |
| *_sb_x{X}w{W}y{Y}        | conv2d,          | all requant | X/W/Y ∈  | tw_sb_conv        | conv.conv2d_acc + requant |
|                          | depthwise,       | modes       | {8, 4,   | (tw_subbyte.h)    | (subbyte.py)              |
|                          | fully_connected  |             | 2}, not  |                   |                           |
|                          |                  |             | all 8    |                   |                           |

The integer exports' ops (int_ops.py) include the dense layer whose output is the int32
accumulator (a NEMO network's last Gemm / MatMul without requantization, notes/integer-onnx.md).

Any rank up to tw_host.h's TW_TRANSPOSE_MAX_RANK, any permutation, any number of inputs on any
axis. uint8 tensors are stored biased (u − 128, common.py): quantize shifts its zero points by
128, concat's tables are indexed and filled as stored, transpose only moves bytes. A concat
input whose quantization differs from the output's goes through a 256-entry table made by the
golden function itself on every value (TFLite's float32 ConcatenationWithScaling for uint8,
onnxruntime's QLinearConcat requantization); 16-bit inputs are copied (the TFLite frontend
refuses a 16-bit concat that rescales).

transpose_conv keeps its weights, bias and per-channel multipliers as const arrays of the layer's
own C file (like the concat tables), not in the constants blob of the weighted kernels: its
input zero point cannot be folded into the bias (an output near the border sums fewer taps), so
the kernel subtracts it per tap, as LiteRT does. It takes int8 and 16x8 with the int64
accumulator (an int16 layer whose options declare an int32 bias is left to no module).
add / sub / mul take operands of any broadcastable shapes (numpy's rule, rank up to
MAX_RANK), activations or constants (an array of the layer file, as stored): each operand is
walked with its own strides, 0 along the dims it broadcasts.

Cost: the module's kernel model prices them as its untiled ("other") ops; a model that tells
them apart does so by the binding key (`for_key`: bindings/pulp/cost.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...golden.onnx_ops import requantize_values
from ...golden.shape_ops import rescale_values
from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import (
    ClampParams,
    ConcatParams,
    OnnxQuantizeParams,
    PadParams,
    TfliteAddSubParams,
    TfliteMulParams,
    TfliteRequantizeParams,
    TransposeConvParams,
    TransposeParams,
)
from ...ir.tensor import dtype_bits, dtype_range
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from . import int_ops, lstm, lstm16, subbyte, svdf
from .common import FAMILY, S8, S16, render, u8_offset, zero_point
from .elementwise import add_sub_params

#: tw_host.h TW_TRANSPOSE_MAX_RANK
MAX_RANK = 8

UNTILED = TileRules(l3=False, untiled=True)


def _int_types(layer: Layer, lg: LayerGraph) -> str | None:
    for t in (*layer.inputs, layer.output):
        if lg.tensors[t].dtype not in ("int8", "uint8", "int16", "int32"):
            return f"a {lg.tensors[t].dtype} tensor '{t}'"
    return None


# --- checks ---------------------------------------------------------------------------------

def check_transpose_conv(layer: Layer, lg: LayerGraph) -> str | None:
    """TFLite TRANSPOSE_CONV: int8 (int32 accumulator) or 16x8 (int64), constant int8 weights."""
    p = layer.params
    if not isinstance(p, TransposeConvParams) or p.requant.mode != "tflite":
        return "a transpose_conv without TFLite requantization"
    x = lg.tensors[layer.inputs[0]]
    if x.dtype not in ("int8", "int16") or lg.tensors[layer.output].dtype != x.dtype:
        return f"a {x.dtype} transpose_conv (int8 or int16 only)"
    if p.requant.wide != (x.dtype == "int16"):
        return "a 16x8 transpose_conv with an int32 accumulator" if x.dtype == "int16" else \
            "an int8 transpose_conv with an int64 accumulator"
    w = layer.const_inputs.get(layer.node_inputs[1])
    if w is None or w.data is None or w.dtype != "int8":
        return "a transpose_conv without constant int8 weights"
    return None


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


def check_clamp(layer: Layer, lg: LayerGraph) -> str | None:
    """A clamp of an int8 tensor (a Relu / Clip between equal quantizations, e.g. the b-bit window
    of quantize/narrow_search.py): a table of every value."""
    if not isinstance(layer.params, ClampParams):
        return f"a clamp with {type(layer.params).__name__}"
    for t in (*layer.inputs, layer.output):
        if lg.tensors[t].dtype != "int8":
            return f"a {lg.tensors[t].dtype} tensor '{t}' (int8 only)"
    return None


def check_transpose(layer: Layer, lg: LayerGraph) -> str | None:
    x = lg.tensors[layer.inputs[0]]
    if not 1 <= len(x.shape) <= MAX_RANK:
        return f"a transpose of rank {len(x.shape)} (1 to {MAX_RANK})"
    return _int_types(layer, lg)


def check_pad(layer: Layer, lg: LayerGraph) -> str | None:
    """A constant pad (TFLite PAD / PADV2) that no conv absorbed (passes/canonicalize.py), rank 1
    to MAX_RANK, its value within the stored type."""
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    p = layer.params
    assert isinstance(p, PadParams)
    if not 1 <= len(x.shape) <= MAX_RANK:
        return f"a pad of rank {len(x.shape)} (1 to {MAX_RANK})"
    if x.dtype != y.dtype:
        return f"a pad from {x.dtype} to {y.dtype}"
    lo, hi = dtype_range(y.dtype)
    if not lo <= int(p.value) <= hi:
        return f"a pad value of {p.value} outside {y.dtype}"
    return _int_types(layer, lg)


def check_concat(layer: Layer, lg: LayerGraph) -> str | None:
    y = lg.tensors[layer.output]
    if layer.const_inputs:
        return "a concat of a constant tensor"
    for t in layer.inputs:
        if lg.tensors[t].dtype != y.dtype:
            return f"a concat of {lg.tensors[t].dtype} into {y.dtype}"
    return _int_types(layer, lg)


def check_binary(layer: Layer, lg: LayerGraph) -> str | None:
    """TFLite add / sub / mul of two operands of one storage (int8 and uint8 do not mix) that
    broadcast to the output, rank <= MAX_RANK."""
    names = layer.node_inputs
    tensors = {**lg.tensors, **layer.const_inputs}
    y = lg.tensors[layer.output]
    if len(names) != 2:
        return f"{layer.op} of {len(names)} operands"
    if not isinstance(layer.params, (TfliteAddSubParams, TfliteMulParams)):
        return f"a {layer.op} with {type(layer.params).__name__}"
    if len(y.shape) > MAX_RANK:
        return f"a {layer.op} of rank {len(y.shape)} (at most {MAX_RANK})"
    for t in names:
        x = tensors[t]
        if dtype_bits(x.dtype) != dtype_bits(y.dtype) or u8_offset(
                replace_tensors(lg, tensors), t) != u8_offset(lg, layer.output):
            return f"a {layer.op} of {x.dtype} into {y.dtype}"
        if tuple(np.broadcast_shapes(tuple(x.shape), tuple(y.shape))) != tuple(y.shape):
            return f"an operand of shape {list(x.shape)} that does not broadcast to {list(y.shape)}"
    return _int_types(layer, lg)


def replace_tensors(lg: LayerGraph, tensors) -> LayerGraph:
    """`lg` seen with `tensors` (its own and a layer's constants)."""
    return replace(lg, tensors=tensors)


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


def clamp(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """clamp(x, qmin, qmax) on int8 tensors (check_clamp): the table of every stored value."""
    p = layer.params
    assert isinstance(p, ClampParams), f"layer '{layer.name}' passed its check"
    lo, hi = dtype_range(lg.tensors[layer.inputs[0]].dtype)
    vals = np.clip(np.arange(lo, hi + 1), int(p.qmin), int(p.qmax))
    return render("quantize_onnx.c.j2", table=[int(v) for v in vals], size=lg.tensors[layer.output].size,
                  what=f"clamp to [{int(p.qmin)}, {int(p.qmax)}]")


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


def transpose_conv(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite TRANSPOSE_CONV on the whole tensors (check_transpose_conv), constants in the file."""
    p = layer.params
    assert isinstance(p, TransposeConvParams)
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    w = np.asarray(layer.const_inputs[layer.node_inputs[1]].data, dtype=np.int8)
    k, fh, fw, c = w.shape
    b_name = layer.node_inputs[2] if len(layer.node_inputs) > 2 else ""
    wide = x.dtype == "int16"
    bias = None
    if b_name:
        bias = [f"{int(v)}LL" if wide else str(int(v))
                for v in np.asarray(layer.const_inputs[b_name].data).reshape(-1)]
    rq = p.requant
    flat = w.reshape(-1).tolist()
    g = dict(n=x.shape[0], ih=x.shape[1], iw=x.shape[2], c=c, oh=y.shape[1], ow=y.shape[2], k=k,
             fh=fh, fw=fw, sy=p.stride[0], sx=p.stride[1], pad_t=p.pads[0], pad_l=p.pads[1])
    return render("transpose_conv.c.j2", g=g, w_size=len(flat),
                  w_rows=[flat[i:i + 24] for i in range(0, len(flat), 24)], bias=bias,
                  bias_type="int64_t" if wide else "int32_t",
                  mult=[int(v) for v in np.broadcast_to(rq.multiplier, (k,))],
                  shift=[int(v) for v in np.broadcast_to(rq.shift, (k,))],
                  x_zp=x.quant.zp if x.quant else 0, y_zp=int(rq.zero_point),
                  qmin=int(rq.qmin), qmax=int(rq.qmax), elem_bytes=dtype_bits(x.dtype) // 8)


def pad(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """numpy.pad with a constant (check_pad): the value as stored."""
    p = layer.params
    assert isinstance(p, PadParams)
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    return render("pad.c.j2", rank=len(x.shape), in_dims=[int(d) for d in x.shape],
                  out_dims=[int(d) for d in y.shape], before=[int(b) for b, _ in p.pads],
                  value=int(p.value) - u8_offset(lg, layer.output),
                  elem_bytes=dtype_bits(y.dtype) // 8)


def _strides(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """Element strides of an operand of `shape` walked over output dims `out` (numpy's
    broadcasting: shapes aligned on the right, 0 along a dim of size 1 or absent)."""
    full = (1,) * (len(out) - len(shape)) + tuple(int(d) for d in shape)
    dense = [int(np.prod(full[i + 1:], dtype=np.int64)) for i in range(len(full))]
    return [0 if full[i] == 1 and out[i] != 1 else dense[i] for i in range(len(out))]


def binary(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """TFLite add / sub / mul with broadcasting (check_binary): tw_binary on the operands'
    strides, constants as arrays of the file (as stored)."""
    names = layer.node_inputs
    view = replace_tensors(lg, {**lg.tensors, **layer.const_inputs})
    y = lg.tensors[layer.output]
    out = tuple(int(d) for d in y.shape) or (1,)
    off = u8_offset(lg, layer.output)
    zps = tuple(zero_point(view, t) - u8_offset(view, t) for t in (*names, layer.output))
    a = layer.params
    if isinstance(a, TfliteAddSubParams):
        op, params, p = ("TW_BINARY_ADD" if layer.op == Op.ADD else "TW_BINARY_SUB",
                         "add_params.j2", add_sub_params(a, zps, off))
    else:
        assert isinstance(a, TfliteMulParams), f"layer '{layer.name}' passed check_binary"
        op, params = "TW_BINARY_MUL", "mul_params.j2"
        p = dict(a_zp=zps[0], b_zp=zps[1], out_mult=int(a.output_multiplier),
                 out_shift=int(a.output_shift), out_zp=zps[2], qmin=int(a.qmin) - off,
                 qmax=int(a.qmax) - off)
    acts = iter(("a->x", "a->x2"))
    operands = []
    for i, t in enumerate(names):
        x = view.tensors[t]
        const = t in layer.const_inputs
        data = None
        if const:
            data = [int(v) for v in np.asarray(x.data, dtype=np.int64).reshape(-1) - u8_offset(view, t)]
        operands.append(dict(index=i, stride=_strides(tuple(x.shape), out), data=data,
                             arg=f"OPERAND{i}" if const else next(acts)))
    return render("binary.c.j2", op=op, params=params, p=p, rank=len(out), out_dims=list(out),
                  operands=operands, elem_bytes=dtype_bits(y.dtype) // 8,
                  what=f"TFLite {str(layer.op).upper()} with broadcasting")


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
    add("clamp", Op.CLAMP, (None,), Precision(S8, 0, S8), check_clamp, clamp)
    for bits in (S8, S16, 32):
        suffix = "" if bits == S8 else f"_s{bits}"
        add("transpose" + suffix, Op.TRANSPOSE, (None,), Precision(bits, 0, bits),
            check_transpose, transpose)
        add("concat" + suffix, Op.CONCAT, ("tflite", "onnx"), Precision(bits, 0, bits),
            check_concat, concat)
        add("pad" + suffix, Op.PAD, (None,), Precision(bits, 0, bits), check_pad, pad)
        if bits == 32:
            continue
        for op in (Op.ADD, Op.SUB, Op.MUL):
            add(f"{op}_bcast" + suffix, op, ("tflite",), Precision(bits, 0, bits), check_binary,
                binary)
    # the weights are const inputs of the layer, not Layer.weights, and its Requant is in its
    # params: the key says weight bits 0 and a 32-bit accumulator (check_transpose_conv: int64 for 16x8)
    add("transpose_conv", Op.TRANSPOSE_CONV, ("tflite",), Precision(S8, 0, S8),
        check_transpose_conv, transpose_conv)
    add("transpose_conv_s16", Op.TRANSPOSE_CONV, ("tflite",), Precision(S16, 0, S16),
        check_transpose_conv, transpose_conv)
    out.extend(int_ops.bindings(cost))
    out.extend(lstm.bindings(cost))
    out.extend(lstm16.bindings(cost))
    out.extend(subbyte.bindings())
    out.extend(svdf.bindings(cost))
    return tuple(out)
