"""`tilewise validate`: generate, build on the host, run, compare bit for bit, count DMA bytes.

validate_model(model, target, tiler, n) = load → lower → schedule_network → generate (codegen) →
build (build.py) → run the harness on n random inputs plus the all-minimum and all-maximum inputs
in one process (run.py) → compare every output with the golden model (golden.layers.run_layers)
and with the reference runtime (reference.py) → hold the DMA bytes of every inference against the
schedule's prediction (Σ LayerSchedule.dma_bytes) and check the host HAL saw no protocol error.
On a mismatch with the golden model a dump build names the first differing layer, tile and
element (locate.py). `check_project` does the build/run/compare part for any project, e.g. one a
test has edited.

Here the host run is reduced to what it measured — the outputs of every input and the harness's
TW_STATS counters (run.py) — which compare.py holds against the golden model, the reference and
the schedule; the host HAL's protocol errors and a run that misbehaved are the host's own
mismatches. The report and its typed mismatches: report.py.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..codegen.project import Project, generate
from ..errors import TilewiseError
from ..golden.inputs import make_inputs
from ..golden.samples import golden_outputs, sample
from ..ir.layer import LayerGraph
from ..ir.packing import tensor_values
from ..pipeline import NetworkSchedule
from ..tempdirs import temp_dir
from .build import build_host
from .compare import Counters, compare_counters, compare_outputs
from .locate import first_difference
from .report import HalMismatch, RunFailure, ValidationReport
from .run import run_harness


def check_project(report: ValidationReport, project: Project, lg: LayerGraph,
                  inputs: Sequence[Any], golden: Sequence[Any],
                  reference: Sequence[Any] | None = None, *, exe: Path | None = None,
                  cache: str | Path | None = None, sanitize: bool = False,
                  locate: bool = True, extra_flags: tuple[str, ...] = ()) -> ValidationReport:
    """Build (unless `exe` is given), run and compare `project` on `inputs` (golden/samples.py) against
    the golden outputs and the reference's; fills `report`."""
    exe = exe or build_host(project, sanitize=sanitize, cache=cache, extra=extra_flags)
    res = run_harness(project, exe, inputs)
    st = res.stats
    if st:
        compare_counters(report, host_counters(st, len(inputs)))
        report.hal = {k: int(st[k]) for k in ("races", "bad_waits", "pending", "max_pending")}
        if st["races"] or st["bad_waits"] or st["pending"]:
            report.mismatches.append(HalMismatch(**report.hal))
    if not res.ok:   # even with complete outputs: a program that misbehaves is a mismatch
        report.mismatches.append(RunFailure(res.error))
    outs = None
    if res.every_output is not None:
        # the harness's bytes, as uint8 too; sub-byte unpacked
        outs = [sample([tensor_values(rows[i], lg.tensors[o].dtype, lg.tensors[o].size)
                        for o, rows in zip(lg.outputs, res.every_output)])
                for i in range(len(inputs))]
    first_bad = compare_outputs(report, lg, outs, golden, reference)
    if locate and (first_bad is not None or res.outputs is None):
        idx = first_bad if first_bad is not None else 0
        report.first_difference = locate_first_difference(project, lg, inputs[idx], cache,
                                                          extra_flags)
        if report.first_difference is not None:
            report.first_difference["input"] = idx
    return report


def host_counters(stats: dict[str, Any], n: int) -> Counters:
    """The counters of the harness's TW_STATS line (codegen/host.py) over `n` inferences."""
    return Counters(n, int(stats["dma_bytes_min"]), int(stats["dma_bytes_max"]),
                    int(stats["dma_transfers"]), int(stats["dma_chunks"]), int(stats["l3_bytes"]),
                    int(stats["l3_transfers"]), int(stats["jobs"]) if "jobs" in stats else None)


def locate_first_difference(project: Project, lg: LayerGraph, x: Any,
                            cache: str | Path | None = None,
                            extra_flags: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """Rebuild with per-layer dumps, run on sample `x`, name the first differing layer, tile and
    element."""
    exe = build_host(project, dump=True, cache=cache, extra=extra_flags)
    res = run_harness(project, exe, [x], dump=True)
    if res.dump is None:
        return {"error": res.error or "the dump build wrote no layer outputs"}
    return first_difference(lg, project.manifest, x, res.dump)


def new_report(ns: NetworkSchedule, project: Project, model: str, n_inputs: int,
               reference: str | None) -> ValidationReport:
    m = project.manifest
    l1 = [mem for mem in ns.target.memories if mem.name == "L1"]
    return ValidationReport(
        model=model, target=ns.target.name, tiler=ns.tiler,
        l1_free_bytes=l1[0].free if l1 else None, inputs=n_inputs, reference=reference,
        peak_l2_bytes=ns.memory.peak, dma_bytes_predicted=m["dma_bytes_predicted"],
        dma_transfers_predicted=m["dma_transfers_predicted"],
        dma_chunks_predicted=m["dma_chunks_predicted"],
        l3_bytes_predicted=m["l3_bytes_predicted"],
        l3_transfers_predicted=m.get("l3_transfers_predicted", 0),
        jobs_predicted=m.get("jobs_predicted", 0), project=str(project.path), schedule=ns)


def validate_network(ns: NetworkSchedule, out_dir: str | Path, inputs: Sequence[np.ndarray], *,
                     model: str | None = None, reference_name: str | None = None,
                     reference: Sequence[np.ndarray] | None = None,
                     cache: str | Path | None = None, sanitize: bool = False,
                     locate: bool = True, on: str = "host",
                     c_name: str = "tw") -> tuple[ValidationReport, Project]:
    """Generate `ns` into out_dir (C names prefixed `c_name`, codegen/names.py) and check it on
    `inputs` (golden; reference when given), built for the host, or as the firmware of the
    target's platform run by its runner `on` (firmware.py: GVSoC, QEMU, the instruction
    counter)."""
    lg = ns.layers
    project = generate(ns, out_dir, model_name=model, c_name=c_name)
    report = new_report(ns, project, model or lg.name, len(inputs), reference_name)
    runner = ns.target.platform.runner(on)
    if runner is not None:
        from .firmware import check_on_firmware

        check_on_firmware(report, ns, project, runner, inputs, golden_outputs(lg, inputs),
                          reference)
    else:
        check_project(report, project, lg, inputs, golden_outputs(lg, inputs), reference,
                      cache=cache, sanitize=sanitize, locate=locate)
    return report, project


def validate_model(model: str | Path, ns: NetworkSchedule, graph, n_random: int = 20,
                   seed: int = 0, out_dir: str | Path | None = None,
                   cache: str | Path | None = None, on: str = "host",
                   c_name: str = "tw") -> ValidationReport:
    """The whole of `tilewise validate` for a scheduled model (`graph` as loaded from `model`)."""
    from .reference import reference_name, reference_run

    inputs = make_inputs(ns.layers, n_random, seed)
    ref = reference_run(graph, model, inputs)
    work = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="tilewise_validate_"))
    report, _ = validate_network(ns, work, inputs, model=Path(model).name,
                                 reference_name=reference_name(graph), reference=ref.outputs,
                                 cache=cache, on=on, c_name=c_name)
    report.reference_notes = list(ref.notes)
    report.reference_inexact = ref.inexact
    report.notes = list(graph.meta.get("notes", ())) + narrow_acc_notes(ns.layers)
    return report


def narrow_acc_notes(lg: LayerGraph) -> list[str]:
    """One note per layer whose narrow accumulator may wrap (golden/acc_bounds.py `may_wrap`):
    the golden model and the C wrap alike, so differences from the reference runtime's 32-bit
    arithmetic are expected there."""
    from ..golden.acc_bounds import may_wrap

    return [f"layer '{name}' has {bits}-bit accumulators and its worst case needs {need}: it may "
            f"wrap (two's complement, as the golden model does), so the reference may differ"
            for name, bits, need in may_wrap(lg)]


def check_platform(target, on: str) -> None:
    """Refuse an `--on` runner the target's platform does not have (platforms/: its runners)."""
    if on == "host" or target.platform.runner(on) is not None:
        return
    from ..targets.registry import list_targets

    owners = [t for t in list_targets() if t.platform.runner(on) is not None]
    if not owners:
        raise TilewiseError(f"--on {on}: no platform runs firmware there")
    raise TilewiseError(f"--on {on} runs {owners[0].platform.label} firmware; target "
                        f"{target.name} has none (use --target "
                        f"{' or '.join(t.name for t in owners)})")


@contextmanager
def work_dir(out_dir: str | Path | None) -> Iterator[Path]:
    """The directory a validation generates into: `out_dir`, or a temporary tilewise_validate_*
    directory that is removed when validation stops early (an error, Ctrl-C) — and, through
    `release_work_dir`, when the result is bit-exact."""
    if out_dir:
        yield Path(out_dir)
        return
    with temp_dir("tilewise_validate_") as work:   # no Ctrl-C can leave it (tempdirs.py)
        yield work


def release_work_dir(report: ValidationReport, work: Path,
                     out_dir: str | Path | None) -> ValidationReport:
    """Remove a temporary `work_dir` whose project validated bit-exact (kept on a mismatch)."""
    if not out_dir and report.bit_exact:
        shutil.rmtree(work, ignore_errors=True)
        report.project = "(temporary, removed)"
    return report


def validate_path(model: str | Path, target, tiler: str = "model", n_random: int = 20,
                  seed: int = 0, out_dir: str | Path | None = None,
                  objective: str = "latency", on: str = "host",
                  c_name: str = "tw", input_dtypes: dict[str, str] | None = None,
                  ram_budget: int | None = None) -> ValidationReport:
    """`tilewise validate MODEL`: load (`input_dtypes`: the code types of an integer export's
    container inputs, frontend.load_model), lower, schedule on `target`, then `validate_model`.
    Without `out_dir` the project is built in a temporary directory, removed when the result is
    bit-exact and when validation stops early (an error, Ctrl-C)."""
    from ..codegen.names import check_name
    from ..pipeline import Options, compile_graph, load

    check_name(c_name)
    options = Options(tiler=tiler, objective=objective, input_dtypes=dict(input_dtypes or {}),
                      ram_budget=ram_budget)
    graph = load(model, options)
    check_platform(target, on)
    from .chunked import CHUNK, validate_chunked

    if on != "host" and n_random + 2 > CHUNK:
        raise TilewiseError(f"--inputs {n_random}: at most {CHUNK - 2} inputs run on {on} in one "
                            f"validation (more run on the host, --on host, in chunks)")
    ns = compile_graph(graph, target, options)
    with work_dir(out_dir) as work:
        if n_random + 2 > CHUNK:   # bounded memory: chunked.py
            report = validate_chunked(model, ns, graph, n_random, seed, work, c_name=c_name)
        else:
            report = validate_model(model, ns, graph, n_random, seed, work, on=on, c_name=c_name)
    return release_work_dir(report, work, out_dir)
