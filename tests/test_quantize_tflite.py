"""`tilewise quantize -o OUT.tflite` (quantize/tflite_out.py): int8 and 16x8 TFLite models that LiteRT
runs and tilewise validates bit-exact.

- the file itself: int16 symmetric activations, int8 per-channel weights, int64 biases at s_x·s_w
  (int32 at int8), the ops and fused activations TFLite uses, NHWC;
- the written model computes what the QDQ plan computes: per-layer SQNR vs float read by LiteRT
  from the file (tensors put back in ONNX layout) within a fraction of a dB of the QDQ model's at
  16 bits (a wrong layout or permutation would give ≈ 0 dB);
- golden (frontend) == LiteRT BUILTIN_REF on every tensor, and the generated C == both
  (`validate_path`) for the digits CNN (stm32h7, and gap9 whose cluster binds the 16x8 kernels) and
  the MLPerf KWS and AD float parents;
- SQNR of 16x8 ≥ SQNR of int8 on the same inputs.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.examples.make_example import example_data, float_model
from tilewise.frontend.tflite import read_flatbuffer
from tilewise.quantize.pipeline import quantize_model, sqnr_json
from tilewise.quantize.tflite_out import tflite_report, write_tflite
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_path

from .tflite_builder import compare_with_litert


def _write(fm, x, bits, path):
    res = quantize_model(fm, x, "minmax", bits=bits)
    out = write_tflite(fm, res.plan, res.qparams, bits)
    path.write_bytes(out.data)
    return res, out


def _small_net() -> onnx.ModelProto:
    """Conv (pad 1) + Clip(0, 6) -> AveragePool 3x3/2 SAME -> Conv 1x1 without bias -> Flatten
    (H·W > 1) -> MatMul -> Softmax: the writer's paths the example network and digits lack."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array((rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32), "c1.w"),
             numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "c1.b"),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
             numpy_helper.from_array((rng.standard_normal((6, 8, 1, 1)) * 0.4).astype(np.float32), "c2.w"),
             numpy_helper.from_array((rng.standard_normal((150, 5)) * 0.2).astype(np.float32), "mm.w")]
    nodes = [helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="c1", kernel_shape=[3, 3], pads=[1] * 4),
             helper.make_node("Clip", ["c1", "lo", "hi"], ["c1.clip"], name="c1.clip"),
             helper.make_node("AveragePool", ["c1.clip"], ["pool"], name="pool", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0),
             helper.make_node("Conv", ["pool", "c2.w"], ["c2"], name="c2", kernel_shape=[1, 1]),
             helper.make_node("Flatten", ["c2"], ["flat"], name="flat", axis=1),
             helper.make_node("MatMul", ["flat", "mm.w"], ["mm"], name="mm"),
             helper.make_node("Softmax", ["mm"], ["prob"], name="softmax", axis=-1)]
    return _model(nodes, ("x", [1, 4, 9, 9]), ("prob", [1, 5]), inits)


def _model(nodes, x: tuple[str, list[int]], y: tuple[str, list[int]], inits=()) -> onnx.ModelProto:
    """A float opset-17 model of `nodes` with one input and one output (name, shape)."""
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n, shape in (x, y)]
    m = helper.make_model(helper.make_graph(nodes, "net", vi[:1], vi[1:], list(inits)),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("net", ["example", "small"])
def test_written_model_matches_the_plan_and_golden_equals_litert(tmp_path, net, bits):
    if net == "example":
        fm, x = float_model(), example_data(24)[0]
    else:
        fm, x = _small_net(), np.random.default_rng(3).uniform(-1, 1, (24, 4, 9, 9)).astype(np.float32)
    path = tmp_path / f"{net}{bits}.tflite"
    res, out = _write(fm, x, bits, path)
    rep = tflite_report(fm, out, str(path), x, res.plan.layer_of)
    qdq = {r["name"]: r["sqnr_db"] for r in sqnr_json(fm, res, x)["layers"]}
    assert len(rep["layers"]) >= 4 and rep["outputs"][0]["sqnr_db"] > 20.0, rep
    for r in rep["layers"]:
        assert r["sqnr_db"] > 20.0, r
        if bits == 16 and r["layer"] not in ("pool", "gap"):   # pools share their input's scale in TFLite
            assert abs(r["sqnr_db"] - qdq[r["name"]]) < 0.5, (r, qdq[r["name"]])
    assert compare_with_litert(path, n=6, all_tensors=True)[0] == 0


def test_file_holds_16x8_types_and_tflite_ops(tmp_path):
    fm, x = float_model(), example_data(16)[0]
    res, out = _write(fm, x, 16, tmp_path / "ex16.tflite")
    m = read_flatbuffer(out.data, "ex16.tflite")
    ops = [op.name for op in m.operators]
    assert ops == ["PAD", "CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D", "ADD", "MAX_POOL_2D", "CONV_2D",
                   "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED"], ops
    t = {tt.name: tt for tt in m.tensors}
    assert t["input"].dtype == "int16" and tuple(t["input"].shape) == (1, 32, 32, 3)
    assert t["input"].zero_point[0] == 0 and t["res2.relu"].zero_point[0] == 0
    w, b = t["dw2/weight"], t["dw2/bias"]
    assert w.dtype == "int8" and tuple(w.shape) == (1, 3, 3, 16) and w.quantized_dimension == 3
    assert len(w.scale) == 16 and np.abs(w.data).max() == 127
    assert b.dtype == "int64"
    s_x = t["conv1.relu"].scale[0]
    assert np.allclose(b.scale, s_x * np.asarray(w.scale), rtol=1e-6)
    fused = {op.name: op.options.get("FusedActivationFunction") for op in m.operators if op.name == "ADD"}
    assert fused == {"ADD": 1}   # res2 -> Relu fused as RELU
    m8 = read_flatbuffer(_write(fm, x, 8, tmp_path / "ex8.tflite")[1].data, "ex8.tflite")
    t8 = {tt.name: tt for tt in m8.tensors}
    assert t8["input"].dtype == "int8" and t8["conv1/bias"].dtype == "int32"
    # 16x8: AVERAGE_POOL_2D does not rescale (the output shares its input's parameters); int8: MEAN
    # with the calibrated parameters of the plan
    assert t["gap"].scale == t["conv3.relu"].scale
    assert [op.name for op in m8.operators][7] == "MEAN" and t8["gap"].scale[0] == pytest.approx(
        _write(fm, x, 8, tmp_path / "again.tflite")[0].qparams["gap"].scale)


def test_writer_refuses_what_tflite_has_no_op_for():
    m = _model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=1)], ("x", [1, 4]), ("y", [1, 8]))
    res = quantize_model(m, np.random.default_rng(0).uniform(-1, 1, (4, 4)).astype(np.float32))
    with pytest.raises(TilewiseError, match="node 'cat' is a Concat; the TFLite writer takes"):
        write_tflite(m, res.plan, res.qparams, 8)


# -- the digits CNN ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(digits_trained):
    data, fm, _ = digits_trained
    return data, fm


def test_digits_16x8_and_int8_tflite_validate_bit_exact_and_16_beats_8(trained, tmp_path, capsys):
    data, fm = trained
    fpath, calib, ev = tmp_path / "digits.onnx", tmp_path / "calib.npy", tmp_path / "eval.npy"
    onnx.save(fm, str(fpath))
    np.save(calib, data.x_train[:200])
    np.save(ev, data.x_eval)
    sq = {}
    for bits in ("8", "16"):
        out = tmp_path / f"digits{bits}.tflite"
        assert main(["quantize", str(fpath), "--calib", str(calib), "--eval", str(ev), "--target", "stm32h7",
                     "--bits", bits, "-o", str(out), "--json"]) == 0
        r = json.loads(capsys.readouterr().out)
        assert (r["format"], r["requant"]) == ("tflite", "tflite")
        assert [x["layer"] for x in r["evaluation_sqnr"]["layers"]] == ["conv0", "conv1", "flatten", "fc"]
        sq[bits] = r["evaluation_sqnr"]["outputs"][0]["sqnr_db"]
        targets = ("stm32h7", "gap9") if bits == "16" else ("stm32h7",)
        for t in targets:
            rep = validate_path(out, get_target(t), n_random=4)
            assert rep.bit_exact and rep.golden_vs_reference == 0, (bits, t)
    assert sq["8"] > 30.0 and sq["16"] >= sq["8"], sq


def test_cli_refuses_formats_that_do_not_hold_the_width(trained, tmp_path, capsys):
    data, fm = trained
    fpath, calib = tmp_path / "digits.onnx", tmp_path / "calib.npy"
    onnx.save(fm, str(fpath))
    np.save(calib, data.x_train[:20])
    base = [str(fpath), "--calib", str(calib), "--target", "stm32h7"]
    cases = [(["--bits", "16", "-o", str(tmp_path / "o.onnx")], "name the output *.tflite"),
             (["--bits", "4", "-o", str(tmp_path / "o.tflite")], "the TFLite writer takes --bits 8"),
             (["--acc-bits", "16", "-o", str(tmp_path / "o.tflite")], "name the output *.onnx"),
             (["-o", str(tmp_path / "o.tfl")], "name it *.onnx or *.tflite")]
    for extra, msg in cases:
        assert main(["quantize"] + base + extra) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and err.count("\n") == 1, err
    assert not list(tmp_path.glob("o.*"))


# -- MLPerf float parents ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ad_autoencoder", "kws_dscnn"])
def test_mlperf_parent_16x8_validates_and_beats_int8(tmp_path, capsys, name):
    """The 16x8 TFLite model of an MLPerf float parent: bit-exact on stm32h7 (and gap9 for KWS, whose
    depthwise / average pool / softmax layers go to the cluster's 16x8 kernels), SQNR ≥ int8's on the
    same realistic inputs (mlperf_inputs.py)."""
    from bench import mlperf_inputs
    from tests.test_quantize import _float_tflite

    fpath = _float_tflite(name)
    calib_raw, eval_raw = mlperf_inputs.split(name)
    calib, ev = tmp_path / "calib.npy", tmp_path / "eval.npy"
    np.save(calib, calib_raw)
    np.save(ev, eval_raw[:100])
    sq = {}
    for bits in ("8", "16"):
        out = tmp_path / f"{name}{bits}.tflite"
        assert main(["quantize", str(fpath), "--calib", str(calib), "--eval", str(ev), "--target", "stm32h7",
                     "--bits", bits, "-o", str(out), "--json"]) == 0
        sq[bits] = json.loads(capsys.readouterr().out)["evaluation_sqnr"]["outputs"][0]["sqnr_db"]
        # (int8 TFLite models validate in the digits test; the MLPerf ones in bench/quantize_mlperf.py:
        # an int8 host build takes ~30 s)
        targets = {("16", "kws_dscnn"): ("stm32h7", "gap9"), ("16", "ad_autoencoder"): ("stm32h7",)}.get(
            (bits, name), ())
        for t in targets:
            rep = validate_path(out, get_target(t), n_random=2)
            assert rep.bit_exact and rep.golden_vs_reference == 0, (bits, t)
    assert sq["16"] >= sq["8"] > 15.0, sq
