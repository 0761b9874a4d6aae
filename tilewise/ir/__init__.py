"""The integer IR: tensors with quantization, nodes, graphs, layers, shape inference, verification."""

from .graph import Graph, Node
from .requant import Requant, quantize_multiplier, tflite_requant
from .tensor import DTYPES, QuantParams, Tensor, dtype_range, np_dtype

__all__ = [
    "Graph", "Node", "Requant", "quantize_multiplier", "tflite_requant", "DTYPES", "QuantParams",
    "Tensor", "dtype_range", "np_dtype",
]
