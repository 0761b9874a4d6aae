"""The integer exports' plain ops and Deeploy / QuantLab operators (frontend/onnx_int.py,
golden/int_ops.py, bindings/portable/int_ops.py): small graphs written as the exporters write
them (float32 containers of integer codes, NCHW), each checked three ways — the golden model
against onnxruntime running the file (exact here: every value is an integer far below 2^24), the
output types the bounds give, and the generated C bit-exact on gap8 and stm32h7 (host builds).
Plus the graph passes that make real exports readable: constant folding (Shape / Gather /
Concat …), out-of-order nodes, and the one-sentence refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilewise.errors import TilewiseError
from tilewise.frontend import load_model
from tilewise.frontend.onnx_fold import fold_constants
from tilewise.frontend.onnx_io import onnx_feeds, reference_session, run_reference
from tilewise.frontend.onnx_model import read_graph
from tilewise.golden import run_graph
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .test_cli_errors import assert_one_sentence_error, run_cli


def _model(nodes, inputs, outputs, inits=(), opset=13) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "int_ops", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _vi(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _const(name: str, v) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(v, dtype=np.float32), name)


def _save(tmp_path: Path, model: onnx.ModelProto, name: str = "m") -> Path:
    p = tmp_path / f"{name}.onnx"
    onnx.save(model, str(p))
    return p


def arith_net() -> onnx.ModelProto:
    """int8 codes x [1, 4, 6, 6]: Add / Sub / Mul with constants and with each other (broadcast
    along channels), a MatMul of two activations, a Slice, a constant Pad, ReduceSum and
    ReduceMean (Deeploy's rounding) — every result exact integer arithmetic."""
    rng = np.random.default_rng(5)
    nodes = [
        helper.make_node("Mul", ["x", "three"], ["x3"], name="mul3"),
        helper.make_node("Sub", ["x3", "chan"], ["xs"], name="sub_chan"),
        helper.make_node("Add", ["xs", "x"], ["xa"], name="add_x"),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 1, 3, 2], name="t"),
        helper.make_node("MatMul", ["x", "xt"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "xa"], ["mix"], name="add_mm"),
        helper.make_node("Slice", ["mix", "starts", "ends", "axes", "steps"], ["sl"], name="slice"),
        helper.make_node("Pad", ["sl", "pads", "padval"], ["pd"], mode="constant", name="pad"),
        helper.make_node("ReduceSum", ["pd", "rs_axes"], ["rsum"], keepdims=1, name="rsum"),
        helper.make_node("ReduceMean", ["x"], ["rmean"], axes=[1], keepdims=0, name="rmean"),
    ]
    inits = [_const("three", 3), _const("chan", rng.integers(-5, 6, (1, 4, 1, 1))),
             numpy_helper.from_array(np.array([1, 0], np.int64), "starts"),
             numpy_helper.from_array(np.array([4, 6], np.int64), "ends"),
             numpy_helper.from_array(np.array([1, 3], np.int64), "axes"),
             numpy_helper.from_array(np.array([2, 1], np.int64), "steps"),
             numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 0, 1], np.int64), "pads"),
             _const("padval", 7.0),
             numpy_helper.from_array(np.array([2], np.int64), "rs_axes")]
    return _model(nodes, [_vi("x", [1, 4, 6, 6])], [_vi("rsum", None)], inits)


def rmean_net() -> onnx.ModelProto:
    return _model([helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0, name="rmean")],
                  [_vi("x", [1, 4, 6, 6])], [_vi("y", None)], opset=13)


def _golden_vs_ort(path: Path, dtypes: dict[str, str], n: int = 4):
    g = load_model(path, dtypes)
    sess = reference_session(str(path))
    rng = np.random.default_rng(1)
    for _ in range(n):
        x = {i: rng.integers(-128, 128, g.tensors[i].shape) for i in g.inputs}
        want = run_reference(g, sess, x)
        got = run_graph(g, x)
        for o in g.outputs:
            np.testing.assert_array_equal(got[o], want[o])
    return g


def test_integer_arithmetic_matches_onnxruntime_and_types_follow_the_bounds(tmp_path):
    g = _golden_vs_ort(_save(tmp_path, arith_net()), {"*": "int8"})
    ops = {n.op for n in g.nodes}
    assert {Op.ADD, Op.SUB, Op.MUL, Op.MATMUL, Op.SLICE, Op.PAD, Op.REDUCE} <= ops
    dtype = {n.op: g.tensors[n.outputs[0]].dtype for n in g.nodes}
    assert g.tensors[next(n for n in g.nodes if n.op == Op.MUL).outputs[0]].dtype == "int16"   # 3·x
    assert dtype[Op.MATMUL] == "int32"       # Σ of 6 products up to 2^14
    rsum = next(n for n in g.nodes if n.op == Op.REDUCE and not n.params.average)
    assert g.tensors[rsum.outputs[0]].dtype == "int32"


def test_reduce_mean_is_deeploys_rounding_and_has_no_onnxruntime_reference(tmp_path):
    """onnxruntime's ReduceMean is the real mean: the golden model is Deeploy's floor((Σ + n/2)/n),
    and the model is validated without onnxruntime (graph.meta says why)."""
    path = _save(tmp_path, rmean_net())
    g = load_model(path, {"*": "int8"})
    assert "ReduceMean" in g.meta["onnx_no_reference"]
    x = np.random.default_rng(2).integers(-128, 128, g.tensors[g.inputs[0]].shape)
    got = run_graph(g, {g.inputs[0]: x})[g.outputs[0]]
    s = onnx_feeds(g, {g.inputs[0]: x})["x"].astype(np.int64).sum(axis=1)
    np.testing.assert_array_equal(got, np.floor_divide(s + 2, 4))


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_integer_ops_generated_c_bit_exact(target, tmp_path, c_cache):
    path = _save(tmp_path, arith_net())
    g = load_model(path, {"*": "int8"})
    ns = schedule_network(lower(g), get_target(target))
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact and r.golden_vs_reference == 0, r.to_json()


def _hardswish_tid_net() -> onnx.ModelProto:
    """Deeploy's iHardswish (int32 out), a RequantShift, then TrueIntegerDiv → RequantShift."""
    nodes = [
        helper.make_node("iHardswish", ["x"], ["h"], one_over_six=33, six=1530, three=765, name="hsw"),
        helper.make_node("RequantShift", ["h", "m1", "a1"], ["r1"], div=65536, n_levels_out=256, signed=1,
                         name="rq1"),
        helper.make_node("TrueIntegerDiv", ["r1"], ["d"], Delta=16384, eps=1, eta=200000, y=2, name="tid"),
        helper.make_node("RequantShift", ["d", "m2", "a2"], ["y"], div=65536, n_levels_out=256, signed=1,
                         name="rq2"),
    ]
    inits = [_const("m1", 1), _const("a1", 0), _const("m2", 4), _const("a2", 0)]
    return _model(nodes, [_vi("x", [1, 1, 16, 16])], [_vi("y", None)], inits, opset=10)


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_deeploy_hardswish_and_true_integer_div(target, tmp_path, c_cache):
    """iHardswish as Deeploy's Hardswish_s8.c computes it; TrueIntegerDiv merged into the next
    RequantShift as Deeploy's MergeTrueIntegerDivRequantShiftPass does (mul·⌊Δη/(yη+ε)⌋·256,
    div·256); C bit-exact with the golden model (onnxruntime has no kernels for them)."""
    path = _save(tmp_path, _hardswish_tid_net())
    g = load_model(path, {"*": "int8"})
    x = np.arange(-128, 128).reshape(g.tensors[g.inputs[0]].shape)     # every int8 code
    vals = run_graph(g, {g.inputs[0]: x}, keep_all=True)
    xv = x.astype(np.int64)
    h = xv * (np.clip(xv + 765, 0, 1530) * 33)
    r1 = np.clip(np.floor((h + 32768) / 65536), -128, 127).astype(np.int64)
    coeff = (16384 * 200000) // (2 * 200000 + 1) * 256
    want = np.clip((r1 * 4 * coeff + 2 ** 23) >> 24, -128, 127)
    np.testing.assert_array_equal(vals[g.outputs[0]], want)
    ns = schedule_network(lower(g), get_target(target))
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact and r.reference is not None and "no reference" in r.reference, r.to_json()


def test_true_integer_div_without_its_requant_shift_is_one_sentence(tmp_path):
    nodes = [helper.make_node("TrueIntegerDiv", ["x"], ["y"], Delta=16384, eps=1, eta=200000, y=2, name="tid")]
    path = _save(tmp_path, _model(nodes, [_vi("x", [1, 4])], [_vi("y", None)], opset=10))
    assert_one_sentence_error(run_cli("analyze", str(path)), str(path), "'tid'", "TrueIntegerDiv", "RequantShift")


def dory_adder_net() -> onnx.ModelProto:
    """QuantLab's DORY adder: an Add whose attributes requantize each input (PULP-NN add)."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[1, 1], name="conv1"),
             helper.make_node("Clip", ["c1"], ["a"], min=0.0, max=255.0, name="clip1"),
             helper.make_node("Conv", ["x", "w2"], ["c2"], kernel_shape=[1, 1], name="conv2"),
             helper.make_node("Clip", ["c2"], ["b"], min=0.0, max=255.0, name="clip2"),
             helper.make_node("Add", ["a", "b"], ["y"], in1_mul=245015, in1_add=262144, in1_shift=19,
                              in1_n_levels=256, in1_rq=1, in2_mul=265342, in2_add=262144, in2_shift=19,
                              in2_n_levels=256, in2_rq=1, out_mul=1, out_add=0, out_shift=0, out_n_levels=256,
                              out_rq=0, name="dory_add")]
    rng = np.random.default_rng(3)
    inits = [_const("w1", rng.integers(0, 3, (4, 4, 1, 1))), _const("w2", rng.integers(0, 3, (4, 4, 1, 1)))]
    return _model(nodes, [_vi("x", [1, 4, 5, 5])], [_vi("y", None)], inits, opset=10)


def test_dory_adder_requantizes_each_input(tmp_path):
    path = _save(tmp_path, dory_adder_net())
    g = load_model(path)
    assert "DORY adder" in g.meta["onnx_no_reference"]
    x = np.random.default_rng(4).integers(0, 256, g.tensors[g.inputs[0]].shape)
    vals = run_graph(g, {g.inputs[0]: x}, keep_all=True)
    feeds = onnx_feeds(g, {g.inputs[0]: x})["x"].astype(np.int64)
    w1 = numpy_helper.to_array(dory_adder_net().graph.initializer[0]).astype(np.int64)
    w2 = numpy_helper.to_array(dory_adder_net().graph.initializer[1]).astype(np.int64)
    a = np.clip(np.einsum("nchw,kc->nkhw", feeds, w1[:, :, 0, 0]), 0, 255)
    b = np.clip(np.einsum("nchw,kc->nkhw", feeds, w2[:, :, 0, 0]), 0, 255)
    want = np.clip(np.clip((a * 245015 + 262144) >> 19, 0, 255) + np.clip((b * 265342 + 262144) >> 19, 0, 255), 0, 255)
    np.testing.assert_array_equal(vals[g.outputs[0]], want.transpose(0, 2, 3, 1))


def test_fold_constants_of_shape_arithmetic(tmp_path):
    """Shape → Gather → Unsqueeze → Concat → Reshape on a static tensor folds to a constant
    shape; a graph with nothing to fold is returned as it is."""
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0, name="gather"),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
             helper.make_node("Concat", ["n1", "minus1"], ["shp"], axis=0, name="concat"),
             helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    path = _save(tmp_path, _model(nodes, [_vi("x", [1, 4, 3, 3])], [_vi("y", None)], inits))
    og = read_graph(path.read_bytes(), str(path))
    folded = fold_constants(og)
    assert [n.op_type for n in folded.nodes] == ["Reshape"]
    np.testing.assert_array_equal(folded.consts["shp"], [1, -1])
    assert fold_constants(folded) is folded
    g = load_model(path, {"*": "int8"})
    assert g.tensors[g.outputs[0]].shape == (1, 36)


def test_nodes_out_of_order_are_sorted(tmp_path):
    """Deeploy's Identity/OutputIdentity lists its nodes out of order: the frontend sorts them
    (keeping a sorted graph's order), and a tensor nobody provides is one sentence."""
    nodes = [helper.make_node("Identity", ["s"], ["y"], name="idnt"),
             helper.make_node("Add", ["x", "x"], ["s"], name="add")]
    path = _save(tmp_path, _model(nodes, [_vi("x", [1, 16])], [_vi("y", None)]))
    g = load_model(path, {"*": "int8"})
    assert [n.op for n in g.nodes] == [Op.ADD]
    bad = _save(tmp_path, _model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add")],
                                 [_vi("x", [1, 16])], [_vi("y", None)]), "ghost")
    assert_one_sentence_error(run_cli("analyze", str(bad)), str(bad), "'add'", "'ghost'")


def test_a_result_beyond_int32_is_one_sentence(tmp_path):
    """int32 codes multiplied: the product may leave int32 — refused, naming the node and the
    input dtype option."""
    nodes = [helper.make_node("Mul", ["x", "x"], ["y"], name="square")]
    path = _save(tmp_path, _model(nodes, [_vi("x", [1, 8])], [_vi("y", None)]))
    with pytest.raises(TilewiseError) as e:
        load_model(path, {"*": "int32"})
    assert "'square'" in str(e.value) and "int32" in str(e.value)


def test_one_d_convolution_and_pooling_run_as_2d(tmp_path, c_cache):
    """A 1-D Conv (dilated, padded) and MaxPool on N×C×W: conv2d / max_pool layers on
    [N, 1, W, C], bit-exact with onnxruntime and in C."""
    rng = np.random.default_rng(6)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3], dilations=[2], pads=[2, 2], name="conv"),
             helper.make_node("Clip", ["c"], ["r"], min=-128.0, max=127.0, name="clip"),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[3], strides=[2], name="pool")]
    inits = [_const("w", rng.integers(-1, 2, (6, 4, 3)))]
    path = _save(tmp_path, _model(nodes, [_vi("x", [1, 4, 20])], [_vi("y", None)], inits, opset=10))
    g = _golden_vs_ort(path, {"*": "int8"})
    lg = lower(g)
    assert [layer.op for layer in lg.layers if layer.op not in (Op.RESHAPE, Op.TRANSPOSE)] == [Op.CONV2D, Op.MAX_POOL]
    ns = schedule_network(lg, get_target("gap8"))
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact and r.golden_vs_reference == 0, r.to_json()
