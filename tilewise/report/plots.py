"""The figures of report.html (matplotlib, Agg backend), each returned as an inline SVG string.

Every figure is drawn from the report's JSON (report_files.py `build_report`), never from live
schedule objects, so a report can be re-rendered from its report.json:
- `cycles_figure`: predicted cycles per layer, stacked compute (the module's colour) + exposed DMA
  (the same colour, lighter and hatched): compute = the schedule's compute cycles (kernel + DMA
  issue + the module's per-layer overhead, schedule/cost.py), capped at the layer's cycles;
  exposed DMA = the rest (DMA the double buffering does not hide, and L3 traffic);
- `memory_figure`: the L2 plan (memory/network.py) — one rectangle per buffer, x = the steps it is
  live (layer index), y = its static offset, coloured by kind (activation / constants / scratch),
  with the plan's peak and the L2 size;
- `l1_figure`: each layer's L1 layout bytes (module colour) against the free L1;
- `macs_figure` (no target): MACs and raw weight bytes per layer;
- `measured_figure`: measured vs predicted cycles (or instructions) per layer, where validate ran
  the code on a target (report.to_json()["layers"]);
- `confusion_figure`: a confusion matrix as a heat-map (validate metrics, "vs_labels").

The colours are fixed (`MODULE_COLOURS`, `KIND_COLOURS`): the module of each layer reads the same
on every plot, and the report's screenshot test looks for them.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

#: one colour per module, in the target's module order (matplotlib's tab10 order, opaque)
MODULE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                  "#17becf")
#: L2 buffer kinds of the memory plan (memory/buffers.py BufferKind)
KIND_COLOURS = {"activation": "#4c72b0", "weight": "#dd8452", "scratch": "#55a868"}
KIND_LABELS = {"activation": "activations", "weight": "constants (weights, bias, requant)",
               "scratch": "scratch (L3 tiles)"}
MEASURED_COLOUR = "#c44e52"
PREDICTED_COLOUR = "#8172b3"
MACS_COLOUR = "#64b5cd"
WEIGHTS_COLOUR = "#937860"


def module_colours(modules: Sequence[str]) -> dict[str, str]:
    """The colour of each module (the target's order; colours repeat past eight modules)."""
    return {m: MODULE_COLOURS[i % len(MODULE_COLOURS)] for i, m in enumerate(modules)}


def lighter(colour: str, amount: float = 0.55) -> str:
    """`colour` blended with white (the exposed-DMA part of a bar)."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=96, layout="constrained")
    return fig, fig.add_subplot()


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: the SVG goes inline


def _layer_ticks(ax, names: Sequence[str]) -> None:
    n = len(names)
    step = max(1, -(-n // 40))
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(i) for i in ticks], fontsize=8)
    ax.set_xlim(-0.6, n - 0.4)


def cycles_figure(layers: Sequence[dict], modules: Sequence[str]) -> str:
    """Stacked compute / exposed-DMA cycles per layer, coloured by module (module docstring)."""
    from matplotlib.patches import Patch

    colours = module_colours(modules)
    fig, ax = _figure(9.5, 3.4)
    xs = range(len(layers))
    comp = [lay["compute_cycles"] for lay in layers]
    dma = [lay["dma_exposed_cycles"] for lay in layers]
    cols = [colours.get(lay["module"], "#7f7f7f") for lay in layers]
    ax.bar(xs, comp, color=cols, width=0.8)
    ax.bar(xs, dma, bottom=comp, color=[lighter(c) for c in cols], hatch="///", edgecolor="white",
           linewidth=0, width=0.8)
    _layer_ticks(ax, [lay["name"] for lay in layers])
    ax.set_ylim(0, max([c + d for c, d in zip(comp, dma)] + [1.0]) * 1.08)
    ax.set_xlabel("layer")
    ax.set_ylabel("predicted cycles")
    ax.set_title("Predicted cycles per layer: compute (solid) and exposed DMA (hatched)",
                 fontsize=10, loc="left")
    used = [m for m in modules if any(lay["module"] == m for lay in layers)]
    handles = [Patch(color=colours[m], label=f"{m} compute") for m in used]
    handles.append(Patch(facecolor="#dddddd", hatch="///", edgecolor="white", label="DMA exposed"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 5))
    return _svg(fig)


def macs_figure(layers: Sequence[dict]) -> str:
    """Without a target: MACs and raw weight bytes per layer (what the network asks of a chip)."""
    fig, ax = _figure(9.5, 3.0)
    xs = range(len(layers))
    ax.bar([x - 0.2 for x in xs], [lay["macs"] for lay in layers], width=0.4, color=MACS_COLOUR,
           label="MACs")
    ax2 = ax.twinx()
    ax2.bar([x + 0.2 for x in xs], [lay["weight_bytes"] / 1024 for lay in layers], width=0.4,
            color=WEIGHTS_COLOUR, label="raw weights (kB)")
    _layer_ticks(ax, [lay["name"] for lay in layers])
    ax.set_xlabel("layer")
    ax.set_ylabel("MACs")
    ax2.set_ylabel("raw weights (kB)")
    ax.set_title("MACs (left) and raw weights (right) per layer — add --target for the schedule",
                 fontsize=10, loc="left")
    return _svg(fig)


def memory_figure(plan: dict, n_layers: int) -> str:
    """The L2 memory timeline: buffers as rectangles (step × offset), by kind."""
    from matplotlib.patches import Patch, Rectangle

    fig, ax = _figure(9.5, 3.8)
    for b in plan["buffers"]:
        if b["size"] <= 0:
            continue
        ax.add_patch(Rectangle((b["first"] - 0.45, b["offset"] / 1024), b["last"] - b["first"] + 0.9,
                               b["size"] / 1024, facecolor=KIND_COLOURS.get(b["kind"], "#999999"),
                               edgecolor="white", linewidth=0.6))
    peak = plan["peak_bytes"] / 1024
    ax.axhline(peak, color="black", linestyle="--", linewidth=1)
    ax.text(n_layers - 0.5, peak, f" peak {plan['peak_bytes']:,} B", va="bottom", ha="right",
            fontsize=8)
    top = max(peak, 1e-3) * 1.12
    if plan.get("l2_free_bytes") and plan["l2_free_bytes"] / 1024 <= top * 1.6:
        ax.axhline(plan["l2_free_bytes"] / 1024, color="#b00000", linewidth=1)
        top = max(top, plan["l2_free_bytes"] / 1024 * 1.05)
    ax.set_ylim(0, top)
    _layer_ticks(ax, [str(i) for i in range(n_layers)])
    ax.set_xlabel("layer (execution step)")
    ax.set_ylabel("L2 offset (kB)")
    ax.set_title(f"L2 memory plan ({plan['planner']}): buffers by lifetime and offset",
                 fontsize=10, loc="left")
    kinds = [k for k in KIND_COLOURS if any(b["kind"] == k for b in plan["buffers"])]
    ax.legend(handles=[Patch(color=KIND_COLOURS[k], label=KIND_LABELS[k]) for k in kinds],
              fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)


def l1_figure(layers: Sequence[dict], modules: Sequence[str], l1_free: int) -> str:
    """L1 layout bytes per layer (module colour) against the free L1."""
    colours = module_colours(modules)
    fig, ax = _figure(9.5, 3.0)
    ax.bar(range(len(layers)), [lay["l1_bytes"] / 1024 for lay in layers],
           color=[colours.get(lay["module"], "#7f7f7f") for lay in layers], width=0.8)
    ax.axhline(l1_free / 1024, color="#b00000", linewidth=1)
    ax.text(len(layers) - 0.5, l1_free / 1024, f" L1 free {l1_free / 1024:,.1f} kB", va="bottom",
            ha="right", fontsize=8)
    ax.set_ylim(0, l1_free / 1024 * 1.15)
    _layer_ticks(ax, [lay["name"] for lay in layers])
    ax.set_xlabel("layer")
    ax.set_ylabel("L1 use (kB)")
    ax.set_title("L1 use per layer (tiles, buffers, kernel scratch)", fontsize=10, loc="left")
    return _svg(fig)


def measured_figure(rows: Sequence[dict], what: str = "cycles") -> str:
    """Measured vs predicted per layer (validate on a target); `what`: cycles or instructions."""
    fig, ax = _figure(9.5, 3.2)
    xs = range(len(rows))
    pred = [r.get(f"predicted_{what}") or 0 for r in rows]
    meas = [r.get(f"measured_{what}") or 0 for r in rows]
    ax.bar([x - 0.2 for x in xs], pred, width=0.4, color=PREDICTED_COLOUR, label="predicted")
    ax.bar([x + 0.2 for x in xs], meas, width=0.4, color=MEASURED_COLOUR, label="measured")
    _layer_ticks(ax, [r["name"] for r in rows])
    ax.set_xlabel("layer")
    ax.set_ylabel(what)
    ax.set_title(f"Measured vs predicted {what} per layer", fontsize=10, loc="left")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)


def confusion_figure(matrix: Sequence[Sequence[int]], labels: Sequence[str] | None = None) -> str:
    """A confusion matrix (rows: true class, columns: predicted) as an annotated heat-map."""
    import numpy as np

    m = np.asarray(matrix, dtype=float)
    n = m.shape[0]
    size = min(max(3.0, 0.45 * n + 1.5), 9.0)
    fig, ax = _figure(size + 1.0, size)
    im = ax.imshow(m, cmap="Blues")
    fig.colorbar(im, ax=ax, shrink=0.8)
    if n <= 20:
        top = m.max() if m.size else 0
        for i in range(n):
            for j in range(m.shape[1]):
                ax.text(j, i, f"{int(m[i, j])}", ha="center", va="center", fontsize=7,
                        color="white" if top and m[i, j] > top / 2 else "black")
    names = list(labels) if labels is not None else [str(i) for i in range(n)]
    ax.set_xticks(range(m.shape[1]), names[:m.shape[1]], fontsize=7)
    ax.set_yticks(range(n), names[:n], fontsize=7)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    ax.set_title("Confusion matrix (generated C vs labels)", fontsize=10, loc="left")
    return _svg(fig)
