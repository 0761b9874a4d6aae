"""`tilewise quantize --target gap9|gap8|pulp-open|diana`: the shift-mode integer model
(tilewise/quantize/shift_out.py) — read by tilewise's frontend as shift-mode layers that NE16's
norm-quant takes, run by onnxruntime, bit-exact on gap9 (NE16 requantizing), pulp-open and diana;
the digits CNN within one point of float; the AD autoencoder's float parent as close to float as
the onnx-mode model; the writer's refusals as one sentence, exit 2."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.quantize.pipeline import quantize_model, quantize_shift, sqnr_json
from tilewise.quantize.shift_out import (
    D_MAX,
    FLOAT32_EXACT,
    INT32,
    Act,
    choose_shift,
    layer_codes,
    run_dequantized,
    shift_report,
)

from .test_ne16 import _ne16_forced


@pytest.fixture(scope="module")
def trained(digits_trained):
    data, fm, _ = digits_trained
    return data, fm


@pytest.fixture(scope="module")
def shifted(trained):
    data, fm = trained
    return quantize_shift(fm, data.x_train[:200])


def _labels(ns, n):
    return [ns.placement(i).binding.label for i in range(n)]


def _read(path):
    from tilewise.frontend import load_model
    from tilewise.passes import lower

    graph = load_model(path)
    return graph, lower(graph)


def _check_shift_layers(lg):
    """Every weighted layer in shift mode, one shift, and NE16's norm-quant exact for it."""
    from tilewise.bindings.ne16 import normquant
    from tilewise.ir.ops import Op

    weighted = [x for x in lg.layers if x.op in (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED)]
    assert weighted
    for layer in weighted:
        assert layer.requant.mode == "shift", (layer.name, layer.requant.mode)
        assert normquant.reason(layer, lg) is None, (layer.name, normquant.reason(layer, lg))
    return weighted


def test_digits_shift_accuracy_and_sqnr_vs_onnx_mode(trained, shifted):
    """Digits accuracy of the shift model within 1 point of float; its output SQNR within 3 dB of
    the onnx-mode model's (the cost of integer multipliers and codes: measured 38.8 vs 40.7 dB)."""
    data, fm = trained
    f = run_dequantized(shifted, data.x_eval)["logits"]
    acc = float(np.mean(np.concatenate(f).argmax(axis=1) == data.y_eval))
    from tilewise.quantize.sqnr import run_all, session

    ref = np.concatenate(run_all(session(fm), "input", data.x_eval, ["logits"])["logits"])
    acc_float = float(np.mean(ref.argmax(axis=1) == data.y_eval))
    assert acc >= acc_float - 0.01, (acc, acc_float)
    rep = shift_report(fm, shifted, data.x_eval)
    onnx_mode = sqnr_json(fm, quantize_model(fm, data.x_train[:200]), data.x_eval)
    db, db_onnx = rep["outputs"][0]["sqnr_db"], onnx_mode["outputs"][0]["sqnr_db"]
    assert db > 30.0 and db > db_onnx - 3.0, (db, db_onnx)
    assert [x["layer"] for x in rep["layers"]] == ["conv0.relu", "conv1.relu", "flat"]


def test_digits_shift_model_structure(shifted):
    """The NEMO chain per layer, integer weights within ±127, one shift per layer, the codes of
    the input and output in the metadata."""
    m = shifted.model
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("Conv") == 2 and ops.count("Gemm") == 1
    assert ops.count("Div") == 3 and ops.count("Cast") == 6 and "QuantizeLinear" not in ops
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    for name in ("conv0", "conv1", "fc"):
        w = inits[f"{name}/weight_q"]
        assert np.array_equal(w, np.round(w)) and np.abs(w).max() <= 127
        d = int(inits[f"{name}/div"])
        assert d & (d - 1) == 0 and inits[f"{name}/k"].dtype == np.int64
    meta = {e.key: e.value for e in m.metadata_props}
    assert meta["tilewise.quant.input"].endswith(" 0")
    assert 0 < shifted.acts["logits"].zero_point < 255       # signed logits: the calibrated zero point
    assert shifted.acts["conv0.relu"].zero_point == 0


@pytest.mark.parametrize("target", ["gap9", "gap9-ne16", "pulp-open", "diana"])
def test_digits_shift_validates_bit_exact(tmp_path, shifted, target):
    """tilewise reads every weighted layer as shift mode; on gap9 with NE16 forced (no cluster
    shift bindings) NE16's norm-quant requantizes all three; bit-exact with the golden model and
    onnxruntime on each target."""
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    path = tmp_path / "digits_shift.onnx"
    onnx.save(shifted.model, str(path))
    graph, lg = _read(path)
    _check_shift_layers(lg)
    t = _ne16_forced(norm_quant=True) if target == "gap9-ne16" else get_target(target)
    ns = schedule_network(lg, t, "model")
    labels = _labels(ns, len(lg.layers))
    if target == "gap9-ne16":
        assert labels == ["ne16/conv2d_s8_nq", "ne16/conv2d_s8_nq", "ne16/fully_connected_s8_nq"]
    r = validate_model(path, ns, graph, 4, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["reference"] == "onnxruntime" and r["golden_vs_reference"] == 0, r
    if target.startswith("gap9"):
        assert r["jobs_measured"] == r["jobs_predicted"] > 0


def test_ad_autoencoder_float_parent_in_shift_mode(tmp_path):
    """The MLPerf AD autoencoder's float parent: the shift model is as close to float as the
    onnx-mode model (within 0.5 dB on 100 other inputs), its first layer's bias-dominated channels
    coarsened, and bit-exact on gap9 with NE16 forced (norm-quant on all ten layers) and on
    pulp-open."""
    from tilewise.pipeline import schedule_network
    from tilewise.quantize.pipeline import calibration_inputs, load_float_onnx
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    from .test_quantize import _float_tflite

    fpath = _float_tflite("ad_autoencoder")
    model = load_float_onnx(fpath)
    rng = np.random.default_rng(1)
    calib = calibration_inputs(model, rng.uniform(-1, 1, (100, 1, 640)).astype(np.float32), "c", True)
    evals = calibration_inputs(model, rng.uniform(-1, 1, (100, 1, 640)).astype(np.float32), "e", True)
    sm = quantize_shift(model, calib)
    db = shift_report(model, sm, evals)["outputs"][0]["sqnr_db"]
    db_onnx = sqnr_json(model, quantize_model(model, calib), evals)["outputs"][0]["sqnr_db"]
    assert db > db_onnx - 1.0, (db, db_onnx)
    assert sm.layers[0].coarse_channels > 0
    path = tmp_path / "ad_shift.onnx"
    onnx.save(sm.model, str(path))
    graph, lg = _read(path)
    assert len(_check_shift_layers(lg)) == 10
    for t in (_ne16_forced(norm_quant=True), get_target("pulp-open")):
        ns = schedule_network(lg, t, "model")
        labels = _labels(ns, len(lg.layers))
        if t.name == "gap9":
            assert set(labels) == {"ne16/fully_connected_s8_nq"}, labels
        r = validate_model(path, ns, graph, 3, 0, tmp_path / f"p_{t.name}").to_json()
        assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


def test_choose_shift_bounds():
    """The largest d whose k·(|B'| + 256·Σ|q_w|) + 128·2^d stays in int32 and whose accumulator
    stays below 2^24; B' carries M·B, the zero point and the rounding half."""
    m = np.array([1e-3, 3e-3])
    bias = np.array([1000, -50])
    w_abs = np.array([2000, 500])
    d, k, b = choose_shift(m, bias, w_abs, 128, "t")
    assert d <= D_MAX
    assert (k * (np.abs(b) + 256 * w_abs) + 128 * 2**d <= INT32).all()
    assert (255 * w_abs + np.abs(b) < FLOAT32_EXACT).all()
    assert np.array_equal(k, np.rint(m * 2.0**d))
    # floor(k·(acc + B') / 2^d) is round(M·(acc + B)) + 128 within one code over the reachable acc
    acc = np.arange(-255 * 2000, 255 * 2000 + 1, 997)
    got = np.floor(k[0] * (acc + b[0]) / 2.0**d)
    want = np.rint(m[0] * (acc + bias[0])) + 128
    assert np.abs(got - want).max() <= 1
    with pytest.raises(TilewiseError, match="node 'big'"):
        choose_shift(np.array([1.0]), np.array([2**30]), np.array([10]), 0, "big")


def test_bias_dominated_channel_gets_coarser_weights():
    """A channel whose bias is far beyond its weighted sum gets a weight step ×2^j until its
    accumulator is below 2^24; the other channel keeps ±127 weights."""
    w = np.array([[1.0, -0.5, 0.25], [1.0, -0.5, 0.25]])
    b = np.array([0.0, 3000.0])
    q, d, k, bq, j = layer_codes(w, b, 0, Act(1 / 127, 128), Act(12.0, 0), "fc")
    assert j[0] == 0 and j[1] > 0
    assert np.abs(q[0]).max() == 127 and np.abs(q[1]).max() < 127
    assert (255 * np.abs(q).sum(axis=1) + np.abs(bq) < FLOAT32_EXACT).all()


def test_writer_refusals_exit_2(tmp_path, capsys):
    """What the shift writer does not take: one sentence naming the node, exit 2, no file."""
    from onnx import TensorProto, helper

    out = tmp_path / "o.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    np.save(tmp_path / "a.npy", np.ones((3, 1, 4), np.float32))
    cases = [(helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=1), [],
              "node 'cat' is a Concat, which the shift-mode writer"),
             (helper.make_node("Add", ["x", "c"], ["y"], name="offset"),
              [onnx.numpy_helper.from_array(np.ones((1, 4), np.float32), "c")],
              "node 'offset' adds a constant")]
    for node, inits, want in cases:
        g = helper.make_graph([node], "a", [x], [y], inits)
        mp = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        mp.ir_version = 9
        onnx.save(mp, str(tmp_path / "m.onnx"))
        assert main(["quantize", str(tmp_path / "m.onnx"), "--calib", str(tmp_path / "a.npy"),
                     "--target", "pulp-open", "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert want in err and err.count("\n") == 1, err
        assert not out.exists()


def test_signed_input_padded_by_its_zero_point(tmp_path, trained):
    """A padded Conv on a signed input (digits shifted to [−0.5, 0.5]): the writer pads the codes
    with their zero point (an explicit Pad), the frontend folds it into the conv as its padding
    value, and the model validates bit-exact on pulp-open (the all-min / all-max inputs put the
    border taps at both ends)."""
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    data, fm = trained
    sm = quantize_shift(fm, data.x_train[:100] - 0.5)
    z = sm.acts["input"].zero_point
    assert 0 < z < 255
    pad = next(n for n in sm.model.graph.node if n.op_type == "Pad")
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in sm.model.graph.initializer}
    assert float(inits[pad.input[2]]) == z
    path = tmp_path / "signed.onnx"
    onnx.save(sm.model, str(path))
    graph, lg = _read(path)
    assert lg.layers[0].pad_value == z and any(lg.layers[0].nest.pads)
    ns = schedule_network(lg, get_target("pulp-open"), "model")
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


def test_cli_shift_target_json(tmp_path, trained, capsys):
    """--target gap9 writes the shift model: "requant": "shift", the layers' shifts, SQNR."""
    data, fm = trained
    fpath, cal = tmp_path / "f.onnx", tmp_path / "c.npy"
    onnx.save(fm, str(fpath))
    np.save(cal, data.x_train[:50])
    out = tmp_path / "q.onnx"
    assert main(["quantize", str(fpath), "--calib", str(cal), "--target", "gap9", "-o", str(out),
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["requant"] == "shift" and out.exists()
    assert [x["layer"] for x in r["shift"]["layers"]] == ["conv0", "conv1", "fc"]
    assert r["calibration_sqnr"]["outputs"][0]["sqnr_db"] > 30.0
    # a Cortex-M target keeps the QDQ onnx-mode model
    assert main(["quantize", str(fpath), "--calib", str(cal), "--target", "stm32h7", "-o",
                 str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["requant"] == "onnx"


def test_resnet8_float_parent_shift_mode_end_to_end(tmp_path):
    """ResNet-8's float parent (residual Adds, a global average pool, a Softmax tail) in shift
    mode on realistic inputs (bench/mlperf_inputs.py: 50 calibration, 30 evaluation): the
    residual chains and the pool read back as shift-mode layers (NE16's norm-quant exact for
    each), the Softmax cut as the one float tail, the logits' SQNR within 1 dB of the onnx-mode
    model's on these 30 inputs (31.5 / 32.1 dB; on bench/quantize_mlperf.py's 200 inputs 30.91 /
    30.95; the Softmax output is ~1 dB below onnx mode's on so few inputs), bit-exact on gap9 as
    partitioned (NE16 running its layers)."""
    from bench import mlperf_inputs
    from tilewise.pipeline import schedule_network
    from tilewise.quantize.pipeline import calibration_inputs, load_float_onnx
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    from .test_quantize import _float_tflite

    model = load_float_onnx(_float_tflite("ic_resnet8"))
    calib_raw, eval_raw = mlperf_inputs.split("ic_resnet8")
    calib = calibration_inputs(model, calib_raw[:50], "c", True)
    evals = calibration_inputs(model, eval_raw[:30], "e", True)
    sm = quantize_shift(model, calib)
    ops = [n.op_type for n in sm.model.graph.node]
    assert ops[-2:] == ["Mul", "Softmax"] and "AveragePool" not in ops and ops.count("Add") == 6
    logits = "model/dense/MatMul;model/dense/BiasAdd"      # the integer body's last tensor
    rep = shift_report(model, sm, evals)
    ref = sqnr_json(model, quantize_model(model, calib), evals)
    db = next(x["sqnr_db"] for x in rep["layers"] if x["layer"] == logits)
    db_onnx = next(x["sqnr_db"] for x in ref["layers"] if x["name"] == logits)
    assert db > db_onnx - 1.0, (db, db_onnx)
    assert rep["outputs"][0]["sqnr_db"] > 20.0, rep["outputs"]
    path = tmp_path / "resnet8_shift.onnx"
    onnx.save(sm.model, str(path))
    graph, lg = _read(path)
    assert any("float tail" in s for s in graph.meta.get("notes", []))
    _check_shift_layers(lg)
    ns = schedule_network(lg, get_target("gap9"), "model")
    assert any(ns.placement(i).binding.label.startswith("ne16/") for i in range(len(lg.layers)))
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


def test_digits_sub_byte_weights_on_ne16(tmp_path, trained, capsys):
    """--bits mixed with --target gap9: per-layer weight widths (mixed.py's measured assignment,
    activations 8-bit) stated in the model's metadata, read back as int4 / int2 weights that NE16
    runs itself (its w4 / w2 norm-quant bindings, per analyze --json); bit-exact with the golden
    model and onnxruntime; accuracy within 1.5 points of the 8-bit shift model, ≥ 40 % fewer
    weight bytes than int8."""
    data, fm = trained
    fpath, cal = tmp_path / "f.onnx", tmp_path / "c.npy"
    onnx.save(fm, str(fpath))
    np.save(cal, data.x_train[:200])
    out = tmp_path / "mixed.onnx"
    assert main(["quantize", str(fpath), "--calib", str(cal), "--target", "gap9", "--bits", "mixed",
                 "--weight-budget", "0.45", "-o", str(out), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    bits = r["mixed"]["bits"]
    assert sorted(bits.values()) != [8, 8, 8] and min(bits.values()) == 2, bits
    assert r["shift"]["weight_bytes"] == r["mixed"]["weight_bytes"] <= 0.6 * r["mixed"]["int8_weight_bytes"]
    meta = {e.key: e.value for e in onnx.load(str(out)).metadata_props}
    assert {k: int(v) for k, v in meta.items() if k.startswith("tilewise.w_bits.")} == \
        {f"tilewise.w_bits.{n}": b for n, b in bits.items() if b != 8}
    assert main(["analyze", str(out), "--target", "gap9", "--json"]) == 0
    layers = {x["name"]: x["binding"] for x in json.loads(capsys.readouterr().out)["layers"]}
    # on NE16, requantized by NE16 (_nq) or, where NE16's GVSoC-fitted model finds the cluster's
    # shift requant behind the next job cheaper, in the same shift mode (_shift); or, where the
    # cluster's per-tile NE16 work as measured on GVSoC outweighs NE16 (the dense layer), on the
    # cluster's sub-byte kernel of the same weight width
    for name, b in bits.items():
        if layers[name].startswith("pulp/"):
            assert "_sb_" in layers[name] and f"w{b}" in layers[name], layers
            continue
        assert layers[name].startswith("ne16/") and layers[name].endswith(("_nq", "_shift")), layers
        assert (f"_w{b}_" in layers[name]) == (b != 8), layers
    assert sum(layers[n].endswith("_nq") for n in bits) >= 2, layers
    assert main(["validate", str(out), "--target", "gap9", "--inputs", "3", "--json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["bit_exact"] and v["reference"] == "onnxruntime" and v["golden_vs_reference"] == 0, v
    sm8 = quantize_shift(fm, data.x_train[:200])
    sm = quantize_shift(fm, data.x_train[:200], w_bits=bits)
    acc = {k: float(np.mean(np.concatenate(run_dequantized(m, data.x_eval)["logits"]).argmax(axis=1)
                            == data.y_eval)) for k, m in (("int8", sm8), ("mixed", sm))}
    assert acc["mixed"] >= acc["int8"] - 0.015, acc


def test_stated_weight_width_is_checked(tmp_path, trained, shifted, capsys):
    """A node whose metadata states 2-bit weights but holds 8-bit ones: one sentence, exit 2; a
    shift target with --bits 16 and an .onnx output: one sentence pointing at .tflite, exit 2 (a
    16-bit model is TFLite's 16x8, TFLite's requantization whatever the target)."""
    m = onnx.ModelProto()
    m.CopyFrom(shifted.model)
    e = m.metadata_props.add()
    e.key, e.value = "tilewise.w_bits.conv1", "2"
    path = tmp_path / "lying.onnx"
    onnx.save(m, str(path))
    assert main(["analyze", str(path), "--target", "gap9"]) == 2
    err = capsys.readouterr().err
    assert "conv1" in err and "states 2-bit weights but holds weights in" in err and err.count("\n") == 1, err
    data, fm = trained
    np.save(tmp_path / "c.npy", data.x_train[:10])
    onnx.save(fm, str(tmp_path / "f.onnx"))
    assert main(["quantize", str(tmp_path / "f.onnx"), "--calib", str(tmp_path / "c.npy"), "--target",
                 "pulp-open", "--bits", "16", "-o", str(tmp_path / "o.onnx")]) == 2
    err = capsys.readouterr().err
    assert "--bits 16 writes TFLite's 16x8 model: name the output *.tflite" in err and err.count("\n") == 1, err


def _residual_pool_float_model():
    """A small float network with every node the shift writer adds besides Conv / Gemm: a padded
    AveragePool (count_include_pad = 1) on signed values, a residual Add of a ReLU branch and a
    signed branch, a global average pool, and a Softmax at the end."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(15)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in (
        ("w0", rng.normal(0, 0.4, (4, 2, 3, 3))), ("b0", rng.normal(0, 0.1, 4)),
        ("w1", rng.normal(0, 0.3, (4, 4, 1, 1))), ("b1", rng.normal(0, 0.1, 4)),
        ("w2", rng.normal(0, 0.5, (3, 4))), ("b2", rng.normal(0, 0.1, 3)))]
    nodes = [helper.make_node("AveragePool", ["x"], ["p"], name="pool", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("Conv", ["p", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
             helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], name="conv1"),
             helper.make_node("Add", ["r0", "c1"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["r1"], name="relu1"),
             helper.make_node("GlobalAveragePool", ["r1"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["logits"], name="fc", transB=1),
             helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=-1)]
    g = helper.make_graph(nodes, "respool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 3])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m, rng.normal(0, 1, (60, 2, 6, 6)).astype(np.float32)


def test_residual_add_and_pools_small_network(tmp_path):
    """The writer's Add / AveragePool / GlobalAveragePool / Softmax forms on a small network with
    signed input (the padded pool reads codes padded with their zero point): close to float,
    read back as shift-mode layers (the pools as depthwise sums of ones, the Add as a concat and
    1×1 conv), bit-exact on pulp-open against the golden model and onnxruntime."""
    from tilewise.pipeline import schedule_network
    from tilewise.quantize.shift_nodes import branch_weights
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    fm, x = _residual_pool_float_model()
    sm = quantize_shift(fm, x[:40])
    assert [n.op_type for n in sm.model.graph.node][:2] == ["Pad", "Conv"]   # the pool, padded by z
    rep = shift_report(fm, sm, x[40:])
    assert rep["outputs"][0]["sqnr_db"] > 25.0, rep
    assert min(v["sqnr_db"] for v in rep["layers"]) > 20.0, rep["layers"]
    path = tmp_path / "respool.onnx"
    onnx.save(sm.model, str(path))
    graph, lg = _read(path)
    _check_shift_layers(lg)
    assert [x.op.value for x in lg.layers].count("depthwise") == 2
    ns = schedule_network(lg, get_target("pulp-open"), "model")
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
    # the branch weights: within int8, the best ratio any pair gives (brute force), m fits both
    grid = np.arange(1, 128)
    for m_a, m_b in ((0.37, 0.29), (0.37, 0.0123), (0.011, 0.9)):
        wa, wb, m = branch_weights(m_a, m_b)
        assert 1 <= min(wa, wb) and max(wa, wb) <= 127
        ratio = grid[:, None] / grid[None, :] / (m_a / m_b)
        best = np.abs(np.maximum(ratio, 1 / ratio) - 1).min()
        err = max(wa / wb / (m_a / m_b), wb / wa * (m_a / m_b)) - 1
        assert err <= best + 1e-9 and abs(m * wa / m_a - 1) <= err and abs(m * wb / m_b - 1) <= err
    assert branch_weights(0.37, 0.29)[:2] == branch_weights(0.29, 0.37)[1::-1]


def test_fold_pads_takes_one_pad_value():
    """frontend/onnx_nemo.fold_pads: a chain of Pads of one value v folds into a Conv (its padding
    value), a chain mixing values with extents stops at the change, a value other than 0 is not
    folded into a reader with pads of its own or where it is not allowed (the pools)."""
    from tilewise.frontend.onnx_model import OnnxGraph, ONode
    from tilewise.frontend.onnx_nemo import fold_pads

    def pad(name, src, dst, extent, value):
        return ONode("Pad", name, (src, f"{name}/p", f"{name}/v"), (dst,)), \
            {f"{name}/p": np.array([0, 0, extent, extent, 0, 0, extent, extent], np.int64),
             f"{name}/v": np.float32(value)}

    def fold(chain, own_pads=(0, 0, 0, 0), value_ok=True):
        nodes, consts, src = [], {}, "x"
        for i, (extent, value) in enumerate(chain):
            n, c = pad(f"p{i}", src, f"t{i}", extent, value)
            nodes.append(n)
            consts.update(c)
            src = f"t{i}"
        conv = ONode("Conv", "conv", (src, "w"), ("y",), {"pads": list(own_pads)})
        g = OnnxGraph("m", "m", tuple([*nodes, conv]), consts, {"x": ("float32", (1, 1, 4, 4))}, ("y",), 17)
        s, total, folded, value = fold_pads(g, g.producers(), g.consumers(), conv, value_ok)
        return s, total, len(folded), value

    assert fold([(1, 7), (0, 0)]) == ("x", [1, 1, 1, 1], 2, 7)        # NEMO's trailing empty Pad
    assert fold([(1, 7), (1, 7)]) == ("x", [2, 2, 2, 2], 2, 7)
    assert fold([(1, 0), (1, 7)]) == ("t0", [1, 1, 1, 1], 1, 7)       # stops where the value changes
    assert fold([(1, 7), (1, 0)]) == ("t0", [1, 1, 1, 1], 1, 0)
    assert fold([(1, 7)], own_pads=(1, 1, 1, 1)) == ("t0", [0, 0, 0, 0], 0, 0)
    assert fold([(1, 7)], value_ok=False) == ("t0", [0, 0, 0, 0], 0, 0)
    assert fold([(1, 0)], value_ok=False) == ("x", [1, 1, 1, 1], 1, 0)


def test_pow2_codes_one_weight_step_per_layer():
    """The power-of-two form (DIANA): k = 1 on every channel, the weights on one step
    s_y·2^−d / s_x for the whole layer, at least the per-tensor step max|w| / 127 and under twice
    it; B' = B + z_y·2^d + 2^(d−1); an output scale finer than s_x·max|w| / 127 refused in one
    sentence."""
    from tilewise.quantize.shift_out import pow2_codes

    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.2, (8, 3, 3, 4)) * rng.uniform(0.2, 1.0, (8, 1, 1, 1))
    b = rng.normal(0, 0.1, 8)
    ax, ay = Act(0.02, 0), Act(0.05, 17)
    q, d, k, b_int, coarse = pow2_codes(w, b, 0, ax, ay, "conv")
    assert (k == 1).all() and not coarse.any() and 0 <= d <= D_MAX
    step = ay.scale * 2.0**-d / ax.scale
    assert np.abs(w).max() / 127 <= step < 2 * np.abs(w).max() / 127
    assert np.array_equal(q, np.clip(np.rint(w / step), -127, 127)) and np.abs(q).max() <= 127
    bias = np.rint(b / (ax.scale * step)).astype(np.int64)
    assert np.array_equal(b_int, bias + (ay.zero_point << d) + (1 << d) // 2)
    with pytest.raises(TilewiseError, match="finer than its input scale times its weight step"):
        pow2_codes(w, b, 0, ax, Act(1e-5, 0), "conv")


def test_diana_quantize_writes_the_cores_requantization(tmp_path, trained, capsys):
    """`quantize --target diana` writes the power-of-two form: every layer k = 1 and one shift,
    read back as shift mode with multiplier 1, which DIANA's digital core requantizes itself (the
    *_rq bindings on all three layers, no host pass), bit-exact with the golden model and
    onnxruntime; the digits accuracy within 2 points of float (per-tensor weights)."""
    from tilewise.bindings.diana_digital import constants
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    data, fm = trained
    fpath, cal, out = tmp_path / "f.onnx", tmp_path / "c.npy", tmp_path / "q.onnx"
    onnx.save(fm, str(fpath))
    np.save(cal, data.x_train[:200])
    assert main(["quantize", str(fpath), "--calib", str(cal), "--target", "diana", "-o", str(out),
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert [(x["k_min"], x["k_max"]) for x in r["shift"]["layers"]] == [(1, 1)] * 3
    graph, lg = _read(out)
    weighted = _check_shift_layers(lg)
    assert all(constants.reason(x, lg) is None for x in weighted)
    ns = schedule_network(lg, get_target("diana"), "model")
    assert _labels(ns, len(lg.layers)) == ["diana_digital/conv2d_s8_rq", "diana_digital/conv2d_s8_rq",
                                           "diana_digital/fully_connected_s8_rq"]
    v = validate_model(out, ns, graph, 4, 0, tmp_path / "p").to_json()
    assert v["bit_exact"] and v["reference"] == "onnxruntime" and v["golden_vs_reference"] == 0, v
    from tilewise.quantize.pipeline import quantize_shift
    from tilewise.quantize.sqnr import run_all, session

    sm = quantize_shift(fm, data.x_train[:200], pow2=True)
    acc = float(np.mean(np.concatenate(run_dequantized(sm, data.x_eval)["logits"]).argmax(axis=1)
                        == data.y_eval))
    ref = np.concatenate(run_all(session(fm), "input", data.x_eval, ["logits"])["logits"])
    assert acc >= float(np.mean(ref.argmax(axis=1) == data.y_eval)) - 0.02


def test_pow2_residual_add_runs_on_dianas_core(tmp_path):
    """The power-of-two writer's residual Add (shift_nodes.write_add_pow2): both addends written
    on one scale (zero point 0 or 128), the sum k = 1 with one shift; read back as an add by tables
    that is exactly DIANA's (a + b) >> d → clip (bindings/diana_digital/add.py), which the
    digital core takes (add_s8_rq) — bit-exact with the golden model and onnxruntime — while the
    multiplier form's Add (branches scaled) stays on the host with the reason said."""
    from tilewise.bindings.diana_digital import add
    from tilewise.ir.ops import Op
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    fm, x = _residual_pool_float_model()
    sm = quantize_shift(fm, x[:40], pow2=True)
    # one scale; the ReLU'd addend keeps its 8 bits (zero point 0), the signed one is centred
    assert sm.acts["r0"].scale == sm.acts["c1"].scale
    assert (sm.acts["r0"].zero_point, sm.acts["c1"].zero_point) == (0, 128)
    assert next(v for v in sm.layers if v.layer == "add").multipliers == (1, 1)
    rep = shift_report(fm, sm, x[40:])
    assert rep["outputs"][0]["sqnr_db"] > 20.0, rep
    path = tmp_path / "respool_pow2.onnx"
    onnx.save(sm.model, str(path))
    graph, lg = _read(path)
    layer = next(v for v in lg.layers if v.op == Op.ADD)
    assert add.reason(layer, lg) is None
    ns = schedule_network(lg, get_target("diana"), "model")
    labels = _labels(ns, len(lg.layers))
    assert labels[[v.op for v in lg.layers].index(Op.ADD)] == "diana_digital/add_s8_rq", labels
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
    assert r["jobs_measured"] == r["jobs_predicted"] > 0
    path2 = tmp_path / "respool.onnx"
    onnx.save(quantize_shift(fm, x[:40]).model, str(path2))
    _, lg2 = _read(path2)
    assert "scaled or offset" in add.reason(next(v for v in lg2.layers if v.op == Op.ADD), lg2)


def test_pow2_global_pool_in_halving_stages_on_dianas_core(tmp_path):
    """The power-of-two writer's global average pool of an 8×8 map: three 2×2-sum stages
    (shift_nodes.write_halving: depthwise 3×3 at stride 2, taps 1 on the top-left 2×2, k = 1),
    each on DIANA's digital core (depthwise_s8_rq), bit-exact, the pooled values within a code of
    float's mean; a map that is not a square power of two is not split."""
    from onnx import TensorProto, helper, numpy_helper

    from tilewise.pipeline import schedule_network
    from tilewise.quantize.shift_nodes import halvings
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    assert halvings((8, 8), (1, 1), (0, 0, 0, 0), [1, 4, 8, 8]) == 3
    assert halvings((6, 6), (1, 1), (0, 0, 0, 0), [1, 4, 6, 6]) == 0
    assert halvings((8, 4), (1, 1), (0, 0, 0, 0), [1, 4, 8, 4]) == 0
    assert halvings((2, 2), (2, 2), (0, 0, 0, 0), [1, 4, 8, 8]) == 0
    rng = np.random.default_rng(4)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in (
        ("w0", rng.normal(0, 0.4, (16, 2, 3, 3))), ("b0", rng.normal(0, 0.1, 16)),
        ("w1", rng.normal(0, 0.5, (3, 16))), ("b1", rng.normal(0, 0.1, 3)))]
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
             helper.make_node("GlobalAveragePool", ["r0"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "w1", "b1"], ["logits"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "gap8", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 3])], inits)
    fm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    fm.ir_version = 9
    x = rng.normal(0, 1, (50, 2, 8, 8)).astype(np.float32)
    sm = quantize_shift(fm, x[:40], pow2=True)
    assert [v.layer for v in sm.layers] == ["conv0", "gap/half0", "gap/half1", "gap/half2", "fc"]
    assert all(v.multipliers == (1, 1) for v in sm.layers)
    got = np.concatenate(run_dequantized(sm, x[40:], ("g",))["g"])
    from tilewise.quantize.sqnr import run_all, session

    ref = np.concatenate(run_all(session(fm, ("g",)), "x", x[40:], ["g"])["g"])
    assert np.abs(got - ref).max() <= 2 * sm.acts["g"].scale + 2 * sm.acts["r0"].scale
    path = tmp_path / "gap8.onnx"
    onnx.save(sm.model, str(path))
    graph, lg = _read(path)
    ns = schedule_network(lg, get_target("diana"), "model")
    labels = _labels(ns, len(lg.layers))
    assert labels == ["diana_digital/conv2d_s8_rq"] + ["diana_digital/depthwise_s8_rq"] * 3 + \
        ["diana_digital/fully_connected_s8_rq"], labels
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
