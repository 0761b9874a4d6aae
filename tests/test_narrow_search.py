"""`tilewise quantize --acc-bits N` (issue 15): seed 002 §4.5's 1-D bit-width search for narrow
accumulators (tilewise/quantize/narrow_search.py), the digits acceptance (idsp with 16-bit
accumulators within 2 points of float, bit-exact), the b-bit activation windows and the clamp
binding they lower to.

The digits CNN is trained once per test process (conftest.py `digits_trained`)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tilewise.cli import main
from tilewise.frontend import load_model
from tilewise.golden import acc_bounds as ab
from tilewise.ir.ops import WEIGHTED_LAYER_OPS as WEIGHTED
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.quantize import narrow_search as ns
from tilewise.quantize.sqnr import run_all, session
from tilewise.targets.idsp import TARGET as IDSP
from tilewise.validate.check import validate_path


@pytest.fixture(scope="module")
def trained(digits_trained):
    data, fm, _ = digits_trained
    return data, fm


@pytest.fixture(scope="module")
def narrow16(trained):
    data, fm = trained
    return ns.search(fm, data.x_train[:200], 16)


def _acc(model, x, y) -> float:
    out = run_all(session(model), "input", x, ["logits"])["logits"]
    return float(np.mean(np.concatenate(out).argmax(axis=1) == y))


def _weights(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def test_digits_idsp16_within_two_points_of_float(trained, narrow16):
    data, fm = trained
    f = _acc(fm, data.x_eval, data.y_eval)
    q = _acc(narrow16.result.model, data.x_eval, data.y_eval)
    assert f > 0.93
    assert q >= f - 0.02, (f, q)
    # the search had to narrow: at 8x8 bits every layer's accumulator needs more than 16 bits
    inits = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in fm.graph.initializer}
    p, _, obs = ns.observe(fm, data.x_train[:200])
    for layer in ns.weighted_layers(fm, p):
        assert ns.proof(layer, inits, obs[layer.input].qparams(), 8)[0] > 16, layer.label
    assert [c.layer for c in narrow16.choices] == ["conv0", "conv1", "fc"]
    assert all(c.in_bits + c.w_bits < 16 for c in narrow16.choices), narrow16.choices


def test_digits_idsp16_validates_bit_exact(tmp_path, narrow16):
    """No layer wraps: C == golden == onnxruntime with 16-bit accumulators on the dsp."""
    path = tmp_path / "digits_idsp16.onnx"
    onnx.save(narrow16.result.model, str(path))
    target = IDSP.with_acc_bits(16, "dsp")
    lg = schedule_network(lower(load_model(str(path))), target).layers
    weighted = [layer for layer in lg.layers if layer.op in WEIGHTED]
    assert len(weighted) == 3 and {layer.acc_bits for layer in weighted} == {16}
    assert ab.may_wrap(lg) == ()
    r = validate_path(path, target, n_random=8, out_dir=tmp_path / "p")
    assert r.bit_exact, r.mismatches
    assert r.golden_vs_reference == 0
    assert not any("accumulators" in n for n in r.notes), r.notes


def test_chosen_widths_are_the_best_provable_candidates(trained, narrow16):
    """Every candidate fits, each is the widest weight width for its input width (the 1-D line of
    eq. 4.14 under the integer proof), and the choice is the candidate of the best SQNR."""
    data, fm = trained
    inits = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in fm.graph.initializer}
    p, _, obs = ns.observe(fm, data.x_train[:200])
    layers = {layer.label: layer for layer in ns.weighted_layers(fm, p)}
    for c in narrow16.choices:
        assert c.candidates and all(k.acc_bits_needed <= 16 for k in c.candidates)
        best = max(c.candidates, key=lambda k: k.sqnr_db)
        assert (c.in_bits, c.w_bits) == (best.in_bits, best.w_bits)
        assert c.acc_bits_needed <= 16 and -(1 << 15) <= c.acc_range[0] <= c.acc_range[1] < (1 << 15)
        for k in c.candidates:
            if k.w_bits < ns.MAX_BITS:
                xq = ns.window(obs[layers[c.layer].input], k.in_bits)
                assert ns.proof(layers[c.layer], inits, xq, k.w_bits + 1)[0] > 16, (c.layer, k)
        assert set(c.bounds) == {"worst_case", "weights", "output"}
        assert c.bounds["worst_case"] >= c.bounds["weights"] >= c.bounds["output"]


def test_written_codes_stay_in_their_widths(trained, narrow16):
    """Weights within ±(2^(b−1) − 1); a narrowed activation's codes within its b-bit window even
    for inputs far outside the calibration range (the Clip after its int8 QuantizeLinear)."""
    data, _ = trained
    m = narrow16.result.model
    w = _weights(m)
    for c in narrow16.choices:
        q = w[f"{c.layer}/weight/q"]
        assert q.dtype == np.int8 and np.abs(q).max() <= (1 << (c.w_bits - 1)) - 1
    clips = {n.name for n in m.graph.node if n.op_type == "Clip"}
    narrowed = {c.input for c in narrow16.choices if c.in_bits < 8}
    assert clips == {f"{t}/narrow" for t in narrowed}
    assert not any(n.op_type == "Relu" and n.output[0].startswith(tuple(narrowed)) for n in m.graph.node)
    noise = np.random.default_rng(7).normal(0.0, 30.0, (4, *data.x_eval.shape[1:])).astype(np.float32)
    wild = np.concatenate([data.x_eval[:4] * 20.0, -data.x_eval[:4] * 20.0, noise])
    names = [f"{t}/q" for t in narrowed]
    got = run_all(session(m, tuple(names), {n: onnx.TensorProto.INT8 for n in names}), "input", wild, names)
    for c in narrow16.choices:
        if c.in_bits < 8:
            v = np.concatenate([a.reshape(-1) for a in got[f"{c.input}/q"]])
            half = 1 << (c.in_bits - 1)
            assert v.min() >= -half and v.max() <= half - 1, (c.input, v.min(), v.max())
    first = narrow16.choices[0]    # the network input: the wild inputs reach both bounds
    assert first.input == "input" and first.in_bits < 8
    v = np.concatenate([a.reshape(-1) for a in got["input/q"]])
    assert (v.min(), v.max()) == (-(1 << (first.in_bits - 1)), (1 << (first.in_bits - 1)) - 1)


def test_value_range_follows_the_clamp_layers(tmp_path, narrow16):
    path = tmp_path / "d.onnx"
    onnx.save(narrow16.result.model, str(path))
    lg = lower(load_model(str(path)))
    by_in = {c.layer: c for c in narrow16.choices}
    for layer in lg.layers:
        if layer.op in WEIGHTED:
            c = by_in[layer.name]
            half = 1 << (c.in_bits - 1)
            assert ab.value_range(lg, layer.inputs[0]) == (-half, half - 1)
    assert ab.value_range(lg, lg.inputs[0]) == (-128, 127)


def test_cli_acc_bits_json_and_errors(tmp_path, trained, capsys):
    data, fm = trained
    fpath, cpath, out = tmp_path / "f.onnx", tmp_path / "c.npy", tmp_path / "q.onnx"
    onnx.save(fm, str(fpath))
    np.save(cpath, data.x_train[:60])
    base = [str(fpath), "--calib", str(cpath), "--target", "idsp", "-o", str(out)]
    assert main(["quantize", *base, "--acc-bits", "dsp=12", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["acc_bits"] == 12 and [x["layer"] for x in r["bit_widths"]] == ["conv0", "conv1", "fc"]
    for x in r["bit_widths"]:
        assert x["acc_bits_needed"] <= 12 and 2 <= x["in_bits"] <= 8 and 2 <= x["w_bits"] <= 8
        assert x["available_bits"]["worst_case"] == 13 - x["delta"]["worst_case"]
        assert x["candidates"] and all(k["acc_bits_needed"] <= 12 for k in x["candidates"])
    assert main(["quantize", *base, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["acc_bits"] == 32 and "bit_widths" not in r
    # 1024 equal weights (codes 1 at 2 bits), inputs in [−1, 1] (2-bit codes [−2, 1], zero point 0):
    # the accumulator reaches 1024·(−2) = −2048, 13 bits
    wide = tmp_path / "wide.onnx"
    onnx.save(_dense(1024), str(wide))
    np.save(tmp_path / "w.npy", np.random.default_rng(1).uniform(-1, 1, (8, 1024)).astype(np.float32))
    for argv, msg in (([*base, "--acc-bits", "dsp=x"], "bad --acc-bits 'dsp=x'"),
                      ([*base, "--acc-bits", "npu=16"], "bad --acc-bits 'npu=16'"),
                      ([str(wide), "--calib", str(tmp_path / "w.npy"), "--target", "idsp", "-o", str(out),
                        "--acc-bits", "8"], "layer 'fc': no input and weight widths of 2 to 8 bits fit a "
                                            "8-bit accumulator (2-bit weights need 13 bits)")):
        assert main(["quantize", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and err.count("\n") == 1, err


def _dense(n: int) -> onnx.ModelProto:
    from onnx import TensorProto, helper

    w = numpy_helper.from_array(np.full((2, n), 0.01, np.float32), "w")
    node = helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)
    g = helper.make_graph([node], "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


def test_idsp_dsp_priced_by_accumulator_width(tmp_path, narrow16):
    """Seed 002 §3.2: the dsp's native 16-bit accumulators run at the full 32 MAC/cycle, emulated
    32-bit ones at half; analyze predicts every weighted dsp layer faster with --acc-bits dsp=16,
    and nothing else changes (the cpu's model, the seed reproduction's throughput)."""
    from tilewise.schedule.idsp import IdspSystem

    t16 = IDSP.with_acc_bits(16, "dsp")
    d32, d16 = IDSP.module("dsp").bindings[0].cost, t16.module("dsp").bindings[0].cost
    assert (d32.acc_bits, d32.mac_rate, d16.acc_bits, d16.mac_rate) == (32, 16.0, 16, 32.0)
    assert all(b.cost.acc_bits == 16 for b in t16.module("dsp").bindings)
    assert t16.module("cpu").bindings == IDSP.module("cpu").bindings
    assert IdspSystem.from_target(IDSP).macs_per_cycle == IdspSystem.from_target(t16).macs_per_cycle == 32.0
    path = tmp_path / "d.onnx"
    onnx.save(narrow16.result.model, str(path))
    lg = lower(load_model(str(path)))
    s32, s16 = schedule_network(lg, IDSP), schedule_network(lg, t16)
    for layer, a, b in zip(lg.layers, s32.schedules, s16.schedules):
        assert a.module == b.module
        if layer.op in WEIGHTED:
            assert a.module == "dsp" and b.compute_cycles < a.compute_cycles, layer.name
            # the MAC term halves: the difference is the layer's MACs / 32 per tile sum
            assert a.compute_cycles - b.compute_cycles == pytest.approx(layer.nest.macs / 32.0, rel=0.02)
        else:
            assert b.cycles == a.cycles, layer.name


def test_clamps_fold_into_the_producing_requantization(tmp_path, narrow16):
    """passes.fold_clamps: the windows after conv0 and conv1 become their output clamps; the
    network input's window stays a clamp layer (nothing requantizes before it)."""
    from tilewise.ir.ops import Op

    path = tmp_path / "d.onnx"
    onnx.save(narrow16.result.model, str(path))
    lg = lower(load_model(str(path)))
    assert [layer.op for layer in lg.layers] == [Op.CLAMP, Op.CONV2D, Op.CONV2D, Op.FULLY_CONNECTED]
    by = {c.layer: c for c in narrow16.choices}
    conv0 = lg.layers[1]
    half = 1 << (by["conv1"].in_bits - 1)
    assert (conv0.requant.qmin, conv0.requant.qmax) == (-half, half - 1)


def test_example_network_at_16_bits_validates_on_idsp(tmp_path):
    """Add, MaxPool, depthwise, GlobalAveragePool and Gemm (the bundled example's float network):
    every accumulator fits 16 bits, the windows fold into the Add's and convs' clamps (only the
    network input keeps a clamp layer), value_range follows MaxPool, bit-exact on idsp."""
    from tilewise.examples.make_example import example_data, float_model
    from tilewise.ir.ops import Op

    x, _, _ = example_data(32)
    r = ns.search(float_model(), x, 16)
    assert {c.layer for c in r.choices} == {"conv1", "dw2", "pw2", "conv3", "fc"}
    assert any(c.in_bits < 8 for c in r.choices)
    path = tmp_path / "ex16.onnx"
    onnx.save(r.result.model, str(path))
    target = IDSP.with_acc_bits(16, "dsp")
    lg = schedule_network(lower(load_model(str(path))), target).layers
    assert [layer.name for layer in lg.layers if layer.op == Op.CLAMP] == ["input/narrow"]
    assert ab.may_wrap(lg) == ()
    by = {c.layer: c for c in r.choices}      # the windows, seen through MaxPool and the mean's requant
    for layer in lg.layers:
        if layer.op in WEIGHTED:
            half = 1 << (by[layer.name].in_bits - 1)
            assert ab.value_range(lg, layer.inputs[0]) == (-half, half - 1), layer.name
    v = validate_path(path, target, n_random=4, out_dir=tmp_path / "p")
    assert v.bit_exact and v.golden_vs_reference == 0, v.mismatches
    assert not any("accumulators" in n for n in v.notes), v.notes
