"""Table 7 — measured on the ISA: tilewise's stm32h7 firmware on Cortex-M7 against TFLite Micro +
CMSIS-NN.

Every instruction count here is counted, not estimated: the generated firmware (`validate --on
count`: the project's Cortex-M7 image, -O2, in unicorn's Cortex-M7 with semihosting, one random
input, outputs checked bit-exact against the golden model and the reference runtime) next to what
the stm32h7 cost model predicts for the same schedule, and next to TFLM + CMSIS-NN counted the
same way on the same ISA (notes/anchors.md):
- 7a: per MLPerf Tiny model, executed instructions per inference, predicted (the instruction
  model, KERNELS_INSTRUCTIONS), and the ratio to TFLM + CMSIS-NN; the ESTIMATED Cortex-M7 cycles
  of the same run (platforms/m7_timing.py: llvm-mca's Cortex-M7 model per executed basic block +
  flash line fills — a model, not a board), the target's cost model's prediction of them
  (KERNELS_CYCLES), and the ratio to the fastest published Cortex-M7 result (MLPerf Tiny v1.2 on
  NUCLEO-H7A3ZI-Q at 280 MHz: ST X-CUBE-AI 9.0 on IC / KWS / VWW, Bosch HALE on AD; cycles =
  latency x 280 MHz); RAM (the L1 arena in DTCM + the L2 activation arena, as the firmware
  declares them) next to TFLM's arena, the constants left in flash, and the RAM an application
  pays as the ELF and the run show it (validate/ram_elf.py: arenas, statics, I/O, measured
  stack);
- 7b: per layer kind summed over the models, instructions and instructions per MAC, estimated
  cycles and their prediction;
- 7c: MobileNetV2 (1.0, 224x224, int8, bench/geometries.py's random weights) with fused chains
  (schedule/chain.py; MCUNetV2's memory-heavy first stage run row band by row band): the L2 peak
  including the input against the per-layer lower bound of the unfused plan, the MACs (nothing
  recomputed) and the predicted cycles, the C bit-exact on the host. The network does not fit
  the stm32h7 (512 kB of AXI SRAM, 2 MB of flash: the unfused plan needs 1.2 MB of activations,
  the weights 3.8 MB), so it is scheduled for a hypothetical stm32h7 with 4 MB of L2 and 8 MB of
  flash (Target.with_overrides beyond): same core, kernels and cost model.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.pipeline import schedule_network
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


def published_cycles(name: str) -> float:
    """The fastest published Cortex-M7 result of `name` in cycles (ms x the board's MHz)."""
    return published.MLPERF_M7_MS[name].value * published.MLPERF_M7_MHZ.value * 1e3


def measure(names: Sequence[str] = models.MLPERF) -> list[Table]:
    rows, kinds, data = [], {}, {}
    for name in names:
        r, ns = _measure(name)
        data[name] = r
        tflm = published.TFLM_CMSIS_M7_INSTR[name].value
        arena = published.TFLM_ARENA_B[name].value
        pred = r["predicted_instructions"]
        est, pred_c = r["estimated_cycles"], r["predicted_cycles"]
        best = published_cycles(name)
        rows.append((name, r["bit_exact"], r["measured_instructions"], pred,
                     r["measured_instructions"] / pred, tflm, r["measured_instructions"] / tflm,
                     est, pred_c, est / pred_c, published.MLPERF_M7_WHO[name], best, est / best,
                     r["ram_bytes"], arena, r["ram_bytes"] / arena, r["flash_bytes"],
                     r["ram"]["measured"]["total_bytes"], r["ram"]["measured"]["stack_bytes"],
                     r["ram"]["measured"]["total_bytes"] / arena))
        by_name = {layer.name: layer for layer in ns.layers.layers}
        for row in r["layers"]:
            layer = ns.layers.layers[row["index"]]
            ch = ns.chain_of(layer.name)
            # a fused chain is counted at its consumer's step: one row for the pair
            kind = (kind_of(layer) if ch is None else
                    f"chain: {' → '.join(kind_of(by_name[n]) for n in ch.layers)}")
            k = kinds.setdefault(kind, [0, 0.0, 0, 0, 0.0])
            k[0] += row["measured_instructions"] or 0
            k[1] += row["predicted_instructions"]
            k[2] += layer.nest.macs
            k[3] += row["estimated_cycles"] or 0
            k[4] += row["predicted_cycles"]
    t7a = Table(
        "cortex_m_models", "Table 7a — stm32h7 on Cortex-M7: executed instructions per inference "
        "and RAM vs TFLite Micro + CMSIS-NN; estimated Cortex-M7 cycles vs the fastest published "
        "Cortex-M7 (MLPerf Tiny, STM32H7A3)",
        ("model", "bit-exact", "tilewise instr.", "predicted instr.", "measured / predicted",
         "TFLM+CMSIS-NN instr.", "tilewise / TFLM", "est. M7 cycles", "predicted cycles",
         "est. / predicted", "fastest published", "its cycles", "est. / published",
         "RAM B", "TFLM arena B", "RAM / TFLM arena", "flash constants B",
         "RAM from the ELF B", "of it stack B", "ELF RAM / TFLM arena"),
        tuple(rows),
        notes=("instructions: counted in unicorn's Cortex-M7 (validate --on count) from "
               "tw_network_run's call to its return, one random input; predicted instr.: the "
               "stm32h7 instruction model (KERNELS_INSTRUCTIONS, bench/calibrate_m7.py --unit "
               "instructions) on the same schedule; TFLM + CMSIS-NN and its arena: "
               f"{published.ANCHORS_M7}.",
               "est. M7 cycles: ESTIMATED, not measured on a board — the same run's executed basic "
               "blocks priced by llvm-mca's Cortex-M7 scheduling model (steady state) plus D-cache "
               "line fills from flash at 480 MHz (platforms/m7_timing.py); predicted cycles: the "
               "target's cost model (KERNELS_CYCLES, fitted on those estimates, bench/"
               "calibrate_m7.py --unit cycles).",
               "fastest published: MLPerf Tiny v1.2 on NUCLEO-H7A3ZI-Q (Cortex-M7 at 280 MHz), "
               "X-CUBE-AI 9.0 on IC / KWS / VWW, Bosch HALE (weights in RAM) on AD, cycles = "
               f"latency x 280 MHz ({published.ANCHORS_MLPERF_M7}); a silicon measurement "
               "against our model's estimate, and on a different part (H7A3 at 280 MHz: flash "
               "wait states differ from the H743 at 480 MHz).",
               "RAM: the firmware's L1 arena (DTCM) + L2 arena (activations, in-place execution "
               "and fused chains where they lower the peak: memory/inplace.py, schedule/chain.py; "
               "the input in the arena where that is smaller, docs/memory.md); the weights and requantization "
               "constants stay in flash (flash constants). RAM from the ELF: what an application "
               "linking the network pays (validate --on count's ram.measured, validate/ram_elf.py): "
               "the arenas as linked, the network's own .data/.bss, the caller's input (unless "
               "held in the arena) and output buffers and the stack's high-water mark measured "
               "in the run (TFLM's arena holds activations, input and output, no stack)."),
        data=data,
    )
    krows = tuple((k, m, p, m / p if p else None, macs, m / macs if macs else None, e, pc,
                   e / pc if pc else None, e / macs if macs else None)
                  for k, (m, p, macs, e, pc) in sorted(kinds.items(), key=lambda kv: -kv[1][0]))
    t7b = Table(
        "cortex_m_kinds", "Table 7b — stm32h7 per layer kind, summed over the models",
        ("kind", "instructions", "predicted instr.", "measured / predicted", "MACs",
         "instr. / MAC", "est. M7 cycles", "predicted cycles", "est. / predicted",
         "est. cycles / MAC"),
        krows,
        notes=("CMSIS-NN's instructions per MAC on the same ISA (anchors.md): 3×3 conv 1.8–2.4, "
               "1×1 conv ~2.0, depthwise 3×3 7–9, fully connected ~2.3.",
               "chain: a fused chain's two layers (schedule/chain.py, docs/memory.md), run row "
               "band by row band and counted together.",
               "est. M7 cycles: the Cortex-M7 timing model's estimate (Table 7a's note), not a "
               "board measurement."),
        data={k: {"instructions": m, "predicted": p, "macs": macs, "estimated_cycles": e,
                  "predicted_cycles": pc}
              for k, (m, p, macs, e, pc) in kinds.items()},
    )
    return [t7a, t7b, mobilenet_v2_chains()]


def _big_stm32h7():
    """stm32h7 with 4 MB of L2 and 8 MB of flash (7c: a hypothetical part, same core)."""
    from dataclasses import replace

    t = scheduling.target("stm32h7").with_overrides(l2_kb=4096, beyond=True)
    return replace(t, memories=tuple(replace(m, size=8 << 20) if m.name == "flash" else m
                                     for m in t.memories))


def mobilenet_v2_chains(res: int = 224) -> Table:
    """Table 7c (module docstring)."""
    from .geometries import mobilenet_v2

    lg = mobilenet_v2(res)
    target = _big_stm32h7()
    off = schedule_network(lg, target, "model", chains=False)
    on = schedule_network(lg, target, "model")
    with tempfile.TemporaryDirectory(prefix="tw_bench_mbv2_") as tmp:
        report, _ = validate_network(on, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1],
                                     model=lg.name, on="host")
    exact = report.to_json()["bit_exact"]
    n = len(lg.layers)
    cyc_off = sum(off.layer_cycles(i) for i in range(n))
    cyc_on = sum(on.layer_cycles(i) for i in range(n))
    macs = sum(layer.nest.macs for layer in lg.layers)
    bound = off.memory.lower_bound
    chains = "; ".join(f"{len(c.layers)} layers from {c.layers[0]}, {c.band}-row bands, rings "
                       f"{c.ring_bytes:,} B" for c in on.chains)
    rows = ((lg.name, bound, off.memory.peak, on.memory.peak, bound / on.memory.peak, macs, macs,
             cyc_off, cyc_on, cyc_on / cyc_off, "yes" if exact else "NO"),)
    return Table(
        "cortex_m_mbv2_chains",
        "Table 7c — MobileNetV2-1.0-224 int8 (random weights) with fused chains, stm32h7 core",
        ("model", "per-layer bound (B)", "unfused peak (B)", "chained peak (B)",
         "bound / chained", "MACs unfused", "MACs chained", "predicted cycles unfused",
         "predicted cycles chained", "cycles ratio", "bit-exact (host)"),
        rows,
        notes=("Peaks include the input (held in the arena). Per-layer bound: the unfused plan's "
               "lower bound (max over steps of the live activations, in-place execution "
               "included).",
               f"Chains: {chains}.",
               "A hypothetical stm32h7 with 4 MB of L2 and 8 MB of flash (the real part has 512 kB / "
               "2 MB); nothing recomputed, so the MACs are equal."),
        data={"bound": bound, "unfused_peak": off.memory.peak, "chained_peak": on.memory.peak,
              "macs": macs, "cycles_unfused": cyc_off, "cycles_chained": cyc_on,
              "bit_exact": exact, "chains": [list(c.layers) for c in on.chains]},
    )
