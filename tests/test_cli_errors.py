"""Bad input through the real command line: one clear sentence naming the file/node/op, exit 2,
no traceback, nothing written."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from .conftest import mlperf_path


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilewise.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def assert_one_sentence_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert "Traceback" not in err and "Traceback" not in proc.stdout
    assert len(err.splitlines()) == 1, err
    assert err.startswith("tilewise: error: ")
    for n in needles:
        assert n in err, (n, err)


def test_missing_file(tmp_path):
    p = tmp_path / "nope.tflite"
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "no such file")


def test_truncated_tflite(tmp_path):
    data = mlperf_path("ic_resnet8").read_bytes()
    p = tmp_path / "truncated.tflite"
    p.write_bytes(data[: len(data) // 3])
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p))


@pytest.mark.parametrize("suffix", [".tflite", ".onnx", ".bin"])
def test_random_bytes(tmp_path, suffix):
    p = tmp_path / f"random{suffix}"
    p.write_bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p))


def _onnx_model(nodes, inputs, outputs, inits, path):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)


def test_onnx_op_outside_the_list(tmp_path):
    """A quantized graph containing an op tilewise does not support (Einsum) is named with its node."""
    p = tmp_path / "einsum.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])
    inits = [
        numpy_helper.from_array(np.array(0.1, np.float32), "s"),
        numpy_helper.from_array(np.array(128, np.uint8), "z"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
        helper.make_node("Einsum", ["xd"], ["e"], name="my_einsum", equation="ij->ij"),
        helper.make_node("QuantizeLinear", ["e", "s", "z"], ["y"], name="q_out"),
    ]
    _onnx_model(nodes, [x], [y], inits, p)
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "my_einsum", "Einsum")


def test_onnx_float_only_model(tmp_path):
    """A float Conv with no quantization around it is rejected, naming the node."""
    p = tmp_path / "float_conv.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])
    w = numpy_helper.from_array(np.random.default_rng(0).normal(size=(4, 3, 3, 3)).astype(np.float32), "w")
    _onnx_model([helper.make_node("Conv", ["x", "w"], ["y"], name="float_conv")], [x], [y], [w], p)
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "float_conv")


def test_analyze_writes_nothing_on_error(tmp_path):
    p = tmp_path / "bad.tflite"
    p.write_bytes(b"\x00" * 64)
    before = set(tmp_path.iterdir())
    assert_one_sentence_error(run_cli("analyze", str(p), cwd=tmp_path), str(p))
    assert set(tmp_path.iterdir()) == before


def test_tflite_float_only_op(tmp_path):
    from .tflite_builder import float_conv_model

    p = float_conv_model(tmp_path / "float.tflite")
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "CONV_2D", "conv_out")


def test_tflite_unsupported_op(tmp_path):
    from .tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "int8", scale=0.1, zero_point=0)
    z = b.tensor("tanh_out", (1, 4, 4, 2), "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [x], [z])
    b.output(z)
    p = b.save(tmp_path / "tanh.tflite")
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "TANH", "tanh_out")
