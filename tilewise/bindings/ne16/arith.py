"""NE16's arithmetic, stated in numpy: weight packing into bit planes and the execution of one job.

The statement the C functional model (c/tw_ne16.c, run by the host HAL) is held against, written
from notes/accelerators.md (pulp-platform/ne16 RTL, pulp-nnx `NeuralEngineFunctionalModel.py`):

Data
- Input activations are 8-bit unsigned. tilewise's int8 activations go in as u = x + 128 (the
  byte x ^ 0x80); the convolution then gains 128·Σw per output channel, which the caller folds
  into the bias (`bias_for_u8`). Padded taps read the job's padding value (the input zero point
  + 128 for an int8 layer); the hardware pads with a programmed value, the pulp-nnx model with 0.
- Weights of `bits` (2..8) bits are stored unsigned with a layer-wise offset: the stored value is
  w − offset with offset = −2^(bits−1), so w = stored + offset. Layout (`pack`), per output channel
  k, input-channel block b of 16 (TP_IN), weight bit i (LSB first), tap t (fy·FX + fx): two bytes
  whose bit j (little-endian 16-bit word) is bit i of the stored weight of input channel 16·b + j —
  notes/accelerators.md "(Cout, ⌈Cin/16⌉, Wbits, FY·FX, 16 input-channel bits packed in 2 bytes)".
  A depthwise layer swaps Cout and Cin: one "output channel" row whose 16-channel blocks hold the
  channels, each channel's taps read by its own output channel only. Channels past Cin in the last
  block are stored 0 and masked: they add nothing, to the bit planes or to the offset term.
- The accumulator is 32-bit and wraps: acc = Σ_i 2^i · Σ_{c,t} bit_i(stored[c,t]) · u[c,t]
  + offset · Σ_{c,t} u[c,t], modulo 2^32 (the bit-serial datapath; with 8-bit weights and inputs
  the exact sum fits int32 for any layer tilewise takes, so the wrap is never taken there).

Output (`norm_quant`, when the job has norm-quant; else the int32 accumulators)
- t = acc · scale (per channel, int64), wrapped to int32; + bias (int32), saturated to int32;
  ReLU if enabled; arithmetic right shift by the layer's one shift (0..31): floor — the public
  RTL computes a rounding term but does not add it; saturated to the output type (int8 / uint8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: input channels per block (NE16's TP_IN)
TP_IN = 16


def blocks(c: int) -> int:
    """16-channel input blocks of c channels."""
    return -(-c // TP_IN)


def offset(bits: int) -> int:
    """The layer-wise weight offset of `bits`-bit weights: −2^(bits−1)."""
    return -(1 << (bits - 1))


def pack(w: np.ndarray, bits: int = 8, depthwise: bool = False) -> np.ndarray:
    """Weights w[K, FY, FX, C] (C = 1 for depthwise) in NE16's bit-plane layout (module
    docstring), as uint8 bytes: conv [K][⌈C/16⌉][bits][FY·FX][2], depthwise [⌈K/16⌉][bits]
    [FY·FX][2] (the K channels take the place of the input channels)."""
    w = np.asarray(w, np.int64)
    lo, hi = offset(bits), -offset(bits) - 1
    if w.min(initial=0) < lo or w.max(initial=0) > hi:
        raise ValueError(f"weights outside the {bits}-bit range [{lo}, {hi}]")
    k, fy, fx, c = w.shape
    if depthwise:
        w = w[..., 0].transpose(1, 2, 0)[None]          # [1, FY, FX, K]: channels as inputs
        k, c = 1, w.shape[-1]
    stored = (w - lo).reshape(k, fy * fx, c)            # [K][taps][C], 0..2^bits − 1
    nb = blocks(c)
    padded = np.zeros((k, fy * fx, nb * TP_IN), np.int64)
    padded[..., :c] = stored
    planes = (padded[..., None] >> np.arange(bits)) & 1          # [K][taps][Cpad][bits]
    planes = planes.reshape(k, fy * fx, nb, TP_IN, bits)
    words = (planes << np.arange(TP_IN)[:, None]).sum(axis=3)    # [K][taps][nb][bits]
    words = words.transpose(0, 2, 3, 1)                          # [K][nb][bits][taps]
    return np.stack([words & 0xFF, words >> 8], axis=-1).astype(np.uint8).ravel()


def packed_bytes(k: int, c: int, fy: int, fx: int, bits: int = 8,
                 depthwise: bool = False) -> int:
    """Bytes of `pack` for a K×FY×FX×C conv (depthwise: K channels)."""
    if depthwise:
        return blocks(k) * bits * fy * fx * 2
    return k * blocks(c) * bits * fy * fx * 2


def bias_for_u8(bias: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The bias of an int8 layer run on u = x + 128: bias − 128·Σw per output channel."""
    w = np.asarray(w, np.int64)
    return np.asarray(bias, np.int64) - 128 * w.reshape(w.shape[0], -1).sum(axis=1)


def _wrap32(a: np.ndarray) -> np.ndarray:
    return ((np.asarray(a, np.int64) + 2**31) % 2**32) - 2**31


@dataclass(frozen=True)
class Job:
    """One NE16 job: a conv / depthwise / 1x1 / linear on a u8 HWC tile (module docstring)."""

    k: int                    # output channels (depthwise: = channels)
    c: int                    # input channels
    fy: int
    fx: int
    stride: int = 1           # 1 or 2
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)   # top, left, bottom, right
    pad_value: int = 0        # u8 value of a padded tap
    bits: int = 8
    depthwise: bool = False


def run(job: Job, u: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """The int32 accumulators [OY][OX][K] of `job` on the u8 input u[H][W][C], from the packed
    weights: bit plane by bit plane, as the datapath sums them (module docstring)."""
    u = np.asarray(u, np.int64)
    t, l, b, r = job.pads
    x = np.pad(u, ((t, b), (l, r), (0, 0)), constant_values=job.pad_value)
    s, fy, fx = job.stride, job.fy, job.fx
    oy, ox = (x.shape[0] - fy) // s + 1, (x.shape[1] - fx) // s + 1
    rows = 1 if job.depthwise else job.k
    cin = job.k if job.depthwise else job.c
    nb = blocks(cin)
    words = np.asarray(packed, np.int64).reshape(rows, nb, job.bits, fy * fx, 2)
    words = words[..., 0] | words[..., 1] << 8                   # [rows][nb][bits][taps]
    bitsel = (words[..., None] >> np.arange(TP_IN)) & 1          # [rows][nb][bits][taps][16]
    bitsel = bitsel.transpose(0, 3, 1, 4, 2).reshape(rows, fy * fx, nb * TP_IN, job.bits)
    stored = (bitsel << np.arange(job.bits)).sum(axis=-1)[..., :cin]   # [rows][taps][cin]
    # the windows: win[oy][ox][taps][C]
    win = np.stack([x[i:i + s * (oy - 1) + 1:s, j:j + s * (ox - 1) + 1:s]
                    for i in range(fy) for j in range(fx)], axis=2)
    if job.depthwise:
        acc = (win * stored[0]).sum(axis=2) + offset(job.bits) * win.sum(axis=2)
    else:
        acc = np.einsum("yxtc,ktc->yxk", win, stored) + offset(job.bits) * win.sum(axis=(2, 3))[
            ..., None]
    return _wrap32(acc).astype(np.int32)


def norm_quant(acc: np.ndarray, scale: np.ndarray, bias: np.ndarray, shift: int,
               relu: bool = False, out_bits: int = 8, signed: bool = True) -> np.ndarray:
    """NE16's output normalization of accumulators acc[..., K] (module docstring)."""
    t = _wrap32(np.asarray(acc, np.int64) * np.asarray(scale, np.int64))
    t = np.clip(t + np.asarray(bias, np.int64), -2**31, 2**31 - 1)
    if relu:
        t = np.maximum(t, 0)
    t = t >> shift
    lo, hi = (-(1 << (out_bits - 1)), (1 << (out_bits - 1)) - 1) if signed else (0, (1 << out_bits) - 1)
    return np.clip(t, lo, hi)
