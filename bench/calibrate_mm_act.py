"""Fit the cost model of the MatMul of two activations (bindings/pulp/cost.py MatMulActCost,
kernel bindings/pulp/c/tw_pulp_mm_act.h) on its own measurements.

`python bench/calibrate_mm_act.py` builds one Deeploy-style network of independent MatMul →
RequantShift pairs (tests/attention_models.py matmul_suite: SHAPES, int8 and uint8 a, from 8 to
256 reduction values, 1 to 8 heads), runs it on GVSoC's pulp-open cluster on 8 and on 1 core and
on the stm32h7's instruction counter (`validate --on count`), reads each MatMul layer's measured
cycles (instructions on the Cortex-M7), and fits the model's coefficients by non-negative least
squares (scipy.optimize.nnls), each layer weighted by 1/measured: RI5CY on both core counts
together, the Cortex-M7 apart (its terms: no DMA). The module's per-layer overhead (the target's
layer_overhead_cycles, which the schedule adds to every layer) is taken off the measurement
first. Writes bench/calibration_mm_act.json: the shapes, the measurements, the coefficients and
the prediction / measurement ratios.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.attention_models import matmul_suite  # noqa: E402
from tilewise.bindings.pulp.cost import MatMulActCost  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate.check import validate_model  # noqa: E402

HERE = Path(__file__).resolve().parent
#: (heads, m, k, n, a uint8): attention's shapes (ICCT's 64x192x64 and 64x64x192, Attention's
#: 8 heads of 16x8x16) and others across the terms (odd rows, k not a multiple of 4)
SHAPES = ((1, 64, 64, 64, False), (1, 64, 192, 64, False), (1, 64, 64, 192, True),
          (2, 32, 32, 48, False), (8, 16, 8, 16, True), (1, 30, 20, 14, False),
          (4, 48, 128, 32, False), (1, 96, 256, 40, False), (2, 66, 2, 66, False),
          (1, 64, 64, 64, True), (2, 12, 64, 16, False))
#: (target, platform, cores, arm)
RUNS = (("pulp-open", "gvsoc", 8, False), ("pulp-open", "gvsoc", 1, False), ("stm32h7", "count", 1, True))


def measure(work: Path) -> list[dict]:
    """Every MatMul layer of the suite on every run of RUNS: its nest, cores and measurement."""
    model, types = matmul_suite(SHAPES)
    path = work / "suite.onnx"
    onnx.save(model, str(path))
    graph = load_model(path, types)
    rows = []
    for tname, on, cores, arm in RUNS:
        target = get_target(tname, cores=cores) if not arm else get_target(tname)
        ns = schedule_network(lower(graph), target)
        report = validate_model(path, ns, graph, n_random=1, out_dir=work / f"{tname}_{on}_{cores}", on=on)
        assert report.bit_exact, (tname, on, report.to_json()["mismatches"])
        layers = report.to_json()["layers"]
        key = "measured_instructions" if on == "count" else "measured_cycles"
        for layer, s, lc in zip(ns.layers.layers, ns.schedules, layers):
            if str(layer.op) != "matmul":
                continue
            assert "matmul_act" in s.binding, (layer.name, s.binding)
            # counted instructions: the overhead and the prediction before in the instruction model
            priced = target.instruction_model(target) if on == "count" and target.instruction_model \
                else target
            module = priced.module(s.module)
            n = layer.nest
            rows.append({"target": tname, "on": on, "cores": cores, "arm": arm, "layer": layer.name,
                         "shape": [n.N * n.OY, n.OX, n.C, n.K], "y_bits": n.y_bits,
                         "uint8_a": ns.layers.tensors[layer.inputs[0]].dtype == "uint8",
                         "measured": int(lc[key]), "overhead": float(module.layer_overhead_cycles),
                         "predicted_before": float(lc["predicted_instructions"] if on == "count"
                                                   else s.cycles)})
        print(f"{tname} {on} {cores} core(s): {len(rows)} layers so far", flush=True)
    return rows


def _nest(r: dict):
    from tilewise.ir.layer import LoopNest

    h, m, k, n = r["shape"]
    return LoopNest(kind="other", K=n, C=k, OY=h, OX=m, N=1, IY=h, IX=m, y_bits=r["y_bits"])


def fit(rows: list[dict], arm: bool) -> dict[str, float]:
    """NNLS of the model's coefficients on the rows of one ISA (module docstring)."""
    from scipy.optimize import nnls

    sel = [r for r in rows if r["arm"] == arm]
    names = [c for c in MatMulActCost.COEFFICIENTS if not (arm and c in ("dma", "tile", "step4", "block4"))]
    zero = MatMulActCost(arm=arm, **{c: 0.0 for c in MatMulActCost.COEFFICIENTS})
    A = np.array([[replace(zero, **{c: 1.0}).cycles(_nest(r), r["cores"]) / r["measured"] for c in names]
                  for r in sel])
    b = np.array([(r["measured"] - r["overhead"]) / r["measured"] for r in sel])
    x, _ = nnls(A, b)
    return dict(zip(names, (round(float(v), 4) for v in x)))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tw_mm_act_") as tmp:
        rows = measure(Path(tmp))
    out = {"shapes": [list(s) for s in SHAPES], "rows": rows, "fit": {}}
    for arm, label in ((False, "ri5cy_gvsoc_cycles"), (True, "cortex_m7_instructions")):
        coef = fit(rows, arm)
        model = MatMulActCost(arm=arm, **coef)
        out["fit"][label] = coef
        for r in rows:
            if r["arm"] == arm:
                r["predicted"] = round(model.cycles(_nest(r), r["cores"]) + r["overhead"], 1)
                r["ratio"] = round(r["predicted"] / r["measured"], 3)
        print(label, coef)
    for r in rows:
        print(f"{r['target']:9s} {r['on']:5s} {r['cores']} core(s) {str(r['shape']):20s} u8={r['uint8_a']!s:5s} "
              f"measured {r['measured']:>9,} predicted {r['predicted']:>11,.0f} ({r['ratio']:.2f})")
    (HERE / "calibration_mm_act.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
