"""GreenWaves GAP9: 8-core cluster (PULP-NN) and the fabric-controller core; NE16 comes later.

Figures and where they come from (seed 003 §V–VI, notes/match-cost-model.md):
- clock 260 MHz: MATCH's measurements on GAP9 silicon (seed 003 Table III).
- L1 128 kB, of which MATCH uses 90 kB for tiles → 38 kB reserved; L2 1.5 MB, 1408 kB usable.
- L2↔L1 cluster DMA: 27 cycles per contiguous chunk (seed 003 §V-B); 8 B/cycle, 8 cycles setup
  and 20 core cycles to program a transfer as on GAP8 (assumed).
- cluster: 8 RI5CY-class cores running PULP-NN; the GAP8 calibration (seed 004) is reused.
- fc: the fabric-controller core running the same kernels on one core straight from L2, with an
  assumed 1.5× penalty for L2 access latency (the cluster reads single-cycle TCDM). MATCH's CPU
  fallback is TVM code (236 ms on MobileNet, seed 003 Table IV), far slower than this kernel model.
- L3: external octo-SPI RAM, assumed 8 MB at 200 MB/s like GAP8's HyperRAM.
"""

from dataclasses import replace

from .base import KB, MB, Memory, Module, Target
from .gap8 import KINDS
from .kernels import PulpNN

TARGET = Target(
    name="gap9",
    description="GreenWaves GAP9: 8-core cluster + FC core, 128 kB L1, 1.5 MB L2",
    clock_mhz=260.0,
    memories=(
        Memory("L1", 128 * KB, reserved=38 * KB, bandwidth=8.0, dma_setup_cycles=8,
               dma_chunk_cycles=27, dma_issue_cycles=20, dma_async=True,
               note="cluster TCDM; MATCH uses 90 kB"),
        Memory("L2", 1536 * KB, reserved=128 * KB, bandwidth_mb_s=200.0, dma_setup_cycles=100,
               dma_async=True, pj_per_byte=50.0, note="1408 kB usable (MATCH)"),
        Memory("L3", 8 * MB, note="external RAM (assumed 8 MB)"),
    ),
    modules=(
        Module("cluster", cores=8, kinds=KINDS, kernel=PulpNN(), memory="L1", scalable=True,
               note="8-core cluster, PULP-NN"),
        Module("fc", cores=1, kinds=KINDS, kernel=replace(PulpNN(), scale=1.5), memory="L2",
               note="fabric controller core computing from L2"),
    ),
    sources=("seed 003 §V-VI, Tables III-IV", "notes/match-cost-model.md", "seed 004 ch. 3"),
)
