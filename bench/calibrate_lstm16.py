"""Fit the pulp family's 16x8 LSTM (bindings/pulp/lstm_cost.py LstmCost with two int16 lanes per
word: CLUSTER16, ARM16) on GVSoC pulp-open cycles (8 and 1 cores) and counted Cortex-M7
instructions (stm32h7), the kernel bindings/pulp/lstm16.py emits (tw_pulp_lstm16.c) — the method
of bench/calibrate_lstm_cluster.py (its configurations, held `call`s and weighted least squares).

`python bench/calibrate_lstm16.py` builds the 16x8 models of tests/lstm16_models.py and two more
geometries of its own (EXTRA: 16 x 24 -> 64 cells, 8 x 40 -> 24), runs each with `validate --on
gvsoc` (pulp-open, both core counts) and `--on count` (stm32h7), bit-exact against TFLite Micro's
interpreter or it stops, fits

    measured layer − the module's layer overhead ≈ call + step · B·T + cell · ⌈H/P⌉·B·T
                                                   + word · (IP + HP)/2 · ⌈H/P⌉·B·T

                                                   + l2_word · the same, when the weights stay in L2

(IP, HP: I, H rounded up to 2), prints the rows, the fit and each row's predicted / measured, and
writes bench/calibration_lstm16.json (`--reuse`: refit its rows).
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

from bench.calibrate_lstm_cluster import CALL, CONFIGS, nest  # noqa: E402
from tests import lstm16_models  # noqa: E402
from tilewise.bindings.pulp.lstm_cost import LstmCost  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import validate_model  # noqa: E402

#: bench-only geometries beside the tests' models: lstm16_model keyword arguments; the last two
#: have more than 32 kB of int16 weights, which stay in L2 on the cluster (lstm16.py)
EXTRA = {"wide16": dict(seed=2, steps=16, n_input=24, n_cell=48),
         "long_input16": dict(seed=3, steps=8, n_input=40, n_cell=24),
         "l2_wide16": dict(seed=4, steps=12, n_input=24, n_cell=64),
         "l2_long16": dict(seed=5, steps=8, n_input=64, n_cell=40)}
NAMES = ("call", "step", "cell", "word", "l2_word")
#: as calibrate_lstm_cluster.py's FITTED, and on the cluster the L2 words' extra cost
FITTED = {"gvsoc": ("step", "cell", "word", "l2_word"), "count": ("cell", "word")}
LIMIT = {"gvsoc": 32768, "count": 0}


def models(work: Path) -> dict[str, Path]:
    out = {name: lstm16_models.lstm16(name, work) for name in sorted(lstm16_models.MODELS)}
    for name, kw in EXTRA.items():
        out[name] = lstm16_models.lstm16_model(work / f"lstm_{name}.tflite", **kw)
    return out


def rows(work: Path) -> list[dict]:
    out: list[dict] = []
    for name, path in models(work).items():
        graph = load_model(path)
        for target_name, cores, on, key in CONFIGS:
            target = get_target(target_name, cores=cores) if target_name == "pulp-open" else get_target(target_name)
            ns = schedule_network(lower(graph), target)
            r = validate_model(path, ns, graph, 1, 0, work / f"{name}_{target_name}_{cores}", on=on).to_json()
            assert r["bit_exact"], (name, target_name, cores)
            for i, layer in enumerate(ns.layers.layers):
                if layer.op != "lstm":
                    continue
                p = layer.params
                out.append(dict(config=f"{target_name}/{cores}", model=name, layer=layer.name, I=p.n_input,
                                H=p.n_cell, steps=p.steps, batch=p.batch, cores=cores,
                                binding=r["layers"][i].get("binding"), measured=r["layers"][i][key]))
    return out


def overhead(r: dict) -> float:
    """The module's layer overhead, counted rows in the target's instruction model (stm32h7)."""
    target = get_target(r["config"].split("/")[0])
    if r["config"].startswith("stm32h7") and target.instruction_model is not None:
        target = target.instruction_model(target)
    return float(target.modules[0].layer_overhead_cycles)


def features(r: dict, limit: int) -> list[float]:
    one = {n: replace(LstmCost(lanes=2, l1_limit=limit), **{m: float(m == n) for m in NAMES}) for n in NAMES}
    return [sum(t.coef for t in one[n].terms(nest(r), r["cores"])) for n in NAMES]


def fit(rs: list[dict], names: tuple[str, ...], call: float, limit: int) -> LstmCost:
    """The coefficients `names` fitted, `call` held, the others 0."""
    cols = [NAMES.index(n) for n in names]
    a = np.array([features(r, limit) for r in rs], dtype=np.float64)[:, cols]
    y = np.array([r["measured"] - overhead(r) - call for r in rs], dtype=np.float64)
    w = 1.0 / y
    coef, *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
    return LstmCost(**{n: (round(float(coef[names.index(n)]), 3) if n in names else 0.0) for n in NAMES[1:]},
                    call=call, lanes=2, l1_limit=limit)


def main() -> None:
    out = ROOT / "bench" / "calibration_lstm16.json"
    if "--reuse" in sys.argv[1:]:   # refit the rows of the last run
        measured = [r for v in json.loads(out.read_text()).values() for r in v["rows"]]
    else:
        with tempfile.TemporaryDirectory(prefix="tw_lstm16_") as tmp:
            measured = rows(Path(tmp))
    result = {}
    for platform, targets in (("gvsoc", ("pulp-open/8", "pulp-open/1")), ("count", ("stm32h7/1",))):
        rs = [r for r in measured if r["config"] in targets]
        m = fit(rs, FITTED[platform], CALL[platform], LIMIT[platform])
        for r in rs:
            r["predicted"] = overhead(r) + sum(t.coef for t in m.terms(nest(r), r["cores"]))
            r["ratio"] = r["predicted"] / r["measured"]
        result[platform] = dict({n: getattr(m, n) for n in NAMES}, rows=rs)
        print(f"{platform}: " + ", ".join(f"{n} = {getattr(m, n)}" for n in NAMES))
        for r in rs:
            print(f"  {r['config']:12s} {r['model']:13s} I={r['I']:3d} H={r['H']:3d} T={r['steps']:3d} "
                  f"B={r['batch']} measured {r['measured']:>10,} predicted {r['predicted']:>12,.0f} ({r['ratio']:.3f})")
    out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
