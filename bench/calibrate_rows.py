"""Fit the cluster row kernels' cost model (bindings/pulp/rows_cost.py RowsCost) on GVSoC cycles.

The kernels: the pulp family's row-wise integer ops and transpose through L1
(bindings/pulp/rows.py, c/tw_pulp_rows.c). `python bench/calibrate_rows.py` validates Deeploy's
ICCT and microLlama1 exports (../shared/models/integer_onnx/deeploy, their inputs.npz and
outputs.npz, bit-exact or the script stops) on pulp-open under GVSoC with the cluster's 8 cores
and with 1 (`--cores 1`), and keeps one row per layer of those kernels: its op, binding, loop
nest, cores and the measured cycles of the whole layer (mcycle around the layer function,
firmware/main.c). The fit (numpy least squares, non-negative by construction of the columns,
each row weighted by 1/measured) takes per row the model's columns — RowsCost's terms with one
coefficient 1 and the others 0 — against the measured cycles less the module's per-layer
overhead (targets/pulp_open.py: 473): `call` and `block` shared by the row ops, `elem` per op,
`row` per op where the layers have rows of different lengths (else held at the model's value),
the transpose's `t_call` + `t_dma` (together) and `t_elem`, the reduce's `r_call` and `r_elem`.

Writes bench/calibration_rows.json: the rows, the fitted coefficients and per (cores, op) the
measured and predicted sums (the model in the tree, the fit). tests/test_pulp_rows.py holds the
model in the tree against the rows. Rerun after changing the kernels or the model.

Usage: .venv/bin/python bench/calibrate_rows.py [--reuse] [--cores 8,1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tilewise.bindings.pulp.rows import ELEMENTWISE, geometry  # noqa: E402
from tilewise.bindings.pulp.rows_cost import ROW_OPS, RowsCost  # noqa: E402
from tilewise.ir.layer import LoopNest  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402

OUT = REPO / "bench" / "calibration_rows.json"
DEEPLOY = "integer_onnx/deeploy"
#: network (under ../shared/models/integer_onnx/deeploy) -> input dtypes validate needs
NETWORKS = {"models/CCT/Int/ICCT": {}, "models/microLlama/INT8/microLlama1": {"*": "int8"}}
TARGET = "pulp-open"


def _models_dir() -> Path:
    from tests.conftest import models_dir

    return models_dir()


def collect(cores: tuple[int, ...]) -> list[dict]:
    """One row per layer of the row kernels, per network and core count (module docstring)."""
    from tilewise.validate.own_data import validate_data_path

    rows = []
    for p in cores:
        target = get_target(TARGET, cores=p)
        for net, dtypes in NETWORKS.items():
            d = _models_dir() / DEEPLOY / net
            with tempfile.TemporaryDirectory(prefix="tw_calib_rows_") as tmp:
                r = validate_data_path(d / "network.onnx", target, data=d / "inputs.npz",
                                       expected=d / "outputs.npz", on="gvsoc", out_dir=Path(tmp) / "p",
                                       input_dtypes=dtypes or None)
                from tilewise.pipeline import schedule_network
                from tilewise.validate.own_inputs import read_user_data

                lg = read_user_data(d / "network.onnx", d / "inputs.npz", expected=d / "outputs.npz",
                                    input_dtypes=dtypes or None).lg
                ns = schedule_network(lg, target, "model")
            rep = r.to_json()
            if not rep["bit_exact"]:
                raise RuntimeError(f"{net} on {p} cores: not bit-exact: {rep['mismatches'][:2]}")
            for i, lc in enumerate(rep["layers"]):
                pl, s = ns.placement(i), ns.schedules[i]
                if not pl.binding.name.startswith(tuple(f"{o}_rows" for o in ROW_OPS) + ("transpose_l1", "reduce_l1")):
                    continue
                rows.append({"cores": p, "network": net, "index": i, "layer": lc["name"],
                             "op": str(lg.layers[i].op), "binding": pl.binding.label,
                             "nest": asdict(s.nest), "measured": lc["measured_cycles"],
                             "predicted_then": ns.layer_cycles(i)})
            print(f"{p} cores {net}: {rep.get('measured_cycles', 0):,} cycles", flush=True)
    return rows


def _nest(row: dict) -> LoopNest:
    return LoopNest(**{**row["nest"], "pads": tuple(row["nest"]["pads"])})


def overhead() -> float:
    return get_target(TARGET).module("cluster").layer_overhead_cycles


def predicted(row: dict, model: RowsCost | None = None) -> float:
    """The layer's cycles by `model` (default: the model in the tree): its terms and the module's
    per-layer overhead, as the untiled schedule sums them."""
    m = (model or RowsCost()).for_key(_Key(row["op"], row["nest"]["x_bits"]))
    return overhead() + sum(t.coef for t in m.terms(_nest(row), row["cores"]))


class _Key:
    """The part of a BindingKey RowsCost.for_key reads."""

    def __init__(self, op: str, x_bits: int) -> None:
        from tilewise.bindings.base import Precision

        self.op, self.precision = op, Precision(x_bits, 0, 8)


def coefficient_names(rows: list[dict]) -> list[str]:
    """What the rows can tell apart: call and block; per op its elem, and its row where the op's
    layers have rows of more than one length; the transpose's fixed part and elem."""
    names = ["call", "block"]
    for op in ROW_OPS:
        mine = [r for r in rows if r["op"] == op]
        if not mine:
            continue
        names.append(f"elem:{op}")
        lengths = {geometry(_nest(r), op)[1] for r in mine}
        if len(lengths) > 1 and op not in ELEMENTWISE:
            names.append(f"row:{op}")
    if any(r["op"] == "transpose" for r in rows):
        names += ["t_fixed", "t_elem"]
    if any(r["op"] == "reduce" for r in rows):
        names += ["r_call", "r_elem"]
    return names


def _with(model: RowsCost, name: str, value: float) -> RowsCost:
    if ":" in name:
        field, op = name.split(":")
        return replace(model, **{field: tuple((o, value if o == op else v) for o, v in getattr(model, field))})
    if name == "t_fixed":
        return replace(model, t_call=value, t_dma=0.0)
    return replace(model, **{name: value})


def _zero(model: RowsCost, names: list[str]) -> RowsCost:
    for n in names:
        model = _with(model, n, 0.0)
    return model


def fit(rows: list[dict]) -> tuple[RowsCost, list[str]]:
    names = coefficient_names(rows)
    base = RowsCost()
    zero = _zero(base, names)
    A, y = [], []
    for r in rows:
        rest = predicted(r, zero)
        cols = [predicted(r, _with(zero, n, 1.0)) - rest for n in names]
        A.append([c / r["measured"] for c in cols])
        y.append((r["measured"] - rest) / r["measured"])
    x, *_ = np.linalg.lstsq(np.array(A), np.array(y), rcond=None)
    x = np.maximum(x, 0.0)
    model = base
    for n, v in zip(names, x):
        model = _with(model, n, round(float(v), 3))
    return model, names


def table(rows: list[dict], model: RowsCost) -> dict:
    out: dict = {}
    for r in rows:
        e = out.setdefault(f"{r['cores']} {r['op']}", {"layers": 0, "measured": 0, "then": 0.0, "now": 0.0,
                                                       "fitted": 0.0})
        e["layers"] += 1
        e["measured"] += r["measured"]
        e["then"] += r["predicted_then"]
        e["now"] += predicted(r)
        e["fitted"] += predicted(r, model)
    for e in out.values():
        for k in ("then", "now", "fitted"):
            e[f"{k}_ratio"] = round(e[k] / e["measured"], 3)
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="8,1")
    ap.add_argument("--reuse", action="store_true", help="refit the rows already in the json")
    a = ap.parse_args(argv)
    rows = (json.loads(OUT.read_text())["rows"] if a.reuse
            else collect(tuple(int(c) for c in a.cores.split(","))))
    model, names = fit(rows)
    coefs = {"call": model.call, "block": model.block, "elem": dict(model.elem), "row": dict(model.row),
             "t_call": model.t_call, "t_dma": model.t_dma, "t_elem": model.t_elem, "r_call": model.r_call,
             "r_elem": model.r_elem}
    tab = table(rows, model)
    for k, e in tab.items():
        print(f"{k:22s} {e['layers']:3d} layers  measured {e['measured']:>10,}  now {e['now_ratio']:5.2f}  "
              f"fitted {e['fitted_ratio']:5.2f}")
    print(json.dumps({"fitted": names, "coefficients": coefs}, indent=1))
    OUT.write_text(json.dumps({"rows": rows, "fitted": names, "coefficients": coefs, "table": tab}, indent=1)
                   + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
