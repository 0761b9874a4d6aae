"""Fit cluster-l2's factors for the loads from L2 (targets/pulp_open.py CLUSTER_L2) on GVSoC.

Each network is scheduled for pulp-open at the least RAM tilewise finds (bench/pulp_chains.py
`least_ram`: its fused chains' members run on cluster-l2, the 8 cores on the L2 tensors), the
firmware runs on GVSoC (`validate --on gvsoc`, one random input, bit-exact) and every chain's
measured cycles (at its last member's step) are compared with its price on the same bands
(schedule/chain.py `price`: each member's band calls on the kernels' model). The price is linear
in the `from_l2` factors of the 3x3 conv ("conv"), the 1x1 conv ("conv1x1") and the depthwise
("dwconv"): price = A + f3·B3 + f1·B1 + fd·Bd, with A the terms those factors leave alone
(requantization, tile call, the add, the forks, the rings' copies). Least squares on the relative
error over the chains gives the three factors. Networks: MobileNetV2 1.0 at 96x96 (five stages)
and 64x64 (three), bench/geometries.py, and ic_resnet8.
Writes bench/calibration_chains_pulp.json (per chain: its members, bands, measured cycles, A and
the B's) and prints the fit and each chain's residual. The chains are the ones the current
factors pick, so a refit after a change of factors sees other bands.
Usage: .venv/bin/python bench/calibrate_chains_pulp.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import models, scheduling  # noqa: E402
from bench.geometries import mobilenet_v2  # noqa: E402
from bench.pulp_chains import least_ram  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.schedule import chain as C  # noqa: E402
from tilewise.schedule.api import schedule_placed  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import make_inputs, validate_network  # noqa: E402

HERE = Path(__file__).resolve().parent
KINDS = ("conv", "conv1x1", "dwconv")


def _price(target, nests, placements, bs, factors: dict[str, float], branch: int | None) -> float:
    """The chain's member cycles on bands `bs` with `factors` as the from_l2 of those kinds."""
    cyc = []
    for pl in placements:
        c = pl.binding.cost
        fl = {**dict(c.from_l2), **factors}
        p = replace(pl, binding=replace(pl.binding, cost=replace(c, from_l2=tuple(fl.items()))))
        cyc.append(lambda n, p=p: schedule_placed(n, target, p, "model").cycles)
    per, _, _ = C.price(nests, bs, cyc, lambda n: 0.0, branch)
    return sum(per)


def chains_of(name: str, lg) -> list[dict]:
    target = get_target("pulp-open")
    ns = schedule_network(lg, target, ram_budget=least_ram(lg, target))
    with tempfile.TemporaryDirectory(prefix="tw_cal_chains_") as tmp:
        report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1], model=name,
                                     on="gvsoc")
    r = report.to_json()
    if not r["bit_exact"]:
        raise SystemExit(f"{name}: not bit-exact on GVSoC")
    index = {layer.name: k for k, layer in enumerate(lg.layers)}
    rows = []
    for ch in ns.chains:
        ks = [index[n] for n in ch.layers]
        nests = [ns.schedules[k].nest for k in ks]
        pls = [ns.placement(k) for k in ks]
        # the bands are the main path's (all members but a branch)
        bs = C.bands([nests[k] for k in C.main_path(len(nests), ch.branch)], ch.band)
        zero = {k: 0.0 for k in KINDS}
        a = _price(target, nests, pls, bs, zero, ch.branch) + ch.copy_cycles
        b = {k: _price(target, nests, pls, bs, {**zero, k: 1.0}, ch.branch) - (a - ch.copy_cycles)
             for k in KINDS}
        rows.append({"network": name, "layers": list(ch.layers), "band": ch.band,
                     "measured": r["layers"][ks[-1]]["measured_cycles"], "predicted": ch.cycles,
                     "fixed": a, **{f"per_{k}": v for k, v in b.items()}})
    return rows


def main() -> None:
    rows = []
    for res, stages in ((96, 5), (64, 3)):
        lg = mobilenet_v2(res, 10, stages=stages)
        rows += chains_of(lg.name, lg)
    rows += chains_of("ic_resnet8", scheduling.lowered(models.model_path("ic_resnet8")))
    m = np.array([r["measured"] for r in rows], dtype=float)
    x = np.array([[r[f"per_{k}"] / mm for k in KINDS] for r, mm in zip(rows, m)])
    y = np.array([1.0 - r["fixed"] / mm for r, mm in zip(rows, m)])
    sol, *_ = np.linalg.lstsq(x, y, rcond=None)
    coefs = dict(zip(KINDS, (round(float(v), 3) for v in sol)))
    for r, e in zip(rows, x @ sol - y):
        r["fitted_over_measured"] = round(1.0 + float(e), 4)
        print(f"{r['network']:24s} {r['layers'][0]:16s} {len(r['layers'])} members, band "
              f"{r['band']}: measured {r['measured']:,}, predicted {r['predicted']:,.0f}, "
              f"fitted/measured {r['fitted_over_measured']:.3f}")
    print("fit:", json.dumps(coefs))
    (HERE / "calibration_chains_pulp.json").write_text(
        json.dumps({"coefficients": coefs, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
