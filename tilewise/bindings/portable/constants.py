"""The portable family's constants layout: a weighted layer's blob, as its schedule moves it.

Contract: tilewise/schedule/space.py ("DMA byte accounting"). A layer's constants are one byte
blob, 4-byte aligned where it starts:

    [ per-channel blocks: one per k tile, k_t · const_bytes bytes each ][ weight blocks ]

- per-channel block of a k tile (the `b` operand, one DMA chunk): three int32 arrays of k_t
  entries — bias (with −zp_x·Σw folded in, ir/layer.py; + 128·Σw when the input is uint8, which
  the generated C stores biased as x − 128, common.py "uint8"), then two requant words
  (BYTES_PER_CHANNEL = 12 bytes per channel, the binding's `ConstLayout.bytes_per_channel`):
    tflite:  M0 (Q31 multiplier), shift (exponent, + = left)                     (tw_requant.h)
    shift:   k (multiplier), λ (added after the multiply); the right shifts d (one per channel,
             NEMO/DORY's per-channel requant) are a constant array of the layer's C file
    div:     κ, λ (NEMO's chain, ir/requant.py); m, D and the rounding are constants of the
             layer's C file (requant.c.j2)
    adc:     m, a (DIANA's digital stage after the ADC); s per channel as shift mode's d, the
             per-layer divisor D and ADC range constants of the layer's C file (requant.c.j2)
    onnx:    mult = M·2^7, shift r of the float32 scale M·2^E (golden/onnx_requant_exact.py
             `constants`: onnxruntime's float32 requantization in integers, tw_onnx_requant_exact.h)
  Block of the k tile starting at channel k0: offset k0 · const_bytes.
- weight blocks (the `w` operand, one DMA chunk per (k tile, c tile)), int8:
    conv   [k_t][FY][FX][c_t] at k0·FY·FX·C + c0·k_t·FY·FX    (the natural [K][FY][FX][C] layout
           when C is not tiled: c0 = 0, c_t = C)
    fc     [k_t][c_t] at k0·C + c0·k_t                         (natural [K][C] when C is whole)
    dwconv [FY][FX][k_t] at k0·FY·FX                           (channel-last per k tile, as
           tw_depthwise_s8 reads it)
The blob's size is exactly the layer's constant bytes in the memory plan (weights + K·12,
ir/operands.py `const_bytes`), so an L3-streamed copy fits its planned L2 buffer. `check`
gives the reason a layer's constants cannot take this layout (partition asks it before anything is
scheduled); `layer_constants` builds the blob once `check` has passed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...golden import onnx_requant_exact
from ...ir.layer import Layer, LayerGraph
from ...ir.operands import weights_bytes
from ..base import ConstLayout, LayerConstants

#: int32 words per channel the portable kernels read (bias + two requant words)
WORDS = 3
BYTES_PER_CHANNEL = 4 * WORDS
INT32 = np.iinfo(np.int32)


def tile_ranges(t) -> list[tuple[int, int]]:
    """(start, size) of every tile along a schedule's Tiling `t`."""
    return [(s, min(t.tile, t.size - s)) for s in range(0, t.size, t.tile)]


def _per_channel(layer: Layer, a, dtype) -> np.ndarray | None:
    a = np.atleast_1d(np.asarray(a))
    k = layer.nest.K
    if a.size not in (1, k):
        return None
    return np.broadcast_to(a, (k,)).astype(dtype)


def kernel_bias(layer: Layer, lg: LayerGraph) -> np.ndarray:
    """int64 bias as the kernel adds it: + 128·Σw when the input is uint8 (the kernel reads
    x − 128: Σw·(x − 128) + bias + 128·Σw = Σw·x + bias)."""
    nest = layer.nest
    bias = np.asarray(layer.bias if layer.bias is not None else np.zeros(nest.K), dtype=np.int64)
    if lg.tensors[layer.inputs[0]].dtype == "uint8":
        bias = bias + 128 * np.asarray(layer.weights, dtype=np.int64).reshape(nest.K, -1).sum(axis=1)
    return bias


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The reason the layer's constants cannot be laid out for the portable kernels, or None."""
    rq = layer.requant
    if rq is None:
        return "a layer without requantization"
    k = layer.nest.K
    words = (rq.scale,) if rq.mode == "onnx" else (rq.multiplier, rq.shift)
    if any(_per_channel(layer, a, np.int64) is None for a in words):
        return f"a requantization with {np.size(words[0])} channels for {k} outputs"
    if rq.mode == "onnx":
        scale = np.asarray(rq.scale, np.float32)
        if not bool((np.isfinite(scale) & (scale >= 0)).all()):
            return "an onnx requantization scale that is not a finite float32 >= 0"
    if rq.mode == "div":
        lam = 0 if rq.bias is None else rq.bias
        for name, a in (("kappa", rq.multiplier), ("lambda", lam)):
            v = _per_channel(layer, a, np.int64)
            if v is None or v.min() < INT32.min or v.max() > INT32.max:
                return f"a div-mode {name} that does not fit int32"
        if not 0 < rq.divisor < 2 ** 63:
            return f"a div-mode divisor of {rq.divisor}"
    if rq.mode in ("shift", "adc"):
        d = _per_channel(layer, rq.shift, np.int64)
        if d.min() < 0 or d.max() > 63:
            return f"{rq.mode}-mode right shifts outside 0..63"
        lam = 0 if rq.bias is None else rq.bias
        for name, a in (("k", rq.multiplier), ("lambda", lam)):
            v = _per_channel(layer, a, np.int64)
            if v is None or v.min() < INT32.min or v.max() > INT32.max:
                return f"a {rq.mode}-mode {name} that does not fit int32"
    if rq.mode == "adc" and not (0 < rq.divisor <= INT32.max and INT32.min <= rq.adc_min
                                 <= rq.adc_max <= INT32.max):
        return f"an ADC divisor of {rq.divisor} or range [{rq.adc_min}, {rq.adc_max}] beyond int32"
    bias = kernel_bias(layer, lg)
    if bias.min(initial=0) < INT32.min or bias.max(initial=0) > INT32.max:
        return "a bias that does not fit int32"
    return None


def _requant_words(layer: Layer) -> tuple[np.ndarray, np.ndarray, tuple[int, ...] | None]:
    """The two per-channel requant words (as uint32 bit patterns) and shift mode's d per channel
    (`check` passed)."""
    rq = layer.requant
    assert rq is not None
    if rq.mode == "tflite":
        return (_per_channel(layer, rq.multiplier, np.int32), _per_channel(layer, rq.shift, np.int32),
                None)
    if rq.mode == "onnx":
        mult, shift = onnx_requant_exact.constants(_per_channel(layer, rq.scale, np.float32))
        return mult.astype(np.int32), shift.astype(np.int32), None
    mult = _per_channel(layer, rq.multiplier, np.int64)
    lam = _per_channel(layer, 0 if rq.bias is None else rq.bias, np.int64)
    if rq.mode == "div":
        return mult.astype(np.int32), lam.astype(np.int32), None
    d = _per_channel(layer, rq.shift, np.int64)
    return mult.astype(np.int32), lam.astype(np.int32), tuple(int(v) for v in d)


#: the two per-channel requant words and shift mode's d (families reusing the portable layout)
requant_words = _requant_words


def weight_blocks(layer: Layer, s, channel_major: bool = False) -> bytes:
    """The weights as the schedule's tile-major blocks (module docstring); `channel_major`: a
    depthwise k tile as [k_t][FY][FX] (each channel's taps together) instead of [FY][FX][k_t]."""
    nest = layer.nest
    w = np.asarray(layer.weights, dtype=np.int8)
    kt = tile_ranges(s.tiling("k"))
    if nest.kind == "dwconv":
        w = w.reshape(nest.K, nest.FY, nest.FX)
        order = (0, 1, 2) if channel_major else (1, 2, 0)
        return b"".join(np.ascontiguousarray(w[k0:k0 + n].transpose(order)).tobytes()
                        for k0, n in kt)
    if nest.kind == "fc":
        w = w.reshape(nest.K, 1, 1, nest.C)
    ct = tile_ranges(s.tiling("c"))
    return b"".join(np.ascontiguousarray(w[k0:k0 + kn, :, :, c0:c0 + cn]).tobytes()
                    for k0, kn in kt for c0, cn in ct)


def blob(layer: Layer, lg: LayerGraph, s, words: tuple[np.ndarray, ...], weights: bytes,
         extra: tuple = (), bias: np.ndarray | None = None) -> LayerConstants:
    """The constant blob of per-channel blocks [bias | words[0] | words[1] ...] (k_t int32 each,
    per k tile of schedule `s`; a (K, m) array of words gives k_t·m int32 channel by channel) and
    the weight blocks `weights`: the layout of every family that moves a k tile's per-channel data
    as one block. `bias`: the kernel's own bias (default `kernel_bias`)."""
    bias32 = (kernel_bias(layer, lg) if bias is None else np.asarray(bias)).astype(np.int32)
    blocks = [np.concatenate([bias32[k0:k0 + n], *(a[k0:k0 + n].ravel() for a in words)])
              .astype("<i4").tobytes() for k0, n in tile_ranges(s.tiling("k"))]
    b = b"".join(blocks)
    assert len(weights) == weights_bytes(replace(layer.nest, w_c_block=s.nest.w_c_block,
                                                 w_bits=s.nest.w_bits,
                                                 w_k_block=s.nest.w_k_block,
                                                 w_rows=s.nest.w_rows))
    return LayerConstants(blob=b + weights, b_offset=0, w_offset=len(b),
                          const_bytes=4 * (1 + sum(int(np.prod(a.shape[1:])) for a in words)),
                          extra=extra)


def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The constant blob of a conv / depthwise / dense layer of `lg` for schedule `s` (`check`
    passed)."""
    w1, w2, d = _requant_words(layer)
    extra = (("SHIFT_D", d),) if d is not None else ()
    return blob(layer, lg, s, (w1, w2), weight_blocks(layer, s), extra)


def layout(weights: str) -> ConstLayout:
    """The portable constants layout with weight layout `weights` ("k.fy.fx.c" or "fy.fx.k")."""
    return ConstLayout(bytes_per_channel=BYTES_PER_CHANNEL, weight_layout=weights,
                       build=layer_constants, check=check)
