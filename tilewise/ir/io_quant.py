"""The quantization of a network input or output as the application that feeds or reads it sees it.

Usually its IR tensor's own QuantParams. An integer export's tensors carry raw codes whose IR
quantization is the arithmetic's (scale 1, zero point 0: the zero points are folded into the
biases), while the model may state what the codes mean (frontend/onnx_stated.py: `tilewise
quantize`'s shift-mode models). The frontend records those statements, per IR input / output
tensor, in graph.meta["io_quant"] (carried into the LayerGraph's meta); `io_quant` prefers them.
Only the network's edges take them: the layers keep computing on the codes as the IR says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .tensor import Tensor

#: graph.meta key: IR tensor name -> (scale, zero point) the model states for it
IO_QUANT = "io_quant"


@dataclass(frozen=True)
class IoQuant:
    """real = scale·(q − zero_point) for a per-tensor quantized edge; scale None: not quantized
    (or per channel). `stated`: the model's statement, not the IR tensor's own parameters."""

    scale: float | None
    zero_point: int
    stated: bool = False


def stated(meta: Mapping[str, Any], name: str) -> IoQuant | None:
    """The model's statement for IR tensor `name`, None when it makes none."""
    entry = (meta.get(IO_QUANT) or {}).get(name)
    if entry is None:
        return None
    return IoQuant(float(entry[0]), int(entry[1]), True)


def io_quant(meta: Mapping[str, Any], tensor: Tensor) -> IoQuant:
    """The quantization of a network edge `tensor` for its caller (module docstring)."""
    s = stated(meta, tensor.name)
    if s is not None:
        return s
    q = tensor.quant
    if q is None or not q.scale or q.per_channel:
        return IoQuant(None, q.zp if q is not None else 0)
    return IoQuant(float(q.scale[0]), q.zp)
