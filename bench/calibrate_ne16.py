"""Fit NE16's own cycles (bindings/ne16/cost.py `Gvsoc`) on GVSoC's NE16 (pulp-open-ne16).

Each case runs as a user runs it, `validate --target pulp-open-ne16 --on gvsoc`, with the firmware
built with TILEWISE_NE16_TIMED=1: every NE16 job is waited for at its dispatch, so the NE16 cycles
the firmware prints per layer (TW_NE16: each job from its trigger to the STATUS read that sees it
done) are the jobs' own. Cases: the MLPerf Tiny models with the partition's NE16 layers
(kws_dscnn, ic_resnet8, vww_mobilenet_v1_025; ad_autoencoder puts none there), kws_dscnn and
ic_resnet8 in NE16's shift requantization (bindings/ne16/shift_requant.py) with every layer NE16
takes on it and norm-quant wherever exact (*_nq), and small layers forced onto NE16 — 3×3, 1×1,
depthwise, dense, whole and cut into L1 tiles (partial subtiles,
row jobs), int32 streamout and norm-quant (NEMO-style shift-mode network).

For every NE16 layer the model's steps (`Ne16Kernels.job_steps`: load, latency, matrix-vector,
norm-quant, stored beats, per job) are summed over the layer's tiles with each coefficient alone
set to 1 (validate/ne16_cycles.py), which makes the prediction linear in the coefficients; the
coefficients are the non-negative least squares of the measured cycles, each layer weighted by
1 / measured (relative error). Writes bench/calibration_ne16.json (per layer: case, kind,
measured, features, fitted and MATCH's prediction; the fit) and prints the per-kind sums.
Usage: .venv/bin/python bench/calibrate_ne16.py [--cases kws_dscnn,small]

`--cluster` fits the cluster's side of an NE16 layer instead (bindings/ne16/cost.py
`GVSOC_CLUSTER`: `job`, what core 0 spends per row job — the wait that sees the job end, the
barrier, the next job's registers computed and written — and `tile`, the compute call of a tile with
the job's set-up and its barriers): the MLPerf Tiny models kws_dscnn, ic_resnet8 and
vww_mobilenet_v1_025 on pulp-open-ne16 as partitioned, in the firmware as it ships (the row jobs
overlapped with the requantization, not the timed build), one input; per NE16 layer its whole
measured cycles (TW_LAYERS) against the layer's schedule repriced with `job` and `tile` at 0 and
alone at 1 (linear: both are sequential terms of a compute-bound tile), the non-negative least
squares of the rest, relative. Writes the "cluster" entry of bench/calibration_ne16.json (the
engine's fit and rows are kept) and prints per binding the layers' measured / fitted and the
previous coefficients' prediction.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.models import models_dir  # noqa: E402
from tests.codegen_cases import LayerSpec, layer_graph  # noqa: E402
from tests.ne16_forced import ne16_forced  # noqa: E402
from tilewise.bindings.ne16.cost import GVSOC, Gvsoc  # noqa: E402
from tilewise.bindings.ne16.shift_requant import to_shift_requant  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import NetworkSchedule, schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import make_inputs, validate_network  # noqa: E402
from tilewise.validate.check import validate_model  # noqa: E402
from tilewise.validate.ne16_cycles import engine_cycles  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MLPERF = models_dir() / "mlperf_tiny"
OUT = Path(__file__).resolve().parent / "calibration_ne16.json"
PARTIAL = Path(tempfile.gettempdir()) / "calibration_ne16.partial.json"
COEFS = tuple(f.name for f in fields(Gvsoc))

#: small layers (LayerSpec fields: kind, c, k, h, w, fy, fx, pads) and the L1 kB they run at
SMALL = {
    "conv3x3_c32_k64_9x9": (("conv", 32, 64, 9, 9, 3, 3, (1, 1, 1, 1)), None),
    "conv3x3_c17_k33_6x7_l1_2": (("conv", 17, 33, 6, 7, 3, 3, (1, 1, 1, 1)), 2),
    "conv3x3_c64_k16_10x10_l1_8": (("conv", 64, 16, 10, 10, 3, 3, (1, 1, 1, 1)), 8),
    "conv1x1_c64_k64_9x9": (("conv", 64, 64, 9, 9, 1, 1, (0, 0, 0, 0)), None),
    "conv1x1_c40_k24_7x5_l1_2": (("conv", 40, 24, 7, 5, 1, 1, (0, 0, 0, 0)), 2),
    "dw_c64_8x8": (("dwconv", 64, 64, 8, 8, 3, 3, (1, 1, 1, 1)), None),
    "dw_c40_6x6_l1_2": (("dwconv", 40, 40, 6, 6, 3, 3, (0, 1, 1, 0)), 2),
    "fc_c256_k64": (("fc", 256, 64, 1, 1, 1, 1, (0, 0, 0, 0)), None),
    "fc_c70_k13": (("fc", 70, 13, 1, 1, 1, 1, (0, 0, 0, 0)), None),
    # norm-quant: an int8 clamp, then NE16's shift form (tests/test_ne16_engine_gvsoc.py)
    "conv1x1_c40_k24_7x5_l1_2_nq": (("conv", 40, 24, 7, 5, 1, 1, (0, 0, 0, 0)), 2),
    "conv3x3_c17_k33_6x7_l1_2_nq": (("conv", 17, 33, 6, 7, 3, 3, (1, 1, 1, 1)), 2),
    "conv3x3_c32_k64_9x9_nq": (("conv", 32, 64, 9, 9, 3, 3, (1, 1, 1, 1)), None),
    "dw_c40_6x6_l1_2_nq": (("dwconv", 40, 40, 6, 6, 3, 3, (0, 1, 1, 0)), 2),
}


def forced(l1_kb: float | None = None, nq_only: bool = False):
    """pulp-open-ne16 with NE16 running every stride-1 layer its checks accept (tests/ne16_forced.py)."""
    return ne16_forced("pulp-open-ne16", nq_only, stride_one=True, l1_kb=l1_kb)


def kind_of(ns: NetworkSchedule, i: int) -> str:
    """The layer kind the fit and the test sum over: 3x3, 1x1, dw, linear; '+nq' with norm-quant."""
    n = ns.layers.layers[i].nest
    k = {"dwconv": "dw", "fc": "linear"}.get(n.kind, "3x3" if n.FY == 3 else "1x1")
    return k + ("+nq" if ns.placement(i).binding.cost.norm_quant else "")


def features(ns: NetworkSchedule, i: int) -> dict[str, float]:
    """Layer i's engine cycles with each coefficient alone at 1 (module docstring)."""
    zero = Gvsoc(**{c: 0.0 for c in COEFS})
    out = {}
    for c in COEFS:
        unit = replace(zero, **{c: 1.0})
        out[c] = engine_cycles(_with_cost(ns, i, fit=unit), i)
    return out


def _with_cost(ns: NetworkSchedule, i: int, **changes) -> NetworkSchedule:
    """ns with layer i's binding's cost model changed by `changes` (only what engine_cycles reads)."""
    ch = ns.partition.choices[i]
    b = ch.placement.binding
    binding = replace(b, cost=replace(b.cost, **changes))
    choices = list(ns.partition.choices)
    choices[i] = replace(ch, placement=replace(ch.placement, binding=binding))
    return replace(ns, partition=replace(ns.partition, choices=tuple(choices)))


def rows_of(name: str, ns: NetworkSchedule, report: dict) -> list[dict]:
    out = []
    for i, layer in enumerate(report["layers"]):
        if "ne16_measured_cycles" not in layer:
            continue
        match = engine_cycles(_with_cost(ns, i, engine="match"), i)
        out.append({"case": name, "layer": layer["name"], "kind": kind_of(ns, i),
                    "measured": layer["ne16_measured_cycles"], "early_jobs": layer["ne16_early_jobs"],
                    "match": match, "features": features(ns, i)})
    return out


def run_cases(names: list[str], work: Path) -> list[dict]:
    os.environ["TILEWISE_NE16_TIMED"] = "1"
    rows: list[dict] = []
    for name in names:
        if name in ("kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025"):
            path = MLPERF / f"{name}.tflite"
            graph = load_model(path)
            ns = schedule_network(lower(graph), get_target("pulp-open-ne16"), "model")
            r = validate_model(path, ns, graph, 1, 0, work / name, on="gvsoc").to_json()
        elif name.endswith("_nq") and name in SMALL:
            (kind, c, k, h, w, fy, fx, pads), l1 = SMALL[name]
            lg = layer_graph(LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, pads=pads), 1)
            last = lg.layers[-1]
            rq = replace(last.requant, qmin=-128, qmax=127)
            lg, _ = to_shift_requant(replace(lg, layers=(*lg.layers[:-1], replace(last, requant=rq))))
            ns = schedule_network(lg, forced(l1, nq_only=True), "model")
            rep, _ = validate_network(ns, work / name, make_inputs(lg, 1), on="gvsoc")
            r = rep.to_json()
        elif name.endswith("_nq"):   # an MLPerf model in NE16's shift requantization
            lg, _ = to_shift_requant(lower(load_model(MLPERF / f"{name[:-3]}.tflite")))
            ns = schedule_network(lg, forced(nq_only=True), "model")
            rep, _ = validate_network(ns, work / name, make_inputs(lg, 1), on="gvsoc")
            r = rep.to_json()
        elif name == "nemo":
            import onnx

            from tests import onnx_models as om

            path = work / "nemo.onnx"
            onnx.save(om.nemo_net(), str(path))
            graph = load_model(path)
            ns = schedule_network(lower(graph), forced(nq_only=True), "model")
            r = validate_model(path, ns, graph, 1, 0, work / name, on="gvsoc").to_json()
        else:
            (kind, c, k, h, w, fy, fx, pads), l1 = SMALL[name]
            lg = layer_graph(LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, pads=pads), 1)
            ns = schedule_network(lg, forced(l1), "model")
            rep, _ = validate_network(ns, work / name, make_inputs(lg, 1), on="gvsoc")
            r = rep.to_json()
        assert r["bit_exact"], (name, r["mismatches"][:2])
        got = rows_of(name, ns, r)
        print(f"{name}: {len(got)} NE16 layers, bit-exact", flush=True)
        rows += got
        PARTIAL.write_text(json.dumps({"rows": rows}) + "\n")   # a refit can start from it
    return rows


#: coefficients not fitted: GVSoC's NE16 loads one input pixel (16 channels, one 256-bit beat)
#: per cycle (../shared/tools/gvsoc README, "How the model times a job"); fitted free, `load`
#: trades off against the per-step latencies (a whole 3×3 subtile always loads 25 pixels)
FIXED = {"load": 1.0}


def fit(rows: list[dict]) -> Gvsoc:
    """Non-negative least squares of the measured cycles on the features, relative weights, the
    FIXED coefficients held."""
    from scipy.optimize import nnls

    used = [c for c in COEFS if c not in FIXED and any(r["features"][c] for r in rows)]
    a = np.array([[r["features"][c] / r["measured"] for c in used] for r in rows])
    b = np.array([1 - sum(v * r["features"][c] for c, v in FIXED.items()) / r["measured"]
                  for r in rows])
    x, _ = nnls(a, b)
    return replace(GVSOC, **FIXED, **{c: round(float(v), 3) for c, v in zip(used, x)})


def predicted(row: dict, g: Gvsoc) -> float:
    return sum(getattr(g, c) * v for c, v in row["features"].items())


CLUSTER = ("job", "tile")
CLUSTER_CASES = ("kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025")


def repriced(ns: NetworkSchedule, i: int, **cost) -> float:
    """Layer i's predicted cycles with its schedule (tiles, loop order, buffering) kept and its
    binding's cost model changed by `cost` (schedule/cost.py Evaluator)."""
    from tilewise.schedule.cost import Evaluator

    assert ns.layers.layers[i].name not in ns.l3.tilings, "an L3-tiled layer"
    s = ns.schedules[i]
    pl = ns.placement(i)
    pl = replace(pl, binding=replace(pl.binding, cost=replace(pl.binding.cost, **cost)))
    tile = {t.dim: t.tile for t in s.tiles}
    return Evaluator(s.nest, ns.target, pl).build(tile, s.loop_order, s.buffering).cycles


def cluster_rows(name: str, ns: NetworkSchedule, report: dict) -> list[dict]:
    out = []
    zero = {c: 0.0 for c in CLUSTER}
    for i, layer in enumerate(report["layers"]):
        if ns.placement(i).module.name != "ne16":
            continue
        base = repriced(ns, i, **zero)
        feats = {c: repriced(ns, i, **{**zero, c: 1.0}) - base for c in CLUSTER}
        out.append({"case": name, "layer": layer["name"], "binding": ns.placement(i).binding.name,
                    "measured": layer["measured_cycles"], "previous": layer["predicted_cycles"],
                    "base": base, "features": feats})
    return out


def run_cluster(work: Path) -> list[dict]:
    os.environ.pop("TILEWISE_NE16_TIMED", None)        # the firmware as it ships
    rows: list[dict] = []
    for name in CLUSTER_CASES:
        lg = lower(load_model(MLPERF / f"{name}.tflite"))
        ns = schedule_network(lg, get_target("pulp-open-ne16"), "model")
        rep, _ = validate_network(ns, work / name, make_inputs(lg, 1, 0)[:1], model=name, on="gvsoc")
        r = rep.to_json()
        assert r["bit_exact"], (name, r["mismatches"][:2])
        got = cluster_rows(name, ns, r)
        print(f"{name}: {len(got)} NE16 layers, bit-exact", flush=True)
        rows += got
    return rows


def fit_cluster(rows: list[dict]) -> dict[str, float]:
    """Non-negative least squares of (measured − base) on the features, relative weights."""
    from scipy.optimize import nnls

    a = np.array([[r["features"][c] / r["measured"] for c in CLUSTER] for r in rows])
    b = np.array([(r["measured"] - r["base"]) / r["measured"] for r in rows])
    x, _ = nnls(a, b)
    return {c: round(float(v), 1) for c, v in zip(CLUSTER, x)}


def cluster_predicted(row: dict, fit: dict[str, float]) -> float:
    return row["base"] + sum(fit[c] * row["features"][c] for c in CLUSTER)


def main_cluster(from_json: str | None) -> None:
    if from_json:
        rows = json.loads(Path(from_json).read_text())["cluster"]["rows"]
    else:
        with tempfile.TemporaryDirectory(prefix="tw_ne16_cal_") as work:
            rows = run_cluster(Path(work))
    f = fit_cluster(rows)
    for r in rows:
        r["fitted"] = round(cluster_predicted(r, f), 1)
    print("fitted:", f)
    by: dict[str, list[float]] = {}
    for r in rows:
        s = by.setdefault(r["binding"], [0.0, 0.0, 0.0, 0])
        s[0] += r["measured"]
        s[1] += r["fitted"]
        s[2] += r["previous"]
        s[3] += 1
    print(f"{'binding':22s} {'layers':>6s} {'measured':>10s} {'fitted':>10s} {'ratio':>6s} "
          f"{'previous':>10s} {'ratio':>6s}")
    for k, (m, fi, pr, n) in sorted(by.items()):
        print(f"{k:22s} {n:6d} {m:10.0f} {fi:10.0f} {fi / m:6.3f} {pr:10.0f} {pr / m:6.3f}")
    m, fi, pr = (sum(r[k] for r in rows) for k in ("measured", "fitted", "previous"))
    print(f"{'all':22s} {len(rows):6d} {m:10.0f} {fi:10.0f} {fi / m:6.3f} {pr:10.0f} {pr / m:6.3f}")
    worst = max(rows, key=lambda r: abs(r["fitted"] / r["measured"] - 1))
    print(f"worst layer: {worst['case']}/{worst['layer']} ({worst['binding']}) "
          f"{worst['fitted'] / worst['measured']:.3f}")
    doc = json.loads(OUT.read_text()) if OUT.exists() else {}
    doc["cluster"] = {"fit": f, "rows": rows}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="kws_dscnn,ic_resnet8,vww_mobilenet_v1_025,nemo,"
                                       "kws_dscnn_nq,ic_resnet8_nq,small")
    ap.add_argument("--from-json", help="refit the rows of an earlier run (no GVSoC)")
    ap.add_argument("--cluster", action="store_true",
                    help="fit the cluster's side of the NE16 layers (module docstring)")
    args = ap.parse_args()
    if args.cluster:
        main_cluster(args.from_json)
        return
    if args.from_json:
        rows = json.loads(Path(args.from_json).read_text())["rows"]
    else:
        names = []
        for n in args.cases.split(","):
            names += list(SMALL) if n == "small" else [n]
        with tempfile.TemporaryDirectory(prefix="tw_ne16_cal_") as work:
            rows = run_cases(names, Path(work))
    g = fit(rows)
    for r in rows:
        r["fitted"] = round(predicted(r, g), 1)
    kinds: dict[str, list[float]] = {}
    for r in rows:
        s = kinds.setdefault(r["kind"], [0.0, 0.0, 0.0, 0])
        s[0] += r["measured"]
        s[1] += r["fitted"]
        s[2] += r["match"]
        s[3] += 1
    print("fitted:", {c: getattr(g, c) for c in COEFS})
    print(f"{'kind':10s} {'layers':>6s} {'measured':>10s} {'fitted':>10s} {'ratio':>6s} "
          f"{'MATCH':>10s} {'ratio':>6s}")
    for k, (m, f, mt, n) in sorted(kinds.items()):
        print(f"{k:10s} {n:6d} {m:10.0f} {f:10.0f} {f / m:6.3f} {mt:10.0f} {mt / m:6.3f}")
    worst = max(rows, key=lambda r: abs(r["fitted"] / r["measured"] - 1))
    print(f"worst layer: {worst['case']}/{worst['layer']} ({worst['kind']}) "
          f"{worst['fitted'] / worst['measured']:.3f}")
    doc = json.loads(OUT.read_text()) if OUT.exists() else {}
    doc.update({"fit": {c: getattr(g, c) for c in COEFS}, "rows": rows})
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
