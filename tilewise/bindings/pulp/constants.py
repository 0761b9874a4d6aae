"""The pulp family's constants layout: per-channel requantization words derived at compile time.

A weighted layer's blob is the portable one (bindings/portable/constants.py `blob`: per k tile
one per-channel block, then the weight blocks) with five int32 arrays per block instead of three:

    [ bias k_t | (m a b c) k_t ]          BYTES_PER_CHANNEL = 20

the words channel by channel (a kernel walks one pointer, a channel's words at fixed offsets)

bias as the portable family folds it (−zp_x·Σw, + 128·Σw for a uint8 input), then the words
(m, a, b, c) of tw_pulp_requant.h — what the kernels would otherwise recompute for every block
of outputs (tw_pulp_rq_words() derives the same in C):

| variant        | m             | a                        | b                          | c             |
|----------------|---------------|--------------------------|----------------------------|---------------|
| tflite         | M0            | left = max(shift, 0)     | e = max(−shift, 0)         | 2^e − 1       |
| tflite_single  | M0            | low word of 2^(total−1)  | high word of 2^(total−1)   | total = 31 − shift |
| shift          | k             | lambda                   | lambda's sign word         | d             |
| shift32        | k             | lambda                   | lambda's sign word         | min(d, 31)    |
| tflite_right   | M0            | h = 2^(e−1)              | e = −shift ≥ 1             | 0             |
| onnx, r ≥ 33   | mult = M·2^7  | 2^25 + 1                 | 2^(r − 33)                 | r − 32        |
| onnx, r ≤ 32   | mult          | 0                        | 0                          | r             |
| onnx24, exact  | −mult         | 31 − (r − 32)            | 2^(r − 33) − 1             | r − 32        |
| onnx24, linear | m ≥ 0         | sh                       | b                          | c             |
| onnx_fpu       | float32 bits of the scale | 0            | 0                          | 0             |

`variant(layer, lg)` names the kernel variant (the C entry points' suffix). TFLite's double rounding
runs as "tflite_right" (RoundingDivideByPOT in four instructions, (y + h − [y < 0]) >> e) when every
channel shifts right (shift ≤ −1: no left shift) and y + h cannot overflow int32 for the layer's
accumulators, y = SRDHM(acc, M0) being at most |acc|·M0 / 2^31 + 1 — the usual case; built for Arm
(`arm`) also when |acc| < 2^30 (SRDHM as one smmulr of 2·acc) — and as
"tflite" (any shift) otherwise. Shift mode runs in 32
bits ("shift32", one p.mac and a shift) when k·acc + lambda fits int32 for every accumulator the
layer can produce — |acc| ≤ |bias| + 128·Σ|w| per channel, the kernels' int8 (or biased uint8)
inputs and pad values being within [−128, 127] — and in 64-bit semantics ("shift") otherwise.
onnx's requantization runs as "onnx" (any accumulator and scale: a range check per output, the
64-bit path for |acc| > 2^24 or scales ≥ 1/4), or — `variant(..., onnx24=True)`, the pulp
family's separate *_onnx24 bindings, priced apart — as "onnx24" (no range check, no 64-bit
path: tw_pulp_rq_onnx24), legal only where `onnx24_fits`: |acc| ≤ 2^24 for every accumulator
the layer can produce (the bound above) and r ≥ 33 (scale < 1/4) for every channel, a zero
scale's m = 0 taking r = 33 (its outputs are 0 for any r). Per channel, onnx24 runs the
linear form (mulh(acc << sh, m) + b) >> c wherever onnx_linear.fit proves it gives the clamped
outputs of the exact form for every accumulator within the channel's bound (most channels), and
the exact form (bit scan and carry, tw_pulp_rq_onnx24) elsewhere, marked by a negative m (−mult;
a zero scale's m = 0 is a linear channel whose outputs are 0).
Built for an Arm core with an FPU, the onnx bindings (not the onnx24 ones) run it as "onnx_fpu"
(onnxruntime's float32 operations on the FPU: tw_pulp_rq_onnx_fpu) where the cost model prices
that form below the integer one (`fpu`: pulp/__init__.py `bindings`, cost.onnx_on_fpu).

Weight blocks: conv [k_t][FY][FX][c_t] and dense [k_t][c_t] as the portable family's; depthwise
[k_t][FY][FX] (channel-major: each channel's taps together, tw_pulp_depthwise.h) at the same
offsets k0·FY·FX, so the tile DMA is the portable one.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ...golden import onnx_requant_exact
from ...ir.layer import Layer, LayerGraph
from ...ir.requant import Requant
from ..base import ConstLayout, LayerConstants
from ..portable import constants as portable
from . import onnx_linear
from .checks import tflite_multipliers

#: int32 words per channel: bias and the four requantization words
BYTES_PER_CHANNEL = 20
INT32_MAX = 2**31 - 1


def _per_channel(layer: Layer, a) -> np.ndarray:
    return np.broadcast_to(np.atleast_1d(np.asarray(a)), (layer.nest.K,)).astype(np.int64)


def acc_bound(layer: Layer, lg: LayerGraph) -> np.ndarray:
    """Per output channel, a bound on |acc| for every input: |bias| + 128·Σ|w| (int64)."""
    k = layer.nest.K
    w = np.abs(np.asarray(layer.weights, dtype=np.int64)).reshape(k, -1).sum(axis=1)
    return np.abs(portable.kernel_bias(layer, lg)) + 128 * w


#: |acc| up to which "onnx24" is exact (tw_pulp_rq_onnx24: fl(acc) = acc, |acc·mult| < 2^55)
ONNX24_ACC = 1 << 24


def onnx24_reason(layer: Layer, lg: LayerGraph) -> str | None:
    """Why the layer's onnx requantization cannot run as "onnx24" (module docstring), or None."""
    rq = layer.requant
    if rq is None or rq.mode != "onnx":
        return "not an onnx-mode requantization"
    bound = int(acc_bound(layer, lg).max())
    if bound > ONNX24_ACC:
        return f"|acc| may reach {bound} > 2^24 (the onnx24 kernels' bound)"
    mult, r = onnx_requant_exact.constants(np.broadcast_to(np.atleast_1d(
        np.asarray(rq.scale, np.float32)), (layer.nest.K,)))
    if bool(((r < 33) & (mult != 0)).any()):
        return "a scale ≥ 1/4 (the onnx24 kernels take scales < 1/4)"
    return None


def onnx24_fits(layer: Layer, lg: LayerGraph) -> bool:
    """Whether "onnx24" computes the layer's onnx requantization exactly (onnx24_reason)."""
    return onnx24_reason(layer, lg) is None


def variant(layer: Layer, lg: LayerGraph, arm: bool = False, onnx24: bool = False,
            fpu: bool = False) -> str:
    """The kernel variant of the layer's requantization (module docstring); `arm`: for the
    kernels built for Arm (their tflite_right needs |acc| < 2^30 too); `onnx24`: the onnx24
    bindings' (the binding's check has proven onnx24_fits); `fpu`: onnx mode on the Arm core's
    FPU (onnx_fpu) in the other onnx bindings."""
    rq = layer.requant
    assert rq is not None
    if onnx24:
        assert rq.mode == "onnx" and onnx24_fits(layer, lg), layer.name
        return "onnx24"
    if rq.mode == "tflite":
        if rq.rounding == "single":
            return "tflite_single"
        return "tflite_right" if tflite_right_fits(rq, acc_bound(layer, lg), arm) else "tflite"
    if rq.mode == "onnx":
        return "onnx_fpu" if fpu else "onnx"
    k = np.abs(_per_channel(layer, rq.multiplier))
    lam = np.abs(_per_channel(layer, 0 if rq.bias is None else rq.bias))
    fits = k * acc_bound(layer, lg) + lam <= INT32_MAX
    return "shift32" if bool(fits.all()) else "shift"


def tflite_right_fits(rq: Requant, bound: np.ndarray, arm: bool = False) -> bool:
    """Whether "tflite_right" computes TFLite's double rounding exactly for accumulators within
    `bound` (per channel): every shift in [−31, −1] and y + 2^(e−1) ≤ INT32_MAX; built for
    Arm (`arm`) also |acc| < 2^30, as its SRDHM is one smmulr of 2·acc (module docstring)."""
    return right_shift_fits(rq.multiplier, rq.shift, bound, arm)


def right_shift_fits(multiplier, shift, bound, arm: bool = False) -> bool:
    """tflite_right_fits for multipliers, shifts and accumulator bounds (broadcast per channel)."""
    m, s, b = np.broadcast_arrays(np.atleast_1d(np.asarray(multiplier, np.int64)),
                                  np.atleast_1d(np.asarray(shift, np.int64)),
                                  np.atleast_1d(np.asarray(bound, np.int64)))
    e = -s
    if not bool(((e >= 1) & (e <= 31)).all()) or (arm and not bool((b < 2**30).all())):
        return False
    y = (b * np.abs(m)) // 2**31 + 1
    return bool((y + (np.int64(1) << (e - 1)) <= INT32_MAX).all())


def words_of(rq: Requant, k: int, v: str, bound=None) -> tuple[np.ndarray, ...]:
    """The per-channel words (m, a, b, c) of requantization `rq` over `k` channels for variant
    `v` (module docstring), as int32 arrays; `bound`: per channel, the layer's accumulator bound
    (acc_bound), which lets onnx24 take the linear form where it is exact (without it every
    channel keeps the exact form)."""
    def per_channel(a) -> np.ndarray:
        return np.broadcast_to(np.atleast_1d(np.asarray(a)), (k,)).astype(np.int64)

    if v == "onnx":
        return onnx_words(rq.scale, k)
    if v == "onnx24":
        clamp = None if bound is None else (rq.qmin - rq.zero_point, rq.qmax - rq.zero_point)
        return onnx24_words(rq.scale, k, bound, clamp)
    if v == "onnx_fpu":
        bits = np.broadcast_to(np.atleast_1d(np.asarray(rq.scale, np.float32)), (k,)).view(np.int32)
        zero = np.zeros(k, np.int32)
        return (bits.copy(), zero, zero, zero)
    m, s = per_channel(rq.multiplier), per_channel(rq.shift)
    if v == "tflite":
        e = np.maximum(-s, 0)
        out = (m, np.maximum(s, 0), e, (np.int64(1) << e) - 1)
    elif v == "tflite_right":
        e = -s
        out = (m, np.int64(1) << (e - 1), e, np.zeros(k, np.int64))
    elif v == "tflite_single":
        total = 31 - s
        out = (m, np.where(total <= 32, np.int64(1) << (total - 1), 0),
               np.where(total > 32, np.int64(1) << np.maximum(total - 33, 0), 0), total)
    else:
        lam = per_channel(0 if rq.bias is None else rq.bias)
        out = (m, lam, np.where(lam < 0, -1, 0), np.minimum(s, 31) if v == "shift32" else s)
    # two's-complement words: 2^31 (tflite_single's rounding term at total = 32) is int32 -2^31
    return tuple(((a + 2**31) % 2**32 - 2**31).astype(np.int32) for a in out)


def onnx_words(scale, k: int) -> tuple[np.ndarray, ...]:
    """The words (m, a, b, c) of onnx requantization by float32 `scale` (one or `k` values) over
    `k` channels: golden/onnx_requant_exact.py's constants (mult, r) of each scale, then
    a = 2^25 + 1, b = 2^(r − 33), c = r − 32 where r ≥ 33 (the common 32-bit path of
    tw_pulp_requant.h, for |acc| ≤ 2^24), else a = b = 0, c = r (the 64-bit path)."""
    scale = np.broadcast_to(np.atleast_1d(np.asarray(scale, np.float32)), (k,))
    mult, r = onnx_requant_exact.constants(scale)
    hi = r >= 33
    out = (mult, np.where(hi, (1 << 25) + 1, 0), np.where(hi, np.int64(1) << np.maximum(r - 33, 0), 0),
           np.where(hi, r - 32, r))
    return tuple(np.asarray(a, np.int64).astype(np.int32) for a in out)


def onnx24_words(scale, k: int, bound=None, clamp: tuple[int, int] | None = None
                 ) -> tuple[np.ndarray, ...]:
    """The words (m, a, b, c) of "onnx24" (module docstring) for float32 `scale` over `k`
    channels. The exact form: m = −mult, a = 31 − rr, b = 2^(rr − 1) − 1, c = rr = r − 32 (r ≥ 33;
    a zero scale's r taken as 33, its m = 0). With the channels' accumulator bounds `bound` and
    the clamp (qmin − zp, qmax − zp), the linear form (m, sh, b, c) of onnx_linear.fit on every
    channel it fits."""
    scale = np.broadcast_to(np.atleast_1d(np.asarray(scale, np.float32)), (k,))
    mult, r = onnx_requant_exact.constants(scale)
    rr = np.where(mult == 0, 33, r) - 32
    if bool((rr < 1).any()):
        raise ValueError("onnx24 words of a scale ≥ 1/4")
    out = np.stack([-mult, 31 - rr, (np.int64(1) << (rr - 1)) - 1, rr], axis=1)
    if bound is not None and clamp is not None:
        bounds = np.broadcast_to(np.atleast_1d(np.asarray(bound, np.int64)), (k,))
        for j in range(k):
            lin = onnx_linear.fit(float(scale[j]), int(bounds[j]), int(clamp[0]), int(clamp[1]))
            if lin is not None:
                out[j] = lin
    return tuple(np.asarray(out[:, i], np.int64).astype(np.int32) for i in range(4))


def words(layer: Layer, lg: LayerGraph, arm: bool = False, onnx24: bool = False,
          fpu: bool = False) -> tuple[np.ndarray, ...]:
    """The per-channel words of the layer's requantization and variant."""
    assert layer.requant is not None
    v = variant(layer, lg, arm, onnx24, fpu)
    return words_of(layer.requant, layer.nest.K, v, acc_bound(layer, lg) if v == "onnx24" else None)


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The portable layout's reasons, and the 32-bit requantization's own (checks.py)."""
    reason = portable.check(layer, lg)
    rq = layer.requant
    if reason is None and rq is not None and rq.mode == "tflite":
        reason = tflite_multipliers(zip(_per_channel(layer, rq.multiplier),
                                        _per_channel(layer, rq.shift)))
    return reason


def check_onnx24(layer: Layer, lg: LayerGraph) -> str | None:
    """`check`, and the onnx24 variant's own bound (onnx24_reason)."""
    return check(layer, lg) or onnx24_reason(layer, lg)


def layer_constants(layer: Layer, lg: LayerGraph, s, arm: bool = False,
                    onnx24: bool = False, fpu: bool = False) -> LayerConstants:
    """The constant blob of a conv / depthwise / dense layer for schedule `s` (`check` passed)."""
    weights = portable.weight_blocks(layer, s, channel_major=True)
    return portable.blob(layer, lg, s, (np.stack(words(layer, lg, arm, onnx24, fpu), axis=1),),
                         weights)


def layout(weights: str, arm: bool = False, onnx24: bool = False, fpu: bool = False) -> ConstLayout:
    """The pulp constants layout with weight layout `weights` ("k.fy.fx.c", "k.c" or
    "k.fy.fx"); `arm`: the words of the kernels built for Arm (variant); `onnx24`: the onnx24
    bindings' words, legal only where onnx24_fits (check_onnx24); `fpu`: onnx mode on the Arm
    core's FPU (onnx_fpu)."""
    return ConstLayout(bytes_per_channel=BYTES_PER_CHANNEL, weight_layout=weights,
                       build=partial(layer_constants, arm=arm, onnx24=onnx24, fpu=fpu),
                       check=check_onnx24 if onnx24 else check)
