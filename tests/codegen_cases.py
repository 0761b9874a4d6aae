"""Small integer networks built directly as IR Graphs, for the code generation tests.

`layer_graph(spec, seed)` builds a one- or two-layer network around one layer of `spec` — conv,
depthwise, dense, average/max pool, or an elementwise add (fed by the network input and a
depthwise 3x3 of it, so its two operands differ) — with random int8 weights, zero points, and
per-channel scales chosen so that outputs spread over the int8 range, then lowers it
(passes.lower). Requantization modes: tflite (double or single rounding) and onnx.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend.onnx_qparams import add_params as onnx_add_params
from tilewise.golden.conv import conv2d_acc, dense_acc
from tilewise.ir.graph import Graph, Node
from tilewise.ir.layer import LayerGraph
from tilewise.ir.ops import Op
from tilewise.ir.params import (
    Conv2dParams,
    FullyConnectedParams,
    MaxPoolParams,
    OnnxAddParams,
    OpParams,
    TfliteAddSubParams,
    TfliteAvgPoolParams,
)
from tilewise.ir.requant import Requant, quantize_multiplier, tflite_requant
from tilewise.ir.shapes import conv_out
from tilewise.ir.tensor import QuantParams, Tensor
from tilewise.passes import lower


@dataclass(frozen=True)
class LayerSpec:
    kind: str                      # conv | dwconv | fc | avgpool | maxpool | add
    c: int                         # input channels
    k: int                         # output channels (conv, fc)
    h: int
    w: int
    fy: int = 1
    fx: int = 1
    sy: int = 1
    sx: int = 1
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    mode: str = "tflite"           # tflite | tflite_single | onnx

    @property
    def out_hw(self) -> tuple[int, int]:
        t, l, b, r = self.pads
        return conv_out(self.h, self.fy, self.sy, t, b), conv_out(self.w, self.fx, self.sx, l, r)


def _q(scale, zp, axis=None) -> QuantParams:
    s = tuple(float(np.float32(v)) for v in np.atleast_1d(scale))
    z = tuple(int(v) for v in np.atleast_1d(zp))
    return QuantParams(s, z, axis)


def _requant(mode: str, acc: np.ndarray, rng: np.random.Generator, zp: int) -> Requant:
    """A per-channel requant of `mode` whose outputs of `acc` spread over the int8 range."""
    k = acc.shape[-1]
    spread = acc.reshape(-1, k).std(axis=0) + 1.0
    real = rng.uniform(0.5, 2.0, k) * 40.0 / spread
    qmin, qmax = (zp, 127) if rng.random() < 0.3 else (-128, 127)   # fused ReLU sometimes
    if mode in ("tflite", "tflite_single"):
        rq = tflite_requant(real, zp, qmin, qmax)
        return replace(rq, rounding="single") if mode == "tflite_single" else rq
    return Requant("onnx", multiplier=np.ones(k, np.int64), shift=np.zeros(k, np.int64),
                   zero_point=zp, qmin=qmin, qmax=qmax, scale=real.astype(np.float32))


def _weighted(spec: LayerSpec, rng: np.random.Generator, x_name: str, x: Tensor, zp_x: int,
              out: str) -> tuple[Node, dict[str, Tensor]]:
    """conv2d / depthwise / fully_connected node on tensor x with random constants."""
    calib = rng.integers(-128, 128, x.shape).astype(np.int64)
    if spec.kind == "fc":
        w = rng.integers(-127, 128, (spec.k, spec.c)).astype(np.int8)
        bias = rng.integers(-3000, 3000, spec.k).astype(np.int32)
        acc = dense_acc(calib, w, bias, zp_x)
        shape = (1, spec.k)
    else:
        dw = spec.kind == "dwconv"
        k = spec.c if dw else spec.k
        w = rng.integers(-127, 128, (k, spec.fy, spec.fx, 1 if dw else spec.c)).astype(np.int8)
        bias = rng.integers(-3000, 3000, k).astype(np.int32)
        acc = conv2d_acc(calib, w, bias, zp_x, 0, (spec.sy, spec.sx), spec.pads,
                         groups=spec.c if dw else 1)
        oy, ox = spec.out_hw
        shape = (1, oy, ox, k)
    zp_y = int(rng.integers(-20, 21))
    rq = _requant(spec.mode, acc, rng, zp_y)
    s_w = rng.uniform(0.002, 0.02, w.shape[0])
    tensors = {
        f"{out}_w": Tensor(f"{out}_w", w.shape, "int8", _q(s_w, np.zeros(w.shape[0]), 0), w),
        f"{out}_b": Tensor(f"{out}_b", bias.shape, "int32", None, bias),
        out: Tensor(out, shape, "int8", _q(0.05, zp_y)),
    }
    if spec.kind == "fc":
        op, params = Op.FULLY_CONNECTED, FullyConnectedParams(requant=rq)
    else:
        op, params = Op.CONV2D, Conv2dParams(stride=(spec.sy, spec.sx), pads=spec.pads, dilation=(1, 1),
                                             groups=spec.c if spec.kind == "dwconv" else 1, requant=rq)
    node = Node(out, op, (x_name, f"{out}_w", f"{out}_b"), (out,), params)
    return node, tensors


def layer_graph(spec: LayerSpec, seed: int) -> LayerGraph:
    """The lowered network of one layer of `spec` (module docstring)."""
    rng = np.random.default_rng(seed)
    zp_x = int(rng.integers(-30, 31))
    in_shape = (1, spec.c) if spec.kind == "fc" else (1, spec.h, spec.w, spec.c)
    x = Tensor("x", in_shape, "int8", _q(0.04, zp_x))
    tensors: dict[str, Tensor] = {"x": x}
    nodes: list[Node] = []
    if spec.kind in ("conv", "dwconv", "fc"):
        node, ts = _weighted(spec, rng, "x", x, zp_x, "y")
        nodes.append(node)
        tensors.update(ts)
    elif spec.kind in ("avgpool", "maxpool"):
        oy, ox = spec.out_hw
        qmin = -128 if rng.random() < 0.7 else int(rng.integers(-60, 0))
        op, cls = (Op.AVG_POOL, TfliteAvgPoolParams) if spec.kind == "avgpool" else (Op.MAX_POOL, MaxPoolParams)
        tensors["y"] = Tensor("y", (1, oy, ox, spec.c), "int8", _q(0.04, zp_x))
        nodes.append(Node("y", op, ("x",), ("y",), cls(
            kernel=(spec.fy, spec.fx), stride=(spec.sy, spec.sx), pads=spec.pads, qmin=qmin, qmax=127)))
    elif spec.kind == "add":
        side = replace(spec, kind="dwconv", fy=3, fx=3, sy=1, sx=1, pads=(1, 1, 1, 1), mode="tflite")
        node, ts = _weighted(side, rng, "x", x, zp_x, "d")
        nodes.append(node)
        tensors.update(ts)
        sa, sb, so = 0.04, float(tensors["d"].quant.scale[0]), float(rng.uniform(0.03, 0.1))
        za, zb, zo = zp_x, tensors["d"].quant.zp, int(rng.integers(-20, 21))
        tensors["y"] = Tensor("y", x.shape, "int8", _q(so, zo))
        if spec.mode == "onnx":
            ra, rb, fixed = onnx_add_params(sa, za, sb, zb, so, zo)
            params: OpParams = OnnxAddParams(a_index=0, ratio_a=ra, ratio_b=rb, fixed=fixed, qmin=-128, qmax=127)
        else:
            twice = 2.0 * max(sa, sb)
            m1, m2 = quantize_multiplier(sa / twice), quantize_multiplier(sb / twice)
            mo = quantize_multiplier(twice / ((1 << 20) * so))
            params = TfliteAddSubParams(left_shift=20, input_multipliers=(m1[0], m2[0]),
                                        input_shifts=(m1[1], m2[1]), output_multiplier=mo[0],
                                        output_shift=mo[1], qmin=-128, qmax=127)
        nodes.append(Node("y", Op.ADD, ("x", "d"), ("y",), params))
    else:
        raise ValueError(spec.kind)
    g = Graph(f"{spec.kind}_net", tensors, tuple(nodes), ("x",), ("y",), source=f"{spec}")
    return lower(g)


@pytest.fixture(scope="session")
def c_cache(tmp_path_factory) -> Path:
    """A per-session (per xdist worker) cache of the compiled shared C library objects."""
    return tmp_path_factory.mktemp("tw_objs")
