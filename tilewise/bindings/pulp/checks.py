"""Legality of the pulp kernels beyond the portable family's (bindings/portable/checks.py, which
every pulp binding asks first): what the 32-bit requantization of tw_pulp_requant.h does not take.

SRDHM in 32 bits misses one product, (−2^31)·(−2^31), so a tflite multiplier of −2^31 is refused
(TFLite's QuantizeMultiplier never makes one), and a MultiplyByQuantizedMultiplier shift must
lie in [−31, 30] (the left shift and the rounding exponent stay in [0, 31]). A check returns a
noun phrase for partition's one-sentence reason, or None.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...golden.pool import _mean_scale
from ...ir.layer import Layer, LayerGraph
from ...ir.params import TfliteAddSubParams, TfliteMeanParams, TfliteMulParams
from ..portable import checks as portable
from ..portable.common import first


def tflite_multipliers(pairs: Iterable[tuple[int, int]]) -> str | None:
    """The reason (multiplier, shift) pairs cannot be MultiplyByQuantizedMultiplier'd in 32 bits."""
    for m, s in pairs:
        if int(m) == -2**31:
            return "a tflite multiplier of -2^31"
        if not -31 <= int(s) <= 30:
            return "a tflite requant shift outside [-31, 30]"
    return None


def _elementwise_pairs(layer: Layer) -> list[tuple[int, int]]:
    a = layer.params
    if isinstance(a, TfliteAddSubParams):
        return [*zip(a.input_multipliers, a.input_shifts), (a.output_multiplier, a.output_shift)]
    assert isinstance(a, TfliteMulParams)
    return [(a.output_multiplier, a.output_shift)]


def elementwise_s8(layer: Layer, lg: LayerGraph) -> str | None:
    """tflite add / sub / mul of two same-shaped int8 (or biased uint8) tiles."""
    return first(portable.elementwise_s8(layer, lg), tflite_multipliers(_elementwise_pairs(layer)))


def gap_tflite(layer: Layer, lg: LayerGraph) -> str | None:
    """TFLite's mean over H and W, 1/pixels folded into its multiplier."""
    reason = portable.gap_tflite(layer, lg)
    if reason is not None:
        return reason
    a, nest = layer.params, layer.nest
    assert isinstance(a, TfliteMeanParams)
    return tflite_multipliers([_mean_scale(int(a.multiplier), int(a.shift), nest.IY * nest.IX)])
