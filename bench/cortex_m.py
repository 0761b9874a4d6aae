"""Table 7 — measured on the ISA: tilewise's stm32h7 firmware on Cortex-M7 against TFLite Micro +
CMSIS-NN.

Every instruction count here is counted, not estimated: the generated firmware (`validate --on
count`: the project's Cortex-M7 image, -O2, in unicorn's Cortex-M7 with semihosting, one random
input, outputs checked bit-exact against the golden model and the reference runtime) next to what
the stm32h7 cost model predicts for the same schedule, and next to TFLM + CMSIS-NN counted the
same way on the same ISA (notes/anchors.md):
- 7a: per MLPerf Tiny model, executed instructions per inference, predicted, and the ratio to
  TFLM + CMSIS-NN; RAM (the L1 arena in DTCM + the L2 activation arena, as the firmware declares
  them) next to TFLM's arena, and the constants left in flash;
- 7b: per layer kind summed over the models, instructions and instructions per MAC.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.validate import make_inputs, validate_network

from . import models, published, scheduling
from .gvsoc_measure import kind_of
from .tables import Table


def _measure(name: str) -> tuple[dict, object]:
    lg = scheduling.lowered(models.model_path(name))
    ns = scheduling.schedule(lg, scheduling.target("stm32h7"), "model")
    with tempfile.TemporaryDirectory(prefix="tw_bench_m7_") as tmp:
        report, p = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1],
                                     model=name, on="count")
        manifest = dict(p.manifest)
    r = report.to_json()
    r["ram_bytes"] = ns.l1_bytes + manifest["l2_arena_bytes"]
    r["flash_bytes"] = manifest["flash_bytes"]
    return r, ns


def measure(names: Sequence[str] = models.MLPERF) -> list[Table]:
    rows, kinds, data = [], {}, {}
    for name in names:
        r, ns = _measure(name)
        data[name] = r
        tflm = published.TFLM_CMSIS_M7_INSTR[name].value
        arena = published.TFLM_ARENA_B[name].value
        pred = r["predicted_cycles"]
        rows.append((name, r["bit_exact"], r["measured_instructions"], pred,
                     r["measured_instructions"] / pred, tflm, r["measured_instructions"] / tflm,
                     r["ram_bytes"], arena, r["ram_bytes"] / arena, r["flash_bytes"]))
        for row in r["layers"]:
            layer = ns.layers.layers[row["index"]]
            k = kinds.setdefault(kind_of(layer), [0, 0.0, 0])
            k[0] += row["measured_instructions"] or 0
            k[1] += row["predicted_cycles"]
            k[2] += layer.nest.macs
    t7a = Table(
        "cortex_m_models", "Table 7a — stm32h7 on Cortex-M7: executed instructions per inference "
        "and RAM vs TFLite Micro + CMSIS-NN",
        ("model", "bit-exact", "tilewise instr.", "predicted", "measured / predicted",
         "TFLM+CMSIS-NN instr.", "tilewise / TFLM", "RAM B", "TFLM arena B",
         "RAM / TFLM arena", "flash constants B"),
        tuple(rows),
        notes=("instructions: counted in unicorn's Cortex-M7 (validate --on count) from "
               "tw_network_run's call to its return, one random input; predicted: the stm32h7 "
               "cost model (the pulp kernels' model fitted in instructions, bench/calibrate_m7.py) "
               "on the same schedule; TFLM + CMSIS-NN and its arena: "
               f"{published.ANCHORS_M7}.",
               "RAM: the firmware's L1 arena (DTCM) + L2 arena (activations); the weights and "
               "requantization constants stay in flash (the last column)."),
        data=data,
    )
    krows = tuple((k, m, p, m / p if p else None, macs, m / macs if macs else None)
                  for k, (m, p, macs) in sorted(kinds.items(), key=lambda kv: -kv[1][0]))
    t7b = Table(
        "cortex_m_kinds", "Table 7b — stm32h7 per layer kind, summed over the models",
        ("kind", "instructions", "predicted", "measured / predicted", "MACs", "instr. / MAC"),
        krows,
        notes=("CMSIS-NN's instructions per MAC on the same ISA (anchors.md): 3×3 conv 1.8–2.4, "
               "1×1 conv ~2.0, depthwise 3×3 7–9, fully connected ~2.3.",),
        data={k: {"instructions": m, "predicted": p, "macs": macs}
              for k, (m, p, macs) in kinds.items()},
    )
    return [t7a, t7b]
