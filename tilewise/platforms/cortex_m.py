"""The cortex-m platform: bare-metal single-core Cortex-M (M7, M4) firmware, run on QEMU or counted.

A cortex-m project (stm32h7) gets `firmware/` (codegen/c/firmware/cortex_m): the vector table,
reset and fault handlers (tw_fw.c), linker scripts generated from the target's memory regions for
the chip (link_<target>.ld) and for QEMU's mps2-an500 (link_qemu.ld; codegen/linker.py, the same
sections.ld), the board layer (tw_board.h: tw_board_<chip>.c sets the clock, the caches and the
DWT cycle counter; tw_board_stub.c under QEMU), the output (tw_fw_semihosting.c, or
tw_fw_putchar.c over the ITM's putchar tw_fw_itm.c or the application's), the program (main.c)
and the inputs, with the single-core HAL tw_hal/tw_hal_cortex_m.c. `cm_firmware_sources` picks the
board and output files for a link (CM_BOARDS, CM_OUTPUTS: what the Makefile's LINK / OUTPUT pick).
The toolchain is Debian's arm-none-eabi-gcc with newlib-nano: `-mcpu=<core> -mthumb` and the
float ABI of the core (`cm_arch`): a target whose core has an FPU says which (`cortex_m_platform`:
stm32h7's FPv5-D16, stm32l4r5's FPv4-SP-D16) and its firmware is built hard-float
(`-mfloat-abi=hard -mfpu=<fpu>`, newlib's thumb/v7e-m+dp/hard or v7e-m+fp/hard multilib; tw_fw.c
turns the FPU on at reset), a core without one soft-float (`-mfloat-abi=soft`, CORTEX_M).
The core (`ArmCore`: M7, M4) says what gcc tunes for, which QEMU machine runs the firmware (Arm's
MPS2 FPGA images: AN500 has a Cortex-M7, AN386 a Cortex-M4; both map 4 MB of SSRAM at 0x00000000
and 4 MB at 0x20000000, so codegen/linker.py's link_qemu.ld serves both) and which core unicorn
counts on. Runners: QEMU (functional) and the instruction counter.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import TilewiseError
from .arm_core import CORTEX_M7, ArmCore
from .base import Platform
from .count import Counter
from .qemu import Qemu


def cm_arch(fpu: str | None = None, core: ArmCore = CORTEX_M7) -> tuple[str, ...]:
    """The core and float ABI flags: hard-float on the FPU `fpu` (gcc's -mfpu name, e.g.
    "fpv5-d16"), soft-float without one."""
    cpu = (f"-mcpu={core.cpu}", "-mthumb")
    return (*cpu, "-mfloat-abi=hard", f"-mfpu={fpu}") if fpu else (*cpu, "-mfloat-abi=soft")


#: the flags of a Cortex-M7 without an FPU (soft-float)
CM_ARCH = cm_arch()
CM_CFLAGS = ("-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
             "-fdata-sections", "-DTW_PROFILE_LAYERS")


def isa(core: ArmCore = CORTEX_M7) -> str:
    """What the firmware is built for (validate/code_size.py)."""
    return f"ARMv7E-M ({core.label}, -O2)"


#: the board layer of each place a cortex-m firmware runs (firmware/link_<name>.ld): QEMU's stub,
#: else the chip's own tw_board_<name>.c
CM_BOARDS = {"qemu": "tw_board_stub.c"}
#: the output files of each OUTPUT (the Makefile's; "putchar" adds the application's file)
CM_OUTPUTS = {"semihosting": ("tw_fw_semihosting.c",), "itm": ("tw_fw_putchar.c", "tw_fw_itm.c"),
              "putchar": ("tw_fw_putchar.c",)}
#: the output of a build when none is given: semihosting under QEMU, the ITM on the chip
DEFAULT_OUTPUT = {"qemu": "semihosting"}
#: the files of firmware/ that only some builds take (the rest every build compiles): the
#: outputs' and every board layer (tw_board_*.c)
CM_VARIANTS = frozenset({"tw_fw_semihosting.c", "tw_fw_putchar.c", "tw_fw_itm.c"})


def arm_gcc() -> str:
    """arm-none-eabi-gcc ($TILEWISE_ARM_GCC), or a one-sentence error saying how to install it."""
    gcc = os.environ.get("TILEWISE_ARM_GCC", "arm-none-eabi-gcc")
    if shutil.which(gcc) is None:
        raise TilewiseError(f"the Cortex-M firmware needs {gcc}; install Debian's "
                            f"gcc-arm-none-eabi and libnewlib-arm-none-eabi (or set "
                            f"TILEWISE_ARM_GCC)")
    return gcc


def cm_firmware_sources(fw_dir: Path, link: str = "qemu", output: str = "semihosting"
                        ) -> list[Path]:
    """The .c files of firmware/ a build for `link` with `output` compiles: the common ones, the
    board layer (QEMU's stub or tw_board_<link>.c) and the output's."""
    board = CM_BOARDS.get(link, f"tw_board_{link}.c")
    chosen = {board, *CM_OUTPUTS[output]}
    return sorted(p for p in fw_dir.glob("*.c")
                  if not (p.name in CM_VARIANTS or p.name.startswith("tw_board_"))
                  or p.name in chosen)


def cm_compile_args(gcc: str, includes: Sequence[Path], src: Path, obj: Path,
                    fpu: str | None = None, core: ArmCore = CORTEX_M7) -> list[str]:
    return [gcc, *cm_arch(fpu, core), *CM_CFLAGS, *[f"-I{i}" for i in includes], "-c", str(src), "-o",
            str(obj)]


def cm_link_args(gcc: str, fw_dir: Path, objects: Sequence[Path], elf: Path,
                 link: str = "qemu", fpu: str | None = None, core: ArmCore = CORTEX_M7) -> list[str]:
    """Link with newlib-nano (memcpy, memset, nearbyintf) and libgcc of the float ABI's multilib,
    no start files (tw_fw.c starts)."""
    return [gcc, *cm_arch(fpu, core), "-nostartfiles", "--specs=nano.specs", f"-L{fw_dir}",
            "-T", str(fw_dir / f"link_{link}.ld"), "-Wl,--gc-sections",
            "-Wl,--no-warn-rwx-segments", *[str(o) for o in objects], "-lm", "-o", str(elf)]


@dataclass(frozen=True)
class ArmBuild:
    """The platform's Toolchain (base.py): arm-none-eabi-gcc + newlib-nano, link_<link>.ld;
    hard-float on `fpu` (cm_arch), for `core`."""

    fpu: str | None = None
    core: ArmCore = CORTEX_M7

    def check(self) -> None:
        arm_gcc()

    def sources(self, fw_dir: Path, link: str, output: str) -> list[Path]:
        return cm_firmware_sources(fw_dir, link, output)

    def compile_args(self, includes: Sequence[Path], src: Path, obj: Path) -> list[str]:
        return cm_compile_args(arm_gcc(), includes, src, obj, self.fpu, self.core)

    def link_args(self, fw_dir: Path, objects: Sequence[Path], elf: Path, link: str) -> list[str]:
        return cm_link_args(arm_gcc(), fw_dir, objects, elf, link, self.fpu, self.core)


def cortex_m_platform(fpu: str | None = None, core: ArmCore = CORTEX_M7) -> Platform:
    """The cortex-m platform of a `core` with the FPU `fpu` (gcc's -mfpu name; None: none,
    soft-float): its firmware, Makefile block and toolchain are built with cm_arch(fpu, core),
    run on the core's QEMU machine and counted on its unicorn model."""
    arch = cm_arch(fpu, core)
    return Platform(
        name="cortex-m", label="Cortex-M",
        description=f"bare-metal {core.label} firmware, run on QEMU or counted",
        hal=("tw_hal_cortex_m.c",), firmware_c=("cortex_m", "common"), region_linker_scripts=True,
        templates=Path(__file__).resolve().parent / "templates" / "cortex_m",
        make_phony=" firmware qemu FORCE",
        make_data=lambda: {"cm_arch": arch, "cm_cflags": CM_CFLAGS, "core": core.label,
                           "qemu_machine": core.qemu_machine},
        toolchain=ArmBuild(fpu, core),
        no_l3="the network needs off-chip memory (L3), which the Cortex-M firmware does not have; "
              "give it a part with more SRAM",
        isa=isa(core), runners=(Counter(core=core), Qemu(machine=core.qemu_machine)))


#: a Cortex-M7 without an FPU (soft-float)
CORTEX_M = cortex_m_platform()
