"""The portable family's binding of TFLite's integer LSTM (`lstm`, golden/lstm.py): `lstm_s8`.

One whole layer function on the L2 tensors, run by a host core (the modules named "cpu"; host.py
adds it): the weights, the folded biases and the constants are static data of the layer's C file;
the state (h int8, c int16), the four gates (int16) and the step's input row live in the layer's
L1 scratch, at the start of the L1 arena (`scratch`: the schedule reserves it, nothing is
allocated), and so do the weights and biases when they take at most WEIGHTS_IN_L1 bytes (copied
there once per call: the host core of the PULP targets reads L2 in several cycles, L1 in one);
the generated function runs the time loop, calling per step tw_lstm_gates (the four gates' int8 x
int8 -> int32 products of the input and of h, each rescaled into Q3.12: a dedicated loop,
4·H·(I + H) MACs) and tw_lstm_update (gemmlowp's int16 sigmoid / tanh, the cell update and clip,
the new h), then copies h to the step's output row.

Cost: the kernel model's copy for the host core's kernels prices it (bindings/pulp/cost.py
`lstm_mac` per MAC, `lstm_cell` per cell and step, a call).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import LstmParams
from ..base import Binding, LayerConstants, Precision, per_mode
from .common import FAMILY, render
from .int_ops import UNTILED

#: the most bytes of weights and biases the layer copies into its L1 scratch
WEIGHTS_IN_L1 = 16384


def _pad4(n: Any) -> Any:
    return (n + 3) // 4 * 4


def l1_layout(n_input: Any, n_cell: Any) -> dict[str, Any]:
    """Byte offsets of the L1 scratch (numpy arrays broadcast): h (int8, H), c (int16, H), the gates
    (int16, 4H), the step's input row (I); then, when `weights` (their bytes <= WEIGHTS_IN_L1), the
    biases b_x, b_h (int32, 4H each) and the weights w_x (4HI) and w_h (4HH); `bytes` the total."""
    i, h = np.asarray(n_input), np.asarray(n_cell)
    c = _pad4(h)
    gate = c + 2 * h
    x = gate + 8 * h
    b_x = x + _pad4(i)
    const = 32 * h + _pad4(4 * h * i) + 4 * h * h
    weights = const <= WEIGHTS_IN_L1
    return dict(c=c, gate=gate, x=x, b_x=b_x, b_h=b_x + 16 * h, w_x=b_x + 32 * h,
                w_h=b_x + 32 * h + _pad4(4 * h * i), weights=weights, bytes=b_x + np.where(weights, const, 0))


def scratch_bytes(nest: Any, cores: int, k: Any, c: Any, oy: Any, ox: Any) -> Any:
    """The L1 scratch of l1_layout for H = K cells and I = C inputs (the whole layer: one tile)."""
    return l1_layout(nest.C, k)["bytes"] + 0 * np.asarray(oy)


def check_lstm(layer: Layer, lg: LayerGraph) -> str | None:
    p = layer.params
    if not isinstance(p, LstmParams):
        return f"an lstm with {type(layer.params).__name__}"
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != "int8" or y.dtype != "int8":
        return f"an LSTM from {x.dtype} to {y.dtype} (tw_lstm.h takes int8)"
    return None


def _const(layer: Layer, key: str) -> list[int]:
    name = next(n for n in layer.node_inputs if n.endswith("/" + key))
    return [int(v) for v in np.asarray(layer.const_inputs[name].data).ravel()]


def lstm(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, LstmParams)
    return render("lstm_s8.c.j2", batch=p.batch, steps=p.steps, n_input=p.n_input, n_cell=p.n_cell,
                  time_major=p.time_major, w_x=_const(layer, "w_x"), w_h=_const(layer, "w_h"),
                  b_x=_const(layer, "b_x"), b_h=_const(layer, "b_h"), in_mult=list(p.in_mult),
                  in_shift=list(p.in_shift), rec_mult=list(p.rec_mult), rec_shift=list(p.rec_shift),
                  hidden_mult=p.hidden_mult, hidden_shift=p.hidden_shift, hidden_zp=p.hidden_zp,
                  cell_scale=p.cell_scale, cell_clip=p.cell_clip, state_zp=p.state_zp,
                  l1={k: (bool(v) if k == "weights" else int(v)) for k, v in l1_layout(p.n_input, p.n_cell).items()})


def bindings(cost) -> tuple[Binding, ...]:
    """lstm_s8 priced by `cost` (its copy for the host core's kernels, `for_int_ops`, when it has one)."""
    for_int_ops = getattr(cost, "for_int_ops", None)
    cost = cost if for_int_ops is None else for_int_ops()
    return tuple(per_mode(FAMILY, cost, "lstm_s8", Op.LSTM, ("tflite",), Precision(8, 0, 8), "other", check_lstm,
                          emit=lstm, whole=True, tiles=UNTILED, scratch=scratch_bytes))
