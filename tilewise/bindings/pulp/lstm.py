"""The pulp family's binding of TFLite's integer LSTM (`lstm`, golden/lstm.py): `lstm_cluster_s8`,
c/tw_pulp_lstm.h — the cells split over the module's cores, each cell's four gate products as
SIMD dot products (tw_pulp_matmul.h's 4x1 block: pv.sdotsp.b on RI5CY, smlad on ARMv7E-M), its
update by the portable kernel's tw_lstm_cell (bit for bit tw_lstm.h, the host core's
`lstm_s8`, bindings/portable/lstm.py).

The generator reorders the weights: w_x [4][H][I] -> [H][4][IP] and w_h [4][H][H] -> [H][4][HP]
(IP, HP: I, H rounded up to 4, the padding lanes zero), so that a cell's four gate rows are
adjacent and every row is whole words; the biases b_x, b_h [4][H] -> [H][4][2].

L1: the layer runs untiled (kind "other"), its L1 declared as kernel scratch (`scratch_bytes`,
l1_layout: the biases, c, two h and two input rows, and the weights when they take at most
WEIGHTS_IN_L1 bytes and the module is a cluster; on an Arm core, whose one core reads its SRAM
and flash directly, the weights stay where they are). The cost model is lstm_cost.LstmCost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import LstmParams
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from ..portable import lstm as portable_lstm
from .common import FAMILY, render

UNTILED = TileRules(l3=False, untiled=True)
#: the most bytes of weights the cluster's cores copy into L1
WEIGHTS_IN_L1 = 32768


def _pad4(n: Any) -> Any:
    return (np.asarray(n) + 3) // 4 * 4


def l1_layout(n_input: Any, n_cell: Any, weights_l1: bool) -> dict[str, Any]:
    """tw_pulp_lstm.h's L1 (byte offsets; numpy arrays broadcast): b, c, h, x, w and `bytes`;
    `weights` whether the weights are in it (weights_l1 and at most WEIGHTS_IN_L1 bytes)."""
    i, h = np.asarray(n_input), np.asarray(n_cell)
    ip, hp = _pad4(i), _pad4(h)
    c = 32 * h
    hh = c + _pad4(2 * h)
    x = hh + 2 * hp
    w = x + 2 * ip
    wbytes = 4 * h * (ip + hp)
    weights = np.logical_and(weights_l1, wbytes <= WEIGHTS_IN_L1)
    return dict(c=c, h=hh, x=x, w=w, weights=weights, bytes=w + np.where(weights, wbytes, 0))


def scratch_of(weights_l1: bool, layout: Callable[..., dict[str, Any]] | None = None):
    """The binding's scratch: `layout`'s bytes (this kernel's l1_layout, or the 16x8 kernel's,
    lstm16.py) for H = K cells and I = C inputs (the whole layer: one tile)."""
    layout = layout or l1_layout

    def scratch_bytes(nest: Any, cores: int, k: Any, c: Any, oy: Any, ox: Any) -> Any:
        return layout(nest.C, k, weights_l1)["bytes"] + 0 * np.asarray(oy)
    return scratch_bytes


def reorder(w: np.ndarray, n_cell: int, length: int, lanes: int = 4) -> np.ndarray:
    """[4][H][L] gate rows -> [H][4][L rounded up to `lanes`], zero-padded (module docstring;
    lanes 4: int8 weights for pv.sdotsp.b / smlad pairs of pairs, 2: the 16x8 kernel's int16)."""
    w = np.asarray(w, dtype=np.int64).reshape(4, n_cell, length).transpose(1, 0, 2)
    out = np.zeros((n_cell, 4, (length + lanes - 1) // lanes * lanes), dtype=np.int64)
    out[:, :, :length] = w
    return out


def lstm(layer: Layer, lg: LayerGraph, consts: LayerConstants | None, weights_l1: bool = True) -> str:
    p = layer.params
    assert isinstance(p, LstmParams)
    h, i = p.n_cell, p.n_input

    def const(key: str) -> np.ndarray:
        return np.asarray(portable_lstm._const(layer, key), dtype=np.int64)

    b = np.stack([const("b_x").reshape(4, h).T, const("b_h").reshape(4, h).T], axis=-1)   # [H][4][2]
    l1 = l1_layout(i, h, weights_l1)
    return render("lstm_cluster.c.j2", batch=p.batch, steps=p.steps, n_input=i, n_cell=h, time_major=p.time_major,
                  ip=int(_pad4(i)), hp=int(_pad4(h)), w_x=reorder(const("w_x"), h, i).ravel().tolist(),
                  w_h=reorder(const("w_h"), h, h).ravel().tolist(), b=b.ravel().tolist(),
                  in_mult=list(p.in_mult), in_shift=list(p.in_shift), rec_mult=list(p.rec_mult),
                  rec_shift=list(p.rec_shift), hidden_mult=p.hidden_mult, hidden_shift=p.hidden_shift,
                  hidden_zp=p.hidden_zp, cell_scale=p.cell_scale, cell_clip=p.cell_clip, state_zp=p.state_zp,
                  weights_l1=bool(l1["weights"]), l1_bytes=int(l1["bytes"]))


def bindings(cost, arm: bool = False) -> tuple[Binding, ...]:
    """lstm_cluster_s8 priced by `cost` (lstm_cost.LstmCost); `arm`: one Arm core, the weights
    read in place (module docstring)."""
    def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
        return lstm(layer, lg, consts, weights_l1=not arm)

    return tuple(per_mode(FAMILY, cost, "lstm_cluster_s8", Op.LSTM, ("tflite",), Precision(8, 0, 8), "other",
                          portable_lstm.check_lstm, emit=emit, whole=True, tiles=UNTILED,
                          scratch=scratch_of(not arm)))


__all__ = ["WEIGHTS_IN_L1", "bindings", "l1_layout", "reorder"]
