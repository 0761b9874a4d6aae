"""Calibration observers: the real range [lo, hi] of one activation tensor over calibration inputs,
and the int8 (scale, zero point) that covers it.

Three methods (`--calibration`), all affine per tensor:

- ``minmax``: the smallest and largest value seen (TFLite's converter and onnxruntime's
  ``MinMax`` calibrator do this; nothing is clipped, outliers widen the step);
- ``percentile``: the ``pct``-th percentile of the values (default 99.99, i.e. the top and bottom
  0.01 % clip; TensorRT / onnxruntime ``Percentile`` calibrator idea), on the sample below;
- ``mse``: the range ``alpha·[lo, hi]`` (minmax range shrunk by alpha in a grid of 64 values in
  [0.25, 1]) that minimises the mean squared error between the sample and its quantize-dequantize,
  i.e. the clip-versus-rounding trade-off (the criterion of onnxruntime's/NNCF's MSE range search,
  written here as a 1-D grid search).

Percentile and MSE work on a deterministic sample of the values (every k-th value of each batch so
that at most ``SAMPLE_PER_BATCH`` are kept per batch; MSE's grid scales the exact min and max), so that a
calibration of MLPerf-sized activations does not keep every value in memory. The sample is a
stated approximation: the exact percentile of all values can differ from the sample's.

The quantization parameters follow the usual int8 asymmetric convention (TFLite/ONNX; int16
activations are symmetric with zero point 0, TFLite's 16x8 scheme): the range
is widened to include 0 (so that 0, the padding value, is exact), scale = (hi − lo)/(qmax − qmin),
zero point = round(qmin − lo/scale) clipped to [qmin, qmax].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METHODS = ("minmax", "percentile", "mse")
SAMPLE_PER_BATCH = 1 << 16
MSE_GRID = np.linspace(0.25, 1.0, 64)
SYMMETRIC_BITS = (16,)   # int16 activations: symmetric, zero point 0 (TFLite 16x8)


@dataclass(frozen=True)
class Range:
    lo: float
    hi: float


@dataclass(frozen=True)
class QParams:
    """Per-tensor affine quantization: real = scale · (q − zero_point), q in [qmin, qmax]."""

    scale: float
    zero_point: int
    qmin: int = -128
    qmax: int = 127

    def quantize(self, x: np.ndarray) -> np.ndarray:
        """Round half to even (numpy / onnxruntime QuantizeLinear), saturate."""
        q = np.rint(np.asarray(x, dtype=np.float64) / self.scale) + self.zero_point
        return np.clip(q, self.qmin, self.qmax).astype(np.int64)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        return (np.asarray(q, dtype=np.float64) - self.zero_point) * self.scale


def qparams_for(r: Range, bits: int = 8, signed: bool | None = None) -> QParams:
    """Affine `bits`-bit parameters covering r (widened to include 0): signed int8 at 8 bits,
    unsigned below (u4: 0..15, u2: 0..3 — the sub-byte contract, seed 004's unsigned
    activations; `signed` overrides); 16 bits: symmetric (zero point 0, scale = max(|lo|, |hi|) /
    32767), TFLite's 16x8 activation scheme."""
    if signed is None:
        signed = bits >= 8
    qmin, qmax = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if bits in SYMMETRIC_BITS:
        amax = max(abs(float(r.lo)), abs(float(r.hi)))
        if not np.isfinite(amax):
            raise ValueError(f"calibration range [{r.lo}, {r.hi}] is not finite")
        return QParams(float(np.float32(amax / qmax)) if amax > 0 else 1.0, 0, qmin, qmax)
    lo, hi = min(float(r.lo), 0.0), max(float(r.hi), 0.0)
    if hi - lo <= 0.0 or not np.isfinite(hi - lo):
        if not np.isfinite(hi - lo):
            raise ValueError(f"calibration range [{r.lo}, {r.hi}] is not finite")
        return QParams(1.0, 0, qmin, qmax)   # an all-zero tensor: any scale represents it exactly
    scale = (hi - lo) / (qmax - qmin)
    zp = int(np.clip(np.rint(qmin - lo / scale), qmin, qmax))
    return QParams(float(np.float32(scale)), zp, qmin, qmax)


class Observer:
    """Accumulates one tensor's values over calibration batches; `range()` by the chosen method."""

    def __init__(self, method: str = "minmax", percentile: float = 99.99, bits: int = 8) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown calibration method '{method}' (one of {', '.join(METHODS)})")
        if not 50.0 < percentile <= 100.0:
            raise ValueError(f"percentile must be in (50, 100], got {percentile}")
        self.method, self.pct, self.bits = method, float(percentile), bits
        #: codes signed or not (None: qparams_for's default, signed at 8 bits and up, unsigned
        #: sub-byte); narrow_search.window sets True: its b-bit windows live in int8 containers
        self.signed: bool | None = None
        self.lo, self.hi = np.inf, -np.inf
        self.samples: list[np.ndarray] = []

    def update(self, x: np.ndarray) -> None:
        v = np.asarray(x, dtype=np.float32).reshape(-1)
        if v.size == 0:
            return
        if not np.all(np.isfinite(v)):
            raise ValueError("the tensor holds NaN or infinite values")
        self.lo, self.hi = min(self.lo, float(v.min())), max(self.hi, float(v.max()))
        if self.method != "minmax":
            step = max(1, -(-v.size // SAMPLE_PER_BATCH))
            self.samples.append(v[::step].copy())

    def _sample(self) -> np.ndarray:
        return np.concatenate(self.samples)

    def range(self) -> Range:
        if self.lo > self.hi:
            raise ValueError("the observer saw no values")
        if self.method == "minmax":
            return Range(self.lo, self.hi)
        s = self._sample()
        if self.method == "percentile":
            return Range(float(np.percentile(s, 100.0 - self.pct)), float(np.percentile(s, self.pct)))
        return self._mse_range(s.astype(np.float64))

    def _mse_range(self, s: np.ndarray) -> Range:
        best, best_err = Range(self.lo, self.hi), np.inf
        for alpha in MSE_GRID:
            r = Range(self.lo * alpha, self.hi * alpha)
            qp = qparams_for(r, self.bits, self.signed)
            err = float(np.mean((qp.dequantize(qp.quantize(s)) - s) ** 2))
            if err < best_err:   # ascending alpha: ties keep the narrower range
                best, best_err = r, err
        return best

    def qparams(self) -> QParams:
        return qparams_for(self.range(), self.bits, self.signed)
