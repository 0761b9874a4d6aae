"""pulp-open: the open PULP platform — an 8-core RI5CY cluster with a 64 kB L1 and its DMA, a 1.5 MB
L2 — as GVSoC models it (../shared/tools/gvsoc, notes/pulp-open.md): the chip tilewise's PULP cost
model is measured on. Its firmware is bare metal (platforms/pulp_open.py: crt0, linker script,
cluster start, a DMA HAL on the mchan registers, fork and barrier in L1; codegen/c/firmware).

Figures and where they come from:
- cluster: 8 RI5CY cores, rv32imc + XpulpV2 (../shared/tools/gvsoc README); cycles are what
  GVSoC counts (mcycle), the clock only converts them to time: 100 MHz assumed. The GVSoC
  README gives no clock; maximum 660 MHz (--clock beyond it needs --hypothetical): the PULP
  cluster's post-layout maximum in the typical 0.8 V corner (seed 004 Table 4.2).
- L1: 64 kB TCDM in 16 banks at 0x10000000 (README memory map); reserved: the 8 cluster stacks
  of 1.5 kB each (TW_FW_STACK; measured stack peaks of generated code were below 1 kB,
  notes/pulp-open.md) and 1 kB of HAL state (fork/barrier flags, DMA ring), so 51 kB free.
- L2: 1.5 MB shared banks at 0x1C010000; 192 kB reserved for code, the FC stack and the
  firmware's buffers, so 1.3 MB free for the memory plan (activations and constants).
- L2↔L1 DMA (mchan v7, the firmware's HAL): fitted on GVSoC with the kernels' model
  (bench/calibrate_pulp.py, bench/calibration_pulp.json: whole-layer cycles of the four MLPerf
  Tiny models, the example and seed 004's layer on 8 and 1 cores at two L1 sizes) — 644 core
  cycles to program a transfer (core 0: the HAL's command words and its 2-D/3-D split), 65 cycles
  of set-up and 9.8 per contiguous chunk on the DMA side, 14.5 B/cycle; 473 cycles per layer (the
  fork, the layer's first loads and last stores around the tile loop). A layer whose function the
  network's core calls directly (the portable family's whole functions: no fork, no tile loop)
  costs 202 instead (call_overhead_cycles: the reshapes measured on GVSoC,
  bench/calibrate_untiled.py). No L3 in this model.
- kernels: the pulp family (bindings/pulp: XpulpV2) priced by its own model, fitted on GVSoC
  (bindings/pulp/cost.py, bench/calibrate_pulp.py).
- cpu: the host core's module — on the chip the fabric controller's role. In the generated
  firmware the FC only boots the cluster and sleeps (crt0.S), and the network runs on cluster
  core 0: a "cpu" layer is core 0 alone (a fork of one core, or the binding's layer function
  called directly by tw_network_run) reading and writing the L2 tensors in place, untiled, no
  DMA; only a conv's im2col scratch is in L1. It takes every layer the cluster does and the
  host-only ones (bindings/portable/host.py: quantize, transpose, concatenation of any
  inputs), priced by the pulp kernels' model for one core from L2 (HOST below, fitted on
  GVSoC: bench/calibrate_cpu.py; gap8 and gap9 take it too); the same 473 cycles per layer as the cluster
  (its fork waits for every worker's acknowledgement, tw_hal_pulp_open.c).
- cluster-l2: the cluster's 8 cores on the L2 tensors, untiled, for fused chains only
  (Module.chains_only; pipeline.py `_untiled`): a chain's band is one fork per member, the
  member's rows split over the cores as the kernels split a tile (pixel pairs x channel groups,
  tw_pulp_share), each core reading and writing L2 — priced by CLUSTER_L2 (the kernels' model
  with factors for the loads from L2 fitted on the chains' band calls on GVSoC) on 8 cores, each
  band call paying the 473-cycle fork of a layer.
"""

from dataclasses import replace

from ..bindings import pulp
from ..bindings.pulp.cost import PulpKernels
from ..platforms.pulp_open import PULP_OPEN
from .base import KB, Memory, Module, Target

#: bytes of each cluster core's stack in L1 (the firmware's TW_FW_STACK, the platform's figure)
STACK = PULP_OPEN.stack_bytes
#: bytes of HAL state in L1 (fork/barrier flags, the DMA command ring, counters)
HAL_STATE = 1024

#: one RI5CY core running the pulp kernels on the L2 tensors (a host core's module, "cpu": module
#: docstring), fitted on GVSoC (bench/calibrate_cpu.py, bench/calibration_cpu.json: every layer of
#: kws_dscnn, ad_autoencoder, the example and four host-op models on the cpu alone; kws_dscnn and
#: ad_autoencoder within 4%, 3×3 convs of a few channels over-predicted by up to 1.6×, 1×1
#: convs 0.9×). Per kind: a load from L2 costs ~14 cycles more than from L1, which weighs most
#: on dense (two loads per 4 MACs) and conv (three per pixel step), least on depthwise (bytes
#: gathered once into an L1 ring); the pulp add is in none of those networks: 1, assumed
#: The integer exports' 16x8 kernels and table add on the L2 tensors are fitted as they run there
#: (bench/calibrate_int.py, pulp-open with only its cpu module), not scaled: their scalar loads
#: weigh differently from the SIMD kernels' (16x8 MAC 40.6 cycles from L2, 12.6 from L1).
HOST = replace(PulpKernels(), name="pulp-kernels-l2",
               from_l2=(("conv", 4.817), ("dwconv", 1.204), ("fc", 9.518), ("gap", 1.333),
                        ("pool", 1.848)),
               # tw_transpose per element, per row of the output's innermost dimension, per call:
               # bench/calibrate_untiled.py (slices, calibrate_cpu's transposes, Deeploy's Slice)
               transpose_elem=34.161, transpose_row=70.317, transpose_call=254.01,
               concat_elem=7.48, quant_elem=189.67,
               s16_mac=40.556, s16_tap=39.862, s16_dw_tap=84.892, s16_out=103.872, tadd_elem=63.289,
               tadd_entry=4.178, s16_rq_tflite=44.856, s16_rq_real=1224.81, s16_pool_tap=26.877,
               s16_pool_out=40.064,
               # no 16x8 add ran on the host core alone: the cluster's s16_add_elem, assumed
               # no export's 8-bit div layer runs on the host core alone: the cluster's per-MAC
               # cost scaled as the 16x8 kernels' from L2 (36.991 / 12.87), an assumption
               s8_mac=16.7,
               # Deeploy's row operators on the L2 tensors (tw_int.h), per element, the row's square
               # root / division in it: GVSoC on the host core alone, Deeploy's ICCT, microLlama1 and
               # Softmax / RMSNorm / Attention kernels (bench/calibrate_host_rows.py); the cluster
               # runs them along the last axis with its own kernels (bindings/pulp/rows.py)
               int_ln_elem=428.671, int_rms_elem=331.793, int_smx_elem=980.409, int_ita_elem=165.231,
               int_gelu_elem=93.292)

#: the cluster's 8 cores on the L2 tensors (cluster-l2: fused chains' members), the kernels' model
#: with per-kind factors of its own for the loads from L2, fitted on GVSoC on the chains' band
#: calls (bench/calibrate_chains_pulp.py, bench/calibration_chains_pulp.json: least squares on
#: the relative error of 12 chains' measured cycles — MobileNetV2-96's first five stages (6
#: chains), MobileNetV2-64's first three (4) and ic_resnet8's two, bench/geometries.py; residuals
#: -6.8% .. +8.2%): 3x3 conv 4.918, 1x1 conv 4.633 (it reads its input from L2 in the MatMul
#: loop), depthwise 5.529 — eight cores reading L2 at once, where HOST's one core measured 4.817
#: / 1.204. The others as HOST's (fc, pools: not in a chain).
CLUSTER_L2 = replace(HOST, name="pulp-kernels-l2-cluster",
                     from_l2=(("conv", 4.918), ("conv1x1", 4.633), ("dwconv", 5.529),
                              *((k, f) for k, f in HOST.from_l2 if k not in ("conv", "dwconv"))))

#: cycles of a layer the network's core calls directly (Module.call_overhead_cycles: the
#: portable family's whole functions, no fork): the reshapes' measured cycles on GVSoC (a view, its
#: function copies nothing: 170-206, 260 as a network's first layer), bench/calibrate_untiled.py
CALL_OVERHEAD = 202.3

TARGET = Target(
    name="pulp-open",
    description="PULP open platform on GVSoC: 8-core RI5CY cluster, 64 kB L1, 1.5 MB L2",
    clock_mhz=100.0,
    max_clock_mhz=660.0,
    memories=(
        Memory("L1", 64 * KB, reserved=8 * STACK + HAL_STATE, bandwidth=14.5, dma_setup_cycles=65,
               dma_chunk_cycles=9.8, dma_issue_cycles=644, dma_async=True,
               note="TCDM; 8 stacks of 1.5 kB and the HAL state reserved"),
        Memory("L2", 1536 * KB, reserved=192 * KB, note="shared banks; code and stacks reserved"),
    ),
    modules=(
        Module("cluster", cores=8, bindings=pulp.bindings(PulpKernels()), memory="L1",
               scalable=True, layer_overhead_cycles=473.0, call_overhead_cycles=CALL_OVERHEAD,
               note="8x RI5CY XpulpV2"),
        Module("cpu", cores=1, bindings=pulp.bindings(HOST, host=True), memory="L2",
               layer_overhead_cycles=473.0, call_overhead_cycles=CALL_OVERHEAD,
               note="host core: cluster core 0 alone on the L2 tensors (the FC's role)"),
        Module("cluster-l2", cores=8, bindings=pulp.bindings(CLUSTER_L2), memory="L2", scalable=True,
               layer_overhead_cycles=473.0, call_overhead_cycles=CALL_OVERHEAD, chains_only=True,
               note="fused chains: the 8 cores on the L2 tensors, each band's rows split"),
    ),
    sources=("../shared/tools/gvsoc README (platform facts)", "notes/pulp-open.md",
             "seed 001 §3.2 (DMA)", "seed 004 ch. 3"),
    platform=PULP_OPEN,
    shift_requant=True,
    # tw_network_run's own cycles: per run, per layer step, per byte of its outputs copied out of
    # the arena (GVSoC, bench/calibrate_untiled.py: every network's cycles outside its layers
    # within 10%)
    network_call_cycles=622.1, network_step_cycles=55.76, network_copy_cycles_per_byte=7.6,
)
