"""A cycle-approximate Cortex-M7 timing estimate of executed code: basic blocks priced by LLVM's
Cortex-M7 scheduling model (llvm-mca), times their execution counts (`validate --on count`).

What it owns: turning the instruction counter's executed basic blocks (platforms/count.py: each
distinct block's address, bytes and execution count per layer) into estimated cycles.
- Each distinct block is disassembled with capstone (Thumb-2, M-profile), its branch targets
  rewritten to a local label (the assembler only needs the instruction's form), and all blocks go
  to ONE llvm-mca run as code regions (`# LLVM-MCA-BEGIN`/`END`), `-mtriple=thumbv7em-none-eabihf
  -mcpu=cortex-m7` (Debian's `llvm`; LLVM's ARMScheduleM7.td: the dual-issue pipeline, the
  load, multiply/MAC and FP latencies). Block cycles are cached by the block's bytes per process.
- A block's cycles are its STEADY-STATE cycles per iteration (`-iterations=ITERATIONS`, total
  cycles / iterations), not one cold pass (`-iterations=1`): the trace is a stream of blocks and the
  next block's independent instructions overlap this one's tail as the next iteration does in
  llvm-mca's steady state; one cold pass charges every block its whole drain latency (a
  5-instruction ldr/smlad/add/cmp/bne loop body: 7 cycles cold, 6 steady), which the in-order
  pipeline hides for independent successors. The hot blocks are loop bodies, run thousands of times back to back,
  for which the steady state is the right figure.
- The estimate = sum over blocks of cycles(block) x count(block), per layer and per inference.

Memory, by region (the stm32h7 firmware's placement, codegen/c/firmware/cortex_m/sections.ld):
the stack and kernel scratch are in the DTCM, zero wait state (Arm Cortex-M7 TRM, "TCM interfaces":
the TCMs are accessed at the core clock without wait states), which is what llvm-mca's load latency
models. Code and const weights are in flash and activations in the AXI SRAM, both behind the 16 kB
I-cache and 16 kB D-cache the board layer enables (tw_board_stm32h7.c). ASSUMPTION (not sourced
as a cycle figure): code and activations hit the L1 caches, so the AXI SRAM costs what the DTCM
costs (the kernels' code is a few kB, under the 16 kB I-cache). Flash: RM0433 (STM32H743
reference manual) Table 17 gives 4 wait states at VOS0 with a 240 MHz AXI clock (the board
layer's setting); a 256-bit flash word fills one 32-byte cache line, so a line fill costs
FLASH_MISS_CYCLES = (4 + 1) AXI cycles = 10 CPU cycles at 480 MHz (the bus's own latency not
included), and streaming the weights once costs (weight bytes / 32) line fills — ad_autoencoder's
0.27 MB about 8.5 k lines. FlashCache simulates the D-cache's LRU sets over the flash's constant reads of the
first inference (platforms/count.py hooks reads of .rodata), so compulsory and capacity misses
(a layer's weights above 16 kB re-read per output tile) of the weights are priced at
FLASH_MISS_CYCLES a line fill; the activations' own lines (AXI SRAM, which would evict weights) are
not simulated, so this is a lower bound. The first inference starts with a cold cache (the weights
of all four MLPerf Tiny models exceed 16 kB, so a warm one would miss as much).

Validation (MICRO_BENCHMARKS, tests/test_m7_timing.py): Thumb-2 sequences whose Cortex-M7 timing
is published from measurements on silicon (Arm publishes no Cortex-M7 cycle tables) — dual issue
of independent ALU pairs (J. Ahrens, quinapalus.com/cm7cycles.html: STM32H730 at 480 MHz, caches
on, the cycles of 10 extra copies of a sequence between isb), and the dual-issue restrictions
C. Biffle published in 2024 (Mastodon, #CortexM7): one shifted-operand or extend instruction per
cycle, DSP/SIMD instructions (smlad) dual-issue only from the pair's lower address, a dependent
ADD.W pair issues in one cycle. Error of the steady-state estimate (llvm-mca 14.0.6), estimate /
published - 1: ALU pairs +0.25%, dependent add.w pairs +0.5%, shifted operands +0.12%, sxtb16
+0.12%, smlad pairs +0.25%, smlad + add.w +0.5%; worst 0.5%, mean 0.29% (VALIDATION_ERROR, held
by the test). What the set does not validate: load-use and multi-cycle load timing, branches
(taken-branch and misprediction costs; llvm-mca models no predictor), and the memory term — on a
whole network the estimate's error against silicon is not measured here (no board); treat it as
a pipeline-model estimate, not a measurement.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from ..errors import TilewiseError

#: how reports label the estimate (validate --on count: text and JSON `estimated_cycles_model`)
ESTIMATE_MODEL = ("estimated, Cortex-M7 model: llvm-mca's Cortex-M7 scheduling model per executed "
                  "basic block (steady state) + D-cache line fills from flash at 480 MHz")
TRIPLE = "thumbv7em-none-eabihf"
CPU = "cortex-m7"
#: iterations of each block llvm-mca simulates: its steady state (cycles / iterations)
ITERATIONS = 100
#: cycles of blocks already priced in this process, by the block's bytes
_CACHE: dict[bytes, float] = {}

#: instructions given to llvm-mca as another of the same timing class: LLVM's model treats a call
#: as a 100-cycle unknown (llvm-mca's "call instructions are not correctly modeled"), so a call is
#: priced as the branch it is on the M7 (the LR write is an ALU result); bkpt (semihosting) and
#: udf, which it does not model, as a nop (they end the run, they are not in an inference); an IT
#: instruction (unsupported by llvm-mca 14) as a nop: it takes an issue slot
_AS = {"bl": "b.w", "blx": "bx", "bkpt": "nop", "udf": "nop"}
_BRANCH = re.compile(r"^(b|bl|blx|cbz|cbnz|b\.w|bl\.w|b[a-z]{2}|b[a-z]{2}\.w)$")


def llvm_mca() -> str:
    """llvm-mca ($TILEWISE_LLVM_MCA), or a one-sentence error naming the Debian package."""
    name = os.environ.get("TILEWISE_LLVM_MCA", "llvm-mca")
    exe = shutil.which(name)
    if exe is None:
        raise TilewiseError(f"the Cortex-M7 cycle estimate of --on count needs {name}; install "
                            f"Debian's llvm (apt-get install llvm), or set TILEWISE_LLVM_MCA")
    return exe


def _disasm():
    import capstone

    return capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)


def block_asm(code: bytes, addr: int, disasm=None) -> list[str]:
    """The block's instructions as assembly llvm-mca reads: capstone's text, a branch's target
    replaced by a local label right after it (`2f`; cbz/cbnz only branch forward; the form, not
    the target, sets a branch's timing in the model)."""
    disasm = disasm or _disasm()
    lines: list[str] = []
    conds: list[str] = []     # the conditions of the IT block's instructions still to come
    for _, _, mnemonic, ops in disasm.disasm_lite(code, addr):
        if mnemonic.startswith("it") and len(mnemonic) <= 5 and set(mnemonic[2:]) <= {"t", "e"}:
            first = ops.strip()
            conds = [first] + [first if c == "t" else INVERSE[first] for c in mnemonic[2:]]
            lines.append("nop")
            continue
        if conds:
            mnemonic = _unconditional(mnemonic, conds.pop(0))
        mnemonic = _AS.get(mnemonic, mnemonic)
        if mnemonic == "nop":
            ops = ""
        if _BRANCH.match(mnemonic) and "#" in ops:
            lines += [f"{mnemonic} {re.sub(r'#-?0x[0-9a-f]+|#-?[0-9]+', '2f', ops)}", "2:"]
            continue
        lines.append(f"{mnemonic} {ops}".strip())
    return lines


#: each condition code and its inverse (an IT block's "e" slots take the inverse)
_PAIRS = (("eq", "ne"), ("cs", "cc"), ("hs", "lo"), ("mi", "pl"), ("vs", "vc"), ("hi", "ls"),
          ("ge", "lt"), ("gt", "le"))
INVERSE = {**dict(_PAIRS), **{b: a for a, b in _PAIRS}, "al": "al"}


def _unconditional(mnemonic: str, cond: str) -> str:
    """An IT block's instruction without its condition suffix: llvm-mca 14 models no IT, so the
    block's instructions are priced as the unconditional ones they issue as (the M7 issues a
    conditional instruction whose condition fails like one that passes)."""
    base, dot, width = mnemonic.partition(".")
    if base.endswith(cond) and len(base) > len(cond):
        base = base[: -len(cond)]
    return base + dot + width


@dataclass(frozen=True)
class McaResult:
    """llvm-mca's figures for one code region: instructions and cycles of ITERATIONS passes."""

    instructions: int
    total_cycles: int

    @property
    def cycles(self) -> float:
        """Steady-state cycles of one pass."""
        return self.total_cycles / ITERATIONS


def run_mca(regions: list[list[str]], iterations: int = ITERATIONS) -> list[McaResult]:
    """One llvm-mca run over `regions` (each a list of assembly lines); their results in order."""
    src = [".syntax unified", ".thumb"]
    for i, lines in enumerate(regions):
        src += [f"# LLVM-MCA-BEGIN r{i}", *lines, "# LLVM-MCA-END"]
    proc = subprocess.run(
        [llvm_mca(), f"-mtriple={TRIPLE}", f"-mcpu={CPU}", f"-iterations={iterations}"],
        input="\n".join(src) + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        raise TilewiseError(f"llvm-mca could not read the code: {proc.stderr.strip().splitlines()[0]}")
    out = []
    for m in re.finditer(r"Instructions:\s+(\d+)\s*\nTotal Cycles:\s+(\d+)", proc.stdout):
        out.append(McaResult(int(m.group(1)) // iterations, int(m.group(2))))
    if len(out) != len(regions):
        raise TilewiseError(f"llvm-mca reported {len(out)} regions for {len(regions)} blocks")
    return out


def _price(regions: list[list[str]]) -> list[float]:
    """Steady-state cycles of each region: one llvm-mca run over all; if it refuses one (an
    instruction its assembler or model does not know), each alone, and a refused one at one
    cycle per instruction (UNPRICED counts those instructions)."""
    try:
        return [r.cycles for r in run_mca(regions)]
    except TilewiseError:
        if len(regions) == 1:
            UNPRICED.append(len(regions[0]))
            return [float(sum(1 for line in regions[0] if not line.endswith(":")))]
        return [c for r in regions for c in _price([r])]


#: sizes (instructions) of the blocks llvm-mca refused in this process (priced 1 per instruction)
UNPRICED: list[int] = []


def block_cycles(blocks: dict[tuple[int, int], bytes]) -> dict[tuple[int, int], float]:
    """Estimated steady-state Cortex-M7 cycles of each block (address, size) -> its code; the
    blocks not yet priced in this process go to one llvm-mca run."""
    disasm = _disasm()
    todo = [code for code in dict.fromkeys(blocks.values()) if code not in _CACHE]
    addr_of = {code: key[0] for key, code in blocks.items()}
    if todo:
        cycles = _price([block_asm(code, addr_of[code], disasm) for code in todo])
        _CACHE.update(zip(todo, cycles))
    return {key: _CACHE[code] for key, code in blocks.items()}


def window_cycles(counts: dict[tuple[int, int], int], priced: dict[tuple[int, int], float]
                  ) -> float:
    """The estimated cycles of a stretch of execution: its blocks' cycles times their counts."""
    return sum(priced[key] * n for key, n in counts.items())


#: the STM32H743's L1 D-cache (DS12110 §3.3: 16 kB; Arm Cortex-M7 TRM, "Data cache": 4-way set
#: associative, 32-byte lines) and the CPU cycles one line read from flash costs on a miss: a
#: 256-bit flash word is one line, read in (4 wait states + 1) AXI cycles at 240 MHz (RM0433
#: Table 17 at VOS0, the board layer's setting) = 10 CPU cycles at 480 MHz (the AXI bus's own
#: latency is not included: a lower bound)
DCACHE_BYTES, DCACHE_WAYS, LINE = 16 * 1024, 4, 32
FLASH_MISS_CYCLES = 10


@dataclass
class FlashCache:
    """The D-cache as the flash's constant reads see it: LRU per set over the lines of flash
    only (the activations' lines, which also take ways, are not simulated, so this counts
    fewer misses than the chip takes); `misses` counts line fills."""

    sets: list[list[int]]
    misses: int = 0

    @classmethod
    def empty(cls) -> FlashCache:
        return cls([[] for _ in range(DCACHE_BYTES // LINE // DCACHE_WAYS)])

    def read(self, addr: int, size: int) -> None:
        for line in range(addr // LINE, (addr + size - 1) // LINE + 1):
            ways = self.sets[line % len(self.sets)]
            if line in ways:
                if ways[-1] != line:
                    ways.remove(line)
                    ways.append(line)
            else:
                self.misses += 1
                ways.append(line)
                if len(ways) > DCACHE_WAYS:
                    del ways[0]


@dataclass(frozen=True)
class MicroBenchmark:
    """A Thumb-2 sequence whose Cortex-M7 cycles are published from silicon: its instructions,
    the cycles of one pass in a long run of passes, and where the figure comes from."""

    name: str
    lines: tuple[str, ...]
    cycles: float
    source: str


_BIFFLE = "C. Biffle, Cortex-M7 dual-issue measurements (Mastodon #CortexM7, 2024)"
_AHRENS = "J. Ahrens, quinapalus.com/cm7cycles.html (STM32H730, caches on)"
#: the estimator's validation set (module docstring; tests/test_m7_timing.py)
MICRO_BENCHMARKS = (
    MicroBenchmark("independent ALU pairs (8 add.w, 4 registers)",
                   ("add.w r0, r0, #1", "add.w r1, r1, #1", "add.w r2, r2, #1", "add.w r3, r3, #1") * 2,
                   4.0, f"two independent ALU instructions dual-issue: {_AHRENS}; {_BIFFLE}"),
    MicroBenchmark("dependent add.w pairs (r1 = r0 + r3 + r2) x4",
                   ("add.w r1, r0, r3", "add.w r1, r1, r2") * 4,
                   4.0, f"the dependent pair issues in one cycle: {_BIFFLE}"),
    MicroBenchmark("shifted-operand adds x8",
                   ("add.w r0, r1, r2, lsl #4", "add.w r3, r4, r5, lsl #4") * 4,
                   8.0, f"one shifted-operand instruction per cycle: {_BIFFLE}"),
    MicroBenchmark("sxtb16 x8 (the int8 MAC's unpacking)",
                   ("sxtb16 r0, r1", "sxtb16 r2, r3") * 4,
                   8.0, f"extends count as shifted operands, one per cycle: {_BIFFLE}"),
    MicroBenchmark("smlad x8, two accumulators",
                   ("smlad r0, r1, r2, r0", "smlad r3, r4, r5, r3") * 4,
                   8.0, f"DSP instructions dual-issue only from the pair's lower address: {_BIFFLE}"),
    MicroBenchmark("smlad + add.w pairs x4",
                   ("smlad r0, r1, r2, r0", "add.w r3, r3, #1") * 4,
                   4.0, f"a DSP instruction at the lower address pairs with an ALU one: {_BIFFLE}"),
)
#: the steady-state estimate's error on MICRO_BENCHMARKS (|estimate / published - 1|), measured
#: with Debian's llvm-mca 14.0.6: worst and mean over the set
VALIDATION_ERROR = {"worst": 0.005, "mean": 0.003}
