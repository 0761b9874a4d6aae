"""`tilewise quantize` on the four MLPerf Tiny float parents against their official int8 models
(issue 15's first acceptance line): `python bench/quantize_mlperf.py [--models a,b] [--validate] [--spread N]`.

Inputs (bench/mlperf_inputs.py): realistic inputs made from data that installs with
the dev dependencies — crops of real photographs for the image models, espeak-ng speech through
MLPerf's MFCC front end for KWS, synthetic machine sounds through the DCASE log-mel front end for
the autoencoder; calibration 100 inputs (seed 1501), evaluation 200 others (seed 1502).

Per model: every calibration method (minmax, percentile, mse) quantizes on the calibration inputs;
``auto`` keeps the one with the best output SQNR on the CALIBRATION inputs (pipeline.choose_method);
the table gives each method's output SQNR vs float on the 200 evaluation inputs, the auto choice,
and the official int8 .tflite's SQNR (LiteRT BUILTIN_REF) on the same 200 inputs. With --validate,
the chosen model is validated bit-exact on stm32h7 (`validate_path`, 5 random inputs).
--spread N: ours − official on N more sets of 200 evaluation inputs (min / mean / max), to show
how much of the margin is the draw of the 200. Columns tflite8 / tflite16x8: the same method
written as TFLite (quantize/tflite_out.py, `-o X.tflite`) with --bits 8 and --bits 16 (int16
activations, int8 weights), SQNR from LiteRT BUILTIN_REF on the written file; with --validate both
are validated on stm32h7 (bit_exact_tflite8 / bit_exact_16x8). Column sqnr_shift: the shift-mode integer model of the
PULP / NE16 / DIANA targets (`--target gap9`, tilewise/quantize/shift_out.py) with the same method, on
the same 200 inputs; with --validate it is validated bit-exact on gap9 as partitioned (NE16 runs
the layers the partition gives it; "ne16_layers" counts them) and on pulp-open (5 random inputs).
sqnr_logits_onnx / sqnr_logits_shift: for the models ending in a Softmax, the SQNR of the logits
(the last integer tensor; the shift model keeps the Softmax in float on them): equal to ~0.1 dB,
while the Softmax output of the onnx-mode model is quantized to int8 steps of 1/256 whose
saturation at 255/256 hides the error of confident predictions, which the float tail keeps.
Writes bench/quantize_mlperf.json (--update: merges into its rows).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import mlperf_inputs  # noqa: E402
from bench.models import models_dir  # noqa: E402
from tilewise.quantize.pipeline import (  # noqa: E402
    AUTO,
    METHODS,
    calibration_inputs,
    load_float_onnx,
    quantize_model,
    quantize_shift,
    sqnr_json,
)
from tilewise.quantize.shift_out import shift_report  # noqa: E402
from tilewise.quantize.sqnr import tflite_outputs  # noqa: E402
from tilewise.quantize.tflite_out import tflite_report, write_tflite  # noqa: E402

HERE = Path(__file__).resolve().parent
MODELS = mlperf_inputs.MODELS


SPREAD_SEED = 2001   # --spread N: evaluation sets of 200 with seeds 2001 .. 2000+N


def load(name: str, models_dir: Path):
    """(float model as ONNX, calibration inputs, evaluation inputs, the official int8 model's
    outputs on them, its path) of MLPerf model `name` on the realistic inputs (mlperf_inputs)."""
    ipath = models_dir / "mlperf_tiny" / f"{name}.tflite"
    model = load_float_onnx(models_dir / "mlperf_tiny_float" / f"{name}_float.tflite")
    calib_raw, eval_raw = mlperf_inputs.split(name)
    calib = calibration_inputs(model, calib_raw, "calib", nhwc=True)
    evals = calibration_inputs(model, eval_raw, "eval", nhwc=True)
    return model, calib, evals, tflite_outputs(str(ipath), eval_raw), ipath


def one(name: str, models_dir: Path, validate: bool, spread: int = 0) -> dict:
    model, calib, evals, official, ipath = load(name, models_dir)
    row: dict = {"model": name}
    auto = quantize_model(model, calib, AUTO)
    row["calib_sqnr"] = {m: round(v, 3) for m, v in auto.method_sqnr.items()}
    for m in METHODS:
        res = auto if m == auto.method else quantize_model(model, calib, m)
        rep = sqnr_json(model, res, evals, official)
        row[f"sqnr_{m}"] = rep["outputs"][0]["sqnr_db"]
        row["sqnr_official"] = rep["compare"]["outputs"][0]["sqnr_db"]
    row["method"] = auto.method
    row["sqnr_ours"] = row[f"sqnr_{auto.method}"]
    row["ours_ge_official"] = row["sqnr_ours"] >= row["sqnr_official"]
    # the same method as TFLite int8 and 16x8 (int16 activations, int8 weights), run by LiteRT
    tmp = tempfile.TemporaryDirectory()
    for bits, key in ((8, "tflite8"), (16, "16x8")):
        res = auto if bits == 8 else quantize_model(model, calib, auto.method, bits=bits)
        written = write_tflite(model, res.plan, res.qparams, bits)
        path = Path(tmp.name) / f"{name}_{key}.tflite"
        path.write_bytes(written.data)
        row[f"sqnr_{key}"] = tflite_report(model, written, str(path), evals, {})["outputs"][0]["sqnr_db"]
        if validate:
            from tilewise.targets.registry import get_target
            from tilewise.validate.check import validate_path

            row[f"bit_exact_{key}"] = validate_path(path, get_target("stm32h7"), n_random=5).bit_exact
    tmp.cleanup()
    shift = quantize_shift(model, calib, auto.method)
    srep = shift_report(model, shift, evals)
    row["sqnr_shift"] = srep["outputs"][0]["sqnr_db"]
    if shift.tails:   # the logits the float Softmax reads: the last integer tensor of both models
        logits = shift.tails[0]
        orep = sqnr_json(model, auto, evals)
        row["sqnr_logits_onnx"] = next(x["sqnr_db"] for x in orep["layers"] if x["name"] == logits)
        row["sqnr_logits_shift"] = next(x["sqnr_db"] for x in srep["layers"] if x["layer"] == logits)
    if spread:   # ours − official on N more evaluation sets: how much of the margin is the draw
        diffs = []
        for seed in range(SPREAD_SEED, SPREAD_SEED + spread):
            raw = mlperf_inputs.mlperf_inputs(name, mlperf_inputs.N_EVAL, seed)
            rep = sqnr_json(model, auto, calibration_inputs(model, raw, "spread", nhwc=True),
                            tflite_outputs(str(ipath), raw))
            diffs.append(rep["outputs"][0]["sqnr_db"] - rep["compare"]["outputs"][0]["sqnr_db"])
        row["spread_ours_minus_official"] = {"sets": spread, "min": round(min(diffs), 3),
                                             "mean": round(sum(diffs) / spread, 3), "max": round(max(diffs), 3)}
    if validate:
        import onnx

        from tilewise.targets.registry import get_target
        from tilewise.validate.check import validate_path

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / f"{name}_{auto.method}.onnx"
            onnx.save(auto.model, str(out))
            row["bit_exact_stm32h7"] = validate_path(out, get_target("stm32h7"), n_random=5).bit_exact
            sout = Path(tmp) / f"{name}_shift.onnx"
            onnx.save(shift.model, str(sout))
            for t in ("gap9", "pulp-open"):
                r = validate_path(sout, get_target(t), n_random=5)
                row[f"shift_bit_exact_{t}"] = r.bit_exact
                if t == "gap9":
                    row["shift_ne16_layers"] = _ne16_layers(sout)
    return row


def _ne16_layers(path: Path) -> str:
    """'n of m': the layers of the shift model the gap9 partition puts on NE16."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target

    lg = lower(load_model(path))
    ns = schedule_network(lg, get_target("gap9"), "model")
    n = len(ns.layers.layers)          # as scheduled (a conv and its residual add fused: one)
    ne16 = sum(ns.placement(i).binding.label.startswith("ne16/") for i in range(n))
    return f"{ne16} of {n}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--models-dir", default=str(models_dir()))
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--spread", type=int, default=0, metavar="N",
                    help="also ours − official SQNR on N more evaluation sets of 200 (seeds 2001..)")
    ap.add_argument("--update", action="store_true",
                    help="merge the new figures into bench/quantize_mlperf.json's rows (keeping the "
                    "columns this run does not compute, e.g. an earlier --spread) instead of replacing it")
    a = ap.parse_args()
    rows = [one(n, Path(a.models_dir), a.validate, a.spread) for n in a.models.split(",")]
    if a.update and (HERE / "quantize_mlperf.json").exists():
        old = {r["model"]: r for r in json.loads((HERE / "quantize_mlperf.json").read_text())["rows"]}
        new = {r["model"]: r for r in rows}
        rows = [{**old.get(m, {}), **new.get(m, {})} for m in dict.fromkeys([*old, *new])]
    cols = ["model"] + [f"sqnr_{m}" for m in METHODS] + ["method", "sqnr_ours", "sqnr_official",
                                                          "ours_ge_official", "sqnr_tflite8", "sqnr_16x8", "sqnr_shift",
                                                          "sqnr_logits_onnx", "sqnr_logits_shift"] + \
        (["bit_exact_stm32h7", "bit_exact_tflite8", "bit_exact_16x8", "shift_bit_exact_gap9",
          "shift_bit_exact_pulp-open", "shift_ne16_layers"] if a.validate else []) + \
        (["spread_ours_minus_official"] if a.spread else [])
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c)) for c in cols))
    inputs = (f"bench/mlperf_inputs.py: calibration {mlperf_inputs.N_CALIB} inputs (seed "
              f"{mlperf_inputs.CALIB_SEED}), evaluation {mlperf_inputs.N_EVAL} (seed {mlperf_inputs.EVAL_SEED}); "
              f"method = the best output SQNR on the calibration inputs; SQNR in dB on the evaluation inputs")
    (HERE / "quantize_mlperf.json").write_text(json.dumps({"inputs": inputs, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
