"""Fit the SVDF kernels' coefficients: the host core's (bindings/pulp/cost.py `svdf_fmac`,
`svdf_tmac`, `svdf_filter`) on GVSoC cycles (pulp-open's host core alone, the model gap8 / gap9 /
pulp-open share: targets/pulp_open.py HOST) and counted Cortex-M7 instructions (stm32h7,
targets/stm32h7.py); the cluster's (bindings/pulp/svdf_cost.py SvdfCost, config `cluster`) on
GVSoC cycles of pulp-open's 8 cores.

`python bench/calibrate_svdf.py` builds one single-SVDF model per geometry of GEOMETRIES
(tests/svdf_models.py: features C, units, rank, memory M; F = units·rank filters), validates each
on pulp-open `--on gvsoc` and on stm32h7 `--on count` (bit-exact over 3 consecutive inferences or
it stops), and takes the SVDF layer's measured cycles / instructions. The model prices the layer
as svdf_fmac·F·C + svdf_tmac·F·M + svdf_filter·F + other_call (tw_svdf_s8's loops: the feature
matmul, the state's shift and the time-weight dot products, the per-filter requantization and
the rank reduction; other_call is the host core's per-layer call, fitted elsewhere and held
here); the three coefficients are a non-negative least-squares fit (scipy.optimize.nnls) of the
measured value less other_call, each row weighted by 1/measured. Writes
bench/calibration_svdf.json (the rows, the fits, measured / predicted per row by the fit);
tests/test_svdf.py holds the model in the tree against its own runs within ±15%.

The cluster's SvdfCost (config `cluster`: GEOMETRIES and CLUSTER_MORE, each a network's only
SVDF) is fitted the same way on its coefficients (SvdfCost.COEFFICIENTS); the keyword model's two
SVDFs are measured and reported beside it — the second runs with the kernel's code already in the
instruction cache, ~2,100 cycles under the model, which prices every layer's code cold;
tests/test_svdf.py holds the cold ones within ±15%.

Usage: .venv/bin/python bench/calibrate_svdf.py [--configs gvsoc,count,cluster]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.svdf_models import svdf_model  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import validate_model  # noqa: E402

#: (features C, units, rank, memory M)
GEOMETRIES = ((10, 16, 2, 8), (40, 32, 2, 10), (32, 32, 1, 10), (8, 8, 1, 32), (64, 16, 4, 4), (16, 64, 1, 2))
#: more geometries for the cluster's eight coefficients
CLUSTER_MORE = ((24, 48, 3, 6), (100, 20, 1, 16), (12, 128, 1, 8), (48, 8, 2, 24), (30, 40, 1, 12))
#: config -> (target, measurement key, modules the SVDF may run on)
CONFIGS = {"gvsoc": ("pulp-open", "measured_cycles", ("cpu",)),
           "count": ("stm32h7", "measured_instructions", None),
           "cluster": ("pulp-open", "measured_cycles", None)}
COEFS = ("svdf_fmac", "svdf_tmac", "svdf_filter")


def measure(config: str, work: Path) -> list[dict]:
    target_name, key, modules = CONFIGS[config]
    target = get_target(target_name)
    if modules is not None:
        target = target.with_modules(modules)
    rows = []
    for i, (c, u, r, m) in enumerate(GEOMETRIES + (CLUSTER_MORE if config == "cluster" else ())):
        path = svdf_model(work / f"svdf_{i}.tflite", seed=i, inputs=c, units=u, rank=r, memory=m)
        g = load_model(path)
        ns = schedule_network(lower(g), target)
        on = "count" if config == "count" else "gvsoc"
        rep = validate_model(path, ns, g, 1, 0, work / f"{config}_{i}", on=on).to_json()
        if not rep["bit_exact"]:
            raise SystemExit(f"{config}: geometry {(c, u, r, m)} is not bit-exact")
        (layer,) = [x for x in rep["layers"] if x["op"] == "svdf"]
        f = u * r
        (lc,) = [x for x in ns.layers.layers if str(x.op) == "svdf"]
        rows.append({"geometry": {"C": c, "units": u, "rank": r, "M": m}, "F": f, "nest": _nest_fields(lc.nest),
                     "columns": {"svdf_fmac": f * c, "svdf_tmac": f * m, "svdf_filter": f},
                     "measured": layer[key], "predicted_then": layer[key.replace("measured", "predicted")]})
        print(f"{config} C={c} U={u} rank={r} M={m}: measured {layer[key]}", flush=True)
    if config == "cluster":
        rows += keyword_rows(target, work)
    return rows


def keyword_rows(target, work: Path) -> list[dict]:
    """The keyword model's two SVDFs on the cluster: the second runs with the kernel's code in
    the instruction cache (its call ~2,100 cycles cheaper), which the single-SVDF geometries
    never do and the model does not price (reported next to the fit, not fitted)."""
    from tests.svdf_models import keyword_model

    path = keyword_model(work / "svdf_keyword.tflite")
    g = load_model(path)
    ns = schedule_network(lower(g), target)
    rep = validate_model(path, ns, g, 1, 0, work / "cluster_keyword", on="gvsoc").to_json()
    if not rep["bit_exact"]:
        raise SystemExit("cluster: the keyword model is not bit-exact")
    rows = []
    for lc, layer in zip(ns.layers.layers, rep["layers"]):
        if str(lc.op) == "svdf":
            rows.append({"geometry": "keyword model " + lc.name, "nest": _nest_fields(lc.nest),
                         "measured": layer["measured_cycles"], "predicted_then": layer["predicted_cycles"]})
            print(f"cluster keyword {lc.name}: measured {layer['measured_cycles']}", flush=True)
    return rows


def _nest_fields(nest) -> dict:
    return {k: int(getattr(nest, k)) for k in ("N", "OY", "OX", "K", "C", "FY", "FX")}


def fit_cluster(rows: list[dict]) -> dict[str, float]:
    """NNLS of SvdfCost.COEFFICIENTS on 8 cores (each row weighted by 1/measured, the module's
    per-layer overhead taken off first)."""
    from dataclasses import replace

    from scipy.optimize import nnls

    from tilewise.bindings.pulp.svdf_cost import SvdfCost
    from tilewise.ir.layer import LoopNest

    names = SvdfCost.COEFFICIENTS
    zero = SvdfCost(**{c: 0.0 for c in SvdfCost.__dataclass_fields__ if c != "name"})
    oh = get_target("pulp-open").module("cluster").layer_overhead_cycles

    def cyc(model, r):
        return sum(model.parts(LoopNest(kind="other", **r["nest"]), 8).values())

    # fitted on the single-SVDF geometries (each kernel's code cold in the instruction cache, as
    # a network's first SVDF); the keyword model's rows are reported, not fitted: its second
    # SVDF runs warm, ~2,100 cycles cheaper than the model says
    w = np.array([0.0 if isinstance(r["geometry"], str) else 1.0 for r in rows])
    a = np.array([[cyc(replace(zero, **{c: 1.0}), r) / r["measured"] for c in names] for r in rows]) * w[:, None]
    y = np.array([(r["measured"] - oh) / r["measured"] for r in rows]) * w
    x, _ = nnls(a, y)
    coefs = {k: round(float(v), 4) for k, v in zip(names, x)}
    model = SvdfCost(**coefs)
    for r in rows:
        r["predicted_fit"] = round(cyc(model, r) + oh, 1)
        r["ratio_fit"] = round(r["predicted_fit"] / r["measured"], 3)
    return coefs


def fit(rows: list[dict], call: float) -> dict[str, float]:
    from scipy.optimize import nnls

    a = np.array([[r["columns"][k] for k in COEFS] for r in rows], dtype=float)
    y = np.array([r["measured"] - call for r in rows], dtype=float)
    w = 1.0 / np.array([r["measured"] for r in rows], dtype=float)
    x, _ = nnls(a * w[:, None], y * w)
    return {k: round(float(v), 3) for k, v in zip(COEFS, x)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="gvsoc,count,cluster")
    args = ap.parse_args()
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="calibrate_svdf_") as tmp:
        for config in args.configs.split(","):
            if config == "cluster":
                rows = measure(config, Path(tmp))
                coefs = fit_cluster(rows)
                out[config] = {"target": "pulp-open", "fit": coefs, "rows": rows}
                print(config, coefs, [r["ratio_fit"] for r in rows], flush=True)
                continue
            target = get_target(CONFIGS[config][0])
            if target.instruction_model is not None:    # counted: its instruction model's call
                target = target.instruction_model(target)
            (binding,) = [b for b in target.module("cpu").bindings if b.name == "svdf_s8"]
            call = float(binding.cost.for_key(binding.key).other_call)
            rows = measure(config, Path(tmp))
            coefs = fit(rows, call)
            for r in rows:
                r["predicted_fit"] = round(call + sum(coefs[k] * r["columns"][k] for k in COEFS), 1)
                r["ratio_fit"] = round(r["predicted_fit"] / r["measured"], 3)
            out[config] = {"target": CONFIGS[config][0], "other_call": call, "fit": coefs, "rows": rows}
            print(config, coefs, [r["ratio_fit"] for r in rows], flush=True)
    dest = REPO / "bench" / "calibration_svdf.json"
    old = json.loads(dest.read_text()) if dest.exists() else {}
    old.update(out)
    dest.write_text(json.dumps(old, indent=1) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
