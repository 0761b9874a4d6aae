"""Table 6 — measured on the ISA: tilewise's pulp-open firmware on GVSoC against its own prediction.

Every number here is a cycle count GVSoC measured (core 0's mcycle) on the generated firmware
(`validate --on gvsoc`: the project's bare-metal firmware, 8-core cluster, one random input,
outputs checked bit-exact against the golden model), next to what tilewise's pulp-open cost model
predicted for the same schedule:
- 6a: per MLPerf Tiny model at the part's own L1 (51 kB free) and at 16 kB, measured / predicted;
- 6b: per layer kind summed over the models (3×3 conv, 1×1 conv, depthwise, add, pool, dense,
  other), the layers' measured cycles and their compute phases (barrier to barrier: the kernels);
- 6c: seed 004's benchmark layer (16×16×32 → 16×16×64, 3×3, pad 1) on 1 and 8 cores in MAC/cycle
  of its compute phases (the kernel with its tiles in L1, seed 004's setup) and of the whole layer,
  next to PULP-NN on GAP8 silicon (1.82 / 13.07 MAC/cycle, notes/anchors.md, seed 004 §3.4).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.validate import make_inputs, validate_network

from . import geometries, models, scheduling
from .tables import Table

L1_KB = (None, 16)        # None: the part's own free L1
PULPNN_MAC_PER_CYCLE = {1: 1.82, 8: 13.07}   # seed 004 §3.4 on GAP8 silicon (anchors.md)


def kind_of(layer) -> str:
    """The layer kinds the acceptance of the PULP kernels names."""
    n = layer.nest
    if n.kind == "conv":
        return "3×3 conv" if n.FY * n.FX > 1 else "1×1 conv"
    return {"dwconv": "depthwise", "add": "add", "pool": "pool", "gap": "pool",
            "fc": "dense"}.get(n.kind, "other")


def _measure(lg, target, name: str) -> dict:
    ns = scheduling.schedule(lg, target, "model")
    with tempfile.TemporaryDirectory(prefix=f"tw_bench_gvsoc_{name}_") as tmp:
        report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1], model=name,
                                     on="gvsoc")
    r = report.to_json()
    for lc, layer in zip(r.get("layers", []), lg.layers):
        lc["kind_group"] = kind_of(layer)
        lc["macs"] = layer.macs
    return r


def measure(names: Sequence[str] = models.MLPERF) -> tuple[Table, Table, Table]:
    rows, data, kinds = [], {}, {}
    for name in names:
        lg = scheduling.lowered(models.model_path(name))
        for l1 in L1_KB:
            tgt = scheduling.target("pulp-open", l1_kb=l1)
            kb = round(tgt.memory("L1").free / 1024, 1)
            r = _measure(lg, tgt, name)
            m, p = r.get("measured_cycles"), r.get("predicted_cycles")
            data.setdefault(name, {})[str(kb)] = r
            rows.append((name, kb, "yes" if r["bit_exact"] else "NO", m, p,
                         m / p if m and p else None))
            if l1 is None:
                for lc in r.get("layers", []):
                    k = kinds.setdefault(lc["kind_group"], [0, 0.0, 0, 0])
                    k[0] += lc["measured_cycles"] or 0
                    k[1] += lc["predicted_cycles"]
                    k[2] += lc["measured_compute_cycles"] or 0
                    k[3] += lc["macs"]
    t_models = Table(
        "gvsoc_models", "Table 6a — pulp-open on GVSoC: measured vs predicted cycles per inference "
                        "(8 cores)",
        ("model", "L1 kB", "bit-exact", "measured cycles", "predicted cycles",
         "measured / predicted"), tuple(rows),
        notes=("measured: GVSoC mcycle of core 0 around tw_network_run in the generated firmware "
               "(validate --on gvsoc, one random input); predicted: the pulp-open cost model on the "
               "same schedule; L1 kB = free L1 (the part's own, then 16 kB).",),
        data=data)
    krows = tuple((k, v[0], v[1], v[0] / v[1] if v[1] else None, v[2],
                   v[3] / v[2] if v[2] and v[3] else None)
                  for k, v in sorted(kinds.items(), key=lambda kv: -kv[1][0]))
    t_kinds = Table(
        "gvsoc_kinds", "Table 6b — per layer kind, summed over the models (own L1, 8 cores)",
        ("kind", "measured cycles", "predicted cycles", "measured / predicted",
         "compute phases", "MAC / compute cycle"), krows,
        notes=("compute phases: each tile's kernel call, barrier to barrier (the slowest core), "
               "summed; the rest of a layer's cycles is DMA programming and waiting, forks and "
               "untiled work.",),
        data={k: {"measured": v[0], "predicted": v[1], "compute": v[2], "macs": v[3]}
              for k, v in kinds.items()})
    lrows, ldata = [], {}
    lg = geometries.pulp_nn_layer()
    for cores in (1, 8):
        tgt = scheduling.target("pulp-open", cores=cores)
        r = _measure(lg, tgt, "pulp_nn_layer")
        lc = r["layers"][0]
        macs = lc["macs"]
        comp, whole = lc["measured_compute_cycles"], lc["measured_cycles"]
        ldata[str(cores)] = r
        lrows.append((cores, macs, comp, macs / comp if comp else None, whole,
                      macs / whole if whole else None, PULPNN_MAC_PER_CYCLE[cores]))
    t_layer = Table(
        "gvsoc_pulpnn_layer", "Table 6c — seed 004's benchmark layer on GVSoC (MAC/cycle)",
        ("cores", "MACs", "compute cycles", "MAC/cycle (kernel)", "layer cycles",
         "MAC/cycle (layer)", "PULP-NN on GAP8 silicon"), tuple(lrows),
        notes=("16×16×32 → 16×16×64, 3×3, pad 1 (seed 004 §3.4) on pulp-open at its own L1; kernel = "
               "the compute phases (tiles in L1, seed 004's measurement setup), layer = with its DMA; "
               "PULP-NN figures: seed 004 Table 3.2 / §3.4 via notes/anchors.md.",),
        data=ldata)
    return t_models, t_kinds, t_layer
