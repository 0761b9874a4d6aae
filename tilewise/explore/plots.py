"""The sweep's plots (matplotlib, Agg backend, PNG in DIR):

- latency_vs_l1.png: per model, predicted latency against the chip's free L1, one line per tiler
  and L2 size (and per cores / clock / module set when the sweep varies them);
- pareto_latency.png: per model, latency against chip memory (free L1 + L2) for every point, the
  Pareto front (pareto.py) drawn as a step line;
- pareto_energy.png: the same for energy, only when some points have an energy figure;
- pareto_ram.png: with --ram-budget, latency against the RAM the network uses (L1 arena + L2
  peak), the RAM × cycles front of the budgets (fused chains where a budget needs them).
Hypothetical points (beyond the built-in part) are drawn hollow.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from .pareto import chip_memory_kb, ram_kb


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _models(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(r["model"] for r in rows))


def _grid(plt, n: int):
    cols = min(n, 2)
    nrows = -(-n // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.4 * cols, 4.2 * nrows), squeeze=False)
    flat = [a for row in axes for a in row]
    for a in flat[n:]:
        a.set_visible(False)
    return fig, flat


def _varied(rows: list[dict], keys: tuple[str, ...]) -> list[str]:
    return [k for k in keys if len({str(r.get(k)) for r in rows}) > 1]


def _latency_label(rows: list[dict]) -> str:
    """The latency axis' label, saying what the cycles it follows from are when they are not a
    simulator's (stm32h7: "cycles (Cortex-M7 model, estimated)")."""
    units = {r.get("cycles_unit") or "cycles" for r in rows}
    return "predicted latency (ms)" if units == {"cycles"} else \
        f"predicted latency (ms, from {' / '.join(sorted(units))})"


def latency_vs_l1(rows: list[dict], path: Path) -> bool:
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return False
    plt = _mpl()
    models = _models(ok)
    extra = _varied(ok, ("cores", "clock_mhz", "modules"))
    fig, axes = _grid(plt, len(models))
    for ax, m in zip(axes, models):
        mine = [r for r in ok if r["model"] == m]
        groups: dict[tuple, list[dict]] = {}
        for r in mine:
            groups.setdefault((r["tiler"], r["chip_l2_kb"], *(r.get(k) for k in extra)), []).append(r)
        for g, rs in groups.items():
            rs.sort(key=lambda r: r["chip_l1_kb"])
            label = f"{g[0]}, L2 {g[1]:g} kB" + "".join(f", {k} {v}" for k, v in zip(extra, g[2:]))
            line, = ax.plot([r["chip_l1_kb"] for r in rs], [r["latency_ms"] for r in rs],
                            marker="o" if g[0] == "model" else "s", label=label)
            hyp = [r for r in rs if r["hypothetical"]]
            ax.scatter([r["chip_l1_kb"] for r in hyp], [r["latency_ms"] for r in hyp],
                       facecolors="white", edgecolors=line.get_color(), zorder=3)
        _finish_axes(ax, "L1 free (kB)", _latency_label(mine), m)
    _save(plt, fig, f"{ok[0]['target']}: latency vs L1 (hollow: beyond the part)", path)
    return True


def pareto_plot(rows: list[dict], key: str, label: str, path: Path, memory=chip_memory_kb,
                flag: str = "pareto", xlabel: str = "chip memory: L1 + L2 free (kB)") -> bool:
    """Per model, `key` against `memory` (a row's kB) for every point, the front marked `flag`
    (pareto.py) as a step line."""
    ok = [r for r in rows if r["status"] == "ok" and r.get(key) is not None
          and memory(r) is not None]
    if not ok:
        return False
    plt = _mpl()
    models = _models(ok)
    fig, axes = _grid(plt, len(models))
    for ax, m in zip(axes, models):
        mine = [r for r in ok if r["model"] == m]
        for tiler, marker in (("model", "o"), ("dory", "s")):
            rs = [r for r in mine if r["tiler"] == tiler]
            if rs:
                ax.scatter([memory(r) for r in rs], [r[key] for r in rs], marker=marker,
                           alpha=0.6, label=f"tiler {tiler}")
        fr = sorted((memory(r), r[key]) for r in mine if r.get(flag))
        if fr:
            ax.step([x for x, _ in fr], [y for _, y in fr], where="post", color="black",
                    label="Pareto front")
        _finish_axes(ax, xlabel, label, m)
    _save(plt, fig, f"{ok[0]['target']}: {label} × {xlabel.split(':')[0].split(' (')[0]}", path)
    return True


#: an axis spanning less than this ratio stays linear (a log scale of a narrow range shows
#: only unreadable minor ticks: a RAM front whose cycles move by a few per cent)
LOG_SPAN = 4.0


def _finish_axes(ax, xlabel: str, ylabel: str, title: str) -> None:
    """Axes (log where the data span a wide range: memory in powers of two), labels, grid and
    legend of one model's panel."""
    (x0, y0), (x1, y1) = ax.dataLim.get_points()
    if x0 > 0 and x1 / x0 >= LOG_SPAN:
        ax.set_xscale("log", base=2)
    if y0 > 0 and y1 / y0 >= LOG_SPAN:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("\n".join(textwrap.wrap(ylabel, 40)))
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def _save(plt, fig, title: str, path: Path) -> None:
    fig.suptitle("\n".join(textwrap.wrap(title, 90)), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_plots(rows: list[dict], out: Path) -> list[str]:
    """Write the plots that have data; return their file names."""
    made = []
    if latency_vs_l1(rows, out / "latency_vs_l1.png"):
        made.append("latency_vs_l1.png")
    ok = [r for r in rows if r["status"] == "ok"]
    if pareto_plot(rows, "latency_ms", _latency_label(ok), out / "pareto_latency.png"):
        made.append("pareto_latency.png")
    if pareto_plot(rows, "energy_uj", "predicted energy (µJ)", out / "pareto_energy.png"):
        made.append("pareto_energy.png")
    if any(r.get("ram_budget_kb") for r in ok) and pareto_plot(
            rows, "latency_ms", _latency_label(ok), out / "pareto_ram.png", ram_kb, "pareto_ram",
            "RAM the network uses: L1 arena + L2 peak (kB)"):
        made.append("pareto_ram.png")
    return made
