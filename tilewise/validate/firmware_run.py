"""What a generated firmware prints and how a validation report is filled from it — shared by
every runner of `validate --on` (firmware.py).

Per inference the firmware's main.c prints `TW_OUT <n> <hex>`, optionally `TW_CYCLES`, `TW_LAYERS`
and `TW_COMPUTE` (cycle counters, pulp-open), `TW_DMA <n> <bytes> <transfers> <chunks>` and, with
NE16 in the cluster (pulp-open-ne16), `TW_NE16 <n> <jobs> <per layer: NE16 cycles, early jobs>`, then
`TW_DONE`; a fault prints `TW_TRAP ...` and exits non-zero. Here those lines become the run's
outputs and counters, which compare.py holds against the golden model, the reference and the
schedule exactly as it does the host build's (check.py).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codegen.firmware import inputs_files
from ..codegen.project import Project
from ..golden.samples import arrays, sample
from ..ir.layer import LayerGraph
from ..ir.layout import to_model_layout
from ..ir.packing import tensor_bytes, tensor_values
from ..pipeline import NetworkSchedule
from ..platforms.base import Execution
from .build import RUNTIME_DIRS, compile_cached, default_cache, headers_digest, run_parallel
from .compare import Counters, compare_counters, compare_outputs
from .report import RunFailure, ValidationReport
from .run import io_specs


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
    #: per inference with NE16 in the cluster: (jobs, per layer (NE16 cycles, its jobs that had
    #: ended before their wait: the cycles are then an upper bound)), tw_hal_ne16_pulp_open.c
    ne16: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()


def build_elf(project: Project, inputs: Sequence[Any], sources: Sequence[Path],
              compile_args: Callable[[list[Path], Path, Path], list[str]],
              link_args: Callable[[list[Path], Path], list[str]], out: Path | None = None,
              cache: str | Path | None = None) -> Path:
    """Embed `inputs` (golden/samples.py) in the project's firmware (firmware/inputs.c), compile every
    source with the
    command `compile_args(includes, source, object)` and link the objects with
    `link_args(objects, elf)`, in `out` (default: the project's build_fw); the ELF's path. The
    shipped kernel and runtime files come from the object cache of build.py (`cache`, default
    build.default_cache()) when it has them for the same content and flags; the sources compile
    build.jobs() at a time (microLlama's 546 layer files)."""
    p = project.path
    specs, _ = io_specs(project.manifest)
    names = [str(k) for k in range(len(specs))]
    # each input in the caller's layout (an input transpose folded into it, ir/layout.py)
    samples = [[tensor_bytes(to_model_layout(x, spec["model_perm"]), spec["dtype"])
                for x, spec in zip(arrays(names, xs), specs)] for xs in inputs]
    for rel, text in inputs_files(samples, [spec["bytes"] for spec in specs],
                                  c_name=project.c_name).items():
        (p / rel).write_text(text)
    build = Path(out) if out else p / "build_fw"
    build.mkdir(parents=True, exist_ok=True)
    includes = [*project.includes(), p / "firmware"]
    if cache is None:
        cache = default_cache()
    shared = {*RUNTIME_DIRS, *project.kernel_dirs}
    headers = headers_digest([str(i) for i in includes], shared) if cache is not None else b""
    objects = []
    from ..progress import progress

    commands: list[Callable[[], None]] = []
    with progress(len(sources) + 1, "building the firmware") as done:   # each source, the link
        for s in sources:
            obj = build / (s.relative_to(p).as_posix().replace("/", "_") + ".o")
            if cache is not None and s.parent.name in shared:
                # a shipped kernel or runtime file: compiled once per content and flags (build.py)
                commands.append(lambda s=s, obj=obj: compile_cached(
                    compile_args(includes, s, obj), s, obj, headers, Path(cache), p))
            else:
                commands.append(lambda s=s, obj=obj: _run(compile_args(includes, s, obj), p))
            objects.append(obj)
        run_parallel(commands, done)   # build.jobs() compilers at once
        elf = build / "network.elf"   # the map beside it: what each object puts in flash (code_size.py)
        _run([*link_args(objects, elf), f"-Wl,-Map={elf.with_suffix('.map')}"], p)
        done()
    return elf


def _run(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"firmware build failed: {' '.join(args)}\n{proc.stdout}{proc.stderr}")


def parse_run(status: int, text: str) -> FirmwareRun:
    """The TW_* lines of a firmware's output."""
    outputs, cycles, layers, compute, dma, ne16 = [], [], [], [], [], []
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
        elif parts[0] == "TW_NE16":
            v = [int(x) for x in parts[3:]]
            ne16.append((int(parts[2]), tuple(zip(v[0::2], v[1::2]))))
    return FirmwareRun(status, outputs, cycles, layers, compute, dma, text, tuple(ne16))


def parse(ran: Execution) -> FirmwareRun:
    """The TW_* lines of what a runner's execution printed (platforms/base.py Execution)."""
    return parse_run(ran.status, ran.text)


def plain(text: str) -> str:
    """A simulator's output without its terminal colour codes (ANSI escape sequences)."""
    return re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", text)


def fill_report(report: ValidationReport, ns: NetworkSchedule, run: FirmwareRun,
                inputs: Sequence[Any], golden: Sequence[Any],
                reference: Sequence[Any] | None = None) -> ValidationReport:
    """DMA counters against the schedule, a run that did not end, outputs against the golden
    model (and the reference runtime) — compared by compare.py as on the host, so the same wrong
    output or DMA count is the same typed mismatch (the DMA counters as the host's dma_bytes /
    dma_transfers / dma_chunks kinds) — and the measured cycles (when the firmware counts them)
    next to the prediction."""
    lg: LayerGraph = ns.layers
    counters = run_counters(run)
    if counters is not None:
        compare_counters(report, counters)
    trap = re.search(r"TW_TRAP .*", run.text)
    if run.status != 0 or "TW_DONE" not in run.text or len(run.outputs) != len(inputs):
        report.mismatches.append(RunFailure(trap.group(0) if trap else plain(run.text)[-400:],
                                            run.status))
    compare_outputs(report, lg, run_outputs(lg, run), golden, reference)
    if run.cycles:
        report.measured_cycles = run.cycles[0]
        report.layer_cycles = [
            {"index": i, "name": layer.name, "op": str(layer.op), "kind": layer.nest.kind,
             "measured_cycles": run.layer_cycles[0][i] if run.layer_cycles else None,
             "predicted_cycles": ns.layer_cycles(i),
             "measured_compute_cycles": run.compute_cycles[0][i] if run.compute_cycles else None,
             **(_ne16_cycles(ns, i, run.ne16[-1]) if run.ne16 else {})}
            for i, layer in enumerate(lg.layers)]
    report.predicted_cycles = ns.cycles
    return report


def _ne16_cycles(ns: NetworkSchedule, i: int,
                 ne16: tuple[int, tuple[tuple[int, int], ...]]) -> dict:
    """Layer i's NE16 cycles as the firmware measured them in its last inference (its jobs' trigger
    to the wait that saw each end; `ne16_early_jobs` of them had ended before the wait, which
    makes the figure an upper bound — none in the TILEWISE_NE16_TIMED build once the instruction
    cache is warm: in the first, cold inference the first poll can come after a short job's end)
    and as the schedule predicts them
    (ne16_cycles.py), for a layer on the ne16 module; {} for the others."""
    from .ne16_cycles import engine_cycles

    if ns.placement(i).module.name != "ne16" or i >= len(ne16[1]):
        return {}
    return {"ne16_measured_cycles": ne16[1][i][0], "ne16_early_jobs": ne16[1][i][1],
            "ne16_predicted_cycles": engine_cycles(ns, i)}


def run_outputs(lg: LayerGraph, run: FirmwareRun) -> list[Any]:
    """The outputs of every inference the firmware printed, as samples (golden/samples.py): a
    TW_OUT line holds every output of the inference, back to back in the network's order."""
    outs = [lg.tensors[o] for o in lg.outputs]
    samples = []
    for raw in run.outputs:
        parts, at = [], 0
        for t in outs:
            parts.append(tensor_values(raw[at:at + t.nbytes], t.dtype, t.size))
            at += t.nbytes
        samples.append(sample(parts))
    return samples


def run_counters(run: FirmwareRun) -> Counters | None:
    """The DMA counters of the TW_DMA lines (one per inference) summed over the run, with the
    smallest and largest inference's bytes; None when the firmware printed none."""
    if not run.dma:
        return None
    nbytes = [d[0] for d in run.dma]
    return Counters(len(run.dma), min(nbytes), max(nbytes), sum(d[1] for d in run.dma),
                    sum(d[2] for d in run.dma),
                    jobs=sum(n[0] for n in run.ne16) if run.ne16 else None)
