"""TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM (int8) and the STRIDED_SLICE Keras puts after it.

UNIDIRECTIONAL_SEQUENCE_LSTM → one `lstm` node (ir/params.py LstmParams, golden/lstm.py) whose
constants are computed as LiteRT's unidirectional_sequence_lstm.cc computes them in Prepare:

- PopulateQuantizedLstmParams8x8_16: without layer norm the four gate intermediates are Q3.12
  (scale 2^-12, zero point 0); effective scales in float32 arithmetic,
  in_scale[g] = float(s_w_x[g]·s_x) / 2^-12, rec_scale[g] = float(s_w_h[g]·s_h) / 2^-12, and
  hidden = float((2^-15 / s_hidden)·2^-15) in double, with s_hidden the fifth intermediate's scale
  and its zero point the hidden zero point; each through QuantizeMultiplier (ir/requant.py);
  cell_scale = log2 of the cell state's scale (CheckedLog2: a power of two); the cell clip
  int16(min(max(cell_clip / s_c, −32768), 32767)) when cell_clip > 0;
- PopulatePrecomputedZPTimesWeightsWithBias: b_x[g] = bias[g] − zp_x·ΣW_x[g] (row sums),
  b_h[g] = −zp_h·ΣW_h[g], zp_h the output state's zero point (int32 arithmetic).

The node's inputs are x and four constants: w_x int8 [4, H, I], w_h int8 [4, H, H], b_x and b_h
int32 [4, H], the gates in the order input, forget, cell, output. What LiteRT's integer kernel
would need and Keras' LSTM never writes — peephole, projection, layer norm, CIFG (no input gate),
diagonal recurrent weights, an activation other than tanh — is refused in one sentence naming the
operator, as are float and hybrid LSTMs.

int16 activations (the 16x8 form: int8 weights, int64 biases, int16 states) go to
tflite_lstm16.py, which follows TFLite Micro's kernel: LiteRT's runs its integer path for int8
inputs only, and TF 2.21's converter refuses to write the form ("Quantization to 16x8-bit not yet
supported for op: 'UNIDIRECTIONAL_SEQUENCE_LSTM'"), so such files come from other writers
(tests/lstm16_models.py builds them with the schema).

STRIDED_SLICE of an activation (Keras' `return_sequences=False` keeps the last step of the LSTM's
output with one) → a `slice` node, plus a `reshape` when it shrinks axes: the selected elements
are computed by tflite_fold.py's STRIDED_SLICE (strided_slice.cc's semantics) on the element
indices, and must form a box with positive steps.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ModelFormatError
from ..ir.ops import Op
from ..ir.params import LstmParams, ReshapeParams, SliceParams
from ..ir.requant import quantize_multiplier
from .tflite import TfliteOperator, TfliteTensor
from .tflite_fold import _strided_slice
from .tflite_lstm16 import lstm16

if TYPE_CHECKING:   # tflite_ops imports this module at its end (its converter table)
    from .tflite_ops import Converter

#: lstm::full tensor indices (tflite/kernels/lstm_shared.h)
X, W_X, W_H, PEEPHOLE, BIAS, PROJ_W, PROJ_B, H_STATE, C_STATE, LAYER_NORM = (
    0, (1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11), (12, 13, 14, 15), 16, 17, 18, 19, (20, 21, 22, 23))
GATES = ("input", "forget", "cell", "output")
TANH = 4


def _f32(x: float) -> np.float32:
    return np.float32(x)


def _weights(cv: Converter, op: TfliteOperator, k: int, what: str, cols: int, rows: int) -> TfliteTensor:
    w = cv.need(op, k, what)
    data = cv.const(op, w, what)
    if w.dtype != "int8" or not w.quantized:
        raise cv.fail(op, f"has {w.type_name} {what} ('{w.name}')",
                      "tilewise runs int8-quantized LSTMs (full-integer post-training quantization); "
                      "a float or hybrid LSTM computes in floating point")
    if len(w.scale) != 1 or w.zero_point[0] != 0:
        raise cv.fail(op, f"has per-channel or asymmetric {what} ('{w.name}')",
                      "LiteRT's integer LSTM takes per-tensor symmetric weights; re-export the model")
    if data.shape != (rows, cols):
        raise cv.fail(op, f"has {what} of shape {list(data.shape)}, expected {[rows, cols]}",
                      "the model is malformed; re-export it")
    return w


def _refuse_options(cv: Converter, op: TfliteOperator) -> None:
    present = [i for i in range(len(op.inputs)) if op.inputs[i] >= 0]
    if W_X[0] not in present:
        raise cv.fail(op, "is a CIFG LSTM (no input gate weights)",
                      "tilewise runs LSTMs with all four gates (Keras' LSTM); re-export without CIFG")
    if any(i in present for i in PEEPHOLE):
        raise cv.fail(op, "has peephole weights", "tilewise runs LSTMs without peephole connections")
    if PROJ_W in present or PROJ_B in present:
        raise cv.fail(op, "has a projection", "tilewise runs LSTMs without projection")
    if any(i in present for i in LAYER_NORM):
        raise cv.fail(op, "has layer normalization", "tilewise runs LSTMs without layer normalization")
    act = int(op.options.get("FusedActivationFunction", TANH))
    if act != TANH:
        raise cv.fail(op, f"has the cell activation {act} (not TANH)",
                      "LiteRT's integer LSTM computes tanh; re-export with activation='tanh'")
    if op.options.get("DiagonalRecurrentTensors", False):
        raise cv.fail(op, "has diagonal recurrent weights", "tilewise runs LSTMs with full recurrent matrices")


def _scale(cv: Converter, op: TfliteOperator, t: TfliteTensor, what: str) -> float:
    if not t.quantized or not t.scale[0] > 0:
        raise cv.fail(op, f"has no quantization parameters on its {what} ('{t.name}')",
                      "re-export the model with full-integer quantization")
    return float(t.scale[0])


def unidirectional_sequence_lstm(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, X, "input"), cv.t(op.outputs[0])
    sixteen = x.dtype == "int16"
    if not sixteen:
        cv.check_int(op, x, ("int8",))
        cv.check_int(op, y, ("int8",))
    if len(op.inputs) != 24:
        raise cv.fail(op, f"has {len(op.inputs)} inputs", "LiteRT's integer LSTM takes 24; re-export the model")
    _refuse_options(cv, op)
    if len(x.shape) != 3:
        raise cv.fail(op, f"has a {len(x.shape)}-D input {list(x.shape)}", "tilewise takes a 3-D sequence input")
    time_major = bool(op.options.get("TimeMajor", False))
    steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
    n_in = x.shape[2]
    w_o = cv.need(op, W_X[3], "input-to-output weights")
    if len(w_o.shape) != 2:
        raise cv.fail(op, f"has input-to-output weights of shape {list(w_o.shape)}", "the model is malformed")
    n_cell = w_o.shape[0]
    if sixteen:   # TFLite Micro's int16-activation kernel (tflite_lstm16.py)
        lstm16(cv, op, x, y, lambda k, what, cols, rows: _weights(cv, op, k, what, cols, rows), n_in, n_cell,
               steps, batch, time_major)
        return
    wx = [_weights(cv, op, k, f"input-to-{g} weights", n_in, n_cell) for k, g in zip(W_X, GATES)]
    wh = [_weights(cv, op, k, f"recurrent-to-{g} weights", n_cell, n_cell) for k, g in zip(W_H, GATES)]
    biases = []
    for k, g in zip(BIAS, GATES):
        b = cv.need(op, k, f"{g} gate bias")
        data = cv.const(op, b, f"{g} gate bias")
        if b.dtype != "int32" or data.shape != (n_cell,):
            raise cv.fail(op, f"has a {b.type_name} {g} gate bias of shape {list(data.shape)}",
                          f"LiteRT's integer LSTM takes int32 biases of {n_cell} values; re-export the model")
        biases.append(data.astype(np.int64))
    h_state, c_state = cv.need(op, H_STATE, "output state"), cv.need(op, C_STATE, "cell state")
    if h_state.dtype != "int8" or c_state.dtype != "int16":
        raise cv.fail(op, f"has a {h_state.type_name} output state and a {c_state.type_name} cell state",
                      "LiteRT's integer LSTM keeps them int8 and int16; re-export the model")
    if len(op.intermediates) != 5:
        raise cv.fail(op, f"has {len(op.intermediates)} intermediate tensors",
                      "LiteRT's integer LSTM needs the five the converter writes; re-export the model")
    hidden = cv.t(op.intermediates[4])
    s_x = _scale(cv, op, x, "input")
    s_h = _scale(cv, op, h_state, "output state")
    s_c = _scale(cv, op, c_state, "cell state")
    s_hidden = _scale(cv, op, hidden, "hidden intermediate")
    cell_scale = round(math.log2(s_c))
    if abs(math.log2(s_c) - cell_scale) >= 1e-3 or not -30 <= cell_scale <= 0:
        raise cv.fail(op, f"has the cell state scale {s_c}, not a power of two 2^-30..2^0",
                      "LiteRT's integer LSTM needs one; re-export the model")
    gate_scale = _f32(2.0 ** -12)
    in_q = [quantize_multiplier(float(_f32(_f32(w.scale[0]) * _f32(s_x)) / gate_scale)) for w in wx]
    rec_q = [quantize_multiplier(float(_f32(_f32(w.scale[0]) * _f32(s_h)) / gate_scale)) for w in wh]
    hidden_q = quantize_multiplier(float(_f32(2.0 ** -15 / float(_f32(s_hidden)) * 2.0 ** -15)))
    cell_clip = float(op.options.get("CellClip", 0.0))
    q_clip = int(min(max(float(_f32(cell_clip) / _f32(s_c)), -32768.0), 32767.0)) if cell_clip > 0 else 0
    zp_x, zp_h = int(x.zero_point[0]), int(h_state.zero_point[0])
    w_x = np.stack([w.data for w in wx]).astype(np.int8)
    w_h = np.stack([w.data for w in wh]).astype(np.int8)
    wrap = np.int64(1) << 32
    b_x = np.stack([b - zp_x * w.data.astype(np.int64).sum(axis=1) for b, w in zip(biases, wx)])
    b_h = np.stack([-zp_h * w.data.astype(np.int64).sum(axis=1) for w in wh])
    b_x, b_h = ((((b + (wrap >> 1)) % wrap) - (wrap >> 1)).astype(np.int32) for b in (b_x, b_h))
    out = cv.name(y.index)
    names = [cv.add_const(f"{out}/{k}", v, dt) for k, v, dt in
             (("w_x", w_x, "int8"), ("w_h", w_h, "int8"), ("b_x", b_x, "int32"), ("b_h", b_h, "int32"))]
    params = LstmParams(time_major=time_major, steps=int(steps), batch=int(batch), n_input=int(n_in),
                        n_cell=int(n_cell), in_mult=tuple(m for m, _ in in_q), in_shift=tuple(s for _, s in in_q),
                        rec_mult=tuple(m for m, _ in rec_q), rec_shift=tuple(s for _, s in rec_q),
                        hidden_mult=hidden_q[0], hidden_shift=hidden_q[1], hidden_zp=int(hidden.zero_point[0]),
                        cell_scale=int(cell_scale), cell_clip=q_clip, state_zp=zp_h)
    if tuple(y.shape) != tuple(x.shape[:2]) + (n_cell,):
        raise cv.fail(op, f"declares the output shape {list(y.shape)} for an input {list(x.shape)}",
                      "the model is malformed; re-export it")
    cv.emit(op, Op.LSTM, [cv.name(x.index), *names], out, params)


class _Indices:
    """tflite_fold's view of one STRIDED_SLICE whose input is the element indices of an activation."""

    def __init__(self, cv: Converter, op: TfliteOperator, x: TfliteTensor) -> None:
        self.cv, self.op, self.x = cv, op, x

    def value(self, k: int) -> np.ndarray:
        return np.arange(int(np.prod(self.x.shape, dtype=np.int64))).reshape(self.x.shape)

    def ints(self, k: int) -> list[int]:
        t = self.cv.need(self.op, k, ("", "begin", "end", "strides")[k])
        return [int(v) for v in np.asarray(self.cv.const(self.op, t, "slice bound")).ravel()]

    def bad(self, what: str, undefined: bool = False) -> ModelFormatError:
        return ModelFormatError(f"{self.cv.where(self.op)} {what}; the model is malformed, re-export it")


def strided_slice(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    d = cv.check_int(op, x)
    cv.check_int(op, y, (d,))
    if not cv.same_quant(x, y):
        raise cv.fail(op, "changes the quantization", "a slice keeps its input's scale and zero point")
    (picked,) = _strided_slice(_Indices(cv, op, x), op)
    if tuple(picked.shape) != tuple(y.shape):
        raise cv.fail(op, f"selects a {list(picked.shape)} block but declares {list(y.shape)}", "re-export the model")
    coords = np.unravel_index(picked.ravel(), x.shape)
    starts, ends, steps = [], [], []
    for c in coords:
        u = np.unique(c)
        step = int(u[1] - u[0]) if len(u) > 1 else 1
        if len(u) > 1 and not np.array_equal(u, np.arange(u[0], u[-1] + 1, step)):
            raise cv.fail(op, "selects elements that are not a strided box", "tilewise slices with positive strides")
        starts.append(int(u[0]))
        ends.append(int(u[-1]) + 1)
        steps.append(step)
    box = tuple(len(range(a, b, s)) for a, b, s in zip(starts, ends, steps))
    if int(np.prod(box)) != picked.size or (picked.size > 1 and np.any(np.diff(picked.ravel()) <= 0)):
        raise cv.fail(op, "selects elements in reversed order", "tilewise slices with positive strides")
    out = cv.name(y.index)
    if box == tuple(y.shape):
        cv.emit(op, Op.SLICE, [cv.name(x.index)], out, SliceParams(starts=tuple(starts), ends=tuple(ends),
                                                                    steps=tuple(steps)))
        return
    mid = cv.add_tensor(f"{out}/box", box, x)
    cv.emit(op, Op.SLICE, [cv.name(x.index)], mid, SliceParams(starts=tuple(starts), ends=tuple(ends),
                                                                steps=tuple(steps)))
    cv.emit(op, Op.RESHAPE, [mid], out, ReshapeParams(shape=tuple(y.shape)), suffix="_shrink")
