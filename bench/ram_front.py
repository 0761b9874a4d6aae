"""Table 16 — RAM × cycles on stm32h7 at each RAM budget: the trade-off `--ram-budget` makes
(issue 30), next to TFLite Micro's arena and the memory-minimal engines' published reductions.

Each model is scheduled for stm32h7 (pipeline.schedule_network, the Cortex-M7 cycle model):
- unfused: no chains (`chains=False`): the per-layer plan (in-place execution and the input and
  output in the arena kept: they cost no cycles);
- default: what `generate` emits without a budget — the chains within chain.BUDGET of the unfused
  cycles that lower the peak;
- budgets: `--ram-budget` from the unfused RAM down to the least RAM tilewise finds (the figure
  the refusal of a 1-byte budget names), `STEPS` budgets evenly spaced between, each the fastest
  schedule within it; points with the same RAM and cycles are shown once.
RAM is what the schedule plans (NetworkSchedule.ram_bytes: the L1 arena plus the L2 plan's
peak, the input and output where they are held in it), not the ELF's (Table 7a has the ELF's,
stack and statics included, for the default schedule); cycles are predicted by stm32h7's
Cortex-M7 cycle model (fitted on the timing model's estimates, Table 7a). MobileNetV2-1.0-224
(bench/geometries.py, random weights) runs on Table 7c's hypothetical stm32h7 with 4 MB of L2.

Published, in the notes and the data (anchors.md, "Memory-minimal engines"): TFLM's arena per
model; TinyEngine's peak SRAM against TFLM + CMSIS-NN's on mcunet-vww0 (59 vs 163 kB: 0.36×, a
different VWW network from ours); MCUNetV2's patch-based first stage of MobileNetV2 (1,372 →
172 kB, 7.98×, the input excluded) against ours (the unfused plan's per-layer bound over the
least-RAM plan's peak, the input included).
"""

from __future__ import annotations

from collections.abc import Sequence

from tilewise.pipeline import NetworkSchedule, schedule_network

from . import models, published, scheduling
from .cortex_m import _big_stm32h7
from .geometries import mobilenet_v2
from .pulp_chains import least_ram
from .tables import Table

TARGET = "stm32h7"
#: budgets between the unfused RAM and the least (module docstring)
STEPS = 4


def _point(label: str, ns: NetworkSchedule, budget: int | None) -> dict:
    return {"label": label, "budget": budget, "ram": ns.ram_bytes, "cycles": ns.cycles,
            "peak": ns.memory.peak, "chains": [list(c.layers) for c in ns.chains]}


def front(lg, target) -> list[dict]:
    """The unfused, default and budgeted schedules of `lg` (module docstring), distinct points."""
    off = schedule_network(lg, target, chains=False)
    points = [_point("unfused", off, None), _point("default", schedule_network(lg, target), None)]
    least = least_ram(lg, target)
    hi = off.ram_bytes
    budgets = sorted({int(least + (hi - least) * i / (STEPS + 1)) for i in range(1, STEPS + 1)}
                     | {least}, reverse=True)
    for b in budgets:
        if b < hi:
            points.append(_point(f"{b / 1024:.1f} kB", schedule_network(lg, target, ram_budget=b), b))
    seen, out = set(), []
    for p in points:
        key = (p["ram"], round(p["cycles"]))
        if key not in seen:
            seen.add(key)
            out.append(p)
    out.sort(key=lambda p: (-p["ram"], p["cycles"]))
    out[-1]["label"] += " (least RAM)"
    for p in out:
        p["ram_ratio"] = p["ram"] / off.ram_bytes
        p["cycles_ratio"] = p["cycles"] / off.cycles
    return out


def measure(names: Sequence[str] = models.MLPERF) -> list[Table]:
    runs: dict[str, dict] = {}
    target = scheduling.target(TARGET)
    for name in names:
        runs[name] = {"points": front(scheduling.lowered(models.model_path(name)), target),
                      "tflm_arena": published.TFLM_ARENA_B[name].value}
    mbv2 = mobilenet_v2(224)
    big = _big_stm32h7()
    off = schedule_network(mbv2, big, chains=False)
    runs[mbv2.name] = {"points": front(mbv2, big), "tflm_arena": None,
                       "bound": off.memory.lower_bound}
    rows = []
    for name, r in runs.items():
        for p in r["points"]:
            arena = r["tflm_arena"]
            rows.append((name, p["label"], p["ram"], p["ram_ratio"],
                         p["ram"] / arena if arena else "n/a (no TFLM run)", p["cycles"],
                         p["cycles_ratio"], len(p["chains"])))
    m = runs[mbv2.name]
    ours = m["bound"] / min(p["peak"] for p in m["points"])
    te, te_tflm = published.TINYENGINE_VWW0_KB.value, published.TFLM_VWW0_KB.value
    mc_from, mc_to = published.MCUNETV2_MBV2_KB
    return [Table(
        "ram_front",
        "Table 16 — stm32h7: RAM × predicted cycles at each RAM budget (the front --ram-budget "
        "draws), against TFLite Micro's arena",
        ("model", "schedule", "RAM B (planned)", "RAM / unfused", "RAM / TFLM arena",
         "predicted cycles", "cycles / unfused", "chains"),
        tuple(rows),
        notes=("schedule: unfused (no chains), default (generate without a budget: chains that "
               "cost ≤ chain.BUDGET), or the fastest within a --ram-budget (kB), by RAM; "
               "(least RAM): the least tilewise finds. RAM: the L1 arena + the L2 plan's peak "
               "(Table 7a: the ELF's, stack included). Cycles: stm32h7's Cortex-M7 cycle model.",
               f"{mbv2.name}: random weights (bench/geometries.py) on Table 7c's hypothetical "
               "stm32h7 with 4 MB of L2; no TFLM run.",
               f"Published (anchors.md): TinyEngine {te:g} kB peak SRAM vs TFLM + CMSIS-NN "
               f"{te_tflm:g} kB on mcunet-vww0 ({te / te_tflm:.2f}×; another VWW network); "
               f"MCUNetV2's patch-based MobileNetV2 first stage {mc_from.value:,.0f} → "
               f"{mc_to.value:g} kB ({mc_from.value / mc_to.value:.2f}×, input excluded) — "
               f"tilewise's MobileNetV2-224: per-layer bound / least-RAM peak {ours:.2f}× "
               "(input included, nothing recomputed)."),
        data=runs,
    )]
