"""Integer fixed-point primitives of TFLite/gemmlowp, vectorized over numpy int64 arrays.

Definitions follow tensorflow/lite/kernels/internal/common.h and gemmlowp/fixedpoint.h (the
reference kernels that LiteRT's BUILTIN_REF resolver runs): SaturatingRoundingDoublingHighMul,
RoundingDivideByPOT, MultiplyByQuantizedMultiplier (double rounding, the default build). All
values are carried in int64 and wrapped to int32 where the C code relies on int32 arithmetic.
"""

from __future__ import annotations

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def wrap32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to the int32 range (C int32 overflow on x86)."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def srdhm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul(int32 a, int32 b) -> int32 (gemmlowp)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    q = ab + nudge
    # C integer division truncates toward zero
    res = np.where(q >= 0, q >> 31, -((-q) >> 31))
    return np.where(overflow, INT32_MAX, res)


def rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """RoundingDivideByPOT(int32 x, int exponent): x / 2^exponent rounded half away from zero."""
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


def multiply_by_quantized_multiplier(x: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier(int32 x, int32 M0, int shift) (positive shift = left)."""
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    return rounding_divide_by_pot(srdhm(wrap32(np.asarray(x, dtype=np.int64) << left), multiplier), right)


def multiply_by_quantized_multiplier_single(x: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Single-rounding MultiplyByQuantizedMultiplier(int32 x, int32 M0, int shift): round(x*M0 / 2^(31-shift)),
    ties toward +inf, as TFLITE_SINGLE_ROUNDING builds (and LiteRT's int8 FULLY_CONNECTED) compute it."""
    x = wrap32(np.asarray(x, dtype=np.int64))
    m = np.asarray(multiplier, dtype=np.int64)
    total = 31 - np.asarray(shift, dtype=np.int64)
    return wrap32((x * m + (np.int64(1) << (total - 1))) >> total)


def multiply_by_quantized_multiplier_64(x: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier(int64 x, int32 M0, int shift): the 16x8 path (int64 acc).

    Reduces M0 to 16 bits, then one rounding shift by 15 - shift (common.h, int64 overload).
    """
    x = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - shift
    v = x * reduced + (np.int64(1) << (total - 1))
    return wrap32(v >> total)
