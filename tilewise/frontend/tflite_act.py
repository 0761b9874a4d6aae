"""TFLite activation and quantization operators -> IR nodes: SOFTMAX, LOGISTIC, QUANTIZE, DEQUANTIZE.

Parameters as LiteRT's Prepare computes them (see tflite_ops.py for the table): softmax uses
PreprocessSoftmaxScaling with 5 integer bits and diff_min = -CalculateInputRadius(5, left_shift)
(quantization_util.cc); LOGISTIC int8/uint8 is the 256-entry table LUTPopulate builds from the float
sigmoid 1/(1+expf(-x)); QUANTIZE int->int uses QuantizeMultiplier(double(s_in)/double(s_out)).
int16 SOFTMAX (SoftmaxInt16) uses LUTPopulateInt16's two 513-entry tables (exp on [-10, 0], 1/(1+x)
on [0, 1], built in float32) and QuantizeMultiplier(float(s_x·beta) / (10/65535)).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..ir.ops import Op
from ..ir.params import (
    TfliteAffineQuantizeParams,
    TfliteDequantizeParams,
    TfliteLogisticParams,
    TfliteRequantizeParams,
    TfliteSoftmaxParams,
)
from ..ir.requant import quantize_multiplier
from ..ir.tensor import dtype_range
from .tflite import TfliteOperator

if TYPE_CHECKING:
    from .tflite_ops import Converter

f32 = np.float32


def _probability_io(cv: Converter, op: TfliteOperator, what: str):
    """Input and output of a softmax/logistic: int8 or uint8, output quantized as TFLite requires
    (scale 1/256, zero point at the type's minimum). Returns (x, y, dtype)."""
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    d = cv.check_int(op, x, ("int8", "uint8"))
    cv.check_int(op, y, (d,))
    lo = dtype_range(d)[0]
    if y.zero_point[0] != lo or f32(y.scale[0]) != f32(1.0 / 256):
        raise cv.fail(op, f"has output quantization scale {y.scale[0]}, zero point {y.zero_point[0]}",
                      f"TFLite requires scale 1/256 and zero point {lo} for a {d} {what}")
    return x, y, d


def softmax(cv: Converter, op: TfliteOperator) -> None:
    if cv.need(op, 0, "input").dtype == "int16":
        softmax_int16(cv, op)
        return
    x, y, _ = _probability_io(cv, op, "softmax")
    beta = float(op.options.get("Beta", 1.0))
    if not (np.isfinite(beta) and beta > 0):
        raise cv.fail(op, f"has beta {beta}", "a softmax's beta is a finite positive number; the model is malformed")
    mult, shift = softmax_scaling(beta, float(x.scale[0]))
    diff_min = -input_radius(5, shift)
    cv.emit(op, Op.SOFTMAX, [cv.name(x.index)], cv.name(y.index),
            TfliteSoftmaxParams(input_multiplier=mult, input_left_shift=shift, diff_min=diff_min))


def softmax_int16(cv: Converter, op: TfliteOperator) -> None:
    """int16 SOFTMAX (SoftmaxPrepare, int16 branch): output scale 1/32768 and zero point 0;
    (input_multiplier, input_left_shift) = QuantizeMultiplier(float(s_x·beta) / (10/65535)) and
    the two tables of `int16_lut`."""
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    cv.check_int(op, x, ("int16",))
    cv.check_int(op, y, ("int16",))
    if y.zero_point[0] != 0 or abs(float(y.scale[0]) - 1.0 / 32768) > 0.001 / 32768:
        raise cv.fail(op, f"has output quantization scale {y.scale[0]}, zero point {y.zero_point[0]}",
                      "TFLite requires scale 1/32768 and zero point 0 for an int16 softmax")
    rng = 65535
    beta = f32(op.options.get("Beta", 1.0))
    mult, shift = quantize_multiplier(float(f32(x.scale[0]) * beta) / (10.0 / rng))
    exp_lut = int16_lut(f32(10.0) / f32(rng), 32767, f32(2.0) / f32(rng), 0, _expf)
    recip_lut = int16_lut(f32(1.0) / f32(rng), -32768, f32(2.0) / f32(rng), 0,
                          lambda v: (f32(1.0) / (f32(1.0) + v)).astype(np.float32))
    cv.emit(op, Op.SOFTMAX, [cv.name(x.index)], cv.name(y.index),
            TfliteSoftmaxParams(input_multiplier=mult, input_left_shift=shift, diff_min=0,
                                exp_lut=exp_lut, recip_lut=recip_lut))


def _roundf(v: np.ndarray) -> np.ndarray:
    """std::round on float32: half away from zero (exact: |v| + 0.5 is only inexact where v is
    already an integer or its rounding is unaffected)."""
    v = np.asarray(v, dtype=np.float32)
    r = np.trunc(v)
    frac = (v - r).astype(np.float32)
    return np.where(np.abs(frac) >= np.float32(0.5), r + np.sign(v), r).astype(np.float32)


def int16_lut(s_in: np.float32, zp_in: int, s_out: np.float32, zp_out: int, fn) -> tuple[int, ...]:
    """LUTPopulateInt16<float> (tflite/kernels/internal/lut.h), every step in float32: 512 samples
    of `fn` on the input range with a bias that halves the linear interpolation's midpoint error,
    and the last entry at the range's end (513 entries)."""
    f = np.float32
    in_min, in_max = f(s_in * f(-32768 - zp_in)), f(s_in * f(32767 - zp_in))
    out_min, out_max = f(s_out * f(-32768 - zp_out)), f(s_out * f(32767 - zp_out))
    steps = 512
    step = f((in_max - in_min) / f(steps))
    half = f(step / f(2))
    inv = f(f(65536) / f(out_max - out_min))
    i = np.arange(steps, dtype=np.float32)
    at = (in_min + (i * step).astype(np.float32)).astype(np.float32)
    val = fn(at)
    mid = fn((at + half).astype(np.float32))
    nxt = fn((in_min + ((i + f(1)) * step).astype(np.float32)).astype(np.float32))
    sample = _roundf(val * inv)
    interp = _roundf(((nxt * inv).astype(np.float32) + sample) / f(2))
    mid_val = _roundf(mid * inv)
    bias = _roundf((interp - mid_val).astype(np.float32) / f(2))
    lut = np.clip((sample - bias).astype(np.float32), -32768, 32767).astype(np.int64)
    last = np.clip(_roundf(fn(np.asarray([in_max], np.float32)) * inv), -32768, 32767)
    return tuple(int(v) for v in lut) + (int(last[0]),)


def softmax_scaling(beta: float, input_scale: float, integer_bits: int = 5) -> tuple[int, int]:
    """PreprocessSoftmaxScaling (quantization_util.cc), double-rounding build."""
    real = min(beta * input_scale * float(1 << (31 - integer_bits)), float((1 << 31) - 1))
    m, s = quantize_multiplier(real)
    return m, s


def input_radius(integer_bits: int, left_shift: int, total_signed_bits: int = 31) -> int:
    """CalculateInputRadius (quantization_util.cc)."""
    v = 1.0 * ((1 << integer_bits) - 1) * float(1 << (total_signed_bits - integer_bits)) / float(1 << left_shift)
    return int(math.floor(v))


def logistic(cv: Converter, op: TfliteOperator) -> None:
    x, y, d = _probability_io(cv, op, "logistic")
    table = sigmoid_table(d, float(x.scale[0]), int(x.zero_point[0]), float(y.scale[0]), int(y.zero_point[0]))
    cv.emit(op, Op.LOGISTIC, [cv.name(x.index)], cv.name(y.index), TfliteLogisticParams(table=table))


def sigmoid_table(dtype: str, s_in: float, zp_in: int, s_out: float, zp_out: int) -> tuple[int, ...]:
    """LUTPopulate for LOGISTIC: entry q holds quantize(1/(1+exp(-dequantize(q)))) in float32."""
    lo, hi = dtype_range(dtype)
    q = np.arange(lo, hi + 1, dtype=np.int32)
    deq = np.float32(s_in) * (q - zp_in).astype(np.float32)
    e = _expf(-deq)
    val = np.float32(1.0) / (np.float32(1.0) + e)
    inv = np.float32(1.0) / np.float32(s_out)
    r = val * inv
    rounded = np.sign(r) * np.floor(np.abs(r) + np.float32(0.5))
    out = np.clip(rounded.astype(np.int64) + zp_out, lo, hi)
    return tuple(int(v) for v in out)


def _expf(x: np.ndarray) -> np.ndarray:
    """float32 exp, correctly rounded from double (what libm's expf returns for these inputs)."""
    return np.exp(x.astype(np.float64)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# quantization
# ---------------------------------------------------------------------------------------------

def quantize(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    cv.check_int(op, y)
    if len(y.scale) > 1:
        raise cv.fail(op, "quantizes per channel", "tilewise supports per-tensor QUANTIZE")
    if x.dtype == "float32":
        cv.emit(op, Op.QUANTIZE, [cv.name(x.index)], cv.name(y.index),
                TfliteAffineQuantizeParams(scale=float(y.scale[0]), zero_point=int(y.zero_point[0])))
        return
    cv.check_int(op, x)
    m, s = quantize_multiplier(float(x.scale[0]) / float(y.scale[0]))
    cv.emit(op, Op.QUANTIZE, [cv.name(x.index)], cv.name(y.index),
            TfliteRequantizeParams(multiplier=m, shift=s, input_zero_point=int(x.zero_point[0]),
                                   zero_point=int(y.zero_point[0])))


def dequantize(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    cv.check_int(op, x, ("int8", "uint8", "int16"))
    if len(x.scale) > 1:
        raise cv.fail(op, "dequantizes per channel", "tilewise supports per-tensor DEQUANTIZE")
    if y.dtype != "float32":
        raise cv.fail(op, f"produces a {y.type_name} tensor", "DEQUANTIZE must produce float32")
    cv.emit(op, Op.DEQUANTIZE, [cv.name(x.index)], cv.name(y.index),
            TfliteDequantizeParams(scale=float(x.scale[0]), zero_point=int(x.zero_point[0])))


