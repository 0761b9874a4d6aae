"""The golden model against onnxruntime on ONNX models: zero differing elements.

- networks quantized by quantize_static (QDQ and QOperator, per tensor and per channel, int8 and uint8
  activations), compared on every intermediate integer tensor and on the plain model (where the
  Flatten/Reshape -> Gemm/MatMul weight permutation is used) for several random inputs; onnxruntime's
  optimized graph is checked to contain no float compute, so the reference really ran QLinear kernels;
- operator models built by hand, swept exhaustively (QLinearAdd over all 65536 input pairs, the
  requantization of DQ -> Relu/Clip -> Q over all 256 values) or over many shapes and scales
  (softmax, average pools, concat);
- a NEMO-style integer graph (shift requantization) and the bundled example model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

try:
    from .onnx_models import FLOAT_COMPUTE, NETS, OPSET, expose_intermediates, nemo_net, ort_optimized_ops, quantize
except ImportError:  # run as a plain module
    from onnx_models import FLOAT_COMPUTE, NETS, OPSET, expose_intermediates, nemo_net, ort_optimized_ops, quantize
from tilewise.frontend import load_model
from tilewise.frontend.onnx_io import random_inputs, reference_session, run_reference
from tilewise.golden import run_graph
from tilewise.ir.ops import Op

VARIANTS = [("QDQ", True, "int8"), ("QDQ", False, "uint8"), ("QOperator", False, "int8"), ("QOperator", True, "uint8")]


def assert_bit_exact(path: Path, runs: int = 3, seed: int = 0, inputs=None, plain: bool = False) -> dict[str, int]:
    """Golden vs onnxruntime on `runs` random inputs; returns compared element counts per output.

    `plain`: onnxruntime with its default session options only (no int8 QDQ fusion entry)."""
    g = load_model(path)
    sess = reference_session(path, int8_qdq_fusion=not plain)
    rng = np.random.default_rng(seed)
    compared: dict[str, int] = {}
    for r in range(runs):
        x = inputs(g, rng) if inputs else random_inputs(g, rng)
        ref = run_reference(g, sess, x)
        got = run_graph(g, x)
        assert set(ref) == set(g.outputs)
        for name, want in ref.items():
            bad = int(np.count_nonzero(got[name] != want))
            assert bad == 0, f"{path.name}: output {name} differs in {bad} of {want.size} elements (run {r})"
            compared[name] = compared.get(name, 0) + want.size
    return compared


@pytest.mark.parametrize("net", sorted(NETS))
@pytest.mark.parametrize("fmt,per_channel,act", VARIANTS)
def test_quantized_network_bit_exact(net, fmt, per_channel, act, tmp_path):
    q = quantize(NETS[net](), tmp_path / f"{net}.onnx", fmt, per_channel, act)
    exposed = expose_intermediates(q, tmp_path / f"{net}_all.onnx")
    for path in (q, exposed):
        ops = ort_optimized_ops(path, tmp_path / "opt.onnx")
        assert not [o for o in ops if o in FLOAT_COMPUTE], f"onnxruntime left float compute: {ops}"
        compared = assert_bit_exact(path)
        assert sum(compared.values()) > 0
        if fmt == "QOperator" or act == "uint8":  # these need no session option at all
            assert_bit_exact(path, runs=2, seed=1, plain=True)
    assert len(load_model(exposed).outputs) >= 4  # the intermediate tensors were compared too


# ---------------------------------------------------------------------------------------------
# hand-built operator models
# ---------------------------------------------------------------------------------------------

ET = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "float32": TensorProto.FLOAT}
NP = {"int8": np.int8, "uint8": np.uint8}


def save_model(path: Path, nodes, inputs, outputs, consts: dict[str, np.ndarray], opset: int = OPSET) -> Path:
    graph = helper.make_graph(
        nodes, path.stem,
        [helper.make_tensor_value_info(n, ET[t], list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, ET[t], None) for n, t in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 9
    onnx.save(m, str(path))
    return path


def qp(prefix: str, scale: float, zp: int, dtype: str) -> dict[str, np.ndarray]:
    return {f"{prefix}_s": np.float32(scale), f"{prefix}_z": np.asarray(zp, dtype=NP[dtype])}


def all_pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(NP[dtype])
    v = np.arange(info.min, info.max + 1)
    a, b = np.meshgrid(v, v)
    return a.reshape(1, -1).astype(NP[dtype]), b.reshape(1, -1).astype(NP[dtype])


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_add_exhaustive(dtype, tmp_path):
    rng = np.random.default_rng(11)
    info = np.iinfo(NP[dtype])
    a, b = all_pairs(dtype)
    for trial in range(8):
        sa, sb, sc = (float(np.float32(v)) for v in rng.uniform(0.002, 0.08, 3))
        za, zb, zc = (int(v) for v in rng.integers(info.min, info.max + 1, 3))
        consts = {**qp("a", sa, za, dtype), **qp("b", sb, zb, dtype), **qp("c", sc, zc, dtype)}
        node = helper.make_node("QLinearAdd", ["a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z"], ["c"],
                                domain="com.microsoft", name="add")
        path = save_model(tmp_path / f"add{trial}.onnx", [node], [("a", dtype, a.shape), ("b", dtype, b.shape)],
                          [("c", dtype)], consts)
        assert_bit_exact(path, runs=1, inputs=lambda g, r: {g.inputs[0]: a, g.inputs[1]: b})


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("swap", [False, True])
def test_qlinear_add_channel_broadcast(dtype, swap, tmp_path):
    """A per-channel [1,C,1,1] constant added to a [1,C,H,W] activation, on either side."""
    rng = np.random.default_rng(12 + swap)
    info = np.iinfo(NP[dtype])
    const = np.arange(info.min, info.max + 1).reshape(1, 256, 1, 1).astype(NP[dtype])
    for trial in range(4):
        sa, sb, sc = (float(np.float32(v)) for v in rng.uniform(0.002, 0.08, 3))
        za, zb, zc = (int(v) for v in rng.integers(info.min, info.max + 1, 3))
        consts = {**qp("a", sa, za, dtype), **qp("b", sb, zb, dtype), **qp("c", sc, zc, dtype), "k": const}
        ins = ["k", "b_s", "b_z", "x", "a_s", "a_z"] if swap else ["x", "a_s", "a_z", "k", "b_s", "b_z"]
        node = helper.make_node("QLinearAdd", [*ins, "c_s", "c_z"], ["c"], domain="com.microsoft", name="add")
        path = save_model(tmp_path / f"bc{trial}.onnx", [node], [("x", dtype, (1, 256, 5, 7))], [("c", dtype)], consts)
        assert_bit_exact(path, runs=2, seed=trial)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_dq_relu_clip_q_requant_exhaustive(dtype, tmp_path):
    """DQ -> Q, DQ -> Relu -> Q and DQ -> Clip -> Q with new scales, over every input value."""
    rng = np.random.default_rng(13)
    info = np.iinfo(NP[dtype])
    x = np.arange(info.min, info.max + 1).reshape(1, 256).astype(NP[dtype])
    for trial in range(6):
        sx, sy = (float(np.float32(v)) for v in rng.uniform(0.003, 0.1, 2))
        zx, zy = (int(v) for v in rng.integers(info.min // 2, info.max // 2 + 1, 2))
        consts = {**qp("x", sx, zx, dtype), **qp("y", sy, zy, dtype), "lo": np.float32(-0.7), "hi": np.float32(1.3)}
        nodes = [
            helper.make_node("DequantizeLinear", ["x", "x_s", "x_z"], ["xf"], name="dq"),
            helper.make_node("QuantizeLinear", ["xf", "y_s", "y_z"], ["q0"], name="q0"),
            helper.make_node("Relu", ["xf"], ["r"], name="relu"),
            helper.make_node("QuantizeLinear", ["r", "y_s", "y_z"], ["q1"], name="q1"),
            helper.make_node("Clip", ["xf", "lo", "hi"], ["c"], name="clip"),
            helper.make_node("QuantizeLinear", ["c", "y_s", "y_z"], ["q2"], name="q2"),
        ]
        path = save_model(tmp_path / f"rq{trial}.onnx", nodes, [("x", dtype, x.shape)],
                          [("q0", dtype), ("q1", dtype), ("q2", dtype)], consts)
        g = load_model(path)
        assert [n.op for n in g.nodes] == [Op.QUANTIZE] * 3
        assert_bit_exact(path, runs=1, inputs=lambda g, r: {g.inputs[0]: x})


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_softmax(dtype, tmp_path):
    rng = np.random.default_rng(14)
    info = np.iinfo(NP[dtype])
    cases = [((4, 10), 13, -1), ((3, 100), 13, 1), ((2, 1000), 12, 1), ((5, 3), 12, -1), ((1, 6, 3, 2), 13, 1)]
    for i, (shape, opset, axis) in enumerate(cases):
        for sx, sy, zy in ((rng.uniform(0.01, 0.3), 1 / 256, info.min),
                           (rng.uniform(0.01, 0.3), rng.uniform(0.002, 0.01), 3)):
            zx = int(rng.integers(info.min, info.max + 1))
            consts = {**qp("x", sx, zx, dtype), **qp("y", sy, zy, dtype)}
            node = helper.make_node("QLinearSoftmax", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain="com.microsoft",
                                    name="softmax", axis=axis, opset=opset)
            path = save_model(tmp_path / f"sm{i}.onnx", [node], [("x", dtype, shape)], [("y", dtype)], consts,
                              opset=opset)
            assert_bit_exact(path, runs=3, seed=i)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_average_pools(dtype, tmp_path):
    rng = np.random.default_rng(15)
    info = np.iinfo(NP[dtype])
    cases = [  # kernel, strides, pads, count_include_pad, input HxW
        ((3, 3), (2, 2), (1, 1, 1, 1), 0, (9, 11)),
        ((3, 3), (2, 2), (1, 1, 1, 1), 1, (9, 11)),
        ((2, 4), (1, 3), (0, 2, 1, 0), 0, (6, 13)),
        ((5, 5), (1, 1), (0, 0, 0, 0), 0, (5, 5)),  # whole input: onnxruntime's global-pool fallback
        ((7, 3), (1, 1), (0, 0, 0, 0), 0, (7, 3)),
    ]
    for i, (k, s, p, cip, hw) in enumerate(cases):
        sx, sy = rng.uniform(0.005, 0.05, 2)
        zx, zy = (int(v) for v in rng.integers(info.min // 2, info.max // 2 + 1, 2))
        consts = {**qp("x", sx, zx, dtype), **qp("y", sy, zy, dtype)}
        node = helper.make_node("QLinearAveragePool", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain="com.microsoft",
                                name="avg", kernel_shape=list(k), strides=list(s), pads=list(p), count_include_pad=cip)
        gnode = helper.make_node("QLinearGlobalAveragePool", ["x", "x_s", "x_z", "y_s", "y_z"], ["g"],
                                 domain="com.microsoft", name="gap")
        path = save_model(tmp_path / f"ap{i}.onnx", [node, gnode], [("x", dtype, (1, 12, *hw))],
                          [("y", dtype), ("g", dtype)], consts)
        assert_bit_exact(path, runs=3, seed=i)


def test_qlinear_concat_rescales(tmp_path):
    rng = np.random.default_rng(16)
    for dtype in ("int8", "uint8"):
        info = np.iinfo(NP[dtype])
        consts = {**qp("a", 0.02, 3, dtype), **qp("b", 0.013, info.min + 5, dtype), **qp("y", 0.02, 3, dtype),
                  **qp("c", float(rng.uniform(0.01, 0.05)), 0, dtype)}
        node = helper.make_node("QLinearConcat",
                                ["y_s", "y_z", "a", "a_s", "a_z", "b", "b_s", "b_z", "c", "c_s", "c_z"],
                                ["y"], domain="com.microsoft", name="concat", axis=1)
        path = save_model(tmp_path / f"cat_{dtype}.onnx", [node],
                          [("a", dtype, (1, 3, 4, 5)), ("b", dtype, (1, 2, 4, 5)), ("c", dtype, (1, 4, 4, 5))],
                          [("y", dtype)], consts)
        assert_bit_exact(path, runs=3)


def test_nemo_integer_graph_bit_exact(tmp_path):
    path = tmp_path / "nemo.onnx"
    onnx.save(nemo_net(), str(path))
    g = load_model(path)
    assert g.meta["onnx_style"] == "nemo"
    assert [n.op for n in g.nodes if n.op != Op.RESHAPE] == [Op.CONV2D, Op.MAX_POOL, Op.CONV2D, Op.FULLY_CONNECTED]
    assert all(n.params.requant.mode == "shift" for n in g.nodes if n.op in (Op.CONV2D, Op.FULLY_CONNECTED))
    assert_bit_exact(path, runs=5)


def test_example_model_bit_exact(tmp_path):
    from tilewise.examples import EXAMPLE_ONNX

    path = EXAMPLE_ONNX
    assert path.stat().st_size < 100_000
    g = load_model(path)
    ops = {n.op for n in g.nodes}
    assert {Op.CONV2D, Op.ADD, Op.FULLY_CONNECTED} <= ops and ops & {Op.AVG_POOL, Op.MAX_POOL, Op.MEAN}
    assert any(n.op == Op.CONV2D and n.params.groups > 1 for n in g.nodes)
    assert_bit_exact(path, runs=5)
    assert_bit_exact(expose_intermediates(path, tmp_path / "example_all.onnx"), runs=3)
    # the reference needs no session option for this QOperator model
    import onnxruntime as ort

    plain = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = random_inputs(g, np.random.default_rng(5))
    want = run_reference(g, plain, x)
    got = run_graph(g, x)
    assert all(np.array_equal(got[k], want[k]) for k in want)


def _conv_case(rng: np.random.Generator, i: int, tmp_path: Path) -> Path:
    xdt = ("int8", "uint8")[i % 2]
    info = np.iinfo(NP[xdt])
    c = int(rng.choice([1, 3, 4, 8, 16]))
    groups = int(rng.choice([1, c, 2 if c % 2 == 0 else 1]))
    k = int(rng.choice([2, 4, 6])) * groups
    kh, kw = (int(v) for v in rng.choice([1, 2, 3, 5], 2))
    sh, sw = (int(v) for v in rng.choice([1, 2, 3], 2))
    dh, dw = (int(v) for v in rng.choice([1, 1, 2], 2))
    pads = [int(rng.integers(0, max(kh, kw))) for _ in range(4)]
    h = int(rng.integers(dh * (kh - 1) + 1, 14))
    w_ = int(rng.integers(dw * (kw - 1) + 1, 14))
    per_channel = bool(i % 3)
    fan_in = c // groups * kh * kw
    xs = float(rng.uniform(0.01, 0.1))
    ws = rng.uniform(0.002, 0.02, k if per_channel else 1).astype(np.float32)
    acc_std = np.sqrt(fan_in) * 74.0 * 74.0
    ys = float(xs * float(ws.mean()) * acc_std / 40.0)
    consts = {
        **qp("x", xs, int(rng.integers(info.min, info.max + 1)), xdt),
        **qp("y", ys, int(rng.integers(info.min // 2, info.max // 2 + 1)), xdt),
        "w": rng.integers(-128, 128, (k, c // groups, kh, kw)).astype(np.int8),
        "w_s": ws if per_channel else np.float32(ws[0]),
        "w_z": np.zeros(k, np.int8) if per_channel else np.int8(0),
        "b": rng.integers(-int(acc_std), int(acc_std) + 1, k).astype(np.int32),
    }
    node = helper.make_node("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "b"], ["y"],
                            name="conv",
                            kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw], pads=pads, group=groups)
    return save_model(tmp_path / f"conv{i}.onnx", [node], [("x", xdt, (1, c, h, w_))], [("y", xdt)], consts)


def test_random_qlinear_conv_geometries(tmp_path):
    """Kernels 1-5, strides 1-3, dilations, asymmetric pads, dense/grouped/depthwise, per tensor/channel."""
    rng = np.random.default_rng(17)
    for i in range(24):
        assert_bit_exact(_conv_case(rng, i, tmp_path), runs=2, seed=i)


def test_large_accumulators_round_like_onnxruntime(tmp_path):
    """3x3x256 convolution on extreme inputs: int32 accumulators beyond 2^24 (inexact in float32), outputs
    not saturated."""
    rng = np.random.default_rng(18)
    c, k = 256, 8
    consts = {**qp("x", 0.05, 0, "int8"), **qp("y", 130.0, 0, "int8"),
              "w": np.where(rng.random((k, c, 3, 3)) < 0.9, 127, -128).astype(np.int8),
              "w_s": np.float32(0.01), "w_z": np.int8(0), "b": rng.integers(-999, 999, k).astype(np.int32)}
    node = helper.make_node("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "b"], ["y"],
                            name="conv",
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    path = save_model(tmp_path / "big.onnx", [node], [("x", "int8", (1, c, 4, 4))], [("y", "int8")], consts)

    def extreme(g, r):
        return {g.inputs[0]: np.where(r.random((1, 4, 4, c)) < 0.95, 127, -128).astype(np.int8)}

    g = load_model(path)
    x = extreme(g, np.random.default_rng(0))[g.inputs[0]].astype(np.int64)
    assert np.abs(x).sum() * 127 > 2 ** 24  # the accumulators do exceed float32's integer range
    assert_bit_exact(path, runs=3, inputs=extreme)
    y = run_graph(g, extreme(g, np.random.default_rng(0)))[g.outputs[0]]
    assert 20 < np.abs(y.astype(int)).max() < 127


def test_random_dense_layers(tmp_path):
    rng = np.random.default_rng(19)
    for i in range(12):
        dt = ("int8", "uint8")[i % 2]
        info = np.iinfo(NP[dt])
        m, kdim, n = int(rng.integers(1, 5)), int(rng.integers(1, 300)), int(rng.integers(1, 40))
        per_channel = bool(i % 3)
        ws = rng.uniform(0.002, 0.02, n if per_channel else 1).astype(np.float32)
        ys = float(0.05 * float(ws.mean()) * np.sqrt(kdim) * 74 * 74 / 40)
        w = rng.integers(-128, 128, (kdim, n)).astype(np.int8)
        consts = {**qp("a", 0.05, int(rng.integers(info.min, info.max + 1)), dt),
                  **qp("y", ys, int(rng.integers(info.min // 2, info.max // 2 + 1)), dt),
                  "w": w, "wt": np.ascontiguousarray(w.T), "w_s": ws if per_channel else np.float32(ws[0]),
                  "w_z": np.zeros(n, np.int8) if per_channel else np.int8(0),
                  "b": rng.integers(-20000, 20000, n).astype(np.int32)}
        nodes = [
            helper.make_node("QLinearMatMul", ["a", "a_s", "a_z", "w", "w_s", "w_z", "y_s", "y_z"], ["mm"],
                             name="matmul"),
            helper.make_node("QGemm", ["a", "a_s", "a_z", "wt", "w_s", "w_z", "b", "y_s", "y_z"], ["gemm"], name="gemm",
                             domain="com.microsoft", transB=1, alpha=float(rng.choice([1.0, 0.75]))),
        ]
        path = save_model(tmp_path / f"dense{i}.onnx", nodes, [("a", dt, (m, kdim))], [("mm", dt), ("gemm", dt)],
                          consts)
        assert_bit_exact(path, runs=2, seed=i)
