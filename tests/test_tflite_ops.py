"""Golden model vs LiteRT (BUILTIN_REF) on small models built here, one per operator variant that the
MLPerf Tiny models do not exercise. Each model runs on 50 random inputs plus the all-min and all-max
inputs and must match bit for bit (every output element; floats compared by bit pattern)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

try:  # tests/ as a package or as a plain directory on sys.path
    from .tflite_builder import ACT, SAME, VALID, ModelBuilder, compare_with_litert, litert_interpreter, litert_invoke
except ImportError:
    from tflite_builder import ACT, SAME, VALID, ModelBuilder, compare_with_litert, litert_interpreter, litert_invoke


RNG = np.random.RandomState(1234)


def _w(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.randint(-127, 128, size=shape).astype(np.int8)


def _bias(k: int, dtype: str = "int32", span: int = 3000) -> np.ndarray:
    return RNG.randint(-span, span, size=k).astype(dtype)


# --- elementwise ----------------------------------------------------------------------------------

def sub_broadcast_relu() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 5, 4, 3), "int8", scale=0.041, zero_point=-7)
    y = b.input("y", (1, 1, 4, 3), "int8", scale=0.067, zero_point=11)
    z = b.tensor("z", (1, 5, 4, 3), "int8", scale=0.05, zero_point=-20)
    b.op("SUB", [x, y], [z], "SubOptions", FusedActivationFunction=ACT["RELU"])
    b.output(z)
    return b


def sub_const_second() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 6, 3), "int8", scale=0.11, zero_point=3)
    c = b.const("c", RNG.randint(-128, 128, size=(3,)), "int8", scale=0.02, zero_point=-1)
    z = b.tensor("z", (1, 6, 3), "int8", scale=0.13, zero_point=0)
    b.op("SUB", [x, c], [z], "SubOptions", FusedActivationFunction=ACT["NONE"])
    b.output(z)
    return b


def add_relu_n1_to_1() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 8), "int8", scale=0.01, zero_point=5)
    y = b.input("y", (1, 4, 4, 8), "int8", scale=0.013, zero_point=-9)
    z = b.tensor("z", (1, 4, 4, 8), "int8", scale=0.009, zero_point=1)
    b.op("ADD", [x, y], [z], "AddOptions", FusedActivationFunction=ACT["RELU_N1_TO_1"])
    b.output(z)
    return b


def add_int16() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 3, 4), "int16", scale=0.0003, zero_point=0)
    y = b.input("y", (1, 1, 3, 4), "int16", scale=0.0007, zero_point=0)
    z = b.tensor("z", (1, 3, 3, 4), "int16", scale=0.0009, zero_point=0)
    b.op("ADD", [x, y], [z], "AddOptions", FusedActivationFunction=ACT["NONE"])
    b.output(z)
    return b


def sub_int16() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 3, 4), "int16", scale=0.0003, zero_point=0)
    y = b.input("y", (1, 3, 3, 4), "int16", scale=0.0007, zero_point=0)
    z = b.tensor("z", (1, 3, 3, 4), "int16", scale=0.0009, zero_point=0)
    b.op("SUB", [x, y], [z], "SubOptions", FusedActivationFunction=ACT["NONE"])
    b.output(z)
    return b


def mul_int16() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 3, 4), "int16", scale=0.0003, zero_point=0)
    y = b.input("y", (1, 1, 1, 4), "int16", scale=0.0007, zero_point=0)
    z = b.tensor("z", (1, 3, 3, 4), "int16", scale=0.00011, zero_point=0)
    b.op("MUL", [x, y], [z], "MulOptions", FusedActivationFunction=ACT["NONE"])
    b.output(z)
    return b


def add_uint8() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 3), "uint8", scale=0.02, zero_point=128)
    y = b.input("y", (1, 4, 4, 3), "uint8", scale=0.03, zero_point=100)
    z = b.tensor("z", (1, 4, 4, 3), "uint8", scale=0.04, zero_point=90)
    b.op("ADD", [x, y], [z], "AddOptions", FusedActivationFunction=ACT["RELU"])
    b.output(z)
    return b


def mul_broadcast_relu6() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 6), "int8", scale=0.07, zero_point=-3)
    y = b.input("y", (1, 1, 1, 6), "int8", scale=0.031, zero_point=4)
    z = b.tensor("z", (1, 4, 5, 6), "int8", scale=0.04, zero_point=-128)
    b.op("MUL", [x, y], [z], "MulOptions", FusedActivationFunction=ACT["RELU6"])
    b.output(z)
    return b


# --- pooling, reductions --------------------------------------------------------------------------

def max_pool_same_relu6() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 9, 7, 5), "int8", scale=0.05, zero_point=-10)
    y = b.tensor("y", (1, 5, 4, 5), "int8", scale=0.05, zero_point=-10)
    b.op("MAX_POOL_2D", [x], [y], "Pool2DOptions", Padding=SAME, StrideW=2, StrideH=2, FilterWidth=3,
         FilterHeight=3, FusedActivationFunction=ACT["RELU6"])
    b.output(y)
    return b


def avg_pool_same_partial() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 7, 6, 4), "int8", scale=0.02, zero_point=3)
    y = b.tensor("y", (1, 4, 3, 4), "int8", scale=0.02, zero_point=3)
    b.op("AVERAGE_POOL_2D", [x], [y], "Pool2DOptions", Padding=SAME, StrideW=2, StrideH=2, FilterWidth=3,
         FilterHeight=3, FusedActivationFunction=ACT["NONE"])
    b.output(y)
    return b


def _mean(shape, axes, keep, out_shape, s_in, zp_in, s_out, zp_out) -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", shape, "int8", scale=s_in, zero_point=zp_in)
    ax = b.const("axes", np.asarray(axes, dtype=np.int32), "int32")
    y = b.tensor("y", out_shape, "int8", scale=s_out, zero_point=zp_out)
    b.op("MEAN", [x, ax], [y], "ReducerOptions", KeepDims=keep)
    b.output(y)
    return b


def mean_hw_keepdims_rescale() -> ModelBuilder:
    return _mean((1, 5, 6, 7), [1, 2], True, (1, 1, 1, 7), 0.05, -3, 0.021, 6)


def mean_hw_keepdims_same_quant() -> ModelBuilder:
    return _mean((1, 5, 6, 7), [1, 2], True, (1, 1, 1, 7), 0.05, -3, 0.05, -3)


def mean_last_axis_same_quant() -> ModelBuilder:
    return _mean((2, 3, 10), [-1], False, (2, 3), 0.05, 7, 0.05, 7)


def mean_axis1_rescale() -> ModelBuilder:
    return _mean((1, 6, 4, 3), [1], False, (1, 4, 3), 0.1, 0, 0.03, -20)


# --- data movement --------------------------------------------------------------------------------

def pad_zero_point() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 4, 2), "int8", scale=0.1, zero_point=-5)
    p = b.const("pads", np.array([[0, 0], [1, 2], [0, 3], [0, 0]], dtype=np.int32), "int32")
    y = b.tensor("y", (1, 6, 7, 2), "int8", scale=0.1, zero_point=-5)
    b.op("PAD", [x, p], [y], "PadOptions")
    b.output(y)
    return b


def padv2_constant() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 4, 2), "int8", scale=0.1, zero_point=-5)
    p = b.const("pads", np.array([[0, 0], [2, 0], [1, 1], [0, 1]], dtype=np.int32), "int32")
    c = b.const("value", np.array([42], dtype=np.int8).reshape(()), "int8", scale=0.1, zero_point=-5)
    y = b.tensor("y", (1, 5, 6, 3), "int8", scale=0.1, zero_point=-5)
    b.op("PADV2", [x, p, c], [y], "PadV2Options")
    b.output(y)
    return b


def concat_same_quant() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 3, 2), "int8", scale=0.1, zero_point=1)
    y = b.input("y", (1, 3, 3, 5), "int8", scale=0.1, zero_point=1)
    z = b.tensor("z", (1, 3, 3, 7), "int8", scale=0.1, zero_point=1)
    b.op("CONCATENATION", [x, y], [z], "ConcatenationOptions", Axis=-1, FusedActivationFunction=0)
    b.output(z)
    return b


def concat_uint8_rescale() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 2, 3, 2), "uint8", scale=0.1, zero_point=128)
    y = b.input("y", (1, 2, 3, 2), "uint8", scale=0.037, zero_point=90)
    w = b.input("w", (1, 2, 3, 2), "uint8", scale=0.05, zero_point=100)
    z = b.tensor("z", (1, 2, 3, 6), "uint8", scale=0.05, zero_point=100)
    b.op("CONCATENATION", [x, y, w], [z], "ConcatenationOptions", Axis=3, FusedActivationFunction=0)
    b.output(z)
    return b


def transpose_nhwc_nchw() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 4, 5), "int8", scale=0.1, zero_point=0)
    p = b.const("perm", np.array([0, 3, 1, 2], dtype=np.int32), "int32")
    y = b.tensor("y", (1, 5, 3, 4), "int8", scale=0.1, zero_point=0)
    b.op("TRANSPOSE", [x, p], [y], "TransposeOptions")
    b.output(y)
    return b


def squeeze() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 1, 1, 9), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 9), "int8", scale=0.1, zero_point=0)
    b.op("SQUEEZE", [x], [y], "SqueezeOptions", SqueezeDims=[1, 2])
    b.output(y)
    return b


# --- activations ----------------------------------------------------------------------------------

def logistic_int8() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 16, 16), "int8", scale=0.06, zero_point=-4)
    y = b.tensor("y", (1, 16, 16), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [x], [y])
    b.output(y)
    return b


def logistic_int8_wide_scale() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 256), "int8", scale=0.0123, zero_point=17)
    y = b.tensor("y", (1, 256), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [x], [y])
    b.output(y)
    return b


def _softmax(shape, s_in, zp_in, beta) -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", shape, "int8", scale=s_in, zero_point=zp_in)
    y = b.tensor("y", shape, "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    b.output(y)
    return b


def softmax_beta1() -> ModelBuilder:
    return _softmax((1, 10), 0.17, 24, 1.0)


def softmax_4d_small_scale() -> ModelBuilder:
    return _softmax((1, 3, 4, 12), 0.02, -5, 1.0)


def softmax_beta_half_large_scale() -> ModelBuilder:
    return _softmax((2, 33), 0.5, 0, 0.5)


# --- quantization ---------------------------------------------------------------------------------

def _quantize(din, s_in, zp_in, dout, s_out, zp_out) -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 8), din, **({} if din == "float32" else {"scale": s_in, "zero_point": zp_in}))
    y = b.tensor("y", (1, 4, 4, 8), dout, scale=s_out, zero_point=zp_out)
    b.op("QUANTIZE", [x], [y])
    b.output(y)
    return b


def quantize_int8_int8() -> ModelBuilder:
    return _quantize("int8", 0.05, 3, "int8", 0.031, -9)


def quantize_int8_uint8_shift() -> ModelBuilder:
    return _quantize("int8", 0.05, 3, "uint8", 0.05, 131)


def quantize_int8_uint8_rescale() -> ModelBuilder:
    return _quantize("int8", 0.05, 3, "uint8", 0.07, 120)


def quantize_float_int8() -> ModelBuilder:
    return _quantize("float32", 0, 0, "int8", 0.0625, -3)


def dequantize_int8() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 7, 9), "int8", scale=0.0371, zero_point=-6)
    y = b.tensor("y", (1, 7, 9), "float32")
    b.op("DEQUANTIZE", [x], [y])
    b.output(y)
    return b


# --- convolution / dense variants -----------------------------------------------------------------

def conv_relu6_per_channel() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 9, 8, 3), "int8", scale=0.03, zero_point=-11)
    w = b.const("w", _w((6, 3, 3, 3)), "int8", scale=RNG.uniform(0.002, 0.02, 6), zero_point=0)
    bias = b.const("b", _bias(6), "int32", scale=np.full(6, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 5, 4, 6), "int8", scale=0.04, zero_point=-128)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=2, StrideH=2,
         FusedActivationFunction=ACT["RELU6"], DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    return b


def grouped_conv() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 6, 6, 8), "int8", scale=0.03, zero_point=2)
    w = b.const("w", _w((4, 3, 3, 4)), "int8", scale=RNG.uniform(0.002, 0.02, 4), zero_point=0)
    bias = b.const("b", _bias(4), "int32", scale=np.full(4, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 6, 6, 4), "int8", scale=0.2, zero_point=-3)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["NONE"], DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    return b


def depthwise_multiplier2_dilated() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 10, 9, 3), "int8", scale=0.05, zero_point=7)
    w = b.const("w", _w((1, 3, 3, 6)), "int8", scale=RNG.uniform(0.002, 0.02, 6), zero_point=0,
                quantized_dimension=3)
    bias = b.const("b", _bias(6), "int32", scale=np.full(6, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 5, 5, 6), "int8", scale=0.06, zero_point=-5)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], "DepthwiseConv2DOptions", Padding=SAME, StrideW=2, StrideH=2,
         DepthMultiplier=2, FusedActivationFunction=ACT["RELU"], DilationWFactor=2, DilationHFactor=2)
    b.output(y)
    return b


def fc_per_channel_keepdims() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 3, 20), "int8", scale=0.05, zero_point=-2)
    w = b.const("w", _w((7, 20)), "int8", scale=RNG.uniform(0.002, 0.02, 7), zero_point=0)
    bias = b.const("b", _bias(7), "int32", scale=np.full(7, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 3, 7), "int8", scale=0.1, zero_point=4)
    b.op("FULLY_CONNECTED", [x, w, bias], [y], "FullyConnectedOptions", FusedActivationFunction=0, KeepNumDims=True)
    b.output(y)
    return b


def _float_product_differs(lo: float = 1 / 3000, hi: float = 1 / 300) -> tuple[float, float, float]:
    """Scales (s_x, s_w, s_y), s_x*s_w/s_y in [lo, hi], where QuantizeMultiplier(double(float(s_x*s_w))/s_y)
    differs most from the all-double QuantizeMultiplier(s_x*s_w/s_y)."""
    from tilewise.ir.requant import quantize_multiplier

    rng = np.random.RandomState(7)
    best, best_gap = None, 0.0
    for _ in range(3000):
        sx, sw = (float(np.float32(v)) for v in rng.uniform(0.001, 0.1, 2))
        sy = float(np.float32(sx * sw / rng.uniform(lo, hi)))
        a = quantize_multiplier(float(np.float32(sx) * np.float32(sw)) / sy)
        b = quantize_multiplier(sx * sw / sy)
        gap = abs(a[0] - b[0]) / a[0] if a[1] == b[1] else 0.0
        if gap > best_gap:
            best, best_gap = (sx, sw, sy), gap
    assert best is not None
    return best


def fc_per_tensor_relu() -> ModelBuilder:
    sx, sw, sy = _float_product_differs()
    b = ModelBuilder()
    x = b.input("x", (4, 64), "int8", scale=sx, zero_point=-128)
    w = b.const("w", _w((32, 64)), "int8", scale=sw, zero_point=0)
    bias = b.const("b", _bias(32, span=20000), "int32", scale=sx * sw, zero_point=0)
    y = b.tensor("y", (4, 32), "int8", scale=sy, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, bias], [y], "FullyConnectedOptions", FusedActivationFunction=ACT["RELU"])
    b.output(y)
    return b


def conv_16x8_int64_bias() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 7, 7, 4), "int16", scale=0.0005, zero_point=0)
    w = b.const("w", _w((5, 3, 3, 4)), "int8", scale=RNG.uniform(0.002, 0.02, 5), zero_point=0)
    bias = b.const("b", _bias(5, "int64", 10_000_000), "int64", scale=np.full(5, 1e-6), zero_point=0)
    y = b.tensor("y", (1, 7, 7, 5), "int16", scale=0.002, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["RELU"], DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    return b


def conv_16x8_int32_bias() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 6, 6, 3), "int16", scale=0.0005, zero_point=0)
    w = b.const("w", _w((4, 3, 3, 3)), "int8", scale=RNG.uniform(0.002, 0.02, 4), zero_point=0)
    bias = b.const("b", _bias(4, "int32", 1_000_000), "int32", scale=np.full(4, 1e-6), zero_point=0)
    y = b.tensor("y", (1, 6, 6, 4), "int16", scale=0.003, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=VALID if False else SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["NONE"], DilationWFactor=1, DilationHFactor=1, QuantizedBiasType=2)
    b.output(y)
    return b


def fc_16x8_int64_bias() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (2, 48), "int16", scale=0.0004, zero_point=0)
    w = b.const("w", _w((10, 48)), "int8", scale=0.011, zero_point=0)
    bias = b.const("b", _bias(10, "int64", 5_000_000), "int64", scale=4.4e-6, zero_point=0)
    y = b.tensor("y", (2, 10), "int16", scale=0.004, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, bias], [y], "FullyConnectedOptions", FusedActivationFunction=ACT["RELU6"])
    b.output(y)
    return b


def old_schema_per_channel_conv() -> ModelBuilder:
    """Operator codes in deprecated_builtin_code only, quantized_dimension absent (reads as 0)."""
    b = ModelBuilder(old_schema=True)
    x = b.input("x", (1, 8, 8, 4), "int8", scale=0.02, zero_point=-1)
    w = b.const("w", _w((6, 3, 3, 4)), "int8", scale=RNG.uniform(0.002, 0.02, 6), zero_point=0)
    bias = b.const("b", _bias(6), "int32", scale=np.full(6, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 6, 6, 6), "int8", scale=0.05, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=VALID, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["NONE"], DilationWFactor=1, DilationHFactor=1)
    z = b.tensor("z", (1, 6, 6, 6), "int8", scale=0.05, zero_point=3)
    b.op("ADD", [y, y], [z], "AddOptions", FusedActivationFunction=ACT["RELU"])
    b.output(z)
    return b


def chain_conv_mean_fc_softmax() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 3), "int8", scale=0.02, zero_point=-128)
    w = b.const("w", _w((8, 3, 3, 3)), "int8", scale=RNG.uniform(0.002, 0.02, 8), zero_point=0)
    bias = b.const("b", _bias(8), "int32", scale=np.full(8, 1e-4), zero_point=0)
    c = b.tensor("c", (1, 8, 8, 8), "int8", scale=0.03, zero_point=-128)
    b.op("CONV_2D", [x, w, bias], [c], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["RELU"], DilationWFactor=1, DilationHFactor=1)
    ax = b.const("axes", np.array([1, 2], dtype=np.int32), "int32")
    m = b.tensor("m", (1, 8), "int8", scale=0.02, zero_point=-100)
    b.op("MEAN", [c, ax], [m], "ReducerOptions", KeepDims=False)
    fw = b.const("fw", _w((5, 8)), "int8", scale=0.01, zero_point=0)
    f = b.tensor("f", (1, 5), "int8", scale=0.05, zero_point=3)
    b.op("FULLY_CONNECTED", [m, fw, -1], [f], "FullyConnectedOptions", FusedActivationFunction=0)
    s = b.tensor("s", (1, 5), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [f], [s], "SoftmaxOptions", Beta=1.0)
    b.output(s)
    return b


CASES: list[Callable[[], ModelBuilder]] = [
    sub_broadcast_relu, sub_const_second, add_relu_n1_to_1, add_int16, sub_int16, mul_int16, add_uint8,
    mul_broadcast_relu6,
    max_pool_same_relu6, avg_pool_same_partial,
    mean_hw_keepdims_rescale, mean_hw_keepdims_same_quant, mean_last_axis_same_quant, mean_axis1_rescale,
    pad_zero_point, padv2_constant, concat_same_quant, concat_uint8_rescale, transpose_nhwc_nchw, squeeze,
    logistic_int8, logistic_int8_wide_scale, softmax_beta1, softmax_4d_small_scale, softmax_beta_half_large_scale,
    quantize_int8_int8, quantize_int8_uint8_shift, quantize_int8_uint8_rescale, quantize_float_int8,
    dequantize_int8,
    conv_relu6_per_channel, grouped_conv, depthwise_multiplier2_dilated, fc_per_channel_keepdims,
    fc_per_tensor_relu, conv_16x8_int64_bias, conv_16x8_int32_bias, fc_16x8_int64_bias,
    old_schema_per_channel_conv, chain_conv_mean_fc_softmax,
]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_bit_exact_vs_litert(case: Callable[[], ModelBuilder], tmp_path) -> None:
    path = case().save(tmp_path / f"{case.__name__}.tflite")
    bad, total = compare_with_litert(path, n=50, seed=3, all_tensors=True, float_range=20.0)
    assert total > 0
    assert bad == 0, f"{case.__name__}: {bad} of {total} elements differ from LiteRT"


def test_fc_per_tensor_multiplier_is_taken_from_the_double_product(tmp_path) -> None:
    """LiteRT's per-tensor FULLY_CONNECTED multiplier is QuantizeMultiplier(double(s_x)*double(s_w)/s_y),
    not the legacy double(float(s_x*s_w))/s_y. On scales where the two differ, build inputs whose
    accumulator lands where they round differently, and check that LiteRT agrees with the golden model."""
    from dataclasses import replace

    from tilewise.frontend import load_model
    from tilewise.golden import run_graph
    from tilewise.golden.requant import apply_requant
    from tilewise.ir.requant import tflite_requant

    c = 1024
    sx, sw, sy = _float_product_differs(2e-6, 3.5e-6)
    rng = np.random.RandomState(0)
    wdata = rng.randint(-127, 128, size=(4, c)).astype(np.int8)
    wdata[0, 0], wdata[0, 1:] = 1, 127  # acc of output 0 = (x0+128) + 127*sum(x[1:]+128): any value in [0, 33e6]
    b = ModelBuilder()
    x = b.input("x", (16, c), "int8", scale=sx, zero_point=-128)
    w = b.const("w", wdata, "int8", scale=sw, zero_point=0)
    y = b.tensor("y", (16, 4), "int8", scale=sy, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions", FusedActivationFunction=0)
    b.output(y)
    path = b.save(tmp_path / "fc.tflite")
    graph = load_model(path)
    rq_double = graph.nodes[0].params.requant
    rq_float = replace(tflite_requant(np.array([float(np.float32(sx) * np.float32(sw)) / sy]), 0, -128, 127),
                       rounding="single")
    assert (rq_float.multiplier != rq_double.multiplier).all()
    real = sx * sw / sy  # accumulators next to each rounding boundary k + 1/2
    near = (np.arange(0, 127)[:, None] + 0.5) / real + np.arange(-3, 4)[None, :]
    accs = np.unique(np.clip(np.rint(near), 0, 127 * 255 * (c - 1)).astype(np.int64))
    special = accs[apply_requant(accs, rq_float) != apply_requant(accs, rq_double)]
    assert special.size >= 8
    rows = []
    for target in special[np.linspace(0, special.size - 1, 16).astype(int)]:
        s127, t = divmod(int(target), 127)
        row = np.full(c, -128)
        row[0] = t - 128
        spread = np.full(c - 1, s127 // (c - 1))
        spread[: s127 % (c - 1)] += 1
        row[1:] = spread - 128
        rows.append(row)
    inputs = np.asarray(rows, dtype=np.int8)
    ref = litert_invoke(litert_interpreter(path), [inputs])[graph.meta["tflite_tensor_index"][graph.outputs[0]]]
    got = run_graph(graph, [inputs])[graph.outputs[0]]
    acc = (inputs.astype(np.int64) + 128) @ wdata.astype(np.int64).T
    assert set(acc[:, 0].tolist()) <= set(special.tolist())
    assert np.array_equal(ref, got)
    assert (ref[:, 0] != apply_requant(acc, rq_float)[:, 0]).all()
