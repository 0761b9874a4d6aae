"""`tilewise quantize` (issue 15, first part): observers, weight quantization, the QDQ writer, SQNR.

The digits CNN is trained once per test process (conftest.py `digits_trained`; numpy, seeded); the
other model is the bundled example's float network (examples/make_example.py), which has the
Add / MaxPool / GlobalAveragePool / depthwise layers the digits CNN lacks.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.examples.make_example import example_data, float_model
from tilewise.quantize.calibrate import Observer, QParams, Range, qparams_for
from tilewise.quantize.graph_out import SOFTMAX_QPARAMS, plan
from tilewise.quantize.pipeline import calibration_inputs, quantize_model, sqnr_json
from tilewise.quantize.sqnr import run_all, session, sqnr
from tilewise.quantize.weights import quantize_bias, quantize_weights
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_path


# -- observers ------------------------------------------------------------------------------------
def test_minmax_observer_and_qparams_on_hand_values():
    obs = Observer("minmax")
    obs.update(np.array([-1.0, 0.5]))
    obs.update(np.array([[2.0, 0.0]]))
    assert obs.range() == Range(-1.0, 2.0)
    qp = obs.qparams()
    assert qp.scale == pytest.approx(3.0 / 255.0, rel=1e-6)
    assert qp.zero_point == -43          # round(-128 + 1 / (3/255)) = round(-43.0)
    assert qp.quantize(np.array([-1.0, 0.0, 2.0])).tolist() == [-128, -43, 127]


def test_qparams_include_zero_and_handle_constant_tensors():
    relu = qparams_for(Range(0.0, 2.55))
    assert relu.zero_point == -128 and relu.scale == pytest.approx(0.01, rel=1e-6)
    pos = qparams_for(Range(1.0, 2.55))   # widened to [0, 2.55]: 0 stays exact
    assert pos == relu
    assert qparams_for(Range(0.0, 0.0)) == QParams(1.0, 0)


def test_percentile_observer_clips_the_tails():
    obs = Observer("percentile", percentile=99.0)
    obs.update(np.arange(101, dtype=np.float32))
    r = obs.range()
    assert r.lo == pytest.approx(1.0) and r.hi == pytest.approx(99.0)


def test_mse_observer_shrinks_a_range_an_outlier_stretched():
    x = np.random.default_rng(0).standard_normal(20000).astype(np.float32)
    x[0] = 100.0
    # at 4 bits the minmax step (≈ 7) rounds almost every value to 0; clipping the outlier wins
    mm, ms = Observer("minmax", bits=4), Observer("mse", bits=4)
    for o in (mm, ms):
        o.update(x)
    assert mm.range().hi == 100.0
    assert ms.range().hi < 50.0
    err = {n: np.mean((o.qparams().dequantize(o.qparams().quantize(x)) - x) ** 2) for n, o in (("mm", mm), ("ms", ms))}
    assert err["ms"] < 0.6 * err["mm"], err
    # at 8 bits one outlier in 20,000 costs more clipped than the step it widens: the search keeps most of it
    m8 = Observer("mse")
    m8.update(x)
    assert m8.range().hi > 90.0


def test_observer_rejects_bad_method_and_nan():
    with pytest.raises(ValueError):
        Observer("kl")
    with pytest.raises(ValueError):
        Observer().update(np.array([np.nan]))


# -- weights --------------------------------------------------------------------------------------
def test_per_channel_weight_scales():
    w = np.zeros((3, 2, 1, 1))
    w[0] = [[[0.5]], [[-1.27]]]
    w[1] = [[[0.01]], [[0.04]]]
    qw = quantize_weights(w, axis=0)
    assert qw.scale.tolist() == pytest.approx([1.27 / 127, 0.04 / 127, 1.0])
    assert qw.q[0].reshape(-1).tolist() == [50, -127]
    assert qw.q[1].reshape(-1).tolist() == [32, 127]      # 0.01 / (0.04/127) = 31.75
    assert qw.q[2].reshape(-1).tolist() == [0, 0]         # a zero channel: codes 0, scale 1
    qt = quantize_weights(w.reshape(3, 2).T, axis=1)      # Gemm without transB: per column
    assert qt.scale.tolist() == pytest.approx(qw.scale.tolist())
    assert np.array_equal(qt.q, qw.q.reshape(3, 2).T)


def test_bias_is_int32_at_input_times_weight_scale():
    q, s = quantize_bias(np.array([1.0, -0.5, 1e9]), 0.5, np.array([0.01, 0.1, 1e-6], dtype=np.float32))
    assert q.dtype == np.int32
    assert s.tolist() == pytest.approx([0.005, 0.05, 5e-7])
    assert q.tolist() == [200, -10, 2**31 - 1]            # saturated, not wrapped


# -- the digits CNN -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(digits_trained):
    return digits_trained


@pytest.fixture(scope="module")
def quantized(trained):
    data, fm, _ = trained
    return quantize_model(fm, data.x_train[:200], "minmax")


def _acc(model, x, y) -> float:
    out = run_all(session(model), "input", x, ["logits"])["logits"]
    return float(np.mean(np.concatenate(out).argmax(axis=1) == y))


def test_digits_float_cnn_trains(trained):
    data, fm, net = trained
    assert net.accuracy(data.x_eval, data.y_eval) > 0.93
    assert _acc(fm, data.x_eval, data.y_eval) == pytest.approx(net.accuracy(data.x_eval, data.y_eval), abs=0.003)


def test_int8_digits_within_one_point_of_float_and_sqnr_bound(trained, quantized):
    data, fm, _ = trained
    f, q = _acc(fm, data.x_eval, data.y_eval), _acc(quantized.model, data.x_eval, data.y_eval)
    assert q >= f - 0.01, (f, q)
    rep = sqnr_json(fm, quantized, data.x_eval)
    # int8 activations: ~6 dB per bit less the range the data does not fill; 30 dB = 5 bits
    assert rep["outputs"][0]["sqnr_db"] > 30.0, rep
    assert [x["layer"] for x in rep["layers"]] == ["conv0", "conv1", "flatten", "fc"]
    assert all(x["sqnr_db"] > 30.0 for x in rep["layers"]), rep


def test_written_model_is_qdq_with_per_channel_weights(quantized):
    m = quantized.model
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("QuantizeLinear") == 5                # input, conv0.relu, conv1.relu, flat, logits
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    assert inits["conv0/weight/q"].dtype == np.int8 and inits["conv0/weight/scale"].shape == (8,)
    assert inits["conv0/bias/q"].dtype == np.int32
    assert np.abs(inits["fc/weight/q"]).max() == 127
    # the bias scale is the input's times the weight's
    s_in = quantized.qparams["conv0.relu"].scale
    assert inits["conv1/bias/scale"] == pytest.approx(s_in * inits["conv1/weight/scale"], rel=1e-6)
    # Flatten reuses its input's parameters (no requantization in the integer graph)
    assert quantized.qparams["flat"] == quantized.qparams["conv1.relu"]


def test_digits_int8_validates_bit_exact(tmp_path, quantized):
    path = tmp_path / "digits_int8.onnx"
    onnx.save(quantized.model, str(path))
    rep = validate_path(path, get_target("stm32h7"), n_random=8)
    assert rep.bit_exact and rep.golden_vs_reference == 0


def test_bits16_writes_int16_activations_int8_weights_and_beats_int8(trained, quantized, tmp_path, capsys):
    """--bits 16 (TFLite's 16x8 scheme): int16 symmetric activations, int8 per-channel weights,
    int32 biases, softmax-free here; onnxruntime runs it and its output SQNR beats the int8 model's.
    tilewise's ONNX frontend refuses int16 QDQ activations (no integer reference: graph_out.py)."""
    data, fm, _ = trained
    res = quantize_model(fm, data.x_train[:200], "minmax", bits=16)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in res.model.graph.initializer}
    assert inits["input/zero_point"].dtype == np.int16 and inits["conv0.relu/zero_point"] == 0
    assert inits["conv0/weight/q"].dtype == np.int8 and np.abs(inits["conv0/weight/q"]).max() == 127
    assert inits["conv0/bias/q"].dtype == np.int32
    q = res.qparams["conv0.relu"]
    assert (q.qmin, q.qmax, q.zero_point) == (-32768, 32767, 0)
    assert q.scale == pytest.approx(max(abs(q.dequantize(q.qmin)), q.dequantize(q.qmax)) / 32767, rel=1e-4)
    s8 = sqnr_json(fm, quantized, data.x_eval)["outputs"][0]["sqnr_db"]
    s16 = sqnr_json(fm, res, data.x_eval)["outputs"][0]["sqnr_db"]
    assert s16 > s8 + 2.0, (s8, s16)
    assert _acc(res.model, data.x_eval, data.y_eval) >= _acc(fm, data.x_eval, data.y_eval) - 0.005
    path = tmp_path / "digits_16x8.onnx"
    onnx.save(res.model, str(path))
    assert main(["validate", str(path), "--target", "stm32h7"]) == 2
    err = capsys.readouterr().err
    assert "int16" in err and "Traceback" not in err


def test_int16_qparams_are_symmetric():
    q = qparams_for(Range(-0.5, 2.0), bits=16)
    assert (q.zero_point, q.qmin, q.qmax) == (0, -32768, 32767)
    assert q.scale == pytest.approx(2.0 / 32767)
    assert qparams_for(Range(0.0, 0.0), bits=16).scale == 1.0


@pytest.mark.parametrize("method,target", [("minmax", "gap9"), ("mse", "pulp-open"), ("percentile", "stm32h7")])
def test_example_network_quantizes_and_validates(tmp_path, method, target):
    """Add, MaxPool, depthwise, GlobalAveragePool and Gemm: read by onnxruntime and tilewise, bit-exact."""
    x, _, _ = example_data(16)
    fm = float_model()
    res = quantize_model(fm, x, method)
    rep = sqnr_json(fm, res, x)
    assert rep["outputs"][0]["sqnr_db"] > 25.0, rep
    path = tmp_path / "ex.onnx"
    onnx.save(res.model, str(path))
    v = validate_path(path, get_target(target), n_random=4)
    assert v.bit_exact


def test_softmax_gets_fixed_parameters():
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    res = quantize_model(m, np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32))
    assert plan(m).fixed == {"y": SOFTMAX_QPARAMS}
    assert res.qparams["y"] == SOFTMAX_QPARAMS


def test_sqnr_definition():
    f = np.array([3.0, 4.0])
    assert sqnr("t", f, f).db is None
    assert sqnr("t", f, f + np.array([0.3, 0.4])).db == pytest.approx(20.0)   # noise 1/10 of the amplitude


def test_calibration_inputs_shape_errors(trained):
    _, fm, _ = trained
    assert calibration_inputs(fm, np.zeros((5, 1, 1, 8, 8)), "d").shape == (5, 1, 8, 8)
    with pytest.raises(TilewiseError, match="does not fit the input 'input'"):
        calibration_inputs(fm, np.zeros((5, 8, 8, 1)), "d.npy")


# -- command line ---------------------------------------------------------------------------------
def test_cli_json_and_compare(tmp_path, trained, quantized, capsys):
    data, fm, _ = trained
    fpath, cpath, ipath = tmp_path / "f.onnx", tmp_path / "calib.npy", tmp_path / "int.onnx"
    onnx.save(fm, str(fpath))
    onnx.save(quantized.model, str(ipath))
    np.save(cpath, data.x_train[:50])
    out = tmp_path / "q.onnx"
    rc = main(["quantize", str(fpath), "--calib", str(cpath), "--target", "stm32h7", "--calibration", "mse",
               "-o", str(out), "--compare", str(ipath), "--json"])
    assert rc == 0
    r = json.loads(capsys.readouterr().out)
    assert out.is_file() and r["calibration"] == "mse" and r["calibration_inputs"] == 50
    assert r["calibration_sqnr"]["outputs"][0]["sqnr_db"] > 30.0
    assert r["calibration_sqnr"]["compare"]["outputs"][0]["sqnr_db"] > 30.0
    assert len(r["calibration_sqnr"]["layers"]) == 4
    # the compared model (our QDQ writer: same tensor names) layer by layer: every layer matched
    cmp = r["calibration_sqnr"]["compare"]
    assert not cmp["unmatched"] and len(cmp["layers"]) == 4
    for ours, theirs in zip(r["calibration_sqnr"]["layers"], cmp["layers"]):
        assert ours["name"] == theirs["name"] and theirs["sqnr_db"] > 20.0


def test_sqnr_session_runs_int8_qdq_as_the_reference_does(trained, quantized):
    """quantize's onnxruntime sessions compute what validate's reference computes, on every x86
    CPU: without "session.qdqisint8allowed" onnxruntime requantizes int8 QDQ groups to u8s8,
    whose AVX2 kernels (no VNNI) saturate — the digits model measured 17 dB there instead of 40,
    and --calibration auto, --bits mixed and --compare took their decisions on it."""
    from tilewise.frontend.onnx_io import reference_session

    data, _, _ = trained
    x = data.x_eval[:40]
    plain = np.concatenate(run_all(session(quantized.model), "input", x, ["logits"])["logits"])
    ref = reference_session(quantized.model.SerializeToString())
    want = np.concatenate([ref.run(["logits"], {"input": v[None].astype(np.float32)})[0] for v in x])
    assert np.array_equal(plain, want)
    # an intermediate output asked for alongside changes nothing
    first = quantized.model.graph.node[0].output[0]    # the input's QuantizeLinear: int8
    sess = session(quantized.model, (first,), {first: onnx.TensorProto.INT8})
    both = run_all(sess, "input", x, ["logits"])["logits"]
    assert np.array_equal(np.concatenate(both), want)


def test_cli_calibration_auto_keeps_the_best_method_on_the_calibration_inputs(tmp_path, trained, capsys):
    data, fm, _ = trained
    fpath, cpath, out = tmp_path / "f.onnx", tmp_path / "calib.npy", tmp_path / "q.onnx"
    onnx.save(fm, str(fpath))
    np.save(cpath, data.x_train[:60])
    assert main(["quantize", str(fpath), "--calib", str(cpath), "--target", "stm32h7", "--calibration", "auto",
                 "-o", str(out), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    scores = r["auto_calibration_sqnr"]
    assert set(scores) == {"minmax", "percentile", "mse"}
    assert scores[r["calibration"]] == max(scores.values())
    # the written model is the chosen method's: its calibration SQNR is the one auto measured
    assert r["calibration_sqnr"]["outputs"][0]["sqnr_db"] == pytest.approx(scores[r["calibration"]], abs=1e-3)


def test_cli_bad_inputs_exit_2(tmp_path, trained, quantized, capsys):
    data, fm, _ = trained
    fpath, qpath, cpath = tmp_path / "f.onnx", tmp_path / "q.onnx", tmp_path / "calib.npy"
    onnx.save(fm, str(fpath))
    onnx.save(quantized.model, str(qpath))
    np.save(cpath, data.x_train[:4])
    # an integer model whose one output is another tensor (the dequantized input: 64 values)
    other = tmp_path / "other.onnx"
    m = onnx.ModelProto()
    m.CopyFrom(quantized.model)
    dq = next(n for n in m.graph.node if n.op_type == "DequantizeLinear").output[0]
    del m.graph.output[:]
    m.graph.output.append(onnx.helper.make_tensor_value_info(dq, onnx.TensorProto.FLOAT, None))
    onnx.save(m, str(other))
    base = ["--calib", str(cpath), "--target", "stm32h7", "-o", str(tmp_path / "o.onnx")]
    cases = [([str(qpath)] + base, "already quantized"),
             (["model.tflite"] + base, "no such model file"),
             ([str(fpath), "--calib", str(tmp_path / "x.txt"), "--target", "stm32h7", "-o", str(tmp_path / "o.onnx")],
              "no such file"),
             ([str(fpath)] + base[:4] + ["-o", str(tmp_path / "o.bin")], "name it *.onnx"),
             ([str(fpath)] + base + ["--bits", "4", "--weight-budget", "0.5"], "is for --bits mixed"),
             ([str(fpath)] + base + ["--bits", "mixed", "--calibration", "auto"], "--calibration auto is for"),
             ([str(fpath)] + base + ["--compare", str(fpath)], "is a float model"),
             ([str(fpath)] + base + ["--compare", str(other)], "values per input")]
    for argv, msg in cases:
        assert main(["quantize"] + argv) == 2, argv
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and err.count("\n") == 1, err
    assert not (tmp_path / "o.onnx").exists()


# -- float TFLite in (tflite_in.py) -----------------------------------------------------------------
def _float_tflite(name: str):
    from tests.conftest import absent, models_dir

    path = models_dir() / "mlperf_tiny_float" / f"{name}_float.tflite"
    if not path.exists():
        absent(f"MLPerf Tiny float model not found at {path} (set TILEWISE_MODELS)")
    return path


@pytest.mark.parametrize("name", ["ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025"])
def test_float_tflite_converts_to_the_same_float_network(name):
    from ai_edge_litert.interpreter import Interpreter

    from tilewise.quantize.tflite_in import nhwc_to_model, tflite_to_onnx

    path = _float_tflite(name)
    m = tflite_to_onnx(path)
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    di, do = it.get_input_details()[0], it.get_output_details()[0]
    x = np.random.default_rng(3).uniform(-1, 1, (3,) + tuple(di["shape"][1:])).astype(np.float32)
    ref = []
    for xi in x:
        it.set_tensor(di["index"], xi[None])
        it.invoke()
        ref.append(it.get_tensor(do["index"]).copy())
    out = run_all(session(m), m.graph.input[0].name, nhwc_to_model(x), [m.graph.output[0].name])
    # kws's file holds int8 weights that LiteRT runs with hybrid kernels (activations quantized on
    # the fly): the ONNX float network with the dequantized weights is ≈ 60 dB from it, the others ≥ 100 dB
    assert sqnr(name, ref, out[m.graph.output[0].name]).db > (50.0 if name == "kws_dscnn" else 100.0)


def test_float_tflite_quantizes_validates_and_compares(tmp_path, capsys):
    """KWS float parent -> int8 QDQ: bit-exact on the host, SQNR vs float beside the official int8's."""
    path = _float_tflite("kws_dscnn")
    from tests.conftest import mlperf_path

    official = mlperf_path("kws_dscnn")
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(0).uniform(-1, 1, (20, 49, 10, 1)).astype(np.float32))
    out = tmp_path / "kws_int8.onnx"
    assert main(["quantize", str(path), "--calib", str(calib), "--target", "stm32h7", "-o", str(out),
                 "--compare", str(official), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    s = r["calibration_sqnr"]
    assert s["outputs"][0]["sqnr_db"] > 30.0 and s["compare"]["outputs"][0]["sqnr_db"] is not None
    assert len(s["layers"]) == 13
    assert validate_path(out, get_target("stm32h7"), n_random=2).bit_exact


def test_dead_channel_bias_raises_the_weight_scale_instead_of_saturating():
    w = np.zeros((2, 4))
    w[0] = [1e-9, 0, 0, 0]     # dead channel with a live bias
    w[1] = [0.5, -0.25, 0.1, 0]
    b = np.array([0.7, 0.1])
    qw = quantize_weights(w, axis=0, bias=b, input_scale=0.01)
    q, s = quantize_bias(b, 0.01, qw.scale)
    assert abs(int(q[0])) <= 2**30 and q[0] * np.float64(s[0]) == pytest.approx(0.7, rel=1e-6)
    assert qw.scale[1] == pytest.approx(0.5 / 127)     # a normal channel keeps max|w| / 127
    assert quantize_weights(w, axis=0).scale[0] == pytest.approx(1e-9 / 127)   # without the bias


def test_float_autoencoder_quantizes_and_validates(tmp_path):
    """ad_autoencoder: channels whose weights are ≈ 0 with a live bias (bias_safe_scale) still lower
    (bias + zero-point correction within int32) and validate bit-exact."""
    from tilewise.quantize.pipeline import load_float_onnx
    from tilewise.quantize.tflite_in import nhwc_to_model

    m = load_float_onnx(_float_tflite("ad_autoencoder"))
    x = nhwc_to_model(np.random.default_rng(1).uniform(-1, 1, (10, 640)).astype(np.float32))
    res = quantize_model(m, x)
    assert sqnr_json(m, res, x)["outputs"][0]["sqnr_db"] > 20.0
    out = tmp_path / "ad.onnx"
    onnx.save(res.model, str(out))
    assert validate_path(out, get_target("stm32h7"), n_random=2).bit_exact
