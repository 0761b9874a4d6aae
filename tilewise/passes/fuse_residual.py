"""Fuse a conv2d with the residual add that alone reads its output (ResNet's skip connections).

TFLite's ResNets write conv2d → ADD(conv output, skip): lowered, a `conv2d` layer whose int8
output only an `add` layer reads, the add's other input (the skip tensor) written earlier. This
pass makes them one `conv2d_add` layer (ir/ops.py) where the target's `accept` takes it: the
conv's weights, bias and requantization, inputs (the conv's input, the skip tensor), the add's
output, `ResidualAddParams` (the two layers and the conv's output tensor, which no longer exists
in memory), its loop nest the conv's with `LoopNest.residual` (the skip tensor is operand x2,
tiled as the output: ir/operands.py). A kernel requantizes each conv output to int8 as before
and applies the add with the skip tensor's element before it stores anything
(bindings/ne16: conv2d_s8_mulh_add).

Fused when: the add is TFLite's (TfliteAddSubParams, no broadcast: both inputs of the output's
shape), the conv is a conv2d whose output is read by that add only and is no network output,
and `accept(fused, conv, add, lg)` gives a positive saving (the pipeline: some module runs the
fused layer, and the two layers' predicted cost less the fused layer's, pipeline.py
`fusion_saving`); where both of the add's inputs are such convs, the one of the larger saving.
The fused layer takes
the add's place in the layer order (both its inputs are written by then: the conv's before the
conv, the skip tensor before the add). The golden model computes the conv, then the add
(golden/layers.py): the same numbers as the two layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..ir.layer import Layer, LayerGraph
from ..ir.ops import Op
from ..ir.params import ResidualAddParams, TfliteAddSubParams
from .readers import readers

#: (fused, conv, add, lg) -> the saving of the fusion (None or ≤ 0: not fused)
Accept = Callable[[Layer, Layer, Layer, LayerGraph], float | None]


def fused_layer(conv: Layer, add: Layer, lg: LayerGraph) -> Layer | None:
    """The conv2d_add layer of `conv` and the `add` reading its output (module docstring), or
    None when the pair is not one this pass fuses."""
    if conv.op != Op.CONV2D or add.op != Op.ADD or not isinstance(add.params, TfliteAddSubParams):
        return None
    if conv.output in lg.outputs or len(add.inputs) != 2 or len(set(add.inputs)) != 2 \
            or conv.output not in add.inputs or conv.requant is None:
        return None
    skip = add.inputs[1 - add.inputs.index(conv.output)]
    shapes = {tuple(lg.tensors[t].shape) for t in (*add.inputs, add.output)}
    if len(shapes) != 1:
        return None
    params = ResidualAddParams(conv=conv, add=add, inner={conv.output: lg.tensors[conv.output]})
    return replace(conv, op=Op.CONV2D_ADD, inputs=(conv.inputs[0], skip), output=add.output,
                   node_inputs=(), nest=replace(conv.nest, residual=True), params=params,
                   source_nodes=conv.source_nodes + add.source_nodes)


def fuse_residual(lg: LayerGraph, accept: Accept) -> LayerGraph:
    """`lg` with every conv2d → add pair of the module docstring that `accept` saves on made one
    conv2d_add layer, in the add's place."""
    by_tensor = readers(lg)
    producer = {layer.output: i for i, layer in enumerate(lg.layers)}
    fused: dict[int, Layer] = {}
    dropped: set[int] = set()
    gone: set[str] = set()
    for j, add in enumerate(lg.layers):
        if add.op != Op.ADD:
            continue
        best: tuple[float, int, str, Layer] | None = None
        for t in add.inputs:
            i = producer.get(t)
            if i is None or i in dropped or i in fused or by_tensor.get(t) != [j]:
                continue
            layer = fused_layer(lg.layers[i], add, lg)
            gain = None if layer is None else accept(layer, lg.layers[i], add, lg)
            if layer is not None and gain is not None and gain > 0 \
                    and (best is None or gain > best[0]):
                best = (float(gain), i, t, layer)
        if best is not None:
            _, i, t, layer = best
            fused[j] = layer
            dropped.add(i)
            gone.add(t)
    if not fused:
        return lg
    layers = tuple(fused.get(i, layer) for i, layer in enumerate(lg.layers) if i not in dropped)
    return replace(lg, layers=layers, tensors={k: v for k, v in lg.tensors.items() if k not in gone})
