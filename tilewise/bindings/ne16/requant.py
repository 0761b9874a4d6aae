"""Which cluster requantization an NE16 layer with int32 output calls (c/tw_ne16_kernels.h).

TFLite's double rounding (the tflite and tflite_right variants of bindings/pulp/constants.py) has
a cheaper exact form when the layer's accumulators are small enough: one mulh per output,
tw_ne16_requant_s8_mulh (its derivation in c/tw_ne16_kernels.c), taken by the *_mulh bindings
(their own cost: bindings/ne16/cost.py `requant_mulh`, measured on GVSoC), with its own
per-channel words (`mulh_words_of`, built into the layer's constants: constants.py `MULH`).
`mulh_fits` proves the bound per channel from the layer's weights and bias (|acc| ≤ |bias| +
128·Σ|w|, pulp constants `acc_bound`). A channel whose output is one code over every
accumulator the layer can reach (`constant_channels`: TFLite files hold such "dead" channels,
e.g. vww's with a bias of ±2^30 and a multiplier near 2^−30, which no 32-bit form of their
multiplier fits) needs no bound: its words make the kernel write that code (m0 = 0). A layer
with any other channel outside the bound keeps the pulp kernels' requantization of its variant.
"""

from __future__ import annotations

import numpy as np

from ...golden.requant import apply_requant
from ...ir.layer import Layer, LayerGraph
from ...ir.requant import Requant
from ..pulp import constants as pulp_constants
from .shift_requant import dot_range

INT32_MAX = 2**31 - 1


def _per_channel(a, k: int) -> np.ndarray:
    return np.broadcast_to(np.atleast_1d(np.asarray(a, np.int64)), (k,))


def constant_channels(layer: Layer, lg: LayerGraph) -> np.ndarray | None:
    """Per channel, the output code (golden, before the stored offset) when it is the same for
    every accumulator the layer can reach — Σw·x over the input's integer range (padding
    included, shift_requant.dot_range) plus the bias; TFLite's requantization is nondecreasing
    in the accumulator, so its values at both ends decide — else None for that channel (as a
    masked int64 array: None for the layer when no channel is constant)."""
    rq = layer.requant
    if rq is None or rq.mode != "tflite":
        return None
    k = layer.nest.K
    bias = _per_channel(0 if layer.bias is None else layer.bias, k)
    lo, hi = dot_range(layer, lg)
    f_lo, f_hi = apply_requant(lo + bias, rq), apply_requant(hi + bias, rq)
    const = np.asarray(f_lo == f_hi)
    if not const.any():
        return None
    return np.ma.masked_array(np.asarray(f_lo, np.int64), mask=~const)


def mulh_fits(layer: Layer, lg: LayerGraph) -> bool:
    """Whether the layer's requantization runs exactly in the one-mulh form: every channel not
    constant (`constant_channels`) fits `mulh_fits_channels` for its accumulator bound."""
    rq = layer.requant   # (mulh_fits_channels takes only the tflite double-rounding variants)
    if rq is None:
        return False
    fits = mulh_fits_channels(rq, pulp_constants.acc_bound(layer, lg))
    const = constant_channels(layer, lg)
    if const is not None:
        fits = fits | ~np.ma.getmaskarray(const)
    return bool(fits.all())


def mulh_fits_rq(rq: Requant, bound) -> bool:
    """Whether the one-mulh form is exact for accumulators within `bound` on every channel."""
    return bool(mulh_fits_channels(rq, bound).all())


def mulh_fits_channels(rq: Requant, bound) -> np.ndarray:
    """Per channel, whether the one-mulh form is exact for accumulators within `bound` (per
    channel): |acc|·2^(left+2) < 2^31, the right shift e ≤ 29, and p + 1 + 2^e + 2 + zp·2^(e+1)
    within int32 where |p| ≤ |acc|·2^left·|m0| / 2^30 and |zp| ≤ 256 (an int8 output's zero
    point, + 128 for a u8 one)."""
    k = max(np.size(bound), np.size(rq.shift), np.size(rq.multiplier))
    if rq.mode != "tflite" or rq.rounding != "double" or rq.wide:
        return np.zeros(k, bool)
    bound = _per_channel(bound, k)
    shift = _per_channel(rq.shift, k)
    m0 = np.abs(_per_channel(rq.multiplier, k))
    left, e = np.maximum(shift, 0), np.maximum(-shift, 0)
    ok = (e <= 29) & (left <= 28)
    left, e = np.where(ok, left, 0), np.where(ok, e, 0)
    ok &= (bound << (left + 2)) < 2**31
    p = ((np.where(ok, bound, 0) << left) * m0) >> 30
    return ok & (p + 3 + (np.int64(1) << e) + (np.int64(256) << (e + 1)) <= INT32_MAX)


def mulh_words_of(rq: Requant, k: int, const=None) -> tuple[np.ndarray, ...]:
    """The per-channel words (m0, up, sh, add) of tw_ne16_requant_s8_mulh (c/tw_ne16_kernels.c):
    m0 the Q31 multiplier, up = left + 2, sh = e + 1, add = 1 + 2^e (e ≥ 1) or 1; the kernel adds
    the output's zero point · 2^sh and subtracts 2 from a negative product where sh > 1. A
    constant channel (`const` unmasked: its code c) has m0 = 0, sh = 1, add = 2·(c − zp), so that
    the kernel writes c (+ the stored offset, which the zero point carries)."""
    m0, shift = _per_channel(rq.multiplier, k), _per_channel(rq.shift, k)
    left, e = np.maximum(shift, 0), np.maximum(-shift, 0)
    out = [m0, left + 2, e + 1, np.where(e > 0, 1 + (np.int64(1) << np.minimum(e, 62)), 1)]
    if const is not None:
        c = ~np.ma.getmaskarray(const)
        code = np.ma.getdata(const).astype(np.int64) - int(rq.zero_point)
        out = [np.where(c, 0, out[0]), np.where(c, 2, out[1]), np.where(c, 1, out[2]),
               np.where(c, 2 * code, out[3])]
    return tuple(np.asarray(w, np.int64) for w in out)


def mulh_words(layer: Layer, lg: LayerGraph) -> tuple[np.ndarray, ...]:
    """`mulh_words_of` the layer's requantization, its constant channels written as such."""
    assert layer.requant is not None and mulh_fits(layer, lg), layer.name
    return mulh_words_of(layer.requant, layer.nest.K, constant_channels(layer, lg))


def kernel(layer: Layer, lg: LayerGraph, mulh: bool) -> str:
    """The C function requantizing the layer's NE16 int32 outputs on the cluster: the one-mulh
    form (`mulh`, the *_mulh bindings, whose check is `reason`) or the pulp kernels' variant."""
    if mulh:
        assert mulh_fits(layer, lg), layer.name
        return "tw_ne16_requant_s8_mulh"
    return f"tw_ne16_requant_s8_{pulp_constants.variant(layer, lg)}"


def reason(layer: Layer, lg: LayerGraph) -> str | None:
    """Why the one-mulh requantization cannot take the layer (None: it can)."""
    if mulh_fits(layer, lg):
        return None
    return ("its requantization is not TFLite's double rounding with accumulators small enough "
            "for the one-mulh form (|acc|·2^(left+2) < 2^31, right shift ≤ 29) on every channel "
            "whose output is not constant")
