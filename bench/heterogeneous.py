"""Table 8 — GAP9's modules (seed 003 Table IV's ablation): tilewise's predicted latency of the four
MLPerf Tiny models on gap9 with the host core (module "cpu") only, the cluster + cpu, NE16 + cpu and all
three, next to MATCH's silicon figures for the same ablation and GreenWaves' own MLPerf Tiny
results (NE16 + cluster, 240 MHz).

Predicted, not measured: no GAP9 is at hand. The cluster is priced by the pulp kernels' model
fitted on GVSoC (bindings/pulp/cost.py), NE16 by its model fitted on GVSoC's NE16 (pulp-open-ne16,
bench/calibrate_ne16.py) plus the cluster's conversion and requantization (bindings/ne16/cost.py),
the cpu by the pulp kernels' model for one core from L2, fitted on GVSoC (targets/pulp_open.py
HOST; targets/gap9.py) — where MATCH's "CPU" is TVM's generic C,
hundreds of times slower. Every configuration is bit-exact on the host (tests/test_ne16.py).

Two row sets per model:
- "TFLite file": the MLPerf Tiny int8 files as they are. NE16 cannot requantize TFLite's
  SRDHM (a 62-bit product), so the cluster requantizes NE16's int32 outputs.
- "NE16-native rq": the same networks with the TFLite requantization of every conv /
  depthwise / dense layer turned into NE16's shift form (bindings/ne16/shift_requant.py: one shift
  per layer, per-channel integer multipliers, as a NEMO-style quantizer would give; MATCH's
  GAP9 networks are NEMO-quantized, seed 003 §V-VI). NE16 requantizes its layers itself with
  norm-quant (the *_nq bindings), with no cluster pass. This is not the TFLite file's numerics:
  each output differs from TFLite's by at most 2 codes (1 on all but one layer), and the
  golden model is the only reference. These networks are also bit-exact on the host
  (tests/test_shift_requant.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tilewise.bindings.ne16.shift_requant import to_shift_requant

from . import models, published, scheduling
from .tables import Table

#: seed 003 Table IV's columns, as module sets of gap9
CONFIGS = (("CPU only", ("cpu",)), ("cluster+CPU", ("cluster", "cpu")),
           ("NE16+CPU", ("ne16", "cpu")), ("all", ("cluster", "cpu", "ne16")))


def _predict(lg, gap9) -> tuple[dict[str, float], int, int]:
    """Predicted ms per configuration of CONFIGS; layers on NE16 and those with norm-quant
    (*_nq) in "all"."""
    pred = {}
    for label, mods in CONFIGS:
        tgt = replace(gap9, modules=tuple(m for m in gap9.modules if m.name in mods))
        ns = scheduling.schedule(lg, tgt, "model")
        pred[label] = ns.latency_ms
        if label == "all":
            on = [i for i in range(len(ns.layers.layers)) if ns.placement(i).module.name == "ne16"]
            nq = sum(ns.placement(i).binding.name.endswith("_nq") for i in on)
    return pred, len(on), nq


def measure(names: Sequence[str] = models.MLPERF) -> Table:
    gap9 = scheduling.target("gap9")
    rows, data = [], {}
    for name in names:
        lg = scheduling.lowered(models.model_path(name))
        native, report = to_shift_requant(lg)
        pub = published.MATCH_GAP9_ABLATION_MS[name]
        gw = published.GREENWAVES_GAP9_MS[name]
        data[name] = {"match_ms": [f.value for f in pub], "greenwaves_ms": gw.value}
        for rq, g in (("TFLite file", lg), ("NE16-native rq", native)):
            pred, on_ne16, nq = _predict(g, gap9)
            rows.append((f"{name} ({models.PAPER_NAMES[name]}), {rq}",
                         *(f"{pred[label]:.3g} / {f.value:g}" for (label, _), f in zip(CONFIGS, pub)),
                         pred["all"] / pub[3].value, gw.value, f"{on_ne16} ({nq} nq)"))
            d = {"predicted_ms": pred, "layers_on_ne16": on_ne16, "layers_norm_quant": nq}
            if g is lg:
                data[name].update(d)
            else:
                data[name]["ne16_native"] = {
                    **d, "max_code_error": max((r.max_code_error or 0) for r in report),
                    "kept_tflite": [r.layer for r in report if r.shift is None]}
    return Table(
        "gap9_modules", f"Table 8 — gap9 modules: predicted latency vs MATCH on GAP9 silicon "
        f"({gap9.clock_mhz:g} MHz, ms: tilewise / MATCH)",
        ("model, requantization", *(label for label, _ in CONFIGS), "all: tilewise / MATCH",
         "GreenWaves (240 MHz)", "layers on NE16 (norm-quant)"),
        tuple(rows),
        notes=(f"MATCH: {published.SEED3_T4_ALL}; GreenWaves: {published.GREENWAVES}.",
               "tilewise: predicted by the gap9 target with the listed modules (module docstring); "
               "MATCH's CPU is TVM generic code, tilewise's the cpu module (one core on L2) running the pulp kernels.",
               "TFLite file: the int8 .tflite as is; NE16 cannot run its SRDHM requantization, so the "
               "cluster requantizes NE16's int32 outputs (GVSoC: 14.5 cycles per output per core in the "
               "one-mulh form where the layer's accumulator bound allows it or the channel's output is "
               "constant, bindings/ne16/requant.py, else 32.5) while NE16 computes the tile's next row "
               "job (bindings/ne16/pipeline.py); a conv NE16 does not take (kws_dscnn's 10×4 stride-2 "
               "first layer) runs as a 1×1 job over the cluster's im2col (bindings/ne16/im2col.py).",
               "NE16-native rq: the same layers and weights, with the requantization of every conv / "
               "depthwise / dense layer turned into one shift per layer and integer per-channel "
               "multipliers (bindings/ne16/shift_requant.py, NEMO-style, as MATCH's GAP9 networks are "
               "quantized). NE16 requantizes its layers itself (norm-quant, *_nq bindings). This is "
               "not the TFLite file's numerics: each output is within 2 codes of TFLite's "
               "(max_code_error in the data). The golden model is the reference, with no runtime to compare."),
        data=data,
    )
