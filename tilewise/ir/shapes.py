"""Shape inference of the IR's graph ops and the window geometry it shares with the frontends.

Output shapes are fully determined by input shapes and node attributes (ir/ops.py lists them);
`infer_shape` computes them and the verifier (ir/verify.py) holds the frontends to it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from .graph import Graph, Node


def conv_out(size: int, kernel: int, stride: int, pad_before: int, pad_after: int, dilation: int = 1) -> int:
    """Output length of a strided, padded window sweep."""
    eff = dilation * (kernel - 1) + 1
    return (size + pad_before + pad_after - eff) // stride + 1


def same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TFLite/TF 'SAME' padding (before, after): extra padding goes after."""
    eff = dilation * (kernel - 1) + 1
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def infer_shape(graph: Graph, node: Node) -> tuple[int, ...]:
    """The output shape of `node` from its input shapes and attributes."""
    shp = [graph.tensors[i].shape if i else () for i in node.inputs]
    op, a = node.op, node.attrs
    if op == "conv2d":
        n, h, w, _ = shp[0]
        k, fy, fx, _ = shp[1]
        sy, sx = a["stride"]
        dy, dx = a.get("dilation", (1, 1))
        t, l, b, r = a["pads"]
        return (n, conv_out(h, fy, sy, t, b, dy), conv_out(w, fx, sx, l, r, dx), k)
    if op == "fully_connected":
        k, c = shp[1]
        size = int(np.prod(shp[0]))
        return (size // c, k)
    if op in ("add", "sub", "mul"):
        return broadcast_shape(shp[0], shp[1])
    if op in ("avg_pool", "max_pool"):
        n, h, w, c = shp[0]
        ky, kx = a["kernel"]
        sy, sx = a["stride"]
        t, l, b, r = a["pads"]
        return (n, conv_out(h, ky, sy, t, b), conv_out(w, kx, sx, l, r), c)
    if op == "mean":
        axes = {ax % len(shp[0]) for ax in a["axes"]}
        if a.get("keepdims", True):
            return tuple(1 if i in axes else d for i, d in enumerate(shp[0]))
        return tuple(d for i, d in enumerate(shp[0]) if i not in axes)
    if op == "pad":
        return tuple(d + p0 + p1 for d, (p0, p1) in zip(shp[0], a["pads"]))
    if op == "reshape":
        return tuple(a["shape"])
    if op == "concat":
        axis = a["axis"] % len(shp[0])
        out = list(shp[0])
        out[axis] = sum(s[axis] for s in shp)
        return tuple(out)
    if op == "transpose":
        return tuple(shp[0][p] for p in a["perm"])
    if op in ("softmax", "logistic", "quantize", "dequantize", "clamp"):
        return tuple(shp[0])
    raise GraphError(f"node '{node.name}': unknown IR op '{op}'")
