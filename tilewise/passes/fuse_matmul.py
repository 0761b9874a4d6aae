"""Fuse a MatMul of two activations with the requantization that reads its int32 sums.

Deeploy's and QuantLab's attention writes MatMul → RequantShift (the scores Q·Kᵀ, the context
softmax·V): lowered, a `matmul` layer whose int32 output only a `requant` layer reads. This pass
makes them one `matmul` layer carrying that Requant (`Layer.requant`, as conv / dense layers carry
theirs), so a kernel requantizes each sum as it forms it and the int32 tensor never exists in
memory (the cluster kernel bindings/pulp/mm_act.py; the portable tw_int_matmul applies it too).

Fused when: the matmul has no requant yet, its output is read by exactly one layer, a shift or
div `requant` (golden/int_ops.py `requant`), whose values are one per tensor or one per column
(the output's last axis, as golden/requant.py apply_requant broadcasts channels last), and the
int32 sums are not a network output. The golden model then computes apply_requant(a @ b)
(golden/layers.py): the same numbers as the two layers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir.layer import Layer, LayerGraph
from ..ir.ops import Op
from ..ir.params import RequantParams
from ..ir.tensor import dtype_bits
from .readers import readers


def _per_column(p: RequantParams, rank: int) -> bool:
    """One requantization per tensor, or one per index of the last axis."""
    rq = p.requant
    sizes = {np.asarray(a).size for a in (rq.multiplier, rq.shift, 0 if rq.bias is None else rq.bias)}
    return sizes == {1} or p.axis is None or p.axis % rank == rank - 1


def fuse_matmul_requant(lg: LayerGraph) -> LayerGraph:
    """`lg` with every MatMul → requant pair of the module docstring made one matmul layer."""
    by_tensor = readers(lg)
    fused: dict[int, Layer] = {}
    dropped: set[int] = set()
    gone: set[str] = set()
    for i, mm in enumerate(lg.layers):
        if mm.op != Op.MATMUL or mm.requant is not None or mm.output in lg.outputs:
            continue
        r = by_tensor.get(mm.output, [])
        if len(r) != 1:
            continue
        rq = lg.layers[r[0]]
        rank = len(lg.tensors[mm.output].shape)
        if rq.op != Op.REQUANT or not isinstance(rq.params, RequantParams) or rq.inputs != (mm.output,) \
                or not _per_column(rq.params, rank):
            continue
        y = lg.tensors[rq.output]
        fused[i] = replace(mm, output=rq.output, requant=rq.params.requant,
                           nest=replace(mm.nest, y_bits=dtype_bits(y.dtype)),
                           source_nodes=mm.source_nodes + rq.source_nodes)
        dropped.add(r[0])
        gone.add(mm.output)
    if not fused:
        return lg
    layers = tuple(fused.get(i, layer) for i, layer in enumerate(lg.layers) if i not in dropped)
    tensors = {k: v for k, v in lg.tensors.items() if k not in gone}
    return replace(lg, layers=layers, tensors=tensors)
