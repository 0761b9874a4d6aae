"""Fuse an attention's scores MatMul, its softmax and its context MatMul into one depth-first layer.

Deeploy's and QuantLab's attention (after passes/fuse_matmul.py) is three layers per block:
`matmul` (q·kᵀ, requantized) → a row op along the scores' last axis (`int_softmax`, `ita_max`;
EEGFormer has none) → `matmul` (the row op's output · v, requantized). Layer by layer, the scores
(heads × L × L) and the softmax's output live whole in L2 between them — the tensor that grows
with the square of the sequence. Jung et al. 2024 ("Optimizing the deployment of tiny
transformers on low-power MCUs", anchors.md) tile multi-head attention depth first instead: one
head's row tile goes through all three ops before the next is started, which cuts the
attention's memory peak up to 6.19× on GAP9. This pass makes the three layers one `attention`
layer (ir/params.py AttentionParams) whose kernel does that (bindings/pulp/attention.py: per
head, per row tile of q, the scores, their softmax and the context rows in L1); the scores and
the softmax's output leave the memory plan.

Fused when: the scores MatMul has its requantization, its output is read by exactly one layer —
the row op (reading nothing else) whose output only the context MatMul reads as its `a`, or the
context MatMul itself — the context MatMul is requantized, no inner tensor is a network output,
and `accept` (the target: some module has a binding that runs the fused layer and its L1 holds
the kernel's scratch, pipeline.py) takes it. The fused layer runs where the context MatMul ran
(its v may be computed after the scores); its inputs are (q, k, v). The numbers are the three
layers' (golden/layers.py runs them in order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..ir.layer import Layer, LayerGraph
from ..ir.ops import Op
from ..ir.params import AttentionParams
from .readers import readers as layer_readers

#: the row ops an attention may have between its two MatMuls (along the scores' last axis)
ROW_OPS = (Op.INT_SOFTMAX, Op.ITA_MAX)


def _chain(lg: LayerGraph, i: int, readers: dict[str, list[int]]) -> tuple[int, int | None, int] | None:
    """(scores, row op or None, context) layer indices of an attention starting at layer i."""
    mm = lg.layers[i]
    if mm.op != Op.MATMUL or mm.requant is None or len(mm.inputs) != 2 or mm.output in lg.outputs:
        return None
    r = readers.get(mm.output, [])
    if len(r) != 1:
        return None
    nxt = lg.layers[r[0]]
    row: int | None = None
    if nxt.op in ROW_OPS and nxt.inputs == (mm.output,) and nxt.output not in lg.outputs:
        row = r[0]
        r = readers.get(nxt.output, [])
        if len(r) != 1:
            return None
        nxt = lg.layers[r[0]]
    a = lg.layers[i if row is None else row].output
    if nxt.op != Op.MATMUL or nxt.requant is None or len(nxt.inputs) != 2 or nxt.inputs[0] != a \
            or nxt.inputs[1] == a:
        return None
    return i, row, r[0]


def attention_layer(lg: LayerGraph, scores: Layer, rows: Layer | None, context: Layer) -> Layer:
    """The fused layer of module docstring: inputs (q, k, v), the context's output; its loop nest
    the context's (heads N·OY, rows OX, columns K) with C the scores' reduction (q's last dim) and
    IX the scores' columns (the keys)."""
    inner = (scores.output,) + ((rows.output,) if rows is not None else ())
    params = AttentionParams(scores=scores, rows=rows, context=context,
                             inner={t: lg.tensors[t] for t in inner})
    nest = replace(context.nest, C=scores.nest.C, IX=scores.nest.K, IY=1)
    parts = (scores, rows, context) if rows is not None else (scores, context)
    return Layer(name=f"{scores.name}_attention", op=Op.ATTENTION,
                 inputs=(scores.inputs[0], scores.inputs[1], context.inputs[1]), output=context.output,
                 nest=nest, params=params, source_nodes=tuple(n for p in parts for n in p.source_nodes))


def fuse_attention(lg: LayerGraph, accept: Callable[[Layer, LayerGraph], bool]) -> LayerGraph:
    """`lg` with every attention of the module docstring that `accept` takes made one layer."""
    readers = layer_readers(lg)
    at: dict[int, Layer] = {}
    dropped: set[int] = set()
    gone: set[str] = set()
    for i in range(len(lg.layers)):
        chain = _chain(lg, i, readers)
        if chain is None or i in dropped:
            continue
        s, r, c = chain
        rows = lg.layers[r] if r is not None else None
        fused = attention_layer(lg, lg.layers[s], rows, lg.layers[c])
        if not accept(fused, lg):
            continue
        at[c] = fused
        dropped |= {s} | ({r} if r is not None else set())
        gone |= set(fused.params.inner)   # type: ignore[union-attr]
    if not at:
        return lg
    layers = tuple(at.get(i, layer) for i, layer in enumerate(lg.layers) if i not in dropped)
    return replace(lg, layers=layers, tensors={k: v for k, v in lg.tensors.items() if k not in gone})
