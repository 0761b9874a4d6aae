"""`tilewise analyze MODEL --target T --ablation`: the network on each module set of the target.

In the shape of seed 003 Table IV (MATCH's GAP9 ablation: CPU only, cluster + CPU, NE16 + CPU,
all): for every module set the target lists (`Target.ablations`), the target restricted to those
modules (`Target.with_modules`) partitions and schedules the network as `analyze` does, and the
row gives the predicted cycles and latency, the speed-up over the first set, how many layers each
module runs and the hand-off cycles. A set that cannot run some layer keeps the one-sentence
reason in its row (the others are still computed).

JSON field names are stable: {model, target, clock_mhz, ablation: [{label, modules, cycles,
latency_ms, speedup, layers, handoff_cycles, error}]}.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import TilewiseError
from ..ir.layer import LayerGraph
from ..targets.base import Target


@dataclass(frozen=True)
class AblationRow:
    label: str
    modules: tuple[str, ...]
    cycles: float | None
    latency_ms: float | None
    #: the first set's cycles / this set's (None when either cannot run the network)
    speedup: float | None
    #: layers per module, in the target's module order
    layers: dict[str, int]
    handoff_cycles: float
    #: why this set cannot run the network (None: it can)
    error: str | None = None


@dataclass(frozen=True)
class Ablation:
    model: str
    target: str
    clock_mhz: float
    rows: tuple[AblationRow, ...]

    def to_json(self) -> dict:
        return {"model": self.model, "target": self.target, "clock_mhz": self.clock_mhz,
                "ablation": [asdict(r) for r in self.rows]}


def ablation(lg: LayerGraph, target: Target, tiler: str = "model",
             objective: str = "latency") -> Ablation:
    """Every module set of `target.ablations` on `lg` (module docstring)."""
    from ..pipeline import schedule_network

    if not target.ablations:
        raise TilewiseError(f"target {target.name} lists no module sets to compare (--ablation "
                            f"needs Target.ablations; its modules are "
                            f"{', '.join(m.name for m in target.modules)})")
    rows: list[AblationRow] = []
    for label, mods in target.ablations:
        try:
            sub = target.with_modules(mods)
        except ValueError as e:
            raise TilewiseError(f"target {target.name}'s module set '{label}': {e}") from None
        try:
            ns = schedule_network(lg, sub, tiler, objective=objective)
        except TilewiseError as e:
            rows.append(AblationRow(label, tuple(mods), None, None, None, {}, 0.0, str(e)))
            continue
        count = {m.name: 0 for m in sub.modules}
        for i in range(len(ns.schedules)):
            count[ns.placement(i).module.name] += 1
        base = rows[0].cycles if rows else ns.cycles
        rows.append(AblationRow(label, tuple(mods), ns.cycles, ns.latency_ms,
                                base / ns.cycles if base and ns.cycles else None, count,
                                ns.handoff_cycles))
    return Ablation(lg.source or lg.name, target.name, target.clock_mhz, tuple(rows))


def print_ablation(a: Ablation) -> None:
    from rich.table import Table

    from .tables import make_console

    console = make_console()
    table = Table(title=f"tilewise analyze --ablation — {a.model} on {a.target} "
                        f"({a.clock_mhz:g} MHz)", title_justify="left")
    handoffs = any(r.handoff_cycles for r in a.rows)
    cols = [("module set", "left"), ("modules", "left"), ("cycles", "right"),
            ("latency ms", "right"), ("speed-up", "right"), ("layers per module", "left")]
    if handoffs:
        cols.append(("hand-off cycles", "right"))
    for col, just in cols:
        table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for r in a.rows:
        if r.error is not None:
            table.add_row(r.label, ",".join(r.modules), "—", "—", "—", f"cannot run: {r.error}",
                          *([""] if handoffs else []))
            continue
        assert r.cycles is not None and r.latency_ms is not None
        cells = [r.label, ",".join(r.modules), f"{r.cycles:,.0f}", f"{r.latency_ms:.3f}",
                 f"{r.speedup:.2f}×" if r.speedup is not None else "—",
                 ", ".join(f"{m} {n}" for m, n in r.layers.items())]
        if handoffs:
            cells.append(f"{r.handoff_cycles:,.0f}")
        table.add_row(*cells)
    console.print(table)
