"""Small float ONNX networks built with onnx.helper, their quantization with onnxruntime's
quantize_static (QDQ or QOperator, per tensor or per channel, int8 or uint8 activations), and helpers
to compare the golden model with onnxruntime on every intermediate quantized tensor.

Weights and calibration data are drawn from seeded numpy generators, so every model is deterministic.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
#: float compute ops that must not survive onnxruntime's graph optimization in a quantized model
FLOAT_COMPUTE = ("Conv", "Gemm", "MatMul", "Add", "AveragePool", "GlobalAveragePool", "Softmax", "Concat")


class Net:
    """A float NCHW network under construction; every method returns the name of its output."""

    def __init__(self, name: str, shape: tuple[int, ...], seed: int = 0) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.shapes: dict[str, tuple[int, ...]] = {"x": tuple(shape)}
        self.n = 0

    def _name(self, op: str) -> str:
        self.n += 1
        return f"{op.lower()}{self.n}"

    def const(self, base: str, arr: np.ndarray) -> str:
        name = f"{base}_{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def _node(self, op: str, inputs: list[str], shape: tuple[int, ...], **attrs) -> str:
        out = self._name(op)
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{out}_node", **attrs))
        self.shapes[out] = tuple(int(d) for d in shape)
        return out

    def conv(self, x: str, cout: int, k: tuple[int, int] = (3, 3), stride: tuple[int, int] = (1, 1),
             pads: tuple[int, int, int, int] = (1, 1, 1, 1), group: int = 1, relu: bool = True) -> str:
        n, c, h, w = self.shapes[x]
        fan_in = c // group * k[0] * k[1]
        wt = (self.rng.standard_normal((cout, c // group, *k)) / np.sqrt(fan_in)).astype(np.float32)
        b = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
        oh = (h + pads[0] + pads[2] - k[0]) // stride[0] + 1
        ow = (w + pads[1] + pads[3] - k[1]) // stride[1] + 1
        y = self._node("Conv", [x, self.const("w", wt), self.const("b", b)], (n, cout, oh, ow), kernel_shape=list(k),
                       strides=list(stride), pads=list(pads), group=group)
        return self.relu(y) if relu else y

    def relu(self, x: str) -> str:
        return self._node("Relu", [x], self.shapes[x])

    def clip(self, x: str, lo: float, hi: float) -> str:
        return self._node("Clip", [x, self.const("lo", np.float32(lo)), self.const("hi", np.float32(hi))],
                          self.shapes[x])

    def add(self, a: str, b: str, relu: bool = False) -> str:
        y = self._node("Add", [a, b], np.broadcast_shapes(self.shapes[a], self.shapes[b]))
        return self.relu(y) if relu else y

    def _pool(self, op: str, x: str, k: tuple[int, int], stride: tuple[int, int], pads: tuple[int, int, int, int],
              **attrs) -> str:
        n, c, h, w = self.shapes[x]
        oh = (h + pads[0] + pads[2] - k[0]) // stride[0] + 1
        ow = (w + pads[1] + pads[3] - k[1]) // stride[1] + 1
        return self._node(op, [x], (n, c, oh, ow), kernel_shape=list(k), strides=list(stride), pads=list(pads), **attrs)

    def avgpool(self, x: str, k=(2, 2), stride=(2, 2), pads=(0, 0, 0, 0), count_include_pad: int = 0) -> str:
        return self._pool("AveragePool", x, k, stride, pads, count_include_pad=count_include_pad)

    def maxpool(self, x: str, k=(2, 2), stride=(2, 2), pads=(0, 0, 0, 0)) -> str:
        return self._pool("MaxPool", x, k, stride, pads)

    def gap(self, x: str) -> str:
        n, c, _, _ = self.shapes[x]
        return self._node("GlobalAveragePool", [x], (n, c, 1, 1))

    def flatten(self, x: str) -> str:
        s = self.shapes[x]
        return self._node("Flatten", [x], (s[0], int(np.prod(s[1:]))), axis=1)

    def reshape(self, x: str, shape: tuple[int, ...]) -> str:
        return self._node("Reshape", [x, self.const("shape", np.asarray(shape, dtype=np.int64))], shape)

    def gemm(self, x: str, n_out: int, relu: bool = False, trans_b: int = 1) -> str:
        m, k = self.shapes[x]
        wt = (self.rng.standard_normal((n_out, k) if trans_b else (k, n_out)) / np.sqrt(k)).astype(np.float32)
        b = (self.rng.standard_normal(n_out) * 0.1).astype(np.float32)
        y = self._node("Gemm", [x, self.const("w", wt), self.const("b", b)], (m, n_out), transB=trans_b)
        return self.relu(y) if relu else y

    def matmul(self, x: str, n_out: int) -> str:
        s = self.shapes[x]
        wt = (self.rng.standard_normal((s[-1], n_out)) / np.sqrt(s[-1])).astype(np.float32)
        return self._node("MatMul", [x, self.const("w", wt)], (*s[:-1], n_out))

    def softmax(self, x: str, axis: int = -1) -> str:
        return self._node("Softmax", [x], self.shapes[x], axis=axis)

    def concat(self, xs: list[str], axis: int = 1) -> str:
        shape = list(self.shapes[xs[0]])
        shape[axis] = sum(self.shapes[x][axis] for x in xs)
        return self._node("Concat", xs, tuple(shape), axis=axis)

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(self.shapes["x"]))],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(self.shapes[o])) for o in outputs],
            self.inits,
        )
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 9
        onnx.checker.check_model(m)
        return m


# ---------------------------------------------------------------------------------------------
# the test networks
# ---------------------------------------------------------------------------------------------

def convs_net() -> onnx.ModelProto:
    """Odd sizes, strides 1 and 2, asymmetric and no padding, non-square kernels, a clipped conv."""
    n = Net("convs", (1, 3, 11, 13), seed=1)
    y = n.conv("x", 8, (3, 3), (1, 1), (1, 1, 1, 1))
    y = n.conv(y, 12, (3, 3), (2, 2), (0, 1, 1, 0))
    y = n.conv(y, 6, (1, 3), (1, 2), (0, 0, 0, 1), relu=False)
    y = n.clip(n.conv(y, 10, (3, 2), (2, 1), (1, 0, 0, 0), relu=False), 0.0, 6.0)
    return n.model([y])


def residual_net() -> onnx.ModelProto:
    """conv -> (depthwise 3x3 stride 1 -> pointwise) + skip -> relu; depthwise stride 2; pointwise."""
    n = Net("residual", (1, 4, 9, 10), seed=2)
    a = n.conv("x", 8, (3, 3), (1, 1), (1, 1, 1, 1))
    d = n.conv(a, 8, (3, 3), (1, 1), (1, 1, 1, 1), group=8)
    p = n.conv(d, 8, (1, 1), (1, 1), (0, 0, 0, 0), relu=False)
    r = n.add(a, p, relu=True)
    d2 = n.conv(r, 8, (3, 3), (2, 2), (1, 1, 1, 1), group=8)
    y = n.conv(d2, 16, (1, 1), (1, 1), (0, 0, 0, 0))
    return n.model([y])


def pools_net() -> onnx.ModelProto:
    """Average pools with and without counted padding, a max pool, a global average pool."""
    n = Net("pools", (1, 6, 13, 11), seed=3)
    a = n.conv("x", 8, (3, 3), (1, 1), (1, 1, 1, 1))
    p1 = n.avgpool(a, (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=0)
    p2 = n.avgpool(p1, (2, 3), (1, 2), (1, 0, 0, 1), count_include_pad=1)
    m = n.maxpool(p2, (3, 3), (2, 1), (1, 1, 0, 1))
    g = n.gap(m)
    return n.model([g])


def dense_net() -> onnx.ModelProto:
    """Flatten of a 4-D tensor with H, W > 1 into Gemm (weights permuted to HWC), Gemm, Softmax."""
    n = Net("dense", (1, 3, 6, 5), seed=4)
    a = n.conv("x", 4, (3, 3), (2, 2), (1, 1, 1, 1))
    f = n.flatten(a)
    h = n.gemm(f, 16, relu=True)
    y = n.gemm(h, 10, trans_b=0)
    return n.model([n.softmax(y)])


def matmul_net() -> onnx.ModelProto:
    """Reshape of a 4-D tensor to 2-D read by a MatMul (weights permuted; with the reshape exposed as an
    output, expose_intermediates, the IR transposes instead), Relu fused into the first MatMul."""
    n = Net("matmul", (1, 2, 4, 6), seed=5)
    a = n.conv("x", 6, (3, 3), (1, 1), (1, 1, 1, 1))
    r = n.reshape(a, (1, 6 * 4 * 6))
    y = n.matmul(r, 12)
    z = n.matmul(n.relu(y), 7)
    return n.model([z])


def concat_net() -> onnx.ModelProto:
    """Two conv branches concatenated along channels (different scales), then a conv."""
    n = Net("concat", (1, 3, 8, 7), seed=6)
    a = n.conv("x", 5, (3, 3), (1, 1), (1, 1, 1, 1))
    b = n.conv("x", 4, (1, 1), (1, 1), (0, 0, 0, 0), relu=False)
    c = n.concat([a, b], axis=1)
    return n.model([n.conv(c, 6, (3, 3), (2, 2), (1, 1, 1, 1))])


NETS = {
    "convs": convs_net, "residual": residual_net, "pools": pools_net, "dense": dense_net,
    "matmul": matmul_net, "concat": concat_net,
}


# ---------------------------------------------------------------------------------------------
# quantization and comparison helpers
# ---------------------------------------------------------------------------------------------

def quantize(model: onnx.ModelProto, out: Path, fmt: str = "QDQ", per_channel: bool = False, act: str = "int8",
             seed: int = 0, samples: int = 4) -> Path:
    """quantize_static `model` into `out` with a small random calibration set."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(samples)])

        def get_next(self):
            return next(self.it, None)

    src = out.with_suffix(".float.onnx")
    onnx.save(model, str(src))
    quantize_static(
        str(src), str(out), Reader(),
        quant_format=QuantFormat.QDQ if fmt == "QDQ" else QuantFormat.QOperator,
        per_channel=per_channel,
        activation_type=QuantType.QInt8 if act == "int8" else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return out


INT_PRODUCERS = ("QuantizeLinear", "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearAveragePool",
                 "QLinearGlobalAveragePool", "QLinearSoftmax", "QLinearConcat")


def expose_intermediates(path: Path, out: Path) -> Path:
    """A copy of a quantized model whose every integer intermediate tensor is also a graph output."""
    m = onnx.load(str(path))
    have = {o.name for o in m.graph.output}
    qop = not any(n.op_type == "DequantizeLinear" and n.input[0] not in {i.name for i in m.graph.initializer}
                  and n.output[0] not in have for n in m.graph.node)
    for n in m.graph.node:
        if n.op_type in INT_PRODUCERS or (qop and n.op_type in ("MaxPool", "Reshape", "Flatten")):
            for o in n.output:
                if o and o not in have:
                    m.graph.output.append(onnx.ValueInfoProto(name=o))
                    have.add(o)
    onnx.save(m, str(out))
    return out


def ort_optimized_ops(path: Path, tmp: Path) -> list[str]:
    """Op types of the graph onnxruntime actually runs (reference session options)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.add_session_config_entry("session.qdqisint8allowed", "1")
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(tmp)
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return [n.op_type for n in onnx.load(str(tmp)).graph.node]


# ---------------------------------------------------------------------------------------------
# a NEMO / QuantLab-style integer graph, built by hand
# ---------------------------------------------------------------------------------------------

def nemo_net(seed: int = 7) -> onnx.ModelProto:
    """Integer-valued float graph: Pad -> Conv -> Mul -> Add -> Div -> Floor -> Clip (DORY's BNRelu),
    MaxPool, 1x1 Conv -> Mul -> Div -> Floor -> Clip, Flatten, Gemm -> Mul -> Add -> Div -> Floor -> Clip.
    Every intermediate stays below 2^24, so onnxruntime's float32 evaluation is exact."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []

    def c(name: str, arr) -> str:
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    f = np.float32
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["xp"], mode="constant", name="pad0"),
        helper.make_node("Conv", ["xp", c("w1", rng.integers(-31, 32, (8, 3, 3, 3))),
                                  c("b1", rng.integers(-2000, 2000, 8))],
                         ["c1"], kernel_shape=[3, 3], strides=[2, 1], name="conv1"),
        helper.make_node("Mul", ["c1", c("k1", rng.integers(1, 40, (1, 8, 1, 1)))], ["m1"], name="bn_mul1"),
        helper.make_node("Add", ["m1", c("l1", rng.integers(-50000, 200000, (1, 8, 1, 1)))], ["a1"], name="bn_add1"),
        helper.make_node("Div", ["a1", c("d1", f(2 ** 14))], ["q1"], name="shift1"),
        helper.make_node("Floor", ["q1"], ["fl1"], name="floor1"),
        helper.make_node("Clip", ["fl1", c("lo1", f(0)), c("hi1", f(255))], ["y1"], name="relu1"),
        helper.make_node("MaxPool", ["y1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        helper.make_node("Conv", ["p1", c("w2", rng.integers(-20, 21, (6, 8, 1, 1)))], ["c2"], kernel_shape=[1, 1],
                         name="conv2"),
        helper.make_node("Mul", ["c2", c("k2", f(23))], ["m2"], name="mul2"),
        helper.make_node("Div", ["m2", c("d2", f(2 ** 10))], ["q2"], name="shift2"),
        helper.make_node("Floor", ["q2"], ["fl2"], name="floor2"),
        helper.make_node("Clip", ["fl2", c("lo2", f(0)), c("hi2", f(255))], ["y2"], name="relu2"),
        helper.make_node("Flatten", ["y2"], ["fl"], axis=1, name="flatten"),
        helper.make_node("Gemm", ["fl", c("w3", rng.integers(-60, 61, (5, 6 * 4 * 2))),
                                  c("b3", rng.integers(-500, 500, 5))],
                         ["g"], transB=1, name="fc"),
        helper.make_node("Mul", ["g", c("k3", rng.integers(1, 9, 5))], ["m3"], name="mul3"),
        helper.make_node("Add", ["m3", c("l3", rng.integers(-9000, 9000, 5))], ["a3"], name="add3"),
        helper.make_node("Div", ["a3", c("d3", f(2 ** 9))], ["q3"], name="shift3"),
        helper.make_node("Floor", ["q3"], ["fl3"], name="floor3"),
        helper.make_node("Clip", ["fl3", c("lo3", f(-128)), c("hi3", f(127))], ["y"], name="clip3"),
    ]
    inits.append(numpy_helper.from_array(np.asarray([0, 0, 1, 1, 0, 0, 1, 0], dtype=np.int64), "pads"))
    graph = helper.make_graph(
        nodes, "nemo",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 15, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m
