"""QEMU, the functional runner of Cortex-M firmware (`validate --on qemu`).

`qemu-system-arm -M mps2-an500 -semihosting` ($TILEWISE_QEMU_ARM overrides the binary) runs the
firmware linked for QEMU's MPS2 machines (firmware/link_qemu.ld): mps2-an500 for a Cortex-M7,
mps2-an386 for a Cortex-M4 (platforms/arm_core.py); it prints its TW_* lines through
semihosting. QEMU counts no cycles.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import TilewiseError
from .arm_core import CORTEX_M7
from .base import Execution

#: seconds a firmware run may take before it counts as hung
TIMEOUT = 600
#: no display, monitor or UART, and semihosting's console on stdout (after `-M machine`)
QEMU_ARGS = ("-nographic", "-monitor", "none", "-serial", "none",
             "-chardev", "stdio,id=tw", "-semihosting-config", "enable=on,target=native,chardev=tw")


def qemu() -> str:
    """qemu-system-arm ($TILEWISE_QEMU_ARM), or a one-sentence error saying how to install it."""
    exe = os.environ.get("TILEWISE_QEMU_ARM", "qemu-system-arm")
    if shutil.which(exe) is None:
        raise TilewiseError(f"--on qemu needs {exe}; install Debian's qemu-system-arm (or set "
                            f"TILEWISE_QEMU_ARM)")
    return exe


def execute(elf: Path, timeout: int = TIMEOUT, machine: str = CORTEX_M7.qemu_machine) -> Execution:
    """Run `elf` on QEMU's `machine` (mps2-an500: Cortex-M7) with semihosting: its status and
    output; a run past `timeout` seconds ends with a TW_TRAP line and status 124."""
    args = [qemu(), "-M", machine, *QEMU_ARGS, "-kernel", str(elf)]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return Execution(124, out + f"\nTW_TRAP timeout after {timeout} s")
    return Execution(proc.returncode, proc.stdout + proc.stderr)


@dataclass(frozen=True)
class Qemu:
    """The Runner of Cortex-M firmware on QEMU's `machine`."""

    machine: str = CORTEX_M7.qemu_machine
    on: str = "qemu"
    doing: str = "running the firmware on QEMU"
    counts_instructions: bool = False

    def run(self, elf: Path, layers: int, c_name: str) -> Execution:
        return execute(elf, machine=self.machine)

