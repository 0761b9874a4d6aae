"""Fit the onnx-mode requantization's costs (PulpKernels.requant_onnx, add_onnx) on a measurement.

Each layer is fitted under its binding's coefficient: requant_onnx (the general onnx variant),
requant_onnx24 (the *_onnx24 bindings: no range check), add_onnx (the exact integer add),
add_onnx_fold (the folded onnx add: its per-element cost, which the model prices as the tflite
folded kernel's add_elem, reported here for comparison).

onnx-mode requantization runs in integers (tw_pulp_requant.h tw_pulp_rq_onnx: tw_onnx_requant_exact.h's
one-word path; the QLinearAdd as tw_add_onnx_exact_s8; issue 27) where it was software float32;
only those per-output coefficients change, the rest of the model stays as bench/calibrate_pulp.py
and bench/calibrate_m7.py fitted it. Per onnx-mode weighted layer (conv, 1x1 conv, depthwise,
dense: requant_onnx) and onnx add (add_onnx) of the given ONNX models, the layer's predicted
cycles are linear in the coefficient: pred(r) = pred(r0) + (r − r0)·col, col the cycles of
one unit of it summed over the schedule's tiles. The fit is the weighted least squares
r = r0 + Σ w·(measured − pred(r0))·col / Σ w·col², w = 1/measured² (every layer's relative error
counting alike) — on GVSoC's measured compute cycles for pulp-open (8 cores and 1), on counted
instructions for stm32h7 (whole layers: its copies are the core's own).

    python bench/calibrate_onnx_requant.py MODEL.onnx [MODEL.onnx ...] [--config stm32h7]

prints the per-layer data and the fitted coefficients per configuration, and writes
bench/calibration_onnx_requant.json (--data another file). On stm32h7, whose onnx bindings of
the weighted kernels requantize on the FPU where its model prices that below the integer form
(the onnx_fpu variant: stm32h7.KERNELS_INSTRUCTIONS.onnx_on_fpu), the coefficient of those layers is
requant_onnx_fpu (bench/calibration_onnx_requant_fpu.json: --config stm32h7 --data it).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scheduling  # noqa: E402
from bench.calibrate_pulp import _tile_sum, _untiled  # noqa: E402
from tilewise.bindings.pulp.cost import PulpKernels  # noqa: E402
from tilewise.schedule.cost import Evaluator  # noqa: E402
from tilewise.targets import stm32h7  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import make_inputs, validate_network  # noqa: E402

HERE = Path(__file__).resolve().parent
WEIGHTED = ("conv", "dwconv", "fc")
#: (name, target (or a function making it), cores, platform, the model its kernels are priced
#: by, measured field)
CONFIGS = (("pulp-open x8", "pulp-open", 8, "gvsoc", PulpKernels(), "measured_compute_cycles"),
           ("pulp-open x1", "pulp-open", 1, "gvsoc", PulpKernels(), "measured_compute_cycles"),
           ("stm32h7", "stm32h7", None, "count", stm32h7.KERNELS_INSTRUCTIONS, "measured_instructions"),
           ("stm32h7 integer", lambda: stm32h7.without_fpu(get_target("stm32h7")), None, "count",
            replace(stm32h7.KERNELS_INSTRUCTIONS, requant_onnx_fpu=None), "measured_instructions"))


def column(model: PulpKernels, key, s, nest, tgt, p, cores: int,
           coef: str = "requant_onnx") -> tuple[float, float]:
    """(cycles of the layer's kernel calls at the model's `coef`, cycles per unit of it)."""
    def cycles(m: PulpKernels) -> float:
        if s.untiled:
            return _untiled(m, key, s, cores)
        t = Evaluator(nest, tgt, p).build({d.dim: d.tile for d in s.tiles}, tuple(s.loop_order),
                                          s.buffering)
        return _tile_sum(m, key, t, cores)
    base = cycles(replace(model, **{coef: 0.0}))
    return cycles(model), cycles(replace(model, **{coef: 1.0})) - base


def collect(paths: list[Path], only: list[str] | None = None) -> list[dict]:
    rows = []
    for path in paths:
        lg = scheduling.lowered(path)
        for name, target, cores, on, model, field in CONFIGS:
            if only and name not in only:
                continue
            kw = {"cores": cores} if cores else {}
            tgt = target() if callable(target) else scheduling.target(target, **kw)
            ns = scheduling.schedule(lg, tgt, "model")
            with tempfile.TemporaryDirectory(prefix="tw_calib_onnx_") as tmp:
                report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1], on=on)
            r = report.to_json()
            if not r["bit_exact"]:
                raise RuntimeError(f"{path.name} {name}: not bit-exact: {r['mismatches'][:2]}")
            for i, (layer, lc) in enumerate(zip(lg.layers, r["layers"])):
                p = ns.placement(i)
                key = p.binding.key
                if key.mode != "onnx" or layer.nest.kind not in (*WEIGHTED, "add"):
                    continue
                coef = "add_onnx" if layer.nest.kind == "add" else "requant_onnx"
                # the binding's copy of the model: the onnx24 variant's requant_onnx24, the
                # folded add's per-element add_elem (labelled add_onnx_fold), as they price them
                label, m = coef, model
                if p.binding.name.endswith("_onnx24"):
                    label, m = "requant_onnx24", model.onnx24()
                elif p.binding.name == "add_onnx_fold_s8":
                    label, m = "add_onnx_fold", model.onnx_fold()
                elif coef == "requant_onnx" and model.arm and model.onnx_on_fpu:
                    coef = label = "requant_onnx_fpu"       # the onnx bindings' onnx_fpu variant
                s = ns.schedules[i]
                pred, col = column(m, key, s, layer.nest, tgt, p, cores or 1, coef)
                if on == "count":   # whole layers: the report's prediction holds the copies too
                    pred = lc["predicted_instructions"]
                rows.append({"model": path.name, "config": name, "layer": layer.name,
                             "kind": layer.nest.kind, "measured": lc[field], "predicted": pred,
                             "column": col, "coef": label, "value": getattr(m, coef),
                             "binding": p.binding.name})
            print(f"{path.name:24s} {name:14s}: {r.get('measured_cycles') or r.get('measured_instructions'):,}",
                  flush=True)
    return rows


def fit(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per configuration and coefficient, the weighted least-squares value (module docstring)."""
    out: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(r["config"] for r in rows):
        for coef in dict.fromkeys(r["coef"] for r in rows):
            sel = [r for r in rows if r["config"] == name and r["coef"] == coef
                   and r["column"] > 0 and r["measured"] > 0]
            if not sel:
                continue
            m = np.array([r["measured"] for r in sel], float)
            p = np.array([r["predicted"] for r in sel], float)
            c = np.array([r["column"] for r in sel], float)
            w = 1.0 / m ** 2
            r0 = sel[0]["value"]
            out.setdefault(name, {})[coef] = float(r0 + (w * (m - p) * c).sum() / (w * c * c).sum())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--data", type=Path, default=HERE / "calibration_onnx_requant.json")
    ap.add_argument("--config", action="append", choices=[c[0] for c in CONFIGS],
                    help="only this configuration (repeatable; default: all)")
    args = ap.parse_args(argv)
    rows = collect(args.models, args.config)
    coefs = fit(rows)
    for r in rows:
        print(f"{r['model']:22s} {r['config']:14s} {r['layer']:28s} {r['kind']:7s} measured "
              f"{r['measured']:>10,} predicted {r['predicted']:>12,.0f} per unit {r['column']:>9,.0f}")
    for name, per in coefs.items():
        for coef, v in per.items():
            print(f"{coef} {name}: {v:.2f}")
    args.data.write_text(json.dumps({"rows": rows, "fit": coefs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
