"""The ONNX frontend: what the IR looks like after import (NHWC layout, weights, requant modes, layout
meta), the three model styles, and bad input (unsupported op, float-only or partly float model,
corrupt protobuf) giving one-sentence errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

try:
    from .onnx_models import NETS, Net, dense_net, expose_intermediates, nemo_net, quantize
except ImportError:  # run as a plain module
    from onnx_models import NETS, Net, dense_net, expose_intermediates, nemo_net, quantize
from tilewise.errors import ModelFormatError, UnsupportedOpError
from tilewise.frontend import load_model
from tilewise.frontend.onnx_io import ir_outputs, onnx_feeds, random_inputs
from tilewise.ir.ops import Op
from tilewise.ir.params import OnnxAddParams


def _inits(path) -> dict[str, np.ndarray]:
    m = onnx.load(str(path))
    return {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}


def test_layout_meta_and_conv_weights(tmp_path):
    q = quantize(NETS["convs"](), tmp_path / "convs.onnx", "QOperator", True, "int8")
    g = load_model(q)
    assert g.meta["format"] == "onnx" and g.meta["source_layout"] == "NCHW" and g.meta["onnx_style"] == "qoperator"
    (inp,) = g.meta["onnx_inputs"]
    assert inp["onnx"] == "x" and tuple(inp["to_ir_perm"]) == (0, 2, 3, 1) and inp["onnx_shape"] == (1, 3, 11, 13)
    assert inp["onnx_dtype"] == "float32" and inp["scale"] > 0 and g.tensors[inp["ir"]].shape == (1, 11, 13, 3)
    (out,) = g.meta["onnx_outputs"]
    assert tuple(out["to_ir_perm"]) == (0, 2, 3, 1) and g.tensors[out["ir"]].shape[3] == out["onnx_shape"][1]
    # conv weights are OHWI, per-channel scales on axis 0, requant in onnx mode with one scale per channel
    onnx_qconv = next(n for n in onnx.load(str(q)).graph.node if n.op_type == "QLinearConv")
    w_onnx = _inits(q)[onnx_qconv.input[3]]
    conv = next(n for n in g.nodes if n.op == Op.CONV2D)
    w = g.tensors[conv.inputs[1]]
    np.testing.assert_array_equal(w.data, w_onnx.transpose(0, 2, 3, 1))
    assert w.quant.axis == 0 and len(w.quant.scale) == w_onnx.shape[0]
    assert conv.params.mode == "onnx" and conv.params.requant.mode == "onnx"
    assert conv.params.requant.scale.shape == (w_onnx.shape[0],)
    # the second conv has asymmetric pads (top, left, bottom, right) = (0, 1, 1, 0)
    assert [n.params.pads for n in g.nodes if n.op == Op.CONV2D][1] == (0, 1, 1, 0)
    # onnx_io: IR integers -> float NCHW feeds that quantize back to the same integers
    x = random_inputs(g, np.random.default_rng(0))
    feed = onnx_feeds(g, x)["x"]
    assert feed.dtype == np.float32 and feed.shape == (1, 3, 11, 13)
    back = np.rint(feed / np.float32(inp["scale"])).astype(np.int64) + inp["zero_point"]
    np.testing.assert_array_equal(back.transpose(0, 2, 3, 1), x[inp["ir"]])
    deq = np.float32(out["scale"]) * (np.arange(-128, 128, dtype=np.float32) - out["zero_point"])
    y = ir_outputs(g, {out["onnx"]: np.resize(deq, out["onnx_shape"]).astype(np.float32)})[out["ir"]]
    assert y.dtype == np.int8 and y.shape == g.tensors[out["ir"]].shape


def test_depthwise_and_residual_add(tmp_path):
    q = quantize(NETS["residual"](), tmp_path / "res.onnx", "QDQ", False, "uint8")
    g = load_model(q)
    assert g.meta["onnx_style"] == "qdq"
    dw = [n for n in g.nodes if n.op == Op.CONV2D and n.params.groups > 1]
    assert len(dw) == 2
    for n in dw:
        k, fy, fx, cg = g.tensors[n.inputs[1]].shape
        assert (fy, fx, cg) == (3, 3, 1) and n.params.groups == k == g.tensors[n.inputs[0]].shape[3]
    (add,) = [n for n in g.nodes if n.op == Op.ADD]
    assert isinstance(add.params, OnnxAddParams)
    assert g.tensors[add.outputs[0]].dtype == "uint8"


def test_flatten_into_gemm_permutes_weights_instead_of_transposing(tmp_path):
    q = quantize(dense_net(), tmp_path / "dense.onnx", "QOperator", False, "int8")
    g = load_model(q)
    assert Op.TRANSPOSE not in [n.op for n in g.nodes]
    fc = next(n for n in g.nodes if n.op == Op.FULLY_CONNECTED)
    qgemm = next(n for n in onnx.load(str(q)).graph.node if n.op_type == "QGemm")
    w = _inits(q)[qgemm.input[3]]  # [K, C*H*W] in CHW column order (transB=1)
    c, h, wd = 4, 3, 3
    np.testing.assert_array_equal(g.tensors[fc.inputs[1]].data,
                                  w.reshape(-1, c, h, wd).transpose(0, 2, 3, 1).reshape(w.shape[0], -1))
    # when the flattened tensor is also an output, the IR transposes to NCHW order instead
    g2 = load_model(expose_intermediates(q, tmp_path / "dense_all.onnx"))
    assert Op.TRANSPOSE in [n.op for n in g2.nodes]
    fc2 = next(n for n in g2.nodes if n.op == Op.FULLY_CONNECTED)
    np.testing.assert_array_equal(g2.tensors[fc2.inputs[1]].data, w)


def test_nemo_style_lowering(tmp_path):
    path = tmp_path / "nemo.onnx"
    onnx.save(nemo_net(), str(path))
    g = load_model(path)
    assert g.meta["onnx_style"] == "nemo"
    assert g.tensors[g.inputs[0]].dtype == "uint8" and g.tensors[g.inputs[0]].shape == (1, 15, 5, 3)
    conv1 = g.nodes[0]
    assert conv1.params.pads == (1, 1, 1, 0)  # the Pad node folded in
    rq = conv1.params.requant
    assert rq.mode == "shift" and rq.shift.tolist() == [14] * 8 and (rq.qmin, rq.qmax) == (0, 255)
    init = _inits(path)
    assert rq.multiplier.tolist() == init["k1"].reshape(-1).astype(int).tolist()
    assert rq.bias.tolist() == init["l1"].reshape(-1).astype(int).tolist()
    fc = next(n for n in g.nodes if n.op == Op.FULLY_CONNECTED)
    assert g.tensors[fc.outputs[0]].dtype == "int8" and fc.params.requant.shift.tolist() == [9] * 5


def test_uint8_weights_become_int8(tmp_path):
    """QOperator with uint8 weights (zero point ~128): the IR stores int8 weights, results unchanged."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    n = Net("u8w", (1, 2, 5, 5), seed=9)
    m = n.model([n.conv("x", 3, (3, 3), (1, 1), (1, 1, 1, 1))])
    src = tmp_path / "f.onnx"
    onnx.save(m, str(src))

    rng = np.random.default_rng(0)

    class R(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": rng.standard_normal((1, 2, 5, 5)).astype(np.float32)} for _ in range(3)])

        def get_next(self):
            return next(self.it, None)

    q = tmp_path / "q.onnx"
    quantize_static(str(src), str(q), R(), quant_format=QuantFormat.QOperator, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QUInt8)
    qconv = next(n for n in onnx.load(str(q)).graph.node if n.op_type == "QLinearConv")
    w_onnx = _inits(q)[qconv.input[3]]
    assert w_onnx.dtype == np.uint8
    g = load_model(q)
    conv = next(n for n in g.nodes if n.op == Op.CONV2D)
    w = g.tensors[conv.inputs[1]]
    assert w.dtype == "int8" and w.data.dtype == np.int8
    np.testing.assert_array_equal(w.data.astype(np.int16) + 128, w_onnx.transpose(0, 2, 3, 1))
    try:
        from .test_golden_onnx import assert_bit_exact
    except ImportError:
        from test_golden_onnx import assert_bit_exact
    assert_bit_exact(q)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

def _one_sentence(exc: Exception, *parts: str) -> None:
    msg = str(exc)
    assert "\n" not in msg and "Traceback" not in msg
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"


def _qdq_with(op: str, path, domain: str = "") -> None:
    consts = {"s": np.float32(0.05), "z": np.int8(0)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"], name="dq_in"),
        helper.make_node(op, ["xf"], ["yf"], name="the_bad_node", domain=domain),
        helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["yq"], name="q_out"),
        helper.make_node("DequantizeLinear", ["yq", "s", "z"], ["y"], name="dq_out"),
    ]
    graph = helper.make_graph(nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    onnx.save(m, str(path))


def test_unsupported_op_is_named(tmp_path):
    path = tmp_path / "sin.onnx"
    _qdq_with("Sin", path)
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    _one_sentence(e.value, str(path), "'the_bad_node'", "(Sin)")


def test_unsupported_qoperator_op_is_named(tmp_path):
    consts = {"s": np.float32(0.05), "z": np.int8(0)}
    node = helper.make_node("QLinearLeakyRelu", ["x", "s", "z", "s", "z"], ["y"], name="leaky", domain="com.microsoft",
                            alpha=0.1)
    graph = helper.make_graph([node], "leaky", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 4])],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "leaky.onnx"
    onnx.save(m, str(path))
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    _one_sentence(e.value, str(path), "'leaky'", "QLinearLeakyRelu", "supported ONNX operators")


def test_float_only_model_is_rejected(tmp_path):
    path = tmp_path / "float.onnx"
    onnx.save(NETS["convs"](), str(path))
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    _one_sentence(e.value, str(path), "(Conv)", "float", "quantize")


def test_float_computation_left_in_a_qdq_model(tmp_path):
    """quantize_static with one Conv excluded leaves a float Conv between DQ and Q nodes."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    src = tmp_path / "f.onnx"
    m = NETS["convs"]()
    onnx.save(m, str(src))
    excluded = [n.name for n in m.graph.node if n.op_type == "Conv"][1]
    rng = np.random.default_rng(0)

    class R(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": rng.standard_normal((1, 3, 11, 13)).astype(np.float32)} for _ in range(2)])

        def get_next(self):
            return next(self.it, None)

    q = tmp_path / "partial.onnx"
    quantize_static(str(src), str(q), R(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, nodes_to_exclude=[excluded])
    with pytest.raises(UnsupportedOpError) as e:
        load_model(q)
    _one_sentence(e.value, str(q), f"'{excluded}'", "(Conv)", "float")


@pytest.mark.parametrize("content", [b"\x08\x07\x12\xff\xff\xff\xff\x0fgarbage" * 3, b"\x08" + bytes(range(256)),
                                     "truncated"])
def test_corrupt_protobuf_is_a_format_error(content, tmp_path):
    path = tmp_path / "bad.onnx"
    if content == "truncated":
        good = quantize(NETS["pools"](), tmp_path / "good.onnx", "QOperator", False, "int8").read_bytes()
        content = good[: len(good) // 2]
    path.write_bytes(content)
    with pytest.raises(ModelFormatError) as e:
        load_model(path)
    _one_sentence(e.value, str(path))


def test_data_movement_ops_keep_onnx_element_order(tmp_path):
    """Transpose, MaxPool, Reshape to 3-D and back to 4-D, Concat on H, Flatten(axis=2) on int8 tensors:
    the IR inserts the right transposes so that every result equals onnxruntime's."""
    shape_const = lambda name, v: numpy_helper.from_array(np.asarray(v, dtype=np.int64), name)  # noqa: E731
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 3, 1, 2]),
        helper.make_node("MaxPool", ["t"], ["m"], name="pool", kernel_shape=[2, 2], strides=[1, 1], pads=[0, 1, 1, 0]),
        helper.make_node("Reshape", ["m", "s3"], ["r"], name="to3d"),
        helper.make_node("Reshape", ["r", "s4"], ["r4"], name="to4d"),
        helper.make_node("Concat", ["r4", "t2"], ["c"], name="concat", axis=2),
        helper.make_node("Transpose", ["x"], ["t2"], name="transpose2", perm=[0, 2, 1, 3]),
        helper.make_node("Flatten", ["c"], ["f"], name="flatten", axis=2),
        helper.make_node("Identity", ["f"], ["out"], name="identity"),
    ]
    # topological order: t2 before concat
    nodes = [nodes[0], nodes[1], nodes[2], nodes[3], nodes[5], nodes[4], nodes[6], nodes[7]]
    graph = helper.make_graph(
        nodes, "moves", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 4, 5, 6])],
        [onnx.ValueInfoProto(name=n) for n in ("t", "m", "r", "r4", "c", "out")],
        [shape_const("s3", [1, 6, 20]), shape_const("s4", [1, 5, 4, 6])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    path = tmp_path / "moves.onnx"
    onnx.save(m, str(path))
    g = load_model(path)
    assert g.meta["onnx_style"] == "qoperator" and g.meta["onnx_inputs"][0]["onnx_dtype"] == "int8"
    try:
        from .test_golden_onnx import assert_bit_exact
    except ImportError:
        from test_golden_onnx import assert_bit_exact
    compared = assert_bit_exact(path, runs=3)
    assert len(compared) == 6
