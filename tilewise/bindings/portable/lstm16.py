"""The portable family's binding of TFLite Micro's 16x8 LSTM (`lstm` with LstmParams.form "16x8",
golden/lstm16.py): `lstm_s16`, tw_lstm16.h.

One whole layer function on the L2 tensors, run by a host core, as `lstm_s8` (bindings/portable/
lstm.py) is for the int8 form: the weights, the int64 biases and the constants are static data of
the layer's C file; the state (h, c int16), the four gates (int16) and the step's input row (int16)
live in the layer's L1 scratch, and so do the weights and biases when they take at most
lstm.WEIGHTS_IN_L1 bytes; the generated function runs the time loop, calling per step
tw_lstm16_gates and tw_lstm16_update, then copies h to the step's output row.

Cost: the int8 form's terms (bindings/pulp/cost.py `lstm_mac`, `lstm_cell`) — on the PULP targets
the cluster's lstm_cluster_s16 takes the layer; this one is the host core's fallback.
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
from .lstm import WEIGHTS_IN_L1, _const, _pad4


def l1_layout(n_input: Any, n_cell: Any) -> dict[str, Any]:
    """Byte offsets of the L1 scratch (numpy arrays broadcast): h, c (int16, H each), the gates
    (int16, 4H), the step's input row (int16, I); then, when `weights`, the biases b_x (int64, 4H,
    8-byte aligned) and the weights w_x (4HI) and w_h (4HH); `bytes` the total."""
    i, h = np.asarray(n_input), np.asarray(n_cell)
    c = _pad4(2 * h)
    gate = c + _pad4(2 * h)
    x = gate + 8 * h
    b_x = (x + 2 * i + 7) // 8 * 8
    const = 32 * h + _pad4(4 * h * i) + 4 * h * h
    weights = const <= WEIGHTS_IN_L1
    return dict(c=c, gate=gate, x=x, b_x=b_x, w_x=b_x + 32 * h, w_h=b_x + 32 * h + _pad4(4 * h * i),
                weights=weights, bytes=np.where(weights, b_x + const, x + 2 * i))


def scratch_bytes(nest: Any, cores: int, k: Any, c: Any, oy: Any, ox: Any) -> Any:
    """The L1 scratch of l1_layout for H = K cells and I = C inputs (the whole layer: one tile)."""
    return l1_layout(nest.C, k)["bytes"] + 0 * np.asarray(oy)


def check_lstm16(layer: Layer, lg: LayerGraph) -> str | None:
    p = layer.params
    if not isinstance(p, LstmParams) or p.form != "16x8":
        return "not a 16x8 LSTM"
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != "int16" or y.dtype != "int16":
        return f"a 16x8 LSTM from {x.dtype} to {y.dtype} (tw_lstm16.h takes int16)"
    return None


def lstm16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, LstmParams)
    return render("lstm_s16.c.j2", batch=p.batch, steps=p.steps, n_input=p.n_input, n_cell=p.n_cell,
                  time_major=p.time_major, w_x=_const(layer, "w_x"), w_h=_const(layer, "w_h"),
                  b_x=_const(layer, "b_x"), in_mult=list(p.in_mult), in_shift=list(p.in_shift),
                  rec_mult=list(p.rec_mult), rec_shift=list(p.rec_shift), cell_mul=list(p.cell_mul),
                  hidden_mult=p.hidden_mult, hidden_shift=p.hidden_shift, hidden_zp=p.hidden_zp,
                  cell_scale=p.cell_scale, cell_clip=p.cell_clip,
                  l1={k: (bool(v) if k == "weights" else int(v)) for k, v in l1_layout(p.n_input, p.n_cell).items()})


def bindings(cost) -> tuple[Binding, ...]:
    """lstm_s16 priced by `cost` (its copy for the host core's kernels, `for_int_ops`, when it has one)."""
    for_int_ops = getattr(cost, "for_int_ops", None)
    cost = cost if for_int_ops is None else for_int_ops()
    return tuple(per_mode(FAMILY, cost, "lstm_s16", Op.LSTM, ("tflite",), Precision(16, 0, 16), "other",
                          check_lstm16, emit=lstm16, whole=True, tiles=UNTILED, scratch=scratch_bytes))
