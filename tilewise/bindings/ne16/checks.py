"""Which layers the NE16 bindings take (notes/accelerators.md, MATCH's NE16 patterns).

- conv2d: a 3×3 kernel with padding 0 or 1 on each side (MATCH takes 'same' padding 1; NE16 pads
  each side as programmed, which also covers TFLite's asymmetric stride-2 'SAME'), or a 1×1 kernel
  without padding; stride 1 or 2 in both directions;
- depthwise: 3×3, padding 0 or 1 on each side, stride 1 or 2, multiplier 1;
- fully_connected: as a 1×1 conv of a one-pixel map;
- int8 activations and weights (the portable family's int8 conditions), the requantization on the
  cluster (any mode the pulp kernels take: checks there);
- input channels (depthwise: channels) a multiple of 16, NE16's input block: the weight layout then
  takes exactly the layer's weight bytes (bindings/ne16/constants.py); MATCH pads other channel
  counts in software, which these bindings do not do yet.
"""

from __future__ import annotations

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ..portable import checks as portable_checks
from .arith import TP_IN


def ne16(layer: Layer, lg: LayerGraph) -> str | None:
    """None, or why NE16 cannot run the layer (module docstring)."""
    reason = portable_checks.weighted_s8(layer, lg)
    if reason is not None:
        return reason
    n = layer.nest
    if layer.op == Op.FULLY_CONNECTED:
        c = n.C
    else:
        if (n.SY, n.SX) not in ((1, 1), (2, 2)):
            return f"a stride of {n.SY}×{n.SX} (NE16 takes 1 or 2)"
        if (n.FY, n.FX) == (3, 3):
            if any(p not in (0, 1) for p in n.pads):
                return f"3×3 padding {n.pads} (NE16 pads 0 or 1 per side)"
        elif (n.FY, n.FX) == (1, 1) and layer.op == Op.CONV2D:
            if any(n.pads):
                return "a padded 1×1 conv"
        else:
            return f"a {n.FY}×{n.FX} kernel (NE16 takes 3×3 and 1×1{'' if layer.op == Op.CONV2D else ', 3×3 depthwise'})"
        c = n.K if layer.op == Op.DEPTHWISE else n.C
    if c % TP_IN:
        what = "channels" if layer.op == Op.DEPTHWISE else "input channels"
        return f"{c} {what}, not a multiple of NE16's block of {TP_IN}"
    return None
