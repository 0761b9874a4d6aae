"""Sub-byte quantization figures: `python bench/quantize_subbyte.py [--mlperf] [--validate]`.

digits CNN (bench/digits.py, trained here, seeded): int8, `--bits 4`, `--bits 2` and
`--bits mixed` at budgets 0.6 and 0.45 of the int8 weight bytes — packed weight bytes, accuracy on
the 400 held-out images of the golden model (the integer arithmetic the C runs: C == golden is
what `--validate` checks on stm32h7) and of onnxruntime's float DQ → op → Q run, the chosen bits.
With --mlperf, the four MLPerf Tiny float parents at int8 and `--bits mixed` 0.6 (calibration 100
seeded uniform[−1, 1] inputs, evaluation 200 others, as bench/quantize_mlperf.py): output SQNR vs
float on the evaluation inputs and weight bytes. Writes bench/quantize_subbyte.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import digits  # noqa: E402
from bench.models import models_dir  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.golden.run import run_graph  # noqa: E402
from tilewise.quantize.mixed import quantize_mixed, weight_elems  # noqa: E402
from tilewise.quantize.pipeline import (  # noqa: E402
    calibration_inputs,
    calibration_values,
    load_float_onnx,
    quantize_values,
    sqnr_json,
    uniform_widths,
)
from tilewise.quantize.sqnr import run_all, session  # noqa: E402

HERE = Path(__file__).resolve().parent
MODELS = ("ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025")


def _weight_bytes(model: onnx.ModelProto, fm: onnx.ModelProto) -> int:
    bits = {8: 8, 4: 4, 2: 2}
    types = {onnx.TensorProto.INT8: 8, onnx.TensorProto.INT4: 4, onnx.TensorProto.INT2: 2}
    inits = {t.name: types.get(t.data_type) for t in model.graph.initializer}
    return sum(-(-n * bits[inits[f"{k}/weight/q"]] // 8) for k, n in weight_elems(fm).items())


def _golden_accuracy(model: onnx.ModelProto, x: np.ndarray, y: np.ndarray) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.onnx"
        onnx.save(model, str(path))
        g = load_model(path)
    q = g.tensors[g.inputs[0]].quant
    xq = np.clip(np.rint(x.transpose(0, 2, 3, 1) / q.scale[0]) + q.zp, -128, 127).astype(np.int8)
    logits = np.stack([run_graph(g, [v[None]])[g.outputs[0]].reshape(-1) for v in xq])
    return float(np.mean(logits.argmax(axis=1) == y))


def _validate(model: onnx.ModelProto, name: str) -> bool:
    from tilewise.targets.registry import get_target
    from tilewise.validate.check import validate_path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save(model, str(path))
        return validate_path(path, get_target("stm32h7"), n_random=5).bit_exact


def digits_rows(validate: bool) -> list[dict]:
    data = digits.load()
    fm = digits.to_onnx(digits.train(data))
    calib = data.x_train[:200]
    p, values = calibration_values(fm, calib)
    runs = [("int8", quantize_values(fm, p, values), None),
            ("bits 4", quantize_values(fm, p, values, widths=uniform_widths(fm, 4)), None),
            ("bits 2", quantize_values(fm, p, values, widths=uniform_widths(fm, 2)), None)]
    for budget in ("0.6", "0.45"):
        res, a = quantize_mixed(fm, p, values, calib, budget)
        runs.append((f"mixed {budget}", res, dict(a.bits)))
    rows = []
    for label, res, bits in runs:
        out = run_all(session(res.model), "input", data.x_eval, ["logits"])["logits"]
        row = {"model": "digits", "run": label, "weight_bytes": _weight_bytes(res.model, fm),
               "golden_accuracy": _golden_accuracy(res.model, data.x_eval, data.y_eval),
               "ort_float_path_accuracy": float(np.mean(np.concatenate(out).argmax(axis=1) == data.y_eval)),
               "bits": bits}
        if validate:
            row["bit_exact_stm32h7"] = _validate(res.model, label.replace(" ", "_"))
        rows.append(row)
    return rows


def mlperf_rows(models_dir: Path, validate: bool) -> list[dict]:
    from ai_edge_litert.interpreter import Interpreter

    rows = []
    for name in MODELS:
        fpath = models_dir / "mlperf_tiny_float" / f"{name}_float.tflite"
        fm = load_float_onnx(fpath)
        shape = tuple(Interpreter(model_path=str(fpath)).get_input_details()[0]["shape"][1:])
        calib = calibration_inputs(fm, np.random.default_rng(1).uniform(-1, 1, (100,) + shape).astype(np.float32),
                                   "calib", nhwc=True)
        evals = calibration_inputs(fm, np.random.default_rng(2).uniform(-1, 1, (200,) + shape).astype(np.float32),
                                   "eval", nhwc=True)
        p, values = calibration_values(fm, calib)
        res8 = quantize_values(fm, p, values)
        resm, a = quantize_mixed(fm, p, values, calib, "0.6")
        for label, res, bits in (("int8", res8, None), ("mixed 0.6", resm, dict(a.bits))):
            row = {"model": name, "run": label, "weight_bytes": _weight_bytes(res.model, fm),
                   "sqnr_db": sqnr_json(fm, res, evals)["outputs"][0]["sqnr_db"],
                   "bits": None if bits is None else {b: sum(v == b for v in bits.values()) for b in (8, 4, 2)}}
            if validate:
                row["bit_exact_stm32h7"] = _validate(res.model, f"{name}_{label.replace(' ', '_')}")
            rows.append(row)
            print(row, flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlperf", action="store_true")
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--models-dir", default=str(models_dir()))
    a = ap.parse_args()
    rows = digits_rows(a.validate)
    for r in rows:
        print(r, flush=True)
    if a.mlperf:
        rows += mlperf_rows(Path(a.models_dir), a.validate)
    (HERE / "quantize_subbyte.json").write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
