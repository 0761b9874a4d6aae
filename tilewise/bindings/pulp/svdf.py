"""The pulp family's binding of LiteRT's integer SVDF (`svdf`, golden/svdf.py): `svdf_cluster_s8`,
c/tw_pulp_svdf.h — the operands moved into L1 by DMA, the filters (the state's shift and newest
column: the feature product) and then the units (the time product, the rank reduction, the output
requantization) split over the cluster's cores, the state and the outputs moved back; bit for bit
the portable kernel's arithmetic (tw_svdf.h tw_svdf_s8, the host core's `svdf_s8`,
bindings/portable/svdf.py).

The state is the layer's second input (a->x2: its place in the memory plan, which no other buffer
shares, kept across inferences); the kernel reads it into L1 and writes it back. L1: the layer
runs untiled (kind "other"), its L1 declared as kernel scratch (`l1_bytes`, the layout of
tw_pulp_svdf.h); an SVDF whose operands do not fit the free L1 is refused by the scratch check and
stays on the host core. On the cluster only (an Arm core reads its SRAM in place: the portable
kernel). The cost model is svdf_cost.SvdfCost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...ir.params import SvdfParams
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from ..portable import svdf as portable_svdf
from .common import FAMILY, render, round4

UNTILED = TileRules(l3=False, untiled=True)


def geometry(nest: LoopNest) -> dict[str, int]:
    """An SVDF layer's sizes from its loop nest (passes/lower.py: K units, FY = rank, C features,
    FX = memory steps, the batch rows N·OY·OX)."""
    units, rank = int(nest.K), int(nest.FY)
    return dict(batch=int(nest.N * nest.OY * nest.OX), inputs=int(nest.C), units=units, rank=rank,
                filters=units * rank, memory=int(nest.FX))


def l1_bytes(batch: int, inputs: int, filters: int, memory: int, units: int, bias: bool = True) -> int:
    """tw_pulp_svdf.h's L1: w_feature, w_time, bias, state, x, y, each rounded up to 4 bytes."""
    return (round4(filters * inputs) + round4(2 * filters * memory) + (4 * units if bias else 0)
            + round4(2 * batch * filters * memory) + round4(batch * inputs) + round4(batch * units))


def scratch_bytes(nest: LoopNest, cores: int, k: Any, c: Any, oy: Any, ox: Any) -> Any:
    g = geometry(nest)
    return 0 * np.asarray(k) * np.asarray(oy) + l1_bytes(g["batch"], g["inputs"], g["filters"], g["memory"],
                                                          g["units"])


def own_dma(nest: LoopNest) -> tuple[tuple[str, int, int, int], ...]:
    """What tw_pulp_svdf moves (Binding.own_dma): in, the two weights, the bias, the state and the
    input (one 1-D transfer each); out, the state and the outputs. Counted with a bias (the
    keyword models have one; without, one transfer and 4·U bytes fewer)."""
    g = geometry(nest)
    f, m, b = g["filters"], g["memory"], g["batch"]
    ins = f * g["inputs"] + 2 * f * m + 4 * g["units"] + 2 * b * f * m + b * g["inputs"]
    return (("x", 5, 5, ins), ("y", 2, 2, 2 * b * f * m + b * g["units"]))


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The portable check, and a bias (own_dma counts its transfer)."""
    reason = portable_svdf.check_svdf(layer, lg)
    if reason is None and (len(layer.node_inputs) < 4 or not layer.node_inputs[3]):
        return "an svdf without a bias (the cluster kernel moves one)"
    return reason


def svdf(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, SvdfParams)
    wf, wt, bias = (portable_svdf._const(layer, k) for k in (1, 2, 3))
    assert wf is not None and wt is not None and bias is not None
    batch, inputs = lg.tensors[layer.inputs[0]].shape
    filters = int(wt.shape[0])
    units = filters // p.rank
    return render("svdf_cluster.c.j2", batch=int(batch), inputs=int(inputs), filters=filters, memory=p.memory,
                  rank=p.rank, units=units, w_feature=[int(v) for v in wf.reshape(-1)],
                  w_time=[int(v) for v in wt.reshape(-1)], bias=[int(v) for v in bias.reshape(-1)],
                  x_zp=p.input_zero_point, m1=p.feature_multiplier, s1=p.feature_shift,
                  m2=p.output_multiplier, s2=p.output_shift, y_zp=p.output_zero_point,
                  l1=l1_bytes(int(batch), int(inputs), filters, p.memory, units))


def bindings(cost) -> tuple[Binding, ...]:
    """svdf_cluster_s8 priced by `cost` (svdf_cost.SvdfCost)."""
    return tuple(per_mode(FAMILY, cost, "svdf_cluster_s8", Op.SVDF, ("tflite",), Precision(8, 0, 8), "other",
                          check, emit=svdf, whole=True, tiles=UNTILED, scratch=scratch_bytes, own_dma=own_dma))


__all__ = ["bindings", "geometry", "l1_bytes"]
