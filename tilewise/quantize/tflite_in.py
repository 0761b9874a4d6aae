"""Float TFLite -> float ONNX (NCHW), so that `tilewise quantize` takes the MLPerf Tiny float parents.

Reads the flatbuffer with frontend/tflite.py's `read_flatbuffer` (no second parser) and writes the
same network as standard ONNX ops, which graph_out.py then quantizes:

| TFLite | ONNX |
|---|---|
| CONV_2D (OHWI weights) | Conv, weights transposed to OIHW |
| DEPTHWISE_CONV_2D (1HWO weights) | Conv with group = input channels, weights O1HW |
| FULLY_CONNECTED (2-D input, [N, K] weights) | Gemm transB=1 |
| ADD | Add |
| AVERAGE_POOL_2D | GlobalAveragePool when the window is the whole VALID input, else AveragePool (count_include_pad=0: |
|                 | TFLite averages over the valid taps)                                                               |
| RESHAPE to rank 2 | Flatten when H·W = 1, else Transpose to NHWC + Reshape (TFLite's element order) |
| SOFTMAX (beta 1) | Softmax (last axis) |
| fused RELU / RELU6 / RELU_N1_TO_1 | Relu / Clip(0, 6) / Clip(−1, 1) after the op |

Weights stored as int8 with a scale (a "dynamic-range" file: float activations, int8 weights, as
the MLPerf Tiny KWS float model) are dequantized: the ONNX model computes in float with those
weights (LiteRT runs such a file with hybrid kernels that also quantize activations on the fly, so
its outputs differ slightly from the ONNX float model, the reference here).
SAME padding becomes explicit pads (ir/shapes.same_pads: the extra row/column after, as TF).
The ONNX model's input is NCHW: a TFLite NHWC input [1, H, W, C] becomes [1, C, H, W] and
`nhwc_to_model` transposes NHWC calibration data accordingly. Tensor names are the TFLite ones
(frontend/tflite.ir_names), so per-layer SQNR names match the TFLite file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import TilewiseError
from ..frontend.tflite import ir_names, read_flatbuffer
from ..ir.shapes import same_pads

ACT = {0: None, 1: ("Relu", None, None), 2: ("Clip", -1.0, 1.0), 3: ("Clip", 0.0, 6.0)}


def _nchw(shape: tuple[int, ...]) -> list[int]:
    return [shape[0], shape[3], shape[1], shape[2]] if len(shape) == 4 else list(shape)


class _Writer:
    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.m = read_flatbuffer(data, path)
        self.names = ir_names(self.m)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []

    def fail(self, op, what: str) -> TilewiseError:
        return TilewiseError(f"{self.path}: operator {op.index} ({op.name}) {what}; tilewise quantize "
                             f"takes float CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, "
                             f"AVERAGE_POOL_2D, RESHAPE and SOFTMAX")

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def data(self, op, k: int) -> np.ndarray:
        t = self.m.tensors[op.inputs[k]]
        if t.data is None:
            raise self.fail(op, f"takes input {k} ('{t.name}') from a computed tensor, not a constant")
        if t.dtype == "float32":
            return np.asarray(t.data, dtype=np.float32).reshape(t.shape)
        if t.dtype == "int8" and t.quantized:   # weight-only (dynamic-range) quantized: dequantize
            q = np.asarray(t.data, dtype=np.float64).reshape(t.shape)
            shape = [1] * q.ndim
            if len(t.scale) > 1:
                shape[t.quantized_dimension] = -1
            sc = np.asarray(t.scale, dtype=np.float64).reshape(shape)
            zp = np.asarray(t.zero_point or (0,), dtype=np.float64).reshape(
                shape if len(t.zero_point) > 1 else [1] * q.ndim)
            return ((q - zp) * sc).astype(np.float32)
        raise self.fail(op, f"has a {t.type_name} constant '{t.name}' (a float model has float32 ones)")

    def out(self, op, y: str, node_type: str, ins: list[str], **attrs) -> None:
        """Emit node_type writing y, followed by its fused activation."""
        act = ACT.get(int(op.options.get("FusedActivationFunction", 0)), False)
        if act is False:
            raise self.fail(op, f"has fused activation {op.options.get('FusedActivationFunction')}")
        name = f"op{op.index}"
        if act is None:
            self.nodes.append(helper.make_node(node_type, ins, [y], name=name, **attrs))
            return
        pre = f"{y}/preact"
        self.nodes.append(helper.make_node(node_type, ins, [pre], name=name, **attrs))
        kind, lo, hi = act
        extra = [] if kind == "Relu" else [self.const(f"{y}/min", np.array(lo, np.float32)),
                                           self.const(f"{y}/max", np.array(hi, np.float32))]
        self.nodes.append(helper.make_node(kind, [pre] + extra, [y], name=f"{name}/{kind.lower()}"))

    def conv(self, op, depthwise: bool) -> None:
        x, y = self.m.tensors[op.inputs[0]], self.m.tensors[op.outputs[0]]
        w = self.data(op, 1)
        if depthwise:
            if int(op.options.get("DepthMultiplier", 1)) not in (1, w.shape[3] // x.shape[3]):
                raise self.fail(op, "has an inconsistent depth multiplier")
            wo, group = w.transpose(3, 0, 1, 2), x.shape[3]
        else:
            wo, group = w.transpose(0, 3, 1, 2), 1
        kh, kw = w.shape[1], w.shape[2]
        s = (int(op.options.get("StrideH", 1)), int(op.options.get("StrideW", 1)))
        d = (int(op.options.get("DilationHFactor", 1)), int(op.options.get("DilationWFactor", 1)))
        pads = self.pads(op, x.shape[1:3], (kh, kw), s, d)
        ins = [self.names[op.inputs[0]], self.const(f"{self.names[op.inputs[1]]}/oihw", np.ascontiguousarray(wo))]
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            ins.append(self.const(f"{self.names[op.inputs[2]]}/bias", self.data(op, 2).reshape(-1)))
        self.out(op, self.names[op.outputs[0]], "Conv", ins, kernel_shape=[kh, kw], strides=list(s),
                 dilations=list(d), pads=pads, group=group)
        del y

    def pads(self, op, hw, k, s, d=(1, 1)) -> list[int]:
        padding = int(op.options.get("Padding", 0))
        if padding == 1:
            return [0, 0, 0, 0]
        if padding != 0:
            raise self.fail(op, f"uses padding mode {padding}")
        t, b = same_pads(hw[0], k[0], s[0], d[0])
        l, r = same_pads(hw[1], k[1], s[1], d[1])
        return [t, l, b, r]

    def convert(self, op) -> None:
        if op.custom_code:
            raise self.fail(op, "is a custom operator")
        n = op.name
        x = self.m.tensors[op.inputs[0]] if op.inputs else None
        y = self.names[op.outputs[0]]
        if n == "CONV_2D":
            self.conv(op, False)
        elif n == "DEPTHWISE_CONV_2D":
            self.conv(op, True)
        elif n == "FULLY_CONNECTED":
            if len(x.shape) != 2:
                raise self.fail(op, f"reads a rank-{len(x.shape)} input (tilewise quantize takes 2-D ones)")
            ins = [self.names[op.inputs[0]], self.const(f"{self.names[op.inputs[1]]}/w", self.data(op, 1))]
            if len(op.inputs) > 2 and op.inputs[2] >= 0:
                ins.append(self.const(f"{self.names[op.inputs[2]]}/b", self.data(op, 2).reshape(-1)))
            self.out(op, y, "Gemm", ins, transB=1)
        elif n == "ADD":
            self.out(op, y, "Add", [self.names[i] for i in op.inputs[:2]])
        elif n == "AVERAGE_POOL_2D":
            k = (int(op.options["FilterHeight"]), int(op.options["FilterWidth"]))
            s = (int(op.options.get("StrideH", 1)), int(op.options.get("StrideW", 1)))
            if tuple(x.shape[1:3]) == k and int(op.options.get("Padding", 0)) == 1:
                self.out(op, y, "GlobalAveragePool", [self.names[op.inputs[0]]])
            else:
                self.out(op, y, "AveragePool", [self.names[op.inputs[0]]], kernel_shape=list(k), strides=list(s),
                         pads=self.pads(op, x.shape[1:3], k, s), count_include_pad=0)
        elif n == "RESHAPE":
            shape = self.m.tensors[op.outputs[0]].shape
            if len(shape) != 2:
                raise self.fail(op, f"reshapes to rank {len(shape)} (tilewise quantize takes rank 2)")
            src = self.names[op.inputs[0]]
            if len(x.shape) == 4 and x.shape[1] * x.shape[2] != 1:
                self.nodes.append(helper.make_node("Transpose", [src], [f"{y}/nhwc"], name=f"op{op.index}/nhwc",
                                                   perm=[0, 2, 3, 1]))
                src = f"{y}/nhwc"
            self.nodes.append(helper.make_node("Reshape", [src, self.const(f"{y}/shape", np.array(shape, np.int64))],
                                               [y], name=f"op{op.index}"))
        elif n == "SOFTMAX":
            if float(op.options.get("Beta", 1.0)) != 1.0:
                raise self.fail(op, f"has beta {op.options.get('Beta')} (tilewise quantize takes beta 1)")
            self.out(op, y, "Softmax", [self.names[op.inputs[0]]], axis=-1)
        else:
            raise self.fail(op, "is not an operator tilewise quantize converts")

    def model(self) -> onnx.ModelProto:
        m = self.m
        if m.subgraphs != 1:
            raise TilewiseError(f"{self.path}: the model has {m.subgraphs} subgraphs; tilewise quantize takes one")
        for i in m.inputs:
            if m.tensors[i].dtype != "float32":
                raise TilewiseError(f"{self.path}: input '{m.tensors[i].name}' is {m.tensors[i].type_name}; "
                                    f"tilewise quantize takes a float model")
        for op in m.operators:
            self.convert(op)
        ins = [helper.make_tensor_value_info(self.names[i], TensorProto.FLOAT, _nchw(m.tensors[i].shape))
               for i in m.inputs]
        outs = [helper.make_tensor_value_info(self.names[i], TensorProto.FLOAT, _nchw(m.tensors[i].shape))
                for i in m.outputs]
        g = helper.make_graph(self.nodes, Path(self.path).stem, ins, outs, self.inits)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tilewise tflite_in")
        model.ir_version = 9
        onnx.checker.check_model(model)
        return model


def tflite_to_onnx(path: str | Path) -> onnx.ModelProto:
    data = Path(path).read_bytes()
    return _Writer(str(path), data).model()


def nhwc_to_model(x: np.ndarray) -> np.ndarray:
    """Calibration data in TFLite's NHWC ([N, H, W, C] or [N, 1, H, W, C]) -> the ONNX model's NCHW."""
    if x.ndim == 5 and x.shape[1] == 1:
        x = x[:, 0]
    return x.transpose(0, 3, 1, 2) if x.ndim == 4 else x
