"""A module brought by a user: its own binding folder, written outside tilewise.

`bindings(cost)` gives one binding — conv2d with onnxruntime's requantization on int8, run whole
on the L2 tensors by a scalar reference kernel (c/ref_conv.c) — with its own constants layout
([bias int32 × K | scale float32 × K | weights K×FY×FX×C]) and its own cost model. Adding it to a
copy of a built-in target is all it takes for partition to weigh it, generate to emit its call
and copy its C, and validate to run it (test_custom_module.py); nothing in tilewise/ changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilewise.bindings import Binding, BindingKey, ConstLayout, Family, LayerConstants, Precision, TileRules
from tilewise.bindings.cost_terms import Term, ident

FAMILY = Family(name="refconv", c_dir=Path(__file__).resolve().parent / "c",
                project_dir="ref_kernels", header="ref_conv.h")
BYTES_PER_CHANNEL = 8      # bias int32 + scale float32


@dataclass(frozen=True)
class RefCost:
    """The scalar kernel's cycles: a fixed cost per multiply-accumulate."""

    name: str = "ref-scalar"
    per_mac: float = 1.0

    def terms(self, nest, cores):
        dims = (("n", ident), ("k", ident), ("c", ident), ("oy", ident), ("ox", ident))
        return (Term(self.per_mac * nest.FY * nest.FX, dims, "mac"),)


def check(layer, lg) -> str | None:
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != "int8" or y.dtype != "int8":
        return f"a conv from {x.dtype} to {y.dtype} (int8 only)"
    rq = layer.requant
    if rq is None or np.size(rq.scale) not in (1, layer.nest.K) or layer.nest.N != 1:
        return "this requantization or batch"
    if not -128 <= int(rq.qmin) <= int(rq.qmax) <= 127:
        return f"an output clamp of [{rq.qmin}, {rq.qmax}]"
    return None


def build(layer, lg, schedule) -> LayerConstants:
    k = layer.nest.K
    bias = np.asarray(layer.bias, dtype="<i4")
    scale = np.broadcast_to(np.asarray(layer.requant.scale, dtype="<f4"), (k,))
    w = np.ascontiguousarray(np.asarray(layer.weights, dtype=np.int8))
    head = bias.tobytes() + np.ascontiguousarray(scale).tobytes()
    return LayerConstants(head + w.tobytes(), 0, len(head), BYTES_PER_CHANNEL)


def emit(layer, lg, consts) -> str:
    n, rq = layer.nest, layer.requant
    pad = int(layer.pad_value)
    return (
        "/* conv2d on the test's scalar reference module (tests/custom_module) */\n"
        "static const ref_conv_geom_t GEOM = {\n"
        f"    {n.IY}, {n.IX}, {n.C}, {n.OY}, {n.OX}, {n.K}, {n.FY}, {n.FX}, {n.SY}, {n.SX},\n"
        f"    {n.pads[0]}, {n.pads[1]}, {pad}, {int(rq.zero_point)}, {int(rq.qmin)}, {int(rq.qmax)}\n"
        "};\n\n"
        "void @FN@(tw_layer_args_t *a)\n{\n"
        "    const int32_t *bias = (const int32_t *)(const void *)a->w;\n"
        f"    const float *scale = (const float *)(const void *)(a->w + {4 * n.K});\n"
        f"    ref_conv2d_s8(&GEOM, a->x, a->w + {consts.w_offset}, bias, scale, a->y);\n"
        "}\n")


def bindings(cost: RefCost) -> tuple[Binding, ...]:
    layout = ConstLayout(BYTES_PER_CHANNEL, "k.fy.fx.c", build)
    key = BindingKey("conv2d", "onnx", Precision(8, 8, 8), "conv")
    return (Binding(family=FAMILY, name="ref_conv2d_s8", key=key, cost=cost, check=check,
                    emit=emit, consts=layout, tiles=TileRules(l3=False, untiled=True),
                    whole_function=True),)
