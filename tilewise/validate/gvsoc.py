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
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..codegen.firmware import PULP_OPEN, compile_args, inputs_files, link_args, toolchain
from ..codegen.project import Project
from ..errors import TilewiseError
from ..ir.layer import LayerGraph
from ..ir.tensor import np_dtype
from ..schedule.network import NetworkSchedule
from .check import ValidationReport, _diff

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


def build_firmware(project: Project, inputs: Sequence[np.ndarray], out: Path | None = None) -> Path:
    """Embed `inputs` in the project's firmware, compile and link it; the ELF's path."""
    if project.manifest.get("sdk") != PULP_OPEN:
        raise TilewiseError(f"{project.path}: target {project.manifest['target']} has no pulp-open "
                            f"firmware (generate for --target pulp-open)")
    tc = toolchain()
    p = project.path
    nbytes = project.manifest["input"]["bytes"]
    for rel, text in inputs_files([np.asarray(x).tobytes() for x in inputs], nbytes).items():
        (p / rel).write_text(text)
    build = Path(out) if out else p / "build_fw"
    build.mkdir(parents=True, exist_ok=True)
    srcs = project.sources(PULP_OPEN)
    srcs += sorted((p / "firmware").glob("*.c")) + [p / "firmware" / "crt0.S"]
    includes = [*project.includes(), p / "firmware"]
    objects = []
    for s in srcs:
        obj = build / (s.relative_to(p).as_posix().replace("/", "_") + ".o")
        _run(compile_args(tc, includes, s, obj), p)
        objects.append(obj)
    elf = build / "network.elf"
    _run(link_args(tc, p / "firmware" / "link.ld", objects, elf), p)
    return elf


def _run(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"firmware build failed: {' '.join(args)}\n{proc.stdout}{proc.stderr}")


@dataclass(frozen=True)
class FirmwareRun:
    """What one firmware run printed: per inference its output, cycles, layer cycles, DMA."""

    status: int
    outputs: list[bytes]
    cycles: list[int]
    layer_cycles: list[list[int]]
    #: per inference, per layer: the cycles of its tiles' compute phases (barrier to barrier)
    compute_cycles: list[list[int]]
    dma: list[tuple[int, int, int]]
    text: str


def run_firmware(elf: Path, timeout: int = TIMEOUT) -> FirmwareRun:
    """Run `elf` on GVSoC and parse its TW_* lines."""
    env = {**os.environ, "GVSOC_TIMEOUT": str(timeout)}
    proc = subprocess.run([str(runner()), str(elf)], capture_output=True, text=True, env=env,
                          timeout=timeout + 60)
    text = proc.stdout
    outputs, cycles, layers, compute, dma = [], [], [], [], []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "TW_OUT" and len(parts) == 3:
            outputs.append(bytes.fromhex(parts[2]))
        elif parts[0] == "TW_CYCLES":
            cycles.append(int(parts[2]))
        elif parts[0] == "TW_LAYERS":
            layers.append([int(v) for v in parts[2:]])
        elif parts[0] == "TW_COMPUTE":
            compute.append([int(v) for v in parts[2:]])
        elif parts[0] == "TW_DMA":
            dma.append((int(parts[2]), int(parts[3]), int(parts[4])))
    return FirmwareRun(proc.returncode, outputs, cycles, layers, compute, dma,
                       text + proc.stderr)


def check_on_gvsoc(report: ValidationReport, ns: NetworkSchedule, project: Project,
                   inputs: Sequence[np.ndarray], golden: Sequence[np.ndarray],
                   reference: Sequence[np.ndarray] | None = None) -> ValidationReport:
    """Build and run the firmware on `inputs`; fill `report` (outputs, DMA, cycles)."""
    lg: LayerGraph = ns.layers
    elf = build_firmware(project, inputs)
    run = run_firmware(elf)
    report.platform = "gvsoc"
    trap = re.search(r"TW_TRAP .*", run.text)
    if run.status != 0 or "TW_DONE" not in run.text or len(run.outputs) != len(inputs):
        report.mismatches.append({"kind": "run", "status": run.status,
                                  "error": trap.group(0) if trap else run.text[-400:]})
    out_dt = np_dtype(lg.tensors[lg.outputs[0]].dtype)
    for i, raw in enumerate(run.outputs):
        got = np.frombuffer(raw, dtype=out_dt)
        d = _diff(got, golden[i])
        if d:
            report.mismatches.append({"kind": "output", "against": "golden", "input": i,
                                      "elements": d})
        if reference is not None and _diff(got, reference[i]):
            report.mismatches.append({"kind": "output", "against": report.reference, "input": i,
                                      "elements": _diff(got, reference[i])})
    if reference is not None:
        report.golden_vs_reference = sum(_diff(g, r) for g, r in zip(golden, reference))
        if report.golden_vs_reference:
            report.mismatches.append({"kind": "golden_vs_reference",
                                      "elements": report.golden_vs_reference})
    if run.dma:
        (report.dma_bytes_measured, report.dma_transfers_measured,
         report.dma_chunks_measured) = run.dma[0]
        want = (report.dma_bytes_predicted, report.dma_transfers_predicted,
                report.dma_chunks_predicted)
        if any(d != want for d in run.dma):
            report.mismatches.append({"kind": "dma", "measured": run.dma[0], "predicted": want})
    if run.cycles:
        report.measured_cycles = run.cycles[0]
        report.layer_cycles = [
            {"index": i, "name": layer.name, "op": str(layer.op), "kind": layer.nest.kind,
             "measured_cycles": run.layer_cycles[0][i] if run.layer_cycles else None,
             "predicted_cycles": ns.layer_cycles(i),
             "measured_compute_cycles": run.compute_cycles[0][i] if run.compute_cycles else None}
            for i, layer in enumerate(lg.layers)]
    report.predicted_cycles = ns.cycles
    return report


def temporary_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="tilewise_gvsoc_"))
