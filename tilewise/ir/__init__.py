"""The integer IR: tensors with quantization, the op vocabulary and typed op parameters, nodes,
graphs, layers, shape inference, verification."""

from .graph import Graph, Node
from .ops import Op
from .requant import Requant, quantize_multiplier, tflite_requant
from .tensor import DTYPES, QuantParams, Tensor, dtype_range, np_dtype

__all__ = [
    "Graph", "Node", "Op", "Requant", "quantize_multiplier", "tflite_requant", "DTYPES", "QuantParams",
    "Tensor", "dtype_range", "np_dtype",
]
