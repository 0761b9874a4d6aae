"""Sub-byte (4/2-bit) tensors: the packed layout, QDQ ONNX with int4/uint4/int2/uint2 types, the
frontend's dtypes and clamps, the portable sub-byte kernels bit-exact against the golden model on
stm32h7 with 8/4/2 mixes per layer, legality, and `quantize --bits mixed` on the digits CNN
(docs/subbyte.md "Sub-byte tensors (design)"; tilewise/quantize/mixed.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto

from tilewise.bindings.portable import subbyte
from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.examples.make_example import example_data, float_model
from tilewise.frontend import load_model
from tilewise.golden.run import run_graph
from tilewise.ir.packing import pack, unpack
from tilewise.ir.tensor import bits_to_bytes, dtype_bits, dtype_range
from tilewise.quantize.mixed import budget_bytes, quantize_mixed
from tilewise.quantize.pipeline import Widths, calibration_values, quantize_values
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_path


# -- layout ---------------------------------------------------------------------------------------
def test_packing_is_little_endian_within_a_byte():
    assert pack(np.array([1, 2, 3]), 4) == bytes([0x21, 0x03])
    assert pack(np.array([1, 2, 3, 0, 1]), 2) == bytes([0b00111001, 0x01])
    assert pack(np.array([-1, 7, -8]), 4) == bytes([0x7F, 0x08])          # two's complement nibbles
    assert pack(np.array([-1, 1, 0, -2]), 2) == bytes([0b10000111])
    rng = np.random.default_rng(0)
    for bits, signed in ((4, True), (4, False), (2, True), (2, False), (8, True)):
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        v = rng.integers(lo, hi + 1, size=37)
        data = pack(v, bits)
        assert len(data) == bits_to_bytes(37, bits)
        assert np.array_equal(unpack(data, 37, bits, signed), v)


def test_sub_byte_dtypes():
    assert [dtype_bits(d) for d in ("int4", "uint4", "int2", "uint2", "int8")] == [4, 4, 2, 2, 8]
    assert dtype_range("uint4") == (0, 15) and dtype_range("int4") == (-8, 7)
    assert dtype_range("uint2") == (0, 3) and dtype_range("int2") == (-2, 1)


# -- models ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def digits_float(digits_trained):
    data, fm, _ = digits_trained
    return data, fm


@pytest.fixture(scope="module")
def digits_values(digits_float):
    data, fm = digits_float
    return calibration_values(fm, data.x_train[:200])


def _widths(w: dict[str, int], a: dict[str, int]) -> Widths:
    return Widths(tuple(w.items()), tuple(a.items()))


def test_qdq_model_carries_sub_byte_types_and_the_frontend_reads_them(tmp_path, digits_float, digits_values):
    data, fm = digits_float
    p, values = digits_values
    res = quantize_values(fm, p, values, widths=_widths({"conv0": 4, "conv1": 2, "fc": 8},
                                                       {"conv0.relu": 4, "conv1.relu": 2}))
    inits = {t.name: t for t in res.model.graph.initializer}
    assert inits["conv0/weight/q"].data_type == TensorProto.INT4
    assert inits["conv1/weight/q"].data_type == TensorProto.INT2
    assert inits["fc/weight/q"].data_type == TensorProto.INT8
    assert inits["conv0.relu/zero_point"].data_type == TensorProto.UINT4
    assert inits["conv1.relu/zero_point"].data_type == TensorProto.UINT2
    w2 = onnx.numpy_helper.to_array(inits["conv1/weight/q"]).astype(np.int64)
    assert w2.min() >= -1 and w2.max() <= 1                      # symmetric: ±(2^(b-1) - 1)
    path = tmp_path / "digits_sb.onnx"
    onnx.save(res.model, str(path))
    g = load_model(path)
    dtypes = {t.dtype for t in g.tensors.values()}
    assert {"int4", "int2", "uint4", "uint2"} <= dtypes
    # the golden model clamps each activation to its own range
    out = run_graph(g, [np.zeros(g.tensors[g.inputs[0]].shape, np.int8)], keep_all=True)
    for name, t in g.tensors.items():
        if t.dtype in ("uint4", "uint2") and not t.is_const:
            lo, hi = dtype_range(t.dtype)
            assert out[name].min() >= lo and out[name].max() <= hi


# the per-layer mixes validated bit-exact (C == golden) on stm32h7: weights and activations of
# every width next to each other, conv, dense, and depthwise / pointwise (the example network)
MIXES = [
    ("digits", {"conv0": 4, "conv1": 2, "fc": 4}, {"conv0.relu": 4, "conv1.relu": 2}),
    ("digits", {"conv0": 2, "conv1": 8, "fc": 2}, {"conv0.relu": 2, "conv1.relu": 4}),
    ("digits", {"conv0": 8, "conv1": 4, "fc": 2}, {}),
    ("example", {"conv1": 4, "dw2": 2, "pw2": 4, "conv3": 2, "fc": 4}, {"dw2.relu": 4}),
    ("example", {"dw2": 4, "pw2": 2}, {"dw2.relu": 2}),
]


@pytest.mark.parametrize("net,w,a", MIXES)
def test_sub_byte_mix_validates_bit_exact_on_stm32h7(tmp_path, digits_float, net, w, a):
    if net == "digits":
        data, fm = digits_float
        calib = data.x_train[:100]
    else:
        fm, calib = float_model(), example_data(1)[0][:64]
    p, values = calibration_values(fm, calib)
    res = quantize_values(fm, p, values, widths=_widths(w, a))
    path = tmp_path / f"{net}.onnx"
    onnx.save(res.model, str(path))
    rep = validate_path(path, get_target("stm32h7"), n_random=6)
    assert rep.bit_exact


def test_a_layer_without_a_sub_byte_kernel_is_refused_in_one_sentence(tmp_path, capsys):
    fm, calib = float_model(), example_data(1)[0][:32]
    p, values = calibration_values(fm, calib)
    # conv1.relu feeds the residual add, which has no 4-bit kernel
    res = quantize_values(fm, p, values, widths=_widths({}, {"conv1.relu": 4}))
    path = tmp_path / "example_u4_add.onnx"
    onnx.save(res.model, str(path))
    assert main(["analyze", str(path), "--target", "stm32h7"]) == 2
    err = capsys.readouterr().err
    assert "res2" in err and "\n" not in err.strip()


def test_sub_byte_check_refuses_weights_beyond_their_bits(tmp_path, digits_float, digits_values):
    from dataclasses import replace

    from tilewise.passes import canonicalize, lower

    data, fm = digits_float
    p, values = digits_values
    res = quantize_values(fm, p, values, widths=_widths({"conv1": 4}, {}))
    path = tmp_path / "d4.onnx"
    onnx.save(res.model, str(path))
    lg = lower(canonicalize(load_model(path)))
    conv1 = next(layer for layer in lg.layers if layer.name == "conv1")
    assert conv1.nest.w_bits == 4 and subbyte.check(conv1, lg) is None
    wide = replace(conv1, weights=np.where(conv1.weights == 7, 9, conv1.weights).astype(np.int8))
    assert "declared 4-bit" in subbyte.check(wide, lg)


def test_mixed_digits_acceptance(tmp_path, digits_float, digits_values):
    """≥ 40 % fewer weight bytes than int8, within 1 point of int8 accuracy (the golden model's
    integer arithmetic on the 400 held-out images), bit-exact C == golden on stm32h7."""
    data, fm = digits_float
    p, values = digits_values
    calib = data.x_train[:200]
    int8 = quantize_values(fm, p, values)
    res, a = quantize_mixed(fm, p, values, calib, "0.45")
    bits = dict(a.bits)
    assert set(bits.values()) == {8, 4, 2}, bits                 # a mixed 8/4/2 assignment
    assert a.weight_bytes() <= 0.6 * a.int8_bytes(), a.to_json()
    # the model's weight initializers hold exactly those bits
    inits = {t.name: t.data_type for t in res.model.graph.initializer}
    types = {8: TensorProto.INT8, 4: TensorProto.INT4, 2: TensorProto.INT2}
    assert all(inits[f"{k}/weight/q"] == types[b] for k, b in bits.items())

    def golden_accuracy(model) -> float:
        path = tmp_path / "m.onnx"
        onnx.save(model, str(path))
        g = load_model(path)
        inp = g.tensors[g.inputs[0]]
        q = inp.quant
        x = np.clip(np.rint(data.x_eval.transpose(0, 2, 3, 1) / q.scale[0]) + q.zp, -128, 127).astype(np.int8)
        logits = np.stack([run_graph(g, [xi[None]])[g.outputs[0]].reshape(-1) for xi in x])
        return float(np.mean(logits.argmax(axis=1) == data.y_eval))

    acc8, accm = golden_accuracy(int8.model), golden_accuracy(res.model)
    assert accm >= acc8 - 0.01, (acc8, accm, bits)
    path = tmp_path / "digits_mixed.onnx"
    onnx.save(res.model, str(path))
    rep = validate_path(path, get_target("stm32h7"), n_random=8)
    assert rep.bit_exact


def test_budget_and_bits_options(tmp_path, capsys):
    assert budget_bytes("0.5", 1000) == 500 and budget_bytes("700", 1000) == 700
    with pytest.raises(TilewiseError):
        budget_bytes("abc", 1000)
    fm, calib = float_model(), example_data(1)[0][:16]
    m, c = tmp_path / "f.onnx", tmp_path / "c.npy"
    onnx.save(fm, str(m))
    np.save(c, calib)
    base = ["quantize", str(m), "--calib", str(c), "--target", "stm32h7"]
    assert main(base + ["--bits", "mixed", "--weight-budget", "10", "-o", str(tmp_path / "a.onnx")]) == 2
    assert "below" in capsys.readouterr().err
    assert main(base + ["--bits", "4", "--weight-budget", "0.5", "-o", str(tmp_path / "b.onnx")]) == 2
    assert "--bits mixed" in capsys.readouterr().err
    assert main(base + ["--bits", "mixed", "--weight-budget", "0.5", "-o", str(tmp_path / "c.onnx"), "--json"]) == 0
    out = capsys.readouterr().out
    import json

    r = json.loads(out)
    assert r["mixed"]["weight_bytes"] <= r["mixed"]["budget"] <= 0.5 * r["mixed"]["int8_weight_bytes"]


def _pool_net() -> onnx.ModelProto:
    """conv → relu → maxpool → conv → relu → flatten → gemm, seeded float weights (NCHW)."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(4)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32) * 0.4, n) for n, s in
             (("w0", (8, 3, 3, 3)), ("b0", (8,)), ("w1", (8, 8, 3, 3)), ("b1", (8,)), ("wf", (5, 72)),
              ("bf", (5,)))]
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
             helper.make_node("MaxPool", ["r0"], ["p0"], name="pool0", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p0", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Flatten", ["r1"], ["f"], name="flatten", axis=1),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "pool_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


@pytest.mark.parametrize("bits", [4, 2])
def test_uniform_bits_through_maxpool_and_flatten_validate_bit_exact(tmp_path, bits):
    from tilewise.quantize.pipeline import quantize_model, uniform_widths

    fm = _pool_net()
    w = uniform_widths(fm, bits)
    assert dict(w.acts) == {"r0": bits, "r1": bits} and set(dict(w.weights).values()) == {bits}
    calib = np.random.default_rng(1).uniform(-1, 1, (64, 3, 6, 6)).astype(np.float32)
    res = quantize_model(fm, calib, bits=bits)
    path = tmp_path / f"pool_{bits}.onnx"
    onnx.save(res.model, str(path))
    g = load_model(path)
    assert {t.dtype for t in g.tensors.values() if not t.is_const} >= {f"uint{bits}"}
    rep = validate_path(path, get_target("stm32h7"), n_random=6)
    assert rep.bit_exact


def _io4_model(path) -> None:
    """A hand-written QDQ conv whose network input and output are uint4 (packed at the C API)."""
    from onnx import helper

    rng = np.random.default_rng(0)
    w = rng.integers(-7, 8, (4, 3, 3, 3))
    nodes = [helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["y"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"])]
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.1]),
             helper.make_tensor("xz", TensorProto.UINT4, [], [3]),
             helper.make_tensor("w", TensorProto.INT4, [4, 3, 3, 3], w.reshape(-1).tolist()),
             helper.make_tensor("ws", TensorProto.FLOAT, [4], [0.05, 0.1, 0.07, 0.02]),
             helper.make_tensor("wz", TensorProto.INT4, [4], [0] * 4),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [0.3]),
             helper.make_tensor("yz", TensorProto.UINT4, [], [7])]
    g = helper.make_graph(nodes, "io4", [helper.make_tensor_value_info("xq", TensorProto.UINT4, [1, 3, 5, 5])],
                          [helper.make_tensor_value_info("yq", TensorProto.UINT4, [1, 4, 5, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, str(path))


def test_packed_network_input_and_output(tmp_path):
    path = tmp_path / "io4.onnx"
    _io4_model(path)
    rep = validate_path(path, get_target("stm32h7"), n_random=6)
    assert rep.bit_exact and rep.golden_vs_reference is None
    assert any("golden model only" in n for n in rep.reference_notes)
    out = tmp_path / "proj"
    assert main(["generate", str(path), "--target", "stm32h7", "-o", str(out)]) == 0
    header = (out / "network.h").read_text()
    # 75 uint4 inputs in 38 bytes, 100 outputs in 50 (⌈n·4/8⌉), handed over as bytes
    assert "TW_INPUT_BYTES 38" in header and "TW_OUTPUT_BYTES 50" in header
    assert "TW_INPUT_TYPE uint8_t" in header
