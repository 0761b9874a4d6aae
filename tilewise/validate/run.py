"""Run a built host harness on many inputs in one process, and read back outputs and counters.

The harness (codegen/host.py main_host.c) takes a file of N inputs back to back and prints one
`TW_STATS {json}` line: DMA bytes / transfers / chunks summed over the run with the per-inference
minimum and maximum bytes, L3 reads, and the host HAL's protocol errors (races on a DMA source,
bad waits, transfers never waited for). A dump build also writes every layer's output, in order,
for every input.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..codegen.project import Project
from ..ir.layout import to_model_layout
from ..ir.packing import tensor_bytes
from ..ir.tensor import np_dtype


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one harness run produced. `error` is set when it failed: a non-zero exit, anything on
    stderr, no counters or incomplete outputs (the outputs may still be complete and correct)."""

    outputs: np.ndarray | None                 # [N, output bytes] int8
    stats: dict[str, Any] = field(default_factory=dict)
    returncode: int = 0
    error: str = ""
    dump: bytes | None = None

    @property
    def ok(self) -> bool:
        return not self.error


def run_harness(project: Project, exe: str | Path, inputs: Sequence[np.ndarray],
                work: str | Path | None = None, dump: bool = False,
                timeout: float = 600.0) -> RunResult:
    """Run `exe` (built from `project`) on `inputs` (each the network input in the IR's layout, in
    its element type; handed to the network in the model's layout, ir/layout.py)."""
    work = Path(work) if work else project.path
    in_bytes = project.manifest["input"]["bytes"]
    out_bytes = project.manifest["output"]["bytes"]
    # each input in the network input's own element type (int8, uint8 or int16; packed uint4 /
    # uint2, ir/packing.py), as raw bytes
    in_dtype = np_dtype(project.manifest["input"].get("dtype", "int8"))
    perm = project.manifest["input"].get("model_perm")   # an input transpose folded into the layout
    in_type = project.manifest["input"].get("dtype", "int8")
    data = b"".join(tensor_bytes(to_model_layout(x, perm).astype(in_dtype), in_type) for x in inputs)
    assert len(data) == in_bytes * len(inputs), "input sizes do not match the network input"
    tag = "dump" if dump else "run"
    in_path, out_path, dump_path = work / f"{tag}_inputs.bin", work / f"{tag}_outputs.bin", \
        work / f"{tag}_layers.bin"
    in_path.write_bytes(data)
    for p in (out_path, dump_path):
        if p.exists():
            p.unlink()
    args = [str(Path(exe).resolve()), str(in_path), str(out_path)]
    if project.l3:
        args.append(str(project.path / "weights_l3.bin"))
    if dump:
        args.append(str(dump_path))
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return RunResult(None, error=f"{Path(exe).name} did not finish in {timeout:.0f} s", returncode=-1)
    stats: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("TW_STATS "):
            stats = json.loads(line[len("TW_STATS "):])
    outputs = None
    if out_path.exists():
        raw = np.fromfile(out_path, dtype=np.int8)
        if raw.size == out_bytes * len(inputs):
            outputs = raw.reshape(len(inputs), out_bytes)
    error = ""
    if proc.returncode != 0 or proc.stderr.strip() or not stats or outputs is None:
        # a clean run exits 0 and writes nothing on stderr; anything else (a sanitizer report, an
        # abort after the outputs were written) fails the run even when the outputs are complete
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
        what = (f"exited with code {proc.returncode}" if proc.returncode != 0 else
                "wrote to stderr" if proc.stderr.strip() else
                "printed no TW_STATS line" if not stats else "wrote incomplete outputs")
        error = f"{Path(exe).name} {what}" + (": " + " | ".join(tail) if tail else "")
    blob = dump_path.read_bytes() if dump and dump_path.exists() else None
    return RunResult(outputs, stats, proc.returncode, error, blob)
