"""The NE16 bindings' constants: per k tile the cluster's per-channel block — the bias as the job
leaves it to be added, then the pulp kernels' four requantization words (bindings/pulp/
constants.py: 20 bytes per channel) — and the weights in NE16's bit-plane layout per k tile
(arith.pack: conv [k_t][⌈C/16⌉][8][FY·FX][2], depthwise [⌈k_t/16⌉][8][9][2], dense as a 1×1
conv): k_t·⌈C/16⌉·16·FY·FX bytes (depthwise ⌈k_t/16⌉·16·9), which the plan counts through
ConstLayout.c_block = 16 (LoopNest.w_c_block).

The job computes Σ w·u on u = x + 128 (arith.py), which is Σ w·x + 128·Σw: the bias block holds
the portable kernels' bias (zero points folded) − 128·Σw, so that acc + bias is the layer's
accumulator.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ..base import ConstLayout, LayerConstants
from ..portable import constants as portable
from ..pulp import constants as pulp
from . import arith


def _weights(layer: Layer) -> np.ndarray:
    """The layer's weights as [K, FY, FX, C] (depthwise C = 1)."""
    n = layer.nest
    w = np.asarray(layer.weights, np.int64)
    if n.kind == "dwconv":
        return w.reshape(n.K, n.FY, n.FX, 1)
    return w.reshape(n.K, n.FY, n.FX, n.C)


def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob for schedule `s` (C whole in every tile: the bindings' tile rules)."""
    w = _weights(layer)
    dw = layer.nest.kind == "dwconv"
    bias = portable.kernel_bias(layer, lg) - 128 * w.reshape(w.shape[0], -1).sum(axis=1)
    kt = [(k0, min(s.tiling("k").tile, layer.nest.K - k0))
          for k0 in range(0, layer.nest.K, s.tiling("k").tile)]
    weights = b"".join(arith.pack(w[k0:k0 + n], depthwise=dw).tobytes() for k0, n in kt)
    return portable.blob(layer, lg, s, (np.stack(pulp.words(layer, lg), axis=1),), weights,
                         bias=bias)


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The pulp layout's reasons, and a bias that no longer fits int32 once −128·Σw is in it."""
    reason = pulp.check(layer, lg)
    if reason is None:
        w = _weights(layer)
        bias = portable.kernel_bias(layer, lg) - 128 * w.reshape(w.shape[0], -1).sum(axis=1)
        if bias.min(initial=0) < -2**31 or bias.max(initial=0) > 2**31 - 1:
            return "a bias that does not fit int32 with NE16's −128·Σw in it"
    return reason


def normquant_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob of a layer requantized by NE16 (normquant.py): per k tile the arrays [bias |
    scale | 0 | 0 | 0] (k_t int32 each: NE16's norm-quant bias and scale, as the job reads them,
    in the pulp layout's 20 bytes per channel) and the packed weights."""
    from . import normquant

    w = _weights(layer)
    scale, bias, _, _ = normquant.words(layer, lg)
    k = layer.nest.K
    zero = np.zeros(k, np.int64)
    kt = [(k0, min(s.tiling("k").tile, k - k0)) for k0 in range(0, k, s.tiling("k").tile)]
    weights = b"".join(arith.pack(w[k0:k0 + n], depthwise=layer.nest.kind == "dwconv").tobytes()
                       for k0, n in kt)
    return portable.blob(layer, lg, s, (scale, zero, zero, zero), weights, bias=bias)


LAYOUT = ConstLayout(bytes_per_channel=pulp.BYTES_PER_CHANNEL, weight_layout="ne16",
                     build=layer_constants, check=check, c_block=arith.TP_IN)
#: the layout of the layers NE16 requantizes itself
NORMQUANT = ConstLayout(bytes_per_channel=pulp.BYTES_PER_CHANNEL, weight_layout="ne16",
                        build=normquant_constants, check=check, c_block=arith.TP_IN)
