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
    return console if console.is_terminal else Console(width=200)


def print_analysis(a: Analysis, console: Console | None = None) -> None:
    console = console or make_console()
    table = Table(title=f"tilewise analyze — {a.model}", title_justify="left")
    for col, just in (("#", "right"), ("layer", "left"), ("op", "left"), ("input", "left"), ("output", "left"),
                      ("MACs", "right"), ("weights B", "right"), ("act. B", "right")):
        table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for i, r in enumerate(a.rows):
        table.add_row(
            str(i), r.name, r.op, ", ".join(_shape(s) for s in r.input_shapes), _shape(r.output_shape),
            f"{r.macs:,}", f"{r.weight_bytes:,}", f"{r.activation_bytes:,}",
        )
    console.print(table)
    t = a.totals
    console.print(
        f"[bold]totals[/bold]: {t.layers} layers, {t.macs:,} MACs, {t.weight_bytes:,} B weights, "
        f"largest layer in+out {t.max_layer_activation_bytes:,} B ({t.max_layer})"
    )
