"""The pulp-open platform: bare-metal firmware on the PULP cluster, run on GVSoC.

A pulp-open project gets, beside the host harness, `firmware/` (codegen/c/firmware/pulp_open):
the start-up (crt0.S), the linker script (code and constants in L2, the L1 arena, HAL state and
cluster stacks in L1), the runtime (tw_fw.c: cluster start, trap handler, stdout, exit), the
program (main.c: runs the network on every embedded input and prints outputs, cycles per layer
and DMA counters) and the embedded inputs, plus the DMA/fork HAL on the cluster's registers
(tw_hal/tw_hal_pulp_open.c). The toolchain is Debian's riscv64-unknown-elf-gcc with picolibc
(../shared/tools/gvsoc README: `-march=rv32imc_zicsr -mabi=ilp32`, picolibc's rv32im/ilp32 libc
and the matching libgcc); `compile_args` / `link_args` are what the Makefile block
(templates/pulp_open) and `validate --on gvsoc` run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import TilewiseError
from .base import Platform
from .gvsoc import GVSOC, GVSOC_NE16, runner_path

#: bytes of each cluster core's stack (targets/pulp_open.py reserves 8 of them in L1)
STACK = 1536
ARCH = ("-march=rv32imc_zicsr", "-mabi=ilp32")
CFLAGS = ("-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
          "-fdata-sections", "-DTW_PROFILE_LAYERS", f"-DTW_FW_STACK={STACK}")
#: what the firmware is built for (validate/code_size.py)
ISA = "RV32IMC + XpulpV2 (pulp-open, -O2)"


@dataclass(frozen=True)
class Toolchain:
    """Where the cross compiler and picolibc are (TILEWISE_RISCV_GCC, TILEWISE_PICOLIBC)."""

    gcc: str
    picolibc: Path

    @property
    def libc(self) -> Path:
        return self.picolibc / "lib" / "release" / "rv32im" / "ilp32" / "libc.a"

    @property
    def include(self) -> Path:
        return self.picolibc / "include"

    @property
    def libgcc(self) -> str:
        """libgcc of the rv32im/ilp32 multilib (Debian ships no rv32imc one; rv32imc code links
        with it): soft-float and the few helpers the C needs."""
        out = subprocess.run([self.gcc, "-march=rv32im", "-mabi=ilp32", "-print-libgcc-file-name"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()


def toolchain() -> Toolchain:
    """The RISC-V toolchain, or a one-sentence error saying how to install it."""
    gcc = os.environ.get("TILEWISE_RISCV_GCC", "riscv64-unknown-elf-gcc")
    pico = Path(os.environ.get("TILEWISE_PICOLIBC", "/usr/lib/picolibc/riscv64-unknown-elf"))
    tc = Toolchain(gcc, pico)
    if shutil.which(gcc) is None or not tc.libc.exists():
        raise TilewiseError(f"the pulp-open firmware needs {gcc} and picolibc ({tc.libc}); install "
                            f"Debian's gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf "
                            f"(or set TILEWISE_RISCV_GCC / TILEWISE_PICOLIBC)")
    return tc


def compile_args(tc: Toolchain, includes: Sequence[Path], src: Path, obj: Path,
                 defines: Sequence[str] = ()) -> list[str]:
    return [tc.gcc, *ARCH, *CFLAGS, *defines, "-isystem", str(tc.include), *[f"-I{i}" for i in includes],
            "-c", str(src), "-o", str(obj)]


def link_args(tc: Toolchain, script: Path, objects: Sequence[Path], elf: Path) -> list[str]:
    return [tc.gcc, *ARCH, "-nostdlib", "-nostartfiles", "-T", str(script),
            f"-Wl,--defsym=TW_FW_STACK={STACK}", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments",
            *[str(o) for o in objects], str(tc.libc), tc.libgcc, "-o", str(elf)]


@dataclass(frozen=True)
class RiscvBuild:
    """The platform's Toolchain (base.py): riscv64-unknown-elf-gcc + picolibc, firmware/link.ld;
    `defines`: the platform's own -D flags beside CFLAGS; `timed_ne16`: with TILEWISE_NE16_TIMED=1
    in the environment also -DTW_NE16_TIMED (each NE16 job waited for at its dispatch and timed
    alone: the measurement build, tw_hal_ne16_pulp_open.c)."""

    defines: tuple[str, ...] = ()
    timed_ne16: bool = False

    def check(self) -> None:
        toolchain()

    def sources(self, fw_dir: Path, link: str, output: str) -> list[Path]:
        return sorted(fw_dir.glob("*.c")) + [fw_dir / "crt0.S"]

    def compile_args(self, includes: Sequence[Path], src: Path, obj: Path) -> list[str]:
        timed = self.timed_ne16 and os.environ.get("TILEWISE_NE16_TIMED") == "1"
        return compile_args(toolchain(), includes, src, obj,
                            (*self.defines, *(("-DTW_NE16_TIMED",) if timed else ())))

    def link_args(self, fw_dir: Path, objects: Sequence[Path], elf: Path, link: str) -> list[str]:
        return link_args(toolchain(), fw_dir / "link.ld", objects, elf)


def _make_data(hal: tuple[str, ...] = ("tw_hal_pulp_open.c",), defines: tuple[str, ...] = (),
               gvsoc_env: str = "") -> dict:
    return {"fw_arch": ARCH, "fw_cflags": (*CFLAGS, *defines), "fw_stack": STACK,
            "gvsoc_run": runner_path(), "fw_hal": " ".join(f"tw_hal/{h}" for h in hal),
            "gvsoc_env": gvsoc_env}


PULP_OPEN = Platform(
    name="pulp-open", label="pulp-open",
    description="bare-metal firmware on the PULP cluster, run on GVSoC",
    hal=("tw_hal_pulp_open.c",), hal_headers=("tw_dma_ring.h",),
    firmware_c=("pulp_open", "common"),
    templates=Path(__file__).resolve().parent / "templates" / "pulp_open",
    make_phony=" firmware gvsoc", make_data=_make_data, toolchain=RiscvBuild(),
    stack_bytes=STACK, isa=ISA, runners=(GVSOC,))

#: the firmware of pulp-open with NE16 in its cluster (targets/pulp_open_ne16.py): the same, plus
#: the NE16 HAL on its registers (tw_hal/tw_hal_ne16_pulp_open.c; the NE16 family's tw_ne16.c
#: built with -DTW_NE16_ENGINE leaves its host dispatch to it), run with GVSOC_NE16=1
NE16_HAL = ("tw_hal_pulp_open.c", "tw_hal_ne16_pulp_open.c")
NE16_DEFINES = ("-DTW_NE16_ENGINE",)
PULP_OPEN_NE16 = replace(
    PULP_OPEN, name="pulp-open-ne16", label="pulp-open-ne16",
    description="bare-metal firmware on the PULP cluster with NE16, run on GVSoC (GVSOC_NE16=1)",
    hal=NE16_HAL,
    make_data=lambda: _make_data(NE16_HAL, NE16_DEFINES, "GVSOC_NE16=1 "),
    toolchain=RiscvBuild(NE16_DEFINES, timed_ne16=True), runners=(GVSOC_NE16,))
