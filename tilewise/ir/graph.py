"""Nodes and graphs of the integer IR.

A Graph holds tensors by name, nodes in a topological (execution) order and the graph's input and
output tensor names. Ops are the `Op` vocabulary of `ir/ops.py`; a node's parameters are one of the
dataclasses of `ir/params.py`, checked against its op when the node is built. Graphs are treated
as immutable values: passes build new graphs (`Graph.replace`) rather than mutate.

State tensors (`state_tensors(meta)`, meta key "state_tensors"): tensors a stateful op (svdf)
reads and updates in place, kept from one inference to the next as LiteRT keeps its variable
tensors — no node produces them and they are no graph input; they start at zero (LiteRT's
AllocateTensors / ResetVariableTensors) and the generated C keeps them in the memory plan for the
whole run (docs/c_api.md "State kept across inferences").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .ops import Op
from .params import OpParams, check_params
from .tensor import Tensor

#: Graph.meta / LayerGraph.meta key of the state tensors' names
STATE_TENSORS = "state_tensors"


def state_tensors(meta: dict[str, Any]) -> tuple[str, ...]:
    """The names of the state tensors of a graph (or layer graph) with this `meta`."""
    return tuple(meta.get(STATE_TENSORS, ()))


@dataclass(frozen=True, eq=False)
class Node:
    """One op application: input tensor names in the op's order ("" for an absent optional input)."""

    name: str
    op: Op
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    params: OpParams

    def __post_init__(self) -> None:
        check_params(self.op, self.params, f"node '{self.name}'")


@dataclass(frozen=True, eq=False)
class Graph:
    name: str
    tensors: dict[str, Tensor]
    nodes: tuple[Node, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    #: where the model came from (file path) — used in error messages
    source: str = ""
    #: free-form facts from the frontend, e.g. {"format": "onnx", "source_layout": "NCHW"}
    meta: dict[str, Any] = field(default_factory=dict)

    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def producers(self) -> dict[str, Node]:
        """Map tensor name -> node producing it."""
        return {out: n for n in self.nodes for out in n.outputs}

    def consumers(self) -> dict[str, list[Node]]:
        """Map tensor name -> nodes reading it (in execution order)."""
        result: dict[str, list[Node]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    result.setdefault(i, []).append(n)
        return result

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def replace(self, **changes: Any) -> Graph:
        return replace(self, **changes)

    def input_tensors(self) -> list[Tensor]:
        return [self.tensors[n] for n in self.inputs]

    def output_tensors(self) -> list[Tensor]:
        return [self.tensors[n] for n in self.outputs]
