"""`tilewise quantize --target gap9` (the shift-mode integer model, tilewise/quantize/shift_out.py)
against the onnx-mode QDQ model on the digits CNN and the MLPerf Tiny float parents:
`python bench/quantize_shift.py [--validate]`.

Digits: the CNN of bench/digits.py (seeded), calibrated on 200 training images,
accuracy and output SQNR vs float on the 400 held-out ones; rows "digits_cnn w…": the same shift
model with sub-byte weights (activations 8-bit; `--bits 4|2|mixed --target gap9`): uniform 4 and
2 bits and mixed.py's assignments under 0.6 and 0.45 of the int8 weight bytes, with accuracy,
packed weight bytes and (--validate) the NE16 bindings that run them. MLPerf Tiny: the realistic
inputs of bench/quantize_mlperf.py (bench/mlperf_inputs.py: calibration 100, evaluation
200), minmax calibration, output SQNR vs float of the onnx-mode model, the shift model and the
official int8 .tflite; a model the shift writer does not take gets its one-sentence reason instead. With --validate each
shift model is validated bit-exact (host, 4 random inputs) on gap9 as partitioned, on gap9 with NE16 forced onto every
layer its norm-quant takes, and on pulp-open, with the layers NE16 requantized itself counted.
Writes bench/quantize_shift.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from quantize_mlperf import MODELS, load  # noqa: E402

from bench import digits, mlperf_inputs  # noqa: E402
from bench.models import models_dir  # noqa: E402
from tilewise.errors import TilewiseError  # noqa: E402
from tilewise.quantize.mixed import assign  # noqa: E402
from tilewise.quantize.pipeline import calibration_values, quantize_model, quantize_shift, sqnr_json  # noqa: E402
from tilewise.quantize.shift_out import run_dequantized, shift_report, weight_bytes  # noqa: E402
from tilewise.quantize.sqnr import run_all, session  # noqa: E402

HERE = Path(__file__).resolve().parent


def _ne16_norm_quant_only():
    """gap9 with the cluster and cpu refusing what NE16's norm-quant takes, and NE16's
    cluster-requantized shift bindings left out (tests/test_ne16.py `_ne16_forced`)."""
    from tilewise.bindings.ne16 import checks, normquant
    from tilewise.targets.registry import get_target

    def refusing(b):
        def check(layer, lg):
            if (b.key.op in ("conv2d", "depthwise", "fully_connected")
                    and checks.ne16(layer, lg) is None and normquant.reason(layer, lg) is None):
                return "forced onto NE16"
            return b.check(layer, lg)
        return replace(b, check=check)

    t = get_target("gap9")
    return replace(t, modules=tuple(
        replace(m, bindings=tuple(b for b in m.bindings if not b.name.endswith("_shift")))
        if m.name == "ne16" else replace(m, bindings=tuple(refusing(b) for b in m.bindings))
        for m in t.modules))


def _validate(model: onnx.ModelProto, name: str) -> dict:
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save(model, str(path))
        graph = load_model(path)
        lg = lower(graph)
        for key, t in (("gap9", get_target("gap9")), ("gap9_ne16", _ne16_norm_quant_only()),
                       ("pulp-open", get_target("pulp-open"))):
            ns = schedule_network(lg, t, "model")
            labels = [ns.placement(i).binding.label for i in range(len(ns.layers.layers))]
            r = validate_model(path, ns, graph, 4, 0, Path(tmp) / key).to_json()
            out[key] = {"bit_exact": r["bit_exact"], "reference": r["reference"],
                        "golden_vs_reference": r["golden_vs_reference"],
                        "ne16_norm_quant_layers": sum(lb.startswith("ne16/") and "_nq" in lb
                                                      for lb in labels),
                        "layers": len(labels)}
            if key == "gap9":
                out[key]["bindings"] = labels
    return out


def digits_row(validate: bool) -> dict:
    data = digits.load()
    fm = digits.to_onnx(digits.train(data))
    calib = data.x_train[:200]

    def acc(logits) -> float:
        return round(float(np.mean(np.concatenate(logits).argmax(axis=1) == data.y_eval)), 4)

    res = quantize_model(fm, calib)
    sm = quantize_shift(fm, calib)
    row = {"model": "digits_cnn",
           "accuracy_float": acc(run_all(session(fm), "input", data.x_eval, ["logits"])["logits"]),
           "accuracy_onnx": acc(run_all(session(res.model), "input", data.x_eval, ["logits"])["logits"]),
           "accuracy_shift": acc(run_dequantized(sm, data.x_eval)["logits"]),
           "sqnr_onnx": sqnr_json(fm, res, data.x_eval)["outputs"][0]["sqnr_db"],
           "sqnr_shift": shift_report(fm, sm, data.x_eval)["outputs"][0]["sqnr_db"],
           "shifts": [x.shift for x in sm.layers]}
    if validate:
        row["validate"] = _validate(sm.model, "digits_shift")
    rows = [row]
    p, values = calibration_values(fm, calib)
    for what, w_bits in [("w4", {n: 4 for n in ("conv0", "conv1", "fc")}),
                         ("w2", {n: 2 for n in ("conv0", "conv1", "fc")})] + \
            [(f"mixed {b}", dict(assign(fm, p, values, calib, b).bits)) for b in ("0.6", "0.45")]:
        sub = quantize_shift(fm, calib, w_bits=w_bits)
        r = {"model": f"digits_cnn {what}", "w_bits": w_bits,
             "accuracy_shift": acc(run_dequantized(sub, data.x_eval)["logits"]),
             "sqnr_shift": shift_report(fm, sub, data.x_eval)["outputs"][0]["sqnr_db"],
             "weight_bytes": weight_bytes(sub), "int8_weight_bytes": weight_bytes(sm)}
        if validate:
            r["validate"] = _validate(sub.model, f"digits_{what.replace(' ', '_')}")
        rows.append(r)
    return rows


def mlperf_row(name: str, models_dir: Path, validate: bool) -> dict:
    model, calib, evals, official, _ = load(name, models_dir)
    res = quantize_model(model, calib)
    rep = sqnr_json(model, res, evals, official)
    row: dict = {"model": name, "sqnr_onnx": rep["outputs"][0]["sqnr_db"],
                 "sqnr_official": rep["compare"]["outputs"][0]["sqnr_db"]}
    try:
        sm = quantize_shift(model, calib)
    except TilewiseError as e:
        row["shift_refused"] = str(e)
        return row
    row["sqnr_shift"] = shift_report(model, sm, evals)["outputs"][0]["sqnr_db"]
    row["shifts"] = [x.shift for x in sm.layers]
    row["coarsened_channels"] = sum(x.coarse_channels for x in sm.layers)
    if validate:
        row["validate"] = _validate(sm.model, f"{name}_shift")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS), help="MLPerf models ('' for digits only)")
    ap.add_argument("--models-dir", default=str(models_dir()))
    ap.add_argument("--validate", action="store_true")
    a = ap.parse_args()
    rows = digits_row(a.validate) + [mlperf_row(n, Path(a.models_dir), a.validate)
                                     for n in a.models.split(",") if n]
    for r in rows:
        print(json.dumps(r))
    (HERE / "quantize_shift.json").write_text(json.dumps({
        "inputs": "digits: 200 calibration / 400 held-out images; MLPerf: bench/mlperf_inputs.py "
                  f"(calibration {mlperf_inputs.N_CALIB}, evaluation {mlperf_inputs.N_EVAL})", "rows": rows},
        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
