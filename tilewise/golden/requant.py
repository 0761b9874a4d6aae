"""Apply an IR `Requant` to an int accumulator: the three modes of DESIGN.md "Integer semantics".

- tflite: MultiplyByQuantizedMultiplier per channel (golden/fixedpoint.py; double rounding, or single
  rounding when Requant.rounding == "single", or the int64 form when Requant.wide), + zero point, clamp.
- onnx: float32 acc·scale, round half to even, + zero point, saturate (onnxruntime's
  MlasRequantizeOutput).
- shift: (k·acc + λ) >> d with floor shift, + zero point, clamp (seed 004, PULP-NN requant).

Per-channel parameters apply along the last axis (channels-last layout).
"""

from __future__ import annotations

import numpy as np

from ..ir.requant import Requant
from .fixedpoint import (
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_64,
    multiply_by_quantized_multiplier_single,
)


def apply_requant(acc: np.ndarray, rq: Requant) -> np.ndarray:
    """Requantize int64 accumulators `acc` (channels last) to int64 values in [qmin, qmax].

    `rq.wide` selects TFLite's int64-accumulator path (16x8 conv/fc).
    """
    acc = np.asarray(acc, dtype=np.int64)
    if rq.mode == "tflite":
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
    elif rq.mode == "shift":
        k = np.asarray(rq.multiplier, dtype=np.int64)
        lam = np.zeros_like(k) if rq.bias is None else np.asarray(rq.bias, dtype=np.int64)
        y = ((acc * k + lam) >> np.asarray(rq.shift, dtype=np.int64)) + rq.zero_point
    else:  # pragma: no cover - Requant.mode is a Literal
        raise ValueError(f"unknown requant mode {rq.mode}")
    return np.clip(y, rq.qmin, rq.qmax)
