"""Which cluster requantization an NE16 layer with int32 output calls (c/tw_ne16_kernels.h).

TFLite's double rounding (the tflite and tflite_right variants of bindings/pulp/constants.py) has
a cheaper exact form when the layer's accumulators are small enough: one mulh per output,
tw_ne16_requant_s8_mulh_<variant> (its derivation in c/tw_ne16_kernels.c), taken by the *_mulh
bindings (their own cost: bindings/ne16/cost.py `requant_mulh`, measured on GVSoC).
`mulh_fits` proves the bound from the layer's weights and bias (|acc| ≤ |bias| + 128·Σ|w| per
channel, pulp constants `acc_bound`); every other layer keeps the pulp kernels' requantization
of its variant (e.g. vww's layers whose dead channels carry a bias of 2^30).
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.requant import Requant
from ..pulp import constants as pulp_constants

INT32_MAX = 2**31 - 1


def mulh_fits(layer: Layer, lg: LayerGraph) -> bool:
    """Whether the layer's requantization runs exactly in the one-mulh form (`mulh_fits_rq` for
    its variant and accumulator bound)."""
    rq = layer.requant   # (mulh_fits_rq takes only the tflite double-rounding variants)
    return rq is not None and mulh_fits_rq(rq, pulp_constants.acc_bound(layer, lg))


def mulh_fits_rq(rq: Requant, bound) -> bool:
    """Whether the one-mulh form is exact for accumulators within `bound` (per channel): per
    channel |acc|·2^(left+2) < 2^31, the right shift e ≤ 29, and p + 1 + 2^e + 2 + zp·2^(e+1)
    within int32 where |p| ≤ |acc|·2^left·|m0| / 2^30 and |zp| ≤ 256 (an int8 output's zero
    point, + 128 for a u8 one)."""
    if rq.mode != "tflite" or rq.rounding != "double" or rq.wide:
        return False
    k = max(np.size(bound), np.size(rq.shift), np.size(rq.multiplier))
    bound = np.broadcast_to(np.asarray(bound, np.int64), (k,))
    shift = np.broadcast_to(np.atleast_1d(np.asarray(rq.shift, np.int64)), (k,))
    m0 = np.abs(np.broadcast_to(np.atleast_1d(np.asarray(rq.multiplier, np.int64)), (k,)))
    left, e = np.maximum(shift, 0), np.maximum(-shift, 0)
    if not bool(((e <= 29) & (left <= 28)).all()):
        return False
    if not bool((bound << (left + 2) < 2**31).all()):
        return False
    p = ((bound << left) * m0) >> 30
    return bool((p + 3 + (np.int64(1) << e) + (np.int64(256) << (e + 1)) <= INT32_MAX).all())


def kernel(layer: Layer, lg: LayerGraph, mulh: bool) -> str:
    """The C function requantizing the layer's NE16 int32 outputs on the cluster: the one-mulh
    form (`mulh`, the *_mulh bindings, whose check is `reason`) or the pulp kernels' variant."""
    v = pulp_constants.variant(layer, lg)
    assert not mulh or mulh_fits(layer, lg), layer.name
    return f"tw_ne16_requant_s8_{'mulh_' if mulh else ''}{v}"


def reason(layer: Layer, lg: LayerGraph) -> str | None:
    """Why the one-mulh requantization cannot take the layer (None: it can)."""
    if mulh_fits(layer, lg):
        return None
    return ("its requantization is not TFLite's double rounding with accumulators small enough "
            "for the one-mulh form (|acc|·2^(left+2) < 2^31, right shift ≤ 29)")
