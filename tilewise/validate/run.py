"""Run a built host harness on many inputs in one process, and read back outputs and counters.

The harness (codegen/host.py main_host.c) takes one file per network input, each of N inputs
back to back, writes one file per output, and prints one `TW_STATS {json}` line: DMA bytes / transfers / chunks summed
over the run with the per-inference minimum and maximum bytes, L3 reads, and the host HAL's protocol errors (races on a
DMA source, bad waits, transfers never waited for). A dump build also writes every layer's output, in order,
for every input.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..codegen.project import Project
from ..ir.layout import to_model_layout
from ..ir.packing import tensor_bytes
from ..ir.tensor import np_dtype


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one harness run produced. `error` is set when it failed: a non-zero exit, anything on
    stderr, no counters or incomplete outputs (the outputs may still be complete and correct).
    `outputs`: the first network output's bytes [N, bytes] (int8); `every_output`: each output's,
    in the network's order (the first included)."""

    outputs: np.ndarray | None                 # [N, output bytes] int8
    stats: dict[str, Any] = field(default_factory=dict)
    returncode: int = 0
    error: str = ""
    dump: bytes | None = None
    every_output: tuple[np.ndarray, ...] | None = None

    @property
    def ok(self) -> bool:
        return not self.error


def io_specs(manifest: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The network's inputs and outputs as the harness files hold them: per tensor its bytes,
    dtype and (first input) the permutation of an input transpose folded into the layout."""
    ins = manifest.get("inputs") or [manifest["input"]]
    outs = manifest.get("outputs") or [manifest["output"]]
    perm = manifest["input"].get("model_perm")
    return ([{"bytes": int(t["bytes"]), "dtype": t.get("dtype", "int8"),
              "model_perm": perm if k == 0 else None} for k, t in enumerate(ins)],
            [{"bytes": int(t["bytes"]), "dtype": t.get("dtype", "int8")} for t in outs])


def input_bytes(manifest: dict[str, Any], inputs: Sequence[Any]) -> list[bytes]:
    """Per network input, the bytes of `inputs` (samples, golden/samples.py; each array in the IR's layout
    and the input's element type) as tw_network_run takes them (the model's layout, ir/layout.py),
    back to back."""
    from ..golden.samples import arrays

    specs, _ = io_specs(manifest)
    names = [str(k) for k in range(len(specs))]
    per = [arrays(names, x) for x in inputs]
    out = []
    for k, spec in enumerate(specs):
        # each input in its own element type (int8, uint8, int16, int32; packed uint4 / uint2,
        # ir/packing.py), as raw bytes
        dt = np_dtype(spec["dtype"])
        data = b"".join(tensor_bytes(to_model_layout(xs[k], spec["model_perm"]).astype(dt),
                                     spec["dtype"]) for xs in per)
        assert len(data) == spec["bytes"] * len(inputs), "input sizes do not match the network input"
        out.append(data)
    return out


def run_files(work: Path, tag: str, n_in: int, n_out: int) -> tuple[list[Path], list[Path]]:
    """The harness's input and output files of a run: {tag}_inputs.bin / {tag}_outputs.bin for a
    one-input, one-output network, else {tag}_inputs0.bin … / {tag}_outputs0.bin …"""
    if n_in == 1 and n_out == 1:
        return [work / f"{tag}_inputs.bin"], [work / f"{tag}_outputs.bin"]
    return ([work / f"{tag}_inputs{k}.bin" for k in range(n_in)],
            [work / f"{tag}_outputs{k}.bin" for k in range(n_out)])


def run_harness(project: Project, exe: str | Path, inputs: Sequence[Any],
                work: str | Path | None = None, dump: bool = False,
                timeout: float = 600.0) -> RunResult:
    """Run `exe` (built from `project`) on `inputs` (samples of the network inputs, golden/samples.py:
    each array in the IR's layout, in its element type; handed to the network in the model's
    layout, ir/layout.py)."""
    work = Path(work) if work else project.path
    _, out_specs = io_specs(project.manifest)
    data = input_bytes(project.manifest, inputs)
    tag = "dump" if dump else "run"
    in_paths, out_paths = run_files(work, tag, len(data), len(out_specs))
    dump_path = work / f"{tag}_layers.bin"
    for path, blob in zip(in_paths, data):
        path.write_bytes(blob)
    for p in (*out_paths, dump_path):
        if p.exists():
            p.unlink()
    args = [str(Path(exe).resolve()), *map(str, in_paths), *map(str, out_paths)]
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
    every: list[np.ndarray] | None = []
    for path, spec in zip(out_paths, out_specs):
        raw = np.fromfile(path, dtype=np.int8) if path.exists() else None
        if raw is None or raw.size != spec["bytes"] * len(inputs):
            every = None
            break
        every.append(raw.reshape(len(inputs), spec["bytes"]))
    outputs = every[0] if every else None
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
    return RunResult(outputs, stats, proc.returncode, error, blob,
                     tuple(every) if every else None)
