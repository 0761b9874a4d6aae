"""Which layers read each tensor of a layer graph: the map the fusing passes look a tensor's
readers up in (fuse_matmul.py: the one requant that reads a MatMul's sums; fuse_attention.py: the
row op and the context MatMul that read the scores)."""

from __future__ import annotations

from ..ir.layer import LayerGraph


def readers(lg: LayerGraph) -> dict[str, list[int]]:
    """Tensor name → the indices of the layers that read it, in layer order (a layer that reads a
    tensor twice listed once)."""
    out: dict[str, list[int]] = {}
    for i, layer in enumerate(lg.layers):
        for t in set(layer.inputs):
            out.setdefault(t, []).append(i)
    return out
