"""STMicroelectronics STM32H743: one Cortex-M7 at 480 MHz, DTCM as L1, AXI SRAM as L2, flash.

Figures and where they come from:
- 480 MHz, also the maximum (--clock beyond it needs --hypothetical): the STM32H743's rated top
  clock (ST datasheet DS12110; seed 004 ch. 3 compares against it "@ 480 MHz"); 1× Cortex-M7 with a 128 kB zero-wait-state DTCM scratchpad (seed 001 §6.1, where DORY
  manages the DTCM by DMA exactly like GAP8's L1); 8 kB of it assumed reserved for the stack.
- L2: 1 MB SRAM (DESIGN.md) for activations; 2 MB internal flash, read-only: the const weights stay
  there (the Cortex-M reads flash in place and its DMA moves weight tiles from it), never copied
  to RAM and not counted in it. No external RAM: a network whose activations do not fit the SRAM
  does not fit this part.
- Units: the model counts executed instructions and takes them as cycles (one per cycle): no
  Cortex-M7 timing model is available offline (dual issue and flash wait states are not
  modelled), and instructions are what is measured (`validate --on count`, notes/cortex-m.md).
- The core computes in place: every layer runs whole on its tensors in the AXI SRAM (the module's
  memory is L2, schedule/placement.py `computes_in_place`), the weights and per-channel
  constants are read where they are in flash (Memory.in_place), and the DTCM holds only the
  kernels' scratch (im2col rows, depthwise rows, add tables) and the stack — no tile is copied,
  so RAM = the L2 activation plan + the scratch. The L1 (DTCM) copy figures below are those a
  module tiling into the DTCM would pay (fitted on counted instructions when the built-in one
  did: 328 instructions per copy call, 27.5 per contiguous run, 1.53 per byte).
- kernels: the pulp family's C (bindings/pulp) built for Arm (ARMv7E-M DSP extension) — conv and
  1×1 conv unpack each pixel's column once to int16 pairs and run a 2×2 MatMul of `smlad` in
  Thumb-2's 14 registers (tw_pulp_matmul_arm.h), depthwise takes four channels per pixel from a
  ring of unpacked rows (tw_pulp_depthwise.c), four outputs requantized into one word; elsewhere
  tw_pulp_isa.h maps the 4-lane int8 dot product to two `smlad` on `sxtb16` halves — with the
  portable family for what it does not rewrite; priced by the pulp kernels' model (its `arm`
  structure) with coefficients in instructions (KERNELS). The CMSIS-NN model (targets/kernels.py)
  stays as the peer model of seed 004's GAP8-vs-STM32H7 ratio (tests).
- the host-only kernels (bindings/portable/host.py: quantize, transpose, concatenation of any
  inputs) run on the same core; their instructions per element are assumed the untiled ops'
  (other_elem), not counted separately — but for the transpose (and the slice, the same
  tw_transpose), counted with the integer exports' kernels (16x8 conv / depthwise / dense, the
  table add, tw_int.h's, the reshape's copy: targets/pulp_kernels.py "Integer exports") by
  bench/calibrate_int.py.
- firmware (Target.sdk "cortex-m", codegen/c/firmware/cortex_m): start-up, linker scripts for an
  STM32H7 (flash, DTCM, AXI SRAM) and for QEMU's mps2-an500, the single-core HAL (copies done by
  the core), semihosting output; `validate --on qemu` runs it.
"""

from dataclasses import replace

from ..bindings import pulp
from .base import KB, MB, Memory, Module, Target
from .pulp_kernels import PulpKernels

#: the pulp kernels' model in executed instructions on the Cortex-M7, fitted on counted
#: instructions (bench/calibrate_m7.py, bench/calibration_m7.json: 152 layers of the four MLPerf
#: Tiny models, the example and seed 004's layer; every network within ±4%)
KERNELS = replace(PulpKernels(), name="pulp-kernels-m7", mm_step=18.808, mm_block=0.0, mm_tile=0.5,
                  im2col_byte=0.0, im2col_row=115.747, requant_tflite=29.913, requant_shift=12.0,
                  requant_onnx=328.296, psum=2.36, dw_out=0.0, dw_step=0.417, dw_gather=12.311,
                  dw_item=252.631, fc_step=7.235, fc_neuron=0.414, add_elem=12.25,
                  add_table=36.354, add_onnx=672.399, mul_elem=35.0, pool_step=25.788, pool_out=63.477,
                  gap_pixel=11.029, gap_chan=0.0, other_elem=184.546, other_call=425.13, tile=0.0,
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
                  int_red_in=37.491, int_red_out=64.919, copy_byte=0.514, copy_call=0.0)
#: instructions per layer outside its kernel (the fork, the layer's argument set-up)
LAYER_OVERHEAD = 523.0

TARGET = Target(
    name="stm32h7",
    description="STM32H743: Cortex-M7 @480 MHz, 128 kB DTCM, 1 MB SRAM, 2 MB flash",
    clock_mhz=480.0,
    max_clock_mhz=480.0,
    memories=(
        Memory("L1", 128 * KB, reserved=8 * KB, bandwidth=0.6533, dma_setup_cycles=0,
               dma_chunk_cycles=27.48, dma_issue_cycles=327.6, dma_async=False,
               note="DTCM: kernel scratch and the stack (layers compute in place)"),
        Memory("L2", 1 * MB, bandwidth=2.0, dma_setup_cycles=30, dma_async=True,
               roles=frozenset({"act", "tile"}), note="AXI SRAM: activations"),
        Memory("flash", 2 * MB, roles=frozenset({"weight"}), read_only=True, in_place=True,
               note="internal flash: const weights, read in place by the kernels"),
    ),
    modules=(
        Module("cpu", cores=1, bindings=pulp.bindings(KERNELS, arm=True, host=True), memory="L2",
               layer_overhead_cycles=LAYER_OVERHEAD,
               weights_from="flash", note="Cortex-M7 (DSP extension), the SIMD kernels"),
    ),
    sources=("seed 001 §6.1", "seed 004 §3.4.1"),
    sdk="cortex-m",
)
