"""The diana_digital kernel family: DIANA's digital accelerator running conv (kernels 1/3/5/7,
padding per side up to F // 2, TFLite's asymmetric 'SAME' included; stride 1 or 2), depthwise
and dense layers, the host core requantizing what the core cannot (`c/`, copied into projects as
tw_diana/ beside tw_kernels/, whose requantization it reuses).

| binding            | op              | modes               | job (tw_diana_digital.h) | consts           | L1        |
|                    |                 |                     |                          |                  | scratch   |
|--------------------|-----------------|---------------------|--------------------------|------------------|-----------|
| conv2d_s8          | conv2d          | tflite, onnx, shift | TW_DIANA_CONV, int32 out | 12 B/ch + layout | acc_bytes |
| depthwise_s8       | depthwise       | tflite, onnx, shift | TW_DIANA_DEPTHWISE       | 12 B/ch + layout | acc_bytes |
| fully_connected_s8 | fully_connected | tflite, onnx, shift | TW_DIANA_DENSE           | 12 B/ch + layout | acc_bytes |
| *_rq (the three)   | as above        | shift               | the same, core requant   | 4 B/ch + layout  | none      |
| add_s8_rq          | add             | by tables (add.py)  | TW_DIANA_ADD             | none             | none      |

A tile: the host programs one job on the tile's int8 input (the activation memory, L1) and its
weights in the core's layout (the weight memory; constants.py), the job writes int32
accumulators (bias included) into the scratch, and the host core requantizes them in the
layer's mode with the portable kernels' tw_requant (exact for every mode: arith.py states the
int32-output decision). A shift-mode layer whose requantization is exactly the core's (clip((acc
+ bias) >> d), constants.reason) may take the *_rq binding: the job writes int8 itself.
What the job computes: arith.py (numpy) and c/tw_diana_digital.c (the functional model the host
HAL runs), tests/test_diana.py. Legality: checks.py; cost: bindings/diana_digital/cost.py.
Input channels stay whole in a tile (no partial sums across jobs); k tiles are multiples of 16
(the PE array's and the weight layout's output-channel block; the last takes the rest, its
weights padded). An add runs on the core when its tables are the core's (a + b) >> d
(add.py: the residual Adds `quantize --target diana` writes); other adds run on the host.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...templating import render as _render
from ..base import Binding, Family, LayerConstants, Precision, TileRules, per_mode
from ..portable.common import FAMILY as PORTABLE
from ..portable.common import S8, u8_offset
from ..portable.common import TEMPLATES as PORTABLE_TEMPLATES
from ..portable.weighted import requant_data, stored_pad
from . import add, arith, checks, constants

FAMILY = Family(name="diana_digital", c_dir=Path(__file__).resolve().parent / "c",
                project_dir="tw_diana", header="tw_diana_kernels.h", requires=(PORTABLE,),
                hal_headers=("tw_job_geometry.h",), jobs=("tw_diana_digital.h", "tw_diana_jobs"))
TEMPLATES = Path(__file__).resolve().parent / "templates"
#: tw_diana_digital.h job kinds
KIND = {"conv": "TW_DIANA_CONV", "dw": "TW_DIANA_DEPTHWISE", "dense": "TW_DIANA_DENSE"}


def acc_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """The tile's int32 accumulators, k_t·oy_t·ox_t·4 bytes (the host requantizes them)."""
    return 4 * np.asarray(k) * np.asarray(oy) * np.asarray(ox)


def _emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None,
          core_rq: bool = False) -> str:
    """compute() of the layer's binding (templates/diana_digital_s8.c.j2)."""
    assert consts is not None
    rq_data, nq = None, None
    if core_rq:
        _, shift, qmin, qmax = constants.core_requant(layer, lg)
        nq = dict(shift=shift, qmin=qmin, qmax=qmax)
    else:
        rq_data = requant_data(layer, consts, u8_offset(lg, layer.output))
    return _render("diana_digital_s8.c.j2", (TEMPLATES, PORTABLE_TEMPLATES),
                   kind=KIND[constants.kind(layer)], stride=layer.nest.SY,
                   pad_value=stored_pad(layer, lg), dense=layer.op == Op.FULLY_CONNECTED,
                   depthwise=layer.op == Op.DEPTHWISE, core_rq=nq, rq=rq_data)


def _rules(layer: Layer, rules: TileRules) -> TileRules:
    """Input channels whole (one job reads them all); k tiles in blocks of 16."""
    r = rules.with_whole("c", why="DIANA's digital core takes all input channels in one job")
    return replace(r, multiple=(("k", arith.BLOCK),), l3_k_step=arith.BLOCK,
                   why="DIANA's digital core takes whole input channels and k tiles of 16")


def _core_rq_check(layer: Layer, lg: LayerGraph) -> str | None:
    return checks.digital(layer, lg) or constants.reason(layer, lg)


def bindings(cost: Any) -> tuple[Binding, ...]:
    """The digital accelerator's bindings priced by `cost` (bindings/diana_digital/cost.py)."""
    common = dict(precision=Precision(S8, 8, S8), tiles=TileRules(l3_k_step=arith.BLOCK),
                  layer_rules=_rules, jobs_per_tile=1)
    out: list[Binding] = []
    for name, op, kind in (("conv2d_s8", Op.CONV2D, "conv"),
                           ("depthwise_s8", Op.DEPTHWISE, "dwconv"),
                           ("fully_connected_s8", Op.FULLY_CONNECTED, "fc")):
        out += per_mode(FAMILY, cost, name, op, ("tflite", "onnx", "shift"), kind=kind,
                        check=checks.digital, emit=_emit, consts=constants.layout(kind),
                        scratch=acc_bytes, **common)
        out += per_mode(FAMILY, replace(cost, core_requant=True), f"{name}_rq", op, ("shift",),
                        kind=kind, check=_core_rq_check, emit=partial(_emit, core_rq=True),
                        consts=constants.core_layout(kind), **common)
    out += per_mode(FAMILY, replace(cost, core_requant=True), "add_s8_rq", Op.ADD, (None,),
                    Precision(S8, 0, S8), "add", add.reason, emit=add.emit, jobs_per_tile=1)
    return tuple(out)


__all__ = ["FAMILY", "acc_bytes", "arith", "bindings"]
