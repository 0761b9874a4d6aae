"""Issue 25 item 11: layer_errors.csv against the float model (`validate --float-model`,
validate/float_layers.py), not only against the integer golden model (all zeros on success).

The bundled example's float parent is quantized in onnx mode (stm32h7, QDQ: layer `X/q` is the
float `X`, real units from the IR's scale) and in shift mode (gap8: the IR's scales are 1, the real
units are the `tilewise.quant.<tensor>` statements quantize now writes for every activation). Each
layer's float_rmse and float_sqnr_db are recomputed here from onnxruntime directly (the quantized
model's tensors dequantized against the float model's, on the same dequantized inputs — the C is
bit-exact with them); the shift-mode figures track the onnx-mode ones (the same quantization
plan), which scale-1 codes would not. A model that is not the network's float parent, a quantized
model and an unreadable file are one sentence each, exit 2.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from tilewise.cli import main
from tilewise.examples import make_example
from tilewise.examples.make_example import HERE

from .conftest import absent, error_lines, models_dir

N = 6
#: another network's float model (the corpus's, wherever ../shared is: conftest.models_dir)
MLPERF_FLOAT = models_dir() / "mlperf_tiny_float" / "kws_dscnn_float.tflite"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("float_layers")
    fm = d / "float.onnx"
    onnx.save(make_example.float_model(), str(fm))
    with np.load(HERE / "example_inputs.npz") as z:
        x = z["input"][:N].astype(np.float32)
    np.save(d / "x.npy", x)
    out = {"float": fm, "x": d / "x.npy", "dir": d}
    for target in ("gap8", "stm32h7"):
        q = d / f"q_{target}.onnx"
        assert main(["quantize", str(fm), "--calib", str(HERE / "example_inputs.npz"), "--target",
                     target, "-o", str(q), "--quiet"]) == 0
        out[target] = q
    return out


def _run(model: onnx.ModelProto, names: list[str], feed: dict,
         elem: int = onnx.TensorProto.FLOAT) -> dict[str, np.ndarray]:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for t in names:
        if t not in have:
            m.graph.output.append(helper.make_tensor_value_info(t, elem, None))
    so = ort.SessionOptions()
    so.add_session_config_entry("session.qdqisint8allowed", "1")
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return dict(zip(names, s.run(names, feed)))


def _expected(models, target: str, layers: list[dict]) -> dict[str, tuple[float, float]]:
    """float tensor -> (rmse, sqnr dB) of the quantized model's dequantized value against the
    float model's, over the N inputs, computed from onnxruntime here."""
    q = onnx.load(str(models[target]))
    f = onnx.load(str(models["float"]))
    stated = {e.key[len("tilewise.quant."):]: tuple(e.value.split()) for e in q.metadata_props
              if e.key.startswith("tilewise.quant.")}
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in q.graph.initializer}
    names = [r["float_tensor"] for r in layers]
    x = np.load(models["x"])
    s_in, z_in = (float(stated["input"][0]), int(stated["input"][1])) if target == "gap8" else (
        None, None)
    acc = {t: [0.0, 0.0, 0] for t in names}
    for xi in x:
        if target == "gap8":   # the codes the network sees, and their real values
            codes = np.clip(np.rint(xi / s_in) + z_in, 0, 255).astype(np.float32)
            real_in = (codes - z_in) * np.float32(s_in)
            got = _run(q, names, {"input": codes[None]})
            deq = {t: (got[t].astype(np.float64) - int(stated[t][1])) * float(np.float32(stated[t][0]))
                   for t in names}
        else:
            qn = {n.output[0]: n for n in q.graph.node if n.op_type == "QuantizeLinear"}
            n_in = qn["input/q"]
            s, z = float(inits[n_in.input[1]]), int(inits[n_in.input[2]])
            codes = np.clip(np.rint(xi / np.float32(s)) + z, -128, 127)
            real_in = ((codes - z) * np.float32(s)).astype(np.float32)
            got = _run(q, [f"{t}/q" for t in names], {"input": xi[None]}, onnx.TensorProto.INT8)
            deq = {}
            for t in names:
                n = qn[f"{t}/q"]
                st, zt = float(inits[n.input[1]]), int(inits[n.input[2]])
                deq[t] = (got[f"{t}/q"].astype(np.float64) - zt) * st
        ref = _run(f, names, {"input": real_in[None].astype(np.float32)})
        for t in names:
            d = deq[t] - ref[t].astype(np.float64)
            acc[t][0] += float((d * d).sum())
            acc[t][1] += float((ref[t].astype(np.float64) ** 2).sum())
            acc[t][2] += d.size
    return {t: (np.sqrt(a / n), 10 * np.log10(p / a)) for t, (a, p, n) in acc.items()}


def _validate(models, target, capsys, tmp_path):
    capsys.readouterr()
    csv_path = tmp_path / f"{target}.csv"
    rc = main(["validate", str(models[target]), "--target", target, "--data", str(models["x"]),
               "--float-model", str(models["float"]), "--layer-csv", str(csv_path), "--json",
               "--quiet"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out), list(csv.DictReader(csv_path.open()))


def test_layer_csv_compares_every_layer_with_the_float_model(models, capsys, tmp_path):
    per_target = {}
    for target in ("stm32h7", "gap8"):
        r, rows = _validate(models, target, capsys, tmp_path)
        assert r["bit_exact"]
        fm = r["metrics"]["float_model"]
        assert fm["file"] == str(models["float"]) and len(fm["layers"]) == len(rows) == 8
        # the integer comparison is still there, all zeros; the float one is not
        assert all(row["mismatches"] == "0" and float(row["rmse"]) == 0 for row in rows)
        names = [row["float_tensor"] for row in rows]
        assert names == ["conv1.relu", "dw2.relu", "pw2", "res2.relu", "pool2", "conv3.relu",
                         "gap", "logits"]
        want = _expected(models, target, fm["layers"])
        for row, js in zip(rows, fm["layers"]):
            rmse, db = want[row["float_tensor"]]
            assert float(row["float_rmse"]) == pytest.approx(rmse, rel=1e-4) == js["float_rmse"]
            assert float(row["float_sqnr_db"]) == pytest.approx(db, abs=1e-3)
            assert 0.99 < float(row["float_cos"]) < 1.0 and 20 < db < 60
        per_target[target] = [float(row["float_sqnr_db"]) for row in rows]
    # the same plan in both modes: per-layer SQNR within a dB (scale-1 codes would be far off)
    assert np.allclose(per_target["gap8"], per_target["stm32h7"], atol=1.0), per_target


def _error(args, capsys) -> str:
    capsys.readouterr()
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err and len(error_lines(err)) == 1, err
    return err


def test_a_float_model_that_is_not_the_parent_is_one_sentence(models, capsys, tmp_path):
    base = ["validate", str(models["stm32h7"]), "--target", "stm32h7", "--data", str(models["x"]),
            "--float-model"]
    junk = tmp_path / "junk.onnx"
    junk.write_text("not a model")
    if not MLPERF_FLOAT.exists():
        absent(f"the float MLPerf Tiny model is not at {MLPERF_FLOAT} (set TILEWISE_MODELS)")
    cases = [(str(MLPERF_FLOAT), "none of the network's"),          # another network
             (str(models["stm32h7"]), "quantized"),                # the quantized model itself
             (str(junk), "cannot read"), (str(tmp_path / "no.onnx"), "no such file"),
             (str(models["x"]), "'.npy'")]
    for path, words in cases:
        err = _error(base + [path], capsys)
        assert f"--float-model {path}" in err and words in err, err
    err = _error(["validate", str(models["stm32h7"]), "--target", "stm32h7", "--float-model",
                  str(models["float"])], capsys)
    assert "--float-model" in err and "--data" in err
