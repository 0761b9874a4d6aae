"""NEMO integer ONNX networks as NEMO exports them (../shared/notes/integer-onnx.md), built with
onnx.helper: opset 9, float32 tensors holding integers, NCHW, the input in [0, 255].

`NemoNet` writes the patterns of the note one by one (Cast chains with an int64 Mul/Div, truncating
Div without Floor, chains of Pads, a last Gemm without requantization, float tails); each test
network is built from them with seeded weights, so every model is deterministic.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NEMO_OPSET = 9
INT64, FLOAT = TensorProto.INT64, TensorProto.FLOAT


class NemoNet:
    """An integer-valued float32 NCHW graph under construction; methods return output names."""

    def __init__(self, name: str, shape: tuple[int, ...], seed: int = 0) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0
        self.shape = tuple(shape)

    def const(self, base: str, arr, dtype=np.float32) -> str:
        name = f"{base}_{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype=dtype), name))
        return name

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        self.n += 1
        out = f"{op.lower()}{self.n}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op.lower()}_{self.n}", **attrs))
        return out

    # -- layers ---------------------------------------------------------------------------------
    def conv(self, x: str, cin: int, cout: int, k: int = 3, pads: int = 0, stride: int = 1,
             wmax: int = 20, bias: bool = True) -> str:
        w = self.const("w", self.rng.integers(-wmax, wmax + 1, (cout, cin, k, k)))
        ins = [x, w] + ([self.const("b", self.rng.integers(-300, 300, cout))] if bias else [])
        return self.node("Conv", ins, kernel_shape=[k, k], pads=[pads] * 4, strides=[stride] * 2)

    def gemm(self, x: str, cin: int, cout: int, wmax: int = 30) -> str:
        w = self.const("w", self.rng.integers(-wmax, wmax + 1, (cout, cin)))
        b = self.const("b", self.rng.integers(-500, 500, cout))
        return self.node("Gemm", [x, w, b], transB=1)

    def matmul(self, x: str, cin: int, cout: int, wmax: int = 30) -> str:
        return self.node("MatMul", [x, self.const("w", self.rng.integers(-wmax, wmax + 1, (cin, cout)))])

    def pad(self, x: str, pads: tuple[int, int, int, int]) -> str:
        """opset-9 Pad (attribute pads) of the spatial axes: (top, left, bottom, right)."""
        t, l, b, r = pads
        return self.node("Pad", [x], mode="constant", pads=[0, 0, t, l, 0, 0, b, r], value=0.0)

    def flatten(self, x: str) -> str:
        return self.node("Flatten", [x], axis=1)

    # -- requantization chains ------------------------------------------------------------------
    def cast_requant(self, x: str, kappa, lam, m: int, div: int, lo: float, hi: float,
                     casts: int = 1) -> str:
        """Mul(κ) → Add(λ) → Cast(INT64) → Mul(m) → Div(D) → Cast(INT64)×casts → Cast(FLOAT) →
        Clip(lo, hi): NEMO's batch-norm + requantization, int64 Div truncating toward zero."""
        y = self.node("Mul", [x, self.const("kappa", kappa)])
        y = self.node("Add", [y, self.const("lambda", lam)])
        y = self.node("Cast", [y], to=INT64)
        y = self.node("Mul", [y, self.const("m", np.int64(m), np.int64)])
        y = self.node("Div", [y, self.const("D", np.int64(div), np.int64)])
        for _ in range(casts):
            y = self.node("Cast", [y], to=INT64)
        y = self.node("Cast", [y], to=FLOAT)
        return self.node("Clip", [y], min=float(lo), max=float(hi))

    def trunc_requant(self, x: str, k, lam, d: int, lo: float, hi: float) -> str:
        """Mul(k) → Add(λ) → Div(2^d) in float → Cast(INT64) (truncation) → Cast(FLOAT) → Clip."""
        y = self.node("Mul", [x, self.const("k", k)])
        y = self.node("Add", [y, self.const("lambda", lam)])
        y = self.node("Div", [y, self.const("two_d", np.float32(2 ** d))])
        y = self.node("Cast", [y], to=INT64)
        y = self.node("Cast", [y], to=FLOAT)
        return self.node("Clip", [y], min=float(lo), max=float(hi))

    def save(self, path: Path, out: str | list[str]) -> Path:
        """The model with graph outputs `out` (their shapes as onnx infers them)."""
        outs = [out] if isinstance(out, str) else out
        graph = helper.make_graph(
            self.nodes, self.name, [helper.make_tensor_value_info("x", FLOAT, list(self.shape))],
            [helper.make_empty_tensor_value_info(o) for o in outs], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", NEMO_OPSET)])
        model.ir_version = 7
        inferred = onnx.shape_inference.infer_shapes(model)
        known = {v.name: v for v in inferred.graph.value_info}
        graph.ClearField("output")
        graph.output.extend(known[o] if o in known else helper.make_tensor_value_info(o, FLOAT, None) for o in outs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", NEMO_OPSET)])
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
        return path


def nemo_cast_net(path: Path, div: int = 2 ** 21 - 1, lo: float = 0, hi: float = 255, casts: int = 2,
                  seed: int = 3) -> Path:
    """Pad → Pad(0) → Conv(pads 0) → cast chain (Div by `div`, clip [lo, hi]) → Conv → cast chain →
    Flatten → Gemm → cast chain: every linear layer requantized the NEMO way."""
    net = NemoNet("nemo_cast", (1, 3, 8, 8), seed)
    rng = net.rng
    y = net.pad(net.pad("x", (1, 1, 1, 1)), (0, 0, 0, 0))
    y = net.conv(y, 3, 8, 3, pads=0, wmax=20)
    m1 = int(div * 0.0011) | 1
    y = net.cast_requant(y, rng.integers(1, 12, (1, 8, 1, 1)), rng.integers(-4000, 4000, (1, 8, 1, 1)),
                         m1, div, lo, hi, casts)
    y = net.conv(y, 8, 6, 3, pads=1, stride=2, wmax=15)
    y = net.cast_requant(y, rng.integers(1, 6, (1, 6, 1, 1)), rng.integers(-2000, 2000, (1, 6, 1, 1)),
                         int(div * 0.004) | 1, div, lo, hi, casts)
    y = net.flatten(y)
    y = net.gemm(y, 6 * 4 * 4, 5, wmax=25)
    y = net.cast_requant(y, rng.integers(1, 4, (5,)), rng.integers(-900, 900, (5,)),
                         int(div * 0.02) | 1, div, -128, 127, casts)
    return net.save(path, y)


def nemo_residual_pool_net(path: Path, k_a: int = 2, k_b: int = 0, pool: int = 2, tail: str = "Floor",
                           seed: int = 4) -> Path:
    """Conv → chain (uint8) feeding two branches: a Conv → chain, and the identity; each branch
    Mul(2^k), Add, Div(2^k) with Casts, then `tail` (Floor then Clip, or Clip alone); then
    Pad → Pad(0) → AveragePool(pool×pool) → Mul(pool²) → Mul(m) → Div(2^d) → Floor; Flatten → Gemm →
    chain."""
    net = NemoNet("nemo_residual", (1, 3, 8, 8), seed)
    rng = net.rng
    a = net.conv("x", 3, 8, 3, pads=1, wmax=20)
    a = net.cast_requant(a, rng.integers(1, 6, (1, 8, 1, 1)), rng.integers(-3000, 3000, (1, 8, 1, 1)),
                         int(2 ** 21 * 0.003) | 1, 2 ** 21 - 1, 0, 255)
    b = net.conv(a, 8, 8, 3, pads=1, wmax=12)
    b = net.cast_requant(b, rng.integers(1, 6, (1, 8, 1, 1)), rng.integers(-3000, 3000, (1, 8, 1, 1)),
                         int(2 ** 21 * 0.001) | 1, 2 ** 21, 0, 255)
    ma = net.node("Mul", [a, net.const("sa", np.float32(2 ** k_a))])
    mb = net.node("Mul", [b, net.const("sb", np.float32(2 ** k_b))])
    y = net.node("Add", [ma, mb])
    y = net.node("Cast", [y], to=INT64)
    y = net.node("Div", [y, net.const("sd", np.int64(2 ** max(k_a, k_b)), np.int64)])
    y = net.node("Cast", [y], to=FLOAT)
    if tail == "Floor":
        y = net.node("Floor", [y])
    y = net.node("Clip", [y], min=0.0, max=255.0)
    y = net.pad(net.pad(y, (0, 0, 1, 1)), (0, 0, 0, 0))
    y = net.node("AveragePool", [y], kernel_shape=[pool, pool], strides=[pool, pool])
    y = net.node("Mul", [y, net.const("area", np.float32(pool * pool))])
    y = net.node("Mul", [y, net.const("pm", np.float32(3))])
    y = net.node("Div", [y, net.const("pd", np.float32(4))])
    y = net.node("Floor", [y])
    y = net.node("Clip", [y], min=0.0, max=255.0)
    y = net.flatten(y)
    side = (8 + 1) // pool
    y = net.gemm(y, 8 * side * side, 6, wmax=20)
    y = net.cast_requant(y, rng.integers(1, 4, (6,)), rng.integers(-900, 900, (6,)),
                         int(2 ** 21 * 0.01) | 1, 2 ** 21 - 1, -128, 127)
    return net.save(path, y)


def nemo_tail_net(path: Path, tail: str = "split", seed: int = 6) -> Path:
    """Conv → chain → Flatten → Gemm (int32 accumulator) followed by a float tail: "split"
    (Gather of two columns, each Unsqueezed, Sigmoid on one — two model outputs) or "logsoftmax"."""
    net = NemoNet("nemo_tail", (1, 3, 6, 6), seed)
    y = net.conv("x", 3, 4, 3, pads=1)
    y = net.cast_requant(y, np.ones((1, 4, 1, 1)), np.zeros((1, 4, 1, 1)), 3, 1023, 0, 255)
    y = net.gemm(net.flatten(y), 4 * 36, 4, wmax=20)
    if tail == "logsoftmax":
        return net.save(path, net.node("LogSoftmax", [y], axis=1))
    g0 = net.node("Gather", [y, net.const("i0", np.int64(0), np.int64)], axis=1)
    g1 = net.node("Gather", [y, net.const("i1", np.int64(1), np.int64)], axis=1)
    u0 = net.node("Sigmoid", [net.node("Unsqueeze", [g0], axes=[1])])
    u1 = net.node("Unsqueeze", [g1], axes=[1])
    return net.save(path, [u0, u1])
