"""Which layers the NE16 bindings take (notes/accelerators.md, MATCH's NE16 patterns).

- conv2d: a 3×3 kernel with padding 0 or 1 on each side (MATCH takes 'same' padding 1; NE16 pads
  each side as programmed, which also covers TFLite's asymmetric stride-2 'SAME'), or a 1×1 kernel
  without padding; stride 1 or 2 in both directions;
- depthwise: 3×3, padding 0 or 1 on each side, stride 1 or 2, multiplier 1;
- fully_connected: as a 1×1 conv of a one-pixel map;
- int8 activations (the portable family's int8 conditions), the requantization on the cluster
  (any mode the pulp kernels take: checks there);
- weights of LoopNest.w_bits = 2..8 bits (NE16 stores w_bits bit planes; notes/accelerators.md),
  every weight inside the signed w_bits range [−2^(w_bits−1), 2^(w_bits−1) − 1] (the layer's
  bits are read from its nest; a weight outside them is refused, never narrowed);
- any number of input channels: the weights are stored with them padded to NE16's 16-channel
  block (constants.py), the job masks the channels past C (arith.py).
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ..portable import checks as portable_checks

#: the weight bits NE16 takes (its bit-plane datapath)
W_BITS = range(2, 9)


def ne16(layer: Layer, lg: LayerGraph) -> str | None:
    """None, or why NE16 cannot run the layer (module docstring)."""
    reason = portable_checks.weighted_s8(layer, lg)
    if reason is not None:
        return reason
    n = layer.nest
    reason = weight_bits(layer)
    if reason is not None:
        return reason
    if layer.op != Op.FULLY_CONNECTED:
        if (n.SY, n.SX) not in ((1, 1), (2, 2)):
            return f"a stride of {n.SY}×{n.SX} (NE16 takes 1 or 2)"
        if (n.FY, n.FX) == (3, 3):
            if any(p not in (0, 1) for p in n.pads):
                return f"3×3 padding {n.pads} (NE16 pads 0 or 1 per side)"
        elif (n.FY, n.FX) == (1, 1) and layer.op == Op.CONV2D:
            if any(n.pads):
                return "a padded 1×1 conv"
        else:
            return (f"a {n.FY}×{n.FX} kernel (NE16 takes 3×3 and 1×1"
                    f"{'' if layer.op == Op.CONV2D else ', 3×3 depthwise'})")
    return None


def weight_bits(layer: Layer) -> str | None:
    """None, or why the layer's weights are not NE16 weights of its LoopNest.w_bits bits."""
    bits = layer.nest.w_bits
    if bits not in W_BITS:
        return f"{bits}-bit weights (NE16 takes 2 to 8)"
    w = np.asarray(layer.weights, np.int64)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if w.size and (w.min() < lo or w.max() > hi):
        return f"weights in [{w.min()}, {w.max()}], outside the {bits}-bit range [{lo}, {hi}]"
    return None
