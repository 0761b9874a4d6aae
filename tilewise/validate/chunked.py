"""Validation on many inputs in bounded memory: the inputs are made, run through the reference
runtime, the golden model and the built program, and compared, one chunk at a time.

`input_chunks(lg, n, seed)` (golden/inputs.py) yields exactly the inputs `make_inputs(lg, n, seed)`
returns, in the same order (the same random stream, the all-minimum and all-maximum inputs last),
CHUNK at a time;
`validate_chunked` generates and builds the project once, then checks every chunk with the same
program (check.check_project), the input numbers of its mismatches counted over the whole run. At
most MAX_MISMATCHES mismatch entries are kept: validation stops there (the build is known bad) and
says so in the report's notes. Memory therefore stays at one chunk's inputs and outputs whatever
--inputs is; `validate --inputs N` takes this path when N + 2 inputs exceed one chunk, so the
reports of smaller runs are unchanged. `run_chunks` is the loop itself, over any chunks of inputs:
own_data.py runs the user's data through it, reading each chunk's outputs and per-layer errors
as it goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..golden.inputs import CHUNK, input_chunks, n_chunks
from .report import OutputMismatch

#: mismatch entries kept before validation stops
MAX_MISMATCHES = 1000


def validate_chunked(model: str | Path, ns, graph, n_random: int, seed: int, work: Path,
                     cache: str | Path | None = None, chunk: int = CHUNK, c_name: str = "tw"):
    """`validate_model` on the host, `chunk` inputs at a time (module doc)."""
    from .check import narrow_acc_notes

    report, _ = run_chunks(model, ns, graph, input_chunks(ns.layers, n_random, seed, chunk),
                           n_chunks(n_random, chunk), n_random + 2, work, cache=cache,
                           c_name=c_name)
    report.notes = list(graph.meta.get("notes", ())) + narrow_acc_notes(ns.layers) + report.notes
    return report


def run_chunks(model: str | Path, ns, graph, chunks: Iterable[list[np.ndarray]], total_chunks: int,
               total: int, work: Path, *, cache: str | Path | None = None, c_name: str = "tw",
               on_chunk: Callable[[list[np.ndarray], Any, Any, int], None] | None = None):
    """Generate and build the project once, then check every chunk of `chunks` (lists of inputs,
    `total` in all) with the same program against the golden model and the reference runtime
    (loaded once), mismatches numbered over the whole run; after each chunk's run,
    `on_chunk(inputs, reference run, project, offset)` (own_data.py reads the chunk's outputs
    there). Stops at MAX_MISMATCHES (a note says so). Returns (report, project)."""
    from ..progress import progress
    from .check import check_project, golden_outputs, new_report, validate_network
    from .reference import reference_name, reference_runner

    lg = ns.layers
    reference = reference_runner(graph, model)   # loaded once for every chunk
    report = project = None
    done = 0
    with progress(total_chunks, "running inputs (chunks)") as step:
        for xs in chunks:
            ref = reference(xs)
            if report is None:
                report, project = validate_network(ns, work, xs, model=Path(model).name,
                                                   reference_name=reference_name(graph),
                                                   reference=ref.outputs, cache=cache,
                                                   c_name=c_name)
                report.reference_notes = list(ref.notes)
                report.reference_inexact = ref.inexact
            else:
                part = new_report(ns, project, report.model, len(xs), report.reference)
                check_project(part, project, lg, xs, golden_outputs(lg, xs), ref.outputs,
                              exe=project.path / "network_host", cache=cache,
                              locate=report.first_difference is None)
                report.mismatches += [replace(m, input=m.input + done)
                                      if isinstance(m, OutputMismatch) else m
                                      for m in part.mismatches]
                if part.golden_vs_reference is not None:
                    report.golden_vs_reference = ((report.golden_vs_reference or 0)
                                                  + part.golden_vs_reference)
                if report.first_difference is None and part.first_difference is not None:
                    report.first_difference = {**part.first_difference,
                                               "input": part.first_difference["input"] + done}
            if on_chunk is not None:
                on_chunk(xs, ref, project, done)
            done += len(xs)
            step()
            if len(report.failures) >= MAX_MISMATCHES and done < total:
                break
    report.inputs = done
    report.notes = []
    if done < total:
        report.notes.append(f"validation stopped after {done:,} of {total:,} inputs at "
                            f"{len(report.mismatches):,} mismatches")
    return report, project
