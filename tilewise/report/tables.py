"""Terminal rendering of reports with rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .analysis import Analysis


def _shape(s: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in s)


def make_console() -> Console:
    """A console that does not squeeze tables when output goes to a file or pipe."""
    console = Console()
    return console if console.is_terminal else Console(width=220)


def _kb(b: int) -> str:
    return f"{b / 1024:,.1f}"


def print_analysis(a: Analysis, console: Console | None = None) -> None:
    console = console or make_console()
    sched = bool(a.scheduled)
    title = f"tilewise analyze — {a.model}"
    if sched:
        t = a.scheduled_totals
        title += f" on {t['target']} (L1 {_kb(t['l1_free_bytes'])} kB, L2 {_kb(t['l2_free_bytes'])} kB, tiler {t['tiler']})"
        if t.get("hypothetical"):
            title += " — hypothetical chip (settings beyond the part, --hypothetical)"
    table = Table(title=title, title_justify="left")
    cols = [("#", "right"), ("layer", "left"), ("op", "left"), ("input", "left"), ("output", "left"),
            ("MACs", "right"), ("weights B", "right"), ("act. B", "right")]
    if sched:
        cols += [("module / kernel", "left"), ("tiles", "left"), ("loop order", "left"), ("L1 B", "right"),
                 ("DMA B", "right"), ("cycles", "right"), ("MAC/cyc", "right")]
    for col, just in cols:
        table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for i, r in enumerate(a.rows):
        cells = [str(i), r.name, r.op, ", ".join(_shape(s) for s in r.input_shapes), _shape(r.output_shape),
                 f"{r.macs:,}", f"{r.weight_bytes:,}", f"{r.activation_bytes:,}"]
        if sched:
            s = a.scheduled[i]
            cells += [f"{s.module} {s.binding.split('/')[-1]}", _tiles_cell(s), ",".join(s.loop_order),
                      f"{s.l1_bytes:,}", f"{s.dma_bytes:,}", f"{s.cycles:,.0f}", f"{s.mac_per_cycle:.2f}" if r.macs else ""]
        table.add_row(*cells)
    console.print(table)
    for note in a.notes:
        console.print(f"[bold]note[/bold]: {note}", highlight=False, soft_wrap=True)
    integer = [(i, r) for i, r in enumerate(a.rows) if r.requant.startswith(("shift", "div", "adc"))]
    if integer:
        console.print("[bold]requantization[/bold] (integer graph):", highlight=False)
        for i, r in integer:
            console.print(f"  {i} {r.name}: {r.requant}", highlight=False, soft_wrap=True)
    if sched and a.scheduled and a.scheduled[0].candidates is not None:
        print_why(a, console)
    t = a.totals
    console.print(
        f"[bold]totals[/bold]: {t.layers} layers, {t.macs:,} MACs, {t.weight_bytes:,} B weights, "
        f"largest layer in+out {t.max_layer_activation_bytes:,} B ({t.max_layer})"
    )
    if sched:
        s = a.scheduled_totals
        console.print(
            f"[bold]{s['target']}[/bold]: {s['cycles']:,.0f} cycles = {s['latency_ms']:.3f} ms at {s['clock_mhz']:g} MHz, "
            f"{s['mac_per_cycle']:.2f} MAC/cycle; peak L2 {s['peak_l2_bytes']:,} B (lower bound "
            f"{s['l2_lower_bound_bytes']:,} B, {s['l2_planner']}); weights {s['weights_l2_bytes']:,} B in L2, "
            f"{s['weights_l3_bytes']:,} B in L3" +
            (f", {s['flash_bytes']:,} B in flash" if s.get("flash_bytes") else "") +
            f"; RAM {s['ram_bytes']:,} B (L1 arena + L2 peak); DMA L2↔L1 {s['dma_bytes']:,} B"
            + (f"; L3: {s['l3_activation_bytes']:,} B of activations, {s['l3_tile_bytes']:,} B of L3↔L2 tile traffic"
               if s.get("l3_activation_bytes") or s.get("l3_tile_bytes") else "")
        )
        per = s.get("layers_per_module", {})
        if len(per) > 1:
            console.print("[bold]modules[/bold]: " + ", ".join(f"{m} runs {n} layer{'s' * (n != 1)}"
                                                               for m, n in per.items()),
                          highlight=False)
        if s.get("handoff_cycles"):
            console.print(f"[bold]hand-offs[/bold]: {s['handoff_cycles']:,.0f} cycles (included) — "
                          + "; ".join(f"{h['tensor']} {h['from']}→{h['to']} {h['bytes']:,} B "
                                      f"{h['cycles']:,.0f} cycles" for h in s["handoffs"]),
                          highlight=False)


def print_why(a: Analysis, console: Console) -> None:
    """`analyze --why`: per layer, every candidate (module, kernel) and what partition found."""
    obj = a.scheduled_totals.get("objective", "latency")
    console.print(f"[bold]candidates[/bold] (partition minimizes {obj}; [green]✓[/green] chosen)")
    for r, s in zip(a.rows, a.scheduled):
        console.print(f"  {r.name} ({r.op}):")
        for c in s.candidates or ():
            mark = "[green]✓[/green]" if c["chosen"] else " "
            what = (f"{c['cycles']:,.0f} cycles" if c["reason"] is None
                    else f"rejected: {c['reason']}")
            console.print(f"    {mark} {c['module']} {c['binding']}: {what}", highlight=False)


def _tiles_cell(row) -> str:
    if not row.tiles or all(v["count"] == 1 for v in row.tiles.values()) and row.l1_bytes == 0:
        return "untiled (L2)"
    parts = []
    for dim, v in row.tiles.items():
        if dim == "n" and v["size"] == 1:
            continue
        p = f"{dim.upper()}{v['tile']}"
        if v["count"] > 1:
            p += f"×{v['count']}"
            if v["border"] != v["tile"]:
                p += f"({v['border']})"
        parts.append(p)
    text = " ".join(parts)
    if row.l3:
        text += f" | L3 {row.l3['stage']}×{row.l3['tiles']}"
    return text
