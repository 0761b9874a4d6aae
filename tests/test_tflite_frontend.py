"""The TFLite frontend: what the IR looks like after import, schema quirks, and bad input.

Bad input must raise one clear sentence (ModelFormatError / UnsupportedOpError) naming the file, the
operator (index, op and output tensor) and what to do — never a raw exception.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tilewise.errors import ModelFormatError, UnsupportedOpError
from tilewise.frontend import load_model
from tilewise.frontend.tflite import read_flatbuffer, read_tflite
from tilewise.ir.ops import Op
from tilewise.ir.requant import quantize_multiplier

from .conftest import mlperf_path
from .tflite_builder import (
    ACT,
    VALID,
    ModelBuilder,
    compare_with_litert,
    float_conv_model,
    litert_interpreter,
)


def _one_sentence(msg: str) -> None:
    assert "\n" not in msg and "Traceback" not in msg
    assert len(msg) < 600


# --- the MLPerf models in IR form ----------------------------------------------------------------

def test_mlperf_import_keeps_tflite_names_and_op_counts() -> None:
    expected = {
        "ic_resnet8": {Op.CONV2D: 9, Op.ADD: 3, Op.AVG_POOL: 1, Op.RESHAPE: 1, Op.FULLY_CONNECTED: 1, Op.SOFTMAX: 1},
        "kws_dscnn": {Op.CONV2D: 9, Op.AVG_POOL: 1, Op.RESHAPE: 1, Op.FULLY_CONNECTED: 1, Op.SOFTMAX: 1},
        "vww_mobilenet_v1_025": {Op.CONV2D: 27, Op.AVG_POOL: 1, Op.RESHAPE: 1, Op.FULLY_CONNECTED: 1,
                                 Op.SOFTMAX: 1},
        "ad_autoencoder": {Op.FULLY_CONNECTED: 10},
    }
    for name, counts in expected.items():
        path = mlperf_path(name)
        graph = load_model(path)
        got: dict[str, int] = {}
        for n in graph.nodes:
            got[n.op] = got.get(n.op, 0) + 1
            if n.op != Op.RESHAPE:
                assert n.params.mode == "tflite", n.name
        assert got == counts, name
        model = read_flatbuffer(path.read_bytes(), str(path))
        index = graph.meta["tflite_tensor_index"]
        for ir_name, i in index.items():
            assert model.tensors[i].name == ir_name
        assert graph.inputs == (model.tensors[model.inputs[0]].name,)


def test_depthwise_becomes_grouped_conv_with_ohwi_weights() -> None:
    path = mlperf_path("kws_dscnn")
    graph = load_model(path)
    model = read_flatbuffer(path.read_bytes(), str(path))
    dw = [n for n in graph.nodes if n.op == Op.CONV2D and n.params.groups > 1]
    assert len(dw) == 4
    for n in dw:
        w = graph.tensors[n.inputs[1]]
        x = graph.tensors[n.inputs[0]]
        assert n.params.groups == x.shape[3]
        assert w.shape[3] == 1 and w.shape[0] == x.shape[3]
        assert w.quant is not None and w.quant.axis == 0 and len(w.quant.scale) == w.shape[0]
        src = model.tensors[graph.meta["tflite_tensor_index"][n.inputs[1]]]
        assert src.shape[0] == 1 and src.quantized_dimension == 3
        assert np.array_equal(w.data[:, :, :, 0], src.data[0].transpose(2, 0, 1))


def test_same_padding_and_requant_parameters() -> None:
    path = mlperf_path("kws_dscnn")
    graph = load_model(path)
    first = graph.nodes[0]  # 10x4 filter, stride 2, SAME on 49x10
    assert first.params.stride == (2, 2)
    assert first.params.pads == (4, 1, 5, 1)
    x, w, y = (graph.tensors[i] for i in first.inputs[:2] + first.outputs)
    rq = first.params.requant
    for k in (0, 17, 63):
        m, s = quantize_multiplier(float(x.quant.scale[0]) * float(w.quant.scale[k]) / float(y.quant.scale[0]))
        assert (int(rq.multiplier[k]), int(rq.shift[k])) == (m, s)
    assert (rq.qmin, rq.qmax) == (-128, 127)  # fused RELU with zero point -128


@pytest.mark.parametrize("act,expect", [("RELU6", (-3, -3 + round(6 / 0.05))), ("RELU_N1_TO_1", (-23, 17)),
                                        ("RELU", (-3, 127)), ("NONE", (-128, 127))])
def test_fused_activations_fold_into_qmin_qmax(tmp_path, act: str, expect: tuple[int, int]) -> None:
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "int8", scale=0.02, zero_point=0)
    w = b.const("w", np.ones((3, 1, 1, 2), dtype=np.int8), "int8", scale=[0.01] * 3, zero_point=0)
    bias = b.const("b", np.zeros(3, dtype=np.int32), "int32", scale=[2e-4] * 3, zero_point=0)
    y = b.tensor("y", (1, 4, 4, 3), "int8", scale=0.05, zero_point=-3)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=VALID, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT[act], DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    graph = load_model(b.save(tmp_path / "m.tflite"))
    rq = graph.nodes[0].params.requant
    assert (rq.qmin, rq.qmax) == expect


# --- schema quirks ---------------------------------------------------------------------------------

def _fc_model(old_schema: bool = False, empty_buffer_zero: bool = True, bias: bool = True) -> ModelBuilder:
    rng = np.random.RandomState(0)
    b = ModelBuilder(old_schema=old_schema, empty_buffer_zero=empty_buffer_zero)
    x = b.input("in", (2, 12), "int8", scale=0.03, zero_point=5)
    w = b.const("w", rng.randint(-127, 128, size=(4, 12)), "int8", scale=[0.01, 0.02, 0.015, 0.03],
                zero_point=0)
    inputs = [x, w]
    if bias:
        inputs.append(b.const("b", rng.randint(-500, 500, size=4), "int32", scale=[3e-4] * 4, zero_point=0))
    else:
        inputs.append(-1)
    y = b.tensor("out", (2, 4), "int8", scale=0.07, zero_point=-1)
    b.op("FULLY_CONNECTED", inputs, [y], "FullyConnectedOptions", FusedActivationFunction=0)
    b.output(y)
    return b


def test_old_schema_and_missing_buffers_and_optional_bias(tmp_path) -> None:
    variants = {
        "old": _fc_model(old_schema=True),
        "no_sentinel_buffer": _fc_model(empty_buffer_zero=False),
        "no_bias": _fc_model(bias=False),
    }
    for key, builder in variants.items():
        path = builder.save(tmp_path / f"{key}.tflite")
        graph = load_model(path)
        node = graph.nodes[0]
        assert node.op == Op.FULLY_CONNECTED
        assert graph.tensors[node.inputs[1]].quant.axis == 0
        if key == "no_bias":
            assert node.inputs[2] == ""
        bad, total = compare_with_litert(path, n=20)
        assert bad == 0 and total > 0, key


def test_operator_code_above_127_uses_builtin_code(tmp_path) -> None:
    b = ModelBuilder()
    x = b.input("x", (1, 8), "int8", scale=0.1, zero_point=0)
    y = b.tensor("gelu_out", (1, 8), "int8", scale=0.1, zero_point=0)
    b.op("GELU", [x], [y], "GeluOptions", Approximate=False)
    b.output(y)
    path = b.save(tmp_path / "gelu.tflite")
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    msg = str(e.value)
    assert "GELU" in msg and "operator 0" in msg and "gelu_out" in msg and str(path) in msg
    _one_sentence(msg)


# --- bad input -------------------------------------------------------------------------------------

def test_truncated_model_is_a_format_error(tmp_path) -> None:
    data = mlperf_path("kws_dscnn").read_bytes()
    for cut in (8, 64, 1000, len(data) // 3, len(data) // 2, len(data) - 9000):
        p = tmp_path / f"cut{cut}.tflite"
        p.write_bytes(data[:cut])
        with pytest.raises(ModelFormatError) as e:
            load_model(p)
        assert str(p) in str(e.value)
        _one_sentence(str(e.value))


def test_random_bytes_are_a_format_error(tmp_path) -> None:
    rng = np.random.RandomState(0)
    junk = rng.randint(0, 256, size=5000).astype(np.uint8).tobytes()
    for name, data in (("junk.tflite", junk), ("tfl3.tflite", junk[:4] + b"TFL3" + junk[8:]),
                       ("short.tflite", b"\x00\x01")):
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(ModelFormatError) as e:
            load_model(p)
        assert str(p) in str(e.value)
        _one_sentence(str(e.value))


def _corrupt(data: bytes, rng: np.random.RandomState) -> tuple[bytes, str]:
    """`data` (a TFLite model) with one structural field overwritten by an out-of-range value the
    reader must refuse, chosen at random: an operator's operator code, an operator's input or
    output tensor, a tensor's buffer, a subgraph output, the root offset or a vector's length.
    The field is located through the schema package (its table's vtable), so every variant is
    invalid by construction. Returns the bytes and what was corrupted."""
    from tflite.Model import Model

    m = Model.GetRootAsModel(data, 0)
    sg = m.Subgraphs(0)
    n_codes, n_buffers, n_tensors = m.OperatorCodesLength(), m.BuffersLength(), sg.TensorsLength()
    bad = bytearray(data)
    kind = ["opcode", "op_input", "op_output", "tensor_buffer", "sg_output", "root", "vector_length"][
        rng.randint(7)]
    excess = int(rng.randint(0, 1 << 20))

    def put(pos: int, value: int) -> None:
        bad[pos:pos + 4] = struct.pack("<I", value & 0xFFFFFFFF)

    def field_pos(table, slot: int) -> int | None:
        o = table._tab.Offset(slot)
        return table._tab.Pos + o if o else None

    def vector_item(table, slot: int, j: int) -> int:
        return table._tab.Vector(table._tab.Offset(slot)) + 4 * j

    if kind == "opcode":   # only operators that store the field (a default 0 is omitted)
        ops = [sg.Operators(i) for i in range(sg.OperatorsLength())]
        op = [o for o in ops if field_pos(o, 4) is not None][rng.randint(len(ops)) % 5]
        put(field_pos(op, 4), n_codes + excess)
    elif kind in ("op_input", "op_output"):
        op = sg.Operators(rng.randint(sg.OperatorsLength()))
        slot, n = (6, op.InputsLength()) if kind == "op_input" else (8, op.OutputsLength())
        put(vector_item(op, slot, rng.randint(n)), n_tensors + excess)
    elif kind == "tensor_buffer":
        t = sg.Tensors(rng.randint(1, 6))   # tensors 1..5 store their buffer index
        put(field_pos(t, 8), n_buffers + excess)
    elif kind == "sg_output":
        put(vector_item(sg, 8, 0), n_tensors + excess)
    elif kind == "root":
        put(0, len(data) + excess)
    else:   # the operators vector claims more entries than the file holds
        ops_vec = sg._tab.Vector(sg._tab.Offset(10))
        put(ops_vec - 4, (1 << 30) + excess)
    assert bytes(bad) != data
    return bytes(bad), f"{kind} +{excess}"


def test_corrupted_bytes_are_each_rejected_with_exit_2(tmp_path, capsys) -> None:
    """25 corrupted variants of ic_resnet8, each invalid by construction (`_corrupt`): every one
    must be refused by the reader and by `tilewise analyze` with exit code 2 and one sentence naming
    the file; the count of refusals must equal the count of variants (nothing passes by not
    raising)."""
    from tilewise.cli import main as cli_main

    data = mlperf_path("ic_resnet8").read_bytes()
    rng = np.random.RandomState(1)
    rejected, kinds = [], set()
    for k in range(25):
        bad, what = _corrupt(data, rng)
        kinds.add(what.split()[0])
        with pytest.raises(ModelFormatError) as e:
            read_tflite(bad, f"corrupt{k}.tflite")
        _one_sentence(str(e.value))
        p = tmp_path / f"corrupt{k}.tflite"
        p.write_bytes(bad)
        assert cli_main(["analyze", str(p), "--target", "gap8"]) == 2, what
        err = capsys.readouterr().err.strip()
        assert str(p) in err and "corrupt" in err, (what, err)
        _one_sentence(err)
        rejected.append(k)
    assert len(rejected) == 25
    assert len(kinds) >= 5, kinds   # the random choice covers most kinds of corruption


def test_float_model_is_rejected_with_operator_name(tmp_path) -> None:
    path = float_conv_model(tmp_path / "float.tflite")
    litert_interpreter(path)  # a valid model for LiteRT
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    msg = str(e.value)
    assert "operator 0 (CONV_2D, output 'conv_out')" in msg and "int8" in msg and str(path) in msg
    _one_sentence(msg)


def test_unsupported_op_names_index_op_and_output(tmp_path) -> None:
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "int8", scale=0.1, zero_point=0)
    y = b.tensor("relu_out", (1, 4, 4, 2), "int8", scale=0.1, zero_point=0)
    z = b.tensor("tanh_out", (1, 4, 4, 2), "int8", scale=1 / 128, zero_point=0)
    b.op("RELU", [x], [y])
    b.op("TANH", [y], [z])
    b.output(z)
    path = b.save(tmp_path / "unsupported.tflite")
    litert_interpreter(path)
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    msg = str(e.value)
    assert "operator 0 (RELU, output 'relu_out')" in msg and "not supported" in msg
    _one_sentence(msg)


def test_int8_concat_with_differing_scales_is_rejected_like_litert(tmp_path) -> None:
    b = ModelBuilder()
    x = b.input("x", (1, 2, 2, 3), "int8", scale=0.1, zero_point=0)
    y = b.input("y", (1, 2, 2, 3), "int8", scale=0.2, zero_point=0)
    z = b.tensor("cat", (1, 2, 2, 6), "int8", scale=0.2, zero_point=0)
    b.op("CONCATENATION", [x, y], [z], "ConcatenationOptions", Axis=3, FusedActivationFunction=0)
    b.output(z)
    path = b.save(tmp_path / "cat.tflite")
    with pytest.raises(RuntimeError):
        litert_interpreter(path)  # LiteRT's int8 kernel refuses to rescale
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    assert "operator 0 (CONCATENATION, output 'cat')" in str(e.value) and "QUANTIZE" in str(e.value)
