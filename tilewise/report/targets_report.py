"""`tilewise targets`: the built-in targets, their memories (with operand roles), modules (with
their kernel families, cost models and the ops their bindings run) and sources."""

from __future__ import annotations

from dataclasses import asdict

from rich.table import Table

from ..targets.registry import list_targets
from .tables import make_console


def targets_json() -> list[dict]:
    out = []
    for t in list_targets():
        out.append({
            "name": t.name, "description": t.description, "clock_mhz": t.clock_mhz,
            "max_clock_mhz": t.max_clock_mhz,
            "memories": [{k: (sorted(v) if isinstance(v, frozenset) else v)
                          for k, v in asdict(m).items()} | {"free": m.free} for m in t.memories],
            "modules": [{"name": m.name, "cores": m.cores, "memory": m.memory,
                         "weights_from": m.weights_from, "families": list(m.families),
                         "cost_models": list(m.cost_models),
                         "ops": sorted({b.key.op for b in m.bindings}),
                         "bindings": [b.label for b in m.bindings], "note": m.note}
                        for m in t.modules],
            "sources": list(t.sources), "sdk": t.platform.sdk,
        })
    return out


def print_targets() -> None:
    console = make_console()
    table = Table(title="tilewise targets (override with --l1 KB --l2 KB --cores N --clock MHZ)", title_justify="left")
    for col in ("target", "clock MHz", "memories (free / size)", "modules", "description"):
        table.add_column(col)
    for t in list_targets():
        mems = ", ".join(f"{m.name} {m.free / 1024:,.1f}/{m.size / 1024:,.0f} kB" for m in t.memories)
        mods = ", ".join(f"{m.name}×{m.cores} ({'/'.join(m.families)} kernels, "
                         f"{'/'.join(m.cost_models)} costs)" for m in t.modules)
        clock = f"{t.clock_mhz:g}" + (f" (max {t.max_clock_mhz:g})" if t.max_clock_mhz else "")
        table.add_row(t.name, clock, mems, mods, t.description)
    console.print(table)
