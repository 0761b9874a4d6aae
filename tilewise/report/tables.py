"""Terminal rendering of reports with rich tables, and analyze's CSV.

`analyze` prints a default column set that fits a 100-column terminal (text cells wrap, never get
cut), `--wide` every column, `--csv` every column as CSV; the tile legend under the table reads
`_tiles_cell` (schedule/space.py DimTiling: count = ceil(size / tile), border = the last tile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from .analysis import Analysis


def _shape(s: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in s)


def make_console(width: int = 220) -> Console:
    """A console for the terminal's width; `width` columns when output goes to a file or pipe (so
    tables are not squeezed; analyze's default table fits 100) unless the COLUMNS environment
    variable gives the width (as it does for a terminal too)."""
    import os

    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return Console(width=int(columns))
    console = Console()
    return console if console.is_terminal else Console(width=width)


def _kb(b: int) -> str:
    return f"{b / 1024:,.1f}"


@dataclass(frozen=True)
class Column:
    """One column of the analyze table: header, justification, cell text and CSV value of layer i,
    in the default (100-column) set or only in --wide / --csv, wrapped (folded) or not."""

    header: str
    justify: str
    text: Callable[[int], str]
    value: Callable[[int], object]
    default: bool = True
    wrap: bool = False


def analysis_columns(a: Analysis) -> list[Column]:
    """Every column of `a`'s table (scheduled ones with a target), in display order."""
    rows, sched = a.rows, a.scheduled
    cols = [
        Column("#", "right", str, lambda i: i),
        Column("layer", "left", lambda i: rows[i].name, lambda i: rows[i].name, wrap=True),
        Column("op", "left", lambda i: rows[i].op, lambda i: rows[i].op, default=not sched,
               wrap=True),
        Column("input", "left", lambda i: ", ".join(_shape(s) for s in rows[i].input_shapes),
               lambda i: " ".join(_shape(s) for s in rows[i].input_shapes), default=not sched),
        Column("output", "left", lambda i: _shape(rows[i].output_shape),
               lambda i: _shape(rows[i].output_shape), default=not sched),
        Column("MACs", "right", lambda i: f"{rows[i].macs:,}", lambda i: rows[i].macs),
        Column("raw W B", "right", lambda i: f"{rows[i].weight_bytes:,}",
               lambda i: rows[i].weight_bytes, default=not sched),
        Column("act. B", "right", lambda i: f"{rows[i].activation_bytes:,}",
               lambda i: rows[i].activation_bytes, default=not sched),
    ]
    if not sched:
        return cols
    return cols + [
        Column("module / kernel", "left", lambda i: module_kernel(sched[i]),
               lambda i: module_kernel(sched[i])),
        Column("tiles", "left", lambda i: _tiles_cell(sched[i]), lambda i: _tiles_cell(sched[i]),
               wrap=True),
        Column("loop order", "left", lambda i: ",".join(sched[i].loop_order),
               lambda i: ",".join(sched[i].loop_order), default=False),
        Column("L1 B", "right", lambda i: f"{sched[i].l1_bytes:,}", lambda i: sched[i].l1_bytes),
        Column("DMA B", "right", lambda i: f"{sched[i].dma_bytes:,}",
               lambda i: sched[i].dma_bytes, default=False),
        Column(a.scheduled_totals.get("cycles_column", "cycles"), "right",
               lambda i: f"{sched[i].cycles:,.0f}", lambda i: round(sched[i].cycles)),
        Column("MAC/cyc", "right",
               lambda i: f"{sched[i].mac_per_cycle:.2f}" if rows[i].macs else "",
               lambda i: round(sched[i].mac_per_cycle, 4), default=False),
    ]


def module_kernel(s) -> str:
    """"module kernel" of a scheduled row (the binding's name without its family)."""
    return f"{s.module} {s.binding.split('/')[-1]}"


def write_csv(a: Analysis, out: TextIO) -> None:
    """`analyze --csv`: every column, one row per layer, a header row."""
    import csv

    cols = analysis_columns(a)
    w = csv.writer(out, lineterminator="\n")
    w.writerow([c.header for c in cols])
    for i in range(len(a.rows)):
        w.writerow([c.value(i) for c in cols])


#: under the table: how to read the tiles cell (report/tables.py `_tiles_cell`, schedule/space.py)
TILE_LEGEND = (
    "tiles: per loop dimension the L1 tile size — K output channels, C input channels, OY / OX "
    "output rows / columns (N batch, shown when > 1); ×n = n tiles along that dimension, (b) = "
    "the last (border) tile's size when it differs; no ×n = one tile (the whole dimension); "
    "'untiled (L2)' = the kernel works on L2 directly; '| L3 s×n' = the layer is also cut into n "
    "L2 tiles along s, streamed from L3.")


#: console width of `analyze --wide` off a terminal: the widest table is not squeezed
WIDE = 400


def print_analysis(a: Analysis, console: Console | None = None, wide: bool = False) -> None:
    """The analyze table: the default columns fit 100 columns (long names wrap, never cut);
    `wide`: every column (a console as wide as the table when not on a terminal)."""
    console = console or make_console(WIDE if wide else 100)
    sched = bool(a.scheduled)
    title = f"tilewise analyze — {a.model}"
    if sched:
        t = a.scheduled_totals
        title += (f" on {t['target']} (L1 {_kb(t['l1_free_bytes'])} kB, L2 {_kb(t['l2_free_bytes'])} kB, "
                  f"tiler {t['tiler']})")
        if t.get("hypothetical"):
            title += " — hypothetical chip (settings beyond the part, --hypothetical)"
    cols = [c for c in analysis_columns(a) if wide or c.default]
    table = Table(title=title, title_justify="left", box=box.SQUARE if wide else box.SIMPLE_HEAD,
                  pad_edge=wide, collapse_padding=not wide)
    for c in cols:
        table.add_column(c.header, justify=c.justify,  # type: ignore[arg-type]
                         no_wrap=wide or not c.wrap, overflow="fold")
    for i in range(len(a.rows)):
        table.add_row(*[c.text(i) for c in cols])
    console.print(table)
    if sched:
        console.print(TILE_LEGEND, highlight=False)
    if not wide and len(cols) < len(analysis_columns(a)):
        console.print("(more columns with --wide, all of them as CSV with --csv)", highlight=False)
    for note in a.notes:
        console.print(f"[bold]note[/bold]: {note}", highlight=False, soft_wrap=wide)
    integer = [(i, r) for i, r in enumerate(a.rows) if r.requant.startswith(("shift", "div", "adc"))]
    if integer:
        console.print("[bold]requantization[/bold] (integer graph):", highlight=False)
        for i, r in integer:
            console.print(f"  {i} {r.name}: {r.requant}", highlight=False, soft_wrap=wide)
    if sched and a.scheduled and a.scheduled[0].candidates is not None:
        print_why(a, console)
    t = a.totals
    console.print(
        f"[bold]totals[/bold]: {t.layers} layers, {t.macs:,} MACs, {t.weight_bytes:,} B raw weights "
        f"(weight tensors + int32 bias as in the model), largest layer in+out "
        f"{t.max_layer_activation_bytes:,} B ({t.max_layer})", highlight=False
    )
    if sched:
        s = a.scheduled_totals
        unit = s.get('cycles_unit', 'cycles')
        # a core priced in instructions (no cycle model): the time is a bound, not a figure
        time = (f"at least {s['latency_ms']:.3f} ms at {s['clock_mhz']:g} MHz (one instruction per "
                f"cycle at best), {s['mac_per_cycle']:.2f} MAC/instruction"
                if unit.startswith("instructions") else
                f"{s['latency_ms']:.3f} ms at {s['clock_mhz']:g} MHz, {s['mac_per_cycle']:.2f} MAC/cycle")
        console.print(
            f"[bold]{s['target']}[/bold]: {s['cycles']:,.0f} {unit} = {time}; "
            f"peak L2 {s['peak_l2_bytes']:,} B (lower bound "
            f"{s['l2_lower_bound_bytes']:,} B, {s['l2_planner']}); packed constants "
            f"{s['weights_l2_bytes']:,} B in L2, {s['weights_l3_bytes']:,} B in L3" +
            (f", {s['flash_bytes']:,} B in flash" if s.get("flash_bytes") else "") +
            f"; RAM {s['ram_bytes']:,} B (L1 arena + L2 peak); DMA L2↔L1 {s['dma_bytes']:,} B"
            + (f"; L3: {s['l3_activation_bytes']:,} B of activations, {s['l3_tile_bytes']:,} B of L3↔L2 tile traffic"
               if s.get("l3_activation_bytes") or s.get("l3_tile_bytes") else ""), highlight=False
        )
        in_place = [(i, r) for i, r in enumerate(a.scheduled) if r.in_place]
        if in_place:
            console.print(
                f"[bold]in place[/bold] (peak L2 {s['peak_l2_bytes']:,} B, "
                f"{s['peak_l2_without_in_place_bytes']:,} B without): layers writing their output over "
                f"their input as they run (the output starting the bytes given below the input): "
                + ", ".join(f"{i} {r.name} ({r.in_place['lag_bytes']:,} B)" for i, r in in_place),
                highlight=False, soft_wrap=wide)
        chains = [(i, r) for i, r in enumerate(a.scheduled)
                  if r.fused and r.fused["role"] == "producer"]
        if chains:
            console.print(
                "[bold]fused chains[/bold] (row band by row band, the tensors between never in "
                "memory, nothing recomputed): " + ", ".join(
                    " → ".join(f"{j} {a.scheduled[j].name}" for j in r.fused["chain"]
                               if j != r.fused.get("branch"))
                    + (f" ← {b} {a.scheduled[b].name}" if (b := r.fused.get("branch")) is not None
                       else "")
                    + f" ({r.fused['band_rows']}-row "
                    f"bands, rings {r.fused['ring_bytes']:,} B; {r.fused['cycles']:,.0f} {unit} vs "
                    f"{r.fused['unfused_cycles']:,.0f} unfused)" for i, r in chains),
                highlight=False, soft_wrap=wide)
        if s.get("inputs_in_arena"):
            console.print("[bold]input in the arena[/bold]: " + ", ".join(s["inputs_in_arena"])
                          + " (the caller writes it at TW_INPUT_IN_ARENA; a layer writes its "
                          "output over it)", highlight=False, soft_wrap=wide)
        if s.get("memory_summary"):
            from .memory_summary import summary_lines

            for line in summary_lines(s["memory_summary"]):
                console.print(line, highlight=False)
        per = s.get("layers_per_module", {})
        if len(per) > 1:
            console.print("[bold]modules[/bold]: " + ", ".join(f"{m} runs {n} layer{'s' * (n != 1)}"
                                                               for m, n in per.items()),
                          highlight=False)
        pf = s.get("prefetch") or {}
        if pf.get("layers") or pf.get("one_transfer_layers"):
            console.print(f"[bold]cross-layer prefetch[/bold]: layers {_ranges(pf['layers']) or 'none'} "
                          f"start with their first-tile weights and constants loaded during the "
                          f"layer before ({pf['saved_cycles']:,.0f} cycles hidden); layers "
                          f"{_ranges(pf['one_transfer_layers']) or 'none'} move weights and constants "
                          f"in one transfer (included)", highlight=False, soft_wrap=wide)
        if s.get("handoff_cycles"):
            console.print(f"[bold]hand-offs[/bold]: {s['handoff_cycles']:,.0f} cycles (included) — "
                          + "; ".join(f"{h['tensor']} {h['from']}→{h['to']} {h['bytes']:,} B "
                                      f"{h['cycles']:,.0f} cycles" for h in s["handoffs"]),
                          highlight=False)


def _ranges(ix: list[int]) -> str:
    """Layer indices as runs: [1, 2, 3, 5] -> '1-3, 5'."""
    out: list[list[int]] = []
    for i in ix:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in out)


def print_why(a: Analysis, console: Console) -> None:
    """`analyze --why`: per layer, every candidate (module, kernel) and what partition found."""
    obj = a.scheduled_totals.get("objective", "latency")
    console.print(f"[bold]candidates[/bold] (partition minimizes {obj}; [green]✓[/green] chosen)")
    for r, s in zip(a.rows, a.scheduled):
        console.print(f"  {r.name} ({r.op}):")
        for c in s.candidates or ():
            mark = "[green]✓[/green]" if c["chosen"] else " "
            what = (f"{c['cycles']:,.0f} {a.scheduled_totals.get('cycles_column', 'cycles')}"
                    if c["reason"] is None
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
