"""Fit the pulp family's LSTM (bindings/pulp/lstm_cost.py LstmCost: call, step, cell, word) on
GVSoC cycles of pulp-open's cluster (8 cores and 1: `get_target(..., cores=)`) and on counted
Cortex-M7 instructions (stm32h7), the kernel bindings/pulp/lstm.py emits (tw_pulp_lstm.c).

`python bench/calibrate_lstm_cluster.py` converts the LSTM models of tests/lstm_models.py and two
more geometries of its own (EXTRA: 16 x 24 -> 64 cells, 8 x 40 -> 24), runs each with
`validate --on gvsoc` (pulp-open, both core counts) and `--on count` (stm32h7), bit-exact or it
stops, and fits per configuration (GVSoC: both core counts together)

    measured layer − the module's layer overhead ≈ call + step · B·T + cell · ⌈H/P⌉·B·T
                                                   + word · (IP + HP)/4 · ⌈H/P⌉·B·T

by least squares with each row weighted by 1/measured; prints the rows, the fit and each row's
predicted / measured, and writes bench/calibration_lstm_cluster.json (`--reuse`: refit its rows).
`call` is held (CALL) and, on the Cortex-M7's one core, `step` at 0 (FITTED says why).
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
from tilewise.bindings.pulp.lstm_cost import LstmCost  # noqa: E402
from tilewise.frontend import load_model  # noqa: E402
from tilewise.ir.layer import LoopNest  # noqa: E402
from tilewise.passes import lower  # noqa: E402
from tilewise.pipeline import schedule_network  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.validate import validate_model  # noqa: E402

#: (target, cores, validate's platform, the measured key)
CONFIGS = (("pulp-open", 8, "gvsoc", "measured_cycles"), ("pulp-open", 1, "gvsoc", "measured_cycles"),
           ("stm32h7", 1, "count", "measured_instructions"))
#: bench-only geometries beside the tests' models: (cells, (steps, features))
EXTRA = {"wide": (64, (16, 24)), "long_input": (24, (8, 40))}
NAMES = ("call", "step", "cell", "word")
#: the fitted ones per platform; `call` is held at CALL (the fork, each core's copies of its
#: cells' biases and weights: a few thousand cycles, under 1% of every layer here, which the least
#: squares cannot resolve: left free it came out negative), and on one core a step's own work (the
#: input row's copy; no barrier) is not told apart from its H cells' by these geometries (left
#: free it came out negative): `step` held at 0 there, folded into `cell`
FITTED = {"gvsoc": ("step", "cell", "word"), "count": ("cell", "word")}
CALL = {"gvsoc": 2000.0, "count": 300.0}


def models(work: Path) -> dict[str, Path]:
    out = {name: lstm_models.int8_lstm(name, work) for name in sorted(lstm_models.MODELS)}
    for name, (cells, shape) in EXTRA.items():
        keras = lstm_models._keras(lambda L, c=cells: [L.LSTM(c, return_sequences=True)], shape, 1)
        out[name] = lstm_models._convert(keras, work / f"lstm_{name}.tflite", shape)
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
                                binding=r["layers"][i].get("binding"),
                                measured=r["layers"][i][key]))
    return out


def nest(r: dict) -> LoopNest:
    return LoopNest(kind="other", K=r["H"], C=r["I"], OY=r["steps"], OX=1, N=r["batch"])


def features(r: dict) -> list[float]:
    one = {n: replace(LstmCost(), **{m: float(m == n) for m in NAMES}) for n in NAMES}
    return [sum(t.coef for t in one[n].terms(nest(r), r["cores"])) for n in NAMES]


def overhead(r: dict) -> float:
    return float(get_target(r["config"].split("/")[0]).modules[0].layer_overhead_cycles)


def fit(rs: list[dict], names: tuple[str, ...], call: float) -> LstmCost:
    """The coefficients `names` fitted, `call` held, the others 0."""
    cols = [NAMES.index(n) for n in names]
    a = np.array([features(r) for r in rs], dtype=np.float64)[:, cols]
    y = np.array([r["measured"] - overhead(r) - call for r in rs], dtype=np.float64)
    w = 1.0 / y
    coef, *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
    return LstmCost(**{n: (round(float(coef[names.index(n)]), 3) if n in names else 0.0) for n in NAMES[1:]},
                    call=call)


def main() -> None:
    out = ROOT / "bench" / "calibration_lstm_cluster.json"
    if "--reuse" in sys.argv[1:]:   # refit the rows of the last run
        measured = [r for v in json.loads(out.read_text()).values() for r in v["rows"]]
    else:
        with tempfile.TemporaryDirectory(prefix="tw_lstm_cl_") as tmp:
            measured = rows(Path(tmp))
    result = {}
    for platform, targets in (("gvsoc", ("pulp-open/8", "pulp-open/1")), ("count", ("stm32h7/1",))):
        rs = [r for r in measured if r["config"] in targets]
        m = fit(rs, FITTED[platform], CALL[platform])
        for r in rs:
            r["predicted"] = overhead(r) + sum(t.coef for t in m.terms(nest(r), r["cores"]))
            r["ratio"] = r["predicted"] / r["measured"]
        result[platform] = dict({n: getattr(m, n) for n in NAMES}, rows=rs)
        print(f"{platform}: " + ", ".join(f"{n} = {getattr(m, n)}" for n in NAMES))
        for r in rs:
            print(f"  {r['config']:12s} {r['model']:10s} I={r['I']:3d} H={r['H']:3d} T={r['steps']:3d} "
                  f"measured {r['measured']:>10,} predicted {r['predicted']:>12,.0f} ({r['ratio']:.3f})")
    out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
