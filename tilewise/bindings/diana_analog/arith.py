"""DIANA's analog core, stated in numpy: the ternary weight layout and the execution of one job.

The statement the C functional model (c/tw_diana_analog.c, run by the host HAL) is held against,
written from notes/accelerators.md "Analog core (HTVM)" — the only public description of the
core's arithmetic (no RTL, no specification beyond it):

Data
- Activations are int8 HWC (tilewise's uint8 tensors stored biased as x − 128, their bias raised
  by 128·Σw: bindings/portable/common.py); a padded tap reads the job's pad value (the input zero
  point as stored).
- Weights are ternary, w ∈ {−1, 0, +1}, stored as 2-bit codes: 0 → 0b00, +1 → 0b01, −1 → 0b11
  (two's complement; 0b10 is never written). One output channel is one column of the array: its
  FY·FX·C weights in window order (fy, fx, c — the order of the HWC input window), four per byte,
  weight j in bits 2·(j mod 4) .. 2·(j mod 4)+1 of byte ⌊j/4⌋ (LSB first). `pack` writes
  [K][FY·FX·C/4] bytes (FY·FX·C a multiple of 4: checks.py).
- The array is 1152 rows × 512 columns (notes/accelerators.md, HTVM): a layer fits when
  FY·FX·C ≤ 1152 and K ≤ 512 (checks.py); one matrix-vector product per output pixel.

Output
- acc = Σ w·x + bias per output pixel and channel (exact: |acc| ≤ 128·1152 + |bias|, far inside
  int32), then the ADC chain of the layer's adc-mode requantization — golden/requant.py states it
  once (`adc_code`, `apply_requant`): a6 = clamp(floor(acc / D), −32, 31), y = clamp(floor((m·a6
  + a) / 2^s) + zp, qmin, qmax), written as int8. Adding the bias before the ADC is assumed (the
  notes do not say where a conv's bias enters; HTVM's pattern adds it to the conv's output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...golden.requant import apply_requant
from ...ir.requant import Requant

#: the array: rows (FY·FX·C of a column) × columns (output channels)
ROWS = 1152
COLS = 512
#: 2-bit codes of −1, 0, +1 (index w + 1)
CODES = np.array([0b11, 0b00, 0b01], np.uint8)


def row_bytes(fy: int, fx: int, c: int) -> int:
    """Bytes of one output channel's packed column."""
    assert (fy * fx * c) % 4 == 0, "a column of FY·FX·C weights packs into whole bytes"
    return fy * fx * c // 4


def pack(w: np.ndarray) -> np.ndarray:
    """Ternary weights w[K, FY, FX, C] as 2-bit codes (module docstring): [K][FY·FX·C/4] uint8."""
    w = np.asarray(w, np.int64)
    if w.size and (w.min() < -1 or w.max() > 1):
        raise ValueError("weights outside {-1, 0, +1}")
    k = w.shape[0]
    codes = CODES[w.reshape(k, -1, 4) + 1].astype(np.uint8)          # [K][bytes][4]
    return (codes << (2 * np.arange(4, dtype=np.uint8))).sum(axis=-1, dtype=np.uint8).ravel()


def unpack(packed: np.ndarray, k: int, fy: int, fx: int, c: int) -> np.ndarray:
    """The weights [K, FY, FX, C] of `pack`'s bytes (codes sign-extended from 2 bits)."""
    b = np.asarray(packed, np.uint8).reshape(k, row_bytes(fy, fx, c), 1)
    codes = (b >> (2 * np.arange(4, dtype=np.uint8))) & 0b11              # [K][bytes][4]
    return np.where(codes >= 2, codes.astype(np.int64) - 4, codes).reshape(k, fy, fx, c)


@dataclass(frozen=True)
class Job:
    """One analog job: a conv of the whole input tile (all C) for k output channels (one column
    each), its ADC and digital output stage."""

    k: int
    c: int
    fy: int
    fx: int
    stride: int = 1
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)   # top, left, bottom, right
    pad_value: int = 0
    divisor: int = 1
    adc_min: int = -32
    adc_max: int = 31
    zero_point: int = 0
    qmin: int = -128
    qmax: int = 127


def accumulate(job: Job, x: np.ndarray, packed: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """The array's sums acc[OY][OX][K] = Σ w·x + bias of `job` on the int8 tile x[H][W][C]."""
    t, l, b, r = job.pads
    xp = np.pad(np.asarray(x, np.int64), ((t, b), (l, r), (0, 0)), constant_values=job.pad_value)
    s, fy, fx = job.stride, job.fy, job.fx
    oy, ox = (xp.shape[0] - fy) // s + 1, (xp.shape[1] - fx) // s + 1
    w = unpack(packed, job.k, fy, fx, job.c)
    win = np.stack([np.stack([xp[i:i + s * (oy - 1) + 1:s, j:j + s * (ox - 1) + 1:s]
                              for j in range(fx)], axis=2) for i in range(fy)], axis=2)
    return np.einsum("yxijc,kijc->yxk", win, w) + np.asarray(bias, np.int64)


def run(job: Job, x: np.ndarray, packed: np.ndarray, bias: np.ndarray, m: np.ndarray,
        a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The int8 outputs [OY][OX][K] of `job`: the array's sums through the adc-mode chain with the
    per-channel m, a, s (golden/requant.py)."""
    rq = Requant(mode="adc", multiplier=np.asarray(m, np.int64), shift=np.asarray(s, np.int64),
                 bias=np.asarray(a, np.int64), zero_point=job.zero_point, qmin=job.qmin,
                 qmax=job.qmax, divisor=job.divisor, adc_min=job.adc_min, adc_max=job.adc_max)
    return apply_requant(accumulate(job, x, packed, bias), rq).astype(np.int8)
