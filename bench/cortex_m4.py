"""Table 13 — the STM32L4R5 (Cortex-M4, 120 MHz; MLPerf Tiny's reference board NUCLEO-L4R5ZI):
the four MLPerf Tiny models bit-exact under QEMU's mps2-an386 (a Cortex-M4) and their executed
instructions per inference, next to the published latencies of X-CUBE-AI 10.2 and Plumerai on that
chip in cycles (ms × 120 MHz).

Every instruction count is counted, not estimated: `validate --on count` runs the generated
stm32l4r5 firmware (-mcpu=cortex-m4, hard-float FPv4-SP) in unicorn's Cortex-M4, one random input,
outputs checked bit-exact; `validate --on qemu` runs the same firmware under QEMU's mps2-an386 on
22 inputs (random, all-min, all-max) against the golden model and LiteRT. The Cortex-M4 issues one
instruction per cycle at best (loads 2 cycles, taken branches 2–4, flash wait states behind the
ART accelerator), so the instructions are a LOWER BOUND of the cycles — the ratio to the published
cycles says how far ahead the code is in work, not in time; no Cortex-M4 cycle model exists yet.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.validate import make_inputs, validate_network

from . import models, published, scheduling
from .tables import Table

TARGET = "stm32l4r5"


def _validate(name: str, on: str) -> dict:
    lg = scheduling.lowered(models.model_path(name))
    ns = scheduling.schedule(lg, scheduling.target(TARGET), "model")
    inputs = make_inputs(lg, 1, 0)[:1] if on == "count" else make_inputs(lg, 20, 0)
    with tempfile.TemporaryDirectory(prefix="tw_bench_m4_") as tmp:
        report, _ = validate_network(ns, Path(tmp) / "p", inputs, model=name, on=on)
    return report.to_json()


def measure(names: Sequence[str] = models.MLPERF) -> Table:
    rows, data = [], {}
    for name in names:
        qemu, count = _validate(name, "qemu"), _validate(name, "count")
        data[name] = {"qemu": {"bit_exact": qemu["bit_exact"]}, "count": count}
        instr, pred = count["measured_instructions"], count["predicted_instructions"]
        xcube = published.XCUBE_L4R5_MS[name].value * published.L4R5_MHZ * 1e3
        plumerai = published.PLUMERAI_L4R5_MS[name].value * published.L4R5_MHZ * 1e3
        rows.append((name, "yes" if qemu["bit_exact"] and count["bit_exact"] else "NO", instr, pred,
                     instr / pred if pred else None, round(xcube), instr / xcube, round(plumerai),
                     instr / plumerai))
    return Table(
        "cortex_m4_models", "Table 13 — stm32l4r5 on Cortex-M4 (120 MHz): executed instructions per "
        "inference vs X-CUBE-AI 10.2's and Plumerai's published cycles",
        ("model", "bit-exact (QEMU mps2-an386, counter)", "tilewise instr.", "predicted instr.",
         "measured / predicted", "X-CUBE-AI 10.2 cycles", "tilewise instr. / X-CUBE-AI cycles",
         "Plumerai cycles", "tilewise instr. / Plumerai cycles"),
        tuple(rows),
        notes=("instructions: counted in unicorn's Cortex-M4 (validate --on count) from "
               "tw_network_run's call to its return, one random input; predicted: the stm32l4r5 "
               "cost model (stm32h7's instruction coefficients: the same ARMv7E-M code); bit-exact: "
               "QEMU mps2-an386 on 22 inputs and the counter's run.",
               f"X-CUBE-AI / Plumerai: MLPerf Tiny v1.3 / v1.1 latency on the STM32L4R5 × 120 MHz "
               f"({published.ANCHORS_L4}). The Cortex-M4 is single-issue, so instructions are a "
               "lower bound of its cycles: a ratio below 1 is less work, not yet less time."),
        data=data,
    )
