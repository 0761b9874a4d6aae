"""onnxruntime's float requantization in integer arithmetic, bit for bit (issue 27).

onnxruntime (MLAS) requantizes an int32 accumulator a with a float32 scale s as

    y = clamp(rint(fl(fl(a) · s)) + zp, qmin, qmax)

fl: rounding to float32, nearest even; rint: to an integer, half to even (golden/requant.py
mode "onnx"). This module computes Y = rint(fl(fl(a) · s)) from integer constants of s with
integer operations only; tilewise/bindings/portable/c/tw_onnx_requant_exact.h is the same
computation in C. Guarantee: for every int32 a and every float32 s ≥ 0 (finite),
clamp(Y_int, lo, hi) = clamp(Y_float, lo, hi) whenever −2^22 ≤ lo ≤ hi ≤ 2^22; so
clamp(Y_int + zp, qmin, qmax) is onnxruntime's output for int8, uint8 and int16.

Constants of s (`constants`): s = 0, subnormal or < 2^-32: m = 0, r = 8 (Y = 0). s > 2^22:
replaced by 2^22. Otherwise s = M·2^E with 2^23 ≤ M < 2^24 (the 24-bit significand); m = M·2^7
(< 2^31, a signed 32-bit multiplier), r = 7 − E ∈ [8, 62].

Per output (`round_product`; C: one 32×32→64 signed multiply, shifts, a bit scan, adds):
  1. a' = fl(a): a itself where |a| ≤ 2^24, else a rounded to a multiple of 2^k, k = bitlen|a| − 24,
     nearest even: a' = (a + 2^(k−1) − 1 + bit_k(a)) & −2^k (in 64 bits: a' may be 2^31);
  2. p = a'·m, so X := a'·s = p / 2^r exactly; |p| < 2^62;
  3. h = msb(p ^ (p >> 63)) >> 24 (msb: the highest set bit's value, 0 for 0): half an ulp of fl(X)
     in units of 2^-r;
  4. e = bit_r(p) − 1 (0 when floor(X) is odd, −1 when even); Y = (p + 2^(r−1) + (h ^ e)) >> r,
     arithmetic shift (h ^ e is h or −h − 1).
On PULP (XpulpV2) step 1 is a rare branch (|a| > 2^24), step 2 is mul + mulh, step 3 p.clb on
the high word; on Arm SMULL, EOR + CLZ. Where r ≥ 33 (s < 1/4) the rounding point and h lie in
the high word hi: bit_r(p), h = msb(hi ^ sign) << 8 and the final shift are one-word operations
(one carry from the low word), and Y fits 32 bits; a zero hi ^ sign means |X| ≤ 1/2, where any
h ∈ [0, 2^8] gives Y = 0, so msb((hi ^ sign) | 1) needs no zero test (p.clb / p.fl1 of a zero
word do not give 0: OR the 1 in).

Proof. Signs: fl and rint are odd functions, fl(a) is exact integer arithmetic in step 1 (the
formula is round-half-even of a / 2^k under floor semantics, for either sign; |a| ≤ 2^31 is a
normal float), and X = fl(a)·s exactly, so Y_float = rint(fl(X)). Let n = floor(X), F = p mod 2^r
(X = n + F/2^r), H = 2^(r−1), and assume |X| < 2^22 first.
  (a) X integer (F = 0): fl(X) = X, Y_float = n; and Y_int = n since 0 ≤ H + (h ^ e) < 2^r (h ≤
      2^(r−3), see (c)).
  (b) Otherwise X ∈ (n, n+1). If n ∉ {0, −1} the interval lies in one binade of |X| (powers of
      two ≥ 1 are integers), whose floats are spaced 2h apart (2h = ulp ≤ 2^(21−23)); the
      midpoint n + 1/2 is one of them with an even significand ((n + 1/2)/2h is twice an odd
      number over a power of two ≥ 2), and so are n and n + 1. fl is monotone, so fl(X) ≥ n + 1/2
      iff X ≥ n + 1/2 − h (at equality a float tie that goes to n + 1/2, the even neighbour), and
      fl(X) > n + 1/2 iff X > n + 1/2 + h. Then rint(fl(X)) = n + 1 iff fl(X) > n + 1/2, or
      fl(X) = n + 1/2 and n odd:
          n odd:  Y = n + [F ≥ H − h],
          n even: Y = n + [F > H + h] = n + [F ≥ H + h + 1]      (h in units of 2^-r).
      This is the double rounding: inside the band |X − (n + 1/2)| ≤ h the product rounds to the
      midpoint first, and the tie goes to the even integer — where rounding X directly would go
      to the nearer one. n = 0: X ∈ [1/2, 1) is one binade (spacing 2^-24) and the rule holds;
      X ∈ (0, 1/2) has fl(X) ≤ 1/2, Y = 0, and the rule gives 0 (F < H). n = −1 likewise by
      symmetry: X ∈ (−1, −1/2] one binade, X ∈ (−1/2, 0) gives 0 and the rule gives n + 1 = 0.
  (c) h is exact: h = 2^(bitlen|p| − 25) is half the float spacing in the binade of |X|. When
      |p| < 2^24, X = p/2^r has at most 24 significant bits and |X| ≥ 2^-62 (or 0): a normal
      float, fl(X) = X, no double rounding, and h = 0 (msb(p) >> 24 = 0) gives plain half-even
      rounding as required. p ^ (p >> 63) = |p| − 1 for p < 0 changes msb only where |p| is a
      power of two: X = −2^j/2^r is then an integer (case (a), h unused) or −1/2 ≤ X < 0
      (n = −1 odd, F ≥ H: Y = 0 for every h ≥ 0). Bounds: |X| < 2^22 gives h ≤ 2^(r−3).
  (d) With c = H + (h ^ e) = H + h (n odd) or H − h − 1 (n even), (b) reads Y = n + [F + c ≥ 2^r];
      0 ≤ F + c < 2^(r+1) by (c), so Y = floor((p + c)/2^r) = (p + c) >> r.
  Large |X| ≥ 2^22: fl is monotone and 2^22 is a float, so |rint(fl(X))| ≥ 2^22 with X's sign.
  And c ∈ [H − h − 1, H + h] with h/2^r ≤ |X|·2^-24, so (p + c)/2^r ≥ X(1 − 2^-24) + 1/2 − 2^-r
  > 2^22 for X ≥ 2^22, and ≤ X(1 − 2^-24) + 1/2 < −2^22 + 1 for X ≤ −2^22: Y_int ≥ 2^22 or
  ≤ −2^22 likewise. Both clamp to the same bound of any range inside ±2^22.
  The clamped scale: for s ≥ 2^22 and a ≠ 0, |X| ≥ 2^22 with either scale, so the same clamp; a = 0
  gives 0. s < 2^-32: |X| ≤ 2^31·s < 1/2, fl(X) ∈ [−1/2, 1/2], Y = 0 (m = 0 gives p = 0,
  Y = (2^7 − 1) >> 8 = 0). No overflow: |a'| ≤ 2^31, m < 2^31, so |p| < 2^62; |c| < 2^61 + 2^38.
"""

from __future__ import annotations

import numpy as np

#: |Y| up to which Y_int is exactly rint(fl(fl(a)·s)); beyond it both have that magnitude or more
EXACT_BOUND = 1 << 22
#: scales below this requantize every int32 accumulator to 0
ZERO_SCALE_EXP = -32
#: larger scales are replaced by this one (the same clamped results)
MAX_SCALE = float(1 << 22)


def constants(scale) -> tuple[np.ndarray, np.ndarray]:
    """The multipliers m = M·2^7 and shifts r (int64 arrays, `scale`'s shape) of float32 scales.

    Zero (also −0.0), subnormal and < 2^-32 scales give m = 0, r = 8; scales > 2^22 those of 2^22.
    A negative, infinite or NaN scale is refused (onnxruntime's quantization scales are positive)."""
    s = np.asarray(scale, dtype=np.float32)
    bits = s.view(np.uint32).astype(np.int64)
    neg = (bits >> 31) & 1
    e8 = (bits >> 23) & 0xFF
    frac = bits & 0x7FFFFF
    if np.any((e8 == 0xFF) | ((neg == 1) & ((bits & 0x7FFFFFFF) != 0))):
        raise ValueError("an onnx requantization scale must be a finite float32 ≥ 0")
    huge = (e8 > 149) | ((e8 == 149) & (frac != 0))          # > 2^22 = 1.0·2^(149−127)
    e8 = np.where(huge, 149, e8)
    frac = np.where(huge, 0, frac)
    zero = e8 < 127 + ZERO_SCALE_EXP                          # 0, subnormals, < 2^-32
    mult = np.where(zero, 0, (frac | (1 << 23)) << 7)
    shift = np.where(zero, 8, 157 - e8)                       # r = 7 − E, E = e8 − 150
    return mult.astype(np.int64), shift.astype(np.int64)


def msb64(x: np.ndarray) -> np.ndarray:
    """The value of the highest set bit of non-negative int64 values (0 for 0)."""
    x = np.asarray(x, dtype=np.int64)
    for k in (1, 2, 4, 8, 16, 32):
        x = x | (x >> k)
    return x ^ (x >> 1)


def float32_of_int(acc) -> np.ndarray:
    """fl(a) for int32 values, as int64 integers (step 1): nearest even to 24 significant bits."""
    a = np.asarray(acc, dtype=np.int64)
    half = msb64(np.abs(a)) >> 24                             # 2^(k−1), or 0 when |a| < 2^24
    ulp = half << 1
    rounded = (a + half - 1 + ((a & ulp) != 0)) & -ulp
    return np.where(half > 0, rounded, a)


def round_product(acc, mult, shift) -> np.ndarray:
    """Y = rint(fl(fl(acc)·s)) (int64) for int32 accumulators and the `constants` of s
    (broadcast together); exact where |Y| < 2^22, see the module docstring."""
    a = float32_of_int(acc)
    m = np.asarray(mult, dtype=np.int64)
    r = np.asarray(shift, dtype=np.int64)
    p = a * m
    h = msb64(p ^ (p >> 63)) >> 24
    e = ((p >> r) & 1) - 1
    return (p + (np.int64(1) << (r - 1)) + (h ^ e)) >> r


def requantize(acc, scale, zero_point, qmin: int, qmax: int) -> np.ndarray:
    """onnxruntime's clamp(rint(fl(fl(acc)·scale)) + zero_point, qmin, qmax) in integers (int64);
    `scale` and `zero_point` broadcast against `acc` (per channel: along the last axis)."""
    zp = np.asarray(zero_point, dtype=np.int64)
    lo, hi = qmin - zp, qmax - zp
    if np.any(lo < -EXACT_BOUND) or np.any(hi > EXACT_BOUND):
        raise ValueError(f"qmin − zero_point and qmax − zero_point must lie within ±2^22 (got {qmin}, {qmax})")
    mult, shift = constants(scale)
    return np.clip(round_product(acc, mult, shift) + zp, qmin, qmax)
