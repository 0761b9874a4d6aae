"""The generated C on the host: generate through the public API, build with bench's harness, time it.

`tilewise.codegen.generate` writes the C project of a model scheduled on gap8 with one core
(`--cores 1`: the host HAL then computes on one thread); bench/harness/bench_main.c — not the
project's own main — is linked with the project's sources (network, layers, weights, kernels,
tile runtime, host HAL; `Project.sources("host")` minus main_host.c), every file compiled with
gcc -O2. The harness keeps the input in memory and runs the network n times, timing inside the
program with clock_gettime. Code size = text and rodata of the project's objects (`size -A`).
When code generation is missing every caller gets `unavailable_reason()` and shows it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import models, scheduling

HARNESS = Path(__file__).resolve().parent / "harness" / "bench_main.c"
HOST_TARGET = "gap8"
HOST_CORES = 1
#: the host HAL without its validation checks (garbage fill, race hashing): timing measures the
#: generated code; bit-exactness is still checked against the reference on every run
CFLAGS = ("-O2", "-g", "-std=c99", "-pthread", "-DTW_HAL_HOST_UNCHECKED")


def unavailable_reason() -> str | None:
    """None when the generated C can be benchmarked, else why not (shown in the tables)."""
    try:
        from tilewise.codegen import generate  # noqa: F401
    except ImportError:
        return "generate unavailable"
    if shutil.which(cc()) is None:
        return f"no C compiler ({cc()})"
    return None


def cc() -> str:
    return os.environ.get("CC", "gcc")


def host_target():
    return scheduling.target(HOST_TARGET, cores=HOST_CORES)


def generate_project(ns, out: Path):
    from tilewise.codegen import generate

    return generate(ns, out)


def _run_cc(args: list[str]) -> None:
    proc = subprocess.run([cc(), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{cc()} {' '.join(args)} failed:\n{proc.stderr[-2000:]}")


def _section_sizes(objs: list[Path]) -> dict[str, int]:
    out = {"text": 0, "rodata": 0}
    for o in objs:
        text = subprocess.run(["size", "-A", str(o)], capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            m = re.match(r"^(\.\S+)\s+(\d+)\s+\d+", line)
            if not m:
                continue
            sec, size = m.group(1), int(m.group(2))
            if sec.startswith(".text"):
                out["text"] += size
            elif sec.startswith(".rodata"):
                out["rodata"] += size
    return out


@dataclass
class HostBuild:
    """A built harness of one model's generated project."""

    name: str
    root: Path
    exe: Path
    input_path: Path
    l3_path: Path | None
    sizes: dict[str, int]
    manifest: dict = field(default_factory=dict)
    #: output of the first inference (after the build)
    first: np.ndarray | None = None

    def command(self, n: int, out: Path | None = None) -> list[str]:
        """The harness running 1 warm-up and n timed inferences (n = 0: the callgrind baseline)."""
        out = out or self.root / f"out_{n}.bin"
        cmd = [str(self.exe), str(self.input_path), "1", str(n), str(out)]
        return cmd + ([str(self.l3_path)] if self.l3_path else [])

    def time(self, n: int) -> float:
        """Seconds per inference over n inferences, measured inside the program."""
        proc = subprocess.run(self.command(n, self.root / "output.bin"), capture_output=True, text=True,
                              timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{self.name}: bench harness failed ({proc.returncode}): {proc.stderr.strip()}")
        m = re.search(r"TW_BENCH (\{.*\})", proc.stdout)
        if not m:
            raise RuntimeError(f"{self.name}: bench harness printed no TW_BENCH line")
        return json.loads(m.group(1))["ns_per_inference"] * 1e-9

    def output(self) -> np.ndarray:
        return np.fromfile(self.root / "output.bin", dtype=np.int8)

    def code_size(self) -> dict[str, int]:
        """text / rodata bytes of the project's objects and the arenas its network.h declares."""
        return {**self.sizes, "l2_arena": int(self.manifest["l2_arena_bytes"]),
                "l1_arena": int(self.manifest["l1_bytes"])}

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def build(name: str, inp: np.ndarray) -> HostBuild:
    """Schedule `name` on the host target, generate its project and build the timing harness."""
    root = Path(tempfile.mkdtemp(prefix=f"tw_bench_{name}_"))
    lg = scheduling.lowered(models.model_path(name))
    ns = scheduling.schedule(lg, host_target(), "model")
    proj = generate_project(ns, root / "project")
    if int(np.asarray(inp).nbytes) != proj.manifest["input"]["bytes"]:
        raise RuntimeError(f"{name}: benchmark input is {inp.nbytes} bytes, the network takes "
                           f"{proj.manifest['input']['bytes']}")
    srcs = [s for s in proj.sources() if s.name != "main_host.c"]
    inc = [f"-I{p}" for p in proj.includes()]
    objdir = root / "obj"
    objdir.mkdir()
    objs = [objdir / f"{i:03d}_{s.stem}.o" for i, s in enumerate(srcs)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
        list(ex.map(lambda so: _run_cc([*CFLAGS, *inc, "-c", str(so[0]), "-o", str(so[1])]), zip(srcs, objs)))
    exe = root / "bench_main"
    _run_cc([*CFLAGS, *inc, str(HARNESS), *map(str, objs), "-o", str(exe), "-lm"])
    inp_path = root / "input.bin"
    np.ascontiguousarray(inp).astype(np.int8, copy=False).tofile(inp_path)
    l3 = proj.path / "weights_l3.bin"
    b = HostBuild(name, root, exe, inp_path, l3 if l3.exists() else None, _section_sizes(objs),
                  proj.manifest)
    b.time(1)
    b.first = b.output().copy()
    return b


def code_sizes(names) -> dict[str, object]:
    """Text/rodata of each model's generated project (builds it; used when table 1 did not run)."""
    reason = unavailable_reason()
    out: dict[str, object] = {}
    for n in names:
        if reason:
            out[n] = f"n/a ({reason})"
            continue
        from .peers import TflmRunner

        b = build(n, TflmRunner(models.model_path(n), n).input)
        out[n] = b.code_size()
        b.cleanup()
    return out
