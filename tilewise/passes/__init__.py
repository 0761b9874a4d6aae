"""Passes: canonicalize the Graph (pad folding, no-op reshapes, clamp folding) and lower it to Layers."""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.layer import LayerGraph
from ..ir.verify import verify
from .canonicalize import drop_noop_reshapes, fold_clamps, fold_pads
from .lower import lower_graph


def canonicalize(graph: Graph) -> Graph:
    return verify(fold_clamps(drop_noop_reshapes(fold_pads(graph))))


def lower(graph: Graph) -> LayerGraph:
    """The full pass pipeline: Graph -> canonical Graph -> LayerGraph."""
    return lower_graph(canonicalize(graph))


__all__ = ["canonicalize", "lower", "fold_pads", "drop_noop_reshapes", "fold_clamps", "lower_graph"]
