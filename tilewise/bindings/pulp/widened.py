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


def widen_tile(w: np.ndarray) -> np.ndarray:
    """A tile's int8 weights (k_t, c_t) as the kernel's int16 halfwords (module docstring)."""
    kt, ct = w.shape
    steps = -(-ct // STEP)
    pad = np.zeros((kt, steps * STEP), np.int16)
    pad[:, :ct] = w
    # per row and step the halves (0, 2, 1, 3): word e = (w0, w2), word o = (w1, w3)
    per = pad.reshape(kt, steps, STEP)[:, :, (0, 2, 1, 3)]
    out = []
    for k0 in range(0, kt, BLOCK):
        blk = per[k0:k0 + BLOCK]                       # (nb, steps, 4)
        out.append(np.ascontiguousarray(blk.transpose(1, 0, 2)).ravel())
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
