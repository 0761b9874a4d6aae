"""The portable family's int8 weighted kernels: the `compute()` of conv2d, depthwise and dense
layers, and the requantization helper they share.

| layer op (mode: tflite, onnx, shift) | kernel                      | golden                      |
|--------------------------------------|-----------------------------|-----------------------------|
| conv2d (FY·FX > 1)                   | tw_conv2d_s8 (im2col + 4x2) | golden/conv.py + requant.py |
| conv2d 1x1                           | tw_conv1x1_s8               | idem                        |
| depthwise (multiplier 1)             | tw_depthwise_s8             | idem (groups = C)           |
| fully_connected                      | tw_fully_connected_s8       | golden/conv.py dense_acc    |

Depthwise layers with a channel multiplier > 1 arrive as dense conv2d (passes/lower.py). Each
kernel reads its per-channel constants from the tile's `b` block (constants.py: bias, then two
requant words per channel) through `requant(b, k_t, k0)`, the tw_requant_t of the layer's
requantization mode; shift mode's right shifts d are an array of the layer file (SHIFT_D).
Templates: weighted_s8.c.j2 (requant.c.j2) extended by conv2d_s8, depthwise_s8 and
fully_connected_s8.c.j2.

uint8 (common.py): conv, depthwise and dense are exact on the biased storage in every requant
mode — the input zero point (the pad value) is lowered by 128, the bias raised by 128·Σw
(constants.py), and the output zero point and clamp lowered by 128:
Σw·((x−128) − (zp−128)) = Σw·(x − zp), and clamp(r + zp − 128, lo − 128, hi − 128) =
clamp(r + zp, lo, hi) − 128.
"""

from __future__ import annotations

from typing import Any

from ...ir.layer import Layer, LayerGraph
from ..base import LayerConstants
from .common import render, u8_offset


def stored_clamp(layer: Layer, out_off: int = 0) -> tuple[int, int, int]:
    """The output zero point and clamp of the layer's requantization as the output is stored
    (`out_off` 128 for uint8)."""
    rq = layer.requant
    assert rq is not None
    zp, qmin, qmax = int(rq.zero_point) - out_off, int(rq.qmin) - out_off, int(rq.qmax) - out_off
    assert -128 <= qmin <= qmax <= 127, f"layer '{layer.name}': clamp passed checks.weighted_s8"
    return zp, qmin, qmax


def stored_pad(layer: Layer, lg: LayerGraph) -> int:
    """The pad value (input zero point) as the input is stored."""
    pad = int(layer.pad_value) - u8_offset(lg, layer.inputs[0])
    assert -128 <= pad <= 127, f"layer '{layer.name}': zero point passed checks.weighted_s8"
    return pad


def requant_data(layer: Layer, consts: LayerConstants, out_off: int = 0) -> dict[str, Any]:
    """The data of `requant()` (requant.c.j2): the layer's requantization mode, its output zero
    point and clamp as the output is stored (`out_off` 128 for uint8), shift and adc mode's d (s)
    per channel, adc mode's divisor and ADC range, div mode's m, D and rounding."""
    rq = layer.requant
    assert rq is not None
    zp, qmin, qmax = stored_clamp(layer, out_off)
    shift_d = None
    if rq.mode in ("shift", "adc"):
        shift_d = dict(consts.extra).get("SHIFT_D")
        assert shift_d is not None and len(shift_d) == layer.nest.K
    return dict(mode=str(rq.mode), single=rq.rounding == "single", zero_point=zp, qmin=qmin,
                qmax=qmax, shift_d=shift_d, divisor=int(rq.divisor), adc_min=int(rq.adc_min),
                adc_max=int(rq.adc_max), post_mult=int(rq.post_multiplier), trunc=rq.division == "trunc")


def _weighted(template: str, layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
              **data: Any) -> str:
    """A weighted kernel's compute() with its requant() and input pad value."""
    assert consts is not None
    rq = requant_data(layer, consts, u8_offset(lg, layer.output))
    return render(template, rq=rq, pad_value=stored_pad(layer, lg), acc_bits=layer.acc_bits,
                  **data)


def conv2d_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_conv2d_s8 (im2col in the L1 scratch, the binding's scratch formula) or, for a 1x1
    kernel, tw_conv1x1_s8 (HWC pixels are already contiguous)."""
    im2col = layer.nest.FY * layer.nest.FX > 1
    return _weighted("conv2d_s8.c.j2", layer, lg, consts, im2col=im2col,
                     kernel="tw_conv2d_s8" if im2col else "tw_conv1x1_s8")


def depthwise_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_depthwise_s8, channel multiplier 1 (checks.weighted_s8)."""
    assert layer.nest.K == layer.nest.C, f"layer '{layer.name}': multiplier passed its check"
    return _weighted("depthwise_s8.c.j2", layer, lg, consts)


def fully_connected_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_fully_connected_s8, one row per call."""
    return _weighted("fully_connected_s8.c.j2", layer, lg, consts)
