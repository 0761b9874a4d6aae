"""The dense layer with int16 weights laid out for the Arm core's smlad (issue 31).

Built for Arm only (ARMv7E-M: stm32h7, stm32l4r5): tw_pulp_fully_connected_s8w16_<v>
(c/tw_pulp_linear.c) reads each step's weights as int16 pairs ready for smlad and unpacks only the
input word, as X-CUBE-AI lays out its weights at code generation. This module owns that layout and
the binding's constants:

- per k tile and c tile of the schedule (as the portable weight blocks), the tile's rows in blocks
  of 4 (the last block the k_t mod 4 rows left, nb rows); a block's words step by step (4 inputs a
  step, S = ceil(c_t / 4) steps), row by row: for row j at step s the words
  (w[j][4s], w[j][4s + 2]) and (w[j][4s + 1], w[j][4s + 3]) as (low, high) int16 halves — the
  order sxtb16 leaves an input word in (lanes 0, 2, then rotated by 8 lanes 1, 3; CMSIS-NN's
  read_and_pad order); inputs past c_t are zero weights;
- so a tile's weights are 2·k_t·round4(c_t) bytes, twice the int8 layout and more: the layout
  says so to the plan through ConstLayout.w_bits = 16 and c_block = 4 (LoopNest.w_bits /
  w_c_block: the flash the layer links, analyze's constants bytes);
- the per-channel blocks (bias, requantization words) are the pulp layout's (constants.py).

`check`: the pulp layout's reasons, and c ≥ 4 (the kernel's last partial step reads the input word
ending at the row's last value, tw_pulp_arm_tail). Whether a layer takes this form or the int8 one
is the cost model's choice (same key, two bindings: partition/choose.py keeps the cheaper); the
flash both cost is in analyze's constants.

The conv and 1x1 conv (tw_pulp_conv{2d,1x1}_s8w16_<v>, c/tw_pulp_conv.c; `conv_layout`): the
weight matrix K × (FY·FX·C) in the im2col order (the pulp layout's k.fy.fx.c rows), per k tile
its rows in blocks of 2 (an odd k_t's last block with a zero row: ConstLayout.k_block = 2), a
block's words step by step (4 values a step): (w[k][4s], w[k][4s + 2]), (w[k + 1][4s],
w[k + 1][4s + 2]), (w[k][4s + 1], w[k][4s + 3]), (w[k + 1][4s + 1], w[k + 1][4s + 3]) — the even
halves of both channels, then their odd halves, the order of the kernel's 2x4 MatMul
(tw_pulp_matmul_arm.h tw_pulp_arm_mm2x4w). A kernel row's FX·C values are a multiple of 4
(`conv_check`: every kernel row is whole steps, unpacked in place, no partial step: any C a
multiple of 4, and KWS's first conv of 1 channel and 4 columns), the reduction is never tiled
(the binding's tile rule), so a tile's weights are 2·round2(k_t)·FY·FX·C bytes.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ..base import ConstLayout, LayerConstants
from ..portable import constants as portable
from . import constants

#: the layout's name (the C template and the builder agree on it)
WEIGHT_LAYOUT = "k.c.w16"
#: output channels per block, inputs per step
BLOCK, STEP = 4, 4


def widen_tile(w: np.ndarray, block: int = BLOCK, halves_first: bool = False) -> np.ndarray:
    """A tile's int8 weights (k_t, c_t) as the kernel's int16 halfwords (module docstring): rows
    in blocks of `block`, per step each row's words (e, o) — or, `halves_first` (the conv's
    layout), the block's even words then its odd words, the last block padded with zero rows."""
    kt, ct = w.shape
    steps = -(-ct // STEP)
    rows = -(-kt // block) * block if halves_first else kt
    pad = np.zeros((rows, steps * STEP), np.int16)
    pad[:kt, :ct] = w
    # per row and step the halves (0, 2, 1, 3): word e = (w0, w2), word o = (w1, w3)
    per = pad.reshape(rows, steps, STEP)[:, :, (0, 2, 1, 3)]
    out = []
    for k0 in range(0, rows, block):
        blk = per[k0:k0 + block]                       # (nb, steps, 4)
        if halves_first:                               # (steps, e / o word, nb, 2 halves)
            blk = blk.reshape(len(blk), steps, 2, 2).transpose(1, 2, 0, 3)
        else:                                          # (steps, nb, 4)
            blk = blk.transpose(1, 0, 2)
        out.append(np.ascontiguousarray(blk).ravel())
    return np.concatenate(out).astype("<i2")


def weight_blocks(layer: Layer, s) -> bytes:
    """The schedule's weight blocks (per k tile, per c tile) widened (module docstring)."""
    nest = layer.nest
    w = np.asarray(layer.weights, dtype=np.int8).reshape(nest.K, nest.C)
    kt = portable.tile_ranges(s.tiling("k"))
    ct = portable.tile_ranges(s.tiling("c"))
    return b"".join(widen_tile(w[k0:k0 + kn, c0:c0 + cn]).tobytes()
                    for k0, kn in kt for c0, cn in ct)


def layer_constants(layer: Layer, lg: LayerGraph, s, arm: bool = True,
                    fpu: bool = False) -> LayerConstants:
    """The blob: the pulp per-channel blocks, then the widened weight blocks."""
    words = constants.words(layer, lg, arm, False, fpu)
    return portable.blob(layer, lg, s, (np.stack(words, axis=1),), weight_blocks(layer, s))


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The pulp layout's reasons, and the kernel's c ≥ 4."""
    reason = constants.check(layer, lg)
    if reason is None and layer.nest.C < STEP:
        reason = (f"layer '{layer.name}' has {layer.nest.C} inputs (the widened dense kernel "
                  f"takes 4 or more)")
    return reason


def layout(fpu: bool = False) -> ConstLayout:
    """The widened dense layout (built for Arm: the Arm requant variants; `fpu`: onnx mode on the
    core's FPU, constants.layout)."""
    return ConstLayout(bytes_per_channel=constants.BYTES_PER_CHANNEL, weight_layout=WEIGHT_LAYOUT,
                       build=partial(layer_constants, arm=True, fpu=fpu), check=check,
                       c_block=STEP, w_bits=16)


#: the widened conv's layout name, output channels per block
CONV_LAYOUT, CONV_BLOCK = "k.fy.fx.c.w16", 2


def conv_weight_blocks(layer: Layer, s) -> bytes:
    """The conv's weights per k tile widened (module docstring): the reduction (FY·FX·C, never
    tiled) in the im2col order."""
    nest = layer.nest
    w = np.asarray(layer.weights, dtype=np.int8).reshape(nest.K, nest.FY * nest.FX * nest.C)
    return b"".join(widen_tile(w[k0:k0 + kn], CONV_BLOCK, halves_first=True).tobytes()
                    for k0, kn in portable.tile_ranges(s.tiling("k")))


def conv_constants(layer: Layer, lg: LayerGraph, s, fpu: bool = False) -> LayerConstants:
    """The blob: the pulp per-channel blocks, then the widened conv weight blocks."""
    words = constants.words(layer, lg, True, False, fpu)
    return portable.blob(layer, lg, s, (np.stack(words, axis=1),), conv_weight_blocks(layer, s))


def conv_check(layer: Layer, lg: LayerGraph) -> str | None:
    """The pulp layout's reasons, and FX·C a multiple of 4 (whole steps per kernel row)."""
    reason = constants.check(layer, lg)
    nest = layer.nest
    if reason is None and (nest.FX * nest.C) % STEP:
        reason = (f"layer '{layer.name}' has kernel rows of {nest.FX}x{nest.C} values (the "
                  f"widened conv takes a multiple of 4)")
    return reason


def conv_layout(fpu: bool = False) -> ConstLayout:
    """The widened conv layout (built for Arm; `fpu`: onnx mode on the core's FPU)."""
    return ConstLayout(bytes_per_channel=constants.BYTES_PER_CHANNEL, weight_layout=CONV_LAYOUT,
                       build=partial(conv_constants, fpu=fpu), check=conv_check,
                       w_bits=16, k_block=CONV_BLOCK)
