"""Report files of `analyze`, `generate` and `validate` (`--report DIR`, and <project>/report/):
report.json, report.txt and report.html.

- report.json: {"tilewise_report": 1, "command", "header": {model, target, description,
  hypothetical, tiler, objective, clock_mhz, memories, modules, tilewise}, "layers": analyze's
  --json layers + compute_cycles / dma_exposed_cycles, "totals": analyze's --json totals,
  "memory_plan": the L2 plan's buffers (name, kind, size, first, last, offset), peak, lower bound,
  planner, l2_free_bytes, "notes", and for validate "validation": ValidationReport.to_json() (with
  the "metrics" key when the validation has one: {"vs_reference": {acc, rmse, mae, l2r, cos},
  "vs_labels": {accuracy, confusion}}, any part optional; the `data` part's "vs_expected" and
  "labels" are read alike), for generate "project".
- report.txt: the analyze text (every column, tile legend, flash / RAM summary) and, for
  validate, its text and metrics; plain text, no ANSI.
- report.html: one self-contained file (inline SVG figures, plots.py; template
  templates/report.html.j2): header, plots, metrics, the per-layer table, notes.

Cycles split (plots.py `cycles_figure`): compute = the schedule's compute cycles (summed over the
L2 tiles of an L3-tiled layer), capped at the layer's predicted cycles; exposed DMA = the rest.

Writing is all-or-nothing: the files go to a temporary directory beside DIR, which then replaces
DIR (a DIR that holds anything but a previous report is refused, never overwritten).
"""

from __future__ import annotations

import datetime
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import TilewiseError
from .analysis import Analysis

if TYPE_CHECKING:  # pragma: no cover
    from ..pipeline import NetworkSchedule
    from ..targets.base import Target

FILES = ("report.json", "report.txt", "report.html")


@dataclass(frozen=True)
class Report:
    """A report ready to write: its JSON data, its plain text and the HTML table's cells."""

    data: dict[str, Any]
    text: str
    columns: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]


def compute_split(ns: NetworkSchedule, i: int) -> tuple[float, float]:
    """(compute, exposed DMA) predicted cycles of layer i (module docstring); they sum to the
    layer's cycles."""
    layer = ns.layers.layers[i]
    s = ns.schedules[i]
    t = ns.l3_tiling(layer.name)
    tl = ns.l3_tiles.get(layer.name)
    if t is None:
        comp = s.compute_cycles
    elif tl is None:
        comp = s.compute_cycles * t.n_tiles
    else:
        comp = sum(tl.schedule_of(j).compute_cycles for j in range(len(tl.tiles)))
    total = ns.layer_cycles(i)
    comp = min(float(comp), total)
    return comp, total - comp


def _header(command: str, analysis: Analysis, target: Target | None) -> dict[str, Any]:
    from .. import __version__

    head: dict[str, Any] = {"command": command, "model": analysis.model, "tilewise": __version__,
                            "generated_at": datetime.datetime.now(datetime.UTC)
                            .strftime("%Y-%m-%d %H:%M UTC")}
    if target is None:
        return head
    t = analysis.scheduled_totals
    return head | {
        "target": target.name, "description": target.description,
        "hypothetical": target.hypothetical,
        "tiler": t.get("tiler"), "objective": t.get("objective"), "clock_mhz": target.clock_mhz,
        "memories": [{"name": m.name, "size": m.size, "free": m.free} for m in target.memories],
        "modules": [{"name": m.name, "cores": m.cores} for m in target.modules],
    }


def _table(analysis: Analysis, layers: list[dict]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    from .tables import analysis_columns

    cols = analysis_columns(analysis)
    heads = [c.header for c in cols]
    extra = bool(analysis.scheduled)
    if extra:
        heads += ["compute cyc", "DMA exposed cyc"]
    heads.append("requant")
    rows = []
    for i, r in enumerate(analysis.rows):
        cells = [c.text(i) for c in cols]
        if extra:
            cells += [f"{layers[i]['compute_cycles']:,.0f}", f"{layers[i]['dma_exposed_cycles']:,.0f}"]
        cells.append(r.requant)
        rows.append(tuple(cells))
    return tuple(heads), tuple(rows)


def _metrics(validation_json: dict | None) -> dict:
    m = (validation_json or {}).get("metrics")
    return m if isinstance(m, dict) else {}


#: the scalar metrics shown, in order (validate's metrics: stm32ai's acc, rmse, mae, l2r, cos)
METRIC_KEYS = ("acc", "accuracy", "accuracy_reference", "correct", "rmse", "mae", "max_abs", "l2r",
               "cos")
#: the parts of validate's "metrics": the documented vs_reference / vs_labels, and the `data`
#: part's vs_expected / labels
METRIC_PARTS = ("vs_reference", "vs_expected", "vs_labels", "labels")


def scalar_metrics(metrics: dict) -> list[tuple[str, str, str]]:
    """(against, metric, value) rows of the scalar metrics of each part present (absent parts and
    None values skipped; the confusion matrix is a figure)."""
    rows = []
    for part in METRIC_PARTS:
        values = metrics.get(part)
        if not isinstance(values, dict):
            continue
        against = str(values.get("against") or values.get("file") or part.replace("_", " "))
        for k in METRIC_KEYS:
            v = values.get(k)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            rows.append((against, k, f"{v:.6g}"))
    return rows


def confusion(metrics: dict) -> tuple[list[list[int]], list[str] | None] | None:
    """The confusion matrix (rows true, columns predicted) and class names, if the metrics hold
    one (under vs_labels or labels)."""
    for part in ("vs_labels", "labels"):
        values = metrics.get(part)
        if isinstance(values, dict) and values.get("confusion"):
            names = values.get("class_names") or values.get("labels")
            return values["confusion"], names if isinstance(names, list) else None
    return None


def _text(analysis: Analysis, head: dict, validation: Any | None) -> str:
    from rich.console import Console

    from .tables import WIDE, print_analysis

    buf = io.StringIO()
    console = Console(file=buf, width=WIDE, color_system=None, force_terminal=False,
                      highlight=False)
    console.print(f"tilewise {head['command']} report — {head['model']}"
                  + (f" on {head['target']}" + (" (hypothetical chip: settings beyond the part's "
                                                "physical resources)" if head.get("hypothetical")
                                                else "") if "target" in head else ""),
                  markup=False)
    console.print(f"tilewise {head['tilewise']}, {head['generated_at']}", markup=False)
    print_analysis(analysis, console, wide=True)
    if validation is not None:   # validate's own text, its metrics included (validate/text.py)
        from ..validate.text import format_report

        console.print(format_report(validation), soft_wrap=True, markup=False)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def build_report(command: str, analysis: Analysis, ns: NetworkSchedule | None,
                 target: Target | None, validation: Any | None = None,
                 project: str | Path | None = None) -> Report:
    """The report of one `command` (analyze / generate / validate) on `analysis` (with `ns` and
    `target` when the network was scheduled); `validation`: a ValidationReport."""
    data_json = analysis.to_json()
    layers = data_json["layers"]
    if ns is not None:
        for i, lay in enumerate(layers):
            comp, dma = compute_split(ns, i)
            lay["compute_cycles"], lay["dma_exposed_cycles"] = comp, dma
    head = _header(command, analysis, target if ns is not None else None)
    data: dict[str, Any] = {"tilewise_report": 1, "command": command, "header": head,
                            "layers": layers, "totals": data_json["totals"],
                            "notes": data_json["notes"]}
    if ns is not None:
        plan = ns.memory.plan
        data["memory_plan"] = {
            "peak_bytes": plan.peak, "lower_bound_bytes": plan.lower_bound,
            "planner": plan.planner, "l2_free_bytes": ns.target.memory("L2").free,
            "buffers": [{"name": b.name, "kind": b.kind, "size": b.size, "first": b.first,
                         "last": b.last, "offset": plan.offsets[b.name]} for b in plan.buffers]}
    vj = None
    if validation is not None:
        vj = validation.to_json()
        data["validation"] = vj
        if vj.get("code") and "memory_summary" in data["totals"]:   # the firmware was built
            from .memory_summary import with_code

            data["totals"]["memory_summary"] = with_code(data["totals"]["memory_summary"], vj["code"])
    if project is not None:
        data["project"] = str(project)
    text = _text(analysis, head, validation)
    cols, cells = _table(analysis, layers)
    return Report(data, text, cols, cells)


def figures(data: dict) -> list[tuple[str, str]]:
    """(caption, inline SVG) of every plot the report's data supports (plots.py)."""
    from . import plots

    out: list[tuple[str, str]] = []
    layers = data["layers"]
    head = data["header"]
    if "memory_plan" in data and layers:
        modules = [m["name"] for m in head.get("modules", [])]
        unit = data.get("totals", {}).get("cycles_unit", "cycles")
        out.append((f"Predicted {unit} per layer, by module; the hatched part is DMA the double "
                    "buffering does not hide", plots.cycles_figure(layers, modules)))
        out.append(("The static L2 plan: each rectangle is a buffer, live over the layers it "
                    "spans, at its offset", plots.memory_figure(data["memory_plan"], len(layers))))
        l1 = next((m for m in head.get("memories", []) if m["name"] == "L1"), None)
        if l1 is not None:
            out.append(("L1 bytes each layer's tiles use, against the free L1 (red line)",
                        plots.l1_figure(layers, modules, l1["free"])))
    elif layers:
        out.append(("MACs and raw weight bytes per layer (no target: no schedule to plot)",
                    plots.macs_figure(layers)))
    v = data.get("validation") or {}
    rows = v.get("layers") or []
    for what in ("cycles", "instructions"):
        if rows and any(r.get(f"measured_{what}") is not None for r in rows):
            out.append((f"Measured on {v.get('platform')} vs predicted {what} per layer",
                        plots.measured_figure(rows, what)))
    conf = confusion(_metrics(v))
    if conf:
        out.append(("Confusion matrix of the generated C against the labels",
                    plots.confusion_figure(*conf)))
    return out


def render_html(report: Report, plots: bool = True) -> str:
    """report.html: one self-contained page (`plots=False`: without the figures — the screenshot
    test's negative control)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    from .memory_summary import summary_lines
    from .tables import TILE_LEGEND

    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    data = report.data
    totals = data["totals"]
    ms = totals.get("memory_summary")
    v = data.get("validation")
    return env.get_template("report.html.j2").render(
        data=data, head=data["header"], totals=totals,
        summary=summary_lines(ms) if ms else [],
        figures=figures(data) if plots else [],
        metrics=scalar_metrics(_metrics(v)), validation=v,
        columns=report.columns, cells=report.cells, tile_legend=TILE_LEGEND)


def check_report_dir(dest: str | Path) -> Path:
    """The absolute report directory, refused (TilewiseError) when it is a file or holds other
    files than a previous report's (the CLI calls this before any work too)."""
    d = Path(dest).expanduser().absolute()
    if d.exists() and not d.is_dir():
        raise TilewiseError(f"--report {dest}: not a directory (a file of that name exists)")
    if d.is_dir():
        stray = sorted(p.name for p in d.iterdir() if p.name not in FILES)
        if stray:
            raise TilewiseError(f"--report {dest}: the directory holds other files ({stray[0]}"
                                f"{', …' if len(stray) > 1 else ''}); give an empty or new "
                                f"directory, or a previous report's")
    return d


def write_report(dest: str | Path, report: Report, plots: bool = True,
                 html: str | None = None) -> Path:
    """Write report.json / .txt / .html into `dest` all at once (module docstring); returns the
    directory. `html`: the page as `render_html` gave it (one rendering for several copies).
    A bad `dest` is one TilewiseError sentence."""
    d = check_report_dir(dest)
    try:
        html = html if html is not None else render_html(report, plots)
        d.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.", dir=d.parent))
    except OSError as e:
        raise TilewiseError(f"--report {dest}: cannot create it ({e.strerror or e})") from None
    old = None
    try:
        (tmp / "report.json").write_text(json.dumps(report.data, indent=2) + "\n")
        (tmp / "report.txt").write_text(report.text)
        (tmp / "report.html").write_text(html)
        os.chmod(tmp, 0o755)
        if d.exists():
            old = d.with_name(f".{d.name}.old-{os.getpid()}")
            d.rename(old)
        tmp.rename(d)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not d.exists():
            old.rename(d)
        raise TilewiseError(f"--report {dest}: cannot write the report ({e.strerror or e})") from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return d
