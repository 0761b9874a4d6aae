"""`tilewise validate --on qemu`: build a project's Cortex-M firmware, run it under QEMU, compare.

The firmware (codegen/firmware.py, firmware/cortex_m) runs the network on the embedded inputs on
one Cortex-M7 and prints, per inference, the output bytes and the copy counters through
semihosting (firmware/main.c). Here: write the validation inputs into the project
(firmware/inputs.c), compile and link with Debian's arm-none-eabi-gcc and newlib-nano for QEMU's
mps2-an500 (firmware/link_qemu.ld), run `qemu-system-arm -M mps2-an500 -semihosting`
($TILEWISE_QEMU_ARM overrides the binary), parse, and fill the report as for GVSoC
(firmware_run.py): outputs against the golden model and the reference runtime, the copies against
the schedule. QEMU is functional only: it counts no cycles.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from ..codegen.firmware import (CORTEX_M, arm_gcc, cm_compile_args, cm_firmware_sources,
                                cm_link_args)
from ..codegen.project import Project
from ..errors import TilewiseError
from ..schedule.network import NetworkSchedule
from .check import ValidationReport
from .code_size import of_elf
from .firmware_run import FirmwareRun, build_elf, fill_report, parse_run

#: seconds a firmware run may take before it counts as hung
TIMEOUT = 600
#: what the firmware is built for (code_size.py)
CORTEX_M7_ISA = "ARMv7E-M (Cortex-M7, -O2)"
#: the machine, no display, monitor or UART, and semihosting's console on stdout
QEMU_ARGS = ("-M", "mps2-an500", "-nographic", "-monitor", "none", "-serial", "none",
             "-chardev", "stdio,id=tw", "-semihosting-config", "enable=on,target=native,chardev=tw")


def qemu() -> str:
    """qemu-system-arm ($TILEWISE_QEMU_ARM), or a one-sentence error saying how to install it."""
    exe = os.environ.get("TILEWISE_QEMU_ARM", "qemu-system-arm")
    if shutil.which(exe) is None:
        raise TilewiseError(f"--on qemu needs {exe}; install Debian's qemu-system-arm (or set "
                            f"TILEWISE_QEMU_ARM)")
    return exe


def build_firmware(project: Project, inputs: Sequence[np.ndarray], out: Path | None = None,
                   link: str = "qemu", output: str | None = None) -> Path:
    """Embed `inputs` in the project's firmware, compile and link it for `link` with `output`
    (codegen/firmware.py CM_OUTPUTS; default semihosting under QEMU, the ITM on the chip); the
    ELF's path."""
    if project.manifest.get("sdk") != CORTEX_M:
        raise TilewiseError(f"{project.path}: target {project.manifest['target']} has no Cortex-M "
                            f"firmware (generate for --target stm32h7)")
    if project.l3:
        raise TilewiseError(f"{project.path}: the network needs off-chip memory (L3), which the "
                            f"Cortex-M firmware does not have; give it a part with more SRAM")
    gcc = arm_gcc()
    fw = project.path / "firmware"
    output = output or ("semihosting" if link == "qemu" else "itm")
    srcs = project.sources(CORTEX_M) + cm_firmware_sources(fw, link, output)
    return build_elf(project, inputs, srcs, lambda inc, s, o: cm_compile_args(gcc, inc, s, o),
                     lambda objs, elf: cm_link_args(gcc, fw, objs, elf, link), out)


def run_firmware(elf: Path, timeout: int = TIMEOUT) -> FirmwareRun:
    """Run `elf` on QEMU's mps2-an500 (Cortex-M7) with semihosting and parse its TW_* lines."""
    args = [qemu(), *QEMU_ARGS, "-kernel", str(elf)]
    try:
        from ..progress import step

        with step("running the firmware on QEMU"):
            proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return parse_run(124, out + f"\nTW_TRAP timeout after {timeout} s")
    return replace(parse_run(proc.returncode, proc.stdout), text=proc.stdout + proc.stderr)


def check_on_qemu(report: ValidationReport, ns: NetworkSchedule, project: Project,
                  inputs: Sequence[np.ndarray], golden: Sequence[np.ndarray],
                  reference: Sequence[np.ndarray] | None = None) -> ValidationReport:
    """Build and run the firmware on `inputs`; fill `report` (outputs, copies)."""
    elf = build_firmware(project, inputs)
    report.code = of_elf(elf, CORTEX_M7_ISA)
    report.platform = "qemu"
    return fill_report(report, ns, run_firmware(elf), inputs, golden, reference)
