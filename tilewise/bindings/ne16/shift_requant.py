"""Requantize a lowered network the way a NEMO-style quantizer would for NE16: TFLite's
requantization of every conv2d / depthwise / fully_connected layer turned into shift mode. A
network transformation of the NE16 family, kept in its folder beside the norm-quant check it
targets (as MATCH keeps an execution module's transformations with its patterns).

TFLite's int8 requantization (Requant mode "tflite": SRDHM by a Q31 M0, then a rounding right
shift, per channel) needs a 62-bit product, which NE16's norm-quant (t = wrap32(acc·scale) +
bias, one floor shift per layer, clamp; bindings/ne16/normquant.py) cannot compute, so on the
TFLite files the cluster requantizes NE16's int32 outputs. MATCH's GAP9 networks are quantized
for the hardware instead (seed 003 §V-VI: NEMO-quantized; its NE16 pattern conv → multiply, add
→ right shift → clip → cast), with the requantization of DORY / PULP-NN (seeds 001, 004):
y = clamp(((k·φ + λ) >> d) + zp). This pass writes the same architecture with that
requantization:

- per layer one shift d (NE16 has one per layer), per output channel an integer
  k = round(M·2^d), M = M0·2^shift / 2^31 the TFLite real multiplier, on the accumulator
  φ = Σ w·x (the layer's bias becomes 0; padded taps still take the input zero point zp_x);
- λ = round(M·b·2^d) + 2^(d−1) carries the bias b (which holds the input zero-point correction
  −zp_x·Σw, lower.py) scaled by the real M, and the rounding term (floor(x + 1/2), ties upward,
  where TFLite rounds ties away from zero). Scaling b by M rather than by k matters: TFLite files
  hold "dead" channels with a bias near ±2^30 and an M near 2^−30 whose output is the constant
  round(M·b) + zp, which k·b with k rounded to 0 would lose;
- the output zero point and the clamp stay as they are (on NE16 the words fold zp into its bias,
  bias = k·b' + λ + zp·2^d, normquant.py);
- d is the largest value in [0, 31] for which NE16's norm-quant computes the result exactly
  (normquant.reason is None: one shift, an int8 or ReLU clamp as stored, every product and sum
  within int32 for the layer's accumulator bound) — the most precise k that fits. A layer no d
  fits keeps its TFLite requantization, with the reason in its `LayerConversion`.

Other layers (add, pools, softmax, ...) are left as they are.

NOT the numerics of the TFLite file: k/2^d approximates M, so outputs can differ from TFLite's
by a code or so: (k·φ + λ)/2^d = M·(φ + b) + 1/2 + ε with |ε| ≤ 2^−(d+1)·(|φ| + 1), so
floor of it is within ⌈|ε|⌉ of floor(M·(φ + b) + 1/2), and TFLite's result within one code of
that (its ties and double rounding): |Δ| ≤ 1 + ⌈max |ε|⌉ (`error_bound`). On the four MLPerf
Tiny models `code_error` finds 1 on every layer but one of ResNet-8's (2: its d = 18 leaves
max |ε| > 1/2 over the reachable |φ|). `code_error` gives the exact maximum |Δ| per layer
over the reachable accumulator range, i.e. every input of the input's integer range, padding
included. There is no reference runtime for the converted
network: the golden model (golden/requant.py, shift mode) is its definition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...golden.requant import apply_requant
from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.requant import Requant
from . import normquant

WEIGHTED = (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED)
#: the integer range of an activation dtype (the golden model's values)
RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


@dataclass(frozen=True)
class LayerConversion:
    """What the pass did to one weighted layer: its shift d (None: left in TFLite mode, `reason`
    says why) and the largest |Δ| in output codes vs TFLite's requantization (`code_error`)."""

    layer: str
    shift: int | None
    max_code_error: int | None
    reason: str | None = None


def real_multiplier(rq: Requant) -> np.ndarray:
    """TFLite's per-channel real multiplier M = M0·2^shift / 2^31 (float64, exact: M0 < 2^31)."""
    m0 = np.asarray(rq.multiplier, np.float64)
    return np.ldexp(m0, np.asarray(rq.shift, np.int64) - 31)


def shift_requant(rq: Requant, bias: np.ndarray, d: int) -> Requant:
    """The shift-mode requantization with shift d of the accumulator Σw·x whose TFLite
    requantization is `rq` applied to Σw·x + `bias` (module doc): k = round(M·2^d), λ =
    round(M·bias·2^d) + 2^(d−1)."""
    m = real_multiplier(rq)
    k = np.rint(np.ldexp(m, d)).astype(np.int64)
    lam = np.rint(np.ldexp(m * np.asarray(bias, np.float64), d)).astype(np.int64) + ((1 << d) >> 1)
    return Requant(mode="shift", multiplier=k, shift=np.full(k.shape, d, np.int64),
                   zero_point=rq.zero_point, qmin=rq.qmin, qmax=rq.qmax, bias=lam)


def dot_range(layer: Layer, lg: LayerGraph) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel the least and greatest Σ w·x over every input x of the input's integer
    range (padded taps take the zero point, inside that range)."""
    lo_x, hi_x = RANGES[lg.tensors[layer.inputs[0]].dtype]
    k = layer.nest.K
    w = np.asarray(layer.weights, np.int64).reshape(k, -1)
    pos, neg = np.where(w > 0, w, 0).sum(axis=1), np.where(w < 0, w, 0).sum(axis=1)
    return lo_x * pos + hi_x * neg, hi_x * pos + lo_x * neg


def _steps(f: Callable[[np.ndarray], np.ndarray], codes: np.ndarray, lo: np.ndarray,
           hi: np.ndarray) -> np.ndarray:
    """Per code c of `codes` and channel, the least a in [lo, hi] with f(a) ≥ c (hi when none):
    the steps of a nondecreasing function, by bisection."""
    c = codes[:, None]
    a = np.broadcast_to(lo, (c.size, lo.size)).copy()
    b = np.broadcast_to(hi, (c.size, lo.size)).copy()
    while (a < b).any():
        mid = (a + b) >> 1
        up = f(mid) >= c
        b, a = np.where(up, mid, b), np.where(up, a, mid + 1)
    return a


def code_error(old: Requant, old_bias: np.ndarray, new: Requant, new_bias: np.ndarray,
               lo: np.ndarray, hi: np.ndarray) -> int:
    """max |new(a + new_bias) − old(a + old_bias)| over the dot products a in [lo, hi] per
    channel, exactly: both are nondecreasing step functions of a (M > 0, k ≥ 0; TFLite's left
    shift does not wrap, asserted), so the difference is constant between consecutive steps of
    either, and evaluating at lo and at every step of both covers every value it takes."""
    assert (np.asarray(new.multiplier) >= 0).all(), "k ≥ 0 (scales are positive)"
    left = np.maximum(np.asarray(old.shift, np.int64), 0)
    reach = np.maximum(np.abs(lo + old_bias), np.abs(hi + old_bias))
    assert (reach << left < 2**31).all(), "no wrap before SRDHM"
    f_old = lambda a: apply_requant(a + old_bias, old)  # noqa: E731
    f_new = lambda a: apply_requant(a + new_bias, new)  # noqa: E731
    codes = np.arange(old.qmin + 1, old.qmax + 1, dtype=np.int64)
    pts = np.concatenate([lo[None], _steps(f_old, codes, lo, hi), _steps(f_new, codes, lo, hi)])
    return int(np.abs(f_new(pts) - f_old(pts)).max())


def error_bound(layer: Layer, lg: LayerGraph, d: int) -> int:
    """1 + ⌈2^−(d+1)·(max |φ| + 1)⌉: the bound on |Δ| of the module doc for shift d."""
    lo, hi = dot_range(layer, lg)
    return 1 + int(np.ceil((int(np.maximum(-lo, hi).max()) + 1) / 2 ** (d + 1)))


def convert_layer(layer: Layer, lg: LayerGraph) -> tuple[Layer, LayerConversion]:
    """`layer` in shift mode with the largest d NE16's norm-quant computes exactly (module doc):
    its bias (input zero-point correction included) moved into λ, the accumulator Σw·x."""
    rq = layer.requant
    assert rq is not None and rq.mode == "tflite" and not rq.wide, layer.name
    k = layer.nest.K
    bias = np.zeros(k, np.int64) if layer.bias is None else np.asarray(layer.bias, np.int64)
    zero = np.zeros(k, np.int32)
    for d in range(31, -1, -1):
        new = replace(layer, bias=zero, requant=shift_requant(rq, bias, d))
        if normquant.reason(new, lg) is None:
            lo, hi = dot_range(layer, lg)
            err = code_error(rq, bias, new.requant, zero.astype(np.int64), lo, hi)
            return new, LayerConversion(layer.name, d, err)
    return layer, LayerConversion(layer.name, None, None, normquant.reason(new, lg))


def to_shift_requant(lg: LayerGraph) -> tuple[LayerGraph, tuple[LayerConversion, ...]]:
    """`lg` with the TFLite requantization of its int8 conv2d / depthwise / fully_connected layers
    in NE16's shift form (module doc), and per converted-or-kept layer what was done."""
    layers, report = [], []
    for layer in lg.layers:
        rq = layer.requant
        if (layer.op in WEIGHTED and rq is not None and rq.mode == "tflite" and not rq.wide
                and rq.rounding != "real"):
            layer, conv = convert_layer(layer, lg)
            report.append(conv)
        layers.append(layer)
    meta = {**lg.meta, "requant": "shift (bindings/ne16/shift_requant.py; not the TFLite file's numerics)"}
    return replace(lg, layers=tuple(layers), meta=meta), tuple(report)
