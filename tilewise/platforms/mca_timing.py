"""A cycle-approximate timing estimate of code executed on a Cortex-M core: basic blocks priced by
LLVM's scheduling model of the core (llvm-mca), times their execution counts (`validate --on
count`), plus what that model leaves out, per core (`CoreTiming`: platforms/m7_timing.py for the
Cortex-M7, platforms/m4_timing.py for the Cortex-M4, where each core's figures and their sources are).

What it owns: turning the instruction counter's executed basic blocks (platforms/count.py: each
distinct block's address, bytes and execution count per layer, the taken branches and the flash's
data-cache misses per layer) into estimated cycles.
- Each distinct block is disassembled with capstone (Thumb-2, M-profile), its branch targets
  rewritten to a local label (the assembler only needs the instruction's form), the instructions
  the core's llvm-mca model misprices given as another of their timing class
  (CoreTiming.substitute), and all blocks go to ONE llvm-mca run as code regions
  (`# LLVM-MCA-BEGIN`/`END`), `-mtriple=thumbv7em-none-eabihf -mcpu=CoreTiming.cpu` (Debian's
  `llvm`). Block cycles are cached by the core and the block's bytes per process.
- A block's cycles are its STEADY-STATE cycles per iteration (`-iterations=ITERATIONS`, total
  cycles / iterations), not one cold pass (`-iterations=1`): the trace is a stream of blocks and the
  next block's independent instructions overlap this one's tail as the next iteration does in
  llvm-mca's steady state; one cold pass charges every block its whole drain latency (a
  5-instruction ldr/smlad/add/cmp/bne loop body: 7 cycles cold, 6 steady on the Cortex-M7), which
  the in-order pipeline hides for independent successors. The hot blocks are loop bodies, run
  thousands of times back to back, for which the steady state is the right figure.
- Plus, per core, the cycles its published timing has and its llvm-mca model does not
  (CoreTiming.extra over a block's instructions, CoreTiming.taken_branch_cycles per taken branch:
  the Cortex-M4's), and the flash's data-cache misses (FlashCache with the core's geometry, times
  CoreTiming.miss_cycles).
- The estimate = sum over blocks of cycles(block) x count(block) + taken branches x
  taken_branch_cycles + misses x miss_cycles, per layer and per inference.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..errors import TilewiseError

TRIPLE = "thumbv7em-none-eabihf"
#: iterations of each block llvm-mca simulates: its steady state (cycles / iterations)
ITERATIONS = 100
#: cycles of blocks already priced in this process, by the core (llvm-mca -mcpu) and the block's bytes
_CACHE: dict[tuple[str, bytes], float] = {}

#: instructions given to llvm-mca as another of the same timing class: LLVM's model treats a call
#: as a 100-cycle unknown (llvm-mca's "call instructions are not correctly modeled"), so a call is
#: priced as the branch it is on the M7 (the LR write is an ALU result); bkpt (semihosting) and
#: udf, which it does not model, as a nop (they end the run, they are not in an inference); an IT
#: instruction (unsupported by llvm-mca 14) as a nop: it takes an issue slot
AS_BRANCH = {"bl": "b.w", "blx": "bx", "bkpt": "nop", "udf": "nop"}
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


def block_text(code: bytes, addr: int, disasm=None) -> list[str]:
    """The block's instructions as capstone writes them ("mnemonic operands")."""
    disasm = disasm or _disasm()
    return [f"{m} {ops}".strip() for _, _, m, ops in disasm.disasm_lite(code, addr)]


def block_asm(code: bytes, addr: int, disasm=None, substitute: Mapping[str, str] = AS_BRANCH
              ) -> list[str]:
    """The block's instructions as assembly llvm-mca reads: capstone's text, a branch's target
    replaced by a local label right after it (`2f`; cbz/cbnz only branch forward; the form, not
    the target, sets a branch's timing in the model), the mnemonics of `substitute` replaced."""
    return asm_lines(block_text(code, addr, disasm), substitute)


def asm_lines(text: list[str], substitute: Mapping[str, str] = AS_BRANCH) -> list[str]:
    """`text` (capstone's "mnemonic operands" lines) as assembly llvm-mca reads (block_asm)."""
    lines: list[str] = []
    conds: list[str] = []     # the conditions of the IT block's instructions still to come
    for mnemonic, _, ops in (t.partition(" ") for t in text):
        if mnemonic.startswith("it") and len(mnemonic) <= 5 and set(mnemonic[2:]) <= {"t", "e"}:
            first = ops.strip()
            conds = [first] + [first if c == "t" else INVERSE[first] for c in mnemonic[2:]]
            lines.append("nop")
            continue
        if conds:
            mnemonic = _unconditional(mnemonic, conds.pop(0))
        mnemonic = substitute.get(mnemonic, mnemonic)
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


def run_mca(regions: list[list[str]], iterations: int = ITERATIONS, cpu: str = "cortex-m7"
            ) -> list[McaResult]:
    """One llvm-mca run over `regions` (each a list of assembly lines) with `cpu`'s model; their
    results in order."""
    src = [".syntax unified", ".thumb"]
    for i, lines in enumerate(regions):
        src += [f"# LLVM-MCA-BEGIN r{i}", *lines, "# LLVM-MCA-END"]
    proc = subprocess.run(
        [llvm_mca(), f"-mtriple={TRIPLE}", f"-mcpu={cpu}", f"-iterations={iterations}"],
        input="\n".join(src) + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        raise TilewiseError(f"llvm-mca could not read the code: {proc.stderr.strip().splitlines()[0]}")
    out = []
    for m in re.finditer(r"Instructions:\s+(\d+)\s*\nTotal Cycles:\s+(\d+)", proc.stdout):
        out.append(McaResult(int(m.group(1)) // iterations, int(m.group(2))))
    if len(out) != len(regions):
        raise TilewiseError(f"llvm-mca reported {len(out)} regions for {len(regions)} blocks")
    return out


def _price(regions: list[list[str]], cpu: str) -> list[float]:
    """Steady-state cycles of each region: one llvm-mca run over all; if it refuses one (an
    instruction its assembler or model does not know), each alone, and a refused one at one
    cycle per instruction (UNPRICED counts those instructions)."""
    try:
        return [r.cycles for r in run_mca(regions, cpu=cpu)]
    except TilewiseError:
        if len(regions) == 1:
            UNPRICED.append(len(regions[0]))
            return [float(sum(1 for line in regions[0] if not line.endswith(":")))]
        return [c for r in regions for c in _price([r], cpu)]


#: sizes (instructions) of the blocks llvm-mca refused in this process (priced 1 per instruction)
UNPRICED: list[int] = []


@dataclass(frozen=True)
class CoreTiming:
    """How one core's executed code is priced (module docstring): llvm-mca's model of `cpu`, the
    mnemonics given to it as another of their timing class, the cycles its published timing has
    and that model has not, and its flash's data cache. Each core's instance and sources:
    platforms/m7_timing.py, platforms/m4_timing.py."""

    #: llvm-mca's -mcpu
    cpu: str
    #: how messages name the core ("Cortex-M7")
    label: str
    #: how reports label the estimate (validate --on count: text and JSON `estimated_cycles_model`)
    model: str
    #: the clock the flash's wait states are counted at (MHz)
    clock_mhz: float
    #: mnemonic -> the mnemonic llvm-mca prices it as (AS_BRANCH and the core's own); out of
    #: the hash (a dict), so that a target holding the core stays hashable (explore's memo)
    substitute: Mapping[str, str] = field(default_factory=lambda: dict(AS_BRANCH), hash=False)
    #: a block's cycles beyond llvm-mca's steady state, from its capstone text lines
    extra: Callable[[list[str]], float] | None = None
    #: cycles of a taken branch beyond the one llvm-mca charges its instruction (the pipeline
    #: refill), per taken branch the counter saw
    taken_branch_cycles: float = 0.0
    #: the flash's data cache as the constants' reads see it: bytes, ways, line bytes, and the
    #: cycles one miss costs beyond llvm-mca's load
    cache_bytes: int = 16 * 1024
    cache_ways: int = 4
    line: int = 32
    miss_cycles: float = 10.0

    def lines_cycles(self, lines: list[str], taken: float = 0.0) -> float:
        """Estimated steady-state cycles of one pass of `lines` (capstone-style text: the
        validation's micro-benchmarks) with `taken` taken branches a pass."""
        (r,) = run_mca([asm_lines(list(lines), self.substitute)], cpu=self.cpu)
        return r.cycles + (self.extra(list(lines)) if self.extra else 0.0) + \
            taken * self.taken_branch_cycles


def block_cycles(blocks: dict[tuple[int, int], bytes], timing: CoreTiming
                 ) -> dict[tuple[int, int], float]:
    """Estimated steady-state cycles of each block (address, size) -> its code on `timing`'s
    core (llvm-mca's model plus CoreTiming.extra); the blocks not yet priced in this process
    go to one llvm-mca run."""
    disasm = _disasm()
    todo = [code for code in dict.fromkeys(blocks.values()) if (timing.cpu, code) not in _CACHE]
    addr_of = {code: key[0] for key, code in blocks.items()}
    if todo:
        texts = [block_text(code, addr_of[code], disasm) for code in todo]
        cycles = _price([asm_lines(t, timing.substitute) for t in texts], timing.cpu)
        extra = [timing.extra(t) if timing.extra else 0.0 for t in texts]
        _CACHE.update(((timing.cpu, code), c + e) for code, c, e in zip(todo, cycles, extra))
    return {key: _CACHE[(timing.cpu, code)] for key, code in blocks.items()}


def window_cycles(counts: dict[tuple[int, int], int], priced: dict[tuple[int, int], float]
                  ) -> float:
    """The estimated cycles of a stretch of execution: its blocks' cycles times their counts."""
    return sum(priced[key] * n for key, n in counts.items())


@dataclass
class FlashCache:
    """A data cache as the flash's constant reads see it (CoreTiming's geometry): LRU per set
    over the lines of flash only (on the Cortex-M7 the activations' lines, which also take ways,
    are not simulated, so this counts fewer misses than the chip takes); `misses` counts line
    fills."""

    sets: list[list[int]]
    ways: int
    line: int
    misses: int = 0

    @classmethod
    def empty(cls, timing: CoreTiming) -> FlashCache:
        sets = timing.cache_bytes // timing.line // timing.cache_ways
        return cls([[] for _ in range(sets)], timing.cache_ways, timing.line)

    def read(self, addr: int, size: int) -> None:
        for line in range(addr // self.line, (addr + size - 1) // self.line + 1):
            ways = self.sets[line % len(self.sets)]
            if line in ways:
                if ways[-1] != line:
                    ways.remove(line)
                    ways.append(line)
            else:
                self.misses += 1
                ways.append(line)
                if len(ways) > self.ways:
                    del ways[0]


@dataclass(frozen=True)
class MicroBenchmark:
    """A Thumb-2 sequence whose cycles on a core are published (from silicon, or the core's
    Technical Reference Manual): its instructions, the cycles of one pass in a long run of
    passes, the taken branches a pass, and where the figure comes from."""

    name: str
    lines: tuple[str, ...]
    cycles: float
    source: str
    taken: int = 0


def validation_errors(timing: CoreTiming, benchmarks: tuple[MicroBenchmark, ...]
                      ) -> list[float]:
    """Each benchmark's error, estimate / published - 1 (signed)."""
    return [timing.lines_cycles(list(b.lines), b.taken) / b.cycles - 1 for b in benchmarks]
