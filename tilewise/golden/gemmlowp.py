"""gemmlowp fixed-point arithmetic used by TFLite's quantized softmax (reference_ops::Softmax).

Vectorized over numpy int64 arrays that hold int32 values; additions wrap like the C int32 ones.
Definitions follow gemmlowp/fixedpoint/fixedpoint.h (exp_on_negative_values,
exp_on_interval_between_negative_one_quarter_and_0_excl, one_over_one_plus_x_for_x_in_0_1,
SaturatingRoundingMultiplyByPOT, RoundingHalfSum) and TFLite's GetReciprocal (kernels/internal/common.h).
A FixedPoint<int32, I> value is its raw int32; a product of Q(I1) and Q(I2) is SRDHM of the raws, in
Q(I1+I2).
"""

from __future__ import annotations

import numpy as np

from .fixedpoint import INT32_MAX, INT32_MIN, rounding_divide_by_pot, srdhm, wrap32


def sat_shift_left(x: np.ndarray, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0 (saturating left shift)."""
    x = np.asarray(x, dtype=np.int64)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def rounding_half_sum(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    s = np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64)
    s = s + np.where(s >= 0, 1, -1)
    return np.where(s >= 0, s // 2, -((-s) // 2))


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), input and output Q0.31: Taylor expansion around -1/8."""
    constant_term = 1895147668  # exp(-1/8)
    constant_1_over_3 = 715827883
    x = wrap32(np.asarray(a, dtype=np.int64) + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    inner = wrap32(srdhm(wrap32(x4_over_4 + x3), constant_1_over_3) + x2)
    x4_over_24_plus_x3_over_6_plus_x2_over_2 = rounding_divide_by_pot(inner, 1)
    return wrap32(constant_term + srdhm(constant_term, wrap32(x + x4_over_24_plus_x3_over_6_plus_x2_over_2)))


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401), (4, 242))


def exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 given in Q(integer_bits); result Q0.31."""
    a = np.asarray(a, dtype=np.int64)
    frac = 31 - integer_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = wrap32((a & mask) - one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        sat_shift_left(a_mod_quarter_minus_one_quarter, integer_bits) if integer_bits > 0
        else a_mod_quarter_minus_one_quarter
    )
    remainder = wrap32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in _BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac + exponent)
            result = np.where((remainder & bit) != 0, srdhm(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """1/(1+a) for a in [0,1) in Q0.31, by three Newton-Raphson steps in Q2.29."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half_denominator, -1010580540))  # 48/17 - 32/17 * d
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = wrap32((1 << 29) - half_denominator_times_x)
        x = wrap32(x + sat_shift_left(srdhm(x, one_minus), 2))
    return sat_shift_left(x, 1)


def count_leading_zeros32(x: np.ndarray) -> np.ndarray:
    u = np.asarray(x, dtype=np.int64) & 0xFFFFFFFF
    bits = np.zeros_like(u)
    nz = u > 0
    bits[nz] = np.floor(np.log2(u[nz].astype(np.float64))).astype(np.int64) + 1
    # guard the float log2 near powers of two
    bits = np.where(nz & ((np.int64(1) << np.maximum(bits - 1, 0)) > u), bits - 1, bits)
    bits = np.where(nz & ((np.int64(1) << np.minimum(bits, 62)) <= u), bits + 1, bits)
    return 32 - bits


def get_reciprocal(x: np.ndarray, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """GetReciprocal: (Q0.31 raw of 1/x rescaled into [0.5,1), num_bits_over_unit)."""
    x = np.asarray(x, dtype=np.int64)
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = wrap32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit
