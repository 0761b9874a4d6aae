"""Networks of published benchmarks rebuilt as tilewise graphs with random int8 weights.

There are no model files for DORY's GAP8 networks (seed 001 Table 4 / seed 004 Table 3.3), only
their names; their geometry is the standard architecture:
- MobileNetV1 (Howard et al. 2017): 3x3/2 conv with 32·α filters, 13 depthwise-separable blocks
  (64, 128/2, 128, 256/2, 256, 512/2, 5×512, 1024/2, 1024)·α, global average pool, FC 1000;
- MobileNetV2 (Sandler et al. 2018): 3x3/2 conv 32, inverted residual blocks (t, c, n, s) =
  (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2) (6,96,3,1) (6,160,3,2) (6,320,1,1), 1x1 conv 1280,
  global average pool, FC 1000; residual add where stride 1 and channels match;
and the PULP-NN benchmark layer (seed 004 §3.4): 16×16×32 input, 64 filters 3×3, pad 1, stride 1.
TFLite 'SAME' padding throughout. The MACs this gives are printed next to the published MACs, so a
geometry that drifted from the paper's shows.

Each network is an `ir.Graph` in TFLite int8 semantics (per-channel symmetric weights, ReLU6 as the
clamp of an asymmetric uint8-like int8 range, linear bottlenecks with zero point 0), verified and
lowered by the product's own passes: weights are random, the requantization plausible (multipliers
chosen so a random input keeps a spread of output codes), the geometry exact.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from tilewise.ir.graph import Graph, Node
from tilewise.ir.layer import LayerGraph
from tilewise.ir.ops import Op
from tilewise.ir.params import Conv2dParams, FullyConnectedParams, TfliteAddSubParams, TfliteMeanParams
from tilewise.ir.requant import quantize_multiplier, tflite_requant
from tilewise.ir.shapes import same_pads
from tilewise.ir.tensor import QuantParams, Tensor
from tilewise.ir.verify import verify
from tilewise.passes import lower

RELU6 = (6.0 / 255.0, -128)        # int8 codes -128..127 span [0, 6]
LINEAR = (0.08, 0)                  # linear bottlenecks and residual sums
INPUT = (1.0 / 128.0, 0)            # images in [-1, 1)
LOGITS = (0.1, 0)


class _Builder:
    """Appends TFLite-semantics int8 nodes to a graph under construction."""

    def __init__(self, name: str, shape: tuple[int, ...], seed: int):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.tensors: dict[str, Tensor] = {}
        self.nodes: list[Node] = []
        self.input = self._act("input", shape, INPUT)

    def _act(self, name: str, shape: tuple[int, ...], q: tuple[float, int]) -> str:
        self.tensors[name] = Tensor(name, tuple(shape), "int8", QuantParams((q[0],), (q[1],)))
        return name

    def _const(self, name: str, data: np.ndarray, dtype: str, quant: QuantParams | None = None) -> str:
        self.tensors[name] = Tensor(name, tuple(data.shape), dtype, quant, data)
        return name

    def shape(self, t: str) -> tuple[int, ...]:
        return self.tensors[t].shape

    def _weights(self, name: str, shape: tuple[int, ...], fan_in: int, x: str,
                 yq: tuple[float, int]) -> tuple[str, str, object]:
        """Random int8 weights, per-channel scales giving a plausible multiplier, int32 bias."""
        k = shape[0]
        w = self.rng.integers(-127, 128, size=shape, dtype=np.int8)
        sx = self.tensors[x].quant.scale[0]
        # acc std ≈ sqrt(fan_in) · rms(x - zp_x) · rms(w) ≈ sqrt(fan_in) · 100 · 73; map it to ~40 codes
        real = 40.0 / (math.sqrt(fan_in) * 100.0 * 73.0) * self.rng.uniform(0.7, 1.3, size=k)
        sw = real * yq[0] / sx
        wq = QuantParams(tuple(float(np.float32(s)) for s in sw), (0,) * k, axis=0)
        wn = self._const(f"{name}/w", w, "int8", wq)
        acc_std = math.sqrt(fan_in) * 100.0 * 73.0
        b = self.rng.normal(0.0, 0.2 * acc_std, size=k).astype(np.int32)
        bn = self._const(f"{name}/b", b, "int32")
        return wn, bn, real

    def conv(self, x: str, k: int, f: int, s: int, relu6: bool = True, depthwise: bool = False) -> str:
        n, h, w, c = self.shape(x)
        name = f"l{len(self.nodes):03d}_{'dw' if depthwise else 'conv'}{f}x{f}"
        pt, pb = same_pads(h, f, s)
        pl, pr = same_pads(w, f, s)
        oy, ox = math.ceil(h / s), math.ceil(w / s)
        yq = RELU6 if relu6 else LINEAR
        if depthwise:
            assert k == c
            wn, bn, real = self._weights(name, (k, f, f, 1), f * f, x, yq)
        else:
            wn, bn, real = self._weights(name, (k, f, f, c), f * f * c, x, yq)
        y = self._act(f"{name}/y", (n, oy, ox, k), yq)
        rq = tflite_requant(np.asarray(real, dtype=np.float64), yq[1], -128, 127)
        self.nodes.append(Node(name, Op.CONV2D, (x, wn, bn), (y,), Conv2dParams(
            stride=(s, s), dilation=(1, 1), pads=(pt, pl, pb, pr), groups=c if depthwise else 1, requant=rq)))
        return y

    def add(self, a: str, b: str) -> str:
        name = f"l{len(self.nodes):03d}_add"
        y = self._act(f"{name}/y", self.shape(a), LINEAR)
        sa, sb, sy = (self.tensors[t].quant.scale[0] for t in (a, b, y))
        twice = 2.0 * max(sa, sb)
        m1, m2 = quantize_multiplier(sa / twice), quantize_multiplier(sb / twice)
        mo = quantize_multiplier(twice / ((1 << 20) * sy))
        self.nodes.append(Node(name, Op.ADD, (a, b), (y,), TfliteAddSubParams(
            left_shift=20, input_multipliers=(m1[0], m2[0]), input_shifts=(m1[1], m2[1]),
            output_multiplier=mo[0], output_shift=mo[1], qmin=-128, qmax=127)))
        return y

    def global_pool(self, x: str) -> str:
        n, _, _, c = self.shape(x)
        name = f"l{len(self.nodes):03d}_mean"
        xq = self.tensors[x].quant
        y = self._act(f"{name}/y", (n, c), (xq.scale[0], xq.zero_point[0]))
        m, s = quantize_multiplier(1.0)
        self.nodes.append(Node(name, Op.MEAN, (x,), (y,), TfliteMeanParams(
            axes=(1, 2), keepdims=False, multiplier=m, shift=s)))
        return y

    def fc(self, x: str, k: int) -> str:
        n, c = self.shape(x)
        name = f"l{len(self.nodes):03d}_fc"
        wn, bn, real = self._weights(name, (k, c), c, x, LOGITS)
        y = self._act(f"{name}/y", (n, k), LOGITS)
        rq = tflite_requant(np.asarray(real, dtype=np.float64), 0, -128, 127)
        self.nodes.append(Node(name, Op.FULLY_CONNECTED, (x, wn, bn), (y,), FullyConnectedParams(
            requant=replace(rq, rounding="single"))))
        return y

    def finish(self, out: str) -> LayerGraph:
        g = Graph(self.name, dict(self.tensors), tuple(self.nodes), (self.input,), (out,),
                  source=self.name, meta={"format": "bench-geometry"})
        return lower(verify(g))


def mobilenet_v1(alpha: float, res: int, classes: int = 1000, seed: int = 1) -> LayerGraph:
    b = _Builder(f"{alpha}-MobileNetV1-{res}", (1, res, res, 3), seed)
    x = b.conv(b.input, int(32 * alpha), 3, 2)
    for c, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                 (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]:
        x = b.conv(x, b.shape(x)[3], 3, s, depthwise=True)
        x = b.conv(x, int(c * alpha), 1, 1)
    return b.finish(b.fc(b.global_pool(x), classes))


#: MobileNetV2's inverted-residual stages (t, c, n, s)
MBV2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
               (6, 160, 3, 2), (6, 320, 1, 1))


def mobilenet_v2(res: int, classes: int = 1000, seed: int = 2, stages: int = 7) -> LayerGraph:
    """MobileNetV2 1.0; with `stages` < 7 its first `stages` stages only, then the global pool and
    the classifier (no 1x1 conv to 1280): the memory-heavy front of the network with weights a
    1.5 MB L2 holds (pulp-open, which has no L3)."""
    tag = "" if stages == 7 else f"-s{stages}"
    b = _Builder(f"1.0-MobileNetV2-{res}{tag}", (1, res, res, 3), seed)
    x = b.conv(b.input, 32, 3, 2)
    for t, c, n, s in MBV2_STAGES[:stages]:
        for i in range(n):
            stride = s if i == 0 else 1
            cin = b.shape(x)[3]
            h = b.conv(x, cin * t, 1, 1) if t != 1 else x
            h = b.conv(h, cin * t, 3, stride, depthwise=True)
            h = b.conv(h, c, 1, 1, relu6=False)
            x = b.add(x, h) if stride == 1 and cin == c else h
    if stages == 7:
        x = b.conv(x, 1280, 1, 1)
    return b.finish(b.fc(b.global_pool(x), classes))


def pulp_nn_layer(seed: int = 3) -> LayerGraph:
    """Seed 004 §3.4's benchmark layer: 16×16×32 → 64 filters 3×3×32, pad 1, stride 1."""
    b = _Builder("PULP-NN layer", (1, 16, 16, 32), seed)
    return b.finish(b.conv(b.input, 64, 3, 1, relu6=False))


#: DORY's GAP8 table networks, by the name seed 001 Table 4 gives them
DORY_NETWORKS = {
    "1.0-MobileNetV1-128": lambda: mobilenet_v1(1.0, 128),
    "0.5-MobileNetV1-192": lambda: mobilenet_v1(0.5, 192),
    "0.25-MobileNetV1-128": lambda: mobilenet_v1(0.25, 128),
    "1.0-MobileNetV2-128": lambda: mobilenet_v2(128),
}
