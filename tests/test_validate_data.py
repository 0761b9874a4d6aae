"""`tilewise validate --data/--expected/--labels` (validate/own_data.py, data.py, metrics.py,
layer_errors.py): metrics on hand-computed values; float quantization exactly as onnxruntime's
QuantizeLinear and LiteRT's QUANTIZE; every accepted layout and dtype; every malformed case one
sentence naming the file (exit 2); the bundled example end to end (metrics checked against values
computed here from onnxruntime directly, the per-layer and metrics CSVs); integer expected outputs
compared bit for bit (a wrong one is exit 1); a TFLite NCHW model in both layouts."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from tilewise.cli import main as cli_main
from tilewise.examples import EXAMPLE_ONNX
from tilewise.examples.make_example import DATA_FILES, example_data
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.targets.registry import get_target
from tilewise.validate import metrics as M
from tilewise.validate.data import HALF_AWAY, HALF_EVEN, input_spec, output_spec, quantize, read_array, to_ir
from tilewise.validate.own_data import validate_data_path
from tilewise.validate.report import OutputMismatch

from .tflite_builder import ModelBuilder

EX_DIR = EXAMPLE_ONNX.parent
EX_IN, EX_EXP, EX_LAB = (EX_DIR / f for f in DATA_FILES)


# -- metrics on hand-computed values ------------------------------------------------------------

def test_metrics_hand_computed():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([[1.0, 0.0], [3.0, 0.0]])
    # differences 0, 2, 0, 4
    assert M.rmse(a, b) == pytest.approx(math.sqrt(5.0))          # sqrt((4 + 16) / 4)
    assert M.mae(a, b) == pytest.approx(1.5)                       # 6 / 4
    assert M.max_abs(a, b) == 4.0
    assert M.mean_error(a, b) == pytest.approx(1.5)
    assert M.l2r(a, b) == pytest.approx(math.sqrt(2.0))           # sqrt(20) / sqrt(10)
    assert M.cos(a, b) == pytest.approx(1 / math.sqrt(3.0))       # 10 / sqrt(30 · 10)
    assert M.argmax_agreement(a, b) == 0.0                         # [1, 1] vs [0, 0]
    assert M.argmax_agreement(a, np.array([[0.0, 5.0], [1.0, 0.0]])) == 0.5
    assert M.mean_error(b, a) == pytest.approx(-1.5)
    c = M.compare(a, b, classifier=True)
    assert c["inputs"] == 2 and c["elements"] == 4 and c["acc"] == 0.0
    assert M.compare(a, b, classifier=False)["acc"] is None


def test_metrics_degenerate_cases():
    z = np.zeros((2, 3))
    one = np.ones((2, 3))
    assert M.l2r(z, z) == 0.0 and M.cos(z, z) == 1.0
    assert M.l2r(one, z) is None and M.cos(one, z) is None and M.cos(z, one) is None
    assert M.l2r(z, one) == pytest.approx(1.0)
    assert M.cos(-one, one) == pytest.approx(-1.0)
    assert M.cos(one * 3, one) == 1.0     # clipped, never above 1
    with pytest.raises(ValueError):
        M.rmse(z, np.zeros(6))


def test_labels_accuracy_confusion_and_dequantize():
    labels = np.array([0, 1, 2, 2])
    pred = np.array([0, 2, 2, 1])
    assert M.accuracy(pred, labels) == 0.5
    assert M.confusion_matrix(labels, pred, 3).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 1]]
    # argmax ties go to the lowest index
    assert M.predictions(np.array([[3, 3, 1], [0, 1, 1]])).tolist() == [0, 1]
    assert M.dequantize(np.array([-8, 2, 127]), 0.5, -8).tolist() == [0.0, 5.0, 67.5]
    assert M.is_classifier((1, 10)) and M.is_classifier((10,)) and M.is_classifier((1, 1, 1, 4))
    assert not M.is_classifier((1, 4, 4, 2)) and not M.is_classifier((1, 1))


# -- quantization exactly as the model's runtime ------------------------------------------------

TIES = np.array([0.25, -0.25, 0.75, -0.75, 1.25, -1.25, 0.0, 0.1, -0.1, 63.75, 64.25, -64.25,
                 1000.0, -1000.0, 0.2499999, 2.5, -2.5], dtype=np.float32)
#: many values near the rounding boundaries of a scale that is not a power of two: float32 vs
#: float64 division, or another rounding rule, would show in some of them
ODD_SCALE = 0.0372
NEAR = ((np.arange(-4000, 4000) / 8.0 + 0.5) * np.float32(ODD_SCALE)).astype(np.float32)


def test_half_even_is_onnxruntime_quantizelinear():
    import onnxruntime as ort
    from onnx import TensorProto, helper

    scale, zp = 0.5, 3
    g = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(TIES)])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [len(TIES)])],
        [helper.make_tensor("s", TensorProto.FLOAT, [], [scale]),
         helper.make_tensor("z", TensorProto.INT8, [], [zp])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": TIES})[0]
    got = quantize(TIES, scale, zp, "int8", HALF_EVEN)
    assert got.tolist() == want.tolist()
    g.initializer[0].CopyFrom(helper.make_tensor("s", TensorProto.FLOAT, [], [ODD_SCALE]))
    g.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(NEAR)]))
    g.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.INT8, [len(NEAR)]))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": NEAR})[0]
    assert quantize(NEAR, ODD_SCALE, zp, "int8", HALF_EVEN).tolist() == want.tolist()
    assert got[0] == 3 and got[2] == 5      # 0.5 → 0, 1.5 → 2 (+ zp 3): half to even
    assert quantize(TIES, scale, zp, "int8", HALF_AWAY)[0] == 4   # the rules do differ


def _litert_quantize(path: Path, values: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """LiteRT's QUANTIZE of `values` (one float32 row) to int8 with `scale`, `zp`."""
    from .tflite_builder import litert_run

    b = ModelBuilder()
    x = b.input("x", (1, len(values)), "float32")
    y = b.tensor("y", (1, len(values)), "int8", scale=scale, zero_point=zp)
    b.op("QUANTIZE", [x], [y])
    b.output(y)
    return np.asarray(litert_run(b.save(path), [values[None]])[y]).reshape(-1)


def test_half_away_is_litert_quantize(tmp_path):
    scale, zp = 0.5, 3
    want = _litert_quantize(tmp_path / "q.tflite", TIES, scale, zp)
    got = quantize(TIES, scale, zp, "int8", HALF_AWAY)
    assert got.tolist() == want.tolist()
    want = _litert_quantize(tmp_path / "q_odd.tflite", NEAR, ODD_SCALE, zp)
    assert quantize(NEAR, ODD_SCALE, zp, "int8", HALF_AWAY).tolist() == want.tolist()
    assert got[0] == 4 and got[1] == 2      # ±0.5 → ±1 (+ zp 3): half away from zero


# -- reading and interpreting the user's arrays --------------------------------------------------

@pytest.fixture(scope="module")
def example_specs():
    g = load_model(EXAMPLE_ONNX)
    lg = lower(g)
    return input_spec(g, lg), output_spec(g, lg)


def test_every_layout_and_dtype_gives_the_same_inputs(example_specs, tmp_path):
    ispec, _ = example_specs
    rng = np.random.default_rng(5)
    q_nhwc = rng.integers(-128, 128, (4, 32, 32, 3)).astype(np.int8)
    q_nchw = q_nhwc.transpose(0, 3, 1, 2)
    floats_nchw = (q_nchw.astype(np.float32) * np.float32(ispec.scale))
    cases = {
        "nchw_int8": q_nchw, "nchw_batch_int64": q_nchw[:, None].astype(np.int64),
        "nhwc_int8": q_nhwc, "nhwc_batch_int16": q_nhwc[:, None].astype(np.int16),
        "nchw_float32": floats_nchw, "nhwc_float64": floats_nchw.transpose(0, 2, 3, 1).astype(np.float64),
    }
    for name, arr in cases.items():
        np.save(tmp_path / f"{name}.npy", arr)
        got, desc = to_ir(read_array(tmp_path / f"{name}.npy", "inputs"), ispec, "inputs")
        assert got.dtype == np.int8 and np.array_equal(got.reshape(4, 32, 32, 3), q_nhwc), name
        assert desc["count"] == 4 and ("NCHW" in desc["layout"]) == ("nchw" in name), (name, desc)
    # an .npz with several arrays: the one named like the model input; a directory of .npy
    np.savez(tmp_path / "multi.npz", input=q_nchw, other=np.zeros(3))
    got = to_ir(read_array(tmp_path / "multi.npz", "inputs", ispec.names), ispec, "inputs")[0]
    assert got.shape == (4, 1, 32, 32, 3) and np.array_equal(got[:, 0], q_nhwc)
    (tmp_path / "dir").mkdir()
    for i in range(4):
        np.save(tmp_path / "dir" / f"img_{i:02d}.npy", q_nchw[i])
    (tmp_path / "dir" / "notes.txt").write_text("ignored")
    assert np.array_equal(to_ir(read_array(tmp_path / "dir", "inputs"), ispec, "inputs")[0][:, 0], q_nhwc)


def test_ambiguous_layout_takes_the_models_unless_told(tmp_path):
    from tilewise.validate.data import EdgeSpec

    spec = EdgeSpec(("x",), (1, 3, 3, 3), (1, 3, 3, 3), (0, 2, 3, 1), "int8", 0.1, 0, HALF_EVEN, "NCHW")
    arr = np.arange(54, dtype=np.int8).reshape(2, 3, 3, 3)
    np.save(tmp_path / "a.npy", arr)
    auto, desc = to_ir(read_array(tmp_path / "a.npy", "inputs"), spec, "inputs")
    assert np.array_equal(auto[:, 0], arr.transpose(0, 2, 3, 1)) and "NCHW" in desc["layout"]
    nhwc, _ = to_ir(read_array(tmp_path / "a.npy", "inputs"), spec, "inputs", layout="nhwc")
    assert np.array_equal(nhwc[:, 0], arr)


# -- every malformed case: one sentence naming the file, exit 2 ---------------------------------

def _bad_cases(tmp_path):
    rng = np.random.default_rng(0)
    good = rng.uniform(-1, 1, (3, 3, 32, 32)).astype(np.float32)
    p = tmp_path
    np.save(p / "good.npy", good)
    np.save(p / "shape.npy", good[:, :, :16])
    np.save(p / "rank.npy", good[0, 0])
    np.save(p / "range.npy", np.full((3, 3, 32, 32), 200, np.int16))
    nan = good.copy()
    nan[1, 2, 3, 4] = np.nan
    np.save(p / "nan.npy", nan)
    np.save(p / "inf.npy", np.where(good > 0.9, np.inf, good).astype(np.float32))
    np.save(p / "empty.npy", np.zeros((0, 3, 32, 32), np.float32))
    np.save(p / "strings.npy", np.array(["a", "b"]))
    (p / "garbage.npy").write_bytes(b"not a numpy file")
    (p / "garbage.npz").write_bytes(b"PK not a zip")
    (p / "image.png").write_bytes(b"\x89PNG")
    np.savez(p / "multi.npz", a=good, b=good)
    np.savez(p / "none.npz")
    (p / "emptydir").mkdir()
    (p / "mixdir").mkdir()
    np.save(p / "mixdir" / "0.npy", good[0])
    np.save(p / "mixdir" / "1.npy", good[0, :, :16])
    np.save(p / "exp4.npy", np.zeros((4, 10), np.float32))
    np.save(p / "exp_shape.npy", np.zeros((3, 9), np.float32))
    np.save(p / "exp_range.npy", np.full((3, 10), 300, np.int32))
    np.save(p / "lab4.npy", np.zeros(4, np.int64))
    np.save(p / "lab_float.npy", np.zeros(3, np.float32))
    np.save(p / "lab_range.npy", np.array([0, 10, 2]))
    np.save(p / "lab_shape.npy", np.zeros((3, 2), np.int64))
    g = str(p / "good.npy")
    return [
        (["--data", str(p / "shape.npy")], "shape.npy", "wrong shape"),
        (["--data", str(p / "rank.npy")], "rank.npy", "wrong rank"),
        (["--data", str(p / "range.npy")], "range.npy", "outside the int8 range"),
        (["--data", str(p / "nan.npy")], "nan.npy", "NaN"),
        (["--data", str(p / "inf.npy")], "inf.npy", "infinite"),
        (["--data", str(p / "empty.npy")], "empty.npy", "empty"),
        (["--data", str(p / "strings.npy")], "strings.npy", "neither integers nor floats"),
        (["--data", str(p / "garbage.npy")], "garbage.npy", "cannot read"),
        (["--data", str(p / "garbage.npz")], "garbage.npz", "cannot read"),
        (["--data", str(p / "image.png")], "image.png", ".npy, .npz or a directory"),
        (["--data", str(p / "missing.npy")], "missing.npy", "no such file"),
        (["--data", str(p / "multi.npz")], "multi.npz", "several arrays (a, b)"),
        (["--data", str(p / "none.npz")], "none.npz", "no arrays"),
        (["--data", str(p / "emptydir")], "emptydir", "no .npy files"),
        (["--data", str(p / "mixdir")], "1.npy", "differs from"),
        (["--data", g, "--expected", str(p / "exp4.npy")], "exp4.npy", "4 expected outputs for 3 inputs"),
        (["--data", g, "--expected", str(p / "exp_shape.npy")], "exp_shape.npy", "wrong shape"),
        (["--data", g, "--expected", str(p / "exp_range.npy")], "exp_range.npy", "outside the int8 range"),
        (["--data", g, "--labels", str(p / "lab4.npy")], "lab4.npy", "4 labels for 3 inputs"),
        (["--data", g, "--labels", str(p / "lab_float.npy")], "lab_float.npy", "not integers"),
        (["--data", g, "--labels", str(p / "lab_range.npy")], "lab_range.npy", "outside the model's 10 classes"),
        (["--data", g, "--labels", str(p / "lab_shape.npy")], "lab_shape.npy", "one integer class per input"),
        (["--expected", str(p / "exp4.npy")], "--expected", "need --data"),
        (["--labels", str(p / "lab4.npy"), "--layer-csv", str(p / "x.csv")], "--labels, --layer-csv", "need --data"),
        (["--data", g, "--layer-csv", str(p / "x.csv"), "--on", "gvsoc"], "--layer-csv", "host build"),
    ]


def test_every_malformed_case_is_one_sentence_exit_2(tmp_path, capsys):
    for extra, names, says in _bad_cases(tmp_path):
        code = cli_main(["validate", str(EXAMPLE_ONNX), "--target", "gap8", *extra])
        err = capsys.readouterr().err.strip()
        assert code == 2, (extra, err)
        assert err.startswith("tilewise: error: ") and "\n" not in err and "Traceback" not in err, err
        assert names in err and says in err, (extra, err)


# -- the bundled example end to end --------------------------------------------------------------

def _ort_reference(x_nchw: np.ndarray) -> np.ndarray:
    """onnxruntime's logits of the quantized example fed the float inputs directly (its own
    QuantizeLinear quantizes them): what the C must equal, dequantized."""
    import onnxruntime as ort

    s = ort.InferenceSession(str(EXAMPLE_ONNX), providers=["CPUExecutionProvider"])
    return np.concatenate([s.run(None, {"input": x[None]})[0] for x in x_nchw]).astype(np.float64)


def test_example_data_files_are_what_the_generator_writes():
    x, y, labels = example_data()
    with np.load(EX_IN) as z:
        assert list(z.keys()) == ["input"] and np.array_equal(z["input"], x)
    # the float logits are onnxruntime's float kernels, whose last bits differ between CPUs (AVX2
    # and AVX-512 sum in other orders): equal to float32 rounding, not bit for bit
    np.testing.assert_allclose(np.load(EX_EXP), y, rtol=1e-5, atol=1e-5)
    assert np.array_equal(np.load(EX_LAB), labels)
    assert x.shape == (32, 3, 32, 32) and len(set(labels.tolist())) >= 3
    assert sum(f.stat().st_size for f in (EX_IN, EX_EXP, EX_LAB)) < 20_000


def test_bundled_example_end_to_end(tmp_path, capsys):
    out = tmp_path / "proj"
    args = ["validate", str(EXAMPLE_ONNX), "--target", "gap8", "--data", str(EX_IN),
            "--expected", str(EX_EXP), "--labels", str(EX_LAB), "-o", str(out),
            "--layer-csv", str(tmp_path / "extra" / "layers.csv"),
            "--metrics-csv", str(tmp_path / "m.csv")]
    assert cli_main(args + ["--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    m = r["metrics"]
    assert r["bit_exact"] and r["inputs"] == 32 and r["golden_vs_reference"] == 0
    assert m["inputs"] == 32 and m["data"]["layout"].startswith("NCHW")
    assert m["data"]["rounding"] == HALF_EVEN and m["output"]["classes"] == 10

    with np.load(EX_IN) as z:
        x = z["input"]
    expected, labels = np.load(EX_EXP).astype(np.float64), np.load(EX_LAB)
    ref = _ort_reference(x)      # float logits of the quantized model = dequantized int8
    vr = m["vs_reference"]
    assert vr["against"] == "onnxruntime" and vr["rmse"] == 0 and vr["mae"] == 0
    assert vr["l2r"] == 0 and vr["cos"] == pytest.approx(1.0) and vr["acc"] == 1.0 and vr["elements"] == 320
    ve = m["vs_expected"]
    d = ref - expected
    assert ve["rmse"] == pytest.approx(np.sqrt(np.mean(d ** 2)), rel=1e-6)
    assert ve["mae"] == pytest.approx(np.mean(np.abs(d)), rel=1e-6)
    assert ve["l2r"] == pytest.approx(np.linalg.norm(d) / np.linalg.norm(expected), rel=1e-6)
    cos = np.dot(ref.ravel(), expected.ravel()) / np.linalg.norm(ref) / np.linalg.norm(expected)
    assert ve["cos"] == pytest.approx(cos, rel=1e-6)
    agree = float(np.mean(ref.argmax(1) == expected.argmax(1)))
    assert ve["acc"] == agree and 0 < ve["rmse"] and ve["mismatched_elements"] is None
    lab = m["labels"]
    assert lab["accuracy"] == pytest.approx(np.mean(ref.argmax(1) == labels))
    assert lab["accuracy_reference"] == lab["accuracy"] and lab["correct"] == round(32 * lab["accuracy"])
    conf = np.array(lab["confusion"])
    assert conf.shape == (10, 10) and conf.sum() == 32 and np.trace(conf) == lab["correct"]
    assert conf.sum(axis=1).tolist() == np.bincount(labels, minlength=10).tolist()

    # the CSVs: into the project (-o) and where --layer-csv / --metrics-csv say
    assert sorted(m["layer_csv"]) == sorted([str(out / "layer_errors.csv"), str(tmp_path / "extra" / "layers.csv")])
    assert sorted(m["metrics_csv"]) == sorted([str(out / "metrics.csv"), str(tmp_path / "m.csv")])
    layers = list(csv.DictReader((out / "layer_errors.csv").open()))
    manifest = json.loads((out / "tilewise.json").read_text())
    assert [row["name"] for row in layers] == [e["name"] for e in manifest["layers"]]
    assert all(row["mismatches"] == "0" and float(row["cos"]) == pytest.approx(1.0) and float(row["rmse"]) == 0
               for row in layers)
    assert int(layers[0]["elements"]) == 32 * 16 * 16 * 16
    rows = {row["comparison"]: row for row in csv.DictReader((tmp_path / "m.csv").open())}
    assert set(rows) == {"C vs reference", "C vs expected", "C vs labels", "reference vs labels"}
    assert float(rows["C vs expected"]["rmse"]) == pytest.approx(ve["rmse"])

    # the text report carries the same numbers (no -o, no CSVs: the dump build is not needed)
    assert cli_main(args[:10]) == 0
    text = capsys.readouterr().out
    assert "C vs onnxruntime" in text and "C vs expected" in text and f"({lab['correct']}/32)" in text
    assert "confusion:" in text and f"{100 * ve['acc']:.2f}%" in text


def _example_inputs_and_codes(tmp_path, n: int) -> np.ndarray:
    """The first n bundled example inputs saved as x.npy, and onnxruntime's output codes of the
    quantized example on them (int64, what the C must give)."""
    with np.load(EX_IN) as z:
        x = z["input"][:n]
    np.save(tmp_path / "x.npy", x)
    oe = load_model(EXAMPLE_ONNX).meta["onnx_outputs"][0]
    return np.rint(_ort_reference(x) / np.float32(oe["scale"])).astype(np.int64) + oe["zero_point"]


def test_integer_expected_outputs_are_compared_bit_for_bit(tmp_path, capsys):
    q = _example_inputs_and_codes(tmp_path, 6)
    np.save(tmp_path / "q.npy", q.astype(np.int8))
    base = ["validate", str(EXAMPLE_ONNX), "--target", "gap8", "--data", str(tmp_path / "x.npy"),
            "--json"]
    assert cli_main(base + ["--expected", str(tmp_path / "q.npy")]) == 0
    ve = json.loads(capsys.readouterr().out)["metrics"]["vs_expected"]
    assert ve["mismatched_elements"] == 0 and ve["rmse"] == 0 and ve["dtype"] == "int8"
    q[4, 3] += 1
    np.save(tmp_path / "q_bad.npy", q[:, None, :].astype(np.int16))   # with the batch dim, int16
    assert cli_main(base + ["--expected", str(tmp_path / "q_bad.npy")]) == 1
    r = json.loads(capsys.readouterr().out)
    assert r["metrics"]["vs_expected"]["mismatched_elements"] == 1
    assert {"kind": "output", "against": "expected", "input": 4, "elements": 1} in r["mismatches"]


def test_own_data_in_chunks_equals_one_run(tmp_path, monkeypatch):
    """--data on the host runs CHUNK inputs at a time (memory: the data plus one chunk) and the
    per-layer dump in runs of at most DUMP_BYTES: 20 inputs in chunks of 6, dumps of 2 inputs,
    give the metrics, the per-layer CSV and the mismatch numbering (an expected output changed
    at input 13, in the third chunk) of one run."""
    from tilewise.validate import layer_errors, own_data

    q = _example_inputs_and_codes(tmp_path, 20)
    q[13, 2] += 1
    np.save(tmp_path / "q.npy", q.astype(np.int8))
    np.save(tmp_path / "lab.npy", np.load(EX_LAB)[:20])
    kw = dict(expected=tmp_path / "q.npy", labels=tmp_path / "lab.npy")

    def run(tag: str):
        r = validate_data_path(EXAMPLE_ONNX, get_target("gap8"), tmp_path / "x.npy",
                               out_dir=tmp_path / tag, **kw)
        return r, list(csv.DictReader((tmp_path / tag / "layer_errors.csv").open()))

    one, one_rows = run("one")
    manifest = json.loads((tmp_path / "one" / "tilewise.json").read_text())
    per_input = sum(int(e["bytes"]) for e in manifest["layers"])
    monkeypatch.setattr(own_data, "CHUNK", 6)
    monkeypatch.setattr(layer_errors, "DUMP_BYTES", 2 * per_input)
    many, many_rows = run("many")
    assert one.inputs == many.inputs == 20
    assert [m for m in many.mismatches if m.kind == "output"] == \
        [OutputMismatch("expected", 13, 1)]
    for key in ("vs_reference", "vs_expected"):
        for k, v in one.metrics[key].items():
            assert many.metrics[key][k] == (pytest.approx(v) if isinstance(v, float) else v), (key, k)
    assert many.metrics["labels"] == one.metrics["labels"]
    assert len(one_rows) == len(many_rows) == len(manifest["layers"])
    for a, b in zip(one_rows, many_rows):
        for k in ("name", "elements", "mismatches", "max_abs_diff_q"):
            assert a[k] == b[k]
        for k in ("rmse", "mean_error", "cos"):
            assert float(a[k]) == pytest.approx(float(b[k]), abs=1e-12)


def _tflite_nchw(tmp_path):
    from .test_tflite_nchw import nchw_model

    return nchw_model().save(tmp_path / "nchw.tflite")


def test_tflite_nchw_model_in_both_layouts_and_floats(tmp_path):
    path = _tflite_nchw(tmp_path)
    g = load_model(path)
    lg = lower(g)
    ispec = input_spec(g, lg)
    assert ispec.model_shape == (1, 3, 6, 5) and ispec.ir_shape == (1, 6, 5, 3)
    assert ispec.rounding == HALF_AWAY and ispec.scale == pytest.approx(0.05)
    rng = np.random.default_rng(2)
    q_nchw = rng.integers(-128, 128, (5, 3, 6, 5)).astype(np.int8)
    np.save(tmp_path / "nchw.npy", q_nchw)
    np.save(tmp_path / "nhwc.npy", q_nchw.transpose(0, 2, 3, 1)[:, None])
    # floats whose quotients by the scale are exact halves: LiteRT's rounding decides
    f = ((q_nchw.astype(np.float64) + 3 + 0.5) * 0.05).astype(np.float32)
    np.save(tmp_path / "floats.npy", f)
    target = get_target("gap8")
    reports = {}
    for name in ("nchw", "nhwc", "floats"):
        # -o for the first only (it adds the per-layer dump build)
        r = validate_data_path(path, target, tmp_path / f"{name}.npy",   # $TILEWISE_CC_CACHE
                               out_dir=tmp_path / name if name == "nchw" else None,
                               metrics_csv=tmp_path / f"{name}.csv")
        assert r.bit_exact and r.golden_vs_reference == 0, r.mismatches
        reports[name] = r.metrics
    assert "NCHW" in reports["nchw"]["data"]["layout"] and reports["nhwc"]["data"]["layout"] == "NHWC"
    assert (tmp_path / "nchw" / "layer_errors.csv").exists()
    x_nchw = np.fromfile(tmp_path / "nchw" / "run_inputs.bin", np.int8)
    assert np.array_equal(x_nchw, q_nchw.reshape(-1))     # the harness takes the model's NCHW
    # the same inputs in NHWC (with the batch dim) are read to the same IR inputs
    assert np.array_equal(to_ir(read_array(tmp_path / "nhwc.npy", "inputs"), ispec, "inputs")[0],
                          to_ir(read_array(tmp_path / "nchw.npy", "inputs"), ispec, "inputs")[0])
    assert reports["floats"]["data"]["rounding"] == HALF_AWAY
    assert reports["nchw"]["output"]["classifier"] is False and reports["nchw"]["vs_reference"]["acc"] is None


def test_without_a_reference_runtime_the_metrics_hold_against_the_golden_model(tmp_path):
    """A QuantLab model onnxruntime cannot check exactly: the C's metrics are against the golden
    model, the reference's accuracy is None; integer data in the input's [0, 255] range."""
    import onnx

    from . import quantlab_models as qm

    path = tmp_path / "wide.onnx"
    onnx.save(qm.wide_dense_net(), str(path))
    g = load_model(path)
    lg = lower(g)
    ispec = input_spec(g, lg)
    lo, hi = (0, 255) if ispec.dtype == "uint8" else (-128, 127)
    x = np.random.default_rng(4).integers(lo, hi + 1, (5, *ispec.model_shape[1:]))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "labels.npy", np.array([0, 1, 2, 3, 0]))
    r = validate_data_path(path, get_target("stm32h7"), tmp_path / "x.npy",
                           labels=tmp_path / "labels.npy")
    assert r.bit_exact and r.golden_vs_reference is None and r.reference.startswith("no reference")
    m = r.metrics
    assert m["vs_reference"]["against"] == "golden model" and m["vs_reference"]["rmse"] == 0
    assert m["labels"]["accuracy_reference"] is None and m["labels"]["classes"] == 4
    assert sum(map(sum, m["labels"]["confusion"])) == 5
