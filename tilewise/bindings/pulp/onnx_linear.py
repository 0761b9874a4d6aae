"""The linear form of onnx requantization: one mulh per output where it is exact (issue 27).

onnxruntime requantizes an accumulator a by Y(a) = rint(fl(a · s)) (golden/onnx_requant_exact.py;
fl(a) = a for |a| ≤ 2^24, which the onnx24 kernels' layers satisfy), then clamps Y + zp to
[qmin, qmax]. The exact integer form (tw_pulp_rq_onnx24) needs a bit scan and a carry per output
for fl's rounding. For most channels a plain fixed-point line gives the same outputs:

    g(a) = (mulh(a << sh, m) + b) >> c = floor((a·m·2^sh + b·2^32) / 2^(32 + c))

(mulh: the high word of the signed 64-bit product; >>: arithmetic; the nested floors merge since
2^32 and 2^c are integers) — four instructions where the exact form takes eleven. `fit` finds, per
channel, integers (m, sh, b, c) such that clamp(g(a), lo, hi) = clamp(Y(a), lo, hi) for every a
with |a| ≤ B (lo = qmin − zp, hi = qmax − zp, B the layer's accumulator bound, constants.acc_bound),
or says there are none near the scale, and the channel keeps the exact form.

Why checking thresholds suffices. Y is non-decreasing in a (a·s with s ≥ 0, fl and rint are
monotone) and so is g (m ≥ 0). For a non-decreasing v, clamp(v(a), lo, hi) = lo + #{k ∈ (lo, hi] :
v(a) ≥ k}; so the clamped functions agree on [−B, B] iff, for every level k ∈ (lo, hi], the sets
{a : v(a) ≥ k} agree — up-sets of [−B, B], each fixed by its least element. `thresholds` computes
T_k = min{a ∈ [−B, B] : Y(a) ≥ k} (B + 1 when there is none) by bisection on the exact integer Y.
Then g matches level k iff
  −B < T_k ≤ B:  g(T_k) ≥ k and g(T_k − 1) < k,
  T_k = −B:      g(−B) ≥ k,
  T_k = B + 1:   g(B) < k,
and g(x) ≥ k ⟺ H(x) + b ≥ k·2^c with H(x) = floor((x·2^sh)·m / 2^32), so each level bounds b to an
interval: b ≥ k·2^c − H(T_k), b ≤ k·2^c − H(T_k − 1) − 1 (and the one-sided forms). A channel fits
when the intersection over all levels is not empty; b is its least element.

Choice of the other constants: sh = 30 − bitlen(B) (so |a·2^sh| < 2^30 and H needs no 64-bit
accumulator beyond the product), c the largest shift ≤ 31 keeping m = round(s·2^(32 + c − sh))
below 2^31 (the finest offset b), then m searched outward from that value (±SEARCH) — the slope
is free as long as every threshold stays in its window. b is kept within ±2^30 so that H + b,
|H| < 2^29, cannot overflow int32.

How often it fits: the exact thresholds are those of rint(a·s) moved by one where fl(a·s) lands
within half an ulp of a half-integer; a line cannot follow the half-to-even ties at both a level
k and its mirror 1 − k when both are tight. Over random channels (scales 2^-14 … 2^-5, bounds
2^14 … 2^20) about 85–90% fit; the others stay exact through tw_pulp_rq_onnx24's bit scan, chosen
per channel in the kernel (constants.onnx24_words: m < 0 marks an exact-form channel).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...golden import onnx_requant_exact

#: how far from the nearest multiplier the slope is searched
SEARCH = 64


def thresholds(scale: np.float32, bound: int, lo: int, hi: int) -> np.ndarray:
    """T_k for k = lo + 1 … hi (int64): the least a ∈ [−bound, bound] with rint(fl(a·scale)) ≥ k,
    bound + 1 when none (module docstring); |a| ≤ 2^24 assumed (fl(a) = a)."""
    mult, r = onnx_requant_exact.constants(np.float32(scale))
    ks = np.arange(lo + 1, hi + 1, dtype=np.int64)
    a = np.full(ks.shape, -bound, np.int64)
    b = np.full(ks.shape, bound + 1, np.int64)
    while bool((a < b).any()):
        mid = (a + b) // 2
        ge = onnx_requant_exact.round_product(np.minimum(mid, bound), mult, r) >= ks
        ge &= mid <= bound
        open_ = a < b
        b = np.where(open_ & ge, mid, b)
        a = np.where(open_ & ~ge, mid + 1, a)
    return a


def _high(x: np.ndarray, sh: int, m: int) -> np.ndarray:
    """H(x) = floor((x·2^sh)·m / 2^32): the mulh of the kernel."""
    return ((x << sh) * m) >> 32


def nearest_line(scale: float, bound: int) -> tuple[int, int, int] | None:
    """(sh, c, m0): the pre-shift, the final shift and the multiplier nearest the scale (module
    docstring, "Choice of the other constants"); None when no shift keeps m0 below 2^31."""
    sh = max(0, 30 - int(bound).bit_length())
    c = 31
    while c >= 0 and round(float(scale) * 2.0 ** (32 + c - sh)) >= 2**31:
        c -= 1
    if c < 0:
        return None
    return sh, c, round(float(scale) * 2.0 ** (32 + c - sh))


@lru_cache(maxsize=4096)
def fit(scale: float, bound: int, lo: int, hi: int) -> tuple[int, int, int, int] | None:
    """The words (m, sh, b, c) of g for one channel (module docstring), or None when no
    multiplier within SEARCH of the nearest one fits. scale < 1/4, 0 ≤ bound ≤ 2^24,
    lo ≤ 0 ≤ hi."""
    s = np.float32(scale)
    if s == 0 or bound == 0:
        return (0, 0, 0, 0)                    # every output 0 (Y(0) = 0)
    line = nearest_line(float(s), bound)
    if line is None:
        return None
    sh, c, m0 = line
    ks = np.arange(lo + 1, hi + 1, dtype=np.int64)
    t = thresholds(s, bound, lo, hi)
    inner = (t > -bound) & (t <= bound)
    never, always = t > bound, t <= -bound
    kc = ks << c
    for d in sorted(range(-SEARCH, SEARCH + 1), key=abs):
        m = m0 + d
        if not 0 < m < 2**31:
            continue
        low = np.concatenate([(kc - _high(t, sh, m))[inner],
                              (kc - _high(np.int64(-bound), sh, m))[always]])
        up = np.concatenate([(kc - _high(t - 1, sh, m) - 1)[inner],
                             (kc - _high(np.int64(bound), sh, m) - 1)[never]])
        b = int(low.max()) if low.size else -(1 << 30)
        b = max(b, -(1 << 30))
        top = min(int(up.min()) if up.size else 1 << 30, 1 << 30)
        if b <= top:
            return (m, sh, b, c)
    return None


def evaluate(acc, words: tuple[int, int, int, int]) -> np.ndarray:
    """g(acc) for a channel's words (int64), as the kernel computes it."""
    m, sh, b, c = words
    return (_high(np.asarray(acc, np.int64), sh, m) + b) >> c
