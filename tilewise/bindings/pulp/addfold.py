"""The folded form of a TFLite int8 ADD / SUB on the pulp family: the output requantization and
zero point moved into the per-layer tables, proven exact for the layer by enumeration.

TFLite's add (golden/elementwise.py) is out = clamp(MBQM(ta[a] + tb[b], M, shift) + zp) with
ta, tb each input's scaled value (q − zp_q) << 20 through its own MBQM — one function of the sum
s = ta[a] + tb[b], a step function that, but for its double rounding, is floor((s·M + c) / 2^T)
with T = 31 − shift. The folded form scales both tables by M into int32 at 2^−k and adds the
rounding term and the zero point (c + zp·2^T, 64-bit) to a's:

    TA[a] = floor((ta[a]·M + ra) / 2^k)      TB[b] = floor((tb[b]·M + rb) / 2^k)
    out   = clamp((TA[a] + TB[b]) >> S, qmin, qmax)          S = T − k

so that per element the kernel (tw_pulp_add_fold_s8) does two table reads, one p.addN (add and
shift) and the clamp: no multiply. The sum of the two floors is within 1 of (s·M + ra + rb) / 2^k,
and TFLite's double rounding differs from one rounding only near the output's half-way points,
so the folded form is not exact for every layer: `fold` tries a few (k, c) — k as small as int32
sums allow (the finest 2^−k), c the rounding term of positive sums (exact there: RDBPOT(SRDHM)
= floor((s·M + 2^30 + 2^(T−1)) / 2^T) for s·M ≥ 0), of negative ones and their midpoint — and
keeps the first that equals the golden add on all 256 × 256 pairs of input codes (clamp
included; no int32 overflow in the kernel's sums). A layer none fits keeps tw_pulp_add_s8 (the
exact MBQM of every sum, simple.py).

The tables are computed at run time by the cores from the layer's parameters, in the arithmetic
here (tw_pulp_add_fold_tables: the exact MBQM of tw_pulp_add_tables, then mul64 + shift), so the
enumeration proves the C too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...golden.fixedpoint import multiply_by_quantized_multiplier, wrap32
from ...golden.onnx_ops import f32, fma32

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
#: extra table shifts tried beyond the smallest that keeps the kernel's sums in int32
K_TRIES = 3


@dataclass(frozen=True)
class Fold:
    """tw_add_fold_t: each table's 64-bit rounding term, the tables' shift k and the output's S."""

    a_round: int
    b_round: int
    k: int
    shift: int

    def words(self) -> tuple[int, ...]:
        """The struct's words in order: a's term (low, high), b's, k, shift (two's complement)."""
        def lo_hi(v: int) -> tuple[int, int]:
            lo = v & 0xFFFFFFFF
            return (lo - 2**32 if lo >= 2**31 else lo), v >> 32
        return (*lo_hi(self.a_round), *lo_hi(self.b_round), self.k, self.shift)


def scaled(p: dict, sub: bool) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs' scaled values over the 256 codes −128..127 (int64; b's negated for SUB), as
    tw_pulp_add_tables computes them."""
    q = np.arange(-128, 128, dtype=np.int64)

    def table(zp: int, m: int, s: int) -> np.ndarray:
        return multiply_by_quantized_multiplier(wrap32((q - zp) << p["left_shift"]), m, s)

    tb = table(p["b_zp"], p["b_mult"], p["b_shift"])
    return table(p["a_zp"], p["a_mult"], p["a_shift"]), (-tb if sub else tb)


def golden_grid(p: dict, sub: bool) -> np.ndarray:
    """The golden add (sub) of every pair of codes: [a code + 128, b code + 128]."""
    ta, tb = scaled(p, sub)
    s = wrap32(ta[:, None] + tb[None, :])
    out = multiply_by_quantized_multiplier(s, p["out_mult"], p["out_shift"]) + p["out_zp"]
    return np.clip(out, p["qmin"], p["qmax"])


def tables(p: dict, sub: bool, f: Fold) -> tuple[np.ndarray, np.ndarray]:
    """TA, TB of fold `f` over the codes −128..127 (int64)."""
    ta, tb = scaled(p, sub)
    m = np.int64(p["out_mult"])
    return (ta * m + f.a_round) >> f.k, (tb * m + f.b_round) >> f.k


def folded_grid(p: dict, sub: bool, f: Fold) -> np.ndarray | None:
    """The kernel's output for every pair of codes, or None if a table entry or a sum leaves
    int32."""
    ta, tb = tables(p, sub, f)
    if min(ta.min(), tb.min()) < INT32_MIN or max(ta.max(), tb.max()) > INT32_MAX:
        return None
    s = ta[:, None] + tb[None, :]
    if s.min() < INT32_MIN or s.max() > INT32_MAX:
        return None
    return np.clip(np.clip(s >> f.shift, -128, 127), p["qmin"], p["qmax"])


def candidates(p: dict, sub: bool):
    """The folds `fold` tries, in order (module docstring)."""
    ta, tb = scaled(p, sub)
    m = abs(int(p["out_mult"]))
    total = 31 - int(p["out_shift"])
    bound = (int(np.abs(ta).max()) + int(np.abs(tb).max()) + 1) * max(m, 1)
    zp_term = int(p["out_zp"]) << total
    bound += abs(zp_term) + (1 << max(total - 1, 0)) + (1 << 31)
    k0 = max(total - 31, 0)
    while k0 < total and (bound >> k0) > INT32_MAX // 2:
        k0 += 1
    half = 1 << (total - 1) if total >= 1 else 0
    for k in range(k0, min(k0 + K_TRIES, total) + 1):
        r = 1 << (k - 1) if k >= 1 else 0
        for c in (half + 2**30, half, half - 2**30):
            yield Fold(a_round=c + zp_term + r, b_round=r, k=k, shift=total - k)


def fold(p: dict, sub: bool) -> Fold | None:
    """The first candidate fold equal to the golden add (sub) on every pair of codes, or None."""
    if int(p["out_mult"]) <= 0:
        return None
    want = golden_grid(p, sub)
    for f in candidates(p, sub):
        if not 0 <= f.shift <= 31:
            continue
        got = folded_grid(p, sub, f)
        if got is not None and np.array_equal(got, want):
            return f
    return None


# ------------------------------------------------------------------------- onnx QLinearAdd, folded

@dataclass(frozen=True)
class OnnxFold:
    """The folded form of an onnx add (`fold_onnx`): both tables (int32, in the kernel's index
    order: entry i for the input code (int8)i) and the output's shift S."""

    tables: tuple[int, ...]     # TA[256] then TB[256]
    shift: int


def onnx_golden_grid(ratio_a: float, ratio_b: float, fixed: float, off: int, qmin: int,
                     qmax: int) -> np.ndarray:
    """onnxruntime's QLinearAdd (golden/onnx_ops.py add: rint(fma(a, ratio_a, fma(b, ratio_b,
    fixed))) in float32, clamped to [qmin, qmax]) of every pair of stored codes, as stored:
    [a code + 128, b code + 128], the output less `off` (uint8 operands: 128)."""
    q = np.arange(-128, 128, dtype=np.int64) + off
    r = fma32(q[:, None], ratio_a, fma32(q[None, :], ratio_b, f32(fixed)))
    return np.clip(np.rint(r).astype(np.int64), qmin, qmax) - off


def onnx_candidates(ma: int, tb: np.ndarray, shift: int, off: int):
    """(k, c) pairs `fold_onnx` tries: k from the smallest that keeps the tables and their sums
    in int32 (and S = shift − k ≤ 31), c the rounding of the sum: half up, then half down."""
    a = np.arange(-128, 128, dtype=np.int64) * ma
    bound = int(np.abs(a).max()) + int(np.abs(tb).max()) + (abs(off) + 1) * (1 << shift) + 4
    k0 = max(shift - 31, 0)
    while (bound >> k0) > INT32_MAX // 2:
        k0 += 1
    for k in range(k0, min(k0 + K_TRIES, shift) + 1):
        for c in (1 << (shift - 1), (1 << (shift - 1)) - 1):
            yield k, c


def fold_onnx(ma: int, tb, shift: int, off: int, want: np.ndarray, qmin: int, qmax: int
              ) -> OnnxFold | None:
    """The first candidate fold of the exact integers of an onnx add (x = a·ma + tb[b] over
    2^shift: bindings/portable/elementwise.py add_onnx_exact; `off` the storage offset) whose
    kernel output (tw_pulp_add_fold_s8: clamp((TA[a] + TB[b]) >> S) to [−128, 127], then to the
    stored [qmin, qmax]) equals `want` (onnx_golden_grid) on every pair of codes, or None.
        TA[a] = (a·ma + c − off·2^shift + r) >> k,  TB[b] = (tb[b] + r) >> k,  r = 2^(k−1)"""
    a = np.arange(-128, 128, dtype=np.int64) * ma
    b = np.asarray(tb, dtype=np.int64)
    for k, c in onnx_candidates(ma, b, shift, off):
        r = (1 << (k - 1)) if k >= 1 else 0
        ta = (a + (c - (off << shift) + r)) >> k
        tbk = (b + r) >> k
        s = ta[:, None] + tbk[None, :]
        if max(abs(int(ta.min())), abs(int(ta.max())), abs(int(tbk.min())), abs(int(tbk.max())),
               abs(int(s.min())), abs(int(s.max()))) > INT32_MAX - 1:
            continue
        got = np.clip(np.clip(s >> (shift - k), -128, 127), qmin, qmax)
        if np.array_equal(got, want):
            order = np.r_[128:256, 0:128]            # entry i: code (int8)i
            return OnnxFold(tuple(int(v) for v in (*ta[order], *tbk[order])), shift - k)
    return None
