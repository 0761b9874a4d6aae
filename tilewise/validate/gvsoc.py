"""`tilewise validate --on gvsoc`: build a project's pulp-open firmware, run it on GVSoC, compare.

The firmware (codegen/firmware.py) runs the network on the embedded inputs on the cluster's 8
cores and prints, per inference, the output bytes, the cycles of `tw_network_run` (core 0's
mcycle), the cycles of each layer and the DMA counters (firmware/main.c). Here: write the
validation inputs into the project (firmware/inputs.c), compile and link with the RISC-V
toolchain, run `gvsoc-run ELF` (../shared/tools/gvsoc, overridable with TILEWISE_GVSOC), parse,
and fill the report: outputs against the golden model (and the reference runtime), DMA bytes and
transfers against the schedule, and the measured cycles — per layer and in total — next to the
prediction (`NetworkSchedule.layer_cycles`), from the first inference (every inference of a
network takes the same path; the cycles are those of a cold first run of the code from L2 through
the instruction cache, as a deployed network's first inference).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from ..codegen.firmware import PULP_OPEN, compile_args, link_args, toolchain
from ..codegen.project import Project
from ..errors import TilewiseError
from ..schedule.network import NetworkSchedule
from .check import ValidationReport
from .code_size import of_elf
from .firmware_run import FirmwareRun, build_elf, fill_report, parse_run
from .sim_process import ascii_work_dir, run_session

#: seconds a firmware run may take before it counts as hung (GVSOC_TIMEOUT)
TIMEOUT = 900
REPO = Path(__file__).resolve().parents[2]
#: what the firmware is built for (code_size.py)
PULP_ISA = "RV32IMC + XpulpV2 (pulp-open, -O2)"


def runner() -> Path:
    """gvsoc-run: $TILEWISE_GVSOC, else ../shared/tools/gvsoc/gvsoc-run beside the repository or
    the working directory."""
    env = os.environ.get("TILEWISE_GVSOC")
    cands = [Path(env)] if env else [REPO.parent / "shared" / "tools" / "gvsoc" / "gvsoc-run",
                                     Path.cwd().parent / "shared" / "tools" / "gvsoc" / "gvsoc-run"]
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise TilewiseError(f"GVSoC not found at {cands[0]}; put ../shared/tools/gvsoc beside the "
                        f"repository or set TILEWISE_GVSOC to its gvsoc-run")


def build_firmware(project: Project, inputs: Sequence[np.ndarray], out: Path | None = None) -> Path:
    """Embed `inputs` in the project's firmware, compile and link it; the ELF's path."""
    if project.manifest.get("sdk") != PULP_OPEN:
        raise TilewiseError(f"{project.path}: target {project.manifest['target']} has no pulp-open "
                            f"firmware (generate for --target pulp-open)")
    tc = toolchain()
    fw = project.path / "firmware"
    srcs = project.sources(PULP_OPEN) + sorted(fw.glob("*.c")) + [fw / "crt0.S"]
    return build_elf(project, inputs, srcs, lambda inc, s, o: compile_args(tc, inc, s, o),
                     lambda objs, elf: link_args(tc, fw / "link.ld", objs, elf), out)


def run_firmware(elf: Path, timeout: int = TIMEOUT) -> FirmwareRun:
    """Run `elf` on GVSoC and parse its TW_* lines. The simulator runs a copy of the ELF in a
    work directory of an ASCII path (its loader opens no other: a project under a non-ASCII -o),
    removed afterwards; Ctrl-C or the timeout end the simulator too (sim_process.py)."""
    env = {**os.environ, "GVSOC_TIMEOUT": str(timeout)}
    with ascii_work_dir("tilewise_gvsoc_") as work:
        binary = work / "network.elf"
        shutil.copyfile(elf, binary)
        from ..progress import step

        with step("running the firmware on GVSoC"):
            proc = run_session([str(runner()), str(binary), str(work / "run")], timeout + 60, env)
    run = parse_run(proc.returncode, proc.stdout)
    return replace(run, text=proc.stdout + proc.stderr)


def check_on_gvsoc(report: ValidationReport, ns: NetworkSchedule, project: Project,
                   inputs: Sequence[np.ndarray], golden: Sequence[np.ndarray],
                   reference: Sequence[np.ndarray] | None = None) -> ValidationReport:
    """Build and run the firmware on `inputs`; fill `report` (outputs, DMA, cycles)."""
    elf = build_firmware(project, inputs)
    report.code = of_elf(elf, PULP_ISA)
    run = run_firmware(elf)
    report.platform = "gvsoc"
    return fill_report(report, ns, run, inputs, golden, reference)
