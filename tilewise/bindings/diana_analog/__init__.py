"""The diana_analog kernel family: DIANA's analog in-memory core running ternary conv2d layers
through its 6-bit ADC chain (`c/`, copied into projects as tw_diana_analog/ beside tw_kernels/, whose tile flags its
layer files use).

| binding          | op     | mode | bits (x/w→y) | job (tw_diana_analog.h)       | consts           |
|------------------|--------|------|--------------|-------------------------------|------------------|
| conv2d_analog_s8 | conv2d | adc  | 8x8→8        | one conv of the tile, all C   | 16 B/channel + 2-bit weights |

A tile: core 0 programs one job — the input tile with all its channels, the tile's k_t columns
of ternary weights (2-bit codes, arith.pack), the per-channel block [bias | m | a | s] — with the
layer's ADC divisor and range, dispatches it and waits; the job writes the int8 output tile
(the ADC and the digital multiply-add-shift are the core's output stage: no CPU pass). What a job
computes: arith.py (numpy, built on golden/requant.py's adc mode) and c/tw_diana_analog.c (the
functional model the host HAL runs), tests/test_diana_analog.py. Legality: checks.py (ternary
weights, 1/3/5/7 'same', stride 1 or 2, the ADC chain, element counts divisible by 4, the 1152 ×
512 array); constants: constants.py; cost: bindings/diana_analog/cost.py. Input channels stay
whole in a tile (a column sums all FY·FX·C rows; no partial sums leave the array). A ternary
layer the core refuses runs on the CPU's portable kernels, whose requantization has the adc mode
too (tw_requant.h TW_RQ_ADC).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...templating import render as _render
from ..base import Binding, Family, LayerConstants, Precision, TileRules, per_mode
from ..portable.common import FAMILY as PORTABLE
from ..portable.common import S8, u8_offset
from ..portable.common import TEMPLATES as PORTABLE_TEMPLATES
from ..portable.weighted import stored_clamp, stored_pad
from . import arith, checks, constants

FAMILY = Family(name="diana_analog", c_dir=Path(__file__).resolve().parent / "c",
                project_dir="tw_diana_analog", header="tw_diana_analog.h",
                requires=(PORTABLE,), hal_headers=("tw_job_geometry.h",),
                jobs=("tw_diana_analog.h", "tw_analog_jobs"))
TEMPLATES = Path(__file__).resolve().parent / "templates"


def _emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """compute() of the layer's analog job (templates/diana_analog_s8.c.j2)."""
    assert consts is not None and consts.const_bytes == constants.BYTES_PER_CHANNEL
    n, rq = layer.nest, layer.requant
    assert rq is not None and rq.mode == "adc", f"layer '{layer.name}': passed checks.analog"
    zp, qmin, qmax = stored_clamp(layer, u8_offset(lg, layer.output))
    return _render("diana_analog_s8.c.j2", (TEMPLATES, PORTABLE_TEMPLATES), fy=n.FY, fx=n.FX,
                   stride=n.SY, pad_value=stored_pad(layer, lg),
                   adc=dict(divisor=int(rq.divisor), lo=int(rq.adc_min), hi=int(rq.adc_max)),
                   rq=dict(zero_point=zp, qmin=qmin, qmax=qmax))


def _rules(layer: Layer, rules: TileRules) -> TileRules:
    return rules.with_whole("c", why="a column of the analog array sums all input channels")


def bindings(cost: Any) -> tuple[Binding, ...]:
    """The analog core's binding priced by `cost` (bindings/diana_analog/cost.py
    `AnalogKernels`)."""
    return tuple(per_mode(FAMILY, cost, "conv2d_analog_s8", Op.CONV2D, ("adc",),
                          Precision(S8, 8, S8), "conv", checks.analog, emit=_emit,
                          consts=constants.LAYOUT, tiles=TileRules(l3_k_step=4),
                          layer_rules=_rules, jobs_per_tile=1))


__all__ = ["FAMILY", "arith", "bindings"]
