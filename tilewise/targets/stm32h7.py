"""STMicroelectronics STM32H743: one Cortex-M7 at 480 MHz, DTCM as L1, AXI SRAM as L2, flash.

Figures and where they come from:
- 480 MHz, 1× Cortex-M7 with a 128 kB zero-wait-state DTCM scratchpad (seed 001 §6.1, where DORY
  manages the DTCM by DMA exactly like GAP8's L1); 8 kB of it assumed reserved for the stack.
- L2: 1 MB SRAM (DESIGN.md) for activations; 2 MB internal flash, read-only: the const weights stay
  there (the Cortex-M reads flash in place and its DMA moves weight tiles from it), never copied
  to RAM and not counted in it. No external RAM: a network whose activations do not fit the SRAM
  does not fit this part.
- DMA into the DTCM: 64-bit AXI at half the core clock → 4 B/cycle; 30 cycles setup, 6 per chunk
  and 40 core cycles of driver code per transfer — assumed, the seeds give no figures.
- kernels: the pulp family's C (bindings/pulp) through its Arm path — tw_pulp_isa.h maps the
  4-lane int8 dot product to two `smlad` on `sxtb16`-unpacked halves (ARMv7E-M DSP extension) —
  with the portable family for what it does not rewrite. Still priced by the CMSIS-NN model
  (calibrated so that one GAP8 core running PULP-NN is 2.54× faster on seed 004's benchmark
  convolution, seed 004 §3.4.1; targets/kernels.py): a model of these kernels' counted
  instructions is still to be fitted (issue 10).
- firmware (Target.sdk "cortex-m", codegen/c/firmware/cortex_m): start-up, linker scripts for an
  STM32H7 (flash, DTCM, AXI SRAM) and for QEMU's mps2-an500, the single-core HAL (copies done by
  the core), semihosting output; `validate --on qemu` runs it.
"""

from ..bindings import pulp
from .base import KB, MB, Memory, Module, Target
from .kernels import CmsisNN

TARGET = Target(
    name="stm32h7",
    description="STM32H743: Cortex-M7 @480 MHz, 128 kB DTCM, 1 MB SRAM, 2 MB flash",
    clock_mhz=480.0,
    memories=(
        Memory("L1", 128 * KB, reserved=8 * KB, bandwidth=4.0, dma_setup_cycles=30,
               dma_chunk_cycles=6, dma_issue_cycles=40, dma_async=True, note="DTCM"),
        Memory("L2", 1 * MB, bandwidth=2.0, dma_setup_cycles=30, dma_async=True,
               roles=frozenset({"act", "tile"}), note="AXI SRAM: activations"),
        Memory("flash", 2 * MB, roles=frozenset({"weight"}), read_only=True,
               note="internal flash: const weights, read in place"),
    ),
    modules=(
        Module("cpu", cores=1, bindings=pulp.bindings(CmsisNN()), memory="L1",
               weights_from="flash", note="Cortex-M7 (DSP extension), the SIMD kernels"),
    ),
    sources=("seed 001 §6.1", "seed 004 §3.4.1"),
    sdk="cortex-m",
)
