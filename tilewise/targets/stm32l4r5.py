"""STMicroelectronics STM32L4R5: one Cortex-M4 (FPU) at 120 MHz, 640 kB SRAM, 2 MB flash, no TCM —
the MCU of MLPerf Tiny's reference board (NUCLEO-L4R5ZI).

Figures and where they come from:
- 120 MHz, also the maximum (--clock beyond it needs --hypothetical): the STM32L4R5xx datasheet
  (DS12023, "Arm Cortex-M4 32-bit RISC core ... frequency up to 120 MHz") in Range 1 boost mode
  (RM0432, STM32L4+ reference manual, §5.1.8 "Dynamic voltage scaling management"); the MLPerf Tiny
  reference submissions on NUCLEO-L4R5ZI run at it (../shared/notes/anchors.md).
- Memory regions (REGIONS; the linker scripts are generated from them, codegen/linker.py), from
  DS12023 §3.5 / Fig. "Memory map" and RM0432 §2.2 "Memory organization": flash 2 MB at
  0x08000000 (two 1 MB banks), SRAM1 192 kB at 0x20000000, SRAM2 64 kB at 0x20030000 (also
  aliased at 0x10000000), SRAM3 384 kB at 0x20040000 — 640 kB, all zero-wait-state at the core
  clock on the AHB bus matrix, all clocked from reset (the reset state leaves the internal SRAM
  and the flash on). No TCM, no cache besides the flash's ART accelerator (instruction cache,
  data cache and prefetch: FLASH_ACR ICEN / DCEN / PRFTEN, which the board layer turns on).
- L1 = SRAM2 (64 kB: the kernels' scratch and the stack, 8 kB reserved, sections.ld's
  STACK_BYTES), L2 = SRAM3 (384 kB: the activation plan, the largest region), SRAM1 (192 kB) the
  firmware's .data / .bss. The plan is one contiguous arena in SRAM3, so a network whose
  activations need more than 384 kB is refused (schedule/fit.py) although the three regions
  are contiguous (640 kB from 0x20000000): the split keeps the scratch and the stack out of the
  arena's way, as stm32h7's DTCM does.
- The core computes in place as stm32h7's does (schedule/placement.py `computes_in_place`): every
  layer runs whole on its tensors in SRAM3, the weights and per-channel constants are read where
  they are in flash (Memory.in_place), SRAM2 holds the kernels' scratch and the stack.
- kernels: the same ARMv7E-M code as stm32h7 (the pulp family's C built for Arm: conv's 2×2
  MatMul of `smlad`, the depthwise's unpacked-row ring, tw_pulp_isa.h's `sxtb16` dot products;
  the portable family for the rest), compiled with `-mcpu=cortex-m4`. Units: executed
  INSTRUCTIONS (Target.cycles_unit says so wherever a figure is printed), the measure the counter
  takes on unicorn's Cortex-M4 (`validate --on count`), priced by stm32h7's instruction model
  (targets/stm32h7.py KERNELS_INSTRUCTIONS, LAYER_OVERHEAD_INSTRUCTIONS, the L1 copy figures in
  instructions): the same instructions on the same ISA, held against the Cortex-M4 build's counted
  instructions by tests/test_stm32l4r5.py. There is no Cortex-M4 cycle model (the core is
  single-issue, so cycles ≥ instructions: loads take 2 cycles, taken branches 2–4, and the flash
  adds 5 wait states at 120 MHz behind the ART accelerator — RM0432 §3.3.3 Table
  "Number of wait states according to CPU clock (HCLK) frequency"); a figure in ms at 120 MHz
  from these counts is a lower bound of the time.
- seed 004 §3.4 benchmarks CMSIS-NN on an STM32L476 (a Cortex-M4 of the same family, 80 MHz at most)
  against PULP-NN on GAP8: the low-end Cortex-M MCU this target is.
- FPU: FPv4-SP-D16, single precision (DS12023: "Cortex-M4 with FPU"); the firmware is built
  hard-float (`-mfloat-abi=hard -mfpu=fpv4-sp-d16`, newlib's thumb/v7e-m+fp/hard multilib):
  onnx's float32 requantization runs on it (the onnx_fpu kernels' vcvt / vmul.f32), double
  arithmetic is software.
- firmware (platforms/cortex_m.py with the Cortex-M4 core, codegen/c/firmware/cortex_m): the
  start-up and the section layout stm32h7's uses, the board layer tw_board_stm32l4r5.c (120 MHz
  PLL from the HSI16, boost mode, 5 flash wait states, ART on, DWT cycle counter; stubbed under
  QEMU) and QEMU's mps2-an386 (Arm AN386: a Cortex-M4 with FPU) for `validate --on qemu`.
"""

from dataclasses import replace

from ..bindings import pulp
from ..platforms.arm_core import CORTEX_M4
from ..platforms.cortex_m import cortex_m_platform
from . import stm32h7
from .base import KB, Module, Region, Target

#: the STM32L4R5's memory regions (module docstring: DS12023 §3.5, RM0432 §2.2)
FLASH = Region("flash", 0x08000000, 2048 * KB, backs="flash", ld="FLASH",
               note="two 1 MB banks: code, constants, the embedded inputs")
SRAM1 = Region("SRAM1", 0x20000000, 192 * KB, backs="data", ld="SRAM1",
               note="the firmware's .data/.bss")
SRAM2 = Region("SRAM2", 0x20030000, 64 * KB, backs="L1", ld="SRAM2",
               note="the L1 arena (kernel scratch) and the stack")
SRAM3 = Region("SRAM3", 0x20040000, 384 * KB, backs="L2", ld="SRAM3",
               note="the L2 arena (activations)")
REGIONS = (FLASH, SRAM1, SRAM2, SRAM3)
#: the core's FPU (gcc's -mfpu name): single precision (DS12023)
FPU = "fpv4-sp-d16"
#: SRAM2 bytes of the firmware's stack (sections.ld STACK_BYTES, written from this figure)
STACK = 8 * KB
#: the instruction-priced kernels of stm32h7 (module docstring: the same ARMv7E-M code)
KERNELS = replace(stm32h7.KERNELS_INSTRUCTIONS, name="pulp-kernels-m4-instructions")
#: stm32h7's L1 level figures in instructions (copies by the core) on SRAM2
_L1 = replace(stm32h7.instructions(stm32h7.TARGET).memory("L1"), size=SRAM2.size, reserved=STACK,
              note="SRAM2: kernel scratch and the stack (layers compute in place)")
#: what the cost model's figures are (Target.cycles_unit)
UNIT = "instructions (Cortex-M4, counted model; no cycle model)"


def _itself(target: Target) -> Target:
    """The target's instruction model (Target.instruction_model): the target itself, already
    priced in instructions."""
    return target


TARGET = Target(
    name="stm32l4r5",
    description="STM32L4R5: Cortex-M4F @120 MHz, 640 kB SRAM (no TCM), 2 MB flash",
    clock_mhz=120.0,
    max_clock_mhz=120.0,
    memories=(
        _L1,
        replace(stm32h7.TARGET.memory("L2"), size=SRAM3.size, note="SRAM3: activations"),
        stm32h7.TARGET.memory("flash"),
    ),
    modules=(
        Module("cpu", cores=1, bindings=pulp.bindings(KERNELS, arm=True, host=True), memory="L2",
               layer_overhead_cycles=stm32h7.LAYER_OVERHEAD_INSTRUCTIONS, weights_from="flash",
               note="Cortex-M4 (DSP extension), the SIMD kernels; priced in instructions"),
    ),
    sources=("seed 004 §3.4 (CMSIS-NN on an STM32L4 Cortex-M4)",
             "ST DS12023 §3.5 (memory map)", "ST RM0432 §2.2 (memory organization), §3.3.3 (flash "
             "wait states), §5.1.8 (boost mode)", "targets/stm32h7.py (the kernels' coefficients)"),
    platform=cortex_m_platform(FPU, CORTEX_M4),
    regions=REGIONS,
    cycles_unit=UNIT,
    instruction_model=_itself,
)
