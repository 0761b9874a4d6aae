"""gemmlowp's 16-bit fixed-point logistic and tanh, as LiteRT's integer LSTM applies them.

LiteRT's reference tensor utils (tflite/kernels/internal/reference/portable_tensor_utils.cc,
PortableApplySigmoid / PortableApplyTanh, which the integer LSTM of ai_edge_litert 2.3 calls) run
`gemmlowp::logistic` on FixedPoint<int16, 3> (Q3.12 → Q0.15) and `gemmlowp::tanh` on
FixedPoint<int16, I> for I = 3 (the cell gate) or 15 + log2(cell scale) (the cell state), with
gemmlowp/fixedpoint/fixedpoint.h's int16 specializations — not the int16 LOGISTIC / TANH
operators' lookup tables. Every step below is that header's, on int16 raw values:

- a·b (operator*): SaturatingRoundingDoublingHighMul(int16): (a·b + (±2^14)) / 2^15 truncated
  toward zero, −1·−1 saturating to 32767;
- a + b, a − b, −a: int16 wrap-around (the C++ int promotion and the cast back);
- Rescale / SaturatingRoundingMultiplyByPOT: a saturating left shift or a rounding right shift;
- constants: the int32 constants rounding-shifted right by 16 (RescaleConstantInitializer).

All functions take and return numpy int64 arrays holding int16 values (vectorized).
"""

from __future__ import annotations

import numpy as np

from .fixedpoint import rounding_divide_by_pot

I16_MIN = -(1 << 15)
I16_MAX = (1 << 15) - 1


def wrap16(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 15)) & 0xFFFF) - (1 << 15)


def mul16(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul for int16."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    q = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    res = np.where(q >= 0, q >> 15, -((-q) >> 15))
    return np.where((a == I16_MIN) & (b == I16_MIN), I16_MAX, res)


def const16(c32: int) -> int:
    """RescaleConstantInitializer<int16>: the int32 constant rounding-divided by 2^16."""
    return int(rounding_divide_by_pot(np.int64(c32), 16))


def pot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT<exponent> on int16."""
    x = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (15 - exponent)) - 1
    return np.where(x > threshold, I16_MAX, np.where(x < -threshold, I16_MIN, wrap16(x << exponent)))


def _exp_quarter(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.15 in and out (Taylor around -1/8)."""
    constant_term = const16(1895147668)
    one_third = const16(715827883)
    x = wrap16(a + (1 << 12))
    x2 = mul16(x, x)
    x3 = mul16(x2, x)
    x4 = mul16(x2, x2)
    x4_over_4 = pot16(x4, -2)
    poly = pot16(wrap16(mul16(wrap16(x4_over_4 + x3), one_third) + x2), -1)
    s = constant_term + mul16(constant_term, wrap16(x + poly))
    return np.clip(s, I16_MIN, I16_MAX)     # AddSaturatingIf16Bit


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535),
           (3, 720401), (4, 242))


def exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 in Q(integer_bits) (int16); result Q0.15."""
    a = np.asarray(a, dtype=np.int64)
    frac = 15 - integer_bits
    one_quarter = 1 << (frac - 2)
    a_mod = wrap16((a & (one_quarter - 1)) - one_quarter)
    result = _exp_quarter(pot16(a_mod, integer_bits))
    remainder = wrap16(a_mod - a)
    for exponent, multiplier in _BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac + exponent)
            result = np.where((remainder & bit) != 0, mul16(result, const16(multiplier)), result)
    if integer_bits > 5:
        clamp = const16(-(1 << (36 - integer_bits)))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, I16_MAX, result)


def _newton(half_denominator: np.ndarray) -> np.ndarray:
    """The three Newton-Raphson steps of 1/(1+x) in Q2.13 (x the Q2.13 estimate of 1/half_d)."""
    one_f2 = 1 << 13
    x = wrap16(const16(1515870810) + mul16(half_denominator, const16(-1010580540)))
    for _ in range(3):
        one_minus = wrap16(one_f2 - mul16(half_denominator, x))
        x = wrap16(x + pot16(mul16(x, one_minus), 2))
    return x


def _half_sum_one(a: np.ndarray) -> np.ndarray:
    """RoundingHalfSum(a, One) for Q0.15 (One = 32767)."""
    s = np.asarray(a, dtype=np.int64) + I16_MAX
    s = s + np.where(s >= 0, 1, -1)
    return np.where(s >= 0, s // 2, -((-s) // 2))


def logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::logistic of FixedPoint<int16, integer_bits>, result Q0.15."""
    a = np.asarray(a, dtype=np.int64)
    positive = a > 0
    abs_input = np.where(positive, a, wrap16(-a))
    e = exp_on_negative_values(wrap16(-abs_input), integer_bits)
    x = _newton(_half_sum_one(e))
    if_positive = pot16(x, 1)               # Rescale<0>(ExactMulByPot<-1>(x)): the raw read as Q1, to Q0
    if_negative = wrap16(I16_MAX - if_positive)
    return np.where(a == 0, const16(1 << 30), np.where(positive, if_positive, if_negative))


def tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh of FixedPoint<int16, integer_bits>, result Q0.15."""
    a = np.asarray(a, dtype=np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap16(-a))
    e = exp_on_negative_values(n, integer_bits + 1)     # ExactMulByPot<1>: the raw read as Q(I+1)
    x = _newton(_half_sum_one(e))
    t = pot16(wrap16(x - (1 << 13)), 2)                 # Rescale<0>(x - One) from Q2.13
    return np.where(a == 0, 0, np.where(negative, wrap16(-t), t))
