"""The golden model's kernel registry: (IR op, semantics mode) -> numpy integer implementation.

A kernel is `fn(node, graph, inputs: list[np.ndarray]) -> np.ndarray`. Modules register with
`@kernel("add", mode="tflite")`; a kernel registered with mode None serves every mode of its op.
The runner looks up (op, node.attrs["mode"]) first, then (op, None).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Graph, Node

Kernel = Callable[[Node, Graph, list[np.ndarray]], np.ndarray]
_KERNELS: dict[tuple[str, str | None], Kernel] = {}


def kernel(op: str, mode: str | None = None) -> Callable[[Kernel], Kernel]:
    def register(fn: Kernel) -> Kernel:
        _KERNELS[(op, mode)] = fn
        return fn

    return register


def lookup(node: Node, graph: Graph) -> Kernel:
    mode = node.attrs.get("mode")
    fn = _KERNELS.get((node.op, mode)) or _KERNELS.get((node.op, None))
    if fn is None:
        raise UnsupportedOpError(
            f"{graph.source or graph.name}: node '{node.name}': the golden model has no kernel for "
            f"op '{node.op}' in mode '{mode}'"
        )
    return fn
