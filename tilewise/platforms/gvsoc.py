"""GVSoC, the runner of pulp-open firmware (`validate --on gvsoc`).

`gvsoc-run ELF WORKDIR` (../shared/tools/gvsoc, overridable with TILEWISE_GVSOC) simulates the
pulp-open chip: the firmware runs the network on the cluster's 8 cores and prints its TW_* lines
(codegen/c/firmware/pulp_open/main.c). The simulator runs a copy of the ELF in a work directory of
an ASCII path (its loader opens no other: a project under a non-ASCII -o), removed afterwards;
Ctrl-C or the timeout end the simulator too (sim_process.py). The cycles it reports are those of
a cold first run of the code from L2 through the instruction cache.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import TilewiseError
from .base import Execution
from .sim_process import ascii_work_dir, run_session

#: seconds a firmware run may take before it counts as hung (GVSOC_TIMEOUT)
TIMEOUT = 900
REPO = Path(__file__).resolve().parents[2]


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


def runner_path() -> str:
    """The absolute path of gvsoc-run as `runner` finds it, for the Makefile's `make gvsoc`;
    "gvsoc-run" (looked up on PATH) when it is not installed where tilewise looks."""
    try:
        return str(runner().resolve())
    except TilewiseError:
        return "gvsoc-run"


def execute(elf: Path, timeout: int = TIMEOUT, ne16: bool = False) -> Execution:
    """Run `elf` on GVSoC (module docstring): its exit status and everything it printed;
    `ne16`: with NE16 in the cluster (GVSOC_NE16=1, the README's "NE16 on pulp-open")."""
    env = {**os.environ, "GVSOC_TIMEOUT": str(timeout), **({"GVSOC_NE16": "1"} if ne16 else {})}
    with ascii_work_dir("tilewise_gvsoc_") as work:
        binary = work / "network.elf"
        shutil.copyfile(elf, binary)
        proc = run_session([str(runner()), str(binary), str(work / "run")], timeout + 60, env)
    return Execution(proc.returncode, proc.stdout + proc.stderr)


@dataclass(frozen=True)
class Gvsoc:
    """The Runner of pulp-open firmware on GVSoC; `ne16`: the cluster with NE16."""

    on: str = "gvsoc"
    doing: str = "running the firmware on GVSoC"
    counts_instructions: bool = False
    ne16: bool = False

    def run(self, elf: Path, layers: int, c_name: str) -> Execution:
        return execute(elf, ne16=self.ne16)


GVSOC = Gvsoc()
#: pulp-open with NE16 in its cluster (platforms/pulp_open.py PULP_OPEN_NE16)
GVSOC_NE16 = Gvsoc(doing="running the firmware on GVSoC (NE16 in the cluster)", ne16=True)
