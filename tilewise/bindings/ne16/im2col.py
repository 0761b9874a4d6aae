"""A conv NE16 does not take natively (a kernel other than 3×3 / 1×1, a stride or padding its
modes lack: checks.py) run on NE16 as a 1×1 job over the cluster's u8 im2col of the tile — the
*_im2col bindings (one per input-channel padding `C_PADS`), as PULP-NN's and DORY's cluster
kernels run any conv as a matrix product over an im2col buffer (seed 004 §3.3), with NE16 as the
matrix engine and the cluster's one-mulh requantization (requant.py) pipelined with its row jobs
(pipeline.py).

- The im2col (tw_ne16_im2col_u8_part, c/tw_ne16_kernels.c): per output pixel of the tile its
  FY × FX taps, each c_pad bytes — the C input channels as u8 (x + 128; the pad value outside
  the tile), then c_pad − C bytes of any value (left as they are; the pad value in a pixel with
  padding, which is filled whole first) — so a pixel is one NE16 input "pixel" of FY·FX·c_pad
  channels, and the job a 1×1 conv over the tile's output rows and columns, stride 1, unpadded.
- The weights: [K, FY, FX, C] with C padded to c_pad by zero weights, packed as the 1×1 job's
  (arith.pack of [K, 1, 1, FY·FX·c_pad]). NE16 packs 16 input channels per block, and the plan
  counts the weights as K·⌈C/c_pad⌉·c_pad·FY·FX bytes (ConstLayout.c_block = c_pad), so c_pad is
  the least of `C_PADS` making FY·FX·c_pad a multiple of 16: every packed byte is a counted byte
  (kws_dscnn's 10×4 conv of one channel: c_pad 2, 80 channels per pixel). A zero weight adds
  nothing: stored 128 with the offset −128, its column's value is free.
- Cost (`Ne16Im2col`): NE16's 1×1 job steps and the row-job pipeline of Ne16Kernels on the nest
  of that job (C → FY·FX·c_pad, 1×1, stride 1), with the conversion replaced by the im2col's
  cycles per tap and core, fitted on GVSoC (its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ..base import ConstLayout, LayerConstants
from ..cost_terms import Term, ident
from ..portable import checks as portable_checks
from ..portable import constants as portable
from ..pulp import constants as pulp
from . import arith, checks, pipeline, requant
from .constants import check as const_check
from .constants import job_bias
from .cost import Ne16Kernels, converters

#: the input-channel paddings of the *_im2col bindings (one binding each: ConstLayout.c_block)
C_PADS = (1, 2, 4, 8, 16)


def c_pad(nest: LoopNest) -> int:
    """The least padding of C making FY·FX·c_pad a multiple of NE16's 16-channel block."""
    return next(b for b in C_PADS if nest.FY * nest.FX * (-(-nest.C // b) * b) % arith.TP_IN == 0)


def cols(nest: LoopNest, c=None):
    """Channels of the 1×1 job: FY·FX taps of C padded to c_pad (numpy-friendly in c)."""
    b = c_pad(nest)
    c = nest.C if c is None else np.asarray(c)
    return nest.FY * nest.FX * (-(-c // b) * b)


def job_nest(nest: LoopNest) -> LoopNest:
    """The nest of the 1×1 job over the im2col."""
    return replace(nest, FY=1, FX=1, SY=1, SX=1, pads=(0, 0, 0, 0), C=int(cols(nest)),
                   IY=nest.OY, IX=nest.OX, w_c_block=1)


def reason(layer: Layer, lg: LayerGraph, pad: int) -> str | None:
    """None when the binding of padding `pad` takes the layer (module docstring)."""
    if layer.op != Op.CONV2D:
        return "not a conv2d"
    r = portable_checks.weighted_s8(layer, lg) or checks.weight_bits(layer)
    if r is not None:
        return r
    n = layer.nest
    if n.w_bits != 8:
        return "weights narrower than 8 bits (the im2col bindings pack 8)"
    if checks.ne16(layer, lg) is None:
        return "NE16 takes the conv as it is (the *_s8 bindings)"
    if n.FY * n.FX == 1:
        return "a 1×1 kernel"
    if c_pad(n) != pad:
        return f"the im2col binding of {c_pad(n)}-channel taps"
    return requant.reason(layer, lg)


def scratch(nest: LoopNest, cores: int, k, c, oy, ox):
    """The tile's int32 accumulator buffers (pipeline.py `acc_words`) and its u8 im2col."""
    k, oy, ox = (np.asarray(v) for v in (k, oy, ox))
    return 4 * pipeline.acc_words(k, oy, ox) + (oy * ox * cols(nest, c) + 3) // 4 * 4


def _weights(layer: Layer) -> np.ndarray:
    """[K, 1, 1, FY·FX·c_pad]: the taps' weights, C padded with zeros."""
    n = layer.nest
    w = np.asarray(layer.weights, np.int64).reshape(n.K, n.FY, n.FX, n.C)
    b = c_pad(n)
    w = np.pad(w, ((0, 0), (0, 0), (0, 0), (0, -(-n.C // b) * b - n.C)))
    return w.reshape(n.K, 1, 1, -1)


def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The bias block, the one-mulh words (requant.mulh_words) and the 1×1 job's packed weights,
    k tile by k tile of schedule `s`."""
    w = _weights(layer)
    packed = b"".join(arith.pack(w[k0:k0 + n], 8).tobytes()
                      for k0, n in portable.tile_ranges(s.tiling("k")))
    return portable.blob(layer, lg, s, (np.stack(requant.mulh_words(layer, lg), axis=1),),
                         packed, bias=job_bias(layer, lg))


def layout(pad: int) -> ConstLayout:
    return ConstLayout(bytes_per_channel=pulp.BYTES_PER_CHANNEL, weight_layout="ne16",
                       build=layer_constants, check=const_check, c_block=pad)


@dataclass(frozen=True)
class Ne16Im2col(Ne16Kernels):
    """Ne16Kernels on the 1×1 job over the im2col (module docstring); in place of the conversion
    the im2col's `im2col` cycles per tap (output pixel × FY × FX) and core (the cores but core
    0: cost.py `converters`), and `convert` per input byte of a tap past its first.

    `im2col` 8.1: fitted on GVSoC (pulp-open-ne16, kws_dscnn's first layer, 10×4 stride 2 of
    one channel, 125 output pixels as one tile on 8 cores, the C of c/tw_ne16_kernels.c: a
    pixel's taps inside the tile in two nested hardware loops of 4 cycles per tap, a pixel
    with padding filled with the pad value word by word first): the layer measured 37,748
    cycles, 32,681 with the im2col call left out (the rest predicted 32,139), so the im2col took
    5,067 cycles for 5,000 taps, 8.1 per tap and core. One geometry: the per-tap figure is not
    measured at other kernel sizes, and taps wider than one channel (a C byte loop) are priced
    at `convert` per byte past the first (measured for the word-wise conversion,
    tests/test_ne16_gvsoc.py), not measured."""

    im2col: float = 8.1

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        def scaled(f):
            return lambda s, fi, la: f(cols(nest, s), fi, la)

        def wider(s, fi, la):
            return np.maximum(np.asarray(s) - 1, 0).astype(np.float64)

        base = Ne16Kernels.terms(replace(self, convert=0.0), job_nest(nest), cores)
        out = [replace(t, factors=tuple((d, scaled(f) if d == "c" else f) for d, f in t.factors))
               for t in base]
        p, taps = converters(cores), nest.FY * nest.FX
        return (*out,
                Term(self.im2col * taps / p, (("n", ident), ("oy", ident), ("ox", ident)), "im2col"),
                Term(self.convert * taps / p, (("n", ident), ("oy", ident), ("ox", ident),
                                               ("c", wider)), "im2col"))
