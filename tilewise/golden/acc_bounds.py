"""Accumulator bounds of seed 002 (IDSP thesis) §4.3–4.4 and its 1-D bit-width search space.

Dynamic fixed point (seed 002 eq. 4.2–4.6): a group x of values has bit width BW(x) = IL(x) +
FL(x) + 1 (sign bit), integer length IL(x) = ⌊log2 max|x|⌋ + 1 (eq. 4.6). A product of BW(in)-
and BW(w)-bit operands needs BW(in) + BW(w) − 1 bits (eq. 4.10, the −2^IL·−2^IL corner ignored);
a K-tap accumulation adds Δ integer bits. The accumulator of BW(acc) bits is fully used when
(BW(in) + BW(w) − 1) + Δ = BW(acc) (eq. 4.14), so BW(in) + BW(w) = BW(acc) + 1 − Δ: a 1-D search.

The three bounds on Δ (§4.4), from the most pessimistic to the most optimistic:
- `delta_worst_case`: Δ = ⌈log2 K⌉ (eq. 4.12–4.14), any inputs, any weights;
- `delta_weights`: Δ = ⌊log2 Σ|w_i|⌋ + 1 − IL(w), the weights known (worst-case inputs);
- `delta_output`: Δ = max(0, IL(out) − (IL(in) + IL(w))), the final accumulator range measured on
  data: intermediate sums may wrap (two's complement modulo 2^BW(acc), Fig. 4.6) as long as the
  final one fits — safe only for the data the range came from.
The seed's worked example (K = 800, BW(acc) = 16) gives 7, 11 and 14 available bits; the tests
check these hand values.

`int_acc_range` / `int_acc_max_abs` are the integer-domain form of the weights bound that tilewise
uses on an already quantized layer: the accumulator interval over every input, so that
`acc_bits_needed` of it proves that no partial sum ever wraps. `wrap` is the two's complement
wrap-around itself (the golden model's; the C's is tw_common.h `tw_acc_wrap`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..ir.layer import LayerGraph


def integer_length(max_abs: float) -> int:
    """IL(x) = ⌊log2 max|x|⌋ + 1 (seed 002 eq. 4.6); max_abs must be > 0."""
    if not max_abs > 0:
        raise ValueError(f"integer length needs a positive maximum magnitude, got {max_abs}")
    return math.floor(math.log2(max_abs)) + 1


def delta_worst_case(taps: int) -> int:
    """Δ = ⌈log2 K⌉ extra integer bits for K accumulations (seed 002 eq. 4.12, 4.14)."""
    if taps < 1:
        raise ValueError(f"a kernel has at least one tap, got {taps}")
    return math.ceil(math.log2(taps))


def delta_weights(weights: np.ndarray) -> int:
    """Δ = ⌊log2 Σ|w_i|⌋ + 1 − IL(w) (seed 002 §4.4, the bound with known coefficients).

    `weights` are the real (float) coefficients of one kernel (one output channel)."""
    a = np.abs(np.asarray(weights, dtype=np.float64))
    return integer_length(float(a.sum())) - integer_length(float(a.max()))


def delta_weights_from_stats(sum_abs_w: float, max_abs_w: float) -> int:
    """`delta_weights` from Σ|w| and max|w| (the figures the seed quotes)."""
    return integer_length(sum_abs_w) - integer_length(max_abs_w)


def delta_output(max_abs_in: float, max_abs_w: float, max_abs_acc: float) -> int:
    """Δ = max(0, IL(out) − (IL(in) + IL(w))) (seed 002 §4.4, the data-driven output bound)."""
    return max(0, integer_length(max_abs_acc)
               - (integer_length(max_abs_in) + integer_length(max_abs_w)))


def available_bits(acc_bits: int, delta: int) -> int:
    """BW(in) + BW(w) that fully uses a BW(acc)-bit accumulator: BW(acc) + 1 − Δ (eq. 4.14)."""
    return acc_bits + 1 - delta


def solutions_1d(acc_bits: int, delta: int, min_bits: int = 2,
                 max_bits: int = 16) -> tuple[tuple[int, int], ...]:
    """The 1-D search space of §4.4–4.5: every (BW(in), BW(w)) with BW(in) + BW(w) =
    `available_bits`, each between min_bits and max_bits, BW(in) ascending."""
    total = available_bits(acc_bits, delta)
    return tuple((b, total - b) for b in range(min_bits, max_bits + 1)
                 if min_bits <= total - b <= max_bits)


def int_acc_range(w: np.ndarray, bias: np.ndarray | None, x_min: int,
                  x_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel k, the least and greatest accumulator of an integer layer over every
    input: bias_k + Σ_i min/max(w_k,i·x_min, w_k,i·x_max) (the integer form of the weights bound).

    `w` has the output channel first ([K, ...]) and no zero point (the folded form the kernels
    compute, bias' = bias − zp_x·Σw, ir/layer.py); x ranges over [x_min, x_max] as stored. With
    x_min ≤ 0 ≤ x_max every tap's contribution interval holds 0, so every partial sum (the bias
    plus any subset of the taps, in any order) lies in the same interval: within it no partial
    sum ever wraps."""
    wk = np.asarray(w, dtype=np.int64).reshape(np.shape(w)[0], -1)
    a, b = wk * int(x_min), wk * int(x_max)
    base = np.zeros(wk.shape[0], dtype=np.int64) if bias is None else np.asarray(bias, dtype=np.int64)
    return base + np.minimum(a, b).sum(axis=1), base + np.maximum(a, b).sum(axis=1)


def int_acc_max_abs(w: np.ndarray, bias: np.ndarray | None, x_min: int, x_max: int) -> int:
    """The largest |accumulator| (and |partial sum|) of `int_acc_range` over all channels."""
    lo, hi = int_acc_range(w, bias, x_min, x_max)
    return int(max(np.abs(lo).max(), np.abs(hi).max()))


def acc_bits_needed(max_abs_acc: int) -> int:
    """Bits of a two's complement register holding every value in [−max_abs_acc, max_abs_acc]."""
    m = int(max_abs_acc)
    if m < 0:
        raise ValueError(f"a magnitude is not negative, got {m}")
    return m.bit_length() + 1


def wrap(values: np.ndarray | int, bits: int) -> np.ndarray:
    """Two's complement wrap-around to `bits` bits (the value modulo 2^bits in
    [−2^(bits−1), 2^(bits−1))); bits >= 64 returns int64 values unchanged."""
    v = np.asarray(values, dtype=np.int64)
    if bits >= 64:
        return v
    if bits < 2:
        raise ValueError(f"an accumulator has at least 2 bits, got {bits}")
    half = np.int64(1) << np.int64(bits - 1)
    return ((v + half) & ((half << np.int64(1)) - 1)) - half


def value_range(lg: LayerGraph, tensor: str) -> tuple[int, int]:
    """The stored values `tensor` (int8) can hold: its dtype's range, narrowed by the output clamp
    of the layer that writes it (a clamp layer's [qmin, qmax], e.g. quantize/narrow_search.py's
    b-bit windows; a requantizing layer's `Requant.qmin/qmax`; the qmin/qmax of an elementwise or
    pooling op's params), and through ops that only select or move values (max pool, reshape,
    transpose) between equal quantizations by their input's range."""
    from ..ir.ops import Op
    from ..ir.params import ClampParams
    from ..ir.tensor import dtype_range

    t = lg.tensors[tensor]
    lo, hi = dtype_range(t.dtype)
    prod = next((layer for layer in lg.layers if layer.output == tensor), None)
    if prod is None or t.dtype != "int8":
        return lo, hi
    src = lg.tensors[prod.inputs[0]] if prod.inputs else None
    if (prod.op in (Op.MAX_POOL, Op.RESHAPE, Op.TRANSPOSE) and src is not None and src.dtype == t.dtype
            and src.quant == t.quant):
        lo, hi = value_range(lg, prod.inputs[0])
    clamp = prod.params
    if prod.op != Op.CLAMP:   # the requantization's clamp: the layer's, or its params' (mean)
        clamp = prod.requant or getattr(prod.params, "requant", None) or prod.params
    if prod.op == Op.CLAMP and not isinstance(clamp, ClampParams):
        return lo, hi
    if hasattr(clamp, "qmin") and hasattr(clamp, "qmax"):
        return max(lo, int(clamp.qmin)), min(hi, int(clamp.qmax))
    return lo, hi


def may_wrap(lg: LayerGraph) -> tuple[tuple[str, int, int], ...]:
    """The layers of `lg` whose narrow accumulator (`Layer.acc_bits` < 32) some input can make
    wrap: (layer name, acc_bits, bits the `int_acc_range` bound needs over the input's
    `value_range`), in layer order. Empty when every narrow accumulator provably fits (the C and
    the golden model then agree with 32-bit arithmetic too)."""
    out = []
    for layer in lg.layers:
        if layer.acc_bits >= 32 or layer.weights is None:
            continue
        lo, hi = value_range(lg, layer.inputs[0])
        need = acc_bits_needed(int_acc_max_abs(layer.weights, layer.bias, lo, hi))
        if need > layer.acc_bits:
            out.append((layer.name, layer.acc_bits, need))
    return tuple(out)
