"""The bare-metal firmware of a generated project, for targets whose SDK is "pulp-open" or
"cortex-m".

A pulp-open project gets, beside the host harness, `firmware/`: the start-up (crt0.S), the linker
script (code and constants in L2, the L1 arena, HAL state and cluster stacks in L1), the runtime
(tw_fw.c: cluster start, trap handler, stdout, exit), the program (main.c, the one of
codegen/c/firmware/common that cortex-m takes too: runs the network on every embedded input and
prints outputs, cycles per layer and DMA counters) and the embedded inputs (inputs.c: one array
per network input and a table of each sample's input pointers; generate writes one sample at the
input tensors' zero points, validate its own), plus the DMA/fork HAL on the cluster's registers
(tw_hal/tw_hal_pulp_open.c). The toolchain is
Debian's riscv64-unknown-elf-gcc with picolibc (../shared/tools/gvsoc README: `-march=rv32imc_zicsr
-mabi=ilp32`, picolibc's rv32im/ilp32 libc and the matching libgcc).

A gap8 / gap9 project (SDK "pmsis") gets `gap_sdk/`: a GAP SDK application — its Makefile (APP,
APP_SRCS, APP_CFLAGS, the L3 image in the flash's READFS_FILES, `include
$(RULES_DIR)/pmsis_rules.mk`), main.c (fabric-controller main: L3 RAM open and load, cluster open,
one cluster task per embedded input running tw_network_run) and the inputs, built with the SDK's
own toolchain and rules (the tests compile it against tests/pmsis_stub).

A cortex-m project (stm32h7) gets `firmware/` too: the vector table, reset and fault handlers
(tw_fw.c), linker scripts generated from the target's memory regions for the chip
(link_stm32h7.ld) and for QEMU's mps2-an500 (link_qemu.ld; linker.py, the same sections.ld), the
board layer (tw_board.h: tw_board_stm32h7.c sets the 480 MHz clock, the caches and the DWT cycle
counter; tw_board_stub.c under QEMU), the output (tw_fw_semihosting.c, or tw_fw_putchar.c over the
ITM's putchar tw_fw_itm.c or the application's), the program (main.c: outputs, and cycles per
inference and per layer where the board counts them) and the inputs, with the single-core HAL
tw_hal/tw_hal_cortex_m.c. `cm_firmware_sources` picks the board and output files for a link
(CM_BOARDS, CM_OUTPUTS: what the Makefile's LINK / OUTPUT pick). The toolchain is Debian's
arm-none-eabi-gcc with newlib (`-mcpu=cortex-m7 -mthumb -mfloat-abi=soft`, newlib-nano).

`firmware_files(...)` lists the files for `render`; `inputs_files(...)` the inputs;
`compile_args` / `link_args` (pulp-open) and `cm_compile_args` / `cm_link_args` (cortex-m) what
the Makefile and `validate --on gvsoc|qemu` run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import TilewiseError
from .templates import render

FIRMWARE_C = Path(__file__).resolve().parent / "c" / "firmware"
#: the SDK names of bare-metal firmware (Target.sdk): pulp-open, and single-core Cortex-M
PULP_OPEN = "pulp-open"
CORTEX_M = "cortex-m"
#: the GAP SDK (gap8, gap9): a PMSIS application in gap_sdk/, built by the SDK's own rules
PMSIS = "pmsis"
#: the firmware folder of each SDK (codegen/c/firmware)
FIRMWARE_DIRS = {PULP_OPEN: "pulp_open", CORTEX_M: "cortex_m", PMSIS: "gap_sdk"}
#: the bare-metal SDKs whose firmware also takes codegen/c/firmware/common (main.c: the program
#: and its output protocol)
FIRMWARE_COMMON = (PULP_OPEN, CORTEX_M)
#: bytes of each cluster core's stack (targets/pulp_open.py reserves them in L1)
STACK = 1536
ARCH = ("-march=rv32imc_zicsr", "-mabi=ilp32")
CFLAGS = ("-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
          "-fdata-sections", "-DTW_PROFILE_LAYERS", f"-DTW_FW_STACK={STACK}")


def firmware_folder(sdk: str | None) -> str:
    """The project folder of the firmware of `sdk`: gap_sdk/ for PMSIS, else firmware/."""
    return "gap_sdk" if sdk == PMSIS else "firmware"


def firmware_files(sdk: str | None) -> dict[str, Path]:
    """project path → shipped file, for the firmware of `sdk` (none for other SDKs)."""
    if sdk not in FIRMWARE_DIRS:
        return {}
    dirs = [FIRMWARE_DIRS[sdk], *(["common"] if sdk in FIRMWARE_COMMON else [])]
    return {f"{firmware_folder(sdk)}/{p.name}": p
            for p in sorted(p for d in dirs for p in (FIRMWARE_C / d).iterdir() if p.is_file())}


def gap_sdk_makefile(target: str, l3: bool, kernel_dirs: tuple[str, ...], prefix: str = "tw") -> str:
    """gap_sdk/Makefile: the GAP SDK's application Makefile (APP, APP_SRCS, APP_CFLAGS, the L3
    image in READFS_FILES, `include $(RULES_DIR)/pmsis_rules.mk`) of gap_sdk/main.c."""
    return render("gap_sdk.mk.j2", target=target, l3=l3, kernel_dirs=kernel_dirs, prefix=prefix)


def inputs_files(samples: Sequence[Sequence[bytes]], sizes: Sequence[int],
                 folder: str = "firmware", c_name: str = "tw") -> dict[str, str]:
    """`folder`/inputs.h and inputs.c: `samples` (each one bytes per network input, `sizes[k]`
    bytes for input k, as the network takes them) embedded as const data — one array per input
    (`tw_fw_inputs` for the first, `tw_fw_inputs_1`, … for the others) and the table of each
    sample's input pointers the firmware mains pass to TW_NETWORK_RUN_IO; their C names prefixed
    `c_name` (names.py: validate rewrites them in a project generated with --name)."""
    from .names import renamer

    rename = renamer(c_name, ("TW_NETWORK_INPUT_BYTES",)) or (lambda text: text)
    tensors = []
    for k, nbytes in enumerate(sizes):
        rows = []
        for xs in samples:
            x = xs[k]
            assert len(xs) == len(sizes) and len(x) == nbytes, (len(xs), len(x), nbytes)
            vals = [b - 256 if b > 127 else b for b in x]
            rows.append([", ".join(str(v) for v in vals[i:i + 24]) for i in range(0, nbytes, 24)])
        # every input 4-byte aligned: the layers read it in place
        tensors.append({"name": "tw_fw_inputs" + (f"_{k}" if k else ""), "rows": rows,
                        "nbytes": nbytes, "stride": (nbytes + 3) // 4 * 4})
    return {f"{folder}/inputs.h": rename(render("inputs.h.j2", count=len(samples), tensors=tensors)),
            f"{folder}/inputs.c": rename(render("inputs.c.j2", count=len(samples), tensors=tensors))}


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


def compile_args(tc: Toolchain, includes: Sequence[Path], src: Path, obj: Path) -> list[str]:
    return [tc.gcc, *ARCH, *CFLAGS, "-isystem", str(tc.include), *[f"-I{i}" for i in includes],
            "-c", str(src), "-o", str(obj)]


def link_args(tc: Toolchain, script: Path, objects: Sequence[Path], elf: Path) -> list[str]:
    return [tc.gcc, *ARCH, "-nostdlib", "-nostartfiles", "-T", str(script),
            f"-Wl,--defsym=TW_FW_STACK={STACK}", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments",
            *[str(o) for o in objects], str(tc.libc), tc.libgcc, "-o", str(elf)]


# --- Cortex-M -------------------------------------------------------------------------------------

CM_ARCH = ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=soft")
CM_CFLAGS = ("-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
             "-fdata-sections", "-DTW_PROFILE_LAYERS")
#: the board layer of each place a cortex-m firmware runs (firmware/link_<name>.ld): QEMU's stub,
#: else the chip's own tw_board_<name>.c
CM_BOARDS = {"qemu": "tw_board_stub.c"}
#: the output files of each OUTPUT (the Makefile's; "putchar" adds the application's file)
CM_OUTPUTS = {"semihosting": ("tw_fw_semihosting.c",), "itm": ("tw_fw_putchar.c", "tw_fw_itm.c"),
              "putchar": ("tw_fw_putchar.c",)}
#: the files of firmware/ that only some builds take (the rest every build compiles)
CM_VARIANTS = frozenset({"tw_board_stub.c", "tw_fw_semihosting.c", "tw_fw_putchar.c",
                         "tw_fw_itm.c"}) | {f"tw_board_{t}.c" for t in ("stm32h7",)}


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
    return sorted(p for p in fw_dir.glob("*.c") if p.name not in CM_VARIANTS or p.name in chosen)


def cm_compile_args(gcc: str, includes: Sequence[Path], src: Path, obj: Path) -> list[str]:
    return [gcc, *CM_ARCH, *CM_CFLAGS, *[f"-I{i}" for i in includes], "-c", str(src), "-o",
            str(obj)]


def cm_link_args(gcc: str, fw_dir: Path, objects: Sequence[Path], elf: Path,
                 link: str = "qemu") -> list[str]:
    """Link with newlib-nano (memcpy, memset, nearbyintf) and libgcc, no start files (tw_fw.c
    starts)."""
    return [gcc, *CM_ARCH, "-nostartfiles", "--specs=nano.specs", f"-L{fw_dir}",
            "-T", str(fw_dir / f"link_{link}.ld"), "-Wl,--gc-sections",
            "-Wl,--no-warn-rwx-segments", *[str(o) for o in objects], "-lm", "-o", str(elf)]
