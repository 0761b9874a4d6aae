"""What every binding of the portable family shares: the family, layer facts, common checks.

The portable family is tilewise's own C kernel library (`c/`, copied into projects as
`tw_kernels/`): scalar C99 that runs on every target — im2col + 4×2 MatMul conv, 1×1 conv,
depthwise, dense, elementwise, pooling, softmax (seed 004's kernel structure, without XpulpV2 or
Arm SIMD). uint8 activations run through the int8 kernels stored biased as u − 128
(elementwise.py and weighted.py say where that is exact).
"""

from __future__ import annotations

from pathlib import Path

from ...ir.layer import Layer, LayerGraph
from ..base import Family

FAMILY = Family(name="portable", c_dir=Path(__file__).resolve().parent / "c",
                project_dir="tw_kernels", header="tw_kernels.h")

#: activation bits of the int8 (and biased uint8) kernels and of the 16x8 kernels
S8 = 8
S16 = 16


def u8_offset(lg: LayerGraph, name: str) -> int:
    """128 for a uint8 tensor (stored as u − 128 by the generated C), else 0."""
    return 128 if lg.tensors[name].dtype == "uint8" else 0


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
