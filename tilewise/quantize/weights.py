"""Weight and bias quantization: per-output-channel symmetric int8 weights, int32 biases.

Weights: for each output channel c, scale_c = max|w_c| / qmax with qmax = 2^(bits−1) − 1 (127 for
int8), q = clip(round_half_even(w / scale_c), −qmax, qmax), zero point 0 — TFLite's int8
quantization spec (per-axis symmetric weights, the −128 code unused) and onnxruntime's
``per_channel`` QDQ weights. A channel of zeros gets scale 1 (its codes are 0, exact).

Bias: int32 with scale_x · scale_c and zero point 0 (the same specs: the bias is added to the
int32 accumulator, so its scale must be the product of the input's and the weight's), rounded
half to even, saturated to int32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


@dataclass(frozen=True, eq=False)
class QuantWeights:
    q: np.ndarray        # integer codes, the float tensor's shape
    scale: np.ndarray    # float32 [channels]
    axis: int


def quantize_weights(w: np.ndarray, axis: int = 0, bits: int = 8) -> QuantWeights:
    """Per-channel symmetric quantization of w along `axis` (the output-channel axis)."""
    w = np.asarray(w, dtype=np.float64)
    qmax = (1 << (bits - 1)) - 1
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    amax = np.abs(moved).max(axis=1) if moved.shape[1] else np.zeros(w.shape[axis])
    scale = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    bshape = [1] * w.ndim
    bshape[axis] = -1
    q = np.clip(np.rint(w / scale.astype(np.float64).reshape(bshape)), -qmax, qmax).astype(np.int64)
    return QuantWeights(q, scale, axis)


def quantize_bias(b: np.ndarray, input_scale: float, weight_scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 codes, float32 scales) of bias b for an accumulator of scale input_scale · weight_scale."""
    scale = (np.float64(np.float32(input_scale)) * np.asarray(weight_scale, dtype=np.float64)).astype(np.float32)
    q = np.clip(np.rint(np.asarray(b, dtype=np.float64) / scale.astype(np.float64)), INT32_MIN, INT32_MAX)
    return q.astype(np.int32), scale
