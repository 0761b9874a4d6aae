"""Fit the cost model of the cluster's depth-first attention (bindings/pulp/attention_cost.py
AttentionCost, layer bindings/pulp/attention.py) on its own measurements.

`python bench/calibrate_attention.py` builds one network of independent Deeploy-style attentions
(tests/attention_models.py attention_suite: SHAPES — iSoftmax, ITAMax and no row op; 1 to 8
heads; the Attention kernel's, ICCT's and EEGFormer's shapes among them; one and several row
tiles), runs each on GVSoC's pulp-open cluster (8 cores), reads each fused attention layer's
measured cycles, and fits the model's fitted coefficients (AttentionCost.COEFFICIENTS) by
non-negative least squares (scipy.optimize.nnls), each layer weighted by 1/measured, after
taking off what the model prices with the MatMul's own coefficients (its blocks, the
transposes, the DMA bytes) and the module's per-layer overhead. Writes
bench/calibration_attention.json: the shapes, the measurements, the coefficients and the
prediction / measurement ratios.
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
from tilewise.bindings.pulp.attention_cost import AttentionCost  # noqa: E402
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


def measure(work: Path) -> list[dict]:
    """Every attention of SHAPES on pulp-open's 8 cores, one firmware each (all in one overran
    the firmware's L2 with their inputs): its nest, row op, measurement."""
    target = get_target("pulp-open")
    rows = []
    for i, shape in enumerate(SHAPES):
        model, types = attention_suite((shape,), seed=i)
        path = work / f"attention{i}.onnx"
        onnx.save(model, str(path))
        graph = load_model(path, types)
        ns = schedule_network(lower(graph), target)
        report = validate_model(path, ns, graph, n_random=1, out_dir=work / f"gvsoc{i}", on="gvsoc")
        assert report.bit_exact, (shape, report.to_json()["mismatches"])
        for layer, s, lc in zip(ns.layers.layers, ns.schedules, report.to_json()["layers"]):
            if str(layer.op) != "attention":
                continue
            n = layer.nest
            rows.append({"layer": layer.name, "shape": [n.N * n.OY, n.OX, n.C, n.IX, n.K], "row": ROW[shape[5]],
                         "binding": s.binding, "measured": int(lc["measured_cycles"]),
                         "overhead": float(target.module(s.module).layer_overhead_cycles),
                         "predicted_before": float(s.cycles)})
        print(f"{shape}: {rows[-1]['measured']:,} cycles", flush=True)
    return rows


def _nest(r: dict) -> LoopNest:
    h, m, d, keys, dv = r["shape"]
    return LoopNest(kind="other", K=dv, C=d, OY=h, OX=m, N=1, IY=1, IX=keys)


def _cycles(model: AttentionCost, r: dict) -> float:
    return sum(model.with_rows(r["row"]).parts(_nest(r), 8).values())


def fit(rows: list[dict]) -> dict[str, float]:
    """NNLS of AttentionCost.COEFFICIENTS (module docstring)."""
    from scipy.optimize import nnls

    names = AttentionCost.COEFFICIENTS
    zero = AttentionCost(**{c: 0.0 for c in names})
    A = np.array([[(_cycles(replace(zero, **{c: 1.0}), r) - _cycles(zero, r)) / r["measured"] for c in names]
                  for r in rows])
    b = np.array([(r["measured"] - r["overhead"] - _cycles(zero, r)) / r["measured"] for r in rows])
    x, _ = nnls(A, b)
    return dict(zip(names, (round(float(v), 4) for v in x)))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tw_attention_") as tmp:
        rows = measure(Path(tmp))
    coef = fit(rows)
    model = AttentionCost(**coef)
    for r in rows:
        r["predicted"] = round(_cycles(model, r) + r["overhead"], 1)
        r["ratio"] = round(r["predicted"] / r["measured"], 3)
        print(f"{str(r['shape']):24s} {r['row'] or '-':12s} measured {r['measured']:>9,} "
              f"predicted {r['predicted']:>11,.0f} ({r['ratio']:.2f}; "
              f"before {r['predicted_before'] / r['measured']:.2f})")
    print("ri5cy_gvsoc_cycles", coef)
    out = {"shapes": [list(s) for s in SHAPES], "rows": rows, "fit": {"ri5cy_gvsoc_cycles": coef}}
    (HERE / "calibration_attention.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
