"""The float32 constants onnxruntime's quantized CPU kernels derive from scales and zero points.

Each function mirrors the setup code of one kernel (onnxruntime 1.31, CPU provider, MLAS on x86-64)
including its float32 evaluation order, because the integer results depend on those roundings:

| kernel | constant |
|---|---|
| QLinearConv, QLinearMatMul (qlinearconv.cc, quantize ComputeOutputScale) | f32(f32(s_x·s_w[k]) / s_y) |
| QGemm (quant_gemm.cc ComputeOutputScale) | f32(f32(f32(alpha·s_a)·s_b[k]) / s_y) |
| QLinearAdd (qladd_avx2.cpp) | r_a = s_a/s_c, r_b = s_b/s_c, fixed = zp_c − fma(zp_a, r_a, r_b·zp_b) |
| QLinearGlobalAveragePool (qlgavgpool.cpp) | s_x / (s_y·f32(N)), rejected outside [2^-32, 256) |
| QLinearSoftmax (qlinear_softmax.cc) | table[i] = f32(exp((i − 255 + shift)·s_x)), shift = max(0, ln(FLT_MAX/D) − |
|                                     | 5)/s_x; ⌊1/s_y⌋                                                            |
| QuantizeLinear (MlasQuantizeLinear) | sat(rint(v / s) + zp) |

The QLinearAdd fixed part is evaluated as the compiler contracts `r_a·zp_a + r_b·zp_b` into one fused
multiply-add; tests/test_golden_onnx.py checks this exhaustively against onnxruntime.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.tensor import dtype_range

f32 = np.float32
FLT_MAX = float(np.finfo(np.float32).max)


def conv_scales(s_x: float, s_w: np.ndarray, s_y: float) -> np.ndarray:
    """Per-channel requantization scales of QLinearConv / QLinearMatMul (float32)."""
    sw = np.atleast_1d(np.asarray(s_w, dtype=np.float32))
    return ((f32(s_x) * sw).astype(np.float32) / f32(s_y)).astype(np.float32)


def gemm_scales(alpha: float, s_a: float, s_b: np.ndarray, s_y: float) -> np.ndarray:
    """Per-column requantization scales of QGemm (alpha·s_a·s_b[k] / s_y in float32)."""
    sb = np.atleast_1d(np.asarray(s_b, dtype=np.float32))
    return (((f32(alpha) * f32(s_a)) * sb).astype(np.float32) / f32(s_y)).astype(np.float32)


def _fma(a: float, b: float, c: float) -> np.float32:
    return f32(np.float64(f32(a)) * np.float64(f32(b)) + np.float64(f32(c)))


def add_params(s_a: float, zp_a: int, s_b: float, zp_b: int, s_c: float, zp_c: int) -> tuple[float, float, float]:
    """(ratio_a, ratio_b, fixed) of MlasQLinearAdd's AVX2 kernel, float32 values as Python floats."""
    ra = f32(f32(s_a) / f32(s_c))
    rb = f32(f32(s_b) / f32(s_c))
    fixed = f32(f32(zp_c) - _fma(f32(zp_a), ra, f32(rb * f32(zp_b))))
    return float(ra), float(rb), float(fixed)


def global_pool_scale(s_x: float, s_y: float, count: int) -> float | None:
    """QLinearGlobalAveragePool's scale, or None where MLAS rejects the parameters."""
    if count >= 0x1000000:
        return None
    s = f32(f32(s_x) / f32(f32(s_y) * f32(count)))
    if s < f32(2.0 ** -32) or s >= f32(256.0):
        return None
    return float(s)


def softmax_table(s_x: float, reduce_len: int) -> np.ndarray:
    """QLinearSoftmax's 256-entry float32 exp table for inputs of scale s_x reduced over reduce_len."""
    shift = math.log(float(f32(f32(FLT_MAX) / f32(reduce_len))))
    shift = max(0.0, shift - 5.0) / float(f32(s_x))
    return np.asarray([f32(math.exp((float(i) - 255.0 + shift) * float(f32(s_x)))) for i in range(256)],
                      dtype=np.float32)


def softmax_y_scale_inv(s_y: float) -> float:
    """floor(1.0f / y_scale) in float32."""
    return float(f32(math.floor(f32(f32(1.0) / f32(s_y)))))


def quantize_value(v: float, scale: float, zero_point: int, dtype: str) -> int:
    """MlasQuantizeLinear of one float: sat(rint(v / scale) + zp)."""
    lo, hi = dtype_range(dtype)
    q = int(np.rint(f32(f32(v) / f32(scale)))) + int(zero_point)
    return int(min(max(q, lo), hi))
