"""The graph verifier: rejects inconsistent graphs with one clear sentence naming node and tensor.

Checks: every node's op is a graph op (ir/ops.py; a Node checks its params' class when it is built);
every input is a graph input, a constant, a state tensor (ir/graph.py) or produced earlier
(topological order); every tensor has one producer; output shapes equal shape inference
(ir/shapes.py); graph outputs exist.
"""

from __future__ import annotations

from ..errors import GraphError
from .graph import Graph, state_tensors
from .ops import GRAPH_OPS
from .shapes import infer_shape


def verify(graph: Graph) -> Graph:
    """Return `graph` unchanged if it is consistent, else raise GraphError."""
    where = f"{graph.source or graph.name}"
    available = set(graph.inputs) | {n for n, t in graph.tensors.items() if t.is_const}
    for name in state_tensors(graph.meta):
        if name not in graph.tensors or graph.tensors[name].is_const or name in graph.inputs:
            raise GraphError(f"{where}: state tensor '{name}' must be a declared, non-constant tensor "
                             "that is no graph input")
        available.add(name)
    for name in graph.inputs:
        if name not in graph.tensors:
            raise GraphError(f"{where}: graph input '{name}' has no tensor")
    produced: set[str] = set()
    for node in graph.nodes:
        if node.op not in GRAPH_OPS:
            raise GraphError(f"{where}: node '{node.name}' has the op '{node.op}', which is not a graph op")
        for i in node.inputs:
            if not i:
                continue
            if i not in graph.tensors:
                raise GraphError(f"{where}: node '{node.name}' reads tensor '{i}' which does not exist")
            if i not in available:
                raise GraphError(
                    f"{where}: node '{node.name}' reads tensor '{i}' before it is produced "
                    "(nodes are not in topological order or the producer is missing)"
                )
        for o in node.outputs:
            if o in produced or o in graph.inputs:
                raise GraphError(f"{where}: tensor '{o}' is produced twice (second time by node '{node.name}')")
            if o not in graph.tensors:
                raise GraphError(f"{where}: node '{node.name}' writes tensor '{o}' which has no declaration")
            produced.add(o)
            available.add(o)
        expected = infer_shape(graph, node)
        actual = graph.tensors[node.outputs[0]].shape
        if tuple(expected) != tuple(actual):
            raise GraphError(
                f"{where}: node '{node.name}' ({node.op}) produces shape {tuple(actual)} "
                f"but its inputs and parameters give {tuple(expected)}"
            )
    for o in graph.outputs:
        if o not in available:
            raise GraphError(f"{where}: graph output '{o}' is never produced")
    return graph
