"""The imaging DSP of seed 002 (ch. 5 and Table 7.2): a VLIW SIMD core with a local scratchpad.

Figures (seed 002 §5.5 and Table 7.2, notes/idsp-model.md):
- 450 MHz (maximum 500 MHz, --clock beyond it needs --hypothetical: the worst-case typical clock
  seed 002 §7 takes for the comparable CEVA-XM4 core — assumed for the IDSP); 32 MACs/cycle (16-bit SIMD, 16-bit
  accumulators: partial sums are 2 bytes and may be spilled to external memory between input-channel tiles, as the
  seed's schedules do); 16 with emulated 32-bit accumulators (§3.2, below);
- data bus 32 elements/cycle of 2 bytes → 64 B/cycle; 150-cycle DMA initialisation, charged to the
  DSP per transfer (eq. 5.9, CC_dsp = CC_tile + N_transfers·CC_dma_init); no per-chunk cost;
- 128 kB local memory (64 kB usable per buffer set with double buffering); the 4 kB register file
  is not a tiling level here; external memory assumed 256 MB.
The seed's own analytical model (padded tiles, accesses per schedule, Pareto search) is in
schedule/idsp.py; the generic model (schedule/cost.py) runs this target like any other.

The module runs the portable family (partial sums kept in the local memory), priced by the
seed's throughput model, so that analyze and generate agree. Its accumulators are 32 bits by
default (the seed's emulated wide accumulators, §3.2); `with_acc_bits(16, "dsp")` / `--acc-bits dsp=16`
gives the native 16-bit register (`Module.acc_bits`): every int8 conv / depthwise / dense layer on
the DSP then wraps its accumulator modulo 2^16 in the golden model and the C (seed 002 Fig. 4.6),
bit-exact with the reference only where the accumulators fit (golden/acc_bounds.py;
`tilewise quantize --acc-bits 16` writes models whose accumulators provably fit). The dsp is
priced by its accumulator width (bindings/portable/cost.py SimdDsp, re-priced by `Module.with_acc_bits`):
seed 002 §3.2, "32-bit accumulators are supported through emulation, but will half the platform's
multiply-accumulate throughput" — 32 MAC/cycle for conv / depthwise / dense with the native
16-bit register, 16 with the default emulated 32-bit one. That prices the IDSP's own vector
kernels (assumed to reach the seed's throughput); the portable C that tilewise emits for the host
build keeps int32 arithmetic and wraps where the register would (16-bit SIMD-lane kernels are not
written). schedule/idsp.py's seed reproductions (Table 5.3, Fig. 5.12) take the native 32
MAC/cycle (`macs_per_cycle`), as the seed does.

cpu: the host processor that controls the IDSP (seed 002 §2.2.2: "the host processor transfers
new data into the local memories", and runs the tile loops of its Halide programs, §6.2). The
seed does not say what it is: assumed a Cortex-M7-class scalar core at the DSP's clock running
the portable kernels (and the host-only ones: bindings/portable/host.py) from the external
memory, priced by the CMSIS-NN model (bindings/portable/cost.py CmsisNN: 30 cycles per element of an
untiled op), untiled, no DMA.
"""

from ..bindings import portable
from ..bindings.portable.cost import CmsisNN, SimdDsp
from .base import KB, MB, Memory, Module, Target

TARGET = Target(
    name="idsp",
    description="imaging DSP (seed 002): 32 MAC/cycle SIMD, 128 kB local memory, 450 MHz",
    clock_mhz=450.0,
    max_clock_mhz=500.0,
    memories=(
        Memory("L1", 128 * KB, bandwidth=64.0, dma_setup_cycles=0, dma_chunk_cycles=0,
               dma_issue_cycles=150, dma_async=True, note="local memory"),
        Memory("L2", 256 * MB, note="external memory"),
    ),
    modules=(
        Module("dsp", cores=1,
               bindings=portable.bindings(SimdDsp(macs_per_cycle=32.0, elems_per_cycle=32.0)),
               memory="L1", note="VLIW SIMD, 32 MAC/cycle, 16-bit"),
        Module("cpu", cores=1, bindings=portable.bindings(CmsisNN(), host=True), memory="L2",
               note="host processor (assumed Cortex-M7-class) on the external memory"),
    ),
    sources=("seed 002 ch. 5, Table 5.1, §5.5", "seed 002 Table 7.2"),
)
