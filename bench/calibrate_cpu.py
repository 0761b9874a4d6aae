"""Fit the host core's model (targets/pulp_open.py HOST: pulp-open's "cpu" module) on GVSoC.

Every layer of each network is forced onto the cpu module (a copy of pulp-open holding only that
module), the firmware runs on GVSoC (`validate --on gvsoc`), and the whole-layer cycles it
measures are compared with what the model predicts, less the module's per-layer overhead:
- `from_l2`: per tiled kind (conv, depthwise, dense, add, pools) the factor f on the terms but
  the requantization, least squares of (measured − overhead − requant terms) on f · (the other
  terms with the kernels' L1 coefficients), on the pulp family's layers;
- `concat_elem`, `quant_elem`: per output element, least squares through the origin of
  (measured − overhead − other_call) on the elements (the transpose's per element, row and call:
  bench/calibrate_untiled.py, with the transposes measured here).
Writes bench/calibration_cpu.json (the data and the fit) and prints the coefficients and the
per-layer ratios. Usage: .venv/bin/python bench/calibrate_cpu.py [--models example,kws_dscnn]
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

from bench import models  # noqa: E402
from tests import cpu_models  # noqa: E402
from tilewise.bindings import pulp  # noqa: E402
from tilewise.bindings.cost_terms import tile_cycles  # noqa: E402
from tilewise.bindings.pulp.cost import PulpKernels  # noqa: E402
from tilewise.examples import EXAMPLE_ONNX  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.base import Target  # noqa: E402
from tilewise.targets.pulp_open import HOST  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate.check import validate_model  # noqa: E402

HERE = Path(__file__).resolve().parent
PER_ELEM = {"concat_elem": "concat", "quant_elem": "quantize"}


def cpu_only(model: PulpKernels) -> Target:
    """pulp-open with only its cpu module, priced by `model`."""
    t = get_target("pulp-open")
    cpu = t.module("cpu")
    return replace(t, modules=(replace(cpu, bindings=pulp.bindings(model, host=True)),))


def sources(names: list[str], tmp: Path) -> list[tuple[str, Path]]:
    out = []
    for name in names:
        if name == "example":
            out.append((name, EXAMPLE_ONNX))
        elif name in models.MLPERF:
            out.append((name, models.model_path(name)))
        else:
            out.append((name, getattr(cpu_models, name)().save(tmp / f"{name}.tflite")))
    return out


def collect(names: list[str], model: PulpKernels) -> list[dict]:
    """Measured and predicted (by `model`) whole-layer cycles of every layer on the cpu."""
    rows = []
    target = cpu_only(model)
    with tempfile.TemporaryDirectory() as d:
        for name, path in sources(names, Path(d)):
            graph = load_model(path)
            ns = schedule_network(lower(graph), target, "model")
            r = validate_model(path, ns, graph, 1, 0, Path(d) / name, on="gvsoc").to_json()
            assert r["bit_exact"], (name, r.get("mismatches"))
            for row in r["layers"]:
                i = row["index"]
                layer = ns.layers.layers[i]
                scaled, requant = _split(ns.placement(i).binding.cost, layer.nest)
                rows.append(dict(network=name, layer=row["name"], op=str(layer.op),
                                 kind=layer.nest.kind,
                                 elements=int(ns.layers.tensors[layer.output].size),
                                 measured=row["measured_cycles"],
                                 binding=ns.placement(i).binding.label,
                                 predicted=row["predicted_cycles"], scaled=scaled,
                                 requant=requant))
    return rows


def _split(cost, nest) -> tuple[float, float]:
    """The layer's cycles on one core, whole: (the terms from_l2 scales, the others)."""
    dims = {"n": nest.N, "k": nest.K, "c": nest.C, "oy": nest.OY, "ox": nest.OX}
    size = {d: np.array(v) for d, v in dims.items()}
    one = {d: np.array(True) for d in dims}
    out = [0.0, 0.0]
    for t in cost.terms(nest, 1):
        out[t.label in ("requant", "tile")] += float(tile_cycles((t,), size, one, one))
    return out[0], out[1]


def fit(rows: list[dict], overhead: float, model: PulpKernels) -> dict:
    out: dict = {}
    factors = []
    for kind in sorted({r["kind"] for r in rows} - {"other"}):
        # the pulp family's kernels (a portable 16x8 conv is priced as the pulp conv: not fitted)
        sel = [r for r in rows if r["kind"] == kind and r["binding"].startswith("pulp/")]
        if not sel:
            continue
        s = np.array([r["scaled"] for r in sel])
        y = np.array([r["measured"] - overhead - r["requant"] for r in sel])
        factors.append((kind, round(float(s @ y / (s @ s)), 3)))
    out["from_l2"] = tuple(factors)
    for coef, op in PER_ELEM.items():
        sel = [r for r in rows if r["op"] == op]
        if sel:
            e = np.array([r["elements"] for r in sel], float)
            y = np.array([r["measured"] - overhead - model.other_call for r in sel])
            out[coef] = round(float(e @ y / (e @ e)), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="example,kws_dscnn,ad_autoencoder,conv_requant_conv,"
                                        "requant_16,transpose_concat,host_ops")
    args = ap.parse_args(argv)
    names = args.models.split(",")
    overhead = get_target("pulp-open").module("cpu").layer_overhead_cycles
    unit = replace(HOST, from_l2=())
    rows = collect(names, unit)
    coefs = fit(rows, overhead, unit)
    fitted = replace(unit, **coefs)
    check = collect(names, fitted)
    for r, c in zip(rows, check):
        r["predicted_fitted"] = c["predicted"]
        print(f"{r['network']:>18} {r['layer']:<28} {r['kind']:<6} measured {r['measured']:>10,} "
              f"predicted {c['predicted']:>12,.0f}  ratio {c['predicted'] / r['measured']:.3f}")
    per_net: dict[str, list[float]] = {}
    for r in rows:
        acc = per_net.setdefault(r["network"], [0.0, 0.0])
        acc[0] += r["predicted_fitted"]
        acc[1] += r["measured"]
    nets = {k: p / m for k, (p, m) in per_net.items()}
    print("fit:", json.dumps(coefs), "\nper network predicted/measured:", json.dumps(nets))
    (HERE / "calibration_cpu.json").write_text(json.dumps(
        {"coefficients": coefs, "layer_overhead_cycles": overhead, "networks": nets,
         "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
