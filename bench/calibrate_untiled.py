"""Fit the fixed cost of layers called directly (no fork) and the untiled portable kernels of
TFLite's unrolled recurrent layers on GVSoC: pulp-open's `call_overhead_cycles`
(targets/base.py Module) and PulpKernels' `lut_elem` / `lut_call` (tw_lut_s8: LOGISTIC, TANH),
`bcast_elem` / `bcast_call` (tw_add_s8 / tw_sub_s8 with a broadcast operand: ADD / SUB untiled)
and `transpose_call` (tw_transpose's call: SLICE / SPLIT / UNPACK and TRANSPOSE on a host core)
(bindings/pulp/cost.py).

`python bench/calibrate_untiled.py` builds one model per SHAPES entry (R rows × C channels, int8):
x [1, R, C] → RESHAPE [R, C] → LOGISTIC → TANH → SUB(a per-channel constant: the broadcast
kernel) → MUL(a constant of one value: the lookup) → SPLIT in two halves on the channels (both
outputs), validates each on pulp-open `--on gvsoc` (bit-exact
against LiteRT or it stops) and reads every layer's measured cycles; the TensorFlow GRU's
(tests/gru_models.py gru3: unpacks and splits of one row, 10 and 32 elements, its lookups and
subs of 32) are measured with them. Each layer whose binding is called directly
(Binding.direct_call) is `call_overhead + call + elem · elements (+ row · rows)`:
- call_overhead_cycles: the mean of the reshapes' (a view: its function copies nothing);
- per kernel, (elem, call) by least squares on measured − call_overhead, each row weighted by
  1/measured; tw_transpose's (elem, row, call) — per element, per row of the output's innermost
  dimension (its odometer step), per call — likewise on the slices here and the host core's
  transposes and slices the other fits measured (bench/calibration_cpu.json, and Deeploy's Slice
  in bench/calibration_int.json): pulp-open's HOST transpose_elem / transpose_row /
  transpose_call (targets/pulp_open.py).
The same runs fit tw_network_run's own cycles (pulp-open's Target.network_call_cycles,
network_step_cycles and network_copy_cycles_per_byte: pipeline.NetworkSchedule.network_cycles) on
each network's measured cycles outside its layers: per run, per layer, and per byte of its
outputs (and uint8 inputs) copied.
Writes bench/calibration_untiled.json (the rows, the fits, predicted / measured by the fit and by
the model in the tree); tests/test_gru.py holds the model against a live GVSoC run of gru3.

Usage: .venv/bin/python bench/calibrate_untiled.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.gru_models import convert  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.quantize.tflite_build import ModelBuilder  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import validate_model  # noqa: E402

#: (rows R, channels C) of the built models
SHAPES = ((1, 16), (1, 64), (4, 64), (16, 128), (32, 256))
#: the kernel each directly called op runs, as fitted here
KERNEL = {"logistic": "lut", "tanh": "lut", "sub": "bcast", "add": "bcast", "mul": "bcast",
          "slice": "transpose", "reshape": "reshape"}


def model(path: Path, rows: int, chans: int) -> Path:
    b = ModelBuilder()
    x = b.input("x", (1, rows, chans), "int8", scale=0.05, zero_point=-3)
    shape = b.const("shape", np.array([rows, chans], np.int32), "int32")
    r = b.tensor("r", (rows, chans), "int8", scale=0.05, zero_point=-3)
    b.op("RESHAPE", [x, shape], [r], "ReshapeOptions", NewShape=[rows, chans])
    s = b.tensor("s", (rows, chans), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [r], [s])
    t = b.tensor("t", (rows, chans), "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [s], [t])
    # a per-channel constant of several values: the broadcast kernel (tw_sub_s8 per pixel)
    vec = b.const("vec", (np.arange(chans) % 100 + 20).astype(np.int8), "int8", scale=1 / 127, zero_point=0)
    d = b.tensor("d", (rows, chans), "int8", scale=1 / 64, zero_point=-1)
    b.op("SUB", [vec, t], [d], "SubOptions", FusedActivationFunction=0)
    # a constant of one value: the lookup (mul_const_lut_s8)
    two = b.const("two", np.array([100], np.int8), "int8", scale=1 / 50, zero_point=0)
    e = b.tensor("e", (rows, chans), "int8", scale=1 / 32, zero_point=-1)
    b.op("MUL", [d, two], [e], "MulOptions", FusedActivationFunction=0)
    axis = b.const("axis", np.array(-1, np.int32), "int32")
    halves = [b.tensor(f"h{k}", (rows, chans // 2), "int8", scale=1 / 32, zero_point=-1)
              for k in range(2)]
    b.op("SPLIT", [axis, e], halves, "SplitOptions", NumSplits=2)
    for h in halves:
        b.output(h)
    return b.save(path)


def measure(path: Path, work: Path, name: str, networks: list[dict]) -> list[dict]:
    """The directly called layers of the model at `path` measured on GVSoC; the network's
    cycles outside its layers appended to `networks`."""
    target = get_target("pulp-open")
    g = load_model(path)
    ns = schedule_network(lower(g), target)
    rep = validate_model(path, ns, g, 1, 0, work / name, on="gvsoc").to_json()
    if not rep["bit_exact"]:
        raise SystemExit(f"bench/calibrate_untiled.py: {name} is not bit-exact on pulp-open")
    lg = ns.layers
    copied = (sum(lg.tensors[o].nbytes for o in lg.outputs)
              + sum(lg.tensors[i].nbytes for i in lg.inputs if lg.tensors[i].dtype == "uint8"))
    networks.append({"model": name, "layers": len(lg.layers), "copied_bytes": int(copied),
                     "outside": int(rep["measured_cycles"] - sum(x["measured_cycles"] for x in rep["layers"])),
                     "network_cycles_then": round(float(ns.network_cycles), 1)})
    out = []
    for i, layer in enumerate(rep["layers"]):
        p = ns.placement(i)
        op = layer["op"]
        if not p.binding.direct_call or op not in KERNEL:
            continue
        nest = ns.layers.layers[i].nest
        kernel = "lut" if "const_lut" in p.binding.name else KERNEL[op]
        out.append({"model": name, "layer": layer["name"], "op": op, "kernel": kernel,
                    "module": p.module.name, "binding": p.binding.name,
                    "elements": int(nest.N * nest.OY * nest.OX * nest.K),
                    "rows": int(nest.N * nest.OY * nest.OX),
                    "measured": int(layer["measured_cycles"]),
                    "predicted_then": round(float(layer["predicted_cycles"]), 1)})
        print(f"{name:>10} {layer['name']:<24} {op:<9} {p.module.name:<8} n={out[-1]['elements']:>6} "
              f"measured {out[-1]['measured']:>8,}", flush=True)
    return out


def _lsq(e: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    from scipy.optimize import nnls

    a = np.stack([e, np.ones_like(e)], axis=1)
    x, _ = nnls(a * w[:, None], y * w)
    return float(x[0]), float(x[1])


def fit(rows: list[dict]) -> dict[str, float]:
    from scipy.optimize import nnls

    oh = float(np.mean([r["measured"] for r in rows if r["kernel"] == "reshape"]))
    out = {"call_overhead_cycles": round(oh, 1)}
    for k in ("lut", "bcast"):
        sel = [r for r in rows if r["kernel"] == k]
        e = np.array([r["elements"] for r in sel], float)
        y = np.array([r["measured"] for r in sel], float)
        elem, call = _lsq(e, y - oh, 1.0 / y)
        out[f"{k}_elem"], out[f"{k}_call"] = round(elem, 3), round(call, 1)
    sel = [r for r in rows if r["kernel"] == "transpose"]
    a = np.array([[r["elements"], r["rows"], 1.0] for r in sel], float)
    y = np.array([r["measured"] for r in sel], float)
    w = 1.0 / y
    x, _ = nnls(a * w[:, None], (y - oh) * w)
    out["transpose_elem"], out["transpose_row"], out["transpose_call"] = (round(float(v), 3) for v in x)
    return out


def fit_network(networks: list[dict]) -> dict[str, float]:
    """tw_network_run's own cycles: per run, per layer and per byte copied (Target.network_call_cycles,
    network_step_cycles, network_copy_cycles_per_byte), least squares on each network's cycles
    outside its layers."""
    from scipy.optimize import nnls

    a = np.array([[1.0, r["layers"], r["copied_bytes"]] for r in networks], float)
    y = np.array([r["outside"] for r in networks], float)
    w = 1.0 / y
    x, _ = nnls(a * w[:, None], y * w)
    return {"network_call_cycles": round(float(x[0]), 1), "network_step_cycles": round(float(x[1]), 2),
            "network_copy_cycles_per_byte": round(float(x[2]), 3)}


def predicted(r: dict, c: dict) -> float:
    oh = c["call_overhead_cycles"]
    if r["kernel"] == "reshape":
        return oh
    if r["kernel"] == "transpose":
        return oh + c["transpose_call"] + c["transpose_elem"] * r["elements"] + c["transpose_row"] * r["rows"]
    return oh + c[f"{r['kernel']}_call"] + c[f"{r['kernel']}_elem"] * r["elements"]


def stored_transposes() -> list[dict]:
    """The host core's transposes and slices measured by the other fits on GVSoC (pulp-open's cpu
    module): calibrate_cpu's (bench/calibration_cpu.json; their rows from the tests' models they
    ran, tests/cpu_models.py) and calibrate_int's (bench/calibration_int.json: Deeploy's Slice)."""
    from tests import cpu_models

    out = []
    nests = {}
    for net, builder in (("transpose_concat", cpu_models.transpose_concat),
                         ("host_ops", cpu_models.host_ops)):
        with tempfile.TemporaryDirectory() as tmp:
            lg = lower(load_model(builder().save(Path(tmp) / "m.tflite")))
        nests[net] = {layer.name: layer.nest for layer in lg.layers}
    for r in json.loads((REPO / "bench" / "calibration_cpu.json").read_text())["rows"]:
        if r["op"] == "transpose":
            n = nests[r["network"]][r["layer"]]
            out.append({"model": f"calibration_cpu {r['network']}", "layer": r["layer"], "op": "transpose",
                        "kernel": "transpose", "module": "cpu", "binding": r["binding"],
                        "elements": r["elements"], "rows": int(n.N * n.OY * n.OX),
                        "measured": r["measured"], "predicted_then": r["predicted"]})
    for r in json.loads((REPO / "bench" / "calibration_int.json").read_text())["rows"]:
        if r["config"] == "gvsoc" and r["kernel"] == "slice":
            n = r["nest"]
            out.append({"model": f"calibration_int {r['network']}", "layer": r["layer"], "op": "slice",
                        "kernel": "transpose", "module": r["module"], "binding": r["binding"],
                        "elements": n["N"] * n["OY"] * n["OX"] * n["K"], "rows": n["N"] * n["OY"] * n["OX"],
                        "measured": r["measured_layer"], "predicted_then": r["predicted_layer_then"]})
    return out


def main() -> None:
    rows: list[dict] = []
    networks: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="calibrate_untiled_") as tmp:
        work = Path(tmp)
        for rr, cc in SHAPES:
            rows += measure(model(work / f"u{rr}x{cc}.tflite", rr, cc), work, f"u{rr}x{cc}", networks)
        rows += measure(convert(work / "gru")["gru3.tflite"], work, "gru3", networks)
    rows += stored_transposes()
    coefs = fit(rows)
    net = fit_network(networks)
    for r in networks:
        r["outside_fit"] = round(net["network_call_cycles"] + net["network_step_cycles"] * r["layers"]
                                 + net["network_copy_cycles_per_byte"] * r["copied_bytes"], 1)
        print(f"{r['model']:>10} {r['layers']:>4} layers {r['copied_bytes']:>6} B copied: outside the layers "
              f"{r['outside']:>8,} measured, {r['outside_fit']:>10,.0f} fit")
    for r in rows:
        r["predicted_fit"] = round(predicted(r, coefs), 1)
        r["ratio_fit"] = round(r["predicted_fit"] / r["measured"], 3)
    print(json.dumps(coefs), json.dumps(net))
    for r in rows:
        print(f"{r['model']:>34} {r['op']:<9} n={r['elements']:>6} measured {r['measured']:>8,} "
              f"fit {r['predicted_fit']:>10,.0f} ({r['ratio_fit']:.2f})  then {r['predicted_then']:>10,.0f}")
    dest = REPO / "bench" / "calibration_untiled.json"
    dest.write_text(json.dumps({"fit": coefs, "rows": rows, "network_fit": net, "networks": networks},
                               indent=1) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
