"""GreenWaves GAP8: 8-core RI5CY cluster with a 64 kB TCDM, 512 kB L2, HyperRAM L3.

Figures and where they come from:
- cluster: 8 RI5CY cores, RV32IMCXpulpV2, the pulp kernel family (seed 001 §3.2–3.3, seed 004 ch. 3);
  100 MHz is the clock of DORY's end-to-end measurements (seed 001 §5.2, Table 4). Maximum
  (--clock beyond it needs --hypothetical): 260 MHz, the highest cluster clock GAP8 silicon is
  measured at in the sources (seed 001 Fig. 10 sweeps the cluster over 25-260 MHz; seed 004
  Table 3.2 "low latency 1.15 V @ 260 MHz"); GreenWaves' datasheet rates the cluster at 175 MHz
  and the fabric controller at 250 MHz at nominal voltage, so clocks above 175 MHz assume the
  1.15 V operating point.
- L1: 64 kB TCDM (seed 001 §3.2); reserved: core stacks 3.5 kB (core 0) + 7 × 3.4 kB (DESIGN.md),
  so 36.7 kB are free for tiles, buffers and im2col by default (--l1 sets the free part).
- L2↔L1 cluster DMA: up to 2 GB/s with 80 ns latency (seed 001 §3.2) — 64-bit, 8 B/cycle; setup
  8 cycles = 80 ns at 100 MHz. Per contiguous chunk 27 cycles: MATCH's measured figure for the
  same PULP cluster DMA on GAP9 (seed 003 §V), assumed here. 20 core cycles to program a transfer
  (assumed).
- L2: 512 kB at 0x1C000000 (seed 001 §3.2; the GAP SDK's GAP8.ld, rtos/freeRTOS/vendors/gwt/gap8/
  src/device/ld/GAP8.ld: `L2 : ORIGIN = 0x1C000000, LENGTH = 0x80000`). That linker script puts
  the whole program in L2 — .text, .rodata (the constants of weights.c), .data, .bss (the arenas,
  the output buffer) and the L1 preload image — and leaves the rest to the heap; only the FC's
  stacks are elsewhere (FC TCDM). So L2_CODE_RUNTIME is reserved for code and runtime: the
  generated network's code as linked for the same RI5CY cores, measured (`tilewise analyze
  --code-size --target pulp-open`: network, layers, kernels, HAL at -O2 — 30.5 kB kws_dscnn,
  32.2 kB ic_resnet8, 47.7 kB vww_mobilenet_v1_025, the largest of the MLPerf Tiny models), rounded
  up to 64 kB for the SDK's -O3, plus 32 kB assumed for the PMSIS runtime on FreeRTOS (kernel,
  drivers, their data: not measured here, the GAP SDK is not installed), so 416 kB are free for
  the memory plan (--l2 sets the free part). L3: 8 MB HyperRAM (64 MB HyperFlash also on board, read-only),
  I/O DMA up to 200 MB/s (seed 001 §3.2); >50 pJ/B off-chip (seed 001 §1).
- energy: 11.89 mJ for 23.3 M cycles of 1.0-MobileNetV1-128 at 1 V / 100 MHz (seed 001 Table 4)
  → 510 pJ per cluster cycle, whole SoC average.
- kernels: the pulp family (bindings/pulp: XpulpV2 SIMD, hardware loops) priced by its own model
  (bindings/pulp/cost.py), calibrated on GVSoC's pulp-open cluster — the same 8 RI5CY cores and
  TCDM; the generated firmware uses the PMSIS HAL, whose DMA costs above stay GAP8's published
  figures (GVSoC here models pulp-open, not GAP8's PMSIS runtime).
- cpu: the host core's module — on the chip the fabric controller's role. The generated PMSIS
  code runs the network in a cluster task (tw_hal_pulp.c), so a "cpu" layer is cluster core 0
  alone on the L2 tensors, untiled, no DMA: the pulp kernels priced for one core from L2 by the
  model fitted on pulp-open's GVSoC (targets/pulp_open.py HOST), assumed to hold for GAP8's
  cores and L2 latency (not measured on GAP8); energy per cycle assumed 510 pJ, the SoC average
  above (the other cores idle but powered).
"""

from ..bindings import pulp
from ..bindings.pulp.cost import PulpKernels
from ..platforms.gap_sdk import GAP_SDK
from .base import KB, MB, Memory, Module, Target
from .pulp_open import HOST

#: L2 bytes the GAP SDK's program takes besides the memory plan (module docstring: the network's
#: code measured on the same cores, rounded up, and the PMSIS runtime assumed)
L2_CODE_RUNTIME = 64 * KB + 32 * KB

TARGET = Target(
    name="gap8",
    description="GreenWaves GAP8: 8-core RI5CY cluster, 64 kB L1 TCDM, 512 kB L2, 8 MB L3",
    clock_mhz=100.0,
    max_clock_mhz=260.0,
    memories=(
        Memory("L1", 64 * KB, reserved=3584 + 7 * 3482, bandwidth=8.0, dma_setup_cycles=8,
               dma_chunk_cycles=27, dma_issue_cycles=20, dma_async=True,
               note="TCDM; stacks 3.5 kB + 7x3.4 kB reserved"),
        Memory("L2", 512 * KB, reserved=L2_CODE_RUNTIME, bandwidth_mb_s=200.0,
               dma_setup_cycles=100, dma_async=True, pj_per_byte=50.0,
               note="L3<->L2 I/O DMA 200 MB/s; code and runtime reserved"),
        Memory("L3", 8 * MB, note="HyperRAM; 64 MB HyperFlash for read-only data"),
    ),
    modules=(
        Module("cluster", cores=8, bindings=pulp.bindings(PulpKernels()), memory="L1",
               scalable=True, pj_per_cycle=510.0, note="8x RI5CY XpulpV2, tilewise pulp kernels"),
        Module("cpu", cores=1, bindings=pulp.bindings(HOST, host=True), memory="L2",
               pj_per_cycle=510.0,
               note="host core: cluster core 0 alone on the L2 tensors (the FC's role)"),
    ),
    sources=("seed 001 §3.2-3.3, Table 4", "seed 004 ch. 3, Table 3.2", "seed 003 §V (DMA chunk)"),
    platform=GAP_SDK,
    shift_requant=True,
)
