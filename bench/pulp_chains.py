"""Table 15 — fused chains on pulp-open, measured on GVSoC (issue 30: MobileNetV2 at a reduced
resolution on GVSoC, and the four MLPerf Tiny models with the chains the cost model picks).

On pulp-open the partition tiles every conv and depthwise through L1 on the 8-core cluster, which
a chain cannot hold (its members read and write rows where they are); under a RAM budget the
unfused plan misses, a chain's members run untiled on the cluster's cores from L2 instead
(cluster-l2: one fork per member and band, the band's rows split over the 8 cores; pipeline.py
`_untiled`, targets/pulp_open.py CLUSTER_L2). Each row is scheduled at the least RAM tilewise
finds for the model (`--ram-budget` at the figure the refusal of a 1-byte budget names), run
once on GVSoC (`validate --on gvsoc`: one random input, bit-exact against the golden model) and
printed next to the unfused schedule (no budget: the fastest):
- MobileNetV2 1.0 at 96x96, int8, bench/geometries.py's random weights, its first five stages
  (through the 96-channel one) then the global pool and a 10-class classifier: the whole
  network's weights (3.5 MB) exceed pulp-open's L2 (1.5 MB, no L3), its first five stages' fit;
- the four MLPerf Tiny models.
Activations: the largest bytes live at one step of the plan's activation and ring buffers (the
input included, the constants resident in L2 not: memory/buffers.py lower_bound over the plan's
non-constant buffers); for the unfused plan that is the per-layer lower bound (no in-place
execution on the cluster). RAM: the L1 arena plus the L2 plan's peak (constants included).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.errors import TilewiseError
from tilewise.memory.inplace import lower_bound_linked
from tilewise.pipeline import NetworkSchedule, schedule_network
from tilewise.validate import make_inputs, validate_network

from . import models, scheduling
from .geometries import mobilenet_v2
from .tables import Table

TARGET = "pulp-open"
#: MobileNetV2's reduced form on pulp-open (module docstring)
MBV2 = {"res": 96, "stages": 5, "classes": 10}


class NotBitExact(RuntimeError):
    """A GVSoC run differs from the golden model: the table is not printed."""


def activation_bytes(ns: NetworkSchedule) -> int:
    """The most activation and ring bytes live at one step of `ns`'s L2 plan (module docstring),
    the in-place links counted as the plan shares their bytes."""
    plan = ns.memory.plan
    bufs = [b for b in plan.buffers if b.kind != "weight"]
    names = {b.name for b in bufs}
    return lower_bound_linked(bufs, [lk for lk in plan.links if lk.input in names
                                     and lk.output in names], plan.align)


def least_ram(lg, target) -> int:
    """The least RAM tilewise finds for `lg` (bytes, rounded up to a kB): the figure the refusal
    of a 1-byte `--ram-budget` names (pipeline.schedule_network)."""
    try:
        schedule_network(lg, target, ram_budget=1)
    except TilewiseError as e:
        m = re.search(r"at least (\d+) kB", str(e))
        if m:
            return int(m.group(1)) * 1024
        raise
    return 1


def _run(name: str, lg) -> dict:
    target = scheduling.target(TARGET)
    off = schedule_network(lg, target)
    budget = least_ram(lg, target)
    on = schedule_network(lg, target, ram_budget=budget)
    with tempfile.TemporaryDirectory(prefix=f"tw_bench_chains_{name}_") as tmp:
        report, _ = validate_network(on, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1], model=name,
                                     on="gvsoc")
    r = report.to_json()
    if not r["bit_exact"]:
        raise NotBitExact(f"{name} on {TARGET} with chains is not bit-exact on GVSoC: "
                          f"{r['mismatches'][:2]}")
    index = {layer.name: k for k, layer in enumerate(lg.layers)}
    chains = []
    for ch in on.chains:
        last = index[ch.layers[-1]]
        chains.append({"layers": list(ch.layers), "band": ch.band, "rings": ch.ring_bytes,
                       "predicted": ch.cycles,
                       "measured": r["layers"][last]["measured_cycles"],
                       "unfused_predicted": ch.unfused_cycles})
    macs = sum(layer.nest.macs for layer in lg.layers)
    return {"budget": budget, "ram_unfused": off.ram_bytes, "ram_chained": on.ram_bytes,
            "acts_unfused": activation_bytes(off), "acts_chained": activation_bytes(on),
            "macs": macs, "cycles_unfused": off.cycles, "predicted": r["predicted_cycles"],
            "measured": r["measured_cycles"], "bit_exact": r["bit_exact"], "chains": chains}


def measure(names: Sequence[str] = models.MLPERF) -> list[Table]:
    runs = {}
    lg = mobilenet_v2(MBV2["res"], MBV2["classes"], stages=MBV2["stages"])
    runs[lg.name] = _run(lg.name, lg)
    for name in names:
        runs[name] = _run(name, scheduling.lowered(models.model_path(name)))
    rows = []
    for name, s in runs.items():
        ch = "; ".join(f"{len(c['layers'])} from {c['layers'][0]} ({c['band']}-row bands, "
                       f"{c['measured']:,} / {c['predicted']:,.0f})" for c in s["chains"])
        rows.append((name, s["budget"] // 1024, ch or "none", s["ram_unfused"], s["ram_chained"],
                     s["acts_unfused"], s["acts_chained"], s["acts_unfused"] / s["acts_chained"],
                     s["macs"], s["cycles_unfused"], s["predicted"], s["measured"],
                     s["measured"] / s["predicted"], "yes" if s["bit_exact"] else "NO"))
    return [Table(
        "pulp_chains",
        "Table 15 — fused chains on pulp-open (GVSoC, 8 cores): the least RAM tilewise finds, "
        "measured vs predicted",
        ("model", "RAM budget (kB)", "chains: measured / predicted cycles", "RAM unfused (B)",
         "RAM chained (B)", "activations unfused (B)", "activations chained (B)",
         "unfused / chained activations", "MACs (both)", "predicted cycles unfused",
         "predicted cycles chained", "measured cycles chained (GVSoC)", "measured / predicted",
         "bit-exact (GVSoC)"),
        tuple(rows),
        notes=(f"{lg.name}: MobileNetV2 1.0 at {MBV2['res']}x{MBV2['res']}, its first "
               f"{MBV2['stages']} stages, global pool, FC {MBV2['classes']} (bench/geometries.py; "
               "the whole network's weights do not fit pulp-open's L2).",
               "RAM budget: the least RAM tilewise finds (a 1-byte --ram-budget's refusal names "
               "it); where no chain lowers the plan's peak it is the unfused RAM and the "
               "schedule is the unfused one. Chains run on cluster-l2 (the 8 cores on the L2 "
               "tensors, targets/pulp_open.py), measured at their last member's step.",
               "Activations: the most activation and ring bytes live at one step, the input "
               "included, the constants resident in L2 not (the unfused plan's: the per-layer "
               "lower bound); RAM: L1 arena + L2 peak, constants included. Nothing is "
               "recomputed: MACs equal."),
        data=runs,
    )]
