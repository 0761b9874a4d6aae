"""A layer's binding key: op, semantics mode, operand precisions in bits, loop-nest geometry.

A binding runs a layer only if their keys match (`matches`); its legality check then decides on
the rest. Precisions come from the tensors' dtypes (ir/tensor.py `dtype_bits`) and the weights'
bits; the accumulator is 64 bits where the requantization is TFLite's int64 16x8 form.
"""

from __future__ import annotations

from ..ir.layer import Layer, LayerGraph
from ..ir.tensor import dtype_bits
from .base import Binding, BindingKey, Precision


def layer_precision(layer: Layer, lg: LayerGraph) -> Precision:
    x = dtype_bits(lg.tensors[layer.inputs[0]].dtype) if layer.inputs else 0
    y = dtype_bits(lg.tensors[layer.output].dtype)
    w = layer.nest.w_bits if layer.weights is not None else 0
    acc = 64 if layer.requant is not None and layer.requant.wide else 32
    return Precision(x, w, y, acc)


def layer_key(layer: Layer, lg: LayerGraph) -> BindingKey:
    return BindingKey(str(layer.op), layer.mode, layer_precision(layer, lg), layer.nest.kind)


def matches(binding: Binding, key: BindingKey) -> bool:
    """The binding takes layers of this key (a binding mode of None takes every mode)."""
    b = binding.key
    return (b.op == key.op and b.nest_kind == key.nest_kind and b.precision == key.precision
            and (b.mode is None or b.mode == key.mode))
