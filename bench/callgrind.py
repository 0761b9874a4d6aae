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
from collections.abc import Callable, Sequence

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def available() -> bool:
    return shutil.which("valgrind") is not None


def instructions(cmd: Sequence[str], timeout: float = 900) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
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
