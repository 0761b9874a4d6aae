"""TFLite operators -> IR nodes, with the fixed-point parameters each operator's Prepare computes.

Every formula below mirrors the Prepare function of the LiteRT builtin kernel (tflite/kernels/*.cc,
kernel_util.cc, quantization_util.cc), because the int8 result of a TFLite model is defined by those
parameters, including their float/double rounding:

| op | parameters (as LiteRT computes them) |
|---|---|
| CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV | per channel QuantizeMultiplier(double(s_x)·double(s_w[k])/double(s_y)) |
| FULLY_CONNECTED | as conv (per tensor too); int8 requantizes with single rounding (Requant.rounding); 16x8 with |
|                 | round(double(acc)·double(s_x)·double(s_w)/double(s_y)) (rounding "real")                      |
| ADD, SUB | left_shift 20 (int8/uint8) or 15 (int16); in_k = s_k/(2·max s); out = 2·max s/(2^ls·s_y) |
| MUL | QuantizeMultiplier(float(s_a·s_b/s_y)) (float arithmetic) |
| MEAN | QuantizeMultiplier(double(s_x)/double(s_y)) |
| SOFTMAX | PreprocessSoftmaxScaling(beta, s_x, 5 integer bits), diff_min = -CalculateInputRadius(5, shift) |
| LOGISTIC | 256-entry table from the float sigmoid (LUTPopulate), int8/uint8 |
| QUANTIZE | int->int: QuantizeMultiplier(double(s_x)/double(s_y)); float->int: round(x/s)+zp |
| fused RELU/RELU6/RELU_N1_TO_1 | CalculateActivationRangeQuantized: zp + round(f/s) in float, clamped to the type |

SAME padding becomes explicit pads (ir.shapes.same_pads, TFLite's ComputePaddingHeightWidth). Every node
gets the typed parameters of its op (ir/params.py); those whose semantics depend on the source format
are the Tflite* classes (mode "tflite"), conv2d / fully_connected take mode "tflite" from their Requant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Node
from ..ir.ops import Op
from ..ir.params import (
    ConcatParams,
    Conv2dParams,
    FullyConnectedParams,
    MaxPoolParams,
    OpParams,
    PadParams,
    ReshapeParams,
    TfliteAddSubParams,
    TfliteAvgPoolParams,
    TfliteMeanParams,
    TfliteMulParams,
    TransposeConvParams,
    TransposeParams,
)
from ..ir.requant import Requant, quantize_multiplier, tflite_requant
from ..ir.shapes import same_pads
from ..ir.tensor import Tensor, dtype_range
from .tflite import TfliteModel, TfliteOperator, TfliteTensor, op_where, quant_params
from .tflite_fold import resolve_shape

ACT_NAMES = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT", 6: "SIGMOID"}
INT_ACTIVATIONS = ("int8", "uint8", "int16")


def tf_round(x: float) -> float:
    """TfLiteRound / std::round: half away from zero."""
    return math.floor(abs(x) + 0.5) * (1.0 if x >= 0 else -1.0)


def activation_range(act: int, dtype: str, scale: float, zero_point: int) -> tuple[int, int] | None:
    """CalculateActivationRangeQuantized (kernel_util.cc); None for an activation it rejects."""
    qmin, qmax = dtype_range(dtype)
    s = np.float32(scale)

    def q(f: float) -> int:
        return int(zero_point + int(tf_round(float(np.float32(f) / s))))

    if act == 0:
        return qmin, qmax
    if act == 1:
        return max(qmin, q(0.0)), qmax
    if act == 3:
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if act == 2:
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    return None


def f32(x: float) -> np.float32:
    return np.float32(x)


class Converter:
    """Accumulates IR tensors and nodes while walking the TFLite operators in order."""

    def __init__(self, model: TfliteModel, names: list[str], source: str) -> None:
        self.model = model
        self.names = names
        self.source = source
        self.nodes: list[Node] = []
        #: the state tensors the stateful operators (SVDF) read and update (ir/graph.py)
        self.state_names: list[str] = []
        self.tensors: dict[str, Tensor] = {}
        for t in model.tensors:
            if t.dtype is not None:
                self.tensors[names[t.index]] = Tensor(names[t.index], t.shape, t.dtype, quant_params(t), t.data)

    # -- helpers -------------------------------------------------------------------------------
    def where(self, op: TfliteOperator) -> str:
        return op_where(self.source, self.model, op)

    def fail(self, op: TfliteOperator, what: str, todo: str) -> UnsupportedOpError:
        return UnsupportedOpError(f"{self.where(op)} {what}; {todo}")

    def t(self, idx: int) -> TfliteTensor:
        return self.model.tensors[idx]

    def name(self, idx: int) -> str:
        return self.names[idx]

    def inp(self, op: TfliteOperator, k: int) -> TfliteTensor | None:
        if k >= len(op.inputs) or op.inputs[k] < 0:
            return None
        return self.t(op.inputs[k])

    def need(self, op: TfliteOperator, k: int, what: str) -> TfliteTensor:
        t = self.inp(op, k)
        if t is None:
            raise self.fail(op, f"has no {what} input", "the model is malformed; re-export it")
        return t

    def const(self, op: TfliteOperator, t: TfliteTensor, what: str) -> np.ndarray:
        if t.data is None:
            raise self.fail(op, f"has a non-constant {what} ('{t.name}')",
                            f"tilewise needs a constant {what}; freeze the model so the {what} is a constant")
        return t.data

    def check_int(self, op: TfliteOperator, t: TfliteTensor, allowed: tuple[str, ...] = INT_ACTIVATIONS) -> str:
        if t.dtype == "float32" or t.type_code in (1, 10, 18):
            raise self.fail(op, f"computes in floating point ({t.type_name} tensor '{t.name}')",
                            "tilewise compiles integer-quantized models only: quantize it first with "
                            "`tilewise quantize MODEL --calib DATA --target T -o OUT.tflite`, or convert "
                            "it with full-integer (int8) post-training quantization")
        if t.dtype not in allowed:
            raise self.fail(op, f"has a {t.type_name} tensor '{t.name}'",
                            f"tilewise supports {', '.join(allowed)} here")
        if not t.quantized and t.dtype in INT_ACTIVATIONS:
            raise self.fail(op, f"has an integer tensor '{t.name}' without quantization parameters",
                            "re-export the model with full-integer quantization")
        if t.quantized and not t.scale[0] > 0:
            raise self.fail(op, f"has the non-positive scale {t.scale[0]} on its tensor '{t.name}'",
                            "the model is malformed, re-export it")
        return t.dtype

    def act_range(self, op: TfliteOperator, y: TfliteTensor) -> tuple[int, int]:
        act = int(op.options.get("FusedActivationFunction", 0))
        r = activation_range(act, y.dtype or "int8", y.scale[0], y.zero_point[0])
        if r is None:
            raise self.fail(op, f"has the fused activation {ACT_NAMES.get(act, act)}, which quantized kernels "
                                "do not support", "use NONE, RELU, RELU6 or RELU_N1_TO_1")
        return r

    def add_const(self, name: str, data: np.ndarray, dtype: str, like: Tensor | None = None, quant: Any = None) -> str:
        self.tensors[name] = Tensor(name, tuple(data.shape), dtype, quant if quant is not None else
                                    (like.quant if like else None), data)
        return name

    def add_tensor(self, name: str, shape: tuple[int, ...], like: TfliteTensor) -> str:
        self.tensors[name] = Tensor(name, tuple(shape), like.dtype or "int8", quant_params(like), None)
        return name

    def emit(self, op: TfliteOperator, ir_op: Op, inputs: list[str], output: str, params: OpParams,
             suffix: str = "") -> None:
        name = f"op{op.index}_{op.name.lower()}{suffix}"
        self.nodes.append(Node(name, ir_op, tuple(inputs), (output,), params))

    def same_quant(self, a: TfliteTensor, b: TfliteTensor) -> bool:
        return a.scale[:1] == b.scale[:1] and a.zero_point[:1] == b.zero_point[:1]

    def pads(self, op: TfliteOperator, in_hw: tuple[int, int], k_hw: tuple[int, int], s_hw: tuple[int, int],
             d_hw: tuple[int, int] = (1, 1)) -> tuple[int, int, int, int]:
        if min(s_hw) < 1 or min(d_hw) < 1 or min(k_hw) < 1:
            raise self.fail(op, f"has stride {tuple(s_hw)}, dilation {tuple(d_hw)} and window {tuple(k_hw)}",
                            "each must be at least 1; the model is malformed, re-export it")
        padding = int(op.options.get("Padding", 0))
        if padding == 1:
            return (0, 0, 0, 0)
        if padding != 0:
            raise self.fail(op, f"uses padding mode {padding}", "use SAME or VALID padding")
        t, b = same_pads(in_hw[0], k_hw[0], s_hw[0], d_hw[0])
        l, r = same_pads(in_hw[1], k_hw[1], s_hw[1], d_hw[1])
        return (t, l, b, r)

    # -- dispatch ------------------------------------------------------------------------------
    def convert(self, op: TfliteOperator) -> None:
        fn = CONVERTERS.get(op.name)
        if fn is None:
            raise UnsupportedOpError(
                f"{self.where(op)} is not supported by tilewise; supported TFLite operators are "
                f"{', '.join(sorted(CONVERTERS))} — replace or remove this operator before export"
            )
        if not op.outputs:
            raise self.fail(op, "has no output", "the model is malformed; re-export it")
        for k in op.outputs:
            if self.t(k).dtype is None:
                raise self.fail(op, f"produces a {self.t(k).type_name} tensor", "tilewise supports int8/uint8/int16")
        fn(self, op)


# ---------------------------------------------------------------------------------------------
# convolution and dense layers
# ---------------------------------------------------------------------------------------------

def _linear_requant(cv: Converter, op: TfliteOperator, x: TfliteTensor, w: TfliteTensor, y: TfliteTensor) -> Requant:
    """Per-channel (or broadcast per-tensor) QuantizeMultiplier(double(s_x)·double(s_w)/double(s_y)).

    LiteRT's FULLY_CONNECTED uses the same double product for per-tensor weights (not the float
    product of the legacy GetQuantizedConvolutionMultipler; tests/test_tflite_ops.py pins this)."""
    qmin, qmax = cv.act_range(op, y)
    if not w.quantized:
        raise cv.fail(op, f"has weights '{w.name}' without quantization parameters",
                      "re-export the model with int8 weight quantization")
    real = np.asarray([float(x.scale[0]) * float(s) / float(y.scale[0]) for s in w.scale], dtype=np.float64)
    return tflite_requant(real, y.zero_point[0], qmin, qmax)


def _bias(cv: Converter, op: TfliteOperator, x_dtype: str, k: int, index: int = 2) -> tuple[str, int | None]:
    b = cv.inp(op, index)
    if b is None:
        return "", None
    cv.const(op, b, "bias")
    allowed = ("int64", "int32") if x_dtype == "int16" else ("int32",)
    if b.dtype not in allowed:
        raise cv.fail(op, f"has a {b.type_name} bias '{b.name}'", f"expected {' or '.join(allowed)}")
    if b.data is not None and b.data.size != k:
        raise cv.fail(op, f"has a bias of {b.data.size} values for {k} output channels",
                      "the model is malformed; re-export it")
    return cv.name(b.index), int(b.type_code)


def _wide_accumulator(cv: Converter, op: TfliteOperator, x_dtype: str, bias_type: int | None) -> bool:
    """16x8 kernels accumulate in int64 unless the op says its quantized bias is int32."""
    if x_dtype != "int16":
        return False
    declared = int(op.options.get("QuantizedBiasType", 0))
    if declared == 2 or (declared == 0 and bias_type == 2):
        return False
    return True


def _check_weights(cv: Converter, op: TfliteOperator, w: TfliteTensor, per_channel_axis: int) -> np.ndarray:
    data = cv.const(op, w, "weights")
    if w.dtype != "int8":
        raise cv.fail(op, f"has {w.type_name} weights '{w.name}'", "tilewise supports int8 weights")
    if len(w.scale) > 1 and (w.quantized_dimension != per_channel_axis or len(w.scale) != w.shape[per_channel_axis]):
        raise cv.fail(op, f"has weights '{w.name}' quantized along dimension {w.quantized_dimension} with "
                          f"{len(w.scale)} scales", f"expected per-channel scales along dimension {per_channel_axis}")
    if any(z != 0 for z in w.zero_point):
        raise cv.fail(op, f"has weights '{w.name}' with a non-zero zero point",
                      "int8 TFLite kernels require symmetric weights; re-quantize with symmetric weights")
    return data


def _conv_params(cv: Converter, op: TfliteOperator, x, w, y, xd: str, kernel: tuple[int, int], k: int,
                 groups: int) -> tuple[str, Conv2dParams]:
    """Bias name and the Conv2dParams (stride, dilation, explicit pads, Requant) shared by CONV_2D and
    DEPTHWISE_CONV_2D."""
    o = op.options
    stride = (int(o.get("StrideH", 1)), int(o.get("StrideW", 1)))
    dil = (int(o.get("DilationHFactor", 1)), int(o.get("DilationWFactor", 1)))
    pads = cv.pads(op, x.shape[1:3], kernel, stride, dil)
    bias, btype = _bias(cv, op, xd, k)
    rq = _with_wide(_linear_requant(cv, op, x, w, y), _wide_accumulator(cv, op, xd, btype))
    return bias, Conv2dParams(stride=stride, dilation=dil, pads=pads, groups=groups, requant=rq)


def conv_2d(cv: Converter, op: TfliteOperator) -> None:
    x, w, y = cv.need(op, 0, "input"), cv.need(op, 1, "weights"), cv.t(op.outputs[0])
    xd = cv.check_int(op, x, ("int8", "int16"))
    cv.check_int(op, y, (xd,))
    _check_weights(cv, op, w, 0)
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise cv.fail(op, "has a non-4-D input or filter", "CONV_2D needs NHWC input and OHWI filter")
    c, (k, fy, fx, cg) = x.shape[3], w.shape
    if cg <= 0 or c % cg or k % (c // cg):
        raise cv.fail(op, f"has {c} input channels but filters of depth {cg}", "the model is malformed")
    bias, params = _conv_params(cv, op, x, w, y, xd, (fy, fx), k, c // cg)
    cv.emit(op, Op.CONV2D, [cv.name(x.index), cv.name(w.index), bias], cv.name(y.index), params)


def depthwise_conv_2d(cv: Converter, op: TfliteOperator) -> None:
    x, w, y = cv.need(op, 0, "input"), cv.need(op, 1, "weights"), cv.t(op.outputs[0])
    xd = cv.check_int(op, x, ("int8", "int16"))
    cv.check_int(op, y, (xd,))
    wdata = _check_weights(cv, op, w, 3)
    if len(x.shape) != 4 or len(w.shape) != 4 or w.shape[0] != 1:
        raise cv.fail(op, "has a non-4-D input or a filter not shaped [1,FY,FX,K]", "the model is malformed")
    c, (_, fy, fx, k) = x.shape[3], w.shape
    if k % c:
        raise cv.fail(op, f"has {k} output channels for {c} input channels", "the model is malformed")
    bias, params = _conv_params(cv, op, x, w, y, xd, (fy, fx), k, c)
    # TFLite [1,FY,FX,C*mult] -> IR [K,FY,FX,1]; per-channel axis 3 -> 0
    wq = quant_params(w, {3: 0})
    wname = cv.add_const(cv.name(w.index), np.ascontiguousarray(wdata.transpose(3, 1, 2, 0)), "int8", quant=wq)
    cv.emit(op, Op.CONV2D, [cv.name(x.index), wname, bias], cv.name(y.index), params)


def _transpose_conv_geometry(padding: int, out: int, f: int, s: int) -> tuple[int, int]:
    """(input size, "before" padding) LiteRT's ComputePaddingHeightWidth gives on the TRANSPOSE_CONV
    output size (transpose_conv.cc): the convolution that maps the output back onto the input."""
    size = (out + s - 1) // s if padding == 0 else int((out + s - f) / s)   # C++ division truncates
    return size, max((size - 1) * s + f - out, 0) // 2


def transpose_conv(cv: Converter, op: TfliteOperator) -> None:
    """TRANSPOSE_CONV: inputs output_shape (constant int32 [4]), weights [K,FY,FX,C], input,
    optional bias; int8 (int32 bias) and 16x8 (int64 bias; int32 when the options say so)."""
    osh, w, x = cv.need(op, 0, "output shape"), cv.need(op, 1, "weights"), cv.need(op, 2, "input")
    y = cv.t(op.outputs[0])
    xd = cv.check_int(op, x, ("int8", "int16"))
    cv.check_int(op, y, (xd,))
    _check_weights(cv, op, w, 0)
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        raise cv.fail(op, "has a non-4-D input, filter or output",
                      "TRANSPOSE_CONV needs NHWC tensors and an OHWI filter")
    shape = tuple(int(v) for v in np.atleast_1d(cv.const(op, osh, "output shape")))
    if shape != tuple(y.shape):
        raise cv.fail(op, f"has output_shape {list(shape)} but an output tensor of shape {list(y.shape)}",
                      "the model is malformed; re-export it")
    k, fy, fx, c = w.shape
    if c != x.shape[3] or k != y.shape[3] or x.shape[0] != y.shape[0]:
        raise cv.fail(op, f"has a filter {list(w.shape)} for input {list(x.shape)} and output {list(y.shape)}",
                      "the model is malformed")
    o = op.options
    padding = int(o.get("Padding", 0))
    if padding not in (0, 1):
        raise cv.fail(op, f"uses padding mode {padding}", "use SAME or VALID padding")
    stride = (int(o.get("StrideH", 1)), int(o.get("StrideW", 1)))
    if min(stride) < 1:
        raise cv.fail(op, f"has stride {stride}", "the model is malformed")
    (iy, pt), (ix, pl) = (_transpose_conv_geometry(padding, y.shape[1], fy, stride[0]),
                          _transpose_conv_geometry(padding, y.shape[2], fx, stride[1]))
    if (iy, ix) != tuple(x.shape[1:3]):
        raise cv.fail(op, f"produces {y.shape[1]}x{y.shape[2]} from a {x.shape[1]}x{x.shape[2]} input, but its "
                          f"padding and stride map that output back onto {iy}x{ix}", "the model is malformed")
    pads = (pt, pl)
    bias, btype = _bias(cv, op, xd, k, index=3)
    rq = _with_wide(_linear_requant(cv, op, x, w, y), _wide_accumulator(cv, op, xd, btype))
    cv.emit(op, Op.TRANSPOSE_CONV, [cv.name(x.index), cv.name(w.index), bias], cv.name(y.index),
            TransposeConvParams(stride=stride, pads=pads, output_hw=(int(y.shape[1]), int(y.shape[2])), requant=rq))


def fully_connected(cv: Converter, op: TfliteOperator) -> None:
    x, w, y = cv.need(op, 0, "input"), cv.need(op, 1, "weights"), cv.t(op.outputs[0])
    xd = cv.check_int(op, x, ("int8", "int16"))
    cv.check_int(op, y, (xd,))
    _check_weights(cv, op, w, 0)
    if int(op.options.get("WeightsFormat", 0)) != 0:
        raise cv.fail(op, "uses shuffled weights", "export with the default weights format")
    if len(w.shape) != 2:
        raise cv.fail(op, f"has weights of shape {w.shape}", "FULLY_CONNECTED needs [K, C] weights")
    k, c = w.shape
    size = int(np.prod(x.shape)) if x.shape else 1
    if c == 0 or size % c:
        raise cv.fail(op, f"has {size} input values for weights of depth {c}", "the model is malformed")
    bias, btype = _bias(cv, op, xd, k)
    rq = _linear_requant(cv, op, x, w, y)
    rq = _with_wide(rq, _wide_accumulator(cv, op, xd, btype))
    if xd == "int16":
        rq = replace(rq, rounding="real", scale=_real_scales(x, w, y))
    elif not rq.wide:
        rq = replace(rq, rounding="single")
    out = cv.name(y.index)
    flat = (size // c, k)
    target = out if tuple(y.shape) == flat else cv.add_tensor(f"{out}#2d", flat, y)
    cv.emit(op, Op.FULLY_CONNECTED, [cv.name(x.index), cv.name(w.index), bias], target,
            FullyConnectedParams(requant=rq))
    if target != out:
        if int(np.prod(y.shape)) != size // c * k:
            raise cv.fail(op, f"declares output shape {y.shape}", "the model is malformed")
        cv.emit(op, Op.RESHAPE, [target], out, ReshapeParams(shape=tuple(y.shape)), suffix="_keepdims")


def _real_scales(x: TfliteTensor, w: TfliteTensor, y: TfliteTensor) -> np.ndarray:
    """LiteRT's reference 16x8 FULLY_CONNECTED requantizes each accumulator as
    round(double(acc) · double(s_x)·double(s_w[k])/double(s_y)) from the tensors' float scales
    (reference/integer_ops/fully_connected.h, the overloads taking the scales): those products, per
    output channel (Requant.rounding "real")."""
    sx, sy = float(np.float32(x.scale[0])), float(np.float32(y.scale[0]))
    return np.asarray([sx * float(np.float32(s)) / sy for s in w.scale], dtype=np.float64)


def _with_wide(rq: Requant, wide: bool) -> Requant:
    return replace(rq, wide=wide) if wide else rq


# ---------------------------------------------------------------------------------------------
# elementwise arithmetic
# ---------------------------------------------------------------------------------------------

def _binary_inputs(cv: Converter, op: TfliteOperator) -> tuple[TfliteTensor, TfliteTensor, TfliteTensor, str]:
    a, b, y = cv.need(op, 0, "first"), cv.need(op, 1, "second"), cv.t(op.outputs[0])
    d = cv.check_int(op, a)
    cv.check_int(op, b, (d,))
    cv.check_int(op, y, (d,))
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        raise cv.fail(op, f"has inputs of shapes {a.shape} and {b.shape} that do not broadcast",
                      "the model is malformed") from None
    if shape != tuple(y.shape):
        raise cv.fail(op, f"declares output shape {y.shape} but its inputs broadcast to {shape}",
                      "the model is malformed")
    return a, b, y, d


def add_sub(cv: Converter, op: TfliteOperator) -> None:
    a, b, y, d = _binary_inputs(cv, op)
    qmin, qmax = cv.act_range(op, y)
    if d == "int16":
        if a.zero_point[0] or b.zero_point[0] or y.zero_point[0]:
            raise cv.fail(op, "has int16 tensors with non-zero zero points", "int16 quantization must be symmetric")
        pot = op.options.get("PotScaleInt16", True)
        if pot and all(_is_pot(s) for s in (a.scale[0], b.scale[0], y.scale[0])):
            raise cv.fail(op, "uses the power-of-two int16 scaling path", "tilewise implements the general int16 path; "
                              "use non-power-of-two scales or set pot_scale_int16=false")
    left_shift = 15 if d == "int16" else 20
    twice_max = 2.0 * float(max(f32(a.scale[0]), f32(b.scale[0])))
    m1 = quantize_multiplier(float(a.scale[0]) / twice_max)
    m2 = quantize_multiplier(float(b.scale[0]) / twice_max)
    mo = quantize_multiplier(twice_max / float(f32(1 << left_shift) * f32(y.scale[0])))
    params = TfliteAddSubParams(left_shift=left_shift, input_multipliers=(m1[0], m2[0]),
                                input_shifts=(m1[1], m2[1]), output_multiplier=mo[0], output_shift=mo[1],
                                qmin=qmin, qmax=qmax)
    ir_op = Op.ADD if op.name == "ADD" else Op.SUB
    cv.emit(op, ir_op, [cv.name(a.index), cv.name(b.index)], cv.name(y.index), params)


def _is_pot(scale: float) -> bool:
    lg = math.log2(scale)
    return abs(lg - round(lg)) < 1e-6


def mul(cv: Converter, op: TfliteOperator) -> None:
    a, b, y, d = _binary_inputs(cv, op)
    qmin, qmax = cv.act_range(op, y)
    real = float(f32(f32(a.scale[0]) * f32(b.scale[0])) / f32(y.scale[0]))
    m, s = quantize_multiplier(real)
    cv.emit(op, Op.MUL, [cv.name(a.index), cv.name(b.index)], cv.name(y.index),
            TfliteMulParams(output_multiplier=m, output_shift=s, qmin=qmin, qmax=qmax))


# ---------------------------------------------------------------------------------------------
# pooling and reductions
# ---------------------------------------------------------------------------------------------

def pool(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    d = cv.check_int(op, x)
    cv.check_int(op, y, (d,))
    if not cv.same_quant(x, y):
        raise cv.fail(op, "has different input and output quantization", "TFLite pooling does not rescale")
    if len(x.shape) != 4:
        raise cv.fail(op, f"has a {len(x.shape)}-D input", "pooling needs NHWC input")
    o = op.options
    kernel = (int(o.get("FilterHeight", 1)), int(o.get("FilterWidth", 1)))
    stride = (int(o.get("StrideH", 1)), int(o.get("StrideW", 1)))
    pads = cv.pads(op, x.shape[1:3], kernel, stride)
    qmin, qmax = cv.act_range(op, y)
    if op.name == "AVERAGE_POOL_2D":
        ir_op: Op = Op.AVG_POOL
        params: OpParams = TfliteAvgPoolParams(kernel=kernel, stride=stride, pads=pads, qmin=qmin, qmax=qmax)
    else:
        ir_op, params = Op.MAX_POOL, MaxPoolParams(kernel=kernel, stride=stride, pads=pads, qmin=qmin, qmax=qmax)
    cv.emit(op, ir_op, [cv.name(x.index)], cv.name(y.index), params)


def mean(cv: Converter, op: TfliteOperator) -> None:
    x, ax, y = cv.need(op, 0, "input"), cv.need(op, 1, "axis"), cv.t(op.outputs[0])
    d = cv.check_int(op, x)
    cv.check_int(op, y, (d,))
    rank = len(x.shape)
    axes_arr = np.asarray(cv.const(op, ax, "axis")).reshape(-1)
    if axes_arr.dtype.kind not in "iu":
        raise cv.fail(op, f"has {axes_arr.dtype} axes", "give an int32 axis tensor; the model is malformed")
    axes_raw = [int(v) for v in axes_arr]
    if any(not -rank <= v < rank for v in axes_raw):
        raise cv.fail(op, f"reduces axes {axes_raw} of a {rank}-D tensor", "the model is malformed")
    axes = tuple(sorted({v % rank for v in axes_raw}))
    m, s = quantize_multiplier(float(x.scale[0]) / float(y.scale[0]))
    cv.emit(op, Op.MEAN, [cv.name(x.index)], cv.name(y.index),
            TfliteMeanParams(axes=axes, keepdims=bool(op.options.get("KeepDims", False)), multiplier=m, shift=s))


# ---------------------------------------------------------------------------------------------
# data movement
# ---------------------------------------------------------------------------------------------

def pad(cv: Converter, op: TfliteOperator) -> None:
    x, p, y = cv.need(op, 0, "input"), cv.need(op, 1, "paddings"), cv.t(op.outputs[0])
    d = cv.check_int(op, x)
    cv.check_int(op, y, (d,))
    pads = np.asarray(cv.const(op, p, "paddings"), dtype=np.int64).reshape(-1, 2)
    if pads.shape[0] != len(x.shape) or (pads < 0).any():
        raise cv.fail(op, f"has paddings {pads.tolist()} for a {len(x.shape)}-D input", "the model is malformed")
    if not cv.same_quant(x, y):
        raise cv.fail(op, "has different input and output quantization", "TFLite PAD does not rescale")
    value = y.zero_point[0]
    cval = cv.inp(op, 2)
    if cval is not None:
        value = int(np.asarray(cv.const(op, cval, "pad value")).reshape(-1)[0])
    cv.emit(op, Op.PAD, [cv.name(x.index)], cv.name(y.index),
            PadParams(pads=tuple((int(a), int(b)) for a, b in pads), value=int(value)))


def reshape(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    d = cv.check_int(op, x)
    cv.check_int(op, y, (d,))
    if int(np.prod(x.shape)) != int(np.prod(y.shape)):
        raise cv.fail(op, f"reshapes {x.shape} into {y.shape}", "the model is malformed")
    s = cv.inp(op, 1) if op.name == "RESHAPE" else None
    if s is not None and s.data is not None and s.data.ndim == 1 and s.dtype == "int32":
        # the shape LiteRT gives the output (reshape.cc): a constant, or one tflite_fold.py folded
        want = [int(v) for v in s.data]
        if resolve_shape(want, int(np.prod(x.shape))) != list(y.shape):
            raise cv.fail(op, f"has the shape input {want} ('{s.name}') but declares the output shape {list(y.shape)}",
                          "the model is malformed; re-export it")
    cv.emit(op, Op.RESHAPE, [cv.name(x.index)], cv.name(y.index), ReshapeParams(shape=tuple(y.shape)))


def concatenation(cv: Converter, op: TfliteOperator) -> None:
    xs = [cv.t(i) for i in op.inputs if i >= 0]
    y = cv.t(op.outputs[0])
    d = cv.check_int(op, y)
    for x in xs:
        cv.check_int(op, x, (d,))
    if int(op.options.get("FusedActivationFunction", 0)) != 0:
        raise cv.fail(op, "has a fused activation", "quantized CONCATENATION supports none")
    rank = len(y.shape)
    axis = int(op.options.get("Axis", 0))
    axis = axis + rank if axis < 0 else axis
    rescale = [not cv.same_quant(x, y) for x in xs]
    if any(rescale) and d != "uint8":
        raise cv.fail(op, f"concatenates {d} inputs whose quantization differs from the output's",
                      f"LiteRT's {d} kernel requires equal scales and zero points (insert a QUANTIZE before "
                      "the concatenation)")
    params = tuple((float(x.scale[0]), int(x.zero_point[0])) for x in xs)
    cv.emit(op, Op.CONCAT, [cv.name(x.index) for x in xs], cv.name(y.index),
            ConcatParams(mode="tflite", axis=axis, input_quant=params,
                         output_quant=(float(y.scale[0]), int(y.zero_point[0]))))


def transpose(cv: Converter, op: TfliteOperator) -> None:
    x, p, y = cv.need(op, 0, "input"), cv.need(op, 1, "perm"), cv.t(op.outputs[0])
    d = cv.check_int(op, x)
    cv.check_int(op, y, (d,))
    perm = tuple(int(v) for v in np.atleast_1d(cv.const(op, p, "permutation")))
    if sorted(perm) != list(range(len(x.shape))):
        raise cv.fail(op, f"has permutation {perm} for a {len(x.shape)}-D input", "the model is malformed")
    cv.emit(op, Op.TRANSPOSE, [cv.name(x.index)], cv.name(y.index), TransposeParams(perm=perm))


from .tflite_act import dequantize, logistic, quantize, softmax  # noqa: E402  (they use Converter)
from .tflite_lstm import strided_slice, unidirectional_sequence_lstm  # noqa: E402  (they use Converter)
from .tflite_seq import split, split_v, tanh, unpack  # noqa: E402  (they use Converter)
from .tflite_svdf import svdf  # noqa: E402  (it uses Converter)

CONVERTERS: dict[str, Callable[[Converter, TfliteOperator], None]] = {
    "CONV_2D": conv_2d,
    "DEPTHWISE_CONV_2D": depthwise_conv_2d,
    "FULLY_CONNECTED": fully_connected,
    "ADD": add_sub,
    "SUB": add_sub,
    "MUL": mul,
    "AVERAGE_POOL_2D": pool,
    "MAX_POOL_2D": pool,
    "MEAN": mean,
    "PAD": pad,
    "PADV2": pad,
    "RESHAPE": reshape,
    "SQUEEZE": reshape,
    "CONCATENATION": concatenation,
    "TRANSPOSE": transpose,
    "TRANSPOSE_CONV": transpose_conv,
    "SOFTMAX": softmax,
    "LOGISTIC": logistic,
    "QUANTIZE": quantize,
    "DEQUANTIZE": dequantize,
    "SVDF": svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": unidirectional_sequence_lstm,
    "STRIDED_SLICE": strided_slice,
    "TANH": tanh,
    "SPLIT": split,
    "SPLIT_V": split_v,
    "UNPACK": unpack,
}
