"""Fit the cost model of the depth-first attention (bindings/pulp/attention_cost.py
AttentionCost and ATTENTION_M7, layer bindings/pulp/attention.py) on its own measurements.

`python bench/calibrate_attention.py` builds Deeploy-style attentions (tests/attention_models.py
attention_suite: SHAPES — iSoftmax, ITAMax and no row op; 1 to 8 heads; the Attention kernel's,
ICCT's and EEGFormer's shapes among them; one and several row tiles), one firmware each, runs
them on GVSoC's pulp-open cluster (8 cores) and on the stm32h7's instruction counter (`validate
--on count`: the Arm build), reads each fused attention layer's measured cycles (executed
instructions on the Cortex-M7), and fits per ISA the model's coefficients
(AttentionCost.COEFFICIENTS) by non-negative least squares (scipy.optimize.nnls), each layer
weighted by 1/measured, after taking off what the model prices with the MatMul's own
coefficients (its blocks, the transposes, the DMA bytes) and the module's per-layer overhead.
Writes bench/calibration_attention.json: the shapes, the measurements, the coefficients and the
prediction / measurement ratios, per ISA.
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

from tests.attention_models import attention_suite  # noqa: E402
from tilewise.bindings.pulp.attention_cost import ATTENTION_M7, AttentionCost  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.ir.layer import LoopNest  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate.check import validate_model  # noqa: E402

HERE = Path(__file__).resolve().parent
#: (heads, m, d, L, dv, row op): the Attention kernel's (8x16x8x16x8, iSoftmax), ICCT's
#: (64x192x64x192, ITAMax), EEGFormer's (8x66x2x66x2, none) and others across the terms
SHAPES = ((8, 16, 8, 16, 8, "iSoftmax"), (2, 16, 8, 16, 8, "iSoftmax"), (1, 32, 16, 48, 16, "iSoftmax"),
          (4, 24, 16, 96, 16, "iSoftmax"), (1, 8, 16, 256, 16, "iSoftmax"),
          (1, 64, 192, 64, 192, "ITAMax"), (1, 64, 64, 64, 64, "ITAMax"), (1, 128, 32, 128, 32, "ITAMax"),
          (2, 40, 8, 40, 24, "ITAMax"), (8, 66, 2, 66, 2, None), (2, 66, 2, 66, 2, None),
          (2, 48, 32, 32, 8, None), (1, 96, 16, 96, 16, None))
ROW = {"iSoftmax": "int_softmax", "ITAMax": "ita_max", None: None}


#: (target, platform, cores, the measurement's key, the fit's name)
RUNS = (("pulp-open", "gvsoc", 8, "measured_cycles", "ri5cy_gvsoc_cycles"),
        ("stm32h7", "count", 1, "measured_instructions", "cortex_m7_instructions"))


def measure(work: Path) -> list[dict]:
    """Every attention of SHAPES on every run of RUNS, one firmware each (all in one overran
    pulp-open's L2 with their inputs): its nest, row op, measurement."""
    rows = []
    for tname, on, cores, key, fit_name in RUNS:
        target = get_target(tname)
        # counted instructions: the overhead and the prediction before in the instruction model
        priced = target.instruction_model(target) if on == "count" and target.instruction_model \
            else target
        for i, shape in enumerate(SHAPES):
            model, types = attention_suite((shape,), seed=i)
            path = work / f"attention{i}.onnx"
            onnx.save(model, str(path))
            graph = load_model(path, types)
            ns = schedule_network(lower(graph), target)
            report = validate_model(path, ns, graph, n_random=1, out_dir=work / f"{on}{i}", on=on)
            assert report.bit_exact, (shape, report.to_json()["mismatches"])
            for layer, s, lc in zip(ns.layers.layers, ns.schedules, report.to_json()["layers"]):
                if str(layer.op) != "attention":
                    continue
                n = layer.nest
                rows.append({"isa": fit_name, "target": tname, "cores": cores, "layer": layer.name,
                             "shape": [n.N * n.OY, n.OX, n.C, n.IX, n.K], "row": ROW[shape[5]],
                             "binding": s.binding, "measured": int(lc[key]),
                             "overhead": float(priced.module(s.module).layer_overhead_cycles),
                             "predicted_before": float(lc.get("predicted_instructions") or s.cycles
                                                       if on == "count" else s.cycles)})
            print(f"{tname} {shape}: {rows[-1]['measured']:,}", flush=True)
    return rows


def _nest(r: dict) -> LoopNest:
    h, m, d, keys, dv = r["shape"]
    return LoopNest(kind="other", K=dv, C=d, OY=h, OX=m, N=1, IY=1, IX=keys)


def _cycles(model: AttentionCost, r: dict) -> float:
    return sum(model.with_rows(r["row"]).parts(_nest(r), r["cores"]).values())


def fit(rows: list[dict], base: AttentionCost) -> dict[str, float]:
    """NNLS of AttentionCost.COEFFICIENTS on one ISA's rows (module docstring)."""
    from scipy.optimize import nnls

    names = AttentionCost.COEFFICIENTS
    zero = replace(base, **{c: 0.0 for c in names})
    A = np.array([[(_cycles(replace(zero, **{c: 1.0}), r) - _cycles(zero, r)) / r["measured"] for c in names]
                  for r in rows])
    b = np.array([(r["measured"] - r["overhead"] - _cycles(zero, r)) / r["measured"] for r in rows])
    x, _ = nnls(A, b)
    return dict(zip(names, (round(float(v), 4) for v in x)))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tw_attention_") as tmp:
        rows = measure(Path(tmp))
    out = {"shapes": [list(s) for s in SHAPES], "rows": rows, "fit": {}}
    for base, (_, _, _, _, isa) in zip((AttentionCost(), ATTENTION_M7), RUNS):
        mine = [r for r in rows if r["isa"] == isa]
        coef = fit(mine, base)
        model = replace(base, **coef)
        out["fit"][isa] = coef
        for r in mine:
            r["predicted"] = round(_cycles(model, r) + r["overhead"], 1)
            r["ratio"] = round(r["predicted"] / r["measured"], 3)
            print(f"{r['target']:9s} {str(r['shape']):24s} {r['row'] or '-':12s} measured {r['measured']:>9,} "
                  f"predicted {r['predicted']:>11,.0f} ({r['ratio']:.2f}; "
                  f"before {r['predicted_before'] / r['measured']:.2f})")
        print(isa, coef)
    (HERE / "calibration_attention.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
