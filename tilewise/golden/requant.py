"""Apply an IR `Requant` to an int accumulator: the four modes of DESIGN.md "Integer semantics".

- tflite: MultiplyByQuantizedMultiplier per channel (golden/fixedpoint.py; double rounding, or single
  rounding when Requant.rounding == "single", or the int64 form when Requant.wide), + zero point, clamp.
  Requant.rounding == "real" (LiteRT's reference 16x8 FULLY_CONNECTED, which requantizes from the
  tensors' float scales — tflite/kernels/internal/reference/integer_ops/fully_connected.h, the
  overloads taking input_scale / output_scale / filter_scales): `real_requant`.
- onnx: float32 acc·scale, round half to even, + zero point, saturate (onnxruntime's
  MlasRequantizeOutput).
- shift: (k·acc + λ) >> d with floor shift, + zero point, clamp (seed 004, PULP-NN requant).
- adc: DIANA's analog output chain (notes/accelerators.md), the one statement of its arithmetic
  (`adc_code`, `apply_requant`): a6 = clamp(floor(acc / D), adc_min, adc_max) — floor division,
  also of a negative accumulator (−1 / 4 → −1, −4 / 4 → −1, −5 / 4 → −2) — then
  y = clamp(floor((m·a6 + a) / 2^s) + zp, qmin, qmax). Every step is exact integer arithmetic:
  nothing wraps (the ADC code is in [−32, 31], so its int16 form is exact; m·a6 + a is computed
  in full — the analog binding only takes layers where m fits int16 and m·a6 + a fits int32, so
  the chip's 32-bit datapath computes the same, bindings/diana_analog/checks.py).

- div: NEMO's exported chain (ir/requant.py): q = m·(κ·acc + λ) in int64, then q / D rounded
  toward zero ("trunc", as onnxruntime's int64 Div) or down ("floor"): −7 / 3 → −2 (trunc) or −3
  (floor); + zero point, clamp.

Per-channel parameters apply along the last axis (channels-last layout).
"""

from __future__ import annotations

import numpy as np

from ..ir.requant import Requant
from .fixedpoint import (
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_64,
    multiply_by_quantized_multiplier_single,
    wrap32,
)


def adc_code(acc: np.ndarray, rq: Requant) -> np.ndarray:
    """The ADC's output for accumulators `acc`: clamp(floor(acc / D), adc_min, adc_max) (int64)."""
    assert rq.divisor > 0, "the adc divisor is positive (frontend/onnx_nemo.py)"
    return np.clip(np.floor_divide(np.asarray(acc, dtype=np.int64), int(rq.divisor)),
                   rq.adc_min, rq.adc_max)


def real_requant(acc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """static_cast<int32_t>(round(double(acc) · scale)): one IEEE double product, rounded half
    away from zero. A result outside int32 is undefined behaviour in C++; x86-64 (where LiteRT runs
    here) converts it to INT32_MIN, and so do this and the C kernel (tw_s16.h tw_real_round)."""
    v = np.asarray(acc, dtype=np.int64).astype(np.float64) * np.asarray(scale, dtype=np.float64)
    r = np.sign(v) * np.floor(np.abs(v) + 0.5)
    # floor(|v| + 0.5) rounds |v| + 0.5 first: correct it where that sum was inexact
    r = np.where(np.abs(r) - np.abs(v) > 0.5, r - np.sign(v), r)
    ok = (r >= -2.0**31) & (r < 2.0**31)
    return np.where(ok, np.where(ok, r, 0).astype(np.int64), -(1 << 31))


def divide(q: np.ndarray, d: int, division: str) -> np.ndarray:
    """Exact q / d for d > 0, rounded down ("floor") or toward zero ("trunc")."""
    assert d > 0, "the divisor is positive (frontend/onnx_nemo.py)"
    q = np.asarray(q, dtype=np.int64)
    fl = np.floor_divide(q, np.int64(d))
    if division == "floor":
        return fl
    return fl + ((q < 0) & (fl * np.int64(d) != q)).astype(np.int64)


def apply_requant(acc: np.ndarray, rq: Requant) -> np.ndarray:
    """Requantize int64 accumulators `acc` (channels last) to int64 values in [qmin, qmax].

    `rq.wide` selects TFLite's int64-accumulator path (16x8 conv/fc).
    """
    acc = np.asarray(acc, dtype=np.int64)
    if rq.mode == "tflite":
        if rq.rounding == "real":
            assert rq.scale is not None, "a real-rounding requant carries its float64 scales"
            y = real_requant(acc if rq.wide else wrap32(acc), rq.scale) + rq.zero_point
            return np.clip(y, rq.qmin, rq.qmax)
        if rq.wide:
            fn = multiply_by_quantized_multiplier_64
        elif rq.rounding == "single":
            fn = multiply_by_quantized_multiplier_single
        else:
            fn = multiply_by_quantized_multiplier
        y = fn(acc, rq.multiplier, rq.shift) + rq.zero_point
    elif rq.mode == "onnx":
        assert rq.scale is not None
        f = acc.astype(np.float32) * np.asarray(rq.scale, dtype=np.float32)
        y = np.rint(f).astype(np.int64) + rq.zero_point
    elif rq.mode == "adc":
        m = np.asarray(rq.multiplier, dtype=np.int64)
        a = np.zeros_like(m) if rq.bias is None else np.asarray(rq.bias, dtype=np.int64)
        y = ((adc_code(acc, rq) * m + a) >> np.asarray(rq.shift, dtype=np.int64)) + rq.zero_point
    elif rq.mode == "div":
        k = np.asarray(rq.multiplier, dtype=np.int64)
        lam = np.zeros_like(k) if rq.bias is None else np.asarray(rq.bias, dtype=np.int64)
        y = divide((acc * k + lam) * np.int64(rq.post_multiplier), rq.divisor, rq.division) + rq.zero_point
    elif rq.mode == "shift":
        k = np.asarray(rq.multiplier, dtype=np.int64)
        lam = np.zeros_like(k) if rq.bias is None else np.asarray(rq.bias, dtype=np.int64)
        y = ((acc * k + lam) >> np.asarray(rq.shift, dtype=np.int64)) + rq.zero_point
    else:  # pragma: no cover - Requant.mode is a Literal
        raise ValueError(f"unknown requant mode {rq.mode}")
    return np.clip(y, rq.qmin, rq.qmax)
