"""Table 9 — DIANA: tilewise's predicted latency of the four MLPerf Tiny models on the diana
target with the host core only and with the digital accelerator + host, next to MATCH's, HTVM's
and plain TVM's figures on DIANA silicon (seed 003 Table III, 260 MHz).

Predicted, not measured: no DIANA and no DIANA simulator is at hand. Two forms of each network:
- TFLite file: the official int8 .tflite as is. The digital core is priced by MATCH's DIANA
  digital model plus the host's job set-up and the host's requantization of the core's int32
  outputs (bindings/diana_digital/cost.py; the int32 output is a decision,
  bindings/diana_digital/arith.py): TFLite's per-channel requantization is not the core's
  shift-only form. The host runs the adds, pools, softmax and DS-CNN's 10×4 first conv.
- diana form: the float parent (mlperf_tiny_float) quantized as `tilewise quantize --target
  diana` writes it (quantize/shift_out.py power-of-two form: k = 1, one shift and one weight
  scale per layer, the residual Adds on one scale, ResNet-8's 8×8 global pool as 2×2-sum stages;
  calibrated on bench/mlperf_inputs.py's 100 calibration inputs, minmax), as MATCH's and HTVM's
  networks are quantized for DIANA: the core requantizes every conv / depthwise / dense layer
  and the residual adds itself (*_rq, add_s8_rq), the host only what the core refuses (DS-CNN's
  10×4 conv and 25×5 pool). Its numerics are its own: "SQNR" is its output SQNR vs the float
  model on the 200 evaluation inputs, next to the official int8 model's on the same inputs.
Every configuration is bit-exact on the host (tests/test_diana.py, tests/test_quantize_shift.py).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import onnx

from . import models, published, scheduling
from .tables import Table

#: module sets of the diana target (seed 003 Table III's DIANA columns: TVM on the host, the
#: digital accelerator with the host)
CONFIGS = (("CPU only", ("cpu",)), ("digital+CPU", ("digital", "cpu")))
NATIVE = "digital+CPU, diana form"


def native_form(name: str) -> tuple[Path, dict]:
    """The diana-form model of `name` written to a temporary file (deleted with the process's
    temporary directory) and its output SQNRs vs float on the evaluation inputs."""
    from bench.quantize_mlperf import load
    from tilewise.quantize.pipeline import quantize_shift
    from tilewise.quantize.shift_out import shift_json

    model, calib, evals, official, _ = load(name, models.models_dir())
    sm = quantize_shift(model, calib, pow2=True)
    rep = shift_json(sm, model, evals, official)["sqnr"]
    path = Path(tempfile.mkdtemp(prefix="tilewise_diana_")) / f"{name}_diana.onnx"
    onnx.save(sm.model, str(path))
    return path, {"sqnr_db": rep["outputs"][0]["sqnr_db"],
                  "official_sqnr_db": rep["compare"]["outputs"][0]["sqnr_db"]}


def measure(names: Sequence[str] = models.MLPERF) -> Table:
    diana = scheduling.target("diana")
    rows, data = [], {}
    for name in names:
        lg = scheduling.lowered(models.model_path(name))
        pred, on_digital = {}, 0
        for label, mods in CONFIGS:
            tgt = replace(diana, modules=tuple(m for m in diana.modules if m.name in mods))
            ns = scheduling.schedule(lg, tgt, "model")
            pred[label] = ns.latency_ms
            if "digital" in mods:
                on_digital = sum(s.module == "digital" for s in ns.schedules)
        path, sqnr = native_form(name)
        nlg = scheduling.lowered(path)
        nns = scheduling.schedule(nlg, diana, "model")
        pred[NATIVE] = nns.latency_ms
        native_digital = sum(s.module == "digital" for s in nns.schedules)
        match, htvm = published.MATCH_DIANA_MS[name], published.HTVM_DIANA_MS[name]
        tvm = published.TVM_DIANA_MS[name]
        data[name] = {"predicted_ms": pred, "match_ms": match.value, "htvm_ms": htvm.value,
                      "tvm_ms": None if tvm is None else tvm.value,
                      "layers_on_digital": on_digital, "layers": len(lg.layers),
                      "native_layers_on_digital": native_digital, "native_layers": len(nlg.layers),
                      **sqnr}
        rows.append((f"{name} ({models.PAPER_NAMES[name]})",
                     *(round(pred[label], 3) for label, _ in CONFIGS), round(pred[NATIVE], 3),
                     match.value, htvm.value, "OoM" if tvm is None else tvm.value,
                     pred["digital+CPU"] / match.value, pred[NATIVE] / match.value,
                     f"{on_digital} / {len(lg.layers)}", f"{native_digital} / {len(nlg.layers)}",
                     f"{sqnr['sqnr_db']:.2f} / {sqnr['official_sqnr_db']:.2f}"))
    return Table(
        "diana", f"Table 9 — diana: predicted latency vs DIANA silicon ({diana.clock_mhz:g} MHz, ms)",
        ("model", *(f"tilewise {label}" for label, _ in CONFIGS), f"tilewise {NATIVE}", "MATCH",
         "HTVM", "TVM (host)", "tilewise / MATCH", "diana form / MATCH", "layers on digital",
         "diana form on digital", "SQNR dB diana form / official int8"),
        tuple(rows),
        notes=(f"MATCH, HTVM, TVM: {published.SEED3_T3_DIANA}.",
               "tilewise CPU only, digital+CPU: predicted by the diana target with the listed modules "
               "on the TFLite files, so the host requantizes the digital core's int32 outputs.",
               "diana form: the float parent quantized by `tilewise quantize --target diana` (power-of-two "
               "requantization the digital core computes itself; bench/diana.py docstring), all modules; "
               "SQNR: output vs float on bench/mlperf_inputs.py's 200 evaluation inputs."),
        data=data,
    )
