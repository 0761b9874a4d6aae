"""DIANA (KU Leuven, ISSCC 2022): a RISC-V host core with a digital accelerator and an analog
in-memory core.

Figures and where they come from (seed 003 §V–VI, notes/accelerators.md, notes/match-cost-model.md,
eml-eda/match `match/target/examples/diana/digital/digital_accelerator.py` memories_def):
- clock 260 MHz: MATCH's measurements on DIANA silicon (seed 003 Table III); also taken as the
  maximum (--clock beyond it needs --hypothetical) — assumed: the sources measure no faster
  clock.
- L2 512 kB, the host's memory; 64 kB of it reserved for the program (runtime, kernels, layer
  code) and the stack — assumed, no figure in the sources.
- L1: the digital core's 256 kB activation memory, where its tiles live (no double buffering:
  the DMA is blocking). WMEM: its 64 kB weight memory, the weight tiles' own operand memory
  (Module.operand_memory); a schedule is valid when each memory's buffers fit it.
- L2 ↔ L1 / WMEM DMA: blocking (dma_async=False), 70 cycles per call (one per contiguous chunk,
  MATCH's DIANA transfer model: `transfer_calls × 70`, seed 003 §V), 16 bytes per cycle: MATCH's
  DIANA memory model reads L2 ("dram") at 16·8 bits per cycle (the activation memory takes 64 B,
  the weight memory 16 B per cycle: 16 B is the bound for both).
- digital: the 16×16 PE array (bindings/diana_digital), priced by MATCH's digital model plus the
  host's job set-up and requantization (bindings/diana_digital/cost.py).
- analog: the ternary in-memory array with its 6-bit ADC and digital output stage
  (bindings/diana_analog), its tiles in the shared activation memory (DIANA's two cores share
  it: Houshmand et al., JSSC 2023), priced from the array's structure
  (bindings/diana_analog/cost.py, assumed).
- cpu: the host core running the portable C kernels straight from L2, one core. DIANA's host is a
  RISC-V core of the PULP family (HTVM, Van Delm et al. DAC 2023, describe it as RI5CY-class;
  assumed). Priced by the PULP-NN model of one RI5CY core (bindings/portable/cost.py PulpNN) × 4: the
  portable kernels are plain C, whose 4×2 MatMul step does 8 MACs with 6 byte loads where
  PULP-NN's SIMD step does 32 MACs in 14 cycles (assumed, not measured). MATCH's own host
  fallback is TVM's code (seed 003 Table III, DIANA TVM column), slower than this.
"""

from dataclasses import replace

from ..bindings import diana_analog, diana_digital, portable
from ..bindings.diana_analog.cost import AnalogKernels
from ..bindings.diana_digital.cost import DianaDigitalKernels
from ..bindings.portable.cost import PulpNN
from .base import KB, Memory, Module, Target

#: the host core's portable kernels, per the PULP-NN model of one RI5CY core (module docstring)
CPU_KERNEL = replace(PulpNN(), scale=4.0)

TARGET = Target(
    name="diana",
    description="DIANA: RISC-V host + 16x16 digital accelerator (256 kB act., 64 kB weights), "
                "512 kB L2",
    clock_mhz=260.0,
    max_clock_mhz=260.0,
    memories=(
        Memory("L1", 256 * KB, bandwidth=16.0, dma_chunk_cycles=70, dma_async=False,
               note="digital core's activation memory"),
        Memory("L2", 512 * KB, reserved=64 * KB, note="host memory; 64 kB program + stack (assumed)"),
        # at L1's level beside the activation memory; listed after L2 so that L1, L2 stay the
        # activation path (it holds tile buffers only: Target.outer never returns it)
        Memory("WMEM", 64 * KB, bandwidth=16.0, dma_chunk_cycles=70, dma_async=False,
               roles=frozenset({"tile"}), note="digital core's weight memory (weight tiles)"),
    ),
    modules=(
        Module("digital", cores=1, bindings=diana_digital.bindings(DianaDigitalKernels()),
               memory="L1", operand_memory=(("w", "WMEM"),),
               note="16x16 PE digital accelerator; the host requantizes int32 outputs"),
        Module("analog", cores=1, bindings=diana_analog.bindings(AnalogKernels()), memory="L1",
               note="analog in-memory core (1152x512 ternary array, 6-bit ADC) on the activation "
                    "memory's tiles"),
        Module("cpu", cores=1, bindings=portable.bindings(CPU_KERNEL, host=True), memory="L2",
               note="RISC-V host core (RI5CY-class, assumed), portable kernels from L2"),
    ),
    shift_requant=True,
    shift_multiplier=False,
    ablations=(("CPU only", ("cpu",)), ("digital + CPU", ("digital", "cpu")),
               ("digital + analog + CPU", ("digital", "analog", "cpu"))),
    sources=("seed 003 §V-VI, Table III", "notes/accelerators.md (DIANA)",
             "eml-eda/match match/target/examples/diana/digital (cost model, memories)",
             "KULeuven-MICAS/htvm soma_dory.py (patterns)"),
)
