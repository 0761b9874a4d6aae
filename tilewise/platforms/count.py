"""The instruction counter, a runner of Cortex-M firmware (`validate --on count`): run it in an
instruction-counting emulator; executed instructions per inference and per layer.

QEMU runs the firmware but counts nothing, so the measure on Arm is executed instructions, as
TFLite Micro + CMSIS-NN's figures in notes/anchors.md are; cycles are only estimated from them
(platforms/mca_timing.py, below). The same ELF `validate --on qemu` builds (mps2-an500's map:
code at 0x00000000, data at 0x20000000) is loaded segment by segment (pyelftools) into `unicorn`
(its model of the target's core, platforms/arm_core.py: Cortex-M7 or Cortex-M4, Thumb-2 with the DSP
extension) and run from its vector table; Arm semihosting
(`bkpt 0xAB`: SYS_WRITE0, SYS_EXIT) is served here, so the firmware prints and exits as under
QEMU and its output is checked the same way (validate/firmware_run.py). Instructions are counted per
translated basic block (a block hook; each block's instructions decoded once with `capstone`):
- per inference: from the call of `tw_fw_mark(0)` to the call of `tw_fw_mark(1)` (firmware/main.c)
  — tw_network_run and everything it calls;
- per layer (first inference): from the entry of `tw_layer_NN` to the entry of the next layer
  (the last: to `tw_fw_mark(1)`), i.e. the layer and the few instructions of network.c between
  two calls.
The block hook also records, for the first inference, each executed basic block (its address and
bytes) with its execution count per layer (and for the few instructions of network.c before the
first layer), the taken branches (a block entered elsewhere than where the previous one ended) and
the flash data cache's misses: platforms/mca_timing.py prices them in the core's cycles
(estimated: m7_timing.py, m4_timing.py), which `Counter.run` reports next to the instructions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TilewiseError
from .arm_core import CORTEX_M7, ArmCore
from .base import Execution
from .mca_timing import FlashCache, block_cycles, llvm_mca, window_cycles

#: the memory regions of QEMU's mps2-an500 the firmware uses (firmware/link_qemu.ld), and the
#: System Control Space page (SCS): unicorn models no SCS, so the start-up's write of CPACR
#: (0xE000ED88, the FPU on in a hard-float build: tw_fw.c) lands in plain memory there, and
#: unicorn's Cortex-M7 executes the FPv5 instructions with its FPU enabled from reset
SCS = (0xE000E000, 0x1000)
REGIONS = ((0x00000000, 4 << 20), (0x20000000, 4 << 20), SCS)
#: Arm semihosting operations served (r0) and the exit reason of a normal end
SYS_WRITE0, SYS_EXIT, APPLICATION_EXIT = 0x04, 0x18, 0x20026
#: instructions after which a run counts as hung
MAX_INSTRUCTIONS = 2_000_000_000


@dataclass
class Counted:
    """What one counted run gave: exit status, output text, instructions per inference, and per
    layer of the first inference."""

    status: int = 1
    text: str = ""
    inferences: list[int] = field(default_factory=list)
    layers: list[int] = field(default_factory=list)
    #: the code of each block executed in the first inference, by (address, size)
    blocks: dict[tuple[int, int], bytes] = field(default_factory=dict)
    #: the first inference's block execution counts: before the first layer, then per layer
    pre_blocks: dict[tuple[int, int], int] = field(default_factory=dict)
    layer_blocks: list[dict[tuple[int, int], int]] = field(default_factory=list)
    #: the first inference's D-cache line fills from flash's constants (mca_timing.FlashCache):
    #: before the first layer, then per layer
    pre_misses: int = 0
    layer_misses: list[int] = field(default_factory=list)
    #: the first inference's taken branches (a block not entered where the previous one ended):
    #: before the first layer, then per layer (counted where the branch was, its block's window)
    pre_taken: int = 0
    layer_taken: list[int] = field(default_factory=list)


def _emulator():
    try:
        import capstone
        import unicorn
        from elftools.elf.elffile import ELFFile
        from unicorn import arm_const
    except ImportError as e:
        raise TilewiseError(f"--on count needs the Python packages unicorn, capstone and "
                            f"pyelftools ({e.name} is missing); pip install tilewise again") from e
    return unicorn, arm_const, capstone, ELFFile


def thumb_count(disasm, code: bytes, addr: int) -> int:
    """The instructions of a block of Thumb code: capstone's decoding, and past any instruction
    it does not decode (it stops there) the Thumb-2 width rule: a halfword whose top five bits
    are 0b11101, 0b11110 or 0b11111 starts a 32-bit instruction, any other is one 16-bit."""
    n = end = 0
    for ins_addr, ins_size, _, _ in disasm.disasm_lite(code, addr):
        n += 1
        end = ins_addr + ins_size - addr
    while end + 1 < len(code):
        end += 4 if (code[end + 1] >> 3) in (0b11101, 0b11110, 0b11111) else 2
        n += 1
    return n


def count_instructions(elf: Path, n_layers: int, c_name: str = "tw", core: ArmCore = CORTEX_M7
                       ) -> Counted:
    """Run `elf` on unicorn's model of `core` to its semihosting exit, counting executed
    instructions (module docstring)."""
    unicorn, arm, capstone, ELFFile = _emulator()
    with open(elf, "rb") as f:
        image = ELFFile(f)
        segments = [(s["p_paddr"], s.data()) for s in image.iter_segments()
                    if s["p_type"] == "PT_LOAD" and s["p_filesz"]]
        # the constants (weights) the chip reads from flash (sections.ld: .rodata > ROM)
        rodata = image.get_section_by_name(".rodata")
        flash_data = (rodata["sh_addr"], rodata["sh_addr"] + rodata["sh_size"]) if rodata else None
        funcs = {s.name: s["st_value"] & ~1 for s in image.get_section_by_name(".symtab").iter_symbols()
                 if s["st_info"]["type"] == "STT_FUNC"}
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(getattr(arm, core.unicorn_model))
    for base, size in REGIONS:
        uc.mem_map(base, size)
    for addr, data in segments:
        uc.mem_write(addr, data)
    sp, reset = (int.from_bytes(uc.mem_read(a, 4), "little") for a in (0, 4))
    uc.reg_write(arm.UC_ARM_REG_SP, sp)

    # the firmware's names carry the project's C-name prefix (codegen/names.py)
    if f"{c_name}_fw_mark" not in funcs:
        raise TilewiseError(f"{elf}: no {c_name}_fw_mark; it is not a tilewise Cortex-M firmware")
    mark = funcs[f"{c_name}_fw_mark"]
    layer_at = {funcs[f"{c_name}_layer_{i:02d}"]: i for i in range(n_layers)
                if f"{c_name}_layer_{i:02d}" in funcs}
    # a fused chain (codegen/chain_c.py: tw_chain_NN, its last member's index) runs at its last
    # member's step: counted there; the other members' steps run nothing (0)
    layer_at.update({funcs[f"{c_name}_chain_{i:02d}"]: i for i in range(n_layers)
                     if f"{c_name}_chain_{i:02d}" in funcs})
    disasm = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    sizes: dict[int, int] = {}
    total = [0]
    run = Counted()
    start = [0]
    entries: dict[int, int] = {}
    out: list[str] = []
    #: the block counts being recorded (None outside the first inference), per layer entered
    window: list[dict[tuple[int, int], int] | None] = [None]
    windows: dict[int, dict[tuple[int, int], int]] = {}
    timing = core.timing or CORTEX_M7.timing
    cache = FlashCache.empty(timing)
    misses: dict[int, int] = {}       # cache.misses at each layer's entry
    taken = [0]                       # taken branches so far in the first inference
    taken_at: dict[int, int] = {}     # taken[0] at each layer's entry
    end = [-1]                        # where the previous block ended

    def on_block(uc, addr, size, _):
        n = sizes.get(addr)
        if n is None:
            n = sizes[addr] = thumb_count(disasm, bytes(uc.mem_read(addr, size)), addr)
        if addr != end[0]:
            taken[0] += 1
        end[0] = addr + size
        if addr == mark:
            if uc.reg_read(arm.UC_ARM_REG_R0) == 0:
                start[0] = total[0]
                window[0] = run.pre_blocks if not run.inferences else None
                cache.misses = 0
                taken[0] = 0
            else:
                run.inferences.append(total[0] - start[0])
                window[0] = None
                if len(run.inferences) == 1:
                    ends = sorted(entries.items())
                    marks = [c for _, c in ends] + [total[0]]
                    fills = [misses[i] for i, _ in ends] + [cache.misses]
                    run.pre_misses = fills[0] if ends else cache.misses
                    # by layer index (a fused chain's producer, never entered: 0)
                    at = {i: k for k, (i, _) in enumerate(ends)}
                    idx = range(ends[-1][0] + 1 if ends else 0)
                    run.layers = [marks[at[i] + 1] - marks[at[i]] if i in at else 0 for i in idx]
                    run.layer_blocks = [windows[i] if i in at else {} for i in idx]
                    run.layer_misses = [fills[at[i] + 1] - fills[at[i]] if i in at else 0
                                        for i in idx]
                    jumps = [taken_at[i] for i, _ in ends] + [taken[0]]
                    run.pre_taken = jumps[0] if ends else taken[0]
                    run.layer_taken = [jumps[at[i] + 1] - jumps[at[i]] if i in at else 0
                                       for i in idx]
                    if reads:
                        uc.hook_del(reads[0])
        elif addr in layer_at and not run.inferences:
            entries[layer_at[addr]] = total[0]
            misses[layer_at[addr]] = cache.misses
            taken_at[layer_at[addr]] = taken[0]
            window[0] = windows.setdefault(layer_at[addr], {})
        if (w := window[0]) is not None:
            key = (addr, size)
            w[key] = w.get(key, 0) + 1
            if key not in run.blocks:
                run.blocks[key] = bytes(uc.mem_read(addr, size))
        total[0] += n
        if total[0] > MAX_INSTRUCTIONS:
            out.append(f"\nTW_TRAP stopped after {MAX_INSTRUCTIONS:,} instructions")
            uc.emu_stop()

    def on_interrupt(uc, intno, _):
        pc = uc.reg_read(arm.UC_ARM_REG_PC)
        op, arg = uc.reg_read(arm.UC_ARM_REG_R0), uc.reg_read(arm.UC_ARM_REG_R1)
        if op == SYS_WRITE0:
            text = bytearray()
            while (b := uc.mem_read(arg + len(text), 1)[0]) != 0:
                text.append(b)
            out.append(text.decode(errors="replace"))
            uc.reg_write(arm.UC_ARM_REG_PC, (pc + 2) | 1)       # past the 16-bit bkpt
        else:
            run.status = 0 if op == SYS_EXIT and arg == APPLICATION_EXIT else 1
            if op != SYS_EXIT:
                out.append(f"\nTW_TRAP exception {intno} at pc {pc:#x}")
            uc.emu_stop()

    def on_read(uc, access, addr, size, value, _):
        cache.read(addr, size)

    uc.hook_add(unicorn.UC_HOOK_BLOCK, on_block)
    # the constants' reads until the first inference ends (the flash's D-cache model)
    reads = [uc.hook_add(unicorn.UC_HOOK_MEM_READ, on_read, None, *flash_data)] if flash_data else []
    uc.hook_add(unicorn.UC_HOOK_INTR, on_interrupt)
    try:
        uc.emu_start(reset | 1, 0xFFFFFFFF)
    except unicorn.UcError as e:
        out.append(f"\nTW_TRAP {e} at pc {uc.reg_read(arm.UC_ARM_REG_PC):#x}")
        run.status = 1
    run.text = "".join(out)
    return run


@dataclass(frozen=True)
class Counter:
    """The Runner that counts a Cortex-M firmware's executed instructions on `core`, and prices
    them in cycles where the core has a timing model (ArmCore.timing)."""

    core: ArmCore = CORTEX_M7
    on: str = "count"
    doing: str = "running the firmware, counting instructions"
    counts_instructions: bool = True

    def run(self, elf: Path, layers: int, c_name: str) -> Execution:
        timing = self.core.timing
        if timing is not None:
            llvm_mca()      # missing: one sentence before the run, not after it
        c = count_instructions(elf, layers, c_name, self.core)
        if not c.inferences or timing is None:
            return Execution(c.status, c.text, tuple(c.inferences), tuple(c.layers))
        priced = block_cycles(c.blocks, timing)

        def cycles(blocks, misses, taken):
            return (window_cycles(blocks, priced) + timing.miss_cycles * misses
                    + timing.taken_branch_cycles * taken)

        layer_cycles = tuple(cycles(w, m, t)
                             for w, m, t in zip(c.layer_blocks, c.layer_misses, c.layer_taken))
        pre = cycles(c.pre_blocks, c.pre_misses, c.pre_taken)
        return Execution(c.status, c.text, tuple(c.inferences), tuple(c.layers),
                         pre + sum(layer_cycles), layer_cycles, timing.model, timing.label)

