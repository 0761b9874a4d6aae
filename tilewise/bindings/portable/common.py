"""What every binding of the portable family shares: the family, layer facts, common checks,
the rendering of its templates.

The portable family is tilewise's own C kernel library (`c/`, copied into projects as
`tw_kernels/`): scalar C99 that runs on every target — im2col + 4×2 MatMul conv, 1×1 conv,
depthwise, dense, elementwise, pooling, softmax (seed 004's kernel structure, without XpulpV2 or
Arm SIMD).

uint8 tensors (onnxruntime's QUInt8 activations) are stored biased, as the int8 bytes u − 128
(u ^ 0x80; the network converts its input and output, codegen/network_c.py), and run through the
int8 kernels with every zero point, pad value and clamp bound lowered by 128 and the weighted
layers' bias raised by 128·Σw (constants.py). This is exact wherever the arithmetic only uses
x − zp_x, adds the output zero point to an integer and clamps:
Σw·((x−128) − (zp−128)) = Σw·(x − zp), and clamp(r + zp − 128, lo − 128, hi − 128) =
clamp(r + zp, lo, hi) − 128 (tests/test_codegen_ops.py checks it on the golden model). Where it
holds, and what the kernels that compute otherwise do: weighted.py (conv, depthwise, dense, all
requant modes), pool.py (max pool, global average pools; the onnx average pool in the value
domain; the tflite average pool refuses uint8), elementwise.py (tflite add / sub / mul; onnx
add in float32 on the uint8 values).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...ir.layer import Layer, LayerGraph
from ...templating import render as _render
from ..base import Family

FAMILY = Family(name="portable", c_dir=Path(__file__).resolve().parent / "c",
                project_dir="tw_kernels", header="tw_kernels.h", direct_functions=True)

#: the family's C templates (templates/*.j2): one per kernel call, and the pieces they share
TEMPLATES = Path(__file__).resolve().parent / "templates"

#: activation bits of the int8 (and biased uint8) kernels and of the 16x8 kernels
S8 = 8
S16 = 16


def u8_offset(lg: LayerGraph, name: str) -> int:
    """128 for a uint8 tensor (stored as u − 128 by the generated C), else 0."""
    return 128 if lg.tensors[name].dtype == "uint8" else 0


def zero_point(lg: LayerGraph, name: str) -> int:
    """The zero point of tensor `name` as a value (0 when it has no quantization)."""
    q = lg.tensors[name].quant
    return q.zp if q is not None else 0


def render(template: str, **data: Any) -> str:
    """The C of the family's template `template` (templates/, then codegen's) with `data`."""
    return _render(template, TEMPLATES, **data)


def batch_one(layer: Layer) -> str | None:
    """The portable kernels run one image per call."""
    if layer.nest.N != 1:
        return f"a batch of {layer.nest.N} (the portable kernels run batch 1)"
    return None


def first(*reasons: str | None) -> str | None:
    """The first reason that is not None (checks run in order, cheapest first)."""
    for r in reasons:
        if r is not None:
            return r
    return None
