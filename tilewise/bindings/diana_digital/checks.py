"""Which layers DIANA's digital accelerator takes (notes/accelerators.md; HTVM's soma_dory.py
check_conv2d / check_fully_connected, MATCH's DIANA digital patterns).

- conv2d and depthwise (multiplier 1): kernel height and width each 1, 3, 5 or 7, padding per
  side of at most F // 2 (arith.py's padding decision: TFLite's asymmetric stride-2 'SAME'
  padding, (0, 0, 1, 1) for 3×3, is a job as it stands; HTVM takes symmetric padding only),
  stride 1 or 2 in both directions, dilation 1 (the IR has none);
- fully_connected: any size (the weights are padded to 16-channel blocks);
- int8 activations and weights (the portable family's int8 conditions: the host core
  requantizes the int32 output in any mode those take, arith.py);
- elementwise add: DIANA's add is (a + b) >> shift → clip (HTVM's element_wise_add_pattern),
  while TFLite's and onnxruntime's adds rescale each input by its own multiplier before the sum,
  which neither the core nor a host pass over a + b can reproduce: those run on the host core;
  a shift-mode add by tables that is exactly the core's runs on it (add.py `reason`).
"""

from __future__ import annotations

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ..portable import checks as portable_checks

KERNELS = (1, 3, 5, 7)


def digital(layer: Layer, lg: LayerGraph) -> str | None:
    """None, or why the digital accelerator cannot run the layer (module docstring)."""
    reason = portable_checks.weighted_s8(layer, lg)
    if reason is not None:
        return reason
    if layer.op == Op.FULLY_CONNECTED:
        return None
    n = layer.nest
    if n.FY not in KERNELS or n.FX not in KERNELS:
        return f"a {n.FY}×{n.FX} kernel (DIANA's digital core takes 1, 3, 5 or 7 per axis)"
    if (n.SY, n.SX) not in ((1, 1), (2, 2)):
        return f"a stride of {n.SY}×{n.SX} (DIANA's digital core takes 1 or 2)"
    top, left, bottom, right = n.pads
    if max(top, bottom) > n.FY // 2 or max(left, right) > n.FX // 2:
        return (f"padding {tuple(n.pads)} (DIANA's digital core pads at most {n.FY // 2} rows and "
                f"{n.FX // 2} columns per side for a {n.FY}×{n.FX} kernel)")
    return None
