"""The comparisons of a validation, the same for every runner: the outputs a run produced against
the golden model and the reference runtime, and the counters it measured against the schedule's
prediction. The host path (check.check_project) and the firmware path (firmware_run.fill_report)
only turn what their program wrote into `outputs` (golden/samples.py samples, one per input) and
`Counters`; the mismatches they add to the report (report.py) come from here alone.

Counters: a run of n inferences counts each counter summed over the run (`Counters`); the DMA
bytes also per inference, smallest and largest. A counter matches when its sum is n times the
schedule's per-inference prediction (LayerSchedule.dma_bytes etc. summed by the manifest, read by
check.new_report), and the DMA bytes when, besides, every inference moved the same bytes. The
report's `*_measured` values are one inference's: the sum divided by n (for DMA bytes the
smallest inference's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..golden.samples import arrays
from ..ir.layer import LayerGraph
from .report import CounterMismatch, OutputMismatch, ReferenceDisagreement, ValidationReport


@dataclass(frozen=True)
class Counters:
    """What a run of `inferences` inferences counted: each counter summed over the run, and the
    DMA bytes of its smallest and largest inference. None: the runner does not count it (the
    firmware counts no L3 traffic and no accelerator jobs)."""

    inferences: int
    dma_bytes_min: int
    dma_bytes_max: int
    dma_transfers: int
    dma_chunks: int
    l3_bytes: int | None = None
    l3_transfers: int | None = None
    jobs: int | None = None


def output_diffs(lg: LayerGraph, got: Any, want: Any) -> list[tuple[str, int]]:
    """(output, differing elements) of every output of one sample where `got` and `want`
    (samples) differ."""
    return [(name, d) for name, a, b in zip(lg.outputs, arrays(lg.outputs, got),
                                            arrays(lg.outputs, want)) if (d := _diff(a, b))]


def output_mismatches(lg: LayerGraph, got: Any, want: Any, against: str | None,
                      i: int) -> list[OutputMismatch]:
    """The mismatches of sample `i` whose outputs `got` differ from `want`: one per differing
    output (naming it when the network has several)."""
    return [OutputMismatch(against, i, d, name if len(lg.outputs) > 1 else None)
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


def compare_outputs(report: ValidationReport, lg: LayerGraph, outputs: Sequence[Any] | None,
                    golden: Sequence[Any], reference: Sequence[Any] | None = None) -> int | None:
    """Add to `report` a mismatch per output of each sample of `outputs` (input i's outputs; None:
    the run wrote none) that differs from the golden model's, then from the reference's; and the
    golden model against the reference (`golden_vs_reference`, a mismatch when they differ). The
    first input whose outputs differ from the golden model's, None if none does."""
    first_bad = None
    for i, (got, want) in enumerate(zip(outputs or (), golden)):
        bad = output_mismatches(lg, got, want, "golden", i)
        report.mismatches += bad
        if bad and first_bad is None:
            first_bad = i
        if reference is not None:
            report.mismatches += output_mismatches(lg, got, reference[i], report.reference, i)
    if reference is not None:
        report.golden_vs_reference = sum(sample_diff(lg, g, r) for g, r in zip(golden, reference))
        if report.golden_vs_reference:
            report.mismatches.append(ReferenceDisagreement(report.golden_vs_reference))
    return first_bad


def compare_counters(report: ValidationReport, measured: Counters) -> None:
    """Set the report's measured counters (per inference) from `measured` and add a mismatch per
    counter that differs from the schedule's prediction (module doc), in the order accelerator
    jobs, DMA bytes, transfers, chunks, L3 bytes, L3 transfers."""
    n = measured.inferences
    per = max(n, 1)
    report.dma_bytes_measured = measured.dma_bytes_min
    report.dma_transfers_measured = measured.dma_transfers // per
    report.dma_chunks_measured = measured.dma_chunks // per
    if measured.l3_bytes is not None:
        report.l3_bytes_measured = measured.l3_bytes // per
    if measured.l3_transfers is not None:
        report.l3_transfers_measured = measured.l3_transfers // per
    if measured.jobs is not None:
        report.jobs_measured = measured.jobs // per
    if measured.jobs is not None and measured.jobs != report.jobs_predicted * n:
        report.mismatches.append(CounterMismatch("accelerator_jobs", report.jobs_measured,
                                                 report.jobs_predicted))
    if measured.dma_bytes_min != measured.dma_bytes_max or \
            measured.dma_bytes_min != report.dma_bytes_predicted:
        report.mismatches.append(CounterMismatch("dma_bytes", measured.dma_bytes_min,
                                                 report.dma_bytes_predicted,
                                                 measured.dma_bytes_min, measured.dma_bytes_max))
    totals = (("dma_transfers", measured.dma_transfers, report.dma_transfers_measured,
               report.dma_transfers_predicted),
              ("dma_chunks", measured.dma_chunks, report.dma_chunks_measured,
               report.dma_chunks_predicted),
              ("l3_bytes", measured.l3_bytes, report.l3_bytes_measured, report.l3_bytes_predicted),
              ("l3_transfers", measured.l3_transfers, report.l3_transfers_measured,
               report.l3_transfers_predicted))
    for kind, total, got, want in totals:
        if total is not None and total != want * n:
            report.mismatches.append(CounterMismatch(kind, got, want))
