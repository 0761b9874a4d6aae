"""Fit the host cores' per-element cost of Deeploy's row operators (tw_int.h's tw_int_layer_norm,
tw_int_rms_norm, tw_int_softmax, tw_int_ita_max, tw_int_gelu: bindings/pulp/cost.py's
int_ln_elem, int_rms_elem, int_smx_elem, int_ita_elem, int_gelu_elem), which were assumed
(cost.py ASSUMED_INT) until these measurements.

Where they stay in use: stm32h7's one core (targets/stm32h7.py KERNELS_INSTRUCTIONS, the portable kernels:
the cluster row kernels of bindings/pulp/rows.py are not built for Arm) and the PULP targets'
host core (targets/pulp_open.py HOST, gap8 and gap9 take it too) for the layers the cluster's
row kernels refuse (rows along another axis, rows longer than an L1 block). `python
bench/calibrate_host_rows.py` validates Deeploy's ICCT and microLlama1 exports and its Softmax,
RMSNorm and Attention kernel networks (../shared/models/integer_onnx/deeploy, bit-exact against
outputs.npz or the script stops) in two configurations:

- `count`: stm32h7 under the instruction counter (`validate --on count`): instructions;
- `gvsoc-cpu`: pulp-open with its host core only (cluster core 0 on the L2 tensors) on GVSoC:
  cycles.

One row per layer of those ops: the model's prediction is per element `int_*_elem` (the
kernel's work per element, its per-row square root or division spread over the row) and one
call (`other_call`) plus the module's per-layer overhead; the fit per (configuration, op) is the
least-squares per-element coefficient of the measured less call and overhead, each layer
weighted by 1/measured. Writes bench/calibration_host_rows.json (rows, coefficients, per
(configuration, op) measured and predicted sums); tests/test_pulp_rows.py holds the models in
the tree against it. The coefficients are copied into targets/stm32h7.py and
targets/pulp_open.py by hand (the other calibrations hold them fixed: cost.py ASSUMED_INT).

Usage: .venv/bin/python bench/calibrate_host_rows.py [--reuse] [--configs count,gvsoc-cpu]
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

from tilewise.ir.layer import LoopNest  # noqa: E402
from tilewise.schedule.cost import untiled_schedule  # noqa: E402
from tilewise.schedule.placement import place  # noqa: E402
from tilewise.targets.base import Target  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402

OUT = REPO / "bench" / "calibration_host_rows.json"
DEEPLOY = "integer_onnx/deeploy"
NETWORKS = {"models/CCT/Int/ICCT": {}, "models/microLlama/INT8/microLlama1": {"*": "int8"},
            "kernels/Softmax/Regular": {}, "kernels/RMSNorm": {}, "kernels/Attention": {}}
#: configuration -> (target, runner, host core only)
CONFIGS = {"count": ("stm32h7", "count", False), "gvsoc-cpu": ("pulp-open", "gvsoc", True)}
#: op -> the coefficient that prices it per element (bindings/pulp/cost.py)
COEF = {"layer_norm": "int_ln_elem", "rms_norm": "int_rms_elem", "int_softmax": "int_smx_elem",
        "ita_max": "int_ita_elem", "int_gelu": "int_gelu_elem"}


def config_target(config: str) -> Target:
    name, _, cpu_only = CONFIGS[config]
    t = get_target(name)
    if t.instruction_model is not None:     # counted: the target's model in instructions
        t = t.instruction_model(t)
    return replace(t, modules=(t.module("cpu"),)) if cpu_only else t


def collect(configs: tuple[str, ...]) -> list[dict]:
    from tests.conftest import models_dir
    from tilewise.pipeline import schedule_network
    from tilewise.validate.own_data import validate_data_path
    from tilewise.validate.own_inputs import read_user_data

    rows = []
    for config in configs:
        target, on = config_target(config), CONFIGS[config][1]
        unit = "measured_instructions" if on == "count" else "measured_cycles"
        for net, dtypes in NETWORKS.items():
            d = models_dir() / DEEPLOY / net
            kw = dict(data=d / "inputs.npz", expected=d / "outputs.npz", input_dtypes=dtypes or None)
            with tempfile.TemporaryDirectory(prefix="tw_calib_hrows_") as tmp:
                rep = validate_data_path(d / "network.onnx", target, on=on, out_dir=Path(tmp) / "p", **kw).to_json()
            if not rep["bit_exact"]:
                raise RuntimeError(f"{net} ({config}): not bit-exact: {rep['mismatches'][:2]}")
            lg = read_user_data(d / "network.onnx", kw["data"], expected=kw["expected"],
                                input_dtypes=kw["input_dtypes"]).lg
            ns = schedule_network(lg, target, "model")
            for i, lc in enumerate(rep["layers"]):
                op, p = str(lg.layers[i].op), ns.placement(i)
                if op not in COEF or p.module.name != "cpu":
                    continue
                rows.append({"config": config, "network": net, "index": i, "layer": lc["name"], "op": op,
                             "module": p.module.name, "binding": p.binding.label, "nest": asdict(ns.schedules[i].nest),
                             "measured": lc[unit], "predicted_then": ns.layer_cycles(i)})
            print(f"{config:9s} {net}", flush=True)
    return rows


def _schedule(row: dict, target: Target):
    module = target.module(row["module"])
    binding = next(b for b in module.bindings if b.label == row["binding"])
    nest = LoopNest(**{**row["nest"], "pads": tuple(row["nest"]["pads"])})
    return untiled_schedule(nest, target, place(target, module, binding)), binding


def predicted(row: dict, target: Target | None = None) -> float:
    """The layer's cycles (instructions) by the model in the tree."""
    return _schedule(row, target or config_target(row["config"]))[0].cycles


def fit(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per configuration and op the per-element coefficient (module docstring)."""
    out: dict[str, dict[str, float]] = {}
    for config in sorted({r["config"] for r in rows}):
        target = config_target(config)
        for op, coef in COEF.items():
            mine = [r for r in rows if r["config"] == config and r["op"] == op]
            if not mine:
                continue
            a, y = [], []
            for r in mine:
                s, b = _schedule(r, target)
                per = getattr(b.cost, coef)
                elems = r["nest"]["N"] * r["nest"]["OY"] * r["nest"]["OX"] * r["nest"]["K"]
                rest = s.cycles - per * elems
                a.append(elems / r["measured"])
                y.append((r["measured"] - rest) / r["measured"])
            x = float(np.dot(a, y) / np.dot(a, a))
            out.setdefault(config, {})[coef] = round(x, 3)
    return out


def table(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        e = out.setdefault(f"{r['config']} {r['op']}", {"layers": 0, "measured": 0, "then": 0.0, "now": 0.0})
        e["layers"] += 1
        e["measured"] += r["measured"]
        e["then"] += r["predicted_then"]
        e["now"] += predicted(r)
    for e in out.values():
        e["then_ratio"], e["now_ratio"] = round(e["then"] / e["measured"], 3), round(e["now"] / e["measured"], 3)
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--reuse", action="store_true", help="refit the rows already in the json")
    a = ap.parse_args(argv)
    rows = json.loads(OUT.read_text())["rows"] if a.reuse else collect(tuple(a.configs.split(",")))
    coefs = fit(rows)
    tab = table(rows)
    for k, e in tab.items():
        print(f"{k:24s} {e['layers']:3d} layers  measured {e['measured']:>11,}  then {e['then_ratio']:5.2f}  "
              f"now {e['now_ratio']:5.2f}")
    print(json.dumps(coefs, indent=1))
    OUT.write_text(json.dumps({"rows": rows, "coefficients": coefs, "table": tab}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
