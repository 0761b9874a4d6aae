"""Table 12 — NE16 measured: the four MLPerf Tiny models on pulp-open-ne16 (pulp-open's 8-core
cluster with NE16, as GVSoC runs it with GVSOC_NE16=1), GVSoC's cycles next to tilewise's
prediction, split by the module the partition put each layer on.

Every number on the measured side is GVSoC's (`validate --on gvsoc`: the generated bare-metal
firmware, one random input, every output checked bit-exact against the golden model — a model
that is not bit-exact stops the table): core 0's mcycle per layer (TW_LAYERS) and around
tw_network_run (TW_CYCLES). Per model:
- NE16 layers: the layers on the ne16 module (analyze's layers[].module), whole — NE16's jobs, the
  cluster's conversion of the input to u8, the requantization of NE16's int32 outputs
  (bindings/ne16/pipeline.py overlaps it with the next row job), job programming and DMA —
  measured / predicted (bindings/ne16/cost.py);
- cluster layers: the rest, on the 8 cores (bindings/pulp/cost.py);
- hand-offs: the predicted copies between modules' memories (partition; none here: NE16 and the
  cores share L1 and L2) against the measured cycles outside every layer (the network's own
  code between layers);
- the network: measured / predicted and MAC per measured cycle.
For reference, gap9's prediction (the same NE16 model, gap9's L1 / L2 and clock) at 260 MHz
next to MATCH's GAP9 silicon (seed 003 Table IV, all modules, 260 MHz) and GreenWaves' own MLPerf
Tiny v1.0 results at 370 MHz (with 7/5/5/6-bit NE16 weights; anchors.md).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.validate import make_inputs, validate_network

from . import models, published, scheduling
from .tables import Table

TARGET = "pulp-open-ne16"


class NotBitExact(RuntimeError):
    """A model's GVSoC run differs from the golden model: the table is not printed."""


def split(report: dict, modules: Sequence[str]) -> dict:
    """Measured and predicted cycles of `report` (validate's JSON) summed per module ("ne16", and
    "cluster" for every other), the cycles outside the layers and the network's."""
    parts = {m: {"layers": 0, "measured": 0, "predicted": 0.0} for m in ("ne16", "cluster")}
    for lc, mod in zip(report["layers"], modules):
        p = parts["ne16" if mod == "ne16" else "cluster"]
        p["layers"] += 1
        p["measured"] += lc["measured_cycles"]
        p["predicted"] += lc["predicted_cycles"]
    inside = sum(p["measured"] for p in parts.values())
    return {**parts, "outside_measured": report["measured_cycles"] - inside,
            "measured": report["measured_cycles"], "predicted": report["predicted_cycles"]}


def _ratio(m: float, p: float) -> float | None:
    return m / p if p else None


def _measure(name: str) -> tuple[dict, dict]:
    lg = scheduling.lowered(models.model_path(name))
    ns = scheduling.schedule(lg, scheduling.target(TARGET), "model")
    with tempfile.TemporaryDirectory(prefix=f"tw_bench_ne16_{name}_") as tmp:
        report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1], model=name,
                                     on="gvsoc")
    r = report.to_json()
    if not r["bit_exact"]:
        raise NotBitExact(f"{name} on {TARGET} is not bit-exact on GVSoC: {r['mismatches'][:2]}")
    # the scheduled layers (a conv fused with its residual add is one: passes/fuse_residual.py)
    modules = [ns.placement(i).module.name for i in range(len(ns.layers.layers))]
    for lc, mod, layer in zip(r["layers"], modules, ns.layers.layers):
        lc["module"], lc["macs"] = mod, layer.macs
    parts = split(r, modules)
    parts["handoff_predicted"] = ns.handoff_cycles
    parts["macs"] = ns.macs
    gap9 = scheduling.schedule(lg, scheduling.target("gap9"), "model")
    parts["gap9_ms"], parts["gap9_mhz"] = gap9.latency_ms, gap9.target.clock_mhz
    parts["gap9_on_ne16"] = sum(gap9.placement(i).module.name == "ne16"
                                for i in range(len(gap9.layers.layers)))
    return parts, r


def measure(names: Sequence[str] = models.MLPERF) -> Table:
    rows, data = [], {}
    for name in names:
        s, r = _measure(name)
        ne, cl = s["ne16"], s["cluster"]
        match = published.MATCH_GAP9_ABLATION_MS[name][3].value
        gw = published.GREENWAVES_GAP9_370_MS[name].value
        rows.append((
            f"{name} ({models.PAPER_NAMES[name]})", "yes",
            f"{ne['layers']}: {ne['measured']:,} / {ne['predicted']:,.0f}" if ne["layers"] else "none",
            _ratio(ne["measured"], ne["predicted"]),
            f"{cl['layers']}: {cl['measured']:,} / {cl['predicted']:,.0f}",
            _ratio(cl["measured"], cl["predicted"]),
            f"{s['outside_measured']:,} / {s['handoff_predicted']:,.0f}",
            s["measured"], s["predicted"], _ratio(s["measured"], s["predicted"]),
            s["macs"] / s["measured"], s["gap9_ms"], match, gw))
        data[name] = {**s, "match_gap9_ms": match, "greenwaves_370_ms": gw, "layers": r["layers"],
                      "measured_at": TARGET}
    return Table(
        "ne16_networks", "Table 12 — NE16 measured: pulp-open-ne16 on GVSoC, measured / predicted "
                         "cycles by module (one inference, bit-exact)",
        ("model", "bit-exact", "NE16 layers: measured / predicted", "NE16 m/p",
         "cluster layers: measured / predicted", "cluster m/p", "hand-offs: outside layers / predicted",
         "measured cycles", "predicted cycles", "measured / predicted", "MAC / cycle",
         "gap9 predicted ms (260 MHz)", "MATCH GAP9 ms (260 MHz)", "GreenWaves GAP9 ms (370 MHz)"),
        tuple(rows),
        notes=("measured: GVSoC mcycle of core 0 per layer and around tw_network_run in the generated "
               "pulp-open-ne16 firmware (validate --on gvsoc, one random input, outputs bit-exact "
               "against the golden model); predicted: the same schedule's cost model "
               "(NE16 layers: bindings/ne16/cost.py, NE16's jobs fitted on GVSoC by "
               "bench/calibrate_ne16.py plus the cluster's conversion, requantization and job "
               "programming; cluster layers: bindings/pulp/cost.py).",
               "NE16 layers: the layers the partition puts on NE16 (analyze --json layers[].module), "
               "whole: NE16's row jobs overlapped with the cores' requantization of the previous one; "
               "ad_autoencoder's dense layers stay on the cluster.",
               "hand-offs: the partition's predicted copies between modules' memories (NE16 and the "
               "cores share L1 and L2: none) next to the measured cycles outside every layer.",
               "MAC / cycle: the network's MACs per measured cycle.",
               f"gap9: tilewise's prediction with the same NE16 model at "
               f"{scheduling.target('gap9').clock_mhz:g} MHz, 8-bit weights, "
               f"TFLite numerics; MATCH: {published.SEED3_T4_ALL}, all modules; GreenWaves: "
               f"{published.GREENWAVES_370}."),
        data=data)
