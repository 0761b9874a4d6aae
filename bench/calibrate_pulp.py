"""Fit the pulp kernels' cost model (tilewise/bindings/pulp/cost.py) to GVSoC measurements.

`python bench/calibrate_pulp.py` runs generated pulp-open firmware on GVSoC — the four MLPerf
Tiny models, the bundled example and seed 004's layer, on 8 and 1 cores, at the part's own L1 and
at 16 kB — and reads each layer's measured compute phases (every tile's kernel call, barrier to
barrier, summed: firmware/main.c TW_COMPUTE) and whole-layer cycles. Every coefficient of
PulpKernels enters the predicted compute cycles linearly, so the column of a coefficient is the
prediction with that coefficient 1 and the others 0, summed over the layer's tiles exactly as the
schedule runs them (space.iter_tiles); the coefficients are then the non-negative least-squares
fit (scipy.optimize.nnls) of the measured compute phases, each layer weighted by 1/measured (so
every layer's relative error counts alike). Untiled layers (no compute phases: softmax and the
other portable kernels run by one core) fit `other_elem` / `other_call` on their whole cycles.

The schedules are those the current model chose (the fit does not re-schedule); rerun after
changing the model's constants to see the schedules it would choose. Writes
bench/calibration_pulp.json: the data, the fitted coefficients and the per-layer-kind errors.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import geometries, models, scheduling  # noqa: E402
from tilewise.bindings.base import specialized  # noqa: E402
from tilewise.bindings.cost_terms import tile_cycles  # noqa: E402
from tilewise.bindings.pulp.cost import ASSUMED_INT, INTEGER_EXPORTS, PulpKernels  # noqa: E402
from tilewise.examples import EXAMPLE_ONNX  # noqa: E402
from tilewise.schedule.cost import Evaluator, untiled_schedule  # noqa: E402
from tilewise.schedule.space import iter_tiles  # noqa: E402
from tilewise.targets.base import Target  # noqa: E402
from tilewise.validate import make_inputs, validate_network  # noqa: E402

HERE = Path(__file__).resolve().parent
#: coefficients fitted on the untiled layers' whole cycles, not on compute phases
UNTILED = ("other_elem", "other_call")
#: set by for_key from the fields
DERIVED = ("requant", "elem", "table", "other", "other_row", "mac", "rq_div", "mm_rq")
#: which code the model describes, not a coefficient
FLAGS = ("arm", "from_l2", "scalar", "int_ops", "table_lookup", "widened")
#: the host core's coefficients (bench/calibrate_cpu.py): no layer of these networks exercises them
HOST = ("transpose_elem", "transpose_row", "concat_elem", "quant_elem")
#: the directly called kernels of TFLite's recurrent layers (bench/calibrate_untiled.py): none in
#: these networks
DIRECT = ("lut_elem", "lut_call", "bcast_elem", "bcast_call", "transpose_call")
#: the integer exports' kernels' (bench/calibrate_int.py), held at the model's values: a layer
#: they price (the networks' reshapes) counts them in its `fixed` cycles, not in the columns
#: the onnx-mode kernels' (requantization, adds, global pooling: bench/calibrate_onnx_requant.py
#: fits them on the onnx layers alone, or the model says they are assumed), held at the model's
#: values likewise: the example's onnx layers count them in their `fixed` cycles
ONNX = tuple(f.name for f in fields(PulpKernels) if "onnx" in f.name)
COEFS = tuple(f.name for f in fields(PulpKernels)
              if f.name not in ("name", *DERIVED, *FLAGS, *HOST, *DIRECT, *INTEGER_EXPORTS, *ASSUMED_INT,
                                *ONNX))
#: what the kernels' code says each coefficient should be (cycles counted off the loops of
#: bindings/pulp/c and the RI5CY pipeline: 1 cycle per instruction, loads 1 + 1 on use, a taken
#: branch 3, a mul 1, a div ~35): the fit is pulled gently towards them (PRIOR_WEIGHT), which fixes
#: the coefficients the data cannot tell apart (collinear columns) or never exercises (shift mode)
PRIORS = {"mm_step": 7.0, "mm_block": 10.0, "mm_tile": 0.5, "im2col_byte": 0.3, "im2col_row": 12.0,
          "requant_tflite": 25.0, "requant_shift": 12.0, "psum": 3.0,
          "dw_out": 8.0, "dw_step": 3.0, "dw_gather": 2.0, "dw_item": 40.0, "fc_step": 2.5,
          "fc_neuron": 20.0, "fcw_step": 0.0, "fcw_neuron": 0.0, "cw_step": 0.0, "cw_block": 0.0,
          "cw_unpack": 0.0, "cw_row": 0.0, "cw_flash": 0.0, "add_elem": 10.0, "add_table": 40.0, "mul_elem": 35.0,
          "pool_step": 2.0, "pool_out": 4.0, "gap_pixel": 1.0, "gap_chan": 40.0,
          "other_elem": 30.0, "other_call": 200.0, "tile": 300.0}
PRIOR_WEIGHT = 0.05
#: the DMA side and the per-layer overhead, fitted on whole-layer cycles with the kernel
#: coefficients fixed: pulp-open L1's dma_issue_cycles / dma_setup_cycles / dma_chunk_cycles /
#: bandwidth and the cluster's layer_overhead_cycles (targets/base.py), with their starting points
#: from the HAL micro-benchmarks (tw_hal_pulp_open.c: ~330 cycles to program a 1D transfer, ~100 to
#: wait for it; fork ~200, barrier ~110; mchan ~8 B/cycle)
DMA_START = {"dma_issue_cycles": 400.0, "dma_setup_cycles": 50.0, "dma_chunk_cycles": 27.0,
             "bandwidth": 8.0, "layer_overhead_cycles": 400.0}


def networks() -> list[tuple[str, object]]:
    nets = [(n, scheduling.lowered(models.model_path(n))) for n in models.MLPERF]
    nets.append(("example", scheduling.lowered(EXAMPLE_ONNX)))
    nets.append(("pulp_nn_layer", geometries.pulp_nn_layer()))
    return nets


def tiles_sum(terms, s) -> float:
    """Σ over the schedule's tiles (space.iter_tiles) of the kernel cycles of `terms`."""
    counts = {t.dim: t.count for t in s.tiles}
    total = 0.0
    for st in iter_tiles(s):
        size = {d: np.array(p.size) for d, p in st.pos.items()}
        first = {d: np.array(p.index == 0) for d, p in st.pos.items()}
        last = {d: np.array(p.index == counts[d] - 1) for d, p in st.pos.items()}
        total += float(tile_cycles(terms, size, first, last))
    return total


def whole(terms, s) -> float:
    """The kernel cycles of `terms` on an untiled schedule: one call on the whole layer."""
    size = {d.dim: np.ones((1, 1)) * d.size for d in s.tiles}
    one = {d.dim: np.ones((1, 1), bool) for d in s.tiles}
    return float(tile_cycles(terms, size, one, one).sum())


def _tile_sum(model: PulpKernels, key, s, cores: int) -> float:
    """Σ over the schedule's tiles of the kernel cycles `model` (for the binding's key) gives."""
    return tiles_sum(model.for_key(key).terms(s.nest, cores), s)


def _untiled(model: PulpKernels, key, s, cores: int) -> float:
    return whole(model.for_key(key).terms(s.nest, cores), s)


def unit(name: str | None, base: PulpKernels = PulpKernels()) -> PulpKernels:
    """`base` with every coefficient of COEFS 0 but `name` 1 (None: all 0; the integer exports'
    coefficients keep `base`'s values)."""
    zero = {c: 0.0 for c in COEFS}
    return replace(base, **{**zero, **({name: 1.0} if name else {})})


def collect(cores_list=(8, 1), l1s=(None, 16)) -> list[dict]:
    rows = []
    for net, lg in networks():
        for cores in cores_list:
            for l1 in l1s:
                tgt = scheduling.target("pulp-open", l1_kb=l1, cores=cores)
                ns = scheduling.schedule(lg, tgt, "model")
                with tempfile.TemporaryDirectory(prefix="tw_calib_") as tmp:
                    report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1],
                                                 on="gvsoc")
                r = report.to_json()
                if not r["bit_exact"]:
                    raise RuntimeError(f"{net} cores {cores} L1 {l1}: not bit-exact: "
                                       f"{r['mismatches'][:2]}")
                for i, (layer, lc) in enumerate(zip(lg.layers, r["layers"])):
                    s, key = ns.schedules[i], ns.placement(i).binding.key
                    rows.append({"network": net, "cores": cores, "l1_kb": l1, "layer": layer.name,
                                 "index": i, "kind": layer.nest.kind, "op": str(layer.op),
                                 "mode": key.mode, "untiled": s.untiled, "tiles": s.n_tiles,
                                 "tile": {t.dim: t.tile for t in s.tiles},
                                 "order": list(s.loop_order), "buffering": s.buffering,
                                 "measured_compute": lc["measured_compute_cycles"],
                                 "measured_layer": lc["measured_cycles"]})
                print(f"{net:24s} cores {cores} L1 {l1}: {r['measured_cycles']:,} cycles",
                      flush=True)
    return rows


def add_columns(rows: list[dict], configs: dict, base: PulpKernels = PulpKernels()) -> None:
    """Each row's coefficient columns: the compute cycles with one coefficient 1, the others 0
    (in `base`'s structure: its flags), summed over the tiles of the row's schedule (rebuilt from
    its tile sizes, order, buffering), less its `fixed` cycles: those with every coefficient 0
    (what the integer exports' coefficients price, held at `base`'s values)."""
    for r in rows:
        lg, tgt, ns = configs[(r["network"], r["cores"], r["l1_kb"])]
        p, nest = ns.placement(r["index"]), lg.layers[r["index"]].nest
        # the binding's own structure (the widened dense: bindings/pulp/widened.py)
        b = replace(base, widened=True) if getattr(p.binding.cost, "widened", False) else base
        if r["untiled"]:
            def cycles(model):
                return _untiled(model, p.binding.key, ns.schedules[r["index"]], r["cores"])
        else:
            s = Evaluator(nest, tgt, p).build(r["tile"], tuple(r["order"]), r["buffering"])

            def cycles(model):
                return _tile_sum(model, p.binding.key, s, r["cores"])
        r["fixed"] = cycles(unit(None, b))
        r["columns"] = {c: cycles(unit(c, b)) - r["fixed"] for c in COEFS}


def fit(rows: list[dict]) -> dict[str, float]:
    from scipy.optimize import nnls

    coefs = dict.fromkeys(COEFS, 0.0)
    tiled = [r for r in rows if not r["untiled"] and r["measured_compute"]]
    names = [c for c in COEFS if c not in UNTILED and any(r["columns"][c] for r in tiled)]
    A = np.array([[r["columns"][c] / r["measured_compute"] for c in names] for r in tiled])
    y = np.array([1.0 - r.get("fixed", 0.0) / r["measured_compute"] for r in tiled])
    prior = np.array([PRIORS[c] for c in names])
    A = np.vstack([A, PRIOR_WEIGHT * np.diag(1.0 / prior)])
    x, _ = nnls(A, np.concatenate([y, PRIOR_WEIGHT * np.ones(len(names))]))
    coefs.update(zip(names, x))
    coefs.update({c: PRIORS[c] for c in COEFS if c not in names and c not in UNTILED})
    untiled = [r for r in rows if r["untiled"] and r["kind"] == "other"]
    if untiled:
        B = np.array([[r["columns"][c] / r["measured_layer"] for c in UNTILED] for r in untiled])
        u, _ = nnls(B, np.array([1.0 - r.get("fixed", 0.0) / r["measured_layer"] for r in untiled]))
        coefs.update(zip(UNTILED, u))
    return coefs


def _configs(rows: list[dict]) -> dict:
    """(network, cores, l1) -> (lowered graph, target, network schedule): the placements."""
    nets = dict(networks())
    out = {}
    for r in rows:
        cfg = (r["network"], r["cores"], r["l1_kb"])
        if cfg not in out:
            tgt = scheduling.target("pulp-open", l1_kb=r["l1_kb"], cores=r["cores"])
            out[cfg] = (nets[r["network"]], tgt, scheduling.schedule(nets[r["network"]], tgt,
                                                                      "model"))
    return out


def _with_dma(tgt: Target, theta: dict[str, float]) -> Target:
    mem = tuple(replace(m, **{k: v for k, v in theta.items() if k != "layer_overhead_cycles"})
                if m.name == "L1" else m for m in tgt.memories)
    mods = tuple(replace(m, layer_overhead_cycles=theta["layer_overhead_cycles"])
                 for m in tgt.modules)
    return replace(tgt, memories=mem, modules=mods)


def layer_cycles(rows: list[dict], coefs: dict[str, float], theta: dict[str, float],
                 configs: dict) -> np.ndarray:
    """The whole-layer cycles the cost model (schedule/cost.py) predicts for each row's schedule,
    with kernel coefficients `coefs` and DMA / overhead parameters `theta`."""
    model = replace(PulpKernels(), **coefs)
    out = []
    for r in rows:
        lg, tgt, ns = configs[(r["network"], r["cores"], r["l1_kb"])]
        t2 = _with_dma(tgt, theta)
        p = ns.placement(r["index"])
        p2 = replace(p, module=t2.module(p.module.name),
                     binding=replace(p.binding, cost=specialized(model, p.binding.key)))
        nest = lg.layers[r["index"]].nest
        if r["untiled"]:
            out.append(untiled_schedule(nest, t2, p2).cycles)
        else:
            out.append(Evaluator(nest, t2, p2).build(r["tile"], tuple(r["order"]),
                                                    r["buffering"]).cycles)
    return np.array(out)


def fit_dma(rows: list[dict], coefs: dict[str, float], configs: dict) -> dict[str, float]:
    """DMA / overhead parameters minimising the whole-layer relative errors (least squares)."""
    from scipy.optimize import least_squares

    names = tuple(DMA_START)
    meas = np.array([r["measured_layer"] for r in rows], float)
    x0 = np.array([DMA_START[n] for n in names])

    def resid(x):
        return layer_cycles(rows, coefs, dict(zip(names, x)), configs) / meas - 1.0

    sol = least_squares(resid, x0, bounds=(np.array([0, 0, 0, 0.5, 0]), np.inf),
                        x_scale=x0, diff_step=0.05)
    return dict(zip(names, map(float, sol.x)))


def errors(rows: list[dict], coefs: dict[str, float], layer_pred: np.ndarray) -> dict:
    """measured / predicted, per layer kind and per network (cores, L1): of the compute phases
    (the kernel model alone) and of whole layers (the full cost model)."""
    out: dict = {"compute by kind": {}, "compute by network": {}, "layers by kind": {},
                 "networks": {}}

    def add(group, key, m, p):
        v = out[group].setdefault(key, [0.0, 0.0])
        v[0] += m
        v[1] += p

    for r, lp in zip(rows, layer_pred):
        kind, net = f"{r['kind']} ({r['mode']})", f"{r['network']} c{r['cores']} L1 {r['l1_kb']}"
        add("layers by kind", kind, r["measured_layer"], lp)
        add("networks", net, r["measured_layer"], lp)
        meas = r["measured_layer"] if r["untiled"] else r["measured_compute"]
        if meas:
            pred = r.get("fixed", 0.0) + sum(coefs[c] * v for c, v in r["columns"].items())
            add("compute by kind", kind, meas, pred)
            add("compute by network", net, meas, pred)
    return {g: {k: {"measured": m, "predicted": p, "ratio": m / p if p else None}
                for k, (m, p) in v.items()} for g, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "calibration_pulp.json")
    ap.add_argument("--reuse", action="store_true", help="refit the data already in --data")
    a = ap.parse_args(argv)
    rows = json.loads(a.data.read_text())["rows"] if a.reuse else collect()
    configs = _configs(rows)
    add_columns(rows, configs)
    coefs = fit(rows)
    theta = fit_dma(rows, coefs, configs)
    err = errors(rows, coefs, layer_cycles(rows, coefs, theta, configs))
    a.data.write_text(json.dumps({"coefficients": coefs, "dma": theta, "errors": err,
                                  "rows": rows}, indent=1) + "\n")
    for c, v in {**coefs, **theta}.items():
        print(f"{c:22s} {v:10.3f}")
    for g, v in err.items():
        print(f"\n{g}:")
        for k, e in v.items():
            print(f"  {k:40s} measured {e['measured']:14,.0f} predicted {e['predicted']:14,.0f} "
                  f"ratio {e['ratio']:.3f}" if e["ratio"] else f"  {k}: -")
    return 0


if __name__ == "__main__":
    sys.exit(main())
