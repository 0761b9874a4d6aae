"""The golden integer LSTM: TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as LiteRT computes it for int8.

LiteRT (ai_edge_litert 2.3) runs an int8 LSTM through lstm_eval.cc EvalInteger8x8_16 →
LstmStepInteger8x8_16, one step per time step (batch-major files: each batch row's sequence in
turn), with the reference tensor utils (portable_tensor_utils.cc). Per step, for each gate
g ∈ (input, forget, cell, output), with x the step's int8 input and h the int8 output state:

    acc_x = b_x[g] + W_x[g]·x        (int32; b_x = bias − zp_x·ΣW_x, folded by the frontend)
    gate  = sat16(MBQM(acc_x, in_mult[g], in_shift[g]))
    acc_h = b_h[g] + W_h[g]·h        (b_h = −zp_h·ΣW_h)
    gate  = sat16(MBQM(acc_h, rec_mult[g], rec_shift[g]) + gate)     (Q3.12)
    i, f, o = logistic(gate)  (gemmlowp, Q3.12 → Q0.15);  g_c = tanh(gate) (Q3.12 → Q0.15)

then the cell (UpdateLstmCellInteger; int16 c with scale 2^cell_scale):

    c = RoundingDivideByPOT(f·c, 15)            (truncated to int16, as CwiseMul stores it)
      + RoundingDivideByPOT(i·g_c, 30 + cell_scale)   → sat16 (CwiseAdd); clip to ±cell_clip if > 0

and the output (CalculateLstmOutputInteger8x8_16 without projection):

    h = clamp(MBQM(o·tanh_{15+cell_scale}(c), hidden_mult, hidden_shift) + hidden_zp, −128, 127)

which is also the step's output row. When 15 + cell_scale is outside 0..6 (a cell scale of 2^-16,
which the converter writes for small cell ranges) LiteRT's PortableApplyTanh computes nothing and
its output buffer — the input gate's scratch — keeps the input gate: h = MBQM(o·i) + hidden_zp
(checked against LiteRT on a converter-written model, tests/test_lstm_tflite.py "stacked").
MBQM is MultiplyByQuantizedMultiplier with double rounding (golden/fixedpoint.py). The state
starts as h = state_zp (LiteRT resets an int8 variable tensor to its zero point), c = 0 — every
inference starts from it.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import LstmParams
from .fixedpoint import multiply_by_quantized_multiplier, rounding_divide_by_pot
from .gemmlowp16 import I16_MAX, I16_MIN, logistic, tanh, wrap16
from .lstm16 import lstm16_sequence
from .registry import kernel

SIGMOID, TANH = "sigmoid", "tanh"
#: the activation of each gate, in the order input, forget, cell, output
GATE_ACTS = (SIGMOID, SIGMOID, TANH, SIGMOID)


def lstm_step(p: LstmParams, x: np.ndarray, h: np.ndarray, c: np.ndarray, w_x: np.ndarray, w_h: np.ndarray,
              b_x: np.ndarray, b_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step for one sequence: int8 x [I], h [H], int16 c [H] → (h', c') (int64 arrays)."""
    gates = []
    for g in range(4):
        acc = b_x[g] + w_x[g] @ x
        gate = np.clip(multiply_by_quantized_multiplier(acc, p.in_mult[g], p.in_shift[g]), I16_MIN, I16_MAX)
        acc = b_h[g] + w_h[g] @ h
        gate = np.clip(multiply_by_quantized_multiplier(acc, p.rec_mult[g], p.rec_shift[g]) + gate,
                       I16_MIN, I16_MAX)
        gates.append(logistic(gate, 3) if GATE_ACTS[g] == SIGMOID else tanh(gate, 3))
    i, f, g_c, o = gates
    c = wrap16(rounding_divide_by_pot(f * c, 15)) + wrap16(rounding_divide_by_pot(i * g_c, 30 + p.cell_scale))
    c = np.clip(c, I16_MIN, I16_MAX)
    if p.cell_clip > 0:
        c = np.clip(c, -p.cell_clip, p.cell_clip)
    bits = 15 + p.cell_scale
    # PortableApplyTanh dispatches integer bits 0..6 and does nothing otherwise: below 2^-15 the
    # output buffer keeps what it held, the input gate (CalculateLstmOutputInteger8x8_16 is handed
    # the input gate's scratch as its tanh buffer)
    t = tanh(c, bits) if 0 <= bits <= 6 else i
    h = np.clip(multiply_by_quantized_multiplier(o * t, p.hidden_mult, p.hidden_shift) + p.hidden_zp, -128, 127)
    return h, c


def lstm_sequence(p: LstmParams, x: np.ndarray, w_x: np.ndarray, w_h: np.ndarray, b_x: np.ndarray,
                  b_h: np.ndarray) -> np.ndarray:
    """x [T, I] of one sequence → the hidden state of every step [T, H], from the reset state."""
    h = np.full(p.n_cell, p.state_zp, dtype=np.int64)
    c = np.zeros(p.n_cell, dtype=np.int64)
    out = np.empty((x.shape[0], p.n_cell), dtype=np.int64)
    for t in range(x.shape[0]):
        h, c = lstm_step(p, x[t], h, c, w_x, w_h, b_x, b_h)
        out[t] = h
    return out


@kernel(Op.LSTM)
def lstm(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, LstmParams)
    x, w_x, w_h, b_x, *rest = (np.asarray(a, dtype=np.int64) for a in args)   # the 16x8 form has no b_h

    def sequence(xs: np.ndarray) -> np.ndarray:
        if p.form == "16x8":   # TFLite Micro's int16-activation kernel (lstm16.py)
            return lstm16_sequence(p, xs, w_x, w_h, b_x)
        return lstm_sequence(p, xs, w_x, w_h, b_x, rest[0])

    if p.time_major:   # [T, B, I]: every batch row steps together, each with its own state
        return np.stack([sequence(x[:, b]) for b in range(p.batch)], axis=1)
    return np.stack([sequence(x[b]) for b in range(p.batch)], axis=0)
