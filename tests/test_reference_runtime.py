"""validate's reference runner (validate/reference.py): a file whose quantization metadata LiteRT
refuses although its meaning is clear runs on a repaired copy and validate says so in one line;
every refusal or failure of LiteRT or onnxruntime is one sentence with exit 2 (never exit 3)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest

from tilewise.frontend import load_model
from tilewise.frontend.tflite_repair import repair_for_litert
from tilewise.validate.reference import LITERT, ReferenceError, reference_run, runtime_message

from .test_cli_errors import assert_one_sentence_error
from .tflite_builder import SAME, ModelBuilder, litert_interpreter

EXAMPLE_ONNX = "tilewise/examples/example_cnn.onnx"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilewise.cli", *args], capture_output=True,
                          text=True, timeout=300)


def conv_model(bias_qdim: int = 0, out_qdim: int = 0, version: int = 1) -> ModelBuilder:
    """A 1x1 CONV_2D; `bias_qdim` / `out_qdim`: the quantized_dimension written on the per-tensor
    bias and output (out of range for LiteRT when >= their rank)."""
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "int8", scale=0.05, zero_point=-3)
    w = b.const("w", rng.integers(-127, 128, (3, 1, 1, 2)), "int8", scale=0.02)
    bias = b.const("b", rng.integers(-300, 300, 3), "int32", scale=0.001, quantized_dimension=bias_qdim)
    y = b.tensor("y", (1, 4, 4, 3), "int8", scale=0.1, zero_point=2, quantized_dimension=out_qdim)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=0, DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    b.op_versions["CONV_2D"] = version
    return b


def test_repair_resets_only_out_of_range_per_tensor_dimensions(tmp_path):
    bad = conv_model(bias_qdim=3, out_qdim=5).save(tmp_path / "bad.tflite")
    with pytest.raises(ValueError, match="quantized_dimension"):
        litert_interpreter(bad)
    data, notes = repair_for_litert(bad.read_bytes())
    assert len(notes) == 1 and "'b' (dimension 3 of a 1-D tensor)" in notes[0] and "'y'" in notes[0]
    assert len(data) == bad.stat().st_size
    fixed = tmp_path / "fixed.tflite"
    fixed.write_bytes(data)
    litert_interpreter(fixed)   # accepted now
    # the repaired file reads as the same graph, and a clean file is left alone
    from tilewise.golden import run_graph

    a, b = load_model(bad), load_model(fixed)
    x = np.random.default_rng(0).integers(-128, 128, (1, 4, 4, 2)).astype(np.int8)
    assert np.array_equal(run_graph(a, [x])["y"], run_graph(b, [x])["y"])
    good = conv_model().save(tmp_path / "good.tflite").read_bytes()
    assert repair_for_litert(good) == (good, ())


def test_reference_on_a_repaired_copy_matches_the_golden_model(tmp_path):
    from tilewise.golden import run_graph

    path = conv_model(bias_qdim=3, out_qdim=5).save(tmp_path / "bad.tflite")
    g = load_model(path)
    xs = [np.random.default_rng(i).integers(-128, 128, (1, 4, 4, 2)).astype(np.int8) for i in range(3)]
    ref = reference_run(g, path, xs)
    assert ref.notes and ref.notes[0].startswith(f"{LITERT} ran on a repaired copy")
    for x, r in zip(xs, ref.outputs):
        assert np.array_equal(np.asarray(run_graph(g, [x])[g.outputs[0]]), r)


def test_cli_validate_says_the_reference_ran_on_a_repaired_copy(tmp_path):
    path = conv_model(bias_qdim=3, out_qdim=5).save(tmp_path / "bad.tflite")
    proc = run_cli("validate", str(path), "--target", "gap8", "--inputs", "2")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stdout.splitlines() if "repaired copy" in ln]
    assert len(lines) == 1 and "quantized_dimension reset to 0" in lines[0], proc.stdout
    assert "BIT-EXACT" in proc.stdout


def test_litert_refusing_an_op_version_is_one_sentence_exit_2(tmp_path):
    path = conv_model(version=99).save(tmp_path / "v99.tflite")
    load_model(path)   # tilewise reads it
    proc = run_cli("validate", str(path), "--target", "gap8", "--inputs", "1")
    assert_one_sentence_error(proc, str(path), LITERT, "loading", "version")


def test_litert_refusing_a_corrupt_per_channel_bias_is_exit_2(tmp_path):
    """Fewer scales than the 1-D tensor's elements along its axis 0: no clear meaning, not repaired.
    The tensor is a bias whose scales tilewise does not use, so it is LiteRT that refuses. (With
    one scale per element, a 1-D tensor's out-of-range dimension is repaired: test_tflite_repair.py.)"""
    b = conv_model()
    b.tensors[2].scale, b.tensors[2].zero_point = (0.001, 0.001), (0, 0)
    path = b.save(tmp_path / "perchannel.tflite")
    load_model(path)
    assert repair_for_litert(path.read_bytes())[1] == ()
    proc = run_cli("validate", str(path), "--target", "gap8", "--inputs", "1")
    assert_one_sentence_error(proc, str(path), LITERT, "num_scales must be 1 for per-layer quantization")


def test_onnxruntime_refusing_the_model_is_one_sentence_exit_2(tmp_path):
    m = onnx.load(EXAMPLE_ONNX)
    m.ir_version = 99
    path = tmp_path / "ir99.onnx"
    onnx.save(m, path)
    load_model(path)   # tilewise reads it
    proc = run_cli("validate", str(path), "--target", "gap8", "--inputs", "1")
    assert_one_sentence_error(proc, str(path), "onnxruntime", "Unsupported model IR version: 99")
    assert "onnxruntime_src" not in proc.stderr


def test_onnxruntime_failing_while_running_is_a_reference_error(tmp_path, monkeypatch):
    """A failure of session.run (not only of loading) is the same one-sentence error."""
    import onnxruntime as ort

    g = load_model(EXAMPLE_ONNX)

    def broken(self, *a, **k):
        raise ort.capi.onnxruntime_pybind11_state.RuntimeException(
            "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running "
            "Conv node. Name:'c1' Status Message: /onnxruntime_src/onnxruntime/core/x.cc:12 "
            "void f(int, int) kernel failed")

    monkeypatch.setattr(ort.InferenceSession, "run", broken)
    x = np.zeros(g.tensors[g.inputs[0]].shape, np.int8)
    with pytest.raises(ReferenceError, match="failed while running the model .*kernel failed"):
        reference_run(g, EXAMPLE_ONNX, [x])


def test_runtime_message_is_one_line_without_source_locations():
    e = RuntimeError("[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:/onnxruntime_src/a/b.cc:256 "
                     "ns::F::F(x&&, const y&) Unsupported model IR version: 99\n")
    assert runtime_message(e) == "Load model from m.onnx failed: Unsupported model IR version: 99"
    assert runtime_message(ValueError("a.\nb.")) == "a. b."
