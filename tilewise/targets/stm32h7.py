"""STMicroelectronics STM32H743: one Cortex-M7 at 480 MHz, DTCM as L1, AXI SRAM as L2, flash.

Figures and where they come from:
- 480 MHz, also the maximum (--clock beyond it needs --hypothetical): the STM32H743's rated top
  clock (ST datasheet DS12110; seed 004 ch. 3 compares against it "@ 480 MHz"); 1× Cortex-M7 with a 128 kB
  zero-wait-state DTCM scratchpad (seed 001 §6.1, where DORY manages the DTCM by DMA exactly like GAP8's L1); 8 kB of it
  assumed reserved for the stack.
- Memory regions (REGIONS; the linker scripts are generated from them, codegen/linker.py), from
  ST's STM32H743xI datasheet DS12110 §3.5 "Memories" / Fig. "Memory map" and reference manual
  RM0433 §2.3 "Memory organization" (Table "Register boundary addresses" and §2.4 "Embedded
  SRAM"): flash 2 MB at 0x08000000 (two 1 MB banks), ITCM-RAM 64 kB at 0x00000000, DTCM-RAM
  128 kB at 0x20000000, AXI SRAM (D1) 512 kB at 0x24000000, SRAM1 128 kB at 0x30000000, SRAM2
  128 kB at 0x30020000, SRAM3 32 kB at 0x30040000 (D2: one contiguous 288 kB), SRAM4 (D3) 64 kB
  at 0x38000000, backup SRAM 4 kB at 0x38800000 — 864 kB of user SRAM besides the TCMs.
- L1 = the DTCM (128 kB, the stack's 8 kB reserved, sections.ld's STACK_BYTES); L2 = the AXI SRAM,
  512 kB, all of it for the activation plan (the firmware's L2 arena is the only thing linked
  there). Activations do not use the other SRAMs: the plan is one contiguous arena and the AXI
  SRAM is the largest contiguous region (SRAM1–3 are 288 kB at another address, on the D2 bus
  matrix behind the AXI–AHB bridge); so a network whose activation plan needs more than 512 kB
  is refused (schedule/fit.py) although the chip has 864 kB of SRAM. SRAM1–3 hold the firmware's
  own variables (.data, .bss: the output buffer, counters); SRAM4, the ITCM and the backup SRAM
  stay free for the application. The 2 MB internal flash, read-only, holds the code and the
  const weights (the Cortex-M reads flash in place and its DMA moves weight tiles from it), never
  copied to RAM and not counted in it. No external RAM: a network whose activations do not fit
  the AXI SRAM does not fit this part. No STM32H7A3 variant is offered (its 1.4 MB of SRAM is
  laid out differently: it would be a target file of its own).
- Units: two models of the same kernels, one per unit. KERNELS_CYCLES (the target's: analyze,
  the report, explore, the partition) predicts ESTIMATED Cortex-M7 cycles — fitted
  (bench/calibrate_m7.py --unit cycles, bench/calibration_m7_cycles.json) on the cycles
  platforms/m7_timing.py estimates per layer (llvm-mca's Cortex-M7 pipeline model per executed
  basic block + flash line fills), not on a board; reports say "cycles (Cortex-M7 model,
  estimated)" (CYCLES_UNIT) and the ms at 480 MHz follow from them. KERNELS_INSTRUCTIONS
  predicts executed instructions (bench/calibrate_m7.py --unit instructions,
  bench/calibration_m7.json: what `validate --on count` counts and the instruction comparisons
  with TFLite Micro + CMSIS-NN use); `instructions(target)` is the target priced with it
  (Target.instruction_model). The coefficients no calibration layer exercises (the integer
  exports', onnx's, the row kernels', SVDF's, the host kernels': each fitted on counted
  instructions by its own bench/calibrate_*.py) are in cycles their instruction figure times
  CYCLES_PER_INSTRUCTION, the calibration set's estimated cycles per counted instruction before
  the 2x2 MatMul was ordered for dual issue (1.034; the set's ratio is 0.768 since, the MatMul's
  steps at ~12 estimated cycles for 18 instructions, which those kernels' code does not share) —
  an assumption, not a fit of those kernels' cycles.
- The core computes in place: every layer runs whole on its tensors in the AXI SRAM (the module's
  memory is L2, schedule/placement.py `computes_in_place`), the weights and per-channel
  constants are read where they are in flash (Memory.in_place), and the DTCM holds only the
  kernels' scratch (im2col rows, depthwise rows, add tables) and the stack — no tile is copied,
  so RAM = the L2 activation plan + the scratch. The L1 (DTCM) copy figures below are those a
  module tiling into the DTCM would pay (fitted on counted instructions when the built-in one
  did: 328 instructions per copy call, 27.5 per contiguous run, 1.53 per byte).
- kernels: the pulp family's C (bindings/pulp) built for Arm (ARMv7E-M DSP extension) — conv and
  1×1 conv unpack each pixel's column once to int16 pairs and run a 2×2 MatMul of `smlad` in
  Thumb-2's 14 registers, ordered for the Cortex-M7's dual issue (tw_pulp_matmul_arm.h) — or,
  where the cost model prices it lower (the convs whose kernel rows are whole words of 4 values),
  with the weights stored widened to int16 at codegen (bindings/pulp/widened.py conv_layout:
  2 bytes a weight in flash) a 2x4 MatMul (two channels x four pixels) of ldr and smlad only,
  each load paired with a smlad, the four pixels' columns unpacked once per quad (117
  instructions, 69 llvm-mca cycles per 128 MACs against the 2x2's 144 and 96); depthwise
  takes four channels per pixel from a ring of unpacked rows (tw_pulp_depthwise.c), four outputs
  requantized into one word; dense, where the cost model prices it lower, reads weights stored
  widened to int16 pairs at codegen in the order its loop takes them (bindings/pulp/widened.py:
  2 bytes a weight in flash), blocks of 4 neurons, one sxtb16 pair per input word and ldrd of
  ready smlad operands; elsewhere tw_pulp_isa.h maps the 4-lane int8 dot product to two `smlad`
  on `sxtb16` halves — with the portable family for what it does not rewrite; priced by the pulp
  kernels' model (its `arm` structure) with coefficients in estimated cycles (KERNELS_CYCLES) or
  instructions (KERNELS_INSTRUCTIONS): "Units" above. The CMSIS-NN model
  (bindings/portable/cost.py) stays as the peer model of seed 004's GAP8-vs-STM32H7 ratio (tests).
- the host-only kernels (bindings/portable/host.py: quantize, transpose, concatenation of any
  inputs) run on the same core; their instructions per element are assumed the untiled ops'
  (other_elem), not counted separately — but for the transpose (and the slice, the same
  tw_transpose), counted with the integer exports' kernels (16x8 conv / depthwise / dense, the
  table add, tw_int.h's, the reshape's copy: bindings/pulp/cost.py "Integer exports") by
  bench/calibrate_int.py.
- FPU: FPv5-D16 (double precision, 16 D registers; DS12110): the firmware is built
  hard-float (FPU below; `-mfloat-abi=hard -mfpu=fpv5-d16`).
- firmware (platforms/cortex_m.py, codegen/c/firmware/cortex_m): start-up, linker scripts for the
  STM32H743 (REGIONS) and for QEMU's mps2-an500 (the same regions' sizes inside its SSRAM), the
  board layer (480 MHz PLL, caches, DWT cycle counter; stubbed under QEMU), the single-core HAL
  (copies done by the core), output through a putchar; `validate --on qemu` runs it.
"""

from dataclasses import fields, replace

from ..bindings import pulp
from ..bindings.base import Binding
from ..bindings.cost_terms import Scaled
from ..bindings.pulp.cost import PulpKernels
from ..platforms.cortex_m import cortex_m_platform
from .base import KB, Memory, Module, Region, Target

#: the pulp kernels' model in executed instructions on the Cortex-M7 (module docstring "Units"), fitted on counted
#: instructions (bench/calibrate_m7.py, bench/calibration_m7.json: 152 layers of the four MLPerf
#: Tiny models, the example and seed 004's layer; every network within ±4%); requant_onnx (onnx's
#: float32 requantization in integers, tw_pulp_rq_onnx: smull + clz, issue 27; 328.3 in soft-float)
#: fitted alone on counted instructions of the onnx-mode conv / depthwise / dense layers of the
#: example and of kws_dscnn, ic_resnet8 quantized to QDQ ONNX (bench/calibrate_onnx_requant.py,
#: bench/calibration_onnx_requant.json: per layer 25-55); add_onnx likewise (QLinearAdd in
#: integers, tw_pulp_add_onnx_exact_s8; 672.4 in soft-float): the adds of the example and ic_resnet8;
#: requant_onnx24 (the onnx24 variant, no range check; per channel its linear form where exact,
#: bindings/pulp/onnx_linear.py: 36.42, was 39.99 with the exact form everywhere — fitted on the
#: core priced without its FPU, the "stm32h7 integer" configuration, since the FPU's form is the
#: cheaper and the one the real stm32h7 runs) and add_onnx_fold (the folded onnx add)
#: fitted the same way on the layers that run them (calibration_onnx_requant.json); the onnx
#: global average pool keeps this core's gap values (gap_*_onnx: the cluster's refit is its own)
#: requant_onnx_fpu: onnx's requantization as onnxruntime's float32 operations on the FPU
#: (tw_pulp_rq_onnx_fpu: vcvt.f32.s32, vmul.f32, vcvtr.s32.f32; the onnx_fpu variant, which the
#: onnx bindings of the weighted kernels take as it is below requant_onnx, and which the scheduler
#: prefers to the onnx24 bindings' requant_onnx24), fitted alike on the hard-float firmware
#: (bench/calibration_onnx_requant_fpu.json: the same layers save 22-24 instructions per output);
#: the depthwise's refit alone (bench/calibrate_m7.py --unit instructions --only dw_out,dw_step,
#: dw_gather,dw_item) after its 3x3 loop read the weights through a pointer (tw_pulp_depthwise.c:
#: 142 -> 136 instructions a pixel of four channels, no per-row copy of the weights) and took its
#: three ring rows without the rows[] loop: dw_step 0.417 -> 0.309, dw_gather 12.311 -> 12.091,
#: dw_item 252.631 -> 187.834; fcw_step, fcw_neuron (the widened dense, bindings/pulp/widened.py;
#: fcw_neuron with its tflite requantization) fitted alone on the dense layers of ad_autoencoder
#: and kws_dscnn (bench/calibrate_m7.py --unit instructions --networks ad_autoencoder,kws_dscnn
#: --only fcw_step,fcw_neuron, bench/calibration_m7_fcw.json: fc 1.024 of the prediction);
#: cw_step, cw_block, cw_unpack, cw_row (the widened conv, bindings/pulp/widened.py conv_layout:
#: its 2x4 MatMul's loop 117 instructions for 128 MACs, 7.31 per pixel, 2-channel block and step
#: with the block's entry and steps left) fitted alone on the convs of ic_resnet8, kws_dscnn and
#: vww_mobilenet_v1_025 (bench/calibrate_m7.py --unit instructions --networks
#: ic_resnet8,kws_dscnn,vww_mobilenet_v1_025 --only cw_step,cw_block,cw_unpack,cw_row,
#: bench/calibration_m7_cw.json: the widened layers 0.91-1.07 of the prediction, a fused chain's
#: members counted together)
KERNELS_INSTRUCTIONS = replace(PulpKernels(), name="pulp-kernels-m7-instructions", mm_step=18.808,
                  mm_block=0.0, mm_tile=0.5,
                  im2col_byte=0.0, im2col_row=115.747, requant_tflite=29.913, requant_shift=12.0,
                  requant_onnx=48.854, requant_onnx24=36.42, requant_onnx_fpu=26.11,
                  psum=2.36, dw_out=0.0, dw_step=0.309,
                  dw_gather=12.091, dw_item=187.834, fc_step=7.235, fc_neuron=0.414,
                  fcw_step=3.927, fcw_neuron=26.736, cw_step=7.313, cw_block=0.0, cw_unpack=0.829, cw_row=11.625,
                  add_elem=12.25,
                  add_table=36.354, add_onnx=39.93, add_onnx_fold=11.85, mul_elem=35.0, pool_step=25.788,
                  pool_out=63.477, gap_pixel=11.029, gap_chan=0.0, gap_pixel_onnx=11.029, gap_chan_onnx=0.0,
                  other_elem=184.546, other_call=425.13, tile=0.0,
                  # no own fit on the Cortex-M7: its untiled kernels' per-element and call figures
                  lut_elem=184.546, lut_call=425.13, bcast_elem=184.546, bcast_call=425.13,
                  transpose_call=425.13,
                  transpose_elem=4.946, transpose_row=22.309, concat_elem=184.546, quant_elem=184.546,
                  arm=True,
                  # the integer exports' kernels and the transpose (bench/calibrate_int.py,
                  # bench/calibration_int.json: counted on integer_onnx layers and on MLPerf
                  # Tiny's KWS and ResNet-8 quantized to 16x8)
                  s16_mac=5.215, s16_tap=44.82, s16_dw_tap=30.733, s16_out=91.885, s8_mac=2.867,
                  s16_rq_tflite=52.623, s16_rq_real=506.299, s16_pool_tap=11.051,
                  s16_pool_out=22.599, s16_add_elem=116.471, div64=149.204,
                  tadd_elem=17.006, tadd_entry=1.813, int_mac=5.964, int_mac64=6.407,
                  int_tap=24.998, int_out=122.722, int_rq_elem=43.323, int_add_elem=19.607,
                  int_bin_elem=56.248, int_hsw_elem=30.116, int_mm_mac=7.953, int_mm_out=28.781,
                  int_red_in=37.491, int_red_out=64.919,
                  # Deeploy's iSoftmax / iRMSNorm / iLayerNorm / iGELU / ITAMax per element (the
                  # row's square root / division in it): counted on Deeploy's ICCT, microLlama1 and
                  # Softmax / RMSNorm / Attention kernels (bench/calibrate_host_rows.py,
                  # bench/calibration_host_rows.json; assumed 239 / 209 / 239 / 30 / 90 before)
                  int_smx_elem=318.603, int_rms_elem=113.303, int_ln_elem=148.311, int_gelu_elem=43.737,
                  int_ita_elem=70.299,
                  # LiteRT's integer SVDF (tw_svdf_s8): per feature MAC, per time MAC, per filter,
                  # counted (bench/calibrate_svdf.py, within 5% of its six geometries)
                  svdf_fmac=5.681, svdf_tmac=11.994, svdf_filter=116.476)

#: estimated Cortex-M7 cycles per counted instruction over the calibration set of KERNELS_CYCLES
#: before the 2x2 MatMul's dual-issue order (103.3 M estimated cycles / 99.9 M instructions; the
#: refit's bench/calibration_m7_cycles.json says 0.768 since: the MatMul's own gain, priced by its
#: fitted mm_step); prices in cycles the coefficients no calibration layer exercises (module
#: docstring "Units"), whose kernels' code the reorder did not touch
CYCLES_PER_INSTRUCTION = 1.034
#: the coefficients of KERNELS_CYCLES fitted on estimated cycles (bench/calibrate_m7.py --unit
#: cycles: the same layers and method as KERNELS_INSTRUCTIONS' fit, each layer's estimated cycles
#: instead of its counted instructions); refit after the 2x2 MatMul's dual-issue order
#: (tw_pulp_matmul_arm.h: llvm-mca 20 -> 12 cycles a step): mm_step 21.911 -> 13.963, the others
#: within a few %; the depthwise's refit alone (bench/calibrate_m7.py --only dw_out,dw_step,
#: dw_gather,dw_item, the others held) after its 3x3 loop read the weights through a pointer and
#: took its ring rows without the rows[] loop: dw_step 0.029 -> 0.113, dw_gather 10.097 ->
#: 10.314, dw_item 214.263 -> 174.991; fcw_step, fcw_neuron fitted alone likewise on the dense layers of
#: ad_autoencoder and kws_dscnn (bench/calibration_m7_fcw_cycles.json: fc 1.002; flash line
#: fills of the twice larger weights make a step 6.75 estimated cycles against the int8 form's
#: 7.46); cw_step, cw_block, cw_unpack, cw_row and cw_flash (the widened conv; cw_flash per
#: flash line of weights above the 16 kB D-cache read again for each quad of pixels) fitted
#: alone likewise on the convs of ic_resnet8, kws_dscnn and vww_mobilenet_v1_025
#: (bench/calibration_m7_cw_cycles.json: the widened layers 0.89-1.16 of the prediction, the
#: 1.16 vww's 64x128 1x1 whose 16 kB of weights and words just fill the D-cache; a step 3.67
#: estimated cycles against the int8 2x2's 13.96 for twice the MACs: 6.98 a half; a line fill
#: 16.6, the timing model's 10 and the misses it makes beyond the weights' own)
FITTED_CYCLES = {"mm_step": 13.963, "mm_block": 0.0, "im2col_byte": 0.0, "im2col_row": 76.858,
                 "requant_tflite": 25.363, "dw_out": 0.0, "dw_step": 0.113, "dw_gather": 10.314,
                 "dw_item": 174.991, "fc_step": 7.464, "fc_neuron": 11.808,
                 "fcw_step": 6.753, "fcw_neuron": 30.547, "cw_step": 3.669, "cw_block": 0.0,
                 "cw_unpack": 1.568, "cw_row": 24.18, "cw_flash": 16.584, "add_elem": 10.753,
                 "add_table": 32.468, "pool_step": 18.085, "pool_out": 52.308,
                 "other_elem": 186.583, "other_call": 682.756, "tile": 0.0}
#: the coefficients KERNELS_INSTRUCTIONS sets to the untiled kernels' per element / per call
#: (no own fit on the Cortex-M7): the same in cycles
UNTILED_AS = {"lut_elem": "other_elem", "bcast_elem": "other_elem", "concat_elem": "other_elem",
              "quant_elem": "other_elem", "lut_call": "other_call", "bcast_call": "other_call",
              "transpose_call": "other_call"}
#: what the target's cost model's cycles are (Target.cycles_unit)
CYCLES_UNIT = "cycles (Cortex-M7 model, estimated)"


def in_cycles(k: PulpKernels, name: str = "pulp-kernels-m7-cycles",
              per_instruction: float = CYCLES_PER_INSTRUCTION,
              fitted: dict[str, float] = FITTED_CYCLES) -> PulpKernels:
    """`k`'s coefficients times `per_instruction`, then `fitted`'s (and UNTILED_AS'): a core's
    cycle model from the instruction model and the coefficients fitted on its estimated cycles
    (stm32l4r5 builds the Cortex-M4's this way)."""
    scaled = {f.name: getattr(k, f.name) * per_instruction for f in fields(k)
              if type(getattr(k, f.name)) is float}
    untiled = {c: fitted[of] for c, of in UNTILED_AS.items()}
    return replace(k, name=name, **{**scaled, **fitted, **untiled})


#: the pulp kernels' model in estimated Cortex-M7 cycles (module docstring "Units"): the target's
KERNELS_CYCLES = in_cycles(KERNELS_INSTRUCTIONS)
#: TFLite's integer LSTM runs the pulp family's lstm_cluster_s8 here (bindings/pulp/lstm.py),
#: priced by bindings/pulp/lstm_cost.py ARM
#: the STM32H743's memory regions (module docstring: DS12110 §3.5, RM0433 §2.3–2.4)
FLASH = Region("flash", 0x08000000, 2048 * KB, backs="flash", ld="FLASH",
               note="two 1 MB banks: code, constants, the embedded inputs")
DTCM = Region("DTCM", 0x20000000, 128 * KB, backs="L1", ld="DTCM",
              note="the L1 arena and the stack, zero wait states")
AXI_SRAM = Region("AXI SRAM", 0x24000000, 512 * KB, backs="L2", ld="AXI_SRAM",
                  note="D1: the L2 arena (activations)")
SRAM1_3 = Region("SRAM1-3", 0x30000000, (128 + 128 + 32) * KB, backs="data", ld="SRAM1_3",
                 note="D2: SRAM1 128 kB, SRAM2 128 kB, SRAM3 32 kB; the firmware's .data/.bss")
REGIONS = (
    FLASH,
    Region("ITCM", 0x00000000, 64 * KB, ld="ITCM", note="unused by the firmware"),
    DTCM, AXI_SRAM, SRAM1_3,
    Region("SRAM4", 0x38000000, 64 * KB, ld="SRAM4", note="D3: unused by the firmware"),
    Region("backup SRAM", 0x38800000, 4 * KB, ld="BKPSRAM", note="unused by the firmware"),
)
#: the core's FPU (gcc's -mfpu name): the Cortex-M7 of the STM32H743 has the double-precision
#: FPv5-D16 (ST datasheet DS12110, features: "Cortex-M7 core with double-precision FPU"), so the
#: firmware is built hard-float (platforms/cortex_m.py cm_arch) and the start-up turns it on (tw_fw.c)
FPU = "fpv5-d16"
#: DTCM bytes of the firmware's stack (sections.ld STACK_BYTES, written from this figure)
STACK = 8 * KB

#: instructions per layer outside its kernel (the fork, the layer's argument set-up)
LAYER_OVERHEAD_INSTRUCTIONS = 523.0
#: the same in estimated cycles (bench/calibration_m7_cycles.json, per_layer)
LAYER_OVERHEAD_CYCLES = 276.5

#: the unit of KERNELS_INSTRUCTIONS' figures, as reports label them
INSTRUCTIONS_UNIT = "instructions (Cortex-M7, counted)"


def dtcm(per_instruction: float) -> Memory:
    """The DTCM level; its copy figures (fitted on counted instructions, module docstring) times
    `per_instruction` (1 in instructions, CYCLES_PER_INSTRUCTION in cycles)."""
    return Memory("L1", DTCM.size, reserved=STACK, bandwidth=0.6533 / per_instruction,
                  dma_setup_cycles=0, dma_chunk_cycles=27.48 * per_instruction,
                  dma_issue_cycles=327.6 * per_instruction, dma_async=False,
                  note="DTCM: kernel scratch and the stack (layers compute in place)")


def _cpu(kernels: PulpKernels, layer_overhead: float) -> Module:
    return Module("cpu", cores=1, bindings=arm_bindings(
        kernels, CYCLES_PER_INSTRUCTION if kernels.name == KERNELS_CYCLES.name else None),
        memory="L2",
                  layer_overhead_cycles=layer_overhead, weights_from="flash",
                  note="Cortex-M7 (DSP extension), the SIMD kernels")


def arm_bindings(kernels: PulpKernels, per_instruction: float | None) -> tuple[Binding, ...]:
    """The pulp family built for Arm priced by `kernels`; in cycles (`per_instruction` given:
    KERNELS_CYCLES' structure), the bindings priced by models of their own in instructions
    (LSTM, attention, the MatMul's activations: the same model whatever `kernels` is) times
    `per_instruction` (CYCLES_PER_INSTRUCTION on the Cortex-M7)."""
    own = pulp.bindings(kernels, arm=True, host=True)
    if per_instruction is None:
        return own
    counted = {(b.key, b.name): b.cost for b in pulp.bindings(KERNELS_INSTRUCTIONS, arm=True,
                                                              host=True)}
    return tuple(replace(b, cost=Scaled(b.cost, per_instruction))
                 if counted.get((b.key, b.name)) == b.cost else b for b in own)


def instructions(target: Target) -> Target:
    """`target` (stm32h7, with its overrides) priced in executed instructions: KERNELS_INSTRUCTIONS,
    the DTCM's copies and the layer overhead in instructions (Target.instruction_model)."""
    l1 = target.memory("L1")
    level = replace(dtcm(1.0), size=l1.size, reserved=l1.reserved)
    return replace(target, memories=tuple(level if m.name == "L1" else m for m in target.memories),
                   modules=(_cpu(KERNELS_INSTRUCTIONS, LAYER_OVERHEAD_INSTRUCTIONS),),
                   cycles_unit=INSTRUCTIONS_UNIT, instruction_model=None)


TARGET = Target(
    name="stm32h7",
    description="STM32H743: Cortex-M7 @480 MHz, 128 kB DTCM, 512 kB AXI SRAM, 2 MB flash",
    clock_mhz=480.0,
    max_clock_mhz=480.0,
    memories=(
        dtcm(CYCLES_PER_INSTRUCTION),
        Memory("L2", AXI_SRAM.size, bandwidth=2.0, dma_setup_cycles=30, dma_async=True,
               roles=frozenset({"act", "tile"}), note="AXI SRAM: activations"),
        Memory("flash", FLASH.size, roles=frozenset({"weight"}), read_only=True, in_place=True,
               note="internal flash: const weights, read in place by the kernels"),
    ),
    modules=(_cpu(KERNELS_CYCLES, LAYER_OVERHEAD_CYCLES),),
    sources=("seed 001 §6.1", "seed 004 §3.4.1", "ST DS12110 §3.5 (memories)",
             "ST RM0433 §2.3-2.4 (memory map, embedded SRAM)"),
    platform=cortex_m_platform(FPU),
    regions=REGIONS,
    cycles_unit=CYCLES_UNIT,
    instruction_model=instructions,
)


def without_fpu(target: Target = TARGET) -> Target:
    """`target` with its core priced as if it had no FPU: its onnx-mode weighted layers take the
    integer forms (onnx24 where its bound holds) instead of the FPU's onnx_fpu — how the integer
    kernels' Arm costs are measured and tested (bench/calibrate_onnx_requant.py, tests); the
    firmware itself is the same (hard-float ABI). In `target`'s unit (cycles, or instructions
    for `instructions(...)`'s)."""
    in_instructions = target.cycles_unit == INSTRUCTIONS_UNIT
    base, overhead = ((KERNELS_INSTRUCTIONS, LAYER_OVERHEAD_INSTRUCTIONS) if in_instructions
                      else (KERNELS_CYCLES, LAYER_OVERHEAD_CYCLES))
    cpu = _cpu(replace(base, requant_onnx_fpu=None), overhead)
    return replace(target, modules=(cpu,),
                   instruction_model=None if in_instructions else
                   (lambda t: without_fpu(instructions(t))))
