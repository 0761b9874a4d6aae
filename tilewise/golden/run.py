"""Run a Graph on integer inputs with the golden kernels; optionally keep every intermediate.

`run_graph(graph, inputs)` returns the graph outputs by name; with `keep_all=True` it returns every
tensor computed (for layer-by-layer comparison against a reference runtime or generated C).
A graph with state tensors (ir/graph.py; svdf) reads them from `states` and leaves their new
values there (pass the same dict to consecutive inferences, as LiteRT keeps its variable
tensors); without `states` they start at zero (a first inference).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import GraphError
from ..ir.graph import Graph, state_tensors
from ..ir.tensor import np_dtype
from . import kernels as _kernels  # noqa: F401  (registers the kernels)
from .registry import lookup
from .svdf import STATEFUL, carried_states


def _feeds(graph: Graph, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
    if isinstance(inputs, np.ndarray):
        inputs = [inputs]
    if not isinstance(inputs, Mapping):
        if len(inputs) != len(graph.inputs):
            raise GraphError(f"{graph.name}: expected {len(graph.inputs)} inputs, got {len(inputs)}")
        inputs = dict(zip(graph.inputs, inputs))
    feeds = {}
    for name in graph.inputs:
        t = graph.tensors[name]
        arr = np.asarray(inputs[name])
        if tuple(arr.shape) != tuple(t.shape):
            raise GraphError(f"{graph.name}: input '{name}' has shape {arr.shape}, expected {t.shape}")
        feeds[name] = arr.astype(np_dtype(t.dtype))
    return feeds


def run_graph(
    graph: Graph,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray,
    keep_all: bool = False,
    states: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Execute `graph` in node order; returns outputs (or all tensors with keep_all). `states`:
    the state tensors' values, updated in place (module docstring)."""
    values: dict[str, np.ndarray] = _feeds(graph, inputs)
    names = state_tensors(graph.meta)
    states = carried_states(graph.tensors, names, states)
    values.update({n: states[n] for n in names})
    for name, t in graph.tensors.items():
        if t.is_const:
            values[name] = t.data  # type: ignore[assignment]
    consumers_left: dict[str, int] = {}
    if not keep_all:
        for n in graph.nodes:
            for i in n.inputs:
                consumers_left[i] = consumers_left.get(i, 0) + 1
    for node in graph.nodes:
        args = [values[i] if i else None for i in node.inputs]
        if node.op in STATEFUL:
            out, states[node.inputs[-1]] = STATEFUL[node.op](node, args)
        else:
            out = lookup(node, graph)(node, graph, args)
        t = graph.tensors[node.outputs[0]]
        values[node.outputs[0]] = np.asarray(out).astype(np_dtype(t.dtype)).reshape(t.shape)
        if not keep_all:
            for i in node.inputs:
                consumers_left[i] -= 1
                if i and consumers_left[i] == 0 and i not in graph.outputs and not graph.tensors[i].is_const:
                    values.pop(i, None)
    if keep_all:
        return values
    return {o: values[o] for o in graph.outputs}
