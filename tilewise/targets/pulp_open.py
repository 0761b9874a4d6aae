"""pulp-open: the open PULP platform — an 8-core RI5CY cluster with a 64 kB L1 and its DMA, a 1.5 MB
L2 — as GVSoC models it (../shared/tools/gvsoc, notes/pulp-open.md): the chip tilewise's PULP cost
model is measured on. Its firmware is bare metal (Target.sdk "pulp-open": crt0, linker script,
cluster start, a DMA HAL on the mchan registers, fork and barrier in L1; codegen/c/firmware).

Figures and where they come from:
- cluster: 8 RI5CY cores, rv32imc + XpulpV2 (../shared/tools/gvsoc README); cycles are what
  GVSoC counts (mcycle), the clock only converts them to time: 100 MHz assumed.
- L1: 64 kB TCDM in 16 banks at 0x10000000 (README memory map); reserved: the 8 cluster stacks
  of 1.5 kB each (TW_FW_STACK; measured stack peaks of generated code were below 1 kB,
  notes/pulp-open.md) and 1 kB of HAL state (fork/barrier flags, DMA ring), so 51 kB free.
- L2: 1.5 MB shared banks at 0x1C010000; 192 kB reserved for code, the FC stack and the
  firmware's buffers, so 1.3 MB free for the memory plan (activations and constants).
- L2↔L1 DMA (mchan v7): the GAP8 figures (seed 001 §3.2: 8 B/cycle, 8 cycles setup; MATCH's
  27 cycles per contiguous chunk, seed 003 §V) until calibrated on GVSoC; 20 core cycles to program
  a transfer (assumed). No L3 in this model.
- kernels: the portable family priced by the PULP-NN model (targets/kernels.py).
"""

from ..bindings import portable
from .base import KB, Memory, Module, Target
from .kernels import PulpNN

#: bytes of each cluster core's stack in L1 (the firmware's TW_FW_STACK)
STACK = 1536
#: bytes of HAL state in L1 (fork/barrier flags, the DMA command ring, counters)
HAL_STATE = 1024

TARGET = Target(
    name="pulp-open",
    description="PULP open platform on GVSoC: 8-core RI5CY cluster, 64 kB L1, 1.5 MB L2",
    clock_mhz=100.0,
    memories=(
        Memory("L1", 64 * KB, reserved=8 * STACK + HAL_STATE, bandwidth=8.0, dma_setup_cycles=8,
               dma_chunk_cycles=27, dma_issue_cycles=20, dma_async=True,
               note="TCDM; 8 stacks of 1.5 kB and the HAL state reserved"),
        Memory("L2", 1536 * KB, reserved=192 * KB, note="shared banks; code and stacks reserved"),
    ),
    modules=(
        Module("cluster", cores=8, bindings=portable.bindings(PulpNN()), memory="L1",
               scalable=True, note="8x RI5CY XpulpV2"),
    ),
    sources=("../shared/tools/gvsoc README (platform facts)", "notes/pulp-open.md",
             "seed 001 §3.2 (DMA)", "seed 004 ch. 3"),
    sdk="pulp-open",
)
