"""TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM in its 16x8 form (int16 activations, int8 weights, int16
cell state) → one `lstm` node with LstmParams.form "16x8" (golden/lstm16.py), its constants computed
as TFLite Micro's Prepare computes them (kernels/lstm_eval_common.cc
UnidirectionalSequenceLstmPrepare → PrepareGateParametersInteger, CreateLstmCellStateInfo):

- per gate g, the input FC's and the recurrent FC's (M0, shift): QuantizeMultiplier of
  double(s_x)·double(s_w_x[g]) / 2^-12 and double(s_h)·double(s_w_h[g]) / 2^-12
  (CreateGateParams → CalculateOpDataFullyConnected, GetQuantizedConvolutionMultipler);
- the Muls' (M0, shift) (CreateInterGateMulParams, double): forget·c → c: 2^-15·s_c / s_c,
  input·cell gate → c: 2^-15·2^-15 / s_c, tanh(c)·output gate → h: 2^-15·2^-15 / s_h (its
  output offset the hidden state's zero point);
- cell_scale = CheckedLog2(s_c); cell_clip = int16(min(max(clip / s_c, -32768), 32767)) in double.

The node's inputs are x and three constants: w_x int8 [4, H, I], w_h int8 [4, H, H] and b_x
int64 [4, H] (the gates' biases: TFLM's FC ignores the int16 input's zero point, so nothing is
folded; the recurrent FC has no bias, so there is no b_h). Refused in one sentence each: what
TFLM's 16x8 kernel refuses or computes otherwise — int16 tensors with a zero point other than 0
(the FCs drop it; TFLM's quantization is symmetric), biases other than int64, weights other than
per-tensor symmetric int8 — and what tflite_lstm.py refuses for both forms (peephole,
projection, layer norm, CIFG, another activation), which the caller checks first.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..ir.ops import Op
from ..ir.params import LstmParams
from ..ir.requant import quantize_multiplier
from .tflite import TfliteOperator, TfliteTensor

if TYPE_CHECKING:
    from .tflite_ops import Converter

GATE_SCALE = float(np.float32(2.0 ** -12))
NONLINEAR_OUT = float(np.float32(2.0 ** -15))


def _symmetric16(cv: Converter, op: TfliteOperator, t: TfliteTensor, what: str) -> float:
    if t.dtype != "int16" or not t.quantized or not t.scale[0] > 0:
        raise cv.fail(op, f"has a {t.type_name} {what} ('{t.name}') in its 16x8 form",
                      "TFLite Micro's 16x8 LSTM takes int16 input, output and hidden state; re-export the model")
    if t.zero_point[0] != 0:
        raise cv.fail(op, f"has the zero point {t.zero_point[0]} on its int16 {what} ('{t.name}')",
                      "TFLite Micro's 16x8 LSTM takes symmetric int16 activations (its FCs drop the offset); "
                      "re-quantize with zero point 0")
    return float(t.scale[0])


def lstm16(cv: Converter, op: TfliteOperator, x: TfliteTensor, y: TfliteTensor, weights, n_in: int,
           n_cell: int, steps: int, batch: int, time_major: bool) -> None:
    """Emit the 16x8 node; `weights(k, what, cols, rows)` checks one int8 weight tensor (the caller's)."""
    from .tflite_lstm import BIAS, C_STATE, GATES, H_STATE, W_H, W_X

    s_x = _symmetric16(cv, op, x, "input")
    _symmetric16(cv, op, y, "output")
    h_state, c_state = cv.need(op, H_STATE, "output state"), cv.need(op, C_STATE, "cell state")
    s_h = _symmetric16(cv, op, h_state, "output state")
    if c_state.dtype != "int16" or not c_state.quantized or not c_state.scale[0] > 0:
        raise cv.fail(op, f"has a {c_state.type_name} cell state ('{c_state.name}')",
                      "TFLite Micro's integer LSTM keeps an int16 cell state; re-export the model")
    s_c = float(c_state.scale[0])
    cell_scale = round(math.log2(s_c))
    if abs(math.log2(s_c) - cell_scale) >= 1e-3 or not -30 <= cell_scale <= 0:
        raise cv.fail(op, f"has the cell state scale {s_c}, not a power of two 2^-30..2^0",
                      "TFLite Micro's integer LSTM needs one; re-export the model")
    wx = [weights(k, f"input-to-{g} weights", n_in, n_cell) for k, g in zip(W_X, GATES)]
    wh = [weights(k, f"recurrent-to-{g} weights", n_cell, n_cell) for k, g in zip(W_H, GATES)]
    biases = []
    for k, g in zip(BIAS, GATES):
        b = cv.need(op, k, f"{g} gate bias")
        data = cv.const(op, b, f"{g} gate bias")
        if b.dtype != "int64" or data.shape != (n_cell,):
            raise cv.fail(op, f"has a {b.type_name} {g} gate bias of shape {list(data.shape)} in its 16x8 form",
                          f"TFLite Micro's 16x8 LSTM takes int64 biases of {n_cell} values; re-export the model")
        biases.append(data.astype(np.int64))
    in_q = [quantize_multiplier(float(np.float64(s_x) * np.float64(w.scale[0])) / GATE_SCALE) for w in wx]
    rec_q = [quantize_multiplier(float(np.float64(s_h) * np.float64(w.scale[0])) / GATE_SCALE) for w in wh]
    forget_q = quantize_multiplier(NONLINEAR_OUT * s_c / s_c)
    input_q = quantize_multiplier(NONLINEAR_OUT * NONLINEAR_OUT / s_c)
    hidden_q = quantize_multiplier(NONLINEAR_OUT * NONLINEAR_OUT / s_h)
    cell_clip = float(np.float32(op.options.get("CellClip", 0.0)))
    q_clip = int(min(max(cell_clip / s_c, -32768.0), 32767.0)) if cell_clip > 0 else 0
    out = cv.name(y.index)
    consts = (("w_x", np.stack([w.data for w in wx]).astype(np.int8), "int8"),
              ("w_h", np.stack([w.data for w in wh]).astype(np.int8), "int8"),
              ("b_x", np.stack(biases), "int64"))
    names = [cv.add_const(f"{out}/{k}", v, dt) for k, v, dt in consts]
    params = LstmParams(time_major=time_major, steps=int(steps), batch=int(batch), n_input=int(n_in),
                        n_cell=int(n_cell), in_mult=tuple(m for m, _ in in_q), in_shift=tuple(s for _, s in in_q),
                        rec_mult=tuple(m for m, _ in rec_q), rec_shift=tuple(s for _, s in rec_q),
                        hidden_mult=hidden_q[0], hidden_shift=hidden_q[1], hidden_zp=int(h_state.zero_point[0]),
                        cell_scale=int(cell_scale), cell_clip=q_clip, state_zp=0, form="16x8",
                        cell_mul=(*forget_q, *input_q))
    if tuple(y.shape) != tuple(x.shape[:2]) + (n_cell,):
        raise cv.fail(op, f"declares the output shape {list(y.shape)} for an input {list(x.shape)}",
                      "the model is malformed; re-export it")
    cv.emit(op, Op.LSTM, [cv.name(x.index), *names], out, params)
