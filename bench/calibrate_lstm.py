"""Fit the host core's integer LSTM (the portable lstm_s8; bindings/pulp/cost.py `lstm_mac`,
`lstm_cell`) on GVSoC cycles (pulp-open's host core, the target with the cluster's
lstm_cluster_s8 left out — the coefficients gap8 / gap9 / pulp-open share). The cluster's and
stm32h7's kernel, lstm_cluster_s8, is fitted by bench/calibrate_lstm_cluster.py.

`python bench/calibrate_lstm.py` converts the LSTM models of tests/lstm_models.py (the
keyword-spotting LSTM 49x10 -> 32 cells, a 12x6 -> 20 sequence, two stacked layers 10x5 -> 16 -> 8:
four LSTM layers of 104 to 168 MACs per cell and step), runs each once with `validate --on gvsoc`
(pulp-open), bit-exact, and fits

    measured layer ≈ lstm_mac · MACs + lstm_cell · (cells · steps)

by least squares with each row weighted by 1/measured (MACs = steps · 4·H·(I + H)); prints the
rows, the fit and each row's predicted / measured, and writes bench/calibration_lstm.json. The
per-call cost (the module's) is left in the rows: it is under 0.1% of each.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import lstm_models  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import validate_model  # noqa: E402

CONFIGS = {"gvsoc": ("pulp-open", "measured_cycles")}


def host_target(name: str):
    """Target `name` without lstm_cluster_s8: the LSTM on its host core's lstm_s8."""
    t = get_target(name)
    return replace(t, modules=tuple(replace(m, bindings=tuple(b for b in m.bindings if b.name != "lstm_cluster_s8"))
                                    for m in t.modules))


def rows(work: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {c: [] for c in CONFIGS}
    for name in sorted(lstm_models.MODELS):
        path = lstm_models.int8_lstm(name, work)
        graph = load_model(path)
        for config, (target, key) in CONFIGS.items():
            ns = schedule_network(lower(graph), host_target(target))
            r = validate_model(path, ns, graph, 1, 0, work / f"{name}_{config}", on=config).to_json()
            assert r["bit_exact"], (name, config)
            for i, layer in enumerate(ns.layers.layers):
                if layer.op != "lstm":
                    continue
                p = layer.params
                cells = p.batch * p.steps * p.n_cell
                out[config].append(dict(model=name, layer=layer.name, I=p.n_input, H=p.n_cell, steps=p.steps,
                                        macs=cells * 4 * (p.n_input + p.n_cell), cells=cells,
                                        measured=r["layers"][i][key]))
    return out


def fit(rs: list[dict]) -> tuple[float, float]:
    a = np.array([[r["macs"], r["cells"]] for r in rs], dtype=np.float64)
    y = np.array([r["measured"] for r in rs], dtype=np.float64)
    w = 1.0 / y
    (mac, cell), *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
    return float(mac), float(cell)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tw_lstm_cal_") as tmp:
        measured = rows(Path(tmp))
    result = {}
    for config, rs in measured.items():
        mac, cell = fit(rs)
        for r in rs:
            r["predicted"] = mac * r["macs"] + cell * r["cells"]
            r["ratio"] = r["predicted"] / r["measured"]
        result[config] = dict(target=CONFIGS[config][0], lstm_mac=round(mac, 3), lstm_cell=round(cell, 1), rows=rs)
        print(f"{config} ({CONFIGS[config][0]}): lstm_mac = {mac:.3f}, lstm_cell = {cell:.1f}")
        for r in rs:
            print(f"  {r['model']:9s} {r['layer'][:34]:34s} I={r['I']:3d} H={r['H']:3d} T={r['steps']:3d} "
                  f"measured {r['measured']:>12,} predicted {r['predicted']:>12,.0f} ({r['ratio']:.3f})")
    (ROOT / "bench" / "calibration_lstm.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
