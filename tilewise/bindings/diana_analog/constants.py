"""The analog bindings' constants: per k tile the per-channel block [bias | m | a | s] (k_t int32
each, 16 bytes per channel: the array's bias and the digital stage's words of the layer's adc
requantization, as the job reads them) and the tile's ternary weights as 2-bit codes
(arith.pack: [k_t][FY·FX·C/4] bytes, C whole in every tile). The per-layer divisor D and ADC range
are constants of the layer's C file. The plan counts the packed bytes through ConstLayout.w_bits
= 2 (LoopNest.w_bits of the placement): k_t·FY·FX·C·2/8 bytes per k tile.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ..base import ConstLayout, LayerConstants
from ..portable import constants as portable
from . import arith

WORDS = 4
BYTES_PER_CHANNEL = 4 * WORDS


def words(layer: Layer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m, a, s per output channel (int64)."""
    rq = layer.requant
    assert rq is not None and rq.mode == "adc"
    k = layer.nest.K
    return tuple(np.broadcast_to(np.asarray(v, np.int64), (k,)).copy()   # type: ignore[return-value]
                 for v in (rq.multiplier, 0 if rq.bias is None else rq.bias, rq.shift))


def weights(layer: Layer) -> np.ndarray:
    """The layer's weights as [K, FY, FX, C]."""
    n = layer.nest
    return np.asarray(layer.weights, np.int64).reshape(n.K, n.FY, n.FX, n.C)


def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob for schedule `s` (checks.analog passed; C whole in every tile)."""
    w = weights(layer)
    packed = b"".join(arith.pack(w[k0:k0 + n]).tobytes()
                      for k0, n in portable.tile_ranges(s.tiling("k")))
    return portable.blob(layer, lg, s, words(layer), packed)


LAYOUT = ConstLayout(bytes_per_channel=BYTES_PER_CHANNEL, weight_layout="analog.k.fy.fx.c.2b",
                     build=layer_constants, check=portable.check, w_bits=2)
