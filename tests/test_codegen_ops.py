"""Generated C for the op variants beyond plain int8 (bindings/portable/), bit-exact.

uint8 activations are stored biased, as u - 128, and run through the int8 kernels with lowered
zero points and clamps (bindings/portable/common.py "uint8"). The first tests prove that re-bias
exact on the golden model for every op it is used for (any zero point, all requant modes, all
values); the validate tests then generate, build and run onnxruntime-quantized uint8 models
(quantize_static, QDQ and QOperator, per tensor and per channel) and compare every output with
the golden model and with onnxruntime.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewise.frontend import load_model
from tilewise.golden import onnx_ops as g_onnx
from tilewise.golden import pool as g_pool
from tilewise.golden.conv import conv2d_acc, dense_acc
from tilewise.golden.requant import apply_requant
from tilewise.ir.graph import Graph, Node
from tilewise.ir.ops import Op
from tilewise.ir.params import MaxPoolParams, OnnxMeanParams, OpParams, TfliteAvgPoolParams, TfliteMeanParams
from tilewise.ir.requant import Requant, tflite_requant
from tilewise.ir.tensor import QuantParams, Tensor
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs
from tilewise.validate.check import validate_model, validate_network

from . import onnx_models as om
from .codegen_cases import c_cache  # noqa: F401 (fixture)


def _requant(mode: str, rng: np.random.Generator, k: int, zp: int, qmin: int, qmax: int) -> Requant:
    real = rng.uniform(0.002, 0.05, k)
    if mode == "tflite":
        return tflite_requant(real, zp, qmin, qmax)
    if mode == "shift":
        d = int(rng.integers(8, 20))
        return Requant("shift", multiplier=np.maximum(1, np.round(real * 2.0**d)).astype(np.int64),
                       shift=np.full(k, d), zero_point=zp, qmin=qmin, qmax=qmax,
                       bias=rng.integers(-(1 << 10), 1 << 10, k))
    if rng.random() < 0.5:   # power-of-two scales: many .5 ties for round-half-even
        real = 2.0 ** np.round(np.log2(real))
    return Requant("onnx", multiplier=np.ones(k, np.int64), shift=np.zeros(k, np.int64),
                   zero_point=zp, qmin=qmin, qmax=qmax, scale=real.astype(np.float32))


def _lowered(rq: Requant) -> Requant:
    """The requant the generated C runs for a uint8 output: zero point and clamp lowered by 128."""
    return replace(rq, zero_point=rq.zero_point - 128, qmin=rq.qmin - 128, qmax=rq.qmax - 128)


# ------------------------------------------------------------------ the re-bias, on the golden model

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(["tflite", "onnx", "shift"]),
       kind=st.sampled_from(["conv", "depthwise", "dense"]))
def test_uint8_rebias_of_weighted_layers_is_exact(seed, mode, kind):
    """conv / depthwise / dense on uint8 x with zero point zp, bias − zp·Σw, pads of zp equal the
    same layer on x − 128 with zp − 128 and bias + 128·Σw (constants.py), and every requant mode
    with a uint8 output equals the lowered requant + 128 (bindings/portable/weighted.py requant_data)."""
    rng = np.random.default_rng(seed)
    zp_x, zp_y = (int(v) for v in rng.integers(0, 256, 2))
    qmin, qmax = (zp_y, 255) if rng.random() < 0.3 else (0, 255)
    h, w = (int(v) for v in rng.integers(3, 7, 2))       # >= every kernel size below
    c, k = (int(v) for v in rng.integers(1, 6, 2))
    x = rng.integers(0, 256, (1, h, w, c))
    if rng.random() < 0.2:
        x[:] = rng.choice([0, 255])
    if kind == "dense":
        x = x.reshape(1, -1)
        wt = rng.integers(-127, 128, (k, x.shape[1]))
        bias = rng.integers(-5000, 5000, k) - zp_x * wt.sum(axis=1)
        acc_u = dense_acc(x, wt, bias, 0, 0)
        acc_s = dense_acc(x - 128, wt, bias + 128 * wt.sum(axis=1), 0, 0)
    else:
        groups = c if kind == "depthwise" else 1
        kk = c if kind == "depthwise" else k
        fy, fx = (int(v) for v in rng.integers(1, 4, 2))
        wt = rng.integers(-127, 128, (kk, fy, fx, 1 if groups > 1 else c))
        sw = wt.reshape(kk, -1).sum(axis=1)
        bias = rng.integers(-5000, 5000, kk) - zp_x * sw
        pads = tuple(int(v) for v in rng.integers(0, 2, 4))
        stride = tuple(int(v) for v in rng.integers(1, 3, 2))
        acc_u = conv2d_acc(x, wt, bias, 0, 0, stride, pads, groups=groups, pad_value=zp_x)
        acc_s = conv2d_acc(x - 128, wt, bias + 128 * sw, 0, 0, stride, pads, groups=groups,
                           pad_value=zp_x - 128)
    assert np.array_equal(acc_u, acc_s)
    rq = _requant(mode, rng, acc_u.shape[-1], zp_y, qmin, qmax)
    assert np.array_equal(apply_requant(acc_u, rq) - 128, apply_requant(acc_s, _lowered(rq)))


def _node(op: Op, params: OpParams, shapes, dtype: str, zps) -> tuple[Node, Graph]:
    tensors = {f"t{i}": Tensor(f"t{i}", s, dtype, QuantParams((0.05,), (zp,)))
               for i, (s, zp) in enumerate(zip(shapes, zps))}
    names = tuple(tensors)
    node = Node("n", op, names[:-1], names[-1:], params)
    return node, Graph("g", tensors, (node,), names[:-1], names[-1:])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_uint8_rebias_of_max_pool_and_global_average_pool_is_exact(seed):
    """max pool (clamps lowered by 128) and onnx/tflite global average pooling (input and output
    zero points lowered by 128) on x − 128 give the uint8 results − 128, for every input value."""
    rng = np.random.default_rng(seed)
    h, w, c = (int(v) for v in rng.integers(1, 7, 3))
    x = rng.integers(0, 256, (1, h, w, c))
    x.reshape(-1)[: min(x.size, 256)] = np.arange(256)[: min(x.size, 256)]
    zi, zo = (int(v) for v in rng.integers(0, 256, 2))
    lo = int(rng.choice([0, zo]))
    pool = MaxPoolParams(kernel=(2, 2), stride=(1, 2), pads=(1, 0, 1, 1), qmin=lo, qmax=255)
    out = (1, h + 1, (w + 1 - 2) // 2 + 1, c)
    node, g = _node(Op.MAX_POOL, pool, [x.shape, out], "uint8", [zi, zi])
    want = g_pool.max_pool(node, g, [x])
    node, g = _node(Op.MAX_POOL, replace(pool, qmin=lo - 128, qmax=127), [x.shape, out], "int8",
                    [zi - 128, zi - 128])
    assert np.array_equal(want - 128, g_pool.max_pool(node, g, [x - 128]))
    # onnx QLinearGlobalAveragePool: Σx − zp·N, then the onnx requant
    rq = Requant("onnx", multiplier=np.ones(1, np.int64), shift=np.zeros(1, np.int64), zero_point=zo,
                 qmin=lo, qmax=255, scale=np.float32([rng.uniform(0.2, 1.5) / (h * w)]))
    gap = OnnxMeanParams(axes=(1, 2), keepdims=True, x_zero_point=zi, count=h * w, requant=rq)
    node, g = _node(Op.MEAN, gap, [x.shape, (1, 1, 1, c)], "uint8", [zi, zo])
    want = g_onnx.mean(node, g, [x])
    gap_s = replace(gap, x_zero_point=zi - 128, requant=_lowered(rq))
    node, g = _node(Op.MEAN, gap_s, [x.shape, (1, 1, 1, c)], "int8", [zi - 128, zo - 128])
    assert np.array_equal(want - 128, g_onnx.mean(node, g, [x - 128]))
    # tflite mean: wrap32(Σx − zp_in·N)·M + zp_out
    m = tflite_requant(np.array([rng.uniform(0.3, 1.5)]), 0, -128, 127)
    tfl = TfliteMeanParams(axes=(1, 2), keepdims=True, multiplier=int(m.multiplier[0]), shift=int(m.shift[0]))
    node, g = _node(Op.MEAN, tfl, [x.shape, (1, 1, 1, c)], "uint8", [zi, zo])
    want = g_pool.mean(node, g, [x])
    node, g = _node(Op.MEAN, tfl, [x.shape, (1, 1, 1, c)], "int8", [zi - 128, zo - 128])
    assert np.array_equal(want - 128, g_pool.mean(node, g, [x - 128]))


def test_tflite_average_pool_does_not_commute_with_the_rebias():
    """Why generate refuses the tflite average pool on uint8: its round-half-away-from-zero of the
    raw window sum differs after shifting the values by −128 (here 1/2 → 1 but −255/2 → −128)."""
    params = TfliteAvgPoolParams(kernel=(1, 2), stride=(1, 2), pads=(0, 0, 0, 0), qmin=-1000, qmax=1000)
    x = np.array([0, 1]).reshape(1, 1, 2, 1)
    node, g = _node(Op.AVG_POOL, params, [x.shape, (1, 1, 1, 1)], "int16", [0, 0])
    u = g_pool.avg_pool(node, g, [x])
    s = g_pool.avg_pool(node, g, [x - 128])
    assert int(u.reshape(-1)[0]) - 128 != int(s.reshape(-1)[0])


# ------------------------------------------------------------------ generated uint8 ONNX models

UINT8_CASES = [("convs", "QDQ", False), ("convs", "QOperator", True), ("residual", "QDQ", True),
               ("residual", "QOperator", False), ("matmul", "QDQ", False),
               ("matmul", "QOperator", True)]


@pytest.mark.parametrize("net,fmt,per_channel", UINT8_CASES)
def test_uint8_onnx_models_generate_bit_exact(net, fmt, per_channel, tmp_path, c_cache):
    """quantize_static with QUInt8 activations (the networks cover conv, depthwise, pointwise,
    Gemm/MatMul, QLinearAdd with ReLU, Clip): the generated C equals the golden model and
    onnxruntime on every output, with the DMA bytes the schedule predicts."""
    model = om.quantize(om.NETS[net](), tmp_path / f"{net}.onnx", fmt, per_channel, act="uint8")
    graph = load_model(model)
    lg = lower(graph)
    assert lg.tensors[lg.inputs[0]].dtype == "uint8"
    ns = schedule_network(lg, get_target("gap8", l1_kb=4), "model")
    report = validate_model(model, ns, graph, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()
    assert report.dma_bytes_measured == report.dma_bytes_predicted


@pytest.mark.parametrize("act,fmt,per_channel", [("int8", "QDQ", False), ("uint8", "QOperator", True),
                                                ("uint8", "QDQ", False)])
def test_onnx_average_pools_generate_bit_exact(act, fmt, per_channel, tmp_path, c_cache):
    """QLinearAveragePool with and without counted padding (tw_avgpool_onnx_s8, tiled), then max
    pool and QLinearGlobalAveragePool, int8 and uint8: bit-exact with golden and onnxruntime."""
    model = om.quantize(om.pools_net(), tmp_path / "pools.onnx", fmt, per_channel, act=act)
    graph = load_model(model)
    lg = lower(graph)
    assert sum(l.op == Op.AVG_POOL and l.mode == "onnx" for l in lg.layers) == 2
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report = validate_model(model, ns, graph, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


@pytest.mark.parametrize("act,fmt,per_channel", [("int8", "QOperator", False), ("uint8", "QDQ", True),
                                                ("uint8", "QOperator", False)])
def test_onnx_softmax_generates_bit_exact(act, fmt, per_channel, tmp_path, c_cache):
    """QLinearSoftmax after two Gemms (tw_softmax_onnx_s8, untiled): golden and onnxruntime."""
    model = om.quantize(om.dense_net(), tmp_path / "dense.onnx", fmt, per_channel, act=act)
    graph = load_model(model)
    lg = lower(graph)
    assert lg.layers[-1].op == Op.SOFTMAX and lg.layers[-1].mode == "onnx"
    ns = schedule_network(lg, get_target("gap8", l1_kb=2), "model")
    report = validate_model(model, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


def test_tflite_logistic_generates_bit_exact_with_litert(tmp_path, c_cache):
    """CONV_2D -> LOGISTIC (the 256-entry table, tw_lut_s8, untiled) -> CONV_2D: golden and LiteRT."""
    from .tflite_builder import ACT, SAME, ModelBuilder

    rng = np.random.default_rng(11)
    b = ModelBuilder()
    x = b.input("x", (1, 7, 6, 3), "int8", scale=0.03, zero_point=-5)
    w = b.const("w", rng.integers(-127, 128, (8, 3, 3, 3)), "int8", scale=rng.uniform(0.005, 0.02, 8), zero_point=0)
    bias = b.const("b", rng.integers(-2000, 2000, 8), "int32", scale=np.full(8, 1e-4), zero_point=0)
    h = b.tensor("h", (1, 7, 6, 8), "int8", scale=0.05, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [h], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["NONE"], DilationWFactor=1, DilationHFactor=1)
    s = b.tensor("s", (1, 7, 6, 8), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [h], [s])
    w2 = b.const("w2", rng.integers(-127, 128, (4, 1, 1, 8)), "int8", scale=rng.uniform(0.01, 0.03, 4), zero_point=0)
    b2 = b.const("b2", rng.integers(-500, 500, 4), "int32", scale=np.full(4, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 7, 6, 4), "int8", scale=0.04, zero_point=-2)
    b.op("CONV_2D", [s, w2, b2], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["NONE"], DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    path = b.save(tmp_path / "logistic.tflite")
    graph = load_model(path)
    lg = lower(graph)
    assert [l.op for l in lg.layers] == [Op.CONV2D, Op.LOGISTIC, Op.CONV2D]
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report = validate_model(path, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


@pytest.mark.parametrize("act,fmt,per_channel", [("int8", "QDQ", True), ("uint8", "QOperator", False)])
def test_onnx_concat_generates_bit_exact(act, fmt, per_channel, tmp_path, c_cache):
    """QLinearConcat of two conv branches with different scales (tw_concat2_s8 with a golden
    requantization table): golden and onnxruntime."""
    model = om.quantize(om.concat_net(), tmp_path / "concat.onnx", fmt, per_channel, act=act)
    graph = load_model(model)
    lg = lower(graph)
    assert any(l.op == Op.CONCAT for l in lg.layers)
    ns = schedule_network(lg, get_target("gap8", l1_kb=2), "model")
    report = validate_model(model, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


@pytest.mark.parametrize("c,m", [(1, 8), (3, 2)])
def test_depthwise_with_channel_multiplier_generates_bit_exact_with_litert(c, m, tmp_path, c_cache):
    """DEPTHWISE_CONV_2D with DepthMultiplier m (lowered to a dense conv with block-diagonal
    weights, passes/lower.py), per-channel scales, SAME padding, stride 2: golden and LiteRT."""
    from .tflite_builder import ACT, SAME, ModelBuilder

    rng = np.random.default_rng(c * 10 + m)
    k = c * m
    b = ModelBuilder()
    x = b.input("x", (1, 10, 9, c), "int8", scale=0.05, zero_point=7)
    w = b.const("w", rng.integers(-127, 128, (1, 3, 3, k)), "int8", scale=rng.uniform(0.002, 0.02, k),
                zero_point=0, quantized_dimension=3)
    bias = b.const("b", rng.integers(-3000, 3000, k), "int32", scale=np.full(k, 1e-4), zero_point=0)
    y = b.tensor("y", (1, 5, 5, k), "int8", scale=0.03, zero_point=-5)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], "DepthwiseConv2DOptions", Padding=SAME, StrideW=2,
         StrideH=2, DepthMultiplier=m, FusedActivationFunction=ACT["RELU"], DilationWFactor=1,
         DilationHFactor=1)
    b.output(y)
    path = b.save(tmp_path / "dw.tflite")
    graph = load_model(path)
    lg = lower(graph)
    assert [l.op for l in lg.layers] == [Op.CONV2D] and lg.layers[0].nest.C == c
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report = validate_model(path, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


def _se_net():
    """conv -> global average pool -> QLinearAdd of the [1, C, 1, 1] pool back onto the conv's
    [1, C, H, W] output (the broadcast operand first: a_index 1) -> 1x1 conv."""
    n = om.Net("se", (1, 3, 7, 6), seed=9)
    a = n.conv("x", 6, (3, 3), (1, 1), (1, 1, 1, 1))
    r = n.add(n.gap(a), a)
    return n.model([n.conv(r, 4, (1, 1), (1, 1), (0, 0, 0, 0))])


@pytest.mark.parametrize("act,fmt", [("int8", "QDQ"), ("uint8", "QOperator")])
def test_onnx_channel_broadcast_add_generates_bit_exact(act, fmt, tmp_path, c_cache):
    model = om.quantize(_se_net(), tmp_path / "se.onnx", fmt, False, act=act)
    graph = load_model(model)
    lg = lower(graph)
    add = next(l for l in lg.layers if l.op == Op.ADD)
    assert [lg.tensors[t].shape for t in add.inputs] == [(1, 1, 1, 6), (1, 7, 6, 6)]
    ns = schedule_network(lg, get_target("gap8", l1_kb=2), "model")
    report = validate_model(model, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


def test_tflite_channel_broadcast_mul_and_constant_add_generate_bit_exact(tmp_path, c_cache):
    """MUL of a [1,H,W,C] activation by a [1,1,1,C] one (squeeze-excite), ADD of a constant
    per-channel vector, SUB of a constant scalar: golden and LiteRT."""
    from .tflite_builder import ACT, SAME, ModelBuilder

    rng = np.random.default_rng(21)
    b = ModelBuilder()
    x = b.input("x", (1, 5, 4, 3), "int8", scale=0.03, zero_point=-5)
    w = b.const("w", rng.integers(-127, 128, (6, 3, 3, 3)), "int8", scale=rng.uniform(0.005, 0.02, 6), zero_point=0)
    bias = b.const("b", rng.integers(-2000, 2000, 6), "int32", scale=np.full(6, 1e-4), zero_point=0)
    h = b.tensor("h", (1, 5, 4, 6), "int8", scale=0.05, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [h], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT["NONE"], DilationWFactor=1, DilationHFactor=1)
    ax = b.const("axes", np.array([1, 2], dtype=np.int32), "int32")
    g = b.tensor("g", (1, 1, 1, 6), "int8", scale=0.031, zero_point=4)
    b.op("MEAN", [h, ax], [g], "ReducerOptions", KeepDims=True)
    m = b.tensor("m", (1, 5, 4, 6), "int8", scale=0.04, zero_point=-7)
    b.op("MUL", [h, g], [m], "MulOptions", FusedActivationFunction=ACT["RELU6"])
    cv = b.const("cv", rng.integers(-128, 128, 6), "int8", scale=0.02, zero_point=-3)
    a = b.tensor("a", (1, 5, 4, 6), "int8", scale=0.05, zero_point=2)
    b.op("ADD", [cv, m], [a], "AddOptions", FusedActivationFunction=ACT["NONE"])
    cs = b.const("cs", np.array([17]), "int8", scale=0.03, zero_point=1)
    y = b.tensor("y", (1, 5, 4, 6), "int8", scale=0.06, zero_point=-1)
    b.op("SUB", [a, cs], [y], "SubOptions", FusedActivationFunction=ACT["NONE"])
    b.output(y)
    path = b.save(tmp_path / "bcast.tflite")
    graph = load_model(path)
    lg = lower(graph)
    assert [l.op for l in lg.layers] == [Op.CONV2D, Op.GLOBAL_AVG_POOL, Op.MUL, Op.ADD, Op.SUB]
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report = validate_model(path, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()
def test_tflite_uint8_add_and_constant_mul_generate_bit_exact(tmp_path, c_cache):
    """Legacy uint8 TFLite elementwise ops: MAX_POOL, ADD of two uint8 activations (tiled), MUL by a
    same-shape uint8 constant (untiled): golden and LiteRT."""
    from .tflite_builder import ACT, SAME, ModelBuilder

    rng = np.random.default_rng(31)
    b = ModelBuilder()
    x = b.input("x", (1, 5, 4, 3), "uint8", scale=0.02, zero_point=120)
    h = b.tensor("h", (1, 5, 4, 3), "uint8", scale=0.02, zero_point=120)
    b.op("MAX_POOL_2D", [x], [h], "Pool2DOptions", Padding=SAME, StrideW=1, StrideH=1, FilterWidth=2,
         FilterHeight=2, FusedActivationFunction=ACT["NONE"])
    a = b.tensor("a", (1, 5, 4, 3), "uint8", scale=0.04, zero_point=90)
    b.op("ADD", [x, h], [a], "AddOptions", FusedActivationFunction=ACT["RELU6"])
    k = b.const("k", rng.integers(0, 256, (1, 5, 4, 3)), "uint8", scale=0.01, zero_point=130)
    y = b.tensor("y", (1, 5, 4, 3), "uint8", scale=0.02, zero_point=140)
    b.op("MUL", [a, k], [y], "MulOptions", FusedActivationFunction=ACT["NONE"])
    b.output(y)
    path = b.save(tmp_path / "u8.tflite")
    graph = load_model(path)
    lg = lower(graph)
    assert [l.op for l in lg.layers] == [Op.MAX_POOL, Op.ADD, Op.MUL]
    assert lg.tensors[lg.inputs[0]].dtype == "uint8" and lg.tensors[lg.outputs[0]].dtype == "uint8"
    ns = schedule_network(lg, get_target("gap8", l1_kb=3), "model")   # 2 kB: the add tables
    report = validate_model(path, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


# ------------------------------------------------------------------ shift requant, per-channel d

def shift_specs():
    """The layers of the shift-requant tests: one conv, depthwise and dense, each tiled over k on
    a small L1."""
    from .codegen_cases import LayerSpec

    return {"conv": LayerSpec("conv", c=5, k=12, h=7, w=6, fy=3, fx=3, pads=(1, 1, 1, 1)),
            "dwconv": LayerSpec("dwconv", c=32, k=32, h=16, w=14, fy=3, fx=3, sy=2,
                                pads=(1, 0, 1, 1)),
            "fc": LayerSpec("fc", c=300, k=40, h=1, w=1)}


@pytest.mark.parametrize("family", ["pulp", "portable"])
@pytest.mark.parametrize("kind", ["conv", "dwconv", "fc"])
def test_shift_requant_with_per_channel_right_shifts(kind, family, tmp_path, c_cache):
    """(k·acc + λ) >> d[k] with a different d per output channel (DORY/NEMO per-channel requant),
    tiled over k on a small L1, by both kernel families on gap8: generated C equals the golden
    model (the portable layer's per-channel shift table in its C)."""
    from .codegen_cases import layer_graph
    from .pulp_targets import portable_target, pulp_target

    lg = layer_graph(shift_specs()[kind], 3)
    rng = np.random.default_rng(5)
    layer = lg.layers[-1]
    k = layer.nest.K
    d = rng.integers(6, 20, k)
    d[:3] = (0, 31, 40)
    rq = Requant("shift", multiplier=rng.integers(1, 1 << 6, k) * (1 << np.maximum(d - 16, 0)),
                 shift=d, zero_point=int(rng.integers(-10, 10)), qmin=-128, qmax=127,
                 bias=rng.integers(-(1 << 10), 1 << 10, k) << np.maximum(d - 22, 0))
    rq = replace(rq, multiplier=np.where(d == 0, 0, rq.multiplier))   # d = 0: output = zp + λ
    lg = replace(lg, layers=(*lg.layers[:-1], replace(layer, requant=rq)))
    target = (pulp_target if family == "pulp" else portable_target)("gap8", l1_kb=1)
    ns = schedule_network(lg, target, "model")
    assert any(t.count > 1 for t in ns.schedules[-1].tiles if t.dim == "k")
    report, p = validate_network(ns, tmp_path / kind, make_inputs(lg, 4), cache=c_cache)
    assert report.bit_exact, report.to_json()
    text = (p.path / "layers" / f"layer_{len(lg.layers) - 1:02d}.c").read_text()
    if family == "portable":
        assert "SHIFT_D" in text and ", ".join(str(v) for v in d) in text
    else:
        assert "tw_pulp_" in text


def test_nemo_integer_graph_generates_bit_exact_with_onnxruntime(tmp_path, c_cache):
    """The NEMO/QuantLab integer graph of tests/onnx_models.py (shift requant with λ, uint8
    activations, max pool, int8 output): generated C equals the golden model and onnxruntime."""
    import onnx

    path = tmp_path / "nemo.onnx"
    onnx.save(om.nemo_net(), str(path))
    graph = load_model(path)
    lg = lower(graph)
    assert {l.requant.mode for l in lg.layers if l.requant is not None} == {"shift"}
    assert lg.tensors[lg.inputs[0]].dtype == "uint8"
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report = validate_model(path, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()
