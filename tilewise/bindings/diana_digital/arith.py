"""DIANA's digital accelerator, stated in numpy: its weight layout and the execution of one job.

The statement the C functional model (c/tw_diana_digital.c, run by the host HAL) is held against,
written from notes/accelerators.md (DIANA section) and the public layout code of MATCH's DIANA
target (eml-eda/match `match/target/examples/diana/digital/digital_accelerator.py`:
conv_2d_weights, depthwise_conv_2d_weights, dense_weights) and HTVM's patterns (KULeuven-MICAS/
htvm `python/tvm/relay/op/contrib/soma_dory.py`). No public RTL or arithmetic specification of the
core exists; where the sources leave a point open, the decision is stated here, and only here.

Data
- Input activations int8 HWC [H][W][C] in the activation memory; weights 8-bit; bias int32 per
  output channel; the 16×16 PE array unrolls 16 output channels × 16 output columns.
- Weight layout (`pack`), in the weight memory: output channels padded with zero channels to a
  multiple of 16;
    conv     (Cout/16, Cin, FY, FX, 16): byte [kb][c][fy][fx][j] = w[16·kb + j][fy][fx][c];
    depthwise each channel followed by 3 zero rows (4·Cout rows, one input channel), then as a
             conv: (4·Cout/16, 1, FY, FX, 16), byte [b][0][fy][fx][j] = row 16·b + j, row 4·k
             = w[k], rows 4·k + 1..3 = 0;
    dense    [Cout][Cin] with Cin also padded to 16;
  and then every group of 4 bytes reversed (the core reads 32-bit words big-endian): the byte
  of layout position p is stored at p ^ 3.
- Decision (padding; the sources do not say how the core pads): a job takes one pad per side
  (top, left, bottom, right), each at most FY // 2 rows (FX // 2 columns), and a padded tap reads
  a programmable pad value, the input zero point as stored (int8) — so the job is the layer's
  convolution with its zero point, exactly as tilewise's kernels pad. Per side, because a tile's
  pads differ per side anyway (the first row tile has the layer's top pad, an interior one none,
  the last the bottom pad); with them TFLite's 'SAME' padding at stride 2 — (OY − 1)·2 + F − H
  rows split ⌊/2⌋ before, ⌈/2⌉ after: (0, 1) for a 3×3 kernel on an even input, (2, 3) for 7×7
  — is a job as it stands, each side within F // 2. The other way to state it,
  the symmetric job on the input shifted by one row and column (the loader starting one row/col
  later), is not the same convolution: the shifted job's first output row and column read the
  pad value where the layer reads the input's row and column 0 (tests/test_diana.py
  test_shifted_symmetric_job_is_not_asymmetric_same). HTVM's soma_dory.py accepts symmetric
  padding only; MATCH's "spatial padding" (seed 003 §V) pads K and OX to multiples of 16, not the
  window. The cost model prices the rows the core pads (bindings/diana_digital/cost.py).

Arithmetic
- acc = bias[k] + Σ over taps and input channels of w·x, in 32 bits (wrapping; for 8-bit data the
  exact sum fits int32 for every layer tilewise takes, so the wrap is never taken there).
- Output, one of two modes:
  * `requant` (the sources' pattern conv → bias add → right shift [0, 31] → clip → cast):
    y = clip(acc >> shift, qmin, qmax) as int8, the shift arithmetic (floor), one per layer;
  * Decision (int32 output; the public sources do not say DIANA can write its accumulators):
    the core writes acc as int32 to the activation memory — the same datapath with the shift and
    clip stages bypassed — and the host core requantizes it in the layer's mode (tflite, onnx,
    shift: exact for every mode tilewise takes). This is the one place the decision is made;
    bindings/diana_digital/__init__.py uses it for every layer whose requantization is not
    exactly the core's, and bindings/diana_digital/cost.py prices the host's pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: output channels (and dense input channels) per block of the PE array / weight layout
BLOCK = 16
#: stored rows per depthwise channel (the channel and 3 zero rows)
DW_ROWS = 4
KINDS = ("conv", "dw", "dense")


def _pad_to(n: int, b: int = BLOCK) -> int:
    return -(-n // b) * b


def _swap(flat: np.ndarray) -> np.ndarray:
    """Every group of 4 bytes reversed (position p ↔ p ^ 3)."""
    return flat.reshape(-1, 4)[:, ::-1].ravel()


def pack(w: np.ndarray, kind: str) -> np.ndarray:
    """Weights in the core's layout (module docstring) as uint8 bytes: conv w[K, FY, FX, C],
    depthwise w[K, FY, FX] (or [K, FY, FX, 1]), dense w[K, C]."""
    w = np.asarray(w, np.int64)
    if w.min(initial=0) < -128 or w.max(initial=0) > 127:
        raise ValueError("weights outside the 8-bit range [-128, 127]")
    if kind == "dense":
        k, c = w.shape
        out = np.zeros((_pad_to(k), _pad_to(c)), np.int64)
        out[:k, :c] = w
    elif kind == "conv":
        k, fy, fx, c = w.shape
        kp = np.zeros((_pad_to(k), fy, fx, c), np.int64)
        kp[:k] = w
        out = kp.reshape(-1, BLOCK, fy, fx, c).transpose(0, 4, 2, 3, 1)   # [kb][c][fy][fx][j]
    elif kind == "dw":
        w = w.reshape(w.shape[0], w.shape[1], w.shape[2])
        k, fy, fx = w.shape
        rows = np.zeros((_pad_to(k) * DW_ROWS, fy, fx), np.int64)
        rows[0:k * DW_ROWS:DW_ROWS] = w
        out = rows.reshape(-1, BLOCK, fy, fx).transpose(0, 2, 3, 1)       # [b][fy][fx][j]
    else:
        raise ValueError(f"unknown job kind {kind!r}")
    return _swap(np.ascontiguousarray(out).ravel().astype(np.int8).view(np.uint8))


def packed_bytes(kind: str, k: int, c: int, fy: int, fx: int) -> int:
    """Bytes of `pack` for K output channels of C inputs (depthwise: C = K)."""
    if kind == "dense":
        return _pad_to(k) * _pad_to(c)
    if kind == "dw":
        return _pad_to(k) * DW_ROWS * fy * fx
    return _pad_to(k) * c * fy * fx


def unpack(packed: np.ndarray, kind: str, k: int, c: int, fy: int, fx: int) -> np.ndarray:
    """The weights a job reads from `packed`, as conv w[K, FY, FX, C] (depthwise C = 1): the
    byte of (k, fy, fx, c) at its layout position ^ 3 (module docstring)."""
    b = _swap(np.asarray(packed, np.uint8)).view(np.int8).astype(np.int64)
    if kind == "dense":
        return b.reshape(_pad_to(k), _pad_to(c))[:k, :c].reshape(k, 1, 1, c)
    if kind == "dw":
        rows = b.reshape(-1, fy, fx, BLOCK).transpose(0, 3, 1, 2).reshape(-1, fy, fx)
        return rows[0:k * DW_ROWS:DW_ROWS].reshape(k, fy, fx, 1)
    return b.reshape(-1, c, fy, fx, BLOCK).transpose(0, 4, 2, 3, 1).reshape(-1, fy, fx, c)[:k]


def _wrap32(a: np.ndarray) -> np.ndarray:
    return ((np.asarray(a, np.int64) + 2**31) % 2**32) - 2**31


@dataclass(frozen=True)
class Job:
    """One job of the digital core on an int8 HWC tile (module docstring)."""

    kind: str                 # "conv" | "dw" | "dense"
    k: int                    # output channels (depthwise: = channels)
    c: int                    # input channels
    fy: int = 1
    fx: int = 1
    stride: int = 1           # 1 or 2
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)   # top, left, bottom, right
    pad_value: int = 0        # int8 value of a padded tap (the input zero point)
    #: None: int32 output (acc); else (shift, qmin, qmax): the core's requantization to int8
    requant: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        t, left, b, r = self.pads
        if min(self.pads) < 0 or max(t, b) > self.fy // 2 or max(left, r) > self.fx // 2:
            raise ValueError(f"pads {self.pads} beyond ({self.fy // 2}, {self.fx // 2}) per side "
                             f"for a {self.fy}×{self.fx} kernel (module docstring)")


def run(job: Job, x: np.ndarray, packed: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """The job's outputs [OY][OX][K] (int32 acc, or int8 after the core's requantization) on the
    int8 input x[H][W][C] from the packed weights and the int32 bias."""
    x = np.asarray(x, np.int64)
    w = unpack(packed, job.kind, job.k, job.c, job.fy, job.fx)
    t, left, b, r = job.pads
    xp = np.pad(x, ((t, b), (left, r), (0, 0)), constant_values=job.pad_value)
    s, fy, fx = job.stride, job.fy, job.fx
    oy, ox = (xp.shape[0] - fy) // s + 1, (xp.shape[1] - fx) // s + 1
    win = np.stack([xp[i:i + s * (oy - 1) + 1:s, j:j + s * (ox - 1) + 1:s]
                    for i in range(fy) for j in range(fx)], axis=2)        # [oy][ox][taps][C]
    taps = w.reshape(job.k, fy * fx, -1)
    if job.kind == "dw":
        acc = (win * taps[:, :, 0].T[None, None]).sum(axis=2)
    else:
        acc = np.einsum("yxtc,ktc->yxk", win, taps)
    acc = _wrap32(acc + np.asarray(bias, np.int64))
    if job.requant is None:
        return acc.astype(np.int32)
    shift, lo, hi = job.requant
    return np.clip(acc >> shift, lo, hi).astype(np.int8)
