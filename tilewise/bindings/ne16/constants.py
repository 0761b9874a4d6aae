"""The NE16 bindings' constants: per k tile the cluster's per-channel block — the bias as the job
leaves it to be added, then the pulp kernels' four requantization words (bindings/pulp/
constants.py: 20 bytes per channel; the *_mulh bindings' own four words there, `MULH`) — and
the weights in NE16's bit-plane layout per k tile, one
plane per weight bit, b = LoopNest.w_bits (2..8) (arith.pack: conv [k_t][⌈C/16⌉][b][FY·FX][2],
depthwise [⌈k_t/16⌉][b][9][2], dense as a 1×1 conv): k_t·⌈C/16⌉·16·FY·FX·b/8 bytes (depthwise
⌈k_t/16⌉·16·9·b/8), which the plan counts through ConstLayout.c_block = 16 (LoopNest.w_c_block)
and the nest's w_bits (ir/operands.py: ⌈elements·bits/8⌉, exact here: 16·b/8 is whole).

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


def job_bias(layer: Layer, lg: LayerGraph) -> np.ndarray:
    """Per channel, what acc + bias needs after a job on u = x + 128 (module docstring): the
    portable kernels' bias − 128·Σw (int64)."""
    return arith.bias_for_u8(portable.kernel_bias(layer, lg), _weights(layer))


def _packed(layer: Layer, s) -> bytes:
    """The weights in NE16's layout of LoopNest.w_bits bit planes, k tile by k tile of schedule
    `s` (C whole in every tile)."""
    w = _weights(layer)
    dw = layer.nest.kind == "dwconv"
    bits = layer.nest.w_bits
    return b"".join(arith.pack(w[k0:k0 + n], bits, depthwise=dw).tobytes()
                    for k0, n in portable.tile_ranges(s.tiling("k")))


def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob for schedule `s` (C whole in every tile: the bindings' tile rules)."""
    return portable.blob(layer, lg, s, (np.stack(pulp.words(layer, lg), axis=1),),
                         _packed(layer, s), bias=job_bias(layer, lg))


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The pulp layout's reasons, and a bias that no longer fits int32 once −128·Σw is in it."""
    reason = pulp.check(layer, lg)
    if reason is None:
        bias = job_bias(layer, lg)
        if bias.min(initial=0) < -2**31 or bias.max(initial=0) > 2**31 - 1:
            return "a bias that does not fit int32 with NE16's −128·Σw in it"
    return reason


def normquant_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob of a layer requantized by NE16 (normquant.py): per k tile the arrays [bias |
    scale | 0 | 0 | 0] (k_t int32 each: NE16's norm-quant bias and scale, as the job reads them,
    in the pulp layout's 20 bytes per channel) and the packed weights."""
    from . import normquant

    scale, bias, _, _ = normquant.words(layer, lg)
    zero = np.zeros(layer.nest.K, np.int64)
    return portable.blob(layer, lg, s, (scale, zero, zero, zero), _packed(layer, s), bias=bias)


def mulh_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob of a layer the cluster requantizes in the one-mulh form (requant.py): the bias
    block, then per channel the words (m0, up, sh, add) of tw_ne16_requant_s8_mulh
    (requant.mulh_words: its constant channels as such), and the packed weights."""
    from . import requant

    return portable.blob(layer, lg, s, (np.stack(requant.mulh_words(layer, lg), axis=1),),
                         _packed(layer, s), bias=job_bias(layer, lg))


LAYOUT = ConstLayout(bytes_per_channel=pulp.BYTES_PER_CHANNEL, weight_layout="ne16",
                     build=layer_constants, check=check, c_block=arith.TP_IN)
#: the layout of the layers the cluster requantizes in the one-mulh form (the *_mulh bindings)
MULH = ConstLayout(bytes_per_channel=pulp.BYTES_PER_CHANNEL, weight_layout="ne16",
                   build=mulh_constants, check=check, c_block=arith.TP_IN)
#: the layout of the layers NE16 requantizes itself
NORMQUANT = ConstLayout(bytes_per_channel=pulp.BYTES_PER_CHANNEL, weight_layout="ne16",
                        build=normquant_constants, check=check, c_block=arith.TP_IN)
