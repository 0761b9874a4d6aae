"""The outcome of one validation: `ValidationReport` and its typed mismatches.

Owns what a validation found, whichever runner produced it (the host build, check.py; a
firmware on GVSoC / QEMU / the instruction counter, firmware_run.py): the measured and predicted
counters, and one typed, frozen mismatch per thing that differed —

- `OutputMismatch`: an output of one input differs from the golden model, the reference runtime
  or the user's expected outputs (compare.py; own_data.py for "expected");
- `CounterMismatch`: a measured counter (DMA bytes / transfers / chunks, L3 bytes / transfers,
  accelerator jobs) differs from the schedule's prediction (compare.py);
- `HalMismatch`: the host HAL saw a protocol error (a race, a bad wait, a transfer never waited);
- `RunFailure`: the program did not run to its end (a crash, a non-zero exit, stderr, a simulator
  that did not start);
- `ReferenceDisagreement`: the golden model and the reference runtime differ;
- `GoldenLayerMismatch`: a layer differs from an exporter's golden tensor (golden_files.py).

Each mismatch's `to_json()` is the dict the report's "mismatches" list holds (`kind` first), the
shape issue 4 fixed for the host. Firmware runs report their DMA counters as the host does, as the
three kinds dma_bytes / dma_transfers / dma_chunks (they once wrote one `dma` kind holding the
first inference's (bytes, transfers, chunks) tuple and the predicted tuple).

The report (`ValidationReport.to_json`) has the keys of issue 4 — bit_exact, mismatches,
reference, inputs, peak_l2_bytes, dma_bytes_measured, dma_bytes_predicted — plus transfers,
chunks, L3 bytes, HAL counters and the first difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..pipeline import NetworkSchedule

#: the counters a run measures and the schedule predicts (CounterMismatch.kind)
COUNTER_KINDS = ("accelerator_jobs", "dma_bytes", "dma_transfers", "dma_chunks", "l3_bytes",
                 "l3_transfers")


@dataclass(frozen=True)
class OutputMismatch:
    """`elements` values of input `input`'s outputs differ from `against` ("golden", the
    reference runtime's name, or "expected"); `output` names the output when the network has
    several (None: its only one)."""

    against: str | None
    input: int
    elements: int
    output: str | None = None
    kind: ClassVar[str] = "output"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "against": self.against, "input": self.input,
                "elements": self.elements,
                **({"output": self.output} if self.output is not None else {})}


@dataclass(frozen=True)
class CounterMismatch:
    """A counter of `kind` (COUNTER_KINDS) measured per inference differs from the schedule's
    prediction. `measured` is the value of one inference (the run's total divided by the
    inferences; for DMA bytes the smallest inference's); for DMA bytes `measured_min` and
    `measured_max` are the smallest and largest inference's, and the JSON holds those instead
    of `measured`."""

    kind: str
    measured: int | None
    predicted: int
    measured_min: int | None = None
    measured_max: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in COUNTER_KINDS:
            raise ValueError(f"counter kind {self.kind!r} is none of {', '.join(COUNTER_KINDS)}")

    def to_json(self) -> dict[str, Any]:
        if self.measured_min is not None:
            return {"kind": self.kind, "measured_min": self.measured_min,
                    "measured_max": self.measured_max, "predicted": self.predicted}
        return {"kind": self.kind, "measured": self.measured, "predicted": self.predicted}


@dataclass(frozen=True)
class HalMismatch:
    """The host HAL's checks failed over the run: DMA sources overwritten in flight (`races`),
    waits on no transfer (`bad_waits`), transfers never waited (`pending`); `max_pending` the
    most in flight at once."""

    races: int
    bad_waits: int
    pending: int
    max_pending: int
    kind: ClassVar[str] = "hal"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "races": self.races, "bad_waits": self.bad_waits,
                "pending": self.pending, "max_pending": self.max_pending}


@dataclass(frozen=True)
class RunFailure:
    """The program did not run to its end: `error` says how; `status` the firmware runner's exit
    status (None on the host, whose `error` names the exit code)."""

    error: str | None
    status: int | None = None
    kind: ClassVar[str] = "run"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **({"status": self.status} if self.status is not None else {}),
                "error": self.error}


@dataclass(frozen=True)
class ReferenceDisagreement:
    """The golden model and the reference runtime differ in `elements` output values over all
    inputs."""

    elements: int
    kind: ClassVar[str] = "golden_vs_reference"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "elements": self.elements}


@dataclass(frozen=True)
class GoldenLayerMismatch:
    """`elements` values of IR tensor `ir` differ from the exporter's golden tensor `name` (in
    `file`; golden_files.py)."""

    file: str
    name: str
    ir: str | None
    elements: int
    kind: ClassVar[str] = "golden_layer"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.file, "name": self.name, "ir": self.ir,
                "elements": self.elements}


Mismatch = (OutputMismatch | CounterMismatch | HalMismatch | RunFailure | ReferenceDisagreement
            | GoldenLayerMismatch)


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
    mismatches: list[Mismatch] = field(default_factory=list)
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
    #: the core's cycles of that inference ESTIMATED by its timing model (platforms/mca_timing.py:
    #: llvm-mca's model of the core per executed block + the flash), not measured; the model's
    #: label and the core's name (None: the core has no timing model)
    estimated_cycles: int | None = None
    estimated_cycles_model: str | None = None
    estimated_core: str | None = None
    #: validation on the user's own data (--data): metrics against the reference, the expected
    #: outputs and the labels; None on random inputs (shape: validate/own_data.py)
    metrics: dict[str, Any] | None = None
    #: flash of the firmware image built for an ISA (validate/code_size.py CodeSize.to_json):
    #: the network's code, its constants, the firmware around it; None on the host
    code: dict[str, Any] | None = None
    #: RAM of a Cortex-M firmware as a user's linker sees it (validate/ram_elf.py): "measured"
    #: (ELF + the run's stack high-water mark) and "predicted" (the schedule); None elsewhere
    ram: dict[str, Any] | None = None
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
    def failures(self) -> list[Mismatch]:
        """The mismatches that fail the validation: all but an inexact reference's differences."""
        if not self.reference_inexact:
            return self.mismatches
        return [m for m in self.mismatches if not (
            isinstance(m, ReferenceDisagreement)
            or (isinstance(m, OutputMismatch) and m.against == self.reference))]

    def to_json(self) -> dict[str, Any]:
        return {
            "bit_exact": self.bit_exact, "mismatches": [m.to_json() for m in self.mismatches],
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
            **({"ram": self.ram} if self.ram is not None else {}),
            **({"golden_layers": self.golden_layers} if self.golden_layers is not None else {}),
            **({"measured_cycles": self.measured_cycles, "predicted_cycles": self.predicted_cycles,
                "layers": self.layer_cycles} if self.platform != "host" else {}),
            **({"measured_instructions": self.measured_instructions,
                "predicted_instructions": self.predicted_instructions,
                "estimated_cycles": self.estimated_cycles,
                "estimated_cycles_model": self.estimated_cycles_model}
               if self.counts_instructions else {}),
        }
