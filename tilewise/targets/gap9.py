"""GreenWaves GAP9: 8-core cluster (the pulp kernels), a host core module ("cpu") and NE16.

Figures and where they come from (seed 003 §V–VI, notes/match-cost-model.md):
- clock 260 MHz: MATCH's measurements on GAP9 silicon (seed 003 Table III). Maximum 370 MHz
  (--clock beyond it needs --hypothetical): GreenWaves' MLPerf Tiny v1.0 GAP9 results at 370 MHz
  (notes/anchors.md), the chip's top rated clock.
- L1 128 kB, of which MATCH uses 90 kB for tiles → 38 kB reserved; L2 1.5 MB, 1408 kB usable
  (MATCH's figure, seed 003 §V): the 128 kB reserved are the L2 the GAP SDK's program takes for
  code and runtime (the SDK links code, constants and data into L2 as on GAP8, gap8.py) — more
  than gap8's 96 kB: the generated network's code measured on the same cores is at most 47.7 kB
  on the MLPerf Tiny models (`analyze --code-size --target pulp-open`, -O2), the rest is left to
  GAP9's larger PMSIS runtime (not measured here: the GAP SDK is not installed).
- L2↔L1 cluster DMA: 27 cycles per contiguous chunk (seed 003 §V-B), 8 B/cycle. Per transfer
  920 cycles on the DMA side: MATCH's GAP9 cluster model charges every operand transfer
  550 cycles of DMA API plus 370 of layer-template set-up (eml-eda/match,
  match/cost_model/examples/pulp_cluster.py, API_OVERHEAD / MATCH_SETUP_OVERHEAD) and overlaps
  it with compute like the transfer itself (seed 003 §V-B: L = max(L_ops, L_mem)); 20 core
  cycles to program a transfer as on GAP8 (assumed). tilewise's PMSIS projects on GAP9 are
  assumed to pay the same (not measured: GVSoC here models pulp-open).
- cluster: 8 RI5CY-class cores (XpulpV2) running tilewise's pulp kernel family (bindings/pulp),
  priced by its model fitted on GVSoC's pulp-open cluster (bindings/pulp/cost.py) — the same
  kernels and ISA as gap8 and pulp-open; GAP9's cores are assumed to take the same cycles.
- MATCH_TARGET: the same chip with the cluster priced as MATCH's public GAP9 model prices
  PULP-NN (the peer model bench table 5a holds against GAP9 silicon): the GAP8 calibration
  (seed 004) for dense layers; depthwise as pulp_nn_depthwise_generic on CHW tiles (DORY's GAP9
  layer template; bindings/portable/cost.py `dw_flat`): about 66 cycles per 3×3 output per core instead
  of the 21 of DORY's GAP8 HWC kernel, its input tiles reordered HWC → CHW by the cluster DMA,
  one 2-D transfer per channel with 1-byte rows (DORY's GAP9 dory_dma.c,
  dma_transfer_hwc_to_chw; MATCH's GAP9 model moves them at 1 byte per cycle): the depthwise
  bindings' input DMA rate is 1 B/cycle instead of 8 (`Binding.x_dma_bytes_per_cycle`). Only the
  cycles change; bytes, transfers and chunks are counted as for any input.
- per layer 1.3k cycles: the cold instruction cache of a kernel call, fetched from L2 — seed 004
  Table 3.2 counts 1.3k I$ stall cycles for one call of the conv kernel on one core (GAP8's
  cluster; GAP9's is assumed alike). Each layer calls its own kernel code, so every layer pays it
  once (`Module.layer_overhead_cycles`).
- cpu: the host core's module — GAP9's fabric controller in MATCH's terms (seed 003 Table IV's
  "CPU"). The generated PMSIS code runs the network in a cluster task (tw_hal_pulp.c), so a
  "cpu" layer is cluster core 0 alone on the L2 tensors, untiled, no DMA: every layer the
  cluster takes and the host-only ones (bindings/portable/host.py), the pulp kernels priced for
  one core from L2 by the model fitted on pulp-open's GVSoC (targets/pulp_open.py HOST: per
  kind ~1.2× (depthwise) to ~9.5× (dense) the L1 figures), assumed to hold for GAP9 (not
  measured); the same 1.3k cold-I$ cycles per layer as the cluster. MATCH's CPU fallback is TVM
  code (236 ms on MobileNet, seed 003 Table IV), far slower than this kernel model.
- L3: external octo-SPI RAM, assumed 8 MB at 200 MB/s like GAP8's HyperRAM.
- ablations (`analyze --ablation`): seed 003 Table IV's module sets, the host core named "cpu".
- ne16: the NE16 accelerator (bindings/ne16) on the cluster's L1 tiles: conv 3×3 / 1×1,
  depthwise 3×3 and dense with 16-multiple input channels; the job priced by the NE16 model fitted
  on GVSoC's NE16 (the same IP, bindings/ne16/cost.py `Gvsoc`; MATCH's model is MATCH_NE16 there),
  the cluster's u8 conversion and requantization by their GVSoC figures, and the cluster's
  per-job and per-tile work (`job`, `tile`) as measured on pulp-open-ne16 with the same firmware
  (bindings/ne16/cost.py GVSOC_CLUSTER: 803.6 and 1559.7 cycles; the assumed 400 and 1324 they
  replace were below them). Assumed, not measured: that GAP9's cluster runs that firmware in the
  same cycles, and for the *_u8in twins (a u8 input read in place; pulp-open-ne16 runs none) that
  core 0's set-up of a tile's job, which the conversion hides on pulp-open-ne16, costs no more
  than the fitted `tile` there. With these figures gap9 predicts the MLPerf Tiny TFLite files at
  1.53 / 1.16 / 3.46 / 0.373 ms, 0.713 / 0.741 / 0.700 / 0.690 of MATCH's GAP9 silicon (bench
  table 8); the host HAL runs jobs through the bit-exact functional model.
"""

from dataclasses import replace

from ..bindings import ne16, portable, pulp
from ..bindings.ne16.cost import GVSOC_CLUSTER
from ..bindings.portable.cost import PulpNN
from ..bindings.pulp.cost import PulpKernels
from ..platforms.gap_sdk import GAP_SDK
from .base import KB, MB, Memory, Module, Target
from .pulp_open import HOST

#: PULP-NN as MATCH models it on GAP9's cluster: per output 2·(5 + 10) loop set-up + 9 requant,
#: (2·3 + 1) per SIMD step of 4 taps, (2·2 + 2) per leftover tap, 1 cycle per im2col byte
KERNEL = replace(PulpNN(), dw_flat=True, dw_simd=7.0, dw_tap=6.0, dw_out=39.0, dw_gather=1.0)

TARGET = Target(
    name="gap9",
    description="GreenWaves GAP9: 8-core cluster, host core (cpu) and NE16, 128 kB L1, 1.5 MB L2",
    clock_mhz=260.0,
    max_clock_mhz=370.0,
    memories=(
        Memory("L1", 128 * KB, reserved=38 * KB, bandwidth=8.0, dma_setup_cycles=920,
               dma_chunk_cycles=27, dma_issue_cycles=20, dma_async=True,
               note="cluster TCDM; MATCH uses 90 kB"),
        Memory("L2", 1536 * KB, reserved=128 * KB, bandwidth_mb_s=200.0, dma_setup_cycles=100,
               dma_async=True, pj_per_byte=50.0, note="1408 kB usable (MATCH)"),
        Memory("L3", 8 * MB, note="external RAM (assumed 8 MB)"),
    ),
    modules=(
        Module("cluster", cores=8, bindings=pulp.bindings(PulpKernels()),
               memory="L1", scalable=True, layer_overhead_cycles=1300.0,
               note="8-core cluster, tilewise pulp kernels"),
        Module("cpu", cores=1, bindings=pulp.bindings(HOST, host=True), memory="L2",
               layer_overhead_cycles=1300.0,
               note="host core: cluster core 0 alone on the L2 tensors (the FC's role)"),
        Module("ne16", cores=8, bindings=ne16.bindings(GVSOC_CLUSTER), memory="L1",
               layer_overhead_cycles=1300.0,
               note="NE16 accelerator on the cluster's L1; the cluster converts and requantizes"),
    ),
    sources=("seed 003 §V-VI, Tables III-IV", "notes/match-cost-model.md", "seed 004 ch. 3, Table 3.2",
             "eml-eda/match match/cost_model/examples/pulp_cluster.py (GAP9 cluster model)"),
    platform=GAP_SDK,
    shift_requant=True,
    # seed 003 Table IV's columns: the host core alone, with the cluster, with NE16, all three
    ablations=(("CPU only", ("cpu",)), ("cluster + CPU", ("cluster", "cpu")),
               ("NE16 + CPU", ("ne16", "cpu")), ("all", ("cluster", "cpu", "ne16"))),
)

#: gap9 with its cluster priced as MATCH's GAP9 model prices PULP-NN (module docstring): the peer
#: model of bench table 5a, not a target of the registry
MATCH_TARGET = replace(TARGET, modules=(
    replace(TARGET.module("cluster"),
            bindings=portable.bindings(KERNEL, depthwise_input_bytes_per_cycle=1.0),
            note="8-core cluster, PULP-NN as MATCH models it"),
    TARGET.module("cpu")))
