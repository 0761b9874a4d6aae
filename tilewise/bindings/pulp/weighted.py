"""The pulp family's int8 weighted kernels: the `compute()` of conv2d, depthwise and dense layers.

| layer op (mode: tflite, onnx, shift) | kernel (suffix: the requant variant) | golden                  |
|--------------------------------------|--------------------------------------|-------------------------|
| conv2d (FY·FX > 1)                   | tw_pulp_conv2d_s8_* (im2col + 4x2)   | golden/conv.py + requant.py |
| conv2d 1x1                           | tw_pulp_conv1x1_s8_*                 | idem                    |
| conv2d (Arm, int16 weights)          | tw_pulp_conv{2d,1x1}_s8w16_*         | idem (widened.py)       |
| depthwise (multiplier 1)             | tw_pulp_depthwise_s8_*               | idem (groups = C)       |
| fully_connected                      | tw_pulp_fully_connected_s8_*         | golden/conv.py dense_acc|
| fully_connected (Arm, int16 weights) | tw_pulp_fully_connected_s8w16_*      | idem (widened.py)       |

The variant (tflite, tflite_right, tflite_single, shift, shift32, onnx, onnx24, onnx_fpu:
constants.variant; `arm`: for the kernels built for Arm; `onnx24`: the onnx24 bindings'; `fpu`:
onnx mode on the Arm core's FPU) names the entry point, so the requantization mode is fixed at
compile time. The tile's requantization words
follow its biases in the per-channel block (constants.py); the output zero point, clamp and the
input pad value are as the tensors are stored (uint8 biased: bindings/portable/common.py). A
layer whose output is handed to NE16 as u8 (`out_offset` 128, partition/handoff.py) writes it with
zero point and clamp + 128: the same requantization, its bytes those of x + 128 (the kernels'
`(int8_t)` store of a value in [128, 255] wraps modulo 2^8 in GCC and Clang; the kernels built for
Arm saturate to int8 and never write u8).
Templates: weighted_s8.c.j2, extended by conv2d_s8, depthwise_s8 and fully_connected_s8.c.j2.
"""

from __future__ import annotations

from typing import Any

from ...ir.layer import Layer, LayerGraph
from ..base import LayerConstants
from ..portable.common import u8_offset
from ..portable.weighted import stored_clamp, stored_pad
from . import constants
from .common import render


def output_clamp(layer: Layer, lg: LayerGraph, out_offset: int = 0) -> tuple[int, int, int]:
    """The requantization's zero point and clamp as the output is stored: int8 (a uint8 tensor as
    u − 128), + `out_offset` when it is handed off as u8 (module docstring)."""
    zp, qmin, qmax = stored_clamp(layer, u8_offset(lg, layer.output))
    return zp + out_offset, qmin + out_offset, qmax + out_offset


def _weighted(template: str, kernel: str, args: str, layer: Layer, lg: LayerGraph,
              consts: LayerConstants | None, arm: bool, out_offset: int = 0,
              onnx24: bool = False, fpu: bool = False, **data: Any) -> str:
    """A weighted kernel's compute(): `kernel`_<variant> with argument struct `args`."""
    assert consts is not None and consts.const_bytes == constants.BYTES_PER_CHANNEL
    assert not kernel.endswith("w16") or arm, "the widened kernels are built for Arm"
    assert not (arm and out_offset), "the Arm kernels saturate to int8"
    zp, qmin, qmax = output_clamp(layer, lg, out_offset)
    return render(template, kernel=f"{kernel}_{constants.variant(layer, lg, arm, onnx24, fpu)}",
                  args=args,
                  rq=dict(zero_point=zp, qmin=qmin, qmax=qmax), pad_value=stored_pad(layer, lg),
                  **data)


def conv2d_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
              arm: bool = False, out_offset: int = 0, onnx24: bool = False,
              fpu: bool = False) -> str:
    """tw_pulp_conv2d_s8 (im2col in the L1 scratch, the binding's scratch formula) or, for a 1x1
    kernel, tw_pulp_conv1x1_s8 (HWC pixels are already contiguous)."""
    im2col = layer.nest.FY * layer.nest.FX > 1
    kernel = "tw_pulp_conv2d_s8" if im2col else "tw_pulp_conv1x1_s8"
    return _weighted("conv2d_s8.c.j2", kernel, "tw_pulp_conv_args_t", layer, lg, consts, arm,
                     out_offset, onnx24, fpu, im2col=im2col)


def conv2d_s8w16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                 arm: bool = False, out_offset: int = 0, onnx24: bool = False,
                 fpu: bool = False) -> str:
    """tw_pulp_conv2d_s8w16 / conv1x1_s8w16 (Arm only): the weights widened to int16
    (widened.py conv_layout), the columns in the binding's scratch (im2col_bytes_w16)."""
    im2col = layer.nest.FY * layer.nest.FX > 1
    kernel = "tw_pulp_conv2d_s8w16" if im2col else "tw_pulp_conv1x1_s8w16"
    return _weighted("conv2d_s8.c.j2", kernel, "tw_pulp_conv_args_t", layer, lg, consts, arm,
                     out_offset, onnx24, fpu, im2col=im2col)


def depthwise_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                 arm: bool = False, out_offset: int = 0, onnx24: bool = False,
                 fpu: bool = False) -> str:
    """tw_pulp_depthwise_s8, channel multiplier 1 (checks.weighted_s8)."""
    assert layer.nest.K == layer.nest.C, f"layer '{layer.name}': multiplier passed its check"
    return _weighted("depthwise_s8.c.j2", "tw_pulp_depthwise_s8", "tw_pulp_dw_args_t", layer, lg,
                     consts, arm, out_offset, onnx24, fpu)


def fully_connected_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                       arm: bool = False, out_offset: int = 0, onnx24: bool = False,
                       fpu: bool = False) -> str:
    """tw_pulp_fully_connected_s8, one row per call."""
    return _weighted("fully_connected_s8.c.j2", "tw_pulp_fully_connected_s8", "tw_pulp_fc_args_t",
                     layer, lg, consts, arm, out_offset, onnx24, fpu)


def fully_connected_s8w16(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
                          arm: bool = False, out_offset: int = 0, onnx24: bool = False,
                          fpu: bool = False) -> str:
    """tw_pulp_fully_connected_s8w16 (Arm only): the weights widened to int16 pairs (widened.py)."""
    return _weighted("fully_connected_s8.c.j2", "tw_pulp_fully_connected_s8w16",
                     "tw_pulp_fc_args_t", layer, lg, consts, arm, out_offset, onnx24, fpu)
