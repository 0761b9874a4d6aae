"""TFLite operators that unrolled recurrent layers are made of, beyond the CNN set: TANH, SPLIT,
SPLIT_V and UNPACK (a Keras GRU / SimpleRNN converted with unroll=True: UNPACK of the sequence
into time steps, FULLY_CONNECTED gate projections, SPLIT / SPLIT_V into the gates, LOGISTIC, TANH,
MUL, ADD, SUB), and the one-sentence refusal of the WHILE loop a recurrent layer becomes without
unroll.

- TANH (int8 / uint8): LiteRT's reference kernel is a 256-entry table LUTPopulate builds at
  Prepare from the float tanh (activations.cc TanhPrepare; `tanh_table` below, as
  tflite_act.sigmoid_table for LOGISTIC): an IR tanh node with the table (TfliteLogisticParams).
- SPLIT (axis, x) / SPLIT_V (x, size_splits, axis): each output is one IR slice of x along the
  axis; UNPACK (x; Num, Axis): a slice of thickness 1 per output, then a reshape dropping the
  axis. These copy codes: LiteRT requires (and tilewise checks) that every output has the
  input's quantization.
- A float island the converter sometimes leaves in an unrolled GRU's first step (run to run: its
  calibration is not deterministic) — DEQUANTIZE of an int8 tensor into a float SPLIT / SPLIT_V /
  UNPACK / RESHAPE whose outputs only QUANTIZE back with the same scale and zero point, or are
  unused — is the same move on the codes: `fold_float_moves` rewrites it so before conversion
  (exact: LiteRT's float32 s·(q − z) quantized back with s and z is q again for every 8-bit q).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..ir.ops import Op
from ..ir.params import ReshapeParams, SliceParams, TfliteLogisticParams
from ..ir.tensor import dtype_range
from .tflite import TfliteModel, TfliteOperator

if TYPE_CHECKING:
    from .tflite_ops import Converter


def tanh_table(dtype: str, s_in: float, zp_in: int, s_out: float, zp_out: int) -> tuple[int, ...]:
    """LUTPopulate for TANH: entry q holds clamp(round(tanhf(s_in·(q − zp_in)) / s_out) + zp_out), in
    float32 as LiteRT computes it (round half away from zero)."""
    lo, hi = dtype_range(dtype)
    q = np.arange(lo, hi + 1, dtype=np.int32)
    deq = np.float32(s_in) * (q - zp_in).astype(np.float32)
    val = np.tanh(deq.astype(np.float64)).astype(np.float32)   # tanhf, correctly rounded
    r = val * (np.float32(1.0) / np.float32(s_out))
    rounded = np.sign(r) * np.floor(np.abs(r) + np.float32(0.5))
    return tuple(int(v) for v in np.clip(rounded.astype(np.int64) + zp_out, lo, hi))


def tanh(cv: Converter, op: TfliteOperator) -> None:
    x, y = cv.need(op, 0, "input"), cv.t(op.outputs[0])
    d = cv.check_int(op, x, ("int8", "uint8"))
    cv.check_int(op, y, (d,))
    table = tanh_table(d, float(x.scale[0]), int(x.zero_point[0]), float(y.scale[0]), int(y.zero_point[0]))
    cv.emit(op, Op.TANH, [cv.name(x.index)], cv.name(y.index), TfliteLogisticParams(table=table))


def _axis(cv: Converter, op: TfliteOperator, k: int, rank: int) -> int:
    t = cv.need(op, k, "axis")
    v = np.asarray(cv.const(op, t, "axis")).reshape(-1)
    if v.size != 1 or v.dtype.kind not in "iu" or not -rank <= int(v[0]) < rank:
        raise cv.fail(op, f"has the axis {v.tolist()} for a {rank}-D input", "the model is malformed; re-export it")
    return int(v[0]) % rank


def _slices(cv: Converter, op: TfliteOperator, x, axis: int, sizes: list[int], drop_axis: bool = False) -> None:
    """One IR slice of x per output along `axis` (`sizes` each), reshaped when `drop_axis`."""
    d = cv.check_int(op, x)
    if len(sizes) != len(op.outputs) or sum(sizes) != x.shape[axis] or min(sizes, default=0) < 0:
        raise cv.fail(op, f"splits a dimension of {x.shape[axis]} into {sizes} over {len(op.outputs)} outputs",
                      "the model is malformed; re-export it")
    start = 0
    for k, (i, n) in enumerate(zip(op.outputs, sizes)):
        y = cv.t(i)
        cv.check_int(op, y, (d,))
        if not cv.same_quant(x, y):
            raise cv.fail(op, f"gives output '{y.name}' a quantization other than its input's",
                          f"LiteRT's {op.name} copies codes; re-export the model")
        starts = tuple(start if a == axis else 0 for a in range(len(x.shape)))
        ends = tuple(start + n if a == axis else s for a, s in enumerate(x.shape))
        shape = tuple(n if a == axis else s for a, s in enumerate(x.shape))
        want = tuple(s for a, s in enumerate(shape) if a != axis) if drop_axis else shape
        if tuple(y.shape) != want:
            raise cv.fail(op, f"declares output {k} of shape {list(y.shape)} where it holds {list(want)}",
                          "the model is malformed; re-export it")
        target = cv.add_tensor(f"{cv.name(i)}#slice", shape, y) if drop_axis else cv.name(i)
        params = SliceParams(starts=starts, ends=ends, steps=(1,) * len(shape))
        cv.emit(op, Op.SLICE, [cv.name(x.index)], target, params, suffix=f"_{k}")
        if drop_axis:
            cv.emit(op, Op.RESHAPE, [target], cv.name(i), ReshapeParams(shape=tuple(y.shape)), suffix=f"_{k}_reshape")
        start += n


def split(cv: Converter, op: TfliteOperator) -> None:
    x = cv.need(op, 1, "input")
    axis = _axis(cv, op, 0, len(x.shape))
    n = len(op.outputs)
    if int(op.options.get("NumSplits", n)) != n or x.shape[axis] % n:
        raise cv.fail(op, f"splits a dimension of {x.shape[axis]} into {n} outputs",
                      "the model is malformed; re-export it")
    _slices(cv, op, x, axis, [x.shape[axis] // n] * n)


def split_v(cv: Converter, op: TfliteOperator) -> None:
    x = cv.need(op, 0, "input")
    axis = _axis(cv, op, 2, len(x.shape))
    sizes = [int(v) for v in np.asarray(cv.const(op, cv.need(op, 1, "size_splits"), "size_splits")).reshape(-1)]
    if sizes.count(-1) == 1:    # one size inferred from the others (split_v.cc)
        sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    _slices(cv, op, x, axis, sizes)


def unpack(cv: Converter, op: TfliteOperator) -> None:
    x = cv.need(op, 0, "input")
    rank = len(x.shape)
    axis = int(op.options.get("Axis", 0))
    if not -rank <= axis < rank:
        raise cv.fail(op, f"has the axis {axis} for a {rank}-D input", "the model is malformed; re-export it")
    axis %= rank
    _slices(cv, op, x, axis, [1] * x.shape[axis], drop_axis=True)


def while_loop(cv: Converter, op: TfliteOperator) -> None:
    raise cv.fail(op, "is a loop over a subgraph (a recurrent layer converted without unroll)",
                  "tilewise compiles straight-line graphs: convert the Keras GRU / LSTM / SimpleRNN layer with "
                  "unroll=True")


#: the data movements a float island may hold between DEQUANTIZE and QUANTIZE, and their data input
MOVES = {"SPLIT": 1, "SPLIT_V": 0, "UNPACK": 0, "RESHAPE": 0}


def fold_float_moves(model: TfliteModel) -> TfliteModel:
    """`model` with each float island DEQUANTIZE → move → QUANTIZE (same quantization) rewritten as
    the move on the int8 codes (module docstring); `model` itself when it has none."""
    ops, tensors = list(model.operators), list(model.tensors)
    readers: dict[int, list[int]] = {}
    for k, op in enumerate(ops):
        for i in op.inputs:
            readers.setdefault(i, []).append(k)
    dropped: set[int] = set()
    for k, deq in enumerate(ops):
        if deq.name != "DEQUANTIZE" or not deq.inputs or deq.outputs[0] in model.outputs:
            continue
        x = tensors[deq.inputs[0]]
        if x.dtype not in ("int8", "uint8") or len(x.scale) != 1:
            continue
        users = readers.get(deq.outputs[0], [])
        if len(users) != 1 or ops[users[0]].name not in MOVES or \
                ops[users[0]].inputs[MOVES[ops[users[0]].name]] != deq.outputs[0]:
            continue
        move = ops[users[0]]
        quants, ok = {}, True
        for o in move.outputs:
            qs = readers.get(o, [])
            if o in model.outputs or len(qs) > 1:
                ok = False
            elif qs:
                q = ops[qs[0]]
                y = tensors[q.outputs[0]]
                ok = ok and q.name == "QUANTIZE" and y.dtype == x.dtype and y.scale == x.scale \
                    and y.zero_point == x.zero_point
                quants[o] = qs[0]
        if not ok:
            continue
        outs = []
        for o in move.outputs:
            if o in quants:
                outs.append(ops[quants[o]].outputs[0])
                dropped.add(quants[o])
            else:   # an unused output: the float tensor typed as the codes
                tensors[o] = replace(tensors[o], type_code=x.type_code, scale=x.scale, zero_point=x.zero_point)
                outs.append(o)
        ins = list(move.inputs)
        ins[MOVES[move.name]] = deq.inputs[0]
        ops[users[0]] = replace(move, inputs=tuple(ins), outputs=tuple(outs))
        dropped.add(k)
    if not dropped:
        return model
    return replace(model, tensors=tuple(tensors), operators=tuple(o for k, o in enumerate(ops) if k not in dropped))


#: operators refused with their own sentence rather than the generic "not supported" one
REFUSED = {"WHILE": while_loop}

__all__ = ["REFUSED", "fold_float_moves", "split", "split_v", "tanh", "tanh_table", "unpack", "while_loop"]
