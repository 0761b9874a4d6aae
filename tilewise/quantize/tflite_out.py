"""The quantized plan -> a TFLite flatbuffer (int8, or 16x8: int16 activations, int8 weights).

Input: the float ONNX model `tilewise quantize` works on (NCHW; a float .tflite parent arrives
converted by tflite_in.py), its Plan and the parameters of every quantized tensor (graph_out.py,
calibrate.py). Output: the integer network as LiteRT and tilewise's TFLite frontend read it, the
file the TFLite converter writes with full-integer quantization (inference_input_type and
inference_output_type int8 / int16: integer input and outputs, no QUANTIZE / DEQUANTIZE ops).

Quantization, as the converter does it (TFLite's quantization spec; the 16x8 mode of
`tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8`):

- activations: the calibrated parameters of graph_out's plan — int8 asymmetric, or int16 symmetric
  (scale max|x|/32767, zero point 0); SOFTMAX outputs 1/256 and −128 (int8) or 1/32768 and 0
  (int16); MAX_POOL_2D, RESHAPE and AVERAGE_POOL_2D outputs share their input's parameters (LiteRT's
  pooling kernels do not rescale, so the converter gives the average pool its input's parameters;
  the calibrated ones of the QDQ plan are not used for it); an int8 GlobalAveragePool is a MEAN
  over H, W with its own calibrated parameters (what the converter writes for Keras'
  GlobalAveragePooling2D: MEAN rescales; on ic_resnet8 the shared scale cost 3.5 dB of output SQNR),
  a 16x8 one an AVERAGE_POOL_2D (no visible cost at int16; the 16x8 kernels have no MEAN);
- weights: int8 per output channel, symmetric in ±127 (weights.quantize_weights, its bias-safe
  scale included), CONV_2D / FULLY_CONNECTED along dimension 0, DEPTHWISE_CONV_2D along 3;
- bias: scale s_x·s_w[k], zero point 0, int32 for int8 layers and int64 for 16x8 layers (the
  converter's 16x8 bias; LiteRT's reference 16x8 conv / FC accumulate in int64, and the frontend
  reads such a layer as a wide accumulator, frontend/tflite_ops.py); a layer without bias gets a
  zero one (the converter always writes one).

Ops (ONNX -> TFLite, NCHW tensors stored NHWC):

| ONNX | TFLite |
|---|---|
| Conv, group 1 (OIHW) | CONV_2D (OHWI) |
| Conv, group = C_in, 1 input channel per group | DEPTHWISE_CONV_2D (1HWO, DepthMultiplier O/C_in) |
| Gemm (transB 0 or 1, alpha = beta = 1), MatMul with constant B | FULLY_CONNECTED ([out, in]) |
| Add (same shapes) | ADD (PotScaleInt16 false: LiteRT's general int16 path, the frontend's) |
| MaxPool, AveragePool (count_include_pad 0) | MAX_POOL_2D, AVERAGE_POOL_2D |
| GlobalAveragePool | MEAN (int8, keep dims), AVERAGE_POOL_2D over H×W (16x8) |
| Flatten, Reshape (to rank ≤ 2) | RESHAPE (int32 shape input and NewShape) |
| Softmax (last axis) | SOFTMAX (beta 1) |
| op -> Relu / Clip(0, 6) / Clip(−1, 1) fused by the plan | the op's RELU / RELU6 / RELU_N1_TO_1 |
| Transpose(0, 2, 3, 1) of an NCHW tensor, Identity | nothing (the NHWC tensor is that order) |

Padding: pads of 0 are VALID, TF's SAME pads (ir/shapes.same_pads: the extra row after) are SAME;
any other conv padding (e.g. symmetric pad 1 at stride 2) becomes PAD (the input's zero point, i.e.
real 0: exact) + a VALID conv. A Flatten of an NCHW tensor with H·W > 1 (ONNX's C·H·W element order)
is a RESHAPE of the NHWC tensor (H·W·C order): the FULLY_CONNECTED layers reading it get their
weight columns permuted to that order (what the converter's NHWC graph computes) — any other reader
of such a tensor is refused in one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from ..errors import TilewiseError
from ..ir.shapes import same_pads
from .calibrate import QParams
from .graph_out import ACTIVATIONS, Plan
from .tflite_build import ACT, SAME, VALID, ModelBuilder
from .weights import quantize_bias, quantize_weights

#: tensor layouts: how an ONNX tensor is stored in the TFLite file
NCHW = "nchw"        # a 4-D NCHW ONNX tensor, stored NHWC
PLAIN = "plain"      # stored in the ONNX element order
CHW_FLAT = "chw"     # Flatten of an NCHW tensor [N, C·H·W], stored in H·W·C order

ACT_DTYPE = {8: "int8", 16: "int16"}
BIAS_DTYPE = {8: "int32", 16: "int64"}


@dataclass(frozen=True)
class Stored:
    """Where an ONNX tensor lives in the TFLite file: its tensor index, layout and parameters."""

    index: int
    layout: str
    shape: tuple[int, ...]                 # the ONNX shape
    q: QParams
    chw: tuple[int, int, int] | None = None   # CHW_FLAT: the (C, H, W) flattened

    def to_onnx(self, v: np.ndarray) -> np.ndarray:
        """A value read from the TFLite tensor, in the ONNX tensor's shape and element order."""
        a = np.asarray(v)
        if self.layout == NCHW:
            return a.reshape(self.shape[0], self.shape[2], self.shape[3], self.shape[1]).transpose(0, 3, 1, 2)
        if self.layout == CHW_FLAT:
            c, h, w = self.chw
            return a.reshape(-1, h, w, c).transpose(0, 3, 1, 2).reshape(self.shape)
        return a.reshape(self.shape)


@dataclass(frozen=True, eq=False)
class TfliteOut:
    """The written flatbuffer and where each quantized ONNX tensor is in it (per-layer SQNR)."""

    data: bytes
    tensors: dict[str, Stored]
    input_name: str
    bits: int


def nhwc(x: np.ndarray) -> np.ndarray:
    """Inputs in the ONNX model's layout ([N, C, H, W] or [N, ...]) -> TFLite's ([N, H, W, C])."""
    return x.transpose(0, 2, 3, 1) if x.ndim == 4 else x


def write_tflite(model: onnx.ModelProto, p: Plan, qp: dict[str, QParams], bits: int) -> TfliteOut:
    """The TFLite model of `model` quantized with `qp` (see the module doc); `bits` 8 or 16."""
    if bits not in ACT_DTYPE:
        raise TilewiseError(f"--bits {bits}: the TFLite writer takes 8 (int8) or 16 (16x8)")
    return _Writer(model, p, qp, bits).run()


def _attrs(n: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


class _Writer:
    def __init__(self, model: onnx.ModelProto, p: Plan, qp: dict[str, QParams], bits: int) -> None:
        self.model = shape_inference.infer_shapes(model)
        self.plan, self.qp, self.bits = p, dict(qp), bits
        self.act = ACT_DTYPE[bits]
        g = self.model.graph
        self.inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.shapes: dict[str, tuple[int, ...]] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            dims = vi.type.tensor_type.shape.dim
            if dims and all(d.HasField("dim_value") for d in dims):
                self.shapes[vi.name] = tuple(int(d.dim_value) for d in dims)
        self.readers: dict[str, list[onnx.NodeProto]] = {}
        for n in g.node:
            for x in n.input:
                self.readers.setdefault(x, []).append(n)
        self.b = ModelBuilder(description=f"tilewise quantize ({'16x8' if bits == 16 else 'int8'})")
        self.t: dict[str, Stored] = {}
        self.label = ""

    # -- helpers ---------------------------------------------------------------------------------
    def fail(self, what: str) -> TilewiseError:
        return TilewiseError(f"node '{self.label}' {what}; the TFLite writer takes Conv, Gemm, MatMul, "
                             f"Add, MaxPool, AveragePool, GlobalAveragePool, Flatten, Reshape, Softmax "
                             f"and fused Relu / Clip (write an .onnx model instead)")

    def shape(self, name: str) -> tuple[int, ...]:
        if name not in self.shapes:
            raise self.fail(f"writes '{name}', whose shape ONNX shape inference does not fix")
        return self.shapes[name]

    def get(self, name: str, layouts: tuple[str, ...] = (NCHW, PLAIN)) -> Stored:
        s = self.t.get(name)
        if s is None:
            raise self.fail(f"reads '{name}', which is not a quantized tensor of the plan")
        if s.layout not in layouts:
            raise self.fail(f"reads '{name}', the Flatten of an NCHW tensor (H·W·C order in TFLite); "
                            f"only Gemm / MatMul can read it")
        return s

    def activation(self, name: str, layout: str, q: QParams | None = None,
                   chw: tuple[int, int, int] | None = None) -> Stored:
        """A new activation tensor for the ONNX tensor `name` (parameters from the plan)."""
        shape = self.shape(name)
        q = q if q is not None else self.qp.get(name)
        if q is None:
            raise self.fail(f"writes '{name}', which the plan does not quantize")
        tshape = (shape[0], shape[2], shape[3], shape[1]) if layout == NCHW else shape
        if layout == CHW_FLAT:
            tshape = shape
        idx = self.b.tensor(name, tshape, self.act, scale=q.scale, zero_point=q.zero_point)
        s = Stored(idx, layout, shape, q, chw)
        self.t[name] = s
        return s

    def fused(self, n: onnx.NodeProto) -> tuple[str, int]:
        """(the tensor the op writes, TFLite's fused activation): the Relu / Clip the plan fused."""
        y = n.output[0]
        if y in self.qp:
            return y, ACT["NONE"]
        rs = self.readers.get(y, [])
        if len(rs) != 1 or rs[0].op_type not in ACTIVATIONS:
            raise self.fail(f"writes '{y}', which the plan leaves unquantized")
        r = rs[0]
        self.done.add(r.output[0])
        if r.op_type == "Relu":
            return r.output[0], ACT["RELU"]
        lo, hi = self.clip_bounds(r)
        code = {(0.0, 6.0): ACT["RELU6"], (-1.0, 1.0): ACT["RELU_N1_TO_1"], (0.0, None): ACT["RELU"]}.get((lo, hi))
        if code is None:
            raise self.fail(f"is fused with Clip({lo}, {hi}); TFLite fuses Relu, Clip(0, 6) and Clip(−1, 1)")
        return r.output[0], code

    def clip_bounds(self, r: onnx.NodeProto) -> tuple[float | None, float | None]:
        """Clip's (min, max): attributes (opset < 11) or constant inputs; None where absent."""
        a = _attrs(r)
        bounds = [a.get("min"), a.get("max")]
        for k in (1, 2):
            if len(r.input) > k and r.input[k]:
                if r.input[k] not in self.inits:
                    raise self.fail(f"is fused with a Clip whose bound '{r.input[k]}' is computed")
                bounds[k - 1] = self.inits[r.input[k]]
        lo, hi = (None if v is None else float(v) for v in bounds)
        return lo, hi

    def padding(self, n: onnx.NodeProto, hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
                d: tuple[int, int] = (1, 1)) -> tuple[int, list[int] | None]:
        """(SAME or VALID, explicit [t, l, b, r] pads TFLite's modes do not express, else None)."""
        a = _attrs(n)
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        if auto == "VALID":
            return VALID, None
        (t, b), (l, r) = same_pads(hw[0], k[0], s[0], d[0]), same_pads(hw[1], k[1], s[1], d[1])
        same = [t, l, b, r]
        if auto == "SAME_UPPER":
            return SAME, None
        if auto not in ("NOTSET", ""):
            raise self.fail(f"has auto_pad {auto}")
        pads = [int(v) for v in a.get("pads", [0, 0, 0, 0])]
        if not any(pads):
            return VALID, None
        if pads == same:
            return SAME, None
        return VALID, pads

    # -- the walk --------------------------------------------------------------------------------
    def run(self) -> TfliteOut:
        g = self.model.graph
        self.done: set[str] = set()   # outputs of the Relu / Clip nodes fused into their op
        name = None
        for vi in g.input:
            if vi.name in self.inits:
                continue
            name = vi.name
            shape = self.shape(vi.name)
            s = self.activation(vi.name, NCHW if len(shape) == 4 else PLAIN)
            self.b.inputs.append(s.index)
        for i, n in enumerate(g.node):
            if n.output[0] in self.done:
                continue
            self.label = n.name or f"{n.op_type}#{i}"
            fn = getattr(self, f"op_{n.op_type}", None)
            if fn is None:
                raise self.fail(f"is a {n.op_type}")
            fn(n)
        for o in g.output:
            s = self.t.get(o.name)
            if s is None:
                raise TilewiseError(f"output '{o.name}' is not a quantized tensor of the plan")
            self.b.output(s.index)
        return TfliteOut(self.b.build(), dict(self.t), name or "", self.bits)

    def weights(self, n: onnx.NodeProto, w: np.ndarray, axis: int, x: Stored):
        """(per-channel int8 codes, scales, bias codes and scales) of a weighted node."""
        bias = None
        if len(n.input) > 2 and n.input[2]:
            if n.input[2] not in self.inits:
                raise self.fail("takes its bias from a computed tensor")
            bias = self.inits[n.input[2]].reshape(-1).astype(np.float64)
        qw = quantize_weights(w, axis=axis, bits=8, bias=bias, input_scale=x.q.scale)
        b = np.zeros(qw.scale.size) if bias is None else bias
        if b.size != qw.scale.size:
            raise self.fail(f"has {b.size} bias values for {qw.scale.size} output channels")
        bq, bs = quantize_bias(b, x.q.scale, qw.scale)
        return qw, bq.astype(np.int64 if self.bits == 16 else np.int32), bs

    def const_w(self, name: str, data: np.ndarray, scales: np.ndarray, dim: int) -> int:
        return self.b.const(name, data.astype(np.int8), "int8", scale=scales, zero_point=0,
                            quantized_dimension=dim)

    def const_b(self, name: str, data: np.ndarray, scales: np.ndarray) -> int:
        return self.b.const(name, data, BIAS_DTYPE[self.bits], scale=scales, zero_point=0)

    def op_Conv(self, n: onnx.NodeProto) -> None:
        x = self.get(n.input[0], (NCHW,))
        if n.input[1] not in self.inits:
            raise self.fail("takes its weights from a computed tensor")
        w = self.inits[n.input[1]].astype(np.float64)
        a = _attrs(n)
        c_in, group = x.shape[1], int(a.get("group", 1))
        o, cg, kh, kw = w.shape
        s = tuple(int(v) for v in a.get("strides", [1, 1]))
        d = tuple(int(v) for v in a.get("dilations", [1, 1]))
        mode, pads = self.padding(n, x.shape[2:4], (kh, kw), s, d)
        if pads is not None:
            x = self.pad(x, pads)
        qw, bq, bs = self.weights(n, w, 0, x)
        y, act = self.fused(n)
        out = self.activation(y, NCHW)
        opts = dict(Padding=mode, StrideH=s[0], StrideW=s[1], DilationHFactor=d[0], DilationWFactor=d[1],
                    FusedActivationFunction=act)
        if group == 1:
            wi = self.const_w(f"{self.label}/weight", qw.q.transpose(0, 2, 3, 1), qw.scale, 0)
            bi = self.const_b(f"{self.label}/bias", bq, bs)
            self.b.op("CONV_2D", [x.index, wi, bi], [out.index], "Conv2DOptions", **opts)
        elif group == c_in and cg == 1 and o % c_in == 0:
            wi = self.const_w(f"{self.label}/weight", qw.q.transpose(1, 2, 3, 0), qw.scale, 3)
            bi = self.const_b(f"{self.label}/bias", bq, bs)
            self.b.op("DEPTHWISE_CONV_2D", [x.index, wi, bi], [out.index], "DepthwiseConv2DOptions",
                      DepthMultiplier=o // c_in, **opts)
        else:
            raise self.fail(f"is a grouped Conv (group {group}, {c_in} input channels)")

    def pad(self, x: Stored, pads: list[int]) -> Stored:
        """PAD of an NHWC tensor by ONNX pads [t, l, b, r] (filled with the zero point: real 0)."""
        t, l, b, r = pads
        name = f"{self.label}/pad"
        n_, c, h, w = x.shape
        self.shapes[name] = (n_, c, h + t + b, w + l + r)
        out = self.activation(name, NCHW, x.q)
        pi = self.b.const(f"{name}/paddings", np.array([[0, 0], [t, b], [l, r], [0, 0]], np.int32), "int32")
        self.b.op("PAD", [x.index, pi], [out.index], "PadOptions")
        return out

    def fc(self, n: onnx.NodeProto, w_out_in: np.ndarray) -> None:
        """FULLY_CONNECTED of weights [out, in] (float) reading n.input[0]."""
        x = self.get(n.input[0], (PLAIN, CHW_FLAT))
        if len(x.shape) != 2:
            raise self.fail(f"reads a rank-{len(x.shape)} tensor (the TFLite writer takes 2-D inputs)")
        qw, bq, bs = self.weights(n, w_out_in, 0, x)
        codes = qw.q
        if x.layout == CHW_FLAT:   # columns in the H·W·C order of the NHWC tensor the RESHAPE flattened
            c, h, ww = x.chw
            codes = codes[:, np.arange(c * h * ww).reshape(c, h, ww).transpose(1, 2, 0).reshape(-1)]
        y, act = self.fused(n)
        out = self.activation(y, PLAIN)
        wi = self.const_w(f"{self.label}/weight", codes, qw.scale, 0)
        bi = self.const_b(f"{self.label}/bias", bq, bs)
        self.b.op("FULLY_CONNECTED", [x.index, wi, bi], [out.index], "FullyConnectedOptions",
                  FusedActivationFunction=act)

    def op_Gemm(self, n: onnx.NodeProto) -> None:
        a = _attrs(n)
        if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
            raise self.fail("is a Gemm with transA, alpha or beta")
        w = self.inits[n.input[1]].astype(np.float64)
        self.fc(n, w if a.get("transB", 0) else w.T)

    def op_MatMul(self, n: onnx.NodeProto) -> None:
        self.fc(n, self.inits[n.input[1]].astype(np.float64).T)

    def op_Add(self, n: onnx.NodeProto) -> None:
        a, b = self.get(n.input[0]), self.get(n.input[1])
        if a.shape != b.shape or a.layout != b.layout:
            raise self.fail(f"adds tensors of shapes {a.shape} and {b.shape} (the TFLite writer takes "
                            f"same-shaped operands)")
        y, act = self.fused(n)
        out = self.activation(y, a.layout)
        self.b.op("ADD", [a.index, b.index], [out.index], "AddOptions", FusedActivationFunction=act,
                  PotScaleInt16=False)

    def pool(self, n: onnx.NodeProto, kind: str) -> None:
        x = self.get(n.input[0], (NCHW,))
        a = _attrs(n)
        hw = x.shape[2:4]
        if n.op_type == "GlobalAveragePool":
            k, s, mode = tuple(hw), (1, 1), VALID
        else:
            if a.get("ceil_mode", 0) or any(v != 1 for v in a.get("dilations", [1, 1])):
                raise self.fail("has ceil_mode or dilations")
            k = tuple(int(v) for v in a["kernel_shape"])
            s = tuple(int(v) for v in a.get("strides", [1, 1]))
            mode, pads = self.padding(n, hw, k, s)
            if pads is not None:
                raise self.fail(f"pads {pads}, which neither SAME nor VALID pooling expresses")
            if mode == SAME and kind == "AVERAGE_POOL_2D" and a.get("count_include_pad", 0):
                raise self.fail("averages padded taps (count_include_pad 1); TFLite averages valid taps")
        # pooling does not rescale in TFLite: the output shares the input's parameters
        out = self.activation(n.output[0], NCHW, x.q)
        self.b.op(kind, [x.index], [out.index], "Pool2DOptions", Padding=mode, StrideH=s[0], StrideW=s[1],
                  FilterHeight=k[0], FilterWidth=k[1], FusedActivationFunction=ACT["NONE"])

    def op_MaxPool(self, n: onnx.NodeProto) -> None:
        self.pool(n, "MAX_POOL_2D")

    def op_AveragePool(self, n: onnx.NodeProto) -> None:
        self.pool(n, "AVERAGE_POOL_2D")

    def op_GlobalAveragePool(self, n: onnx.NodeProto) -> None:
        if self.bits == 16:
            self.pool(n, "AVERAGE_POOL_2D")
            return
        # int8: MEAN over H and W with its own (calibrated) output parameters, as the converter writes
        # Keras' GlobalAveragePooling2D; a shared-scale AVERAGE_POOL_2D costs ~3 dB on ic_resnet8
        x = self.get(n.input[0], (NCHW,))
        out = self.activation(n.output[0], NCHW)
        ax = self.b.const(f"{n.output[0]}/axes", np.array([1, 2], np.int32), "int32")
        self.b.op("MEAN", [x.index, ax], [out.index], "ReducerOptions", KeepDims=True)

    def reshape(self, n: onnx.NodeProto) -> None:
        x = self.get(n.input[0])
        shape = self.shape(n.output[0])
        if len(shape) > 2:
            raise self.fail(f"reshapes to rank {len(shape)} (the TFLite writer takes ranks 1 and 2)")
        chw = None
        layout = PLAIN
        if x.layout == NCHW and x.shape[2] * x.shape[3] != 1:
            layout, chw = CHW_FLAT, (x.shape[1], x.shape[2], x.shape[3])
        out = self.activation(n.output[0], layout, x.q, chw)
        si = self.b.const(f"{n.output[0]}/shape", np.array(shape, np.int32), "int32")
        self.b.op("RESHAPE", [x.index, si], [out.index], "ReshapeOptions", NewShape=list(shape))

    def op_Flatten(self, n: onnx.NodeProto) -> None:
        if int(_attrs(n).get("axis", 1)) != 1:
            raise self.fail("flattens from an axis other than 1")
        self.reshape(n)

    def op_Reshape(self, n: onnx.NodeProto) -> None:
        self.reshape(n)

    def alias(self, n: onnx.NodeProto, layout: str) -> None:
        x = self.t[n.input[0]]
        self.t[n.output[0]] = Stored(x.index, layout, self.shape(n.output[0]), x.q, x.chw)

    def op_Transpose(self, n: onnx.NodeProto) -> None:
        x = self.get(n.input[0])
        if x.layout != NCHW or list(_attrs(n).get("perm", [])) != [0, 2, 3, 1]:
            raise self.fail("transposes other than NCHW -> NHWC")
        self.alias(n, PLAIN)

    def op_Identity(self, n: onnx.NodeProto) -> None:
        self.alias(n, self.get(n.input[0], (NCHW, PLAIN, CHW_FLAT)).layout)

    def op_Softmax(self, n: onnx.NodeProto) -> None:
        x = self.get(n.input[0], (PLAIN,))
        axis = int(_attrs(n).get("axis", -1))
        if axis not in (-1, len(x.shape) - 1):
            raise self.fail(f"is a Softmax over axis {axis} (TFLite's is over the last axis)")
        out = self.activation(n.output[0], PLAIN)
        self.b.op("SOFTMAX", [x.index], [out.index], "SoftmaxOptions", Beta=1.0)

    def op_Relu(self, n: onnx.NodeProto) -> None:
        raise self.fail("is a Relu that follows no Conv / Gemm / MatMul / Add (TFLite fuses it into one)")

    op_Clip = op_Relu


def tflite_report(float_model: onnx.ModelProto, out: TfliteOut, path: str, inputs: np.ndarray,
                  layers: dict[str, str]) -> dict:
    """{"outputs": [...], "layers": [...]} as sqnr.layer_report, the quantized values read by LiteRT's
    reference kernels from the written file `path` (every tensor of `layers` the file holds,
    dequantized with its parameters and put back in the ONNX tensor's layout). `inputs`: the float
    model's layout (NCHW)."""
    from .sqnr import run_all, session, sqnr, tflite_tensors

    outs = [o.name for o in float_model.graph.output]
    tensors = [t for t in layers if t in out.tensors and t not in outs]
    f = run_all(session(float_model, tuple(tensors)), out.input_name, inputs, outs + tensors)
    names = list(dict.fromkeys(outs + tensors))
    got = tflite_tensors(path, nhwc(inputs), list({out.tensors[t].index for t in names}))

    def onnx_values(t: str) -> list[np.ndarray]:
        st = out.tensors[t]
        return [st.to_onnx(v) for v in got[st.index]]

    per_out = [sqnr(o, f[o], onnx_values(o)).to_json() for o in outs]
    per_layer = [{**sqnr(t, f[t], onnx_values(t)).to_json(), "layer": layers[t]} for t in tensors]
    per_layer += [{**sqnr(o, f[o], onnx_values(o)).to_json(), "layer": layers[o]} for o in outs if o in layers]
    order = {t: i for i, t in enumerate(layers)}
    return {"outputs": per_out, "layers": sorted(per_layer, key=lambda x: order[x["name"]])}
