"""The golden 16x8 LSTM: TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM with int16 activations and int8
weights, as TFLite Micro computes it (the reference: LiteRT has no integer kernel for this form).

TFLite Micro's unidirectional_sequence_lstm.cc runs EvalLstm<int16_t, int8_t, int16_t, int64_t>
(kernels/lstm_eval.h), one LstmStep per time step (batch-major files: each batch row's sequence in
turn; time-major: the rows of a step together), with the helpers of kernels/lstm_eval.cc over the
reference integer ops. Per step, with x the step's int16 input and h the int16 hidden state:

    gate[g] = sat16(FC(x; W_x[g], bias[g]) + FC(h; W_h[g]))                  (AddElementWise)
    FC(v; W, b) = clamp16(MBQM64(W·v + b, M0, shift))   (reference_integer_ops::FullyConnected,
                   int16 × int8 with an int64 accumulator and bias; the input offset ignored)
    f, i, o = Logistic(gate) ;  g_c = Tanh(gate, cell_state_scale_power = -12)
    c = clamp16(Mul(f, c) + Mul(i, g_c)), then clipped to ±cell_clip when it is > 0
    h = Mul(Tanh(c, cell scale power), o)          (the step's output row is h)

- MBQM64 is the int64 MultiplyByQuantizedMultiplier (golden/fixedpoint.py), M0 and shift from
  QuantizeMultiplier(s_in·s_w / 2^-12) in double (lstm_eval_common.cc CreateGateParams →
  CalculateOpDataFullyConnected);
- Mul is reference_integer_ops::MulElementwise: clamp16(MBQM(a·b, M0, shift) + zp) with the
  int32 MultiplyByQuantizedMultiplier and (M0, shift) of QuantizeMultiplier(2^-15·s_c / s_c),
  (2^-30 / s_c) and (2^-30 / s_h) (CreateInterGateMulParams);
- Logistic and Tanh are reference_integer_ops' int16 forms (integer_ops/logistic.h, tanh.h): the
  input times 3 (Tanh: times 3·2^s, or times 3 and a rounding shift right by s, for s =
  15 + power − 3), then a linear interpolation in the 256-entry sigmoid_table_uint16 (sigmoid(k/24)
  in 0.16), with tanh(x) = 2·sigmoid(2x) − 1.

Both states start at 0 (TFLM resets int16 variable tensors to 0) for every inference.
"""

from __future__ import annotations

import numpy as np

from ..ir.params import LstmParams
from .fixedpoint import multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_64

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1

#: sigmoid_table_uint16 (tensorflow/lite/kernels/internal/common.h): sigmoid(k / 24) in 0.16
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], dtype=np.int64)


def _lookup(a: np.ndarray, frac: int) -> tuple[np.ndarray, np.ndarray]:
    """The table interpolation of |v| with `frac` fraction bits: (in range, value)."""
    uh = a >> frac
    inside = uh < 255
    k = np.minimum(uh, 254)
    ua, ub = SIGMOID_TABLE[k], SIGMOID_TABLE[k + 1]
    return inside, (ua << frac) + (a & ((1 << frac) - 1)) * (ub - ua)


def logistic16(x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic(0, 0, ...) on int16 (Q3.12 in, Q0.15 out)."""
    v = np.asarray(x, dtype=np.int64) * 3
    inside, r = _lookup(np.abs(v), 9)
    r = np.where(inside, r, 0x7FFF << 10)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return r >> 10


def tanh16(x: np.ndarray, power: int) -> np.ndarray:
    """lstm_internal::Tanh(power, ...) → reference_integer_ops::Tanh on int16 (Q0.15 out)."""
    s = 15 + power - 3
    v = np.asarray(x, dtype=np.int64)
    v = v * (3 << s) if s >= 0 else (v * 3 + (1 << (-s - 1))) >> -s
    inside, r = _lookup(np.abs(v), 8)
    r = np.where(inside, r, 0xFFFF << 8)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    return r >> 8


def mul16(a: np.ndarray, b: np.ndarray, mult: int, shift: int, zp: int = 0) -> np.ndarray:
    """reference_integer_ops::MulElementwise int16 × int16 → int16."""
    v = multiply_by_quantized_multiplier(np.asarray(a, np.int64) * np.asarray(b, np.int64), mult, shift) + zp
    return np.clip(v, I16_MIN, I16_MAX)


def fc16(w: np.ndarray, v: np.ndarray, bias: np.ndarray | int, mult: int, shift: int) -> np.ndarray:
    """reference_integer_ops::FullyConnected int16 × int8 → int16 with an int64 accumulator."""
    return np.clip(multiply_by_quantized_multiplier_64(w @ v + bias, mult, shift), I16_MIN, I16_MAX)


def lstm16_step(p: LstmParams, x: np.ndarray, h: np.ndarray, c: np.ndarray, w_x: np.ndarray, w_h: np.ndarray,
                b_x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One LstmStep for one sequence: int16 x [I], h [H], c [H] → (h', c') (int64 arrays)."""
    gates = [np.clip(fc16(w_x[g], x, b_x[g], p.in_mult[g], p.in_shift[g])
                     + fc16(w_h[g], h, 0, p.rec_mult[g], p.rec_shift[g]), I16_MIN, I16_MAX) for g in range(4)]
    i, f, o = logistic16(gates[0]), logistic16(gates[1]), logistic16(gates[3])
    g_c = tanh16(gates[2], -12)
    c = np.clip(mul16(f, c, p.cell_mul[0], p.cell_mul[1]) + mul16(i, g_c, p.cell_mul[2], p.cell_mul[3]),
                I16_MIN, I16_MAX)
    if p.cell_clip > 0:
        c = np.clip(c, -p.cell_clip, p.cell_clip)
    h = mul16(tanh16(c, p.cell_scale), o, p.hidden_mult, p.hidden_shift, p.hidden_zp)
    return h, c


def lstm16_sequence(p: LstmParams, x: np.ndarray, w_x: np.ndarray, w_h: np.ndarray, b_x: np.ndarray) -> np.ndarray:
    """x [T, I] of one sequence → the hidden state of every step [T, H], from the zero state."""
    h = np.zeros(p.n_cell, dtype=np.int64)
    c = np.zeros(p.n_cell, dtype=np.int64)
    out = np.empty((x.shape[0], p.n_cell), dtype=np.int64)
    for t in range(x.shape[0]):
        h, c = lstm16_step(p, x[t], h, c, w_x, w_h, b_x)
        out[t] = h
    return out
