"""The Cortex-M cores a firmware is built for and run on: gcc's -mcpu, the QEMU machine with the
core and unicorn's model of it (platforms/cortex_m.py builds, qemu.py runs, count.py counts).

QEMU's machines are Arm's MPS2 FPGA images: AN500 has a Cortex-M7 (Arm DAI 0500), AN386 a
Cortex-M4 with its FPU (Arm DAI 0386); both map 4 MB of ZBT SSRAM at 0x00000000 (where the core
fetches its vectors) and 4 MB at 0x20000000, the map codegen/linker.py's link_qemu.ld is written for.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import m4_timing, m7_timing
from .mca_timing import CoreTiming


@dataclass(frozen=True)
class ArmCore:
    """A Cortex-M core the firmware is built for and run on (module docstring)."""

    #: gcc's -mcpu name
    cpu: str
    #: how messages and the Makefile name it
    label: str
    #: the QEMU machine with this core (Arm's MPS2 FPGA image)
    qemu_machine: str
    #: unicorn's CPU model constant (unicorn.arm_const), for the instruction counter
    unicorn_model: str
    #: how the counter prices the executed blocks in this core's cycles (platforms/mca_timing.py;
    #: m7_timing.py, m4_timing.py); None: it reports instructions only
    timing: CoreTiming | None = None


#: Arm MPS2 AN500 (Cortex-M7) and AN386 (Cortex-M4): QEMU's `-M mps2-an500` / `mps2-an386`
CORTEX_M7 = ArmCore("cortex-m7", "Cortex-M7", "mps2-an500", "UC_CPU_ARM_CORTEX_M7",
                    timing=m7_timing.TIMING)
CORTEX_M4 = ArmCore("cortex-m4", "Cortex-M4", "mps2-an386", "UC_CPU_ARM_CORTEX_M4",
                    timing=m4_timing.TIMING)
