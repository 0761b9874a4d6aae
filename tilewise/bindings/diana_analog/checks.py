"""Which layers DIANA's analog core takes (notes/accelerators.md "Analog core (HTVM)", HTVM's
soma_dory analog conv pattern), each refusal a noun phrase partition turns into one sentence:

- conv2d with groups 1 (the key: op conv2d), every weight in {−1, 0, +1};
- a square kernel of 1, 3, 5 or 7, symmetric 'same' padding ((F − 1)/2 on every side), stride 1
  or 2 in both directions (as the digital core);
- the layer's requantization in adc mode with the chip's ADC: range [−32, 31], a positive divisor
  within int32, m within int16, s in 0..31, and |m|·32 + |a| within int32 (the 32-bit digital
  stage never wraps, so it equals golden/requant.py's exact integers);
- element counts divisible by 4: the input (IY·IX·C), the output (OY·OX·K) and each output
  channel's column of weights (FY·FX·C, so that the 2-bit codes fill whole bytes, arith.py);
- the layer fits the 1152 × 512 array: FY·FX·C ≤ 1152 rows, K ≤ 512 columns;
- int8 / uint8 activations and the portable family's int8 conditions (output clamp, input zero
  point, batch 1), and an accumulator Σ w·x + bias that cannot leave int32.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ..portable import checks as portable_checks
from ..portable.constants import kernel_bias
from . import arith

KERNELS = (1, 3, 5, 7)
INT32_MAX = 2**31 - 1


def _geometry(layer: Layer) -> str | None:
    n = layer.nest
    if n.FY != n.FX or n.FY not in KERNELS:
        return f"a {n.FY}×{n.FX} kernel (the analog core takes square 1, 3, 5 and 7)"
    p = (n.FY - 1) // 2
    if tuple(n.pads) != (p, p, p, p):
        return f"padding {tuple(n.pads)} (the analog core pads 'same': {p} on every side)"
    if (n.SY, n.SX) not in ((1, 1), (2, 2)):
        return f"a stride of {n.SY}×{n.SX} (the analog core takes 1 or 2)"
    if (n.IY * n.IX * n.C) % 4 or (n.OY * n.OX * n.K) % 4 or (n.FY * n.FX * n.C) % 4:
        return ("element counts not divisible by 4 (input "
                f"{n.IY * n.IX * n.C}, output {n.OY * n.OX * n.K}, weights per channel "
                f"{n.FY * n.FX * n.C})")
    if n.FY * n.FX * n.C > arith.ROWS or n.K > arith.COLS:
        return (f"{n.FY * n.FX * n.C} rows × {n.K} columns of weights (the array has "
                f"{arith.ROWS} × {arith.COLS})")
    return None


def _requant(layer: Layer, lg: LayerGraph) -> str | None:
    rq = layer.requant
    if rq is None or rq.mode != "adc":
        return "a requantization other than the ADC chain (adc mode)"
    if (rq.adc_min, rq.adc_max) != (-32, 31):
        return f"an ADC range of [{rq.adc_min}, {rq.adc_max}] (the 6-bit ADC gives [-32, 31])"
    if not 0 < rq.divisor <= INT32_MAX:
        return f"an ADC divisor of {rq.divisor}"
    k = layer.nest.K
    m = np.broadcast_to(np.asarray(rq.multiplier, np.int64), (k,))
    a = np.broadcast_to(np.asarray(0 if rq.bias is None else rq.bias, np.int64), (k,))
    s = np.broadcast_to(np.asarray(rq.shift, np.int64), (k,))
    if m.min() < -32768 or m.max() > 32767:
        return "an ADC multiplier beyond int16"
    if s.min() < 0 or s.max() > 31:
        return "ADC right shifts outside 0..31"
    if (32 * np.abs(m) + np.abs(a)).max() > INT32_MAX:
        return "an ADC offset whose sum with m·a6 can leave int32"
    bias = kernel_bias(layer, lg)
    if np.abs(bias).max(initial=0) + 128 * layer.nest.FY * layer.nest.FX * layer.nest.C > INT32_MAX:
        return "a bias that lets the array's sum leave int32"
    return None


def analog(layer: Layer, lg: LayerGraph) -> str | None:
    """None, or why the analog core cannot run the layer (module docstring)."""
    reason = portable_checks.weighted_s8(layer, lg) or _geometry(layer)
    if reason is not None:
        return reason
    w = np.asarray(layer.weights, np.int64)
    if w.size and (w.min() < -1 or w.max() > 1):
        return "weights that are not ternary (the analog core stores −1, 0, +1)"
    return _requant(layer, lg)
