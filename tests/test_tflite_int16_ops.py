"""TFLite's remaining 16x8 ops and general broadcasting, end to end: each pattern built with the
tflite builder, scheduled on gap8 (its host core, `cpu`, runs the host-only bindings), then
`validate_model` — generated C vs golden model vs LiteRT BUILTIN_REF, bit for bit, on random
inputs plus the extremes (every element −32768 / 32767, or the 8-bit ends).

Patterns: ADD / SUB / MUL with operands of any broadcastable shapes (8- and 16-bit, constant or
activation operands; bindings/portable/host.py tw_binary) and the same-shaped int16 MUL
(tw_mul_s16)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model

from .tflite_builder import ModelBuilder

Q8 = dict(scale=0.05, zero_point=-3)
Q16 = dict(scale=0.0005, zero_point=0)


def _q(dtype: str, scale8: float, zp8: int, scale16: float) -> dict:
    return dict(scale=scale16, zero_point=0) if dtype == "int16" else dict(scale=scale8, zero_point=zp8)


def _validate(b: ModelBuilder, tmp: Path, target: str = "gap8") -> list[tuple[str, str]]:
    """Validate the model on `target`; returns (module, binding) per layer."""
    path = b.save(tmp / "m.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target(target), "model")
    r = validate_model(path, ns, graph, 3, 0, tmp / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
    return [(s.module, s.binding) for s in ns.schedules]


# --- ADD / SUB / MUL with broadcasting -----------------------------------------------------------

def binary(op: str, dtype: str, a_shape, b_shape, y_shape, const_b: bool, seed: int = 1,
           act: int = 0) -> ModelBuilder:
    """op(x, b): b a constant of `b_shape`, or x reshaped to `b_shape` (same size)."""
    r, b = np.random.RandomState(seed), ModelBuilder()
    qx = _q(dtype, 0.05, -3, 0.0005)
    x = b.input("x", a_shape, dtype, **qx)
    if const_b:
        lo, hi = (-32768, 32768) if dtype == "int16" else (-128, 128)
        data = r.randint(lo, hi, b_shape).astype(np.int16 if dtype == "int16" else np.int8)
        other = b.const("c", data, dtype, **_q(dtype, 0.04, 5, 0.0007))
    else:
        other = b.tensor("r", b_shape, dtype, **qx)
        shape = b.const("shape", np.asarray(b_shape, np.int32), "int32")
        b.op("RESHAPE", [x, shape], [other], "ReshapeOptions", NewShape=list(b_shape))
    y = b.tensor("y", y_shape, dtype, **_q(dtype, 0.06, 2, 0.0009))
    kw = dict(PotScaleInt16=False) if op in ("ADD", "SUB") and dtype == "int16" else {}
    b.op(op, [x, other], [y], f"{op.capitalize()}Options", FusedActivationFunction=act, **kw)
    b.output(y)
    return b


SHAPES = [
    ((1, 4, 5, 3), (1, 1, 5, 1), (1, 4, 5, 3), True),     # a row of H·W constants
    ((1, 4, 1, 3), (1, 1, 4, 3), (1, 4, 4, 3), False),    # both activations broadcast
    ((2, 3), (3,), (2, 3), True),                         # rank 2, a vector
    ((1, 3, 1, 2), (5, 1), (1, 3, 5, 2), True),           # ranks differ, output larger than both
    ((1, 2, 2, 3), (), (1, 2, 2, 3), True),               # a scalar constant
]


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("case", range(len(SHAPES)))
def test_broadcast_binary_ops_bit_exact_with_litert(op, dtype, case, tmp_path):
    a, bs, y, const = SHAPES[case]
    placed = _validate(binary(op, dtype, a, bs, y, const), tmp_path)
    layer = placed[-1]
    if dtype == "int16" or case in (0, 1, 3):   # what no per-channel kernel takes
        assert layer == ("cpu", f"portable/{op.lower()}_bcast" + ("_s16" if dtype == "int16" else "")), placed


def test_int16_mul_same_shape_and_relu_bit_exact_with_litert(tmp_path):
    s = (1, 4, 4, 8)
    placed = _validate(binary("MUL", "int16", s, s, s, False, act=1), tmp_path)
    assert placed[-1][1] == "portable/mul_s16", placed


# --- 16x8 depthwise, int16 pools ------------------------------------------------------------------

def depthwise16(stride: int = 1, padding: int = 0, f: int = 3, per_tensor: bool = False,
                seed: int = 2) -> ModelBuilder:
    r, b = np.random.RandomState(seed), ModelBuilder()
    c = 6
    x = b.input("x", (1, 7, 7, c), "int16", scale=0.0005, zero_point=0)
    scale = 0.01 if per_tensor else r.uniform(0.002, 0.02, c)
    w = b.const("w", r.randint(-127, 128, (1, f, f, c)).astype(np.int8), "int8", scale=scale,
                zero_point=0, **({} if per_tensor else dict(quantized_dimension=3)))
    bias = b.const("b", r.randint(-2_000_000, 2_000_000, c).astype(np.int64), "int64",
                   scale=np.full(c, 5e-6), zero_point=0)
    o = (7 + stride - 1) // stride if padding == 0 else (7 - f) // stride + 1
    y = b.tensor("y", (1, o, o, c), "int16", scale=0.002, zero_point=0)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], "DepthwiseConv2DOptions", Padding=padding,
         StrideW=stride, StrideH=stride, DepthMultiplier=1, FusedActivationFunction=0,
         DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    return b


@pytest.mark.parametrize("stride,padding,per_tensor", [(1, 0, False), (2, 0, True), (2, 1, False)])
def test_16x8_depthwise_bit_exact_with_litert(stride, padding, per_tensor, tmp_path):
    placed = _validate(depthwise16(stride, padding, per_tensor=per_tensor), tmp_path)
    assert placed[-1][1] == "portable/depthwise_s16", placed


def test_16x8_depthwise_tiled_in_a_small_l1(tmp_path):
    path = depthwise16().save(tmp_path / "m.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8", l1_kb=1).with_modules(("cluster",)),
                          "model")
    assert max(t.count for s in ns.schedules for t in (s.tiling("oy"), s.tiling("k"))) > 1
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


def pool16(op: str, f: int, stride: int, padding: int, act: int = 0) -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 7, 7, 5), "int16", scale=0.0005, zero_point=0)
    o = (7 + stride - 1) // stride if padding == 0 else (7 - f) // stride + 1
    y = b.tensor("y", (1, o, o, 5), "int16", scale=0.0005, zero_point=0)
    b.op(op, [x], [y], "Pool2DOptions", Padding=padding, StrideW=stride, StrideH=stride,
         FilterWidth=f, FilterHeight=f, FusedActivationFunction=act)
    b.output(y)
    return b


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("f,stride,padding,act", [(3, 2, 0, 0), (2, 2, 1, 0), (3, 1, 0, 1)])
def test_int16_pools_bit_exact_with_litert(op, f, stride, padding, act, tmp_path):
    placed = _validate(pool16(op, f, stride, padding, act), tmp_path)
    assert placed[-1][1] == f"portable/{'avg' if op.startswith('AVERAGE') else 'max'}_pool_s16", placed


# --- PAD / PADV2 ----------------------------------------------------------------------------------

def pad_model(dtype: str, pads, v2_value: int | None = None, conv_after: bool = False) -> ModelBuilder:
    r, b = np.random.RandomState(3), ModelBuilder()
    q = _q(dtype, 0.05, -3, 0.0005)
    shape = (1, 4, 5, 3)
    x = b.input("x", shape, dtype, **q)
    out = tuple(s + lo + hi for s, (lo, hi) in zip(shape, pads))
    y = b.tensor("p", out, dtype, **q)
    pt = b.const("pads", np.asarray(pads, np.int32), "int32")
    if v2_value is None:
        b.op("PAD", [x, pt], [y], "PadOptions")
    else:
        v = b.const("v", np.asarray([v2_value], np.int16 if dtype == "int16" else np.int8), dtype, **q)
        b.op("PADV2", [x, pt, v], [y], "PadV2Options")
    if conv_after:   # a 16x8 conv after the pad (the pad is folded into it when it can be)
        w = b.const("w", r.randint(-127, 128, (4, 3, 3, 3)).astype(np.int8), "int8",
                    scale=r.uniform(0.002, 0.02, 4), zero_point=0)
        bias = b.const("b", r.randint(-2000, 2000, 4).astype(np.int64), "int64",
                       scale=np.full(4, 1e-6), zero_point=0)
        z = b.tensor("z", (1, out[1] - 2, out[2] - 2, 4), dtype, scale=0.003, zero_point=0)
        b.op("CONV_2D", [y, w, bias], [z], "Conv2DOptions", Padding=1, StrideW=1, StrideH=1,
             FusedActivationFunction=0, DilationWFactor=1, DilationHFactor=1)
        y = z
    b.output(y)
    return b


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("pads,value", [
    (((0, 0), (1, 2), (0, 1), (0, 0)), None),        # H and W
    (((0, 0), (0, 0), (0, 0), (2, 1)), None),        # channels
    (((0, 0), (1, 0), (2, 2), (1, 0)), -32768),      # PADV2 with the type's minimum
])
def test_pad_and_padv2_bit_exact_with_litert(dtype, pads, value, tmp_path):
    if value is not None and dtype == "int8":
        value = -128
    placed = _validate(pad_model(dtype, pads, value), tmp_path)
    assert placed[-1] == ("cpu", "portable/pad" + ("_s16" if dtype == "int16" else "")), placed


def test_int16_pad_before_a_16x8_conv_bit_exact_with_litert(tmp_path):
    placed = _validate(pad_model("int16", ((0, 0), (1, 1), (1, 1), (0, 0)), conv_after=True), tmp_path)
    assert [p[1] for p in placed] == ["portable/conv2d_s16"], placed   # folded into the conv


# --- SOFTMAX on any axis (onnxruntime's QLinearSoftmax) --------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("shape,axis", [((1, 6, 3, 2), 1), ((1, 4, 5, 3), 2), ((2, 7), 0),
                                        ((1, 4, 5, 3), -1)])
def test_onnx_softmax_on_any_axis_bit_exact_with_onnxruntime(dtype, shape, axis, tmp_path):
    from onnx import helper

    from .test_golden_onnx import qp, save_model

    info = np.iinfo(np.int8 if dtype == "int8" else np.uint8)
    consts = {**qp("x", 0.09, int(info.min) + 100, dtype), **qp("y", 1 / 256, int(info.min), dtype)}
    node = helper.make_node("QLinearSoftmax", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"],
                            domain="com.microsoft", name="softmax", axis=axis, opset=13)
    path = save_model(tmp_path / "sm.onnx", [node], [("x", dtype, shape)], [("y", dtype)], consts,
                      opset=13)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8"), "model")
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


# --- int16 SOFTMAX ----------------------------------------------------------------------------------

def softmax16(shape, scale: float, beta: float = 1.0) -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", shape, "int16", scale=scale, zero_point=0)
    y = b.tensor("y", shape, "int16", scale=1 / 32768, zero_point=0)
    b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    b.output(y)
    return b


@pytest.mark.parametrize("shape,scale,beta", [((1, 10), 0.001, 1.0), ((3, 7), 0.0003, 1.0),
                                              ((1, 4, 33), 0.002, 0.5), ((1, 1), 0.001, 1.0),
                                              ((1, 300), 0.0001, 2.0)])
def test_int16_softmax_bit_exact_with_litert(shape, scale, beta, tmp_path):
    placed = _validate(softmax16(shape, scale, beta), tmp_path)
    assert placed[-1][1] == "portable/softmax_s16", placed
