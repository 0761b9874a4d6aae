"""The pulp family's binding of TFLite Micro's 16x8 LSTM (`lstm` with LstmParams.form "16x8",
golden/lstm16.py): `lstm_cluster_s16`, c/tw_pulp_lstm16.h — the int8 kernel's structure (lstm.py):
the cells split over the module's cores, each cell's four gate FCs as dot products of int16 words
(pv.sdotsp.h on RI5CY, smlad on ARMv7E-M), its update by the portable kernel's tw_lstm16_cell (bit
for bit tw_lstm16.h, the host core's `lstm_s16`, bindings/portable/lstm16.py).

The generator widens the int8 weights to int16 and reorders them: w_x [4][H][I] -> [H][4][IP] and
w_h [4][H][H] -> [H][4][HP] (IP, HP: I, H rounded up to 2, the padding lanes zero); the int64
biases b_x [4][H] -> [H][4]. The dot products sum in int32, exact for rows of fewer than 512 terms
(tw_lstm16.h): the check refuses longer ones (the portable lstm_s16 takes them).

L1: the layer runs untiled, its L1 declared as kernel scratch (l1_layout: the biases, c, two h and
two input rows, and the weights when they take at most lstm.WEIGHTS_IN_L1 bytes and the module is
a cluster; an Arm core reads them in place). The cost model is lstm_cost.LstmCost with two int16
lanes per word (CLUSTER16, ARM16).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import LstmParams
from ..base import Binding, LayerConstants, Precision, per_mode
from ..portable import lstm as portable_lstm
from ..portable.lstm16 import check_lstm16
from .common import FAMILY, render
from .lstm import UNTILED, WEIGHTS_IN_L1, reorder, scratch_of

#: the dot products sum in int32: rows of fewer terms than this (each at most 2^22 in magnitude)
MAX_TERMS = 512


def _pad(n: Any, m: int) -> Any:
    return (np.asarray(n) + m - 1) // m * m


def l1_layout(n_input: Any, n_cell: Any, weights_l1: bool) -> dict[str, Any]:
    """tw_pulp_lstm16.h's L1 (byte offsets; numpy arrays broadcast): b, c, h, x, w and `bytes`;
    `weights` whether the weights are in it (weights_l1 and at most WEIGHTS_IN_L1 bytes)."""
    i, h = np.asarray(n_input), np.asarray(n_cell)
    ip, hp = _pad(i, 2), _pad(h, 2)
    c = 32 * h
    hh = c + _pad(2 * h, 8)
    x = hh + 4 * hp
    w = x + 4 * ip
    wbytes = 8 * h * (ip + hp)
    weights = np.logical_and(weights_l1, wbytes <= WEIGHTS_IN_L1)
    return dict(c=c, h=hh, x=x, w=w, weights=weights, bytes=w + np.where(weights, wbytes, 0))


def check(layer: Layer, lg: LayerGraph) -> str | None:
    why = check_lstm16(layer, lg)
    if why is None and max(layer.params.n_input, layer.params.n_cell) >= MAX_TERMS:
        return f"a 16x8 LSTM with rows of {max(layer.params.n_input, layer.params.n_cell)} terms (int32 sums)"
    return why


def lstm16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None, weights_l1: bool = True) -> str:
    p = layer.params
    assert isinstance(p, LstmParams)
    h, i = p.n_cell, p.n_input

    def const(key: str) -> np.ndarray:
        return np.asarray(portable_lstm._const(layer, key), dtype=np.int64)

    l1 = l1_layout(i, h, weights_l1)
    return render("lstm_cluster_s16.c.j2", batch=p.batch, steps=p.steps, n_input=i, n_cell=h,
                  time_major=p.time_major, ip=int(_pad(i, 2)), hp=int(_pad(h, 2)),
                  w_x=reorder(const("w_x"), h, i, 2).ravel().tolist(),
                  w_h=reorder(const("w_h"), h, h, 2).ravel().tolist(),
                  b=const("b_x").reshape(4, h).T.ravel().tolist(), in_mult=list(p.in_mult),
                  in_shift=list(p.in_shift), rec_mult=list(p.rec_mult), rec_shift=list(p.rec_shift),
                  cell_mul=list(p.cell_mul), hidden_mult=p.hidden_mult, hidden_shift=p.hidden_shift,
                  hidden_zp=p.hidden_zp, cell_scale=p.cell_scale, cell_clip=p.cell_clip,
                  weights_l1=bool(l1["weights"]), l1_bytes=int(l1["bytes"]))


def bindings(cost, arm: bool = False) -> tuple[Binding, ...]:
    """lstm_cluster_s16 priced by `cost` (lstm_cost.LstmCost, lanes 2); `arm`: one Arm core, the
    weights read in place."""
    def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
        return lstm16(layer, lg, consts, weights_l1=not arm)

    return tuple(per_mode(FAMILY, cost, "lstm_cluster_s16", Op.LSTM, ("tflite",), Precision(16, 0, 16), "other",
                          check, emit=emit, whole=True, tiles=UNTILED, scratch=scratch_of(not arm, l1_layout)))


__all__ = ["bindings", "l1_layout"]
