"""Lower a canonical Graph to Layers: one fused, schedulable unit per kernel call.

A dense layer on several rows (a Gemm on a [rows, C] matrix, a MatMul on a batch of vectors)
becomes a 1×1 conv whose output pixels are the rows ([rows][C] is the HWC [1][rows][C]): the conv
kernels take any number of pixels, the dense kernels one vector.

A dilated convolution becomes the dense one it equals: its kernel with zeros between the taps
((F − 1)·d + 1 taps per dimension; exact, at the cost of the zero taps' MACs), so every conv
kernel runs it.

A depthwise convolution with a channel multiplier m > 1 (output channel k reads input channel
k // m) becomes a dense `conv2d` whose weights are block-diagonal (zero outside input channel
k // m): exact, since the zero taps add nothing to the accumulator (nor to −zp_x·Σw), and its
loop nest is what the kernels then run — C times the MACs and weights of the depthwise form, free
when C = 1 (the usual case: a depthwise first layer on one input channel). The tiled depthwise
kernels pair input and output channels one to one.

conv2d / fully_connected nodes become `conv2d`, `depthwise` or `fully_connected` layers that carry
weights in kernel layout, the int32 bias with the input zero-point correction folded in
(bias' = bias − zp_x·Σw, DESIGN.md "Integer semantics"; padding then uses Layer.pad_value = zp_x so
padded taps cancel), the Requant and the fused activation (in Requant.qmin/qmax), and no params.
Every other op becomes a layer of the same op (a mean over H and W of a 4-D tensor: op
`global_avg_pool`) with the node's params, its activation inputs, and its constant operands in
Layer.const_inputs. Each layer gets the LoopNest the scheduler reasons about (DESIGN.md
"Scheduling") and the node's inputs in order (Layer.node_inputs).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Graph, Node
from ..ir.layer import Layer, LayerGraph, LayerKind, LoopNest
from ..ir.ops import Op
from ..ir.params import Conv2dParams, FullyConnectedParams, IntArithParams, MeanParams, SvdfParams, WindowParams
from ..ir.tensor import Tensor, dtype_bits, nhwc_view


def _bits(t: Tensor) -> int:
    return dtype_bits(t.dtype)


def _where(graph: Graph, node: Node) -> str:
    return f"{graph.source or graph.name}: node '{node.name}'"


def _lower_conv(graph: Graph, node: Node) -> Layer:
    x, w = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    y = graph.tensors[node.outputs[0]]
    a = node.params
    assert isinstance(a, Conv2dParams)
    n, iy, ix, c = x.shape
    k, fy, fx, cg = w.shape
    _, oy, ox, _ = y.shape
    groups = a.groups
    kind: LayerKind
    if groups == 1:
        op, kind = Op.CONV2D, "conv"
    elif groups == c and cg == 1:
        op, kind = Op.DEPTHWISE, "dwconv"
    else:
        raise UnsupportedOpError(f"{_where(graph, node)}: grouped convolution with {groups} groups is not supported; "
                                 "only dense (1 group) and depthwise convolutions are")
    weights, bias = _fold_weights(graph, node, w)
    if tuple(a.dilation) != (1, 1):
        weights = _undilate(weights, a.dilation)
        fy, fx = weights.shape[1:3]
    zp_x = x.quant.zp if x.quant else 0
    # depthwise output channel k reads input channel k // multiplier: the same Σw per output channel
    bias = bias - zp_x * weights.reshape(k, -1).sum(axis=1)
    if op == Op.DEPTHWISE and k != c:
        # channel multiplier m = K / C: block-diagonal dense weights (module docstring)
        m = k // c
        dense = np.zeros((k, fy, fx, c), dtype=weights.dtype)
        dense[np.arange(k), :, :, np.arange(k) // m] = weights[..., 0]
        weights, op, kind = dense, Op.CONV2D, "conv"
    if op == Op.DEPTHWISE:
        weights = weights[..., 0]  # [K, FY, FX]
    sy, sx = a.stride
    nest = LoopNest(
        kind=kind, K=k, C=c, OY=oy, OX=ox, FY=fy, FX=fx, SY=sy, SX=sx, pads=tuple(a.pads),
        IY=iy, IX=ix, N=n, x_bits=_bits(x), w_bits=_bits(w), y_bits=_bits(y),
    )
    return Layer(
        name=node.name, op=op, inputs=(node.inputs[0],), output=node.outputs[0], nest=nest,
        weights=weights.astype(np.int8), bias=_bias_dtype(bias, x), requant=a.requant,
        pad_value=zp_x if a.pad_value is None else a.pad_value,
        node_inputs=node.inputs, source_nodes=(node.name,),
    )


def _undilate(weights: np.ndarray, dilation: tuple[int, int]) -> np.ndarray:
    """A dilated kernel as the dense one it equals: taps at multiples of the dilation, zeros
    between ((F − 1)·d + 1 taps per dimension; the zero taps add nothing to the accumulator)."""
    k, fy, fx, cg = weights.shape
    dy, dx = dilation
    dense = np.zeros((k, (fy - 1) * dy + 1, (fx - 1) * dx + 1, cg), dtype=weights.dtype)
    dense[:, ::dy, ::dx, :] = weights
    return dense


def _bias_dtype(bias: np.ndarray, x: Tensor) -> np.ndarray:
    # 16x8 layers keep int64 biases (TFLite's int16 path); int8 layers must fit int32
    if x.dtype == "int16":
        return bias.astype(np.int64)
    if bias.size and (bias.max() > np.iinfo(np.int32).max or bias.min() < np.iinfo(np.int32).min):
        raise UnsupportedOpError("layer bias with zero-point correction overflows int32 "
                                 f"(input zero point {x.quant.zp if x.quant else 0})")
    return bias.astype(np.int32)


def _fold_weights(graph: Graph, node: Node, w: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Weights with their zero point removed (must fit int8) and the int64 bias (zeros if absent)."""
    if w.data is None:
        raise UnsupportedOpError(f"{_where(graph, node)}: weights '{w.name}' are not constant; "
                                 "only constant weights can be deployed")
    weights = np.asarray(w.data, dtype=np.int64)
    k = weights.shape[0]
    if w.quant is not None and np.any(w.quant.zp_array() != 0):
        zp = w.quant.zp_array()
        weights = weights - zp.reshape((-1,) + (1,) * (weights.ndim - 1))
        if weights.min() < -128 or weights.max() > 127:
            raise UnsupportedOpError(f"{_where(graph, node)}: weights '{w.name}' have a non-zero zero point and do not "
                                     "fit int8 once it is removed; quantize weights symmetrically")
    b = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else None
    bias = np.zeros(k, dtype=np.int64) if b is None else np.asarray(graph.tensors[b].data, dtype=np.int64).reshape(k)
    return weights, bias


def _lower_fc(graph: Graph, node: Node) -> Layer:
    x, w = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    y = graph.tensors[node.outputs[0]]
    k, c = w.shape
    weights, bias = _fold_weights(graph, node, w)
    zp_x = x.quant.zp if x.quant else 0
    bias = bias - zp_x * weights.sum(axis=1)
    rows = y.shape[0]
    p = node.params
    assert isinstance(p, FullyConnectedParams)
    if rows > 1:
        # rows of a dense layer are the pixels of a 1×1 conv: [rows][C] is the HWC [1][rows][C]
        nest = LoopNest(kind="conv", K=k, C=c, OY=1, OX=rows, IY=1, IX=rows, N=1, x_bits=_bits(x),
                        w_bits=_bits(w), y_bits=_bits(y))
        return Layer(
            name=node.name, op=Op.CONV2D, inputs=(node.inputs[0],), output=node.outputs[0], nest=nest,
            weights=weights.reshape(k, 1, 1, c).astype(np.int8), bias=_bias_dtype(bias, x), requant=p.requant,
            pad_value=zp_x, node_inputs=node.inputs, source_nodes=(node.name,),
        )
    nest = LoopNest(kind="fc", K=k, C=c, OY=1, OX=1, N=rows, x_bits=_bits(x), w_bits=_bits(w), y_bits=_bits(y))
    return Layer(
        name=node.name, op=Op.FULLY_CONNECTED, inputs=(node.inputs[0],), output=node.outputs[0], nest=nest,
        weights=weights.astype(np.int8), bias=_bias_dtype(bias, x), requant=p.requant, pad_value=zp_x,
        node_inputs=node.inputs, source_nodes=(node.name,),
    )


def _lower_other(graph: Graph, node: Node) -> Layer:
    x = graph.tensors[node.inputs[0]]
    y = graph.tensors[node.outputs[0]]
    a = node.params
    n, oy, ox, k = nhwc_view(y.shape)
    _, iy, ix, c = nhwc_view(x.shape)
    op, kind = node.op, "other"
    extra: dict = {}
    if isinstance(a, WindowParams) and len(x.shape) == 4:
        kind = "pool"
        (fy, fx), (sy, sx) = a.kernel, a.stride
        extra = dict(FY=fy, FX=fx, SY=sy, SX=sx, pads=tuple(a.pads))
    elif op == Op.MEAN and isinstance(a, MeanParams) and len(x.shape) == 4 and {ax % 4 for ax in a.axes} == {1, 2}:
        op, kind = Op.GLOBAL_AVG_POOL, "gap"
        extra = dict(FY=iy, FX=ix)
    elif op in (Op.ADD, Op.SUB, Op.MUL) and not isinstance(a, IntArithParams) and len(node.inputs) == 2 and all(
        graph.tensors[i].shape == y.shape and not graph.tensors[i].is_const for i in node.inputs
    ):   # two same-shape activations; a constant operand (or exact integer arithmetic) runs untiled
        kind = "add"
    elif op == Op.SVDF and isinstance(a, SvdfParams):   # K units of FY = rank filters, FX = memory
        extra = dict(FY=a.rank, FX=a.memory)
    nest = LoopNest(kind=kind, K=k, C=c, OY=oy, OX=ox, IY=iy, IX=ix, N=n, x_bits=_bits(x), w_bits=8, y_bits=_bits(y),
                    **extra)
    inputs = tuple(i for i in node.inputs if i and not graph.tensors[i].is_const)
    consts = {i: graph.tensors[i] for i in node.inputs if i and graph.tensors[i].is_const}
    return Layer(
        name=node.name, op=op, inputs=inputs, output=node.outputs[0], nest=nest, params=a,
        node_inputs=node.inputs, const_inputs=consts, source_nodes=(node.name,),
    )


def lower_graph(graph: Graph) -> LayerGraph:
    """Graph (canonicalized) -> LayerGraph in the same execution order."""
    layers = []
    for node in graph.nodes:
        if node.op == Op.CONV2D:
            layers.append(_lower_conv(graph, node))
        elif node.op == Op.FULLY_CONNECTED:
            layers.append(_lower_fc(graph, node))
        else:
            layers.append(_lower_other(graph, node))
    tensors = {name: t for name, t in graph.tensors.items() if not t.is_const}
    return LayerGraph(
        name=graph.name, layers=tuple(layers), tensors=tensors, inputs=graph.inputs,
        outputs=graph.outputs, source=graph.source, meta=dict(graph.meta),
    )
