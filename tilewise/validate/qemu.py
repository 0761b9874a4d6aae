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
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from ..codegen.firmware import CORTEX_M, arm_gcc, cm_compile_args, cm_link_args, inputs_files
from ..codegen.project import Project
from ..errors import TilewiseError
from ..schedule.network import NetworkSchedule
from .check import ValidationReport
from .firmware_run import FirmwareRun, fill_report, parse_run

#: seconds a firmware run may take before it counts as hung
TIMEOUT = 600
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
                   link: str = "qemu") -> Path:
    """Embed `inputs` in the project's firmware, compile and link it for `link`; the ELF's path."""
    if project.manifest.get("sdk") != CORTEX_M:
        raise TilewiseError(f"{project.path}: target {project.manifest['target']} has no Cortex-M "
                            f"firmware (generate for --target stm32h7)")
    if project.l3:
        raise TilewiseError(f"{project.path}: the network needs off-chip memory (L3), which the "
                            f"Cortex-M firmware does not have; give it a part with more SRAM")
    gcc = arm_gcc()
    p = project.path
    nbytes = project.manifest["input"]["bytes"]
    for rel, text in inputs_files([np.asarray(x).tobytes() for x in inputs], nbytes).items():
        (p / rel).write_text(text)
    build = Path(out) if out else p / "build_fw"
    build.mkdir(parents=True, exist_ok=True)
    fw = p / "firmware"
    srcs = project.sources(CORTEX_M) + sorted(fw.glob("*.c"))
    includes = [*project.includes(), fw]
    objects = []
    for s in srcs:
        obj = build / (s.relative_to(p).as_posix().replace("/", "_") + ".o")
        _run(cm_compile_args(gcc, includes, s, obj), p)
        objects.append(obj)
    elf = build / "network.elf"
    _run(cm_link_args(gcc, fw, objects, elf, link), p)
    return elf


def _run(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"firmware build failed: {' '.join(args)}\n{proc.stdout}{proc.stderr}")


def run_firmware(elf: Path, timeout: int = TIMEOUT) -> FirmwareRun:
    """Run `elf` on QEMU's mps2-an500 (Cortex-M7) with semihosting and parse its TW_* lines."""
    args = [qemu(), *QEMU_ARGS, "-kernel", str(elf)]
    try:
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
    report.platform = "qemu"
    return fill_report(report, ns, run_firmware(elf), inputs, golden, reference)


def temporary_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="tilewise_qemu_"))
