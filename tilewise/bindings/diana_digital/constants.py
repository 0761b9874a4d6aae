"""The digital accelerator's constants: per k tile the portable kernels' per-channel block —
bias (zero points folded, bindings/portable/constants.py), which the job adds, then the two
requantization words the host core reads (12 bytes per channel) — and the weights in the core's
layout per k tile (arith.pack: k tiles are multiples of 16 but the last, whose output channels
are padded with zeros to 16; depthwise 4 rows per channel; dense input channels padded to 16):
the plan counts them through ConstLayout.k_block / rows / c_block (LoopNest.w_k_block, w_rows,
w_c_block).

A layer the core requantizes itself (`core_requant`: shift mode, multiplier 1, one right shift
d ≤ 31, the clamp within int8) has the per-channel block [bias + λ + zp·2^d] only (4 bytes per
channel): then clip((acc + bias') >> d, qmin, qmax) = clamp(floor((acc + λ) / 2^d) + zp, qmin,
qmax), the golden shift-mode requantization, provided acc + bias' stays within int32.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ..base import ConstLayout, LayerConstants
from ..portable import constants as portable
from ..portable.common import u8_offset
from ..portable.weighted import stored_clamp
from ..pulp import constants as pulp
from . import arith

INT32 = 2**31 - 1


def kind(layer: Layer) -> str:
    """The job kind of a layer: "conv", "dw" or "dense"."""
    return {"dwconv": "dw", "fc": "dense"}.get(layer.nest.kind, "conv")


def _weights(layer: Layer) -> np.ndarray:
    """The layer's weights as `pack` takes them."""
    n = layer.nest
    w = np.asarray(layer.weights, np.int64)
    if n.kind == "fc":
        return w.reshape(n.K, n.C)
    if n.kind == "dwconv":
        return w.reshape(n.K, n.FY, n.FX)
    return w.reshape(n.K, n.FY, n.FX, n.C)


def packed(layer: Layer, s) -> bytes:
    """The weights in the core's layout, k tile by k tile of schedule `s` (C whole)."""
    w, kd = _weights(layer), kind(layer)
    return b"".join(arith.pack(w[k0:k0 + n], kd).tobytes()
                    for k0, n in portable.tile_ranges(s.tiling("k")))


def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """[bias | word1 | word2] per k tile (the portable layout's words, requantized by the host
    core) and the packed weights."""
    w1, w2, d = portable.requant_words(layer)
    extra = (("SHIFT_D", d),) if d is not None else ()
    return portable.blob(layer, lg, s, (w1, w2), packed(layer, s), extra)


def core_requant(layer: Layer, lg: LayerGraph) -> tuple[np.ndarray, int, int, int]:
    """(bias' per channel, shift, qmin, qmax) of a layer the core requantizes (`reason` None)."""
    rq = layer.requant
    assert rq is not None
    k = layer.nest.K
    zp, qmin, qmax = stored_clamp(layer, u8_offset(lg, layer.output))
    d = int(np.broadcast_to(np.asarray(rq.shift, np.int64), (k,))[0])
    lam = np.broadcast_to(np.asarray(0 if rq.bias is None else rq.bias, np.int64), (k,))
    return portable.kernel_bias(layer, lg) + lam + (zp << d), d, qmin, qmax


def reason(layer: Layer, lg: LayerGraph) -> str | None:
    """None when the core's requantization (clip((acc + bias) >> d)) is exactly the layer's."""
    rq = layer.requant
    if rq is None or rq.mode != "shift":
        return "a requantization other than shift mode (DIANA's core only shifts and clips)"
    k = layer.nest.K
    m = np.broadcast_to(np.asarray(rq.multiplier, np.int64), (k,))
    if (m != 1).any():
        return "a shift-mode multiplier other than 1 (DIANA's core has no multiplier)"
    d = np.broadcast_to(np.asarray(rq.shift, np.int64), (k,))
    if d.min() != d.max() or not 0 <= int(d[0]) <= 31:
        return "per-channel right shifts (DIANA's core has one shift per layer, 0..31)"
    bias, _, _, _ = core_requant(layer, lg)
    bound = pulp.acc_bound(layer, lg) - np.abs(portable.kernel_bias(layer, lg)) + np.abs(bias)
    if (bound > INT32).any():
        return "a requantization whose sum can leave int32 (DIANA's core wraps)"
    return None


def core_requant_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """[bias'] per k tile (`core_requant`) and the packed weights."""
    bias, _, _, _ = core_requant(layer, lg)
    return portable.blob(layer, lg, s, (), packed(layer, s), bias=bias)


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The portable layout's reasons (int32 bias, requant words)."""
    return portable.check(layer, lg)


def _layout(layer_kind: str, build, per_channel: int) -> ConstLayout:
    dense = layer_kind == "fc"
    return ConstLayout(bytes_per_channel=per_channel, weight_layout=f"diana.{layer_kind}",
                       build=build, check=check, c_block=arith.BLOCK if dense else 1,
                       k_block=arith.BLOCK, rows=arith.DW_ROWS if layer_kind == "dwconv" else 1)


def layout(layer_kind: str) -> ConstLayout:
    """The constants of a `layer_kind` layer ("conv", "dwconv", "fc") requantized by the host."""
    return _layout(layer_kind, layer_constants, portable.BYTES_PER_CHANNEL)


def core_layout(layer_kind: str) -> ConstLayout:
    """The constants of a layer the core requantizes (4 bytes per channel: bias')."""
    return _layout(layer_kind, core_requant_constants, 4)
