"""Table 8 — GAP9's modules (seed 003 Table IV's ablation): tilewise's predicted latency of the four
MLPerf Tiny models on gap9 with the host core (module "cpu") only, the cluster + cpu, NE16 + cpu and all
three, next to MATCH's silicon figures for the same ablation and GreenWaves' own MLPerf Tiny
results (NE16 + cluster, 240 MHz).

Predicted, not measured: GVSoC models pulp-open, which has no NE16, and no GAP9 is at hand. The
cluster is priced by the pulp kernels' model fitted on GVSoC (targets/pulp_kernels.py), NE16 by
MATCH's NE16 model plus the cluster's conversion and requantization (targets/ne16_kernels.py),
the cpu by the pulp kernels' model for one core from L2, fitted on GVSoC (targets/pulp_kernels.py
HOST; targets/gap9.py) — where MATCH's "CPU" is TVM's generic C,
hundreds of times slower. Every configuration is bit-exact on the host (tests/test_ne16.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from . import models, published, scheduling
from .tables import Table

#: seed 003 Table IV's columns, as module sets of gap9
CONFIGS = (("CPU only", ("cpu",)), ("cluster+CPU", ("cluster", "cpu")),
           ("NE16+CPU", ("ne16", "cpu")), ("all", ("cluster", "cpu", "ne16")))


def measure(names: Sequence[str] = models.MLPERF) -> Table:
    gap9 = scheduling.target("gap9")
    rows, data = [], {}
    for name in names:
        lg = scheduling.lowered(models.model_path(name))
        pred = {}
        for label, mods in CONFIGS:
            tgt = replace(gap9, modules=tuple(m for m in gap9.modules if m.name in mods))
            ns = scheduling.schedule(lg, tgt, "model")
            pred[label] = ns.latency_ms
            if label == "all":
                on_ne16 = sum(s.module == "ne16" for s in ns.schedules)
        pub = published.MATCH_GAP9_ABLATION_MS[name]
        gw = published.GREENWAVES_GAP9_MS[name]
        data[name] = {"predicted_ms": pred, "match_ms": [f.value for f in pub],
                      "greenwaves_ms": gw.value, "layers_on_ne16": on_ne16}
        rows.append((f"{name} ({models.PAPER_NAMES[name]})",
                     *(f"{pred[label]:.3g} / {f.value:g}" for (label, _), f in zip(CONFIGS, pub)),
                     pred["all"] / pub[3].value, gw.value, on_ne16))
    return Table(
        "gap9_modules", f"Table 8 — gap9 modules: predicted latency vs MATCH on GAP9 silicon "
        f"({gap9.clock_mhz:g} MHz, ms: tilewise / MATCH)",
        ("model", *(label for label, _ in CONFIGS), "all: tilewise / MATCH",
         "GreenWaves (240 MHz)", "layers on NE16"),
        tuple(rows),
        notes=(f"MATCH: {published.SEED3_T4_ALL}; GreenWaves: {published.GREENWAVES}.",
               "tilewise: predicted by the gap9 target with the listed modules (module docstring); "
               "MATCH's CPU is TVM generic code, tilewise's the cpu module (one core on L2) running the pulp kernels."),
        data=data,
    )
