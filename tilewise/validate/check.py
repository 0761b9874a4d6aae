"""`tilewise validate`: generate, build on the host, run, compare bit for bit, count DMA bytes.

validate_model(model, target, tiler, n) = load → lower → schedule_network → generate (codegen) →
build (build.py) → run the harness on n random inputs plus the all-minimum and all-maximum inputs
in one process (run.py) → compare every output with the golden model (golden.layers.run_layers)
and with the reference runtime (reference.py) → hold the DMA bytes of every inference against the
schedule's prediction (Σ LayerSchedule.dma_bytes) and check the host HAL saw no protocol error.
On a mismatch with the golden model a dump build names the first differing layer, tile and
element (locate.py). `check_project` does the build/run/compare part for any project, e.g. one a
test has edited.

The report (`ValidationReport.to_json`) has the keys of issue 4 — bit_exact, mismatches,
reference, inputs, peak_l2_bytes, dma_bytes_measured, dma_bytes_predicted — plus transfers,
chunks, L3 bytes, HAL counters and the first difference.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..codegen.project import Project, generate
from ..errors import TilewiseError
from ..golden.inputs import make_inputs
from ..golden.samples import arrays, golden_outputs, sample
from ..ir.layer import LayerGraph
from ..ir.packing import tensor_values
from ..pipeline import NetworkSchedule
from ..tempdirs import temp_dir
from .build import build_host
from .locate import first_difference
from .run import run_harness


@dataclass
class ValidationReport:
    """The outcome of one validation (mutable while it is assembled)."""

    model: str
    target: str
    tiler: str
    l1_free_bytes: int | None
    inputs: int
    reference: str | None
    peak_l2_bytes: int
    dma_bytes_predicted: int
    dma_transfers_predicted: int
    dma_chunks_predicted: int
    l3_bytes_predicted: int
    project: str
    dma_bytes_measured: int | None = None
    dma_transfers_measured: int | None = None
    dma_chunks_measured: int | None = None
    l3_bytes_measured: int | None = None
    #: L3<->L2 transfers (tw_l3_read / tw_l3_write calls) per inference
    l3_transfers_predicted: int = 0
    l3_transfers_measured: int | None = None
    #: accelerator jobs per inference (NE16, DIANA's analog core), predicted by the schedule and
    #: counted by the host
    jobs_predicted: int = 0
    jobs_measured: int | None = None
    hal: dict[str, int] = field(default_factory=dict)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    first_difference: dict[str, Any] | None = None
    golden_vs_reference: int | None = None
    #: how the reference was run when not on the file as given (e.g. a repaired copy)
    reference_notes: list[str] = field(default_factory=list)
    #: why the reference's integers may be rounded (reference.py ReferenceRun.inexact): its
    #: differences stay in `mismatches` but do not make the validation fail; None: exact
    reference_inexact: str | None = None
    #: the frontend's sentences on how the model was read (graph meta "notes": e.g. a float tail
    #: cut, so the outputs compared are the integer body's)
    notes: list[str] = field(default_factory=list)
    #: where the generated code ran: "host" (the host build), "gvsoc" (pulp-open firmware),
    #: "qemu" (Cortex-M firmware) or "count" (Cortex-M firmware, instructions counted)
    platform: str = "host"
    #: the runner counted executed instructions (platforms/count.py)
    counts_instructions: bool = False
    #: on an ISA simulator: cycles of one inference, measured and predicted, and per layer
    measured_cycles: int | None = None
    predicted_cycles: float | None = None
    layer_cycles: list[dict[str, Any]] = field(default_factory=list)
    #: on the instruction-counting emulator: executed instructions of one inference, and the
    #: prediction once the target's cost model prices instructions (None until then)
    measured_instructions: int | None = None
    predicted_instructions: float | None = None
    #: validation on the user's own data (--data): metrics against the reference, the expected
    #: outputs and the labels; None on random inputs (shape: validate/own_data.py)
    metrics: dict[str, Any] | None = None
    #: flash of the firmware image built for an ISA (validate/code_size.py CodeSize.to_json):
    #: the network's code, its constants, the firmware around it; None on the host
    code: dict[str, Any] | None = None
    #: an exporter's golden data layer by layer (validate --golden DIR, or Deeploy's
    #: activations.npz): one row per golden tensor (validate/golden_files.py `rows`); None
    #: without such data
    golden_layers: list[dict[str, Any]] | None = None
    #: the schedule the generated C executes (for report files; not part of the JSON)
    schedule: NetworkSchedule | None = field(default=None, repr=False, compare=False)

    @property
    def bit_exact(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[dict[str, Any]]:
        """The mismatches that fail the validation: all but an inexact reference's differences."""
        if not self.reference_inexact:
            return self.mismatches
        return [m for m in self.mismatches if not (
            m.get("kind") == "golden_vs_reference"
            or (m.get("kind") == "output" and m.get("against") == self.reference))]

    def to_json(self) -> dict[str, Any]:
        return {
            "bit_exact": self.bit_exact, "mismatches": self.mismatches,
            "reference": self.reference, "inputs": self.inputs,
            "peak_l2_bytes": self.peak_l2_bytes,
            "dma_bytes_measured": self.dma_bytes_measured,
            "dma_bytes_predicted": self.dma_bytes_predicted,
            "dma_transfers_measured": self.dma_transfers_measured,
            "dma_transfers_predicted": self.dma_transfers_predicted,
            "dma_chunks_measured": self.dma_chunks_measured,
            "dma_chunks_predicted": self.dma_chunks_predicted,
            "l3_bytes_measured": self.l3_bytes_measured,
            "l3_bytes_predicted": self.l3_bytes_predicted,
            "l3_transfers_measured": self.l3_transfers_measured,
            "l3_transfers_predicted": self.l3_transfers_predicted,
            "jobs_measured": self.jobs_measured, "jobs_predicted": self.jobs_predicted,
            "hal": self.hal, "first_difference": self.first_difference,
            "golden_vs_reference": self.golden_vs_reference,
            "reference_notes": self.reference_notes, "reference_inexact": self.reference_inexact,
            "notes": self.notes,
            "model": self.model, "target": self.target, "tiler": self.tiler,
            "l1_free_bytes": self.l1_free_bytes, "project": self.project,
            "platform": self.platform, "metrics": self.metrics, "code": self.code,
            **({"golden_layers": self.golden_layers} if self.golden_layers is not None else {}),
            **({"measured_cycles": self.measured_cycles, "predicted_cycles": self.predicted_cycles,
                "layers": self.layer_cycles} if self.platform != "host" else {}),
            **({"measured_instructions": self.measured_instructions,
                "predicted_instructions": self.predicted_instructions}
               if self.counts_instructions else {}),
        }


def output_diffs(lg: LayerGraph, got: Any, want: Any) -> list[tuple[str, int]]:
    """(output, differing elements) of every output of one sample where `got` and `want`
    (samples) differ."""
    return [(name, d) for name, a, b in zip(lg.outputs, arrays(lg.outputs, got),
                                            arrays(lg.outputs, want)) if (d := _diff(a, b))]


def output_mismatches(lg: LayerGraph, got: Any, want: Any, against: str | None,
                      i: int) -> list[dict[str, Any]]:
    """The report's mismatch entries of sample `i` whose outputs `got` differ from `want`: one per
    differing output (naming it when the network has several)."""
    return [{"kind": "output", "against": against, "input": i, "elements": d,
             **({"output": name} if len(lg.outputs) > 1 else {})}
            for name, d in output_diffs(lg, got, want)]


def sample_diff(lg: LayerGraph, a: Any, b: Any) -> int:
    """Differing elements between two samples of the network's outputs, all outputs together."""
    return sum(d for _, d in output_diffs(lg, a, b))


def _diff(a: np.ndarray, b: np.ndarray) -> int:
    a = np.asarray(a, dtype=np.int64).reshape(-1)
    b = np.asarray(b, dtype=np.int64).reshape(-1)
    if a.size != b.size:
        return max(a.size, b.size)
    return int((a != b).sum())


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
    n = len(inputs)
    if st:
        report.dma_bytes_measured = int(st["dma_bytes_min"])
        report.dma_transfers_measured = int(st["dma_transfers"]) // max(n, 1)
        report.dma_chunks_measured = int(st["dma_chunks"]) // max(n, 1)
        report.l3_bytes_measured = int(st["l3_bytes"]) // max(n, 1)
        report.l3_transfers_measured = int(st["l3_transfers"]) // max(n, 1)
        report.hal = {k: int(st[k]) for k in ("races", "bad_waits", "pending", "max_pending")}
        if "jobs" in st:
            report.jobs_measured = int(st["jobs"]) // max(n, 1)
            if int(st["jobs"]) != report.jobs_predicted * n:
                report.mismatches.append({"kind": "accelerator_jobs",
                                          "measured": report.jobs_measured,
                                          "predicted": report.jobs_predicted})
        if st["dma_bytes_min"] != st["dma_bytes_max"] or st["dma_bytes_min"] != report.dma_bytes_predicted:
            report.mismatches.append({"kind": "dma_bytes", "measured_min": st["dma_bytes_min"],
                                      "measured_max": st["dma_bytes_max"],
                                      "predicted": report.dma_bytes_predicted})
        for what in ("transfers", "chunks"):
            got, want = getattr(report, f"dma_{what}_measured"), getattr(report, f"dma_{what}_predicted")
            if int(st[f"dma_{what}"]) != want * n:
                report.mismatches.append({"kind": f"dma_{what}", "measured": got, "predicted": want})
        if report.l3_bytes_measured != report.l3_bytes_predicted:
            report.mismatches.append({"kind": "l3_bytes", "measured": report.l3_bytes_measured,
                                      "predicted": report.l3_bytes_predicted})
        if int(st["l3_transfers"]) != report.l3_transfers_predicted * n:
            report.mismatches.append({"kind": "l3_transfers",
                                      "measured": report.l3_transfers_measured,
                                      "predicted": report.l3_transfers_predicted})
        if st["races"] or st["bad_waits"] or st["pending"]:
            report.mismatches.append({"kind": "hal", **report.hal})
    if not res.ok:   # even with complete outputs: a program that misbehaves is a mismatch
        report.mismatches.append({"kind": "run", "error": res.error})
    first_bad = None
    if res.every_output is not None:
        # the harness's bytes, as uint8 too; sub-byte unpacked
        outs = [sample([tensor_values(rows[i], lg.tensors[o].dtype, lg.tensors[o].size)
                        for o, rows in zip(lg.outputs, res.every_output)])
                for i in range(len(inputs))]
        for i, (got, want) in enumerate(zip(outs, golden)):
            bad = output_mismatches(lg, got, want, "golden", i)
            report.mismatches += bad
            if bad and first_bad is None:
                first_bad = i
            if reference is not None:
                report.mismatches += output_mismatches(lg, got, reference[i], report.reference, i)
    if reference is not None:
        report.golden_vs_reference = sum(sample_diff(lg, g, r) for g, r in zip(golden, reference))
        if report.golden_vs_reference:
            report.mismatches.append({"kind": "golden_vs_reference",
                                      "elements": report.golden_vs_reference})
    if locate and (first_bad is not None or res.outputs is None):
        idx = first_bad if first_bad is not None else 0
        report.first_difference = locate_first_difference(project, lg, inputs[idx], cache,
                                                          extra_flags)
        if report.first_difference is not None:
            report.first_difference["input"] = idx
    return report


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
                  c_name: str = "tw", input_dtypes: dict[str, str] | None = None
                  ) -> ValidationReport:
    """`tilewise validate MODEL`: load (`input_dtypes`: the code types of an integer export's
    container inputs, frontend.load_model), lower, schedule on `target`, then `validate_model`.
    Without `out_dir` the project is built in a temporary directory, removed when the result is
    bit-exact and when validation stops early (an error, Ctrl-C)."""
    from ..codegen.names import check_name
    from ..pipeline import Options, compile_graph, load

    check_name(c_name)
    options = Options(tiler=tiler, objective=objective, input_dtypes=dict(input_dtypes or {}))
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
