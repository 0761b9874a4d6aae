"""Fit the stm32h7 cost models — the pulp kernels' model (bindings/pulp/cost.py) on the Cortex-M7,
one per unit: in estimated cycles (KERNELS_CYCLES) and in executed instructions
(KERNELS_INSTRUCTIONS) — to each layer's estimated cycles / counted instructions.

`python bench/calibrate_m7.py` generates stm32h7 firmware for the four MLPerf Tiny models, the
bundled example and seed 004's layer, at the part's own L1 and at 16 kB, runs each in the
instruction-counting emulator (`validate --on count`: unicorn's Cortex-M7) and reads every
layer's executed instructions and its estimated Cortex-M7 cycles (platforms/m7_timing.py:
llvm-mca's Cortex-M7 model per executed basic block + flash line fills). On the Cortex-M7 the
firmware's copies into the L1 arena are done by the core (tw_hal_cortex_m.c: blocking), so a
layer's instructions are its kernels' plus its copies' — every coefficient enters linearly: the
kernels' coefficients as in bench/calibrate_pulp.py (the prediction with one coefficient 1 and
the others 0, summed over the schedule's tiles), the copies' as instructions per transfer, per
contiguous L2 run and per byte, and one per layer.
One non-negative least-squares fit (scipy.optimize.nnls) of all of them, each layer weighted by
1/measured; coefficients no layer exercises keep the kernels' RI5CY defaults. `--unit
instructions` (KERNELS_INSTRUCTIONS) fits counted instructions and writes
bench/calibration_m7.json; `--unit cycles` (KERNELS_CYCLES, the target's) fits estimated cycles
with the coefficients outside the fit held at KERNELS_CYCLES' (targets/stm32h7.py: instructions x
CYCLES_PER_INSTRUCTION, the ratio this script prints) and writes bench/calibration_m7_cycles.json:
the data, the coefficients and the errors per network and layer kind (measured = counted
instructions or estimated cycles).
`--networks ad_autoencoder,...` collects those networks only (with --only and a --data file of
its own: the refit of a kernel that only they exercise).
`--only dw_step,dw_gather,...` fits the listed coefficients only, the others held at the unit's
model's (and the layer overhead at the target's): the refit of the coefficients a kernel change
moves. `--target stm32l4r5 --unit cycles` fits the Cortex-M4's KERNELS_CYCLES (targets/stm32l4r5.py) the
same way on the estimated Cortex-M4 cycles (platforms/m4_timing.py) of the stm32l4r5 firmware
(unicorn's Cortex-M4), at the part's own L1 only, and writes bench/calibration_m4_cycles.json.
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

from bench import calibrate_pulp as cp  # noqa: E402
from bench import scheduling  # noqa: E402
from tilewise.schedule.cost import Evaluator  # noqa: E402
from tilewise.targets import stm32h7, stm32l4r5  # noqa: E402
from tilewise.targets.stm32h7 import KERNELS_CYCLES, KERNELS_INSTRUCTIONS  # noqa: E402
from tilewise.validate import make_inputs, validate_network  # noqa: E402

HERE = Path(__file__).resolve().parent
#: the copies' and the layer's coefficients, after the kernels'
COPY = ("per_transfer", "per_chunk", "per_byte", "per_layer")
#: per unit: the row's measured figure, the model whose other coefficients are held, the data file
UNITS = {"instructions": ("measured_layer", KERNELS_INSTRUCTIONS, "calibration_m7.json"),
         "cycles": ("estimated_layer", KERNELS_CYCLES, "calibration_m7_cycles.json")}
#: the Cortex-M4's (--target stm32l4r5): cycles only (its instructions: stm32h7's model)
UNITS_M4 = {"cycles": ("estimated_layer", stm32l4r5.KERNELS_CYCLES, "calibration_m4_cycles.json")}
#: the layer overhead each model holds (--only)
LAYER_OVERHEAD = {("stm32h7", "instructions"): stm32h7.LAYER_OVERHEAD_INSTRUCTIONS,
                  ("stm32h7", "cycles"): stm32h7.LAYER_OVERHEAD_CYCLES,
                  ("stm32l4r5", "cycles"): stm32l4r5.LAYER_OVERHEAD_CYCLES}
#: per target: its units and the L1 sizes (kB; None: the part's own) it is calibrated at
TARGETS = {"stm32h7": (UNITS, (None, 16)), "stm32l4r5": (UNITS_M4, (None,))}


def collect(target: str = "stm32h7", l1s=(None, 16), only: set[str] | None = None) -> list[dict]:
    rows = []
    for net, lg in cp.networks():
        if only is not None and net not in only:
            continue
        for l1 in l1s:
            ns = scheduling.schedule(lg, scheduling.target(target, l1_kb=l1), "model")
            with tempfile.TemporaryDirectory(prefix="tw_calib_m7_") as tmp:
                report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1],
                                             on="count")
            r = report.to_json()
            if not r["bit_exact"]:
                raise RuntimeError(f"{net} L1 {l1}: not bit-exact: {r['mismatches'][:2]}")
            for i, (layer, lc) in enumerate(zip(lg.layers, r["layers"])):
                s, key = ns.schedules[i], ns.placement(i).binding.key
                rows.append({"network": net, "cores": 1, "l1_kb": l1, "layer": layer.name,
                             "index": i, "kind": layer.nest.kind, "op": str(layer.op),
                             "mode": key.mode, "untiled": s.untiled, "tiles": s.n_tiles,
                             "tile": {t.dim: t.tile for t in s.tiles},
                             "order": list(s.loop_order), "buffering": s.buffering,
                             "measured_compute": None,
                             "measured_layer": lc["measured_instructions"],
                             "estimated_layer": lc["estimated_cycles"]})
            print(f"{net:24s} L1 {l1}: {r['measured_instructions']:,} instructions, "
                  f"{r['estimated_cycles']:,} estimated cycles", flush=True)
    return rows


def configs(rows: list[dict], target: str = "stm32h7") -> dict:
    nets = dict(cp.networks())
    out = {}
    for r in rows:
        cfg = (r["network"], r["cores"], r["l1_kb"])
        if cfg not in out:
            tgt = scheduling.target(target, l1_kb=r["l1_kb"])
            out[cfg] = (nets[r["network"]], tgt, scheduling.schedule(nets[r["network"]], tgt,
                                                                      "model"))
    return out


def add_copy_columns(rows: list[dict], cfgs: dict) -> None:
    """Each row's copy columns: its schedule's transfers, contiguous L2 runs and bytes."""
    for r in rows:
        lg, tgt, ns = cfgs[(r["network"], r["cores"], r["l1_kb"])]
        cols = dict.fromkeys(COPY, 0.0)
        cols["per_layer"] = 1.0
        if not r["untiled"]:
            s = Evaluator(lg.layers[r["index"]].nest, tgt, ns.placement(r["index"])).build(
                r["tile"], tuple(r["order"]), r["buffering"])
            for t in s.traffic:
                cols["per_transfer"] += t.transfers
                cols["per_chunk"] += t.chunks
                cols["per_byte"] += t.bytes
        r["columns"].update(cols)


def hold(rows: list[dict], only: set[str], base, per_layer: float) -> None:
    """Every coefficient but `only` held at `base`'s (the layer's at `per_layer`): its columns
    moved into each row's fixed part."""
    for r in rows:
        for c, v in r["columns"].items():
            if c in only or not v:
                continue
            if c in COPY[:3]:
                raise SystemExit(f"--only: {r['network']} {r['layer']} copies tiles ({c}); the "
                                 "copies' coefficients are not the model's to hold")
            r["fixed"] = r.get("fixed", 0.0) + v * (per_layer if c == "per_layer"
                                                    else getattr(base, c))
            r["columns"][c] = 0.0


def merge_chains(rows: list[dict]) -> list[dict]:
    """The rows with a fused chain's members as one: a chain runs at its last member's step
    (codegen/chain_c.py), which counts the whole chain, the other members' count 0; their
    columns and fixed parts are added to the next counted row of the same run."""
    out: list[dict] = []
    pending: list[dict] = []
    for r in rows:
        if r["measured_layer"] == 0 and r["estimated_layer"] == 0:
            pending.append(r)
            continue
        members = [m for m in pending if (m["network"], m["l1_kb"]) == (r["network"], r["l1_kb"])]
        if members:
            r = {**r, "kind": f"chain ... {r['kind']}",
                 "fixed": r.get("fixed", 0.0) + sum(m.get("fixed", 0.0) for m in members),
                 "columns": {c: v + sum(m["columns"].get(c, 0.0) for m in members)
                             for c, v in r["columns"].items()}}
        pending = []
        out.append(r)
    return out


def fit(rows: list[dict], measured: str = "measured_layer") -> dict[str, float]:
    from scipy.optimize import nnls

    names = [c for c in (*cp.COEFS, *COPY) if any(r["columns"][c] for r in rows)]
    A = np.array([[r["columns"][c] / r[measured] for c in names] for r in rows])
    x, _ = nnls(A, np.array([1.0 - r.get("fixed", 0.0) / r[measured] for r in rows]))
    defaults = cp.PulpKernels()
    out = {c: float(getattr(defaults, c)) for c in cp.COEFS}
    out.update(dict.fromkeys(COPY, 0.0))
    out.update(zip(names, map(float, x)))
    return out


def errors(rows: list[dict], coefs: dict[str, float], measured: str = "measured_layer") -> dict:
    out: dict = {"by network": {}, "by kind": {}}
    for r in rows:
        pred = r.get("fixed", 0.0) + sum(coefs[c] * v for c, v in r["columns"].items())
        for group, key in (("by network", f"{r['network']} L1 {r['l1_kb']}"),
                           ("by kind", f"{r['kind']} ({r['mode']})")):
            v = out[group].setdefault(key, [0.0, 0.0])
            v[0] += r[measured]
            v[1] += pred
    return {g: {k: {"measured": m, "predicted": p, "ratio": m / p if p else None}
                for k, (m, p) in v.items()} for g, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=tuple(TARGETS), default="stm32h7",
                    help="the Cortex-M7 (stm32h7) or the Cortex-M4 (stm32l4r5, cycles only)")
    ap.add_argument("--unit", choices=tuple(UNITS), default="cycles",
                    help="fit estimated cycles (the target's model) or counted instructions")
    ap.add_argument("--data", type=Path, help="the data file (default: the unit's)")
    ap.add_argument("--reuse", action="store_true", help="refit the data already in --data")
    ap.add_argument("--only", help="comma-separated coefficients to fit, the others held")
    ap.add_argument("--networks", help="comma-separated networks to collect (default: all; with "
                    "--only, the layers of the coefficients refit: ad_autoencoder for fcw_*)")
    a = ap.parse_args(argv)
    units, l1s = TARGETS[a.target]
    if a.unit not in units:
        ap.error(f"--target {a.target} is fitted in {', '.join(units)} only")
    measured, base, default = units[a.unit]
    data = a.data or HERE / default
    rows = json.loads(data.read_text())["rows"] if a.reuse else collect(a.target, l1s,
                                                                         set(a.networks.split(","))
                                                                         if a.networks else None)
    if not a.reuse:      # the collected rows kept before the fit (--reuse refits them)
        data.write_text(json.dumps({"target": a.target, "unit": a.unit, "rows": rows}) + "\n")
    cfgs = configs(rows, a.target)
    # the kernels' structure built for Arm; the integer exports' coefficients held at the
    # unit's model's (bench/calibrate_int.py)
    cp.add_columns(rows, cfgs, base=replace(base, arm=True))
    add_copy_columns(rows, cfgs)
    only = set(a.only.split(",")) if a.only else None
    if only:
        hold(rows, only, base, LAYER_OVERHEAD[(a.target, a.unit)])
    collected, rows = rows, merge_chains(rows)
    coefs = fit(rows, measured)
    if only:      # the held ones as they are held (fit gives the defaults of the unexercised)
        coefs.update({c: float(getattr(base, c)) for c in cp.COEFS if c not in only})
        coefs["per_layer"] = LAYER_OVERHEAD[(a.target, a.unit)]
    err = errors(rows, coefs, measured)
    for c, v in coefs.items():
        print(f"{c:24s} {v:10.4f}")
    cpi = sum(r["estimated_layer"] for r in rows) / sum(r["measured_layer"] for r in rows)
    print(f"\nestimated cycles per counted instruction over the set: {cpi:.4f}")
    for g, v in err.items():
        print(f"\n{g}:")
        for k, e in v.items():
            print(f"  {k:40s} measured {e['measured']:14,.0f} predicted {e['predicted']:14,.0f} "
                  f"ratio {e['ratio']:.3f}")
    fitted = [c for c in (*cp.COEFS, *COPY) if any(r["columns"][c] for r in rows)]
    print(f"\nfitted (the others: the defaults, not exercised): {', '.join(fitted)}")
    data.write_text(json.dumps({"target": a.target, "unit": a.unit, "coefficients": coefs, "fitted": fitted,
                                "errors": err,
                                "cycles_per_instruction": cpi, "rows": collected}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
