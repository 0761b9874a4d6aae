"""Passes: canonicalize the Graph (pad folding, no-op reshapes, clamp folding), lower it to Layers and
fuse a MatMul of two activations with the requantization of its sums (fuse_matmul.py); the
pipeline then fuses attentions depth first where the target runs them (fuse_attention.py) and a
conv with the residual add reading its output where the target's cost model predicts it cheaper
(fuse_residual.py); the fusions look a tensor's reading layers up in readers.py."""

from __future__ import annotations

from ..errors import GraphError
from ..ir.graph import Graph
from ..ir.layer import LayerGraph
from ..ir.verify import verify
from .canonicalize import drop_noop_reshapes, fold_clamps, fold_pads
from .fuse_attention import fuse_attention
from .fuse_matmul import fuse_matmul_requant
from .fuse_residual import fuse_residual
from .lower import lower_graph


def canonicalize(graph: Graph) -> Graph:
    return verify(fold_clamps(drop_noop_reshapes(fold_pads(graph))))


def lower(graph: Graph) -> LayerGraph:
    """The full pass pipeline: Graph -> canonical Graph -> LayerGraph; a graph output that no
    layer writes (a constant, or a tensor fused inside a layer) is refused in one sentence."""
    canonical = canonicalize(graph)
    lg = fuse_matmul_requant(lower_graph(canonical))
    for o in lg.outputs:
        if o not in lg.tensors:
            t = canonical.tensors.get(o)
            what = "a constant" if t is not None and t.is_const else \
                "a tensor tilewise computes inside a layer (a fused activation, pad or clamp)"
            raise GraphError(f"{graph.source or graph.name}: graph output '{o}' is {what}, not a layer's "
                             f"result; make the network's outputs the results of its last layers")
    return lg


__all__ = ["canonicalize", "lower", "fold_pads", "drop_noop_reshapes", "fold_clamps", "lower_graph",
           "fuse_matmul_requant", "fuse_attention", "fuse_residual"]
