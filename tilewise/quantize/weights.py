"""Weight and bias quantization: per-output-channel symmetric int8 weights, int32 biases.

Weights: for each output channel c, scale_c = max|w_c| / qmax with qmax = 2^(bits−1) − 1 (127 for
int8, 7 for int4, 1 for int2: the most negative code is unused at every width), at 4 and 2 bits
shrunk to the clip with the least squared error (`mse_scale`), q = clip(round_half_even(w / scale_c), −qmax, qmax), zero
point 0 — TFLite's int8 quantization spec (per-axis symmetric weights, the −128 code unused) and onnxruntime's
``per_channel`` QDQ weights. A channel of zeros gets scale 1 (its codes are 0, exact).

Bias: int32 with scale_x · scale_c and zero point 0 (the same specs: the bias is added to the
int32 accumulator, so its scale must be the product of the input's and the weight's), rounded
half to even, saturated to int32. Where max|w_c|/127 would put a channel's bias code past 2^30,
the channel's weight scale is raised instead (`bias_safe_scale`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
BIAS_LIMIT = float(1 << 30)


@dataclass(frozen=True, eq=False)
class QuantWeights:
    q: np.ndarray        # integer codes, the float tensor's shape
    scale: np.ndarray    # float32 [channels]
    axis: int


def quantize_weights(w: np.ndarray, axis: int = 0, bits: int = 8, bias: np.ndarray | None = None,
                     input_scale: float | None = None) -> QuantWeights:
    """Per-channel symmetric quantization of w along `axis` (the output-channel axis). With the
    layer's float bias and input scale, a channel's scale is raised where needed so that its bias
    code stays within ±BIAS_LIMIT (`bias_safe_scale`)."""
    w = np.asarray(w, dtype=np.float64)
    qmax = (1 << (bits - 1)) - 1
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    amax = np.abs(moved).max(axis=1) if moved.shape[1] else np.zeros(w.shape[axis])
    scale = np.where(amax > 0, amax / qmax, 1.0)
    if bits < 8:
        scale = mse_scale(moved, scale, qmax)
    if bias is not None and input_scale is not None:
        scale = bias_safe_scale(scale, bias, input_scale)
    scale = scale.astype(np.float32)
    bshape = [1] * w.ndim
    bshape[axis] = -1
    q = np.clip(np.rint(w / scale.astype(np.float64).reshape(bshape)), -qmax, qmax).astype(np.int64)
    return QuantWeights(q, scale, axis)


#: clip fractions of max|w_c| tried by `mse_scale` (4- and 2-bit weights)
CLIP_GRID = np.linspace(0.3, 1.0, 36)


def mse_scale(rows: np.ndarray, scale: np.ndarray, qmax: int) -> np.ndarray:
    """Per channel, the scale α·max|w_c|/qmax (α in CLIP_GRID) with the least squared error of the
    channel's quantize-dequantize: at 4 and 2 bits (±7, ±1) the max-abs step rounds most weights
    to few codes, and clipping the largest ones is the better trade (the MSE range search of
    calibrate.py, per weight channel; PULP-NN / HAQ quantize sub-byte weights this way)."""
    best = np.asarray(scale, dtype=np.float64).copy()
    best_err = np.full(best.shape, np.inf)
    for alpha in CLIP_GRID:
        s = (scale * alpha)[:, None]
        err = ((np.clip(np.rint(rows / s), -qmax, qmax) * s - rows) ** 2).sum(axis=1)
        better = err < best_err
        best = np.where(better, s[:, 0], best)
        best_err = np.where(better, err, best_err)
    return best


def bias_safe_scale(scale: np.ndarray, bias: np.ndarray, input_scale: float) -> np.ndarray:
    """Weight scales raised so that |bias / (input_scale · scale)| ≤ BIAS_LIMIT per channel.

    A channel whose weights are (nearly) zero but whose bias is not gets a tiny max|w| scale and
    an int32 bias code past 2^31 (saturated: wrong), or one that the lowering's input zero-point
    correction (−zp_x·Σq_w, up to 128·127·K) pushes past int32 (passes/lower.py refuses it). The
    bias then dominates the channel, so a coarser weight step costs nothing visible: scale_c =
    max(max|w_c|/127, |b_c| / (s_x · BIAS_LIMIT)). BIAS_LIMIT = 2^30 leaves 2^30 for the correction
    (K < 66,000 taps at int8).
    """
    # (1 + 1e-6): the scales are stored as float32 (relative rounding ≤ 6e-8)
    need = np.abs(np.asarray(bias, dtype=np.float64).reshape(-1)) / (float(input_scale) * BIAS_LIMIT) * (1 + 1e-6)
    return np.maximum(np.asarray(scale, dtype=np.float64), need)


def quantize_bias(b: np.ndarray, input_scale: float, weight_scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 codes, float32 scales) of bias b for an accumulator of scale input_scale · weight_scale."""
    scale = (np.float64(np.float32(input_scale)) * np.asarray(weight_scale, dtype=np.float64)).astype(np.float32)
    q = np.clip(np.rint(np.asarray(b, dtype=np.float64) / scale.astype(np.float64)), INT32_MIN, INT32_MAX)
    return q.astype(np.int32), scale
