"""The golden model's kernel registry: (IR op, semantics mode) -> numpy integer implementation.

A kernel is `fn(node, graph, inputs: list[np.ndarray]) -> np.ndarray`. Modules register with
`@kernel(Op.ADD, mode="tflite")` (several ops at once where one kernel defines them, e.g. mean and
the layer op global_avg_pool); a kernel registered with mode None serves every mode of its op. The
runner looks up (op, node.params.mode) first, then (op, None).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import Mode

Kernel = Callable[[Node, Graph, list[np.ndarray]], np.ndarray]
_KERNELS: dict[tuple[Op, Mode | None], Kernel] = {}


def kernel(*ops: Op, mode: Mode | None = None) -> Callable[[Kernel], Kernel]:
    def register(fn: Kernel) -> Kernel:
        for op in ops:
            _KERNELS[(op, mode)] = fn
        return fn

    return register


def lookup(node: Node, graph: Graph) -> Kernel:
    mode = node.params.mode
    fn = _KERNELS.get((node.op, mode)) or _KERNELS.get((node.op, None))
    if fn is None:
        raise UnsupportedOpError(
            f"{graph.source or graph.name}: node '{node.name}': the golden model has no kernel for "
            f"op '{node.op}' in mode '{mode}'"
        )
    return fn
