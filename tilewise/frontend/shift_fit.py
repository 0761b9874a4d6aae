"""Exact shift-mode forms of NEMO's division requantizations (the `div` requant mode).

NEMO exports requantize as clamp(R(m·(κ·acc + λ) / D), lo, hi) with R rounding toward zero
(onnxruntime's int64 Div) or down, D often 2^d − 1 or a power of two too large for its products to
fit int32 (onnx_nemo.py `_requant`). The golden model and the portable kernels compute that
exactly with a 64-bit division — a software __divdi3 per output on rv32, hundreds of cycles — and
the SIMD cluster kernels and NE16 take only the shift mode clamp(floor((K·acc + L) / 2^s)).

Over the accumulators a layer can produce ([A0, A1], from its weights and input range) both are
monotone step functions of acc with one step per output level (at most hi − lo of them: 255 for an
8-bit output), so they are equal on [A0, A1] exactly when each level v in (lo, hi] starts at the
same accumulator — the threshold T_v = min{acc : R(·) ≥ v}, clipped to [A0, A1 + 1]. The
division's thresholds are exact integer arithmetic:
    floor:            T_v = ⌈(v·D − b) / a⌉                       (a = m·κ > 0, b = m·λ)
    toward zero, v ≤ 0: T_v = ⌊((v − 1)·D − b) / a⌋ + 1           (x > v − 1 there)
and the shift form's are ⌈(v·2^s − L) / K⌉. For a shift s and K = ⌊a·2^s / D⌋ or ⌈a·2^s / D⌉ (the
magic-number multiplier of a division by an invariant integer: Granlund & Montgomery, "Division by
invariant integers using multiplication", PLDI 1994), every matched threshold bounds L to an
interval; `fit` intersects them and takes the smallest s (smallest constants: the pulp kernels'
32-bit form where K·acc + L fits int32) at which every channel has an L, with K and L in int32 and
one s for the whole layer (NE16 requantizes with one shift per layer). A decreasing channel
(κ < 0) is the same fit on −acc; a constant one (κ = 0) is K = 0, L its value.

Nothing is approximated: where no (K, L, s) exists the layer keeps the div mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
#: the largest shift tried (the pulp kernels' and golden model's shift mode take 0..63)
MAX_SHIFT = 62
#: output windows wider than this (16-bit outputs) are not fitted: their thresholds are many
MAX_LEVELS = 256


@dataclass(frozen=True)
class ShiftForm:
    """clamp(floor((K·acc + L) / 2^s), lo, hi): per channel K and L, one shift s."""

    multiplier: np.ndarray
    bias: np.ndarray
    shift: int


def _ceil_div(p: int, q: int) -> int:
    return -((-p) // q)


def _thresholds(a: int, b: int, D: int, trunc: bool, lo: int, hi: int, A0: int, A1: int) -> list[int]:
    """T_v for v = lo + 1 .. hi of acc -> R((a·acc + b) / D), a > 0, clipped to [A0, A1 + 1]."""
    out = []
    for v in range(lo + 1, hi + 1):
        t = (((v - 1) * D - b) // a + 1) if (trunc and v <= 0) else _ceil_div(v * D - b, a)
        out.append(min(max(t, A0), A1 + 1))
    return out


def _bias_range(K: int, s: int, T: list[int], lo: int, A0: int, A1: int) -> tuple[int, int]:
    """The L for which ⌈(v·2^s − L) / K⌉ clipped to [A0, A1 + 1] is T_v for every level v."""
    L_lo, L_hi = INT32_MIN, INT32_MAX
    for i, t in enumerate(T):
        v2 = (lo + 1 + i) << s
        if t <= A1:                         # level v reached by acc = t: T'_v ≤ t
            L_lo = max(L_lo, v2 - t * K)
        if t > A0:                          # and not before it: T'_v ≥ t
            L_hi = min(L_hi, v2 - (t - 1) * K - 1)
        if L_lo > L_hi:
            break
    return L_lo, L_hi


def _fit_channel(a: int, b: int, D: int, trunc: bool, lo: int, hi: int, A0: int, A1: int,
                 s: int) -> tuple[int, int] | None:
    """(K, L) of one channel at shift s, or None."""
    if a == 0:                              # constant: R(b / D) clamped
        q = b // D if not trunc or b >= 0 else -((-b) // D)
        q = min(max(q, lo), hi)
        L = q << s
        return (0, L) if INT32_MIN <= L <= INT32_MAX else None
    if a < 0:                               # decreasing: fit acc' = −acc on [−A1, −A0]
        r = _fit_channel(-a, b, D, trunc, lo, hi, -A1, -A0, s)
        return None if r is None else (-r[0], r[1])
    T = _thresholds(a, b, D, trunc, lo, hi, A0, A1)
    base = (a << s) // D
    for K in (base, base + 1):
        if not 0 < K <= INT32_MAX:
            continue
        L_lo, L_hi = _bias_range(K, s, T, lo, A0, A1)
        if L_lo <= L_hi:
            L = min(max(0, L_lo), L_hi)     # the smallest |L| in the interval
            return K, L
    return None


def fit(a: np.ndarray, b: np.ndarray, D: int, trunc: bool, lo: int, hi: int, A0: int,
        A1: int) -> ShiftForm | None:
    """The shift form equal to clamp(R((a·acc + b) / D), lo, hi) for every acc in [A0, A1] (per
    channel a = m·κ, b = m·λ; module docstring), or None."""
    if hi - lo > MAX_LEVELS - 1 or D <= 0 or A0 > A1:
        return None
    a_list = [int(x) for x in np.asarray(a).reshape(-1)]
    b_list = [int(x) for x in np.broadcast_to(np.asarray(b), np.asarray(a).shape).reshape(-1)]
    for s in range(MAX_SHIFT + 1):
        ks, ls = [], []
        for ai, bi in zip(a_list, b_list):
            r = _fit_channel(ai, bi, D, trunc, lo, hi, A0, A1, s)
            if r is None:
                break
            ks.append(r[0])
            ls.append(r[1])
        else:
            return ShiftForm(np.asarray(ks, np.int64), np.asarray(ls, np.int64), s)
    return None


__all__ = ["ShiftForm", "fit"]
