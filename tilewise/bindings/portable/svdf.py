"""The SVDF binding of the portable family: LiteRT's integer SVDF as one whole-layer call.

| binding | op   | mode   | bits (x/w→y) | geometry | C                              |
|---------|------|--------|--------------|----------|--------------------------------|
| svdf_s8 | svdf | tflite | 8 → 8        | other    | tw_svdf_s8 (tw_svdf.h), 1 core |

The layer's activations are its input x and its int16 state (the second input, ir/graph.py state
tensors): network.c gives the layer the state's place in the memory plan as `a->x2`, which the
kernel updates in place and which no other buffer shares (memory/network.py), so it carries the
state to the next inference as LiteRT's variable tensor does; `tw_network_reset` zeroes it
(codegen/network_c.py). The weights (int8 feature, int16 time) and the int32 bias are static const
arrays of the layer's C. The feature matmul is the kernel's own loop (F·C MACs, then F·M for the
time weights), not the family's dense kernel: its int16 output goes into the state's strided
newest column. Cost: per MAC and per filter (bindings/pulp/cost.py `svdf_mac`, `svdf_filter`).
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import SvdfParams
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from .common import FAMILY, render

UNTILED = TileRules(l3=False, untiled=True)


def check_svdf(layer: Layer, lg: LayerGraph) -> str | None:
    p = layer.params
    if not isinstance(p, SvdfParams):
        return f"an svdf with {type(p).__name__}"
    if len(layer.inputs) != 2 or lg.tensors[layer.inputs[1]].dtype != "int16":
        return "an svdf without its int16 state as second input"
    if lg.tensors[layer.inputs[0]].dtype != "int8" or lg.tensors[layer.output].dtype != "int8":
        return "an svdf whose input or output is not int8"
    return None


def _const(layer: Layer, k: int) -> np.ndarray | None:
    name = layer.node_inputs[k]
    return None if not name else np.asarray(layer.const_inputs[name].data)


def svdf(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, SvdfParams)
    wf, wt, bias = _const(layer, 1), _const(layer, 2), _const(layer, 3)
    assert wf is not None and wt is not None
    batch, inputs = lg.tensors[layer.inputs[0]].shape
    filters = int(wt.shape[0])
    return render("svdf.c.j2", batch=int(batch), inputs=int(inputs), filters=filters, memory=p.memory,
                  rank=p.rank, units=filters // p.rank,
                  w_feature=[int(v) for v in wf.reshape(-1)], w_time=[int(v) for v in wt.reshape(-1)],
                  bias=None if bias is None else [int(v) for v in bias.reshape(-1)],
                  x_zp=p.input_zero_point, m1=p.feature_multiplier, s1=p.feature_shift,
                  m2=p.output_multiplier, s2=p.output_shift, y_zp=p.output_zero_point)


def bindings(cost) -> tuple[Binding, ...]:
    """svdf_s8 priced by `cost` (its SVDF terms, bindings/pulp/cost.py)."""
    return tuple(per_mode(FAMILY, cost, "svdf_s8", Op.SVDF, ("tflite",), Precision(8, 0, 8), "other",
                          check_svdf, emit=svdf, whole=True, tiles=UNTILED))
