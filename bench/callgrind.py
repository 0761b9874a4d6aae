"""Instruction counts with `valgrind --tool=callgrind`: deterministic, unlike wall time.

`instructions(cmd)` runs a command under callgrind and returns the instructions it executed
(callgrind's "Collected" total). `per_inference(make_cmd, n)` is the difference method of issue 5:
(instructions of a process doing n inferences − the same process doing 0) / n, which removes
start-up, model loading and the warm-up inference. Child processes are not followed, so commands
must be the real executable (sys.executable, not a shell shim). PYTHONHASHSEED is fixed so two
Python processes differ only by the work asked of them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
#: a function line of callgrind_annotate: "1,234 (5.67%)  /path/file.c:function [object]"
_FUNC = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.+?):\S+")


def available() -> bool:
    return shutil.which("valgrind") is not None


def instructions(cmd: Sequence[str], timeout: float = 900, out_file: str = "/dev/null") -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *cmd],
                          capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"callgrind run failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-800:]}")
    m = _COLLECTED.findall(proc.stderr)
    if not m:
        raise RuntimeError(f"callgrind printed no instruction total for {' '.join(cmd)}")
    return int(m[-1])


def per_inference(make_cmd: Callable[[int], Sequence[str]], n: int) -> float:
    """Instructions per inference by the difference of an n-inference and a 0-inference process."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return (instructions(make_cmd(n)) - instructions(make_cmd(0))) / n


def profile(cmd: Sequence[str]) -> tuple[int, dict[str, int]]:
    """Total instructions of a command and its self instructions by source file base name
    (needs debug info, -g, to name the files)."""
    with tempfile.TemporaryDirectory(prefix="tw_cg_") as d:
        out = str(Path(d) / "callgrind.out")
        total = instructions(cmd, out_file=out)
        text = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", out],
                              capture_output=True, text=True, check=True).stdout
    by_file: dict[str, int] = {}
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            f = Path(m.group(2)).name
            by_file[f] = by_file.get(f, 0) + int(m.group(1).replace(",", ""))
    return total, by_file


def per_inference_share(make_cmd: Callable[[int], Sequence[str]], n: int, files: set[str]) -> tuple[float, float]:
    """(instructions per inference, fraction of them executed in `files`), by the difference method."""
    if n < 1:
        raise ValueError("n must be at least 1")
    t1, f1 = profile(make_cmd(n))
    t0, f0 = profile(make_cmd(0))
    per = (t1 - t0) / n
    part = sum(f1.get(f, 0) - f0.get(f, 0) for f in files) / n
    return per, (part / per if per else 0.0)
