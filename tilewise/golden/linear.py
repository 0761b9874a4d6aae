"""Golden kernels of conv2d, transpose_conv and fully_connected, every requant mode (golden/conv.py +
requant.py).

Weight zero points come from the weight tensor's QuantParams (per channel along axis 0), the input
zero point from the input tensor's; the bias is int32 (int64 for 16x8). When the Requant says `wide`
(TFLite 16x8 with int64 bias) the accumulator is int64 and TFLite's int64 MultiplyByQuantizedMultiplier
applies; otherwise the int32 one, with double or single rounding as Requant.rounding says.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import Conv2dParams, FullyConnectedParams, TransposeConvParams
from .conv import conv2d_acc, dense_acc, transpose_conv_acc
from .registry import kernel
from .requant import apply_requant


def _zps(graph: Graph, node: Node) -> tuple[int, np.ndarray]:
    x = graph.tensors[node.inputs[0]]
    w = graph.tensors[node.inputs[1]]
    zp_x = x.quant.zp if x.quant else 0
    zp_w = w.quant.zp_array() if w.quant else np.zeros(1, dtype=np.int64)
    return zp_x, zp_w


@kernel(Op.CONV2D)
def conv2d(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    zp_x, zp_w = _zps(graph, node)
    p = node.params
    assert isinstance(p, Conv2dParams)
    acc = conv2d_acc(x, w, bias, zp_x, zp_w, p.stride, p.pads, p.dilation, p.groups, pad_value=p.pad_value)
    return apply_requant(acc, p.requant)


@kernel(Op.TRANSPOSE_CONV)
def transpose_conv(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    """TFLite TRANSPOSE_CONV (symmetric weights, the frontend checks it)."""
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    zp_x, _ = _zps(graph, node)
    p = node.params
    assert isinstance(p, TransposeConvParams)
    acc = transpose_conv_acc(x, w, bias, zp_x, p.stride, p.pads, p.output_hw)
    return apply_requant(acc, p.requant)


@kernel(Op.FULLY_CONNECTED)
def fully_connected(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    zp_x, zp_w = _zps(graph, node)
    p = node.params
    assert isinstance(p, FullyConnectedParams)
    acc = dense_acc(x, w, bias, zp_x, zp_w)
    return apply_requant(acc, p.requant)
