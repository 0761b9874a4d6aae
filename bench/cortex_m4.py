"""Table 13 — the STM32L4R5 (Cortex-M4, 120 MHz; MLPerf Tiny's reference board NUCLEO-L4R5ZI):
the four MLPerf Tiny models bit-exact under QEMU's mps2-an386 (a Cortex-M4), their executed
instructions and ESTIMATED Cortex-M4 cycles per inference, next to the published latencies of
X-CUBE-AI 10.2 and Plumerai on that chip in cycles (ms × 120 MHz).

The instructions are counted: `validate --on count` runs the generated stm32l4r5 firmware
(-mcpu=cortex-m4, hard-float FPv4-SP) in unicorn's Cortex-M4, one random input, outputs checked
bit-exact; `validate --on qemu` runs the same firmware under QEMU's mps2-an386 on 22 inputs
(random, all-min, all-max) against the golden model and LiteRT. The cycles are estimated from the
same run by the Cortex-M4 timing model (platforms/m4_timing.py: llvm-mca's Cortex-M4 model per
executed block corrected to the Cortex-M4 TRM, taken branches at 1 + P with P = 2, 5 flash wait
states per miss of the ART's data cache at 120 MHz) — not measured on a board, so the ratio to
the published cycles is a model's, as table 7's Cortex-M7 one is; predicted: the target's cost
model (KERNELS_CYCLES, fitted on those estimates).
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
        est, pred_c = count["estimated_cycles"], count["predicted_cycles"]
        xcube = published.XCUBE_L4R5_MS[name].value * published.L4R5_MHZ * 1e3
        plumerai = published.PLUMERAI_L4R5_MS[name].value * published.L4R5_MHZ * 1e3
        rows.append((name, "yes" if qemu["bit_exact"] and count["bit_exact"] else "NO", instr, pred,
                     instr / pred if pred else None, est, est / instr, pred_c, est / pred_c,
                     round(xcube), est / xcube, round(plumerai), est / plumerai))
    return Table(
        "cortex_m4_models", "Table 13 — stm32l4r5 on Cortex-M4 (120 MHz): executed instructions and "
        "estimated cycles per inference vs X-CUBE-AI 10.2's and Plumerai's published cycles",
        ("model", "bit-exact (QEMU mps2-an386, counter)", "tilewise instr.", "predicted instr.",
         "measured / predicted instr.", "est. M4 cycles", "est. cycles / instr.",
         "predicted cycles", "est. / predicted cycles", "X-CUBE-AI 10.2 cycles",
         "est. cycles / X-CUBE-AI", "Plumerai cycles", "est. cycles / Plumerai"),
        tuple(rows),
        notes=("instructions: counted in unicorn's Cortex-M4 (validate --on count) from "
               "tw_network_run's call to its return, one random input; predicted instr.: the "
               "stm32l4r5 instruction model (stm32h7's instruction coefficients: the same ARMv7E-M "
               "code); bit-exact: QEMU mps2-an386 on 22 inputs and the counter's run.",
               "est. M4 cycles: ESTIMATED from the same run by the Cortex-M4 timing model "
               "(platforms/m4_timing.py: llvm-mca's Cortex-M4 model per executed block corrected "
               "to the Cortex-M4 TRM — within 0.25% on its 14 TRM-timed micro-benchmarks —, taken "
               "branches at 1 + P with P = 2 assumed, 5 flash wait states per miss of the ART's "
               "256-byte data cache at 120 MHz, code assumed to hit the ART's instruction cache), "
               "not measured on a board; predicted cycles: the target's cost model "
               "(KERNELS_CYCLES, fitted on those estimates, bench/calibration_m4_cycles.json).",
               f"X-CUBE-AI / Plumerai: MLPerf Tiny v1.3 / v1.1 latency on the STM32L4R5 × 120 MHz "
               f"({published.ANCHORS_L4}): measured on the board; a ratio above 1 is slower by the "
               "model's estimate."),
        data=data,
    )
