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
  the portable family for the rest), compiled with `-mcpu=cortex-m4`. Units: two models of the
  same kernels, as stm32h7's. KERNELS_CYCLES (the target's: analyze, the report, explore, the
  partition) predicts ESTIMATED Cortex-M4 cycles — fitted (bench/calibrate_m7.py --target
  stm32l4r5 --unit cycles, bench/calibration_m4_cycles.json) on the cycles platforms/m4_timing.py
  estimates per layer (llvm-mca's Cortex-M4 model per executed basic block corrected to the
  Cortex-M4 TRM, taken branches, 5 flash wait states per data-cache miss behind the ART), not on a
  board; reports say "cycles (Cortex-M4 model, estimated)" (CYCLES_UNIT) and the ms at 120 MHz
  follow. The coefficients no calibration layer exercises are their instruction figure times
  CYCLES_PER_INSTRUCTION (the calibration set's estimated cycles per counted instruction): an
  assumption, not a fit. KERNELS_INSTRUCTIONS predicts executed instructions — stm32h7's
  instruction coefficients (the same instructions on the same ISA, held against the Cortex-M4
  build's counted instructions by tests/test_stm32l4r5.py); `instructions(target)` is the target
  priced with it (Target.instruction_model).
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
KERNELS_INSTRUCTIONS = replace(stm32h7.KERNELS_INSTRUCTIONS, name="pulp-kernels-m4-instructions")
#: estimated Cortex-M4 cycles per counted instruction over the calibration set
#: (bench/calibration_m4_cycles.json): prices in cycles the coefficients no calibration layer
#: exercises (module docstring "kernels")
CYCLES_PER_INSTRUCTION = 1.623
#: the coefficients of KERNELS_CYCLES fitted on estimated Cortex-M4 cycles (bench/calibrate_m7.py
#: --target stm32l4r5 --unit cycles, bench/calibration_m4_cycles.json: the 76 layers of the four
#: MLPerf Tiny models, the example and seed 004's layer at SRAM2's size; every network within
#: 0.89-1.03 of its estimate (the example's onnx adds and pools are not fitted), conv / depthwise /
#: dense / TFLite add / pool summed over the set within 1%; dw_gather / dw_item refit alone (--only)
#: after the depthwise took its ring rows without the rows[] loop); fcw_step / fcw_neuron (the
#: widened dense, bindings/pulp/widened.py; fcw_neuron with its tflite requantization) refit
#: alone on the dense layers of ad_autoencoder and kws_dscnn run widened (--networks
#: ad_autoencoder,kws_dscnn, bench/calibration_m4_fcw_cycles.json: fc 1.017) — a step 11.69
#: estimated cycles against the int8 form's 11.2 (flash wait states on twice the bytes), so on
#: the Cortex-M4 the model keeps the int8 dense but for the fewest inputs per neuron); cw_step,
#: cw_block, cw_unpack, cw_row (the widened conv, bindings/pulp/widened.py conv_layout) fitted
#: alone on the convs of ic_resnet8, kws_dscnn and vww_mobilenet_v1_025 (--networks
#: ic_resnet8,kws_dscnn,vww_mobilenet_v1_025 --only cw_step,cw_block,cw_unpack,cw_row,
#: bench/calibration_m4_cw_cycles.json: the widened layers 0.89-1.06 of the prediction) — a step
#: of 2 channels 12.8 estimated cycles against the int8 2x2's 31.9 for 4; no D-cache term
#: (cw_flash 0: the ART's flash reads are in the step)
FITTED_CYCLES = {"mm_step": 31.9, "mm_block": 10.818, "im2col_byte": 0.379, "im2col_row": 153.745,
                 "requant_tflite": 46.555, "dw_out": 0.0, "dw_step": 0.0, "dw_gather": 18.364,
                 "dw_item": 266.67, "fc_step": 11.195, "fc_neuron": 5.561, "fcw_step": 11.688,
                 "fcw_neuron": 49.913, "cw_step": 12.788, "cw_block": 0.0, "cw_unpack": 0.454,
                 "cw_row": 0.0, "cw_flash": 0.0, "add_elem": 14.756,
                 "add_table": 43.746, "pool_step": 34.93, "pool_out": 81.255, "other_elem":
                 237.382, "other_call": 699.753, "tile": 0.0}
#: the pulp kernels' model in estimated Cortex-M4 cycles: the target's
KERNELS_CYCLES = stm32h7.in_cycles(KERNELS_INSTRUCTIONS, "pulp-kernels-m4-cycles",
                                   CYCLES_PER_INSTRUCTION, FITTED_CYCLES)
#: instructions per layer outside its kernel: stm32h7's; the same in estimated Cortex-M4 cycles
LAYER_OVERHEAD_INSTRUCTIONS = stm32h7.LAYER_OVERHEAD_INSTRUCTIONS
LAYER_OVERHEAD_CYCLES = 619.1
#: what the cost models' figures are (Target.cycles_unit)
CYCLES_UNIT = "cycles (Cortex-M4 model, estimated)"
INSTRUCTIONS_UNIT = "instructions (Cortex-M4, counted)"


def _sram2(per_instruction: float):
    """SRAM2 as the L1 level: stm32h7's copy figures (fitted on counted instructions) times
    `per_instruction` (1 in instructions, CYCLES_PER_INSTRUCTION in cycles)."""
    return replace(stm32h7.dtcm(per_instruction), size=SRAM2.size, reserved=STACK,
                   note="SRAM2: kernel scratch and the stack (layers compute in place)")


def _cpu(kernels, layer_overhead: float, per_instruction: float | None) -> Module:
    return Module("cpu", cores=1, bindings=stm32h7.arm_bindings(kernels, per_instruction),
                  memory="L2", layer_overhead_cycles=layer_overhead, weights_from="flash",
                  note="Cortex-M4 (DSP extension), the SIMD kernels")


def instructions(target: Target) -> Target:
    """`target` (stm32l4r5, with its overrides) priced in executed instructions:
    KERNELS_INSTRUCTIONS, SRAM2's copies and the layer overhead in instructions
    (Target.instruction_model)."""
    l1 = target.memory("L1")
    level = replace(_sram2(1.0), size=l1.size, reserved=l1.reserved)
    return replace(target, memories=tuple(level if m.name == "L1" else m for m in target.memories),
                   modules=(_cpu(KERNELS_INSTRUCTIONS, LAYER_OVERHEAD_INSTRUCTIONS, None),),
                   cycles_unit=INSTRUCTIONS_UNIT, instruction_model=None)


TARGET = Target(
    name="stm32l4r5",
    description="STM32L4R5: Cortex-M4F @120 MHz, 640 kB SRAM (no TCM), 2 MB flash",
    clock_mhz=120.0,
    max_clock_mhz=120.0,
    memories=(
        _sram2(CYCLES_PER_INSTRUCTION),
        replace(stm32h7.TARGET.memory("L2"), size=SRAM3.size, note="SRAM3: activations"),
        stm32h7.TARGET.memory("flash"),
    ),
    modules=(_cpu(KERNELS_CYCLES, LAYER_OVERHEAD_CYCLES, CYCLES_PER_INSTRUCTION),),
    sources=("seed 004 §3.4 (CMSIS-NN on an STM32L4 Cortex-M4)",
             "ST DS12023 §3.5 (memory map)", "ST RM0432 §2.2 (memory organization), §3.3.3 (flash "
             "wait states, ART), §5.1.8 (boost mode)", "Arm Cortex-M4 TRM §3.3 (instruction timing)",
             "targets/stm32h7.py (the kernels' instruction coefficients)"),
    platform=cortex_m_platform(FPU, CORTEX_M4),
    regions=REGIONS,
    cycles_unit=CYCLES_UNIT,
    instruction_model=instructions,
)
