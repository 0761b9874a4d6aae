"""DIR/index.html: the sweep on one page — its settings, the plots (plots.py, as <img> of the
PNGs beside it), the Pareto points per model, and every point that could not run with its reason.
Plain HTML, every value escaped."""

from __future__ import annotations

from html import escape
from pathlib import Path

from .pareto import chip_memory_kb


def _fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _table(rows: list[dict], cols: tuple[str, ...]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{escape(_fmt(r.get(c)))}</td>" for c in cols) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def write_html(rows: list[dict], plots: list[str], meta: dict, path: Path) -> None:
    ok = [r for r in rows if r["status"] == "ok"]
    bad = [r for r in rows if r["status"] != "ok"]
    front = [dict(r, chip_memory_kb=chip_memory_kb(r)) for r in ok if r.get("pareto")]
    front.sort(key=lambda r: (r["model"], r["chip_memory_kb"]))
    settings = "".join(f"<li><b>{escape(k)}</b>: "
                       f"{escape(', '.join(map(str, v)) if isinstance(v, list) else str(v))}</li>"
                       for k, v in meta.items())
    imgs = "".join(f'<p><img src="{escape(p)}" alt="{escape(p)}" style="max-width:100%"></p>'
                   for p in plots)
    cols = ("model", "tiler", "modules", "cores", "clock_mhz", "chip_l1_kb", "chip_l2_kb",
            "chip_memory_kb", "latency_ms", "energy_uj", "mac_per_cycle", "l1_bytes",
            "peak_l2_bytes", "hypothetical")
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>tilewise explore</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse;font-size:90%}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}</style></head><body>
<h1>tilewise explore</h1>
<ul>{settings}<li><b>points</b>: {len(rows)} ({len(ok)} predicted, {len(bad)} could not run)</li></ul>
<p>Predictions of <code>tilewise analyze --target</code> on hypothetical chips (memories and cores
beyond the built-in part are allowed and marked). Data: <a href="points.csv">points.csv</a>,
<a href="points.json">points.json</a>.</p>
<h2>Plots</h2>{imgs}
<h2>Pareto front (objective × chip memory), per model</h2>{_table(front, cols)}
<h2>Points that could not run</h2>{_table(bad, ("model", "tiler", "modules", "cores", "clock_mhz",
                                                 "l1_kb", "l2_kb", "status", "reason"))}
</body></html>
"""
    path.write_text(page)
