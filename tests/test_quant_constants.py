"""The derived TFLite constants, pinned to values computed by hand from TFLite's own definitions.

The golden model and the generated C share these numbers, so a kernel test comparing the two
cannot notice when both are wrong in the same way (the audit swapped `np.round` for `np.floor` in
`quantize_multiplier` and every kernel and LiteRT test still passed). Each expected value below is
worked out in its comment from the C++ it mirrors:

- QuantizeMultiplier (tensorflow/lite/kernels/internal/quantization_util.cc, the default
  double-rounding build): q, shift = frexp(real); q_fixed = TfLiteRound(q · 2^31) (std::round:
  half away from zero); q_fixed == 2^31 → q_fixed /= 2, shift += 1; then shift < -31 → (0, 0).
- PreprocessSoftmaxScaling / CalculateInputRadius (same file), 5 integer bits.
- SaturatingRoundingDoublingHighMul and RoundingDivideByPOT (gemmlowp/fixedpoint/fixedpoint.h),
  the int32 double-rounding, the single-rounding and the int64 (16x8) MultiplyByQuantizedMultiplier
  (tensorflow/lite/kernels/internal/common.h).
- QuantizedMeanOrSum's folding of 1/n into the multiplier (reference_ops/reduce.h).
- LUTPopulate (LOGISTIC int8) and LUTPopulateInt16 (the int16 SOFTMAX tables,
  tensorflow/lite/kernels/internal/common.h / lut.h), float32 steps with TfLiteRound.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.frontend.tflite_act import _expf, input_radius, int16_lut, sigmoid_table, softmax_scaling
from tilewise.golden.fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_64,
    multiply_by_quantized_multiplier_single,
    rounding_divide_by_pot,
    srdhm,
)
from tilewise.golden.pool import _mean_scale
from tilewise.ir.requant import quantize_multiplier, tflite_requant

Q30, Q31 = 1 << 30, 1 << 31

# (real, (multiplier, shift), how TFLite gets there)
QUANTIZE_MULTIPLIER = [
    (0.0, (0, 0), "zero: the early return"),
    (0.1, (1717986918, -3), "0.1 = 0.8·2^-3; 0.8·2^31 = 1717986918.4 → 1717986918"),
    (0.75, (1610612736, 0), "0.75·2^31 = 1610612736 exactly"),
    (0.0039, (2144047674, -8), "0.0039 = 0.9984·2^-8; 0.9984·2^31 = 2144047674.2 → 2144047674"),
    # round half: q·2^31 ends in exactly .5; std::round goes away from zero, np.round to even
    (0.5 + 2.0**-32, (Q30 + 1, 0), "q·2^31 = 2^30 + 0.5 → 2^30 + 1 (half to even would give 2^30)"),
    (0.5 + 3 * 2.0**-32, (Q30 + 2, 0), "q·2^31 = 2^30 + 1.5 → 2^30 + 2"),
    (0.5 + 2.0**-33, (Q30, 0), "q·2^31 = 2^30 + 0.25 → 2^30 (floor and round agree)"),
    (0.5 + 3 * 2.0**-33, (Q30 + 1, 0), "q·2^31 = 2^30 + 0.75 → 2^30 + 1 (floor would give 2^30)"),
    (-(0.5 + 2.0**-32), (-(Q30 + 1), 0), "negative tie: -(2^30 + 0.5) → -(2^30 + 1)"),
    (3 * 2.0**-20 + 2.0**-51, (1610612736, -18), "(0.75 + 2^-33)·2^-18: q·2^31 = 1610612736.25 → ...736"),
    # the 2^31 carry: q rounds up to 2^31, which does not fit in int32 → 2^30 and shift + 1
    (1.0 - 2.0**-33, (Q30, 1), "q = 1 - 2^-33, q·2^31 = 2^31 - 0.25 → 2^31 → carry (floor: 2^31 - 1, 0)"),
    (1.0 - 2.0**-32, (Q30, 1), "q·2^31 = 2^31 - 0.5 → 2^31 (half away from zero) → carry"),
    (1.0 - 2.0**-31, (Q31 - 1, 0), "q·2^31 = 2^31 - 1 exactly: no carry"),
    (0.25 * (1.0 - 2.0**-33), (Q30, -1), "the carry at a negative exponent: frexp shift -1 → -1"),
    # scale ≥ 1: positive (left) shifts
    (1.0, (Q30, 1), "1 = 0.5·2^1"),
    (3.0, (1610612736, 2), "3 = 0.75·2^2"),
    (1000.0, (2097152000, 10), "1000 = 0.9765625·2^10; ·2^31 = 2097152000"),
    (2.0**31, (Q30, 32), "2^31 = 0.5·2^32: the double-rounding build keeps shift 32"),
    # the shift cut-off: shift < -31 flushes to (0, 0), after the carry
    (2.0**-32, (Q30, -31), "2^-32 = 0.5·2^-31: the smallest exponent kept"),
    (2.0**-33, (0, 0), "2^-33 = 0.5·2^-32: shift -32 < -31 → (0, 0)"),
    (2.0**-40, (0, 0), "far below: (0, 0)"),
    (2.0**-32 * (1.0 - 2.0**-40), (Q30, -31),
     "frexp gives shift -32, but q·2^31 rounds to 2^31: the carry comes first → shift -31, kept"),
    (2.0**-33 * (1.0 + 2.0**-20), (0, 0), "shift -32 without carry → flushed"),
]


@pytest.mark.parametrize("real,want", [pytest.param(r, w, id=f"{r!r}") for r, w, _ in QUANTIZE_MULTIPLIER])
def test_quantize_multiplier_hand_computed(real, want):
    assert quantize_multiplier(real) == want


def test_quantize_multiplier_per_channel_requant():
    """tflite_requant applies QuantizeMultiplier per channel, in order, keeping the zero point and
    clamp."""
    rq = tflite_requant(np.array([0.1, 1.0 - 2.0**-33, 2.0**-33, 0.5 + 2.0**-32]), 5, -3, 127)
    assert rq.mode == "tflite" and rq.rounding == "double" and not rq.wide
    assert rq.multiplier.tolist() == [1717986918, Q30, 0, Q30 + 1]
    assert rq.shift.tolist() == [-3, 1, 0, 0]
    assert (rq.zero_point, rq.qmin, rq.qmax) == (5, -3, 127)


def test_quantize_multiplier_represents_the_real_scale():
    """M0·2^shift/2^31 is within half a unit of M0's last place of the real scale, M0 in
    [2^30, 2^31), over random scales across the exponents models use."""
    rng = np.random.default_rng(0)
    for real in np.exp2(rng.uniform(-31, 20, 2000)):
        m, s = quantize_multiplier(float(real))
        assert Q30 <= m < Q31
        assert abs(m * 2.0 ** (s - 31) - real) <= 2.0 ** (s - 32)


# ------------------------------------------------------------------------------ softmax constants

@pytest.mark.parametrize("beta,scale,want", [
    (1.0, 1 / 16, (Q30, 23)),        # 1·2^-4·2^26 = 2^22 = 0.5·2^23
    (1.0, 0.1, (1717986918, 23)),    # 0.1·2^26 = 6710886.4 = 0.8·2^23
    (0.5, 0.25, (Q30, 24)),          # 0.125·2^26 = 2^23
    (1.0, 64.0, (Q31 - 1, 31)),      # 2^32 clamps to 2^31 - 1 = (1 - 2^-31)·2^31: no carry
])
def test_softmax_scaling_hand_computed(beta, scale, want):
    """PreprocessSoftmaxScaling: QuantizeMultiplier(min(β·s·2^(31-5), 2^31 - 1))."""
    assert softmax_scaling(beta, scale) == want


@pytest.mark.parametrize("left_shift,want", [
    (23, 248),   # 31·2^26 / 2^23 = 248 exactly
    (26, 31),    # 31·2^26 / 2^26
    (24, 124),
    (30, 1),     # 31/16 = 1.9375 → floor 1
    (31, 0),     # 31/32 → 0
])
def test_input_radius_hand_computed(left_shift, want):
    """CalculateInputRadius(5, left_shift) = floor((2^5 - 1)·2^(31-5) / 2^left_shift)."""
    assert input_radius(5, left_shift) == want


# ------------------------------------------------------------------------------ fixed point

@pytest.mark.parametrize("a,b,want", [
    (Q30, Q30, 1 << 29),              # 2·2^60 / 2^32 = 2^29 exactly
    (1, Q30, 1),                      # 0.5 → (2^30 + 2^30) / 2^31 = 1
    (-1, Q30, 0),                     # -0.5 → (-2^30 + 1 - 2^30) / 2^31 truncates to 0
    (3, Q30, 2),                      # 1.5 → 2
    (-3, Q30, -1),                    # -1.5 → (-2^32 + 1) / 2^31 truncates to -1
    (5, Q31 - 1, 5),                  # 5·(1 - 2^-31) → 5
    (INT32_MIN, INT32_MIN, INT32_MAX),  # the one overflow: saturates
    (INT32_MIN, INT32_MAX, INT32_MIN + 1),
])
def test_srdhm_hand_computed(a, b, want):
    """SaturatingRoundingDoublingHighMul: (a·b + (ab ≥ 0 ? 2^30 : 1 - 2^30)) / 2^31, C division."""
    assert int(srdhm(a, b)) == want


@pytest.mark.parametrize("x,e,want", [
    (3, 1, 2), (-3, 1, -2),           # ±1.5 → ±2 (half away from zero)
    (1, 1, 1), (-1, 1, -1),           # ±0.5 → ±1
    (5, 2, 1), (-5, 2, -1),           # ±1.25
    (6, 2, 2), (-6, 2, -2),           # ±1.5
    (7, 0, 7), (INT32_MAX, 31, 1), (INT32_MIN, 31, -1),
])
def test_rounding_divide_by_pot_hand_computed(x, e, want):
    """RoundingDivideByPOT: (x >> e) + (remainder > (mask >> 1) + (x < 0))."""
    assert int(rounding_divide_by_pot(x, e)) == want


@pytest.mark.parametrize("x,m,shift,double,single", [
    (1, Q30, -1, 1, 0),        # 0.25: SRDHM 0.5 → 1, then 1/2 → 1; single: (2^30 + 2^31) >> 32 = 0
    (-1, Q30, -1, 0, 0),       # -0.25: SRDHM -0.5 → 0 (gemmlowp's nudge), then 0; single: 2^30 >> 32
    (3, Q30, -1, 1, 1),        # 0.75
    (-3, Q30, -1, -1, -1),     # -0.75: SRDHM -1.5 → -1, then -0.5 → -1
    (2, Q30, -1, 1, 1),        # 0.5: single rounds ties up
    (-2, Q30, -1, -1, 0),      # -0.5: double → away from zero (-1), single → up (0)
    (100, 1717986918, -3, 10, 10),  # 100·0.1: SRDHM 79.99999998 → 80, 80/8 = 10; single 10.4999 → 10
    (7, Q30, 3, 28, 28),       # left shift: 7·8·0.5
    (1000, 2097152000, 10, 1000000, 1000000),  # 1000·0.9765625·2^10 = 10^6 exactly
])
def test_multiply_by_quantized_multiplier_hand_computed(x, m, shift, double, single):
    """MultiplyByQuantizedMultiplier, double rounding (RoundingDivideByPOT(SRDHM(x·2^left, M0),
    right)) and single rounding ((x·M0 + 2^(30-shift)) >> (31 - shift))."""
    assert int(multiply_by_quantized_multiplier(x, m, shift)) == double
    assert int(multiply_by_quantized_multiplier_single(x, m, shift)) == single


@pytest.mark.parametrize("x,m,shift,want", [
    (3, Q30, -1, 1),            # reduced M = (2^30 + 2^15) >> 16 = 2^14; (3·2^14 + 2^15) >> 16 = 1
    (2, Q30, -1, 1),            # 0.5 → 1 (ties up)
    (-2, Q30, -1, 0),           # -0.5 → 0 (ties up)
    (-3, Q30, -1, -1),          # -0.75 → -1
    (1 << 40, Q30, -20, 1 << 19),   # int64 accumulators beyond int32: 2^40·2^-21
    (5, 0x7FFF0000, 0, 5),      # M0 ≥ 0x7FFF0000 reduces to 0x7FFF: (5·32767 + 2^14) >> 15 = 5
    (1 << 15, Q31 - 1, 0, 32767),   # 0x7FFF, not (M0 + 2^15) >> 16 = 0x8000: (2^15·32767 + 2^14) >> 15
    (100000, Q31 - 1, -16, 2),  # M reduces to 0x7FFF: (100000·32767 + 2^30) >> 31 = 2 (1.5258 + 0.5)
])
def test_multiply_by_quantized_multiplier_64_hand_computed(x, m, shift, want):
    """The int64 overload (16x8): M0 reduced to 16 bits ((M0 + 2^15) >> 16, or 0x7FFF), then
    (x·M + 2^(14-shift)) >> (15 - shift)."""
    assert int(multiply_by_quantized_multiplier_64(x, m, shift)) == want


@pytest.mark.parametrize("m,shift,n,want", [
    (Q30, 0, 25, (687194767, -4)),     # s = 63 - clz(25) = 4; (2^30 << 4) // 25 = 687194767.36 → ...67
    (Q30, -29, 25, (171798691, -31)),  # s = min(4, 32, 31 - 29) = 2; 2^32 // 25 = 171798691
    (Q30, 0, 1, (Q30, 0)),             # one element: s = 0
    (Q30, 0, 49, (701219150, -5)),     # s = 5; 2^35 // 49: 49·701219150 = 2^35 - 18
    (Q31 - 1, 0, 1 << 40, (4194303, -31)),   # s = min(40, 32, 31) = 31
])
def test_mean_scale_hand_computed(m, shift, n, want):
    """QuantizedMeanOrSum folds 1/n: s = min(63 - clz(n), 32, 31 + shift),
    M0' = (M0 << s) / n (integer division), shift' = shift - s."""
    assert _mean_scale(m, shift, n) == want


# ------------------------------------------------------------------------------ tables

def test_logistic_table_hand_computed():
    """LUTPopulate: entry q = clamp(round(sigmoid(s_in·(q - zp_in))·256) - 128) (int8, output scale
    1/256 and zero point -128 as TFLite requires)."""
    t = sigmoid_table("int8", 0.1, 0, 1 / 256, -128)
    assert len(t) == 256
    assert t[128 + 0] == 0          # sigmoid(0)·256 = 128 → 0
    assert t[128 + 10] == 59        # sigmoid(1) = 0.731059 → 187.15 → 187 → 59
    assert t[128 - 10] == -59       # sigmoid(-1) = 0.268941 → 68.85 → 69 → -59
    assert t[255] == 127            # sigmoid(12.7)·256 = 255.999 → 256 → 128, clamped to 127
    assert t[0] == -128             # sigmoid(-12.8)·256 = 0.0007 → 0 → -128
    # an exact tie: input scale 0 makes every entry sigmoid(0) = 0.5, output scale 1 → 0.5 → 1
    # (TfLiteRound: away from zero; floor or half to even give 0)
    assert set(sigmoid_table("int8", 0.0, 0, 1.0, 0)) == {1}


def test_int16_softmax_tables_hand_computed():
    """LUTPopulateInt16 for the int16 SOFTMAX tables: exp on [-10, 0] and 1/(1+x) on [0, 1], 512
    steps plus the end point. Output scale 2/65535, zero point 0: the range is
    [-32768·2/65535, 32767·2/65535], 2 wide, so the output scaling is 65536 / 2 = 32768 per unit."""
    f = np.float32
    exp_lut = int16_lut(f(10.0) / f(65535), 32767, f(2.0) / f(65535), 0, _expf)
    recip_lut = int16_lut(f(1.0) / f(65535), -32768, f(2.0) / f(65535), 0,
                          lambda v: (f(1.0) / (f(1.0) + v)).astype(np.float32))
    assert len(exp_lut) == len(recip_lut) == 513
    # exp, entry 0: sample round(e^-10·32768 = 1.488) = 1; next e^-9.98047·32768 = 1.517;
    # interpolated midpoint round((1.517 + 1) / 2 = 1.259) = 1; true midpoint
    # round(e^-9.99023·32768 = 1.502) = 2; bias round((1 - 2) / 2 = -0.5) = -1 (away from zero);
    # entry = 1 - (-1) = 2 (half to even would give bias 0 and entry 1)
    assert exp_lut[0] == 2
    assert exp_lut[512] == 32767     # round(e^0·32768) = 32768, clamped to int16
    # 1/(1+x), entry 0: 32768 clamped; entry 256 at x = 0.5: round(32768 / 1.5 = 21845.33),
    # the chord and the midpoint agree (bias 0); the end point: round(0.5·32768) = 16384
    assert recip_lut[0] == 32767
    assert recip_lut[256] == 21845
    assert recip_lut[512] == 16384


# ------------------------------------------------------------------------------ operator parameters

def _binary_params(tmp_path, op: str, dtype: str, sa: float, sb: float, so: float):
    """The IR parameters the TFLite frontend derives for a one-operator ADD/SUB/MUL model."""
    from tilewise.frontend import load_model

    from .tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.input("x", (1, 4), dtype, scale=sa, zero_point=0)
    y = b.input("y", (1, 4), dtype, scale=sb, zero_point=0)
    z = b.tensor("z", (1, 4), dtype, scale=so, zero_point=0)
    b.op(op, [x, y], [z], f"{op.capitalize()}Options", FusedActivationFunction=0)
    b.output(z)
    g = load_model(b.save(tmp_path / f"{op}.tflite"))
    (node,) = g.nodes
    return node.params


def test_add_parameters_hand_computed(tmp_path):
    """LiteRT's PrepareGeneralSubOp / Add Prepare (int8): left_shift 20, twice_max_input_scale =
    2·max(s_a, s_b) = 1; input multipliers QM(s_a / 1) = QM(0.5) = (2^30, 0) and QM(0.25) =
    (2^30, -1); output QM(1 / (2^20·s_y)) = QM(2^-20) = (2^30, -19)."""
    p = _binary_params(tmp_path, "ADD", "int8", 0.5, 0.25, 1.0)
    assert p.left_shift == 20
    assert p.input_multipliers == (Q30, Q30) and p.input_shifts == (0, -1)
    assert (p.output_multiplier, p.output_shift) == (Q30, -19)


def test_add_int16_parameters_hand_computed(tmp_path):
    """int16 ADD (general path, pot_scale_int16 with non-power-of-two scales): left_shift 15;
    s_a = 0.375, s_b = 0.75 → twice_max 1.5; QM(0.25) = (2^30, -1), QM(0.5) = (2^30, 0);
    output QM(1.5 / (2^15·0.375)) = QM(2^-13) = (2^30, -12)."""
    p = _binary_params(tmp_path, "ADD", "int16", 0.375, 0.75, 0.375)
    assert p.left_shift == 15
    assert p.input_multipliers == (Q30, Q30) and p.input_shifts == (-1, 0)
    assert (p.output_multiplier, p.output_shift) == (Q30, -12)


def test_mul_parameters_hand_computed(tmp_path):
    """MUL: QM(float(s_a·s_b) / s_y) = QM(0.5·0.5 / 2) = QM(0.125 = 0.5·2^-2) = (2^30, -2)."""
    p = _binary_params(tmp_path, "MUL", "int8", 0.5, 0.5, 2.0)
    assert (p.output_multiplier, p.output_shift) == (Q30, -2)
