"""The Cortex-M7's timing (platforms/mca_timing.py prices executed blocks with it): LLVM's
Cortex-M7 scheduling model (llvm-mca `-mcpu=cortex-m7`, LLVM's ARMScheduleM7.td: the dual-issue
pipeline, the load, multiply/MAC and FP latencies) and the STM32H743's flash behind its D-cache.

Memory, by region (the stm32h7 firmware's placement, codegen/c/firmware/cortex_m/sections.ld):
the stack and kernel scratch are in the DTCM, zero wait state (Arm Cortex-M7 TRM, "TCM interfaces":
the TCMs are accessed at the core clock without wait states), which is what llvm-mca's load latency
models. Code and const weights are in flash and activations in the AXI SRAM, both behind the 16 kB
I-cache and 16 kB D-cache the board layer enables (tw_board_stm32h7.c). ASSUMPTION (not sourced
as a cycle figure): code and activations hit the L1 caches, so the AXI SRAM costs what the DTCM
costs (the kernels' code is a few kB, under the 16 kB I-cache). Flash: RM0433 (STM32H743
reference manual) Table 17 gives 4 wait states at VOS0 with a 240 MHz AXI clock (the board
layer's setting); a 256-bit flash word fills one 32-byte cache line, so a line fill costs
FLASH_MISS_CYCLES = (4 + 1) AXI cycles = 10 CPU cycles at 480 MHz (the bus's own latency not
included), and streaming the weights once costs (weight bytes / 32) line fills — ad_autoencoder's
0.27 MB about 8.5 k lines. FlashCache simulates the D-cache's LRU sets over the flash's constant reads of the
first inference (platforms/count.py hooks reads of .rodata), so compulsory and capacity misses
(a layer's weights above 16 kB re-read per output tile) of the weights are priced at
FLASH_MISS_CYCLES a line fill; the activations' own lines (AXI SRAM, which would evict weights) are
not simulated, so this is a lower bound. The first inference starts with a cold cache (the weights
of all four MLPerf Tiny models exceed 16 kB, so a warm one would miss as much).

Validation (MICRO_BENCHMARKS, tests/test_m7_timing.py): Thumb-2 sequences whose Cortex-M7 timing
is published from measurements on silicon (Arm publishes no Cortex-M7 cycle tables) — dual issue
of independent ALU pairs (J. Ahrens, quinapalus.com/cm7cycles.html: STM32H730 at 480 MHz, caches
on, the cycles of 10 extra copies of a sequence between isb), and the dual-issue restrictions
C. Biffle published in 2024 (Mastodon, #CortexM7): one shifted-operand or extend instruction per
cycle, DSP/SIMD instructions (smlad) dual-issue only from the pair's lower address, a dependent
ADD.W pair issues in one cycle. Error of the steady-state estimate (llvm-mca 14.0.6), estimate /
published - 1: ALU pairs +0.25%, dependent add.w pairs +0.5%, shifted operands +0.12%, sxtb16
+0.12%, smlad pairs +0.25%, smlad + add.w +0.5%; worst 0.5%, mean 0.29% (VALIDATION_ERROR, held
by the test). What the set does not validate: load-use and multi-cycle load timing, branches
(taken-branch and misprediction costs; llvm-mca models no predictor), and the memory term — on a
whole network the estimate's error against silicon is not measured here (no board); treat it as
a pipeline-model estimate, not a measurement.
"""

from __future__ import annotations

from .mca_timing import CoreTiming, MicroBenchmark

#: the STM32H743's L1 D-cache (DS12110 §3.3: 16 kB; Arm Cortex-M7 TRM, "Data cache": 4-way set
#: associative, 32-byte lines) and the CPU cycles one line read from flash costs on a miss: a
#: 256-bit flash word is one line, read in (4 wait states + 1) AXI cycles at 240 MHz (RM0433
#: Table 17 at VOS0, the board layer's setting) = 10 CPU cycles at 480 MHz (the AXI bus's own
#: latency is not included: a lower bound)
DCACHE_BYTES, DCACHE_WAYS, LINE = 16 * 1024, 4, 32
FLASH_MISS_CYCLES = 10
#: how reports label the estimate (validate --on count: text and JSON `estimated_cycles_model`)
ESTIMATE_MODEL = ("estimated, Cortex-M7 model: llvm-mca's Cortex-M7 scheduling model per executed "
                  "basic block (steady state) + D-cache line fills from flash at 480 MHz")
#: the Cortex-M7's timing: llvm-mca's model as it is (calls priced as branches), the D-cache
TIMING = CoreTiming(cpu="cortex-m7", label="Cortex-M7", model=ESTIMATE_MODEL, clock_mhz=480.0,
                    cache_bytes=DCACHE_BYTES, cache_ways=DCACHE_WAYS, line=LINE,
                    miss_cycles=FLASH_MISS_CYCLES)

_BIFFLE = "C. Biffle, Cortex-M7 dual-issue measurements (Mastodon #CortexM7, 2024)"
_AHRENS = "J. Ahrens, quinapalus.com/cm7cycles.html (STM32H730, caches on)"
#: the estimator's validation set (module docstring; tests/test_m7_timing.py)
MICRO_BENCHMARKS = (
    MicroBenchmark("independent ALU pairs (8 add.w, 4 registers)",
                   ("add.w r0, r0, #1", "add.w r1, r1, #1", "add.w r2, r2, #1", "add.w r3, r3, #1") * 2,
                   4.0, f"two independent ALU instructions dual-issue: {_AHRENS}; {_BIFFLE}"),
    MicroBenchmark("dependent add.w pairs (r1 = r0 + r3 + r2) x4",
                   ("add.w r1, r0, r3", "add.w r1, r1, r2") * 4,
                   4.0, f"the dependent pair issues in one cycle: {_BIFFLE}"),
    MicroBenchmark("shifted-operand adds x8",
                   ("add.w r0, r1, r2, lsl #4", "add.w r3, r4, r5, lsl #4") * 4,
                   8.0, f"one shifted-operand instruction per cycle: {_BIFFLE}"),
    MicroBenchmark("sxtb16 x8 (the int8 MAC's unpacking)",
                   ("sxtb16 r0, r1", "sxtb16 r2, r3") * 4,
                   8.0, f"extends count as shifted operands, one per cycle: {_BIFFLE}"),
    MicroBenchmark("smlad x8, two accumulators",
                   ("smlad r0, r1, r2, r0", "smlad r3, r4, r5, r3") * 4,
                   8.0, f"DSP instructions dual-issue only from the pair's lower address: {_BIFFLE}"),
    MicroBenchmark("smlad + add.w pairs x4",
                   ("smlad r0, r1, r2, r0", "add.w r3, r3, #1") * 4,
                   4.0, f"a DSP instruction at the lower address pairs with an ALU one: {_BIFFLE}"),
)
#: the steady-state estimate's error on MICRO_BENCHMARKS (|estimate / published - 1|), measured
#: with Debian's llvm-mca 14.0.6: worst and mean over the set
VALIDATION_ERROR = {"worst": 0.005, "mean": 0.003}
