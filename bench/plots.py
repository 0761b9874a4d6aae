"""One PNG per benchmark table under bench/out/ (matplotlib, Agg backend: no display needed).

Each plot reads the table's raw `data` (never re-measures); cells that are explanations
("n/a (...)") are left out of the bars and named in the plot's subtitle.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .tables import Table  # noqa: E402


def _num(v) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("nan")


def _bars(ax, labels: list[str], series: dict[str, list[float]], log: bool = False, ylabel: str = "") -> None:
    x = np.arange(len(labels))
    w = 0.8 / max(1, len(series))
    for i, (name, vals) in enumerate(series.items()):
        ax.bar(x + (i - (len(series) - 1) / 2) * w, [_num(v) for v in vals], w, label=name)
    ax.set_xticks(x, labels, rotation=20, ha="right", fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def _host(t: Table, ax) -> None:
    names = list(t.data)
    eng = ("tilewise", "tflm", "litert")
    label = {"tilewise": "tilewise C", "tflm": "TFLM", "litert": "LiteRT (XNNPACK)"}
    _bars(ax, names, {label[e]: [t.data[n]["ms"].get(e, float("nan")) for n in names] for e in eng},
          log=True, ylabel="ms per inference (log)")


def _memory(t: Table, ax) -> None:
    names = list(t.data)
    d = t.data
    _bars(ax, names, {"tilewise act. peak": [d[n]["tw_act_peak"] for n in names],
                      "lower bound": [d[n]["tw_act_lower_bound"] for n in names],
                      "TFLM arena head": [d[n]["tflm_arena"]["head"] for n in names],
                      "TFLM arena total": [d[n]["tflm_arena"]["total"] for n in names]},
          ylabel="bytes")


def _compile(t: Table, ax) -> None:
    labels, ana, gen = [], [], []
    for n, per in t.data.items():
        for tiler, v in per.items():
            labels.append(f"{n}\n{tiler}")
            ana.append(np.median(v["analyze_s"]) * 1e3)
            g = v.get("analyze_generate_s")
            gen.append(np.median(g) * 1e3 if g else float("nan"))
    _bars(ax, labels, {"analyze": ana, "analyze + generate": gen}, ylabel="ms")


def _quality(t: Table, ax) -> None:
    names = list(t.data)
    l1s = sorted({l1 for per in t.data.values() for l1 in per}, key=float, reverse=True)
    _bars(ax, names, {f"L1 {l1} kB": [t.data[n][l1]["ratio"] if t.data[n][l1]["ratio"] is not None
                                      else float("nan") for n in names] for l1 in l1s},
          ylabel="predicted cycles model / dory")
    ax.axhline(1.0, color="k", lw=0.8)


def _gap9(t: Table, ax) -> None:
    names = list(t.data)
    d = t.data
    _bars(ax, names, {"pred. --tiler model": [d[n]["pred_ms"]["model"] for n in names],
                      "pred. --tiler dory": [d[n]["pred_ms"]["dory"] for n in names],
                      "DORY silicon": [d[n]["dory_ms"] for n in names],
                      "MATCH cluster silicon": [d[n]["match_cluster_ms"] for n in names]},
          ylabel="ms on GAP9 (cluster)")


def _gap8(t: Table, ax) -> None:
    labels, pub, a, b = [], [], [], []
    for cores, v in t.data["pulp_nn"].items():
        labels.append(f"PULP-NN {cores}c")
        pub.append(v["published"]), a.append(v["kernel_only"]), b.append(v["scheduled"])
    for name, v in t.data["dory"].items():
        labels.append(name)
        pub.append(v["published_cycles"]), a.append(v["pred_cycles"]["dory"]), b.append(v["pred_cycles"]["model"])
    _bars(ax, labels, {"published": pub, "pred. A (kernel only / --tiler dory)": a,
                       "pred. B (scheduled / --tiler model)": b}, log=True, ylabel="cycles (log)")


def _gvsoc_models(t: Table, ax) -> None:
    labels, meas, pred = [], [], []
    for n, per in t.data.items():
        for kb, r in per.items():
            labels.append(f"{n}\nL1 {kb} kB")
            meas.append(r.get("measured_cycles")), pred.append(r.get("predicted_cycles"))
    _bars(ax, labels, {"measured (GVSoC)": meas, "predicted": pred}, log=True, ylabel="cycles (log)")


def _gvsoc_kinds(t: Table, ax) -> None:
    kinds = list(t.data)
    _bars(ax, kinds, {"measured (GVSoC)": [t.data[k]["measured"] for k in kinds],
                      "predicted": [t.data[k]["predicted"] for k in kinds]},
          log=True, ylabel="cycles, 4 models (log)")


def _gvsoc_layer(t: Table, ax) -> None:
    labels = [f"{c} core{'s' if c != '1' else ''}" for c in t.data]
    _bars(ax, labels, {"tilewise kernel (GVSoC)": [r[3] for r in t.rows],
                       "tilewise layer (GVSoC)": [r[5] for r in t.rows],
                       "PULP-NN on GAP8 silicon": [r[6] for r in t.rows]}, ylabel="MAC / cycle")


def _cortex_m_models(t: Table, ax) -> None:
    labels = [r[0] for r in t.rows]
    _bars(ax, labels, {"tilewise (counted)": [r[2] / 1e6 for r in t.rows],
                       "TFLM + CMSIS-NN (counted)": [r[5] / 1e6 for r in t.rows]},
          ylabel="M instructions / inference")


def _cortex_m_kinds(t: Table, ax) -> None:
    _bars(ax, [r[0] for r in t.rows], {"tilewise": [r[5] or 0 for r in t.rows]},
          ylabel="instructions / MAC")


def _gap9_modules(t: Table, ax) -> None:
    names = list(t.data)
    configs = list(t.data[names[0]]["predicted_ms"])
    series = {}
    for j, c in enumerate(configs):
        series[f"tilewise {c}"] = [t.data[n]["predicted_ms"][c] for n in names]
        series[f"MATCH {c}"] = [t.data[n]["match_ms"][j] for n in names]
    series["tilewise all, NE16-native rq"] = [t.data[n]["ne16_native"]["predicted_ms"]["all"]
                                              for n in names]
    _bars(ax, names, series, log=True, ylabel="ms (log), predicted vs GAP9 silicon")


def _diana(t: Table, ax) -> None:
    names = list(t.data)
    series = {f"tilewise {c}": [t.data[n]["predicted_ms"][c] for n in names]
              for c in t.data[names[0]]["predicted_ms"]}
    series["MATCH"] = [t.data[n]["match_ms"] for n in names]
    series["HTVM"] = [t.data[n]["htvm_ms"] for n in names]
    _bars(ax, names, series, log=True, ylabel="ms (log), predicted vs DIANA silicon")


def _pulp_subbyte(t: Table, ax) -> None:
    names = [n for n in t.data if n != "pulpnn"]
    series = {f"{c} core{'s' if c != '1' else ''}": [t.data[n]["mac_per_cycle"][c] for n in names]
              for c in ("1", "8")}
    _bars(ax, names, series, ylabel="MAC/cycle on GVSoC (seed 004's layer)")


def _sequence_attention(t: Table, ax) -> None:
    rows = t.data["rows"]
    _bars(ax, [r["name"] for r in rows], {"measured (GVSoC, 8 cores)": [r["gvsoc_cycles"] for r in rows],
                                          "predicted": [r["gvsoc_predicted"] for r in rows],
                                          "Cortex-M7 est. cycles": [r["m7_estimated_cycles"] for r in rows]},
          log=True, ylabel="cycles / inference (log)")


def _ne16_networks(t: Table, ax) -> None:
    names = list(t.data)
    labels = [f"{n}\n{part}" for n in names for part in ("NE16 layers", "cluster layers")]
    _bars(ax, labels, {"measured (GVSoC)": [t.data[n][p]["measured"] for n in names
                                            for p in ("ne16", "cluster")],
                       "predicted": [t.data[n][p]["predicted"] for n in names
                                     for p in ("ne16", "cluster")]},
          log=True, ylabel="cycles (log)")


def _cortex_m4_models(t: Table, ax) -> None:
    labels = [r[0] for r in t.rows]
    _bars(ax, labels, {"tilewise instructions (counted, Cortex-M4)": [r[2] / 1e6 for r in t.rows],
                       "tilewise cycles (estimated, Cortex-M4 model)": [r[5] / 1e6 for r in t.rows],
                       "X-CUBE-AI 10.2 cycles (published)": [r[9] / 1e6 for r in t.rows],
                       "Plumerai cycles (published)": [r[11] / 1e6 for r in t.rows]},
          log=True, ylabel="M / inference (log)")


def _gap9_subbyte(t: Table, ax) -> None:
    names = list(t.data)
    _bars(ax, names, {"tilewise 8-bit weights": [t.data[n]["cycles_8bit"] / 1e3 for n in names],
                      "tilewise sub-byte (quality floor)": [t.data[n]["cycles"] / 1e3 for n in names],
                      "GreenWaves (7/5/5/6-bit)": [t.data[n]["greenwaves_cycles"] / 1e3 for n in names]},
          ylabel="k cycles, gap9 predicted vs GreenWaves")


def _mbv2_chains(t: Table, ax) -> None:
    _bars(ax, [r[0] for r in t.rows], {"per-layer bound": [r[1] / 1e3 for r in t.rows],
                                       "chained peak": [r[3] / 1e3 for r in t.rows]},
          ylabel="kB of activations, input included")


def _pulp_chains(t: Table, ax) -> None:
    names = list(t.data)
    _bars(ax, names, {"activations unfused": [t.data[n]["acts_unfused"] / 1e3 for n in names],
                      "activations chained": [t.data[n]["acts_chained"] / 1e3 for n in names]},
          ylabel="kB live at once (pulp-open, least RAM)")


def _ram_front(t: Table, ax) -> None:
    """Each model's RAM × cycles front, both relative to its unfused schedule."""
    for name, r in t.data.items():
        pts = sorted(r["points"], key=lambda p: p["ram_ratio"])
        ax.plot([p["ram_ratio"] for p in pts], [p["cycles_ratio"] for p in pts], "o-", label=name)
    ax.set_xlabel("RAM / unfused schedule's (stm32h7 plan)")
    ax.set_ylabel("predicted cycles / unfused")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


PLOTS = {"host": _host, "memory": _memory, "compile_time": _compile, "schedule_quality": _quality,
         "silicon_gap9": _gap9, "silicon_gap8": _gap8, "gvsoc_models": _gvsoc_models,
         "gvsoc_kinds": _gvsoc_kinds, "gvsoc_pulpnn_layer": _gvsoc_layer,
         "cortex_m_models": _cortex_m_models, "cortex_m_kinds": _cortex_m_kinds,
         "gap9_modules": _gap9_modules, "diana": _diana, "pulp_subbyte": _pulp_subbyte,
         "sequence_attention": _sequence_attention, "ne16_networks": _ne16_networks,
         "cortex_m4_models": _cortex_m4_models, "gap9_subbyte": _gap9_subbyte,
         "cortex_m_mbv2_chains": _mbv2_chains, "pulp_chains": _pulp_chains,
         "ram_front": _ram_front}


def plot(t: Table, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(9, 4.8))
    PLOTS[t.key](t, ax)
    ax.set_title(t.title, fontsize=10)
    fig.tight_layout()
    path = out_dir / f"{t.key}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
