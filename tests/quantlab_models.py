"""QuantLab-style integer ONNX test networks (RequantShift as Deeploy's networks have it) and an
independent numpy statement of their semantics.

`QNet` builds a graph with onnx.helper the way QuantLab exports it: float32 tensors holding
integers, NCHW, Conv / Gemm (transB) / MatMul with integer weights, the custom `RequantShift` node
in the default domain (inputs x, mul, add; attributes div, n_levels_out, signed), MaxPool,
Flatten, Reshape, integer Add. While building it runs `evaluate` on sample inputs so that every
RequantShift's div is chosen to spread its outputs over the levels (not all clipped).

`evaluate` is the reference interpreter of these tests: plain int64 numpy written from the ONNX
operator definitions and the RequantShift semantics of notes/integer-onnx.md,
    y = clip(floor((x·mul + add + div/2) / div), lo, hi),
[lo, hi] = [−n/2, n/2 − 1] signed else [0, n − 1]. It shares no code with tilewise.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, strides, pads, group: int) -> np.ndarray:
    n, c, h, wd = x.shape
    k, cg, fy, fx = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oy = (xp.shape[2] - fy) // strides[0] + 1
    ox = (xp.shape[3] - fx) // strides[1] + 1
    out = np.zeros((n, k, oy, ox), np.int64)
    kg = k // group
    for gi in range(group):
        xs = xp[:, gi * cg:(gi + 1) * cg]
        ws = w[gi * kg:(gi + 1) * kg].astype(np.int64)
        for i in range(fy):
            for j in range(fx):
                patch = xs[:, :, i:i + strides[0] * oy:strides[0], j:j + strides[1] * ox:strides[1]]
                out[:, gi * kg:(gi + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, ws[:, :, i, j])
    if b is not None:
        out += b.astype(np.int64).reshape(1, k, 1, 1)
    return out


def _maxpool(x: np.ndarray, kernel, strides, pads) -> np.ndarray:
    n, c, h, w = x.shape
    low = np.iinfo(np.int64).min
    xp = np.full((n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]), low, np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    oy = (xp.shape[2] - kernel[0]) // strides[0] + 1
    ox = (xp.shape[3] - kernel[1]) // strides[1] + 1
    out = np.full((n, c, oy, ox), low, np.int64)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            out = np.maximum(out, xp[:, :, i:i + strides[0] * oy:strides[0], j:j + strides[1] * ox:strides[1]])
    return out


def requant_shift(x, mul, add, div: int, n_levels: int, signed: int) -> np.ndarray:
    lo, hi = (-(n_levels // 2), n_levels // 2 - 1) if signed else (0, n_levels - 1)
    v = x.astype(np.int64) * mul.astype(np.int64) + add.astype(np.int64) + div // 2
    return np.clip(np.floor_divide(v, div), lo, hi)


def evaluate(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor of `model` (int64) for integer `feeds` (NCHW)."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env = {k: np.round(v).astype(np.int64) for k, v in env.items()}
    env.update({k: np.asarray(v, np.int64) for k, v in feeds.items()})
    for node in model.graph.node:
        a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Conv":
            y = _conv(x[0], x[1], x[2] if len(x) > 2 else None, a.get("strides", [1, 1]), a.get("pads", [0] * 4),
                      a.get("group", 1))
        elif op == "Gemm":
            w = x[1].T if a.get("transB", 0) else x[1]
            y = x[0] @ w + (x[2] if len(x) > 2 else 0)
        elif op == "MatMul":
            y = x[0] @ x[1]
        elif op == "RequantShift":
            y = requant_shift(x[0], x[1], x[2], int(a["div"]), int(a["n_levels_out"]), int(a["signed"]))
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "MaxPool":
            y = _maxpool(x[0], a["kernel_shape"], a.get("strides", [1, 1]), a.get("pads", [0] * 4))
        elif op == "Flatten":
            y = x[0].reshape(x[0].shape[0], -1)
        elif op == "Reshape":
            y = x[0].reshape(x[1])
        else:
            raise AssertionError(f"the test interpreter has no {op}")
        env[node.output[0]] = y
    return env


class QNet:
    """A QuantLab-style graph under construction (module docstring)."""

    def __init__(self, name: str, shape: tuple[int, ...], seed: int = 0, in_type: int = TensorProto.FLOAT,
                 in_range: tuple[int, int] = (0, 255), wmax: int = 128, mul_max: int = 8) -> None:
        self.name, self.shape, self.in_type, self.wmax, self.mul_max = name, shape, in_type, wmax, mul_max
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0
        self.samples = [{"x": self.rng.integers(in_range[0], in_range[1] + 1, shape)} for _ in range(4)]

    def _name(self, op: str) -> str:
        self.count += 1
        return f"{op.lower()}{self.count}"

    def const(self, base: str, arr: np.ndarray, dtype=np.float32) -> str:
        name = self._name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype), name))
        return name

    def _model(self) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, self.name, [helper.make_tensor_value_info("x", self.in_type, self.shape)],
                              [], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 9  # what the installed onnxruntime reads
        return m

    def values(self, name: str) -> list[np.ndarray]:
        m = self._model()
        return [evaluate(m, s)[name] for s in self.samples]

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self._name(op)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k=(3, 3), stride=(1, 1), pads=(1, 1, 1, 1), group: int = 1,
             bias: bool = True) -> str:
        w = self.const("w", self.rng.integers(-self.wmax, self.wmax, (cout, cin // group, *k)))
        ins = [x, w] + ([self.const("b", self.rng.integers(-2000, 2000, cout))] if bias else [])
        return self.node("Conv", ins, kernel_shape=list(k), strides=list(stride), pads=list(pads), group=group)

    def gemm(self, x: str, cin: int, cout: int, bias: str | None = None) -> str:
        w = self.const("w", self.rng.integers(-self.wmax, self.wmax, (cout, cin)))
        b = bias or self.const("b", self.rng.integers(-2000, 2000, cout))
        return self.node("Gemm", [x, w, b], transB=1)

    def matmul(self, x: str, cin: int, cout: int) -> str:
        return self.node("MatMul", [x, self.const("w", self.rng.integers(-self.wmax, self.wmax, (cin, cout)))])

    def rq(self, x: str, signed: int = 1, n_levels: int = 256, mul: str | None = None, add: str | None = None,
           per_channel: bool = True, spread: float = 1.0) -> str:
        """RequantShift with div chosen from the sample values (module docstring)."""
        vals = np.concatenate([v.reshape(-1) for v in self.values(x)])
        c = self.values(x)[0].shape[1]
        shape = ((c, 1, 1) if len(self.values(x)[0].shape) == 4 else (c,)) if per_channel else ()
        if mul is None:
            mul = self.const("mul", self.rng.integers(1, self.mul_max, shape))
        if add is None:
            add = self.const("add", self.rng.integers(-64, 64, shape) * 16)
        kmax = float(np.abs(numpy_helper.to_array(next(i for i in self.inits if i.name == mul))).max())
        span = float(np.percentile(np.abs(vals), 90)) * kmax / (n_levels / 2) / spread
        div = 1 << max(0, int(np.ceil(np.log2(max(span, 1.0)))))
        return self.node("RequantShift", [x, mul, add], div=div, n_levels_out=n_levels, signed=signed)

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        m = self._model()
        m.graph.output.extend(helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs)
        return m


def fused_net(wmax: int = 16, mul_max: int = 8) -> onnx.ModelProto:
    """RequantShift fused after a conv, a strided depthwise conv, a Gemm (transB) and a MatMul, with
    MaxPool and Flatten between; unsigned then signed levels, per-channel and scalar terms. Weights
    in [−wmax, wmax), RequantShift multipliers in [1, mul_max) (large ones take x·mul past 2^24,
    where only the int64 arithmetic of the expanded copy stays exact)."""
    n = QNet("ql_fused", (1, 3, 12, 10), seed=1, wmax=wmax, mul_max=mul_max)
    x = n.rq(n.conv("x", 3, 8), signed=0)
    x = n.rq(n.conv(x, 8, 8, stride=(2, 2), group=8), signed=1)
    x = n.node("MaxPool", [x], kernel_shape=[2, 2], strides=[1, 1])
    x = n.node("Flatten", [x])
    x = n.rq(n.gemm(x, 8 * 5 * 4, 16), signed=1, per_channel=False)
    x = n.rq(n.matmul(x, 16, 10), signed=1)
    return n.model([x])


def residual_net(signed: int = 1) -> onnx.ModelProto:
    """A residual block: one branch conv → RequantShift, the other a standalone identity
    RequantShift; Add → RequantShift; then Reshape and a dense layer with a 2-D standalone
    RequantShift and a 2-D Add → RequantShift. `signed` = 0: the branches are unsigned (uint8)."""
    n = QNet(f"ql_residual_{'s8' if signed else 'u8'}", (1, 4, 8, 8), seed=2, wmax=16)
    x = n.rq(n.conv("x", 4, 8), signed=signed)
    a = n.rq(n.conv(x, 8, 8), signed=signed)
    one = n.const("one", np.ones((8, 1, 1)))
    b = n.rq(x, signed=signed, mul=one, add=n.const("zero", np.zeros((8, 1, 1))))
    y = n.rq(n.node("Add", [a, b]), signed=1, spread=0.7)
    y = n.node("Reshape", [y, n.const("shape", np.array([1, 8 * 8 * 8]), np.int64)])
    f = n.rq(n.gemm(y, 512, 12), signed=signed)
    g = n.rq(f, signed=signed, per_channel=False)
    out = n.rq(n.node("Add", [f, g]), signed=1)
    return n.model([out])


def shared_net() -> onnx.ModelProto:
    """Shared constants: one `add` (and `mul`) feeding two RequantShifts and a Gemm's bias; one conv
    output read by two RequantShifts whose results are added."""
    n = QNet("ql_shared", (1, 2, 6, 6), seed=3, wmax=16)
    c = n.conv("x", 2, 6)
    mul = n.const("mul", n.rng.integers(1, 32, (6, 1, 1)))
    add = n.const("add", n.rng.integers(-500, 500, (6, 1, 1)))
    p = n.rq(c, signed=1, mul=mul, add=add)
    q = n.rq(c, signed=1, mul=mul, add=add, spread=0.5)
    s = n.node("Flatten", [n.rq(n.node("Add", [p, q]), signed=1)])
    bias = n.const("bias", n.rng.integers(-3000, 3000, 12))
    f = n.gemm(s, 6 * 6 * 6, 12, bias=bias)
    out = n.rq(f, signed=1, add=bias)
    return n.model([out])


def int8_input_net() -> onnx.ModelProto:
    """An int8-typed input (values in [−128, 127]) into a conv → RequantShift and a dense layer."""
    n = QNet("ql_int8", (1, 3, 6, 6), seed=4, in_type=TensorProto.INT8, in_range=(-128, 127), wmax=16)
    n.samples = [{"x": s["x"]} for s in n.samples]
    x = n.rq(n.conv("x", 3, 4, k=(1, 1), pads=(0, 0, 0, 0)), signed=1)
    x = n.rq(n.gemm(n.node("Flatten", [x]), 4 * 6 * 6, 5), signed=1)
    return n.model([x])


def wide_dense_net() -> onnx.ModelProto:
    """A dense layer over 1024 inputs of [0, 255] with full-range 8-bit weights: its accumulator may
    pass 2^24, so onnxruntime's float32 Gemm is not provably exact on it."""
    n = QNet("ql_wide", (1, 4, 16, 16), seed=5)
    return n.model([n.rq(n.gemm(n.node("Flatten", ["x"]), 1024, 4), signed=1)])


NETS = {"fused": fused_net, "fused_wide_mul": lambda: fused_net(wmax=128, mul_max=1 << 12),
        "residual": residual_net, "residual_u8": lambda: residual_net(signed=0),
        "shared": shared_net, "int8_input": int8_input_net}
