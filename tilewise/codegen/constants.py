"""The L2 image of a weighted layer's constants, laid out as its schedule moves them.

Contract: tilewise/schedule/space.py ("DMA byte accounting"). A layer's constants are one byte
blob, 4-byte aligned where it starts:

    [ per-channel blocks: one per k tile, k_t · const_bytes bytes each ][ weight blocks ]

- per-channel block of a k tile (the `b` operand, one DMA chunk): three int32 arrays of k_t
  entries — bias (with −zp_x·Σw folded in, ir/layer.py; + 128·Σw when the input is uint8, which
  the generated C stores biased as x − 128, kernel_calls.py "uint8"), then two requant words —
  padded with zeros to k_t · Module.const_bytes_per_channel bytes:
    tflite:  M0 (Q31 multiplier), shift (exponent, + = left)                     (tw_requant.h)
    shift:   k (multiplier), λ (added after the multiply); the right shifts d (one per channel,
             NEMO/DORY's per-channel requant) are a constant array of the layer's C file
    onnx:    scale (float32 bits), an unused zero word
  Block of the k tile starting at channel k0: offset k0 · const_bytes.
- weight blocks (the `w` operand, one DMA chunk per (k tile, c tile)), int8:
    conv   [k_t][FY][FX][c_t] at k0·FY·FX·C + c0·k_t·FY·FX    (the natural [K][FY][FX][C] layout
           when C is not tiled: c0 = 0, c_t = C)
    fc     [k_t][c_t] at k0·C + c0·k_t                         (natural [K][C] when C is whole)
    dwconv [FY][FX][k_t] at k0·FY·FX                           (channel-last per k tile, as
           tw_depthwise_s8 reads it)
The blob's size is exactly the layer's constant bytes in the memory plan (weights + K·const_bytes,
schedule/network.py `const_bytes`), so an L3-streamed copy fits its planned L2 buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TilewiseError
from ..ir.layer import Layer, LayerGraph
from ..schedule.space import DimTiling, LayerSchedule

#: int32 words per channel tilewise stores (bias + two requant words)
WORDS = 3


@dataclass(frozen=True, eq=False)
class LayerConstants:
    """One layer's constant blob and where its parts start."""

    blob: bytes
    b_offset: int          # per-channel blocks
    w_offset: int          # weight blocks
    const_bytes: int       # bytes per output channel of the b blocks
    #: shift mode: the right shift d of every output channel (None otherwise)
    shift_d: tuple[int, ...] | None = None

    @property
    def size(self) -> int:
        return len(self.blob)


def _tiles(t: DimTiling) -> list[tuple[int, int]]:
    return [(s, min(t.tile, t.size - s)) for s in range(0, t.size, t.tile)]


def _requant_words(layer: Layer) -> tuple[np.ndarray, np.ndarray, tuple[int, ...] | None]:
    """The two per-channel requant words (as uint32 bit patterns) and shift mode's d per channel."""
    rq = layer.requant
    k = layer.nest.K
    if rq is None:
        raise TilewiseError(f"layer '{layer.name}' ({layer.op}) has no requantization")
    if rq.wide and rq.mode != "tflite":
        raise TilewiseError(f"layer '{layer.name}' uses the 16x8 (int64 accumulator) path with a "
                            f"{rq.mode} requant, which the C kernels do not implement")

    def per_channel(a, dtype) -> np.ndarray:
        a = np.atleast_1d(np.asarray(a))
        if a.size not in (1, k):
            raise TilewiseError(f"layer '{layer.name}': requant has {a.size} channels for {k} outputs")
        return np.broadcast_to(a, (k,)).astype(dtype)

    if rq.mode == "tflite":
        return per_channel(rq.multiplier, np.int32), per_channel(rq.shift, np.int32), None
    if rq.mode == "onnx":
        scale = per_channel(rq.scale, np.float32)
        return scale.view(np.int32), np.zeros(k, np.int32), None
    d = per_channel(rq.shift, np.int64)
    if d.min() < 0 or d.max() > 63:
        raise TilewiseError(f"layer '{layer.name}': shift-mode right shifts must be in 0..63")
    mult = per_channel(rq.multiplier, np.int64)
    lam = per_channel(0 if rq.bias is None else rq.bias, np.int64)
    for name, a in (("k", mult), ("lambda", lam)):
        if a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max:
            raise TilewiseError(f"layer '{layer.name}': shift-mode {name} does not fit int32")
    return mult.astype(np.int32), lam.astype(np.int32), tuple(int(v) for v in d)


def weight_blocks(layer: Layer, s: LayerSchedule) -> bytes:
    """The weights as the schedule's tile-major blocks (module docstring)."""
    nest = layer.nest
    w = np.asarray(layer.weights, dtype=np.int8)
    kt = _tiles(s.tiling("k"))
    if nest.kind == "dwconv":
        return b"".join(np.ascontiguousarray(w[k0:k0 + n].transpose(1, 2, 0)).tobytes()
                        for k0, n in kt)
    if nest.kind == "fc":
        w = w.reshape(nest.K, 1, 1, nest.C)
    ct = _tiles(s.tiling("c"))
    return b"".join(np.ascontiguousarray(w[k0:k0 + kn, :, :, c0:c0 + cn]).tobytes()
                    for k0, kn in kt for c0, cn in ct)


def layer_constants(layer: Layer, lg: LayerGraph, s: LayerSchedule) -> LayerConstants:
    """The constant blob of a conv / depthwise / dense layer of `lg` for schedule `s`."""
    nest = layer.nest
    cb = s.const_bytes
    if cb < 4 * WORDS:
        raise TilewiseError(f"layer '{layer.name}': module '{s.module}' of {s.target} moves {cb} bytes "
                            f"of per-channel constants, tilewise's kernels need {4 * WORDS} "
                            f"(bias, multiplier, shift)")
    bias = np.asarray(layer.bias if layer.bias is not None else np.zeros(nest.K), dtype=np.int64)
    if lg.tensors[layer.inputs[0]].dtype == "uint8":
        # the kernel reads x − 128: Σw·(x − 128) + bias + 128·Σw = Σw·x + bias
        bias = bias + 128 * np.asarray(layer.weights, dtype=np.int64).reshape(nest.K, -1).sum(axis=1)
    if bias.min(initial=0) < np.iinfo(np.int32).min or bias.max(initial=0) > np.iinfo(np.int32).max:
        raise TilewiseError(f"layer '{layer.name}': bias does not fit int32")
    w1, w2, d = _requant_words(layer)
    bias32 = bias.astype(np.int32)
    blocks = []
    for k0, n in _tiles(s.tiling("k")):
        words = np.concatenate([bias32[k0:k0 + n], w1[k0:k0 + n], w2[k0:k0 + n]]).astype("<i4")
        blocks.append(words.tobytes() + bytes(n * cb - 4 * WORDS * n))
    b = b"".join(blocks)
    w = weight_blocks(layer, s)
    assert len(w) == nest.weight_elems * nest.w_bytes
    return LayerConstants(blob=b + w, b_offset=0, w_offset=len(b), const_bytes=cb, shift_d=d)
